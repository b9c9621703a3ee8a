//! The fallback for ops without a reference kernel: run the op's lowering.
//!
//! The call is copied alone into a scratch module: a function `main` whose parameters are
//! the tensor arguments with their actual (static) shapes, and whose one binding calls
//! the op with the same attributes; shape and prim arguments become constants. Type
//! inference types it, the interpreter's [`OpLowering`] (the tools give `legalize-ops`)
//! rewrites it (into a `call_tir`, a constant or a packed call), and a fresh interpreter
//! without kernels runs it. Lowered modules are cached by op, attributes and argument
//! signature.

use std::collections::HashMap;
use std::rc::Rc;

use relax_ir::arith::Analyzer;
use relax_ir::op::OpRef;
use relax_ir::{
    BlockData, Call, Expr, ExprData, Func, FunctionNode, Module, PrimExpr, RelaxFunction, SymVar, Ty, TyData,
};

use crate::error::{RunError, RunResult};
use crate::lowering::OpLowering;
use crate::relax::{Frame, Interpreter, Options};
use crate::value::Value;

/// How an argument appears in the scratch call.
fn signature(v: &Value, out: &mut String) {
    match v {
        Value::Tensor(t) => out.push_str(&format!("T{}{:?};", t.dtype, t.shape)),
        Value::Shape(s) => out.push_str(&format!("S{s:?};")),
        Value::Prim(p) => out.push_str(&format!("P{p:?};")),
        Value::Str(s) => out.push_str(&format!("s{s:?};")),
        Value::DType(d) => out.push_str(&format!("D{d};")),
        Value::Tuple(f) => {
            out.push('(');
            for x in f.iter() {
                signature(x, out);
            }
            out.push_str(");");
        }
        other => out.push_str(other.kind()),
    }
}

/// Builds the scratch expression of one argument value.
fn build_arg(f: &mut RelaxFunction, v: &Value, params: &mut Vec<(relax_ir::Var, Value)>) -> RunResult<Expr> {
    Ok(match v {
        Value::Tensor(t) => {
            let dims: Vec<PrimExpr> = t.shape.iter().map(|&d| f.pool.i64(d)).collect();
            let ty = f.pool.intern_ty(TyData::tensor(dims, t.dtype));
            let name = format!("p{}", params.len());
            let var = f.add_var(name, ty, false);
            params.push((var, v.clone()));
            f.use_var(var)
        }
        Value::Shape(s) => {
            let dims: Vec<PrimExpr> = s.iter().map(|&d| f.pool.i64(d)).collect();
            f.add_expr(ExprData::Shape(dims), None)
        }
        Value::Prim(p) => {
            let e = match p {
                crate::Scalar::Int(x, t) => f.pool.int(*t, *x),
                crate::Scalar::Float(x, t) => f.pool.float(*t, *x),
            };
            f.add_expr(ExprData::Prim(e), None)
        }
        Value::Str(s) => f.add_expr(ExprData::Str(s.clone()), None),
        Value::DType(d) => f.add_expr(ExprData::DType(*d), None),
        Value::Tuple(fields) => {
            let mut es = Vec::new();
            for x in fields.iter() {
                es.push(build_arg(f, x, params)?);
            }
            f.add_tuple(es, None)
        }
        other => return Err(RunError::new(format!("cannot legalize a call with {} as an argument", other.kind()))),
    })
}

/// Builds and legalizes the scratch module of a call.
fn scratch(
    caller: &Frame<'_>,
    call: &Call,
    op: &OpRef,
    args: &[Value],
    lowering: &dyn OpLowering,
) -> RunResult<(Module, Vec<Value>)> {
    let mut f = RelaxFunction::new();
    let object = f.pool.intern_ty(TyData::Object);
    let mut params = Vec::new();
    let mut call_args = Vec::new();
    for a in args {
        call_args.push(build_arg(&mut f, a, &mut params)?);
    }
    // `sinfo_args` mention the caller's symbolic variables: substitute their values.
    let mut map: HashMap<SymVar, PrimExpr> = HashMap::new();
    for (v, x) in caller.syms.bound() {
        let dt = caller.f.pool.vars[v].dtype;
        map.insert(v, f.pool.int(dt, x));
    }
    let sinfo: Vec<Ty> = call.sinfo_args.iter().map(|&t| f.pool.import_ty(&caller.f.pool, t, &mut map)).collect();
    let callee = f.add_expr(ExprData::Op(op.clone()), None);
    let value = f.add_call(callee, call_args, call.attrs.clone(), sinfo, None);
    let out = f.add_var("out", object, false);
    let block = f.blocks.push(BlockData {
        dataflow: false,
        bindings: vec![relax_ir::Binding { var: out, value, kind: relax_ir::BindingKind::Value }],
    });
    let body = f.use_var(out);
    f.func = FunctionNode {
        params: params.iter().map(|(v, _)| *v).collect(),
        ret: object,
        body: f.add_seq(vec![block], body),
        attrs: Default::default(),
        pure: true,
    };
    let mut m = Module::new();
    let g = m.add("main", Func::Relax(Box::new(f)));
    {
        let f = m.relax(g).expect("just added").clone();
        let mut f = f;
        relax_ir::infer::retype_function(&mut f, Some(&m), &Analyzer::new())
            .map_err(|errs| RunError::new(errs.first().map_or(String::new(), |(_, e)| e.message.clone())))?;
        f.func.ret = f.vars[out].ty;
        m.globals[g].func = Func::Relax(Box::new(f));
    }
    lowering.lower(&mut m);
    let f = m.relax(g).expect("main");
    if let ExprData::Call(c) = &f.exprs[value]
        && matches!(f.exprs[c.callee], ExprData::Op(ref o) if o == op)
    {
        return Err(RunError::new(format!(
            "the op `R.{}` has no reference kernel, and legalize-ops cannot lower it for these arguments",
            op.name().strip_prefix("relax.").unwrap_or(op.name())
        )));
    }
    Ok((m, params.into_iter().map(|(_, v)| v).collect()))
}

/// Runs an op call through its legalization.
pub fn run<'m>(
    interp: &Interpreter<'m>,
    fr: &mut Frame<'m>,
    _e: Expr,
    call: &'m Call,
    name: &str,
    args: Vec<Value>,
) -> RunResult<Value> {
    let ExprData::Op(op) = &fr.f.exprs[call.callee] else {
        return Err(RunError::new(format!("`{name}` is not an op")));
    };
    let Some(lowering) = interp.lowering else {
        return Err(RunError::new(format!(
            "the op `R.{}` has no reference kernel, and the interpreter was given no lowering",
            name.strip_prefix("relax.").unwrap_or(name)
        )));
    };
    let mut key = format!("{name}|{:?}|", call.attrs);
    for a in &args {
        signature(a, &mut key);
    }
    for &t in &call.sinfo_args {
        key.push_str(&relax_ir::printer::print_ty_in(fr.f, t));
    }
    for (v, x) in fr.syms.bound() {
        key.push_str(&format!("|{}={x}", relax_entity::EntityRef::index(v)));
    }
    let cached = interp.legalized.borrow().get(&key).cloned();
    let m = match cached {
        Some(m) => m,
        None => {
            let (m, _) = scratch(fr, call, op, &args, lowering)?;
            let m = Rc::new(m);
            interp.legalized.borrow_mut().insert(key, m.clone());
            m
        }
    };
    let mut tensors = Vec::new();
    collect_tensors(&args, &mut tensors);
    let mut inner = Interpreter::with_options(&m, Options { kernels: false, check_results: false });
    inner.lowering = Some(lowering);
    let r = inner.run("main", tensors);
    interp.printed.borrow_mut().push_str(&inner.printed.borrow());
    r
}

fn collect_tensors(args: &[Value], out: &mut Vec<Value>) {
    for a in args {
        match a {
            Value::Tensor(_) => out.push(a.clone()),
            Value::Tuple(f) => collect_tensors(f, out),
            _ => {}
        }
    }
}
