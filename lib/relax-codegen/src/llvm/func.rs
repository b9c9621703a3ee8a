//! One PrimFunc as LLVM functions: `i32 name_impl(<slots>)`, which runs the body, and
//! `i32 name_packed(ptr args)`, which reads the slots of [`crate::abi`] and calls it.
//!
//! The body function is internal (the optimizer inlines it into the wrapper); its name
//! has a suffix so that a kernel named like a libm function (`exp`, `tanh`) does not
//! collide with it.

use inkwell::AddressSpace;
use inkwell::context::Context;
use inkwell::module::{Linkage, Module as LModule};
use inkwell::types::BasicMetadataTypeEnum;
use relax_ir::{AttrValue, PrimFunc};

use super::types::reg_type;
use super::{Fx, KernelError, R, Shared, ffi};
use crate::abi::{KernelAbi, SlotKind, kernel_abi};
use crate::error::CodegenError;

/// True when the PrimFunc promises that its buffers do not overlap.
pub(super) fn noalias(f: &PrimFunc) -> bool {
    ["tirx.noalias", "tir.noalias"].iter().any(|k| match f.attrs.get(k) {
        Some(AttrValue::Bool(b)) => *b,
        Some(v) => v.as_int().is_some_and(|i| i != 0),
        None => false,
    })
}

/// Lowers one PrimFunc into `module`.
pub(super) fn lower_prim_func<'ctx>(
    cx: &'ctx Context,
    module: &LModule<'ctx>,
    f: &PrimFunc,
    name: &str,
    target: (&str, &str),
    check_bounds: bool,
) -> R<(KernelAbi, Vec<KernelError>)> {
    crate::error::require_lowered(name, f)?;
    let abi = kernel_abi(f);
    let sh = Shared::new(cx, module, f, name, target, None, check_bounds);
    let ptr_t = cx.ptr_type(AddressSpace::default());
    let i32t = cx.i32_type();
    let mut ptys: Vec<BasicMetadataTypeEnum<'ctx>> = Vec::new();
    for s in &abi.slots {
        let t = match s.kind {
            SlotKind::Handle | SlotKind::Ret => ptr_t.into(),
            SlotKind::Scalar | SlotKind::ShapeVar => reg_type(cx, s.dtype).ok_or_else(|| {
                CodegenError::new(format!("PrimFunc `{name}`: parameters of dtype {} are not supported", s.dtype))
            })?,
        };
        ptys.push(t.into());
    }
    let body = module.add_function(&format!("{name}_impl"), i32t.fn_type(&ptys, false), Some(Linkage::Internal));
    Fx::set_fn_attrs(&sh, body);
    {
        let mut fx = Fx::new(&sh, body);
        // Scalars first: buffer shapes and strides are expressions of them.
        for (i, s) in abi.slots.iter().enumerate() {
            let p = body.get_nth_param(i as u32).expect("a parameter");
            match (s.kind, s.var) {
                (SlotKind::Scalar | SlotKind::ShapeVar, Some(v)) => {
                    fx.vars.insert(v, p);
                }
                (SlotKind::Ret, _) => fx.ret_slot = Some(p.into_pointer_value()),
                _ => {}
            }
        }
        for (i, s) in abi.slots.iter().enumerate() {
            let (SlotKind::Handle, Some(v)) = (s.kind, s.var) else { continue };
            let p = body.get_nth_param(i as u32).expect("a parameter").into_pointer_value();
            fx.data.insert(v, p);
            if let Some(b) = f.param_buffer(v) {
                if sh.noalias {
                    Fx::set_noalias(&sh, body, i as u32);
                }
                fx.bind_param_buffer(b, p)?;
            }
        }
        fx.exec(f.body)?;
        fx.b.build_return(Some(&i32t.const_zero()))?;
    }
    let packed = module.add_function(&format!("{name}_packed"), i32t.fn_type(&[ptr_t.into()], false), None);
    Fx::set_fn_attrs(&sh, packed);
    {
        let fx = Fx::new(&sh, packed);
        let args = packed.get_nth_param(0).expect("args").into_pointer_value();
        let i64t = cx.i64_type();
        let mut vals = Vec::with_capacity(abi.slots.len());
        for (i, s) in abi.slots.iter().enumerate() {
            let at = ffi::elem_ptr(&fx.b, i64t.into(), args, i64t.const_int(i as u64, false))?;
            let dt = if s.kind == SlotKind::Ret { relax_ir::DataType::HANDLE } else { s.dtype };
            let raw = fx.b.build_load(fx.slot_ty(dt), at, "slot")?;
            vals.push(fx.slot_to_value(raw, dt)?.into());
        }
        let r = fx.b.build_call(body, &vals, "r")?;
        let r = r.try_as_basic_value().basic().expect("i32");
        fx.b.build_return(Some(&r))?;
    }
    Ok((abi, sh.errors.into_inner()))
}
