//! `T.vectorized` loops of 4-element integer dot products, as x86's `vpdpbusd`.
//!
//! The loop
//!
//! ```text
//! for l in T.vectorized(lo, lo + N):
//!     for t in T.unroll(4):
//!         acc[..., base + l] = acc[..., base + l] + T.Cast("int32", u) * T.Cast("int32", s)
//! ```
//!
//! with `acc` an `int32` buffer, `u` a `uint8` and `s` an `int8` expression (either
//! order) that do not read `acc`, adds to each of the `N` lanes the dot product of 4
//! unsigned and 4 signed bytes: what `vpdpbusd` (AVX-VNNI, AVX512-VNNI) computes for
//! N = 4, 8 or 16 (`llvm.x86.avx512.vpdpbusd.{128,256,512}`; the products are exact in
//! 32 bits and the sums wrap, as the interpreter's `int32` arithmetic does). The `4N`
//! values of `u` and `s` are computed element by element (`l = lo + e / 4`, `t = e % 4`)
//! into two byte vectors, which LLVM's SLP vectorizer turns into vector loads and
//! operations. Without the feature, the same vectors are widened, multiplied and summed
//! in groups of 4 with generic vector instructions. The lanes are independent (each
//! reads and writes its own element of `acc`), so the result is the scalar loop's.

use inkwell::values::{BasicValue, BasicValueEnum, VectorValue};
use relax_ir::{BinOp, Buffer, DataType, PrimExpr, PrimExprData, Stmt, StmtData, SymVar};

use super::{Fx, R, feature_on};

/// The pieces of a dot-product loop.
struct Dot {
    acc: Buffer,
    idx: Vec<PrimExpr>,
    t: SymVar,
    u: PrimExpr,
    s: PrimExpr,
}

/// The one statement of `s` (itself, or a sequence of one).
fn single(f: &relax_ir::PrimFunc, s: Stmt) -> Stmt {
    match &f.stmts[s] {
        StmtData::Seq(v) if v.len() == 1 => v[0],
        _ => s,
    }
}

/// `e` without a cast to `int32`, when it is one of a value of `dt`.
fn widened(f: &relax_ir::PrimFunc, e: PrimExpr, dt: DataType) -> Option<PrimExpr> {
    match f.pool.prim(e) {
        PrimExprData::Cast(to, a) if *to == DataType::INT32 && f.pool.dtype(*a) == dt => Some(*a),
        _ => None,
    }
}

/// True when `e` reads `buf`.
fn reads(f: &relax_ir::PrimFunc, e: PrimExpr, buf: Buffer) -> bool {
    let mut stack = vec![e];
    while let Some(x) = stack.pop() {
        if let PrimExprData::Load { buffer, .. } = f.pool.prim(x)
            && *buffer == buf
        {
            return true;
        }
        f.pool.for_each_operand(x, |o| stack.push(o));
    }
    false
}

/// The dot-product loop body `body` of lane variable `var`, if it is one.
fn recognize(f: &relax_ir::PrimFunc, var: SymVar, body: Stmt) -> Option<Dot> {
    let StmtData::For { var: t, min, extent, kind: relax_ir::ForKind::Unrolled, step: None, body, .. } =
        &f.stmts[single(f, body)]
    else {
        return None;
    };
    if f.pool.as_int(*min) != Some(0) || f.pool.as_int(*extent) != Some(4) {
        return None;
    }
    let StmtData::Store { buffer: acc, indices, value } = &f.stmts[single(f, *body)] else { return None };
    if f.buffer(*acc).dtype != DataType::INT32 {
        return None;
    }
    // The last index is `var + base`, the others and `base` free of both loop variables.
    let free = |e: PrimExpr| !f.pool.free_vars(e).iter().any(|v| *v == var || v == t);
    let (&last, rest) = indices.split_last()?;
    let lane_ok = match f.pool.prim(last) {
        PrimExprData::Var(v) => *v == var,
        PrimExprData::Bin(BinOp::Add, a, b) => {
            (f.pool.as_var(*a) == Some(var) && free(*b)) || (f.pool.as_var(*b) == Some(var) && free(*a))
        }
        _ => false,
    };
    if !lane_ok || !rest.iter().all(|&e| free(e)) {
        return None;
    }
    let PrimExprData::Bin(BinOp::Add, a, p) = f.pool.prim(*value) else { return None };
    match f.pool.prim(*a) {
        PrimExprData::Load { buffer, indices: li, .. } if buffer == acc && li == indices => {}
        _ => return None,
    }
    let PrimExprData::Bin(BinOp::Mul, x, y) = f.pool.prim(*p) else { return None };
    let (u, s) = match (widened(f, *x, DataType::UINT8), widened(f, *y, DataType::INT8)) {
        (Some(u), Some(s)) => (u, s),
        _ => (widened(f, *y, DataType::UINT8)?, widened(f, *x, DataType::INT8)?),
    };
    if reads(f, u, *acc) || reads(f, s, *acc) {
        return None;
    }
    Some(Dot { acc: *acc, idx: indices.clone(), t: *t, u, s })
}

impl<'ctx> Fx<'_, '_, 'ctx> {
    /// Lowers `for var in T.vectorized(lo, lo + n): body` as a vector of 4-element dot
    /// products when it is one (see the module documentation); returns false, having
    /// emitted nothing, when it is not.
    pub(super) fn dot_loop(&mut self, var: SymVar, lo: i64, n: u32, body: Stmt) -> R<bool> {
        let f = self.sh.f;
        if !matches!(n, 4 | 8 | 16) || self.sh.device.is_some() {
            return Ok(false);
        }
        let Some(d) = recognize(f, var, body) else { return Ok(false) };
        let i8t = self.sh.cx.i8_type();
        let i32t = self.sh.cx.i32_type();
        let vdt = f.pool.vars[var].dtype;
        let tdt = f.pool.vars[d.t].dtype;
        // The bytes, element by element.
        let mut u = i8t.vec_type(4 * n).get_undef();
        let mut s = i8t.vec_type(4 * n).get_undef();
        let l0 = self.cast(self.i64c(lo).into(), DataType::INT64, vdt)?;
        let t0 = self.cast(self.i64c(0).into(), DataType::INT64, tdt)?;
        let old_v = self.bind_var(var, l0);
        let old_t = self.bind_var(d.t, t0);
        for e in 0..4 * n {
            let lv = self.cast(self.i64c(lo + i64::from(e / 4)).into(), DataType::INT64, vdt)?;
            let tv = self.cast(self.i64c(i64::from(e % 4)).into(), DataType::INT64, tdt)?;
            self.bind_var(var, lv);
            self.bind_var(d.t, tv);
            let ue = self.eval_as(d.u, DataType::UINT8)?.into_int_value();
            let se = self.eval_as(d.s, DataType::INT8)?.into_int_value();
            let at = i32t.const_int(u64::from(e), false);
            u = self.b.build_insert_element(u, ue, at, "du")?;
            s = self.b.build_insert_element(s, se, at, "ds")?;
        }
        // The accumulators, at lane 0's address.
        self.bind_var(var, l0);
        let (p, _) = self.address(d.acc, &d.idx)?;
        self.restore_var(d.t, old_t);
        self.restore_var(var, old_v);
        let vt = i32t.vec_type(n);
        let acc = self.b.build_load(vt, p, "dacc")?;
        if let Some(inst) = acc.as_instruction_value() {
            let _ = inst.set_alignment(4);
        }
        let acc = acc.into_vector_value();
        let features = self.sh.target.1;
        let vnni = match n {
            16 => feature_on(features, "avx512vnni"),
            _ => {
                feature_on(features, "avxvnni")
                    || (feature_on(features, "avx512vnni") && feature_on(features, "avx512vl"))
            }
        };
        let r = if vnni {
            let ub = self.b.build_bit_cast(u, vt, "dub")?;
            let sb = self.b.build_bit_cast(s, vt, "dsb")?;
            let name = format!("llvm.x86.avx512.vpdpbusd.{}", 32 * n);
            let func = self.llvm_intrinsic(&name, &[])?;
            let call = self.b.build_call(func, &[acc.into(), ub.into(), sb.into()], "dot")?;
            match call.try_as_basic_value().basic() {
                Some(BasicValueEnum::VectorValue(v)) => v,
                _ => return Err(self.err("internal error: vpdpbusd without a value")),
            }
        } else {
            self.generic_dot(acc, u, s, n)?
        };
        let st = self.b.build_store(p, r)?;
        let _ = st.set_alignment(4);
        Ok(true)
    }

    /// `acc + Σ_t zext(u[4l + t]) · sext(s[4l + t])` per lane `l`, in generic vector
    /// instructions.
    fn generic_dot(
        &mut self,
        acc: VectorValue<'ctx>,
        u: VectorValue<'ctx>,
        s: VectorValue<'ctx>,
        n: u32,
    ) -> R<VectorValue<'ctx>> {
        let i32t = self.sh.cx.i32_type();
        let wide = i32t.vec_type(4 * n);
        let uz = self.b.build_int_z_extend(u, wide, "duz")?;
        let ss = self.b.build_int_s_extend(s, wide, "dss")?;
        let prod = self.b.build_int_mul(uz, ss, "dp")?;
        let mut sum = acc;
        for t in 0..4 {
            let mask: Vec<_> = (0..n).map(|l| i32t.const_int(u64::from(4 * l + t), false)).collect();
            let mask = inkwell::types::VectorType::const_vector(&mask);
            let part = self.b.build_shuffle_vector(prod, wide.get_poison(), mask, "dpt")?;
            sum = self.b.build_int_add(sum, part, "dsum")?;
        }
        Ok(sum)
    }
}
