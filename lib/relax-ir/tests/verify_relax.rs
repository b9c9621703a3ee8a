//! Verifier tests for Relax functions: well-formed IR passes, each rule fires on a minimal
//! violation.

mod verify_builder;

use relax_ir::verify::{Entity, verify_function, verify_module};
use relax_ir::{AttrValue, BindingKind, DataType, ExprData, Func, FunctionNode, Module, ModuleForm, TyData};
use verify_builder::{D, RB, add_kernel, assert_has, assert_ok, errors, module, prim, relax};

/// `main(x: (n, 4), y: (n, 4)) -> (n, 4)` with one dataflow block calling `add`.
fn main_calling(g_add: relax_ir::Global) -> RB {
    let mut r = RB::new();
    let n = r.sym("n");
    let t = r.tensor(&[D::S(n), D::C(4)]);
    let x = r.param("x", t);
    let y = r.param("y", t);
    r.block(true);
    let callee = r.global(g_add);
    let (ex, ey) = (r.use_(x), r.use_(y));
    let args = r.tuple(vec![ex, ey]);
    let call = r.op_call("relax.call_tir", vec![callee, args], vec![t], t);
    let lv = r.bind_df("lv", call, t, true);
    let elv = r.use_(lv);
    r.bind("gv", elv, t);
    r
}

fn finish_main(mut r: RB, gv_name: &str) -> relax_ir::RelaxFunction {
    let gv = r.f.vars.iter().find(|(_, d)| d.name == gv_name).map(|(v, _)| v).unwrap();
    let t = r.f.vars[gv].ty;
    let e = r.use_(gv);
    r.finish(e, t)
}

fn module_with_main(build: impl FnOnce(relax_ir::Global) -> relax_ir::RelaxFunction) -> Module {
    let mut m = Module::new();
    let g_add = m.add("add", prim(add_kernel()));
    let f = build(g_add);
    m.add("main", relax(f));
    m
}

#[test]
fn well_formed_module_passes() {
    let m = module_with_main(|g| finish_main(main_calling(g), "gv"));
    assert_ok(&m);
    for (g, _) in m.live() {
        assert!(verify_function(&m, g).is_ok());
    }
}

#[test]
fn use_before_def() {
    let m = module_with_main(|g| {
        let mut r = main_calling(g);
        r.block(false);
        let later = r.f.add_var("y2", r.f.vars.values().next().unwrap().ty, false);
        let e = r.use_(later);
        let t = r.f.vars[later].ty;
        r.bind("z", e, t);
        let e2 = r.use_(later);
        r.rebind(later, e2);
        finish_main(r, "z")
    });
    let msgs = errors(verify_module(&m));
    assert_has(&msgs, "variable `y2` is used before it is defined");
}

#[test]
fn double_definition() {
    let m = module_with_main(|g| {
        let mut r = main_calling(g);
        let gv = r.f.vars.iter().find(|(_, d)| d.name == "gv").map(|(v, _)| v).unwrap();
        r.block(false);
        let x = r.f.func.params[0];
        let e = r.use_(x);
        r.rebind(gv, e);
        finish_main(r, "gv")
    });
    let msgs = errors(verify_module(&m));
    assert_has(&msgs, "variable `gv` is defined more than once");
}

#[test]
fn parameter_defined_again_by_a_binding() {
    let m = module_with_main(|g| {
        let mut r = main_calling(g);
        r.block(false);
        let x = r.f.func.params[0];
        let y = r.f.func.params[1];
        let e = r.use_(y);
        r.rebind(x, e);
        finish_main(r, "gv")
    });
    assert_has(&errors(verify_module(&m)), "variable `x` is defined more than once");
}

#[test]
fn dataflow_var_used_after_its_block() {
    let m = module_with_main(|g| {
        let mut r = main_calling(g);
        let lv = r.f.vars.iter().find(|(_, d)| d.name == "lv").map(|(v, _)| v).unwrap();
        r.block(false);
        let e = r.use_(lv);
        let t = r.f.vars[lv].ty;
        r.bind("late", e, t);
        finish_main(r, "late")
    });
    let msgs = errors(verify_module(&m));
    assert_has(&msgs, "dataflow variable `lv` is used outside its dataflow block");
}

#[test]
fn dataflow_var_defined_outside_dataflow_block() {
    let m = module_with_main(|g| {
        let mut r = main_calling(g);
        r.block(false);
        let x = r.f.func.params[0];
        let e = r.use_(x);
        let t = r.f.vars[x].ty;
        r.bind_df("bad", e, t, true);
        finish_main(r, "gv")
    });
    assert_has(&errors(verify_module(&m)), "dataflow variable `bad` is defined outside a dataflow block");
}

#[test]
fn non_leaf_call_argument() {
    let m = module_with_main(|g| {
        let mut r = main_calling(g);
        r.block(false);
        let x = r.f.func.params[0];
        let t = r.f.vars[x].ty;
        let (a, b) = (r.use_(x), r.use_(x));
        let inner = r.op_call("relax.add", vec![a, b], vec![], t);
        let c = r.use_(x);
        let outer = r.op_call("relax.multiply", vec![inner, c], vec![], t);
        r.bind("z", outer, t);
        finish_main(r, "z")
    });
    let msgs = errors(verify_module(&m));
    assert_has(&msgs, "expected a leaf expression as argument 0 of `R.multiply`, found a call to `R.add`");
}

#[test]
fn if_in_dataflow_block() {
    let m = module_with_main(|g| {
        let mut r = main_calling(g);
        let x = r.f.func.params[0];
        let t = r.f.vars[x].ty;
        let cond_t = r.ty(TyData::Prim { dtype: DataType::BOOL, value: None });
        let cond_v = r.param("c", cond_t);
        let cond = r.use_(cond_v);
        let (a, b) = (r.use_(x), r.use_(x));
        let then_branch = r.seq(vec![], a);
        let else_branch = r.seq(vec![], b);
        let iff = r.expr(ExprData::If { cond, then_branch, else_branch }, Some(t));
        r.bind_df("sel", iff, t, true);
        finish_main(r, "gv")
    });
    let msgs = errors(verify_module(&m));
    assert_has(&msgs, "`if` binding `sel` is not allowed in a dataflow block");
}

#[test]
fn impure_call_in_dataflow_block() {
    let m = module_with_main(|g| {
        let mut r = main_calling(g);
        let x = r.f.func.params[0];
        let void = r.void();
        let ext = r.extern_func("vm.builtin.something");
        let a = r.use_(x);
        let call = r.call(ext, vec![a], vec![void], void);
        r.bind_df("eff", call, void, true);
        let a = r.use_(x);
        let print = r.op_call("relax.print", vec![a], vec![], void);
        r.bind_df("eff2", print, void, true);
        r.f.func.attrs.set("relax.force_pure", AttrValue::Bool(true));
        finish_main(r, "gv")
    });
    let msgs = errors(verify_module(&m));
    assert_has(&msgs, "impure call to `R.call_packed(\"vm.builtin.something\")` in a dataflow block");
    assert_has(&msgs, "impure call to `R.print` in a dataflow block");
    // Forced purity silences the function rule, not the dataflow rule.
    assert!(!msgs.iter().any(|m| m.contains("pure function")), "{msgs:#?}");
}

fn impure_helper() -> relax_ir::RelaxFunction {
    let mut r = RB::new();
    let t = r.tensor(&[D::C(4)]);
    let x = r.param("x", t);
    r.block(false);
    let void = r.void();
    let a = r.use_(x);
    let print = r.op_call("relax.print", vec![a], vec![], void);
    r.bind("p", print, void);
    r.f.func.pure = false;
    let e = r.use_(x);
    r.finish(e, t)
}

fn caller_of(g: relax_ir::Global) -> relax_ir::RelaxFunction {
    let mut r = RB::new();
    let t = r.tensor(&[D::C(4)]);
    let x = r.param("x", t);
    r.block(false);
    let callee = r.global(g);
    let a = r.use_(x);
    let call = r.call(callee, vec![a], vec![], t);
    let y = r.bind("y", call, t);
    let e = r.use_(y);
    r.finish(e, t)
}

#[test]
fn pure_function_calling_impure_one() {
    let mut m = Module::new();
    let helper = m.add("helper", relax(impure_helper()));
    let main = m.add("main", relax(caller_of(helper)));
    let msgs = errors(verify_module(&m));
    assert_has(&msgs, "pure function `main` contains an impure call to `cls.helper`");
    // The impure helper itself may print.
    assert!(!msgs.iter().any(|m| m.contains("`helper` contains")), "{msgs:#?}");
    // relax.force_pure lifts the rule.
    if let Func::Relax(f) = &mut m.globals[main].func {
        f.func.attrs.set("relax.force_pure", AttrValue::Bool(true));
    }
    assert_ok(&m);
}

#[test]
fn force_pure_on_impure_function() {
    let mut f = impure_helper();
    f.func.attrs.set("relax.force_pure", AttrValue::Bool(true));
    let (m, _) = module(vec![("helper", relax(f))]);
    assert_has(&errors(verify_module(&m)), "has `relax.force_pure` set but is not pure");
}

#[test]
fn primfunc_call_is_impure_unless_forced() {
    let mut m = Module::new();
    let g_add = m.add("add", prim(add_kernel()));
    let mut r = RB::new();
    let n = r.sym("n");
    let t = r.tensor(&[D::S(n), D::C(4)]);
    let x = r.param("x", t);
    let out = r.param("out", t);
    r.block(false);
    let void = r.void();
    let callee = r.global(g_add);
    let (a, b, c) = (r.use_(x), r.use_(x), r.use_(out));
    let call = r.call(callee, vec![a, b, c], vec![], void);
    r.bind("_", call, void);
    let e = r.use_(out);
    let mut f = r.finish(e, t);
    let g_main = m.add("main", relax(f.clone()));
    assert_has(&errors(verify_module(&m)), "pure function `main` contains an impure call to `cls.add`");
    f.func.attrs.set("relax.force_pure", AttrValue::Bool(true));
    m.globals[g_main].func = relax(f);
    assert_ok(&m);
}

#[test]
fn symbolic_var_defined_only_by_later_match_cast() {
    let mut r = RB::new();
    let m_ = r.sym("m");
    let any2 = r.ty(TyData::tensor_ndim(2, DataType::FLOAT32));
    let x = r.param("x", any2);
    r.block(false);
    // A use of `m` before the match_cast that defines it.
    let sh = r.shape(&[D::S(m_)]);
    let sh_t = r.f.ty_of(sh).unwrap();
    r.bind("s", sh, sh_t);
    let tm = r.tensor(&[D::S(m_), D::C(4)]);
    let e = r.use_(x);
    let y = r.match_cast("y", e, tm);
    let ey = r.use_(y);
    let f = r.finish(ey, any2);
    let (m, _) = module(vec![("main", relax(f))]);
    let msgs = errors(verify_module(&m));
    assert_has(&msgs, "symbolic variable `m` is used before it is defined");
    assert_eq!(msgs.len(), 1, "{msgs:#?}"); // reported once per binding
}

#[test]
fn match_cast_defines_symbolic_vars() {
    let mut r = RB::new();
    let (mm, k) = (r.sym("m"), r.sym("k"));
    let any2 = r.ty(TyData::tensor_ndim(2, DataType::FLOAT32));
    let x = r.param("x", any2);
    r.block(true);
    let tmk = r.tensor(&[D::S(mm), D::S(k)]);
    let e = r.use_(x);
    let y = r.match_cast("y", e, tmk);
    let sh = r.shape(&[D::S(mm), D::S(k)]);
    let sh_t = r.f.ty_of(sh).unwrap();
    r.bind("s", sh, sh_t);
    let ey = r.use_(y);
    let f = r.finish(ey, any2);
    let (m, _) = module(vec![("main", relax(f))]);
    assert_ok(&m);
}

#[test]
fn return_type_uses_only_parameter_vars() {
    let mut r = RB::new();
    let mm = r.sym("m");
    let any2 = r.ty(TyData::tensor_ndim(1, DataType::FLOAT32));
    let x = r.param("x", any2);
    r.block(false);
    let tm = r.tensor(&[D::S(mm)]);
    let e = r.use_(x);
    let y = r.match_cast("y", e, tm);
    let ey = r.use_(y);
    let f = r.finish(ey, tm);
    let (m, _) = module(vec![("main", relax(f))]);
    assert_has(
        &errors(verify_module(&m)),
        "symbolic variable `m` in the return type of `main` is not defined by its parameters",
    );
}

#[test]
fn var_from_another_functions_pool() {
    let mut m = Module::new();
    let g_add = m.add("add", prim(add_kernel()));
    let big = finish_main(main_calling(g_add), "gv");
    let foreign = big.vars.keys().last().unwrap();
    let mut r = RB::new();
    let t = r.tensor(&[D::C(4)]);
    let x = r.param("x", t);
    let e = r.use_(x);
    r.f.exprs[e] = ExprData::Var(foreign);
    let f = r.finish(e, t);
    m.add("other", relax(f));
    m.add("main", relax(big));
    let es = verify_module(&m).unwrap_err();
    let msgs: Vec<String> = es.iter().map(|e| e.message.clone()).collect();
    assert_has(&msgs, "refers to variable `var");
    assert_has(&msgs, "which is out of range (function `other` has 1 variable)");
    // The broken function gets no further checks, the others are checked normally.
    assert_eq!(es.len(), 1, "{msgs:#?}");
    assert!(es[0].notes.iter().any(|n| n.contains("another function")));
}

#[test]
fn symbolic_var_from_another_pool_is_dangling() {
    let mut r = RB::new();
    let t = r.tensor(&[D::C(4)]);
    let x = r.param("x", t);
    let e = r.use_(x);
    // sym7 does not exist in this pool.
    let bogus: relax_ir::SymVar = relax_entity::EntityRef::new(7);
    let p = r.f.pool.raw(relax_ir::PrimExprData::Var(bogus));
    let pv = r.expr(ExprData::Prim(p), Some(t));
    r.block(false);
    r.bind("pv", pv, t);
    let f = r.finish(e, t);
    let (m, _) = module(vec![("main", relax(f))]);
    let msgs = errors(verify_module(&m));
    assert_has(&msgs, "refers to variable `sym7`, which is out of range");
}

fn call_tir_module(n_args: usize, tir_vars: Option<usize>, scalars_in_tuple: usize) -> Module {
    let mut m = Module::new();
    let g_add = m.add("add", prim(add_kernel()));
    let mut r = RB::new();
    let n = r.sym("n");
    let t = r.tensor(&[D::S(n), D::C(4)]);
    let x = r.param("x", t);
    r.block(true);
    let callee = r.global(g_add);
    let mut fields: Vec<_> = (0..n_args).map(|_| r.use_(x)).collect();
    for _ in 0..scalars_in_tuple {
        fields.push(r.prim_value(D::S(n)));
    }
    let args = r.tuple(fields);
    let mut call_args = vec![callee, args];
    if let Some(k) = tir_vars {
        let dims: Vec<D> = (0..k).map(|_| D::S(n)).collect();
        call_args.push(r.shape(&dims));
    }
    let call = r.op_call("relax.call_tir", call_args, vec![t], t);
    let y = r.bind("y", call, t);
    let e = r.use_(y);
    m.add("main", relax(r.finish(e, t)));
    m
}

#[test]
fn call_tir_arity() {
    assert_ok(&call_tir_module(2, None, 0));
    let msgs = errors(verify_module(&call_tir_module(1, None, 0)));
    assert_has(&msgs, "call to `cls.add` passes 2 arguments, expected 3");
    let msgs = errors(verify_module(&call_tir_module(2, Some(1), 0)));
    assert_has(&msgs, "call to `cls.add` passes 4 arguments, expected 3");
    let msgs = errors(verify_module(&call_tir_module(1, Some(1), 1)));
    assert_has(&msgs, "call to `cls.add` passes 4 arguments, expected 3");
    // Scalars in the argument tuple (HEAD style) count as arguments.
    assert_ok(&call_tir_module(1, None, 1));
    assert_ok(&call_tir_module(1, Some(1), 0));
}

#[test]
fn call_tir_callee_and_out_sinfo() {
    let mut m = call_tir_module(2, None, 0);
    let g_main = m.lookup("main").unwrap();
    let Func::Relax(f) = &mut m.globals[g_main].func else { unreachable!() };
    // Two out_sinfo entries, and the binding's type disagrees with them.
    let call = f.blocks.values().next().unwrap().bindings[0].value;
    let t3 = f.pool.intern_ty(TyData::tensor_ndim(3, DataType::FLOAT32));
    if let ExprData::Call(c) = &mut f.exprs[call] {
        c.sinfo_args.push(t3);
    }
    let msgs = errors(verify_module(&m));
    assert_has(&msgs, "expected exactly one `out_sinfo` for `R.call_tir`, found 2");

    let mut m = call_tir_module(2, None, 0);
    let g_main = m.lookup("main").unwrap();
    let Func::Relax(f) = &mut m.globals[g_main].func else { unreachable!() };
    let y = f.blocks.values().next().unwrap().bindings[0].var;
    let t3 = f.pool.intern_ty(TyData::tensor_ndim(3, DataType::FLOAT32));
    f.vars[y].ty = t3;
    let msgs = errors(verify_module(&m));
    assert_has(&msgs, "type of `y` does not match the `out_sinfo` of `R.call_tir`");

    // A Relax function as the callee.
    let mut m = call_tir_module(2, None, 0);
    let g_add = m.lookup("add").unwrap();
    let mut r = RB::new();
    let t = r.tensor(&[D::C(1)]);
    let p = r.param("p", t);
    let e = r.use_(p);
    m.globals[g_add].func = relax(r.finish(e, t));
    assert_has(
        &errors(verify_module(&m)),
        "expected a PrimFunc as the callee of `R.call_tir`, found Relax function `cls.add`",
    );
}

#[test]
fn call_tir_inplace_indices() {
    let mut m = call_tir_module(2, None, 0);
    let g_main = m.lookup("main").unwrap();
    let Func::Relax(f) = &mut m.globals[g_main].func else { unreachable!() };
    let call = f.blocks.values().next().unwrap().bindings[0].value;
    let op = f.exprs.push(ExprData::Op(relax_ir::op::op_ref("relax.call_tir_inplace")));
    if let ExprData::Call(c) = &mut f.exprs[call] {
        c.callee = op;
        c.attrs.set("inplace_indices", AttrValue::List(vec![AttrValue::Int(5)]));
    }
    let msgs = errors(verify_module(&m));
    assert_has(&msgs, "inplace index 5 is out of range for 2 arguments");
}

#[test]
fn call_arity_of_relax_function() {
    let mut m = Module::new();
    let helper = {
        let mut r = RB::new();
        let t = r.tensor(&[D::C(4)]);
        let a = r.param("a", t);
        r.param("b", t);
        let e = r.use_(a);
        r.finish(e, t)
    };
    let g = m.add("helper", relax(helper));
    m.add("main", relax(caller_of(g)));
    assert_has(&errors(verify_module(&m)), "call to `cls.helper` passes 1 argument, expected 2");
}

#[test]
fn missing_type() {
    let mut r = RB::new();
    let t = r.tensor(&[D::C(4)]);
    let x = r.param("x", t);
    r.block(false);
    let (a, b) = (r.use_(x), r.use_(x));
    let call = r.op_call("relax.add", vec![a, b], vec![], t);
    r.f.expr_ty.set(call, None);
    let y = r.bind("y", call, t);
    let e = r.use_(y);
    let f = r.finish(e, t);
    let (m, _) = module(vec![("main", relax(f))]);
    assert_has(&errors(verify_module(&m)), "a call to `R.add` has no type");
}

#[test]
fn if_branch_vars_are_not_visible_after() {
    let mut r = RB::new();
    let t = r.tensor(&[D::C(4)]);
    let x = r.param("x", t);
    let bt = r.ty(TyData::Prim { dtype: DataType::BOOL, value: None });
    let c = r.param("c", bt);
    // then branch: inner = x; result inner
    let ex = r.use_(x);
    let inner = r.bind("inner", ex, t);
    let ei = r.use_(inner);
    let then_branch = r.take_seq(ei);
    let ex2 = r.use_(x);
    let else_branch = r.seq(vec![], ex2);
    let cond = r.use_(c);
    let iff = r.expr(ExprData::If { cond, then_branch, else_branch }, Some(t));
    r.block(false);
    let sel = r.bind("sel", iff, t);
    let late = r.use_(inner);
    r.bind("late", late, t);
    let e = r.use_(sel);
    let f = r.finish(e, t);
    let (m, _) = module(vec![("main", relax(f))]);
    let msgs = errors(verify_module(&m));
    assert_has(&msgs, "variable `inner` is used outside the `if` branch that defines it");
    assert_eq!(msgs.len(), 1, "{msgs:#?}");
}

#[test]
fn local_function_sees_outer_scope_and_itself() {
    let mut r = RB::new();
    let t = r.tensor(&[D::C(4)]);
    let x = r.param("x", t);
    r.block(false);
    let callable = r.ty(TyData::Callable { params: Some(vec![t]), ret: t, pure: true });
    let fvar = r.f.add_var("f", callable, false);
    // def f(a): b = f(a) (recursion); c = x (outer scope); return b
    let a = r.f.add_var("a", t, false);
    let rec = r.use_(fvar);
    let ea = r.use_(a);
    let call = r.call(rec, vec![ea], vec![], t);
    let b_var = r.f.add_var("b", t, false);
    let ex = r.use_(x);
    let c_var = r.f.add_var("c", t, false);
    let blk = r.f.blocks.push(relax_ir::BlockData {
        dataflow: false,
        bindings: vec![
            relax_ir::Binding { var: b_var, value: call, kind: BindingKind::Value },
            relax_ir::Binding { var: c_var, value: ex, kind: BindingKind::Value },
        ],
    });
    let eb = r.use_(b_var);
    let body = r.seq(vec![blk], eb);
    let node = FunctionNode { params: vec![a], ret: t, body, attrs: Default::default(), pure: true };
    let fexpr = r.expr(ExprData::Function(Box::new(node)), Some(callable));
    r.rebind(fvar, fexpr);
    let ef = r.use_(fvar);
    let ex2 = r.use_(x);
    let call2 = r.call(ef, vec![ex2], vec![], t);
    let y = r.bind("y", call2, t);
    // `b` is local to `f`.
    let eb2 = r.use_(b_var);
    r.bind("z", eb2, t);
    let ey = r.use_(y);
    let f = r.finish(ey, t);
    let (m, _) = module(vec![("main", relax(f))]);
    let msgs = errors(verify_module(&m));
    assert_has(&msgs, "variable `b` is used outside the local function that defines it");
    assert_eq!(msgs.len(), 1, "{msgs:#?}");
}

#[test]
fn get_item_index_in_range() {
    let mut r = RB::new();
    let t = r.tensor(&[D::C(4)]);
    let x = r.param("x", t);
    r.block(false);
    let (a, b) = (r.use_(x), r.use_(x));
    let tup = r.tuple(vec![a, b]);
    let tt = r.f.ty_of(tup).unwrap();
    let tv = r.bind("t", tup, tt);
    let et = r.use_(tv);
    let item = r.expr(ExprData::GetItem { tuple: et, index: 2 }, Some(t));
    let y = r.bind("y", item, t);
    let e = r.use_(y);
    let f = r.finish(e, t);
    let (m, _) = module(vec![("main", relax(f))]);
    assert_has(&errors(verify_module(&m)), "tuple index 2 is out of range for variable `t` with 2 fields");
}

#[test]
fn match_cast_kind() {
    let mut r = RB::new();
    let t = r.tensor(&[D::C(4)]);
    let x = r.param("x", t);
    r.block(false);
    let sh = r.ty(TyData::Shape { values: None, ndim: 1 });
    let e = r.use_(x);
    let y = r.match_cast("y", e, sh);
    let ey = r.use_(y);
    let f = r.finish(ey, sh);
    let (m, _) = module(vec![("main", relax(f))]);
    assert_has(
        &errors(verify_module(&m)),
        "expected a `R.match_cast` type of the value's kind `R.Tensor`, found `R.Shape(ndim=1)`",
    );
}

#[test]
fn match_cast_variable_has_the_cast_type() {
    // The text annotates the variable with the cast's type, so a variable of another type
    // (left by a pass) would print text that does not read back.
    let mut r = RB::new();
    let t = r.tensor(&[D::C(4)]);
    let x = r.param("x", t);
    r.block(false);
    let any = r.ty(TyData::tensor_ndim(1, DataType::FLOAT32));
    let e = r.use_(x);
    let y = r.match_cast("y", e, any);
    r.f.vars[y].ty = t;
    let ey = r.use_(y);
    let f = r.finish(ey, t);
    let (m, _) = module(vec![("main", relax(f))]);
    assert_has(
        &errors(verify_module(&m)),
        "match cast variable `y` has type `R.Tensor((4,), dtype=\"float32\")`, not the type it casts to, `R.Tensor(dtype=\"float32\", ndim=1)`",
    );
}

#[test]
fn single_function_form_allows_unresolved_callees() {
    let mut m = Module::new();
    m.form = ModuleForm::SingleFunction;
    let ext = m.add("tir_exp", Func::Unresolved);
    let mut r = RB::new();
    let t = r.tensor(&[D::C(4)]);
    let x = r.param("x", t);
    let out = r.param("out", t);
    r.block(false);
    let void = r.void();
    let callee = r.global(ext);
    let (a, b) = (r.use_(x), r.use_(out));
    let call = r.call(callee, vec![a, b], vec![], void);
    r.bind("_", call, void);
    let e = r.use_(out);
    m.add("main", relax(r.finish(e, t)));
    assert_ok(&m);
    m.form = ModuleForm::Module;
    assert_has(&errors(verify_module(&m)), "global `tir_exp` is referenced but never defined");
}

#[test]
fn large_function_verifies_quickly() {
    let mut r = RB::new();
    let n = r.sym("n");
    let t = r.tensor(&[D::S(n), D::C(4)]);
    let x = r.param("x", t);
    r.block(true);
    let mut prev = x;
    for i in 0..10_000 {
        let (a, b) = (r.use_(prev), r.use_(x));
        let call = r.op_call("relax.add", vec![a, b], vec![], t);
        prev = r.bind_df(&format!("lv{i}"), call, t, i + 1 < 10_000);
    }
    let e = r.use_(prev);
    let f = r.finish(e, t);
    let (m, _) = module(vec![("main", relax(f))]);
    let start = std::time::Instant::now();
    assert_ok(&m);
    let took = start.elapsed();
    assert!(took.as_secs_f64() < 2.0, "verifying 10,000 bindings took {took:?}");
}

#[test]
fn errors_have_spans_and_diagnostics() {
    let m = module_with_main(|g| {
        let mut r = main_calling(g);
        let lv = r.f.vars.iter().find(|(_, d)| d.name == "lv").map(|(v, _)| v).unwrap();
        r.block(false);
        let e = r.use_(lv);
        let t = r.f.vars[lv].ty;
        let late = r.bind("late", e, t);
        r.f.spans.vars.set(late, relax_ir::Span::new(100, 120));
        r.f.spans.func = relax_ir::Span::new(0, 10);
        finish_main(r, "late")
    });
    let es = verify_module(&m).unwrap_err();
    let e = es.iter().find(|e| e.message.contains("outside its dataflow block")).unwrap();
    assert!(matches!(e.entity, Entity::Expr(_)));
    // The use has no span of its own: the enclosing binding's span is used.
    assert_eq!(e.span(&m), relax_ir::Span::new(100, 120));
    let d = e.to_diagnostic(&m);
    assert!(d.is_error());
    assert_eq!(d.message, e.message);
    assert!(!d.notes.is_empty());
}

#[test]
fn global_symbol_must_match() {
    let mut f = impure_helper();
    f.func.attrs.set("global_symbol", AttrValue::Str("other".into()));
    let (m, _) = module(vec![("helper", relax(f))]);
    assert_has(&errors(verify_module(&m)), "expected `global_symbol` of `helper` to be `helper`, found `other`");
}
