//! PTX for every kernel of the Llama decoder block (`docs/gpu.md`): after the default
//! pipeline for the GPU, every PrimFunc compiles, the `.entry` kernels of the PTX are
//! exactly the launches of the launch description (one per stage of every PrimFunc), and
//! the text heads with one `// launch:` line per kernel.
#![cfg(feature = "llvm")]

use relax_driver::pipeline::{Target, lower_tir, run_pipeline_for};

#[test]
fn llama_block_kernels_all_have_entries() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let text = std::fs::read_to_string(root.join("test/Transform/fuse-ops/llama.rlx")).expect("the test module");
    let mut m = relax_parser::parse_module(&text).expect("parses");
    run_pipeline_for(&mut m, Target::Gpu).expect("the GPU pipeline");
    lower_tir(&mut m).expect("lowered TIR");
    let prim_funcs = m.print_order().into_iter().filter(|&g| m.prim_func(g).is_some()).count();
    let pm = relax_codegen::nvptx::lower_module(&m, "sm_80").expect("an NVPTX target");
    assert!(pm.failed.is_empty(), "PrimFuncs without PTX: {:?}", pm.failed);
    assert_eq!(pm.funcs.len(), prim_funcs);
    let mut launches: Vec<&str> = pm.funcs.iter().flat_map(|f| f.launches.iter().map(|l| l.entry.as_str())).collect();
    let mut entries: Vec<&str> =
        pm.ptx.lines().filter_map(|l| l.strip_prefix(".visible .entry ")).map(|l| l.trim_end_matches('(')).collect();
    launches.sort_unstable();
    entries.sort_unstable();
    assert!(launches.len() > prim_funcs, "some functions have several stages");
    assert_eq!(entries, launches);
    let described = pm.ptx.lines().filter(|l| l.starts_with("// launch: ")).count();
    assert_eq!(described, launches.len());
}
