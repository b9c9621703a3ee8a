//! The op table's entries (TVM 0.25's Python signatures; attribute defaults as TVM prints
//! them).

use super::{ArgKind as K, AttrKind as A, Dflt as D, OpClass, OpDef, Param, ParamRole};

const fn arg(name: &'static str, kind: K) -> Param {
    Param { name, role: ParamRole::Arg { kind, optional: false } }
}
const fn x(name: &'static str) -> Param {
    arg(name, K::Expr)
}
const fn opt(name: &'static str, kind: K) -> Param {
    Param { name, role: ParamRole::Arg { kind, optional: true } }
}
const fn at(name: &'static str, kind: A, default: D) -> Param {
    Param { name, role: ParamRole::Attr { kind, default } }
}
const fn op(name: &'static str, params: &'static [Param]) -> OpDef {
    OpDef { name, params, class: OpClass::Compute, pure: true }
}
const fn special(name: &'static str, params: &'static [Param], class: OpClass, pure: bool) -> OpDef {
    OpDef { name, params, class, pure }
}

const UNARY: &[Param] = &[x("x")];
const DATA: &[Param] = &[x("data")];
const BINARY: &[Param] = &[x("x1"), x("x2")];
const REDUCE: &[Param] = &[x("x"), at("axis", A::OptIntList, D::None), at("keepdims", A::Bool, D::Bool(false))];
const ARGREDUCE: &[Param] = &[x("x"), at("axis", A::OptInt, D::None), at("keepdims", A::Bool, D::Bool(false))];
const LIKE: &[Param] = &[x("x"), at("dtype", A::DType, D::Str("void"))];
const TRI: &[Param] = &[x("x"), arg("k", K::PrimValue)];
const DPS: &[Param] = &[x("func"), arg("args", K::TensorTuple), opt("packed_ints", K::Shape)];
const PACKED: &[Param] = &[arg("func", K::Callee), arg("args", K::Variadic)];

/// Every op the project knows, in no particular order.
pub static OPS: &[OpDef] = &[
    // Unary elementwise.
    op("relax.abs", UNARY),
    op("relax.acos", UNARY),
    op("relax.acosh", UNARY),
    op("relax.asin", UNARY),
    op("relax.asinh", UNARY),
    op("relax.atan", UNARY),
    op("relax.atanh", UNARY),
    op("relax.bitwise_not", UNARY),
    op("relax.ceil", UNARY),
    op("relax.cos", UNARY),
    op("relax.cosh", UNARY),
    op("relax.erf", UNARY),
    op("relax.exp", UNARY),
    op("relax.floor", UNARY),
    op("relax.isfinite", UNARY),
    op("relax.isinf", UNARY),
    op("relax.isnan", UNARY),
    op("relax.log", UNARY),
    op("relax.logical_not", UNARY),
    op("relax.negative", UNARY),
    op("relax.round", UNARY),
    op("relax.rsqrt", UNARY),
    op("relax.sigmoid", UNARY),
    op("relax.sign", UNARY),
    op("relax.sin", UNARY),
    op("relax.sinh", UNARY),
    op("relax.sqrt", UNARY),
    op("relax.square", UNARY),
    op("relax.tan", UNARY),
    op("relax.tanh", UNARY),
    op("relax.trunc", UNARY),
    op("relax.clip", &[x("x"), arg("min", K::PrimValue), arg("max", K::PrimValue)]),
    op("relax.astype", &[x("x"), at("dtype", A::DType, D::Required)]),
    // Binary with broadcasting.
    op("relax.add", BINARY),
    op("relax.subtract", BINARY),
    op("relax.multiply", BINARY),
    op("relax.divide", BINARY),
    op("relax.power", BINARY),
    op("relax.maximum", BINARY),
    op("relax.minimum", BINARY),
    op("relax.floor_divide", BINARY),
    op("relax.mod", BINARY),
    op("relax.floor_mod", BINARY),
    op("relax.atan2", BINARY),
    op("relax.log_add_exp", BINARY),
    op("relax.equal", BINARY),
    op("relax.not_equal", BINARY),
    op("relax.less", BINARY),
    op("relax.less_equal", BINARY),
    op("relax.greater", BINARY),
    op("relax.greater_equal", BINARY),
    op("relax.logical_and", BINARY),
    op("relax.logical_or", BINARY),
    op("relax.logical_xor", BINARY),
    op("relax.bitwise_and", BINARY),
    op("relax.bitwise_or", BINARY),
    op("relax.bitwise_xor", BINARY),
    op("relax.left_shift", BINARY),
    op("relax.right_shift", BINARY),
    // Linear algebra.
    op("relax.matmul", &[x("x1"), x("x2"), at("out_dtype", A::DType, D::Str("void"))]),
    op("relax.outer", BINARY),
    // Neural-network ops.
    op("relax.nn.relu", DATA),
    op("relax.nn.gelu", DATA),
    op("relax.nn.gelu_tanh", DATA),
    op("relax.nn.silu", DATA),
    op("relax.nn.selu", DATA),
    op(
        "relax.nn.softplus",
        &[x("data"), at("beta", A::Float, D::Float(1.0)), at("threshold", A::Float, D::Float(20.0))],
    ),
    op("relax.nn.leakyrelu", &[x("data"), at("alpha", A::Float, D::Float(0.01))]),
    op("relax.nn.softmax", &[x("data"), at("axis", A::Int, D::Int(-1))]),
    op("relax.nn.log_softmax", &[x("data"), at("axis", A::Int, D::Int(-1))]),
    op(
        "relax.nn.layer_norm",
        &[
            x("data"),
            x("gamma"),
            x("beta"),
            at("axes", A::IntList, D::Required),
            at("epsilon", A::Float, D::Float(1e-5)),
            at("center", A::Bool, D::Bool(true)),
            at("scale", A::Bool, D::Bool(true)),
        ],
    ),
    op(
        "relax.nn.rms_norm",
        &[x("data"), x("weight"), at("axes", A::IntList, D::IntList(&[-1])), at("epsilon", A::Float, D::Float(1e-5))],
    ),
    op("relax.nn.dropout", &[x("data"), at("rate", A::Float, D::Float(0.5))]),
    op(
        "relax.nn.attention",
        &[
            x("query"),
            x("key"),
            x("value"),
            opt("bias", K::Expr),
            at("scale", A::OptPrimFloat, D::None),
            at("causal_mask", A::OptStr, D::None),
            at("window_size", A::OptInt, D::None),
        ],
    ),
    // Manipulation.
    op("relax.reshape", &[x("x"), arg("shape", K::Shape)]),
    op("relax.permute_dims", &[x("x"), at("axes", A::OptIntList, D::None)]),
    op("relax.expand_dims", &[x("x"), at("axis", A::IntList, D::Required)]),
    op("relax.squeeze", &[x("x"), at("axis", A::OptIntList, D::None)]),
    op("relax.flatten", UNARY),
    op("relax.concat", &[arg("tensors", K::TensorTuple), at("axis", A::OptInt, D::Int(0))]),
    op("relax.stack", &[arg("tensors", K::TensorTuple), at("axis", A::OptInt, D::Int(0))]),
    op(
        "relax.split",
        &[x("x"), at("indices_or_sections", A::IntOrIntList, D::Required), at("axis", A::Int, D::Int(0))],
    ),
    op(
        "relax.strided_slice",
        &[
            x("x"),
            arg("axes", K::PrimValueTuple),
            arg("begin", K::PrimValueTuple),
            arg("end", K::PrimValueTuple),
            opt("strides", K::PrimValueTuple),
            at("assume_inbound", A::Bool, D::Bool(false)),
        ],
    ),
    op("relax.dynamic_strided_slice", &[x("x"), x("begin"), x("end"), x("strides")]),
    op("relax.broadcast_to", &[x("x"), arg("shape", K::Shape)]),
    op("relax.repeat", &[x("data"), at("repeats", A::Int, D::Required), at("axis", A::OptInt, D::None)]),
    op("relax.tile", &[x("data"), at("repeats", A::IntList, D::Required)]),
    op("relax.flip", &[x("data"), at("axis", A::Int, D::Required)]),
    op("relax.take", &[x("x"), x("indices"), at("axis", A::OptInt, D::None), at("mode", A::Str, D::Str("fast"))]),
    op("relax.where", &[x("condition"), x("x1"), x("x2")]),
    op("relax.collapse_sum_like", &[x("data"), x("collapse_target")]),
    op("relax.collapse_sum_to", &[x("data"), arg("shape", K::Shape)]),
    op("relax.gather_elements", &[x("data"), x("indices"), at("axis", A::Int, D::Int(0))]),
    op("relax.einsum", &[arg("operands", K::TensorTuple), at("subscripts", A::Str, D::Required)]),
    // Statistics and search.
    op("relax.sum", REDUCE),
    op("relax.mean", REDUCE),
    op("relax.max", REDUCE),
    op("relax.min", REDUCE),
    op("relax.prod", REDUCE),
    op("relax.std", REDUCE),
    op("relax.variance", REDUCE),
    op("relax.argmax", ARGREDUCE),
    op("relax.argmin", ARGREDUCE),
    op(
        "relax.cumsum",
        &[
            x("data"),
            at("axis", A::OptInt, D::None),
            at("dtype", A::DType, D::Str("void")),
            at("exclusive", A::Bool, D::Bool(false)),
        ],
    ),
    op(
        "relax.cumprod",
        &[
            x("data"),
            at("axis", A::OptInt, D::None),
            at("dtype", A::DType, D::Str("void")),
            at("exclusive", A::Bool, D::Bool(false)),
        ],
    ),
    op("relax.sort", &[x("x"), at("axis", A::Int, D::Int(-1)), at("descending", A::Bool, D::Bool(false))]),
    op(
        "relax.argsort",
        &[
            x("data"),
            at("axis", A::Int, D::Int(-1)),
            at("descending", A::Bool, D::Bool(false)),
            at("dtype", A::DType, D::Str("int32")),
        ],
    ),
    op(
        "relax.topk",
        &[
            x("data"),
            at("k", A::Int, D::Int(1)),
            at("axis", A::Int, D::Int(-1)),
            at("ret_type", A::Str, D::Str("both")),
            at("largest", A::Bool, D::Bool(true)),
            at("dtype", A::DType, D::Str("int32")),
        ],
    ),
    // Creation.
    op("relax.zeros", &[arg("shape", K::Shape), at("dtype", A::DType, D::Required)]),
    op("relax.ones", &[arg("shape", K::Shape), at("dtype", A::DType, D::Required)]),
    op("relax.full", &[arg("shape", K::Shape), x("fill_value"), at("dtype", A::DType, D::Str("void"))]),
    op("relax.zeros_like", LIKE),
    op("relax.ones_like", LIKE),
    op("relax.full_like", &[x("x"), x("fill_value"), at("dtype", A::DType, D::Str("void"))]),
    op(
        "relax.arange",
        &[
            arg("start", K::PrimValue),
            arg("end", K::PrimValue),
            arg("step", K::PrimValue),
            at("dtype", A::DType, D::Str("void")),
        ],
    ),
    op("relax.tril", TRI),
    op("relax.triu", TRI),
    // Shapes.
    op("relax.shape_of", &[x("expr")]),
    op("relax.tensor_to_shape", &[x("expr")]),
    op("relax.shape_to_tensor", &[x("expr")]),
    // Calls.
    special("relax.call_tir", DPS, OpClass::DpsCall, true),
    special(
        "relax.call_tir_inplace",
        &[
            x("func"),
            arg("args", K::TensorTuple),
            opt("packed_ints", K::Shape),
            at("inplace_indices", A::IntList, D::Required),
        ],
        OpClass::DpsCall,
        true,
    ),
    special(
        "relax.call_tir_with_grad",
        &[
            x("func"),
            arg("args", K::TensorTuple),
            opt("packed_ints", K::Shape),
            at("te_grad_name", A::Str, D::Required),
            at("te_grad_kwargs", A::Any, D::None),
        ],
        OpClass::DpsCall,
        true,
    ),
    special("relax.call_dps_packed", &[arg("func", K::Callee), arg("args", K::TensorTuple)], OpClass::DpsCall, true),
    special("relax.call_pure_packed", PACKED, OpClass::PackedCall, true),
    special(
        "relax.call_inplace_packed",
        &[arg("func", K::Callee), arg("args", K::Variadic), at("inplace_indices", A::IntList, D::Required)],
        OpClass::PackedCall,
        true,
    ),
    special(
        "relax.call_builtin_with_ctx",
        &[arg("func", K::Callee), arg("args", K::TensorTuple)],
        OpClass::PackedCall,
        false,
    ),
    special("relax.invoke_closure", &[x("closure"), arg("args", K::TensorTuple)], OpClass::PackedCall, false),
    special("relax.invoke_pure_closure", &[x("closure"), arg("args", K::TensorTuple)], OpClass::PackedCall, true),
    special("relax.make_closure", &[x("func"), arg("args", K::TensorTuple)], OpClass::Compute, true),
    special("relax.null_value", &[], OpClass::Compute, true),
    special("relax.print", &[arg("format", K::FormatStr), arg("vals", K::Variadic)], OpClass::Effect, false),
    special(
        "relax.assert_op",
        &[x("condition"), arg("format", K::FormatStr), arg("vals", K::Variadic)],
        OpClass::Effect,
        false,
    ),
    // Memory, builtins and the VM.
    special(
        "relax.builtin.alloc_tensor",
        &[
            arg("shape", K::Shape),
            arg("dtype", K::DType),
            arg("runtime_device_index", K::PrimValue),
            arg("storage_scope", K::Str),
        ],
        OpClass::Memory,
        true,
    ),
    special("relax.builtin.stop_lift_params", &[x("x")], OpClass::Compute, true),
    special(
        "relax.memory.alloc_storage",
        &[
            arg("size", K::Shape),
            arg("virtual_device_index", K::PrimValue),
            arg("storage_scope", K::Str),
            arg("dtype", K::DType),
        ],
        OpClass::Memory,
        true,
    ),
    special(
        "relax.memory.alloc_tensor",
        &[
            x("storage"),
            arg("offset", K::PrimValue),
            arg("shape", K::Shape),
            arg("dtype", K::DType),
            arg("runtime_device_index", K::PrimValue),
        ],
        OpClass::Memory,
        true,
    ),
    special("relax.memory.kill_storage", &[x("storage")], OpClass::Effect, false),
    special("relax.memory.kill_tensor", &[x("tensor")], OpClass::Effect, false),
    special(
        "relax.memory.view",
        &[x("x"), opt("shape", K::Shape), opt("dtype", K::Expr), opt("relative_byte_offset", K::Expr)],
        OpClass::Memory,
        true,
    ),
    special("relax.memory.ensure_zero_offset", &[x("x")], OpClass::Memory, true),
    special(
        "relax.vm.alloc_storage",
        &[
            arg("size", K::Shape),
            arg("runtime_device_index", K::PrimValue),
            arg("dtype", K::DType),
            arg("storage_scope", K::Str),
        ],
        OpClass::Memory,
        true,
    ),
    special(
        "relax.vm.alloc_tensor",
        &[
            x("storage"),
            arg("offset", K::PrimValue),
            arg("shape", K::Shape),
            arg("dtype", K::DType),
            arg("runtime_device_index", K::PrimValue),
        ],
        OpClass::Memory,
        true,
    ),
    special("relax.vm.kill_object", &[x("obj")], OpClass::Effect, false),
    special("relax.vm.call_tir_dyn", &[x("func"), arg("args", K::TensorTuple)], OpClass::Effect, false),
];
