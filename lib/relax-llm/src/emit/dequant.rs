//! The decode kernels of the block-quantized weight types, as TensorIR.
//!
//! A quantized weight of `n` rows of `k` elements is a `uint8` parameter of shape
//! `(n, row_bytes)`, the file's bytes as they are; `decode_<type>_<k>` turns it into
//! `(n, k)` float32. Each kernel is one injective block over the output, an element's
//! value computed from the bytes of its block, so fuse-ops can put it inside the matmul
//! that consumes it and no dequantized copy of the weight is ever stored. The formulas
//! are ggml's (`dequantize_row_*` in `ggml-quants.c`), operation for operation, so the
//! decoded floats are the same bits as llama.cpp's.
//!
//! The kernels are built once, in `relax_transform::quant::decode` (which the
//! `quantize-weights` pass uses too); this module names them and prints them as methods
//! of the module text the importer writes. The row count is symbolic, so one kernel
//! serves every weight with rows of `k` elements, and the token embedding's rows picked
//! by `R.take`.

use relax_ir::{Func, Module};
use relax_transform::quant::{self, QuantType};

use crate::spec::WeightType;

/// The `relax_transform` type of a quantized weight type (`None` for the float types).
pub fn quant_type(ty: WeightType) -> Option<QuantType> {
    match ty {
        WeightType::Q8_0 => Some(QuantType::Q8_0),
        WeightType::Q4_0 => Some(QuantType::Q4_0),
        WeightType::Q4K => Some(QuantType::Q4K),
        WeightType::Q6K => Some(QuantType::Q6K),
        WeightType::F32 | WeightType::F16 | WeightType::BF16 => None,
    }
}

/// The name of the decode kernel of rows of `k` elements of `ty`.
pub fn kernel_name(ty: WeightType, k: usize) -> String {
    match quant_type(ty) {
        Some(q) => quant::kernel_name(q, k),
        None => format!("decode_{}_{k}", ty.name().to_ascii_lowercase()),
    }
}

/// The decode kernel of rows of `k` elements of the quantized type `ty`, as the text of
/// a method of the module class (indented by four spaces). Empty for the float types,
/// which need no kernel.
pub fn kernel(ty: WeightType, k: usize) -> String {
    let Some(q) = quant_type(ty) else { return String::new() };
    let mut m = Module::new();
    m.add(quant::kernel_name(q, k), Func::Prim(Box::new(quant::kernel(q, k))));
    let text = relax_ir::printer::print_module(&m);
    // The class body: everything after `class Module:`.
    match text.split_once("class Module:\n") {
        Some((_, body)) => body.to_string(),
        None => text,
    }
}
