//! The default schedules of elementwise, injective and reduction nests.
//!
//! * **Spatial** nests (no reduction): the loops but the innermost are fused into one
//!   parallel loop and the innermost is vectorized when its extent is a constant; a
//!   single loop of constant extent is split into a parallel outer loop and a vectorized
//!   inner loop.
//! * **Reductions** whose spatial loops come first: the spatial loops are fused into one
//!   parallel loop and `T.init` becomes a block of its own before the reduction loops
//!   (`decompose_reduction`), so the accumulator is loaded once, kept in a register over
//!   the reduction, and stored once. Reduction loops keep their order: the sum is
//!   computed in exactly the interpreter's order.

use relax_ir::{ForKind, IterKind, PrimFunc, Stmt};

use super::nest::{Nest, block};

/// Inner loops of at most this many iterations are vectorized whole.
const MAX_VECTOR_LOOP: i64 = 4096;
/// A single loop is split into chunks of this many vectorized iterations.
const CHUNK: i64 = 256;

/// The kinds of the block's iteration variables by loop, when every binding is exactly
/// one loop variable.
fn loop_kinds(f: &PrimFunc, nest: &Nest) -> Option<Vec<IterKind>> {
    let map = nest.identity_bindings(f)?;
    let b = block(f, nest.block);
    let mut kinds = vec![IterKind::Spatial; nest.loops.len()];
    for (iv, &li) in b.iter_vars.iter().zip(&map) {
        kinds[li] = iv.kind;
    }
    Some(kinds)
}

/// Schedules a spatial nest; `None` when the nest has a reduction.
pub fn spatial(f: &mut PrimFunc, mut nest: Nest) -> Option<Stmt> {
    let b = block(f, nest.block);
    if b.iter_vars.iter().any(|iv| iv.kind != IterKind::Spatial) || b.init.is_some() {
        return None;
    }
    // Loops of one iteration do not matter.
    let n = nest.loops.len();
    if n == 0 {
        return Some(nest.build(f));
    }
    let inner_extent = f.pool.as_int(nest.loops[n - 1].extent);
    if n == 1 {
        match inner_extent {
            Some(e) if e > CHUNK && e % CHUNK == 0 => {
                nest.split(f, 0, CHUNK);
                nest.set_kind(0, ForKind::Parallel);
                nest.set_kind(1, ForKind::Vectorized);
            }
            Some(e) if e > 1 && e <= MAX_VECTOR_LOOP => nest.set_kind(0, ForKind::Vectorized),
            _ => nest.set_kind(0, ForKind::Parallel),
        }
        return Some(nest.build(f));
    }
    let outer = nest.fuse_range(f, 0, n - 1);
    nest.set_kind(outer, ForKind::Parallel);
    if let Some(e) = inner_extent
        && e > 1
        && e <= MAX_VECTOR_LOOP
    {
        nest.set_kind(outer + 1, ForKind::Vectorized);
    }
    Some(nest.build(f))
}

/// Schedules a reduction nest whose spatial loops all come before its reduction loops.
pub fn reduction(f: &mut PrimFunc, mut nest: Nest) -> Option<Stmt> {
    let kinds = loop_kinds(f, &nest)?;
    if kinds.iter().any(|k| !matches!(k, IterKind::Spatial | IterKind::Reduce)) {
        return None;
    }
    let first_reduce = kinds.iter().position(|&k| k == IterKind::Reduce)?;
    if kinds[first_reduce..].iter().any(|&k| k != IterKind::Reduce) {
        return None;
    }
    let mut at = first_reduce;
    if first_reduce > 0 {
        let outer = nest.fuse_range(f, 0, first_reduce);
        nest.set_kind(outer, ForKind::Parallel);
        at = 1;
    }
    Some(nest.build_decomposed(f, at))
}
