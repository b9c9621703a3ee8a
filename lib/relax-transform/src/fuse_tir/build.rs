//! Building the PrimFunc of one `Primitive` Relax function (TVM's `FusedTIRConstructor`,
//! `algorithms.md` §3 steps 1–4).
//!
//! 1. Each tensor parameter becomes a buffer of the parameter's shape and dtype (named
//!    after it, reached through a handle `p_<name>`); each `R.Prim` parameter its
//!    variable, each `R.Shape` parameter its variables (scalar parameters, after the
//!    outputs).
//! 2. Each `call_tir` binding: the kernel's parameter buffers are matched against the
//!    buffers of the arguments ([`super::matcher`]); its outputs are new intermediate
//!    buffers `<kernel buffer>_intermediate` of the `out_sinfo` shapes (for
//!    `call_tir_inplace`, the input buffers); its root block's allocations and body are
//!    copied with fresh definitions ([`super::copy`]). Tuples and tuple items gather and
//!    slice the buffers a value stands for.
//! 3. The buffers of the function's result are the outputs: an input buffer makes the
//!    call in place, the others become parameters `p_output0`, `p_output1`, ....
//! 4. The bodies in order, block names made unique (`compute`, `compute1`, ...), inside a
//!    new root block that allocates the intermediates.
//!
//! Anything a PrimFunc cannot express (a kernel without a root block, a constant or a
//! `match_cast` inside, unknown shapes, a failed symbolic match) is an error message;
//! the caller then leaves the function unfused.

use std::collections::{HashMap, HashSet};

use relax_ir::ops;
use relax_ir::prim::PrimExprData;
use relax_ir::tir::{BlockNode, PrimFunc, StmtData, TirSpans};
use relax_ir::{
    AttrValue, Attrs, BindingKind, Buffer, BufferData, DataType, Expr, ExprData, Global, Module, PrimExpr,
    RelaxFunction, Stmt, SymVar, SymVarData, TensorShape, Ty, TyData, Var,
};

use super::copy::Copier;
use super::matcher::Matcher;
use crate::fuse_ops::graph::is_call_tir;

/// A fused PrimFunc.
#[derive(Debug)]
pub struct Fused {
    /// The function.
    pub func: PrimFunc,
    /// For each output, the index of the tensor argument it is computed in, or `-1`;
    /// empty when no output is computed in place.
    pub inplace: Vec<i64>,
}

struct Builder<'a> {
    m: &'a Module,
    f: &'a RelaxFunction,
    t: PrimFunc,
    /// Relax symbolic variable → target expression.
    rsym: HashMap<SymVar, PrimExpr>,
    /// The buffers each Relax variable stands for.
    bufs: HashMap<Var, Vec<Buffer>>,
    /// Allocations of the root block, in order.
    allocs: Vec<Buffer>,
    bodies: Vec<Stmt>,
    matcher: Matcher,
    calls: usize,
}

fn empty_prim_func() -> PrimFunc {
    PrimFunc {
        pool: relax_ir::Pool::new(),
        buffers: Default::default(),
        stmts: Default::default(),
        params: Vec::new(),
        buffer_map: Vec::new(),
        ret: DataType::VOID,
        attrs: Attrs(vec![("tirx.noalias".to_string(), AttrValue::Bool(true))]),
        body: relax_entity::EntityRef::new(0),
        s_tir: true,
        persistent: false,
        spans: TirSpans::default(),
    }
}

/// The tensors a type holds, flattened.
fn tensor_count(f: &RelaxFunction, t: Ty) -> usize {
    match f.pool.ty(t) {
        TyData::Tuple(fields) => fields.iter().map(|&x| tensor_count(f, x)).sum(),
        _ => 1,
    }
}

/// Builds the PrimFunc of the `Primitive` function `f` of `m`.
pub fn build(m: &Module, f: &RelaxFunction) -> Result<Fused, String> {
    let mut b = Builder {
        m,
        f,
        t: empty_prim_func(),
        rsym: HashMap::new(),
        bufs: HashMap::new(),
        allocs: Vec::new(),
        bodies: Vec::new(),
        matcher: Matcher::default(),
        calls: 0,
    };
    let scopes = b.param_scopes();
    // 1. Parameters.
    let mut inputs: Vec<(SymVar, Buffer)> = Vec::new();
    let mut scalars: Vec<SymVar> = Vec::new();
    for &p in &f.func.params {
        let name = f.vars[p].name.clone();
        match f.pool.ty(f.vars[p].ty).clone() {
            TyData::Tensor { shape: TensorShape::Dims(dims), dtype, .. } if !dtype.is_void() => {
                let shape: Vec<PrimExpr> = dims.iter().map(|&d| b.import(d)).collect();
                let (scope, seps) = scopes.get(&p).cloned().unwrap_or(("global".to_string(), Vec::new()));
                let buf = b.new_buffer(&name, dtype, shape, &scope, seps);
                let h = b.t.pool.new_var(format!("p_{name}"), DataType::HANDLE);
                inputs.push((h, buf));
                b.bufs.insert(p, vec![buf]);
            }
            TyData::Prim { value: Some(v), .. } => {
                let e = b.import(v);
                let Some(sv) = b.t.pool.as_var(e) else {
                    return Err(format!("parameter `{name}` must be a symbolic variable"));
                };
                scalars.push(sv);
            }
            TyData::Shape { values: Some(vs), .. } => {
                for v in vs {
                    let e = b.import(v);
                    let Some(sv) = b.t.pool.as_var(e) else {
                        return Err(format!("the values of parameter `{name}` must be symbolic variables"));
                    };
                    scalars.push(sv);
                }
            }
            TyData::Tuple(_) => return Err(format!("parameter `{name}` is a tuple")),
            _ => return Err(format!("parameter `{name}` must be a tensor of known shape and dtype, or a scalar")),
        }
    }
    // 2. The bindings.
    for &blk in &f.body().blocks {
        for bd in &f.blocks[blk].bindings {
            if let BindingKind::MatchCast(_) = bd.kind {
                return Err("a `match_cast` cannot be part of a fused kernel".to_string());
            }
            let bufs = b.value(bd.value)?;
            b.bufs.insert(bd.var, bufs);
        }
    }
    // 3. Outputs.
    let result = b.operand_buffers(f.body().body)?;
    let input_index: HashMap<Buffer, usize> = inputs.iter().enumerate().map(|(i, &(_, buf))| (buf, i)).collect();
    let mut params: Vec<SymVar> = inputs.iter().map(|&(h, _)| h).collect();
    let mut buffer_map = inputs.clone();
    let mut inplace = Vec::new();
    let mut any_inplace = false;
    let mut outputs: HashSet<Buffer> = HashSet::new();
    let mut k = 0;
    for buf in result {
        if let Some(&i) = input_index.get(&buf) {
            if inplace.contains(&(i as i64)) {
                return Err(format!("input {i} is computed in place twice"));
            }
            inplace.push(i as i64);
            any_inplace = true;
            continue;
        }
        if outputs.contains(&buf) {
            return Err("the function returns one buffer twice".to_string());
        }
        inplace.push(-1);
        let h = b.t.pool.new_var(format!("p_output{k}"), DataType::HANDLE);
        k += 1;
        params.push(h);
        buffer_map.push((h, buf));
        outputs.insert(buf);
    }
    params.extend(scalars);
    // 4. Assembly.
    let mut items = Vec::new();
    for s in std::mem::take(&mut b.bodies) {
        flatten(&b.t, s, &mut items);
    }
    let body = if items.len() == 1 { items[0] } else { b.t.stmts.push(StmtData::Seq(items)) };
    dedup_block_names(&mut b.t, body);
    let allocs: Vec<Buffer> = b.allocs.iter().copied().filter(|x| !outputs.contains(x)).collect();
    let root = BlockNode {
        name: "root".to_string(),
        iter_vars: Vec::new(),
        predicate: None,
        reads: Vec::new(),
        writes: Vec::new(),
        annotations: Attrs::new(),
        alloc_buffers: allocs,
        match_buffers: Vec::new(),
        init: None,
        body,
    };
    let mut t = b.t;
    t.body = t.stmts.push(StmtData::Block(Box::new(root)));
    t.params = params;
    t.buffer_map = buffer_map;
    Ok(Fused { func: t, inplace: if any_inplace { inplace } else { Vec::new() } })
}

impl Builder<'_> {
    fn import(&mut self, e: PrimExpr) -> PrimExpr {
        self.t.pool.import_prim(&self.f.pool, e, &mut self.rsym)
    }

    fn new_buffer(&mut self, name: &str, dtype: DataType, shape: Vec<PrimExpr>, scope: &str, seps: Vec<i64>) -> Buffer {
        let storage = if dtype.is_bool() { DataType::INT8 } else { dtype };
        let data = self.t.pool.vars.push(SymVarData::pointer(name, storage, scope));
        let mut d = BufferData::new(name, data, dtype, shape);
        d.scope = scope.to_string();
        d.axis_separators = seps;
        self.t.buffers.push(d)
    }

    /// The storage scope (and axis separators) of the kernel buffer each parameter
    /// meets last (TVM's `RelaxToTIRVarMapCollector`).
    fn param_scopes(&self) -> HashMap<Var, (String, Vec<i64>)> {
        let (m, f) = (self.m, self.f);
        let mut out = HashMap::new();
        for &blk in &f.body().blocks {
            for bd in &f.blocks[blk].bindings {
                let ExprData::Call(call) = &f.exprs[bd.value] else { continue };
                let Some(kernel) = kernel_of(m, f, call) else { continue };
                for (i, a) in call_args(f, call).into_iter().enumerate() {
                    if let (ExprData::Var(v), Some(&p)) = (&f.exprs[a], kernel.params.get(i))
                        && let Some(kb) = kernel.param_buffer(p)
                    {
                        let d = &kernel.buffers[kb];
                        out.insert(*v, (d.scope.clone(), d.axis_separators.clone()));
                    }
                }
            }
        }
        out
    }

    /// The buffers a leaf operand stands for.
    fn operand_buffers(&self, e: Expr) -> Result<Vec<Buffer>, String> {
        match &self.f.exprs[e] {
            ExprData::Var(v) => {
                self.bufs.get(v).cloned().ok_or_else(|| format!("`{}` is not a tensor", self.f.vars[*v].name))
            }
            ExprData::Tuple(fields) => {
                let mut out = Vec::new();
                for &x in self.f.list(fields) {
                    out.extend(self.operand_buffers(x)?);
                }
                Ok(out)
            }
            ExprData::Const(_) => Err("a constant cannot be part of a fused kernel".to_string()),
            _ => Err("an operand that is not a tensor variable cannot be part of a fused kernel".to_string()),
        }
    }

    /// The buffers of a binding's value.
    fn value(&mut self, e: Expr) -> Result<Vec<Buffer>, String> {
        let f = self.f;
        match &f.exprs[e] {
            ExprData::Call(call) => match &f.exprs[call.callee] {
                ExprData::Op(op) if is_call_tir(op) => self.call_tir(call, op.is(ops::CALL_TIR_INPLACE)),
                ExprData::Op(op) => Err(format!("`{}` is not lowered to a kernel (run legalize-ops first)", op.name())),
                _ => Err("only kernel calls (`call_tir`) can be fused".to_string()),
            },
            ExprData::GetItem { tuple, index } => {
                let all = self.operand_buffers(*tuple)?;
                let fields = match f.ty_of(*tuple).map(|t| f.pool.ty(t).clone()) {
                    Some(TyData::Tuple(fields)) => fields,
                    _ => return Err("a tuple item of a value that is not a tuple".to_string()),
                };
                let begin: usize = fields.iter().take(*index as usize).map(|&t| tensor_count(f, t)).sum();
                let len = fields.get(*index as usize).map_or(0, |&t| tensor_count(f, t));
                all.get(begin..begin + len)
                    .map(<[Buffer]>::to_vec)
                    .ok_or_else(|| "a tuple item out of range".to_string())
            }
            ExprData::Var(_) | ExprData::Tuple(_) => self.operand_buffers(e),
            _ => Err("only kernel calls (`call_tir`), tuples and tuple items can be fused".to_string()),
        }
    }

    fn call_tir(&mut self, call: &relax_ir::Call, inplace: bool) -> Result<Vec<Buffer>, String> {
        let (m, f) = (self.m, self.f);
        let g = match f.list(call.args).first().map(|&a| &f.exprs[a]) {
            Some(&ExprData::Global(g)) => g,
            _ => return Err("`call_tir` without a global callee".to_string()),
        };
        let name = &m.globals[g].name;
        let kernel = m.prim_func(g).ok_or_else(|| format!("`{name}` is not a PrimFunc"))?;
        let root = kernel
            .root_block()
            .ok_or_else(|| format!("kernel `{name}` is not schedulable (its body is not a root block)"))?;
        let ci = self.calls;
        self.calls += 1;
        // Inputs.
        let args = call_args(f, call);
        let mut arg_bufs = Vec::new();
        for &a in &args {
            arg_bufs.extend(self.operand_buffers(a)?);
        }
        if kernel.params.len() < arg_bufs.len() {
            return Err(format!("kernel `{name}` takes fewer parameters than it is given"));
        }
        let mut bmap: HashMap<Buffer, Buffer> = HashMap::new();
        for (i, &tb) in arg_bufs.iter().enumerate() {
            let kb = kernel
                .param_buffer(kernel.params[i])
                .ok_or_else(|| format!("parameter {i} of kernel `{name}` is not a buffer"))?;
            self.match_buffer(ci, kernel, kb, tb, name)?;
            bmap.insert(kb, tb);
        }
        // The root block's allocations come first in the allocation list.
        let alloc_pos = self.allocs.len();
        let root_names: Vec<String> = root.alloc_buffers.iter().map(|&x| kernel.buffers[x].name.clone()).collect();
        // Outputs.
        let out_tys: Vec<Ty> = match call.sinfo_args.as_slice() {
            [t] => match f.pool.ty(*t) {
                TyData::Tuple(fields) => fields.clone(),
                _ => vec![*t],
            },
            _ => return Err("`call_tir` needs one `out_sinfo`".to_string()),
        };
        let n_in = arg_bufs.len();
        let out_idx: Vec<usize> = if inplace {
            let idx = call.attrs.get("inplace_indices").and_then(AttrValue::as_int_list).unwrap_or_default();
            let mut next = n_in;
            idx.iter()
                .map(|&i| {
                    if i >= 0 {
                        i as usize
                    } else {
                        next += 1;
                        next - 1
                    }
                })
                .collect()
        } else {
            (n_in..n_in + out_tys.len()).collect()
        };
        let mut outs = Vec::new();
        for (i, &ot) in out_tys.iter().enumerate() {
            let pi = *out_idx.get(i).ok_or("`inplace_indices` does not match the outputs")?;
            let kp = *kernel.params.get(pi).ok_or_else(|| format!("kernel `{name}` has no output parameter {pi}"))?;
            let kb = kernel.param_buffer(kp).ok_or_else(|| format!("output {i} of kernel `{name}` is not a buffer"))?;
            if pi < n_in {
                outs.push(arg_bufs[pi]);
                continue;
            }
            let TyData::Tensor { shape: TensorShape::Dims(dims), .. } = f.pool.ty(ot).clone() else {
                return Err("the outputs of a fused kernel must have known shapes".to_string());
            };
            let shape: Vec<PrimExpr> = dims.iter().map(|&d| self.import(d)).collect();
            let kd = kernel.buffers[kb].clone();
            let names: Vec<String> =
                self.allocs.iter().map(|&x| self.t.buffers[x].name.clone()).chain(root_names.iter().cloned()).collect();
            let mut unique = format!("{}_intermediate", kd.name);
            let mut id = 0;
            while names.contains(&unique) {
                id += 1;
                unique = format!("{unique}_{id}");
            }
            let nb = self.new_buffer(&unique, kd.dtype, shape, &kd.scope, kd.axis_separators.clone());
            self.allocs.push(nb);
            self.match_buffer(ci, kernel, kb, nb, name)?;
            bmap.insert(kb, nb);
            outs.push(nb);
        }
        // Scalar arguments: the kernel's last parameters.
        if let Some(&s) = f.list(call.args).get(2) {
            let ExprData::Shape(dims) = f.exprs[s].clone() else {
                return Err("`tir_vars` must be a shape".to_string());
            };
            let np = kernel.params.len();
            if dims.len() > np {
                return Err(format!("kernel `{name}` takes fewer scalar parameters than it is given"));
            }
            for (i, &d) in dims.iter().enumerate() {
                let kv = kernel.params[np - dims.len() + i];
                let te = self.import(d);
                self.matcher.bind(ci, &kernel.pool, kv, &mut self.t.pool, te)?;
            }
        }
        self.matcher.check(&kernel.pool, &mut self.t.pool, true).map_err(|e| format!("kernel `{name}`: {e}"))?;
        // Copy the kernel.
        let vars: HashMap<SymVar, PrimExpr> =
            self.matcher.map.iter().filter(|((c, _), _)| *c == ci).map(|(&(_, v), &e)| (v, e)).collect();
        let mut cp = Copier::new(kernel, vars, HashMap::new());
        for (&kb, &tb) in &bmap {
            cp.buffers.insert(kb, tb);
            let te = self.t.pool.raw(PrimExprData::Var(self.t.buffers[tb].data));
            cp.vars.insert(kernel.buffers[kb].data, te);
        }
        let mut root_copies = Vec::new();
        for &ab in &root.alloc_buffers {
            root_copies.push(cp.buffer_def(&mut self.t, ab, None));
        }
        let body = cp.stmt(&mut self.t, root.body);
        if let Some(&v) = cp.unbound.first() {
            return Err(format!(
                "the value of `{}` in kernel `{name}` cannot be determined from its arguments",
                kernel.pool.vars[v].name
            ));
        }
        self.allocs.splice(alloc_pos..alloc_pos, root_copies);
        self.bodies.push(body);
        Ok(outs)
    }

    /// Matches the shape of kernel buffer `kb` against target buffer `tb`.
    fn match_buffer(&mut self, ci: usize, kernel: &PrimFunc, kb: Buffer, tb: Buffer, name: &str) -> Result<(), String> {
        let ks = kernel.buffers[kb].shape.clone();
        let ts = self.t.buffers[tb].shape.clone();
        if ks.len() != ts.len() {
            return Err(format!(
                "buffer `{}` of kernel `{name}` has {} dims, but the argument has {}",
                kernel.buffers[kb].name,
                ks.len(),
                ts.len()
            ));
        }
        if kernel.buffers[kb].dtype != self.t.buffers[tb].dtype {
            return Err(format!("buffer `{}` of kernel `{name}` has another dtype", kernel.buffers[kb].name));
        }
        for (k, t) in ks.into_iter().zip(ts) {
            self.matcher
                .matches(ci, &kernel.pool, k, &mut self.t.pool, t)
                .map_err(|e| format!("kernel `{name}`: {e}"))?;
        }
        Ok(())
    }
}

/// The kernel a `call_tir` calls.
fn kernel_of<'m>(m: &'m Module, f: &RelaxFunction, call: &relax_ir::Call) -> Option<&'m PrimFunc> {
    if !matches!(&f.exprs[call.callee], ExprData::Op(op) if is_call_tir(op)) {
        return None;
    }
    match f.list(call.args).first().map(|&a| &f.exprs[a]) {
        Some(&ExprData::Global(g)) => m.prim_func(g),
        _ => None,
    }
}

/// The tensor arguments of a `call_tir` (the fields of its argument tuple).
fn call_args(f: &RelaxFunction, call: &relax_ir::Call) -> Vec<Expr> {
    match f.list(call.args).get(1).map(|&t| &f.exprs[t]) {
        Some(ExprData::Tuple(fields)) => f.list(fields).to_vec(),
        Some(_) => vec![f.list(call.args)[1]],
        None => Vec::new(),
    }
}

/// `SeqStmt::Flatten`: the statements of nested sequences, in order.
fn flatten(t: &PrimFunc, s: Stmt, out: &mut Vec<Stmt>) {
    match &t.stmts[s] {
        StmtData::Seq(items) => {
            for &x in items {
                flatten(t, x, out);
            }
        }
        _ => out.push(s),
    }
}

/// Makes block names unique in post-order (inner blocks first), as TVM's
/// `SBlockNameDeduplicator`: a taken name gets its trailing number incremented, or `1`
/// appended (`compute` → `compute1`, `T_add1` → `T_add2`).
fn dedup_block_names(t: &mut PrimFunc, body: Stmt) {
    let mut order = Vec::new();
    post_order_blocks(t, body, &mut order);
    let mut taken: HashSet<String> = HashSet::new();
    for s in order {
        let StmtData::Block(b) = &t.stmts[s] else { continue };
        let name = unique_block_name(&b.name, &mut taken);
        if let StmtData::Block(b) = &mut t.stmts[s] {
            b.name = name;
        }
    }
}

fn post_order_blocks(t: &PrimFunc, s: Stmt, out: &mut Vec<Stmt>) {
    for k in t.stmts[s].children() {
        post_order_blocks(t, k, out);
    }
    if matches!(t.stmts[s], StmtData::Block(_)) {
        out.push(s);
    }
}

fn unique_block_name(name: &str, taken: &mut HashSet<String>) -> String {
    if taken.insert(name.to_string()) {
        return name.to_string();
    }
    let base_len = name.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    let (base, mut counter) = match name[base_len..].parse::<i64>() {
        Ok(n) if base_len < name.len() => (&name[..base_len], n + 1),
        _ => (name, 1),
    };
    loop {
        let candidate = format!("{base}{counter}");
        if taken.insert(candidate.clone()) {
            return candidate;
        }
        counter += 1;
    }
}

/// The global a Relax call calls, when it is a call of a module function.
pub fn called_global(f: &RelaxFunction, e: Expr) -> Option<Global> {
    match &f.exprs[e] {
        ExprData::Call(c) => match f.exprs[c.callee] {
            ExprData::Global(g) => Some(g),
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_names_follow_tvm() {
        let mut taken = HashSet::new();
        let names: Vec<String> = ["compute", "compute", "T_add1", "T_add1", "compute1", "compute", "x99", "x99"]
            .iter()
            .map(|n| unique_block_name(n, &mut taken))
            .collect();
        assert_eq!(names, ["compute", "compute1", "T_add1", "T_add2", "compute2", "compute3", "x99", "x100"]);
    }
}
