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
