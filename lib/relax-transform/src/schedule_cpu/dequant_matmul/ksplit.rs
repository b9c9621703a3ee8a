//! The split of the reduction `k` that makes a producer's index expressions affine in
//! the innermost (vector) loop, and the integer simplification after it.
//!
//! The divisors of the floor divisions and modulos applied to expressions of `k` are the
//! producer's block sizes (`k // 32`, `k % 32 // 16` in Q4_0; `% 256 // 64`, `% 64 //
//! 32`, `% 32` in Q4_K). `k` becomes `k0 * B_m + ... + k_m * B_1 + l` with the chain
//! `B_1 | B_2 | ... | B_m` of divisors that divide the extent, and `l` a lanes loop of
//! `L` iterations, `L` the largest power of two (at most the given maximum) for which,
//! once the simplifier (`relax_ir::arith`, normal form, with the loops' ranges) has
//! rewritten the indices, `l` appears in no division or modulo: `(k0*32 + h*16 + l) //
//! 32` becomes `k0`, `... % 16` becomes `l`, so a lane reads consecutive bytes and the
//! block's scale is one load per block.

use std::collections::HashMap;

use relax_ir::arith::{Analyzer, Interval};
use relax_ir::{BinOp, DataType, Pool, PrimExpr, PrimExprData, PrimFunc, SymVar};

/// The loops that replace `k` over a range of it.
#[derive(Clone, Debug)]
pub struct KLoops {
    /// Loop variables, outermost first; the last is the lanes loop.
    pub vars: Vec<SymVar>,
    /// Their extents.
    pub extents: Vec<i64>,
    /// `k` in terms of the loops (plus the range's start).
    pub k: PrimExpr,
}

/// How `k` is split: the lanes and the chain of block sizes (ascending, each a multiple
/// of the previous and of the lanes).
#[derive(Clone, Debug)]
pub struct Split {
    /// Iterations of the innermost (vector) loop.
    pub lanes: i64,
    /// Block sizes above the lanes.
    pub chain: Vec<i64>,
}

impl Split {
    /// The loops over `extent` values of `k` from `start` (`extent` a multiple of the
    /// largest block size), named after `name`.
    pub fn loops(&self, f: &mut PrimFunc, name: &str, extent: i64, start: Option<PrimExpr>) -> KLoops {
        // Steps: B_m, ..., B_1, L, 1; the first loop covers the range.
        let mut steps: Vec<i64> = self.chain.iter().rev().copied().collect();
        steps.extend([self.lanes, 1]);
        let extents: Vec<i64> =
            (0..steps.len()).map(|d| if d == 0 { extent / steps[0] } else { steps[d - 1] / steps[d] }).collect();
        let mut vars = Vec::with_capacity(steps.len());
        let mut k = start.unwrap_or_else(|| f.pool.i64(0));
        for (d, &step) in steps.iter().enumerate() {
            let v = f.pool.new_var(format!("{name}_{d}"), DataType::INT64);
            let vr = f.pool.var_ref(v);
            let sc = f.pool.i64(step);
            let t = bin(&mut f.pool, BinOp::Mul, vr, sc);
            k = bin(&mut f.pool, BinOp::Add, k, t);
            vars.push(v);
        }
        KLoops { vars, extents, k }
    }
}

/// `a op b`, folded where the builder can.
pub fn bin(p: &mut Pool, op: BinOp, a: PrimExpr, b: PrimExpr) -> PrimExpr {
    p.binary(op, a, b).unwrap_or_else(|_| p.raw(PrimExprData::Bin(op, a, b)))
}

/// The divisors of floor divisions and modulos applied to expressions that mention `k`.
fn divisors(pool: &Pool, e: PrimExpr, k: SymVar, out: &mut Vec<i64>) {
    let mut stack = vec![e];
    while let Some(e) = stack.pop() {
        if let PrimExprData::Bin(BinOp::FloorDiv | BinOp::FloorMod, a, b) = pool.prim(e)
            && let Some(c) = pool.as_int(*b)
            && c > 1
            && pool.free_vars(*a).contains(&k)
            && !out.contains(&c)
        {
            out.push(c);
        }
        pool.for_each_operand(e, |o| stack.push(o));
    }
}

/// True when `l` appears in no division or modulo of `e`.
fn lane_affine(pool: &Pool, e: PrimExpr, l: SymVar) -> bool {
    let mut stack = vec![e];
    while let Some(e) = stack.pop() {
        if let PrimExprData::Bin(BinOp::FloorDiv | BinOp::FloorMod | BinOp::Div | BinOp::Mod, a, b) = pool.prim(e)
            && (pool.free_vars(*a).contains(&l) || pool.free_vars(*b).contains(&l))
        {
            return false;
        }
        pool.for_each_operand(e, |o| stack.push(o));
    }
    true
}

/// The split of `k` (extent `kext`) for `term`: the widest lanes from `max_lanes` down
/// to 4 that leave the lanes loop affine.
pub fn choose(f: &mut PrimFunc, term: PrimExpr, k: SymVar, kext: i64, max_lanes: i64) -> Option<Split> {
    let mut divs = Vec::new();
    divisors(&f.pool, term, k, &mut divs);
    divs.sort_unstable();
    let mut lanes = max_lanes;
    while lanes >= 4 {
        if kext % lanes == 0 {
            let mut chain: Vec<i64> = Vec::new();
            for &d in &divs {
                let prev = chain.last().copied().unwrap_or(lanes);
                if d > prev && d % prev == 0 && kext % d == 0 {
                    chain.push(d);
                }
            }
            let split = Split { lanes, chain };
            let kl = split.loops(f, "k", kext, None);
            let an = analyzer(&kl, &[]);
            let e = relax_ir::arith::substitute(&mut f.pool, term, &HashMap::from([(k, kl.k)]));
            let e = simplify_ints(&mut f.pool, &an, e);
            if lane_affine(&f.pool, e, *kl.vars.last().expect("the lanes loop")) {
                return Some(split);
            }
        }
        lanes /= 2;
    }
    None
}

/// An analyzer with the ranges of the loops of `kl` and of `extra` (variable, extent).
pub fn analyzer(kl: &KLoops, extra: &[(SymVar, i64)]) -> Analyzer {
    let mut an = Analyzer::new();
    for (&v, &e) in kl.vars.iter().zip(&kl.extents) {
        an.bind(v, Interval::new(0, e - 1));
    }
    for &(v, e) in extra {
        an.bind(v, Interval::new(0, e - 1));
    }
    an
}

/// `e` with every integer index computation simplified in normal form: load indices,
/// and integer arithmetic of variables and constants (shift amounts, conditions'
/// operands); loads, calls and casts keep their place.
pub fn simplify_ints(pool: &mut Pool, an: &Analyzer, e: PrimExpr) -> PrimExpr {
    let mut memo = HashMap::new();
    walk(pool, an, e, &mut memo)
}

fn is_index_arith(pool: &Pool, e: PrimExpr) -> bool {
    let dt = pool.dtype(e);
    if !dt.is_int() || dt.lanes != 1 {
        return false;
    }
    match pool.prim(e) {
        PrimExprData::Int(..) | PrimExprData::Var(_) => true,
        PrimExprData::Bin(op, a, b) => {
            matches!(op, BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::FloorDiv | BinOp::FloorMod)
                && is_index_arith(pool, *a)
                && is_index_arith(pool, *b)
        }
        PrimExprData::Cast(_, a) => is_index_arith(pool, *a),
        _ => false,
    }
}

fn walk(pool: &mut Pool, an: &Analyzer, e: PrimExpr, memo: &mut HashMap<PrimExpr, PrimExpr>) -> PrimExpr {
    if let Some(&r) = memo.get(&e) {
        return r;
    }
    let r = if is_index_arith(pool, e) && !matches!(pool.prim(e), PrimExprData::Cast(..)) {
        // Casts inside stay as opaque atoms of the canonical form, so their operands
        // are simplified first.
        let inner = rebuild(pool, an, e, memo);
        an.simplify(pool, inner)
    } else {
        rebuild(pool, an, e, memo)
    };
    memo.insert(e, r);
    r
}

/// `e` with its operands simplified.
fn rebuild(pool: &mut Pool, an: &Analyzer, e: PrimExpr, memo: &mut HashMap<PrimExpr, PrimExpr>) -> PrimExpr {
    let mut ops = Vec::new();
    pool.for_each_operand(e, |o| ops.push(o));
    if ops.is_empty() {
        return e;
    }
    let new: Vec<PrimExpr> = ops.iter().map(|&o| walk(pool, an, o, memo)).collect();
    if new == ops { e } else { with_operands(pool, e, new) }
}

/// `e` with the operands `new` (in `for_each_operand` order); binary operations and
/// casts fold, other nodes are rebuilt as they are.
pub fn with_operands(pool: &mut Pool, e: PrimExpr, new: Vec<PrimExpr>) -> PrimExpr {
    let data = pool.prim(e).clone();
    let mut it = new.into_iter();
    let mut next = || it.next().expect("an operand");
    let rebuilt = match data {
        PrimExprData::Bin(op, ..) => return bin(pool, op, next(), next()),
        PrimExprData::Cast(t, _) => return pool.cast(t, next()),
        other => other.map_operands(|_| next()),
    };
    pool.raw(rebuilt)
}
