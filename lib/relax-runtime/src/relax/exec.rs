//! Bindings, expressions and the run-time checks of parameters, results and
//! `R.match_cast`.

use std::rc::Rc;

use relax_ir::{BindingKind, ConstPayload, Expr, ExprData, FunctionNode, Seq, Ty, TyData, Var};

use super::{Frame, Interpreter, Slot};
use crate::check::Checker;
use crate::error::{RunError, RunResult};
use crate::relax::sym::eval_sym;
use crate::scalar::Scalar;
use crate::value::{Captured, FuncValue, Tensor, Value};

/// Checks arguments against a function's parameter annotations, binding its symbolic
/// variables. The error names the parameter, the annotation and the actual value, at
/// the parameter's span.
pub(crate) fn check_params(fr: &mut Frame<'_>, node: &FunctionNode, args: &[Value], fname: &str) -> RunResult<()> {
    let f = fr.f;
    let vars_snapshot: Vec<Slot> = fr.vars.clone();
    let lookup = move |v: Var| match vars_snapshot.get(relax_entity::EntityRef::index(v)) {
        Some(Slot::Val(Value::Shape(s))) => Some(s.clone()),
        _ => None,
    };
    // A shape parameter can type a later tensor parameter: look at the arguments too.
    let params = node.params.clone();
    let args_for_lookup: Vec<Value> = args.to_vec();
    let shape_of = move |v: Var| {
        params.iter().position(|&p| p == v).and_then(|i| match &args_for_lookup[i] {
            Value::Shape(s) => Some(s.clone()),
            _ => None,
        })
    };
    let both = |v: Var| shape_of(v).or_else(|| lookup(v));
    let mut ck = Checker::new(&f.pool, &mut fr.syms, &both);
    let mut result = Ok(());
    for (i, (&p, a)) in node.params.iter().zip(args).enumerate() {
        ck.item_name = format!("parameter `{}`", f.vars[p].name);
        if let Err(m) = ck.match_value(i, f.vars[p].ty, a, "") {
            result = Err(m);
            break;
        }
    }
    if result.is_ok() {
        result = ck.finish();
    }
    result.map_err(|m| {
        let p = node.params[m.item];
        RunError::at(
            *f.spans.vars.get(p),
            format!(
                "parameter `{}` of `{fname}`: expected {}, got {}",
                f.vars[p].name,
                relax_ir::printer::print_ty_in(f, f.vars[p].ty),
                args[m.item].describe()
            ),
        )
        .with_note(m.detail)
    })
}

/// Checks a function's result against its declared type.
pub(crate) fn check_result(fr: &mut Frame<'_>, ret: Ty, out: &Value, fname: &str) -> RunResult<()> {
    let f = fr.f;
    let snapshot = fr.vars.clone();
    let lookup = move |v: Var| match snapshot.get(relax_entity::EntityRef::index(v)) {
        Some(Slot::Val(Value::Shape(s))) => Some(s.clone()),
        _ => None,
    };
    let mut ck = Checker::new(&f.pool, &mut fr.syms, &lookup);
    ck.item_name = "the result".to_string();
    let r = ck.match_value(0, ret, out, "").and_then(|()| ck.finish());
    r.map_err(|m| {
        RunError::at(
            f.spans.func,
            format!(
                "the result of `{fname}` does not match its declared type: expected {}, got {}",
                relax_ir::printer::print_ty_in(f, ret),
                out.describe()
            ),
        )
        .with_note(m.detail)
    })
}

impl<'m> Interpreter<'m> {
    /// Runs a sequence's bindings and returns the value of its result.
    pub(crate) fn exec_seq(&self, fr: &mut Frame<'m>, seq: Seq) -> RunResult<Value> {
        let f = fr.f;
        let seq = f.seq(seq);
        for &b in &seq.blocks {
            for bd in &f.blocks[b].bindings {
                let span = fr.var_span(bd.var);
                let v = self.eval(fr, bd.value, Some(bd.var)).map_err(|e| e.or_at(span))?;
                if let BindingKind::MatchCast(ty) = &bd.kind {
                    self.match_cast(fr, *ty, &v, bd.var)?;
                }
                fr.set(bd.var, v);
            }
        }
        self.eval(fr, seq.body, None).map_err(|e| e.or_at(*f.spans.exprs.get(seq.body)))
    }

    fn match_cast(&self, fr: &mut Frame<'m>, ty: Ty, v: &Value, var: Var) -> RunResult<()> {
        let f = fr.f;
        let snapshot = fr.vars.clone();
        let lookup = move |x: Var| match snapshot.get(relax_entity::EntityRef::index(x)) {
            Some(Slot::Val(Value::Shape(s))) => Some(s.clone()),
            _ => None,
        };
        let mut ck = Checker::new(&f.pool, &mut fr.syms, &lookup);
        ck.item_name = format!("`{}`", f.vars[var].name);
        let r = ck.match_value(0, ty, v, "").and_then(|()| ck.finish());
        r.map_err(|m| {
            RunError::at(
                fr.var_span(var),
                format!(
                    "match_cast of `{}` failed: expected {}, got {}",
                    f.vars[var].name,
                    relax_ir::printer::print_ty_in(f, ty),
                    v.describe()
                ),
            )
            .with_note(m.detail)
        })
    }

    /// Evaluates an expression; `bound` is the variable the value is bound to, if any.
    pub(crate) fn eval(&self, fr: &mut Frame<'m>, e: Expr, bound: Option<Var>) -> RunResult<Value> {
        let f = fr.f;
        match &f.exprs[e] {
            ExprData::Var(v) => fr.get(*v),
            ExprData::Global(g) => Ok(Value::Func(Rc::new(FuncValue::Global(*g)))),
            ExprData::Op(op) => Err(RunError::new(format!("the op `{}` is used as a value", op.name()))),
            ExprData::ExternFunc(name) => Ok(Value::Func(Rc::new(FuncValue::Packed(name.clone())))),
            ExprData::Call(call) => self.eval_call(fr, e, call),
            ExprData::Tuple(fields) => {
                let fields = f.list(*fields);
                let mut vs = Vec::with_capacity(fields.len());
                for &x in fields {
                    vs.push(self.eval(fr, x, None)?);
                }
                Ok(Value::tuple(vs))
            }
            ExprData::GetItem { tuple, index } => match self.eval(fr, *tuple, None)? {
                Value::Tuple(fs) => fs.get(*index as usize).cloned().ok_or_else(|| {
                    RunError::new(format!("tuple index {index} out of range for a tuple of {} fields", fs.len()))
                }),
                other => Err(RunError::new(format!("`[{index}]` applied to {}", other.kind()))),
            },
            ExprData::Shape(dims) => {
                let mut s = Vec::with_capacity(dims.len());
                for &d in dims {
                    s.push(eval_sym(&f.pool, d, &fr.syms)?.as_i64());
                }
                Ok(Value::Shape(s))
            }
            ExprData::Prim(p) => Ok(Value::Prim(eval_sym(&f.pool, *p, &fr.syms)?)),
            ExprData::Str(s) => Ok(Value::Str(s.clone())),
            ExprData::DType(d) => Ok(Value::DType(*d)),
            ExprData::Const(c) => constant(self.module, *c),
            ExprData::If { cond, then_branch, else_branch } => {
                let c = match self.eval(fr, *cond, None)? {
                    Value::Prim(s) => s.is_true(),
                    Value::Tensor(t) if t.numel() == 1 => t.get(0).is_true(),
                    other => return Err(RunError::new(format!("the condition of `if` is {}", other.describe()))),
                };
                let branch = if c { *then_branch } else { *else_branch };
                self.exec_seq(fr, branch)
            }
            ExprData::Function(_) => {
                let mut env = Captured::default();
                for (i, s) in fr.vars.iter().enumerate() {
                    if let Slot::Val(v) = s {
                        env.vars.insert(relax_entity::EntityRef::new(i), v.clone());
                    }
                }
                env.syms = fr.syms.bound().collect();
                Ok(Value::Func(Rc::new(FuncValue::Local { owner: fr.g, node: e, self_var: bound, env: Rc::new(env) })))
            }
        }
    }
}

/// The value of a module constant (a fresh copy, so in-place kernels cannot change it).
pub fn constant(m: &relax_ir::Module, c: relax_ir::Constant) -> RunResult<Value> {
    let cd = &m.constants[c];
    let ConstPayload::Data(bytes) = &cd.payload else {
        return Err(RunError::new(format!(
            "constant `metadata[\"relax.expr.Constant\"][{}]` has no data (TVM's printer omits it)",
            relax_entity::EntityRef::index(c)
        )));
    };
    let shape = cd.shape.clone().unwrap_or_default();
    if !crate::scalar::is_supported_dtype(cd.dtype) {
        return Err(RunError::new(format!("constants of dtype {} are not supported", cd.dtype)));
    }
    let t = Tensor::zeros(&shape, cd.dtype);
    if bytes.len() != t.nbytes() {
        return Err(RunError::new(format!(
            "constant {} holds {} bytes, but its shape needs {}",
            relax_entity::EntityRef::index(c),
            bytes.len(),
            t.nbytes()
        )));
    }
    t.data.borrow_mut().copy_from_slice(bytes);
    Ok(Value::Tensor(t))
}

/// A prim value's scalar, or a 0-d/1-element tensor's.
pub fn scalar_of(v: &Value) -> Option<Scalar> {
    match v {
        Value::Prim(s) => Some(*s),
        Value::Tensor(t) if t.numel() == 1 => Some(t.get(0)),
        _ => None,
    }
}

/// The type `ty` of function frame `fr` with all dims evaluated: for allocating outputs.
pub(crate) fn concrete_tensor(fr: &Frame<'_>, ty: Ty) -> RunResult<(Vec<i64>, relax_ir::DataType)> {
    let f = fr.f;
    match f.pool.ty(ty) {
        TyData::Tensor { shape: relax_ir::TensorShape::Dims(d), dtype, .. } => {
            let mut s = Vec::with_capacity(d.len());
            for &x in d {
                s.push(crate::relax::sym::eval_dim(&f.pool, x, &fr.syms)?);
            }
            if dtype.is_void() {
                return Err(RunError::new("an output type has no dtype"));
            }
            Ok((s, *dtype))
        }
        TyData::Tensor { shape: relax_ir::TensorShape::Var(v), dtype, .. } => match fr.get(*v)? {
            Value::Shape(s) => Ok((s, *dtype)),
            other => Err(RunError::new(format!("the shape of an output type is {}", other.describe()))),
        },
        _ => Err(RunError::new(format!(
            "cannot allocate an output of type {}: its shape is not known",
            relax_ir::printer::print_ty_in(f, ty)
        ))),
    }
}
