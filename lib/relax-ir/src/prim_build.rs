//! TVM's operator constructors for TIR expressions: dtype matching and eager folding.
//!
//! `a + b` in TVMScript text means "call TVM's `operator+`", which first matches the two
//! dtypes (`text-format.md` §9.2) and then folds constants and identities (§9.3). The
//! printer uses [`Pool::try_const_fold`] to decide whether a stored node can be written
//! with infix sugar: only when rebuilding it from its operands gives the same node.

use crate::attrs::FloatBits;
use crate::dtype::DataType;
use crate::entities::PrimExpr;
use crate::pool::Pool;
use crate::prim::{BinOp, PrimExprData, round_to_dtype, wrap_int};

/// Why two operands could not be combined.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypeMismatch {
    /// Left operand type.
    pub lhs: DataType,
    /// Right operand type.
    pub rhs: DataType,
}

/// The outcome of constant folding: an existing operand, or a new constant.
#[derive(Clone, Debug, PartialEq)]
pub enum Folded {
    /// The result is one of the operands.
    Operand(PrimExpr),
    /// The result is a new constant.
    Const(PrimExprData),
}

impl Pool {
    /// An integer constant of `dtype` (wrapped to its width).
    pub fn int(&mut self, dtype: DataType, v: i64) -> PrimExpr {
        self.raw(PrimExprData::Int(dtype, wrap_int(dtype, v)))
    }
    /// An `int64` constant.
    pub fn i64(&mut self, v: i64) -> PrimExpr {
        self.int(DataType::INT64, v)
    }
    /// A float constant of `dtype`.
    pub fn float(&mut self, dtype: DataType, v: f64) -> PrimExpr {
        self.raw(PrimExprData::Float(dtype, FloatBits::new(v)))
    }
    /// A `bool` constant.
    pub fn bool_const(&mut self, v: bool) -> PrimExpr {
        self.raw(PrimExprData::Int(DataType::BOOL, i64::from(v)))
    }
    /// A variable reference.
    pub fn var_ref(&mut self, v: crate::entities::SymVar) -> PrimExpr {
        self.raw(PrimExprData::Var(v))
    }

    /// TVM's `cast(t, e)`: no-op for the same type, folds constants, otherwise `Cast`.
    pub fn cast(&mut self, t: DataType, e: PrimExpr) -> PrimExpr {
        if self.dtype(e) == t {
            return e;
        }
        if t.lanes <= 1 {
            match *self.prim(e) {
                PrimExprData::Int(_, v) => return self.make_const_int(t, v),
                PrimExprData::Float(_, f) => return self.make_const_float(t, f.get()),
                _ => {}
            }
        }
        self.raw(PrimExprData::Cast(t, e))
    }

    /// `make_const(t, v)` for an integer value.
    pub fn make_const_int(&mut self, t: DataType, v: i64) -> PrimExpr {
        if t.is_float() { self.float(t, v as f64) } else { self.int(t, v) }
    }

    /// `make_const(t, v)` for a float value.
    pub fn make_const_float(&mut self, t: DataType, v: f64) -> PrimExpr {
        if t.is_float() {
            self.float(t, v)
        } else if t.is_bool() {
            self.int(t, i64::from(v != 0.0))
        } else {
            self.int(t, v as i64)
        }
    }

    /// TVM's `BinaryOpMatchTypes`: casts the narrower or integer side.
    pub fn match_types(&mut self, a: PrimExpr, b: PrimExpr) -> Result<(PrimExpr, PrimExpr), TypeMismatch> {
        let (ta, tb) = (self.dtype(a), self.dtype(b));
        if ta == tb {
            return Ok((a, b));
        }
        let mismatch = TypeMismatch { lhs: ta, rhs: tb };
        if ta.lanes != tb.lanes {
            // Broadcast a scalar side to the vector width.
            if ta.lanes <= 1 && tb.lanes > 1 {
                let a2 = self.raw(PrimExprData::Broadcast { value: a, lanes: tb.lanes });
                return self.match_types(a2, b);
            }
            if tb.lanes <= 1 && ta.lanes > 1 {
                let b2 = self.raw(PrimExprData::Broadcast { value: b, lanes: ta.lanes });
                return self.match_types(a, b2);
            }
            return Err(mismatch);
        }
        if !ta.is_float() && tb.is_float() {
            Ok((self.cast(tb, a), b))
        } else if ta.is_float() && !tb.is_float() {
            Ok((a, self.cast(ta, b)))
        } else if (ta.is_signed_int() && tb.is_signed_int()) || (ta.is_uint() && tb.is_uint()) {
            if ta.bits < tb.bits { Ok((self.cast(tb, a), b)) } else { Ok((a, self.cast(ta, b))) }
        } else if ta.is_int() && tb.is_int() {
            // Mixed signedness.
            // Equal widths: the unsigned side wins.
            if ta.bits < tb.bits || (ta.bits == tb.bits && !ta.is_uint()) {
                Ok((self.cast(tb, a), b))
            } else {
                Ok((a, self.cast(ta, b)))
            }
        } else if ta.is_float() && tb.is_float() {
            if ta.bits < tb.bits || (ta.bits == tb.bits && ta.code != crate::dtype::TypeCode::Float) {
                Ok((self.cast(tb, a), b))
            } else {
                Ok((a, self.cast(ta, b)))
            }
        } else if ta.is_bool() && tb.is_int() {
            Ok((self.cast(tb, a), b))
        } else if ta.is_int() && tb.is_bool() {
            Ok((a, self.cast(ta, b)))
        } else {
            Err(mismatch)
        }
    }

    /// TVM's operator constructor for `op`: match types, fold, else build the node.
    pub fn binary(&mut self, op: BinOp, a: PrimExpr, b: PrimExpr) -> Result<PrimExpr, TypeMismatch> {
        let (a, b) =
            if op.is_logical() { (self.bool_operand(a), self.bool_operand(b)) } else { self.match_types(a, b)? };
        Ok(match self.try_const_fold(op, a, b) {
            Some(Folded::Operand(e)) => e,
            Some(Folded::Const(d)) => self.raw(d),
            None => self.raw(PrimExprData::Bin(op, a, b)),
        })
    }

    fn bool_operand(&mut self, e: PrimExpr) -> PrimExpr {
        let t = self.dtype(e);
        if t.is_bool() {
            return e;
        }
        let bool_t = DataType::BOOL.with_lanes(t.lanes.max(1));
        self.cast(bool_t, e)
    }

    /// TVM's `logical_not`: folds constants.
    pub fn not(&mut self, a: PrimExpr) -> PrimExpr {
        let a = self.bool_operand(a);
        if let PrimExprData::Int(t, v) = *self.prim(a) {
            return self.int(t, i64::from(v == 0));
        }
        self.raw(PrimExprData::Not(a))
    }

    /// Unary minus as TVM builds it: constants fold, otherwise `0 - a`.
    pub fn neg(&mut self, a: PrimExpr) -> PrimExpr {
        let t = self.dtype(a);
        match *self.prim(a) {
            PrimExprData::Int(t, v) => self.int(t, v.wrapping_neg()),
            PrimExprData::Float(t, f) => self.float(t, -f.get()),
            _ => {
                let zero = self.make_const_int(t, 0);
                self.raw(PrimExprData::Bin(BinOp::Sub, zero, a))
            }
        }
    }

    /// TVM's `TryConstFold` for operands of matching types. `None` means "no folding":
    /// the constructor builds the node as is.
    pub fn try_const_fold(&self, op: BinOp, a: PrimExpr, b: PrimExpr) -> Option<Folded> {
        let da = self.prim(a);
        let db = self.prim(b);
        let t = self.dtype(a);
        let ia = if let PrimExprData::Int(_, v) = da { Some(*v) } else { None };
        let ib = if let PrimExprData::Int(_, v) = db { Some(*v) } else { None };
        let fa = if let PrimExprData::Float(_, f) = da { Some(f.get()) } else { None };
        let fb = if let PrimExprData::Float(_, f) = db { Some(f.get()) } else { None };
        let int = |v: i64| Some(Folded::Const(PrimExprData::Int(t, wrap_int(t, v))));
        let boolean =
            |v: bool| Some(Folded::Const(PrimExprData::Int(DataType::BOOL.with_lanes(t.lanes.max(1)), i64::from(v))));
        let float_ok = matches!(t.bits, 32 | 64) && t.code == crate::dtype::TypeCode::Float;
        let flt = |v: f64| Some(Folded::Const(PrimExprData::Float(t, FloatBits::new(round_to_dtype(t, v)))));
        let f32op = |x: f64, y: f64, g: fn(f64, f64) -> f64| {
            if t.bits == 32 { f64::from(g(f64::from(x as f32), f64::from(y as f32)) as f32) } else { g(x, y) }
        };
        let keep_a = Some(Folded::Operand(a));
        let keep_b = Some(Folded::Operand(b));
        match op {
            BinOp::Add => {
                if let (Some(x), Some(y)) = (ia, ib) {
                    return int(x.wrapping_add(y));
                }
                if ia == Some(0) {
                    return keep_b;
                }
                if ib == Some(0) {
                    return keep_a;
                }
                if let (Some(x), Some(y), true) = (fa, fb, float_ok) {
                    return flt(f32op(x, y, |p, q| p + q));
                }
                if fa == Some(0.0) {
                    return keep_b;
                }
                if fb == Some(0.0) {
                    return keep_a;
                }
                None
            }
            BinOp::Sub => {
                if let (Some(x), Some(y)) = (ia, ib) {
                    return int(x.wrapping_sub(y));
                }
                if ib == Some(0) {
                    return keep_a;
                }
                if let (Some(x), Some(y), true) = (fa, fb, float_ok) {
                    return flt(f32op(x, y, |p, q| p - q));
                }
                if fb == Some(0.0) {
                    return keep_a;
                }
                None
            }
            BinOp::Mul => {
                if let (Some(x), Some(y)) = (ia, ib) {
                    return int(x.wrapping_mul(y));
                }
                if ia == Some(1) {
                    return keep_b;
                }
                if ia == Some(0) {
                    return keep_a;
                }
                if ib == Some(1) {
                    return keep_a;
                }
                if ib == Some(0) {
                    return keep_b;
                }
                if let (Some(x), Some(y), true) = (fa, fb, float_ok) {
                    return flt(f32op(x, y, |p, q| p * q));
                }
                if fa == Some(1.0) {
                    return keep_b;
                }
                if fa == Some(0.0) {
                    return keep_a;
                }
                if fb == Some(1.0) {
                    return keep_a;
                }
                if fb == Some(0.0) {
                    return keep_b;
                }
                None
            }
            BinOp::Div => {
                if let (Some(x), Some(y)) = (ia, ib) {
                    if y != 0 {
                        return int(x.wrapping_div(y));
                    }
                    return None;
                }
                if ia == Some(0) {
                    return keep_a;
                }
                if ib == Some(1) {
                    return keep_a;
                }
                if let (Some(x), Some(y), true) = (fa, fb, float_ok) {
                    if y != 0.0 {
                        return flt(f32op(x, y, |p, q| p / q));
                    }
                    return None;
                }
                if fa == Some(0.0) {
                    return keep_a;
                }
                if fb == Some(1.0) {
                    return keep_a;
                }
                None
            }
            BinOp::Mod => {
                if let (Some(x), Some(y)) = (ia, ib) {
                    if y != 0 {
                        return int(x.wrapping_rem(y));
                    }
                    return None;
                }
                if ia == Some(0) {
                    return keep_a;
                }
                if ib == Some(1) {
                    return int(0);
                }
                None
            }
            BinOp::FloorDiv => {
                if let (Some(x), Some(y)) = (ia, ib) {
                    if y != 0 {
                        return int(floor_div(x, y));
                    }
                    return None;
                }
                if ia == Some(0) {
                    return keep_a;
                }
                if ib == Some(1) {
                    return keep_a;
                }
                if let (Some(x), Some(y), true) = (fa, fb, float_ok) {
                    if y != 0.0 {
                        return flt(f32op(x, y, |p, q| (p / q).floor()));
                    }
                    return None;
                }
                if fa == Some(0.0) {
                    return keep_a;
                }
                if fb == Some(1.0) {
                    return keep_a;
                }
                None
            }
            BinOp::FloorMod => {
                if let (Some(x), Some(y)) = (ia, ib) {
                    if y != 0 {
                        return int(floor_mod(x, y));
                    }
                    return None;
                }
                if ia == Some(0) {
                    return keep_a;
                }
                if ib == Some(1) {
                    return int(0);
                }
                None
            }
            BinOp::Min | BinOp::Max => {
                let pick_min = op == BinOp::Min;
                if let (Some(x), Some(y)) = (ia, ib) {
                    return int(if pick_min { x.min(y) } else { x.max(y) });
                }
                if let (Some(x), Some(y)) = (fa, fb) {
                    return flt(if pick_min { x.min(y) } else { x.max(y) });
                }
                None
            }
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
                let cmp = |o: std::cmp::Ordering| match op {
                    BinOp::Eq => o.is_eq(),
                    BinOp::Ne => o.is_ne(),
                    BinOp::Lt => o.is_lt(),
                    BinOp::Le => o.is_le(),
                    BinOp::Gt => o.is_gt(),
                    _ => o.is_ge(),
                };
                if let (Some(x), Some(y)) = (ia, ib) {
                    return boolean(cmp(x.cmp(&y)));
                }
                if let (Some(x), Some(y)) = (fa, fb) {
                    return x.partial_cmp(&y).map(cmp).and_then(boolean);
                }
                None
            }
            BinOp::And => {
                if let Some(x) = ia {
                    return if x != 0 { keep_b } else { keep_a };
                }
                if let Some(y) = ib {
                    return if y != 0 { keep_a } else { keep_b };
                }
                None
            }
            BinOp::Or => {
                if let Some(x) = ia {
                    return if x != 0 { keep_a } else { keep_b };
                }
                if let Some(y) = ib {
                    return if y != 0 { keep_b } else { keep_a };
                }
                None
            }
        }
    }

    /// True when the stored node `Bin(op, a, b)` is what TVM's operator constructor builds
    /// from `a` and `b`, so the printer may write it with infix sugar.
    pub fn is_canonical_binary(&self, op: BinOp, a: PrimExpr, b: PrimExpr) -> bool {
        let (ta, tb) = (self.dtype(a), self.dtype(b));
        if op.is_logical() {
            return ta.is_bool() && tb.is_bool() && self.try_const_fold(op, a, b).is_none();
        }
        ta == tb && self.try_const_fold(op, a, b).is_none()
    }
}

/// Integer division rounding toward negative infinity.
pub fn floor_div(a: i64, b: i64) -> i64 {
    let q = a.wrapping_div(b);
    if (a.wrapping_rem(b) != 0) && ((a < 0) != (b < 0)) { q - 1 } else { q }
}

/// The remainder of [`floor_div`]: the sign follows the divisor.
pub fn floor_mod(a: i64, b: i64) -> i64 {
    let r = a.wrapping_rem(b);
    if r != 0 && ((r < 0) != (b < 0)) { r + b } else { r }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds_like_tvm() {
        let mut p = Pool::new();
        let n = p.new_var("n", DataType::INT64);
        let n = p.var_ref(n);
        let one32 = p.int(DataType::INT32, 1);
        // n + 1 with n: int64 gives n + T.int64(1).
        let s = p.binary(BinOp::Add, n, one32).unwrap();
        match p.prim(s) {
            PrimExprData::Bin(BinOp::Add, a, b) => {
                assert_eq!(*a, n);
                assert_eq!(p.prim(*b), &PrimExprData::Int(DataType::INT64, 1));
            }
            other => panic!("{other:?}"),
        }
        // x + 0 is x, x * 0 is 0, x * 1 is x.
        let zero = p.i64(0);
        assert_eq!(p.binary(BinOp::Add, n, zero).unwrap(), n);
        assert_eq!(p.binary(BinOp::Mul, n, zero).unwrap(), zero);
        let one = p.i64(1);
        assert_eq!(p.binary(BinOp::Mul, one, n).unwrap(), n);
        // Constants fold.
        let a = p.i64(7);
        let b = p.i64(-2);
        let q = p.binary(BinOp::FloorDiv, a, b).unwrap();
        assert_eq!(p.as_int(q), Some(-4));
        let r = p.binary(BinOp::FloorMod, a, b).unwrap();
        assert_eq!(p.as_int(r), Some(-1));
        // Stored Add(x, 0) is not canonical.
        assert!(!p.is_canonical_binary(BinOp::Add, n, zero));
        assert!(p.is_canonical_binary(BinOp::Add, n, a));
    }

    #[test]
    fn float32_folding_rounds() {
        let mut p = Pool::new();
        let a = p.float(DataType::FLOAT32, 0.1);
        let b = p.float(DataType::FLOAT32, 0.2);
        let s = p.binary(BinOp::Add, a, b).unwrap();
        match p.prim(s) {
            PrimExprData::Float(_, f) => assert_eq!(f.get(), f64::from(0.1f32 + 0.2f32)),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn int_and_float_promote() {
        let mut p = Pool::new();
        let i = p.new_var("i", DataType::INT32);
        let i = p.var_ref(i);
        let f = p.float(DataType::FLOAT32, 1.5);
        let s = p.binary(BinOp::Mul, i, f).unwrap();
        assert_eq!(p.dtype(s), DataType::FLOAT32);
        let h = p.new_var("h", DataType::FLOAT16);
        let h = p.var_ref(h);
        let s2 = p.binary(BinOp::Add, h, f).unwrap();
        assert_eq!(p.dtype(s2), DataType::FLOAT32);
    }
}
