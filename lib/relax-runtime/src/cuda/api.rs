//! The part of the CUDA driver API the engine uses, loaded at run time with
//! `libloading` from `libcuda.so.1`, or from the library `RELAX_CUDA_DRIVER` names (such
//! as the PTX simulator `librelax_cuda_sim.so`, `docs/gpu.md`): each call is wrapped in a
//! safe method that turns a `CUresult` into a message (`cuGetErrorName`:
//! `cuGetErrorString`).
#![expect(unsafe_code, reason = "CUDA driver calls are foreign functions")]

use std::ffi::{CStr, CString, OsStr, OsString, c_char, c_int, c_uint, c_void};

/// `CUcontext`.
pub type CuContext = *mut c_void;
/// `CUmodule`.
pub type CuModule = *mut c_void;
/// `CUfunction`.
pub type CuFunction = *mut c_void;
/// `CUdeviceptr`.
pub type CuDevicePtr = u64;
type CuResult = c_int;
type CuDevice = c_int;

const CUDA_SUCCESS: CuResult = 0;
const CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: c_int = 75;
const CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: c_int = 76;

/// Why CUDA cannot be used on this machine (no driver library, no device).
#[derive(Debug, Clone)]
pub struct Unavailable(pub String);

impl std::fmt::Display for Unavailable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The driver's entry points.
pub struct Api {
    _lib: libloading::Library,
    init: unsafe extern "C" fn(c_uint) -> CuResult,
    device_get_count: unsafe extern "C" fn(*mut c_int) -> CuResult,
    device_get: unsafe extern "C" fn(*mut CuDevice, c_int) -> CuResult,
    device_get_name: unsafe extern "C" fn(*mut c_char, c_int, CuDevice) -> CuResult,
    device_get_attribute: unsafe extern "C" fn(*mut c_int, c_int, CuDevice) -> CuResult,
    ctx_create: unsafe extern "C" fn(*mut CuContext, c_uint, CuDevice) -> CuResult,
    ctx_destroy: unsafe extern "C" fn(CuContext) -> CuResult,
    ctx_set_current: unsafe extern "C" fn(CuContext) -> CuResult,
    ctx_synchronize: unsafe extern "C" fn() -> CuResult,
    module_load_data: unsafe extern "C" fn(*mut CuModule, *const c_void) -> CuResult,
    module_unload: unsafe extern "C" fn(CuModule) -> CuResult,
    module_get_function: unsafe extern "C" fn(*mut CuFunction, CuModule, *const c_char) -> CuResult,
    mem_alloc: unsafe extern "C" fn(*mut CuDevicePtr, usize) -> CuResult,
    mem_free: unsafe extern "C" fn(CuDevicePtr) -> CuResult,
    memcpy_htod: unsafe extern "C" fn(CuDevicePtr, *const c_void, usize) -> CuResult,
    memcpy_dtoh: unsafe extern "C" fn(*mut c_void, CuDevicePtr, usize) -> CuResult,
    launch_kernel: unsafe extern "C" fn(
        CuFunction,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        *mut c_void,
        *mut *mut c_void,
        *mut *mut c_void,
    ) -> CuResult,
    get_error_name: unsafe extern "C" fn(CuResult, *mut *const c_char) -> CuResult,
    get_error_string: unsafe extern "C" fn(CuResult, *mut *const c_char) -> CuResult,
}

/// The environment variable that names another driver library.
pub const DRIVER_ENV: &str = "RELAX_CUDA_DRIVER";

/// The driver library to open: `explicit` when given, else the value of
/// `RELAX_CUDA_DRIVER` (`env`) when set and not empty, else `libcuda.so.1`.
pub fn driver_path(explicit: Option<&OsStr>, env: Option<OsString>) -> OsString {
    match (explicit, env) {
        (Some(p), _) => p.to_os_string(),
        (None, Some(e)) if !e.is_empty() => e,
        _ => OsString::from("libcuda.so.1"),
    }
}

/// Looks up `name` in `lib` (opened from `path`) as a function pointer of type `T`.
///
/// # Safety
/// `T` must be the function's C signature.
unsafe fn sym<T: Copy>(lib: &libloading::Library, path: &OsStr, name: &str) -> Result<T, Unavailable> {
    // SAFETY: the caller gives the symbol's true type.
    unsafe { lib.get::<T>(name.as_bytes()) }
        .map(|s| *s)
        .map_err(|e| Unavailable(format!("{} has no `{name}`: {e}", path.to_string_lossy())))
}

impl Api {
    /// Opens the driver library ([`driver_path`]) and initializes the driver.
    pub fn load(driver: Option<&OsStr>) -> Result<Api, Unavailable> {
        let path = driver_path(driver, std::env::var_os(DRIVER_ENV));
        // SAFETY: loading a CUDA driver library (the system's or one the user named),
        // whose initializers are sound.
        let lib = unsafe { libloading::Library::new(&path) }.map_err(|e| {
            Unavailable(format!("cannot load the CUDA driver library {} ({e})", path.to_string_lossy()))
        })?;
        let p = path.as_os_str();
        // SAFETY: each type below is the C signature of the named driver function (the
        // `_v2` names are the 64-bit ones `cuda.h` maps the plain names to).
        let api = unsafe {
            Api {
                init: sym(&lib, p, "cuInit")?,
                device_get_count: sym(&lib, p, "cuDeviceGetCount")?,
                device_get: sym(&lib, p, "cuDeviceGet")?,
                device_get_name: sym(&lib, p, "cuDeviceGetName")?,
                device_get_attribute: sym(&lib, p, "cuDeviceGetAttribute")?,
                ctx_create: sym(&lib, p, "cuCtxCreate_v2")?,
                ctx_destroy: sym(&lib, p, "cuCtxDestroy_v2")?,
                ctx_set_current: sym(&lib, p, "cuCtxSetCurrent")?,
                ctx_synchronize: sym(&lib, p, "cuCtxSynchronize")?,
                module_load_data: sym(&lib, p, "cuModuleLoadData")?,
                module_unload: sym(&lib, p, "cuModuleUnload")?,
                module_get_function: sym(&lib, p, "cuModuleGetFunction")?,
                mem_alloc: sym(&lib, p, "cuMemAlloc_v2")?,
                mem_free: sym(&lib, p, "cuMemFree_v2")?,
                memcpy_htod: sym(&lib, p, "cuMemcpyHtoD_v2")?,
                memcpy_dtoh: sym(&lib, p, "cuMemcpyDtoH_v2")?,
                launch_kernel: sym(&lib, p, "cuLaunchKernel")?,
                get_error_name: sym(&lib, p, "cuGetErrorName")?,
                get_error_string: sym(&lib, p, "cuGetErrorString")?,
                _lib: lib,
            }
        };
        // SAFETY: cuInit takes flags 0.
        api.check(unsafe { (api.init)(0) }).map_err(|e| Unavailable(format!("cuInit failed: {e}")))?;
        Ok(api)
    }

    /// A `CUresult` as `Ok` or as `NAME: description`.
    fn check(&self, r: CuResult) -> Result<(), String> {
        if r == CUDA_SUCCESS {
            return Ok(());
        }
        let text = |f: unsafe extern "C" fn(CuResult, *mut *const c_char) -> CuResult| {
            let mut p: *const c_char = std::ptr::null();
            // SAFETY: the driver stores a pointer to a static string, or fails.
            if unsafe { f(r, &mut p) } == CUDA_SUCCESS && !p.is_null() {
                // SAFETY: a NUL-terminated static string.
                Some(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
            } else {
                None
            }
        };
        let name = text(self.get_error_name).unwrap_or_else(|| format!("CUDA error {r}"));
        Err(match text(self.get_error_string) {
            Some(s) => format!("{name}: {s}"),
            None => name,
        })
    }

    /// Device 0: its handle, name and compute capability.
    pub fn first_device(&self) -> Result<(c_int, String, (i32, i32)), Unavailable> {
        let mut n = 0;
        // SAFETY: writes one int.
        self.check(unsafe { (self.device_get_count)(&mut n) }).map_err(Unavailable)?;
        if n == 0 {
            return Err(Unavailable("the NVIDIA driver reports no CUDA device".into()));
        }
        let mut dev = 0;
        // SAFETY: writes one device handle; ordinal 0 exists.
        self.check(unsafe { (self.device_get)(&mut dev, 0) }).map_err(Unavailable)?;
        let mut name = [0 as c_char; 256];
        // SAFETY: the buffer holds 256 bytes.
        self.check(unsafe { (self.device_get_name)(name.as_mut_ptr(), 256, dev) }).map_err(Unavailable)?;
        // SAFETY: the driver NUL-terminates the name within the buffer.
        let name = unsafe { CStr::from_ptr(name.as_ptr()) }.to_string_lossy().into_owned();
        let (mut major, mut minor) = (0, 0);
        // SAFETY: each call writes one int.
        unsafe {
            self.check((self.device_get_attribute)(&mut major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev))
                .map_err(Unavailable)?;
            self.check((self.device_get_attribute)(&mut minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev))
                .map_err(Unavailable)?;
        }
        Ok((dev, name, (major, minor)))
    }

    /// A new context on `dev`, current on this thread.
    pub fn create_context(&self, dev: c_int) -> Result<CuContext, String> {
        let mut ctx = std::ptr::null_mut();
        // SAFETY: writes one context handle.
        self.check(unsafe { (self.ctx_create)(&mut ctx, 0, dev) }).map_err(|e| format!("cuCtxCreate failed: {e}"))?;
        Ok(ctx)
    }

    /// Makes `ctx` current on this thread.
    pub fn set_current(&self, ctx: CuContext) -> Result<(), String> {
        // SAFETY: a live context.
        self.check(unsafe { (self.ctx_set_current)(ctx) }).map_err(|e| format!("cuCtxSetCurrent failed: {e}"))
    }

    /// Destroys a context (errors are ignored: nothing is left to do about them).
    pub fn destroy_context(&self, ctx: CuContext) {
        // SAFETY: a live context that nothing uses afterwards.
        let _ = unsafe { (self.ctx_destroy)(ctx) };
    }

    /// Loads PTX text (JIT-compiled by the driver).
    pub fn load_module(&self, ptx: &CStr) -> Result<CuModule, String> {
        let mut m = std::ptr::null_mut();
        // SAFETY: a NUL-terminated PTX image; writes one module handle.
        self.check(unsafe { (self.module_load_data)(&mut m, ptx.as_ptr().cast()) })
            .map_err(|e| format!("cuModuleLoadData failed: {e}"))?;
        Ok(m)
    }

    /// Unloads a module.
    pub fn unload_module(&self, m: CuModule) {
        // SAFETY: a loaded module that nothing uses afterwards.
        let _ = unsafe { (self.module_unload)(m) };
    }

    /// The kernel `name` of module `m`.
    pub fn function(&self, m: CuModule, name: &str) -> Result<CuFunction, String> {
        let c = CString::new(name).map_err(|_| "a kernel name holds a NUL byte".to_string())?;
        let mut f = std::ptr::null_mut();
        // SAFETY: a loaded module and a NUL-terminated name; writes one handle.
        self.check(unsafe { (self.module_get_function)(&mut f, m, c.as_ptr()) })
            .map_err(|e| format!("no kernel `{name}` in the PTX module: {e}"))?;
        Ok(f)
    }

    /// `bytes` of device memory.
    pub fn alloc(&self, bytes: usize) -> Result<CuDevicePtr, String> {
        let mut p = 0;
        // SAFETY: writes one device pointer.
        self.check(unsafe { (self.mem_alloc)(&mut p, bytes) })
            .map_err(|e| format!("CUDA: cannot allocate {bytes} bytes: {e}"))?;
        Ok(p)
    }

    /// Frees device memory.
    pub fn free(&self, p: CuDevicePtr) {
        // SAFETY: memory from `alloc` that nothing uses afterwards.
        let _ = unsafe { (self.mem_free)(p) };
    }

    /// Copies `data` to device memory at `p` (at least as long).
    pub fn copy_to_device(&self, p: CuDevicePtr, data: &[u8]) -> Result<(), String> {
        if data.is_empty() {
            return Ok(());
        }
        // SAFETY: `p` holds at least `data.len()` bytes.
        self.check(unsafe { (self.memcpy_htod)(p, data.as_ptr().cast(), data.len()) })
            .map_err(|e| format!("CUDA: copy to the device failed: {e}"))
    }

    /// Copies device memory at `p` into `out`.
    pub fn copy_to_host(&self, out: &mut [u8], p: CuDevicePtr) -> Result<(), String> {
        if out.is_empty() {
            return Ok(());
        }
        // SAFETY: `p` holds at least `out.len()` bytes.
        self.check(unsafe { (self.memcpy_dtoh)(out.as_mut_ptr().cast(), p, out.len()) })
            .map_err(|e| format!("CUDA: copy from the device failed: {e}"))
    }

    /// Launches `f` on `blocks` x `threads` threads with the parameters `params` (one
    /// pointer to each value, in the kernel's parameter order), on the default stream.
    pub fn launch(&self, f: CuFunction, blocks: u32, threads: u32, params: &mut [*mut c_void]) -> Result<(), String> {
        // SAFETY: `params` points to one value of the right size per kernel parameter,
        // alive until the call returns (the driver copies them at launch).
        self.check(unsafe {
            (self.launch_kernel)(
                f,
                blocks,
                1,
                1,
                threads,
                1,
                1,
                0,
                std::ptr::null_mut(),
                params.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        })
        .map_err(|e| format!("cuLaunchKernel failed: {e}"))
    }

    /// Waits for the launched kernels; their error, if any.
    pub fn synchronize(&self) -> Result<(), String> {
        // SAFETY: no arguments.
        self.check(unsafe { (self.ctx_synchronize)() })
    }
}

#[cfg(test)]
mod tests {
    use std::ffi::{OsStr, OsString};

    use super::driver_path;

    #[test]
    fn the_driver_library_is_the_option_then_the_environment_then_libcuda() {
        let env = || Some(OsString::from("/env/libsim.so"));
        assert_eq!(driver_path(Some(OsStr::new("/opt/lib.so")), env()), "/opt/lib.so");
        assert_eq!(driver_path(None, env()), "/env/libsim.so");
        assert_eq!(driver_path(None, Some(OsString::new())), "libcuda.so.1");
        assert_eq!(driver_path(None, None), "libcuda.so.1");
    }
}
