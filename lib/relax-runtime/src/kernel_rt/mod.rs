//! The functions compiled kernels call (`relax_codegen::abi`): `relax_parallel_for` on the
//! thread pool of [`pool`], and the math helpers of `relax_codegen::abi::MATH_HELPERS`,
//! whose results must match the interpreter's. The JIT maps them by address; a loaded
//! library (`crate::library`) gets their addresses through the pointers it exports. No
//! LLVM here: a runtime without the code generator links this module.
#![expect(unsafe_code, reason = "kernels call these through the C ABI with raw loop bodies")]

pub mod pool;

use relax_codegen::abi;

/// Runs `body` on chunks of `[0, n)` of at least `min_chunk` iterations on the pool of
/// the kernel call in progress; the first non-zero result, or 0.
extern "C" fn relax_parallel_for(body: pool::BodyFn, closure: *mut u8, n: i64, min_chunk: i64) -> i32 {
    // SAFETY: kernels call this with an outlined loop body and its closure, whose
    // iterations are independent (a parallel loop), alive for the call.
    unsafe { pool::run_current(body, closure, n, min_chunk) }
}

extern "C" fn relax_erf_f32(x: f32) -> f32 {
    libm::erff(x)
}
extern "C" fn relax_erf_f64(x: f64) -> f64 {
    libm::erf(x)
}
extern "C" fn relax_asinh_f32(x: f32) -> f32 {
    x.asinh()
}
extern "C" fn relax_asinh_f64(x: f64) -> f64 {
    x.asinh()
}
extern "C" fn relax_acosh_f32(x: f32) -> f32 {
    x.acosh()
}
extern "C" fn relax_acosh_f64(x: f64) -> f64 {
    x.acosh()
}
extern "C" fn relax_atanh_f32(x: f32) -> f32 {
    x.atanh()
}
extern "C" fn relax_atanh_f64(x: f64) -> f64 {
    x.atanh()
}
extern "C" fn relax_nextafter_f32(x: f32, y: f32) -> f32 {
    libm::nextafterf(x, y)
}
extern "C" fn relax_nextafter_f64(x: f64, y: f64) -> f64 {
    libm::nextafter(x, y)
}

/// The runtime functions kernels may call, by symbol.
pub fn runtime_symbols() -> Vec<(&'static str, usize)> {
    let unary32: [(&str, extern "C" fn(f32) -> f32); 4] = [
        ("relax_erf_f32", relax_erf_f32),
        ("relax_asinh_f32", relax_asinh_f32),
        ("relax_acosh_f32", relax_acosh_f32),
        ("relax_atanh_f32", relax_atanh_f32),
    ];
    let unary64: [(&str, extern "C" fn(f64) -> f64); 4] = [
        ("relax_erf_f64", relax_erf_f64),
        ("relax_asinh_f64", relax_asinh_f64),
        ("relax_acosh_f64", relax_acosh_f64),
        ("relax_atanh_f64", relax_atanh_f64),
    ];
    let mut v: Vec<(&'static str, usize)> = vec![(abi::PARALLEL_FOR, relax_parallel_for as *const () as usize)];
    v.extend(unary32.iter().map(|&(n, f)| (n, f as usize)));
    v.extend(unary64.iter().map(|&(n, f)| (n, f as usize)));
    v.push(("relax_nextafter_f32", relax_nextafter_f32 as *const () as usize));
    v.push(("relax_nextafter_f64", relax_nextafter_f64 as *const () as usize));
    debug_assert!(abi::MATH_HELPERS.iter().all(|h| v.iter().any(|(n, _)| n == h)));
    v
}
