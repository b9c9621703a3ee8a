//! The canonical simplifier (`arith/canonical_simplify.cc`): sums of split terms.

use super::split::{C, DivMode, INF, Split, SumE, add_split, add_sum, divide_by, mod_op};
use super::{Simplifier, gcd, is_index};
use crate::entities::PrimExpr;
use crate::prim::{BinOp, PrimExprData};
use crate::prim_build::{floor_div, floor_mod};

impl Simplifier<'_> {
    /// Canonical simplification, normalized.
    pub(super) fn visit(&mut self, e: PrimExpr) -> PrimExpr {
        let c = self.canon(e);
        self.normalize(&c)
    }

    /// Canonical simplification without normalization (`CanonicalMutate`).
    pub(super) fn canon(&mut self, e: PrimExpr) -> C {
        let data = self.pool.prim(e).clone();
        let dtype = self.pool.dtype(e);
        match data {
            PrimExprData::Bin(op, a, b) if is_index(dtype) && !op.is_compare() && !op.is_logical() => match op {
                BinOp::Add | BinOp::Sub => self.canon_add(op, a, b),
                BinOp::Mul => self.canon_mul(e, a, b),
                BinOp::FloorDiv | BinOp::Div => self.canon_div(e, op, a, b),
                BinOp::FloorMod | BinOp::Mod => self.canon_mod(e, op, a, b),
                _ => C::E(self.rewrite_node(e, true)),
            },
            PrimExprData::Bin(BinOp::Lt, a, b) => C::E(self.canon_lt(e, a, b)),
            PrimExprData::Cast(t, v) if is_index(t) => {
                let value = self.canon(v);
                match value {
                    C::Sum(mut s) if t.bits >= s.dtype.bits => {
                        for a in &mut s.args {
                            a.index = self.pool.cast(t, a.index);
                            a.dtype = t;
                        }
                        s.dtype = t;
                        C::Sum(s)
                    }
                    C::Split(mut s) if t.bits >= s.dtype.bits => {
                        s.index = self.pool.cast(t, s.index);
                        s.dtype = t;
                        C::Split(s)
                    }
                    other => {
                        let v2 = self.normalize(&other);
                        C::E(self.pool.cast(t, v2))
                    }
                }
            }
            _ => C::E(self.rewrite_node(e, true)),
        }
    }

    /// `TryConstFold` on canonical operands.
    pub(super) fn try_fold(&mut self, op: BinOp, a: &C, b: &C) -> Option<C> {
        let ia = if let C::E(x) = a { self.pool.as_int(*x) } else { None };
        let ib = if let C::E(x) = b { self.pool.as_int(*x) } else { None };
        if let (C::E(x), C::E(y), Some(_), Some(_)) = (a, b, ia, ib) {
            return Some(C::E(self.bin(op, *x, *y)));
        }
        match op {
            BinOp::Add => {
                if ia == Some(0) {
                    return Some(b.clone());
                }
                if ib == Some(0) {
                    return Some(a.clone());
                }
            }
            BinOp::Sub if ib == Some(0) => return Some(a.clone()),
            BinOp::Mul => {
                if ia == Some(1) || ib == Some(0) {
                    return Some(b.clone());
                }
                if ia == Some(0) || ib == Some(1) {
                    return Some(a.clone());
                }
            }
            BinOp::FloorDiv | BinOp::Div if ia == Some(0) || ib == Some(1) => return Some(a.clone()),
            BinOp::FloorMod | BinOp::Mod => {
                if ia == Some(0) {
                    return Some(a.clone());
                }
                if ib == Some(1) {
                    let t = match a {
                        C::E(x) => self.pool.dtype(*x),
                        C::Split(s) => s.dtype,
                        C::Sum(s) => s.dtype,
                    };
                    return Some(C::E(self.konst(t, 0)));
                }
            }
            _ => {}
        }
        None
    }

    pub(super) fn canon_add(&mut self, op: BinOp, a: PrimExpr, b: PrimExpr) -> C {
        let ca = self.canon(a);
        let cb = self.canon(b);
        if let Some(r) = self.try_fold(op, &ca, &cb) {
            return r;
        }
        let sign: i64 = if op == BinOp::Add { 1 } else { -1 };
        let mut ret = self.sum_of(ca);
        let kb = if let C::E(x) = &cb { self.pool.as_int(*x) } else { None };
        match cb {
            C::E(_) if kb.is_some() => ret.base = ret.base.wrapping_add(sign.wrapping_mul(kb.unwrap_or(0))),
            C::Sum(s) => add_sum(&mut ret, &s, sign),
            other => {
                let s = self.split_of(other);
                add_split(&mut ret, s, sign);
            }
        }
        C::Sum(ret)
    }

    pub(super) fn canon_mul(&mut self, e: PrimExpr, a: PrimExpr, b: PrimExpr) -> C {
        let mut ca = self.canon(a);
        let mut cb = self.canon(b);
        if let Some(r) = self.try_fold(BinOp::Mul, &ca, &cb) {
            return r;
        }
        if matches!(&ca, C::E(x) if self.pool.as_int(*x).is_some()) {
            std::mem::swap(&mut ca, &mut cb);
        }
        if let C::E(x) = &cb
            && let Some(k) = self.pool.as_int(*x)
        {
            return match ca {
                C::Sum(mut s) => {
                    s.base = s.base.wrapping_mul(k);
                    for a in &mut s.args {
                        a.scale = a.scale.wrapping_mul(k);
                    }
                    C::Sum(s)
                }
                other => {
                    let mut s = self.split_of(other);
                    s.scale *= k;
                    C::Split(s)
                }
            };
        }
        let na = self.normalize(&ca);
        let nb = self.normalize(&cb);
        let ret = self.mul_and_normalize(na, nb);
        if let PrimExprData::Bin(BinOp::Mul, x, y) = *self.pool.prim(ret)
            && (x, y) == (a, b)
        {
            return C::E(e);
        }
        C::E(ret)
    }

    /// `MulAndNormalize`: flattens both products, multiplies the symbolic factors in
    /// order and the constants last.
    pub(super) fn mul_and_normalize(&mut self, a: PrimExpr, b: PrimExpr) -> PrimExpr {
        let dtype = self.pool.dtype(a);
        let mut factors = Vec::new();
        self.unpack_mul(a, &mut factors);
        self.unpack_mul(b, &mut factors);
        let mut cscale = 1i64;
        let mut res = self.konst(dtype, 1);
        for f in factors {
            match self.pool.as_int(f) {
                Some(v) => cscale = cscale.wrapping_mul(v),
                None => res = self.bin(BinOp::Mul, res, f),
            }
        }
        if cscale != 1 {
            let k = self.konst(dtype, cscale);
            res = self.bin(BinOp::Mul, res, k);
        }
        res
    }

    pub(super) fn unpack_mul(&self, e: PrimExpr, out: &mut Vec<PrimExpr>) {
        match *self.pool.prim(e) {
            PrimExprData::Bin(BinOp::Mul, a, b) => {
                self.unpack_mul(a, out);
                self.unpack_mul(b, out);
            }
            _ => out.push(e),
        }
    }

    pub(super) fn separate(&self, s: &SumE, coeff: i64) -> (SumE, SumE) {
        let mut div = SumE { args: Vec::new(), base: 0, dtype: s.dtype };
        let mut rest = SumE { args: Vec::new(), base: 0, dtype: s.dtype };
        if s.base % coeff == 0 {
            div.base = s.base;
        } else {
            rest.base = s.base;
        }
        for a in &s.args {
            if a.scale % coeff == 0 {
                div.args.push(a.clone());
            } else {
                rest.args.push(a.clone());
            }
        }
        (div, rest)
    }

    pub(super) fn split_div_const(&mut self, lhs: Split, cval: i64, mode: DivMode) -> Split {
        let mut lhs = self.convert_div_mode(lhs, mode);
        if lhs.scale % cval == 0 {
            lhs.scale /= cval;
            return lhs;
        }
        if cval % lhs.scale == 0 {
            let scaled = cval / lhs.scale;
            if lhs.upper == INF || lhs.upper % (lhs.lower * scaled) == 0 {
                lhs.scale = 1;
                lhs.lower *= scaled;
                return lhs;
            } else if lhs.upper <= lhs.lower * scaled {
                let z = self.konst(lhs.dtype, 0);
                return self.split_of(C::E(z));
            } else {
                let u = self.konst(lhs.dtype, lhs.upper);
                lhs.index = self.bin(mod_op(mode), lhs.index, u);
                lhs.upper = INF;
                lhs.scale = 1;
                lhs.lower *= scaled;
                return lhs;
            }
        }
        let e = self.split_normalize(&lhs, 1);
        let mut s = self.split_of(C::E(e));
        s.lower *= cval;
        s.mode = mode;
        s
    }

    pub(super) fn split_mod_const(&mut self, lhs: Split, cval: i64, mode: DivMode) -> Split {
        let mut lhs = self.convert_div_mode(lhs, mode);
        if lhs.scale % cval == 0 {
            lhs.scale = 0;
            return lhs;
        }
        if cval.wrapping_rem(lhs.scale) == 0 {
            let scaled = cval.wrapping_div(lhs.scale);
            let new_upper = lhs.lower.wrapping_mul(scaled);
            if lhs.upper == INF || (new_upper != 0 && lhs.upper.wrapping_rem(new_upper) == 0) {
                if new_upper < lhs.upper && lhs.upper != INF {
                    let u = self.konst(lhs.dtype, new_upper);
                    let m = self.bin(mod_op(mode), lhs.index, u);
                    let v = self.visit(m);
                    let mut updated = self.split_of(C::E(v));
                    if lhs.lower != 1 {
                        let mut ret = self.split_div_const(updated, lhs.lower, mode);
                        ret.scale *= lhs.scale;
                        return ret;
                    }
                    updated.scale *= lhs.scale;
                    return updated;
                }
                lhs.upper = new_upper;
                return lhs;
            } else if new_upper % lhs.upper == 0 {
                return lhs;
            }
        }
        let e = self.split_normalize(&lhs, 1);
        let mut s = self.split_of(C::E(e));
        s.mode = mode;
        s.upper = cval;
        s
    }

    pub(super) fn canon_div(&mut self, e: PrimExpr, op: BinOp, a: PrimExpr, b: PrimExpr) -> C {
        let ca = self.canon(a);
        let cb = self.canon(b);
        if let Some(r) = self.try_fold(op, &ca, &cb) {
            return r;
        }
        let floor = op == BinOp::FloorDiv;
        let mode = if floor { DivMode::Floor } else { DivMode::Trunc };
        if let C::E(x) = &cb
            && let Some(cval) = self.pool.as_int(*x)
            && cval > 0
        {
            if cval == 1 {
                return ca;
            }
            if let C::Sum(psum) = &ca {
                let (mut lhs, extra) = self.separate(psum, cval);
                if extra.args.is_empty() && extra.base == 0 {
                    divide_by(&mut lhs, cval);
                    return C::Sum(lhs);
                }
                if floor {
                    divide_by(&mut lhs, cval);
                    let temp = self.sum_normalize(&extra);
                    if let Some(v) = self.pool.as_int(temp) {
                        lhs.base += floor_div(v, cval);
                    } else if !(self.provably_lt(temp, cval) && self.can_prove_ge0(temp)) {
                        let s = self.split_of(C::E(temp));
                        let d = self.split_div_const(s, cval, DivMode::Floor);
                        add_split(&mut lhs, d, 1);
                    }
                    return C::Sum(lhs);
                }
                let ln = self.sum_normalize(&lhs);
                let en = self.sum_normalize(&extra);
                if self.can_prove_ge0(ln) && self.can_prove_ge0(en) {
                    divide_by(&mut lhs, cval);
                    if let Some(v) = self.pool.as_int(en) {
                        lhs.base += v / cval;
                    } else if !self.provably_lt(en, cval) {
                        let s = self.split_of(C::E(en));
                        let d = self.split_div_const(s, cval, DivMode::Trunc);
                        add_split(&mut lhs, d, 1);
                    }
                    return C::Sum(lhs);
                }
            } else {
                let n = self.normalize(&ca);
                let bd = self.bound(n);
                if bd.lo.is_some_and(|l| l >= 0) && bd.hi.is_some_and(|h| h < cval) {
                    return C::E(self.konst(self.pool.dtype(n), 0));
                }
            }
            let s = self.split_of(ca);
            return C::Split(self.split_div_const(s, cval, mode));
        }
        let na = self.normalize(&ca);
        let nb = self.normalize(&cb);
        if let Some((x, y)) = self.prod_div_simplify(na, nb) {
            return C::E(self.bin(op, x, y));
        }
        if (na, nb) == (a, b) { C::E(e) } else { C::E(self.pool.raw(PrimExprData::Bin(op, na, nb))) }
    }

    pub(super) fn canon_mod(&mut self, e: PrimExpr, op: BinOp, a: PrimExpr, b: PrimExpr) -> C {
        let ca = self.canon(a);
        let cb = self.canon(b);
        if let Some(r) = self.try_fold(op, &ca, &cb) {
            return r;
        }
        let floor = op == BinOp::FloorMod;
        let mode = if floor { DivMode::Floor } else { DivMode::Trunc };
        if let C::E(x) = &cb
            && let Some(cval) = self.pool.as_int(*x)
            && cval > 0
        {
            if let C::Sum(psum) = ca.clone() {
                let (lhs, extra) = self.separate(&psum, cval);
                if floor {
                    let temp = self.sum_normalize(&extra);
                    if self.pool.as_int(temp).is_some() {
                        let k = self.konst(extra.dtype, cval);
                        return C::E(self.bin(BinOp::FloorMod, temp, k));
                    }
                    if self.provably_lt(temp, cval) && self.can_prove_ge0(temp) {
                        return C::E(temp);
                    }
                    let mut sum = extra;
                    sum.base = floor_mod(sum.base, cval);
                    let s = self.split_of(C::Sum(sum));
                    return C::Split(self.split_mod_const(s, cval, DivMode::Floor));
                }
                if extra.args.is_empty() && extra.base == 0 {
                    return C::E(self.konst(psum.dtype, 0));
                }
                let mut cur = psum.clone();
                let ln = self.sum_normalize(&lhs);
                let en = self.sum_normalize(&extra);
                if self.can_prove_ge0(ln) && self.can_prove_ge0(en) {
                    if self.pool.as_int(en).is_some() {
                        let k = self.konst(extra.dtype, cval);
                        return C::E(self.bin(BinOp::Mod, en, k));
                    }
                    if self.provably_lt(en, cval) {
                        return C::E(en);
                    }
                    cur = extra;
                }
                let n = self.sum_normalize(&cur);
                let bd = self.bound(n);
                let new_base = cur.base % cval;
                if bd.lo.is_some_and(|l| l >= 0 && l - cur.base + new_base >= 0) {
                    cur.base = new_base;
                }
                let s = self.split_of(C::Sum(cur));
                return C::Split(self.split_mod_const(s, cval, DivMode::Trunc));
            } else {
                let n = self.normalize(&ca);
                let bd = self.bound(n);
                if bd.lo.is_some_and(|l| l >= 0) && bd.hi.is_some_and(|h| h < cval) {
                    return ca;
                }
            }
            let s = self.split_of(ca);
            return C::Split(self.split_mod_const(s, cval, mode));
        }
        let na = self.normalize(&ca);
        let nb = self.normalize(&cb);
        if (na, nb) == (a, b) { C::E(e) } else { C::E(self.pool.raw(PrimExprData::Bin(op, na, nb))) }
    }

    /// `ProdDivSimplify` for a symbolic divisor: cancels common factors of two products.
    pub(super) fn prod_div_simplify(&mut self, a: PrimExpr, b: PrimExpr) -> Option<(PrimExpr, PrimExpr)> {
        if self.pool.as_int(b).is_some() {
            return None;
        }
        let dtype = self.pool.dtype(b);
        let mut lhs = Vec::new();
        self.unpack_mul(a, &mut lhs);
        let mut rhs = Vec::new();
        self.unpack_mul(b, &mut rhs);
        let (mut lc, mut rc) = (1i64, 1i64);
        let mut lprods: Vec<Option<PrimExpr>> = Vec::new();
        for f in lhs {
            match self.pool.as_int(f) {
                Some(v) => lc *= v,
                None => lprods.push(Some(f)),
            }
        }
        let mut new_rhs = self.konst(dtype, 1);
        let mut elim = 0;
        for f in rhs {
            if let Some(v) = self.pool.as_int(f) {
                rc *= v;
                continue;
            }
            if let Some(slot) = lprods.iter_mut().find(|p| **p == Some(f)) {
                *slot = None;
                elim += 1;
                continue;
            }
            new_rhs = self.bin(BinOp::Mul, new_rhs, f);
        }
        let g = gcd(lc, rc);
        let g = if g == 0 { 1 } else { g };
        if elim == 0 && g == 1 {
            return None;
        }
        let mut new_lhs = self.konst(dtype, 1);
        for f in lprods.into_iter().flatten() {
            new_lhs = self.bin(BinOp::Mul, new_lhs, f);
        }
        let kl = self.konst(dtype, lc / g);
        let kr = self.konst(dtype, rc / g);
        let x = self.bin(BinOp::Mul, new_lhs, kl);
        let y = self.bin(BinOp::Mul, new_rhs, kr);
        Some((x, y))
    }

    /// `a < b`: the canonical simplifier's gcd rule, then the rewrite rules.
    pub(super) fn canon_lt(&mut self, e: PrimExpr, a: PrimExpr, b: PrimExpr) -> PrimExpr {
        if is_index(self.pool.dtype(a)) {
            let d = self.bin(BinOp::Sub, a, b);
            if let C::Sum(lhs) = self.canon(d) {
                let mut g = lhs.base;
                let mut non_one = false;
                for s in &lhs.args {
                    if s.scale > 1 || s.scale < -1 {
                        non_one = true;
                        g = gcd(g, s.scale);
                    }
                }
                if non_one && g > 1 {
                    let (mut div, extra) = self.separate(&lhs, g);
                    let ne = self.sum_normalize(&extra);
                    if self.provably_lt(ne, g) && self.can_prove_ge0(ne) {
                        divide_by(&mut div, g);
                        let l = self.sum_normalize(&div);
                        let z = self.konst(div.dtype, 0);
                        let c = self.bin(BinOp::Lt, l, z);
                        return self.rewrite_node(c, true);
                    }
                }
            }
        }
        self.rewrite_node(e, true)
    }
}
