//! `relax-translate`: a module's kernels as LLVM IR, assembly or an object file for the
//! host (`cli.md`, `docs/codegen.md`); `--import-gguf` writes the Relax module of a GGUF
//! model instead (`docs/llm.md`).
//!
//! Input that still holds high-level ops or unscheduled kernels first goes through the
//! default pipeline ([`crate::pipeline`]); `--no-default-pipeline` turns that off and
//! `--verbose` names the passes that ran; the kernels are then lowered
//! ([`crate::pipeline::lower_tir`]), with or without it. Every PrimFunc becomes
//! `i32 name_packed(ptr args)` (the calling convention of `relax_codegen::abi`); Relax
//! functions are not compiled (the JIT interprets them).

use std::ffi::OsString;

use clap::{CommandFactory, FromArgMatches, Parser};
use relax_ir::Diagnostic;

use crate::Io;
use crate::cli::{read_input, report};
use crate::ir_text::verify_diagnostics;

/// The flags of `relax-translate`.
#[derive(Parser, Debug)]
#[command(
    name = "relax-translate",
    about = "Translate the kernels of a relax module to LLVM IR, assembly or an object file",
    version,
    long_version = crate::LONG_VERSION
)]
struct TranslateCli {
    /// Input module (`-` or absent: standard input), or a GGUF model file, whose module
    /// is compiled with the pipeline of GGUF models (docs/llm.md).
    input: Option<String>,
    /// The output: `llvm` (LLVM IR text), `asm`, `obj` (the kernels' code), `lib` (a shared
    /// library: kernels, executable and manifest; docs/library.md); `ptx`, `spirv`;
    /// `bytecode` (a listing of the Relax level's executable, docs/executable.md).
    #[arg(long, value_name = "KIND", value_parser = ["llvm", "asm", "obj", "lib", "ptx", "spirv", "bytecode"], required_unless_present = "import_gguf", conflicts_with = "import_gguf")]
    emit: Option<String>,
    /// Write the Relax module of the model in this GGUF file (`prefill` and `decode`,
    /// weights as parameters named after its tensors; docs/llm.md) instead of compiling.
    #[arg(long = "import-gguf", value_name = "FILE.gguf")]
    import_gguf: Option<String>,
    /// With `--import-gguf` or a GGUF input: the positions the KV cache holds (default:
    /// the model's context length, at most 4096).
    #[arg(long = "context", value_name = "N")]
    context: Option<usize>,
    /// With `--import-gguf` or a GGUF input: the KV cache's element type, `f16`
    /// (default, as llama.cpp) or `f32`.
    #[arg(long = "cache-type", value_name = "TYPE", value_parser = relax_llm::spec::CacheType::parse)]
    cache_type: Option<relax_llm::spec::CacheType>,
    /// Write the output to this file (default: standard output).
    #[arg(short = 'o', value_name = "OUT")]
    output: Option<String>,
    /// The CPU to generate code for (default: the host's; `generic` for another
    /// architecture).
    #[arg(long, value_name = "NAME")]
    mcpu: Option<String>,
    /// The target triple for `--emit=llvm|asm|obj` (default: the host's), such as
    /// `aarch64-linux-gnu`.
    #[arg(long = "target", value_name = "TRIPLE")]
    target: Option<String>,
    /// Target features to turn on or off (`+avx2,-avx512f`), on top of the CPU's.
    #[arg(long = "mattr", value_name = "FEATURES")]
    mattr: Option<String>,
    /// With `--emit=lib`: the C compiler driver that links the library (default: `cc` for
    /// the host, `ARCH-linux-gnu-gcc` for another GNU/Linux target, `$RELAX_LINKER` when
    /// set).
    #[arg(long = "linker", value_name = "CMD")]
    linker: Option<String>,
    /// Check every buffer access of the kernels against its buffer's dims: an index out of
    /// range is a run-time error with the interpreter's message (docs/codegen.md).
    #[arg(long = "check-bounds")]
    check_bounds: bool,
    /// With `--emit=lib`: leave the module's source text out of the library (run-time
    /// errors then name no source line).
    #[arg(long = "strip-source")]
    strip_source: bool,
    /// The GPU architecture for `--emit=ptx`.
    #[arg(long = "ptx-arch", value_name = "ARCH", default_value = "sm_80")]
    ptx_arch: String,
    /// LLVM optimization level (0 to 3).
    #[arg(short = 'O', value_name = "N", default_value_t = 3, value_parser = clap::value_parser!(u32).range(0..=3))]
    opt_level: u32,
    /// Do not run the default lowering pipeline on modules that need it.
    #[arg(long = "no-default-pipeline")]
    no_default_pipeline: bool,
    /// Name the passes of the default pipeline that ran, on standard error.
    #[arg(long)]
    verbose: bool,
    /// Color diagnostics: `never` (default) or `always`.
    #[arg(long = "color", value_name = "WHEN", default_value = "never")]
    color: String,
}

fn fail(io: &mut Io<'_>, msg: impl std::fmt::Display) -> i32 {
    crate::cli::fail(io, "relax-translate", msg)
}

/// Runs `relax-translate`.
pub fn translate_main(args: Vec<OsString>, io: &mut Io<'_>) -> i32 {
    if let Some(msg) = crate::cli::non_utf8_arg("relax-translate", &args) {
        let _ = io.stderr.write_all(msg.as_bytes());
        return 1;
    }
    let cli = match TranslateCli::command().try_get_matches_from(args) {
        Ok(m) => match TranslateCli::from_arg_matches(&m) {
            Ok(c) => c,
            Err(e) => return fail(io, e),
        },
        Err(e) => return crate::cli::clap_exit(&e, io),
    };
    let color = match crate::cli::parse_color(&cli.color) {
        Ok(c) => c,
        Err(e) => return fail(io, e),
    };
    if let Some(path) = &cli.import_gguf {
        return import_gguf(&cli, path, io);
    }
    let emit_kind = cli.emit.clone().unwrap_or_default();
    // A GGUF model as the input: its module, compiled with the pipeline `relax-run`
    // gives GGUF models (docs/llm.md).
    let gguf_input = cli.input.as_deref().filter(|p| *p != "-" && crate::llm::is_gguf(p));
    if gguf_input.is_none() && (cli.context.is_some() || cli.cache_type.is_some()) {
        let flag = if cli.context.is_some() { "--context" } else { "--cache-type" };
        return fail(io, format!("`{flag}` sizes the KV cache of a GGUF model: give `--import-gguf` or a GGUF input"));
    }
    let (file, mut module) = match gguf_input {
        Some(path) => match crate::llm::import(path, cli.context, cli.cache_type) {
            Ok(fm) => fm,
            Err(e) => return fail(io, e),
        },
        None => {
            let file = match read_input(cli.input.as_deref(), io) {
                Ok(f) => f,
                Err(e) => return fail(io, e),
            };
            match relax_parser::parse_module(&file.text) {
                Ok(m) => (file, m),
                Err(d) => {
                    report(io, "relax-translate", &file, &d, color);
                    return 1;
                }
            }
        }
    };
    if let Err(d) = verify_diagnostics(&module) {
        report(io, "relax-translate", &file, &d, color);
        return 1;
    }
    if matches!(emit_kind.as_str(), "ptx" | "spirv") {
        if cli.target.is_some() || cli.mcpu.is_some() || cli.mattr.is_some() {
            let flag = if cli.target.is_some() {
                "--target"
            } else if cli.mcpu.is_some() {
                "--mcpu"
            } else {
                "--mattr"
            };
            return fail(io, format!("`{flag}` is for `--emit=llvm|asm|obj`; `--emit={emit_kind}` has its own target"));
        }
        // The GPU back ends (`gpu.rs`).
        let req = crate::gpu::GpuTranslate {
            emit: &emit_kind,
            ptx_arch: &cli.ptx_arch,
            default_pipeline: !cli.no_default_pipeline,
            verbose: cli.verbose,
            output: cli.output.as_deref(),
            color,
        };
        return crate::gpu::translate_gpu(&req, &file, module, io);
    }
    // The results each kernel overwrites completely, found before `schedule-cpu` (a
    // library's executable hands them out without zero-filling, as the JIT does).
    let mut overwrites = std::collections::HashMap::new();
    if cli.no_default_pipeline
        && emit_kind != "bytecode"
        && let Err(d) = crate::unlowered::check_lowered(&module)
    {
        report(io, "relax-translate", &file, &d, color);
        return 1;
    }
    if !cli.no_default_pipeline {
        let bits = crate::pipeline::vector_bits_for(cli.mcpu.as_deref(), cli.target.as_deref(), cli.mattr.as_deref());
        let mut note = |m: &relax_ir::Module| overwrites = crate::pipeline::overwritten_params(m);
        let piped = match gguf_input {
            Some(_) => crate::pipeline::run_llm_pipeline_with(&mut module, bits, &mut note)
                .map(|()| crate::pipeline::LLM_PIPELINE.to_vec()),
            None => crate::pipeline::run_default_pipeline_with(&mut module, bits, &mut note),
        };
        match piped {
            Ok(passes) => {
                if cli.verbose {
                    let _ = if passes.is_empty() {
                        writeln!(io.stderr, "relax-translate: default pipeline: nothing to do")
                    } else {
                        writeln!(io.stderr, "relax-translate: default pipeline: {}", passes.join(", "))
                    };
                }
            }
            Err(d) => {
                report(io, "relax-translate", &file, &d, color);
                return 1;
            }
        }
    }
    if let Err(d) = crate::pipeline::lower_tir(&mut module) {
        report(io, "relax-translate", &file, &d, color);
        return 1;
    }
    if emit_kind != "lib" && (cli.linker.is_some() || cli.strip_source) {
        let flag = if cli.linker.is_some() { "--linker" } else { "--strip-source" };
        return fail(io, format!("`{flag}` is for `--emit=lib`"));
    }
    if emit_kind == "lib" {
        return emit_lib(&module, &overwrites, &file, &cli, io, color);
    }
    let emitted = if emit_kind == "bytecode" { bytecode(&module, &file.name, &file.text) } else { emit(&module, &cli) };
    let out = match emitted {
        Ok(bytes) => bytes,
        Err(d) => {
            report(io, "relax-translate", &file, &d, color);
            return 1;
        }
    };
    match &cli.output {
        Some(path) => {
            if let Err(e) = std::fs::write(path, &out) {
                return fail(io, format!("cannot write `{path}`: {e}"));
            }
        }
        None => {
            let _ = io.stdout.write_all(&out);
        }
    }
    0
}

/// `--emit=bytecode`: the listing of the module's executable.
fn bytecode(module: &relax_ir::Module, name: &str, source: &str) -> Result<Vec<u8>, Vec<Diagnostic>> {
    let mut exec = relax_runtime::vm::Executable::compile(module).map_err(|e| vec![e.to_diagnostic()])?;
    exec.attach_source(name, source);
    Ok(relax_runtime::vm::print::listing(&exec).into_bytes())
}

#[cfg(feature = "llvm")]
fn emit(module: &relax_ir::Module, cli: &TranslateCli) -> Result<Vec<u8>, Vec<Diagnostic>> {
    use relax_codegen::llvm::{self, Emit, inkwell::context::Context};
    let one = |e: relax_codegen::CodegenError| vec![e.to_diagnostic()];
    let opts = codegen_options(cli);
    let tm = llvm::host_machine(&opts).map_err(one)?;
    let cx = Context::create();
    let lowered = llvm::lower_module(&cx, module, &tm, &opts);
    if !lowered.failed.is_empty() {
        return Err(lowered
            .failed
            .iter()
            .map(|(g, e)| {
                let mut d = e.to_diagnostic();
                d.message = format!("cannot compile `{}`: {}", module.globals[*g].name, d.message);
                d
            })
            .collect());
    }
    llvm::optimize(&lowered.module, &tm, &opts).map_err(one)?;
    llvm::verify(&lowered.module).map_err(one)?;
    let kind = match cli.emit.as_deref().unwrap_or("llvm") {
        "asm" => Emit::Asm,
        "obj" => Emit::Obj,
        _ => Emit::Llvm,
    };
    let mut out = Vec::new();
    if kind == Emit::Llvm {
        out.extend_from_slice(header(module, &lowered.kernels).as_bytes());
    }
    out.extend(llvm::emit(&lowered.module, &tm, kind).map_err(one)?);
    Ok(out)
}

/// `--emit=lib`: the shared library `-o` names.
#[cfg(feature = "llvm")]
fn emit_lib(
    module: &relax_ir::Module,
    overwrites: &std::collections::HashMap<relax_ir::Global, Vec<usize>>,
    file: &crate::source::SourceFile,
    cli: &TranslateCli,
    io: &mut Io<'_>,
    color: bool,
) -> i32 {
    let Some(out) = &cli.output else {
        return fail(io, "`--emit=lib` writes a file: give it with `-o FILE.so`");
    };
    let opts = codegen_options(cli);
    let req = crate::library::LibraryRequest {
        module,
        file,
        overwrites,
        opts: &opts,
        linker: cli.linker.as_deref(),
        strip_source: cli.strip_source,
    };
    match crate::library::write_library(req, std::path::Path::new(out)) {
        Ok(()) => 0,
        Err(d) => {
            report(io, "relax-translate", file, &d, color);
            1
        }
    }
}

#[cfg(not(feature = "llvm"))]
fn emit_lib(
    _: &relax_ir::Module,
    _: &std::collections::HashMap<relax_ir::Global, Vec<usize>>,
    _: &crate::source::SourceFile,
    _: &TranslateCli,
    io: &mut Io<'_>,
    _: bool,
) -> i32 {
    fail(io, "this build of relax-translate has no LLVM backend (built without the `llvm` feature)")
}

/// The code generator's options from the flags.
#[cfg(feature = "llvm")]
fn codegen_options(cli: &TranslateCli) -> relax_codegen::llvm::Options {
    relax_codegen::llvm::Options {
        opt_level: cli.opt_level,
        cpu: cli.mcpu.clone(),
        features: cli.mattr.clone(),
        triple: cli.target.clone(),
        check_bounds: cli.check_bounds,
    }
}

/// `--import-gguf`: the module of a GGUF model, printed.
fn import_gguf(cli: &TranslateCli, path: &str, io: &mut Io<'_>) -> i32 {
    if cli.input.is_some() {
        return fail(io, "`--import-gguf` reads the model file it names: give no input module");
    }
    let module = match crate::llm::import(path, cli.context, cli.cache_type) {
        Ok((_, m)) => m,
        Err(e) => return fail(io, e),
    };
    let text = relax_ir::printer::print_module(&module);
    match &cli.output {
        Some(out) => {
            if let Err(e) = std::fs::write(out, text) {
                return fail(io, format!("cannot write `{out}`: {e}"));
            }
        }
        None => {
            let _ = io.stdout.write_all(text.as_bytes());
        }
    }
    0
}

/// Comment lines naming each kernel's argument slots (`relax_codegen::abi`).
#[cfg(feature = "llvm")]
fn header(module: &relax_ir::Module, kernels: &[relax_codegen::llvm::Kernel]) -> String {
    use relax_codegen::abi::SlotKind;
    let mut s = String::from("; relax kernels: i32 NAME_packed(ptr args), args = 8-byte slots\n");
    for k in kernels {
        let f = module.prim_func(k.global).expect("a PrimFunc");
        let slots: Vec<String> = k
            .abi
            .slots
            .iter()
            .map(|sl| match (sl.kind, sl.var) {
                (SlotKind::Ret, _) => "ret: ptr".to_string(),
                (SlotKind::Handle, Some(v)) => format!("{}: ptr", f.pool.vars[v].name),
                (_, Some(v)) => format!("{}: {}", f.pool.vars[v].name, sl.dtype),
                _ => "?".to_string(),
            })
            .collect();
        s.push_str(&format!("; {}: ({})\n", k.packed_symbol, slots.join(", ")));
    }
    s
}

#[cfg(not(feature = "llvm"))]
fn emit(_: &relax_ir::Module, _: &TranslateCli) -> Result<Vec<u8>, Vec<Diagnostic>> {
    Err(vec![Diagnostic::error(
        relax_ir::Span::NONE,
        "this build of relax-translate has no LLVM backend (built without the `llvm` feature)",
    )])
}
