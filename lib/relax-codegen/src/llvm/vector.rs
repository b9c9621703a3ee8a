//! `T.vectorized` loops of constant extent as LLVM vector instructions.
//!
//! A loop `for v in T.vectorized(lo, lo + N)` whose body is one store of float32 or
//! float64 arithmetic becomes one vector store of `<N x float>` values, when every
//! access either does not depend on `v` (a scalar, broadcast to the lanes) or reads
//! consecutive elements along `v` (`buf[..., base + v]` with a unit last stride: one
//! vector load), and the value is built from `+`, `-`, `*`, `/`, `min` and `max`. Each
//! lane computes what the scalar loop computes for its `v`, with the same IEEE
//! operations (`fadd`, `fmul`, ... and `fcmp` + `select` for `min` / `max`), so the bits
//! do not change; the loop's iterations are independent because a loaded buffer is
//! either the stored one, read at the store's own element, or a different object.
//!
//! Register tiles are such loops (`acc[i, v] = acc[i, v] + A[i, k] * B[k, c + v]`):
//! emitted as vectors they need no help from the SLP vectorizer, whose packing of
//! hundreds of unrolled scalars is slow to compile and not always clean. Loops that do
//! not qualify are unrolled for the SLP vectorizer as before ([`super::stmt`]).

use std::collections::HashMap;

use inkwell::FloatPredicate;
use inkwell::values::{BasicValue, BasicValueEnum, FloatValue, VectorValue};
use relax_ir::{BinOp, Buffer, DataType, PrimExpr, PrimExprData, Stmt, StmtData, SymVar};

use super::{Fx, R};

/// A value of the vector loop: the same for every lane, or one per lane.
#[derive(Clone, Copy)]
enum Lanes<'ctx> {
    Scalar(FloatValue<'ctx>),
    Vector(VectorValue<'ctx>),
}

/// What decides whether a loop vectorizes: the lane variable and the stored access.
struct Check<'f> {
    f: &'f relax_ir::PrimFunc,
    var: SymVar,
    dt: DataType,
    store: Buffer,
    store_idx: &'f [PrimExpr],
    /// The buffers may not overlap (`tirx.noalias`).
    noalias: bool,
    memo: HashMap<PrimExpr, bool>,
}

impl Check<'_> {
    /// True when `e` mentions the lane variable.
    fn lane_dependent(&mut self, e: PrimExpr) -> bool {
        if let Some(&r) = self.memo.get(&e) {
            return r;
        }
        let r = match self.f.pool.prim(e) {
            PrimExprData::Var(v) => *v == self.var,
            _ => {
                let mut ops = Vec::new();
                self.f.pool.for_each_operand(e, |o| ops.push(o));
                ops.into_iter().any(|o| self.lane_dependent(o))
            }
        };
        self.memo.insert(e, r);
        r
    }

    /// True when `e` is `v + base` (or `base + v`, `v - ...`) with `base` independent of
    /// the lane variable `v`.
    fn unit_in_lane(&mut self, e: PrimExpr) -> bool {
        match *self.f.pool.prim(e) {
            PrimExprData::Var(v) => v == self.var,
            PrimExprData::Bin(BinOp::Add, a, b) => {
                (self.unit_in_lane(a) && !self.lane_dependent(b)) || (self.unit_in_lane(b) && !self.lane_dependent(a))
            }
            PrimExprData::Bin(BinOp::Sub, a, b) => self.unit_in_lane(a) && !self.lane_dependent(b),
            _ => false,
        }
    }

    /// True when indices read or write consecutive elements along the lanes: the last
    /// is `v + base`, the others do not depend on `v`.
    fn consecutive(&mut self, idx: &[PrimExpr]) -> bool {
        match idx.split_last() {
            Some((&last, rest)) => self.unit_in_lane(last) && rest.iter().all(|&i| !self.lane_dependent(i)),
            None => false,
        }
    }

    /// True when a load of `buf` at `idx` cannot see another lane's store.
    fn independent_of_store(&self, buf: Buffer, idx: &[PrimExpr]) -> bool {
        if buf == self.store {
            return idx == self.store_idx;
        }
        let is_param = |b: Buffer| self.f.buffer_map.iter().any(|&(_, pb)| pb == b);
        self.noalias || !is_param(buf) || !is_param(self.store)
    }

    /// True when the value `e` vectorizes.
    fn value(&mut self, e: PrimExpr) -> bool {
        if self.f.pool.dtype(e) != self.dt {
            return false;
        }
        match self.f.pool.prim(e).clone() {
            PrimExprData::Float(..) | PrimExprData::Int(..) => true,
            PrimExprData::Var(v) => v != self.var,
            PrimExprData::Load { buffer, indices, .. } => {
                (!indices.iter().any(|&i| self.lane_dependent(i)) || self.consecutive(&indices))
                    && self.independent_of_store(buffer, &indices)
            }
            PrimExprData::Bin(op, a, b) => {
                matches!(op, BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Min | BinOp::Max)
                    && self.value(a)
                    && self.value(b)
            }
            _ => false,
        }
    }
}

impl<'ctx> Fx<'_, '_, 'ctx> {
    /// Lowers `for var in T.vectorized(lo, lo + n): body` as vector instructions when the
    /// loop qualifies (see the module documentation); returns false, having emitted
    /// nothing, when it does not.
    pub(super) fn vector_loop(&mut self, var: SymVar, lo: i64, n: u32, body: Stmt) -> R<bool> {
        let f = self.sh.f;
        let (buffer, indices, value) = match &f.stmts[body] {
            StmtData::Store { buffer, indices, value } => (*buffer, indices.as_slice(), *value),
            StmtData::Seq(v) if v.len() == 1 => match &f.stmts[v[0]] {
                StmtData::Store { buffer, indices, value } => (*buffer, indices.as_slice(), *value),
                _ => return Ok(false),
            },
            _ => return Ok(false),
        };
        let dt = f.buffer(buffer).dtype;
        if n < 2 || !(dt.is_float() && matches!(dt.bits, 32 | 64) && dt.lanes == 1) {
            return Ok(false);
        }
        let mut check =
            Check { f, var, dt, store: buffer, store_idx: indices, noalias: self.sh.noalias, memo: HashMap::new() };
        if !check.consecutive(indices) || !check.value(value) || !self.unit_stride(buffer, &mut check, value) {
            return Ok(false);
        }
        // Addresses are lane 0's: the loop variable is bound to `lo`.
        let vdt = f.pool.vars[var].dtype;
        let v0 = self.cast(self.i64c(lo).into(), DataType::INT64, vdt)?;
        let old = self.bind_var(var, v0);
        let r = self.vector_store(buffer, indices, value, n, &mut check);
        self.restore_var(var, old);
        r.map(|()| true)
    }

    /// True when the stored buffer and every buffer read along the lanes have a unit
    /// last stride.
    fn unit_stride(&self, store: Buffer, check: &mut Check<'_>, value: PrimExpr) -> bool {
        let unit = |b: Buffer| {
            self.bufs
                .get(&b)
                .is_some_and(|i| i.strides.last().is_some_and(|s| s.get_zero_extended_constant() == Some(1)))
        };
        let mut loads = Vec::new();
        let mut stack = vec![value];
        while let Some(e) = stack.pop() {
            if let PrimExprData::Load { buffer, indices, .. } = check.f.pool.prim(e) {
                loads.push((*buffer, indices.clone()));
            }
            check.f.pool.for_each_operand(e, |o| stack.push(o));
        }
        unit(store) && loads.iter().all(|(b, ix)| !ix.iter().any(|&i| check.lane_dependent(i)) || unit(*b))
    }

    fn vector_store(
        &mut self,
        buffer: Buffer,
        indices: &[PrimExpr],
        value: PrimExpr,
        n: u32,
        check: &mut Check<'_>,
    ) -> R<()> {
        let dt = check.dt;
        let v = self.lanes(value, n, check)?;
        let v = self.splat(v, n, dt)?;
        let (p, _) = self.address(buffer, indices)?;
        let st = self.b.build_store(p, v)?;
        let _ = st.set_alignment(dt.bytes().max(1) as u32);
        Ok(())
    }

    /// `v` as a vector of `n` lanes.
    fn splat(&self, v: Lanes<'ctx>, n: u32, dt: DataType) -> R<VectorValue<'ctx>> {
        match v {
            Lanes::Vector(x) => Ok(x),
            Lanes::Scalar(s) => {
                let vt = self.float_ty(dt).vec_type(n);
                let i32t = self.sh.cx.i32_type();
                let one = self.b.build_insert_element(vt.get_undef(), s, i32t.const_zero(), "splat")?;
                let mask = i32t.vec_type(n).const_zero();
                Ok(self.b.build_shuffle_vector(one, vt.get_undef(), mask, "splat")?)
            }
        }
    }

    /// Evaluates a value that [`Check::value`] accepted.
    fn lanes(&mut self, e: PrimExpr, n: u32, check: &mut Check<'_>) -> R<Lanes<'ctx>> {
        let dt = check.dt;
        if !check.lane_dependent(e) {
            let v = self.eval_as(e, dt)?;
            return Ok(Lanes::Scalar(v.into_float_value()));
        }
        match self.sh.f.pool.prim(e).clone() {
            PrimExprData::Load { buffer, indices, .. } => {
                let (p, _) = self.address(buffer, &indices)?;
                let vt = self.float_ty(dt).vec_type(n);
                let v = self.b.build_load(vt, p, "vld")?;
                if let Some(inst) = v.as_instruction_value() {
                    let _ = inst.set_alignment(dt.bytes().max(1) as u32);
                }
                Ok(Lanes::Vector(v.into_vector_value()))
            }
            PrimExprData::Bin(op, a, b) => {
                let x = self.lanes(a, n, check)?;
                let y = self.lanes(b, n, check)?;
                let (x, y) = (self.splat(x, n, dt)?, self.splat(y, n, dt)?);
                Ok(Lanes::Vector(self.vector_binary(op, x, y)?))
            }
            _ => Err(self.err("internal error: a vector loop value that does not vectorize")),
        }
    }

    /// A float operator on vectors, lane by lane as [`Self::binary`] computes it.
    fn vector_binary(&mut self, op: BinOp, x: VectorValue<'ctx>, y: VectorValue<'ctx>) -> R<VectorValue<'ctx>> {
        let bld = &self.b;
        let r: BasicValueEnum<'ctx> = match op {
            BinOp::Add => bld.build_float_add(x, y, "vfa")?.into(),
            BinOp::Sub => bld.build_float_sub(x, y, "vfs")?.into(),
            BinOp::Mul => bld.build_float_mul(x, y, "vfm")?.into(),
            BinOp::Div => bld.build_float_div(x, y, "vfd")?.into(),
            BinOp::Min => {
                let c = bld.build_float_compare(FloatPredicate::OLT, x, y, "vlt")?;
                bld.build_select(c, x, y, "vmin")?
            }
            BinOp::Max => {
                let c = bld.build_float_compare(FloatPredicate::OGT, x, y, "vgt")?;
                bld.build_select(c, x, y, "vmax")?
            }
            _ => return Err(self.err("internal error: a vector operator that does not vectorize")),
        };
        Ok(r.into_vector_value())
    }
}
