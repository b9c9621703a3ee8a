//! The ops TVM registers (`tvm.ir.Op.list_op_names()` of TVM 0.25 and 0.27, the
//! `relax.` prefix left out), so that the parser can tell an op TVM has but the op table
//! does not yet model from a name TVM rejects too (`R.foo` is not an op of TVM's `R`
//! namespace, and TVM's parser fails on it). Refresh it with the command in
//! `docs/diagnostics.md` (section "Names the parser does not know") when a TVM release
//! adds ops.

/// Op names registered by TVM 0.25 or 0.27, without `relax.`, sorted.
pub(crate) const TVM_OPS: &[&str] = &[
    "abs",
    "acos",
    "acosh",
    "add",
    "arange",
    "argmax",
    "argmin",
    "argsort",
    "asin",
    "asinh",
    "assert_op",
    "astype",
    "atan",
    "atan2",
    "atanh",
    "bitwise_and",
    "bitwise_not",
    "bitwise_or",
    "bitwise_xor",
    "broadcast_to",
    "bucketize",
    "builtin.alloc_tensor",
    "builtin.stop_lift_params",
    "call_builtin_with_ctx",
    "call_dps_packed",
    "call_inplace_packed",
    "call_pure_packed",
    "call_py_func",
    "call_tir",
    "call_tir_inplace",
    "call_tir_with_grad",
    "ccl.allgather",
    "ccl.allreduce",
    "ccl.broadcast_from_worker0",
    "ccl.scatter_from_worker0",
    "ceil",
    "clip",
    "collapse_sum_like",
    "collapse_sum_to",
    "concat",
    "cos",
    "cosh",
    "cumprod",
    "cumsum",
    "dequantize",
    "dist.annotate_sharding",
    "dist.call_tir_local_view",
    "dist.redistribute",
    "dist.redistribute_replica_to_shard",
    "divide",
    "dynamic_strided_slice",
    "einsum",
    "equal",
    "erf",
    "ewise_fma",
    "exp",
    "expand_dims",
    "eye",
    "eye_like",
    "flatten",
    "flip",
    "floor",
    "floor_divide",
    "floor_mod",
    "full",
    "full_like",
    "gather_elements",
    "gather_nd",
    "grad.avg_pool2d_backward",
    "grad.end_checkpoint",
    "grad.max_pool2d_backward",
    "grad.nll_loss_backward",
    "grad.no_grad",
    "grad.start_checkpoint",
    "grad.take_backward",
    "greater",
    "greater_equal",
    "hamming_window",
    "hint_on_device",
    "image.affine_grid",
    "image.grid_sample",
    "image.resize2d",
    "image.resize3d",
    "index_put",
    "index_tensor",
    "inspect.tensor_byte_offset",
    "inspect.tensor_dtype_bits",
    "inspect.tensor_dtype_code",
    "inspect.tensor_dtype_lanes",
    "inspect.tensor_elem_offset",
    "inspect.tensor_ndim",
    "inspect.tensor_shape_i",
    "inspect.tensor_stride_i",
    "invoke_closure",
    "invoke_pure_closure",
    "isfinite",
    "isinf",
    "isnan",
    "layout_transform",
    "left_shift",
    "less",
    "less_equal",
    "log",
    "log_add_exp",
    "logical_and",
    "logical_not",
    "logical_or",
    "logical_xor",
    "make_closure",
    "matmul",
    "max",
    "maximum",
    "mean",
    "median",
    "memory.alloc_storage",
    "memory.alloc_tensor",
    "memory.ensure_zero_offset",
    "memory.kill_storage",
    "memory.kill_tensor",
    "memory.view",
    "meshgrid",
    "min",
    "minimum",
    "mod",
    "multinomial_from_uniform",
    "multiply",
    "negative",
    "nn.adaptive_avg_pool1d",
    "nn.adaptive_avg_pool2d",
    "nn.adaptive_avg_pool3d",
    "nn.attention",
    "nn.attention_bias",
    "nn.attention_var_len",
    "nn.avg_pool1d",
    "nn.avg_pool2d",
    "nn.avg_pool3d",
    "nn.batch_flatten",
    "nn.batch_norm",
    "nn.conv1d",
    "nn.conv1d_transpose",
    "nn.conv2d",
    "nn.conv2d_transpose",
    "nn.conv3d",
    "nn.conv3d_transpose",
    "nn.cross_entropy_with_logits",
    "nn.dropout",
    "nn.gelu",
    "nn.gelu_tanh",
    "nn.group_norm",
    "nn.instance_norm",
    "nn.layer_norm",
    "nn.leakyrelu",
    "nn.log_softmax",
    "nn.max_pool1d",
    "nn.max_pool2d",
    "nn.max_pool3d",
    "nn.nll_loss",
    "nn.pad",
    "nn.pixel_shuffle",
    "nn.prelu",
    "nn.relu",
    "nn.rms_norm",
    "nn.selu",
    "nn.silu",
    "nn.softmax",
    "nn.softplus",
    "nonzero",
    "not_equal",
    "null_value",
    "one_hot",
    "ones",
    "ones_like",
    "outer",
    "permute_dims",
    "power",
    "print",
    "prod",
    "quantize",
    "repeat",
    "reshape",
    "reverse_sequence",
    "right_shift",
    "round",
    "rsqrt",
    "scatter_elements",
    "scatter_nd",
    "shape_of",
    "shape_to_tensor",
    "sigmoid",
    "sign",
    "sin",
    "sinh",
    "size",
    "slice_scatter",
    "sort",
    "split",
    "sqrt",
    "square",
    "squeeze",
    "stack",
    "std",
    "strided_slice",
    "subtract",
    "sum",
    "take",
    "tan",
    "tanh",
    "tensor_to_shape",
    "tile",
    "to_vdevice",
    "topk",
    "tril",
    "triu",
    "trunc",
    "unique",
    "variance",
    "vision.all_class_non_max_suppression",
    "vision.get_valid_counts",
    "vision.multibox_transform_loc",
    "vision.non_max_suppression",
    "vision.roi_align",
    "vision.roi_pool",
    "vm.alloc_storage",
    "vm.alloc_tensor",
    "vm.call_tir_dyn",
    "vm.kill_object",
    "where",
    "wrap_param",
    "zeros",
    "zeros_like",
];

/// True when TVM 0.25 or 0.27 registers the op `relax.<name>`.
pub(crate) fn is_tvm_op(name: &str) -> bool {
    TVM_OPS.binary_search(&name).is_ok()
}

/// The known op name closest to `name` (edit distance at most a third of its length,
/// and at most 3), for a "did you mean" note. `extra` are more candidates (the op table).
pub(crate) fn suggest<'a>(name: &str, extra: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (name.len() / 3).clamp(1, 3);
    let mut best: Option<(usize, &str)> = None;
    for cand in TVM_OPS.iter().copied().chain(extra) {
        let d = edit_distance(name, cand, limit);
        if d <= limit && best.is_none_or(|(bd, bc)| (d, cand) < (bd, bc)) {
            best = Some((d, cand));
        }
    }
    best.map(|(_, c)| c)
}

/// Levenshtein distance of `a` and `b` (bytes), or `limit + 1` when it exceeds `limit`.
fn edit_distance(a: &str, b: &str, limit: usize) -> usize {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len().abs_diff(b.len()) > limit {
        return limit + 1;
    }
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, &ca) in a.iter().enumerate() {
        cur[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()].min(limit + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorted_and_unique() {
        assert!(TVM_OPS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn lookups() {
        assert!(is_tvm_op("nn.softmax"));
        assert!(is_tvm_op("reverse_sequence"));
        assert!(!is_tvm_op("foo"));
        assert!(!is_tvm_op("nn.sofmax"));
        assert_eq!(suggest("nn.sofmax", std::iter::empty()), Some("nn.softmax"));
        assert_eq!(suggest("ad", std::iter::empty()), Some("add"));
        assert_eq!(suggest("completely_unknown", std::iter::empty()), None);
        assert_eq!(suggest("my_op", ["my_opp"].into_iter()), Some("my_opp"));
    }

    #[test]
    fn distance() {
        assert_eq!(edit_distance("kitten", "sitting", 5), 3);
        assert_eq!(edit_distance("abc", "abc", 1), 0);
        assert_eq!(edit_distance("a", "abcdef", 2), 3);
    }
}
