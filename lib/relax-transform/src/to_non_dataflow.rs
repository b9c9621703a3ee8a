//! `to-non-dataflow`: every dataflow block becomes a plain binding block and every
//! dataflow variable an ordinary variable; adjacent plain blocks are merged.

use relax_ir::RelaxFunction;
use relax_pass::{FunctionContext, PassResult, RelaxFunctionPass};

use crate::walk::{all_blocks, tidy_blocks};

relax_pass::declare_pass! {
    /// Registry entry.
    pub INFO: RelaxFunction "to-non-dataflow" {
        summary: "turn dataflow blocks into plain binding blocks",
        new: |_| ToNonDataflow,
    }
}

struct ToNonDataflow;

impl RelaxFunctionPass for ToNonDataflow {
    fn run(&self, f: &mut RelaxFunction, _cx: &mut FunctionContext<'_>) -> PassResult {
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
