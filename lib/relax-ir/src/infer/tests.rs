//! Unit tests of type inference: the lattice operations on hand-built types, and op
//! rules on hand-built calls.

use super::*;
use crate::arith::Analyzer;
use crate::attrs::{AttrValue, Attrs};
use crate::dtype::DataType;
use crate::entities::{PrimExpr, SymVar};
use crate::op::{OPS, OpRef, lookup};
use crate::pool::Pool;
use crate::prim::BinOp;
use crate::printer::print_ty_in;
use crate::relax::{Call, ExprData, RelaxFunction};
use crate::ty::{TensorShape, TyData, VDevice};

#[test]
fn every_op_has_a_rule() {
    let missing: Vec<&str> = OPS
        .iter()
        .enumerate()
        .filter(|(i, _)| rule(crate::op::OpId(*i as u16)).is_none())
        .map(|(_, d)| d.name)
        .collect();
    assert!(missing.is_empty(), "ops without an inference rule or a sinfo_args mark: {missing:?}");
}

/// A function with symbolic variables `n` and `m` to build types in.
struct Fx {
    f: RelaxFunction,
    n: SymVar,
    m: SymVar,
}

impl Fx {
    fn new() -> Fx {
        let mut pool = Pool::new();
        let n = pool.new_var("n", DataType::INT64);
        let m = pool.new_var("m", DataType::INT64);
        let f = RelaxFunction { pool, ..RelaxFunction::new() };
        Fx { f, n, m }
    }
    fn c(&mut self, v: i64) -> PrimExpr {
        self.f.pool.i64(v)
    }
    fn n(&mut self) -> PrimExpr {
        self.f.pool.var_ref(self.n)
    }
    fn m(&mut self) -> PrimExpr {
        self.f.pool.var_ref(self.m)
    }
    fn bin(&mut self, op: BinOp, a: PrimExpr, b: PrimExpr) -> PrimExpr {
        self.f.pool.binary(op, a, b).unwrap()
    }
    fn t(&mut self, dims: Vec<PrimExpr>, dtype: DataType) -> Ty {
        self.f.pool.intern_ty(TyData::tensor(dims, dtype))
    }
    fn tn(&mut self, ndim: i32, dtype: DataType) -> Ty {
        self.f.pool.intern_ty(TyData::tensor_ndim(ndim, dtype))
    }
    fn ty(&mut self, d: TyData) -> Ty {
        self.f.pool.intern_ty(d)
    }
    fn show(&self, t: Ty) -> String {
        print_ty_in(&self.f, t)
    }
    /// A leaf argument of type `t` (a fresh variable use).
    fn arg(&mut self, t: Ty) -> crate::entities::Expr {
        let v = self.f.add_var(format!("a{}", self.f.vars.len()), t, false);
        self.f.use_var(v)
    }
    /// The type `op(args, attrs)` gets.
    fn infer(
        &mut self,
        op: &str,
        args: Vec<crate::entities::Expr>,
        attrs: &[(&str, AttrValue)],
    ) -> Result<String, String> {
        let id = lookup(op).unwrap_or_else(|| panic!("{op} is in the table"));
        let callee = self.f.add_expr(ExprData::Op(OpRef::Known(id)), None);
        let mut a = Attrs::new();
        for (k, v) in attrs {
            a.set(k, v.clone());
        }
        let args = self.f.new_list(args);
        let call = Call { callee, args, attrs: a, sinfo_args: Vec::new() };
        match infer_op(&mut self.f, &call, &Analyzer::new()) {
            Ok(Some(t)) => Ok(self.show(t)),
            Ok(None) => Ok("<none>".into()),
            Err(e) => Err(e.message),
        }
    }
}

const F32: DataType = DataType::FLOAT32;

#[test]
fn base_check_levels() {
    let mut x = Fx::new();
    let an = Analyzer::new();
    let (n, four, five) = (x.n(), x.c(4), x.c(5));
    let n4 = x.t(vec![n, four], F32);
    let n5 = x.t(vec![n, five], F32);
    let any2 = x.tn(2, F32);
    let void2 = x.tn(2, DataType::VOID);
    let i32_2 = x.tn(2, DataType::INT32);
    let obj = x.ty(TyData::Object);
    let p = &x.f.pool;
    let check = |a, b| base_check(p, a, p, b, &an);
    assert_eq!(check(n4, n4), CheckLevel::Pass);
    assert_eq!(check(obj, n4), CheckLevel::Pass);
    assert_eq!(check(any2, n4), CheckLevel::Pass);
    assert_eq!(check(n4, any2), CheckLevel::FailL2, "unknown dims are only unprovable");
    assert_eq!(check(n4, n5), CheckLevel::FailL0, "4 and 5 differ");
    assert_eq!(check(n4, obj), CheckLevel::FailL1, "R.Object is less precise");
    assert_eq!(check(any2, void2), CheckLevel::FailL1, "an unknown dtype is less precise");
    assert_eq!(check(any2, i32_2), CheckLevel::FailL0, "different dtypes");
    let three = x.tn(3, F32);
    let p = &x.f.pool;
    assert_eq!(base_check(p, any2, p, three, &an), CheckLevel::FailL0, "different ranks");
    // Symbolic dims: equal when provably equal, L2 otherwise.
    let (n, m) = (x.n(), x.m());
    let n_plus_m = x.bin(BinOp::Add, n, m);
    let m_plus_n = x.bin(BinOp::Add, m, n);
    let a = x.t(vec![n_plus_m], F32);
    let b = x.t(vec![m_plus_n], F32);
    let c = x.t(vec![n], F32);
    let p = &x.f.pool;
    assert_eq!(base_check(p, a, p, b, &an), CheckLevel::Pass);
    assert_eq!(base_check(p, a, p, c, &an), CheckLevel::FailL2);
    // Tuples combine the worst field; arity differs is L0.
    let t1 = x.ty(TyData::Tuple(vec![n4, any2]));
    let t2 = x.ty(TyData::Tuple(vec![n4, n4]));
    let t3 = x.ty(TyData::Tuple(vec![n4]));
    let p = &x.f.pool;
    assert_eq!(base_check(p, t1, p, t2, &an), CheckLevel::Pass);
    assert_eq!(base_check(p, t2, p, t1, &an), CheckLevel::FailL2);
    assert_eq!(base_check(p, t2, p, t3, &an), CheckLevel::FailL0);
    // Prim values and shapes.
    let pv = x.ty(TyData::Prim { dtype: DataType::INT64, value: Some(four) });
    let pv5 = x.ty(TyData::Prim { dtype: DataType::INT64, value: Some(five) });
    let pn = x.ty(TyData::Prim { dtype: DataType::INT64, value: None });
    let s2 = x.ty(TyData::Shape { values: None, ndim: 2 });
    let s_n4 = x.ty(TyData::shape(vec![n, four]));
    let p = &x.f.pool;
    assert_eq!(base_check(p, pn, p, pv, &an), CheckLevel::Pass);
    assert_eq!(base_check(p, pv, p, pn, &an), CheckLevel::FailL2);
    assert_eq!(base_check(p, pv, p, pv5, &an), CheckLevel::FailL0);
    assert_eq!(base_check(p, s2, p, s_n4, &an), CheckLevel::Pass);
    assert_eq!(base_check(p, s_n4, p, s2, &an), CheckLevel::FailL2);
}

#[test]
fn base_check_vdevices_and_callables() {
    let mut x = Fx::new();
    let an = Analyzer::new();
    let four = x.c(4);
    let cuda = VDevice { kind: "cuda".into(), index: 0, scope: "global".into() };
    let llvm = VDevice { kind: "llvm".into(), index: 0, scope: "global".into() };
    let on = |x: &mut Fx, v: Option<VDevice>| {
        x.ty(TyData::Tensor { shape: TensorShape::Dims(vec![four]), dtype: F32, ndim: 1, vdevice: v })
    };
    let (a, b, c) = (on(&mut x, Some(cuda)), on(&mut x, Some(llvm)), on(&mut x, None));
    let p = &x.f.pool;
    assert_eq!(base_check(p, a, p, b, &an), CheckLevel::FailL0);
    assert_eq!(base_check(p, a, p, c, &an), CheckLevel::FailL1);
    assert_eq!(base_check(p, c, p, a, &an), CheckLevel::Pass);
    let obj = x.ty(TyData::Object);
    let pure = x.ty(TyData::Callable { params: None, ret: obj, pure: true });
    let impure = x.ty(TyData::Callable { params: None, ret: obj, pure: false });
    let p = &x.f.pool;
    assert_eq!(base_check(p, pure, p, impure, &an), CheckLevel::FailL0);
    assert_eq!(base_check(p, impure, p, pure, &an), CheckLevel::Pass);
}

#[test]
fn base_check_across_pools() {
    let mut x = Fx::new();
    let mut y = Fx::new();
    let an = Analyzer::new();
    let (xn, four) = (x.n(), x.c(4));
    let a = x.t(vec![xn, four], F32);
    let (yn, yfour, yfive) = (y.n(), y.c(4), y.c(5));
    let b = y.t(vec![yn, yfour], F32);
    let c = y.t(vec![yn, yfive], F32);
    // The `n` of another function is another variable: only unprovable.
    assert_eq!(base_check(&x.f.pool, a, &y.f.pool, b, &an), CheckLevel::FailL2);
    assert_eq!(base_check(&x.f.pool, a, &y.f.pool, c, &an), CheckLevel::FailL0);
}

#[test]
fn lca_joins() {
    let mut x = Fx::new();
    let an = Analyzer::new();
    let (n, m, four) = (x.n(), x.m(), x.c(4));
    let n4 = x.t(vec![n, four], F32);
    let m4 = x.t(vec![m, four], F32);
    let n4h = x.t(vec![n, four], DataType::FLOAT16);
    let j = lca(&mut x.f.pool, n4, n4, &an);
    assert_eq!(x.show(j), "R.Tensor((n, 4), dtype=\"float32\")");
    let j = lca(&mut x.f.pool, n4, m4, &an);
    assert_eq!(x.show(j), "R.Tensor(dtype=\"float32\", ndim=2)");
    let j = lca(&mut x.f.pool, n4, n4h, &an);
    assert_eq!(x.show(j), "R.Tensor((n, 4))");
    let one_d = x.t(vec![four], F32);
    let j = lca(&mut x.f.pool, n4, one_d, &an);
    assert_eq!(x.show(j), "R.Tensor(dtype=\"float32\")");
    let s = x.ty(TyData::shape(vec![n]));
    let j = lca(&mut x.f.pool, n4, s, &an);
    assert_eq!(x.show(j), "R.Object");
    let t1 = x.ty(TyData::Tuple(vec![n4, n4]));
    let t2 = x.ty(TyData::Tuple(vec![n4, m4]));
    let j = lca(&mut x.f.pool, t1, t2, &an);
    assert_eq!(x.show(j), "R.Tuple(R.Tensor((n, 4), dtype=\"float32\"), R.Tensor(dtype=\"float32\", ndim=2))");
    let p4 = x.ty(TyData::Prim { dtype: DataType::INT64, value: Some(four) });
    let pn = x.ty(TyData::Prim { dtype: DataType::INT64, value: Some(n) });
    let j = lca(&mut x.f.pool, p4, pn, &an);
    assert_eq!(x.show(j), "R.Prim(\"int64\")");
}

#[test]
fn erase_substitutes_and_drops() {
    let mut x = Fx::new();
    let an = Analyzer::new();
    let (n, m) = (x.n(), x.m());
    let two = x.c(2);
    let n2 = x.bin(BinOp::Mul, n, two);
    let t = x.t(vec![n2, m], F32);
    let p = x.ty(TyData::Prim { dtype: DataType::INT64, value: Some(m) });
    let tup = x.ty(TyData::Tuple(vec![t, p]));
    // n := m + 1, m undefined.
    let one = x.c(1);
    let m1 = x.bin(BinOp::Add, m, one);
    let mut map = VarMap::default();
    map.syms.insert(x.n, m1);
    let mv = x.m;
    let e = erase_to_well_defined(&mut x.f.pool, tup, &map, &|v| v != mv, &|_| true, &an);
    assert_eq!(x.show(e), "R.Tuple(R.Tensor(dtype=\"float32\", ndim=2), R.Prim(\"int64\"))");
    // With m defined, the substituted dim is simplified.
    let e = erase_to_well_defined(&mut x.f.pool, t, &map, &|_| true, &|_| true, &an);
    assert_eq!(x.show(e), "R.Tensor((m * 2 + 2, m), dtype=\"float32\")");
}

#[test]
fn derive_call_binds_checks_and_erases() {
    // callee: f(x: (k, 4), y: (k,)) -> (k * 2, j)
    let mut callee = Fx::new();
    let k = callee.f.pool.new_var("k", DataType::INT64);
    let j = callee.f.pool.new_var("j", DataType::INT64);
    let (kk, jj) = (callee.f.pool.var_ref(k), callee.f.pool.var_ref(j));
    let four = callee.c(4);
    let two = callee.c(2);
    let k2 = callee.bin(BinOp::Mul, kk, two);
    let p1 = callee.t(vec![kk, four], F32);
    let p2 = callee.t(vec![kk], F32);
    let ret = callee.t(vec![k2, four], F32);
    let ret2 = callee.t(vec![k2, jj], F32);
    let mut x = Fx::new();
    let an = Analyzer::new();
    let (n, m, four) = (x.n(), x.m(), x.c(4));
    let n1 = x.c(1);
    let np1 = x.bin(BinOp::Add, n, n1);
    let a1 = x.t(vec![np1, four], F32);
    let a2 = x.t(vec![np1], F32);
    let args = vec![x.arg(a1), x.arg(a2)];
    let params = [p1, p2];
    let sig = |ret| CalleeSig { name: "cls.f", pool: Some(&callee.f.pool), params: &params, param_vars: &[], ret };
    let t = derive_call(&mut x.f, sig(ret), &args, &an).unwrap();
    assert_eq!(x.show(t), "R.Tensor((n * 2 + 2, 4), dtype=\"float32\")");
    // `j` is not bound by the arguments: the shape is erased.
    let t = derive_call(&mut x.f, sig(ret2), &args, &an).unwrap();
    assert_eq!(x.show(t), "R.Tensor(dtype=\"float32\", ndim=2)");
    // `k` bound to `n + 1`, then given `m`: unprovable, accepted.
    let a3 = x.t(vec![m], F32);
    let args2 = vec![args[0], x.arg(a3)];
    assert!(derive_call(&mut x.f, sig(ret), &args2, &an).is_ok());
    // A dtype mismatch and a provably different second occurrence are errors.
    let a4 = x.t(vec![np1], DataType::INT32);
    let args3 = vec![args[0], x.arg(a4)];
    let e = derive_call(&mut x.f, sig(ret), &args3, &an).unwrap_err();
    assert!(e.message.contains("argument 2 of `cls.f`"), "{}", e.message);
    let a5 = x.t(vec![n], F32);
    let args4 = vec![args[0], x.arg(a5)];
    let e = derive_call(&mut x.f, sig(ret), &args4, &an).unwrap_err();
    assert!(e.message.contains("(here `R.Tensor((n + 1,), dtype=\"float32\")`)"), "{}", e.message);
    // An `R.Object` argument where a tensor is expected is L1: an error.
    let obj = x.ty(TyData::Object);
    let args5 = vec![args[0], x.arg(obj)];
    assert!(derive_call(&mut x.f, sig(ret), &args5, &an).is_err());
    // Arity.
    let e = derive_call(&mut x.f, sig(ret), &args[..1], &an).unwrap_err();
    assert_eq!(e.message, "`cls.f` takes 2 arguments, but 1 was given");
}

#[test]
fn broadcast_rules() {
    let mut x = Fx::new();
    let (n, m, one, three, four) = (x.n(), x.m(), x.c(1), x.c(3), x.c(4));
    let t_n4 = x.t(vec![n, four], F32);
    let t_14 = x.t(vec![one, four], F32);
    let t_m14 = x.t(vec![m, one, four], F32);
    let t_3 = x.t(vec![three], F32);
    let t_m = x.t(vec![m], F32);
    let a = x.arg(t_n4);
    let b = x.arg(t_14);
    let c = x.arg(t_m14);
    let d = x.arg(t_3);
    let e = x.arg(t_m);
    assert_eq!(x.infer("relax.add", vec![a, b], &[]).unwrap(), "R.Tensor((n, 4), dtype=\"float32\")");
    assert_eq!(x.infer("relax.add", vec![c, a], &[]).unwrap(), "R.Tensor((m, n, 4), dtype=\"float32\")");
    assert_eq!(x.infer("relax.less", vec![a, e], &[]).unwrap(), "R.Tensor(dtype=\"bool\", ndim=2)");
    let err = x.infer("relax.add", vec![a, d], &[]).unwrap_err();
    assert_eq!(
        err,
        "R.add: cannot broadcast dims `4` and `3` of `R.Tensor((n, 4), dtype=\"float32\")` and `R.Tensor((3,), dtype=\"float32\")`"
    );
}

#[test]
fn op_rules_on_symbolic_shapes() {
    let mut x = Fx::new();
    let (n, m, four) = (x.n(), x.m(), x.c(4));
    let t_n4 = x.t(vec![n, four], F32);
    let t_m4 = x.t(vec![m, four], F32);
    let a = x.arg(t_n4);
    let b = x.arg(t_m4);
    let tup = x.ty(TyData::Tuple(vec![t_n4, t_m4]));
    let ab = x.arg(tup);
    assert_eq!(
        x.infer("relax.concat", vec![ab], &[("axis", AttrValue::Int(0))]).unwrap(),
        "R.Tensor((n + m, 4), dtype=\"float32\")"
    );
    let n4 = x.bin(BinOp::Mul, n, four);
    let s = x.f.add_expr(ExprData::Shape(vec![n4]), None);
    let st = x.ty(TyData::shape(vec![n4]));
    x.f.expr_ty.set(s, Some(st));
    assert_eq!(x.infer("relax.reshape", vec![a, s], &[]).unwrap(), "R.Tensor((n * 4,), dtype=\"float32\")");
    let prim = |x: &mut Fx, e: PrimExpr| {
        let t = x.ty(TyData::Prim { dtype: DataType::INT64, value: Some(e) });
        let p = x.f.add_expr(ExprData::Prim(e), None);
        x.f.expr_ty.set(p, Some(t));
        p
    };
    let nm = x.bin(BinOp::Add, n, m);
    let one = x.c(1);
    let (p0, p1, p2) = (prim(&mut x, n), prim(&mut x, nm), prim(&mut x, one));
    assert_eq!(
        x.infer("relax.arange", vec![p0, p1, p2], &[("dtype", AttrValue::Str("int64".into()))]).unwrap(),
        "R.Tensor((m,), dtype=\"int64\")"
    );
    // `4` and `m` may be equal: not an error, the shape is kept.
    assert_eq!(
        x.infer("relax.matmul", vec![a, b], &[("out_dtype", AttrValue::Str("void".into()))]).unwrap(),
        "R.Tensor((n, 4), dtype=\"float32\")"
    );
}

#[test]
fn simplify_resolves_min_max() {
    let mut x = Fx::new();
    let an = Analyzer::new();
    let (n, zero, one) = (x.n(), x.c(0), x.c(1));
    // max(min(max(n, 0), n) - min(max(1, 0), n), 0) is max(n - 1, 0).
    let a = x.bin(BinOp::Max, n, zero);
    let a = x.bin(BinOp::Min, a, n);
    let b = x.bin(BinOp::Max, one, zero);
    let b = x.bin(BinOp::Min, b, n);
    let d = x.bin(BinOp::Sub, a, b);
    let e = x.bin(BinOp::Max, d, zero);
    let s = simplify(&an, &mut x.f.pool, e);
    let text = crate::printer::print_prim_in(&x.f.pool, s);
    assert_eq!(text, "T.max(n - 1, 0)");
}

#[test]
fn erase_to_signature_drops_body_variables() {
    let mut x = Fx::new();
    let an = Analyzer::new();
    let (n, m) = (x.n(), x.m());
    let pt = x.t(vec![n], F32);
    let p = x.f.add_var("p", pt, false);
    let body = x.t(vec![n, m], F32);
    let t = erase_to_signature(&mut x.f, body, &[p], &an);
    assert_eq!(x.show(t), "R.Tensor(dtype=\"float32\", ndim=2)");
    let body = x.t(vec![n, n], F32);
    let t = erase_to_signature(&mut x.f, body, &[p], &an);
    assert_eq!(x.show(t), "R.Tensor((n, n), dtype=\"float32\")");
}

#[test]
fn unknown_ops_and_sinfo_args() {
    let mut x = Fx::new();
    let obj = x.ty(TyData::Object);
    let a = x.arg(obj);
    // call_pure_packed without sinfo_args is `R.Object`.
    assert_eq!(x.infer("relax.call_pure_packed", vec![a], &[]).unwrap(), "R.Object");
    let callee = x.f.add_expr(ExprData::Op(OpRef::Custom("relax.my_op".into())), None);
    let call = Call { callee, args: crate::relax::ExprList::new(), attrs: Attrs::new(), sinfo_args: vec![] };
    assert_eq!(infer_op(&mut x.f, &call, &Analyzer::new()).unwrap(), None);
}

#[test]
fn layout_transform_evaluates_simple_index_maps() {
    let mut x = Fx::new();
    let (eight, twelve) = (x.c(8), x.c(12));
    let t = x.t(vec![eight, twelve], F32);
    let a = x.arg(t);
    let map = AttrValue::Text("T.index_map(lambda i_1, j: (j // 4, i_1, j % 4))".into());
    assert_eq!(
        x.infer("relax.layout_transform", vec![a], &[("index_map", map)]).unwrap(),
        "R.Tensor((3, 8, 4), dtype=\"float32\")"
    );
}
