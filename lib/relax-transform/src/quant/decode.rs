//! The decode kernels of the block-quantized types, built with the tensor-expression
//! builder ([`crate::legalize::te`]).
//!
//! `decode_<type>_<k>(w: (n, row_bytes) uint8) -> (n, k) float32` turns each packed row
//! back into `k` floats. The row count `n` is symbolic, so one kernel serves every
//! weight with rows of `k` elements. The kernel is one injective block over the output,
//! each element computed from the bytes of its block, so `fuse-ops` puts it inside the
//! matmul that consumes it and no decoded copy of the weight is stored.
//!
//! The formulas are ggml's (`dequantize_row_*` in `ggml-quants.c`), operation for
//! operation, so the floats are the same bits as llama.cpp's and `relax_gguf::dequantize`:
//! an `f16` scale is read as two bytes, reinterpreted and widened; products keep ggml's
//! order (Q4_K: `(d · sc) · q - dmin · m`, Q6_K: `(d · sc) · q`). Every index is in
//! bounds for every element, in both arms of each `if_then_else` (an engine may evaluate
//! both): Q4_K's scales of sub-blocks 4–7 read byte `(sb + 4) % 8`, which is `sb - 4`
//! there and a harmless `sb + 4` for the sub-blocks 0–3 that take the other arm.
//!
//! This is the one definition of these kernels: `relax-llm` prints them into the
//! modules it imports from GGUF files, and `quantize-weights` adds them to the modules
//! it quantizes.

use relax_ir::prim::{BinOp, Range};
use relax_ir::tir::{BufferRegion, StmtData};
use relax_ir::{DataType, Intrinsic, PrimExpr, PrimFunc, TypeCode};

use super::layout::QuantType;
use crate::legalize::te::{Axes, Te, Tensor};

const UINT16: DataType = DataType::new(TypeCode::UInt, 16);

/// The name of the decode kernel of rows of `k` elements of `ty`: `decode_q4_0_4096`.
pub fn kernel_name(ty: QuantType, k: usize) -> String {
    format!("decode_{}_{k}", ty.name())
}

/// The decode kernel of rows of `k` elements of `ty` (`k` a multiple of the block size:
/// elements past the last whole block would read bytes past the row).
pub fn kernel(ty: QuantType, k: usize) -> PrimFunc {
    let mut te = Te::new();
    let n = te.var("n", DataType::INT64);
    let n = te.pool.var_ref(n);
    let row_bytes = ty.row_bytes(k).unwrap_or(0) as i64;
    let rb = te.i64(row_bytes);
    let w = te.placeholder("w", vec![n, rb], DataType::UINT8);
    let ke = te.i64(k as i64);
    let out = te.compute("decode", vec![n, ke], Axes::Named(&["i", "j"]), |te, idx| {
        let (vi, vj) = (idx[0], idx[1]);
        let be = te.i64(ty.block_elems() as i64);
        let bb = te.i64(ty.block_bytes() as i64);
        let b = te.floordiv(vj, be);
        let blk = te.mul(b, bb);
        let mut cx = Cx { te, w, vi, vj, blk };
        match ty {
            QuantType::Q8_0 => cx.q8_0(),
            QuantType::Q4_0 => cx.q4_0(),
            QuantType::Q4K => cx.q4_k(),
            QuantType::Q6K => cx.q6_k(),
        }
    });
    let wbuf = te.buffer(w);
    let mut f = te.build(&[out]).func;
    // Each element reads a few bytes of its block; the block's read region says "the
    // row" (what the detector's union of a dozen computed offsets amounts to, in one
    // readable range).
    let zero = f.pool.i64(0);
    let rb = f.pool.i64(row_bytes);
    for s in f.stmts.values_mut() {
        if let StmtData::Block(b) = s
            && b.name == "decode"
            && let Some(iv) = b.iter_vars.first()
        {
            let vi = f.pool.var_ref(iv.var);
            let one = f.pool.i64(1);
            let region = vec![Range { min: vi, extent: one }, Range { min: zero, extent: rb }];
            b.reads = vec![BufferRegion { buffer: wbuf, region }];
        }
    }
    f
}

/// Writing one element's value: `vi`, `vj` the block variables, `blk` the byte offset
/// of the element's block in its row.
struct Cx<'a> {
    te: &'a mut Te,
    w: Tensor,
    vi: PrimExpr,
    vj: PrimExpr,
    blk: PrimExpr,
}

impl Cx<'_> {
    fn c(&mut self, v: i64) -> PrimExpr {
        self.te.i64(v)
    }
    fn i32(&mut self, v: i64) -> PrimExpr {
        self.te.const_i(DataType::INT32, v)
    }
    /// `vj % m // d`.
    fn digit(&mut self, m: i64, d: i64) -> PrimExpr {
        let m = self.c(m);
        let r = self.te.floormod(self.vj, m);
        let d = self.c(d);
        self.te.floordiv(r, d)
    }
    /// `vj % m`.
    fn rem(&mut self, m: i64) -> PrimExpr {
        let m = self.c(m);
        self.te.floormod(self.vj, m)
    }
    /// The byte at `blk + off` of row `vi`.
    fn byte(&mut self, off: PrimExpr) -> PrimExpr {
        let at = self.te.add(self.blk, off);
        self.te.load(self.w, &[self.vi, at])
    }
    /// The byte at `blk + off` as `int32`.
    fn u(&mut self, off: PrimExpr) -> PrimExpr {
        let b = self.byte(off);
        self.te.cast(DataType::INT32, b)
    }
    /// The byte at `blk + off` reinterpreted as `int8`, widened to `float32`.
    fn i8_f32(&mut self, off: PrimExpr) -> PrimExpr {
        let b = self.byte(off);
        let s = self.te.call_typed(DataType::INT8, Intrinsic::Reinterpret, &[b]);
        self.te.cast(DataType::FLOAT32, s)
    }
    /// The half float at `blk + o` (little-endian), as `float32`.
    fn f16(&mut self, o: i64) -> PrimExpr {
        let lo_off = self.c(o);
        let lo = self.byte(lo_off);
        let lo = self.te.cast(UINT16, lo);
        let hi_off = self.c(o);
        let one = self.c(1);
        let hi_off = self.te.add(hi_off, one);
        let hi = self.byte(hi_off);
        let hi = self.te.cast(UINT16, hi);
        let eight = self.te.const_i(UINT16, 8);
        let hi = self.te.call(Intrinsic::ShiftLeft, &[hi, eight]);
        let bits = self.te.call(Intrinsic::BitwiseOr, &[lo, hi]);
        let h = self.te.call_typed(DataType::FLOAT16, Intrinsic::Reinterpret, &[bits]);
        self.te.cast(DataType::FLOAT32, h)
    }
    /// `(x >> (shift_units * unit)) & mask` with `x` and `mask` `int32`, `shift_units` an
    /// `int64` index cast to `int32`.
    fn bits(&mut self, x: PrimExpr, shift_units: PrimExpr, unit: i64, mask: i64) -> PrimExpr {
        let s = self.te.cast(DataType::INT32, shift_units);
        let unit = self.i32(unit);
        let s = self.te.mul(s, unit);
        let shifted = self.te.call(Intrinsic::ShiftRight, &[x, s]);
        let mask = self.i32(mask);
        self.te.call(Intrinsic::BitwiseAnd, &[shifted, mask])
    }
    fn and(&mut self, a: PrimExpr, m: i64) -> PrimExpr {
        let m = self.i32(m);
        self.te.call(Intrinsic::BitwiseAnd, &[a, m])
    }
    fn shr(&mut self, a: PrimExpr, s: i64) -> PrimExpr {
        let s = self.i32(s);
        self.te.call(Intrinsic::ShiftRight, &[a, s])
    }
    fn shl(&mut self, a: PrimExpr, s: i64) -> PrimExpr {
        let s = self.i32(s);
        self.te.call(Intrinsic::ShiftLeft, &[a, s])
    }
    fn or(&mut self, a: PrimExpr, b: PrimExpr) -> PrimExpr {
        self.te.call(Intrinsic::BitwiseOr, &[a, b])
    }
    /// Byte `idx` of Q4_K's 12 scale bytes (which start at byte 4 of the block).
    fn scale_byte(&mut self, idx: PrimExpr) -> PrimExpr {
        let four = self.c(4);
        let off = self.te.add(four, idx);
        self.u(off)
    }
    fn f32(&mut self, e: PrimExpr) -> PrimExpr {
        self.te.cast(DataType::FLOAT32, e)
    }

    /// `qs[j] · d`.
    fn q8_0(&mut self) -> PrimExpr {
        let two = self.c(2);
        let r = self.rem(32);
        let off = self.te.add(two, r);
        let q = self.i8_f32(off);
        let d = self.f16(0);
        self.te.mul(q, d)
    }

    /// `((qs[j % 16] >> 4 (j / 16)) & 15 - 8) · d`.
    fn q4_0(&mut self) -> PrimExpr {
        let two = self.c(2);
        let r = self.rem(16);
        let off = self.te.add(two, r);
        let byte = self.u(off);
        let half = self.digit(32, 16);
        let q = self.bits(byte, half, 4, 15);
        let eight = self.i32(8);
        let q = self.te.sub(q, eight);
        let q = self.f32(q);
        let d = self.f16(0);
        self.te.mul(q, d)
    }

    /// `d · sc[s] · q - dmin · m[s]` (`get_scale_min_k4` for `sc`, `m`).
    fn q4_k(&mut self) -> PrimExpr {
        // Element e of the super-block: chunk c = e // 64 of 32 bytes, nibble
        // hi = e % 64 // 32, byte l = e % 32; sub-block sb = 2c + hi.
        let sb = self.digit(256, 32);
        let four = self.c(4);
        let sb4 = self.te.add(sb, four);
        let eight = self.c(8);
        let sb4m8 = self.te.floormod(sb4, eight);
        let first = self.te.bin(BinOp::Lt, sb, four);
        // sc: j < 4: s[j] & 63; else (s[j+4] & 15) | ((s[j-4] >> 6) << 4).
        let a = self.scale_byte(sb);
        let sc_lo = self.and(a, 63);
        let a = self.scale_byte(sb4);
        let a = self.and(a, 15);
        let b = self.scale_byte(sb4m8);
        let b = self.shr(b, 6);
        let b = self.shl(b, 4);
        let sc_hi = self.or(a, b);
        let sc = self.te.if_then_else(first, sc_lo, sc_hi);
        // m: j < 4: s[j+4] & 63; else (s[j+4] >> 4) | ((s[j] >> 6) << 4).
        let a = self.scale_byte(sb4);
        let m_lo = self.and(a, 63);
        let a = self.scale_byte(sb4);
        let a = self.shr(a, 4);
        let b = self.scale_byte(sb);
        let b = self.shr(b, 6);
        let b = self.shl(b, 4);
        let m_hi = self.or(a, b);
        let m = self.te.if_then_else(first, m_lo, m_hi);
        // q: qs[e // 64 * 32 + e % 32] >> 4 (e % 64 // 32) & 15, qs at byte 16.
        let sixteen = self.c(16);
        let chunk = self.digit(256, 64);
        let c32 = self.c(32);
        let chunk = self.te.mul(chunk, c32);
        let off = self.te.add(sixteen, chunk);
        let l = self.rem(32);
        let off = self.te.add(off, l);
        let byte = self.u(off);
        let hi = self.digit(64, 32);
        let q = self.bits(byte, hi, 4, 15);
        let d = self.f16(0);
        let sc = self.f32(sc);
        let d1 = self.te.mul(d, sc);
        let q = self.f32(q);
        let y = self.te.mul(d1, q);
        let dmin = self.f16(2);
        let m = self.f32(m);
        let m1 = self.te.mul(dmin, m);
        self.te.sub(y, m1)
    }

    /// `d · sc[s] · (q - 32)` with `q` six bits from `ql` (low four) and `qh` (high two).
    fn q6_k(&mut self) -> PrimExpr {
        // Element e: half h = e // 128, quarter q = e % 128 // 32, l = e % 32. Low 4
        // bits from ql[64h + 32(q % 2) + l] (low nibble for q < 2), high 2 bits from
        // qh[32h + l] >> 2q; scale sc[8h + l // 16 + 2q].
        let e = self.rem(256);
        let c128 = self.c(128);
        let h = self.te.floordiv(e, c128);
        let r = self.te.floormod(e, c128);
        let c32 = self.c(32);
        let quarter = self.te.floordiv(r, c32);
        let l = self.rem(32);
        // low
        let c64 = self.c(64);
        let off = self.te.mul(h, c64);
        let two = self.c(2);
        let qm = self.te.floormod(quarter, two);
        let qm = self.te.mul(qm, c32);
        let off = self.te.add(off, qm);
        let off = self.te.add(off, l);
        let byte = self.u(off);
        let qd = self.te.floordiv(quarter, two);
        let low = self.bits(byte, qd, 4, 15);
        // high
        let off = self.te.mul(h, c32);
        let off = self.te.add(c128, off);
        let off = self.te.add(off, l);
        let byte = self.u(off);
        let high = self.bits(byte, quarter, 2, 3);
        // scale
        let c192 = self.c(192);
        let c8 = self.c(8);
        let off = self.te.mul(h, c8);
        let off = self.te.add(c192, off);
        let l16 = self.digit(32, 16);
        let off = self.te.add(off, l16);
        let q2 = self.te.mul(quarter, two);
        let off = self.te.add(off, q2);
        let scale = self.i8_f32(off);
        let d = self.f16(208);
        let ds = self.te.mul(d, scale);
        let high = self.shl(high, 4);
        let q = self.or(low, high);
        let c = self.i32(32);
        let q = self.te.sub(q, c);
        let q = self.f32(q);
        self.te.mul(ds, q)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use relax_ir::{Func, Module};

    #[test]
    fn kernels_verify_and_print_back() {
        for ty in QuantType::ALL {
            let k = ty.block_elems() * 2;
            let mut m = Module::new();
            m.add(kernel_name(ty, k), Func::Prim(Box::new(kernel(ty, k))));
            relax_ir::verify::verify_module(&m).unwrap_or_else(|e| panic!("{ty}: {e:?}"));
            let text = relax_ir::printer::print_module(&m);
            let back = relax_parser::parse_module(&text).unwrap_or_else(|e| panic!("{ty}: {e:?}\n{text}"));
            assert_eq!(relax_ir::printer::print_module(&back), text, "{ty}");
            assert!(text.contains(&format!("def decode_{}_{k}(", ty.name())), "{text}");
        }
    }
}
