//! The CUDA engine against the interpreter on the PTX simulator (`utils/cuda-sim`,
//! `docs/gpu.md`): the engine opens `librelax_cuda_sim.so` in place of `libcuda.so.1`,
//! so every kernel of these modules runs as PTX from LLVM's NVPTX backend through the
//! CUDA driver API, and the results must equal the interpreter's (within the tolerance
//! of `# EXEC:` `~=` lines for floats, exactly for integers). Every kernel must run on
//! the device, none in the interpreter.
#![cfg(feature = "llvm")]

mod support {
    pub mod engines;
}

use std::path::PathBuf;

use support::engines::Case;

/// The simulator library: cargo builds it next to this test's executable, as a
/// dev-dependency of relax-driver.
fn simulator() -> PathBuf {
    let exe = std::env::current_exe().expect("the test executable");
    exe.ancestors()
        .skip(1)
        .take(2)
        .map(|d| d.join("librelax_cuda_sim.so"))
        .find(|p| p.is_file())
        .expect("librelax_cuda_sim.so next to the test executable (a dev-dependency of relax-driver)")
}

/// Runs `entry` of `path` with the interpreter and with the CUDA engine on the simulator
/// and compares.
fn check(path: &str, entry: &str, syms: &[(&str, i64)]) {
    let case = Case::new(path, entry, syms);
    let lib = simulator();
    let got = relax_runtime::cuda::compile(&case.gpu, Some(lib.as_os_str()), |k| {
        assert_eq!((k.device_name.as_str(), k.arch), ("relax PTX simulator", "sm_80"));
        assert!(k.failed.is_empty(), "kernels left to the interpreter: {:?}", k.failed);
        assert!(!k.is_empty());
        case.run(k)
    })
    .unwrap_or_else(|e| panic!("the CUDA engine on the simulator: {e:?}"))
    .expect("the CUDA engine runs");
    case.assert_close(&got);
}

#[test]
fn llama_block_on_the_simulator() {
    check("test/Transform/fuse-ops/llama.rlx", "decoder_block", &[("n", 3), ("m", 5)]);
}

#[test]
fn matmul_epilogue_on_the_simulator() {
    check("test/Transform/fuse-ops/matmul-epilogue.rlx", "main", &[("n", 300)]);
}

#[test]
fn reductions_on_the_simulator() {
    check("test/Transform/schedule-gpu/reduction.rlx", "main", &[("n", 300)]);
}
