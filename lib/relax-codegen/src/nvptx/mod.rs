//! TIR to PTX through LLVM's NVPTX backend (`docs/gpu.md`).
//!
//! Every launch of every PrimFunc scheduled by `schedule-gpu` ([`crate::gpu`]) becomes
//! an NVVM kernel, built by the CPU lowering with the hooks of [`crate::llvm::Device`]:
//!
//! * the kernel is `void NAME(ptr addrspace(1) <buffers>..., <scalar arguments>...)` with
//!   the `ptx_kernel` calling convention, listed in `!nvvm.annotations` as a `kernel`
//!   with `maxntidx` = its block size (`.entry NAME` and `.maxntid T, 1, 1` in PTX);
//!   buffers are in global memory (the function's parameter tensors, then its root
//!   allocations, as in [`crate::gpu::GpuFunc::buffers`]); scalar arguments (scalar
//!   parameters and symbolic dims) are passed by value with their own types;
//! * the `blockIdx.x` and `threadIdx.x` loops read `llvm.nvvm.read.ptx.sreg.ctaid.x` and
//!   `llvm.nvvm.read.ptx.sreg.tid.x`; grids are exactly the launch's block count, so no
//!   index is out of range;
//! * math is expanded in IR ([`math`]; libdevice is not used);
//! * a run-time error traps (`trap;`).
//!
//! The module is optimized with `default<O3>` for the NVPTX target machine of the chosen
//! architecture (`sm_80` by default) and printed as PTX. The host-side launch
//! description ([`crate::gpu::describe`]: grid and block sizes as symbolic expressions,
//! buffers, scalar arguments) heads the text as `// launch:` comment lines, which
//! `ptxas` and the CUDA driver ignore.

mod math;
#[cfg(test)]
mod tests;

use inkwell::context::Context;
use inkwell::intrinsics::Intrinsic as LlvmIntrinsic;
use inkwell::module::Module as LModule;
use inkwell::targets::{CodeModel, FileType, InitializationConfig, RelocMode, Target, TargetMachine, TargetTriple};
use inkwell::values::{FloatValue, FunctionValue, IntValue};
use inkwell::{AddressSpace, OptimizationLevel};
use relax_ir::Intrinsic;
use relax_ir::{Global, Module};

use crate::error::CodegenError;
use crate::gpu::{self, GpuFunc};
use crate::llvm::{Device, DeviceCx, lower_kernel};

/// The target triple of the kernels.
pub const TRIPLE: &str = "nvptx64-nvidia-cuda";

/// The GPU architectures LLVM 19's NVPTX backend knows, oldest first.
pub const ARCHS: &[&str] = &[
    "sm_30", "sm_32", "sm_35", "sm_37", "sm_50", "sm_52", "sm_53", "sm_60", "sm_61", "sm_62", "sm_70", "sm_72",
    "sm_75", "sm_80", "sm_86", "sm_87", "sm_89", "sm_90", "sm_90a",
];

/// The `ptx_kernel` calling convention's number in LLVM.
const PTX_KERNEL_CC: u32 = 71;

/// The result of lowering a module.
pub struct PtxModule {
    /// The PTX text, headed by the launch description.
    pub ptx: String,
    /// The kernels, per PrimFunc that could be compiled.
    pub funcs: Vec<GpuFunc>,
    /// The PrimFuncs that could not be compiled, and why.
    pub failed: Vec<(Global, CodegenError)>,
}

/// The NVPTX target.
struct Nvptx;

impl Device for Nvptx {
    fn global_addrspace(&self) -> AddressSpace {
        AddressSpace::from(1u16)
    }

    fn mark_kernel<'ctx>(&self, d: &DeviceCx<'_, 'ctx>, func: FunctionValue<'ctx>, threads: u32) {
        func.set_call_conventions(PTX_KERNEL_CC);
        let i32t = d.cx.i32_type();
        let f = func.as_global_value().as_pointer_value();
        for (key, v) in [("kernel", 1), ("maxntidx", u64::from(threads))] {
            let md = d.cx.metadata_node(&[f.into(), d.cx.metadata_string(key).into(), i32t.const_int(v, false).into()]);
            // Adding to a named metadata list cannot fail for a node.
            let _ = d.module.add_global_metadata("nvvm.annotations", &md);
        }
    }

    fn index<'ctx>(&self, d: &DeviceCx<'_, 'ctx>, block: bool) -> Result<IntValue<'ctx>, CodegenError> {
        let name = if block { "llvm.nvvm.read.ptx.sreg.ctaid.x" } else { "llvm.nvvm.read.ptx.sreg.tid.x" };
        let f = LlvmIntrinsic::find(name)
            .and_then(|i| i.get_declaration(d.module, &[]))
            .ok_or_else(|| CodegenError::new(format!("internal error: no LLVM intrinsic `{name}`")))?;
        let r = d.b.build_call(f, &[], if block { "ctaid" } else { "tid" })?;
        Ok(r.try_as_basic_value().basic().expect("an i32").into_int_value())
    }

    fn math<'ctx>(
        &self,
        d: &DeviceCx<'_, 'ctx>,
        name: Intrinsic,
        args: &[FloatValue<'ctx>],
    ) -> Option<Result<FloatValue<'ctx>, CodegenError>> {
        math::math(d, name, args)
    }
}

/// A target machine for `arch` (one of [`ARCHS`]).
pub fn machine(arch: &str) -> Result<TargetMachine, CodegenError> {
    if !ARCHS.contains(&arch) {
        return Err(CodegenError::new(format!(
            "unknown GPU architecture `{arch}` (LLVM 19 knows {})",
            ARCHS.join(", ")
        )));
    }
    static INIT: std::sync::Once = std::sync::Once::new();
    INIT.call_once(|| Target::initialize_nvptx(&InitializationConfig::default()));
    let triple = TargetTriple::create(TRIPLE);
    let target = Target::from_triple(&triple).map_err(|e| CodegenError::new(format!("no NVPTX target: {e}")))?;
    target
        .create_target_machine(&triple, arch, "", OptimizationLevel::Aggressive, RelocMode::Default, CodeModel::Default)
        .ok_or_else(|| CodegenError::new(format!("LLVM cannot make an NVPTX target machine for `{arch}`")))
}

/// The newest of [`ARCHS`] a device of compute capability `major.minor` runs (the CUDA
/// driver compiles PTX for older architectures on newer devices).
pub fn arch_for(major: i32, minor: i32) -> &'static str {
    let cc = major * 10 + minor;
    ARCHS
        .iter()
        .rev()
        .find(|a| a.trim_start_matches("sm_").parse::<i32>().is_ok_and(|v| v <= cc))
        .copied()
        .unwrap_or(ARCHS[0])
}

/// Lowers every PrimFunc of `m` scheduled for the GPU to PTX for `arch`. A function
/// that cannot be compiled is listed in [`PtxModule::failed`] and left out.
pub fn lower_module(m: &Module, arch: &str) -> Result<PtxModule, CodegenError> {
    let tm = machine(arch)?;
    let cx = Context::create();
    let module = cx.create_module("relax");
    let setup = |lm: &LModule<'_>| {
        lm.set_triple(&tm.get_triple());
        lm.set_data_layout(&tm.get_target_data().get_data_layout());
    };
    setup(&module);
    let mut funcs = Vec::new();
    let mut failed = Vec::new();
    for g in m.print_order() {
        let Some(f) = m.prim_func(g) else { continue };
        let name = m.globals[g].name.clone();
        let part = cx.create_module(&name);
        setup(&part);
        let result = gpu::analyze(&name, g, f).and_then(|gf| {
            for l in &gf.launches {
                lower_kernel(&cx, &part, f, &gf, l, (arch, ""), &Nvptx).map_err(|e| e.or_at(f.spans.func))?;
            }
            part.verify().map_err(|e| {
                CodegenError::new(format!("internal error: invalid NVVM IR for `{name}`: {}", e.to_string()))
                    .or_at(f.spans.func)
            })?;
            Ok(gf)
        });
        match result {
            Ok(gf) => match module.link_in_module(part) {
                Ok(()) => funcs.push(gf),
                Err(e) => failed.push((g, CodegenError::new(format!("cannot link `{name}`: {}", e.to_string())))),
            },
            Err(e) => failed.push((g, e)),
        }
    }
    let opts = crate::llvm::Options {
        opt_level: 3,
        cpu: Some(arch.to_string()),
        features: Some(String::new()),
        triple: None,
        check_bounds: false,
    };
    crate::llvm::optimize(&module, &tm, &opts)?;
    let asm = tm
        .write_to_memory_buffer(&module, FileType::Assembly)
        .map_err(|e| CodegenError::new(format!("LLVM cannot emit PTX: {e}")))?;
    let mut ptx = String::new();
    for gf in &funcs {
        let f = m.prim_func(gf.global).expect("a PrimFunc");
        for line in gpu::describe(f, gf) {
            ptx.push_str("// launch: ");
            ptx.push_str(&line);
            ptx.push('\n');
        }
    }
    ptx.push_str(&String::from_utf8_lossy(asm.as_slice()));
    Ok(PtxModule { ptx, funcs, failed })
}
