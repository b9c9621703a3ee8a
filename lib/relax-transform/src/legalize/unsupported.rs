//! The ops of the table that `legalize-ops` leaves alone, each with the reason, and the
//! ops TVM lowers to a packed function of the runtime instead of a PrimFunc.
//!
//! A unit test walks the op table: every op must have a legalization, a packed
//! function, or an entry here, so a new op cannot be forgotten.

/// Ops lowered to `R.call_packed(name, args...)` (TVM's `FCallPacked`), wrapped in
/// `R.call_pure_packed` when the op is pure.
pub const PACKED: &[(&str, &str)] = &[
    ("relax.print", "relax.run.print"),
    ("relax.assert_op", "relax.run.assert_op"),
    ("relax.shape_to_tensor", "relax.run.shape_to_tensor"),
    ("relax.unique", "relax.run.unique"),
    ("relax.nonzero", "relax.run.nonzero"),
];

pub use super::expand::EXPANDED;

/// The packed function an op is lowered to.
pub fn packed_name(op: &str) -> Option<&'static str> {
    PACKED.iter().find(|(n, _)| *n == op).map(|(_, f)| *f)
}

/// Ops of the table that are deliberately not legalized, with the reason.
pub const NOT_LEGALIZED: &[(&str, &str)] = &[
    ("relax.call_tir", "already a call of a PrimFunc"),
    ("relax.call_tir_inplace", "already a call of a PrimFunc"),
    ("relax.call_tir_with_grad", "already a call of a PrimFunc"),
    ("relax.call_dps_packed", "a call of an external function"),
    ("relax.call_pure_packed", "a call of an external function"),
    ("relax.call_inplace_packed", "a call of an external function"),
    ("relax.call_builtin_with_ctx", "a VM builtin call"),
    ("relax.invoke_closure", "a closure call, lowered by the VM"),
    ("relax.invoke_pure_closure", "a closure call, lowered by the VM"),
    ("relax.make_closure", "a closure, lowered by the VM"),
    ("relax.null_value", "a VM value"),
    ("relax.shape_of", "a shape query, lowered by VMShapeLower"),
    ("relax.builtin.alloc_tensor", "memory planning"),
    ("relax.builtin.stop_lift_params", "a marker for LiftTransformParams"),
    ("relax.memory.alloc_storage", "memory planning"),
    ("relax.memory.alloc_tensor", "memory planning"),
    ("relax.memory.kill_storage", "memory planning"),
    ("relax.memory.kill_tensor", "memory planning"),
    ("relax.memory.view", "TVM lowers it to a packed call (not done yet)"),
    ("relax.memory.ensure_zero_offset", "TVM lowers it to a packed call (not done yet)"),
    ("relax.vm.alloc_storage", "VM lowering"),
    ("relax.vm.alloc_tensor", "VM lowering"),
    ("relax.vm.kill_object", "VM lowering"),
    ("relax.vm.call_tir_dyn", "VM lowering"),
    ("relax.tensor_to_shape", "TVM lowers it to a packed call (not done yet)"),
    ("relax.cumsum", "TVM registers no legalization (dispatch passes handle it)"),
    ("relax.cumprod", "TVM registers no legalization (dispatch passes handle it)"),
    ("relax.sort", "TVM registers no legalization (dispatch passes handle it)"),
    ("relax.argsort", "TVM registers no legalization (dispatch passes handle it)"),
    ("relax.topk", "TVM registers no legalization (dispatch passes handle it)"),
    ("relax.dynamic_strided_slice", "data-dependent output shape: needs a shape function (not done)"),
    ("relax.einsum", "TOPI's einsum is an extern C++ compute (not done)"),
    (
        "relax.bucketize",
        "TOPI's searchsorted is an IR-builder kernel (and TVM 0.25 cannot legalize it for float data); not ported",
    ),
    ("relax.ccl.allgather", "distributed: TVM lowers it to a packed call of the runtime (not done)"),
    ("relax.ccl.allreduce", "distributed: TVM lowers it to a packed call of the runtime (not done)"),
    ("relax.ccl.broadcast_from_worker0", "distributed: TVM lowers it to a packed call of the runtime (not done)"),
    ("relax.ccl.scatter_from_worker0", "distributed: TVM lowers it to a packed call of the runtime (not done)"),
    ("relax.ewise_fma", "TVM registers no legalization"),
    ("relax.index_put", "TOPI's index_put is an IR-builder kernel; not ported yet (`Te::extern_stage` can express it)"),
    ("relax.index_tensor", "TVM binds the index tuple's items before the kernel (`gv = (i, j)[0]`); not ported yet"),
    (
        "relax.inspect.tensor_byte_offset",
        "TVM legalizes it to a host PrimFunc reading the DLTensor (`T.tvm_struct_get`), which TIR here has no model of; the interpreter answers it directly",
    ),
    (
        "relax.inspect.tensor_dtype_bits",
        "TVM legalizes it to a host PrimFunc reading the DLTensor (`T.tvm_struct_get`), which TIR here has no model of; the interpreter answers it directly",
    ),
    (
        "relax.inspect.tensor_dtype_code",
        "TVM legalizes it to a host PrimFunc reading the DLTensor (`T.tvm_struct_get`), which TIR here has no model of; the interpreter answers it directly",
    ),
    (
        "relax.inspect.tensor_dtype_lanes",
        "TVM legalizes it to a host PrimFunc reading the DLTensor (`T.tvm_struct_get`), which TIR here has no model of; the interpreter answers it directly",
    ),
    (
        "relax.inspect.tensor_elem_offset",
        "TVM legalizes it to a host PrimFunc reading the DLTensor (`T.tvm_struct_get`), which TIR here has no model of; the interpreter answers it directly",
    ),
    (
        "relax.inspect.tensor_ndim",
        "TVM legalizes it to a host PrimFunc reading the DLTensor (`T.tvm_struct_get`), which TIR here has no model of; the interpreter answers it directly",
    ),
    (
        "relax.inspect.tensor_shape_i",
        "TVM legalizes it to a host PrimFunc reading the DLTensor (`T.tvm_struct_get`), which TIR here has no model of; the interpreter answers it directly",
    ),
    (
        "relax.inspect.tensor_stride_i",
        "TVM legalizes it to a host PrimFunc reading the DLTensor (`T.tvm_struct_get`), which TIR here has no model of; the interpreter answers it directly",
    ),
    ("relax.median", "TOPI's median sorts with an extern kernel; not ported"),
    (
        "relax.multinomial_from_uniform",
        "TVM's LegalizeOps leaves it; its DispatchSampling pass lowers it (`cumsum` and a `get_sample_index` PrimFunc; not ported)",
    ),
    ("relax.nn.attention_var_len", "variable-length (packed sequence) attention; not ported"),
    (
        "relax.nn.pixel_shuffle",
        "TVM 0.25's legalization calls `topi.nn.pixel_shuffle`, which 0.25 does not have (LegalizeOps fails)",
    ),
    ("relax.scatter_nd", "TOPI's scatter_nd is an IR-builder kernel after a transpose of the indices; not ported yet"),
    ("relax.to_vdevice", "a device annotation, handled by RealizeVDevice"),
    ("relax.vision.all_class_non_max_suppression", "TOPI's vision kernels (sorting, IR-builder loops); not ported"),
    ("relax.vision.get_valid_counts", "TOPI's vision kernels (sorting, IR-builder loops); not ported"),
    ("relax.vision.multibox_transform_loc", "TOPI's vision kernels (sorting, IR-builder loops); not ported"),
    ("relax.vision.non_max_suppression", "TOPI's vision kernels (sorting, IR-builder loops); not ported"),
    ("relax.vision.roi_align", "TOPI's vision kernels (sorting, IR-builder loops); not ported"),
    ("relax.vision.roi_pool", "TOPI's vision kernels (sorting, IR-builder loops); not ported"),
    ("relax.wrap_param", "TVM registers no legalization (the interpreter runs it with a kernel)"),
    ("relax.hint_on_device", "a device annotation, handled by RealizeVDevice"),
    ("relax.nn.dropout", "TVM leaves it to the frontend translator (its legalization returns the call)"),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::legalize::legalization;
    use relax_ir::op::OPS;
    use relax_ir::op::lookup;

    /// Every op of the table is either legalized or listed, with a reason, as not.
    #[test]
    fn every_op_is_accounted_for() {
        let mut missing = Vec::new();
        for d in OPS {
            let listed = NOT_LEGALIZED.iter().any(|(n, _)| *n == d.name);
            let has = legalization(d.name).is_some() || packed_name(d.name).is_some() || EXPANDED.contains(&d.name);
            assert!(!(listed && has), "{} is legalized but also listed in NOT_LEGALIZED", d.name);
            if !listed && !has {
                missing.push(d.name);
            }
        }
        assert!(missing.is_empty(), "ops with neither a legalization nor a NOT_LEGALIZED entry: {missing:?}");
        for (n, why) in NOT_LEGALIZED {
            assert!(!why.is_empty());
            assert!(lookup(n).is_some(), "NOT_LEGALIZED names {n}, which the op table does not know");
        }
    }
}
