//! TIR printing: expressions (literals, infix vs explicit forms, parentheses), loops,
//! blocks, buffers and lowered statements. Expected texts are TVM 0.25's output for the
//! same IR unless a comment says otherwise.

mod printer_util;

use printer_util::*;
use relax_ir::Intrinsic;
use relax_ir::attrs::{AttrValue, Attrs};
use relax_ir::module::Func;
use relax_ir::prim::{BinOp, PrimExprData, Range};
use relax_ir::printer::{print_module, print_prim_expr_with};
use relax_ir::tir::{AttrNode, BufferRegion, ForKind, IterKind, MatchBufferRegion, StmtData};
use relax_ir::{DataType, FloatBits, Module, Pool, PrimExpr, SymVar};

const F32: DataType = DataType::FLOAT32;
const I32: DataType = DataType::INT32;
const I64: DataType = DataType::INT64;

fn show(pool: &Pool, e: PrimExpr) -> String {
    print_prim_expr_with(pool, e, &|v: SymVar| pool.vars[v].name.clone())
}

#[test]
fn literals() {
    let mut p = Pool::new();
    let cases: Vec<(PrimExpr, &str)> = vec![
        (p.int(I32, 3), "3"),
        (p.int(I32, -2147483648), "-2147483648"),
        (p.int(I64, 4), "T.int64(4)"),
        (p.int(I64, i64::MIN), "T.int64(-9223372036854775808)"),
        (p.int(DataType::INT8, -1), "T.int8(-1)"),
        (p.int(DataType::UINT8, 3), "T.uint8(3)"),
        (p.raw(PrimExprData::Int(DataType::new(relax_ir::TypeCode::UInt, 64), -1)), "T.uint64(18446744073709551615)"),
        (p.bool_const(true), "T.bool(True)"),
        (p.bool_const(false), "T.bool(False)"),
        (p.float(F32, 1.0), "T.float32(1.0)"),
        (p.float(F32, 0.1), "T.float32(0.10000000000000001)"),
        (p.float(F32, 1e-5), "T.float32(1.0000000000000001e-05)"),
        (p.float(F32, -f64::from(f32::MAX)), "T.float32(-340282346638528859811704183484516925440.0)"),
        (p.float(F32, f64::INFINITY), "T.float32(\"inf\")"),
        (p.float(F32, f64::NEG_INFINITY), "T.float32(\"-inf\")"),
        (p.float(F32, f64::NAN), "T.float32(\"nan\")"),
        (p.float(F32, -0.0), "T.float32(-0.0)"),
        (p.float(DataType::FLOAT16, 0.5), "T.float16(0.5)"),
        (p.float(DataType::FLOAT64, 1e-300), "T.float64(1e-300)"),
        (p.float(DataType::FLOAT64, 1e23), "T.float64(99999999999999991611392.0)"),
        (p.float(DataType::BFLOAT16, 1.5), "T.bfloat16(1.5)"),
        (p.raw(PrimExprData::Str("hi\"x".into())), "\"hi\\\"x\""),
    ];
    for (e, want) in cases {
        assert_eq!(show(&p, e), want);
    }
}

#[test]
fn infix_explicit_forms_and_parentheses() {
    let mut p = Pool::new();
    let v = |p: &mut Pool, n: &str, t: DataType| {
        let s = p.new_var(n, t);
        p.var_ref(s)
    };
    let (x, y) = (v(&mut p, "x", I32), v(&mut p, "y", I32));
    let n = v(&mut p, "n", I64);
    let f = v(&mut p, "f", F32);
    let (b, c) = (v(&mut p, "b", DataType::BOOL), v(&mut p, "c", DataType::BOOL));
    let h = v(&mut p, "h", DataType::FLOAT16);
    let u = v(&mut p, "u", DataType::UINT8);
    let hd = v(&mut p, "hd", DataType::HANDLE);
    let bin = |p: &mut Pool, op: BinOp, a: PrimExpr, b: PrimExpr| p.raw(PrimExprData::Bin(op, a, b));
    let i32c = |p: &mut Pool, k: i64| p.int(I32, k);
    let mut cases: Vec<(PrimExpr, &str)> = Vec::new();
    let z = i32c(&mut p, 0);
    cases.push((bin(&mut p, BinOp::Add, x, z), "T.Add(x, 0)"));
    cases.push((bin(&mut p, BinOp::Add, x, y), "x + y"));
    let (one, two) = (i32c(&mut p, 1), i32c(&mut p, 2));
    cases.push((bin(&mut p, BinOp::Add, one, two), "T.Add(1, 2)"));
    let (c4, c256) = (p.i64(4), p.i64(256));
    let inner = bin(&mut p, BinOp::Mul, n, c256);
    cases.push((bin(&mut p, BinOp::Mul, c4, inner), "T.int64(4) * (n * T.int64(256))"));
    let yx = bin(&mut p, BinOp::Sub, y, x);
    cases.push((bin(&mut p, BinOp::Sub, x, yx), "x - (y - x)"));
    let xy = bin(&mut p, BinOp::Sub, x, y);
    cases.push((bin(&mut p, BinOp::Sub, xy, x), "x - y - x"));
    cases.push((bin(&mut p, BinOp::Sub, z, x), "0 - x"));
    let sum = bin(&mut p, BinOp::Add, x, y);
    cases.push((bin(&mut p, BinOp::Mul, sum, x), "(x + y) * x"));
    cases.push((bin(&mut p, BinOp::Div, x, y), "T.Div(x, y)"));
    cases.push((bin(&mut p, BinOp::Div, f, f), "f / f"));
    cases.push((bin(&mut p, BinOp::Mod, x, y), "T.truncmod(x, y)"));
    cases.push((bin(&mut p, BinOp::FloorDiv, x, y), "x // y"));
    cases.push((bin(&mut p, BinOp::FloorMod, x, y), "x % y"));
    cases.push((bin(&mut p, BinOp::Min, x, y), "T.min(x, y)"));
    cases.push((bin(&mut p, BinOp::Max, x, y), "T.max(x, y)"));
    let lt = bin(&mut p, BinOp::Lt, x, y);
    cases.push((lt, "x < y"));
    // Project rule: a comparison operand of a comparison is parenthesised (TVM: `x < y == b`).
    cases.push((bin(&mut p, BinOp::Eq, lt, b), "(x < y) == b"));
    let bc = bin(&mut p, BinOp::And, b, c);
    cases.push((bc, "b and c"));
    cases.push((bin(&mut p, BinOp::Or, bc, b), "b and c or b"));
    let borc = bin(&mut p, BinOp::Or, b, c);
    cases.push((bin(&mut p, BinOp::And, borc, b), "(b or c) and b"));
    cases.push((bin(&mut p, BinOp::Or, b, borc), "b or (b or c)"));
    let nb = p.raw(PrimExprData::Not(b));
    cases.push((nb, "not b"));
    cases.push((p.raw(PrimExprData::Not(bc)), "not (b and c)"));
    let tr = p.bool_const(true);
    // Spec rule: `T.Not(lit)` (TVM 0.25 prints `not T.bool(True)`).
    cases.push((p.raw(PrimExprData::Not(tr)), "T.Not(T.bool(True))"));
    cases.push((bin(&mut p, BinOp::And, nb, c), "not b and c"));
    cases.push((p.raw(PrimExprData::Not(lt)), "not x < y"));
    cases.push((bin(&mut p, BinOp::Lt, sum, x), "x + y < x"));
    cases.push((p.raw(PrimExprData::Cast(F32, x)), "T.Cast(\"float32\", x)"));
    cases.push((p.raw(PrimExprData::Select(b, x, y)), "T.Select(b, x, y)"));
    cases.push((
        p.raw(PrimExprData::Call { dtype: I32, op: Intrinsic::IfThenElse.into(), args: vec![b, x, y] }),
        "T.if_then_else(b, x, y)",
    ));
    cases.push((p.raw(PrimExprData::Call { dtype: F32, op: Intrinsic::Exp.into(), args: vec![f] }), "T.exp(f)"));
    let foo = p.raw(PrimExprData::Str("foo".into()));
    cases.push((
        p.raw(PrimExprData::Call { dtype: F32, op: Intrinsic::CallExtern.into(), args: vec![foo, f, x] }),
        "T.call_extern(\"float32\", \"foo\", f, x)",
    ));
    cases.push((
        p.raw(PrimExprData::Call { dtype: I32, op: Intrinsic::Reinterpret.into(), args: vec![f] }),
        "T.reinterpret(\"int32\", f)",
    ));
    let (c0, c15) = (i32c(&mut p, 0), i32c(&mut p, 15));
    cases.push((
        p.raw(PrimExprData::Call {
            dtype: DataType::HANDLE,
            op: relax_ir::TirOp::from_name("tir.tvm_struct_get"),
            args: vec![hd, c0, c15],
        }),
        "T.tvm_struct_get(hd, 0, 15, \"handle\")",
    ));
    cases.push((
        p.raw(PrimExprData::Call {
            dtype: I32,
            op: relax_ir::TirOp::from_name("tir.tvm_call_packed"),
            args: vec![foo, x],
        }),
        "T.call_packed(\"foo\", x)",
    ));
    cases.push((p.raw(PrimExprData::Ramp { base: x, stride: one, lanes: 4 }), "T.Ramp(x, 1, 4)"));
    cases.push((p.raw(PrimExprData::Broadcast { value: f, lanes: 4 }), "T.Broadcast(f, 4)"));
    let xs = p.vars.keys().next().unwrap();
    cases.push((p.raw(PrimExprData::Let { var: xs, value: one, body: sum }), "T.Let(x + y, where={x: 1})"));
    let f1 = p.float(F32, 1.0);
    cases.push((bin(&mut p, BinOp::Add, f, f1), "f + T.float32(1.0)"));
    let f0 = p.float(F32, 0.0);
    cases.push((bin(&mut p, BinOp::Add, f, f0), "T.Add(f, T.float32(0.0))"));
    cases.push((bin(&mut p, BinOp::Sub, f0, f), "T.float32(0.0) - f"));
    let m1 = i32c(&mut p, -1);
    cases.push((bin(&mut p, BinOp::Mul, m1, x), "-1 * x"));
    cases.push((bin(&mut p, BinOp::Add, x, m1), "x + -1"));
    cases.push((bin(&mut p, BinOp::Sub, x, m1), "x - -1"));
    let m3 = i32c(&mut p, -3);
    let m3y = bin(&mut p, BinOp::Add, m3, y);
    cases.push((bin(&mut p, BinOp::Mul, x, m3y), "x * (-3 + y)"));
    let fd = bin(&mut p, BinOp::FloorDiv, x, y);
    cases.push((bin(&mut p, BinOp::FloorDiv, fd, x), "x // y // x"));
    let xy_mul = bin(&mut p, BinOp::Mul, x, y);
    cases.push((bin(&mut p, BinOp::FloorDiv, x, xy_mul), "x // (x * y)"));
    cases.push((bin(&mut p, BinOp::Mul, x, fd), "x * (x // y)"));
    cases.push((bin(&mut p, BinOp::Add, x, xy_mul), "x + x * y"));
    cases.push((bin(&mut p, BinOp::Sub, x, sum), "x - (x + y)"));
    cases.push((bin(&mut p, BinOp::Add, x, xy), "x + (x - y)"));
    cases.push((bin(&mut p, BinOp::And, b, tr), "T.And(b, T.bool(True))"));
    cases.push((bin(&mut p, BinOp::Eq, b, tr), "b == T.bool(True)"));
    let h1 = p.float(DataType::FLOAT16, 1.0);
    cases.push((bin(&mut p, BinOp::Add, h, h1), "h + T.float16(1.0)"));
    let u3 = p.int(DataType::UINT8, 3);
    cases.push((bin(&mut p, BinOp::Add, u, u3), "u + T.uint8(3)"));
    cases.push((p.raw(PrimExprData::Cast(I64, sum)), "T.Cast(\"int64\", x + y)"));
    let neg = bin(&mut p, BinOp::Sub, z, y);
    cases.push((bin(&mut p, BinOp::Mul, x, neg), "x * (0 - y)"));
    // Mixed int32/int64 operands cannot come from TVM's constructors: explicit form.
    cases.push((bin(&mut p, BinOp::Add, n, x), "T.Add(n, x)"));
    for (e, want) in cases {
        assert_eq!(show(&p, e), want);
    }
}

/// A 100,000-deep left chain `x + x + ... + x` (and a right chain) prints on a 2 MB stack.
#[test]
fn deep_chains_do_not_overflow() {
    let handle = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(|| {
            let mut t = TirB::new();
            let (_, x) = t.sym("x", I32);
            let mut left = x;
            let mut right = x;
            for _ in 0..100_000 {
                left = t.bin(BinOp::Add, left, x);
                right = t.bin(BinOp::Sub, x, right);
            }
            let s = show(&t.f.pool, left);
            assert_eq!(s.len(), "x".len() + 100_000 * " + x".len());
            assert!(s.starts_with("x + x + x"));
            let r = show(&t.f.pool, right);
            assert!(r.starts_with("x - (x - (x - "));
            assert!(r.trim_end_matches(')').ends_with("x - (x - x"));
            assert_eq!(r.len() - r.trim_end_matches(')').len(), 99_999);
            // The same chains through the whole-module printer.
            let one = t.i32c(1);
            let a = t.buffer("A", DataType::INT32, vec![one]);
            t.handle_param("a", a);
            let zero = t.i32c(0);
            let s1 = t.store(a, vec![zero], left);
            let s2 = t.store(a, vec![zero], right);
            let body = t.seq(vec![s1, s2]);
            let mut m = Module::new();
            m.add("f", Func::Prim(Box::new(t.finish(body, &[]))));
            let text = print_module(&m);
            assert!(text.contains("A[0] = x + x + x"));
            // And as a Relax shape value.
            let mut r = RelaxB::new();
            let (_, n) = r.sym("n", I64);
            let mut e = n;
            for _ in 0..100_000 {
                e = r.bin(BinOp::Mul, e, n);
            }
            let ty = r.ty(relax_ir::ty::TyData::Object);
            let v = r.var("s", ty, false);
            let sh = r.expr(relax_ir::relax::ExprData::Shape(vec![e]), Some(ty));
            let b = r.block(false, vec![(v, sh)]);
            let ret = r.use_var(v);
            let f = r.finish(ty, vec![b], ret, &[]);
            let mut m = Module::new();
            m.add("main", Func::Relax(Box::new(f)));
            let text = print_module(&m);
            assert!(text.contains("s: R.Object = R.shape([n * n * n"));
        })
        .unwrap();
    handle.join().unwrap();
}

fn for_with(
    t: &mut TirB,
    var: SymVar,
    (min, extent): (PrimExpr, PrimExpr),
    kind: ForKind,
    annotations: Attrs,
    step: Option<PrimExpr>,
    body: relax_ir::Stmt,
) -> relax_ir::Stmt {
    let thread = (kind == ForKind::ThreadBinding).then(|| "blockIdx.x".to_string());
    t.stmt(StmtData::For { var, min, extent, kind, thread, step, annotations, body })
}

/// Every loop form, `T.grid` collapse and where it stops, region slices, and a variable used
/// before any definition (declared in place).
#[test]
fn loops_grid_and_regions() {
    let mut t = TirB::new();
    let sixteen = t.i32c(16);
    let bb = t.buffer("B", F32, vec![sixteen]);
    t.handle_param("B_h", bb);
    let (_, n) = t.scalar_param("n", I32);
    let c = |t: &mut TirB, k: i64| t.i32c(k);
    let zf = t.f32c(0.0);
    let mut stmts = Vec::new();
    let simple = |t: &mut TirB, min: i64, ext: i64, kind: ForKind, ann: Attrs, step: Option<i64>| {
        let (r, re) = t.sym("r", I32);
        let st = t.store(bb, vec![re], zf);
        let (mn, ex) = (c(t, min), c(t, ext));
        let step = step.map(|s| c(t, s));
        for_with(t, r, (mn, ex), kind, ann, step, st)
    };
    let a1 = attrs(&[("pragma_unroll", AttrValue::Bool(true)), ("a", AttrValue::Int(1))]);
    stmts.push(simple(&mut t, 0, 8, ForKind::Serial, a1, None));
    stmts.push(simple(&mut t, 0, 8, ForKind::Serial, attrs(&[("pragma_unroll", AttrValue::Int(1))]), None));
    stmts.push(simple(&mut t, 0, 8, ForKind::Unrolled, attrs(&[("pragma_unroll", AttrValue::Bool(true))]), None));
    stmts.push(simple(&mut t, 2, 6, ForKind::Parallel, attrs(&[("disable_unroll", AttrValue::Bool(true))]), None));
    stmts.push(simple(&mut t, 2, 6, ForKind::ThreadBinding, Attrs::new(), None));
    stmts.push(simple(&mut t, 0, 16, ForKind::Serial, Attrs::new(), Some(4)));
    stmts.push(simple(&mut t, 0, 16, ForKind::Vectorized, Attrs::new(), Some(4)));
    stmts.push(simple(&mut t, 0, 16, ForKind::Serial, attrs(&[("a", AttrValue::Int(1))]), Some(4)));
    // range(n, n + 4) and range(1, 1 + (n - 1)).
    let (r, re) = t.sym("r", I32);
    let st = t.store(bb, vec![re], zf);
    let four = c(&mut t, 4);
    stmts.push(t.for_(r, n, four, ForKind::Serial, st));
    let (r, re) = t.sym("r", I32);
    let st = t.store(bb, vec![re], zf);
    let one = c(&mut t, 1);
    let nm1 = t.bin(BinOp::Sub, n, one);
    stmts.push(t.for_(r, one, nm1, ForKind::Serial, st));
    // T.grid stops at an annotated loop, and at a loop with a non-zero start.
    for inner_ann in [true, false] {
        let (r, re) = t.sym("r", I32);
        let (s, _) = t.sym("s", I32);
        let (tt, _) = t.sym("t", I32);
        let st = t.store(bb, vec![re], zf);
        let (zero, four, two) = (c(&mut t, 0), c(&mut t, 4), c(&mut t, 2));
        let inner = if inner_ann {
            for_with(&mut t, tt, (zero, four), ForKind::Serial, attrs(&[("x", AttrValue::Int(1))]), None, st)
        } else {
            t.for_(tt, two, four, ForKind::Serial, st)
        };
        let ls = t.for_(s, zero, four, ForKind::Serial, inner);
        stmts.push(t.for_(r, zero, four, ForKind::Serial, ls));
    }
    // No grid when an extent uses an outer variable, or when nesting is not perfect.
    let (i, ie) = t.sym("i", I32);
    let (j, je) = t.sym("j", I32);
    let st = t.store(bb, vec![ie], zf);
    let (zero, four) = (c(&mut t, 0), c(&mut t, 4));
    let ext = t.bin(BinOp::Add, ie, four);
    let lj = t.for_(j, zero, ext, ForKind::Serial, st);
    stmts.push(t.for_(i, zero, four, ForKind::Serial, lj));
    let (i, ie) = t.sym("i", I32);
    let (j, je2) = t.sym("j", I32);
    let one_f = t.f32c(1.0);
    let st1 = t.store(bb, vec![je2], one_f);
    let lj = t.for_(j, zero, four, ForKind::Serial, st1);
    let st2 = t.store(bb, vec![ie], zf);
    let seq = t.seq(vec![lj, st2]);
    stmts.push(t.for_(i, zero, four, ForKind::Serial, seq));
    let _ = je;
    // A block with region slices and an undeclared variable.
    let (_, iv) = t.sym("i", I32);
    let np1 = t.bin(BinOp::Add, n, one);
    let st = t.store(bb, vec![zero], zf);
    let mut node = block_node("b", st);
    node.reads = vec![
        BufferRegion { buffer: bb, region: vec![Range { min: zero, extent: np1 }] },
        BufferRegion { buffer: bb, region: vec![Range { min: n, extent: four }] },
        BufferRegion { buffer: bb, region: vec![Range { min: iv, extent: one }] },
    ];
    stmts.push(t.block(node));
    let body = t.seq(stmts);
    let root = block_node("root", body);
    let root = t.block(root);
    let mut m = Module::new();
    m.add("main", Func::Prim(Box::new(t.finish(root, &[]))));
    let want = r#"# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(private=True, s_tir=True)
    def main(B: T.Buffer((16,), "float32"), n: T.int32):
        # with T.sblock("root"):
        for r in T.serial(8, annotations={"a": 1, "pragma_unroll": True}):
            B[r] = T.float32(0.0)
        for r in T.serial(8, unroll=True):
            B[r] = T.float32(0.0)
        for r in T.unroll(8, annotations={"pragma_unroll": True}):
            B[r] = T.float32(0.0)
        for r in T.parallel(2, 8, annotations={"disable_unroll": True}):
            B[r] = T.float32(0.0)
        for r in T.thread_binding(2, 8, thread="blockIdx.x"):
            B[r] = T.float32(0.0)
        for r in range(0, 16, 4):
            B[r] = T.float32(0.0)
        for r in T.vectorized(0, 16, step=4):
            B[r] = T.float32(0.0)
        for r in T.serial(0, 16, annotations={"a": 1}, step=4):
            B[r] = T.float32(0.0)
        for r in range(n, n + 4):
            B[r] = T.float32(0.0)
        for r in range(1, 1 + (n - 1)):
            B[r] = T.float32(0.0)
        for r, s in T.grid(4, 4):
            for t in T.serial(4, annotations={"x": 1}):
                B[r] = T.float32(0.0)
        for r, s in T.grid(4, 4):
            for t in range(2, 6):
                B[r] = T.float32(0.0)
        for i in range(4):
            for j in range(i + 4):
                B[i] = T.float32(0.0)
        for i in range(4):
            for j in range(4):
                B[j] = T.float32(1.0)
            B[i] = T.float32(0.0)
        with T.sblock("b"):
            i = T.int32()
            T.reads(B[0:n + 1], B[n:n + 4], B[i])
            T.writes()
            B[0] = T.float32(0.0)
"#;
    assert_text(&print_module(&m), want);
}

/// Axis kinds and remap runs, `T.where`, `T.sblock_attr` (sorted), block allocations with
/// keywords, a sub-region `T.match_buffer`, nested non-serial loops.
#[test]
fn blocks_axes_and_block_buffers() {
    let mut t = TirB::new();
    let (c16, c4) = (t.i32c(16), t.i32c(4));
    let a = t.buffer("A", F32, vec![c16, c16]);
    let bb = t.buffer("B", F32, vec![c16]);
    t.handle_param("A_h", a);
    t.handle_param("B_h", bb);
    let (_, n) = t.scalar_param("n", I32);
    let (zero, one, two, six, eight, ten) = (t.i32c(0), t.i32c(1), t.i32c(2), t.i32c(6), t.i32c(8), t.i32c(10));
    let names = ["i", "j", "k", "l", "m", "q", "r", "s"];
    let vars: Vec<(SymVar, PrimExpr)> = names.iter().map(|nm| t.sym(nm, I32)).collect();
    let (vi, vie) = t.sym("vi", I32);
    let (vj, _) = t.sym("vj", I32);
    let (vk, _) = t.sym("vk", I32);
    let (vo, _) = t.sym("vo", I32);
    // C = T.sblock_alloc_buffer((4, 4), "float16", scope="shared", offset_factor=2), with
    // a fresh elem_offset variable and the default alignment.
    let cbuf = t.buffer("C", DataType::FLOAT16, vec![c4, c4]);
    let (_, eo) = t.sym("elem_offset", I32);
    {
        let cd = &mut t.f.buffers[cbuf];
        cd.scope = "shared".into();
        cd.align = Some(64);
        cd.offset_factor = Some(2);
        cd.elem_offset = Some(eo);
    }
    // D = T.match_buffer(A[vi, 0:4], (4,), strides=(1,), offset_factor=1).
    let dbuf = t.buffer("D", F32, vec![c4]);
    let (_, eo2) = t.sym("elem_offset", I32);
    t.f.buffers[dbuf].strides = vec![one];
    t.f.buffers[dbuf].elem_offset = Some(eo2);
    let d0 = t.load(dbuf, vec![zero]);
    let onef = t.f32c(1.0);
    let val = t.bin(BinOp::Add, d0, onef);
    let st = t.store(bb, vec![vie], val);
    let mut node = block_node("b", st);
    let m2 = t.bin(BinOp::Sub, vars[4].1, two);
    node.iter_vars = vec![
        t.iter_var(vi, c16, IterKind::Spatial, vars[0].1),
        relax_ir::tir::IterVar {
            var: vj,
            dom: Range { min: two, extent: c4 },
            kind: IterKind::Reduce,
            binding: vars[2].1,
        },
        t.iter_var(vk, eight, IterKind::Scan, vars[3].1),
        t.iter_var(vo, eight, IterKind::Opaque, m2),
    ];
    node.predicate = Some(t.bin(BinOp::Lt, vars[0].1, n));
    node.reads = vec![BufferRegion {
        buffer: a,
        region: vec![Range { min: vie, extent: one }, Range { min: zero, extent: c4 }],
    }];
    node.writes = vec![t.point(bb, vec![vie])];
    node.annotations = attrs(&[("x", AttrValue::Int(1)), ("a", AttrValue::Str("s".into()))]);
    node.alloc_buffers = vec![cbuf];
    node.match_buffers = vec![MatchBufferRegion {
        buffer: dbuf,
        source: BufferRegion {
            buffer: a,
            region: vec![Range { min: vie, extent: one }, Range { min: zero, extent: c4 }],
        },
    }];
    let mut body = t.block(node);
    let kinds: [(i64, i64, ForKind, Attrs); 8] = [
        (0, 8, ForKind::Serial, attrs(&[("disable_unroll", AttrValue::Bool(true))])),
        (0, 8, ForKind::Serial, attrs(&[("pragma_unroll", AttrValue::Bool(true))])),
        (0, 4, ForKind::ThreadBinding, Attrs::new()),
        (2, 8, ForKind::Serial, Attrs::new()),
        (0, 8, ForKind::Serial, attrs(&[("a", AttrValue::Int(1))])),
        (2, 4, ForKind::Unrolled, Attrs::new()),
        (0, 4, ForKind::Vectorized, Attrs::new()),
        (0, 16, ForKind::Parallel, Attrs::new()),
    ];
    for (idx, (min, ext, kind, ann)) in kinds.into_iter().enumerate() {
        let var = vars[7 - idx].0;
        let (mn, ex) = (t.i32c(min), t.i32c(ext));
        body = t.stmt(StmtData::For {
            var,
            min: mn,
            extent: ex,
            kind,
            thread: (kind == ForKind::ThreadBinding).then(|| "threadIdx.y".to_string()),
            step: None,
            annotations: ann,
            body,
        });
    }
    let _ = (six, ten);
    let root = t.block(block_node("root", body));
    let mut m = Module::new();
    m.add("main", Func::Prim(Box::new(t.finish(root, &[]))));
    let want = r#"# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(private=True, s_tir=True)
    def main(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16,), "float32"), n: T.int32):
        # with T.sblock("root"):
        for i in T.parallel(16):
            for j in T.vectorized(4):
                for k in T.unroll(2, 6):
                    for l in T.serial(8, annotations={"a": 1}):
                        for m in range(2, 10):
                            for q in T.thread_binding(4, thread="threadIdx.y"):
                                for r in T.serial(8, unroll=True):
                                    for s in T.serial(8, unroll=False):
                                        with T.sblock("b"):
                                            vi, vj = T.axis.remap("SR", [i, k])
                                            vk = T.axis.scan(8, l)
                                            vo = T.axis.opaque(8, m - 2)
                                            T.where(i < n)
                                            T.reads(A[vi, 0:4])
                                            T.writes(B[vi])
                                            T.sblock_attr({"a": "s", "x": 1})
                                            C = T.sblock_alloc_buffer((4, 4), "float16", scope="shared", offset_factor=2)
                                            D = T.match_buffer(A[vi, 0:4], (4,), strides=(1,), offset_factor=1)
                                            B[vi] = D[0] + T.float32(1.0)
"#;
    assert_text(&print_module(&m), want);
}

/// Parameters and `T.match_buffer` keywords, declaration order of shape variables, scalar
/// parameters, the return type, `T.func_attr` values, `return`, bare intrinsic calls.
#[test]
fn buffers_and_parameters() {
    let mut t = TirB::new();
    let (_, mv) = t.scalar_param("m", I64);
    let (_, nv) = t.sym("n", I64);
    let (_, kv) = t.sym("k", I64);
    let (c4, c8, one, two_i64) = (t.i32c(4), t.i32c(8), t.i32c(1), t.i64c(2));
    let a = t.buffer("A", F32, vec![mv]);
    let k2 = t.bin(BinOp::Mul, kv, two_i64);
    let b = t.buffer("B", DataType::FLOAT16, vec![nv, k2, kv]);
    let c = t.buffer("C", F32, vec![c4, c4]);
    t.f.buffers[c].strides = vec![c8, one];
    let d = t.buffer("D", F32, vec![c4]);
    {
        let two = t.i32c(2);
        let dd = &mut t.f.buffers[d];
        dd.elem_offset = Some(two);
        dd.scope = "shared".into();
        dd.align = Some(128);
        dd.offset_factor = Some(4);
    }
    let e = t.buffer("E", F32, vec![c4]);
    t.f.buffers[e].data = t.f.buffers[d].data;
    t.f.buffers[e].scope = "shared".into();
    let g = t.buffer("G", DataType::INT8, vec![c4, c4]);
    let (_, s0) = t.sym("G_s0", I32);
    let (_, s1) = t.sym("G_s1", I32);
    {
        let gd = &mut t.f.buffers[g];
        gd.strides = vec![s0, s1];
        gd.buffer_type = Some("auto".into());
        gd.axis_separators = vec![1];
    }
    let ha = t.handle_param("a", a);
    for (name, buf) in [("b", b), ("c", c), ("d", d), ("e", e), ("g", g)] {
        t.handle_param(name, buf);
    }
    t.f.ret = I32;
    let zero = t.i32c(0);
    let onef = t.f32c(1.0);
    let s1_ = t.store(a, vec![zero], onef);
    let a0 = t.load(a, vec![zero]);
    let addr = t.call(DataType::HANDLE, "tir.address_of", vec![a0]);
    let s2 = t.stmt(StmtData::Evaluate(addr));
    let hae = t.pool().var_ref(ha);
    let s3 = t.stmt(StmtData::Evaluate(hae));
    let ret = t.call(I32, "tir.ret", vec![zero]);
    let s4 = t.stmt(StmtData::Evaluate(ret));
    let body = t.seq(vec![s1_, s2, s3, s4]);
    let f = t.finish(
        body,
        &[
            ("global_symbol", AttrValue::Str("f1".into())),
            ("z", AttrValue::Dict(vec![("q".into(), AttrValue::Str("s".into()))])),
            ("y", AttrValue::List(vec![AttrValue::Int(1), AttrValue::Int(2)])),
            ("x", AttrValue::PrimInt(I64, 4)),
            ("w", AttrValue::Float(FloatBits::new(1.5))),
            ("v", AttrValue::Bool(false)),
            ("u", AttrValue::None),
        ],
    );
    let mut m = Module::new();
    m.add("f1", Func::Prim(Box::new(f)));
    let want = r#"# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def f1(m: T.int64, a: T.handle, b: T.handle, c: T.handle, d: T.handle, e: T.handle, g: T.handle) -> T.int32:
        T.func_attr({"u": None, "v": False, "w": 1.5, "x": T.int64(4), "y": [1, 2], "z": {"q": "s"}})
        A = T.match_buffer(a, (m,))
        k = T.int64()
        n = T.int64()
        B = T.match_buffer(b, (n, k * T.int64(2), k), "float16")
        C = T.match_buffer(c, (4, 4), strides=(8, 1))
        D = T.match_buffer(d, (4,), elem_offset=2, scope="shared", align=128, offset_factor=4)
        E = T.match_buffer(e, (4,), data=D.data, scope="shared")
        G = T.match_buffer(g, (4, 4), "int8", strides=("G_s0", "G_s1"), buffer_type="auto", axis_separators=[1])
        A[0] = T.float32(1.0)
        T.address_of(A[0])
        T.evaluate(a)
        return 0
"#;
    assert_text(&print_module(&m), want);
}

/// Several new bare shape variables in one buffer are declared together.
#[test]
fn several_shape_variables_declared_together() {
    let mut t = TirB::new();
    let (_, mv) = t.sym("m", I64);
    let (_, nv) = t.sym("n", I64);
    let x = t.buffer("x", F32, vec![mv, nv]);
    let y = t.buffer("y", F32, vec![nv, mv]);
    t.handle_param("var_x", x);
    t.handle_param("var_y", y);
    let zero = t.i64c(0);
    let v = t.load(x, vec![zero, zero]);
    let st = t.store(y, vec![zero, zero], v);
    let mut m = Module::new();
    m.add("f", Func::Prim(Box::new(t.finish(st, &[("tirx.noalias", AttrValue::Bool(true))]))));
    let want = r#"# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(private=True, s_tir=True)
    def f(var_x: T.handle, var_y: T.handle):
        T.func_attr({"tirx.noalias": True})
        m, n = T.int64(), T.int64()
        x = T.match_buffer(var_x, (m, n))
        y = T.match_buffer(var_y, (n, m))
        y[T.int64(0), T.int64(0)] = x[T.int64(0), T.int64(0)]
"#;
    assert_text(&print_module(&m), want);
}

/// The root block prints explicitly when the comment form does not apply; `if`/`else`
/// nests; `while`; the lowered statements print flat (TVM 0.25 has no other form), even
/// in the middle of a sequence.
#[test]
fn explicit_root_control_flow_and_lowered_forms() {
    let mut t = TirB::new();
    t.f.s_tir = false;
    let c16 = t.i32c(16);
    let bb = t.buffer("B", F32, vec![c16]);
    t.handle_param("B_h", bb);
    let (_, n) = t.scalar_param("n", I32);
    let h = t.f.pool.new_var("h", DataType::HANDLE);
    t.f.pool.vars[h].pointer = Some((F32, "global".into()));
    t.f.params.push(h);
    let (zero, one, two) = (t.i32c(0), t.i32c(1), t.i32c(2));
    let (f0, f1, f2) = (t.f32c(0.0), t.f32c(1.0), t.f32c(2.0));
    // x: T.let[T.int32] = n + 1 in the middle of the sequence, then a chain at the end.
    let (xv, xe) = t.sym("x", I32);
    let np1 = t.bin(BinOp::Add, n, one);
    let st = t.store(bb, vec![xe], f0);
    let let1 = t.stmt(StmtData::Let { var: xv, value: np1, body: st });
    let gt0 = t.bin(BinOp::Gt, n, zero);
    let msg = t.pool().raw(PrimExprData::Str("bad".into()));
    let st0 = t.store(bb, vec![zero], f1);
    let data = t.f.buffers[bb].data;
    let dref = t.pool().var_ref(data);
    let c64 = t.i32c(64);
    let attr =
        t.stmt(StmtData::Attr { node: AttrNode::Expr(dref), key: "storage_alignment".into(), value: c64, body: st0 });
    let st1 = t.store(bb, vec![zero], f1);
    let attr2 = t.stmt(StmtData::Attr {
        node: AttrNode::Str("default".into()),
        key: "device_id".into(),
        value: zero,
        body: st1,
    });
    let gt1 = t.bin(BinOp::Gt, n, one);
    let gt2 = t.bin(BinOp::Gt, n, two);
    let (s_a, s_b, s_c) = (t.store(bb, vec![zero], f0), t.store(bb, vec![zero], f1), t.store(bb, vec![zero], f2));
    let inner_if = t.stmt(StmtData::If { cond: gt2, then_branch: s_b, else_branch: Some(s_c) });
    let outer_if = t.stmt(StmtData::If { cond: gt1, then_branch: s_a, else_branch: Some(inner_if) });
    let sw = t.store(bb, vec![zero], f0);
    let wh = t.stmt(StmtData::While { cond: gt0, body: sw });
    // Vector store/load: B[0:4] = B[4:8]; B[0:4] = T.Broadcast(T.float32(1.0), 4).
    let four = t.i32c(4);
    let r0 = t.pool().raw(PrimExprData::Ramp { base: zero, stride: one, lanes: 4 });
    let r4 = t.pool().raw(PrimExprData::Ramp { base: four, stride: one, lanes: 4 });
    let ld = t.pool().raw(PrimExprData::Load { dtype: F32.with_lanes(4), buffer: bb, indices: vec![r4] });
    let vs = t.store(bb, vec![r0], ld);
    let bc = t.pool().raw(PrimExprData::Broadcast { value: f1, lanes: 4 });
    let vs2 = t.store(bb, vec![r0], bc);
    // Concise tail: let, assert, decl_buffer.
    let (yv, ye) = t.sym("y", I32);
    let c = t.buffer("C", F32, vec![four]);
    t.f.buffers[c].data = data;
    let st2 = t.store(c, vec![ye], f2);
    let decl = t.stmt(StmtData::DeclBuffer { buffer: c, body: st2 });
    let asrt = t.stmt(StmtData::Assert { cond: gt0, message: msg, body: decl });
    let let2 = t.stmt(StmtData::Let { var: yv, value: np1, body: asrt });
    let body = t.seq(vec![let1, attr, attr2, outer_if, wh, vs, vs2, let2]);
    let root = t.block(block_node("root", body));
    let mut m = Module::new();
    m.add("main", Func::Prim(Box::new(t.finish(root, &[]))));
    let want = r#"# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(private=True)
    def main(B: T.Buffer((16,), "float32"), n: T.int32, h: T.handle("float32", "global")):
        with T.sblock("root"):
            T.reads()
            T.writes()
            x: T.let[T.int32] = n + 1
            B[x] = T.float32(0.0)
            with T.attr(B.data, "storage_alignment", 64):
                B[0] = T.float32(1.0)
            with T.attr("default", "device_id", 0):
                B[0] = T.float32(1.0)
            if n > 1:
                B[0] = T.float32(0.0)
            else:
                if n > 2:
                    B[0] = T.float32(1.0)
                else:
                    B[0] = T.float32(2.0)
            while n > 0:
                B[0] = T.float32(0.0)
            B[0:4] = B[4:8]
            B[0:4] = T.Broadcast(T.float32(1.0), 4)
            y: T.let[T.int32] = n + 1
            assert n > 0, "bad"
            C = T.decl_buffer((4,), data=B.data)
            C[y] = T.float32(2.0)
"#;
    assert_text(&print_module(&m), want);
}

/// Dangling handles and statement cycles print without panicking.
#[test]
fn ill_formed_tir_prints() {
    use relax_entity::EntityRef;
    let mut t = TirB::new();
    let c4 = t.i32c(4);
    let a = t.buffer("A", F32, vec![c4]);
    t.handle_param("a", a);
    let bad_e = PrimExpr::new(10_000);
    let bad_b = relax_ir::Buffer::new(77);
    let zero = t.i32c(0);
    let st = t.store(bad_b, vec![zero], bad_e);
    let bad_s = relax_ir::Stmt::new(999);
    let selfref = t.f.stmts.next_key();
    let cyc = t.seq(vec![selfref]);
    let body = t.seq(vec![st, bad_s, cyc]);
    let mut m = Module::new();
    m.add("main", Func::Prim(Box::new(t.finish(body, &[]))));
    let text = print_module(&m);
    assert!(text.contains("<invalid buffer77>[0] = <invalid prim10000>"), "{text}");
    assert!(text.contains("# <invalid stmt999>"), "{text}");
    assert!(text.contains("# <cycle through"), "{text}");
}

/// A loop nest 250 deep (non-serial, so no `T.grid`) prints on a 2 MB stack.
#[test]
fn deep_loop_nest_does_not_overflow() {
    let h = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(|| {
            let mut t = TirB::new();
            let c4 = t.i32c(4);
            let a = t.buffer("A", F32, vec![c4]);
            t.handle_param("a", a);
            let (zero, two) = (t.i32c(0), t.i32c(2));
            let one = t.f32c(1.0);
            let mut body = t.store(a, vec![zero], one);
            for _ in 0..250 {
                let (v, _) = t.sym("i", I32);
                body = t.for_(v, zero, two, ForKind::Parallel, body);
            }
            let mut m = Module::new();
            m.add("f", Func::Prim(Box::new(t.finish(body, &[]))));
            let text = print_module(&m);
            assert!(text.contains("for i_249 in T.parallel(2):"));
            assert!(text.contains(&format!("{}A[0] = T.float32(1.0)", " ".repeat(4 * 252))));
        })
        .unwrap();
    h.join().unwrap();
}
