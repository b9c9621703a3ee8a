//! The default schedules of elementwise, injective and reduction nests.
//!
//! * **Spatial** nests (no reduction): when the innermost loop has a small constant
//!   extent, the loops around it are fused into one parallel loop and it is vectorized;
//!   otherwise all loops are fused into one, split into a parallel loop over chunks of
//!   [`CHUNK`] vectorized iterations when its extent is a multiple of that, parallel
//!   as a whole when not.
//! * **Reductions**: the spatial loops move out of the reduction loops (`reorder`), are fused into one
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
    let n = nest.loops.len();
    if n == 0 {
        return Some(nest.build(f));
    }
    let inner_extent = f.pool.as_int(nest.loops[n - 1].extent);
    if let Some(e) = inner_extent
        && e > 1
        && e <= MAX_VECTOR_LOOP
        && (n > 1 || e % CHUNK != 0 || e == CHUNK)
    {
        // Outer loops fused and parallel, the innermost vectorized whole.
        if n > 1 {
            let outer = nest.fuse_range(f, 0, n - 1);
            if f.pool.as_int(nest.loops[outer].extent) != Some(1) {
                nest.set_kind(outer, ForKind::Parallel);
            }
        }
        nest.set_kind(n.min(2) - 1, ForKind::Vectorized);
        return Some(nest.build(f));
    }
    // Everything fused; a constant extent is split into parallel chunks of vectorized
    // iterations.
    let all = nest.fuse_range(f, 0, n);
    match f.pool.as_int(nest.loops[all].extent) {
        Some(e) if e > CHUNK && e % CHUNK == 0 => {
            nest.split(f, all, CHUNK);
            nest.set_kind(0, ForKind::Parallel);
            nest.set_kind(1, ForKind::Vectorized);
        }
        Some(e) if e <= 1 => {}
        _ => nest.set_kind(0, ForKind::Parallel),
    }
    Some(nest.build(f))
}

/// Schedules a reduction nest: spatial loops first, then the reduction loops in order.
pub fn reduction(f: &mut PrimFunc, mut nest: Nest) -> Option<Stmt> {
    // A predicate may name reduction variables, which the separate init block lacks.
    if block(f, nest.block).predicate.is_some() {
        return None;
    }
    let kinds = loop_kinds(f, &nest)?;
    if kinds.iter().any(|k| !matches!(k, IterKind::Spatial | IterKind::Reduce)) {
        return None;
    }
    // Spatial loops move out of the reduction loops (`reorder`); each output still sums
    // over the reduction loops in their order.
    let mut order: Vec<usize> = (0..kinds.len()).filter(|&i| kinds[i] == IterKind::Spatial).collect();
    order.extend((0..kinds.len()).filter(|&i| kinds[i] == IterKind::Reduce));
    nest.reorder(&order);
    let first_reduce = kinds.iter().filter(|&&k| k == IterKind::Spatial).count();
    if first_reduce == kinds.len() {
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
