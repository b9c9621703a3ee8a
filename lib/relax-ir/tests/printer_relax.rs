//! Relax printing details, each expected text taken from TVM 0.25's output for the same
//! module written in TVMScript.

mod printer_util;

use printer_util::*;
use relax_entity::EntityRef;
use relax_ir::attrs::AttrValue;
use relax_ir::module::{ConstData, ConstPayload, ExternFunc, Func, ModuleForm, VDeviceInfo};
use relax_ir::prim::{BinOp, PrimExprData};
use relax_ir::printer::print_module;
use relax_ir::relax::{Binding, BindingKind, ExprData, FunctionNode};
use relax_ir::tir::StmtData;
use relax_ir::ty::{TensorShape, TyData, VDevice};
use relax_ir::{DataType, Module, Pool};

const F32: DataType = DataType::FLOAT32;
const I64: DataType = DataType::INT64;

fn public(name: &str) -> (&'static str, AttrValue) {
    ("global_symbol", AttrValue::Str(name.to_string()))
}

fn scalar_const(m: &mut Module, dtype: DataType, bytes: Vec<u8>) -> relax_ir::Constant {
    m.constants.push(ConstData { dtype, shape: Some(vec![]), payload: ConstPayload::Data(bytes) })
}

/// Calls of every kind, declaration order (return annotation first), `cls` placement, a
/// local function with its own header, tuples, leaves and annotation omission.
#[test]
fn calls_declarations_and_local_function() {
    let mut m = Module::new();
    // g: a PrimFunc without a root block.
    let mut t = TirB::new();
    let two = t.i32c(2);
    let a = t.buffer("A", F32, vec![two]);
    let b = t.buffer("B", F32, vec![two]);
    t.handle_param("A_h", a);
    t.handle_param("B_h", b);
    let zero = t.i32c(0);
    let ld = t.load(a, vec![zero]);
    let st = t.store(b, vec![zero], ld);
    let g = m.add("g", Func::Prim(Box::new(t.finish(st, &[]))));
    m.add("ext", Func::Extern(ExternFunc { symbol: "my_ext".into(), pool: Pool::new(), ty: None }));
    let c_i64 = scalar_const(&mut m, I64, 1i64.to_le_bytes().to_vec());
    let c_true = scalar_const(&mut m, DataType::BOOL, vec![1]);

    let mut r = RelaxB::new();
    let (_, av) = r.sym("a", I64);
    let (_, bv) = r.sym("b", I64);
    let (_, cv) = r.sym("c", I64);
    let (_, dv) = r.sym("d", I64);
    let ta = r.tensor(vec![av], F32);
    let tb = r.tensor(vec![bv], F32);
    let apb = r.bin(BinOp::Add, av, bv);
    let ts = r.ty(TyData::shape(vec![cv, apb]));
    let tv = r.ty(TyData::Prim { dtype: I64, value: Some(dv) });
    let two = r.i64c(2);
    let c2 = r.bin(BinOp::Mul, cv, two);
    let tret = r.tensor(vec![bv, c2], F32);
    let x = r.param("x", ta);
    let y = r.param("y", tb);
    r.param("s", ts);
    r.param("v", tv);
    let obj = r.ty(TyData::Object);
    let void = r.ty(TyData::void());
    // The local function, with a fresh variable also named `b`.
    let (_, b2) = r.sym("b", I64);
    let tb2 = r.tensor(vec![b2], F32);
    let z = r.var("z", tb2, false);
    let rv = r.var("r", obj, false);
    let ext = r.expr(ExprData::ExternFunc("ext".into()), None);
    let ze = r.use_var(z);
    let cp = r.call(ext, vec![ze], vec![obj], Some(obj));
    let ib = r.block(false, vec![(rv, cp)]);
    let zret = r.use_var(z);
    let inner_node = FunctionNode {
        params: vec![z],
        ret: tb2,
        body: r.f.add_seq(vec![ib], zret),
        attrs: Default::default(),
        pure: true,
    };
    let inner_ty = r.ty(TyData::Callable { params: Some(vec![tb2]), ret: tb2, pure: true });
    let inner = r.var("inner", inner_ty, false);
    let inner_val = r.expr(ExprData::Function(Box::new(inner_node)), Some(inner_ty));
    let mut binds = vec![(inner, inner_val)];
    // u = R.call_pure_packed("xx", x, R.prim_value(a + 1), sinfo_args=...)
    let u = r.var("u", tret, false);
    let xx = r.expr(ExprData::ExternFunc("xx".into()), None);
    let xe = r.use_var(x);
    let one = r.i64c(1);
    let a1 = r.bin(BinOp::Add, av, one);
    let pv = r.expr(ExprData::Prim(a1), None);
    let call = r.op("relax.call_pure_packed", vec![xx, xe, pv], &[], vec![tret], Some(tret));
    binds.push((u, call));
    // u2 = R.call_builtin_with_ctx("yy", (x, R.shape([a, b])), sinfo_args=(R.Object,))
    let u2 = r.var("u2", obj, false);
    let yy = r.expr(ExprData::ExternFunc("yy".into()), None);
    let xe = r.use_var(x);
    let sh = r.expr(ExprData::Shape(vec![av, bv]), None);
    let tup = r.tuple(vec![xe, sh]);
    let call = r.op("relax.call_builtin_with_ctx", vec![yy, tup], &[], vec![obj], Some(obj));
    binds.push((u2, call));
    // u3: call_tir_inplace is always annotated.
    let u3 = r.var("u3", tb, false);
    let ge = r.global(g);
    let (xe, ye) = (r.use_var(x), r.use_var(y));
    let tup = r.tuple(vec![xe, ye]);
    let call = r.op(
        "relax.call_tir_inplace",
        vec![ge, tup],
        &[("inplace_indices", AttrValue::List(vec![AttrValue::Int(1)]))],
        vec![tb],
        Some(tb),
    );
    binds.push((u3, call));
    // u4: a tuple output prints as a list; tir_vars last; annotation omitted.
    let tup_out = r.ty(TyData::Tuple(vec![tb, ta]));
    let u4 = r.var("u4", tup_out, false);
    let ge = r.global(g);
    let (xe, ye) = (r.use_var(x), r.use_var(y));
    let tup = r.tuple(vec![xe, ye]);
    let tv_shape = r.expr(ExprData::Shape(vec![av]), None);
    let call = r.op("relax.call_tir", vec![ge, tup, tv_shape], &[], vec![tup_out], Some(tup_out));
    binds.push((u4, call));
    // u5, u6: call_dps_packed with matching types; u8: a different annotation stays.
    let t16 = r.tensor(vec![av], DataType::FLOAT16);
    let tnd = r.ty(TyData::tensor_ndim(1, DataType::VOID));
    for (name, out, var_ty) in [("u5", ta, ta), ("u6", t16, t16), ("u8", ta, tnd)] {
        let v = r.var(name, var_ty, false);
        let zz = r.expr(ExprData::ExternFunc("zz".into()), None);
        let xe = r.use_var(x);
        let tup = r.tuple(vec![xe]);
        let call = r.op("relax.call_dps_packed", vec![zz, tup], &[], vec![out], Some(out));
        binds.push((v, call));
    }
    // e = R.ExternFunc("foo") with the default type.
    let opaque = r.ty(TyData::Callable { params: None, ret: obj, pure: false });
    let e = r.var("e", opaque, false);
    let foo = r.expr(ExprData::ExternFunc("foo".into()), Some(opaque));
    binds.push((e, foo));
    // Tuples.
    let txy = r.ty(TyData::Tuple(vec![ta, tb]));
    let tv_ = r.var("t", txy, false);
    let (xe, ye) = (r.use_var(x), r.use_var(y));
    let tup = r.tuple(vec![xe, ye]);
    binds.push((tv_, tup));
    let tx1 = r.ty(TyData::Tuple(vec![ta]));
    let t1 = r.var("t1", tx1, false);
    let xe = r.use_var(x);
    let tup = r.tuple(vec![xe]);
    binds.push((t1, tup));
    let t2 = r.var("t2", void, false);
    let empty = r.tuple(vec![]);
    binds.push((t2, empty));
    let tnest = r.ty(TyData::Tuple(vec![txy, ta]));
    let t3 = r.var("t3", tnest, false);
    let (xe, ye, xe2) = (r.use_var(x), r.use_var(y), r.use_var(x));
    let inner_tup = r.tuple(vec![xe, ye]);
    let tup = r.tuple(vec![inner_tup, xe2]);
    binds.push((t3, tup));
    // Leaves.
    let q = r.var("q", obj, false);
    let s = r.expr(ExprData::Str("a\"b\\c\nd\te\u{1}".into()), Some(obj));
    binds.push((q, s));
    let q2 = r.var("q2", obj, false);
    let d = r.expr(ExprData::DType(DataType::FLOAT16), Some(obj));
    binds.push((q2, d));
    let f15 = r.f32c(1.5);
    let tq3 = r.ty(TyData::Prim { dtype: F32, value: Some(f15) });
    let q3 = r.var("q3", tq3, false);
    let pv = r.expr(ExprData::Prim(f15), Some(tq3));
    binds.push((q3, pv));
    // An int32 scalar keeps its type (TVM 0.25 prints a bare `3`, which reads back int64).
    let three = r.i32c(3);
    let tq4 = r.ty(TyData::Prim { dtype: DataType::INT32, value: Some(three) });
    let q4 = r.var("q4", tq4, false);
    let pv = r.expr(ExprData::Prim(three), Some(tq4));
    binds.push((q4, pv));
    let one = r.i64c(1);
    let tq5 = r.ty(TyData::shape(vec![one, av]));
    let q5 = r.var("q5", tq5, false);
    let shp = r.expr(ExprData::Shape(vec![one, av]), Some(tq5));
    binds.push((q5, shp));
    let t0d = r.tensor(vec![], I64);
    let q6 = r.var("q6", t0d, false);
    let ce = r.expr(ExprData::Const(c_i64), Some(t0d));
    binds.push((q6, ce));
    let ok = r.var("", void, false);
    let tb0 = r.tensor(vec![], DataType::BOOL);
    let cond = r.expr(ExprData::Const(c_true), Some(tb0));
    let fmt = r.expr(ExprData::Str("x: {}".into()), None);
    let xe = r.use_var(x);
    let call = r.op("relax.assert_op", vec![cond, fmt, xe], &[], vec![], Some(void));
    binds.push((ok, call));
    let blk = r.block(false, binds);
    let ret = r.use_var(u);
    let f = r.finish(tret, vec![blk], ret, &[public("main")]);
    m.add("main", Func::Relax(Box::new(f)));

    let want = r#"# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis
# from tvm.script import relax as R

@I.ir_module
class Module:
    @T.prim_func(private=True, s_tir=True)
    def g(A: T.Buffer((2,), "float32"), B: T.Buffer((2,), "float32")):
        B[0] = A[0]

    ext = R.ExternFunc("my_ext")
    @R.function
    def main(x: R.Tensor(("a",), dtype="float32"), y: R.Tensor(("b",), dtype="float32"), s: R.Shape(["c", "a + b"]), v: R.Prim(value="d")) -> R.Tensor(("b", "c * 2"), dtype="float32"):
        b = T.int64()
        c = T.int64()
        a = T.int64()
        d = T.int64()
        b_1 = T.int64()
        cls = Module
        # from tvm.script import tirx as T
        # from tvm.tirx.layout import Axis
        # from tvm.script import relax as R
        
        @R.function
        def inner(z: R.Tensor((b_1,), dtype="float32")) -> R.Tensor((b_1,), dtype="float32"):
            r: R.Object = R.call_packed("ext", z, sinfo_args=(R.Object,))
            return z

        u: R.Tensor((b, c * 2), dtype="float32") = R.call_pure_packed("xx", x, R.prim_value(a + 1), sinfo_args=(R.Tensor((b, c * 2), dtype="float32"),))
        u2: R.Object = R.call_builtin_with_ctx("yy", (x, R.shape([a, b])), sinfo_args=(R.Object,))
        u3: R.Tensor((b,), dtype="float32") = R.call_tir_inplace(cls.g, (x, y), out_sinfo=R.Tensor((b,), dtype="float32"), inplace_indices=[1])
        u4 = R.call_tir(cls.g, (x, y), out_sinfo=[R.Tensor((b,), dtype="float32"), R.Tensor((a,), dtype="float32")], tir_vars=R.shape([a]))
        u5 = R.call_dps_packed("zz", (x,), out_sinfo=R.Tensor((a,), dtype="float32"))
        u6 = R.call_dps_packed("zz", (x,), out_sinfo=R.Tensor((a,), dtype="float16"))
        u8: R.Tensor(ndim=1) = R.call_dps_packed("zz", (x,), out_sinfo=R.Tensor((a,), dtype="float32"))
        e: R.Callable = R.ExternFunc("foo")
        t: R.Tuple(R.Tensor((a,), dtype="float32"), R.Tensor((b,), dtype="float32")) = x, y
        t1: R.Tuple(R.Tensor((a,), dtype="float32")) = (x,)
        R.tuple()
        t3: R.Tuple(R.Tuple(R.Tensor((a,), dtype="float32"), R.Tensor((b,), dtype="float32")), R.Tensor((a,), dtype="float32")) = (x, y), x
        q: R.Object = R.str("a\"b\\c\nd\te\x01")
        q2: R.Object = R.dtype("float16")
        q3: R.Prim(value=T.float32(1.5)) = R.prim_value(T.float32(1.5))
        q4: R.Prim(value=T.int32(3)) = R.prim_value(T.int32(3))
        q5: R.Shape([1, a]) = R.shape([1, a])
        q6: R.Tensor((), dtype="int64") = R.const(1, "int64")
        R.assert_op(R.const(True, "bool"), x, format=R.str("x: {}"))
        return u
"#;
    assert_text(&print_module(&m), want);
}

/// `if`/`else` with match_cast in a branch, the output annotation in both branches, body
/// declarations hoisted to the function (interleaved with `cls`), and a local function's
/// header when the module used no `I.`.
#[test]
fn if_else_match_cast_and_hoisted_declarations() {
    let mut m = Module::new();
    let mut t = TirB::new();
    let two = t.i32c(2);
    let a = t.buffer("A", F32, vec![two]);
    let b = t.buffer("B", F32, vec![two]);
    t.handle_param("A_h", a);
    t.handle_param("B_h", b);
    let zero = t.i32c(0);
    let ld = t.load(a, vec![zero]);
    let st = t.store(b, vec![zero], ld);
    let g = m.add("g", Func::Prim(Box::new(t.finish(st, &[]))));

    let mut r = RelaxB::new();
    let (_, n) = r.sym("n", I64);
    let (_, mv) = r.sym("m", I64);
    let (_, pv) = r.sym("p", I64);
    let four = r.i64c(4);
    let tn = r.tensor(vec![n, four], F32);
    let tm = r.tensor(vec![mv, four], F32);
    let tp = r.tensor(vec![pv, four], F32);
    let two = r.i64c(2);
    let t2 = r.tensor(vec![two], F32);
    let tcond = r.ty(TyData::Prim { dtype: DataType::BOOL, value: None });
    let tnd = r.ty(TyData::tensor_ndim(2, F32));
    let x = r.param("x", tn);
    let c = r.param("c", tcond);
    // Dataflow: y = match_cast(x, (m, 4)); z = call_tir(g, (y,)).
    let y = r.var("y", tm, true);
    let z = r.var("z", t2, false);
    let xe = r.use_var(x);
    let ge = r.global(g);
    let ye = r.use_var(y);
    let args = r.tuple(vec![ye]);
    let call = r.op("relax.call_tir", vec![ge, args], &[], vec![t2], Some(t2));
    let df = r.block_with(
        true,
        vec![
            Binding { var: y, value: xe, kind: BindingKind::MatchCast(tm) },
            Binding { var: z, value: call, kind: BindingKind::Value },
        ],
    );
    // if c: w = match_cast(x, (p, 4)); w2 = w  else: w2 = x
    let w = r.var("w", tp, false);
    let xe = r.use_var(x);
    let then_blk = r.block_with(false, vec![Binding { var: w, value: xe, kind: BindingKind::MatchCast(tp) }]);
    let we = r.use_var(w);
    let xe = r.use_var(x);
    let ce = r.use_var(c);
    let w2 = r.var("w2", tnd, false);
    let then_branch = r.f.add_seq(vec![then_blk], we);
    let else_branch = r.f.add_seq(vec![], xe);
    let iff = r.expr(ExprData::If { cond: ce, then_branch, else_branch }, Some(tnd));
    let plain = r.block(false, vec![(w2, iff)]);
    let ret = r.use_var(x);
    let f = r.finish(tn, vec![df, plain], ret, &[public("main"), ("b", AttrValue::Int(1)), ("a", AttrValue::Int(2))]);
    m.add("main", Func::Relax(Box::new(f)));
    let want = r#"# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis
# from tvm.script import relax as R

@I.ir_module
class Module:
    @T.prim_func(private=True, s_tir=True)
    def g(A: T.Buffer((2,), "float32"), B: T.Buffer((2,), "float32")):
        B[0] = A[0]

    @R.function
    def main(x: R.Tensor(("n", 4), dtype="float32"), c: R.Prim("bool")) -> R.Tensor(("n", 4), dtype="float32"):
        n = T.int64()
        R.func_attr({"a": 2, "b": 1})
        m = T.int64()
        cls = Module
        p = T.int64()
        with R.dataflow():
            y: R.Tensor((m, 4), dtype="float32") = R.match_cast(x, R.Tensor((m, 4), dtype="float32"))
            z = R.call_tir(cls.g, (y,), out_sinfo=R.Tensor((2,), dtype="float32"))
            R.output(z)
        if c:
            w: R.Tensor((p, 4), dtype="float32") = R.match_cast(x, R.Tensor((p, 4), dtype="float32"))
            w2: R.Tensor(dtype="float32", ndim=2) = w
        else:
            w2: R.Tensor(dtype="float32", ndim=2) = x
        return x
"#;
    assert_text(&print_module(&m), want);
}

/// Name sanitising and `_k` suffixes (TVM 0.25's output for the same chain of bindings,
/// except that Python keywords are taken and a leading digit gets `_`).
#[test]
fn names_and_suffixes() {
    let hints = [
        "",
        "R",
        "T",
        "I",
        "cls",
        "Module",
        "if",
        "None",
        "a.b",
        "1abc",
        "x y",
        "é",
        "storage",
        "storage",
        "storage_1",
        "storage1",
        "_",
        "__",
        "x",
        "metadata",
        "main",
        "n",
        "v",
        "v",
    ];
    let mut r = RelaxB::new();
    let two = r.i64c(2);
    let t = r.tensor(vec![two], F32);
    let x = r.param("x", t);
    let mut prev = x;
    let mut binds = Vec::new();
    for h in hints {
        let v = r.var(h, t, false);
        let e = r.use_var(prev);
        binds.push((v, e));
        prev = v;
    }
    let blk = r.block(false, binds);
    let ret = r.use_var(prev);
    let f = r.finish(t, vec![blk], ret, &[public("main")]);
    let mut m = Module::new();
    m.add("main", Func::Relax(Box::new(f)));
    let lhs: Vec<String> = print_module(&m)
        .lines()
        .filter(|l| l.starts_with("        ") && l.contains(": R.Tensor"))
        .map(|l| l.trim().split(':').next().unwrap().to_string())
        .collect();
    assert_eq!(
        lhs,
        [
            "v",
            "R_1",
            "T_1",
            "I_1",
            "cls_1",
            "Module_1",
            "if_1",
            "None_1",
            "a_b",
            "_1abc",
            "x_y",
            "__",
            "storage",
            "storage_1",
            "storage_1_1",
            "storage1",
            "_",
            "___1",
            "x_1",
            "metadata",
            "main",
            "n",
            "v_1",
            "v_2"
        ]
    );
}

/// Decorators, `R.func_attr` values, types, vdevices, module attributes and global infos,
/// extern members with a type, local functions never private.
#[test]
fn decorators_types_and_module_members() {
    let mut m = Module::new();
    m.attrs = attrs(&[("b", AttrValue::Str("x".into())), ("attr", AttrValue::Int(10))]);
    let target = AttrValue::Dict(vec![
        ("kind".into(), AttrValue::Str("cuda".into())),
        ("arch".into(), AttrValue::Str("sm_80".into())),
    ]);
    m.vdevices = vec![
        VDeviceInfo { target: target.clone(), vdevice_id: 0, scope: "global".into() },
        VDeviceInfo { target, vdevice_id: 1, scope: "shared".into() },
    ];
    let mut ep = Pool::new();
    let two = ep.i64(2);
    let t2 = ep.intern_ty(TyData::tensor(vec![two], F32));
    let cty = ep.intern_ty(TyData::Callable { params: Some(vec![t2]), ret: t2, pure: true });
    m.add("ext", Func::Extern(ExternFunc { symbol: "foo".into(), pool: ep, ty: Some(cty) }));

    let mut r = RelaxB::new();
    let (_, k) = r.sym("k", I64);
    let (two, three) = (r.i64c(2), r.i64c(3));
    let tx = r.ty(TyData::Tensor {
        shape: TensorShape::Dims(vec![two, three]),
        dtype: F32,
        ndim: 2,
        vdevice: Some(VDevice { kind: "cuda".into(), index: 1, scope: "shared".into() }),
    });
    let tshape2 = r.ty(TyData::Shape { values: None, ndim: 2 });
    let tshape_any = r.ty(TyData::Shape { values: None, ndim: -1 });
    let tnd3 = r.ty(TyData::tensor_ndim(3, DataType::VOID));
    let tany = r.ty(TyData::tensor_ndim(-1, DataType::VOID));
    let tdt = r.ty(TyData::tensor_ndim(-1, DataType::FLOAT16));
    let pk = r.ty(TyData::Prim { dtype: I64, value: Some(k) });
    let two = r.i64c(2);
    let k2 = r.bin(BinOp::Mul, k, two);
    let one = r.i64c(1);
    let k21 = r.bin(BinOp::Add, k2, one);
    let pq = r.ty(TyData::Prim { dtype: I64, value: Some(k21) });
    let obj = r.ty(TyData::Object);
    let t2f = r.tensor(vec![two], F32);
    let void = r.ty(TyData::void());
    let cb = r.ty(TyData::Callable { params: Some(vec![t2f, obj]), ret: void, pure: true });
    let op1 = r.ty(TyData::Callable { params: None, ret: t2f, pure: true });
    let op2 = r.ty(TyData::Callable { params: None, ret: obj, pure: true });
    let x = r.param("x", tx);
    for (name, t) in
        [("s", tshape2), ("w", tshape_any), ("t", tnd3), ("u", tany), ("h", tdt), ("kk", pk), ("q", pq), ("cb", cb)]
    {
        r.param(name, t);
    }
    r.param("o1", op1);
    r.param("o2", op2);
    // A local impure function (never private=True).
    let a = r.var("a", t2f, false);
    let ae = r.use_var(a);
    let node = FunctionNode {
        params: vec![a],
        ret: t2f,
        body: r.f.add_seq(vec![], ae),
        attrs: attrs(&[("k", AttrValue::Int(1))]),
        pure: false,
    };
    let fty = r.ty(TyData::Callable { params: Some(vec![t2f]), ret: t2f, pure: false });
    let lf = r.var("inner", fty, false);
    let lfe = r.expr(ExprData::Function(Box::new(node)), Some(fty));
    let blk = r.block(false, vec![(lf, lfe)]);
    let xe = r.use_var(x);
    let fl = r.finish(
        tx,
        vec![blk],
        xe,
        &[
            ("x", AttrValue::PrimInt(I64, 4)),
            ("b", AttrValue::PrimInt(DataType::BOOL, 1)),
            ("ee", AttrValue::Float(relax_ir::FloatBits::new(1e-5))),
            ("zz", AttrValue::Float(relax_ir::FloatBits::new(2.0))),
            ("f16", AttrValue::PrimFloat(DataType::FLOAT16, relax_ir::FloatBits::new(0.5))),
            ("l", AttrValue::List(vec![AttrValue::Int(1), AttrValue::Str("a".into()), AttrValue::None])),
            ("d", AttrValue::Dict(vec![("z".into(), AttrValue::Int(1)), ("a".into(), AttrValue::Bool(false))])),
            ("global_symbol", AttrValue::Str("other".into())),
        ],
    );
    let mut fl = fl;
    fl.func.pure = false;
    m.add("f", Func::Relax(Box::new(fl)));
    // A private impure function.
    let mut r = RelaxB::new();
    let obj = r.ty(TyData::Object);
    let p = r.param("p", obj);
    let pe = r.use_var(p);
    let mut g = r.finish(obj, vec![], pe, &[]);
    g.func.pure = false;
    m.add("g", Func::Relax(Box::new(g)));
    let want = r#"# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis
# from tvm.script import relax as R

@I.ir_module
class Module:
    I.module_attrs({"attr": 10, "b": "x"})
    I.module_global_infos({"vdevice": [I.vdevice({"arch": "sm_80", "kind": "cuda"}, 0, "global"), I.vdevice({"arch": "sm_80", "kind": "cuda"}, 1, "shared")]})
    ext = R.ExternFunc("foo", R.Callable((R.Tensor((T.int64(2),), dtype="float32"),), R.Tensor((T.int64(2),), dtype="float32"), True))
    @R.function(pure=False)
    def f(x: R.Tensor((2, 3), dtype="float32", vdevice="cuda:1:shared"), s: R.Shape(ndim=2), w: R.Shape(ndim=-1), t: R.Tensor(ndim=3), u: R.Tensor, h: R.Tensor(dtype="float16"), kk: R.Prim(value="k"), q: R.Prim(value="k * 2 + 1"), cb: R.Callable((R.Tensor((2,), dtype="float32"), R.Object), R.Tuple, True), o1: R.Callable(ret=R.Tensor((2,), dtype="float32"), purity=True), o2: R.Callable(purity=True)) -> R.Tensor((2, 3), dtype="float32", vdevice="cuda:1:shared"):
        k = T.int64()
        R.func_attr({"b": True, "d": {"a": False, "z": 1}, "ee": 1.0000000000000001e-05, "f16": T.float16(0.5), "global_symbol": "other", "l": [1, "a", None], "x": 4, "zz": 2.0})
        # from tvm.script import ir as I
        # from tvm.script import tirx as T
        # from tvm.tirx.layout import Axis
        # from tvm.script import relax as R
        
        @R.function(pure=False)
        def inner(a: R.Tensor((2,), dtype="float32")) -> R.Tensor((2,), dtype="float32"):
            R.func_attr({"k": 1})
            return a

        return x

    @R.function(pure=False, private=True)
    def g(p: R.Object) -> R.Object:
        return p
"#;
    assert_text(&print_module(&m), want);
}

/// `R.const` spellings (TVM 0.25: float32 widened with 17 digits, integral floats `1.0`,
/// `-0.0`, quoted non-finite values) and metadata numbering by first appearance.
#[test]
fn constants_inline_and_metadata() {
    let mut m = Module::new();
    let consts: Vec<(DataType, Vec<u8>, &str)> = vec![
        (F32, 0.1f32.to_le_bytes().to_vec(), "R.const(0.10000000149011612, \"float32\")"),
        (F32, 1.0f32.to_le_bytes().to_vec(), "R.const(1.0, \"float32\")"),
        (DataType::FLOAT16, 0x8000u16.to_le_bytes().to_vec(), "R.const(-0.0, \"float16\")"),
        (DataType::FLOAT16, 0x3800u16.to_le_bytes().to_vec(), "R.const(0.5, \"float16\")"),
        (DataType::BOOL, vec![0], "R.const(False, \"bool\")"),
        (DataType::INT32, 3i32.to_le_bytes().to_vec(), "R.const(3, \"int32\")"),
        (DataType::INT8, vec![0xff], "R.const(-1, \"int8\")"),
        (F32, f32::INFINITY.to_le_bytes().to_vec(), "R.const(\"inf\", \"float32\")"),
        (DataType::FLOAT64, 1e-5f64.to_le_bytes().to_vec(), "R.const(1.0000000000000001e-05, \"float64\")"),
        (F32, 1e30f32.to_le_bytes().to_vec(), "R.const(1000000015047466219876688855040.0, \"float32\")"),
        (DataType::UINT8, vec![7], "metadata[\"relax.expr.Constant\"][0]"),
        (DataType::BFLOAT16, vec![0xc0, 0x3f], "metadata[\"relax.expr.Constant\"][1]"),
    ];
    let mut r = RelaxB::new();
    let obj = r.ty(TyData::Object);
    let x = r.param("x", obj);
    let mut binds = Vec::new();
    for (dt, bytes, _) in &consts {
        let c =
            m.constants.push(ConstData { dtype: *dt, shape: Some(vec![]), payload: ConstPayload::Data(bytes.clone()) });
        let v = r.var("c", obj, false);
        let e = r.expr(ExprData::Const(c), Some(obj));
        binds.push((v, e));
    }
    // Reusing the uint8 constant keeps its index; an opaque one comes next.
    let again = r.var("c", obj, false);
    let e = r.expr(ExprData::Const(<relax_ir::Constant as EntityRef>::new(10)), Some(obj));
    binds.push((again, e));
    let opaque = m.constants.push(ConstData { dtype: F32, shape: Some(vec![3]), payload: ConstPayload::Opaque });
    let ov = r.var("c", obj, false);
    let oe = r.expr(ExprData::Const(opaque), Some(obj));
    binds.push((ov, oe));
    let blk = r.block(false, binds);
    let xe = r.use_var(x);
    let f = r.finish(obj, vec![blk], xe, &[public("main")]);
    m.add("main", Func::Relax(Box::new(f)));
    let text = print_module(&m);
    let rhs: Vec<&str> =
        text.lines().filter(|l| l.starts_with("        c")).filter_map(|l| l.split(" = ").nth(1)).collect();
    let mut want: Vec<&str> = consts.iter().map(|c| c.2).collect();
    want.push("metadata[\"relax.expr.Constant\"][0]");
    want.push("metadata[\"relax.expr.Constant\"][2]");
    assert_eq!(rhs, want);
    assert!(text.ends_with(
        "        return x\n\n# Metadata omitted. Use show_meta=True in script() method to show it.\n# metadata[\"relax.expr.Constant\"][0] = uint8 scalar 07\n# metadata[\"relax.expr.Constant\"][1] = bfloat16 scalar c03f\n"
    ), "{text}");
}

/// Single-function text: bare callee names, no `cls`, `private=True` without a global
/// symbol, header without the `ir` line; a PrimFunc printed alone.
#[test]
fn single_function_form() {
    let mut m = Module::new();
    m.form = ModuleForm::SingleFunction;
    let callee = m.add("rms_norm", Func::Unresolved);
    let mut r = RelaxB::new();
    let two = r.i64c(2);
    let t = r.tensor(vec![two], F32);
    let x = r.param("x", t);
    let y = r.var("y", t, false);
    let ge = r.global(callee);
    let xe = r.use_var(x);
    let args = r.tuple(vec![xe]);
    let call = r.op("relax.call_tir", vec![ge, args], &[], vec![t], Some(t));
    let b = r.block(true, vec![(y, call)]);
    let ye = r.use_var(y);
    let f = r.finish(t, vec![b], ye, &[]);
    m.add("decoder_block", Func::Relax(Box::new(f)));
    let want = r#"# from tvm.script import relax as R

@R.function(private=True)
def decoder_block(x: R.Tensor((2,), dtype="float32")) -> R.Tensor((2,), dtype="float32"):
    with R.dataflow():
        y = R.call_tir(rms_norm, (x,), out_sinfo=R.Tensor((2,), dtype="float32"))
        R.output(y)
    return y
"#;
    assert_text(&print_module(&m), want);

    let mut m = Module::new();
    m.form = ModuleForm::SingleFunction;
    let mut t = TirB::new();
    let four = t.i32c(4);
    let a = t.buffer("A", DataType::BOOL, vec![four]);
    t.handle_param("a", a);
    t.f.s_tir = false;
    let zero = t.i32c(0);
    let lit = t.pool().bool_const(true);
    let not = t.pool().raw(PrimExprData::Not(lit));
    let st = t.store(a, vec![zero], not);
    m.add("main", Func::Prim(Box::new(t.finish(st, &[]))));
    let want = r#"# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(private=True)
def main(A: T.Buffer((4,), "bool")):
    A[0] = T.Not(T.bool(True))
"#;
    assert_text(&print_module(&m), want);
}

/// An empty module and a module with attributes only.
#[test]
fn empty_modules() {
    let mut m = Module::new();
    assert_text(&print_module(&m), "# from tvm.script import ir as I\n\n@I.ir_module\nclass Module:\n    pass\n");
    m.attrs = attrs(&[("a", AttrValue::Int(1))]);
    assert_text(
        &print_module(&m),
        "# from tvm.script import ir as I\n\n@I.ir_module\nclass Module:\n    I.module_attrs({\"a\": 1})\n",
    );
}

/// Relax variables used without definition are declared among the function statements;
/// dangling handles print as `<invalid ...>` without panicking.
#[test]
fn ill_formed_relax_prints() {
    let mut r = RelaxB::new();
    let obj = r.ty(TyData::Object);
    let x = r.param("x", obj);
    let free = r.var("fv", obj, false);
    let y = r.var("y", obj, false);
    let fe = r.use_var(free);
    let bad = r.expr(ExprData::Var(<relax_ir::Var as EntityRef>::new(99)), Some(obj));
    let tup = r.tuple(vec![fe, bad]);
    let dangling_ty = <relax_ir::Ty as EntityRef>::new(77);
    let z = r.var("z", dangling_ty, false);
    let dangling = <relax_ir::Expr as EntityRef>::new(500);
    let blk = r.block(false, vec![(y, tup), (z, dangling)]);
    let xe = r.use_var(x);
    let mut f = r.finish(obj, vec![blk, <relax_ir::Block as EntityRef>::new(42)], xe, &[public("main")]);
    f.func.params.push(<relax_ir::Var as EntityRef>::new(1000));
    let mut m = Module::new();
    m.add("main", Func::Relax(Box::new(f)));
    let text = print_module(&m);
    assert!(text.contains("        fv: R.Object\n"), "{text}");
    assert!(text.contains("y: R.Object = fv, <invalid var99>"), "{text}");
    assert!(text.contains("z: <invalid ty77> = <invalid expr500>"), "{text}");
    assert!(text.contains("# <invalid block42>"), "{text}");
    let _ = StmtData::Seq(vec![]);
}

/// Tuples and tuple types nested 250 deep (beyond the parser's bracket limit) print on a
/// 2 MB stack.
#[test]
fn deep_relax_nesting_does_not_overflow() {
    let h = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(|| {
            let mut r = RelaxB::new();
            let obj = r.ty(TyData::Object);
            let x = r.param("x", obj);
            let mut e = r.use_var(x);
            let mut t = obj;
            for _ in 0..250 {
                e = r.tuple(vec![e]);
                t = r.ty(TyData::Tuple(vec![t]));
            }
            let v = r.var("y", t, false);
            let b = r.block(false, vec![(v, e)]);
            let ret = r.use_var(v);
            let f = r.finish(t, vec![b], ret, &[public("main")]);
            let mut m = Module::new();
            m.add("main", Func::Relax(Box::new(f)));
            let text = print_module(&m);
            let want = format!(
                "y: {}R.Object{} = {}x{}",
                "R.Tuple(".repeat(250),
                ")".repeat(250),
                "(".repeat(250),
                ",)".repeat(250)
            );
            assert!(text.contains(&want), "{}", &text[..300]);
        })
        .unwrap();
    h.join().unwrap();
}
