//! The decode kernels of the block-quantized weight types, as TensorIR.
//!
//! A quantized weight of `n` rows of `k` elements is a `uint8` parameter of shape
//! `(n, row_bytes)`, the file's bytes as they are; `decode_<type>_<k>` turns it into
//! `(n, k)` float32. Each kernel is one injective block over the output, an element's
//! value computed from the bytes of its block, so fuse-ops can put it inside the matmul
//! that consumes it and no dequantized copy of the weight is ever stored. The formulas
//! are ggml's (`dequantize_row_*` in `ggml-quants.c`), operation for operation, so the
//! decoded floats are the same bits as llama.cpp's: an `f16` scale is read as two bytes,
//! reinterpreted and widened; products keep ggml's order.
//!
//! The row count is symbolic, so one kernel serves every weight with rows of `k`
//! elements, and the token embedding's rows picked by `R.take`.

use crate::spec::WeightType;

/// The name of the decode kernel of rows of `k` elements of `ty`.
pub fn kernel_name(ty: WeightType, k: usize) -> String {
    format!("decode_{}_{k}", ty.name().to_ascii_lowercase())
}

/// The value of element `(vi, vj)`, with `blk` the byte offset of its block in the row.
fn element(ty: WeightType) -> String {
    // `f16(o)`: the half float at byte `blk + o`, as float32.
    let f16 = |o: &str| {
        format!(
            "T.Cast(\"float32\", T.reinterpret(\"float16\", T.bitwise_or(T.Cast(\"uint16\", w[vi, blk + T.int64({o})]), T.shift_left(T.Cast(\"uint16\", w[vi, blk + T.int64({o}) + T.int64(1)]), T.uint16(8)))))"
        )
    };
    // `u(o)`: the byte at `blk + o` as int32.
    let u = |o: &str| format!("T.Cast(\"int32\", w[vi, blk + {o}])");
    match ty {
        WeightType::Q8_0 => format!(
            "T.Cast(\"float32\", T.reinterpret(\"int8\", w[vi, blk + T.int64(2) + vj % T.int64(32)])) * {}",
            f16("0")
        ),
        WeightType::Q4_0 => format!(
            "T.Cast(\"float32\", T.bitwise_and(T.shift_right({}, T.Cast(\"int32\", vj % T.int64(32) // T.int64(16)) * 4), 15) - 8) * {}",
            u("T.int64(2) + vj % T.int64(16)"),
            f16("0")
        ),
        WeightType::Q4K => {
            // Element e of the super-block: chunk c = e // 64 of 32 bytes, nibble
            // hi = e % 64 // 32, byte l = e % 32; sub-block sb = 2c + hi, whose 6-bit scale
            // and min ggml's `get_scale_min_k4` unpacks from the 12 scale bytes.
            let sb = "(vj % T.int64(256) // T.int64(32))";
            let s = |idx: String| u(&format!("T.int64(4) + {idx}"));
            let lo = |e: String| format!("T.bitwise_and({e}, 63)");
            let sc = format!(
                "T.if_then_else({sb} < T.int64(4), {}, T.bitwise_or(T.bitwise_and({}, 15), T.shift_left(T.shift_right({}, 6), 4)))",
                lo(s(sb.to_string())),
                s(format!("{sb} + T.int64(4)")),
                s(format!("({sb} + T.int64(4)) % T.int64(8)"))
            );
            let mn = format!(
                "T.if_then_else({sb} < T.int64(4), {}, T.bitwise_or(T.shift_right({}, 4), T.shift_left(T.shift_right({}, 6), 4)))",
                lo(s(format!("{sb} + T.int64(4)"))),
                s(format!("{sb} + T.int64(4)")),
                s(sb.to_string())
            );
            let q = format!(
                "T.bitwise_and(T.shift_right({}, T.Cast(\"int32\", vj % T.int64(64) // T.int64(32)) * 4), 15)",
                u("T.int64(16) + vj % T.int64(256) // T.int64(64) * T.int64(32) + vj % T.int64(32)")
            );
            format!(
                "{} * T.Cast(\"float32\", {sc}) * T.Cast(\"float32\", {q}) - {} * T.Cast(\"float32\", {mn})",
                f16("0"),
                f16("2")
            )
        }
        WeightType::Q6K => {
            // Element e: half h = e // 128, quarter q = e % 128 // 32, l = e % 32. Low 4
            // bits from ql[64h + 32(q % 2) + l] (low nibble for q < 2), high 2 bits from
            // qh[32h + l] >> 2q; scale sc[8h + l // 16 + 2q].
            let e = "vj % T.int64(256)";
            let quarter = format!("({e} % T.int64(128) // T.int64(32))");
            let low = format!(
                "T.bitwise_and(T.shift_right({}, T.Cast(\"int32\", {quarter} // T.int64(2)) * 4), 15)",
                u(&format!(
                    "{e} // T.int64(128) * T.int64(64) + {quarter} % T.int64(2) * T.int64(32) + vj % T.int64(32)"
                ))
            );
            let high = format!(
                "T.bitwise_and(T.shift_right({}, T.Cast(\"int32\", {quarter}) * 2), 3)",
                u(&format!("T.int64(128) + {e} // T.int64(128) * T.int64(32) + vj % T.int64(32)"))
            );
            let scale = format!(
                "T.Cast(\"float32\", T.reinterpret(\"int8\", w[vi, blk + T.int64(192) + {e} // T.int64(128) * T.int64(8) + vj % T.int64(32) // T.int64(16) + {quarter} * T.int64(2)]))"
            );
            format!("{} * {scale} * T.Cast(\"float32\", T.bitwise_or({low}, T.shift_left({high}, 4)) - 32)", f16("208"))
        }
        WeightType::F32 | WeightType::F16 | WeightType::BF16 => unreachable!("float types need no decode kernel"),
    }
}

/// The decode kernel of rows of `k` elements of the quantized type `ty`.
pub fn kernel(ty: WeightType, k: usize) -> String {
    let (be, bb) = (ty.block_elems(), ty.block_bytes());
    let rb = ty.row_bytes(k);
    format!(
        r#"    @T.prim_func(private=True)
    def {name}(var_w: T.handle, var_out: T.handle):
        T.func_attr({{"tir.noalias": True}})
        n = T.int64()
        w = T.match_buffer(var_w, (n, T.int64({rb})), "uint8")
        out = T.match_buffer(var_out, (n, T.int64({k})))
        for i, j in T.grid(n, T.int64({k})):
            with T.block("decode"):
                vi, vj = T.axis.remap("SS", [i, j])
                out[vi, vj] = {value}
"#,
        name = kernel_name(ty, k),
        value = element(ty).replace("blk", &format!("vj // T.int64({be}) * T.int64({bb})")),
    )
}
