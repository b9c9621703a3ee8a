//! Small builders for printer tests: Relax functions and PrimFuncs by hand, through the
//! public API of `relax-ir`.

#![allow(dead_code, reason = "each test file uses a different subset of the helpers")]

use relax_entity::PrimaryMap;
use relax_ir::attrs::{AttrValue, Attrs};
use relax_ir::op::op_ref;
use relax_ir::prim::{BinOp, PrimExprData, Range};
use relax_ir::relax::{Binding, BindingKind, BlockData, ExprData, RelaxFunction};
use relax_ir::tir::{BlockNode, BufferData, BufferRegion, ForKind, IterKind, IterVar, PrimFunc, StmtData};
use relax_ir::ty::TyData;
use relax_ir::{Block, Buffer, DataType, Expr, Global, Module, Pool, PrimExpr, Stmt, SymVar, Ty, Var};

/// Asserts equality and prints both texts on failure. With `RELAX_PRINTER_DUMP=<dir>` set,
/// also writes the text to `<dir>/<test name>.py` (for differential checks against TVM).
pub fn assert_text(got: &str, want: &str) {
    dump(got);
    if got != want {
        eprintln!("---- got ----\n{got}---- want ----\n{want}----");
        let gl: Vec<&str> = got.lines().collect();
        let wl: Vec<&str> = want.lines().collect();
        for i in 0..gl.len().max(wl.len()) {
            let (g, w) = (gl.get(i).copied().unwrap_or("<none>"), wl.get(i).copied().unwrap_or("<none>"));
            if g != w {
                eprintln!("first difference at line {}:\n got: {g:?}\nwant: {w:?}", i + 1);
                break;
            }
        }
        panic!("texts differ");
    }
}

/// Writes `text` to `$RELAX_PRINTER_DUMP/<test name>.py` when the variable is set.
pub fn dump(text: &str) {
    if let Ok(dir) = std::env::var("RELAX_PRINTER_DUMP") {
        let name = std::thread::current().name().unwrap_or("unnamed").replace("::", "_");
        let _ = std::fs::create_dir_all(&dir);
        let _ = std::fs::write(format!("{dir}/{name}.py"), text);
    }
}

/// Cuts section `title` (a line `=== title`) out of a transcript sample.
pub fn sample_section(text: &str, title: &str) -> String {
    let mut out = String::new();
    let mut on = false;
    for line in text.lines() {
        if line.starts_with("=== ") || line.starts_with("######## ") {
            on = line.trim_start_matches("=== ").trim_start_matches("######## ") == title;
            continue;
        }
        if on {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// Reads a sample file (TVM-printed text, copied into `test/Corpus/shared-samples`).
pub fn sample(rel: &str) -> String {
    let path = format!("{}/../../test/Corpus/shared-samples/{rel}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

pub fn attrs(items: &[(&str, AttrValue)]) -> Attrs {
    Attrs(items.iter().map(|(k, v)| (k.to_string(), v.clone())).collect())
}

/// Pool helpers shared by both builders.
pub trait PoolExt {
    fn pool(&mut self) -> &mut Pool;
    fn sym(&mut self, name: &str, dtype: DataType) -> (SymVar, PrimExpr) {
        let p = self.pool();
        let v = p.new_var(name, dtype);
        (v, p.var_ref(v))
    }
    fn i64c(&mut self, v: i64) -> PrimExpr {
        self.pool().i64(v)
    }
    fn i32c(&mut self, v: i64) -> PrimExpr {
        self.pool().int(DataType::INT32, v)
    }
    fn f32c(&mut self, v: f64) -> PrimExpr {
        self.pool().float(DataType::FLOAT32, v)
    }
    fn bin(&mut self, op: BinOp, a: PrimExpr, b: PrimExpr) -> PrimExpr {
        self.pool().raw(PrimExprData::Bin(op, a, b))
    }
    fn call(&mut self, dtype: DataType, op: &str, args: Vec<PrimExpr>) -> PrimExpr {
        self.pool().raw(PrimExprData::Call { dtype, op: relax_ir::TirOp::from_name(op), args })
    }
    fn ty(&mut self, t: TyData) -> Ty {
        self.pool().intern_ty(t)
    }
    fn tensor(&mut self, dims: Vec<PrimExpr>, dtype: DataType) -> Ty {
        self.ty(TyData::tensor(dims, dtype))
    }
}

/// Builds a Relax function.
pub struct RelaxB {
    pub f: RelaxFunction,
}

impl PoolExt for RelaxB {
    fn pool(&mut self) -> &mut Pool {
        &mut self.f.pool
    }
}

impl RelaxB {
    pub fn new() -> RelaxB {
        let mut pool = Pool::new();
        let void = pool.intern_ty(TyData::void());
        let mut f = RelaxFunction { pool, ..RelaxFunction::new() };
        f.func.ret = void;
        RelaxB { f }
    }
    pub fn param(&mut self, name: &str, ty: Ty) -> Var {
        let v = self.f.add_var(name, ty, false);
        self.f.func.params.push(v);
        v
    }
    pub fn var(&mut self, name: &str, ty: Ty, dataflow: bool) -> Var {
        self.f.add_var(name, ty, dataflow)
    }
    pub fn use_var(&mut self, v: Var) -> Expr {
        self.f.use_var(v)
    }
    pub fn expr(&mut self, data: ExprData, ty: Option<Ty>) -> Expr {
        self.f.add_expr(data, ty)
    }
    pub fn global(&mut self, g: Global) -> Expr {
        self.expr(ExprData::Global(g), None)
    }
    pub fn tuple(&mut self, fields: Vec<Expr>) -> Expr {
        let tys: Vec<Ty> = fields.iter().filter_map(|&e| self.f.ty_of(e)).collect();
        let t = self.ty(TyData::Tuple(tys));
        self.f.add_tuple(fields, Some(t))
    }
    /// A call of op `relax.<name>` with attributes and explicit result types.
    pub fn op(
        &mut self,
        name: &str,
        args: Vec<Expr>,
        at: &[(&str, AttrValue)],
        sinfo: Vec<Ty>,
        ty: Option<Ty>,
    ) -> Expr {
        let callee = self.expr(ExprData::Op(op_ref(name)), None);
        self.f.add_call(callee, args, attrs(at), sinfo, ty)
    }
    pub fn call(&mut self, callee: Expr, args: Vec<Expr>, sinfo: Vec<Ty>, ty: Option<Ty>) -> Expr {
        self.f.add_call(callee, args, Attrs::new(), sinfo, ty)
    }
    pub fn block(&mut self, dataflow: bool, bindings: Vec<(Var, Expr)>) -> Block {
        let bindings =
            bindings.into_iter().map(|(var, value)| Binding { var, value, kind: BindingKind::Value }).collect();
        self.f.blocks.push(BlockData { dataflow, bindings })
    }
    pub fn block_with(&mut self, dataflow: bool, bindings: Vec<Binding>) -> Block {
        self.f.blocks.push(BlockData { dataflow, bindings })
    }
    pub fn finish(mut self, ret: Ty, blocks: Vec<Block>, body: Expr, at: &[(&str, AttrValue)]) -> RelaxFunction {
        self.f.func.ret = ret;
        self.f.func.body = self.f.add_seq(blocks, body);
        self.f.func.attrs = attrs(at);
        self.f
    }
}

/// Builds a PrimFunc.
pub struct TirB {
    pub f: PrimFunc,
}

impl PoolExt for TirB {
    fn pool(&mut self) -> &mut Pool {
        &mut self.f.pool
    }
}

impl TirB {
    pub fn new() -> TirB {
        let mut stmts = PrimaryMap::new();
        let body = stmts.push(StmtData::Seq(Vec::new()));
        TirB {
            f: PrimFunc {
                pool: Pool::new(),
                buffers: PrimaryMap::new(),
                stmts,
                params: Vec::new(),
                buffer_map: Vec::new(),
                ret: DataType::VOID,
                attrs: Attrs::new(),
                body,
                s_tir: true,
                persistent: false,
                spans: Default::default(),
            },
        }
    }
    /// A compact global buffer with a fresh data pointer.
    pub fn buffer(&mut self, name: &str, dtype: DataType, shape: Vec<PrimExpr>) -> Buffer {
        let data = self.f.pool.new_var(name, DataType::HANDLE);
        self.f.buffers.push(BufferData::new(name, data, dtype, shape))
    }
    /// A handle parameter bound to `b`.
    pub fn handle_param(&mut self, name: &str, b: Buffer) -> SymVar {
        let h = self.f.pool.new_var(name, DataType::HANDLE);
        self.f.params.push(h);
        self.f.buffer_map.push((h, b));
        h
    }
    pub fn scalar_param(&mut self, name: &str, dtype: DataType) -> (SymVar, PrimExpr) {
        let (v, e) = self.sym(name, dtype);
        self.f.params.push(v);
        (v, e)
    }
    pub fn stmt(&mut self, s: StmtData) -> Stmt {
        self.f.stmts.push(s)
    }
    pub fn seq(&mut self, v: Vec<Stmt>) -> Stmt {
        self.stmt(StmtData::Seq(v))
    }
    pub fn load(&mut self, b: Buffer, indices: Vec<PrimExpr>) -> PrimExpr {
        let dtype = self.f.buffers[b].dtype;
        self.f.pool.raw(PrimExprData::Load { dtype, buffer: b, indices })
    }
    pub fn store(&mut self, b: Buffer, indices: Vec<PrimExpr>, value: PrimExpr) -> Stmt {
        self.stmt(StmtData::Store { buffer: b, indices, value })
    }
    /// A serial loop `for var in range(min, min + extent)`.
    pub fn for_(&mut self, var: SymVar, min: PrimExpr, extent: PrimExpr, kind: ForKind, body: Stmt) -> Stmt {
        self.stmt(StmtData::For { var, min, extent, kind, thread: None, step: None, annotations: Attrs::new(), body })
    }
    /// A region with extent-1 ranges at `indices`.
    pub fn point(&mut self, b: Buffer, indices: Vec<PrimExpr>) -> BufferRegion {
        let region = indices
            .into_iter()
            .map(|min| {
                let t = self.f.pool.dtype(min);
                let one = self.f.pool.int(t, 1);
                Range { min, extent: one }
            })
            .collect();
        BufferRegion { buffer: b, region }
    }
    pub fn iter_var(&mut self, var: SymVar, extent: PrimExpr, kind: IterKind, binding: PrimExpr) -> IterVar {
        let t = self.f.pool.dtype(extent);
        let zero = self.f.pool.int(t, 0);
        IterVar { var, dom: Range { min: zero, extent }, kind, binding }
    }
    pub fn block(&mut self, node: BlockNode) -> Stmt {
        self.stmt(StmtData::Block(Box::new(node)))
    }
    pub fn finish(mut self, body: Stmt, at: &[(&str, AttrValue)]) -> PrimFunc {
        self.f.body = body;
        self.f.attrs = attrs(at);
        self.f
    }
}

/// A block node with defaults.
pub fn block_node(name: &str, body: Stmt) -> BlockNode {
    BlockNode {
        name: name.to_string(),
        iter_vars: Vec::new(),
        predicate: None,
        reads: Vec::new(),
        writes: Vec::new(),
        annotations: Attrs::new(),
        alloc_buffers: Vec::new(),
        match_buffers: Vec::new(),
        init: None,
        body,
    }
}

/// Adds `f` to a new or existing module.
pub fn module_with(items: Vec<(&str, relax_ir::Func)>) -> Module {
    let mut m = Module::new();
    for (name, f) in items {
        m.add(name, f);
    }
    m
}
