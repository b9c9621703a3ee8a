//! A small hand builder of Relax functions and PrimFuncs for the verifier tests.

#![allow(dead_code, reason = "each test file uses a different part of the builder")]

use relax_ir::op::op_ref;
use relax_ir::{
    AttrValue, Attrs, Binding, BindingKind, Block, BlockData, BlockNode, Buffer, BufferData, BufferRegion, DataType,
    Expr, ExprData, Func, FunctionNode, Global, IterKind, IterVar, Module, PrimExpr, PrimExprData, PrimFunc, Range,
    RelaxFunction, Seq, Stmt, StmtData, SymVar, Ty, TyData, Var,
};

pub const F32: DataType = DataType::FLOAT32;

/// A dim of a tensor type: a constant or a symbolic variable.
#[derive(Clone, Copy)]
pub enum D {
    C(i64),
    S(SymVar),
}

/// Builds one Relax function, binding by binding.
pub struct RB {
    pub f: RelaxFunction,
    bindings: Vec<Binding>,
    dataflow: bool,
    blocks: Vec<Block>,
}

impl Default for RB {
    fn default() -> Self {
        Self::new()
    }
}

impl RB {
    pub fn new() -> RB {
        let mut pool = relax_ir::Pool::new();
        let obj = pool.intern_ty(TyData::Object);
        // No placeholder expression: the tests count expressions from 0.
        let mut seqs = relax_entity::PrimaryMap::new();
        let body = seqs.push(relax_ir::SeqData { blocks: Vec::new(), body: relax_entity::EntityRef::new(0) });
        let f = RelaxFunction {
            pool,
            vars: Default::default(),
            exprs: Default::default(),
            expr_ty: Default::default(),
            blocks: Default::default(),
            seqs,
            lists: Default::default(),
            func: FunctionNode { params: Vec::new(), ret: obj, body, attrs: Attrs::new(), pure: true },
            spans: Default::default(),
        };
        RB { f, bindings: Vec::new(), dataflow: false, blocks: Vec::new() }
    }

    pub fn ty(&mut self, t: TyData) -> Ty {
        self.f.pool.intern_ty(t)
    }
    pub fn object(&mut self) -> Ty {
        self.ty(TyData::Object)
    }
    pub fn void(&mut self) -> Ty {
        self.ty(TyData::void())
    }
    pub fn sym(&mut self, name: &str) -> SymVar {
        self.f.pool.new_var(name, DataType::INT64)
    }
    pub fn dim(&mut self, d: D) -> PrimExpr {
        match d {
            D::C(c) => self.f.pool.i64(c),
            D::S(s) => self.f.pool.var_ref(s),
        }
    }
    pub fn tensor(&mut self, dims: &[D]) -> Ty {
        let ds: Vec<PrimExpr> = dims.iter().map(|&d| self.dim(d)).collect();
        self.ty(TyData::tensor(ds, F32))
    }
    pub fn tuple_ty(&mut self, fields: &[Ty]) -> Ty {
        self.ty(TyData::Tuple(fields.to_vec()))
    }

    pub fn param(&mut self, name: &str, ty: Ty) -> Var {
        let v = self.f.add_var(name, ty, false);
        self.f.func.params.push(v);
        v
    }
    pub fn use_(&mut self, v: Var) -> Expr {
        self.f.use_var(v)
    }
    pub fn expr(&mut self, data: ExprData, ty: Option<Ty>) -> Expr {
        self.f.add_expr(data, ty)
    }
    /// A call of an op by full name (`relax.add`).
    pub fn op_call(&mut self, op: &str, args: Vec<Expr>, sinfo: Vec<Ty>, ty: Ty) -> Expr {
        let callee = self.f.add_expr(ExprData::Op(op_ref(op)), None);
        self.call(callee, args, sinfo, ty)
    }
    pub fn call(&mut self, callee: Expr, args: Vec<Expr>, sinfo: Vec<Ty>, ty: Ty) -> Expr {
        self.f.add_call(callee, args, Attrs::new(), sinfo, Some(ty))
    }
    pub fn global(&mut self, g: Global) -> Expr {
        let t = self.object();
        self.f.add_expr(ExprData::Global(g), Some(t))
    }
    pub fn tuple(&mut self, fields: Vec<Expr>) -> Expr {
        let tys: Vec<Ty> = fields.iter().map(|&e| self.f.ty_of(e).unwrap()).collect();
        let t = self.tuple_ty(&tys);
        self.f.add_tuple(fields, Some(t))
    }
    pub fn shape(&mut self, dims: &[D]) -> Expr {
        let ds: Vec<PrimExpr> = dims.iter().map(|&d| self.dim(d)).collect();
        let t = self.ty(TyData::shape(ds.clone()));
        self.f.add_expr(ExprData::Shape(ds), Some(t))
    }
    pub fn prim_value(&mut self, d: D) -> Expr {
        let p = self.dim(d);
        let t = self.ty(TyData::Prim { dtype: DataType::INT64, value: Some(p) });
        self.f.add_expr(ExprData::Prim(p), Some(t))
    }
    pub fn extern_func(&mut self, name: &str) -> Expr {
        let ret = self.object();
        let t = self.ty(TyData::Callable { params: None, ret, pure: false });
        self.f.add_expr(ExprData::ExternFunc(name.to_string()), Some(t))
    }

    /// Starts a new block (closing the current one).
    pub fn block(&mut self, dataflow: bool) {
        self.close_block();
        self.dataflow = dataflow;
    }
    fn close_block(&mut self) {
        if !self.bindings.is_empty() {
            let b =
                self.f.blocks.push(BlockData { dataflow: self.dataflow, bindings: std::mem::take(&mut self.bindings) });
            self.blocks.push(b);
        }
        self.dataflow = false;
    }
    /// Binds `value` to a new variable typed `ty` (a dataflow variable when `df`).
    pub fn bind_df(&mut self, name: &str, value: Expr, ty: Ty, df: bool) -> Var {
        let v = self.f.add_var(name, ty, df);
        self.bindings.push(Binding { var: v, value, kind: BindingKind::Value });
        v
    }
    pub fn bind(&mut self, name: &str, value: Expr, ty: Ty) -> Var {
        self.bind_df(name, value, ty, false)
    }
    /// Binds an existing variable again (for ill-formed tests).
    pub fn rebind(&mut self, v: Var, value: Expr) {
        self.bindings.push(Binding { var: v, value, kind: BindingKind::Value });
    }
    pub fn match_cast(&mut self, name: &str, value: Expr, ty: Ty) -> Var {
        let v = self.f.add_var(name, ty, false);
        self.bindings.push(Binding { var: v, value, kind: BindingKind::MatchCast(ty) });
        v
    }
    /// Takes the bindings made so far as the blocks of a nested sequence.
    pub fn take_seq(&mut self, body: Expr) -> Seq {
        self.close_block();
        let blocks = std::mem::take(&mut self.blocks);
        self.f.add_seq(blocks, body)
    }
    /// A sequence of `blocks` and `body`.
    pub fn seq(&mut self, blocks: Vec<relax_ir::Block>, body: Expr) -> Seq {
        self.f.add_seq(blocks, body)
    }
    /// Finishes the function with result `ret` and return type `ret_ty`.
    pub fn finish(mut self, ret: Expr, ret_ty: Ty) -> RelaxFunction {
        let seq = self.take_seq(ret);
        self.f.func.body = seq;
        self.f.func.ret = ret_ty;
        self.f
    }
}

/// Builds one PrimFunc.
pub struct TB {
    pub f: PrimFunc,
}

impl Default for TB {
    fn default() -> Self {
        Self::new()
    }
}

impl TB {
    pub fn new() -> TB {
        let mut pool = relax_ir::Pool::new();
        let zero = pool.int(DataType::INT32, 0);
        let mut stmts = relax_entity::PrimaryMap::new();
        let body = stmts.push(StmtData::Evaluate(zero));
        let f = PrimFunc {
            pool,
            buffers: Default::default(),
            stmts,
            params: Vec::new(),
            buffer_map: Vec::new(),
            ret: DataType::VOID,
            attrs: Attrs::new(),
            body,
            s_tir: true,
            persistent: false,
            spans: Default::default(),
        };
        TB { f }
    }
    pub fn var(&mut self, name: &str) -> SymVar {
        self.f.pool.new_var(name, DataType::INT64)
    }
    pub fn v(&mut self, s: SymVar) -> PrimExpr {
        self.f.pool.var_ref(s)
    }
    pub fn c(&mut self, c: i64) -> PrimExpr {
        self.f.pool.i64(c)
    }
    pub fn f32(&mut self, x: f64) -> PrimExpr {
        self.f.pool.float(F32, x)
    }
    pub fn buffer(&mut self, name: &str, shape: Vec<PrimExpr>) -> Buffer {
        let data = self.f.pool.new_var(name, DataType::HANDLE);
        self.f.buffers.push(BufferData::new(name, data, F32, shape))
    }
    /// A handle parameter bound to a new buffer.
    pub fn param_buffer(&mut self, name: &str, shape: Vec<PrimExpr>) -> Buffer {
        let h = self.f.pool.new_var(format!("var_{name}"), DataType::HANDLE);
        let b = self.buffer(name, shape);
        self.f.params.push(h);
        self.f.buffer_map.push((h, b));
        b
    }
    pub fn scalar_param(&mut self, name: &str) -> SymVar {
        let v = self.var(name);
        self.f.params.push(v);
        v
    }
    pub fn stmt(&mut self, s: StmtData) -> Stmt {
        self.f.stmts.push(s)
    }
    pub fn load(&mut self, b: Buffer, indices: Vec<PrimExpr>) -> PrimExpr {
        self.f.pool.raw(PrimExprData::Load { dtype: F32, buffer: b, indices })
    }
    pub fn store(&mut self, b: Buffer, indices: Vec<PrimExpr>, value: PrimExpr) -> Stmt {
        self.stmt(StmtData::Store { buffer: b, indices, value })
    }
    pub fn seq(&mut self, v: Vec<Stmt>) -> Stmt {
        self.stmt(StmtData::Seq(v))
    }
    pub fn for_(&mut self, var: SymVar, extent: PrimExpr, body: Stmt) -> Stmt {
        let min = self.c(0);
        self.stmt(StmtData::For {
            var,
            min,
            extent,
            kind: relax_ir::ForKind::Serial,
            thread: None,
            step: None,
            annotations: Attrs::new(),
            body,
        })
    }
    pub fn let_(&mut self, var: SymVar, value: PrimExpr, body: Stmt) -> Stmt {
        self.stmt(StmtData::Let { var, value, body })
    }
    /// A block with spatial iteration variables `(var, extent, binding)`.
    pub fn block(&mut self, name: &str, iters: Vec<(SymVar, PrimExpr, PrimExpr)>, body: Stmt) -> Stmt {
        let zero = self.c(0);
        let iter_vars = iters
            .into_iter()
            .map(|(var, extent, binding)| IterVar {
                var,
                dom: Range { min: zero, extent },
                kind: IterKind::Spatial,
                binding,
            })
            .collect();
        self.stmt(StmtData::Block(Box::new(BlockNode {
            name: name.to_string(),
            iter_vars,
            predicate: None,
            reads: Vec::new(),
            writes: Vec::new(),
            annotations: Attrs::new(),
            alloc_buffers: Vec::new(),
            match_buffers: Vec::new(),
            init: None,
            body,
        })))
    }
    /// The block node of `s`, for editing.
    pub fn block_mut(&mut self, s: Stmt) -> &mut BlockNode {
        match &mut self.f.stmts[s] {
            StmtData::Block(b) => b,
            _ => panic!("not a block"),
        }
    }
    /// A region covering index `i` of each dim.
    pub fn point(&mut self, b: Buffer, idx: Vec<PrimExpr>) -> BufferRegion {
        let one = self.c(1);
        BufferRegion { buffer: b, region: idx.into_iter().map(|min| Range { min, extent: one }).collect() }
    }
    /// Wraps `body` in a root block allocating `allocs`, and makes it the function body.
    pub fn finish_root(mut self, allocs: Vec<Buffer>, body: Stmt) -> PrimFunc {
        let root = self.block("root", Vec::new(), body);
        self.block_mut(root).alloc_buffers = allocs;
        self.f.body = root;
        self.f
    }
    pub fn finish(mut self, body: Stmt) -> PrimFunc {
        self.f.body = body;
        self.f
    }
}

/// `add(var_x: (n, 4), var_y: (n, 4), var_out: (n, 4))`: out = x + y, in a root block.
pub fn add_kernel() -> PrimFunc {
    let mut t = TB::new();
    let n = t.var("n");
    let (vn, c4) = (t.v(n), t.c(4));
    let x = t.param_buffer("x", vec![vn, c4]);
    let y = t.param_buffer("y", vec![vn, c4]);
    let out = t.param_buffer("out", vec![vn, c4]);
    let (i, j, vi, vj) = (t.var("i"), t.var("j"), t.var("vi"), t.var("vj"));
    let (ei, ej, evi, evj) = (t.v(i), t.v(j), t.v(vi), t.v(vj));
    let lx = t.load(x, vec![evi, evj]);
    let ly = t.load(y, vec![evi, evj]);
    let sum = t.f.pool.raw(relax_ir::PrimExprData::Bin(relax_ir::BinOp::Add, lx, ly));
    let st = t.store(out, vec![evi, evj], sum);
    let blk = t.block("add", vec![(vi, vn, ei), (vj, c4, ej)], st);
    let rx = t.point(x, vec![evi, evj]);
    let ry = t.point(y, vec![evi, evj]);
    let ro = t.point(out, vec![evi, evj]);
    let b = t.block_mut(blk);
    b.reads = vec![rx, ry];
    b.writes = vec![ro];
    let inner = t.for_(j, c4, blk);
    let outer = t.for_(i, vn, inner);
    t.finish_root(Vec::new(), outer)
}

/// A module holding the given functions.
pub fn module(funcs: Vec<(&str, Func)>) -> (Module, Vec<Global>) {
    let mut m = Module::new();
    let gs = funcs.into_iter().map(|(n, f)| m.add(n, f)).collect();
    (m, gs)
}

pub fn relax(f: RelaxFunction) -> Func {
    Func::Relax(Box::new(f))
}

pub fn prim(f: PrimFunc) -> Func {
    Func::Prim(Box::new(f))
}

/// The messages of a failed verification (panics when it passed). The errors are printed
/// too; the harness shows them only when the test fails.
pub fn errors(r: Result<(), Vec<relax_ir::verify::VerifyError>>) -> Vec<String> {
    match r {
        Ok(()) => panic!("expected verification errors, got none"),
        Err(es) => {
            for e in &es {
                eprintln!("  ERR: {} {:?}", e.message, e.notes);
            }
            es.into_iter().map(|e| e.message).collect()
        }
    }
}

/// Asserts that some message contains `needle`.
pub fn assert_has(msgs: &[String], needle: &str) {
    assert!(msgs.iter().any(|m| m.contains(needle)), "no message contains {needle:?}; got {msgs:#?}");
}

/// Asserts verification passes, printing the errors otherwise.
pub fn assert_ok(m: &Module) {
    if let Err(es) = relax_ir::verify::verify_module(m) {
        let msgs: Vec<&str> = es.iter().map(|e| e.message.as_str()).collect();
        panic!("expected no errors, got {msgs:#?}");
    }
}

pub fn set_attr(attrs: &mut Attrs, k: &str, v: AttrValue) {
    attrs.set(k, v);
}
