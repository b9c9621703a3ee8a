//! Buffer regions: `A[v0, 0:4]` in `T.reads`/`T.writes`/`T.match_buffer`, and the
//! regions of a block that has no `T.reads`/`T.writes`, computed from its body as TVM's
//! script completer does (`GetBlockAccessRegion`), in a simplified form.
//!
//! **Written regions.** An index is one element (`[i, i + 1)`, extent 1 of the index's
//! type); `lo:hi` is `[lo, hi)` with the extent `hi - lo` (`lo + c : ...` style bounds
//! give `c`); a missing bound is `0` or the dim.
//!
//! **Computed regions** (documented simplification of TVM's integer-set analysis). The
//! body and the `T.init()` statement are visited in TVM's order; each load is a read and
//! each store a write of the buffer accessed. Only buffers visible outside the block
//! count: parameter buffers, root allocations and allocations of enclosing blocks (not
//! the block's own). An access to a `T.match_buffer` view counts as an access to the
//! whole source region. A nested block contributes its own regions with its iteration
//! variables replaced by their bindings. Per index:
//! * an index that uses no variable of a loop inside the block is a single point;
//! * `v` or `e + v` for such a loop variable `v` covers the loop's range (shifted by `e`);
//! * anything else covers the whole dim (`0:dim`).
//!
//! Accesses to one buffer are merged dim by dim: equal ranges stay, constant ranges
//! become their hull, anything else becomes the whole dim. Buffers keep the order of
//! their first access; when the block has `T.init()`, written buffers are left out of
//! the reads.

use std::collections::HashMap;

use relax_ir::{
    BinOp, Buffer, BufferRegion, DataType, MatchBufferRegion, PrimExpr, PrimExprData, Range, Stmt, StmtData, SymVar,
};

use super::super::LResult;
use super::super::prim_expr::binary;
use super::scope::TirCx;
use crate::ast::{self, ExprKind};

/// One dim of an access while regions are merged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Dim {
    /// `[min, min + extent)`.
    Range(PrimExpr, PrimExpr),
    /// The whole dim.
    Full,
}

/// The accesses of one kind (reads or writes), per buffer in first-access order.
#[derive(Default)]
struct Accesses {
    order: Vec<Buffer>,
    dims: HashMap<Buffer, Vec<Dim>>,
}

/// Work items of the statement walk.
enum Work {
    Stmt(Stmt),
    EndLoop(SymVar),
}

impl TirCx<'_, '_> {
    /// A region written in the text: `A[v0, 0:4]`.
    pub(super) fn region(&mut self, e: &ast::Expr) -> LResult<BufferRegion> {
        let ExprKind::Subscript { value, index } = &e.kind else {
            return Err(
                self.err(e.span, format!("expected a buffer region such as `A[i, 0:4]`, found {}", e.describe()))
            );
        };
        let Some(name) = value.as_name() else {
            return Err(self.err(value.span, "expected a buffer name"));
        };
        let buffer = self.buffer_named(name, value.span)?;
        let ndim = self.buffers[buffer].shape.len();
        let index = crate::lower::prim_expr::subscript_indices(index);
        if index.len() != ndim {
            return Err(self.err(
                e.span,
                format!(
                    "buffer `{name}` has {ndim} dimension{} but is indexed with {}",
                    if ndim == 1 { "" } else { "s" },
                    index.len()
                ),
            ));
        }
        let mut region = Vec::with_capacity(ndim);
        for (i, ix) in index.iter().enumerate() {
            let r = match &ix.kind {
                ExprKind::Slice { lower, upper, step } => {
                    if let Some(st) = step {
                        return Err(self.err(st.span, "a region slice takes no step"));
                    }
                    let min = match lower {
                        Some(l) => self.int_expr(l, "a region bound")?,
                        None => self.pool.int(DataType::INT32, 0),
                    };
                    let max = match upper {
                        Some(u) => self.int_expr(u, "a region bound")?,
                        None => self.buffers[buffer].shape[i],
                    };
                    let extent = self.sub_simplified(max, min, ix.span)?;
                    Range { min, extent }
                }
                _ => {
                    let min = self.int_expr(ix, "a region index")?;
                    let t = self.pool.dtype(min);
                    Range { min, extent: self.pool.int(t, 1) }
                }
            };
            region.push(r);
        }
        Ok(BufferRegion { buffer, region })
    }

    /// `hi - lo`, recognising `hi = lo + c` (and `c + lo`) as `c`.
    pub(super) fn sub_simplified(&mut self, hi: PrimExpr, lo: PrimExpr, span: ast::Span) -> LResult<PrimExpr> {
        if hi == lo {
            let t = self.pool.dtype(hi);
            return Ok(self.pool.int(t, 0));
        }
        if let PrimExprData::Bin(BinOp::Add, a, b) = *self.pool.prim(hi) {
            if a == lo {
                return Ok(b);
            }
            if b == lo {
                return Ok(a);
            }
        }
        binary(self, span, BinOp::Sub, hi, lo)
    }

    /// The reads and writes of a block body (and its init), as described above.
    pub(super) fn detect_access(
        &mut self,
        body: Stmt,
        init: Option<Stmt>,
        matches: &[MatchBufferRegion],
    ) -> (Vec<BufferRegion>, Vec<BufferRegion>) {
        let mut reads = Accesses::default();
        let mut writes = Accesses::default();
        let mut loops: HashMap<SymVar, (PrimExpr, PrimExpr)> = HashMap::new();
        let mut work: Vec<Work> = vec![Work::Stmt(body)];
        if let Some(i) = init {
            work.push(Work::Stmt(i));
        }
        while let Some(w) = work.pop() {
            let s = match w {
                Work::Stmt(s) => s,
                Work::EndLoop(v) => {
                    loops.remove(&v);
                    continue;
                }
            };
            match self.stmts[s].clone() {
                StmtData::Seq(v) => work.extend(v.into_iter().rev().map(Work::Stmt)),
                StmtData::For { var, min, extent, body, .. } => {
                    self.loads(min, &loops, matches, &mut reads);
                    self.loads(extent, &loops, matches, &mut reads);
                    loops.insert(var, (min, extent));
                    work.push(Work::EndLoop(var));
                    work.push(Work::Stmt(body));
                }
                StmtData::Block(b) => {
                    let map: HashMap<SymVar, PrimExpr> = b.iter_vars.iter().map(|iv| (iv.var, iv.binding)).collect();
                    for (acc, regions) in [(&mut reads, &b.reads), (&mut writes, &b.writes)] {
                        for r in regions {
                            let dims = r
                                .region
                                .iter()
                                .map(|rg| {
                                    let min = self.substitute(rg.min, &map);
                                    let extent = self.substitute(rg.extent, &map);
                                    if self.pool.as_int(extent) == Some(1) {
                                        self.relax(min, &loops)
                                    } else if self.uses_any(min, &loops) || self.uses_any(extent, &loops) {
                                        Dim::Full
                                    } else {
                                        Dim::Range(min, extent)
                                    }
                                })
                                .collect();
                            self.record(acc, r.buffer, dims, matches);
                        }
                    }
                }
                StmtData::Store { buffer, indices, value } => {
                    let dims = indices.iter().map(|&i| self.relax(i, &loops)).collect();
                    self.record(&mut writes, buffer, dims, matches);
                    self.loads(value, &loops, matches, &mut reads);
                    for i in indices {
                        self.loads(i, &loops, matches, &mut reads);
                    }
                }
                StmtData::If { cond, then_branch, else_branch } => {
                    self.loads(cond, &loops, matches, &mut reads);
                    work.extend(else_branch.map(Work::Stmt));
                    work.push(Work::Stmt(then_branch));
                }
                StmtData::While { cond, body } => {
                    self.loads(cond, &loops, matches, &mut reads);
                    work.push(Work::Stmt(body));
                }
                StmtData::Let { value, body, .. } | StmtData::Attr { value, body, .. } => {
                    self.loads(value, &loops, matches, &mut reads);
                    work.push(Work::Stmt(body));
                }
                StmtData::Assert { cond, message, body } => {
                    self.loads(cond, &loops, matches, &mut reads);
                    self.loads(message, &loops, matches, &mut reads);
                    work.push(Work::Stmt(body));
                }
                StmtData::DeclBuffer { body, .. } | StmtData::Allocate { body, .. } => work.push(Work::Stmt(body)),
                StmtData::Evaluate(e) => self.loads(e, &loops, matches, &mut reads),
            }
        }
        let write_regions = self.collect(&writes, &[]);
        let excluded: Vec<Buffer> = if init.is_some() { writes.order.clone() } else { Vec::new() };
        let read_regions = self.collect(&reads, &excluded);
        (read_regions, write_regions)
    }

    /// Records the loads of `e` (pre-order, left to right) as reads.
    fn loads(
        &mut self,
        e: PrimExpr,
        loops: &HashMap<SymVar, (PrimExpr, PrimExpr)>,
        matches: &[MatchBufferRegion],
        reads: &mut Accesses,
    ) {
        let mut stack = vec![e];
        while let Some(e) = stack.pop() {
            if let PrimExprData::Load { buffer, indices, .. } = self.pool.prim(e).clone() {
                let dims = indices.iter().map(|&i| self.relax(i, loops)).collect();
                self.record(reads, buffer, dims, matches);
            }
            let mut ops = Vec::new();
            self.pool.for_each_operand(e, |o| ops.push(o));
            stack.extend(ops.into_iter().rev());
        }
    }

    /// Adds one access, merging it with earlier accesses of the same buffer.
    fn record(&mut self, acc: &mut Accesses, buffer: Buffer, dims: Vec<Dim>, matches: &[MatchBufferRegion]) {
        let (buffer, dims) = match matches.iter().find(|m| m.buffer == buffer) {
            Some(m) => (m.source.buffer, m.source.region.iter().map(|r| Dim::Range(r.min, r.extent)).collect()),
            None => (buffer, dims),
        };
        if !self.region_buffers.contains(&buffer) {
            return;
        }
        match acc.dims.get(&buffer).cloned() {
            None => {
                acc.order.push(buffer);
                acc.dims.insert(buffer, dims);
            }
            Some(old) => {
                let merged = old.iter().zip(&dims).map(|(&a, &b)| self.union(a, b)).collect();
                acc.dims.insert(buffer, merged);
            }
        }
    }

    /// The union of two ranges of one dim.
    fn union(&mut self, a: Dim, b: Dim) -> Dim {
        if a == b {
            return a;
        }
        let (Dim::Range(m1, e1), Dim::Range(m2, e2)) = (a, b) else { return Dim::Full };
        let ints = [m1, e1, m2, e2].map(|x| self.pool.as_int(x));
        let t = self.pool.dtype(m1);
        match ints {
            [Some(m1v), Some(e1v), Some(m2v), Some(e2v)] if self.pool.dtype(m2) == t => {
                let lo = m1v.min(m2v);
                let hi = (m1v + e1v).max(m2v + e2v);
                let te = self.pool.dtype(e1);
                Dim::Range(self.pool.int(t, lo), self.pool.int(te, hi - lo))
            }
            _ => Dim::Full,
        }
    }

    /// The range an index covers when the loops inside the block run.
    fn relax(&mut self, e: PrimExpr, loops: &HashMap<SymVar, (PrimExpr, PrimExpr)>) -> Dim {
        if !self.uses_any(e, loops) {
            let t = self.pool.dtype(e);
            return Dim::Range(e, self.pool.int(t, 1));
        }
        if let Some(v) = self.as_var(e) {
            let (min, extent) = loops[&v];
            return Dim::Range(min, extent);
        }
        if let PrimExprData::Bin(BinOp::Add, a, b) = *self.pool.prim(e) {
            for (base, var) in [(a, b), (b, a)] {
                if let Some(v) = self.as_var(var)
                    && let Some(&(min, extent)) = loops.get(&v)
                    && !self.uses_any(base, loops)
                    && let Ok(lo) = self.pool.binary(BinOp::Add, base, min)
                {
                    return Dim::Range(lo, extent);
                }
            }
        }
        Dim::Full
    }

    /// True when `e` uses a variable of `loops`.
    fn uses_any(&self, e: PrimExpr, loops: &HashMap<SymVar, (PrimExpr, PrimExpr)>) -> bool {
        !loops.is_empty() && self.pool.free_vars(e).iter().any(|v| loops.contains_key(v))
    }

    /// `e` with variables replaced (nodes rebuilt as they are, without folding).
    fn substitute(&mut self, e: PrimExpr, map: &HashMap<SymVar, PrimExpr>) -> PrimExpr {
        if map.is_empty() {
            return e;
        }
        let data = self.pool.prim(e).clone();
        let new = match data {
            PrimExprData::Var(v) => return map.get(&v).copied().unwrap_or(e),
            PrimExprData::Int(..) | PrimExprData::Float(..) | PrimExprData::Str(_) => return e,
            PrimExprData::Load { dtype, buffer, indices } => PrimExprData::Load {
                dtype,
                buffer,
                indices: indices.iter().map(|&i| self.substitute(i, map)).collect(),
            },
            PrimExprData::Bin(op, a, b) => PrimExprData::Bin(op, self.substitute(a, map), self.substitute(b, map)),
            PrimExprData::Not(a) => PrimExprData::Not(self.substitute(a, map)),
            PrimExprData::Cast(t, a) => PrimExprData::Cast(t, self.substitute(a, map)),
            PrimExprData::Select(c, t, f) => {
                PrimExprData::Select(self.substitute(c, map), self.substitute(t, map), self.substitute(f, map))
            }
            PrimExprData::Call { dtype, op, args } => {
                PrimExprData::Call { dtype, op, args: args.iter().map(|&a| self.substitute(a, map)).collect() }
            }
            PrimExprData::Let { var, value, body } => {
                PrimExprData::Let { var, value: self.substitute(value, map), body: self.substitute(body, map) }
            }
            PrimExprData::Ramp { base, stride, lanes } => {
                PrimExprData::Ramp { base: self.substitute(base, map), stride: self.substitute(stride, map), lanes }
            }
            PrimExprData::Broadcast { value, lanes } => {
                PrimExprData::Broadcast { value: self.substitute(value, map), lanes }
            }
        };
        self.pool.raw(new)
    }

    /// The merged regions, whole dims made explicit (`0:dim`).
    fn collect(&mut self, acc: &Accesses, excluded: &[Buffer]) -> Vec<BufferRegion> {
        let mut out = Vec::new();
        for &b in &acc.order {
            if excluded.contains(&b) {
                continue;
            }
            let dims = acc.dims[&b].clone();
            let region = dims
                .into_iter()
                .enumerate()
                .map(|(i, d)| match d {
                    Dim::Range(min, extent) => Range { min, extent },
                    Dim::Full => Range { min: self.pool.int(DataType::INT32, 0), extent: self.buffers[b].shape[i] },
                })
                .collect();
            out.push(BufferRegion { buffer: b, region });
        }
        out
    }
}
