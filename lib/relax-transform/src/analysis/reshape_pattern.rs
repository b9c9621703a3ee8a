//! Does a PrimFunc only copy its first buffer into its last one in row-major order (TVM's
//! `HasReshapePattern`, used by `rewrite-dataflow-reshape`)?
//!
//! The body must be a nest of loops around one block whose iteration variables are all
//! data-parallel and whose body is `dst[...] = src[...]` (the first and last buffer
//! parameters). The flattened (row-major) indices of both sides must be equal:
//!
//! 1. When one side is the trivial access `buf[v0, v1, ...]` (every index the block
//!    variable of its position, domain `[0, dim)`), the other side's flattened index,
//!    with each block variable written as a digit of one fused index
//!    (`v_i = (fused // stride_i) % extent_i`), must simplify to `fused` itself. This is
//!    TVM's `IterMapSimplify` check; here a small algebra of *splits*
//!    `(fused // lower) % extent` decides it: sums of splits that tile a contiguous range
//!    fuse, and `// c` and `% c` act on a single split when `c` divides its extent. All
//!    comparisons are proofs of the symbolic analyzer, so symbolic shapes work
//!    (`lv[v // 256 % n, v % 256]` for a `(n, 256)` source).
//! 2. Otherwise the analyzer must prove the two flattened indices equal, after `x % d`
//!    and `x // d` by a symbolic `d` with `0 <= x < d` provable (`x` a block variable of
//!    domain `[0, d)`) became `x` and 0, which TVM's `IterMapSimplify` does: scheduled
//!    reshapes over fused loops read `src[(... + v0) % n, ...]`.

use std::collections::HashMap;

use relax_ir::arith::{Analyzer, Interval};
use relax_ir::{BinOp, BlockNode, Buffer, IterKind, Pool, PrimExpr, PrimExprData, PrimFunc, StmtData, SymVar};

/// True when `f` has TVM's reshape pattern (see the module documentation).
pub fn has_reshape_pattern(f: &PrimFunc) -> bool {
    let buffers: Vec<Buffer> = f.params.iter().filter_map(|&p| f.param_buffer(p)).collect();
    if buffers.len() < 2 {
        return false;
    }
    let (src, dst) = (buffers[0], buffers[buffers.len() - 1]);
    // The root block, then loops down to one block.
    let mut s = f.body;
    if let StmtData::Block(b) = &f.stmts[s]
        && b.iter_vars.is_empty()
    {
        s = b.body;
    }
    loop {
        match &f.stmts[s] {
            StmtData::For { body, .. } => {
                if !matches!(f.stmts[*body], StmtData::For { .. } | StmtData::Block(_)) {
                    return false;
                }
                s = *body;
            }
            StmtData::Block(b) => {
                if b.iter_vars.iter().any(|iv| iv.kind != IterKind::Spatial) {
                    return false;
                }
                if matches!(f.stmts[b.body], StmtData::For { .. }) {
                    s = b.body;
                    continue;
                }
                return block_is_reshape(f, b, src, dst);
            }
            _ => return false,
        }
    }
}

fn block_is_reshape(f: &PrimFunc, b: &BlockNode, src: Buffer, dst: Buffer) -> bool {
    let StmtData::Store { buffer, indices: st_idx, value } = &f.stmts[b.body] else { return false };
    let PrimExprData::Load { buffer: lb, indices: ld_idx, .. } = f.pool.prim(*value) else { return false };
    if *buffer != dst || *lb != src {
        return false;
    }
    let mut pool = f.pool.clone();
    let mut an = Analyzer::new();
    for iv in &b.iter_vars {
        if let (Some(lo), Some(ext)) = (pool.as_int(iv.dom.min), pool.as_int(iv.dom.extent)) {
            an.bind(iv.var, Interval::new(lo, lo + ext - 1));
        }
    }
    let iters: Vec<(SymVar, PrimExpr)> = b.iter_vars.iter().map(|iv| (iv.var, iv.dom.extent)).collect();
    let zero = pool.i64(0);
    let trivial = |buf: Buffer, idx: &[PrimExpr], pool: &Pool| {
        idx.len() == b.iter_vars.len()
            && idx.iter().zip(&b.iter_vars).zip(&f.buffers[buf].shape).all(|((&i, iv), &dim)| {
                pool.as_var(i) == Some(iv.var)
                    && an.prove_equal(pool, iv.dom.min, zero)
                    && an.prove_equal(pool, dim, iv.dom.extent)
            })
    };
    let nontrivial = if trivial(dst, st_idx, &pool) {
        Some((src, ld_idx.clone()))
    } else if trivial(src, ld_idx, &pool) {
        Some((dst, st_idx.clone()))
    } else {
        None
    };
    if let Some((buf, idx)) = nontrivial {
        let shape = f.buffers[buf].shape.clone();
        if let Some(flat) = flatten(&mut pool, &shape, &idx)
            && fuses_to_identity(&mut pool, &an, &iters, flat)
        {
            return true;
        }
    }
    // Check 2: the flattened indices are provably equal, once divisions and modulos by
    // a symbolic block extent that their operand provably stays below are removed
    // (TVM's scheduled reshapes read `src[(... + v0) % n, ...]` with `v0` in `[0, n)`).
    let ranges: Vec<(SymVar, PrimExpr)> = b
        .iter_vars
        .iter()
        .filter(|iv| an.prove_equal(&pool, iv.dom.min, zero))
        .map(|iv| (iv.var, iv.dom.extent))
        .collect();
    let ld: Vec<PrimExpr> = ld_idx.iter().map(|&i| drop_symbolic_wrap(&mut pool, &an, &ranges, i)).collect();
    let st: Vec<PrimExpr> = st_idx.iter().map(|&i| drop_symbolic_wrap(&mut pool, &an, &ranges, i)).collect();
    let (Some(a), Some(c)) = (
        flatten(&mut pool, &f.buffers[src].shape.clone(), &ld),
        flatten(&mut pool, &f.buffers[dst].shape.clone(), &st),
    ) else {
        return false;
    };
    an.prove_equal(&pool, a, c)
}

/// `e` simplified, with `x % d` replaced by `x` and `x // d` by 0 where `d` is not a
/// constant and `0 <= x < d` is provable: `x` simplifies to a block variable whose
/// domain is `[0, d)` (`ranges`), or its constant bounds lie in `[0, lower bound of d)`.
/// The analyzer knows only constant ranges, so it cannot do this itself.
fn drop_symbolic_wrap(pool: &mut Pool, an: &Analyzer, ranges: &[(SymVar, PrimExpr)], e: PrimExpr) -> PrimExpr {
    let rebuilt = match pool.prim(e).clone() {
        PrimExprData::Bin(op, a, d) => {
            let a = drop_symbolic_wrap(pool, an, ranges, a);
            let d = drop_symbolic_wrap(pool, an, ranges, d);
            let wraps = matches!(op, BinOp::FloorMod | BinOp::Mod | BinOp::FloorDiv | BinOp::Div);
            if wraps && pool.as_int(d).is_none() && below(pool, an, ranges, a, d) {
                return match op {
                    BinOp::FloorMod | BinOp::Mod => a,
                    _ => {
                        let dtype = pool.dtype(a);
                        pool.raw(PrimExprData::Int(dtype, 0))
                    }
                };
            }
            match pool.binary(op, a, d) {
                Ok(x) => x,
                Err(_) => return e,
            }
        }
        PrimExprData::Cast(dtype, a) => {
            let a = drop_symbolic_wrap(pool, an, ranges, a);
            pool.raw(PrimExprData::Cast(dtype, a))
        }
        _ => e,
    };
    an.simplify(pool, rebuilt)
}

/// True when `0 <= x < d` is provable (see [`drop_symbolic_wrap`]).
fn below(pool: &mut Pool, an: &Analyzer, ranges: &[(SymVar, PrimExpr)], x: PrimExpr, d: PrimExpr) -> bool {
    let x = an.simplify(pool, x);
    if let Some(v) = pool.as_var(x)
        && ranges.iter().any(|&(r, ext)| r == v && an.prove_equal(pool, ext, d))
    {
        return true;
    }
    let (bx, bd) = (an.bound(pool, x), an.bound(pool, d));
    matches!((bx.lo, bx.hi, bd.lo), (Some(lo), Some(hi), Some(dlo)) if lo >= 0 && hi < dlo)
}

/// `((i0 * d1 + i1) * d2 + i2) ...`, built with the folding constructors.
fn flatten(pool: &mut Pool, shape: &[PrimExpr], idx: &[PrimExpr]) -> Option<PrimExpr> {
    if shape.len() != idx.len() {
        return None;
    }
    let mut acc = pool.i64(0);
    for (&d, &i) in shape.iter().zip(idx) {
        let m = pool.binary(BinOp::Mul, acc, d).ok()?;
        acc = pool.binary(BinOp::Add, m, i).ok()?;
    }
    Some(acc)
}

/// `coeff * ((fused // lower) % extent)`; `extent: None` is unbounded (no modulo).
#[derive(Clone, Debug)]
struct Split {
    lower: PrimExpr,
    extent: Option<PrimExpr>,
    coeff: PrimExpr,
}

/// A sum of splits of the fused index plus a part free of block variables.
#[derive(Clone, Debug)]
struct SplitSum {
    terms: Vec<Split>,
    konst: PrimExpr,
}

struct Ctx<'a> {
    pool: &'a mut Pool,
    an: &'a Analyzer,
    /// Each block variable as a split of the fused index.
    iters: HashMap<SymVar, Split>,
}

impl Ctx<'_> {
    fn eq(&self, a: PrimExpr, b: PrimExpr) -> bool {
        self.an.prove_equal(self.pool, a, b)
    }
    fn mul(&mut self, a: PrimExpr, b: PrimExpr) -> Option<PrimExpr> {
        self.pool.binary(BinOp::Mul, a, b).ok()
    }
    fn add(&mut self, a: PrimExpr, b: PrimExpr) -> Option<PrimExpr> {
        self.pool.binary(BinOp::Add, a, b).ok()
    }
    fn is_const(&self, e: PrimExpr) -> bool {
        self.pool.free_vars(e).iter().all(|v| !self.iters.contains_key(v))
    }
    /// `q` with `q * c == e` provably, when `c` divides `e` exactly.
    fn exact_div(&mut self, e: PrimExpr, c: PrimExpr) -> Option<PrimExpr> {
        let raw = self.pool.binary(BinOp::FloorDiv, e, c).ok()?;
        let q = self.an.simplify(self.pool, raw);
        let back = self.mul(q, c)?;
        self.eq(back, e).then_some(q)
    }

    fn norm(&mut self, e: PrimExpr) -> Option<SplitSum> {
        if self.is_const(e) {
            return Some(SplitSum { terms: Vec::new(), konst: e });
        }
        let zero = self.pool.i64(0);
        match self.pool.prim(e).clone() {
            PrimExprData::Var(v) => {
                let s = self.iters.get(&v)?.clone();
                Some(SplitSum { terms: vec![s], konst: zero })
            }
            PrimExprData::Cast(_, a) => self.norm(a),
            PrimExprData::Bin(op, a, b) => match op {
                BinOp::Add => {
                    let (x, y) = (self.norm(a)?, self.norm(b)?);
                    let konst = self.add(x.konst, y.konst)?;
                    let mut terms = x.terms;
                    terms.extend(y.terms);
                    Some(self.fuse(SplitSum { terms, konst }))
                }
                BinOp::Mul => {
                    let (s, k) = if self.is_const(b) {
                        (a, b)
                    } else if self.is_const(a) {
                        (b, a)
                    } else {
                        return None;
                    };
                    let x = self.norm(s)?;
                    let mut terms = Vec::new();
                    for t in x.terms {
                        let coeff = self.mul(t.coeff, k)?;
                        terms.push(Split { coeff, ..t });
                    }
                    let konst = self.mul(x.konst, k)?;
                    Some(SplitSum { terms, konst })
                }
                BinOp::FloorDiv | BinOp::Div if self.is_const(b) => {
                    let t = self.single(a)?;
                    let one = self.pool.i64(1);
                    let coeff = if self.eq(t.coeff, b) {
                        return Some(SplitSum { terms: vec![Split { coeff: one, ..t }], konst: zero });
                    } else if self.eq(t.coeff, one) {
                        one
                    } else {
                        return None;
                    };
                    let lower = self.mul(t.lower, b)?;
                    let extent = match t.extent {
                        None => None,
                        Some(ext) => Some(self.exact_div(ext, b)?),
                    };
                    Some(SplitSum { terms: vec![Split { lower, extent, coeff }], konst: zero })
                }
                BinOp::FloorMod | BinOp::Mod if self.is_const(b) => {
                    let t = self.single(a)?;
                    let one = self.pool.i64(1);
                    if !self.eq(t.coeff, one) {
                        return None;
                    }
                    let extent = match t.extent {
                        None => b,
                        Some(ext) if self.an.prove_le(self.pool, ext, b) => ext,
                        Some(ext) => {
                            self.exact_div(ext, b)?;
                            b
                        }
                    };
                    Some(SplitSum { terms: vec![Split { extent: Some(extent), ..t }], konst: zero })
                }
                _ => None,
            },
            _ => None,
        }
    }

    /// The single split of `e` (no constant part).
    fn single(&mut self, e: PrimExpr) -> Option<Split> {
        let x = self.norm(e)?;
        let zero = self.pool.i64(0);
        if x.terms.len() != 1 || !self.eq(x.konst, zero) {
            return None;
        }
        x.terms.into_iter().next()
    }

    /// Drops always-zero splits (extent 1) and merges pairs that tile contiguously.
    fn fuse(&mut self, mut s: SplitSum) -> SplitSum {
        let one = self.pool.i64(1);
        s.terms.retain(|t| !t.extent.is_some_and(|e| self.an.prove_equal(self.pool, e, one)));
        loop {
            let mut merged = None;
            'search: for i in 0..s.terms.len() {
                let Some(ext) = s.terms[i].extent else { continue };
                for j in 0..s.terms.len() {
                    if i == j {
                        continue;
                    }
                    let (lo, co) = (s.terms[i].lower, s.terms[i].coeff);
                    let (Some(next_lower), Some(next_coeff)) = (self.mul(lo, ext), self.mul(co, ext)) else {
                        continue;
                    };
                    if self.eq(s.terms[j].lower, next_lower) && self.eq(s.terms[j].coeff, next_coeff) {
                        let extent = match s.terms[j].extent {
                            None => None,
                            Some(e2) => match self.mul(ext, e2) {
                                Some(x) => Some(x),
                                None => continue,
                            },
                        };
                        merged = Some((i, j, Split { lower: lo, extent, coeff: co }));
                        break 'search;
                    }
                }
            }
            let Some((i, j, m)) = merged else { return s };
            let (hi, lo) = if i > j { (i, j) } else { (j, i) };
            s.terms.remove(hi);
            s.terms.remove(lo);
            s.terms.push(m);
        }
    }
}

/// True when `flat`, with the block variables written as digits of one fused index,
/// is the fused index itself.
fn fuses_to_identity(pool: &mut Pool, an: &Analyzer, iters: &[(SymVar, PrimExpr)], flat: PrimExpr) -> bool {
    // Strides, innermost first; the outermost variable needs no modulo.
    let mut splits = HashMap::new();
    let mut stride = pool.i64(1);
    for (k, &(v, ext)) in iters.iter().enumerate().rev() {
        let extent = if k == 0 { None } else { Some(ext) };
        let one = pool.i64(1);
        splits.insert(v, Split { lower: stride, extent, coeff: one });
        match pool.binary(BinOp::Mul, stride, ext) {
            Ok(s) => stride = s,
            Err(_) => return false,
        }
    }
    let total = stride;
    let mut cx = Ctx { pool, an, iters: splits };
    let Some(s) = cx.norm(flat) else { return false };
    let zero = cx.pool.i64(0);
    let one = cx.pool.i64(1);
    if s.terms.is_empty() {
        // A constant index: the identity only when the fused index takes the single
        // value 0 (no block variables, or all of extent 1: a scalar to `(1,)`).
        return cx.eq(s.konst, zero) && cx.eq(total, one);
    }
    if s.terms.len() != 1 || !cx.eq(s.konst, zero) {
        return false;
    }
    let t = &s.terms[0];
    cx.eq(t.coeff, one) && cx.eq(t.lower, one) && t.extent.is_none_or(|e| cx.an.prove_le(cx.pool, total, e))
}

#[cfg(test)]
mod tests {
    use super::has_reshape_pattern;

    fn prim(text: &str, name: &str) -> bool {
        let m = relax_parser::parse_module(text).expect("parses");
        let g = m.lookup(name).expect("function");
        has_reshape_pattern(m.prim_func(g).expect("a PrimFunc"))
    }

    const HEADER: &str =
        "# from tvm.script import ir as I\n# from tvm.script import tirx as T\n\n@I.ir_module\nclass Module:\n";

    #[test]
    fn symbolic_flatten_is_a_reshape() {
        let text = format!(
            "{HEADER}    @T.prim_func(private=True, s_tir=True)
    def reshape(var_a: T.handle, var_b: T.handle):
        n = T.int64()
        a = T.match_buffer(var_a, (n, T.int64(256)))
        b = T.match_buffer(var_b, (n * T.int64(256),))
        for ax0 in range(n * T.int64(256)):
            with T.sblock(\"T_reshape\"):
                v_ax0 = T.axis.spatial(n * T.int64(256), ax0)
                T.reads(a[v_ax0 // T.int64(256) % n, v_ax0 % T.int64(256)])
                T.writes(b[v_ax0])
                b[v_ax0] = a[v_ax0 // T.int64(256) % n, v_ax0 % T.int64(256)]
"
        );
        assert!(prim(&text, "reshape"));
    }

    #[test]
    fn static_split_is_a_reshape_and_transpose_is_not() {
        let text = format!(
            "{HEADER}    @T.prim_func(private=True, s_tir=True)
    def reshape(a: T.Buffer((T.int64(2), T.int64(6)), \"float32\"), b: T.Buffer((T.int64(3), T.int64(4)), \"float32\")):
        for ax0, ax1 in T.grid(T.int64(3), T.int64(4)):
            with T.sblock(\"T_reshape\"):
                v0, v1 = T.axis.remap(\"SS\", [ax0, ax1])
                T.reads(a[(v0 * T.int64(4) + v1) // T.int64(6), (v0 * T.int64(4) + v1) % T.int64(6)])
                T.writes(b[v0, v1])
                b[v0, v1] = a[(v0 * T.int64(4) + v1) // T.int64(6), (v0 * T.int64(4) + v1) % T.int64(6)]

    @T.prim_func(private=True, s_tir=True)
    def transpose(a: T.Buffer((T.int64(2), T.int64(3)), \"float32\"), b: T.Buffer((T.int64(3), T.int64(2)), \"float32\")):
        for ax0, ax1 in T.grid(T.int64(3), T.int64(2)):
            with T.sblock(\"T_transpose\"):
                v0, v1 = T.axis.remap(\"SS\", [ax0, ax1])
                T.reads(a[v1, v0])
                T.writes(b[v0, v1])
                b[v0, v1] = a[v1, v0]
"
        );
        assert!(prim(&text, "reshape"));
        assert!(!prim(&text, "transpose"));
    }

    /// TVM's `test_reshape_scalar`: a 0-d tensor to `(1,)` is a reshape; to `(2,)` (a
    /// broadcast) it is not.
    #[test]
    fn scalar_to_one_element_is_a_reshape() {
        let kernel = |n: u32| {
            format!(
                "{HEADER}    @T.prim_func(private=True, s_tir=True)
    def reshape(x: T.Buffer((), \"float32\"), T_reshape: T.Buffer((T.int64({n}),), \"float32\")):
        for ax0 in range(T.int64({n})):
            with T.sblock(\"T_reshape\"):
                v_ax0 = T.axis.spatial(T.int64({n}), ax0)
                T.reads(x[()])
                T.writes(T_reshape[v_ax0])
                T_reshape[v_ax0] = x[()]
"
            )
        };
        assert!(prim(&kernel(1), "reshape"));
        assert!(!prim(&kernel(2), "reshape"));
    }

    /// TVM's `test_reshape_dynamic_shape` (test_transform_rewrite_dataflow_reshape.py): a
    /// scheduled reshape over fused, thread-bound loops, whose source index wraps the
    /// outermost block variable in `% n`. The wrong variant reads `% 32` of a 16-wide
    /// dim shifted by one, which is not a reshape.
    #[test]
    fn scheduled_symbolic_reshape_is_a_reshape() {
        let kernel = |wrap: &str| {
            format!(
                "{HEADER}    @T.prim_func(private=True, s_tir=True)
    def reshape(var_A: T.handle, var_T_reshape: T.handle):
        T.func_attr({{\"tirx.is_scheduled\": True, \"tirx.noalias\": True}})
        n = T.int32()
        A = T.match_buffer(var_A, (n, 16, 128), \"float16\")
        T_reshape = T.match_buffer(var_T_reshape, (1, n, 16, 128), \"float16\")
        for ax0_ax1_ax2_fused_0 in T.thread_binding(n * 2, thread=\"blockIdx.x\"):
            for ax0_ax1_ax2_fused_1 in T.thread_binding(1024, thread=\"threadIdx.x\"):
                with T.sblock(\"T_reshape\"):
                    v0 = T.axis.spatial(n, (ax0_ax1_ax2_fused_0 * 1024 + ax0_ax1_ax2_fused_1) // 2048)
                    v1 = T.axis.spatial(16, (ax0_ax1_ax2_fused_0 * 1024 + ax0_ax1_ax2_fused_1) % 2048 // 128)
                    v2 = T.axis.spatial(128, (ax0_ax1_ax2_fused_0 * 1024 + ax0_ax1_ax2_fused_1) % 128)
                    T.reads(A[{wrap}, v2 % 128])
                    T.writes(T_reshape[0, v0, v1, v2])
                    T_reshape[0, v0, v1, v2] = A[{wrap}, v2 % 128]
"
            )
        };
        assert!(prim(&kernel("((v2 // 128 + v1) // 32 + v0) % n, (v2 // 128 + v1) % 32"), "reshape"));
        assert!(!prim(&kernel("((v2 // 128 + v1 + 1) // 32 + v0) % n, (v2 // 128 + v1 + 1) % 32"), "reshape"));
    }
}
