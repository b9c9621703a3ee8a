//! The functions compiled kernels call (`relax_codegen::abi`): `relax_parallel_for` on the
//! thread pool of [`pool`], and the math helpers of `relax_codegen::abi::MATH_HELPERS`,
//! whose results must match the interpreter's. The JIT maps them by address; a loaded
//! library (`crate::library`) gets their addresses through the pointers it exports. No
//! LLVM here: a runtime without the code generator links this module.
#![expect(unsafe_code, reason = "kernels call these through the C ABI with raw loop bodies")]

pub mod pool;

use std::sync::Mutex;

use relax_codegen::abi;

/// The last out-of-bounds access a kernel compiled with bounds checks reported
/// ([`abi::INDEX_ERROR`]): its error code, indices and the buffer's dims. Process-wide,
/// since the access may fail on a thread of the pool; written by the failing kernel and
/// taken by the caller that turns the kernel's result code into a message
/// ([`complete_message`]).
static INDEX_ERROR: Mutex<Option<IndexError>> = Mutex::new(None);

/// An out-of-bounds access: the error code, the indices and the buffer's dims.
type IndexError = (i32, Vec<i64>, Vec<i64>);

/// Records an out-of-bounds access (`n` indices and dims) and returns `code`.
extern "C" fn relax_index_error(code: i32, indices: *const i64, dims: *const i64, n: i64) -> i32 {
    let n = usize::try_from(n).unwrap_or(0);
    // SAFETY: the kernel passes two arrays of `n` words.
    let (idx, dim) =
        unsafe { (std::slice::from_raw_parts(indices, n).to_vec(), std::slice::from_raw_parts(dims, n).to_vec()) };
    if let Ok(mut g) = INDEX_ERROR.lock() {
        *g = Some((code, idx, dim));
    }
    code
}

/// The message of run-time error `code` of a kernel: `template` with the values of the
/// out-of-bounds access the kernel recorded filled in ([`abi::INDEX_TEMPLATE`]), or
/// `template` itself when it is not an out-of-bounds error.
pub fn complete_message(code: i32, template: &str) -> String {
    let [index, dim, extent, indices] = abi::INDEX_TEMPLATE;
    if !template.contains(index) {
        return template.to_string();
    }
    let recorded = INDEX_ERROR.lock().ok().and_then(|mut g| g.take());
    let Some((_, idx, dims)) = recorded.filter(|(c, _, _)| *c == code) else {
        return template.to_string();
    };
    let k = idx.iter().zip(&dims).position(|(i, d)| *i < 0 || i >= d).unwrap_or(0);
    let all = idx.iter().map(i64::to_string).collect::<Vec<_>>().join(", ");
    template
        .replace(index, &idx.get(k).copied().unwrap_or(0).to_string())
        .replace(dim, &k.to_string())
        .replace(extent, &dims.get(k).copied().unwrap_or(0).to_string())
        .replace(indices, &all)
}

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
    let mut v: Vec<(&'static str, usize)> = vec![
        (abi::PARALLEL_FOR, relax_parallel_for as *const () as usize),
        (abi::INDEX_ERROR, relax_index_error as *const () as usize),
    ];
    v.extend(unary32.iter().map(|&(n, f)| (n, f as usize)));
    v.extend(unary64.iter().map(|&(n, f)| (n, f as usize)));
    v.push(("relax_nextafter_f32", relax_nextafter_f32 as *const () as usize));
    v.push(("relax_nextafter_f64", relax_nextafter_f64 as *const () as usize));
    debug_assert!(abi::MATH_HELPERS.iter().all(|h| v.iter().any(|(n, _)| n == h)));
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_bounds_messages_get_the_recorded_values() {
        let template = "PrimFunc `f`: index {index} out of bounds for dim {dim} (extent {extent}) of buffer `x` (indices [{indices}])";
        let (idx, dims) = ([2i64, -1, 0], [3i64, 4, 5]);
        assert_eq!(relax_index_error(7, idx.as_ptr(), dims.as_ptr(), 3), 7);
        assert_eq!(
            complete_message(7, template),
            "PrimFunc `f`: index -1 out of bounds for dim 1 (extent 4) of buffer `x` (indices [2, -1, 0])"
        );
        // Taken once; another code's record or a plain message is left alone.
        assert_eq!(complete_message(7, template), template);
        relax_index_error(3, idx.as_ptr(), dims.as_ptr(), 3);
        assert_eq!(complete_message(4, template), template);
        assert_eq!(complete_message(3, "assertion failed"), "assertion failed");
    }
}
