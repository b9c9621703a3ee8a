//! The arithmetic of PTX instructions on register bits.
//!
//! Floats follow IEEE 754 with PTX's rules: `.rn` results are Rust's own `f32` / `f64`
//! operations (correctly rounded; `fma` through `mul_add`); `.rz`, `.rm` and `.rp` are
//! exact too: the result is computed in `f64` as a rounded value plus the sign (and
//! size) of what rounding lost (`TwoSum`, or a remainder from `mul_add`), then rounded
//! to the target format in the asked direction ([`round_parts`]). `min`/`max` return the
//! non-NaN operand. `.ftz` flushes subnormal `.f32` inputs and results to zero, `.sat`
//! clamps float results to [0, 1] (NaN to 0). The `.approx` functions (`ex2`, `lg2`,
//! `sin`, `cos`, `tanh`, `rsqrt`) return the precise value rounded to the type, which
//! is within the hardware's error bounds but not bit-identical to a GPU.
//!
//! Integers wrap; division by zero gives all ones (`div`) or the dividend (`rem`), which
//! PTX leaves unspecified.

use crate::decode::mask;
use crate::inst::{AtomOp, BinOp, Cmp, Fmods, Rnd, TernOp, UnOp};
use crate::parse::Ty;

/// `v`'s low `bits` bits, sign-extended.
#[inline]
pub(crate) fn sext(v: u64, bits: u32) -> i64 {
    if bits >= 64 {
        v as i64
    } else {
        let s = 64 - bits;
        ((v << s) as i64) >> s
    }
}

/// A binary floating-point format narrower than or equal to `f64`.
trait Narrow: Copy {
    /// `x` rounded to nearest, ties to even.
    fn rn(x: f64) -> Self;
    /// The exact value.
    fn wide(self) -> f64;
    fn up(self) -> Self;
    fn down(self) -> Self;
    /// The last bit of the significand is zero.
    fn even(self) -> bool;
    /// The largest finite value, negated when `neg`.
    fn max_finite(neg: bool) -> Self;
    /// A zero with the sign `neg`.
    fn zero(neg: bool) -> Self;
}

impl Narrow for f32 {
    fn rn(x: f64) -> f32 {
        x as f32
    }
    fn wide(self) -> f64 {
        f64::from(self)
    }
    fn up(self) -> f32 {
        self.next_up()
    }
    fn down(self) -> f32 {
        self.next_down()
    }
    fn even(self) -> bool {
        self.to_bits() & 1 == 0
    }
    fn max_finite(neg: bool) -> f32 {
        if neg { f32::MIN } else { f32::MAX }
    }
    fn zero(neg: bool) -> f32 {
        if neg { -0.0 } else { 0.0 }
    }
}

impl Narrow for f64 {
    fn rn(x: f64) -> f64 {
        x
    }
    fn wide(self) -> f64 {
        self
    }
    fn up(self) -> f64 {
        self.next_up()
    }
    fn down(self) -> f64 {
        self.next_down()
    }
    fn even(self) -> bool {
        self.to_bits() & 1 == 0
    }
    fn max_finite(neg: bool) -> f64 {
        if neg { f64::MIN } else { f64::MAX }
    }
    fn zero(neg: bool) -> f64 {
        if neg { -0.0 } else { 0.0 }
    }
}

/// Steps a 16-bit float's bits toward plus infinity (`up`) or minus infinity.
fn step16(bits: u16, up: bool) -> u16 {
    let neg = bits & 0x8000 != 0;
    let mag = bits & 0x7fff;
    if mag == 0 {
        // From a zero to the smallest subnormal of the direction's sign.
        return if up { 1 } else { 0x8001 };
    }
    if up != neg { bits + 1 } else { bits - 1 }
}

/// `Narrow` for a 16-bit float type of the `half` crate (`f16`, `bf16`: the same API).
macro_rules! narrow_half {
    ($t:ty) => {
        impl Narrow for $t {
            fn rn(x: f64) -> Self {
                <$t>::from_f64(x)
            }
            fn wide(self) -> f64 {
                self.to_f64()
            }
            fn up(self) -> Self {
                if self.is_infinite() && self.is_sign_positive() {
                    self
                } else {
                    <$t>::from_bits(step16(self.to_bits(), true))
                }
            }
            fn down(self) -> Self {
                if self.is_infinite() && self.is_sign_negative() {
                    self
                } else {
                    <$t>::from_bits(step16(self.to_bits(), false))
                }
            }
            fn even(self) -> bool {
                self.to_bits() & 1 == 0
            }
            fn max_finite(neg: bool) -> Self {
                if neg { <$t>::MIN } else { <$t>::MAX }
            }
            fn zero(neg: bool) -> Self {
                if neg { <$t>::NEG_ZERO } else { <$t>::ZERO }
            }
        }
    };
}

narrow_half!(half::f16);
narrow_half!(half::bf16);

/// Rounds the exact value `s + e` to `N` in direction `rnd`, where `s` is an `f64`
/// and `e` is smaller than half an `f64` ulp of `s` (only its sign matters unless
/// `s` is halfway between two values of `N`).
fn round_parts<N: Narrow>(s: f64, e: f64, rnd: Rnd) -> N {
    let r = N::rn(s);
    if s.is_nan() || s.is_infinite() {
        return r;
    }
    let e = if e.is_nan() { 0.0 } else { e };
    let rw = r.wide();
    if rw.is_infinite() {
        // Overflow: only nearest rounding reaches infinity from both sides.
        let neg = s < 0.0;
        return match rnd {
            Rnd::Rz => N::max_finite(neg),
            Rnd::Rm if !neg => N::max_finite(false),
            Rnd::Rp if neg => N::max_finite(true),
            _ => r,
        };
    }
    let d = s - rw;
    let dir = if d != 0.0 { d } else { e };
    if dir == 0.0 {
        return r;
    }
    let (lo, hi) = if dir > 0.0 { (r, r.up()) } else { (r.down(), r) };
    let out = match rnd {
        Rnd::Rm => lo,
        Rnd::Rp => hi,
        // The exact value lies strictly between `lo` and `hi`, so `lo >= 0` means it is
        // positive.
        Rnd::Rz => {
            if lo.wide() >= 0.0 {
                lo
            } else {
                hi
            }
        }
        _ => {
            let diff = ((s - lo.wide()) - (hi.wide() - s)) + 2.0 * e;
            if diff < 0.0 || (diff == 0.0 && lo.even()) { lo } else { hi }
        }
    };
    if out.wide() == 0.0 { N::zero(s < 0.0 || (s == 0.0 && e < 0.0)) } else { out }
}

/// `a + b` as a rounded sum and its exact error (Knuth's TwoSum).
fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    if !s.is_finite() {
        return (s, 0.0);
    }
    let bb = s - a;
    (s, (a - (s - bb)) + (b - bb))
}

/// A float operation's exact result as `s + e` (see [`round_parts`]), from `f64`
/// operands that are exact values of the instruction's type.
fn parts(op: BinOp, a: f64, b: f64) -> (f64, f64) {
    match op {
        BinOp::Add => two_sum(a, b),
        BinOp::Sub => two_sum(a, -b),
        BinOp::Mul => {
            let p = a * b;
            (p, if p.is_finite() { a.mul_add(b, -p) } else { 0.0 })
        }
        _ => {
            let q = a / b;
            if !q.is_finite() || q == 0.0 {
                return (q, 0.0);
            }
            // The remainder a - q*b is exact; its sign over b's is the sign of the error.
            let rem = (-q).mul_add(b, a);
            (q, if rem == 0.0 { 0.0 } else { rem.signum() * b.signum() * f64::MIN_POSITIVE })
        }
    }
}

fn sqrt_parts(a: f64) -> (f64, f64) {
    let q = a.sqrt();
    if !q.is_finite() || q == 0.0 {
        return (q, 0.0);
    }
    let rem = (-q).mul_add(q, a);
    (q, rem.signum() * if rem == 0.0 { 0.0 } else { f64::MIN_POSITIVE })
}

fn ftz32(x: f32) -> f32 {
    if x.is_subnormal() { f32::copysign(0.0, x) } else { x }
}

fn sat(x: f64) -> f64 {
    if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) }
}

fn fmin(a: f64, b: f64) -> f64 {
    if a.is_nan() {
        b
    } else if b.is_nan() || a < b || (a == b && a.is_sign_negative()) {
        a
    } else {
        b
    }
}

fn fmax(a: f64, b: f64) -> f64 {
    if a.is_nan() {
        b
    } else if b.is_nan() || a > b || (a == b && a.is_sign_positive()) {
        a
    } else {
        b
    }
}

/// The exact value of a float register of type `ty`.
#[inline]
pub(crate) fn float_value(v: u64, ty: Ty) -> f64 {
    match ty {
        Ty::F32 => f64::from(f32::from_bits(v as u32)),
        Ty::F64 => f64::from_bits(v),
        Ty::F16 => half::f16::from_bits(v as u16).to_f64(),
        _ => half::bf16::from_bits(v as u16).to_f64(),
    }
}

/// `s + e` rounded to float type `ty` in direction `rnd`, as bits.
fn float_bits(s: f64, e: f64, rnd: Rnd, ty: Ty) -> u64 {
    match ty {
        Ty::F32 => round_parts::<f32>(s, e, rnd).to_bits() as u64,
        Ty::F64 => round_parts::<f64>(s, e, rnd).to_bits(),
        Ty::F16 => round_parts::<half::f16>(s, e, rnd).to_bits() as u64,
        _ => round_parts::<half::bf16>(s, e, rnd).to_bits() as u64,
    }
}

/// Applies `.ftz` and `.sat` to a result's bits.
fn finish(bits: u64, ty: Ty, m: Fmods) -> u64 {
    let mut bits = bits;
    if m.ftz && ty == Ty::F32 {
        bits = ftz32(f32::from_bits(bits as u32)).to_bits() as u64;
    }
    if m.sat {
        bits = float_bits(sat(float_value(bits, ty)), 0.0, Rnd::Rn, ty);
    }
    bits
}

/// An input of a float instruction (`.ftz` applied).
#[inline]
fn input(v: u64, ty: Ty, m: Fmods) -> f64 {
    if m.ftz && ty == Ty::F32 { f64::from(ftz32(f32::from_bits(v as u32))) } else { float_value(v, ty) }
}

/// A two-operand instruction.
pub(crate) fn bin(op: BinOp, ty: Ty, m: Fmods, a: u64, b: u64) -> u64 {
    match ty {
        Ty::F32 if matches!(m.rnd, Rnd::Default | Rnd::Rn) && !m.ftz && !m.sat => {
            let (x, y) = (f32::from_bits(a as u32), f32::from_bits(b as u32));
            let r = match op {
                BinOp::Add => x + y,
                BinOp::Sub => x - y,
                BinOp::Mul => x * y,
                BinOp::Div => x / y,
                BinOp::Min => fmin(f64::from(x), f64::from(y)) as f32,
                BinOp::Max => fmax(f64::from(x), f64::from(y)) as f32,
                BinOp::Copysign => f32::copysign(y, x),
                _ => return float_logic(op, ty, a, b),
            };
            r.to_bits() as u64
        }
        Ty::F64 if matches!(m.rnd, Rnd::Default | Rnd::Rn) && !m.sat => {
            let (x, y) = (f64::from_bits(a), f64::from_bits(b));
            let r = match op {
                BinOp::Add => x + y,
                BinOp::Sub => x - y,
                BinOp::Mul => x * y,
                BinOp::Div => x / y,
                BinOp::Min => fmin(x, y),
                BinOp::Max => fmax(x, y),
                BinOp::Copysign => f64::copysign(y, x),
                _ => return float_logic(op, ty, a, b),
            };
            r.to_bits()
        }
        Ty::F32 | Ty::F64 | Ty::F16 | Ty::Bf16 => {
            let (x, y) = (input(a, ty, m), input(b, ty, m));
            let r = match op {
                BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div => {
                    let (s, e) = parts(op, x, y);
                    float_bits(s, e, m.rnd, ty)
                }
                BinOp::Min => float_bits(fmin(x, y), 0.0, Rnd::Rn, ty),
                BinOp::Max => float_bits(fmax(x, y), 0.0, Rnd::Rn, ty),
                BinOp::Copysign => float_bits(f64::copysign(y, x), 0.0, Rnd::Rn, ty),
                _ => return float_logic(op, ty, a, b),
            };
            finish(r, ty, m)
        }
        Ty::Pred => match op {
            BinOp::And => a & b & 1,
            BinOp::Or => (a | b) & 1,
            _ => (a ^ b) & 1,
        },
        _ => int_bin(op, ty.bits(), ty.is_signed(), m.sat, a, b),
    }
}

/// `and`/`or`/`xor` on float-typed operands act on the bits (the decoder lets only
/// the float operations through otherwise).
fn float_logic(op: BinOp, ty: Ty, a: u64, b: u64) -> u64 {
    int_bin(op, ty.bits(), false, false, a, b)
}

/// An integer two-operand instruction on `w`-bit values.
pub(crate) fn int_bin(op: BinOp, w: u32, signed: bool, sat: bool, a: u64, b: u64) -> u64 {
    if matches!(op, BinOp::Shl | BinOp::Shr) {
        let s = b as u32;
        let a = mask(a, w);
        let r = match op {
            BinOp::Shl if s >= w => 0,
            BinOp::Shl => a << s,
            _ if signed => (sext(a, w) >> s.min(w - 1).min(63)) as u64,
            _ if s >= w => 0,
            _ => a >> s,
        };
        return mask(r, w);
    }
    let (a, b) = (mask(a, w), mask(b, w));
    let (sa, sb) = (sext(a, w), sext(b, w));
    let r = match op {
        BinOp::Add if sat => {
            (i64::from(sa as i32) + i64::from(sb as i32)).clamp(i32::MIN.into(), i32::MAX.into()) as u64
        }
        BinOp::Sub if sat => {
            (i64::from(sa as i32) - i64::from(sb as i32)).clamp(i32::MIN.into(), i32::MAX.into()) as u64
        }
        BinOp::Add => a.wrapping_add(b),
        BinOp::Sub => a.wrapping_sub(b),
        BinOp::Mul => a.wrapping_mul(b),
        BinOp::MulHi if signed => ((i128::from(sa) * i128::from(sb)) >> w) as u64,
        BinOp::MulHi => ((u128::from(a) * u128::from(b)) >> w) as u64,
        BinOp::MulWide => return mask(if signed { (sa * sb) as u64 } else { a * b }, 2 * w),
        BinOp::Div if b == 0 => u64::MAX,
        BinOp::Div if signed => sa.wrapping_div(sb) as u64,
        BinOp::Div => a / b,
        BinOp::Rem if b == 0 => a,
        BinOp::Rem if signed => sa.wrapping_rem(sb) as u64,
        BinOp::Rem => a % b,
        BinOp::Min if signed => sa.min(sb) as u64,
        BinOp::Min => a.min(b),
        BinOp::Max if signed => sa.max(sb) as u64,
        BinOp::Max => a.max(b),
        BinOp::And => a & b,
        BinOp::Or => a | b,
        BinOp::Xor => a ^ b,
        // Shifts are above; `copysign` is float-only (the decoder checks).
        BinOp::Shl | BinOp::Shr | BinOp::Copysign => 0,
    };
    mask(r, w)
}

/// A one-operand instruction.
pub(crate) fn un(op: UnOp, ty: Ty, m: Fmods, a: u64) -> u64 {
    if !ty.is_float() {
        let w = ty.bits();
        let a = mask(a, w);
        let r = match op {
            UnOp::Neg => a.wrapping_neg(),
            UnOp::Abs => sext(a, w).wrapping_abs() as u64,
            UnOp::Not => !a,
            UnOp::Cnot => u64::from(a == 0),
            UnOp::Popc => return u64::from(a.count_ones()),
            UnOp::Clz => return u64::from(a.leading_zeros() - (64 - w)),
            UnOp::Brev => a.reverse_bits() >> (64 - w),
            _ => 0,
        };
        return mask(r, w);
    }
    match op {
        // Sign manipulations act on the bits (NaN payloads included).
        UnOp::Neg => {
            let r = a ^ (1u64 << (ty.bits() - 1));
            return if m.ftz { finish(r, ty, m) } else { r };
        }
        UnOp::Abs => {
            let r = a & !(1u64 << (ty.bits() - 1));
            return if m.ftz { finish(r, ty, m) } else { r };
        }
        _ => {}
    }
    let x = input(a, ty, m);
    let r = match op {
        UnOp::Sqrt => {
            if ty == Ty::F32 && matches!(m.rnd, Rnd::Default | Rnd::Rn) {
                f32::from_bits(a as u32).sqrt().to_bits() as u64
            } else {
                let (s, e) = sqrt_parts(x);
                float_bits(s, e, m.rnd, ty)
            }
        }
        UnOp::Rcp => {
            let (s, e) = parts(BinOp::Div, 1.0, x);
            float_bits(s, e, m.rnd, ty)
        }
        UnOp::Rsqrt => float_bits(1.0 / x.sqrt(), 0.0, Rnd::Rn, ty),
        UnOp::Sin => float_bits(x.sin(), 0.0, Rnd::Rn, ty),
        UnOp::Cos => float_bits(x.cos(), 0.0, Rnd::Rn, ty),
        UnOp::Ex2 => float_bits(x.exp2(), 0.0, Rnd::Rn, ty),
        UnOp::Lg2 => float_bits(x.log2(), 0.0, Rnd::Rn, ty),
        UnOp::Tanh => float_bits(x.tanh(), 0.0, Rnd::Rn, ty),
        _ => a,
    };
    finish(r, ty, m)
}

/// A three-operand instruction.
pub(crate) fn tern(op: TernOp, ty: Ty, m: Fmods, a: u64, b: u64, c: u64) -> u64 {
    match op {
        TernOp::Mad if ty.is_float() => {
            let r = if ty == Ty::F32 && matches!(m.rnd, Rnd::Default | Rnd::Rn) && !m.ftz {
                f32::from_bits(a as u32).mul_add(f32::from_bits(b as u32), f32::from_bits(c as u32)).to_bits() as u64
            } else if ty == Ty::F64 {
                // The decoder only lets nearest rounding through for `.f64`.
                f64::from_bits(a).mul_add(f64::from_bits(b), f64::from_bits(c)).to_bits()
            } else {
                // The product of two values of a type up to `.f32` is exact in `f64`.
                let p = input(a, ty, m) * input(b, ty, m);
                let (s, e) = two_sum(p, input(c, ty, m));
                float_bits(s, e, m.rnd, ty)
            };
            finish(r, ty, m)
        }
        TernOp::Mad => {
            int_bin(BinOp::Add, ty.bits(), false, false, int_bin(BinOp::Mul, ty.bits(), false, false, a, b), c)
        }
        TernOp::MadHi => {
            let hi = int_bin(BinOp::MulHi, ty.bits(), ty.is_signed(), false, a, b);
            int_bin(BinOp::Add, ty.bits(), false, false, hi, c)
        }
        TernOp::MadWide => {
            let p = int_bin(BinOp::MulWide, ty.bits(), ty.is_signed(), false, a, b);
            int_bin(BinOp::Add, 2 * ty.bits(), false, false, p, c)
        }
        TernOp::Bfe => {
            let w = ty.bits();
            let a = mask(a, w);
            let (pos, len) = ((b & 0xff) as u32, (c & 0xff) as u32);
            let msb = w - 1;
            let sbit = if ty.is_signed() && len > 0 { (a >> (pos + len - 1).min(msb)) & 1 } else { 0 };
            let mut d = 0u64;
            for i in 0..w {
                let bit = if i < len && pos + i <= msb { (a >> (pos + i)) & 1 } else { sbit };
                d |= bit << i;
            }
            d
        }
        TernOp::Prmt => {
            let bytes = (u64::from(b as u32) << 32 | u64::from(a as u32)).to_le_bytes();
            let mut d = 0u32;
            for i in 0..4 {
                let sel = (c >> (4 * i)) & 0xf;
                let mut byte = bytes[(sel & 7) as usize];
                if sel & 8 != 0 {
                    // Replicate the sign bit.
                    byte = if byte & 0x80 != 0 { 0xff } else { 0 };
                }
                d |= u32::from(byte) << (8 * i);
            }
            u64::from(d)
        }
        TernOp::Lop3(lut) => {
            let mut d = 0u32;
            for i in 0..32 {
                let idx = (((a >> i) & 1) << 2) | (((b >> i) & 1) << 1) | ((c >> i) & 1);
                d |= u32::from((lut >> idx) & 1) << i;
            }
            u64::from(d)
        }
    }
}

/// `bfi`: `len` bits of `a` inserted into `b` at `pos`.
pub(crate) fn bfi(ty: Ty, a: u64, b: u64, pos: u64, len: u64) -> u64 {
    let w = ty.bits();
    let (pos, len) = ((pos & 0xff) as u32, (len & 0xff) as u32);
    let mut f = mask(b, w);
    let mut i = 0;
    while i < len && pos + i < w {
        f = (f & !(1 << (pos + i))) | (((a >> i) & 1) << (pos + i));
        i += 1;
    }
    f
}

/// `setp`'s comparison.
pub(crate) fn compare(cmp: Cmp, ty: Ty, ftz: bool, a: u64, b: u64) -> bool {
    if ty.is_float() {
        let m = Fmods { ftz, ..Fmods::NONE };
        let (x, y) = (input(a, ty, m), input(b, ty, m));
        let unordered = x.is_nan() || y.is_nan();
        return match cmp {
            Cmp::Eq => !unordered && x == y,
            Cmp::Ne => !unordered && x != y,
            Cmp::Lt => x < y,
            Cmp::Le => x <= y,
            Cmp::Gt => x > y,
            Cmp::Ge => x >= y,
            Cmp::Equ => unordered || x == y,
            Cmp::Neu => unordered || x != y,
            Cmp::Ltu => unordered || x < y,
            Cmp::Leu => unordered || x <= y,
            Cmp::Gtu => unordered || x > y,
            Cmp::Geu => unordered || x >= y,
            Cmp::Num => !unordered,
            Cmp::Nan => unordered,
            Cmp::Lo | Cmp::Ls | Cmp::Hi | Cmp::Hs => false,
        };
    }
    let w = ty.bits();
    let (ua, ub) = (mask(a, w), mask(b, w));
    let (sa, sb) = (sext(ua, w), sext(ub, w));
    let signed = ty.is_signed();
    match cmp {
        Cmp::Eq => ua == ub,
        Cmp::Ne => ua != ub,
        Cmp::Lt if signed => sa < sb,
        Cmp::Le if signed => sa <= sb,
        Cmp::Gt if signed => sa > sb,
        Cmp::Ge if signed => sa >= sb,
        Cmp::Lt | Cmp::Lo => ua < ub,
        Cmp::Le | Cmp::Ls => ua <= ub,
        Cmp::Gt | Cmp::Hi => ua > ub,
        Cmp::Ge | Cmp::Hs => ua >= ub,
        _ => false,
    }
}

/// The range of integer type `ty`.
fn int_range(ty: Ty) -> (i128, i128) {
    let w = ty.bits();
    if ty.is_signed() { (-(1i128 << (w - 1)), (1i128 << (w - 1)) - 1) } else { (0, (1i128 << w) - 1) }
}

/// `cvt`: converts `a` of type `st` to `dt`; the result is extended to `ext` bits (the
/// destination register's width) when `dt` is a narrower signed integer.
pub(crate) fn cvt(dt: Ty, st: Ty, m: Fmods, a: u64, ext: u8) -> u64 {
    let int_result = |v: i128| -> u64 {
        let r = mask(v as u64, dt.bits());
        if dt.is_signed() && u32::from(ext) > dt.bits() { mask(sext(r, dt.bits()) as u64, ext.into()) } else { r }
    };
    match (dt.is_float(), st.is_float()) {
        (false, false) => {
            let v = if st.is_signed() { i128::from(sext(a, st.bits())) } else { i128::from(mask(a, st.bits())) };
            let v = if m.sat {
                let (lo, hi) = int_range(dt);
                v.clamp(lo, hi)
            } else {
                v
            };
            int_result(v)
        }
        (false, true) => {
            let x = input(a, st, m);
            let x = match m.rnd {
                Rnd::Rni => x.round_ties_even(),
                Rnd::Rzi => x.trunc(),
                Rnd::Rmi => x.floor(),
                _ => x.ceil(),
            };
            let (lo, hi) = int_range(dt);
            // NaN converts to 0; out-of-range values saturate.
            let v = if x.is_nan() {
                0
            } else if x <= lo as f64 {
                lo
            } else if x >= hi as f64 {
                hi
            } else {
                x as i128
            };
            int_result(v)
        }
        (true, false) => {
            let v = if st.is_signed() { i128::from(sext(a, st.bits())) } else { i128::from(mask(a, st.bits())) };
            // `s` is `v` rounded to `f64`; the error is exact in `f64` (below 2^11).
            let s = v as f64;
            let e = (v - s as i128) as f64;
            finish(float_bits(s, e, m.rnd, dt), dt, m)
        }
        (true, true) => {
            let x = input(a, st, m);
            let r = if m.rnd.is_integer() {
                let y = match m.rnd {
                    Rnd::Rni => x.round_ties_even(),
                    Rnd::Rzi => x.trunc(),
                    Rnd::Rmi => x.floor(),
                    _ => x.ceil(),
                };
                float_bits(y, 0.0, Rnd::Rn, dt)
            } else {
                float_bits(x, 0.0, m.rnd, dt)
            };
            finish(r, dt, m)
        }
    }
}

/// An atomic operation: the new value stored for `old`, operand `b` (and `c` for
/// `cas`).
pub(crate) fn atom(op: AtomOp, ty: Ty, old: u64, b: u64, c: u64) -> u64 {
    let w = ty.bits();
    match op {
        AtomOp::Add if ty.is_float() => bin(BinOp::Add, ty, Fmods::NONE, old, b),
        AtomOp::Add => int_bin(BinOp::Add, w, false, false, old, b),
        AtomOp::Min => int_bin(BinOp::Min, w, ty.is_signed(), false, old, b),
        AtomOp::Max => int_bin(BinOp::Max, w, ty.is_signed(), false, old, b),
        AtomOp::And => old & b,
        AtomOp::Or => old | b,
        AtomOp::Xor => old ^ b,
        AtomOp::Exch => b,
        AtomOp::Cas => {
            if mask(old, w) == mask(b, w) {
                c
            } else {
                old
            }
        }
        AtomOp::Inc => {
            if mask(old, w) >= mask(b, w) {
                0
            } else {
                mask(old + 1, w)
            }
        }
        AtomOp::Dec => {
            if mask(old, w) == 0 || mask(old, w) > mask(b, w) {
                mask(b, w)
            } else {
                mask(old - 1, w)
            }
        }
    }
}
