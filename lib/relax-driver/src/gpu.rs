//! The GPU side of the drivers (`docs/gpu.md`): `relax-translate --emit=ptx|spirv` and
//! `relax-run --engine vulkan|cuda`.
//!
//! Both emitters accept un-lowered modules: the default pipeline runs first with
//! `schedule-gpu` in place of `schedule-cpu` ([`crate::pipeline::Target::Gpu`]), then
//! the kernels are lowered ([`crate::pipeline::lower_tir`]).
//! `--emit=spirv` writes one SPIR-V module (binary) holding every kernel; `--emit=ptx`
//! prints PTX (text) headed by the launch description. `--engine vulkan|cuda` runs the
//! kernels on a device; `--engine cuda` without an NVIDIA driver or GPU says that CUDA
//! is unavailable and exits 1.

use relax_ir::{Diagnostic, Module};

use crate::Io;
use crate::cli::report;
use crate::source::SourceFile;

/// What `relax-translate` asks of a GPU back end.
pub(crate) struct GpuTranslate<'a> {
    /// `ptx` or `spirv`.
    pub emit: &'a str,
    /// `--ptx-arch`.
    #[cfg_attr(not(feature = "llvm"), allow(dead_code, reason = "read by the PTX back end only"))]
    pub ptx_arch: &'a str,
    /// Run the default pipeline when the module needs it.
    pub default_pipeline: bool,
    /// Name the passes that ran.
    pub verbose: bool,
    /// `-o`.
    pub output: Option<&'a str>,
    /// Colored diagnostics.
    pub color: bool,
}

/// Runs the default pipeline for the GPU when asked, then lowers the kernels
/// ([`crate::pipeline::lower_tir`]); reports and returns `false` on errors.
pub(crate) fn lower_for_gpu(
    tool: &str,
    default_pipeline: bool,
    verbose: bool,
    file: &SourceFile,
    module: &mut Module,
    color: bool,
    io: &mut Io<'_>,
) -> bool {
    if default_pipeline {
        match crate::pipeline::run_pipeline_for(module, crate::pipeline::Target::Gpu) {
            Ok(passes) => {
                if verbose {
                    let _ = if passes.is_empty() {
                        writeln!(io.stderr, "{tool}: default pipeline: nothing to do")
                    } else {
                        writeln!(io.stderr, "{tool}: default pipeline: {}", passes.join(", "))
                    };
                }
            }
            Err(d) => {
                report(io, tool, file, &d, color);
                return false;
            }
        }
    }
    if let Err(d) = crate::pipeline::lower_tir(module) {
        report(io, tool, file, &d, color);
        return false;
    }
    true
}

/// `relax-translate --emit=ptx|spirv`.
pub(crate) fn translate_gpu(req: &GpuTranslate<'_>, file: &SourceFile, mut module: Module, io: &mut Io<'_>) -> i32 {
    if !lower_for_gpu("relax-translate", req.default_pipeline, req.verbose, file, &mut module, req.color, io) {
        return 1;
    }
    let out = match req.emit {
        "spirv" => emit_spirv(&module),
        _ => emit_ptx(&module, req),
    };
    let out = match out {
        Ok(o) => o,
        Err(d) => {
            report(io, "relax-translate", file, &d, req.color);
            return 1;
        }
    };
    match req.output {
        Some(path) => {
            if let Err(e) = std::fs::write(path, &out) {
                let _ = writeln!(io.stderr, "relax-translate: error: cannot write `{path}`: {e}");
                return 1;
            }
        }
        None => {
            let _ = io.stdout.write_all(&out);
        }
    }
    0
}

/// Diagnostics for the functions a back end could not compile.
#[cfg_attr(not(any(feature = "llvm", feature = "spirv")), allow(dead_code, reason = "used by the back ends only"))]
fn failures(module: &Module, failed: &[(relax_ir::Global, relax_codegen::CodegenError)]) -> Vec<Diagnostic> {
    failed
        .iter()
        .map(|(g, e)| {
            let mut d = e.to_diagnostic();
            d.message = format!("cannot compile `{}`: {}", module.globals[*g].name, d.message);
            d
        })
        .collect()
}

#[cfg(feature = "spirv")]
fn emit_spirv(module: &Module) -> Result<Vec<u8>, Vec<Diagnostic>> {
    let sm = relax_codegen::spirv::lower_module(module);
    if !sm.failed.is_empty() {
        return Err(failures(module, &sm.failed));
    }
    Ok(sm.bytes())
}

#[cfg(not(feature = "spirv"))]
fn emit_spirv(_: &Module) -> Result<Vec<u8>, Vec<Diagnostic>> {
    Err(vec![Diagnostic::error(
        relax_ir::Span::NONE,
        "this build of relax-translate has no SPIR-V backend (built without the `spirv` feature)",
    )])
}

#[cfg(feature = "llvm")]
fn emit_ptx(module: &Module, req: &GpuTranslate<'_>) -> Result<Vec<u8>, Vec<Diagnostic>> {
    let pm = relax_codegen::nvptx::lower_module(module, req.ptx_arch).map_err(|e| vec![e.to_diagnostic()])?;
    if !pm.failed.is_empty() {
        return Err(failures(module, &pm.failed));
    }
    Ok(pm.ptx.into_bytes())
}

#[cfg(not(feature = "llvm"))]
fn emit_ptx(_: &Module, _: &GpuTranslate<'_>) -> Result<Vec<u8>, Vec<Diagnostic>> {
    Err(vec![Diagnostic::error(
        relax_ir::Span::NONE,
        "this build of relax-translate has no PTX backend (built without the `llvm` feature)",
    )])
}

/// Runs the module (`exec`) with the kernels of a GPU engine.
pub(crate) type ExecFn<'a> =
    dyn FnMut(&Module, Option<&dyn relax_runtime::native::NativeKernels>, &mut Io<'_>) -> i32 + 'a;

/// `relax-run --engine vulkan|cuda`: the default pipeline for the GPU, then the kernels
/// on the device; kernels a back end cannot compile run in the TIR interpreter.
/// `cuda_driver` is `--cuda-driver` (the CUDA driver library to open).
#[expect(clippy::too_many_arguments, reason = "the flags of relax-run that the GPU engines read")]
pub(crate) fn run_gpu(
    engine: &str,
    default_pipeline: bool,
    cuda_driver: Option<&std::ffi::OsStr>,
    file: &SourceFile,
    mut module: Module,
    color: bool,
    io: &mut Io<'_>,
    exec: &mut ExecFn<'_>,
) -> i32 {
    if !lower_for_gpu("relax-run", default_pipeline, false, file, &mut module, color, io) {
        return 1;
    }
    match engine {
        "vulkan" => run_vulkan(&module, io, exec),
        _ => run_cuda(&module, cuda_driver, io, exec),
    }
}

/// Says on standard error which PrimFuncs run on the device and which in the
/// interpreter, then runs the module.
/// `engine` is `ENGINE` as the messages name it.
#[cfg_attr(not(any(feature = "llvm", feature = "spirv")), allow(dead_code, reason = "used by the back ends only"))]
fn report_and_exec(
    engine: &str,
    on_device: usize,
    failed: &[(relax_ir::Global, relax_codegen::CodegenError)],
    module: &Module,
    kernels: &dyn relax_runtime::native::NativeKernels,
    io: &mut Io<'_>,
    exec: &mut ExecFn<'_>,
) -> i32 {
    let _ = writeln!(
        io.stderr,
        "relax-run: {engine}: {on_device} PrimFuncs on the device, {} in the interpreter",
        failed.len()
    );
    for (g, e) in failed {
        let _ = writeln!(
            io.stderr,
            "relax-run: {}: `{}` runs in the interpreter: {}",
            engine.split(':').next().unwrap_or(engine),
            module.globals[*g].name,
            e.message
        );
    }
    exec(module, Some(kernels), io)
}

#[cfg(feature = "spirv")]
fn run_vulkan(module: &Module, io: &mut Io<'_>, exec: &mut ExecFn<'_>) -> i32 {
    let run = |k: &relax_runtime::vulkan::VulkanKernels| {
        report_and_exec(&format!("vulkan: {}", k.device_name), k.len(), &k.failed, module, k, io, exec)
    };
    match relax_runtime::vulkan::compile(module, run) {
        Ok(code) => code,
        Err(e) => {
            let _ = writeln!(io.stderr, "relax-run: error: {e}");
            1
        }
    }
}

#[cfg(not(feature = "spirv"))]
fn run_vulkan(_: &Module, io: &mut Io<'_>, _: &mut ExecFn<'_>) -> i32 {
    let _ = writeln!(
        io.stderr,
        "relax-run: error: this build of relax-run has no Vulkan engine (built without the `spirv` feature)"
    );
    1
}

#[cfg(feature = "llvm")]
fn run_cuda(module: &Module, driver: Option<&std::ffi::OsStr>, io: &mut Io<'_>, exec: &mut ExecFn<'_>) -> i32 {
    use relax_runtime::cuda::{CudaError, CudaKernels, compile};
    let run = |k: &CudaKernels| {
        let engine = format!("cuda: {} ({})", k.device_name, k.arch);
        report_and_exec(&engine, k.len(), &k.failed, module, k, io, exec)
    };
    match compile(module, driver, run) {
        Ok(code) => code,
        Err(CudaError::Unavailable(why)) => {
            let _ = writeln!(io.stderr, "relax-run: error: CUDA is unavailable: {why}; the CUDA engine is skipped");
            1
        }
        Err(CudaError::Failed(e)) => {
            let _ = writeln!(io.stderr, "relax-run: error: {e}");
            1
        }
    }
}

#[cfg(not(feature = "llvm"))]
fn run_cuda(_: &Module, _: Option<&std::ffi::OsStr>, io: &mut Io<'_>, _: &mut ExecFn<'_>) -> i32 {
    let _ = writeln!(
        io.stderr,
        "relax-run: error: this build of relax-run has no CUDA engine (built without the `llvm` feature)"
    );
    1
}

/// Whether the CUDA engine can run here: the device's name, or why not (for the lit
/// feature `cuda`). It opens `libcuda.so.1`, or the library `RELAX_CUDA_DRIVER` names.
#[cfg(feature = "llvm")]
pub fn cuda_device() -> Result<String, String> {
    relax_runtime::cuda::probe(None).map_err(|e| e.0)
}

/// Whether the CUDA engine can run here (never without the `llvm` feature).
#[cfg(not(feature = "llvm"))]
pub fn cuda_device() -> Result<String, String> {
    Err("built without the `llvm` feature".to_string())
}
