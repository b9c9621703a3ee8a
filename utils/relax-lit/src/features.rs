//! The lit features a test can ask for with `REQUIRES:`, `UNSUPPORTED:` and `%if`.
//!
//! * `llvm`, `spirv`: the relax tools were built with that backend.
//! * `spirv-val`, `ptxas`: that validator is on `PATH`.
//! * `cuda`: the CUDA engine can run (an NVIDIA driver and a device;
//!   `relax_driver::cuda_device`).
//! * `cuda-sim`: the PTX simulator `librelax_cuda_sim.so` (`utils/cuda-sim`) is built, so
//!   `relax-run --engine cuda --cuda-driver %cuda-sim` runs the CUDA engine without a GPU.
//! * `x86_64`, `aarch64`: the host's architecture (tests of target-specific code).
//!
//! [`Features::detect`] is the one place that decides them for the Rust runner;
//! `test/lit.cfg.py` decides them for real lit (from `RELAX_FEATURES` and `PATH`).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Which features are available.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Features {
    /// The tools include the LLVM backend (host code, PTX, JIT).
    pub llvm: bool,
    /// The tools include the SPIR-V backend.
    pub spirv: bool,
    /// `spirv-val` is on `PATH`.
    pub spirv_val: bool,
    /// `ptxas` is on `PATH`.
    pub ptxas: bool,
    /// The CUDA driver and a device are present.
    pub cuda: bool,
    /// The PTX simulator library, when it is built (the `%cuda-sim` substitution).
    pub cuda_sim: Option<&'static Path>,
    /// The host's architecture (`std::env::consts::ARCH`).
    pub arch: &'static str,
}

impl Features {
    /// Every feature name a test may mention.
    pub const NAMES: [&'static str; 8] =
        ["llvm", "spirv", "spirv-val", "ptxas", "cuda", "cuda-sim", "x86_64", "aarch64"];

    /// The features of this build and machine: the backends `relax_driver::features()`
    /// reports, and the validators on `PATH`.
    pub fn detect() -> Self {
        let built = relax_driver::features();
        Self {
            llvm: built.contains(&"llvm"),
            spirv: built.contains(&"spirv"),
            spirv_val: on_path("spirv-val"),
            ptxas: on_path("ptxas"),
            cuda: built.contains(&"llvm") && relax_driver::cuda_device().is_ok(),
            cuda_sim: cuda_sim_library(),
            arch: std::env::consts::ARCH,
        }
    }

    /// Whether feature `name` is available; `None` when no such feature exists.
    pub fn get(&self, name: &str) -> Option<bool> {
        match name {
            "llvm" => Some(self.llvm),
            "spirv" => Some(self.spirv),
            "spirv-val" => Some(self.spirv_val),
            "ptxas" => Some(self.ptxas),
            "cuda" => Some(self.cuda),
            "cuda-sim" => Some(self.cuda_sim.is_some()),
            "x86_64" | "aarch64" => Some(self.arch == name),
            _ => None,
        }
    }

    /// The names of the available features.
    pub fn available(&self) -> Vec<&'static str> {
        Self::NAMES.into_iter().filter(|n| self.get(n) == Some(true)).collect()
    }
}

/// The PTX simulator `librelax_cuda_sim.so` built with this runner: next to the test
/// executable (`target/debug/deps`, where cargo puts it as a dev-dependency of
/// relax-lit) or one folder up (`target/debug`, after `cargo build`).
pub fn cuda_sim_library() -> Option<&'static Path> {
    static LIB: OnceLock<Option<PathBuf>> = OnceLock::new();
    LIB.get_or_init(|| {
        let exe = std::env::current_exe().ok()?;
        exe.ancestors().skip(1).take(2).map(|d| d.join("librelax_cuda_sim.so")).find(|p| p.is_file())
    })
    .as_deref()
}

/// Whether an executable named `name` is in a directory on `PATH`.
pub fn on_path(name: &str) -> bool {
    find_on_path(name).is_some()
}

/// The first executable named `name` on `PATH`.
pub fn find_on_path(name: &str) -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join(name)).find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}
