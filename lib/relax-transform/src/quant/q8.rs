//! The kernels of matrix products on activations quantized to 8 bits, llama.cpp's way
//! (`ggml_vec_dot_q4_0_q8_0`, `ggml_vec_dot_q8_0_q8_0` as its AVX2 code computes
//! them), built with the tensor-expression builder ([`crate::legalize::te`]);
//! `quantize-activations` puts them in place of a matmul with a decoded weight.
//!
//! * `quantize_q8_<k>(x: (m, k) float32) -> (q: (m, k) int8, d: (m, k / 32) float32,
//!   s: (m, k / 4) int32)`: ggml's `quantize_row_q8_0` as its x86 SIMD code computes
//!   it: per block of 32, `amax = max |x|`, `q = round_half_even(x · (127 / amax))` (0
//!   when `amax` is 0), the scale `d = amax / 127` rounded to float16 as ggml stores it,
//!   and `s`, the sum of each group of 4 consecutive `q`. It is marked scheduled
//!   (`tirx.is_scheduled`): its loops stay serial, since it quantizes a few rows and a
//!   parallel loop's launch would cost more than the work.
//! * `matmul_q8_<type>_<k>_r<m>(w: (n, row_bytes) uint8, q, d, s) -> (m, n) float32`, in
//!   three stages over the 32-element blocks `b` of a row:
//!   1. `dot[r, j, b, l]`: the `int32` dot product of group `l` (4 elements) of block
//!      `b`, unsigned weight bytes (Q4_0's nibbles `0..15`, Q8_0's bytes offset by 128:
//!      `byte ^ 128`, Q4_K's nibbles, Q6_K's six bits) times the signed activations:
//!      `uint8 × int8`, x86's `vpdpbusd`;
//!   2. `lane[r, j, l] = Σ_b v(b, l)`, in block order, with ([`lane_value`]) for Q4_0
//!      and Q8_0 `v = float(dot - off · s[r, 8b + l]) · (d_w[j, b] · d[r, b])`: `off` (8,
//!      128) times the group's sum of `q` takes the offset back out, so the integer is
//!      exactly ggml's `Σ (w - off) · q` over the group; Q6_K likewise (offset 32, the
//!      sub-block's signed scale); Q4_K `float(dot) · (d · sc · d_x) - float(s) · (dmin
//!      · m · d_x)`;
//!   3. `C[r, j] = Σ_l lane[r, j, l]`, in lane order.
//!
//!   For Q4_0 and Q8_0 these are the numbers of llama.cpp's AVX2 loop (8 lanes of 4
//!   products per block, scaled per block into 8 float partial sums, summed at the end),
//!   up to its fused multiply-adds and the order of its final sum; for the K-quants,
//!   where llama.cpp rounds the activations per 256 (`Q8_K`), they round per 32. `schedule-cpu` computes the three
//!   stages together (`schedule_cpu::int_dot`) in the same order, so the interpreter's
//!   numbers are the JIT's.
//!
//! The row count `m` of the matmul kernel is a constant (the kernel is made for each
//! count), the output count `n` symbolic.

use relax_ir::prim::BinOp;
use relax_ir::{DataType, Intrinsic, PrimExpr, PrimFunc, TypeCode};

use super::layout::QuantType;
use crate::legalize::te::{Axes, CombinerKind, Reduce, Te, Tensor};

/// Elements per activation block.
pub const BLOCK: usize = 32;
/// Elements per group: the products one lane of a dot product adds (`vpdpbusd`'s 4).
pub const GROUP: usize = 4;
/// Lanes per block: partial sums kept apart until the end, as llama.cpp's AVX2 code
/// keeps them in the lanes of a vector.
pub const LANES: usize = BLOCK / GROUP;

const UINT16: DataType = DataType::new(TypeCode::UInt, 16);

/// The weight types whose matmuls have a kernel here (all of them).
pub fn supported(ty: QuantType) -> bool {
    QuantType::ALL.contains(&ty)
}

/// The name of the activation quantizer for rows of `k`: `quantize_q8_2048`.
pub fn quantize_name(k: usize) -> String {
    format!("quantize_q8_{k}")
}

/// The name of the matmul kernel: `matmul_q8_q4_0_2048_r1`.
pub fn matmul_name(ty: QuantType, k: usize, rows: usize) -> String {
    format!("matmul_q8_{}_{k}_r{rows}", ty.name())
}

/// The activation quantizer for rows of `k` elements (`k` a multiple of [`BLOCK`]).
pub fn quantize_kernel(k: usize) -> PrimFunc {
    let mut te = Te::new();
    let m = te.var("m", DataType::INT64);
    let m = te.pool.var_ref(m);
    let ke = te.i64(k as i64);
    let nb = te.i64((k / BLOCK) as i64);
    let x = te.placeholder("x", vec![m, ke], DataType::FLOAT32);
    let amax = te.compute_reduce("amax", vec![m, nb], Axes::Named(&["r", "b"]), |te, idx| {
        let bl = te.i64(BLOCK as i64);
        let (i, vi) = te.reduce_axis("i", bl);
        let at = te.mul(idx[1], bl);
        let at = te.add(at, vi);
        let v = te.load(x, &[idx[0], at]);
        let a = te.call(Intrinsic::Fabs, &[v]);
        Reduce { kind: CombinerKind::Max, sources: vec![a], axes: vec![i] }
    })[0];
    let q = te.compute("quantize", vec![m, ke], Axes::Named(&["r", "k"]), |te, idx| {
        let bl = te.i64(BLOCK as i64);
        let b = te.floordiv(idx[1], bl);
        let a = te.load(amax, &[idx[0], b]);
        let zero = te.const_f(DataType::FLOAT32, 0.0);
        let c127 = te.const_f(DataType::FLOAT32, 127.0);
        let inv = te.bin(BinOp::Div, c127, a);
        let nz = te.bin(BinOp::Ne, a, zero);
        let id = te.select(nz, inv, zero);
        let v = te.load(x, &[idx[0], idx[1]]);
        let s = te.mul(v, id);
        let r = te.call(Intrinsic::Nearbyint, &[s]);
        te.cast(DataType::INT8, r)
    });
    let d = te.compute("scale", vec![m, nb], Axes::Named(&["r", "b"]), |te, idx| {
        let a = te.load(amax, &[idx[0], idx[1]]);
        let c127 = te.const_f(DataType::FLOAT32, 127.0);
        let d = te.bin(BinOp::Div, a, c127);
        let h = te.cast(DataType::FLOAT16, d);
        te.cast(DataType::FLOAT32, h)
    });
    let ng = te.i64((k / GROUP) as i64);
    let s = te.compute_reduce("group_sum", vec![m, ng], Axes::Named(&["r", "g"]), |te, idx| {
        let gl = te.i64(GROUP as i64);
        let (i, vi) = te.reduce_axis("i", gl);
        let at = te.mul(idx[1], gl);
        let at = te.add(at, vi);
        let v = te.load(q, &[idx[0], at]);
        let v = te.cast(DataType::INT32, v);
        Reduce { kind: CombinerKind::Sum, sources: vec![v], axes: vec![i] }
    })[0];
    let mut f = te.build(&[q, d, s]).func;
    // One pass over `m · k` floats, `m` a few rows: serial loops (which LLVM vectorizes)
    // cost less than the launches of parallel ones, so `schedule-cpu` leaves it as it is.
    f.attrs.set(crate::schedule_cpu::SCHEDULED_ATTR, relax_ir::AttrValue::Bool(true));
    f
}

/// The matmul of `rows` quantized activation rows of `k` elements with a weight of
/// type `ty` (a [`supported`] one), `C = x · wᵀ`.
pub fn matmul_kernel(ty: QuantType, k: usize, rows: usize) -> PrimFunc {
    let mut te = Te::new();
    let n = te.var("n", DataType::INT64);
    let n = te.pool.var_ref(n);
    let rb = te.i64(ty.row_bytes(k).unwrap_or(0) as i64);
    let me = te.i64(rows as i64);
    let ke = te.i64(k as i64);
    let nb = te.i64((k / BLOCK) as i64);
    let ng = te.i64((k / GROUP) as i64);
    let le = te.i64(LANES as i64);
    let w = te.placeholder("w", vec![n, rb], DataType::UINT8);
    let xq = te.placeholder("xq", vec![me, ke], DataType::INT8);
    let xd = te.placeholder("xd", vec![me, nb], DataType::FLOAT32);
    let xs = te.placeholder("xs", vec![me, ng], DataType::INT32);
    // dot[r, j, b, l] = Σ_t u[4l + t] · q[4l + t]
    let dot = te.compute_reduce("dot", vec![me, n, nb, le], Axes::Named(&["r", "j", "b", "l"]), |te, idx| {
        let gl = te.i64(GROUP as i64);
        let (t, vt) = te.reduce_axis("t", gl);
        let e = te.mul(idx[3], gl);
        let e = te.add(e, vt);
        let wv = weight_byte(te, ty, w, idx[1], idx[2], e);
        let wv = te.cast(DataType::INT32, wv);
        let bl = te.i64(BLOCK as i64);
        let at = te.mul(idx[2], bl);
        let at = te.add(at, e);
        let xv = te.load(xq, &[idx[0], at]);
        let xv = te.cast(DataType::INT32, xv);
        let p = te.mul(wv, xv);
        Reduce { kind: CombinerKind::Sum, sources: vec![p], axes: vec![t] }
    })[0];
    // lane[r, j, l] = Σ_b float(dot - off · s) · (d_w · d_x)
    let lane = te.compute_reduce("lane", vec![me, n, le], Axes::Named(&["r", "j", "l"]), |te, idx| {
        let (b, vb) = te.reduce_axis("b", nb);
        let dv = te.load(dot, &[idx[0], idx[1], vb, idx[2]]);
        let lanes = te.i64(LANES as i64);
        let g = te.mul(vb, lanes);
        let g = te.add(g, idx[2]);
        let sv = te.load(xs, &[idx[0], g]);
        let dx = te.load(xd, &[idx[0], vb]);
        let v = lane_value(te, ty, w, idx[1], vb, idx[2], dv, sv, dx);
        Reduce { kind: CombinerKind::Sum, sources: vec![v], axes: vec![b] }
    })[0];
    // C[r, j] = Σ_l lane[r, j, l]
    let out = te.compute_reduce("matmul", vec![me, n], Axes::Named(&["r", "j"]), |te, idx| {
        let (l, vl) = te.reduce_axis("l", le);
        let v = te.load(lane, &[idx[0], idx[1], vl]);
        Reduce { kind: CombinerKind::Sum, sources: vec![v], axes: vec![l] }
    })[0];
    te.build(&[out]).func
}

/// Element `i` (0 to 31) of the 32-element block `b` of weight row `j` as an unsigned
/// byte `u`, the weight being `u` minus an offset (times scales, [`lane_value`]):
/// Q4_0's nibble (`qs[i % 16] >> 4 (i / 16) & 15`, offset 8), Q8_0's byte `qs[i] ^ 128`
/// (the signed value plus 128), Q4_K's nibble of sub-block `b % 8` of super-block
/// `b / 8` (`qs[32 (sb / 2) + i] >> 4 (sb % 2) & 15`), Q6_K's six bits (`ql` nibble |
/// `qh` pair << 4, offset 32), as ggml's `dequantize_row_*` read them.
fn weight_byte(te: &mut Te, ty: QuantType, w: Tensor, j: PrimExpr, b: PrimExpr, i: PrimExpr) -> PrimExpr {
    let c = |te: &mut Te, v: i64| te.i64(v);
    match ty {
        QuantType::Q4_0 => {
            let bb = c(te, 18);
            let base = te.mul(b, bb);
            let sixteen = c(te, 16);
            let l = te.floormod(i, sixteen);
            let two = c(te, 2);
            let at = te.add(base, two);
            let at = te.add(at, l);
            let byte = te.load(w, &[j, at]);
            let hi = te.floordiv(i, sixteen);
            nibble(te, byte, hi)
        }
        QuantType::Q8_0 => {
            let bb = c(te, 34);
            let base = te.mul(b, bb);
            let two = c(te, 2);
            let at = te.add(base, two);
            let at = te.add(at, i);
            let byte = te.load(w, &[j, at]);
            let c128 = te.const_i(DataType::UINT8, 128);
            te.call(Intrinsic::BitwiseXor, &[byte, c128])
        }
        QuantType::Q4K => {
            let (base, sb) = super_block(te, b, 144);
            let two = c(te, 2);
            let chunk = te.floordiv(sb, two);
            let hi = te.floormod(sb, two);
            let c32 = c(te, 32);
            let off = te.mul(chunk, c32);
            let sixteen = c(te, 16);
            let at = te.add(base, sixteen);
            let at = te.add(at, off);
            let at = te.add(at, i);
            let byte = te.load(w, &[j, at]);
            nibble(te, byte, hi)
        }
        QuantType::Q6K => {
            // Element e = 32 sb + i of the super-block: half h = sb / 4, quarter
            // q = sb % 4; low four bits from ql[64h + 32 (q % 2) + i] (nibble q / 2),
            // high two from qh[128 + 32h + i] >> 2q.
            let (base, sb) = super_block(te, b, 210);
            let four = c(te, 4);
            let h = te.floordiv(sb, four);
            let q = te.floormod(sb, four);
            let two = c(te, 2);
            let c64 = c(te, 64);
            let c32 = c(te, 32);
            let qm = te.floormod(q, two);
            let qm = te.mul(qm, c32);
            let off = te.mul(h, c64);
            let off = te.add(off, qm);
            let at = te.add(base, off);
            let at = te.add(at, i);
            let lo = te.load(w, &[j, at]);
            let qd = te.floordiv(q, two);
            let lo = nibble(te, lo, qd);
            let c128 = c(te, 128);
            let off = te.mul(h, c32);
            let off = te.add(c128, off);
            let at = te.add(base, off);
            let at = te.add(at, i);
            let hb = te.load(w, &[j, at]);
            let sh = te.mul(q, two);
            let sh = te.cast(DataType::UINT8, sh);
            let hv = te.call(Intrinsic::ShiftRight, &[hb, sh]);
            let three = te.const_i(DataType::UINT8, 3);
            let hv = te.call(Intrinsic::BitwiseAnd, &[hv, three]);
            let four = te.const_i(DataType::UINT8, 4);
            let hv = te.call(Intrinsic::ShiftLeft, &[hv, four]);
            te.call(Intrinsic::BitwiseOr, &[lo, hv])
        }
    }
}

/// The byte offset of the super-block of 32-element block `b` (`b / 8`, of `bytes`
/// bytes) and the sub-block `b % 8`.
fn super_block(te: &mut Te, b: PrimExpr, bytes: i64) -> (PrimExpr, PrimExpr) {
    let eight = te.i64(8);
    let sup = te.floordiv(b, eight);
    let sb = te.floormod(b, eight);
    let bb = te.i64(bytes);
    (te.mul(sup, bb), sb)
}

/// `byte >> 4 hi & 15` (`hi` an `int64` index, 0 or 1).
fn nibble(te: &mut Te, byte: PrimExpr, hi: PrimExpr) -> PrimExpr {
    let four = te.i64(4);
    let sh = te.mul(hi, four);
    let sh = te.cast(DataType::UINT8, sh);
    let v = te.call(Intrinsic::ShiftRight, &[byte, sh]);
    let mask = te.const_i(DataType::UINT8, 15);
    te.call(Intrinsic::BitwiseAnd, &[v, mask])
}

/// The value lane `l` of block `b` adds to its sum: from the lane's integer dot
/// product `dot` of unsigned weight bytes ([`weight_byte`]), the sum `s` of its 4
/// activations and the block's activation scale `dx`:
///
/// * Q4_0, Q8_0: `float(dot - off · s) · (d · dx)`, `off` 8 or 128, `d` the block's;
/// * Q4_K: `float(dot) · ((d · sc) · dx) - float(s) · ((dmin · m) · dx)`, `sc` and `m`
///   the sub-block's 6-bit scale and min (ggml's `get_scale_min_k4`);
/// * Q6_K: `float(dot - 32 · s) · ((d · sc) · dx)`, `sc` the signed scale of the lane's
///   16-element sub-block.
#[allow(clippy::too_many_arguments, reason = "the pieces of one formula")]
fn lane_value(
    te: &mut Te,
    ty: QuantType,
    w: Tensor,
    j: PrimExpr,
    b: PrimExpr,
    l: PrimExpr,
    dot: PrimExpr,
    s: PrimExpr,
    dx: PrimExpr,
) -> PrimExpr {
    let i32c = |te: &mut Te, v: i64| te.const_i(DataType::INT32, v);
    match ty {
        QuantType::Q4_0 | QuantType::Q8_0 => {
            let off = i32c(te, if ty == QuantType::Q4_0 { 8 } else { 128 });
            let corr = te.mul(s, off);
            let sumi = te.sub(dot, corr);
            let sumi = te.cast(DataType::FLOAT32, sumi);
            let bb = te.i64(ty.block_bytes() as i64);
            let blk = te.mul(b, bb);
            let dw = f16_at(te, w, j, blk);
            let scale = te.mul(dw, dx);
            te.mul(sumi, scale)
        }
        QuantType::Q4K => {
            let (base, sb) = super_block(te, b, 144);
            let (sc, m) = scale_min_k4(te, w, j, base, sb);
            let d = f16_at(te, w, j, base);
            let two = te.i64(2);
            let at = te.add(base, two);
            let dmin = f16_at(te, w, j, at);
            let sc = te.cast(DataType::FLOAT32, sc);
            let m = te.cast(DataType::FLOAT32, m);
            let a = te.mul(d, sc);
            let a = te.mul(a, dx);
            let mm = te.mul(dmin, m);
            let mm = te.mul(mm, dx);
            let p = te.cast(DataType::FLOAT32, dot);
            let p = te.mul(p, a);
            let sf = te.cast(DataType::FLOAT32, s);
            let q = te.mul(sf, mm);
            te.sub(p, q)
        }
        QuantType::Q6K => {
            let (base, sb) = super_block(te, b, 210);
            // scales[2 sb + l / 4] at byte 192, d at 208.
            let two = te.i64(2);
            let four = te.i64(4);
            let at = te.mul(sb, two);
            let lq = te.floordiv(l, four);
            let at = te.add(at, lq);
            let c192 = te.i64(192);
            let at = te.add(at, c192);
            let at = te.add(base, at);
            let byte = te.load(w, &[j, at]);
            let sc = te.call_typed(DataType::INT8, Intrinsic::Reinterpret, &[byte]);
            let sc = te.cast(DataType::FLOAT32, sc);
            let c208 = te.i64(208);
            let at = te.add(base, c208);
            let d = f16_at(te, w, j, at);
            let off = i32c(te, 32);
            let corr = te.mul(s, off);
            let sumi = te.sub(dot, corr);
            let sumi = te.cast(DataType::FLOAT32, sumi);
            let a = te.mul(d, sc);
            let a = te.mul(a, dx);
            te.mul(sumi, a)
        }
    }
}

/// Q4_K's scale and min of sub-block `sb` (0 to 7) of the super-block at byte `base`,
/// as `int32` (ggml's `get_scale_min_k4`; both arms of each choice read in-bounds bytes,
/// as in [`super::decode`]).
fn scale_min_k4(te: &mut Te, w: Tensor, j: PrimExpr, base: PrimExpr, sb: PrimExpr) -> (PrimExpr, PrimExpr) {
    let byte = |te: &mut Te, idx: PrimExpr| {
        let four = te.i64(4);
        let at = te.add(base, four);
        let at = te.add(at, idx);
        let v = te.load(w, &[j, at]);
        te.cast(DataType::INT32, v)
    };
    let i32c = |te: &mut Te, v: i64| te.const_i(DataType::INT32, v);
    let four = te.i64(4);
    let eight = te.i64(8);
    let sb4 = te.add(sb, four);
    let sb4m8 = te.floormod(sb4, eight);
    let first = te.bin(BinOp::Lt, sb, four);
    let and = |te: &mut Te, a: PrimExpr, m: i64| {
        let m = i32c(te, m);
        te.call(Intrinsic::BitwiseAnd, &[a, m])
    };
    let shr = |te: &mut Te, a: PrimExpr, v: i64| {
        let v = i32c(te, v);
        te.call(Intrinsic::ShiftRight, &[a, v])
    };
    let shl = |te: &mut Te, a: PrimExpr, v: i64| {
        let v = i32c(te, v);
        te.call(Intrinsic::ShiftLeft, &[a, v])
    };
    // sc: sb < 4: s[sb] & 63; else (s[sb + 4] & 15) | ((s[sb - 4] >> 6) << 4).
    let a = byte(te, sb);
    let sc_lo = and(te, a, 63);
    let a = byte(te, sb4);
    let a = and(te, a, 15);
    let bb = byte(te, sb4m8);
    let bb = shr(te, bb, 6);
    let bb = shl(te, bb, 4);
    let sc_hi = te.call(Intrinsic::BitwiseOr, &[a, bb]);
    let sc = te.if_then_else(first, sc_lo, sc_hi);
    // m: sb < 4: s[sb + 4] & 63; else (s[sb + 4] >> 4) | ((s[sb] >> 6) << 4).
    let a = byte(te, sb4);
    let m_lo = and(te, a, 63);
    let a = byte(te, sb4);
    let a = shr(te, a, 4);
    let bb = byte(te, sb);
    let bb = shr(te, bb, 6);
    let bb = shl(te, bb, 4);
    let m_hi = te.call(Intrinsic::BitwiseOr, &[a, bb]);
    let m = te.if_then_else(first, m_lo, m_hi);
    (sc, m)
}

/// The half float at byte `at` of row `j` (little-endian), as `float32`.
fn f16_at(te: &mut Te, w: Tensor, j: PrimExpr, at: PrimExpr) -> PrimExpr {
    let lo = te.load(w, &[j, at]);
    let lo = te.cast(UINT16, lo);
    let one = te.i64(1);
    let at1 = te.add(at, one);
    let hi = te.load(w, &[j, at1]);
    let hi = te.cast(UINT16, hi);
    let eight = te.const_i(UINT16, 8);
    let hi = te.call(Intrinsic::ShiftLeft, &[hi, eight]);
    let bits = te.call(Intrinsic::BitwiseOr, &[lo, hi]);
    let h = te.call_typed(DataType::FLOAT16, Intrinsic::Reinterpret, &[bits]);
    te.cast(DataType::FLOAT32, h)
}

#[cfg(test)]
mod tests {
    use super::*;
    use relax_ir::{Func, Module};

    #[test]
    fn kernels_verify_and_print_back() {
        let mut m = Module::new();
        m.add(quantize_name(64), Func::Prim(Box::new(quantize_kernel(64))));
        for ty in [QuantType::Q4_0, QuantType::Q8_0] {
            m.add(matmul_name(ty, 64, 2), Func::Prim(Box::new(matmul_kernel(ty, 64, 2))));
        }
        relax_ir::verify::verify_module(&m).unwrap_or_else(|e| panic!("{e:?}"));
        let text = relax_ir::printer::print_module(&m);
        let back = relax_parser::parse_module(&text).unwrap_or_else(|e| panic!("{e:?}\n{text}"));
        assert_eq!(relax_ir::printer::print_module(&back), text);
        assert!(text.contains("def matmul_q8_q4_0_64_r2("), "{text}");
    }
}
