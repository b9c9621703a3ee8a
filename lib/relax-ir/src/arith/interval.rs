//! Constant intervals and their arithmetic: the one interval type of both simplifier
//! modes. The normal-form mode bounds canonical sums with it ([`super::bounds`]); TVM mode
//! bounds expressions node by node as TVM's `ConstIntBound` does
//! ([`super::tvm`]).

use crate::dtype::DataType;
use crate::prim_build::floor_div;

/// An inclusive range; `None` is unbounded on that side.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Interval {
    /// Least value, or `None` for minus infinity.
    pub lo: Option<i64>,
    /// Greatest value, or `None` for plus infinity.
    pub hi: Option<i64>,
}

impl Interval {
    /// `[lo, hi]`.
    pub fn new(lo: i64, hi: i64) -> Interval {
        Interval { lo: Some(lo), hi: Some(hi) }
    }
    /// A single value.
    pub fn point(v: i64) -> Interval {
        Interval::new(v, v)
    }
    /// `[0, +inf)`.
    pub fn non_negative() -> Interval {
        Interval { lo: Some(0), hi: None }
    }
    /// `(-inf, +inf)`.
    pub fn everything() -> Interval {
        Interval { lo: None, hi: None }
    }
    /// `[lo, +inf)`.
    pub fn at_least(lo: i64) -> Interval {
        Interval { lo: Some(lo), hi: None }
    }
    /// The range of values of a type: `[0, 1]` for `bool`, the two's-complement range of
    /// integers narrower than 64 bits, `[0, +inf)` for `uint64`, everything otherwise.
    pub fn of_dtype(t: DataType) -> Interval {
        if t.is_bool() {
            return Interval::new(0, 1);
        }
        let bits = u32::from(t.bits);
        if !t.is_int() || bits >= 64 || bits == 0 {
            return if t.is_uint() { Interval::non_negative() } else { Interval::everything() };
        }
        if t.is_uint() {
            Interval::new(0, (1i64 << bits) - 1)
        } else {
            Interval::new(-(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1)
        }
    }
    /// The value of a single-value range.
    pub fn as_point(self) -> Option<i64> {
        match (self.lo, self.hi) {
            (Some(l), Some(h)) if l == h => Some(l),
            _ => None,
        }
    }
    /// True when every value is at least 0.
    pub fn is_non_negative(self) -> bool {
        self.lo.is_some_and(|l| l >= 0)
    }
    /// True when every value is below `c`.
    pub fn is_below(self, c: i64) -> bool {
        self.hi.is_some_and(|h| h < c)
    }
    /// The sum of two ranges.
    pub fn plus(self, o: Interval) -> Interval {
        Interval {
            lo: self.lo.zip(o.lo).and_then(|(a, b)| a.checked_add(b)),
            hi: self.hi.zip(o.hi).and_then(|(a, b)| a.checked_add(b)),
        }
    }
    /// The range of `self - o`.
    pub fn minus(self, o: Interval) -> Interval {
        Interval {
            lo: self.lo.zip(o.hi).and_then(|(a, b)| a.checked_sub(b)),
            hi: self.hi.zip(o.lo).and_then(|(a, b)| a.checked_sub(b)),
        }
    }
    /// The range of `k × x`.
    pub fn scale(self, k: i64) -> Interval {
        let m = |v: Option<i64>| v.and_then(|v| v.checked_mul(k));
        if k >= 0 { Interval { lo: m(self.lo), hi: m(self.hi) } } else { Interval { lo: m(self.hi), hi: m(self.lo) } }
    }
    /// The range of a product.
    pub fn times(self, o: Interval) -> Interval {
        // Corner products with infinities handled by sign.
        let corners = [(self.lo, o.lo), (self.lo, o.hi), (self.hi, o.lo), (self.hi, o.hi)];
        let mut lo = Some(i64::MAX);
        let mut hi = Some(i64::MIN);
        for (a, b) in corners {
            let (a_sign, b_sign) = (sign(a, self), sign(b, o));
            match (a, b) {
                (Some(x), Some(y)) => match x.checked_mul(y) {
                    Some(p) => {
                        lo = lo.map(|l| l.min(p));
                        hi = hi.map(|h| h.max(p));
                    }
                    None => return Interval::everything(),
                },
                _ => {
                    // One factor is infinite: the product is infinite with the sign of the
                    // product of signs, unless the other factor is zero.
                    let s = a_sign * b_sign;
                    if s > 0 {
                        hi = None;
                    } else if s < 0 {
                        lo = None;
                    }
                }
            }
        }
        Interval { lo, hi }
    }
    /// The range of `x // c` for a constant `c > 0`.
    pub fn floordiv_const(self, c: i64) -> Interval {
        Interval { lo: self.lo.map(|l| floor_div(l, c)), hi: self.hi.map(|h| floor_div(h, c)) }
    }
    /// The smallest range holding both.
    pub fn union(self, o: Interval) -> Interval {
        Interval { lo: self.lo.zip(o.lo).map(|(a, b)| a.min(b)), hi: self.hi.zip(o.hi).map(|(a, b)| a.max(b)) }
    }
    /// The range of `min(x, y)`.
    pub fn min(self, o: Interval) -> Interval {
        let hi = match (self.hi, o.hi) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        Interval { lo: self.lo.zip(o.lo).map(|(a, b)| a.min(b)), hi }
    }
    /// The range of `max(x, y)`.
    pub fn max(self, o: Interval) -> Interval {
        let lo = match (self.lo, o.lo) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        Interval { lo, hi: self.hi.zip(o.hi).map(|(a, b)| a.max(b)) }
    }
}

/// The sign of a bound value: infinite bounds take the sign of their side.
fn sign(v: Option<i64>, iv: Interval) -> i64 {
    match v {
        Some(x) => x.signum(),
        None if v == iv.hi && iv.hi.is_none() => 1,
        None => -1,
    }
}
