//! `to-non-dataflow`: every dataflow block becomes a plain binding block and every
//! dataflow variable an ordinary variable; adjacent plain blocks are merged.

use relax_ir::{Global, Module};
use relax_pass::{Anchor, Pass, PassContext, PassInfo, PassOptions, PassResult};

use crate::walk::{all_blocks, tidy_blocks};

/// Registry entry.
pub const INFO: PassInfo = PassInfo {
    name: "to-non-dataflow",
    aliases: &[],
    summary: "turn dataflow blocks into plain binding blocks",
    anchor: Anchor::RelaxFunction,
    options: &[],
    create,
};

fn create(_: &PassOptions) -> Result<Box<dyn Pass>, String> {
    Ok(Box::new(ToNonDataflow))
}

struct ToNonDataflow;

impl Pass for ToNonDataflow {
    fn run_function(&self, m: &mut Module, g: Global, _cx: &mut PassContext) -> PassResult {
        let Some(f) = m.relax_mut(g) else { return Ok(false) };
        let mut changed = false;
        for (_, b) in all_blocks(f) {
            if f.blocks[b].dataflow {
                f.blocks[b].dataflow = false;
                changed = true;
            }
            for i in 0..f.blocks[b].bindings.len() {
                let v = f.blocks[b].bindings[i].var;
                if f.vars[v].dataflow {
                    f.vars[v].dataflow = false;
                    changed = true;
                }
            }
        }
        changed |= tidy_blocks(f);
        Ok(changed)
    }
}
