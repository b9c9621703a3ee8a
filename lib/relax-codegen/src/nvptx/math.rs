//! Math functions in kernels, without libdevice.
//!
//! The NVPTX backend selects few float operations itself: `sqrt`, `fabs`, `floor`,
//! `ceil`, `trunc`, `roundeven`, `copysign`, `frem`, `fma`, `minnum`/`maxnum`; it has
//! no libm to call for `llvm.exp`, `llvm.sin` and the rest. libdevice (`__nv_expf`, ...)
//! is not used because it is not installed here, so every other function is expanded
//! into IR from those operations, at the precision of its type (`float` or `double`):
//!
//! * `exp`, `exp2`: Cody–Waite reduction `x = k ln2 + r`, `|r| <= ln2/2`, a Taylor
//!   polynomial of `e^r` (degree 13 for `double`, 8 for `float`), and scaling by `2^k`
//!   built from exponent bits; `expm1` uses the same polynomial near 0.
//! * `log`, `log2`, `log10`: `x = m 2^e` from the bits (`m` in `[sqrt(1/2), sqrt(2))`,
//!   subnormals scaled first), `log m = 2 atanh((m-1)/(m+1))` by its series; `log1p` by
//!   Kahan's `log(u) * x / (u - 1)`.
//! * `sin`, `cos`, `tan`: reduction by `pi/2` in two parts and the Taylor polynomials
//!   (accurate for moderate arguments, like CUDA's fast paths, not for `|x|` of `1e6` and
//!   above).
//! * `tanh`, `sinh`, `cosh`, `asinh`, `acosh`, `atanh`, `pow`, `exp10`, `hypot`: from
//!   the above by their identities (`pow` of `float` computes in `double`); `atan` by two argument halvings and its series;
//!   `atan2`, `asin`, `acos` from `atan`; `erf` by Abramowitz–Stegun 7.1.26 (absolute
//!   error below 1.5e-7, as in the SPIR-V backend); `ldexp`, `nextafter` on the bits.
//!
//! Results are within a few units in the last place of the interpreter's (libm's) for
//! ordinary arguments, not bit-identical.

use relax_ir::Intrinsic;
use std::f64::consts::{FRAC_PI_2, LN_2, LN_10, LOG2_E, LOG10_2, LOG10_E, PI};

use inkwell::types::{FloatType, IntType};
use inkwell::values::{FloatValue, IntValue};
use inkwell::{FloatPredicate, IntPredicate};

use crate::error::CodegenError;
use crate::llvm::DeviceCx;

type R<T> = Result<T, CodegenError>;

/// The expansion of `name` on `args`, or `None` when LLVM's own lowering suits NVPTX
/// (or the name is unknown, which the CPU lowering reports).
pub(super) fn math<'ctx>(
    d: &DeviceCx<'_, 'ctx>,
    name: Intrinsic,
    args: &[FloatValue<'ctx>],
) -> Option<R<FloatValue<'ctx>>> {
    let ty = args.first()?.get_type();
    let m = M { d, ty, wide: ty == d.cx.f64_type() };
    let r = match (name, args) {
        (Intrinsic::Exp, [x]) => m.exp(*x),
        (Intrinsic::Exp2, [x]) => m.exp2(*x),
        (Intrinsic::Exp10, [x]) => m.mul(*x, m.c(LN_10)).and_then(|y| m.exp(y)),
        (Intrinsic::Expm1, [x]) => m.expm1(*x),
        (Intrinsic::Log, [x]) => m.log_with(*x, LN_2, 1.0),
        (Intrinsic::Log2, [x]) => m.log_with(*x, 1.0, LOG2_E),
        (Intrinsic::Log10, [x]) => m.log_with(*x, LOG10_2, LOG10_E),
        (Intrinsic::Log1p, [x]) => m.log1p(*x),
        (Intrinsic::Sin, [x]) => m.sin_cos(*x, false),
        (Intrinsic::Cos, [x]) => m.sin_cos(*x, true),
        (Intrinsic::Tan, [x]) => m.sin_cos(*x, false).and_then(|s| m.div(s, m.sin_cos(*x, true)?)),
        (Intrinsic::Tanh, [x]) => m.tanh(*x),
        (Intrinsic::Sinh, [x]) => m.sinh(*x),
        (Intrinsic::Cosh, [x]) => m.cosh(*x),
        (Intrinsic::Asinh, [x]) => m.asinh(*x),
        (Intrinsic::Acosh, [x]) => m.acosh(*x),
        (Intrinsic::Atanh, [x]) => m.atanh(*x),
        (Intrinsic::Atan, [x]) => m.atan(*x),
        (Intrinsic::Asin, [x]) => m.asin_acos(*x, false),
        (Intrinsic::Acos, [x]) => m.asin_acos(*x, true),
        (Intrinsic::Erf, [x]) => m.erf(*x),
        (Intrinsic::Pow, [a, b]) => m.pow(*a, *b),
        (Intrinsic::Atan2, [y, x]) => m.atan2(*y, *x),
        (Intrinsic::Hypot, [a, b]) => m.mul(*b, *b).and_then(|bb| m.sqrt(m.fma(*a, *a, bb)?)),
        (Intrinsic::Ldexp, [a, b]) => m.ldexp(*a, *b),
        (Intrinsic::Nextafter, [a, b]) => m.nextafter(*a, *b),
        _ => return None,
    };
    Some(r)
}

/// Builds float code of one type.
struct M<'a, 'b, 'ctx> {
    d: &'a DeviceCx<'b, 'ctx>,
    ty: FloatType<'ctx>,
    /// `double` (else `float`).
    wide: bool,
}

impl<'ctx> M<'_, '_, 'ctx> {
    fn c(&self, v: f64) -> FloatValue<'ctx> {
        self.ty.const_float(if self.wide { v } else { f64::from(v as f32) })
    }
    fn ity(&self) -> IntType<'ctx> {
        if self.wide { self.d.cx.i64_type() } else { self.d.cx.i32_type() }
    }
    fn add(&self, a: FloatValue<'ctx>, b: FloatValue<'ctx>) -> R<FloatValue<'ctx>> {
        Ok(self.d.b.build_float_add(a, b, "a")?)
    }
    fn sub(&self, a: FloatValue<'ctx>, b: FloatValue<'ctx>) -> R<FloatValue<'ctx>> {
        Ok(self.d.b.build_float_sub(a, b, "s")?)
    }
    fn mul(&self, a: FloatValue<'ctx>, b: FloatValue<'ctx>) -> R<FloatValue<'ctx>> {
        Ok(self.d.b.build_float_mul(a, b, "m")?)
    }
    fn div(&self, a: FloatValue<'ctx>, b: FloatValue<'ctx>) -> R<FloatValue<'ctx>> {
        Ok(self.d.b.build_float_div(a, b, "d")?)
    }
    fn neg(&self, a: FloatValue<'ctx>) -> R<FloatValue<'ctx>> {
        Ok(self.d.b.build_float_neg(a, "n")?)
    }
    fn cmp(&self, p: FloatPredicate, a: FloatValue<'ctx>, b: FloatValue<'ctx>) -> R<IntValue<'ctx>> {
        Ok(self.d.b.build_float_compare(p, a, b, "c")?)
    }
    fn sel(&self, c: IntValue<'ctx>, a: FloatValue<'ctx>, b: FloatValue<'ctx>) -> R<FloatValue<'ctx>> {
        Ok(self.d.b.build_select(c, a, b, "sel")?.into_float_value())
    }
    /// A call of an LLVM float intrinsic overloaded on the type.
    fn intr(&self, name: &str, args: &[FloatValue<'ctx>]) -> R<FloatValue<'ctx>> {
        let f = inkwell::intrinsics::Intrinsic::find(name)
            .and_then(|i| i.get_declaration(self.d.module, &[self.ty.into()]))
            .ok_or_else(|| CodegenError::new(format!("internal error: no LLVM intrinsic `{name}`")))?;
        let a: Vec<_> = args.iter().map(|&x| x.into()).collect();
        let r = self.d.b.build_call(f, &a, "f")?;
        Ok(r.try_as_basic_value().basic().expect("a float").into_float_value())
    }
    fn fma(&self, a: FloatValue<'ctx>, b: FloatValue<'ctx>, c: FloatValue<'ctx>) -> R<FloatValue<'ctx>> {
        self.intr("llvm.fma", &[a, b, c])
    }
    fn abs(&self, a: FloatValue<'ctx>) -> R<FloatValue<'ctx>> {
        self.intr("llvm.fabs", &[a])
    }
    fn sqrt(&self, a: FloatValue<'ctx>) -> R<FloatValue<'ctx>> {
        self.intr("llvm.sqrt", &[a])
    }
    fn copysign(&self, a: FloatValue<'ctx>, s: FloatValue<'ctx>) -> R<FloatValue<'ctx>> {
        self.intr("llvm.copysign", &[a, s])
    }
    /// `c[0] + x (c[1] + x (c[2] + ...))`.
    fn horner(&self, x: FloatValue<'ctx>, c: &[f64]) -> R<FloatValue<'ctx>> {
        let mut acc = self.c(*c.last().expect("coefficients"));
        for &k in c.iter().rev().skip(1) {
            acc = self.fma(acc, x, self.c(k))?;
        }
        Ok(acc)
    }
    fn bits(&self, x: FloatValue<'ctx>) -> R<IntValue<'ctx>> {
        Ok(self.d.b.build_bit_cast(x, self.ity(), "bits")?.into_int_value())
    }
    fn float_of_bits(&self, i: IntValue<'ctx>) -> R<FloatValue<'ctx>> {
        Ok(self.d.b.build_bit_cast(i, self.ty, "fl")?.into_float_value())
    }
    fn mant_bits(&self) -> u64 {
        if self.wide { 52 } else { 23 }
    }
    fn bias(&self) -> u64 {
        if self.wide { 1023 } else { 127 }
    }

    /// `q(r)` with `e^r = 1 + r q(r)`: the Taylor coefficients `1/n!`, `n >= 1`.
    fn exp_q(&self, r: FloatValue<'ctx>) -> R<FloatValue<'ctx>> {
        let n = if self.wide { 13 } else { 8 };
        let mut c = Vec::with_capacity(n);
        let mut f = 1.0;
        for k in 1..=n {
            f *= k as f64;
            c.push(1.0 / f);
        }
        self.horner(r, &c)
    }

    /// `p 2^k` for an integral `k`, in four exact steps (subnormal and infinite results
    /// included).
    fn scale(&self, p: FloatValue<'ctx>, k: FloatValue<'ctx>) -> R<FloatValue<'ctx>> {
        let lim = if self.wide { 2200.0 } else { 330.0 };
        let k = self.intr("llvm.maxnum", &[k, self.c(-lim)])?;
        let k = self.intr("llvm.minnum", &[k, self.c(lim)])?;
        let q = self.intr("llvm.trunc", &[self.mul(k, self.c(0.25))?])?;
        let rest = self.fma(q, self.c(-3.0), k)?;
        let pow2 = |e: FloatValue<'ctx>| -> R<FloatValue<'ctx>> {
            let i = self.d.b.build_float_to_signed_int(e, self.ity(), "e")?;
            let i = self.d.b.build_int_add(i, self.ity().const_int(self.bias(), false), "e")?;
            let i = self.d.b.build_left_shift(i, self.ity().const_int(self.mant_bits(), false), "e")?;
            self.float_of_bits(i)
        };
        let s = pow2(q)?;
        let mut r = self.mul(p, s)?;
        r = self.mul(r, s)?;
        r = self.mul(r, s)?;
        self.mul(r, pow2(rest)?)
    }

    fn exp(&self, x: FloatValue<'ctx>) -> R<FloatValue<'ctx>> {
        let k = self.intr("llvm.roundeven", &[self.mul(x, self.c(LOG2_E))?])?;
        let (hi, lo) = self.split(LN_2);
        let r = self.fma(self.neg(k)?, hi, x)?;
        let r = self.fma(self.neg(k)?, lo, r)?;
        let p = self.fma(r, self.exp_q(r)?, self.c(1.0))?;
        self.infinities(x, self.scale(p, k)?)
    }

    fn exp2(&self, x: FloatValue<'ctx>) -> R<FloatValue<'ctx>> {
        let k = self.intr("llvm.roundeven", &[x])?;
        let r = self.mul(self.sub(x, k)?, self.c(LN_2))?;
        let p = self.fma(r, self.exp_q(r)?, self.c(1.0))?;
        self.infinities(x, self.scale(p, k)?)
    }

    /// `r`, or the limit of `e^x` at infinite `x`.
    fn infinities(&self, x: FloatValue<'ctx>, r: FloatValue<'ctx>) -> R<FloatValue<'ctx>> {
        let r = self.sel(self.cmp(FloatPredicate::OEQ, x, self.c(f64::NEG_INFINITY))?, self.c(0.0), r)?;
        self.sel(self.cmp(FloatPredicate::OEQ, x, self.c(f64::INFINITY))?, x, r)
    }

    fn expm1(&self, x: FloatValue<'ctx>) -> R<FloatValue<'ctx>> {
        let small = self.cmp(FloatPredicate::OLT, self.abs(x)?, self.c(LN_2 / 2.0))?;
        let near = self.mul(x, self.exp_q(x)?)?;
        let far = self.sub(self.exp(x)?, self.c(1.0))?;
        self.sel(small, near, far)
    }

    /// `v` as a high part of this type and the rest.
    fn split(&self, v: f64) -> (FloatValue<'ctx>, FloatValue<'ctx>) {
        let hi = if self.wide { v } else { f64::from(v as f32) };
        let lo = if self.wide && v == LN_2 {
            2.319_046_813_846_299_6e-17
        } else if self.wide && v == FRAC_PI_2 {
            6.123_233_995_736_766e-17
        } else {
            v - hi
        };
        (self.c(hi), self.c(lo))
    }

    /// `x = m 2^e`: `(e, log m)` for finite positive `x`.
    fn log_parts(&self, x: FloatValue<'ctx>) -> R<(FloatValue<'ctx>, FloatValue<'ctx>)> {
        let b = self.d.b;
        let it = self.ity();
        let min_normal = if self.wide { f64::from_bits(1 << 52) } else { f64::from(f32::MIN_POSITIVE) };
        let sub = self.cmp(FloatPredicate::OLT, x, self.c(min_normal))?;
        let up = if self.wide { 54.0 } else { 25.0 };
        let xs = self.sel(sub, self.mul(x, self.c(2f64.powf(up)))?, x)?;
        let adj = self.sel(sub, self.c(-up), self.c(0.0))?;
        let bits = self.bits(xs)?;
        let mb = self.mant_bits();
        let e = b.build_right_shift(bits, it.const_int(mb, false), false, "e")?;
        let e = b.build_and(e, it.const_int(2 * self.bias() + 1, false), "e")?;
        let e = b.build_int_sub(e, it.const_int(self.bias(), false), "e")?;
        let e = b.build_signed_int_to_float(e, self.ty, "e")?;
        let e = self.add(e, adj)?;
        let mant = b.build_and(bits, it.const_int((1u64 << mb) - 1, false), "m")?;
        let mant = b.build_or(mant, it.const_int(self.bias() << mb, false), "m")?;
        let m = self.float_of_bits(mant)?;
        let big = self.cmp(FloatPredicate::OGT, m, self.c(std::f64::consts::SQRT_2))?;
        let m = self.sel(big, self.mul(m, self.c(0.5))?, m)?;
        let e = self.sel(big, self.add(e, self.c(1.0))?, e)?;
        let s = self.div(self.sub(m, self.c(1.0))?, self.add(m, self.c(1.0))?)?;
        let z = self.mul(s, s)?;
        let terms = if self.wide { 11 } else { 6 };
        let c: Vec<f64> = (0..terms).map(|k| 1.0 / (2 * k + 1) as f64).collect();
        let logm = self.mul(self.mul(s, self.c(2.0))?, self.horner(z, &c)?)?;
        Ok((e, logm))
    }

    /// `e a + log(m) b`, with IEEE results for 0, negatives, infinity and NaN.
    fn log_with(&self, x: FloatValue<'ctx>, a: f64, b: f64) -> R<FloatValue<'ctx>> {
        let (e, logm) = self.log_parts(x)?;
        let r = self.fma(e, self.c(a), self.mul(logm, self.c(b))?)?;
        let r = self.sel(self.cmp(FloatPredicate::UNO, x, x)?, x, r)?;
        let r = self.sel(self.cmp(FloatPredicate::OEQ, x, self.c(f64::INFINITY))?, x, r)?;
        let r = self.sel(self.cmp(FloatPredicate::OLT, x, self.c(0.0))?, self.c(f64::NAN), r)?;
        self.sel(self.cmp(FloatPredicate::OEQ, x, self.c(0.0))?, self.c(f64::NEG_INFINITY), r)
    }

    fn log(&self, x: FloatValue<'ctx>) -> R<FloatValue<'ctx>> {
        self.log_with(x, LN_2, 1.0)
    }

    fn log1p(&self, x: FloatValue<'ctx>) -> R<FloatValue<'ctx>> {
        let u = self.add(x, self.c(1.0))?;
        let exact = self.cmp(FloatPredicate::OEQ, u, self.c(1.0))?;
        let corrected = self.div(self.mul(self.log(u)?, x)?, self.sub(u, self.c(1.0))?)?;
        let inf = self.cmp(FloatPredicate::OEQ, u, self.c(f64::INFINITY))?;
        let r = self.sel(inf, u, corrected)?;
        let r = self.sel(self.cmp(FloatPredicate::OEQ, u, self.c(0.0))?, self.log(u)?, r)?;
        self.sel(exact, x, r)
    }

    fn sin_cos(&self, x: FloatValue<'ctx>, cos: bool) -> R<FloatValue<'ctx>> {
        let b = self.d.b;
        let lim = if self.wide { 4.5e15 } else { 8.0e6 };
        let k = self.intr("llvm.roundeven", &[self.mul(x, self.c(2.0 / PI))?])?;
        let k = self.intr("llvm.maxnum", &[k, self.c(-lim)])?;
        let k = self.intr("llvm.minnum", &[k, self.c(lim)])?;
        let (hi, lo) = self.split(FRAC_PI_2);
        let r = self.fma(self.neg(k)?, hi, x)?;
        let r = self.fma(self.neg(k)?, lo, r)?;
        let r2 = self.mul(r, r)?;
        let (ns, nc) = if self.wide { (9, 9) } else { (6, 6) };
        // sin r = r (1 - r^2/3! + ...), cos r = 1 - r^2/2! + ...
        let mut sc = Vec::new();
        let mut cc = Vec::new();
        let mut f = 1.0;
        for n in 1..=2 * ns.max(nc) {
            f *= n as f64;
            let sign = if (n / 2) % 2 == 0 { 1.0 } else { -1.0 };
            if n % 2 == 1 && sc.len() < ns {
                sc.push(sign / f);
            } else if n % 2 == 0 && cc.len() + 1 < nc {
                cc.push(sign / f);
            }
        }
        cc.insert(0, 1.0);
        let sinp = self.mul(r, self.horner(r2, &sc)?)?;
        let cosp = self.horner(r2, &cc)?;
        let q = b.build_float_to_signed_int(k, self.d.cx.i64_type(), "q")?;
        let q = if cos { b.build_int_add(q, self.d.cx.i64_type().const_int(1, false), "q")? } else { q };
        let i64t = self.d.cx.i64_type();
        let odd = b.build_and(q, i64t.const_int(1, false), "odd")?;
        let odd = b.build_int_compare(IntPredicate::NE, odd, i64t.const_zero(), "odd")?;
        let neg = b.build_and(q, i64t.const_int(2, false), "neg")?;
        let neg = b.build_int_compare(IntPredicate::NE, neg, i64t.const_zero(), "neg")?;
        let v = self.sel(odd, cosp, sinp)?;
        self.sel(neg, self.neg(v)?, v)
    }

    fn tanh(&self, x: FloatValue<'ctx>) -> R<FloatValue<'ctx>> {
        let em = self.expm1(self.mul(self.abs(x)?, self.c(-2.0))?)?;
        let t = self.div(self.neg(em)?, self.add(em, self.c(2.0))?)?;
        self.copysign(t, x)
    }

    fn sinh(&self, x: FloatValue<'ctx>) -> R<FloatValue<'ctx>> {
        let em = self.expm1(self.abs(x)?)?;
        let s = self.mul(self.add(em, self.div(em, self.add(em, self.c(1.0))?)?)?, self.c(0.5))?;
        let inf = self.cmp(FloatPredicate::OEQ, em, self.c(f64::INFINITY))?;
        self.copysign(self.sel(inf, em, s)?, x)
    }

    fn cosh(&self, x: FloatValue<'ctx>) -> R<FloatValue<'ctx>> {
        let e = self.exp(self.abs(x)?)?;
        self.mul(self.add(e, self.div(self.c(1.0), e)?)?, self.c(0.5))
    }

    fn asinh(&self, x: FloatValue<'ctx>) -> R<FloatValue<'ctx>> {
        let a = self.abs(x)?;
        let a2 = self.mul(a, a)?;
        let near =
            self.log1p(self.add(a, self.div(a2, self.add(self.c(1.0), self.sqrt(self.add(a2, self.c(1.0))?)?)?)?)?)?;
        let far = self.add(self.log(a)?, self.c(LN_2))?;
        let big = self.cmp(FloatPredicate::OGT, a, self.c(if self.wide { 1e150 } else { 1e18 }))?;
        self.copysign(self.sel(big, far, near)?, x)
    }

    fn acosh(&self, x: FloatValue<'ctx>) -> R<FloatValue<'ctx>> {
        let near = self.log(self.add(x, self.sqrt(self.fma(x, x, self.c(-1.0))?)?)?)?;
        let far = self.add(self.log(x)?, self.c(LN_2))?;
        let big = self.cmp(FloatPredicate::OGT, x, self.c(if self.wide { 1e150 } else { 1e18 }))?;
        self.sel(big, far, near)
    }

    fn atanh(&self, x: FloatValue<'ctx>) -> R<FloatValue<'ctx>> {
        // On |x|, as fdlibm: `log1p` of a positive argument is well-conditioned.
        let a = self.abs(x)?;
        let q = self.div(self.mul(a, self.c(2.0))?, self.sub(self.c(1.0), a)?)?;
        self.copysign(self.mul(self.log1p(q)?, self.c(0.5))?, x)
    }

    fn atan(&self, x: FloatValue<'ctx>) -> R<FloatValue<'ctx>> {
        let a = self.abs(x)?;
        let inv = self.cmp(FloatPredicate::OGT, a, self.c(1.0))?;
        let mut a = self.sel(inv, self.div(self.c(1.0), a)?, a)?;
        for _ in 0..2 {
            let h = self.add(self.c(1.0), self.sqrt(self.fma(a, a, self.c(1.0))?)?)?;
            a = self.div(a, h)?;
        }
        let terms = if self.wide { 12 } else { 6 };
        let c: Vec<f64> = (0..terms).map(|k| f64::from(if k % 2 == 0 { 1 } else { -1 }) / (2 * k + 1) as f64).collect();
        let p = self.mul(self.mul(a, self.c(4.0))?, self.horner(self.mul(a, a)?, &c)?)?;
        let r = self.sel(inv, self.sub(self.c(FRAC_PI_2), p)?, p)?;
        self.copysign(r, x)
    }

    fn atan2(&self, y: FloatValue<'ctx>, x: FloatValue<'ctx>) -> R<FloatValue<'ctx>> {
        let t = self.atan(self.div(y, x)?)?;
        let neg = self.cmp(FloatPredicate::OLT, x, self.c(0.0))?;
        let t = self.sel(neg, self.add(t, self.copysign(self.c(PI), y)?)?, t)?;
        let zero_x = self.cmp(FloatPredicate::OEQ, x, self.c(0.0))?;
        let zero_y = self.cmp(FloatPredicate::OEQ, y, self.c(0.0))?;
        let axis = self.sel(zero_y, y, self.copysign(self.c(FRAC_PI_2), y)?)?;
        self.sel(zero_x, axis, t)
    }

    fn asin_acos(&self, x: FloatValue<'ctx>, acos: bool) -> R<FloatValue<'ctx>> {
        let c = self.sqrt(self.mul(self.sub(self.c(1.0), x)?, self.add(self.c(1.0), x)?)?)?;
        if acos { self.atan2(c, x) } else { self.atan2(x, c) }
    }

    fn erf(&self, x: FloatValue<'ctx>) -> R<FloatValue<'ctx>> {
        let a = self.abs(x)?;
        let t = self.div(self.c(1.0), self.fma(a, self.c(0.3275911), self.c(1.0))?)?;
        let poly = self.horner(t, &[0.0, 0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429])?;
        let e = self.exp(self.neg(self.mul(a, a)?)?)?;
        let y = self.sub(self.c(1.0), self.mul(poly, e)?)?;
        self.copysign(y, x)
    }

    fn pow(&self, a: FloatValue<'ctx>, b: FloatValue<'ctx>) -> R<FloatValue<'ctx>> {
        if !self.wide {
            // In `double`: the error of `log a` grows with `b`.
            let f64t = self.d.cx.f64_type();
            let wide = M { d: self.d, ty: f64t, wide: true };
            let a = self.d.b.build_float_ext(a, f64t, "a")?;
            let b = self.d.b.build_float_ext(b, f64t, "b")?;
            return Ok(self.d.b.build_float_trunc(wide.pow(a, b)?, self.ty, "pow")?);
        }
        let r = self.exp(self.mul(b, self.log(self.abs(a)?)?)?)?;
        let is_int = self.cmp(FloatPredicate::OEQ, self.intr("llvm.floor", &[b])?, b)?;
        let half = self.mul(b, self.c(0.5))?;
        let even = self.cmp(FloatPredicate::OEQ, self.intr("llvm.floor", &[half])?, half)?;
        let odd = self.d.b.build_and(is_int, self.d.b.build_not(even, "odd")?, "odd")?;
        let neg_a = self.cmp(FloatPredicate::OLT, a, self.c(0.0))?;
        let signed = self.sel(odd, self.neg(r)?, r)?;
        let neg_r = self.sel(is_int, signed, self.c(f64::NAN))?;
        let r = self.sel(neg_a, neg_r, r)?;
        let one = self.d.b.build_or(
            self.cmp(FloatPredicate::OEQ, b, self.c(0.0))?,
            self.cmp(FloatPredicate::OEQ, a, self.c(1.0))?,
            "one",
        )?;
        self.sel(one, self.c(1.0), r)
    }

    fn ldexp(&self, a: FloatValue<'ctx>, b: FloatValue<'ctx>) -> R<FloatValue<'ctx>> {
        let k = self.intr("llvm.trunc", &[b])?;
        let bad = self.cmp(FloatPredicate::UNO, k, k)?;
        let k = self.sel(bad, self.c(0.0), k)?;
        self.scale(a, k)
    }

    fn nextafter(&self, a: FloatValue<'ctx>, b: FloatValue<'ctx>) -> R<FloatValue<'ctx>> {
        let bld = self.d.b;
        let it = self.ity();
        let ai = self.bits(a)?;
        let grow = bld.build_int_compare(
            IntPredicate::EQ,
            self.cmp(FloatPredicate::OLT, a, b)?,
            self.cmp(FloatPredicate::OGT, a, self.c(0.0))?,
            "grow",
        )?;
        let delta = bld.build_select(grow, it.const_int(1, false), it.const_all_ones(), "delta")?.into_int_value();
        let step = self.float_of_bits(bld.build_int_add(ai, delta, "next")?)?;
        let tiny = self.copysign(self.float_of_bits(it.const_int(1, false))?, b)?;
        let r = self.sel(self.cmp(FloatPredicate::OEQ, a, self.c(0.0))?, tiny, step)?;
        let r = self.sel(self.cmp(FloatPredicate::OEQ, a, b)?, b, r)?;
        let nan = self.cmp(FloatPredicate::UNO, a, b)?;
        self.sel(nan, self.add(a, b)?, r)
    }
}
