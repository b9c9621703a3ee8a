//! Walking and editing Relax function bodies: what passes share on top of the IR's own
//! walkers (`RelaxFunction::all_seqs`, `for_each_reachable`, `ExprData::for_each_operand`).
//!
//! Sequences are entities (`relax_ir::Seq`), so a pass can collect them first and edit
//! them afterwards without fighting the borrow checker. Every use of a variable is its own
//! `ExprData::Var` node, so replacing uses rewrites those nodes in place.

use std::collections::HashMap;

use relax_ir::{Block, ExprData, RelaxFunction, Seq, Var};

/// How many times each variable is used (parameters and bound variables alike).
pub fn use_counts(f: &RelaxFunction) -> HashMap<Var, usize> {
    let mut counts = HashMap::new();
    f.for_each_reachable(|_, d| {
        if let ExprData::Var(v) = d {
            *counts.entry(*v).or_insert(0) += 1;
        }
    });
    counts
}

/// The blocks of every sequence, with the sequence they belong to.
pub fn all_blocks(f: &RelaxFunction) -> Vec<(Seq, Block)> {
    f.all_seqs().into_iter().flat_map(|s| f.seq(s).blocks.iter().map(move |&b| (s, b)).collect::<Vec<_>>()).collect()
}

/// Removes empty blocks and merges adjacent blocks of the same kind in every sequence.
/// Returns true if anything changed.
pub fn tidy_blocks(f: &mut RelaxFunction) -> bool {
    let mut changed = false;
    for s in f.all_seqs() {
        let blocks = f.seq(s).blocks.clone();
        let mut out: Vec<Block> = Vec::with_capacity(blocks.len());
        for b in blocks {
            if f.blocks[b].bindings.is_empty() {
                changed = true;
                continue;
            }
            if let Some(&prev) = out.last()
                && f.blocks[prev].dataflow == f.blocks[b].dataflow
            {
                let moved = std::mem::take(&mut f.blocks[b].bindings);
                f.blocks[prev].bindings.extend(moved);
                changed = true;
                continue;
            }
            out.push(b);
        }
        f.seq_mut(s).blocks = out;
    }
    changed
}
