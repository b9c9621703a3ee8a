//! GPU kernels from the CPU lowering: the hooks through which a device back end
//! (`crate::nvptx`) reuses this module's statement and expression lowering.
//!
//! A [`Device`] says what differs on the target: the address space of buffer pointers,
//! how a function becomes a kernel entry point, where the block and thread indices come
//! from, and how math functions are computed. [`lower_kernel`] builds one launch of a
//! function scheduled by `schedule-gpu` ([`crate::gpu::Launch`]) as a `void` kernel taking
//! the function's buffers (global memory) then its scalar arguments, binds the
//! `blockIdx.x` / `threadIdx.x` variables to the device's indices, and lowers the
//! launch's body with the CPU code ([`Fx::exec`]). Inside a kernel:
//!
//! * math calls go to [`Device::math`] first (the CPU lowering calls libm);
//! * a run-time error (a failed `assert`, a negative allocation dim) executes
//!   `llvm.trap`, since a kernel has no result code;
//! * an allocation must fit a thread's stack (no `calloc` on the device);
//! * nested parallel loops run serially.

use inkwell::AddressSpace;
use inkwell::builder::Builder;
use inkwell::context::Context;
use inkwell::module::Module as LModule;
use inkwell::types::BasicMetadataTypeEnum;
use inkwell::values::{FloatValue, FunctionValue, IntValue};
use relax_ir::Intrinsic;
use relax_ir::{DataType, PrimFunc};

use super::types::reg_type;
use super::{Fx, R, Shared};
use crate::error::CodegenError;
use crate::gpu::{BufSource, GpuFunc, Launch};

/// What a GPU target changes in the lowering.
pub(crate) trait Device {
    /// The address space of the buffer pointers a kernel receives.
    fn global_addrspace(&self) -> AddressSpace;
    /// Makes `func` a kernel entry point with at most `threads` threads per block.
    fn mark_kernel<'ctx>(&self, d: &DeviceCx<'_, 'ctx>, func: FunctionValue<'ctx>, threads: u32);
    /// The index of the running block (`block`) or of the thread in its block, along x.
    fn index<'ctx>(&self, d: &DeviceCx<'_, 'ctx>, block: bool) -> R<IntValue<'ctx>>;
    /// The float math function `name` (`exp`, `pow`, ...) on `args`, at their type;
    /// `None` when the CPU lowering's LLVM intrinsic suits the target (`sqrt`, `floor`).
    fn math<'ctx>(
        &self,
        d: &DeviceCx<'_, 'ctx>,
        name: Intrinsic,
        args: &[FloatValue<'ctx>],
    ) -> Option<R<FloatValue<'ctx>>>;
}

/// What a [`Device`] hook may build with.
pub(crate) struct DeviceCx<'b, 'ctx> {
    /// The context.
    pub cx: &'ctx Context,
    /// The module being built.
    pub module: &'b LModule<'ctx>,
    /// The builder, positioned where the hook's code goes.
    pub b: &'b Builder<'ctx>,
}

impl<'ctx> Fx<'_, '_, 'ctx> {
    fn device_cx(&self) -> DeviceCx<'_, 'ctx> {
        DeviceCx { cx: self.sh.cx, module: self.sh.module, b: &self.b }
    }

    /// The device's lowering of math function `name`, when compiling a kernel.
    pub(super) fn device_math(&self, name: Intrinsic, args: &[FloatValue<'ctx>]) -> Option<R<FloatValue<'ctx>>> {
        let dev = self.sh.device?;
        dev.math(&self.device_cx(), name, args)
    }

    /// In a kernel, a run-time error traps: `if cond { llvm.trap() }`.
    pub(super) fn device_fail_if(&mut self, cond: IntValue<'ctx>) -> R<()> {
        let trap = inkwell::intrinsics::Intrinsic::find("llvm.trap")
            .and_then(|i| i.get_declaration(self.sh.module, &[]))
            .ok_or_else(|| CodegenError::new("internal error: no LLVM intrinsic `llvm.trap`"))?;
        let fail = self.sh.cx.append_basic_block(self.func, "trap");
        let ok = self.sh.cx.append_basic_block(self.func, "ok");
        self.b.build_conditional_branch(cond, fail, ok)?;
        self.b.position_at_end(fail);
        self.b.build_call(trap, &[], "")?;
        self.b.build_unreachable()?;
        self.b.position_at_end(ok);
        Ok(())
    }
}

/// Builds launch `launch` of `gf` (the analysis of `f`) as kernel `launch.entry` of
/// `module`: `void entry(<buffers in global memory>, <scalar arguments>)`.
pub(crate) fn lower_kernel<'ctx>(
    cx: &'ctx Context,
    module: &LModule<'ctx>,
    f: &PrimFunc,
    gf: &GpuFunc,
    launch: &Launch,
    target: (&str, &str),
    device: &dyn Device,
) -> R<FunctionValue<'ctx>> {
    let name = launch.entry.as_str();
    let sh = Shared::new(cx, module, f, name, target, Some(device), false);
    let gptr = cx.ptr_type(device.global_addrspace());
    let mut ptys: Vec<BasicMetadataTypeEnum<'ctx>> = vec![gptr.into(); gf.buffers.len()];
    for &v in &gf.scalars {
        let dt = f.pool.vars[v].dtype;
        let t = reg_type(cx, dt).filter(|_| !dt.is_handle()).ok_or_else(|| {
            CodegenError::new(format!("`{name}`: scalar arguments of dtype {dt} are not supported in kernels"))
        })?;
        ptys.push(t.into());
    }
    let func = module.add_function(name, cx.void_type().fn_type(&ptys, false), None);
    Fx::set_fn_attrs(&sh, func);
    let mut fx = Fx::new(&sh, func);
    fx.in_parallel = true;
    device.mark_kernel(&fx.device_cx(), func, launch.threads);
    let param = |i: usize| func.get_nth_param(i as u32).expect("a parameter");
    let nb = gf.buffers.len();
    for (i, &v) in gf.scalars.iter().enumerate() {
        fx.vars.insert(v, param(nb + i));
    }
    for (i, gb) in gf.buffers.iter().enumerate() {
        let p = param(i).into_pointer_value();
        if let BufSource::Param(k) = gb.source {
            fx.data.insert(f.params[k], p);
        }
        if sh.noalias {
            Fx::set_noalias(&sh, func, i as u32);
        }
        fx.bind_param_buffer(gb.buffer, p)?;
    }
    for (block, var, min) in [(true, launch.block_var, launch.block_min), (false, launch.thread_var, launch.thread_min)]
    {
        let idx = device.index(&fx.device_cx(), block)?;
        let idx = fx.b.build_int_z_extend_or_bit_cast(idx, cx.i64_type(), "idx")?;
        let lo = fx.eval_i64(min)?;
        let v = fx.b.build_int_nsw_add(idx, lo, "idx")?;
        let v = fx.cast(v.into(), DataType::INT64, f.pool.vars[var].dtype)?;
        fx.bind_var(var, v);
    }
    fx.exec(launch.body)?;
    fx.b.build_return(None)?;
    Ok(func)
}
