//! The ops of the table that `legalize-ops` leaves alone, each with the reason, and the
//! ops TVM lowers to a packed function of the runtime instead of a PrimFunc.
//!
//! A unit test walks the op table: every op must have a legalization, a packed
//! function, or an entry here, so a new op cannot be forgotten.

/// Ops lowered to `R.call_packed(name, args...)` (TVM's `FCallPacked`), wrapped in
/// `R.call_pure_packed` when the op is pure.
pub const PACKED: &[(OpId, &str)] = &[
    (ops::PRINT, "relax.run.print"),
    (ops::ASSERT_OP, "relax.run.assert_op"),
    (ops::SHAPE_TO_TENSOR, "relax.run.shape_to_tensor"),
    (ops::UNIQUE, "relax.run.unique"),
    (ops::NONZERO, "relax.run.nonzero"),
];

pub use super::expand::EXPANDED;
use relax_ir::op::{OpId, ops};

/// The packed function an op is lowered to.
pub fn packed_name(op: OpId) -> Option<&'static str> {
    PACKED.iter().find(|(n, _)| *n == op).map(|(_, f)| *f)
}

/// Ops of the table that are deliberately not legalized, with the reason.
pub const NOT_LEGALIZED: &[(OpId, &str)] = &[
    (ops::CALL_TIR, "already a call of a PrimFunc"),
    (ops::CALL_TIR_INPLACE, "already a call of a PrimFunc"),
    (ops::CALL_TIR_WITH_GRAD, "already a call of a PrimFunc"),
    (ops::CALL_DPS_PACKED, "a call of an external function"),
    (ops::CALL_PURE_PACKED, "a call of an external function"),
    (ops::CALL_INPLACE_PACKED, "a call of an external function"),
    (ops::CALL_BUILTIN_WITH_CTX, "a VM builtin call"),
    (ops::INVOKE_CLOSURE, "a closure call, lowered by the VM"),
    (ops::INVOKE_PURE_CLOSURE, "a closure call, lowered by the VM"),
    (ops::MAKE_CLOSURE, "a closure, lowered by the VM"),
    (ops::NULL_VALUE, "a VM value"),
    (ops::SHAPE_OF, "a shape query, lowered by VMShapeLower"),
    (ops::BUILTIN_ALLOC_TENSOR, "memory planning"),
    (ops::BUILTIN_STOP_LIFT_PARAMS, "a marker for LiftTransformParams"),
    (ops::MEMORY_ALLOC_STORAGE, "memory planning"),
    (ops::MEMORY_ALLOC_TENSOR, "memory planning"),
    (ops::MEMORY_KILL_STORAGE, "memory planning"),
    (ops::MEMORY_KILL_TENSOR, "memory planning"),
    (ops::MEMORY_VIEW, "TVM lowers it to a packed call (not done yet)"),
    (ops::MEMORY_ENSURE_ZERO_OFFSET, "TVM lowers it to a packed call (not done yet)"),
    (ops::VM_ALLOC_STORAGE, "VM lowering"),
    (ops::VM_ALLOC_TENSOR, "VM lowering"),
    (ops::VM_KILL_OBJECT, "VM lowering"),
    (ops::VM_CALL_TIR_DYN, "VM lowering"),
    (ops::TENSOR_TO_SHAPE, "TVM lowers it to a packed call (not done yet)"),
    (ops::CUMSUM, "TVM registers no legalization (dispatch passes handle it)"),
    (ops::CUMPROD, "TVM registers no legalization (dispatch passes handle it)"),
    (ops::SORT, "TVM registers no legalization (dispatch passes handle it)"),
    (ops::ARGSORT, "TVM registers no legalization (dispatch passes handle it)"),
    (ops::TOPK, "TVM registers no legalization (dispatch passes handle it)"),
    (ops::DYNAMIC_STRIDED_SLICE, "data-dependent output shape: needs a shape function (not done)"),
    (ops::EINSUM, "TOPI's einsum is an extern C++ compute (not done)"),
    (
        ops::BUCKETIZE,
        "TOPI's searchsorted is an IR-builder kernel (and TVM 0.25 cannot legalize it for float data); not ported",
    ),
    (ops::CCL_ALLGATHER, "distributed: TVM lowers it to a packed call of the runtime (not done)"),
    (ops::CCL_ALLREDUCE, "distributed: TVM lowers it to a packed call of the runtime (not done)"),
    (ops::CCL_BROADCAST_FROM_WORKER0, "distributed: TVM lowers it to a packed call of the runtime (not done)"),
    (ops::CCL_SCATTER_FROM_WORKER0, "distributed: TVM lowers it to a packed call of the runtime (not done)"),
    (ops::EWISE_FMA, "TVM registers no legalization"),
    (ops::INDEX_PUT, "TOPI's index_put is an IR-builder kernel; not ported yet (`Te::extern_stage` can express it)"),
    (ops::INDEX_TENSOR, "TVM binds the index tuple's items before the kernel (`gv = (i, j)[0]`); not ported yet"),
    (
        ops::INSPECT_TENSOR_BYTE_OFFSET,
        "TVM legalizes it to a host PrimFunc reading the DLTensor (`T.tvm_struct_get`), which TIR here has no model of; the interpreter answers it directly",
    ),
    (
        ops::INSPECT_TENSOR_DTYPE_BITS,
        "TVM legalizes it to a host PrimFunc reading the DLTensor (`T.tvm_struct_get`), which TIR here has no model of; the interpreter answers it directly",
    ),
    (
        ops::INSPECT_TENSOR_DTYPE_CODE,
        "TVM legalizes it to a host PrimFunc reading the DLTensor (`T.tvm_struct_get`), which TIR here has no model of; the interpreter answers it directly",
    ),
    (
        ops::INSPECT_TENSOR_DTYPE_LANES,
        "TVM legalizes it to a host PrimFunc reading the DLTensor (`T.tvm_struct_get`), which TIR here has no model of; the interpreter answers it directly",
    ),
    (
        ops::INSPECT_TENSOR_ELEM_OFFSET,
        "TVM legalizes it to a host PrimFunc reading the DLTensor (`T.tvm_struct_get`), which TIR here has no model of; the interpreter answers it directly",
    ),
    (
        ops::INSPECT_TENSOR_NDIM,
        "TVM legalizes it to a host PrimFunc reading the DLTensor (`T.tvm_struct_get`), which TIR here has no model of; the interpreter answers it directly",
    ),
    (
        ops::INSPECT_TENSOR_SHAPE_I,
        "TVM legalizes it to a host PrimFunc reading the DLTensor (`T.tvm_struct_get`), which TIR here has no model of; the interpreter answers it directly",
    ),
    (
        ops::INSPECT_TENSOR_STRIDE_I,
        "TVM legalizes it to a host PrimFunc reading the DLTensor (`T.tvm_struct_get`), which TIR here has no model of; the interpreter answers it directly",
    ),
    (ops::MEDIAN, "TOPI's median sorts with an extern kernel; not ported"),
    (
        ops::MULTINOMIAL_FROM_UNIFORM,
        "TVM's LegalizeOps leaves it; its DispatchSampling pass lowers it (`cumsum` and a `get_sample_index` PrimFunc; not ported)",
    ),
    (ops::NN_ATTENTION_VAR_LEN, "variable-length (packed sequence) attention; not ported"),
    (
        ops::NN_PIXEL_SHUFFLE,
        "TVM 0.25's legalization calls `topi.nn.pixel_shuffle`, which 0.25 does not have (LegalizeOps fails)",
    ),
    (ops::SCATTER_ND, "TOPI's scatter_nd is an IR-builder kernel after a transpose of the indices; not ported yet"),
    (ops::TO_VDEVICE, "a device annotation, handled by RealizeVDevice"),
    (ops::VISION_ALL_CLASS_NON_MAX_SUPPRESSION, "TOPI's vision kernels (sorting, IR-builder loops); not ported"),
    (ops::VISION_GET_VALID_COUNTS, "TOPI's vision kernels (sorting, IR-builder loops); not ported"),
    (ops::VISION_MULTIBOX_TRANSFORM_LOC, "TOPI's vision kernels (sorting, IR-builder loops); not ported"),
    (ops::VISION_NON_MAX_SUPPRESSION, "TOPI's vision kernels (sorting, IR-builder loops); not ported"),
    (ops::VISION_ROI_ALIGN, "TOPI's vision kernels (sorting, IR-builder loops); not ported"),
    (ops::VISION_ROI_POOL, "TOPI's vision kernels (sorting, IR-builder loops); not ported"),
    (ops::WRAP_PARAM, "TVM registers no legalization (the interpreter runs it with a kernel)"),
    (ops::HINT_ON_DEVICE, "a device annotation, handled by RealizeVDevice"),
    (ops::NN_DROPOUT, "TVM leaves it to the frontend translator (its legalization returns the call)"),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::legalize::legalization;
    use relax_ir::op::OP_COUNT;

    /// Every op of the table is either legalized or listed, with a reason, as not.
    #[test]
    fn every_op_is_accounted_for() {
        let mut missing = Vec::new();
        for id in (0..OP_COUNT).map(|i| OpId(i as u16)) {
            let listed = NOT_LEGALIZED.iter().any(|(n, _)| *n == id);
            let has = legalization(id).is_some() || packed_name(id).is_some() || EXPANDED.contains(&id);
            assert!(!(listed && has), "{} is legalized but also listed in NOT_LEGALIZED", id.name());
            if !listed && !has {
                missing.push(id.name());
            }
        }
        assert!(missing.is_empty(), "ops with neither a legalization nor a NOT_LEGALIZED entry: {missing:?}");
        for (_, why) in NOT_LEGALIZED {
            assert!(!why.is_empty());
        }
    }
}
