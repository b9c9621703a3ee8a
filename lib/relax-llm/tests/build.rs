//! Every architecture and weight type builds into a module that parses and verifies.

use relax_llm::tiny::{Sizes, spec};
use relax_llm::{Arch, WeightType};

fn sizes(arch: Arch) -> Sizes {
    Sizes { arch, layers: 2, n_embd: 256, n_head: 4, n_head_kv: 2, n_ff: 512, n_vocab: 300, n_ctx: 64 }
}

#[test]
fn every_type_builds() {
    for arch in Arch::ALL {
        for ty in [
            WeightType::F32,
            WeightType::F16,
            WeightType::BF16,
            WeightType::Q8_0,
            WeightType::Q4_0,
            WeightType::Q4K,
            WeightType::Q6K,
        ] {
            let s = spec(&sizes(arch), ty, ty == WeightType::Q8_0);
            if let Err(e) = relax_llm::build(&s) {
                panic!("{arch:?} {ty}: {e}");
            }
        }
    }
}

#[test]
#[ignore = "writes /tmp/llm_*.rlx for manual inspection"]
fn dump() {
    for (name, ty) in [
        ("f32", WeightType::F32),
        ("q4k", WeightType::Q4K),
        ("q6k", WeightType::Q6K),
        ("q8", WeightType::Q8_0),
        ("q4", WeightType::Q4_0),
    ] {
        let s = spec(&sizes(Arch::Llama), ty, false);
        std::fs::write(format!("/tmp/llm_{name}.rlx"), relax_llm::emit::module_text(&s)).unwrap();
    }
    let s = spec(&sizes(Arch::Qwen2), WeightType::F16, true);
    std::fs::write("/tmp/llm_qwen.rlx", relax_llm::emit::module_text(&s)).unwrap();
    let s = spec(&sizes(Arch::Qwen2), WeightType::F32, false);
    std::fs::write("/tmp/llm_qwen_f32.rlx", relax_llm::emit::module_text(&s)).unwrap();
}

#[test]
#[ignore = "writes /tmp/tinyllama_*.rlx for manual inspection"]
fn dump_tinyllama() {
    let s = Sizes {
        arch: Arch::Llama,
        layers: 22,
        n_embd: 2048,
        n_head: 32,
        n_head_kv: 4,
        n_ff: 5632,
        n_vocab: 32000,
        n_ctx: 2048,
    };
    for (name, ty) in [("f32", WeightType::F32), ("q4_0", WeightType::Q4_0), ("q8_0", WeightType::Q8_0)] {
        std::fs::write(format!("/tmp/tinyllama_{name}.rlx"), relax_llm::emit::module_text(&spec(&s, ty, false)))
            .unwrap();
    }
}
