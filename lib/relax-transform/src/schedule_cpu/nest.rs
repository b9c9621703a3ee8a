//! The scheduling library: perfect loop nests over one block, and the loop
//! transformations of TVM's schedule language on them (split, fuse, reorder, parallel,
//! vectorize, unroll, decompose-reduction).
//!
//! A [`Nest`] is read from the statement tree ([`Nest::read`]), transformed, and written
//! back as new statements ([`Nest::build`]). Loop variables appear only in the block's
//! iteration bindings and predicate (block isolation), so a transformation rewrites just
//! those.

use std::collections::HashMap;

use relax_ir::arith::substitute;
use relax_ir::tir::{BlockNode, IterVar};
use relax_ir::{Attrs, BinOp, Buffer, ForKind, IterKind, PrimExpr, PrimExprData, PrimFunc, Stmt, StmtData, SymVar};

use super::inline::{loads_of, single_store};

/// One loop of a nest: `for var in range(extent)` of some kind.
#[derive(Clone, Debug)]
pub struct Loop {
    /// The loop variable.
    pub var: SymVar,
    /// The trip count.
    pub extent: PrimExpr,
    /// Serial, parallel, vectorized or unrolled.
    pub kind: ForKind,
}

/// A perfect nest of loops starting at 0 around one block with iteration variables.
#[derive(Clone, Debug)]
pub struct Nest {
    /// Outermost first.
    pub loops: Vec<Loop>,
    /// The block statement.
    pub block: Stmt,
}

/// The payload of a block statement.
pub fn block(f: &PrimFunc, s: Stmt) -> &BlockNode {
    match &f.stmts[s] {
        StmtData::Block(b) => b,
        _ => panic!("not a block"),
    }
}

/// The payload of a block statement, mutably.
pub fn block_mut(f: &mut PrimFunc, s: Stmt) -> &mut BlockNode {
    match &mut f.stmts[s] {
        StmtData::Block(b) => b,
        _ => panic!("not a block"),
    }
}

impl Nest {
    /// The nest rooted at `s`: serial loops from 0 without annotations around a block
    /// with iteration variables.
    pub fn read(f: &PrimFunc, s: Stmt) -> Option<Nest> {
        let mut loops = Vec::new();
        let mut at = s;
        loop {
            match &f.stmts[at] {
                StmtData::For {
                    var,
                    min,
                    extent,
                    kind: ForKind::Serial,
                    thread: None,
                    step: None,
                    annotations,
                    body,
                } if f.pool.as_int(*min) == Some(0) && annotations.0.is_empty() => {
                    loops.push(Loop { var: *var, extent: *extent, kind: ForKind::Serial });
                    at = *body;
                }
                StmtData::Block(b) if !b.iter_vars.is_empty() => return Some(Nest { loops, block: at }),
                _ => return None,
            }
        }
    }

    /// For each iteration variable, the index of the loop it is bound to when the
    /// binding is exactly that loop's variable over the loop's whole range.
    pub fn identity_bindings(&self, f: &PrimFunc) -> Option<Vec<usize>> {
        let b = block(f, self.block);
        let mut out = Vec::with_capacity(b.iter_vars.len());
        for iv in &b.iter_vars {
            let v = f.pool.as_var(iv.binding)?;
            let li = self.loops.iter().position(|l| l.var == v)?;
            if f.pool.as_int(iv.dom.min) != Some(0) || iv.dom.extent != self.loops[li].extent {
                return None;
            }
            if out.contains(&li) {
                return None;
            }
            out.push(li);
        }
        Some(out)
    }

    /// The statement of this nest: new loops around the block.
    pub fn build(&self, f: &mut PrimFunc) -> Stmt {
        wrap(f, &self.loops, self.block)
    }

    /// Substitutes loop variables in the block's bindings and predicate.
    fn rebind(&self, f: &mut PrimFunc, map: &HashMap<SymVar, PrimExpr>) {
        let mut b = block(f, self.block).clone();
        for iv in &mut b.iter_vars {
            iv.binding = substitute(&mut f.pool, iv.binding, map);
        }
        if let Some(p) = b.predicate {
            b.predicate = Some(substitute(&mut f.pool, p, map));
        }
        *block_mut(f, self.block) = b;
    }

    /// Adds a conjunct to the block's predicate.
    fn add_predicate(&self, f: &mut PrimFunc, cond: PrimExpr) {
        let old = block(f, self.block).predicate;
        let p = match old {
            Some(p) => f
                .pool
                .binary(BinOp::And, p, cond)
                .unwrap_or_else(|_| f.pool.raw(PrimExprData::Bin(BinOp::And, p, cond))),
            None => cond,
        };
        block_mut(f, self.block).predicate = Some(p);
    }

    /// Splits loop `i` into an outer loop and an inner loop of `factor` iterations; when
    /// `factor` does not divide the extent, the block gets the predicate
    /// `outer * factor + inner < extent`.
    pub fn split(&mut self, f: &mut PrimFunc, i: usize, factor: i64) {
        let l = self.loops[i].clone();
        let dt = f.pool.vars[l.var].dtype;
        let name = f.pool.vars[l.var].name.clone();
        let outer = f.pool.new_var(format!("{name}_0"), dt);
        let inner = f.pool.new_var(format!("{name}_1"), dt);
        let fac = f.pool.int(dt, factor);
        let (oe, exact) = match f.pool.as_int(l.extent) {
            Some(e) => (f.pool.int(dt, (e + factor - 1) / factor), e % factor == 0),
            None => (ceil_div(f, l.extent, factor), false),
        };
        let (o, n) = (f.pool.var_ref(outer), f.pool.var_ref(inner));
        let value = mul_add(f, o, fac, n);
        self.rebind(f, &HashMap::from([(l.var, value)]));
        if !exact {
            let c = f.pool.binary(BinOp::Lt, value, l.extent).expect("int64 comparison");
            self.add_predicate(f, c);
        }
        self.loops.splice(
            i..=i,
            [Loop { var: outer, extent: oe, kind: l.kind }, Loop { var: inner, extent: fac, kind: ForKind::Serial }],
        );
    }

    /// Fuses loops `i` and `i + 1` into one.
    pub fn fuse(&mut self, f: &mut PrimFunc, i: usize) {
        let (a, b) = (self.loops[i].clone(), self.loops[i + 1].clone());
        let dt = f.pool.vars[a.var].dtype;
        let name = format!("{}_{}_fused", f.pool.vars[a.var].name, f.pool.vars[b.var].name);
        let fused = f.pool.new_var(name, dt);
        let fv = f.pool.var_ref(fused);
        let extent = f.pool.binary(BinOp::Mul, a.extent, b.extent).expect("int64 product");
        let va = f.pool.binary(BinOp::FloorDiv, fv, b.extent).expect("int64 division");
        let vb = f.pool.binary(BinOp::FloorMod, fv, b.extent).expect("int64 modulo");
        self.rebind(f, &HashMap::from([(a.var, va), (b.var, vb)]));
        self.loops.splice(i..=i + 1, [Loop { var: fused, extent, kind: a.kind }]);
    }

    /// Fuses loops `i..j` (at least one) into one; returns its index.
    pub fn fuse_range(&mut self, f: &mut PrimFunc, i: usize, j: usize) -> usize {
        for _ in i + 1..j {
            self.fuse(f, i);
        }
        i
    }

    /// Puts the loops in the order `order` (a permutation of their indices).
    pub fn reorder(&mut self, order: &[usize]) {
        self.loops = order.iter().map(|&i| self.loops[i].clone()).collect();
    }

    /// Sets the kind of loop `i` (`parallel`, `vectorize`, `unroll`).
    pub fn set_kind(&mut self, i: usize, kind: ForKind) {
        self.loops[i].kind = kind;
    }

    /// TVM's `decompose_reduction` at loop `at` (the outermost loop of the reduction):
    /// the block's `T.init` becomes a block `NAME_init` of its own, run before that loop.
    /// Returns the statement of the whole nest.
    pub fn build_decomposed(&self, f: &mut PrimFunc, at: usize) -> Stmt {
        let b = block(f, self.block).clone();
        let Some(init) = b.init else { return self.build(f) };
        let mut map = HashMap::new();
        let mut ivs = Vec::new();
        for iv in b.iter_vars.iter().filter(|iv| iv.kind != IterKind::Reduce) {
            let nv = f.pool.vars.push(f.pool.vars[iv.var].clone());
            map.insert(iv.var, f.pool.var_ref(nv));
            ivs.push(IterVar { var: nv, dom: iv.dom, kind: iv.kind, binding: iv.binding });
        }
        let body = copy_stmt(f, init, &map);
        let writes = b
            .writes
            .iter()
            .map(|r| {
                let mut r = r.clone();
                for x in &mut r.region {
                    x.min = substitute(&mut f.pool, x.min, &map);
                    x.extent = substitute(&mut f.pool, x.extent, &map);
                }
                r
            })
            .collect();
        let init_block = BlockNode {
            name: format!("{}_init", b.name),
            iter_vars: ivs,
            predicate: b.predicate.map(|p| substitute(&mut f.pool, p, &map)),
            reads: Vec::new(),
            writes,
            annotations: Attrs::default(),
            alloc_buffers: Vec::new(),
            match_buffers: Vec::new(),
            init: None,
            body,
        };
        let init_stmt = f.stmts.push(StmtData::Block(Box::new(init_block)));
        block_mut(f, self.block).init = None;
        let update = wrap(f, &self.loops[at..], self.block);
        let seq = f.stmts.push(StmtData::Seq(vec![init_stmt, update]));
        wrap(f, &self.loops[..at], seq)
    }
}

/// `loops` around `body`.
pub fn wrap(f: &mut PrimFunc, loops: &[Loop], body: Stmt) -> Stmt {
    let mut s = body;
    for l in loops.iter().rev() {
        let dt = f.pool.vars[l.var].dtype;
        let min = f.pool.int(dt, 0);
        s = f.stmts.push(StmtData::For {
            var: l.var,
            min,
            extent: l.extent,
            kind: l.kind,
            thread: None,
            step: None,
            annotations: Attrs::default(),
            body: s,
        });
    }
    s
}

/// `a * b + c`, folded.
pub fn mul_add(f: &mut PrimFunc, a: PrimExpr, b: PrimExpr, c: PrimExpr) -> PrimExpr {
    let m = f.pool.binary(BinOp::Mul, a, b).expect("int64 product");
    f.pool.binary(BinOp::Add, m, c).expect("int64 sum")
}

/// `(e + d - 1) // d`.
pub fn ceil_div(f: &mut PrimFunc, e: PrimExpr, d: i64) -> PrimExpr {
    let dt = f.pool.dtype(e);
    let k = f.pool.int(dt, d - 1);
    let dd = f.pool.int(dt, d);
    let s = f.pool.binary(BinOp::Add, e, k).expect("int sum");
    f.pool.binary(BinOp::FloorDiv, s, dd).expect("int division")
}

/// A copy of a statement tree with variables substituted (loops and blocks inside get
/// no fresh variables: use it only on trees without definitions, like `T.init` bodies).
pub fn copy_stmt(f: &mut PrimFunc, s: Stmt, map: &HashMap<SymVar, PrimExpr>) -> Stmt {
    let data = f.stmts[s].clone();
    let new = match data {
        StmtData::Seq(v) => StmtData::Seq(v.into_iter().map(|x| copy_stmt(f, x, map)).collect()),
        StmtData::Store { buffer, indices, value } => StmtData::Store {
            buffer,
            indices: indices.into_iter().map(|i| substitute(&mut f.pool, i, map)).collect(),
            value: substitute(&mut f.pool, value, map),
        },
        StmtData::If { cond, then_branch, else_branch } => StmtData::If {
            cond: substitute(&mut f.pool, cond, map),
            then_branch: copy_stmt(f, then_branch, map),
            else_branch: else_branch.map(|e| copy_stmt(f, e, map)),
        },
        StmtData::Evaluate(e) => StmtData::Evaluate(substitute(&mut f.pool, e, map)),
        other => other,
    };
    f.stmts.push(new)
}

/// The nest at `s` when it is a plain spatial block: identity bindings, no `T.init`,
/// predicate, allocations or match buffers, and every iteration variable spatial (an
/// elementwise producer or epilogue).
pub fn spatial_nest(f: &PrimFunc, s: Stmt) -> Option<(Nest, &BlockNode)> {
    let nest = Nest::read(f, s)?;
    nest.identity_bindings(f)?;
    let b = block(f, nest.block);
    if b.init.is_some() || b.predicate.is_some() || !b.alloc_buffers.is_empty() || !b.match_buffers.is_empty() {
        return None;
    }
    if b.iter_vars.iter().any(|iv| iv.kind != IterKind::Spatial) {
        return None;
    }
    Some((nest, b))
}

/// A block without iteration variables: a scope for the allocations `allocs` around
/// `body`.
pub fn scope_block(f: &mut PrimFunc, name: String, allocs: Vec<relax_ir::Buffer>, body: Stmt) -> Stmt {
    f.stmts.push(StmtData::Block(Box::new(BlockNode {
        name,
        iter_vars: Vec::new(),
        predicate: None,
        reads: Vec::new(),
        writes: Vec::new(),
        annotations: Attrs::default(),
        alloc_buffers: allocs,
        match_buffers: Vec::new(),
        init: None,
        body,
    })))
}

/// A sum over the last loop of a nest: spatial loops, then one reduce loop, identity
/// bindings, no predicate, allocations or match buffers, and the block
/// `out[spatial] = out[spatial] + term` with `T.init` `out[spatial] = init`, neither
/// `term` nor `init` reading `out` (the float and the quantized matmuls' shape).
pub struct SumNest<'f> {
    /// The loops.
    pub nest: Nest,
    /// The block.
    pub block: &'f BlockNode,
    /// The accumulated buffer.
    pub out: Buffer,
    /// The spatial iteration variables, in order.
    pub spatial: Vec<SymVar>,
    /// The reduction's iteration variable.
    pub k: SymVar,
    /// The initial value.
    pub init: PrimExpr,
    /// The summed term.
    pub term: PrimExpr,
}

/// The [`SumNest`] at `s`, if it is one.
pub fn sum_nest(f: &PrimFunc, s: Stmt) -> Option<SumNest<'_>> {
    let nest = Nest::read(f, s)?;
    let map = nest.identity_bindings(f)?;
    let nl = nest.loops.len();
    if nl < 2 || map != (0..nl).collect::<Vec<_>>() {
        return None;
    }
    let b = block(f, nest.block);
    let kinds: Vec<IterKind> = b.iter_vars.iter().map(|iv| iv.kind).collect();
    if kinds[..nl - 1].iter().any(|&k| k != IterKind::Spatial) || kinds[nl - 1] != IterKind::Reduce {
        return None;
    }
    if b.predicate.is_some() || !b.alloc_buffers.is_empty() || !b.match_buffers.is_empty() {
        return None;
    }
    let (out, idx, update) = single_store(f, b.body)?;
    let (out0, idx0, init) = single_store(f, b.init?)?;
    let spatial: Vec<SymVar> = b.iter_vars[..nl - 1].iter().map(|iv| iv.var).collect();
    let plain = |ix: &[PrimExpr]| {
        ix.len() == spatial.len() && ix.iter().zip(&spatial).all(|(&e, &v)| f.pool.as_var(e) == Some(v))
    };
    if out0 != out || !plain(&idx) || !plain(&idx0) || f.buffer(out).dtype.lanes != 1 {
        return None;
    }
    let is_acc = |e: PrimExpr| matches!(f.pool.prim(e), PrimExprData::Load { buffer, indices, .. } if *buffer == out && *indices == idx);
    let term = match f.pool.prim(update) {
        PrimExprData::Bin(BinOp::Add, a, t) if is_acc(*a) => *t,
        PrimExprData::Bin(BinOp::Add, t, a) if is_acc(*a) => *t,
        _ => return None,
    };
    let mut own = Vec::new();
    loads_of(&f.pool, term, out, &mut own);
    loads_of(&f.pool, init, out, &mut own);
    if !own.is_empty() {
        return None;
    }
    let k = b.iter_vars[nl - 1].var;
    Some(SumNest { nest, block: b, out, spatial, k, init, term })
}
