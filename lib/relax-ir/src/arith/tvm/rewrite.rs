//! The rewrite rules (`arith/rewrite_simplify.cc`) that TOPI's bodies meet.

use super::{Simplifier, is_index};
use crate::entities::PrimExpr;
use crate::intrinsic::Intrinsic;
use crate::prim::{BinOp, PrimExprData};
use crate::prim_build::floor_mod;

impl Simplifier<'_> {
    // --------------------------------------------------------------- rewrites

    /// The rewrite simplifier pass between the two canonical passes.
    pub(super) fn rewrite_pass(&mut self, e: PrimExpr) -> PrimExpr {
        self.rewrite_node(e, false)
    }

    /// Rebuilds `e` from simplified operands (canonically simplified when `canonical`),
    /// then applies the rewrite rules.
    pub(super) fn rewrite_node(&mut self, e: PrimExpr, canonical: bool) -> PrimExpr {
        let data = self.pool.prim(e).clone();
        let sub = |s: &mut Self, x: PrimExpr| if canonical { s.visit(x) } else { s.rewrite_node(x, false) };
        match data {
            PrimExprData::Int(..)
            | PrimExprData::Float(..)
            | PrimExprData::Str(_)
            | PrimExprData::Var(_)
            | PrimExprData::Ramp { .. }
            | PrimExprData::Broadcast { .. }
            | PrimExprData::Let { .. } => e,
            PrimExprData::Load { dtype, buffer, indices } => {
                let indices = indices.iter().map(|&i| sub(self, i)).collect();
                self.pool.raw(PrimExprData::Load { dtype, buffer, indices })
            }
            PrimExprData::Cast(t, v) => {
                let v = sub(self, v);
                self.pool.cast(t, v)
            }
            PrimExprData::Not(a) => {
                let a = sub(self, a);
                self.rule_not(a)
            }
            PrimExprData::Select(c, t, f) => {
                let (c, t, f) = (sub(self, c), sub(self, t), sub(self, f));
                match self.pool.as_int(c) {
                    Some(v) => {
                        if v != 0 {
                            t
                        } else {
                            f
                        }
                    }
                    None if t == f => t,
                    None => self.pool.raw(PrimExprData::Select(c, t, f)),
                }
            }
            PrimExprData::Call { dtype, op, args } => {
                let args: Vec<PrimExpr> = args.iter().map(|&a| sub(self, a)).collect();
                if op.is(Intrinsic::IfThenElse) && args.len() == 3 {
                    if let Some(v) = self.pool.as_int(args[0]) {
                        return if v != 0 { args[1] } else { args[2] };
                    }
                    if args[1] == args[2] {
                        return args[1];
                    }
                }
                self.pool.raw(PrimExprData::Call { dtype, op, args })
            }
            PrimExprData::Bin(op, a, b) => {
                // Comparisons of the form `a >= b` become `b <= a` before their operands
                // are simplified, as TVM's rewriter builds the swapped node and visits it.
                match op {
                    BinOp::Ge => {
                        let n = self.bin(BinOp::Le, b, a);
                        return self.rewrite_node(n, canonical);
                    }
                    BinOp::Gt => {
                        let n = self.bin(BinOp::Lt, b, a);
                        return if canonical { self.visit(n) } else { self.rewrite_node(n, false) };
                    }
                    _ => {}
                }
                let (x, y) = (sub(self, a), sub(self, b));
                match op {
                    BinOp::Lt | BinOp::Le | BinOp::Eq | BinOp::Ne => self.rule_cmp(op, x, y),
                    BinOp::And => match (self.pool.as_int(x), self.pool.as_int(y)) {
                        (Some(0), _) | (_, Some(0)) => self.pool.bool_const(false),
                        (Some(_), _) => y,
                        (_, Some(_)) => x,
                        _ => self.bin(op, x, y),
                    },
                    BinOp::Or => match (self.pool.as_int(x), self.pool.as_int(y)) {
                        (Some(v), _) if v != 0 => self.pool.bool_const(true),
                        (_, Some(v)) if v != 0 => self.pool.bool_const(true),
                        (Some(_), _) => y,
                        (_, Some(_)) => x,
                        _ => self.bin(op, x, y),
                    },
                    BinOp::Min | BinOp::Max if x == y => x,
                    BinOp::FloorMod if !canonical => self.rule_floormod(x, y),
                    BinOp::Sub if !canonical => self.rule_sub(x, y),
                    BinOp::FloorDiv if !canonical => self.rule_floordiv(x, y),
                    _ => self.bin(op, x, y),
                }
            }
        }
    }

    /// `not a` of a simplified operand: negations are pushed into comparisons and
    /// through `and`/`or` (De Morgan), double negations cancel.
    pub(super) fn rule_not(&mut self, a: PrimExpr) -> PrimExpr {
        match *self.pool.prim(a) {
            PrimExprData::Bin(BinOp::Lt, x, y) => self.rule_cmp(BinOp::Le, y, x),
            PrimExprData::Bin(BinOp::Le, x, y) => self.rule_cmp(BinOp::Lt, y, x),
            PrimExprData::Bin(BinOp::Eq, x, y) => self.bin(BinOp::Ne, x, y),
            PrimExprData::Bin(BinOp::Ne, x, y) => self.bin(BinOp::Eq, x, y),
            PrimExprData::Bin(BinOp::And, x, y) => {
                let (nx, ny) = (self.rule_not(x), self.rule_not(y));
                self.bin(BinOp::Or, nx, ny)
            }
            PrimExprData::Bin(BinOp::Or, x, y) => {
                let (nx, ny) = (self.rule_not(x), self.rule_not(y));
                self.bin(BinOp::And, nx, ny)
            }
            PrimExprData::Not(x) => x,
            _ => self.pool.not(a),
        }
    }

    /// A comparison of simplified operands. `a <= b` is rewritten as `not (b < a)`, as
    /// TVM does, so both use the rules of `<`.
    pub(super) fn rule_cmp(&mut self, op: BinOp, x: PrimExpr, y: PrimExpr) -> PrimExpr {
        if !is_index(self.pool.dtype(x)) {
            return self.bin(op, x, y);
        }
        match op {
            BinOp::Lt => self.rule_lt(x, y),
            BinOp::Le => {
                if let (Some(a), Some(b)) = (self.pool.as_int(x), self.pool.as_int(y)) {
                    return self.pool.bool_const(a <= b);
                }
                let lt = self.rule_lt(y, x);
                match *self.pool.prim(lt) {
                    PrimExprData::Bin(BinOp::Lt, p, q) => self.bin(BinOp::Le, q, p),
                    PrimExprData::Bin(BinOp::Le, p, q) => self.bin(BinOp::Lt, q, p),
                    _ => self.pool.not(lt),
                }
            }
            BinOp::Ne => {
                // `x != 0` with `x >= 0` is `0 < x`.
                if self.pool.as_int(y) == Some(0) && self.can_prove_ge0(x) {
                    return self.rule_lt(y, x);
                }
                self.bin(op, x, y)
            }
            _ => self.bin(op, x, y),
        }
    }

    /// `x < y` for index types (`ApplyRewriteRules(LT)`): constant folding, proofs
    /// from bounds, constants moved to one side, constant offsets merged.
    pub(super) fn rule_lt(&mut self, x: PrimExpr, y: PrimExpr) -> PrimExpr {
        if let (Some(a), Some(b)) = (self.pool.as_int(x), self.pool.as_int(y)) {
            return self.pool.bool_const(a < b);
        }
        let d = self.bin(BinOp::Sub, x, y);
        let bd = self.bound(d);
        if bd.hi.is_some_and(|h| h < 0) {
            return self.pool.bool_const(true);
        }
        if bd.lo.is_some_and(|l| l >= 0) {
            return self.pool.bool_const(false);
        }
        let t = self.pool.dtype(x);
        let kx = self.pool.as_int(x);
        let ky = self.pool.as_int(y);
        let px = self.pool.prim(x).clone();
        let py = self.pool.prim(y).clone();
        let konst_of = |s: &Self, e: PrimExpr| s.pool.as_int(e);
        // c1 < p + c2  =>  c1 - c2 < p
        if let (Some(c1), PrimExprData::Bin(BinOp::Add, p, q)) = (kx, &py)
            && let Some(c2) = konst_of(self, *q)
        {
            let k = self.konst(t, c1 - c2);
            return self.rule_lt(k, *p);
        }
        // c1 - p < c2  =>  c1 - c2 < p
        if let (PrimExprData::Bin(BinOp::Sub, a, p), Some(c2)) = (&px, ky)
            && let Some(c1) = konst_of(self, *a)
        {
            let k = self.konst(t, c1 - c2);
            return self.rule_lt(k, *p);
        }
        // c1 < c2 - p  =>  p < c2 - c1
        if let (Some(c1), PrimExprData::Bin(BinOp::Sub, a, p)) = (kx, &py)
            && let Some(c2) = konst_of(self, *a)
        {
            let k = self.konst(t, c2 - c1);
            return self.rule_lt(*p, k);
        }
        // p + c1 < c2  =>  p < c2 - c1
        if let (PrimExprData::Bin(BinOp::Add, p, q), Some(c2)) = (&px, ky)
            && let Some(c1) = konst_of(self, *q)
        {
            let k = self.konst(t, c2 - c1);
            return self.rule_lt(*p, k);
        }
        // c1 < p - c2  =>  c1 + c2 < p
        if let (Some(c1), PrimExprData::Bin(BinOp::Sub, p, q)) = (kx, &py)
            && let Some(c2) = konst_of(self, *q)
        {
            let k = self.konst(t, c1 + c2);
            return self.rule_lt(k, *p);
        }
        // p - c2 < c1  =>  p < c1 + c2
        if let (PrimExprData::Bin(BinOp::Sub, p, q), Some(c1)) = (&px, ky)
            && let Some(c2) = konst_of(self, *q)
        {
            let k = self.konst(t, c1 + c2);
            return self.rule_lt(*p, k);
        }
        // x < c1 - q  =>  x + q < c1 ;  c1 - q < x  =>  c1 < x + q
        if let PrimExprData::Bin(BinOp::Sub, a, q) = py
            && let Some(c1) = konst_of(self, a)
        {
            let s = self.bin(BinOp::Add, x, q);
            let k = self.konst(t, c1);
            return self.rule_lt(s, k);
        }
        if let PrimExprData::Bin(BinOp::Sub, a, q) = px
            && let Some(c1) = konst_of(self, a)
        {
            let s = self.bin(BinOp::Add, y, q);
            let k = self.konst(t, c1);
            return self.rule_lt(k, s);
        }
        // Merge constant offsets of both sides.
        let (lhs, lo) = self.constant_offset(x);
        let (rhs, ro) = self.constant_offset(y);
        if lo != 0 || ro != 0 {
            let diff = ro - lo;
            if diff == 0 {
                return self.rule_lt(lhs, rhs);
            } else if diff == 1 {
                return self.rule_cmp(BinOp::Le, lhs, rhs);
            } else if diff < 0 && ro != 0 {
                let k = self.konst(t, -diff);
                let l = self.bin(BinOp::Add, lhs, k);
                return self.rule_lt(l, rhs);
            } else if diff > 0 && lo != 0 {
                let k = self.konst(t, diff);
                let r = self.bin(BinOp::Add, rhs, k);
                return self.rule_lt(lhs, r);
            }
        }
        self.bin(BinOp::Lt, x, y)
    }

    /// `ExtractConstantOffset`: `x + c` → `(x, c)`, `x - c` → `(x, -c)`, `c - x` →
    /// `(x, c)` (sic, as TVM), otherwise `(e, 0)`.
    pub(super) fn constant_offset(&self, e: PrimExpr) -> (PrimExpr, i64) {
        match *self.pool.prim(e) {
            PrimExprData::Bin(BinOp::Add, x, c) if self.pool.as_int(c).is_some() => {
                (x, self.pool.as_int(c).unwrap_or(0))
            }
            PrimExprData::Bin(BinOp::Sub, x, c) if self.pool.as_int(c).is_some() => {
                (x, -self.pool.as_int(c).unwrap_or(0))
            }
            PrimExprData::Bin(BinOp::Sub, c, x) if self.pool.as_int(c).is_some() => {
                (x, self.pool.as_int(c).unwrap_or(0))
            }
            _ => (e, 0),
        }
    }

    /// The rewrite rules of `x - y` with `min`/`max` (the rewrite pass only).
    pub(super) fn rule_sub(&mut self, x: PrimExpr, y: PrimExpr) -> PrimExpr {
        if is_index(self.pool.dtype(x)) {
            // min(y + a, z) - y => min(a, z - y) (and the other operand orders, and
            // max); `(m + c) - y` first as `(m - y) + c` for such an `m`.
            if let PrimExprData::Bin(BinOp::Add, m, c) = *self.pool.prim(x)
                && self.pool.as_int(c).is_some()
                && let Some(r) = self.minmax_minus(m, y)
            {
                return self.bin(BinOp::Add, r, c);
            }
            if let Some(r) = self.minmax_minus(x, y) {
                return r;
            }
            let zero = self.konst(self.pool.dtype(x), 0);
            let (px, py) = (self.pool.prim(x).clone(), self.pool.prim(y).clone());
            // min(a, b) - b => min(a - b, 0);  a - max(b, a) => min(a - b, 0)
            if let PrimExprData::Bin(BinOp::Min, a, b) = px
                && b == y
            {
                let d = self.bin(BinOp::Sub, a, b);
                return self.bin(BinOp::Min, d, zero);
            }
            if let PrimExprData::Bin(BinOp::Max, b, a) = py
                && a == x
            {
                let d = self.bin(BinOp::Sub, a, b);
                return self.bin(BinOp::Min, d, zero);
            }
            // a - max(a, b) => min(0, a - b);  min(b, a) - b => min(0, a - b)
            if let PrimExprData::Bin(BinOp::Max, a, b) = py
                && a == x
            {
                let d = self.bin(BinOp::Sub, a, b);
                return self.bin(BinOp::Min, zero, d);
            }
            if let PrimExprData::Bin(BinOp::Min, b, a) = px
                && b == y
            {
                let d = self.bin(BinOp::Sub, a, b);
                return self.bin(BinOp::Min, zero, d);
            }
            // max(a, b) - b => max(a - b, 0);  a - min(b, a) => max(a - b, 0)
            if let PrimExprData::Bin(BinOp::Max, a, b) = px
                && b == y
            {
                let d = self.bin(BinOp::Sub, a, b);
                return self.bin(BinOp::Max, d, zero);
            }
            if let PrimExprData::Bin(BinOp::Min, b, a) = py
                && a == x
            {
                let d = self.bin(BinOp::Sub, a, b);
                return self.bin(BinOp::Max, d, zero);
            }
            // a - min(a, b) => max(0, a - b);  max(b, a) - b => max(0, a - b)
            if let PrimExprData::Bin(BinOp::Min, a, b) = py
                && a == x
            {
                let d = self.bin(BinOp::Sub, a, b);
                return self.bin(BinOp::Max, zero, d);
            }
            if let PrimExprData::Bin(BinOp::Max, b, a) = px
                && b == y
            {
                let d = self.bin(BinOp::Sub, a, b);
                return self.bin(BinOp::Max, zero, d);
            }
        }
        self.bin(BinOp::Sub, x, y)
    }

    /// `floordiv(floordiv(x, c1), c2)` → `floordiv(x, c1 * c2)` for positive constants.
    fn rule_floordiv(&mut self, x: PrimExpr, y: PrimExpr) -> PrimExpr {
        if let Some(c2) = self.pool.as_int(y)
            && let PrimExprData::Bin(BinOp::FloorDiv, a, k) = *self.pool.prim(x)
            && let Some(c1) = self.pool.as_int(k)
            && c1 > 0
            && c2 > 0
            && let Some(c) = c1.checked_mul(c2)
        {
            let t = self.pool.dtype(k);
            let kc = self.konst(t, c);
            return self.bin(BinOp::FloorDiv, a, kc);
        }
        self.bin(BinOp::FloorDiv, x, y)
    }

    /// `min(y + a, z) - y` → `min(a, z - y)`, `min(z, y + a) - y` → `min(z - y, a)`
    /// (`a + y` alike, and `max`), or `None`.
    fn minmax_minus(&mut self, m: PrimExpr, y: PrimExpr) -> Option<PrimExpr> {
        let PrimExprData::Bin(op @ (BinOp::Min | BinOp::Max), p, q) = *self.pool.prim(m) else { return None };
        let rest = |s: &Self, e: PrimExpr| match *s.pool.prim(e) {
            PrimExprData::Bin(BinOp::Add, u, v) if u == y => Some(v),
            PrimExprData::Bin(BinOp::Add, u, v) if v == y => Some(u),
            _ => None,
        };
        if let Some(a) = rest(self, p) {
            let d = self.bin(BinOp::Sub, q, y);
            return Some(self.bin(op, a, d));
        }
        if let Some(a) = rest(self, q) {
            let d = self.bin(BinOp::Sub, p, y);
            return Some(self.bin(op, d, a));
        }
        None
    }

    /// The rewrite rules of `floormod` by a positive constant.
    pub(super) fn rule_floormod(&mut self, x: PrimExpr, y: PrimExpr) -> PrimExpr {
        let (Some(c2), true) = (self.pool.as_int(y), is_index(self.pool.dtype(x))) else {
            return self.bin(BinOp::FloorMod, x, y);
        };
        let t = self.pool.dtype(x);
        if c2 > 0
            && let PrimExprData::Bin(BinOp::Add, a, b) = *self.pool.prim(x)
        {
            // floormod(p * c1 + q, c2)
            if let PrimExprData::Bin(BinOp::Mul, p, k) = *self.pool.prim(a)
                && let Some(c1) = self.pool.as_int(k)
            {
                if c1 > 0 && c2 % c1 == 0 && self.provably_lt(b, c1) && self.can_prove_ge0(b) {
                    let m = self.konst(t, c2 / c1);
                    let pm = self.bin(BinOp::FloorMod, p, m);
                    let pm = self.bin(BinOp::Mul, pm, k);
                    return self.bin(BinOp::Add, pm, b);
                }
                let r = self.konst(t, floor_mod(c1, c2));
                let pr = self.bin(BinOp::Mul, p, r);
                let s = self.bin(BinOp::Add, pr, b);
                return self.bin(BinOp::FloorMod, s, y);
            }
            // floormod(p + c1, c2) with c1 out of [0, c2)
            if let Some(c1) = self.pool.as_int(b)
                && (c1 >= c2 || c1 < 0)
            {
                let r = self.konst(t, floor_mod(c1, c2));
                let s = self.bin(BinOp::Add, a, r);
                return self.bin(BinOp::FloorMod, s, y);
            }
            // floormod(p + q * c1, c2)
            if let PrimExprData::Bin(BinOp::Mul, q, k) = *self.pool.prim(b)
                && let Some(c1) = self.pool.as_int(k)
            {
                let r = self.konst(t, floor_mod(c1, c2));
                let qr = self.bin(BinOp::Mul, q, r);
                let s = self.bin(BinOp::Add, a, qr);
                return self.bin(BinOp::FloorMod, s, y);
            }
        }
        if c2 != 0
            && let PrimExprData::Bin(BinOp::Mul, p, k) = *self.pool.prim(x)
            && let Some(c1) = self.pool.as_int(k)
        {
            let r = self.konst(t, floor_mod(c1, c2));
            let pr = self.bin(BinOp::Mul, p, r);
            return self.bin(BinOp::FloorMod, pr, y);
        }
        self.bin(BinOp::FloorMod, x, y)
    }
}
