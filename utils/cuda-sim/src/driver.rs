//! The simulated driver: one device, contexts, modules, functions and memory, with
//! the CUDA driver API's error codes. [`Driver`] is plain safe Rust (the unit tests use
//! it directly); `crate::ffi` exports it as the C functions of `libcuda.so.1`.
//!
//! As on a GPU, a launch is asynchronous in what it reports: a configuration error is
//! the result of `cuLaunchKernel`, but a fault while the kernel runs (an illegal or
//! misaligned address, `trap`, a deadlock, running past the instruction limit
//! `RELAX_CUDA_SIM_MAX_STEPS`) becomes the context's sticky error, which
//! `cuCtxSynchronize` and every later call in that context return. Releasing (freeing
//! memory, unloading modules, destroying the context) still works.

use std::collections::BTreeMap;
use std::ffi::CStr;

use crate::decode::{Param, Program};
use crate::exec::{FaultKind, LaunchDims};
use crate::memory::{DeviceMemory, MemError};

/// The device's name.
pub const DEVICE_NAME: &str = "relax PTX simulator";
/// The device's compute capability.
pub const COMPUTE_CAPABILITY: (i32, i32) = (8, 0);

/// A `CUresult` other than `CUDA_SUCCESS`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(i32)]
pub enum CuError {
    /// `CUDA_ERROR_INVALID_VALUE`.
    InvalidValue = 1,
    /// `CUDA_ERROR_OUT_OF_MEMORY`.
    OutOfMemory = 2,
    /// `CUDA_ERROR_NOT_INITIALIZED`.
    NotInitialized = 3,
    /// `CUDA_ERROR_INVALID_DEVICE`.
    InvalidDevice = 101,
    /// `CUDA_ERROR_INVALID_IMAGE`.
    InvalidImage = 200,
    /// `CUDA_ERROR_INVALID_CONTEXT`.
    InvalidContext = 201,
    /// `CUDA_ERROR_INVALID_PTX`.
    InvalidPtx = 218,
    /// `CUDA_ERROR_UNSUPPORTED_PTX_VERSION`.
    UnsupportedPtxVersion = 222,
    /// `CUDA_ERROR_INVALID_HANDLE`.
    InvalidHandle = 400,
    /// `CUDA_ERROR_NOT_FOUND`.
    NotFound = 500,
    /// `CUDA_ERROR_ILLEGAL_ADDRESS`.
    IllegalAddress = 700,
    /// `CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES`.
    LaunchOutOfResources = 701,
    /// `CUDA_ERROR_LAUNCH_TIMEOUT`.
    LaunchTimeout = 702,
    /// `CUDA_ERROR_ILLEGAL_INSTRUCTION`.
    IllegalInstruction = 715,
    /// `CUDA_ERROR_MISALIGNED_ADDRESS`.
    MisalignedAddress = 716,
    /// `CUDA_ERROR_LAUNCH_FAILED`.
    LaunchFailed = 719,
    /// `CUDA_ERROR_NOT_SUPPORTED`.
    NotSupported = 801,
    /// `CUDA_ERROR_UNKNOWN`.
    Unknown = 999,
}

impl CuError {
    /// Every error, for lookups by code.
    pub const ALL: [CuError; 18] = [
        CuError::InvalidValue,
        CuError::OutOfMemory,
        CuError::NotInitialized,
        CuError::InvalidDevice,
        CuError::InvalidImage,
        CuError::InvalidContext,
        CuError::InvalidPtx,
        CuError::UnsupportedPtxVersion,
        CuError::InvalidHandle,
        CuError::NotFound,
        CuError::IllegalAddress,
        CuError::LaunchOutOfResources,
        CuError::LaunchTimeout,
        CuError::IllegalInstruction,
        CuError::MisalignedAddress,
        CuError::LaunchFailed,
        CuError::NotSupported,
        CuError::Unknown,
    ];

    /// The error with code `code`.
    pub fn from_code(code: i32) -> Option<CuError> {
        CuError::ALL.into_iter().find(|e| *e as i32 == code)
    }

    /// `cuGetErrorName`.
    pub fn name(self) -> &'static CStr {
        match self {
            CuError::InvalidValue => c"CUDA_ERROR_INVALID_VALUE",
            CuError::OutOfMemory => c"CUDA_ERROR_OUT_OF_MEMORY",
            CuError::NotInitialized => c"CUDA_ERROR_NOT_INITIALIZED",
            CuError::InvalidDevice => c"CUDA_ERROR_INVALID_DEVICE",
            CuError::InvalidImage => c"CUDA_ERROR_INVALID_IMAGE",
            CuError::InvalidContext => c"CUDA_ERROR_INVALID_CONTEXT",
            CuError::InvalidPtx => c"CUDA_ERROR_INVALID_PTX",
            CuError::UnsupportedPtxVersion => c"CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
            CuError::InvalidHandle => c"CUDA_ERROR_INVALID_HANDLE",
            CuError::NotFound => c"CUDA_ERROR_NOT_FOUND",
            CuError::IllegalAddress => c"CUDA_ERROR_ILLEGAL_ADDRESS",
            CuError::LaunchOutOfResources => c"CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
            CuError::LaunchTimeout => c"CUDA_ERROR_LAUNCH_TIMEOUT",
            CuError::IllegalInstruction => c"CUDA_ERROR_ILLEGAL_INSTRUCTION",
            CuError::MisalignedAddress => c"CUDA_ERROR_MISALIGNED_ADDRESS",
            CuError::LaunchFailed => c"CUDA_ERROR_LAUNCH_FAILED",
            CuError::NotSupported => c"CUDA_ERROR_NOT_SUPPORTED",
            CuError::Unknown => c"CUDA_ERROR_UNKNOWN",
        }
    }

    /// `cuGetErrorString` (the driver's wording).
    pub fn description(self) -> &'static str {
        match self {
            CuError::InvalidValue => "invalid argument",
            CuError::OutOfMemory => "out of memory",
            CuError::NotInitialized => "initialization error",
            CuError::InvalidDevice => "invalid device ordinal",
            CuError::InvalidImage => "device kernel image is invalid",
            CuError::InvalidContext => "invalid device context",
            CuError::InvalidPtx => "a PTX JIT compilation failed",
            CuError::UnsupportedPtxVersion => "the provided PTX was compiled with an unsupported toolchain.",
            CuError::InvalidHandle => "invalid resource handle",
            CuError::NotFound => "named symbol not found",
            CuError::IllegalAddress => "an illegal memory access was encountered",
            CuError::LaunchOutOfResources => "too many resources requested for launch",
            CuError::LaunchTimeout => "the launch timed out and was terminated",
            CuError::IllegalInstruction => "an illegal instruction was encountered",
            CuError::MisalignedAddress => "misaligned address",
            CuError::LaunchFailed => "unspecified launch failure",
            CuError::NotSupported => "operation not supported",
            CuError::Unknown => "unknown error",
        }
    }
}

/// A failed call: the error and what exactly went wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The `CUresult`.
    pub code: CuError,
    /// The details (kernel, thread, line, address, …).
    pub detail: String,
}

impl Failure {
    /// A failure.
    pub fn new(code: CuError, detail: impl Into<String>) -> Failure {
        Failure { code, detail: detail.into() }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}: {}", self.code.name().to_string_lossy(), self.code.description(), self.detail)
    }
}

/// A call's result.
pub type CuResult<T> = Result<T, Failure>;

struct Context {
    /// The error of a failed launch, returned from then on.
    sticky: Option<Failure>,
}

struct Module {
    ctx: u64,
    program: Program,
}

/// The driver's state.
pub struct Driver {
    initialized: bool,
    next_id: u64,
    contexts: BTreeMap<u64, Context>,
    modules: BTreeMap<u64, Module>,
    /// Function handle to (module, kernel index).
    functions: BTreeMap<u64, (u64, usize)>,
    /// Device memory (allocations are owned by contexts, module variables by modules).
    pub mem: DeviceMemory,
}

impl Default for Driver {
    fn default() -> Self {
        Self::new()
    }
}

/// Handles are distinct numbers that are never reused; each kind has its own range so
/// that one kind passed as another is caught.
const CONTEXT_BASE: u64 = 0x0c00_0000;
const MODULE_BASE: u64 = 0x0d00_0000;
const FUNCTION_BASE: u64 = 0x0f00_0000;

impl Driver {
    /// A driver before `cuInit`.
    pub const fn new() -> Driver {
        Driver {
            initialized: false,
            next_id: 1,
            contexts: BTreeMap::new(),
            modules: BTreeMap::new(),
            functions: BTreeMap::new(),
            mem: DeviceMemory::new(),
        }
    }

    fn id(&mut self, base: u64) -> u64 {
        self.next_id += 1;
        base + self.next_id
    }

    /// `cuInit`.
    pub fn init(&mut self, flags: u32) -> CuResult<()> {
        if flags != 0 {
            return Err(Failure::new(CuError::InvalidValue, format!("cuInit takes flags 0, got {flags}")));
        }
        self.initialized = true;
        Ok(())
    }

    fn ready(&self) -> CuResult<()> {
        if self.initialized { Ok(()) } else { Err(Failure::new(CuError::NotInitialized, "cuInit has not been called")) }
    }

    /// `cuDeviceGetCount`.
    pub fn device_count(&self) -> CuResult<i32> {
        self.ready()?;
        Ok(1)
    }

    /// Checks a device ordinal or handle.
    pub fn device(&self, ordinal: i32) -> CuResult<i32> {
        self.ready()?;
        if ordinal == 0 {
            Ok(0)
        } else {
            Err(Failure::new(
                CuError::InvalidDevice,
                format!("device {ordinal} does not exist (the simulator has device 0)"),
            ))
        }
    }

    /// `cuDeviceGetAttribute`.
    pub fn attribute(&self, attr: i32, dev: i32) -> CuResult<i32> {
        self.device(dev)?;
        Ok(match attr {
            1 => 1024,      // MAX_THREADS_PER_BLOCK
            2 | 3 => 1024,  // MAX_BLOCK_DIM_X, _Y
            4 => 64,        // MAX_BLOCK_DIM_Z
            5 => i32::MAX,  // MAX_GRID_DIM_X
            6 | 7 => 65535, // MAX_GRID_DIM_Y, _Z
            8 => 48 * 1024, // MAX_SHARED_MEMORY_PER_BLOCK
            9 => 64 * 1024, // TOTAL_CONSTANT_MEMORY
            10 => 32,       // WARP_SIZE
            12 => 65536,    // MAX_REGISTERS_PER_BLOCK
            16 => 1,        // MULTIPROCESSOR_COUNT
            75 => COMPUTE_CAPABILITY.0,
            76 => COMPUTE_CAPABILITY.1,
            _ => {
                return Err(Failure::new(
                    CuError::InvalidValue,
                    format!("device attribute {attr} is not known to the simulator"),
                ));
            }
        })
    }

    /// `cuCtxCreate`.
    pub fn ctx_create(&mut self, dev: i32) -> CuResult<u64> {
        self.device(dev)?;
        let id = self.id(CONTEXT_BASE);
        self.contexts.insert(id, Context { sticky: None });
        Ok(id)
    }

    /// Checks that `ctx` is a live context.
    pub fn ctx_check(&self, ctx: u64) -> CuResult<()> {
        self.ready()?;
        if self.contexts.contains_key(&ctx) {
            Ok(())
        } else {
            Err(Failure::new(CuError::InvalidContext, "no current context, or it was destroyed"))
        }
    }

    /// A live context without a sticky error.
    fn ctx_ok(&self, ctx: u64) -> CuResult<()> {
        self.ctx_check(ctx)?;
        match &self.contexts[&ctx].sticky {
            Some(f) => Err(f.clone()),
            None => Ok(()),
        }
    }

    /// `cuCtxDestroy`: its modules and memory go with it.
    pub fn ctx_destroy(&mut self, ctx: u64) -> CuResult<()> {
        self.ctx_check(ctx)?;
        let modules: Vec<u64> = self.modules.iter().filter(|(_, m)| m.ctx == ctx).map(|(&id, _)| id).collect();
        for m in modules {
            self.drop_module(m);
        }
        self.mem.free_owned(ctx);
        self.contexts.remove(&ctx);
        Ok(())
    }

    /// `cuCtxSynchronize`: the sticky error, if a launch failed.
    pub fn synchronize(&self, ctx: u64) -> CuResult<()> {
        self.ctx_ok(ctx)
    }

    /// `cuModuleLoadData` with PTX text.
    pub fn module_load(&mut self, ctx: u64, ptx: &str) -> CuResult<u64> {
        self.ctx_ok(ctx)?;
        let id = self.id(MODULE_BASE);
        let program = Program::load(ptx, (COMPUTE_CAPABILITY.0 * 10 + COMPUTE_CAPABILITY.1) as u32, &mut self.mem, id)
            .map_err(|e| {
                let code = if e.version { CuError::UnsupportedPtxVersion } else { CuError::InvalidPtx };
                Failure::new(code, e.to_string())
            })?;
        self.modules.insert(id, Module { ctx, program });
        Ok(id)
    }

    fn drop_module(&mut self, m: u64) {
        self.modules.remove(&m);
        self.functions.retain(|_, (module, _)| *module != m);
        self.mem.free_owned(m);
    }

    /// `cuModuleUnload`.
    pub fn module_unload(&mut self, m: u64) -> CuResult<()> {
        self.ready()?;
        if !self.modules.contains_key(&m) {
            return Err(Failure::new(CuError::InvalidHandle, "not a loaded module"));
        }
        self.drop_module(m);
        Ok(())
    }

    /// `cuModuleGetFunction`.
    pub fn get_function(&mut self, m: u64, name: &str) -> CuResult<u64> {
        self.ready()?;
        let module = self.modules.get(&m).ok_or_else(|| Failure::new(CuError::InvalidHandle, "not a loaded module"))?;
        let k = module
            .program
            .kernel(name)
            .ok_or_else(|| Failure::new(CuError::NotFound, format!("the module has no kernel `{name}`")))?;
        let id = self.id(FUNCTION_BASE);
        self.functions.insert(id, (m, k));
        Ok(id)
    }

    /// `cuMemAlloc` in context `ctx`.
    pub fn mem_alloc(&mut self, ctx: u64, bytes: u64) -> CuResult<u64> {
        self.ctx_ok(ctx)?;
        self.mem.alloc(bytes, ctx).map_err(|e| match e {
            MemError::ZeroSize => Failure::new(CuError::InvalidValue, e.to_string()),
            _ => Failure::new(CuError::OutOfMemory, e.to_string()),
        })
    }

    /// `cuMemFree`.
    pub fn mem_free(&mut self, ctx: u64, ptr: u64) -> CuResult<()> {
        self.ctx_check(ctx)?;
        if self.mem.owner_of(ptr) != Some(ctx) {
            return Err(Failure::new(CuError::InvalidValue, format!("0x{ptr:x} is not an allocation of this context")));
        }
        self.mem.free(ptr).map_err(|e| Failure::new(CuError::InvalidValue, e.to_string()))
    }

    /// `cuMemcpyHtoD`.
    pub fn copy_to_device(&mut self, ctx: u64, dst: u64, src: &[u8]) -> CuResult<()> {
        self.ctx_ok(ctx)?;
        self.mem.write(dst, src).map_err(|e| Failure::new(CuError::InvalidValue, format!("copy to the device: {e}")))
    }

    /// `cuMemcpyDtoH`.
    pub fn copy_to_host(&self, ctx: u64, dst: &mut [u8], src: u64) -> CuResult<()> {
        self.ctx_ok(ctx)?;
        self.mem.read(src, dst).map_err(|e| Failure::new(CuError::InvalidValue, format!("copy from the device: {e}")))
    }

    /// The parameters of function `f`: (offset, size) of each and the buffer size.
    pub fn params(&self, f: u64) -> CuResult<(Vec<Param>, usize)> {
        self.ready()?;
        let k = self.kernel(f)?;
        Ok((k.params.clone(), k.param_bytes))
    }

    fn kernel(&self, f: u64) -> CuResult<&crate::decode::Kernel> {
        let (m, k) = self.functions.get(&f).ok_or_else(|| Failure::new(CuError::InvalidHandle, "not a function"))?;
        Ok(&self.modules[m].program.kernels[*k])
    }

    /// `cuLaunchKernel` in context `ctx` with the parameter buffer `params`: runs the
    /// kernel now; a fault becomes the context's sticky error.
    pub fn launch(&mut self, ctx: u64, f: u64, dims: &LaunchDims, params: &[u8]) -> CuResult<()> {
        self.ctx_ok(ctx)?;
        let (m, k) = *self.functions.get(&f).ok_or_else(|| Failure::new(CuError::InvalidHandle, "not a function"))?;
        let module = &self.modules[&m];
        if module.ctx != ctx {
            return Err(Failure::new(CuError::InvalidContext, "the function belongs to another context"));
        }
        crate::exec::check_launch(&module.program.kernels[k], dims, params.len()).map_err(|e| {
            let code =
                if e.kind == FaultKind::OutOfResources { CuError::LaunchOutOfResources } else { CuError::InvalidValue };
            Failure::new(code, e.message)
        })?;
        let program = &self.modules[&m].program;
        if let Err(fault) = crate::exec::launch(program, k, dims, params, &mut self.mem) {
            let code = match fault.kind {
                FaultKind::InvalidLaunch => return Err(Failure::new(CuError::InvalidValue, fault.message)),
                FaultKind::OutOfResources => return Err(Failure::new(CuError::LaunchOutOfResources, fault.message)),
                FaultKind::IllegalAddress => CuError::IllegalAddress,
                FaultKind::Misaligned => CuError::MisalignedAddress,
                FaultKind::Trap => CuError::IllegalInstruction,
                FaultKind::Deadlock => CuError::LaunchFailed,
                FaultKind::Timeout => CuError::LaunchTimeout,
            };
            if let Some(c) = self.contexts.get_mut(&ctx) {
                c.sticky = Some(Failure::new(code, fault.message));
            }
        }
        Ok(())
    }
}
