//! Whole-module printer goldens: IR built by hand must print exactly as TVM 0.25 printed
//! the samples (`text-format.md` §16 Examples A and B, sample 03 and sample 04).

mod printer_util;

use printer_util::*;
use relax_ir::attrs::AttrValue;
use relax_ir::module::{ConstData, ConstPayload, Func, ModuleForm};
use relax_ir::prim::BinOp;
use relax_ir::printer::{print_module, print_module_with_map};
use relax_ir::relax::{Binding, BindingKind, ExprData};
use relax_ir::tir::{BlockNode, ForKind, IterKind, PrimFunc, StmtData};
use relax_ir::ty::TyData;
use relax_ir::{Buffer, DataType, Global, Module, PrimExpr, Stmt, SymVar};

const F32: DataType = DataType::FLOAT32;
const I64: DataType = DataType::INT64;

/// The buffers and indices an elementwise block reads, given its two axes.
type ReadsFn<'a> = dyn Fn(&mut TirB, PrimExpr, PrimExpr) -> Vec<(Buffer, Vec<PrimExpr>)> + 'a;

/// `for a, b in T.grid(e0, e1): with T.sblock(name): v_a, v_b = T.axis.remap("SS", [a, b])`
/// around `out[v_a, v_b] = value(v_a, v_b)`, reading `reads(v_a, v_b)`.
struct Elementwise<'n> {
    block: &'n str,
    loop_names: [&'n str; 2],
    extents: [PrimExpr; 2],
}

impl Elementwise<'_> {
    fn build(
        &self,
        t: &mut TirB,
        out: Buffer,
        reads: &ReadsFn<'_>,
        value: &dyn Fn(&mut TirB, PrimExpr, PrimExpr) -> PrimExpr,
    ) -> Stmt {
        let (l0, l0e) = t.sym(self.loop_names[0], I64);
        let (l1, l1e) = t.sym(self.loop_names[1], I64);
        let (v0, v0e) = t.sym(&format!("v_{}", self.loop_names[0]), I64);
        let (v1, v1e) = t.sym(&format!("v_{}", self.loop_names[1]), I64);
        let rd: Vec<_> = reads(t, v0e, v1e).into_iter().map(|(b, ix)| t.point(b, ix)).collect();
        let wr = vec![t.point(out, vec![v0e, v1e])];
        let val = value(t, v0e, v1e);
        let store = t.store(out, vec![v0e, v1e], val);
        let mut node = block_node(self.block, store);
        node.iter_vars = vec![
            t.iter_var(v0, self.extents[0], IterKind::Spatial, l0e),
            t.iter_var(v1, self.extents[1], IterKind::Spatial, l1e),
        ];
        node.reads = rd;
        node.writes = wr;
        let blk = t.block(node);
        let zero = t.i64c(0);
        let inner = t.for_(l1, zero, self.extents[1], ForKind::Serial, blk);
        t.for_(l0, zero, self.extents[0], ForKind::Serial, inner)
    }
}

/// The fused PrimFunc of `samples/tvm-0.25/01` (FUSETIR).
fn fused_prim_func() -> PrimFunc {
    let mut t = TirB::new();
    let (_, n) = t.sym("n", I64);
    let four = t.i64c(4);
    let x = t.buffer("x", F32, vec![n, four]);
    let w = t.buffer("w", F32, vec![four, four]);
    let out = t.buffer("compute_intermediate_1", F32, vec![n, four]);
    t.handle_param("p_x", x);
    t.handle_param("w_handle", w);
    t.handle_param("p_output0", out);
    let mm = t.buffer("matmul_intermediate", F32, vec![n, four]);
    let add = t.buffer("T_add_intermediate", F32, vec![n, four]);
    let relu = t.buffer("compute_intermediate", F32, vec![n, four]);
    // matmul with a reduction axis.
    let (i0, i0e) = t.sym("i0", I64);
    let (i1, i1e) = t.sym("i1", I64);
    let (k, ke) = t.sym("k", I64);
    let (vi0, vi0e) = t.sym("v_i0", I64);
    let (vi1, vi1e) = t.sym("v_i1", I64);
    let (vk, vke) = t.sym("v_k", I64);
    let zero_f = t.f32c(0.0);
    let init = t.store(mm, vec![vi0e, vi1e], zero_f);
    let acc = t.load(mm, vec![vi0e, vi1e]);
    let xl = t.load(x, vec![vi0e, vke]);
    let wl = t.load(w, vec![vke, vi1e]);
    let prod = t.bin(BinOp::Mul, xl, wl);
    let sum = t.bin(BinOp::Add, acc, prod);
    let upd = t.store(mm, vec![vi0e, vi1e], sum);
    let mut node = block_node("matmul", upd);
    node.iter_vars = vec![
        t.iter_var(vi0, n, IterKind::Spatial, i0e),
        t.iter_var(vi1, four, IterKind::Spatial, i1e),
        t.iter_var(vk, four, IterKind::Reduce, ke),
    ];
    node.reads = vec![t.point(x, vec![vi0e, vke]), t.point(w, vec![vke, vi1e])];
    node.writes = vec![t.point(mm, vec![vi0e, vi1e])];
    node.init = Some(init);
    let blk = t.block(node);
    let zero = t.i64c(0);
    let lk = t.for_(k, zero, four, ForKind::Serial, blk);
    let l1 = t.for_(i1, zero, four, ForKind::Serial, lk);
    let l0 = t.for_(i0, zero, n, ForKind::Serial, l1);
    let s_add = Elementwise { block: "T_add", loop_names: ["ax0", "ax1"], extents: [n, four] }.build(
        &mut t,
        add,
        &|_, a, b| vec![(mm, vec![a, b])],
        &|t, a, b| {
            let l = t.load(mm, vec![a, b]);
            let one = t.f32c(1.0);
            t.bin(BinOp::Add, l, one)
        },
    );
    let s_relu = Elementwise { block: "compute", loop_names: ["i0", "i1"], extents: [n, four] }.build(
        &mut t,
        relu,
        &|_, a, b| vec![(add, vec![a, b])],
        &|t, a, b| {
            let l = t.load(add, vec![a, b]);
            let z = t.f32c(0.0);
            t.bin(BinOp::Max, l, z)
        },
    );
    let s_exp = Elementwise { block: "compute1", loop_names: ["i0", "i1"], extents: [n, four] }.build(
        &mut t,
        out,
        &|_, a, b| vec![(relu, vec![a, b])],
        &|t, a, b| {
            let l = t.load(relu, vec![a, b]);
            t.call(F32, "tir.exp", vec![l])
        },
    );
    let body = t.seq(vec![l0, s_add, s_relu, s_exp]);
    let mut root = block_node("root", body);
    root.alloc_buffers = vec![mm, add, relu];
    let root = t.block(root);
    t.finish(root, &[("tirx.noalias", AttrValue::Bool(true))])
}

/// `main(x: (n, 4), w: (4, 4))` calling `callee` through `R.call_tir` in a dataflow block.
fn main_calling(callee: Global) -> relax_ir::RelaxFunction {
    let mut r = RelaxB::new();
    let (_, n) = r.sym("n", I64);
    let four = r.i64c(4);
    let tx = r.tensor(vec![n, four], F32);
    let tw = r.tensor(vec![four, four], F32);
    let x = r.param("x", tx);
    let w = r.param("w", tw);
    let gv = r.var("gv", tx, false);
    let f = r.global(callee);
    let (xe, we) = (r.use_var(x), r.use_var(w));
    let args = r.tuple(vec![xe, we]);
    let call = r.op("relax.call_tir", vec![f, args], &[], vec![tx], Some(tx));
    let b = r.block(true, vec![(gv, call)]);
    let ret = r.use_var(gv);
    r.finish(tx, vec![b], ret, &[("global_symbol", AttrValue::Str("main".into()))])
}

#[test]
fn example_a_fusetir() {
    let mut m = Module::new();
    let fused = m.add("fused_matmul_add_relu_tir_exp", Func::Prim(Box::new(fused_prim_func())));
    m.add("main", Func::Relax(Box::new(main_calling(fused))));
    let want = sample_section(&sample("tvm-0.25/01_fuse_matmul_add_relu_exp.rlx"), "FUSETIR");
    assert_text(&print_module(&m), &want);
}

#[test]
fn example_a_span_map_points_at_printed_entities() {
    let mut m = Module::new();
    let fused = m.add("fused_matmul_add_relu_tir_exp", Func::Prim(Box::new(fused_prim_func())));
    let main = m.add("main", Func::Relax(Box::new(main_calling(fused))));
    let p = print_module_with_map(&m);
    let at = |s: relax_ir::Span| &p.text[s.start as usize..s.end as usize];
    let def = p.map.def_span(main).unwrap();
    assert!(at(def).starts_with("def main(x: R.Tensor((\"n\", 4)"), "{}", at(def));
    assert!(at(def).ends_with(":"));
    let f = m.relax(main).unwrap();
    let x = f.func.params[0];
    assert_eq!(at(p.map.var_span(main, x).unwrap()), "x: R.Tensor((\"n\", 4), dtype=\"float32\")");
    let gv_binding = f.blocks.iter().next().unwrap().1.bindings[0].clone();
    assert_eq!(
        at(p.map.var_span(main, gv_binding.var).unwrap()),
        "gv = R.call_tir(cls.fused_matmul_add_relu_tir_exp, (x, w), out_sinfo=R.Tensor((n, 4), dtype=\"float32\"))"
    );
    assert_eq!(at(p.map.expr_span(main, gv_binding.value).unwrap()).split('(').next(), Some("R.call_tir"));
    assert_eq!(p.map.var_name(main, gv_binding.var), Some("gv"));
    let pf = m.prim_func(fused).unwrap();
    let names: Vec<&str> = pf.buffers.keys().map(|b| p.map.buffer_name(fused, b).unwrap()).collect();
    assert_eq!(
        names,
        ["x", "w", "compute_intermediate_1", "matmul_intermediate", "T_add_intermediate", "compute_intermediate"]
    );
    let root_span = p.map.stmt_span(fused, pf.body).unwrap();
    assert!(at(root_span).starts_with("# with T.sblock(\"root\"):"));
    assert!(at(root_span).ends_with("T.exp(compute_intermediate[v_i0, v_i1])"));
    let StmtData::Block(root) = &pf.stmts[pf.body] else { panic!() };
    let StmtData::Seq(nests) = &pf.stmts[root.body] else { panic!() };
    let first = at(p.map.stmt_span(fused, nests[0]).unwrap());
    assert!(first.starts_with("for i0, i1, k in T.grid(n, T.int64(4), T.int64(4)):"), "{first}");
    assert!(first.ends_with("x[v_i0, v_k] * w[v_k, v_i1]"), "{first}");
    let StmtData::For { var, body: inner, .. } = &pf.stmts[nests[0]] else { panic!() };
    assert_eq!(p.map.sym_var_name(fused, *var), Some("i0"));
    assert!(at(p.map.sym_var_span(fused, *var).unwrap()).starts_with("for i0, i1, k in T.grid"));
    assert!(at(p.map.stmt_span(fused, *inner).unwrap()).starts_with("for i0, i1, k in T.grid"));
    let n_var = pf.pool.vars.keys().next().unwrap();
    assert_eq!(at(p.map.sym_var_span(fused, n_var).unwrap()), "n = T.int64()");
    let w_buf = pf.buffer_map[1].1;
    assert_eq!(at(p.map.buffer_span(fused, w_buf).unwrap()), "w: T.Buffer((T.int64(4), T.int64(4)), \"float32\")");
}

/// `samples/tvm-0.25/02`: types, match_cast, call_dps_packed, a tuple, a metadata constant
/// and the output-order rule.
fn example_b_module(data: Option<Vec<u8>>) -> Module {
    let mut m = Module::new();
    let c = m.constants.push(ConstData {
        dtype: F32,
        shape: Some(vec![4, 5]),
        payload: data.map_or(ConstPayload::Opaque, ConstPayload::Data),
    });
    let mut r = RelaxB::new();
    let (_, mm) = r.sym("m", I64);
    let (_, kk) = r.sym("k", I64);
    let tx = r.ty(TyData::tensor_ndim(2, F32));
    let ts = r.ty(TyData::shape(vec![mm, kk]));
    let to = r.ty(TyData::Object);
    let tp = r.ty(TyData::Prim { dtype: I64, value: None });
    let tmk = r.tensor(vec![mm, kk], F32);
    let (four, five) = (r.i64c(4), r.i64c(5));
    let t45 = r.tensor(vec![four, five], F32);
    let ret = r.ty(TyData::Tuple(vec![tmk, ts, t45]));
    let x = r.param("x", tx);
    r.param("s", ts);
    r.param("o", to);
    r.param("p", tp);
    let y = r.var("y", tmk, true);
    let cv = r.var("c", t45, false);
    let z = r.var("z", tmk, true);
    let ttup = r.ty(TyData::Tuple(vec![tmk, tmk]));
    let t = r.var("t", ttup, true);
    let t0 = r.var("t0", tmk, false);
    let sh = r.var("sh", ts, false);
    let xe = r.use_var(x);
    let ce = r.expr(ExprData::Const(c), Some(t45));
    let ext = r.expr(ExprData::ExternFunc("my_ext_func".into()), None);
    let ye = r.use_var(y);
    let args = r.tuple(vec![ye]);
    let dps = r.op("relax.call_dps_packed", vec![ext, args], &[], vec![tmk], Some(tmk));
    let (ze, ye2) = (r.use_var(z), r.use_var(y));
    let tup = r.tuple(vec![ze, ye2]);
    let te = r.use_var(t);
    let item = r.expr(ExprData::GetItem { tuple: te, index: 0 }, Some(tmk));
    let t0e = r.use_var(t0);
    let shape_of = r.op("relax.shape_of", vec![t0e], &[], vec![], Some(ts));
    let b = r.block_with(
        true,
        vec![
            Binding { var: y, value: xe, kind: BindingKind::MatchCast(tmk) },
            Binding { var: cv, value: ce, kind: BindingKind::Value },
            Binding { var: z, value: dps, kind: BindingKind::Value },
            Binding { var: t, value: tup, kind: BindingKind::Value },
            Binding { var: t0, value: item, kind: BindingKind::Value },
            Binding { var: sh, value: shape_of, kind: BindingKind::Value },
        ],
    );
    let (a0, a1, a2) = (r.use_var(t0), r.use_var(sh), r.use_var(cv));
    let body = r.tuple(vec![a0, a1, a2]);
    let f = r.finish(ret, vec![b], body, &[("global_symbol", AttrValue::Str("main".into()))]);
    m.add("main", Func::Relax(Box::new(f)));
    m
}

#[test]
fn example_b_types_match_cast_dps_packed() {
    let want = sample("tvm-0.25/02_types_match_cast_dps_packed.rlx");
    assert_text(&print_module(&example_b_module(None)), &want);
}

#[test]
fn example_b_with_data_prints_a_data_line() {
    let bytes: Vec<u8> = (0..20u32).flat_map(|i| (i as f32).to_le_bytes()).collect();
    let mut want = sample("tvm-0.25/02_types_match_cast_dps_packed.rlx");
    want.push_str("# metadata[\"relax.expr.Constant\"][0] = float32 4x5 ");
    for b in &bytes {
        want.push_str(&format!("{b:02x}"));
    }
    want.push('\n');
    let text = print_module(&example_b_module(Some(bytes.clone())));
    assert_text(&text, &want);
    let last = text.lines().last().unwrap();
    let (i, c) = relax_ir::printer::parse_const_data_comment(last).unwrap();
    assert_eq!(i, 0);
    assert_eq!(c.payload, ConstPayload::Data(bytes));
}

/// `main` of `samples/tvm-0.25/03` after `LowerAllocTensor+KillAfterLastUse`, printed
/// alone (`Function.script()`).
#[test]
fn sample_03_single_function_after_kill_after_last_use() {
    let mut m = Module::new();
    m.form = ModuleForm::SingleFunction;
    let callees: Vec<Global> =
        ["tir_exp", "softmax", "multiply", "add"].iter().map(|n| m.add(*n, Func::Unresolved)).collect();
    let mut r = RelaxB::new();
    let (_, n) = r.sym("n", I64);
    let two = r.i64c(2);
    let t2n = r.tensor(vec![two, n], F32);
    let obj = r.ty(TyData::Object);
    let void = r.ty(TyData::void());
    let x = r.param("x", t2n);
    let mut bindings = Vec::new();
    let storage = |r: &mut RelaxB, name: &str, size: PrimExpr, dtype: DataType| {
        let s = r.var(name, obj, false);
        let shape_t = r.ty(TyData::shape(vec![size]));
        let size = r.expr(ExprData::Shape(vec![size]), Some(shape_t));
        let zero = r.i64c(0);
        let dev = r.expr(ExprData::Prim(zero), None);
        let scope = r.expr(ExprData::Str("global".into()), None);
        let dt = r.expr(ExprData::DType(dtype), None);
        let call = r.op("relax.memory.alloc_storage", vec![size, dev, scope, dt], &[], vec![], Some(obj));
        (s, call)
    };
    let alloc = |r: &mut RelaxB, name: &str, storage: relax_ir::Var| {
        let a = r.var(name, t2n, false);
        let se = r.use_var(storage);
        let zero = r.i64c(0);
        let off = r.expr(ExprData::Prim(zero), None);
        let shape = r.expr(ExprData::Shape(vec![two, n]), None);
        let dt = r.expr(ExprData::DType(F32), None);
        let dev = r.expr(ExprData::Prim(zero), None);
        let call = r.op("relax.memory.alloc_tensor", vec![se, off, shape, dt, dev], &[], vec![], Some(t2n));
        (a, call)
    };
    let kill = |r: &mut RelaxB, op: &str, v: relax_ir::Var| {
        let k = r.var("", void, false);
        let ve = r.use_var(v);
        let call = r.op(op, vec![ve], &[], vec![], Some(void));
        (k, call)
    };
    let call_prim = |r: &mut RelaxB, g: Global, args: Vec<relax_ir::Var>| {
        let k = r.var("", void, false);
        let callee = r.global(g);
        let args = args.into_iter().map(|a| r.use_var(a)).collect();
        let call = r.call(callee, args, vec![], Some(void));
        (k, call)
    };
    let size = r.i64c(8192);
    let (s0, c) = storage(&mut r, "storage", size, F32);
    bindings.push((s0, c));
    let (a0, c) = alloc(&mut r, "alloc", s0);
    bindings.push((a0, c));
    bindings.push(kill(&mut r, "relax.memory.kill_storage", s0));
    bindings.push(call_prim(&mut r, callees[0], vec![x, a0]));
    let (s1, c) = storage(&mut r, "storage1", size, F32);
    bindings.push((s1, c));
    let (a1, c) = alloc(&mut r, "alloc1", s1);
    bindings.push((a1, c));
    bindings.push(kill(&mut r, "relax.memory.kill_storage", s1));
    bindings.push(call_prim(&mut r, callees[1], vec![a0, a1]));
    let (s2, c) = storage(&mut r, "storage2", size, F32);
    bindings.push((s2, c));
    let (a2, c) = alloc(&mut r, "alloc2", s2);
    bindings.push((a2, c));
    bindings.push(kill(&mut r, "relax.memory.kill_storage", s2));
    bindings.push(call_prim(&mut r, callees[2], vec![a1, a0, a2]));
    bindings.push(kill(&mut r, "relax.memory.kill_tensor", a0));
    bindings.push(kill(&mut r, "relax.memory.kill_tensor", a1));
    let eight = r.i64c(8);
    let bytes = r.bin(BinOp::Mul, eight, n);
    // A second storage named `storage`: printed `storage_1`.
    let (s3, c) = storage(&mut r, "storage", bytes, DataType::UINT8);
    bindings.push((s3, c));
    let (a3, c) = alloc(&mut r, "alloc3", s3);
    bindings.push((a3, c));
    bindings.push(kill(&mut r, "relax.memory.kill_storage", s3));
    bindings.push(call_prim(&mut r, callees[3], vec![a2, x, a3]));
    bindings.push(kill(&mut r, "relax.memory.kill_tensor", a2));
    let b = r.block(false, bindings);
    let ret = r.use_var(a3);
    let ub = AttrValue::Dict(vec![("n".into(), AttrValue::Int(1024))]);
    let f = r.finish(
        t2n,
        vec![b],
        ret,
        &[
            ("global_symbol", AttrValue::Str("main".into())),
            ("tir_var_upper_bound", ub),
            ("relax.force_pure", AttrValue::Bool(true)),
        ],
    );
    m.add("main", Func::Relax(Box::new(f)));
    let want = sample_section(
        &sample("tvm-0.25/03_memory_planning_vm_lowering.rlx"),
        "after LowerAllocTensor+KillAfterLastUse",
    );
    assert_text(&print_module(&m), &want);
}

/// The scheduled `rms_norm` of `samples/tvm-0.25/04`: thread bindings, `shared`/`local`
/// buffers, loop annotations, `T.Cast`, `T.axis.spatial`, a remap of a non-grid loop order.
fn rms_norm_prim_func() -> PrimFunc {
    const F16: DataType = DataType::FLOAT16;
    let mut t = TirB::new();
    let (_, n) = t.sym("n", I64);
    let (one, four, k1024, k4096, zero) = (t.i64c(1), t.i64c(4), t.i64c(1024), t.i64c(4096), t.i64c(0));
    let x = t.buffer("x", F16, vec![one, n, k4096]);
    let w = t.buffer("w", F16, vec![k4096]);
    let out = t.buffer("T_cast", F16, vec![one, n, k4096]);
    t.handle_param("var_x", x);
    t.handle_param("w_h", w);
    t.handle_param("var_T_cast", out);
    let red = t.buffer("T_multiply_red_shared", F32, vec![one, n]);
    t.f.buffers[red].scope = "shared".into();
    let rf = t.buffer("T_multiply_red_rf_local", F32, vec![k1024, one, n]);
    t.f.buffers[rf].scope = "local".into();
    let thread = |t: &mut TirB, var: SymVar, extent: PrimExpr, tag: &str, body: Stmt| -> Stmt {
        let zero = t.i64c(0);
        t.stmt(StmtData::For {
            var,
            min: zero,
            extent,
            kind: ForKind::ThreadBinding,
            thread: Some(tag.into()),
            step: None,
            annotations: Default::default(),
            body,
        })
    };
    let (ax0_fused, ax0_fused_e) = t.sym("ax0_fused", I64);
    // Block 1: rf init.
    let (ax1_fused_1, ax1_fused_1e) = t.sym("ax1_fused_1", I64);
    let (va, vae) = t.sym("vax1_fused_1", I64);
    let (v0, v0e) = t.sym("v0", I64);
    let zf = t.f32c(0.0);
    let init_store = t.store(rf, vec![vae, zero, v0e], zf);
    let mut b1 = block_node("T_multiply_red_rf_init", init_store);
    b1.iter_vars =
        vec![t.iter_var(va, k1024, IterKind::Spatial, ax1_fused_1e), t.iter_var(v0, n, IterKind::Spatial, ax0_fused_e)];
    b1.writes = vec![t.point(rf, vec![vae, zero, v0e])];
    let b1 = t.block(b1);
    // Block 2: rf update inside `for ax1_fused_0, u in T.grid(T.int64(4), 1)`.
    let (ax1_fused_0, ax1_fused_0e) = t.sym("ax1_fused_0", I64);
    let (u, _) = t.sym("u", DataType::INT32);
    let (va2, va2e) = t.sym("vax1_fused_1", I64);
    let (v02, v02e) = t.sym("v0", I64);
    let (vb2, vb2e) = t.sym("vax1_fused_0", I64);
    let mul = t.bin(BinOp::Mul, vb2e, k1024);
    let idx = t.bin(BinOp::Add, mul, va2e);
    let xl = t.load(x, vec![zero, v02e, idx]);
    let cast = t.pool().raw(relax_ir::PrimExprData::Cast(F32, xl));
    let sq = t.bin(BinOp::Mul, cast, cast);
    let acc = t.load(rf, vec![va2e, zero, v02e]);
    let upd_v = t.bin(BinOp::Add, acc, sq);
    let upd = t.store(rf, vec![va2e, zero, v02e], upd_v);
    let mut b2 = block_node("T_multiply_red_rf_update", upd);
    b2.iter_vars = vec![
        t.iter_var(va2, k1024, IterKind::Spatial, ax1_fused_1e),
        t.iter_var(v02, n, IterKind::Spatial, ax0_fused_e),
        t.iter_var(vb2, four, IterKind::Reduce, ax1_fused_0e),
    ];
    b2.reads = vec![t.point(rf, vec![va2e, zero, v02e]), t.point(x, vec![zero, v02e, idx])];
    b2.writes = vec![t.point(rf, vec![va2e, zero, v02e])];
    let b2 = t.block(b2);
    let one32 = t.i32c(1);
    let zero32 = t.i32c(0);
    let lu = t.for_(u, zero32, one32, ForKind::Serial, b2);
    let l_f0 = t.for_(ax1_fused_0, zero, four, ForKind::Serial, lu);
    let inner_seq = t.seq(vec![b1, l_f0]);
    let mut ann =
        attrs(&[("pragma_auto_unroll_max_step", AttrValue::Int(256)), ("pragma_unroll_explicit", AttrValue::Int(1))]);
    ann.0.reverse();
    let l_tx = t.stmt(StmtData::For {
        var: ax1_fused_1,
        min: zero,
        extent: k1024,
        kind: ForKind::ThreadBinding,
        thread: Some("threadIdx.x".into()),
        step: None,
        annotations: ann,
        body: inner_seq,
    });
    // Block 3: cross-thread reduction.
    let (ax1_fused, _) = t.sym("ax1_fused", I64);
    let (ax0, ax0e) = t.sym("ax0", I64);
    let (va3, va3e) = t.sym("vax1_fused_1", I64);
    let (v03, v03e) = t.sym("v0", I64);
    let init3 = t.store(red, vec![zero, v03e], zf);
    let acc3 = t.load(red, vec![zero, v03e]);
    let rfl = t.load(rf, vec![va3e, zero, v03e]);
    let s3 = t.bin(BinOp::Add, acc3, rfl);
    let upd3 = t.store(red, vec![zero, v03e], s3);
    let mut b3 = block_node("T_multiply_red", upd3);
    b3.iter_vars =
        vec![t.iter_var(va3, k1024, IterKind::Reduce, ax0e), t.iter_var(v03, n, IterKind::Spatial, ax0_fused_e)];
    b3.reads = vec![t.point(rf, vec![va3e, zero, v03e])];
    b3.writes = vec![t.point(red, vec![zero, v03e])];
    b3.init = Some(init3);
    let b3 = t.block(b3);
    let l_ax0 = thread(&mut t, ax0, k1024, "threadIdx.x", b3);
    let l_ax1 = t.for_(ax1_fused, zero, one, ForKind::Serial, l_ax0);
    // Block 4: normalise and cast.
    let (f0, f0e) = t.sym("ax0_ax1_fused_0", I64);
    let (f1, f1e) = t.sym("ax0_ax1_fused_1", I64);
    let (v04, v04e) = t.sym("v0", I64);
    let (v14, v14e) = t.sym("v1", I64);
    let m4 = t.bin(BinOp::Mul, f0e, k1024);
    let bind1 = t.bin(BinOp::Add, m4, f1e);
    let redl = t.load(red, vec![zero, v04e]);
    let c4096 = t.f32c(4096.0);
    let mean = t.bin(BinOp::Div, redl, c4096);
    let eps = t.f32c(1e-5);
    let var_eps = t.bin(BinOp::Add, mean, eps);
    let rs = t.call(F32, "tir.rsqrt", vec![var_eps]);
    let xl4 = t.load(x, vec![zero, v04e, v14e]);
    let xc = t.pool().raw(relax_ir::PrimExprData::Cast(F32, xl4));
    let p1 = t.bin(BinOp::Mul, rs, xc);
    let wl = t.load(w, vec![v14e]);
    let wc = t.pool().raw(relax_ir::PrimExprData::Cast(F32, wl));
    let p2 = t.bin(BinOp::Mul, p1, wc);
    let res = t.pool().raw(relax_ir::PrimExprData::Cast(F16, p2));
    let st4 = t.store(out, vec![zero, v04e, v14e], res);
    let mut b4 = block_node("T_cast_2", st4);
    b4.iter_vars =
        vec![t.iter_var(v04, n, IterKind::Spatial, ax0_fused_e), t.iter_var(v14, k4096, IterKind::Spatial, bind1)];
    b4.reads = vec![t.point(red, vec![zero, v04e]), t.point(x, vec![zero, v04e, v14e]), t.point(w, vec![v14e])];
    b4.writes = vec![t.point(out, vec![zero, v04e, v14e])];
    let b4 = t.block(b4);
    let l_f1 = thread(&mut t, f1, k1024, "threadIdx.x", b4);
    let l_f0b = t.for_(f0, zero, four, ForKind::Serial, l_f1);
    let outer_seq = t.seq(vec![l_tx, l_ax1, l_f0b]);
    let l_bx = thread(&mut t, ax0_fused, n, "blockIdx.x", outer_seq);
    let mut root = block_node("root", l_bx);
    root.alloc_buffers = vec![red, rf];
    let root = t.block(root);
    t.finish(root, &[("tirx.noalias", AttrValue::Bool(true)), ("tirx.is_scheduled", AttrValue::Bool(true))])
}

#[test]
fn sample_04_gpu_scheduled_rms_norm() {
    let mut m = Module::new();
    let g = m.add("rms_norm", Func::Prim(Box::new(rms_norm_prim_func())));
    let mut r = RelaxB::new();
    let (_, n) = r.sym("n", I64);
    let (one, k4096) = (r.i64c(1), r.i64c(4096));
    let tx = r.tensor(vec![one, n, k4096], DataType::FLOAT16);
    let tw = r.tensor(vec![k4096], DataType::FLOAT16);
    let x = r.param("x", tx);
    let w = r.param("w", tw);
    let y = r.var("y", tx, false);
    let callee = r.global(g);
    let (xe, we) = (r.use_var(x), r.use_var(w));
    let args = r.tuple(vec![xe, we]);
    let call = r.op("relax.call_tir", vec![callee, args], &[], vec![tx], Some(tx));
    let b = r.block(true, vec![(y, call)]);
    let ret = r.use_var(y);
    let f = r.finish(tx, vec![b], ret, &[("global_symbol", AttrValue::Str("main".into()))]);
    m.add("main", Func::Relax(Box::new(f)));
    assert_text(&print_module(&m), &sample("tvm-0.25/04_gpu_scheduled_rms_norm.rlx"));
}

#[test]
fn block_node_helper_defaults() {
    let mut t = TirB::new();
    let s = t.seq(vec![]);
    let b: BlockNode = block_node("b", s);
    assert!(b.iter_vars.is_empty() && b.predicate.is_none());
}

/// A dim of the decoder example: a constant, `n`, or `m + n`.
#[derive(Clone, Copy)]
enum Dim {
    C(i64),
    N,
    MN,
}

/// Builds the decoder block of `samples/tvm-0.25/05` binding by binding.
struct Decoder {
    r: RelaxB,
    n: PrimExpr,
    mn: PrimExpr,
    vars: std::collections::HashMap<&'static str, relax_ir::Var>,
    bindings: Vec<(relax_ir::Var, relax_ir::Expr)>,
}

/// An argument of a decoder binding.
enum Arg {
    V(&'static str),
    Shape(&'static [Dim]),
    PrimTuple(i64),
    Pair(&'static str, &'static str),
    Quarter,
}

impl Decoder {
    fn ty(&mut self, dims: &[Dim]) -> relax_ir::Ty {
        let ds = dims.iter().map(|d| self.dim(*d)).collect();
        self.r.tensor(ds, F32)
    }
    fn dim(&mut self, d: Dim) -> PrimExpr {
        match d {
            Dim::C(v) => self.r.i64c(v),
            Dim::N => self.n,
            Dim::MN => self.mn,
        }
    }
    fn arg(&mut self, a: &Arg) -> relax_ir::Expr {
        match a {
            Arg::V(name) => {
                let v = self.vars[name];
                self.r.use_var(v)
            }
            Arg::Shape(dims) => {
                let ds = dims.iter().map(|d| self.dim(*d)).collect();
                self.r.expr(ExprData::Shape(ds), None)
            }
            Arg::PrimTuple(k) => {
                let c = self.r.i64c(*k);
                let p = self.r.expr(ExprData::Prim(c), None);
                self.r.tuple(vec![p])
            }
            Arg::Pair(a, b) => {
                let (a, b) = (self.vars[a], self.vars[b]);
                let (a, b) = (self.r.use_var(a), self.r.use_var(b));
                self.r.tuple(vec![a, b])
            }
            Arg::Quarter => self.r.expr(ExprData::Const(<relax_ir::Constant as relax_entity::EntityRef>::new(0)), None),
        }
    }
    fn bind(
        &mut self,
        name: &'static str,
        op: &str,
        args: &[Arg],
        at: &[(&str, AttrValue)],
        ty: relax_ir::Ty,
        df: bool,
    ) {
        let args = args.iter().map(|a| self.arg(a)).collect();
        let call = self.r.op(op, args, at, vec![], Some(ty));
        let v = self.r.var(name, ty, df);
        self.vars.insert(name, v);
        self.bindings.push((v, call));
    }
    fn item(&mut self, name: &'static str, tuple: &'static str, index: u32, ty: relax_ir::Ty) {
        let t = self.vars[tuple];
        let te = self.r.use_var(t);
        let e = self.r.expr(ExprData::GetItem { tuple: te, index }, Some(ty));
        let v = self.r.var(name, ty, true);
        self.vars.insert(name, v);
        self.bindings.push((v, e));
    }
}

#[test]
fn sample_05_llama_decoder_block() {
    use Dim::{C, MN, N};
    let mut m = Module::new();
    m.constants.push(ConstData {
        dtype: F32,
        shape: Some(vec![]),
        payload: ConstPayload::Data(0.25f32.to_le_bytes().to_vec()),
    });
    let mut r = RelaxB::new();
    let (_, n) = r.sym("n", I64);
    let (_, mv) = r.sym("m", I64);
    let mn = r.bin(BinOp::Add, mv, n);
    let mut d = Decoder { r, n, mn, vars: Default::default(), bindings: Vec::new() };
    let t_out = d.ty(&[C(1), N, C(64)]);
    let t_kv = d.ty(&[C(1), MN, C(4), C(16)]);
    let ret = d.r.ty(TyData::Tuple(vec![t_out, t_kv, t_kv]));
    let t_past = {
        let ds = vec![d.r.i64c(1), mv, d.r.i64c(4), d.r.i64c(16)];
        d.r.tensor(ds, F32)
    };
    let params: Vec<(&'static str, relax_ir::Ty)> = vec![
        ("x", t_out),
        ("past_k", t_past),
        ("past_v", t_past),
        ("cos", d.ty(&[N, C(16)])),
        ("sin", d.ty(&[N, C(16)])),
        ("w_norm", d.ty(&[C(64)])),
        ("w_qkv", d.ty(&[C(64), C(192)])),
        ("w_o", d.ty(&[C(64), C(64)])),
        ("w_norm2", d.ty(&[C(64)])),
        ("w_gate_up", d.ty(&[C(64), C(256)])),
        ("w_down", d.ty(&[C(128), C(64)])),
    ];
    for (name, t) in params {
        let v = d.r.param(name, t);
        d.vars.insert(name, v);
    }
    let eps = || AttrValue::Float(relax_ir::FloatBits::new(1e-5));
    let axes = |v: &[i64]| AttrValue::List(v.iter().map(|&i| AttrValue::Int(i)).collect());
    let void = || ("out_dtype", AttrValue::Str("void".into()));
    let (b1n64, b1n192, b1n4_16, b1n4_8) = (
        d.ty(&[C(1), N, C(64)]),
        d.ty(&[C(1), N, C(192)]),
        d.ty(&[C(1), N, C(4), C(16)]),
        d.ty(&[C(1), N, C(4), C(8)]),
    );
    let b1n12_16 = d.ty(&[C(1), N, C(12), C(16)]);
    let b1n1_16 = d.ty(&[C(1), N, C(1), C(16)]);
    let rms = |w| [Arg::V("x"), Arg::V(w)];
    d.bind("h", "relax.nn.rms_norm", &rms("w_norm"), &[("axes", axes(&[-1])), ("epsilon", eps())], b1n64, true);
    d.bind("qkv", "relax.matmul", &[Arg::V("h"), Arg::V("w_qkv")], &[void()], b1n192, true);
    d.bind("qkv4", "relax.reshape", &[Arg::V("qkv"), Arg::Shape(&[C(1), N, C(12), C(16)])], &[], b1n12_16, true);
    let parts_t = d.r.ty(TyData::Tuple(vec![b1n4_16, b1n4_16, b1n4_16]));
    d.bind(
        "parts",
        "relax.split",
        &[Arg::V("qkv4")],
        &[("indices_or_sections", AttrValue::Int(3)), ("axis", AttrValue::Int(2))],
        parts_t,
        true,
    );
    d.item("q", "parts", 0, b1n4_16);
    d.item("k", "parts", 1, b1n4_16);
    d.item("v", "parts", 2, b1n4_16);
    let no_inbound = || ("assume_inbound", AttrValue::Bool(false));
    let rotary = |d: &mut Decoder, names: [&'static str; 9], x: &'static str| {
        let [a, b, neg, rot, lc, mc, ls, ms, e] = names;
        let slice1 = [Arg::V(x), Arg::PrimTuple(3), Arg::PrimTuple(0), Arg::PrimTuple(8)];
        d.bind(a, "relax.strided_slice", &slice1, &[no_inbound()], b1n4_8, true);
        let slice2 = [Arg::V(x), Arg::PrimTuple(3), Arg::PrimTuple(8), Arg::PrimTuple(16)];
        d.bind(b, "relax.strided_slice", &slice2, &[no_inbound()], b1n4_8, true);
        d.bind(neg, "relax.negative", &[Arg::V(b)], &[], b1n4_8, true);
        d.bind(rot, "relax.concat", &[Arg::Pair(neg, a)], &[("axis", AttrValue::Int(3))], b1n4_16, true);
        d.bind(lc, "relax.reshape", &[Arg::V("cos"), Arg::Shape(&[C(1), N, C(1), C(16)])], &[], b1n1_16, true);
        d.bind(mc, "relax.multiply", &[Arg::V(x), Arg::V(lc)], &[], b1n4_16, true);
        d.bind(ls, "relax.reshape", &[Arg::V("sin"), Arg::Shape(&[C(1), N, C(1), C(16)])], &[], b1n1_16, true);
        d.bind(ms, "relax.multiply", &[Arg::V(rot), Arg::V(ls)], &[], b1n4_16, true);
        d.bind(e, "relax.add", &[Arg::V(mc), Arg::V(ms)], &[], b1n4_16, true);
    };
    rotary(&mut d, ["q1", "q2", "lv9", "q_rot", "lv11", "lv12", "lv13", "lv14", "q_e"], "q");
    rotary(&mut d, ["k1", "k2", "lv18", "k_rot", "lv20", "lv21", "lv22", "lv23", "k_e"], "k");
    d.bind("k_all", "relax.concat", &[Arg::Pair("past_k", "k_e")], &[("axis", AttrValue::Int(1))], t_kv, false);
    d.bind("v_all", "relax.concat", &[Arg::Pair("past_v", "v")], &[("axis", AttrValue::Int(1))], t_kv, false);
    let t_qt = d.ty(&[C(1), C(4), N, C(16)]);
    let t_kt = d.ty(&[C(1), C(4), C(16), MN]);
    let t_vt = d.ty(&[C(1), C(4), MN, C(16)]);
    let t_s = d.ty(&[C(1), C(4), N, MN]);
    d.bind("qt", "relax.permute_dims", &[Arg::V("q_e")], &[("axes", axes(&[0, 2, 1, 3]))], t_qt, true);
    d.bind("kt", "relax.permute_dims", &[Arg::V("k_all")], &[("axes", axes(&[0, 2, 3, 1]))], t_kt, true);
    d.bind("vt", "relax.permute_dims", &[Arg::V("v_all")], &[("axes", axes(&[0, 2, 1, 3]))], t_vt, true);
    d.bind("lv30", "relax.matmul", &[Arg::V("qt"), Arg::V("kt")], &[void()], t_s, true);
    d.bind("s", "relax.multiply", &[Arg::V("lv30"), Arg::Quarter], &[], t_s, true);
    d.bind("p", "relax.nn.softmax", &[Arg::V("s")], &[("axis", AttrValue::Int(-1))], t_s, true);
    d.bind("o", "relax.matmul", &[Arg::V("p"), Arg::V("vt")], &[void()], t_qt, true);
    d.bind("lv34", "relax.permute_dims", &[Arg::V("o")], &[("axes", axes(&[0, 2, 1, 3]))], b1n4_16, true);
    d.bind("o2", "relax.reshape", &[Arg::V("lv34"), Arg::Shape(&[C(1), N, C(64)])], &[], b1n64, true);
    d.bind("lv36", "relax.matmul", &[Arg::V("o2"), Arg::V("w_o")], &[void()], b1n64, true);
    d.bind("h2", "relax.add", &[Arg::V("x"), Arg::V("lv36")], &[], b1n64, true);
    let rms2 = [Arg::V("h2"), Arg::V("w_norm2")];
    d.bind("hn", "relax.nn.rms_norm", &rms2, &[("axes", axes(&[-1])), ("epsilon", eps())], b1n64, true);
    let t256 = d.ty(&[C(1), N, C(256)]);
    let t128 = d.ty(&[C(1), N, C(128)]);
    d.bind("gu", "relax.matmul", &[Arg::V("hn"), Arg::V("w_gate_up")], &[void()], t256, true);
    let gu2_t = d.r.ty(TyData::Tuple(vec![t128, t128]));
    let split2 = [("indices_or_sections", AttrValue::Int(2)), ("axis", AttrValue::Int(-1))];
    d.bind("gu2", "relax.split", &[Arg::V("gu")], &split2, gu2_t, true);
    d.item("lv41", "gu2", 0, t128);
    d.bind("lv42", "relax.nn.silu", &[Arg::V("lv41")], &[], t128, true);
    d.item("lv43", "gu2", 1, t128);
    d.bind("act", "relax.multiply", &[Arg::V("lv42"), Arg::V("lv43")], &[], t128, true);
    d.bind("lv45", "relax.matmul", &[Arg::V("act"), Arg::V("w_down")], &[void()], b1n64, true);
    d.bind("out", "relax.add", &[Arg::V("h2"), Arg::V("lv45")], &[], b1n64, false);
    let bindings = std::mem::take(&mut d.bindings);
    let blk = d.r.block(true, bindings);
    let body = {
        let out = Arg::V("out");
        let (o, k, v) = (d.arg(&out), d.arg(&Arg::V("k_all")), d.arg(&Arg::V("v_all")));
        d.r.tuple(vec![o, k, v])
    };
    let f = d.r.finish(ret, vec![blk], body, &[("global_symbol", AttrValue::Str("decoder_block".into()))]);
    m.add("decoder_block", Func::Relax(Box::new(f)));
    let text = sample("tvm-0.25/05_llama_decoder_block.rlx");
    let want: String = text.split("######## ").next().unwrap().to_string();
    assert_text(&print_module(&m), &want);
}
