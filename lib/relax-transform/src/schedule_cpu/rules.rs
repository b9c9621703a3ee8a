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

use super::inline::{collect_loads, single_store};
use super::nest::{Nest, block};

/// Inner loops of at most this many iterations are vectorized whole.
const MAX_VECTOR_LOOP: i64 = 4096;
/// A single loop is split into chunks of this many vectorized iterations.
const CHUNK: i64 = 256;
/// The edge of the square tiles of a transposing copy.
const TRANSPOSE_TILE: i64 = 16;
/// Outer loops of at least this many iterations (or a symbolic count) are parallel on
/// their own around an innermost loop of symbolic extent.
const MIN_PARALLEL_OUTER: i64 = 16;

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
    if let Some(a) = transposed_loop(f, &nest) {
        return Some(transpose(f, nest, a));
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
    // A symbolic innermost extent under outer loops with enough iterations: the outer
    // loops fused and parallel, the innermost a plain loop (fusing it too would cost a
    // division by the symbolic extent per element).
    if inner_extent.is_none() && n > 1 {
        let outer = nest.fuse_range(f, 0, n - 1);
        let many = f.pool.as_int(nest.loops[outer].extent).is_none_or(|e| e >= MIN_PARALLEL_OUTER);
        if many {
            nest.set_kind(outer, ForKind::Parallel);
            return Some(nest.build(f));
        }
    }
    // Everything fused (the outer loops may be fused already); a constant extent is
    // split into parallel chunks of vectorized iterations.
    let all = nest.fuse_range(f, 0, nest.loops.len());
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

/// The loop `a` of a transposing copy: the innermost loop `z` runs along the stored
/// buffer's last dim, and some load has `a`'s variable as its last index and `z`'s
/// variable before it, so the load strides through memory along `z`. `a` must have a
/// constant extent that is a multiple of [`TRANSPOSE_TILE`].
fn transposed_loop(f: &PrimFunc, nest: &Nest) -> Option<usize> {
    let n = nest.loops.len();
    let map = nest.identity_bindings(f)?;
    let b = block(f, nest.block);
    if n < 2 || b.predicate.is_some() {
        return None;
    }
    let (_, idx, value) = single_store(f, b.body)?;
    let loop_of = |e| {
        let v = f.pool.as_var(e)?;
        b.iter_vars.iter().position(|iv| iv.var == v).map(|p| map[p])
    };
    if loop_of(*idx.last()?)? != n - 1 {
        return None;
    }
    let mut loads = Vec::new();
    collect_loads(&f.pool, value, &mut loads);
    loads.iter().find_map(|(_, ix)| {
        let (&last, rest) = ix.split_last()?;
        let a = loop_of(last)?;
        let strided = rest.iter().any(|&e| loop_of(e) == Some(n - 1));
        let long = f.pool.as_int(nest.loops[a].extent).is_some_and(|e| e % TRANSPOSE_TILE == 0);
        (a != n - 1 && strided && long).then_some(a)
    })
}

/// Schedules a transposing copy: loop `a` is split by [`TRANSPOSE_TILE`], and the
/// loops become `..., a_o, z, a_i` with the outer ones fused into one parallel loop. Each
/// step of `z` then reads TILE consecutive elements (one cache line of float32), and
/// the TILE output rows it writes stay in cache while `z` fills them.
fn transpose(f: &mut PrimFunc, mut nest: Nest, a: usize) -> Stmt {
    let z = nest.loops.len() - 1;
    nest.split(f, a, TRANSPOSE_TILE);
    // Loops now: ..., a_o (a), a_i (a + 1), ..., z (z + 1).
    let total = nest.loops.len();
    let mut order: Vec<usize> = (0..total).filter(|&i| ![a + 1, z + 1].contains(&i)).collect();
    order.extend([z + 1, a + 1]);
    nest.reorder(&order);
    let outer = nest.fuse_range(f, 0, total - 2);
    nest.set_kind(outer, ForKind::Parallel);
    nest.set_kind(outer + 2, ForKind::Unrolled);
    nest.build(f)
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
