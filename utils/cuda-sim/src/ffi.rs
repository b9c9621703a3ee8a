//! The exported C functions: the part of the CUDA driver API that the CUDA engine
//! (`lib/relax-runtime/src/cuda/api.rs`) looks up in `libcuda.so.1`, with the same
//! names and signatures, over one process-wide [`Driver`].
//!
//! Every function checks its pointers for null, runs under `catch_unwind` (a panic
//! becomes `CUDA_ERROR_UNKNOWN` with its message, never an unwind into C) and, on an
//! error, keeps the detailed message for this thread so that `cuGetErrorString`
//! returns it (`<the driver's description>: <what exactly went wrong>`); for a code
//! without a detail it returns the driver's description. Handles are opaque numbers,
//! never dereferenced. The current context is per thread, as in CUDA.
#![expect(unsafe_code, reason = "these are the C entry points of the simulated driver")]

use std::cell::Cell;
use std::collections::HashSet;
use std::ffi::{CStr, CString, c_char, c_int, c_uint, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Mutex, MutexGuard};

use crate::driver::{CuError, CuResult, Driver, Failure};
use crate::exec::LaunchDims;

static DRIVER: Mutex<Driver> = Mutex::new(Driver::new());

/// Interned messages: `cuGetErrorString` hands out pointers that must stay valid.
static MESSAGES: Mutex<Option<HashSet<&'static CStr>>> = Mutex::new(None);

thread_local! {
    /// The current context of this thread (0: none).
    static CURRENT: Cell<u64> = const { Cell::new(0) };
    /// The last error this thread saw and its message.
    static LAST: Cell<Option<(i32, &'static CStr)>> = const { Cell::new(None) };
}

fn driver() -> MutexGuard<'static, Driver> {
    // A panic while the lock was held leaves consistent-enough state for a test tool.
    DRIVER.lock().unwrap_or_else(|e| e.into_inner())
}

fn intern(s: String) -> &'static CStr {
    let c = CString::new(s.replace('\0', " ")).unwrap_or_default();
    let mut set = MESSAGES.lock().unwrap_or_else(|e| e.into_inner());
    let set = set.get_or_insert_with(HashSet::new);
    if let Some(&old) = set.get(c.as_c_str()) {
        return old;
    }
    let leaked: &'static CStr = Box::leak(c.into_boxed_c_str());
    set.insert(leaked);
    leaked
}

/// Runs `f`, turning its result or panic into a `CUresult`.
fn guard(f: impl FnOnce() -> CuResult<()>) -> c_int {
    let r = catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|p| {
        let msg = p
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic".into());
        Err(Failure::new(CuError::Unknown, format!("the simulator failed: {msg}")))
    });
    match r {
        Ok(()) => 0,
        Err(f) => {
            let text = intern(format!("{}: {}", f.code.description(), f.detail));
            LAST.with(|l| l.set(Some((f.code as i32, text))));
            f.code as i32
        }
    }
}

fn null() -> Failure {
    Failure::new(CuError::InvalidValue, "a required pointer is null")
}

fn current() -> u64 {
    CURRENT.with(Cell::get)
}

fn handle(p: *mut c_void) -> u64 {
    p as usize as u64
}

fn to_handle(id: u64) -> *mut c_void {
    id as usize as *mut c_void
}

/// `cuInit`.
#[unsafe(no_mangle)]
pub extern "C" fn cuInit(flags: c_uint) -> c_int {
    guard(|| driver().init(flags))
}

/// `cuDeviceGetCount`.
///
/// # Safety
/// `count` is null or points to an `int`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDeviceGetCount(count: *mut c_int) -> c_int {
    guard(|| {
        let n = driver().device_count()?;
        // SAFETY: the caller passes a writable int or null (checked).
        unsafe { count.as_mut() }.map(|c| *c = n).ok_or_else(null)
    })
}

/// `cuDeviceGet`.
///
/// # Safety
/// `dev` is null or points to an `int`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDeviceGet(dev: *mut c_int, ordinal: c_int) -> c_int {
    guard(|| {
        let d = driver().device(ordinal)?;
        // SAFETY: as above.
        unsafe { dev.as_mut() }.map(|p| *p = d).ok_or_else(null)
    })
}

/// `cuDeviceGetName`: the name, truncated to `len - 1` bytes and NUL-terminated.
///
/// # Safety
/// `name` is null or holds `len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDeviceGetName(name: *mut c_char, len: c_int, dev: c_int) -> c_int {
    guard(|| {
        driver().device(dev)?;
        if name.is_null() || len <= 0 {
            return Err(null());
        }
        let bytes = crate::driver::DEVICE_NAME.as_bytes();
        let n = bytes.len().min(len as usize - 1);
        // SAFETY: the caller's buffer holds `len` bytes; `n + 1 <= len`.
        let out = unsafe { std::slice::from_raw_parts_mut(name.cast::<u8>(), n + 1) };
        out[..n].copy_from_slice(&bytes[..n]);
        out[n] = 0;
        Ok(())
    })
}

/// `cuDeviceGetAttribute`.
///
/// # Safety
/// `value` is null or points to an `int`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDeviceGetAttribute(value: *mut c_int, attr: c_int, dev: c_int) -> c_int {
    guard(|| {
        let v = driver().attribute(attr, dev)?;
        // SAFETY: as above.
        unsafe { value.as_mut() }.map(|p| *p = v).ok_or_else(null)
    })
}

/// `cuCtxCreate_v2`: the new context becomes current.
///
/// # Safety
/// `ctx` is null or points to a `CUcontext`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuCtxCreate_v2(ctx: *mut *mut c_void, _flags: c_uint, dev: c_int) -> c_int {
    guard(|| {
        if ctx.is_null() {
            return Err(null());
        }
        let id = driver().ctx_create(dev)?;
        CURRENT.with(|c| c.set(id));
        // SAFETY: checked non-null; the caller passes a writable handle.
        unsafe { *ctx = to_handle(id) };
        Ok(())
    })
}

/// `cuCtxDestroy_v2`.
#[unsafe(no_mangle)]
pub extern "C" fn cuCtxDestroy_v2(ctx: *mut c_void) -> c_int {
    guard(|| {
        let id = handle(ctx);
        driver().ctx_destroy(id)?;
        if current() == id {
            CURRENT.with(|c| c.set(0));
        }
        Ok(())
    })
}

/// `cuCtxSetCurrent` (null unsets).
#[unsafe(no_mangle)]
pub extern "C" fn cuCtxSetCurrent(ctx: *mut c_void) -> c_int {
    guard(|| {
        let id = handle(ctx);
        if id != 0 {
            driver().ctx_check(id)?;
        }
        CURRENT.with(|c| c.set(id));
        Ok(())
    })
}

/// `cuCtxSynchronize`: the current context's sticky error, if a launch failed.
#[unsafe(no_mangle)]
pub extern "C" fn cuCtxSynchronize() -> c_int {
    guard(|| driver().synchronize(current()))
}

/// `cuModuleLoadData` with a NUL-terminated PTX image.
///
/// # Safety
/// `module` is null or points to a `CUmodule`; `image` is null or a NUL-terminated
/// string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuModuleLoadData(module: *mut *mut c_void, image: *const c_void) -> c_int {
    guard(|| {
        if module.is_null() || image.is_null() {
            return Err(null());
        }
        // SAFETY: the caller passes a NUL-terminated image.
        let bytes = unsafe { CStr::from_ptr(image.cast::<c_char>()) }.to_bytes();
        if bytes.starts_with(b"\x7fELF") || bytes.starts_with(&[0x50, 0xed, 0x55, 0xba]) {
            return Err(Failure::new(CuError::InvalidImage, "the simulator runs PTX text, not cubin or fatbin images"));
        }
        let text = std::str::from_utf8(bytes)
            .map_err(|_| Failure::new(CuError::InvalidPtx, "the PTX image is not UTF-8 text"))?;
        let id = driver().module_load(current(), text)?;
        // SAFETY: checked non-null.
        unsafe { *module = to_handle(id) };
        Ok(())
    })
}

/// `cuModuleUnload`.
#[unsafe(no_mangle)]
pub extern "C" fn cuModuleUnload(module: *mut c_void) -> c_int {
    guard(|| driver().module_unload(handle(module)))
}

/// `cuModuleGetFunction`.
///
/// # Safety
/// `f` is null or points to a `CUfunction`; `name` is null or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuModuleGetFunction(f: *mut *mut c_void, module: *mut c_void, name: *const c_char) -> c_int {
    guard(|| {
        if f.is_null() || name.is_null() {
            return Err(null());
        }
        // SAFETY: the caller passes a NUL-terminated name.
        let name = unsafe { CStr::from_ptr(name) }.to_string_lossy().into_owned();
        let id = driver().get_function(handle(module), &name)?;
        // SAFETY: checked non-null.
        unsafe { *f = to_handle(id) };
        Ok(())
    })
}

/// `cuMemAlloc_v2`.
///
/// # Safety
/// `ptr` is null or points to a `CUdeviceptr`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemAlloc_v2(ptr: *mut u64, bytes: usize) -> c_int {
    guard(|| {
        if ptr.is_null() {
            return Err(null());
        }
        let p = driver().mem_alloc(current(), bytes as u64)?;
        // SAFETY: checked non-null.
        unsafe { *ptr = p };
        Ok(())
    })
}

/// `cuMemFree_v2`.
#[unsafe(no_mangle)]
pub extern "C" fn cuMemFree_v2(ptr: u64) -> c_int {
    guard(|| driver().mem_free(current(), ptr))
}

/// `cuMemcpyHtoD_v2`.
///
/// # Safety
/// `src` is null or holds `bytes` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemcpyHtoD_v2(dst: u64, src: *const c_void, bytes: usize) -> c_int {
    guard(|| {
        if src.is_null() {
            return Err(null());
        }
        // SAFETY: the caller's buffer holds `bytes` bytes.
        let data = unsafe { std::slice::from_raw_parts(src.cast::<u8>(), bytes) };
        driver().copy_to_device(current(), dst, data)
    })
}

/// `cuMemcpyDtoH_v2`.
///
/// # Safety
/// `dst` is null or holds `bytes` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemcpyDtoH_v2(dst: *mut c_void, src: u64, bytes: usize) -> c_int {
    guard(|| {
        if dst.is_null() {
            return Err(null());
        }
        // SAFETY: the caller's buffer holds `bytes` bytes.
        let out = unsafe { std::slice::from_raw_parts_mut(dst.cast::<u8>(), bytes) };
        driver().copy_to_host(current(), out, src)
    })
}

/// `cuLaunchKernel`: `params` holds one pointer per kernel parameter, to a value of
/// the parameter's size; `extra` is not supported. Runs the kernel before returning.
///
/// # Safety
/// `params` is null (a kernel without parameters) or holds a valid pointer for each
/// parameter of the kernel.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuLaunchKernel(
    f: *mut c_void,
    gx: c_uint,
    gy: c_uint,
    gz: c_uint,
    bx: c_uint,
    by: c_uint,
    bz: c_uint,
    shared: c_uint,
    _stream: *mut c_void,
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> c_int {
    guard(|| {
        if !extra.is_null() {
            return Err(Failure::new(CuError::NotSupported, "the simulator takes kernel parameters, not `extra`"));
        }
        let ctx = current();
        let f = handle(f);
        let (list, size) = driver().params(f)?;
        let mut buf = vec![0u8; size];
        if !list.is_empty() && params.is_null() {
            return Err(Failure::new(CuError::InvalidValue, format!("the kernel takes {} parameters", list.len())));
        }
        for (i, p) in list.iter().enumerate() {
            // SAFETY: the caller passes one pointer per parameter.
            let ptr = unsafe { *params.add(i) };
            if ptr.is_null() {
                return Err(Failure::new(CuError::InvalidValue, format!("parameter {i} (`{}`) is null", p.name)));
            }
            // SAFETY: it points to a value of the parameter's size.
            let v = unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), p.size) };
            buf[p.offset..p.offset + p.size].copy_from_slice(v);
        }
        let dims = LaunchDims { grid: [gx, gy, gz], block: [bx, by, bz], dynamic_shared: shared };
        driver().launch(ctx, f, &dims, &buf)
    })
}

/// `cuGetErrorName`.
///
/// # Safety
/// `out` is null or points to a `const char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuGetErrorName(code: c_int, out: *mut *const c_char) -> c_int {
    if out.is_null() {
        return CuError::InvalidValue as c_int;
    }
    let name: &'static CStr = if code == 0 {
        c"CUDA_SUCCESS"
    } else {
        match CuError::from_code(code) {
            Some(e) => e.name(),
            None => {
                // SAFETY: checked non-null.
                unsafe { *out = std::ptr::null() };
                return CuError::InvalidValue as c_int;
            }
        }
    };
    // SAFETY: checked non-null; the string is static.
    unsafe { *out = name.as_ptr() };
    0
}

/// `cuGetErrorString`: the detailed message of this thread's last error with this
/// code, else the driver's description.
///
/// # Safety
/// `out` is null or points to a `const char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuGetErrorString(code: c_int, out: *mut *const c_char) -> c_int {
    if out.is_null() {
        return CuError::InvalidValue as c_int;
    }
    let text: &'static CStr = if code == 0 {
        c"no error"
    } else {
        match (LAST.with(Cell::get), CuError::from_code(code)) {
            (Some((c, text)), _) if c == code => text,
            (_, Some(e)) => intern(e.description().to_string()),
            (_, None) => {
                // SAFETY: checked non-null.
                unsafe { *out = std::ptr::null() };
                return CuError::InvalidValue as c_int;
            }
        }
    };
    // SAFETY: checked non-null; the string lives as long as the library.
    unsafe { *out = text.as_ptr() };
    0
}
