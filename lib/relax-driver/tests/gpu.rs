//! The Vulkan engine against the interpreter (`docs/gpu.md`): modules go through the
//! default pipeline for the GPU (`schedule-gpu`), then every kernel runs on the first
//! Vulkan device (Mesa's lavapipe in CI) and the results must equal the interpreter's,
//! within the tolerance of `# EXEC:` `~=` lines for floats and exactly for integers.
//! Every kernel of these modules must run on the device, none in the interpreter.
#![cfg(feature = "spirv")]

mod support {
    pub mod engines;
}

use support::engines::Case;

/// Runs `entry` of `path` with the interpreter and with the Vulkan engine and compares.
fn check(path: &str, entry: &str, syms: &[(&str, i64)]) {
    let case = Case::new(path, entry, syms);
    let got = relax_runtime::vulkan::compile(&case.gpu, |k| {
        assert!(k.failed.is_empty(), "kernels left to the interpreter: {:?}", k.failed);
        assert!(!k.is_empty());
        case.run(k)
    })
    .expect("a Vulkan device (install mesa-vulkan-drivers libvulkan1)")
    .expect("the Vulkan engine runs");
    case.assert_close(&got);
}

#[test]
fn llama_block_on_vulkan() {
    check("test/Transform/fuse-ops/llama.rlx", "decoder_block", &[("n", 3), ("m", 5)]);
}

#[test]
fn matmul_epilogue_on_vulkan() {
    check("test/Transform/fuse-ops/matmul-epilogue.rlx", "main", &[("n", 300)]);
}

#[test]
fn reductions_on_vulkan() {
    check("test/Transform/schedule-gpu/reduction.rlx", "main", &[("n", 300)]);
}
