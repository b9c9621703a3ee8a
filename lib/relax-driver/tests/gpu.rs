//! The Vulkan engine against the interpreter (`docs/gpu.md`): modules go through the
//! default pipeline for the GPU (`schedule-gpu`), then every kernel runs on the first
//! Vulkan device (Mesa's lavapipe in CI) and the results must equal the interpreter's,
//! within the tolerance of `# EXEC:` `~=` lines for floats and exactly for integers.
//! Every kernel of these modules must run on the device, none in the interpreter.
#![cfg(feature = "spirv")]

use relax_driver::pipeline::{Target, run_pipeline_for};
use relax_runtime::{Interpreter, Value, inputs};

fn flatten(v: &Value, out: &mut Vec<relax_runtime::Tensor>) {
    match v {
        Value::Tensor(t) => out.push(t.clone()),
        Value::Tuple(fields) => fields.iter().for_each(|x| flatten(x, out)),
        _ => {}
    }
}

/// Runs `entry` of `path` with the interpreter and with the Vulkan engine and compares.
fn check(path: &str, entry: &str, syms: &[(&str, i64)]) {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let text = std::fs::read_to_string(root.join(path)).expect("the test module");
    let orig = relax_parser::parse_module(&text).expect("parses");
    let mut gpu = orig.clone();
    run_pipeline_for(&mut gpu, Target::Gpu).expect("the GPU pipeline");
    let syms: Vec<(String, i64)> = syms.iter().map(|(n, v)| (n.to_string(), *v)).collect();
    let g = orig.lookup(entry).expect("the entry");
    let args = inputs::make_inputs(&orig, g, &[], &syms, Some(7)).expect("inputs");
    let expected = Interpreter::new(&orig).run(entry, args.clone()).expect("the interpreter runs");
    let got = relax_runtime::vulkan::compile(&gpu, |k| {
        assert!(k.failed.is_empty(), "kernels left to the interpreter: {:?}", k.failed);
        assert!(!k.is_empty());
        let mut it = Interpreter::new(&gpu);
        it.native = Some(k);
        it.run(entry, args.clone())
    })
    .expect("a Vulkan device (install mesa-vulkan-drivers libvulkan1)")
    .expect("the Vulkan engine runs");
    let (mut a, mut b) = (Vec::new(), Vec::new());
    flatten(&expected, &mut a);
    flatten(&got, &mut b);
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x.shape, y.shape);
        assert_eq!(x.dtype, y.dtype);
        for (i, (p, q)) in x.scalars().into_iter().zip(y.scalars()).enumerate() {
            match (p, q) {
                (relax_runtime::Scalar::Float(p, _), relax_runtime::Scalar::Float(q, _)) => {
                    assert!((p - q).abs() <= 1e-5 * p.abs() + 1e-5, "{path}: element {i}: {p} vs {q}");
                }
                (p, q) => assert_eq!(p, q, "{path}: element {i}"),
            }
        }
    }
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
