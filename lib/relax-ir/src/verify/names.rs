//! How verifier messages name things: globals (`cls.f`), ops (`R.add`), variables, buffers,
//! expression kinds, and a compact rendering of types (`R.Tensor((n, 4), dtype="float32")`).
//!
//! These helpers are only called on handles the handle check accepted, except the
//! `*_or_handle` forms, which fall back to the handle's debug name.

use crate::entities::{Buffer, Expr, Global, PrimExpr, SymVar, Ty, Var};
use crate::module::Module;
use crate::op::{OPS, OpRef};
use crate::pool::Pool;
use crate::prim::PrimExprData;
use crate::relax::{ExprData, RelaxFunction};
use crate::tir::PrimFunc;
use crate::ty::{TensorShape, TyData};

/// `cls.f` in module form, `f` in single-function form.
pub(super) fn global(m: &Module, g: Global) -> String {
    match m.globals.get(g) {
        Some(d) if m.is_single_function() => d.name.clone(),
        Some(d) => format!("cls.{}", d.name),
        None => format!("{g:?}"),
    }
}

/// `R.add` for `relax.add`.
pub(super) fn op(op: &OpRef) -> String {
    match op {
        OpRef::Known(id) if usize::from(id.0) < OPS.len() => format!("R.{}", id.def().text_name()),
        OpRef::Known(id) => format!("op{}", id.0),
        OpRef::Custom(n) => format!("R.{}", n.strip_prefix("relax.").unwrap_or(n)),
    }
}

/// The name hint of a Relax variable (its handle when the hint is empty).
pub(super) fn var(f: &RelaxFunction, v: Var) -> String {
    match f.vars.get(v) {
        Some(d) if !d.name.is_empty() => d.name.clone(),
        _ => format!("{v:?}"),
    }
}

/// The name hint of a TIR variable.
pub(super) fn sym(pool: &Pool, v: SymVar) -> String {
    match pool.vars.get(v) {
        Some(d) if !d.name.is_empty() => d.name.clone(),
        _ => format!("{v:?}"),
    }
}

/// The name hint of a buffer.
pub(super) fn buffer(f: &PrimFunc, b: Buffer) -> String {
    match f.buffers.get(b) {
        Some(d) if !d.name.is_empty() => d.name.clone(),
        _ => format!("{b:?}"),
    }
}

/// How a callee is named in messages: `R.add`, `cls.f`, `R.call_packed("f")`, `g`.
pub(super) fn callee(m: &Module, f: &RelaxFunction, e: Expr) -> String {
    match f.exprs.get(e) {
        Some(ExprData::Op(o)) => op(o),
        Some(ExprData::Global(g)) => global(m, *g),
        Some(ExprData::ExternFunc(s)) => format!("R.call_packed(\"{s}\")"),
        Some(ExprData::Var(v)) => var(f, *v),
        _ => format!("{e:?}"),
    }
}

/// A short description of an expression: `a call to `R.add``, `an `if``, `variable `x``.
pub(super) fn describe(m: &Module, f: &RelaxFunction, e: Expr) -> String {
    match f.exprs.get(e) {
        None => format!("expression `{e:?}`"),
        Some(d) => match d {
            ExprData::Var(v) => format!("variable `{}`", var(f, *v)),
            ExprData::Global(g) => format!("`{}`", global(m, *g)),
            ExprData::Op(o) => format!("operator `{}`", op(o)),
            ExprData::ExternFunc(s) => format!("`R.ExternFunc(\"{s}\")`"),
            ExprData::Call(c) => format!("a call to `{}`", callee(m, f, c.callee)),
            ExprData::Tuple(_) => "a tuple".to_string(),
            ExprData::GetItem { .. } => "a tuple item access".to_string(),
            ExprData::Shape(_) => "a shape value".to_string(),
            ExprData::Prim(_) => "a prim value".to_string(),
            ExprData::Str(_) => "a string".to_string(),
            ExprData::DType(_) => "a dtype".to_string(),
            ExprData::Const(_) => "a constant".to_string(),
            ExprData::If { .. } => "an `if`".to_string(),
            ExprData::Function(_) => "a local function".to_string(),
        },
    }
}

/// A TIR expression, briefly: literals, variables and arithmetic; anything deeper is `…`.
pub(super) fn prim(pool: &Pool, e: PrimExpr) -> String {
    let mut s = String::new();
    write_prim(pool, e, 3, &mut s);
    s
}

fn write_prim(pool: &Pool, e: PrimExpr, depth: u32, out: &mut String) {
    let Some(d) = pool.prims.get(e) else {
        out.push('?');
        return;
    };
    match d {
        PrimExprData::Int(_, v) => out.push_str(&v.to_string()),
        PrimExprData::Float(_, v) => out.push_str(&format!("{:?}", v.get())),
        PrimExprData::Var(v) => out.push_str(&sym(pool, *v)),
        PrimExprData::Str(s) => out.push_str(&format!("{s:?}")),
        PrimExprData::Bin(o, a, b) if depth > 0 => {
            let name = o.infix().map_or_else(|| o.node_name().to_string(), str::to_string);
            out.push('(');
            write_prim(pool, *a, depth - 1, out);
            out.push_str(&format!(" {name} "));
            write_prim(pool, *b, depth - 1, out);
            out.push(')');
        }
        _ => out.push('…'),
    }
}

/// A type, briefly, in the text format's spelling.
pub(super) fn ty(pool: &Pool, t: Ty) -> String {
    let mut s = String::new();
    write_ty(pool, t, 3, &mut s);
    s
}

fn write_ty(pool: &Pool, t: Ty, depth: u32, out: &mut String) {
    let Some(d) = pool.tys.get(t) else {
        out.push('?');
        return;
    };
    match d {
        TyData::Object => out.push_str("R.Object"),
        TyData::Prim { dtype, value: None } => out.push_str(&format!("R.Prim(\"{dtype}\")")),
        TyData::Prim { value: Some(v), .. } => out.push_str(&format!("R.Prim(value={})", prim(pool, *v))),
        TyData::Shape { values: Some(vs), .. } => {
            let dims: Vec<String> = vs.iter().map(|&v| prim(pool, v)).collect();
            out.push_str(&format!("R.Shape([{}])", dims.join(", ")));
        }
        TyData::Shape { values: None, ndim } => out.push_str(&format!("R.Shape(ndim={ndim})")),
        TyData::Tensor { shape, dtype, ndim, .. } => {
            let mut parts = Vec::new();
            match shape {
                TensorShape::Dims(ds) => {
                    let dims: Vec<String> = ds.iter().map(|&v| prim(pool, v)).collect();
                    let comma = if dims.len() == 1 { "," } else { "" };
                    parts.push(format!("({}{comma})", dims.join(", ")));
                }
                TensorShape::Var(v) => parts.push(format!("{v:?}")),
                TensorShape::Unknown => {}
            }
            if !dtype.is_void() {
                parts.push(format!("dtype=\"{dtype}\""));
            }
            if matches!(shape, TensorShape::Unknown) && *ndim >= 0 {
                parts.push(format!("ndim={ndim}"));
            }
            out.push_str(&format!("R.Tensor({})", parts.join(", ")));
        }
        TyData::Tuple(fields) if depth > 0 => {
            out.push_str("R.Tuple(");
            for (i, &f) in fields.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_ty(pool, f, depth - 1, out);
            }
            out.push(')');
        }
        TyData::Tuple(_) => out.push_str("R.Tuple(…)"),
        TyData::Callable { .. } => out.push_str("R.Callable"),
    }
}

/// The kind of a type, as a word for messages.
pub(super) fn ty_kind(pool: &Pool, t: Ty) -> &'static str {
    match pool.tys.get(t) {
        Some(TyData::Object) => "R.Object",
        Some(TyData::Prim { .. }) => "R.Prim",
        Some(TyData::Shape { .. }) => "R.Shape",
        Some(TyData::Tensor { .. }) => "R.Tensor",
        Some(TyData::Tuple(_)) => "R.Tuple",
        Some(TyData::Callable { .. }) => "R.Callable",
        None => "?",
    }
}
