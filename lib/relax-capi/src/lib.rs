//! The C API of the relax runtime (`include/relax.h`, `docs/library.md`): a compiled
//! library ([`relax_runtime::library::Program`]) opened, called and read from C.
//!
//! Built as `librelax_runtime_c.so` / `.a` (no LLVM, no parser). Every entry point
//! checks its pointers, turns failures into a message for `relax_last_error` and a
//! NULL or non-zero result, and never unwinds into C (a panic becomes an error).
#![expect(unsafe_code, reason = "a C API takes and returns raw pointers")]

use std::cell::RefCell;
use std::ffi::{CStr, CString, c_char, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};

use relax_ir::DataType;
use relax_runtime::library::Program;
use relax_runtime::{Tensor, Value};

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

fn set_error(msg: impl Into<String>) {
    let s = msg.into().replace('\0', " ");
    LAST_ERROR.with(|e| *e.borrow_mut() = CString::new(s).unwrap_or_default());
}

/// Runs `f`, turning an error or a panic into `fallback` and a message.
fn guard<T>(fallback: T, f: impl FnOnce() -> Result<T, String>) -> T {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => v,
        Ok(Err(e)) => {
            set_error(e);
            fallback
        }
        Err(_) => {
            set_error("internal error: the relax runtime panicked");
            fallback
        }
    }
}

/// A C string argument.
///
/// # Safety
/// `p` is NULL or a NUL-terminated string.
unsafe fn str_arg<'a>(p: *const c_char, what: &str) -> Result<&'a str, String> {
    if p.is_null() {
        return Err(format!("{what} is NULL"));
    }
    // SAFETY: the caller passes a NUL-terminated string.
    unsafe { CStr::from_ptr(p) }.to_str().map_err(|_| format!("{what} is not UTF-8"))
}

/// A loaded program and the C strings of its function names.
pub struct RelaxProgram {
    program: Program,
    names: Vec<CString>,
}

/// A tensor and its dtype's name as a C string.
pub struct RelaxTensor {
    tensor: Tensor,
    dtype_name: CString,
}

impl RelaxTensor {
    fn new(tensor: Tensor) -> *mut RelaxTensor {
        let dtype_name = CString::new(tensor.dtype.to_string()).unwrap_or_default();
        Box::into_raw(Box::new(RelaxTensor { tensor, dtype_name }))
    }
}

/// The message of the last failure on this thread.
#[unsafe(no_mangle)]
pub extern "C" fn relax_last_error() -> *const c_char {
    LAST_ERROR.with(|e| e.borrow().as_ptr())
}

/// Opens a library; NULL on failure.
///
/// # Safety
/// `path` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn relax_program_open(path: *const c_char, threads: i32) -> *mut RelaxProgram {
    guard(std::ptr::null_mut(), || {
        // SAFETY: as documented.
        let path = unsafe { str_arg(path, "the library path") }?;
        let threads = usize::try_from(threads).map_err(|_| format!("threads must be 0 or more, not {threads}"))?;
        let program = Program::open(std::path::Path::new(path), threads).map_err(|e| e.to_string())?;
        let names = program.function_names().into_iter().map(|n| CString::new(n).unwrap_or_default()).collect();
        Ok(Box::into_raw(Box::new(RelaxProgram { program, names })))
    })
}

/// Closes a program.
///
/// # Safety
/// `p` is NULL or a program from `relax_program_open`, not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn relax_program_close(p: *mut RelaxProgram) {
    if !p.is_null() {
        // SAFETY: as documented.
        drop(unsafe { Box::from_raw(p) });
    }
}

/// The number of functions.
///
/// # Safety
/// `p` is NULL or a live program.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn relax_program_function_count(p: *const RelaxProgram) -> usize {
    // SAFETY: as documented.
    unsafe { p.as_ref() }.map_or(0, |p| p.names.len())
}

/// The name of function `i`, or NULL.
///
/// # Safety
/// `p` is NULL or a live program.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn relax_program_function_name(p: *const RelaxProgram, i: usize) -> *const c_char {
    // SAFETY: as documented.
    match unsafe { p.as_ref() }.and_then(|p| p.names.get(i)) {
        Some(n) => n.as_ptr(),
        None => std::ptr::null(),
    }
}

/// Calls a function; 0 on success.
///
/// # Safety
/// `p` is a live program, `name` a C string, `args` points to `n_args` live tensors (or
/// `n_args` is 0), `outs` to `max_outs` writable slots (or `max_outs` is 0), `n_outs` is
/// writable or NULL.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn relax_program_call(
    p: *mut RelaxProgram,
    name: *const c_char,
    args: *const *mut RelaxTensor,
    n_args: usize,
    outs: *mut *mut RelaxTensor,
    max_outs: usize,
    n_outs: *mut usize,
) -> i32 {
    guard(1, || {
        // SAFETY: as documented.
        let p = unsafe { p.as_mut() }.ok_or("the program is NULL")?;
        // SAFETY: as documented.
        let name = unsafe { str_arg(name, "the function name") }?;
        let mut values = Vec::with_capacity(n_args);
        for i in 0..n_args {
            // SAFETY: `args` holds `n_args` tensor pointers.
            let t = unsafe { (*args.add(i)).as_ref() }.ok_or_else(|| format!("argument {i} is NULL"))?;
            values.push(Value::Tensor(t.tensor.deep_copy()));
        }
        let result = p.program.call(name, values).map_err(|e| p.program.render_error(&e).trim_end().to_string())?;
        let mut tensors = Vec::new();
        flatten(&result, &mut tensors)?;
        if !n_outs.is_null() {
            // SAFETY: as documented.
            unsafe { n_outs.write(tensors.len()) };
        }
        if tensors.len() > max_outs || (max_outs > 0 && outs.is_null()) {
            return Err(format!("`{name}` returns {} tensors; room was given for {max_outs}", tensors.len()));
        }
        for (i, t) in tensors.into_iter().enumerate() {
            // SAFETY: `outs` has `max_outs` slots.
            unsafe { outs.add(i).write(RelaxTensor::new(t)) };
        }
        Ok(0)
    })
}

/// The tensors of a result, tuples flattened in order.
fn flatten(v: &Value, out: &mut Vec<Tensor>) -> Result<(), String> {
    match v {
        Value::Tensor(t) => out.push(t.deep_copy()),
        Value::Tuple(fs) => fs.iter().try_for_each(|f| flatten(f, out))?,
        Value::Prim(s) => out.push(Tensor::from_scalars(&[], s.dtype(), [*s])),
        Value::Shape(dims) => out.push(Tensor::from_scalars(
            &[dims.len() as i64],
            DataType::INT64,
            dims.iter().map(|&d| relax_runtime::Scalar::int(DataType::INT64, d)),
        )),
        other => return Err(format!("a result of kind {} cannot be returned to C", other.kind())),
    }
    Ok(())
}

/// A new tensor; NULL on failure.
///
/// # Safety
/// `dtype` is a C string, `shape` points to `ndim` dims (or `ndim` is 0), `data` is NULL
/// or points to the tensor's bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn relax_tensor_new(
    dtype: *const c_char,
    shape: *const i64,
    ndim: i32,
    data: *const c_void,
) -> *mut RelaxTensor {
    guard(std::ptr::null_mut(), || {
        // SAFETY: as documented.
        let name = unsafe { str_arg(dtype, "the dtype") }?;
        let dt = DataType::parse(name).ok_or_else(|| format!("unknown dtype `{name}`"))?;
        let ndim = usize::try_from(ndim).map_err(|_| format!("ndim must be 0 or more, not {ndim}"))?;
        if ndim > 0 && shape.is_null() {
            return Err("the shape is NULL".into());
        }
        // SAFETY: `shape` holds `ndim` dims.
        let dims = if ndim == 0 { Vec::new() } else { unsafe { std::slice::from_raw_parts(shape, ndim) }.to_vec() };
        if let Some(d) = dims.iter().find(|&&d| d < 0) {
            return Err(format!("a dim is negative ({d})"));
        }
        let count = dims.iter().try_fold(1usize, |a, &d| a.checked_mul(d as usize));
        let bytes = count.and_then(|c| c.checked_mul(dt.bytes() as usize)).filter(|&b| b <= isize::MAX as usize);
        bytes.ok_or("the tensor is too large")?;
        let t = Tensor::zeros(&dims, dt);
        if !data.is_null() {
            let n = t.nbytes();
            // SAFETY: `data` holds the tensor's bytes.
            let src = unsafe { std::slice::from_raw_parts(data.cast::<u8>(), n) };
            t.data.borrow_mut()[..n].copy_from_slice(src);
        }
        Ok(RelaxTensor::new(t))
    })
}

/// Frees a tensor.
///
/// # Safety
/// `t` is NULL or a tensor from this API, not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn relax_tensor_free(t: *mut RelaxTensor) {
    if !t.is_null() {
        // SAFETY: as documented.
        drop(unsafe { Box::from_raw(t) });
    }
}

/// The rank (-1 for NULL).
///
/// # Safety
/// `t` is NULL or a live tensor.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn relax_tensor_ndim(t: *const RelaxTensor) -> i32 {
    // SAFETY: as documented.
    unsafe { t.as_ref() }.map_or(-1, |t| t.tensor.shape.len() as i32)
}

/// The dims.
///
/// # Safety
/// `t` is NULL or a live tensor.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn relax_tensor_shape(t: *const RelaxTensor) -> *const i64 {
    // SAFETY: as documented.
    unsafe { t.as_ref() }.map_or(std::ptr::null(), |t| t.tensor.shape.as_ptr())
}

/// The dtype's name.
///
/// # Safety
/// `t` is NULL or a live tensor.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn relax_tensor_dtype(t: *const RelaxTensor) -> *const c_char {
    // SAFETY: as documented.
    unsafe { t.as_ref() }.map_or(std::ptr::null(), |t| t.dtype_name.as_ptr())
}

/// The size of the tensor's bytes.
///
/// # Safety
/// `t` is NULL or a live tensor.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn relax_tensor_nbytes(t: *const RelaxTensor) -> usize {
    // SAFETY: as documented.
    unsafe { t.as_ref() }.map_or(0, |t| t.tensor.nbytes())
}

/// Copies the tensor's bytes to `out`.
///
/// # Safety
/// `t` is NULL or a live tensor; `out` has room for its bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn relax_tensor_read(t: *const RelaxTensor, out: *mut c_void) {
    // SAFETY: as documented.
    let Some(t) = (unsafe { t.as_ref() }) else { return };
    if out.is_null() {
        return;
    }
    let bytes = t.tensor.bytes();
    // SAFETY: `out` has room for the tensor's bytes.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), out.cast::<u8>(), bytes.len()) };
}

#[cfg(test)]
mod tests {
    use super::*;

    fn last_error() -> String {
        // SAFETY: `relax_last_error` returns a live NUL-terminated string.
        unsafe { CStr::from_ptr(relax_last_error()) }.to_string_lossy().into_owned()
    }

    #[test]
    fn failures_are_null_with_a_message() {
        // SAFETY: valid C strings and NULLs, as the API allows.
        unsafe {
            assert!(relax_program_open(c"/nonexistent/model.so".as_ptr(), 0).is_null());
            assert!(last_error().contains("no such file"), "{}", last_error());
            assert!(relax_program_open(std::ptr::null(), 0).is_null());
            assert!(last_error().contains("the library path is NULL"));
            assert!(relax_program_open(c"x.so".as_ptr(), -1).is_null());
            assert!(last_error().contains("threads must be 0 or more"));
            assert!(relax_tensor_new(c"float33".as_ptr(), std::ptr::null(), 0, std::ptr::null()).is_null());
            assert!(last_error().contains("unknown dtype `float33`"));
            let dims = [2i64, -1];
            assert!(relax_tensor_new(c"float32".as_ptr(), dims.as_ptr(), 2, std::ptr::null()).is_null());
            assert!(last_error().contains("negative"));
            let huge = [i64::MAX, i64::MAX];
            assert!(relax_tensor_new(c"float32".as_ptr(), huge.as_ptr(), 2, std::ptr::null()).is_null());
            assert!(last_error().contains("too large"));
            let mut n = 7usize;
            assert_eq!(
                relax_program_call(
                    std::ptr::null_mut(),
                    c"main".as_ptr(),
                    std::ptr::null(),
                    0,
                    std::ptr::null_mut(),
                    0,
                    &mut n
                ),
                1
            );
            assert!(last_error().contains("the program is NULL"));
            assert_eq!(relax_program_function_count(std::ptr::null()), 0);
            relax_program_close(std::ptr::null_mut());
            relax_tensor_free(std::ptr::null_mut());
        }
    }

    #[test]
    fn tensors_round_trip() {
        let dims = [2i64, 3];
        let data: Vec<f32> = (0..6).map(|i| i as f32 * 0.5).collect();
        // SAFETY: `dims` and `data` are live and sized as declared.
        unsafe {
            let t = relax_tensor_new(c"float32".as_ptr(), dims.as_ptr(), 2, data.as_ptr().cast());
            assert!(!t.is_null());
            assert_eq!(relax_tensor_ndim(t), 2);
            assert_eq!(std::slice::from_raw_parts(relax_tensor_shape(t), 2), &dims);
            assert_eq!(CStr::from_ptr(relax_tensor_dtype(t)).to_str().unwrap(), "float32");
            assert_eq!(relax_tensor_nbytes(t), 24);
            let mut back = [0f32; 6];
            relax_tensor_read(t, back.as_mut_ptr().cast());
            assert_eq!(back.to_vec(), data);
            relax_tensor_free(t);
        }
    }
}
