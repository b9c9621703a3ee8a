//! Walking and editing Relax function bodies.
//!
//! A function's sequences (its body, the branches of every `if`, the bodies of local
//! functions) are addressed by [`SeqLoc`], so a pass can collect them first and edit them
//! afterwards without fighting the borrow checker. Every use of a variable is its own
//! `ExprData::Var` node, so replacing uses rewrites those nodes in place.

use std::collections::HashMap;

use relax_ir::{Block, Expr, ExprData, RelaxFunction, SeqExpr, Var};

/// Where a sequence expression lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SeqLoc {
    /// The function body.
    Body,
    /// The true branch of the `If` expression.
    Then(Expr),
    /// The false branch of the `If` expression.
    Else(Expr),
    /// The body of the local function expression.
    Local(Expr),
}

/// The sequence at `loc`.
pub fn seq(f: &RelaxFunction, loc: SeqLoc) -> &SeqExpr {
    match loc {
        SeqLoc::Body => &f.func.body,
        SeqLoc::Then(e) | SeqLoc::Else(e) | SeqLoc::Local(e) => match &f.exprs[e] {
            ExprData::If { then_branch, else_branch, .. } => {
                if matches!(loc, SeqLoc::Then(_)) {
                    then_branch
                } else {
                    else_branch
                }
            }
            ExprData::Function(node) => &node.body,
            _ => &f.func.body,
        },
    }
}

/// The sequence at `loc`, for writing.
pub fn seq_mut(f: &mut RelaxFunction, loc: SeqLoc) -> &mut SeqExpr {
    match loc {
        SeqLoc::Body => &mut f.func.body,
        SeqLoc::Then(e) | SeqLoc::Else(e) | SeqLoc::Local(e) => {
            let is_then = matches!(loc, SeqLoc::Then(_));
            match &mut f.exprs[e] {
                ExprData::If { then_branch, else_branch, .. } => {
                    if is_then {
                        then_branch
                    } else {
                        else_branch
                    }
                }
                ExprData::Function(node) => &mut node.body,
                _ => &mut f.func.body,
            }
        }
    }
}

/// Every sequence of the function, outer ones before the ones nested in them.
pub fn all_seqs(f: &RelaxFunction) -> Vec<SeqLoc> {
    let mut out = vec![SeqLoc::Body];
    let mut i = 0;
    while i < out.len() {
        let s = seq(f, out[i]);
        for &b in &s.blocks {
            for bd in &f.blocks[b].bindings {
                match &f.exprs[bd.value] {
                    ExprData::If { .. } => {
                        out.push(SeqLoc::Then(bd.value));
                        out.push(SeqLoc::Else(bd.value));
                    }
                    ExprData::Function(_) => out.push(SeqLoc::Local(bd.value)),
                    _ => {}
                }
            }
        }
        i += 1;
    }
    out
}

/// The direct operands of an expression (not the contents of nested sequences).
pub fn operands(data: &ExprData) -> Vec<Expr> {
    match data {
        ExprData::Call(c) => std::iter::once(c.callee).chain(c.args.iter().copied()).collect(),
        ExprData::Tuple(fields) => fields.clone(),
        ExprData::GetItem { tuple, .. } => vec![*tuple],
        ExprData::If { cond, .. } => vec![*cond],
        _ => Vec::new(),
    }
}

/// Calls `f` on every expression reachable from the function's sequences: binding
/// values, their operands (transitively), and sequence results.
pub fn for_each_reachable(func: &RelaxFunction, mut f: impl FnMut(Expr, &ExprData)) {
    for loc in all_seqs(func) {
        let s = seq(func, loc);
        let mut stack: Vec<Expr> = Vec::new();
        for &b in &s.blocks {
            for bd in &func.blocks[b].bindings {
                stack.push(bd.value);
            }
        }
        stack.push(s.body);
        while let Some(e) = stack.pop() {
            let data = &func.exprs[e];
            f(e, data);
            stack.extend(operands(data));
        }
    }
}

/// How many times each variable is used (parameters and bound variables alike).
pub fn use_counts(f: &RelaxFunction) -> HashMap<Var, usize> {
    let mut counts = HashMap::new();
    for_each_reachable(f, |_, d| {
        if let ExprData::Var(v) = d {
            *counts.entry(*v).or_insert(0) += 1;
        }
    });
    counts
}

/// The blocks of every sequence, with the sequence they belong to.
pub fn all_blocks(f: &RelaxFunction) -> Vec<(SeqLoc, Block)> {
    all_seqs(f)
        .into_iter()
        .flat_map(|loc| seq(f, loc).blocks.iter().map(move |&b| (loc, b)).collect::<Vec<_>>())
        .collect()
}

/// Removes empty blocks and merges adjacent blocks of the same kind in every sequence.
/// Returns true if anything changed.
pub fn tidy_blocks(f: &mut RelaxFunction) -> bool {
    let mut changed = false;
    for loc in all_seqs(f) {
        let blocks = seq(f, loc).blocks.clone();
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
        seq_mut(f, loc).blocks = out;
    }
    changed
}
