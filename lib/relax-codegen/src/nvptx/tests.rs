//! The math expansions of [`super::math`] against Rust's `f32`/`f64` functions: each
//! expansion is built for the host CPU (the IR is target-independent), JIT-compiled and
//! evaluated on arguments across each function's domain, since the PTX itself cannot run
//! without a GPU.
#![expect(unsafe_code, reason = "calling JIT-compiled test functions")]

use inkwell::OptimizationLevel;
use inkwell::context::Context;
use inkwell::types::BasicMetadataTypeEnum;

use crate::llvm::DeviceCx;

/// Builds `name` for `double` or `float` with `arity` arguments and evaluates it on `args`
/// (each value given as `f64`).
fn eval(name: &str, wide: bool, arity: usize, args: &[[f64; 2]]) -> Vec<f64> {
    crate::llvm::initialize().expect("the native target");
    let cx = Context::create();
    let m = cx.create_module("t");
    let ft = if wide { cx.f64_type() } else { cx.f32_type() };
    let f64t = cx.f64_type();
    let ps: Vec<BasicMetadataTypeEnum> = vec![f64t.into(); 2];
    let func = m.add_function("f", f64t.fn_type(&ps, false), None);
    let b = cx.create_builder();
    b.position_at_end(cx.append_basic_block(func, "entry"));
    let mut xs = Vec::new();
    for i in 0..arity {
        let p = func.get_nth_param(i as u32).expect("a parameter").into_float_value();
        xs.push(if wide { p } else { b.build_float_trunc(p, ft, "x").expect("fptrunc") });
    }
    let d = DeviceCx { cx: &cx, module: &m, b: &b };
    let op = relax_ir::Intrinsic::from_name(name).expect("an intrinsic");
    let r = super::math::math(&d, op, &xs).expect("an expansion").expect("builds");
    let r = if wide { r } else { b.build_float_ext(r, f64t, "r").expect("fpext") };
    b.build_return(Some(&r)).expect("ret");
    m.verify().expect("valid IR");
    let ee = m.create_jit_execution_engine(OptimizationLevel::None).expect("a JIT");
    // SAFETY: the function has this signature.
    let f = unsafe { ee.get_function::<unsafe extern "C" fn(f64, f64) -> f64>("f") }.expect("the function");
    // SAFETY: a pure function of two doubles.
    args.iter().map(|a| unsafe { f.call(a[0], a[1]) }).collect()
}

/// Checks `name` against `reference` for both float types: `|got - want| <= tol *
/// max(1, |want|)`, NaN where the reference is NaN, and infinities exactly.
fn check(name: &str, arity: usize, args: &[[f64; 2]], reference: fn(f64, f64) -> f64, tol32: f64, tol64: f64) {
    for wide in [false, true] {
        let cast = |v: f64| if wide { v } else { f64::from(v as f32) };
        let inputs: Vec<[f64; 2]> = args.iter().map(|a| [cast(a[0]), cast(a[1])]).collect();
        let got = eval(name, wide, arity, &inputs);
        let tol = if wide { tol64 } else { tol32 };
        for (a, g) in inputs.iter().zip(got) {
            let want = cast(reference(a[0], a[1]));
            let ok = if want.is_nan() {
                g.is_nan()
            } else if want.is_infinite() {
                g == want
            } else {
                (g - want).abs() <= tol * want.abs().max(1.0)
            };
            assert!(ok, "{name} ({}) of {a:?}: got {g}, want {want}", if wide { "f64" } else { "f32" });
        }
    }
}

fn points(lo: f64, hi: f64, n: usize) -> Vec<[f64; 2]> {
    (0..=n).map(|i| [lo + (hi - lo) * i as f64 / n as f64, 0.0]).collect()
}

#[test]
fn exp_family() {
    let mut xs = points(-80.0, 80.0, 397);
    xs.extend([[0.0, 0.0], [1e-8, 0.0], [-1e-8, 0.0], [f64::INFINITY, 0.0], [f64::NEG_INFINITY, 0.0], [f64::NAN, 0.0]]);
    check("exp", 1, &xs, |x, _| x.exp(), 4e-7, 1e-15);
    check("exp2", 1, &xs, |x, _| x.exp2(), 4e-7, 1e-15);
    check("expm1", 1, &xs, |x, _| x.exp_m1(), 4e-7, 1e-15);
    check("tanh", 1, &points(-20.0, 20.0, 401), |x, _| x.tanh(), 4e-7, 1e-15);
    check("sinh", 1, &points(-20.0, 20.0, 401), |x, _| x.sinh(), 4e-7, 1e-14);
    check("cosh", 1, &points(-20.0, 20.0, 401), |x, _| x.cosh(), 4e-7, 1e-14);
    check("erf", 1, &points(-4.0, 4.0, 401), |x, _| libm::erf(x), 3e-7, 3e-7);
    // 2^k is exact, subnormal results included.
    check("exp2", 1, &[[3.0, 0.0], [-1074.0, 0.0], [-149.0, 0.0], [1023.0, 0.0]], |x, _| x.exp2(), 0.0, 0.0);
}

#[test]
fn log_family() {
    let mut xs = points(1e-3, 1e3, 499);
    xs.extend([[1.0, 0.0], [2.0, 0.0], [0.0, 0.0], [-1.0, 0.0], [1e-310, 0.0], [1e-40, 0.0], [f64::INFINITY, 0.0]]);
    check("log", 1, &xs, |x, _| x.ln(), 4e-7, 1e-15);
    check("log2", 1, &xs, |x, _| x.log2(), 4e-7, 1e-15);
    check("log10", 1, &xs, |x, _| x.log10(), 4e-7, 1e-15);
    check("log1p", 1, &points(-0.99, 10.0, 401), |x, _| x.ln_1p(), 4e-7, 1e-15);
    check("asinh", 1, &points(-50.0, 50.0, 401), |x, _| x.asinh(), 4e-7, 1e-14);
    check("acosh", 1, &points(1.0, 50.0, 401), |x, _| x.acosh(), 4e-7, 1e-14);
    check("atanh", 1, &points(-0.99, 0.99, 401), |x, _| x.atanh(), 4e-7, 1e-14);
    let pw: Vec<[f64; 2]> = (0..200).map(|i| [0.1 + i as f64 * 0.37, -3.0 + i as f64 * 0.05]).collect();
    check("pow", 2, &pw, f64::powf, 2e-6, 1e-13);
    check("pow", 2, &[[-2.0, 3.0], [-2.0, 2.0], [-2.0, 0.5], [0.0, 2.0], [5.0, 0.0]], f64::powf, 2e-7, 1e-15);
}

#[test]
fn trigonometry() {
    let xs = points(-100.0, 100.0, 797);
    check("sin", 1, &xs, |x, _| x.sin(), 1e-6, 1e-14);
    check("cos", 1, &xs, |x, _| x.cos(), 1e-6, 1e-14);
    check("atan", 1, &points(-1e3, 1e3, 401), |x, _| x.atan(), 4e-7, 1e-15);
    check("asin", 1, &points(-1.0, 1.0, 401), |x, _| x.asin(), 4e-7, 1e-14);
    check("acos", 1, &points(-1.0, 1.0, 401), |x, _| x.acos(), 4e-7, 1e-14);
    let yx: Vec<[f64; 2]> = (0..200).map(|i| [(i as f64 * 0.7).sin() * 3.0, (i as f64 * 1.3).cos() * 2.0]).collect();
    check("atan2", 2, &yx, f64::atan2, 4e-7, 1e-14);
    check("hypot", 2, &yx, f64::hypot, 4e-7, 1e-15);
}

#[test]
fn bits() {
    let ab = [[1.0, 2.0], [1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0], [2.0, 2.0], [-3.5, -10.0]];
    let got = eval("nextafter", true, 2, &ab);
    for (a, g) in ab.iter().zip(got) {
        assert_eq!(g.to_bits(), libm::nextafter(a[0], a[1]).to_bits(), "nextafter (f64) of {a:?}");
    }
    let got = eval("nextafter", false, 2, &ab);
    for (a, g) in ab.iter().zip(got) {
        let want = libm::nextafterf(a[0] as f32, a[1] as f32);
        assert_eq!((g as f32).to_bits(), want.to_bits(), "nextafter (f32) of {a:?}");
    }
    check(
        "ldexp",
        2,
        &[[1.5, 3.0], [1.0, -1074.0], [3.0, -2.7], [1.0, 2000.0]],
        |a, b| a * (b.trunc()).exp2(),
        0.0,
        0.0,
    );
}
