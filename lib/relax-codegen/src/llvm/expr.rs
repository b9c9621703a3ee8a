//! Expressions: literals, variables, loads, operators, casts, `Select` and `Let`, with
//! the interpreter's semantics (see [`crate::llvm`]).

use std::collections::HashMap;

use inkwell::types::BasicType;
use inkwell::values::{BasicValue, BasicValueEnum, FloatValue, IntValue};
use inkwell::{FloatPredicate, IntPredicate};
use relax_ir::prim::{round_to_dtype, wrap_int};
use relax_ir::{BinOp, Buffer, DataType, PrimExpr, PrimExprData};
use relax_ir::{Intrinsic, TirOp};

use super::types::is_bit;
use super::{Fx, R, ffi};
use crate::error::CodegenError;

/// A value and its dtype.
pub(super) type V<'ctx> = (BasicValueEnum<'ctx>, DataType);

/// True when evaluating `e` can neither fault nor fail (no loads, no integer division
/// by a non-constant, no `T.ret`), so both sides of a select may be computed.
pub(super) fn speculatable(pool: &relax_ir::Pool, e: PrimExpr, memo: &mut HashMap<PrimExpr, bool>) -> bool {
    if let Some(&r) = memo.get(&e) {
        return r;
    }
    let own = match pool.prim(e) {
        PrimExprData::Load { .. } => false,
        PrimExprData::Bin(BinOp::Div | BinOp::Mod | BinOp::FloorDiv | BinOp::FloorMod, _, b) => {
            pool.dtype(e).is_float() || pool.as_int(*b).is_some_and(|v| v != 0 && v != -1)
        }
        PrimExprData::Call { op, .. } => {
            !matches!(op.intrinsic(), None | Some(Intrinsic::Ret | Intrinsic::CallExtern | Intrinsic::CallPureExtern))
        }
        _ => true,
    };
    let mut r = own;
    if r {
        let mut ops = Vec::new();
        pool.for_each_operand(e, |o| ops.push(o));
        r = ops.into_iter().all(|o| speculatable(pool, o, memo));
    }
    memo.insert(e, r);
    r
}

impl<'ctx> Fx<'_, '_, 'ctx> {
    /// Evaluates an expression.
    pub(super) fn eval(&mut self, e: PrimExpr) -> R<V<'ctx>> {
        stacker::maybe_grow(64 * 1024, 2 * 1024 * 1024, || self.eval_inner(e))
    }

    /// Evaluates an expression and converts it to `dt`.
    pub(super) fn eval_as(&mut self, e: PrimExpr, dt: DataType) -> R<BasicValueEnum<'ctx>> {
        let (v, t) = self.eval(e)?;
        self.cast(v, t, dt)
    }

    /// Evaluates an expression as an `i64`.
    pub(super) fn eval_i64(&mut self, e: PrimExpr) -> R<IntValue<'ctx>> {
        let (v, t) = self.eval(e)?;
        self.to_i64(v, t)
    }

    /// Evaluates a condition as an `i1`.
    pub(super) fn eval_cond(&mut self, e: PrimExpr) -> R<IntValue<'ctx>> {
        let (v, t) = self.eval(e)?;
        self.is_true(v, t)
    }

    fn eval_inner(&mut self, e: PrimExpr) -> R<V<'ctx>> {
        let f = self.sh.f;
        match f.pool.prim(e) {
            PrimExprData::Int(dt, v) => self.literal_int(*dt, *v),
            PrimExprData::Float(dt, v) => self.literal_float(*dt, v.get()),
            PrimExprData::Str(_) => Err(self.err("string values are not supported in generated code")),
            PrimExprData::Var(v) => {
                let dt = f.pool.vars[*v].dtype;
                if let Some(x) = self.vars.get(v) {
                    return Ok((*x, dt));
                }
                if let Some(p) = self.data.get(v) {
                    return Ok(((*p).into(), DataType::HANDLE));
                }
                Err(self.err(&format!("variable `{}` is used before it has a value", f.pool.vars[*v].name)))
            }
            PrimExprData::Load { dtype, buffer, indices } => {
                if dtype.is_vector() {
                    return Err(self.err("vector loads are not supported by the code generator"));
                }
                self.load(*buffer, indices)
            }
            PrimExprData::Bin(op, a, b) => {
                let (op, a, b) = (*op, *a, *b);
                if op.is_logical() && !speculatable(&f.pool, b, &mut HashMap::new()) {
                    return self.short_circuit(op, a, b);
                }
                let x = self.eval(a)?;
                let y = self.eval(b)?;
                self.binary(op, x, y)
            }
            PrimExprData::Not(a) => {
                let c = self.eval_cond(*a)?;
                Ok((self.b.build_not(c, "not")?.into(), DataType::BOOL))
            }
            PrimExprData::Cast(t, a) => {
                let t = *t;
                let v = self.eval_as(*a, t)?;
                Ok((v, t))
            }
            PrimExprData::Select(c, t, el) => self.choose(*c, *t, *el),
            PrimExprData::Let { var, value, body } => {
                let (var, value, body) = (*var, *value, *body);
                let dt = f.pool.vars[var].dtype;
                let v = if dt.is_handle() { self.eval(value)?.0 } else { self.eval_as(value, dt)? };
                let old = self.bind_var(var, v);
                let r = self.eval(body);
                self.restore_var(var, old);
                r
            }
            PrimExprData::Call { dtype, op, args } => match op {
                TirOp::Intrinsic(i) => self.call(*dtype, *i, args),
                TirOp::Other(name) => Err(self.err(&format!("the op `{name}` is not supported by the code generator"))),
            },
            PrimExprData::Ramp { .. } | PrimExprData::Broadcast { .. } => {
                Err(self.err("vector expressions are not supported by the code generator"))
            }
        }
    }

    /// An error about the function being compiled.
    pub(super) fn err(&self, what: &str) -> CodegenError {
        CodegenError::new(format!("PrimFunc `{}`: {what}", self.sh.name))
    }

    /// Binds a variable (a handle goes to the data map); returns what it replaced.
    pub(super) fn bind_var(&mut self, var: relax_ir::SymVar, v: BasicValueEnum<'ctx>) -> Option<BasicValueEnum<'ctx>> {
        if let BasicValueEnum::PointerValue(p) = v {
            return self.data.insert(var, p).map(Into::into);
        }
        self.vars.insert(var, v)
    }

    /// Undoes [`Self::bind_var`].
    pub(super) fn restore_var(&mut self, var: relax_ir::SymVar, old: Option<BasicValueEnum<'ctx>>) {
        match old {
            Some(BasicValueEnum::PointerValue(p)) => {
                self.data.insert(var, p);
            }
            Some(v) => {
                self.vars.insert(var, v);
            }
            None => {
                self.vars.remove(&var);
                self.data.remove(&var);
            }
        }
    }

    fn literal_int(&self, dt: DataType, v: i64) -> R<V<'ctx>> {
        if dt.is_float() {
            return self.literal_float(dt, v as f64);
        }
        let t = self.reg_ty(dt)?.into_int_type();
        Ok((t.const_int(wrap_int(dt, v) as u64, false).into(), dt))
    }

    fn literal_float(&self, dt: DataType, v: f64) -> R<V<'ctx>> {
        if dt.is_float() {
            let v = round_to_dtype(dt, v);
            return Ok((self.float_ty(dt).const_float(v).into(), dt));
        }
        // A float literal of an integer type converts like a cast.
        let t = self.reg_ty(dt)?.into_int_type();
        if is_bit(dt) {
            return Ok((t.const_int(u64::from(v != 0.0), false).into(), dt));
        }
        let i = if v.is_nan() { 0 } else { v.trunc().clamp(-1.8e19, 1.8e19) as i128 as i64 };
        Ok((t.const_int(wrap_int(dt, i) as u64, false).into(), dt))
    }

    /// The address of `buffer[indices]`.
    pub(super) fn address(
        &mut self,
        buffer: Buffer,
        indices: &[PrimExpr],
    ) -> R<(inkwell::values::PointerValue<'ctx>, DataType)> {
        let Some(info) = self.bufs.get(&buffer).cloned() else {
            return Err(self.err(&format!("buffer `{}` is used outside its scope", self.sh.f.buffer(buffer).name)));
        };
        if indices.len() != info.strides.len() {
            return Err(self.err(&format!(
                "buffer `{}` of {} dims accessed with {} indices",
                self.sh.f.buffer(buffer).name,
                info.strides.len(),
                indices.len()
            )));
        }
        let mut flat: Option<IntValue<'ctx>> = None;
        for (&i, &s) in indices.iter().zip(&info.strides) {
            let iv = self.eval_i64(i)?;
            let term =
                if s.get_zero_extended_constant() == Some(1) { iv } else { self.b.build_int_nsw_mul(iv, s, "ix")? };
            flat = Some(match flat {
                None => term,
                Some(acc) => self.b.build_int_nsw_add(acc, term, "ix")?,
            });
        }
        let flat = flat.unwrap_or_else(|| self.i64c(0));
        if !info.dims.is_empty() {
            self.check_indices(buffer, indices, &info.dims)?;
        }
        let elem = self.mem_ty(info.dtype)?;
        Ok((ffi::elem_ptr(&self.b, elem, info.ptr, flat)?, info.dtype))
    }

    /// With bounds checks: `0 <= index < dim` for every index of an access to `buffer`,
    /// else the kernel fails through [`crate::abi::INDEX_ERROR`] with the interpreter's
    /// message. The indices are evaluated again (LLVM merges the two evaluations).
    fn check_indices(&mut self, buffer: Buffer, indices: &[PrimExpr], dims: &[IntValue<'ctx>]) -> R<()> {
        let mut ivs = Vec::with_capacity(indices.len());
        for &i in indices {
            ivs.push(self.eval_i64(i)?);
        }
        let mut bad: Option<IntValue<'ctx>> = None;
        for (iv, d) in ivs.iter().zip(dims) {
            // Unsigned: a negative index is a huge one.
            let out = self.b.build_int_compare(IntPredicate::UGE, *iv, *d, "oob")?;
            bad = Some(match bad {
                None => out,
                Some(b) => self.b.build_or(b, out, "oob")?,
            });
        }
        let Some(bad) = bad else { return Ok(()) };
        let message = format!(
            "PrimFunc `{}`: index {{index}} out of bounds for dim {{dim}} (extent {{extent}}) of buffer `{}` (indices [{{indices}}])",
            self.sh.name,
            self.sh.f.buffer(buffer).name
        );
        let code = self.sh.error_code(message);
        let cx = self.sh.cx;
        let fail = cx.append_basic_block(self.func, "oob");
        let ok = cx.append_basic_block(self.func, "inb");
        self.b.build_conditional_branch(bad, fail, ok)?;
        self.b.position_at_end(fail);
        let i64t = cx.i64_type();
        let arr_t = i64t.array_type(ivs.len() as u32);
        let idx = self.b.build_alloca(arr_t, "oob_idx")?;
        let dim = self.b.build_alloca(arr_t, "oob_dims")?;
        for (k, (iv, d)) in ivs.iter().zip(dims).enumerate() {
            let at = i64t.const_int(k as u64, false);
            self.b.build_store(ffi::elem_ptr(&self.b, i64t.into(), idx, at)?, *iv)?;
            self.b.build_store(ffi::elem_ptr(&self.b, i64t.into(), dim, at)?, *d)?;
        }
        let i32t = cx.i32_type();
        let ptr_t = cx.ptr_type(inkwell::AddressSpace::default());
        let f = self.extern_fn(
            crate::abi::INDEX_ERROR,
            i32t.into(),
            &[i32t.into(), ptr_t.into(), ptr_t.into(), i64t.into()],
            false,
        );
        let args = [
            i32t.const_int(code, false).into(),
            idx.into(),
            dim.into(),
            i64t.const_int(ivs.len() as u64, false).into(),
        ];
        let r = self.b.build_call(f, &args, "oob")?;
        let r = r.try_as_basic_value().basic().expect("an i32").into_int_value();
        self.b.build_return(Some(&r))?;
        self.b.position_at_end(ok);
        Ok(())
    }

    fn load(&mut self, buffer: Buffer, indices: &[PrimExpr]) -> R<V<'ctx>> {
        let (p, dt) = self.address(buffer, indices)?;
        let ty = self.mem_ty(dt)?;
        let raw = self.b.build_load(ty, p, "ld")?;
        if let Some(inst) = raw.as_instruction_value() {
            let _ = inst.set_alignment(dt.bytes().max(1) as u32);
        }
        Ok((self.mem_to_value(raw, dt)?, dt))
    }

    /// `buffer[indices] = value`, converted to the buffer's dtype.
    pub(super) fn store(&mut self, buffer: Buffer, indices: &[PrimExpr], value: PrimExpr) -> R<()> {
        let (v, vt) = self.eval(value)?;
        let (p, dt) = self.address(buffer, indices)?;
        let v = self.cast(v, vt, dt)?;
        let m = self.to_mem(v, dt)?;
        let st = self.b.build_store(p, m)?;
        let _ = st.set_alignment(dt.bytes().max(1) as u32);
        Ok(())
    }

    /// `and` / `or` whose right side may fault: evaluated only when needed.
    fn short_circuit(&mut self, op: BinOp, a: PrimExpr, b: PrimExpr) -> R<V<'ctx>> {
        let x = self.eval_cond(a)?;
        let start = self.b.get_insert_block().expect("positioned");
        let rhs = self.sh.cx.append_basic_block(self.func, "rhs");
        let done = self.sh.cx.append_basic_block(self.func, "sc");
        if op == BinOp::And {
            self.b.build_conditional_branch(x, rhs, done)?;
        } else {
            self.b.build_conditional_branch(x, done, rhs)?;
        }
        self.b.position_at_end(rhs);
        let y = self.eval_cond(b)?;
        let rhs_end = self.b.get_insert_block().expect("positioned");
        self.b.build_unconditional_branch(done)?;
        self.b.position_at_end(done);
        let phi = self.b.build_phi(self.sh.cx.bool_type(), "sc")?;
        let short = self.sh.cx.bool_type().const_int(u64::from(op == BinOp::Or), false);
        phi.add_incoming(&[(&short, start), (&y, rhs_end)]);
        Ok((phi.as_basic_value(), DataType::BOOL))
    }

    /// `Select(c, t, f)` / `if_then_else`: a `select` when both sides are safe to compute,
    /// else branches so that only the chosen side runs.
    pub(super) fn choose(&mut self, c: PrimExpr, t: PrimExpr, el: PrimExpr) -> R<V<'ctx>> {
        let cond = self.eval_cond(c)?;
        let pool = &self.sh.f.pool;
        let mut memo = HashMap::new();
        let dt = pool.dtype(t).common(pool.dtype(el));
        if speculatable(pool, t, &mut memo) && speculatable(pool, el, &mut memo) {
            let a = self.eval_as(t, dt)?;
            let b = self.eval_as(el, dt)?;
            return Ok((self.b.build_select(cond, a, b, "sel")?, dt));
        }
        let then_bb = self.sh.cx.append_basic_block(self.func, "then");
        let else_bb = self.sh.cx.append_basic_block(self.func, "else");
        let done = self.sh.cx.append_basic_block(self.func, "endsel");
        self.b.build_conditional_branch(cond, then_bb, else_bb)?;
        self.b.position_at_end(then_bb);
        let a = self.eval_as(t, dt)?;
        let a_end = self.b.get_insert_block().expect("positioned");
        self.b.build_unconditional_branch(done)?;
        self.b.position_at_end(else_bb);
        let b = self.eval_as(el, dt)?;
        let b_end = self.b.get_insert_block().expect("positioned");
        self.b.build_unconditional_branch(done)?;
        self.b.position_at_end(done);
        let phi = self.b.build_phi(a.get_type(), "sel")?;
        phi.add_incoming(&[(&a, a_end), (&b, b_end)]);
        Ok((phi.as_basic_value(), dt))
    }

    /// A binary operator on two values.
    pub(super) fn binary(&mut self, op: BinOp, (a, ta): V<'ctx>, (b, tb): V<'ctx>) -> R<V<'ctx>> {
        let dt = ta.common(tb);
        let a = self.cast(a, ta, dt)?;
        let b = self.cast(b, tb, dt)?;
        if op.is_logical() {
            let x = self.is_true(a, dt)?;
            let y = self.is_true(b, dt)?;
            let r = if op == BinOp::And { self.b.build_and(x, y, "and")? } else { self.b.build_or(x, y, "or")? };
            return Ok((r.into(), DataType::BOOL));
        }
        if dt.is_float() {
            return self.float_binary(op, a.into_float_value(), b.into_float_value(), dt);
        }
        if dt.is_handle() {
            return Err(self.err("arithmetic on handles is not supported by the code generator"));
        }
        self.int_binary(op, a.into_int_value(), b.into_int_value(), dt)
    }

    fn float_binary(&mut self, op: BinOp, x: FloatValue<'ctx>, y: FloatValue<'ctx>, dt: DataType) -> R<V<'ctx>> {
        let bld = &self.b;
        if op.is_compare() {
            let p = match op {
                BinOp::Eq => FloatPredicate::OEQ,
                BinOp::Ne => FloatPredicate::UNE,
                BinOp::Lt => FloatPredicate::OLT,
                BinOp::Le => FloatPredicate::OLE,
                BinOp::Gt => FloatPredicate::OGT,
                _ => FloatPredicate::OGE,
            };
            return Ok((bld.build_float_compare(p, x, y, "fc")?.into(), DataType::BOOL));
        }
        let r = match op {
            BinOp::Add => bld.build_float_add(x, y, "fa")?,
            BinOp::Sub => bld.build_float_sub(x, y, "fs")?,
            BinOp::Mul => bld.build_float_mul(x, y, "fm")?,
            BinOp::Div => bld.build_float_div(x, y, "fd")?,
            BinOp::Mod => bld.build_float_rem(x, y, "fr")?,
            BinOp::FloorDiv => {
                let q = bld.build_float_div(x, y, "fq")?;
                self.float_fn1(Intrinsic::Floor, q)?
            }
            BinOp::FloorMod => {
                let q = bld.build_float_div(x, y, "fq")?;
                let q = self.float_fn1(Intrinsic::Floor, q)?;
                let p = self.b.build_float_mul(q, y, "fp")?;
                self.b.build_float_sub(x, p, "fmod")?
            }
            BinOp::Min => {
                let c = bld.build_float_compare(FloatPredicate::OLT, x, y, "lt")?;
                return Ok((bld.build_select(c, x, y, "min")?, dt));
            }
            _ => {
                let c = bld.build_float_compare(FloatPredicate::OGT, x, y, "gt")?;
                return Ok((bld.build_select(c, x, y, "max")?, dt));
            }
        };
        Ok((self.round_to(r, dt)?.into(), dt))
    }

    fn int_binary(&mut self, op: BinOp, x: IntValue<'ctx>, y: IntValue<'ctx>, dt: DataType) -> R<V<'ctx>> {
        let signed = dt.is_signed_int() && !is_bit(dt);
        if op.is_compare() {
            let p = match (op, signed) {
                (BinOp::Eq, _) => IntPredicate::EQ,
                (BinOp::Ne, _) => IntPredicate::NE,
                (BinOp::Lt, true) => IntPredicate::SLT,
                (BinOp::Lt, false) => IntPredicate::ULT,
                (BinOp::Le, true) => IntPredicate::SLE,
                (BinOp::Le, false) => IntPredicate::ULE,
                (BinOp::Gt, true) => IntPredicate::SGT,
                (BinOp::Gt, false) => IntPredicate::UGT,
                (_, true) => IntPredicate::SGE,
                (_, false) => IntPredicate::UGE,
            };
            return Ok((self.b.build_int_compare(p, x, y, "ic")?.into(), DataType::BOOL));
        }
        // Index arithmetic is int64 and never wraps in practice: `nsw` lets LLVM reason
        // about it. Narrower types wrap, as the interpreter does.
        let wide = dt.bits == 64 && signed;
        let bld = &self.b;
        let r = match op {
            BinOp::Add if wide => bld.build_int_nsw_add(x, y, "add")?,
            BinOp::Add => bld.build_int_add(x, y, "add")?,
            BinOp::Sub if wide => bld.build_int_nsw_sub(x, y, "sub")?,
            BinOp::Sub => bld.build_int_sub(x, y, "sub")?,
            BinOp::Mul if wide => bld.build_int_nsw_mul(x, y, "mul")?,
            BinOp::Mul => bld.build_int_mul(x, y, "mul")?,
            BinOp::Min | BinOp::Max => {
                let p = match (op, signed) {
                    (BinOp::Min, true) => IntPredicate::SLT,
                    (BinOp::Min, false) => IntPredicate::ULT,
                    (_, true) => IntPredicate::SGT,
                    (_, false) => IntPredicate::UGT,
                };
                let c = bld.build_int_compare(p, x, y, "c")?;
                bld.build_select(c, x, y, "mm")?.into_int_value()
            }
            _ => self.int_division(op, x, y, signed)?,
        };
        Ok((r.into(), dt))
    }

    /// `T.Div`, `T.truncmod`, `//`, `%` on integers; division by zero is a run-time error.
    fn int_division(&mut self, op: BinOp, x: IntValue<'ctx>, y: IntValue<'ctx>, signed: bool) -> R<IntValue<'ctx>> {
        let t = x.get_type();
        let konst = y.get_sign_extended_constant();
        if konst.is_none_or(|c| c == 0) {
            let zero = self.b.build_int_compare(IntPredicate::EQ, y, t.const_zero(), "dz")?;
            let msg = format!("PrimFunc `{}`: integer division by zero", self.sh.name);
            self.fail_if(zero, msg)?;
        }
        // `x / -1` overflows for the smallest value: compute it as a negation instead.
        let minus_one = signed && konst.is_none_or(|c| c == -1);
        let (y2, is_m1) = if minus_one {
            let m1 = self.b.build_int_compare(IntPredicate::EQ, y, t.const_all_ones(), "m1")?;
            (self.b.build_select(m1, t.const_int(1, false), y, "dv")?.into_int_value(), Some(m1))
        } else {
            (y, None)
        };
        let bld = &self.b;
        let r = match (op, signed) {
            (BinOp::Div, true) => bld.build_int_signed_div(x, y2, "div")?,
            (BinOp::Div | BinOp::FloorDiv, false) => bld.build_int_unsigned_div(x, y2, "div")?,
            (BinOp::Mod | BinOp::FloorMod, false) => bld.build_int_unsigned_rem(x, y2, "rem")?,
            (BinOp::Mod, true) => bld.build_int_signed_rem(x, y2, "rem")?,
            (BinOp::FloorDiv, true) => {
                let q = bld.build_int_signed_div(x, y2, "q")?;
                let r = bld.build_int_signed_rem(x, y2, "r")?;
                let nz = bld.build_int_compare(IntPredicate::NE, r, t.const_zero(), "nz")?;
                let xr = bld.build_xor(r, y2, "xr")?;
                let neg = bld.build_int_compare(IntPredicate::SLT, xr, t.const_zero(), "ng")?;
                let adj = bld.build_and(nz, neg, "adj")?;
                let adj = bld.build_int_z_extend(adj, t, "adj")?;
                bld.build_int_sub(q, adj, "fdiv")?
            }
            _ => {
                let r = bld.build_int_signed_rem(x, y2, "r")?;
                let nz = bld.build_int_compare(IntPredicate::NE, r, t.const_zero(), "nz")?;
                let xr = bld.build_xor(r, y2, "xr")?;
                let neg = bld.build_int_compare(IntPredicate::SLT, xr, t.const_zero(), "ng")?;
                let adj = bld.build_and(nz, neg, "adj")?;
                let plus = bld.build_int_add(r, y2, "ry")?;
                bld.build_select(adj, plus, r, "fmod")?.into_int_value()
            }
        };
        Ok(match is_m1 {
            Some(m1) => {
                let alt = if matches!(op, BinOp::Div | BinOp::FloorDiv) {
                    self.b.build_int_sub(t.const_zero(), x, "neg")?
                } else {
                    t.const_zero()
                };
                self.b.build_select(m1, alt, r, "dm1")?.into_int_value()
            }
            None => r,
        })
    }

    /// Returns error `message` from the function when `cond` holds.
    pub(super) fn fail_if(&mut self, cond: IntValue<'ctx>, message: String) -> R<()> {
        if self.sh.device.is_some() {
            return self.device_fail_if(cond);
        }
        let code = self.sh.error_code(message);
        let fail = self.sh.cx.append_basic_block(self.func, "fail");
        let ok = self.sh.cx.append_basic_block(self.func, "ok");
        self.b.build_conditional_branch(cond, fail, ok)?;
        self.b.position_at_end(fail);
        self.b.build_return(Some(&self.sh.cx.i32_type().const_int(code, false)))?;
        self.b.position_at_end(ok);
        Ok(())
    }

    /// A value converted for an 8-byte slot (`i64`, `double` or `ptr`).
    pub(super) fn to_slot(&self, v: BasicValueEnum<'ctx>, dt: DataType) -> R<BasicValueEnum<'ctx>> {
        if dt.is_handle() {
            return Ok(v);
        }
        if dt.is_float() {
            return self.cast(v, dt, DataType::FLOAT64);
        }
        self.cast(v, dt, DataType::INT64)
    }

    /// A slot value converted back to `dt`.
    pub(super) fn slot_to_value(&self, v: BasicValueEnum<'ctx>, dt: DataType) -> R<BasicValueEnum<'ctx>> {
        if dt.is_handle() {
            return Ok(v);
        }
        if dt.is_float() {
            return self.cast(v, DataType::FLOAT64, dt);
        }
        // Integers travel sign- or zero-extended; truncation is exact.
        let it = self.reg_ty(dt)?;
        if is_bit(dt) {
            let iv = v.into_int_value();
            return Ok(self.b.build_int_compare(IntPredicate::NE, iv, iv.get_type().const_zero(), "sb")?.into());
        }
        if dt.bits < 64 {
            return Ok(self.b.build_int_truncate(v.into_int_value(), it.into_int_type(), "st")?.into());
        }
        Ok(v)
    }

    /// The slot type of `dt` (`i64`, `double` or `ptr`).
    pub(super) fn slot_ty(&self, dt: DataType) -> inkwell::types::BasicTypeEnum<'ctx> {
        let cx = self.sh.cx;
        if dt.is_handle() {
            cx.ptr_type(inkwell::AddressSpace::default()).as_basic_type_enum()
        } else if dt.is_float() {
            cx.f64_type().into()
        } else {
            cx.i64_type().into()
        }
    }
}
