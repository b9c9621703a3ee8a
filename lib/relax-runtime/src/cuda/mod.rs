//! The CUDA engine: PTX kernels (`relax_codegen::nvptx`) run on an NVIDIA GPU through
//! the CUDA driver API, called from the Relax interpreter through [`NativeKernels`]
//! (`docs/gpu.md`). It mirrors the Vulkan engine (`crate::vulkan`):
//!
//! * [`compile`] opens `libcuda.so.1` at run time ([`api`]), so building needs no CUDA
//!   toolkit; without a driver or a device it fails with [`Unavailable`]. Another
//!   driver library (the PTX simulator `librelax_cuda_sim.so`) can be named by the
//!   caller or by `RELAX_CUDA_DRIVER`. It takes
//!   device 0, creates a context, lowers every PrimFunc of the module to PTX for the
//!   device's architecture (the newest LLVM 19 knows that the device runs), loads it with
//!   `cuModuleLoadData` and looks up one function per launch. A PrimFunc the PTX backend
//!   cannot handle is listed in [`CudaKernels::failed`] and runs in the TIR interpreter.
//!   The module is lowered TIR (`relax_ir::tir_lower`), lowered once by the caller.
//! * A call binds the arguments and gathers buffers, scalar arguments and grid sizes
//!   with `crate::gpu_host` (shared with the Vulkan engine), copies every buffer to
//!   device memory, launches the kernels in order on the default stream (which
//!   serializes them), synchronizes, copies the buffers back and frees them.

mod api;

use std::collections::HashMap;
use std::ffi::{CString, OsStr, c_void};

use relax_codegen::CodegenError;
use relax_codegen::gpu::GpuFunc;
use relax_ir::{Global, Module};

use self::api::{Api, CuContext, CuDevicePtr, CuFunction, CuModule};
use crate::error::{RunError, RunResult};
use crate::native::NativeKernels;
use crate::scalar::Scalar;
use crate::value::Value;

pub use self::api::Unavailable;

/// The kernels of one PrimFunc.
struct FuncKernels {
    gf: GpuFunc,
    functions: Vec<CuFunction>,
}

/// The kernels of a module on a CUDA device.
pub struct CudaKernels {
    api: Api,
    context: CuContext,
    module: CuModule,
    funcs: HashMap<Global, FuncKernels>,
    /// The device's name.
    pub device_name: String,
    /// The architecture the PTX was generated for (`sm_90`).
    pub arch: &'static str,
    /// PrimFuncs that could not be compiled (they run in the TIR interpreter), and why.
    pub failed: Vec<(Global, CodegenError)>,
}

/// Why [`compile`] failed.
#[derive(Debug)]
pub enum CudaError {
    /// No driver or no device: the engine cannot run on this machine.
    Unavailable(Unavailable),
    /// Anything else.
    Failed(String),
}

pub use self::api::{DRIVER_ENV, driver_path};

/// Whether CUDA can run here: the name of device 0, or why not. `driver` names the
/// driver library ([`driver_path`]).
pub fn probe(driver: Option<&OsStr>) -> Result<String, Unavailable> {
    let api = Api::load(driver)?;
    api.first_device().map(|(_, name, _)| name)
}

/// Compiles the kernels of `m` for CUDA device 0 of the driver library `driver`
/// ([`driver_path`]) and calls `run` with them.
pub fn compile<T>(m: &Module, driver: Option<&OsStr>, run: impl FnOnce(&CudaKernels) -> T) -> Result<T, CudaError> {
    let api = Api::load(driver).map_err(CudaError::Unavailable)?;
    let (device, device_name, (major, minor)) = api.first_device().map_err(CudaError::Unavailable)?;
    let context = api.create_context(device).map_err(CudaError::Failed)?;
    let arch = relax_codegen::nvptx::arch_for(major, minor);
    let mut k = CudaKernels {
        api,
        context,
        module: std::ptr::null_mut(),
        funcs: HashMap::new(),
        device_name,
        arch,
        failed: Vec::new(),
    };
    // From here on, `k`'s drop releases what was made.
    let pm = relax_codegen::nvptx::lower_module(m, arch).map_err(|e| CudaError::Failed(e.message))?;
    k.failed = pm.failed;
    let ptx = CString::new(pm.ptx).map_err(|_| CudaError::Failed("the PTX holds a NUL byte".into()))?;
    k.module = k.api.load_module(&ptx).map_err(CudaError::Failed)?;
    for gf in pm.funcs {
        let mut functions = Vec::new();
        let mut error = None;
        for l in &gf.launches {
            match k.api.function(k.module, &l.entry) {
                Ok(f) => functions.push(f),
                Err(e) => {
                    error = Some(e);
                    break;
                }
            }
        }
        match error {
            None => {
                k.funcs.insert(gf.global, FuncKernels { gf, functions });
            }
            Some(e) => k.failed.push((gf.global, CodegenError::new(e))),
        }
    }
    Ok(run(&k))
}

impl CudaKernels {
    /// The number of PrimFuncs with CUDA kernels.
    pub fn len(&self) -> usize {
        self.funcs.len()
    }

    /// True when no PrimFunc has CUDA kernels.
    pub fn is_empty(&self) -> bool {
        self.funcs.is_empty()
    }

    fn run(&self, m: &Module, g: Global, fk: &FuncKernels, args: &[Value]) -> RunResult<Option<Scalar>> {
        let call = crate::gpu_host::prepare(m, g, &fk.gf, args)?;
        let out = self.launch(fk, &call).map_err(RunError::new)?;
        crate::gpu_host::write_back(&fk.gf, args, out);
        Ok(None)
    }

    /// Copies the buffers in, runs the launches, copies the buffers out.
    fn launch(&self, fk: &FuncKernels, call: &crate::gpu_host::Call) -> Result<Vec<Vec<u8>>, String> {
        let api = &self.api;
        api.set_current(self.context)?;
        let mut ptrs: Vec<CuDevicePtr> = Vec::new();
        let result = (|| -> Result<Vec<Vec<u8>>, String> {
            for c in &call.contents {
                let p = api.alloc(c.len().max(4))?;
                ptrs.push(p);
                api.copy_to_device(p, c)?;
            }
            // `cuLaunchKernel` reads each parameter through a pointer to its value.
            let mut scalars = call.scalars.clone();
            let mut params: Vec<*mut c_void> = Vec::new();
            for p in &mut ptrs {
                params.push(std::ptr::from_mut(p).cast());
            }
            for s in &mut scalars {
                params.push(s.as_mut_ptr().cast());
            }
            for ((l, &f), &blocks) in fk.gf.launches.iter().zip(&fk.functions).zip(&call.grids) {
                if blocks <= 0 {
                    continue;
                }
                let grid = u32::try_from(blocks)
                    .ok()
                    .filter(|&b| b <= i32::MAX as u32)
                    .ok_or_else(|| format!("CUDA: the grid of `{}` ({blocks} blocks) is too large", l.entry))?;
                api.launch(f, grid, l.threads, &mut params).map_err(|e| format!("CUDA: `{}`: {e}", l.entry))?;
            }
            api.synchronize().map_err(|e| format!("CUDA: the kernels of `{}` failed: {e}", fk.gf.name))?;
            let mut out = Vec::new();
            for (&p, c) in ptrs.iter().zip(&call.contents) {
                let mut v = vec![0u8; c.len()];
                api.copy_to_host(&mut v, p)?;
                out.push(v);
            }
            Ok(out)
        })();
        for p in ptrs {
            api.free(p);
        }
        result
    }
}

impl NativeKernels for CudaKernels {
    fn call(&self, m: &Module, g: Global, args: &[Value]) -> Option<RunResult<Option<Scalar>>> {
        let fk = self.funcs.get(&g)?;
        Some(self.run(m, g, fk, args))
    }
}

impl Drop for CudaKernels {
    fn drop(&mut self) {
        if !self.module.is_null() {
            self.api.unload_module(self.module);
        }
        self.api.destroy_context(self.context);
    }
}
