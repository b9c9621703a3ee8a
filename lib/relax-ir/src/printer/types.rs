//! Relax types (struct info), `text-format.md` §5.
//!
//! TVM 0.25 spellings: `R.Tensor((n, 4), dtype="float32")`, `R.Tensor(dtype="float32",
//! ndim=2)`, `R.Tensor` when nothing is known, `R.Tensor(s, dtype=...)` for a shape
//! variable, `vdevice="cuda:0:global"` last; `R.Shape([m, k])`, `R.Shape(ndim=2)` and
//! `R.Shape(ndim=-1)` (TVM prints the unknown rank explicitly); `R.Tuple(A, B)`, `R.Tuple`;
//! `R.Object`; `R.Prim("int64")`, `R.Prim(value=n)`; `R.Callable((A,), Ret, True)`, and
//! for opaque callables `R.Callable`, `R.Callable(ret=X)`, `R.Callable(purity=True)`.
//!
//! In the signature of a top-level function every dim or prim value that mentions a
//! symbolic variable is quoted as a string (`R.Tensor(("n", 4))`, `"m + n"`).

use super::literals::{quote, write_quoted};
use super::prim_expr::{Mode, Names, vars_of, write_prim};
use crate::entities::{PrimExpr, Ty};
use crate::pool::Pool;
use crate::ty::{TensorShape, TyData};

/// Deeper types print as `...` (types built by passes are never this deep).
const MAX_DEPTH: u32 = 256;

/// Options for printing a type.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TyOpts {
    /// How integers print.
    pub mode: Mode,
    /// Quote dims that mention variables (top-level signatures).
    pub quote_vars: bool,
}

/// Appends the type `t`.
pub(crate) fn write_ty(out: &mut String, pool: &Pool, t: Ty, opts: TyOpts, names: &mut dyn Names) {
    write_ty_depth(out, pool, t, opts, names, 0);
}

/// Appends a shape dim or prim value, quoted when `opts.quote_vars` and it mentions a var.
pub(crate) fn write_dim(out: &mut String, pool: &Pool, e: PrimExpr, opts: TyOpts, names: &mut dyn Names) {
    if opts.quote_vars && !vars_of(pool, e).is_empty() {
        let mut s = String::new();
        write_prim(&mut s, pool, e, opts.mode, names);
        write_quoted(out, &s);
    } else {
        write_prim(out, pool, e, opts.mode, names);
    }
}

fn write_ty_depth(out: &mut String, pool: &Pool, t: Ty, opts: TyOpts, names: &mut dyn Names, depth: u32) {
    if depth > MAX_DEPTH {
        out.push_str("...");
        return;
    }
    let Some(data) = pool.tys.get(t) else {
        out.push_str(&format!("<invalid {t:?}>"));
        return;
    };
    match data {
        TyData::Object => out.push_str("R.Object"),
        TyData::Prim { dtype, value } => match value {
            Some(v) => {
                out.push_str("R.Prim(value=");
                match pool.prims.get(*v) {
                    // A constant keeps its type (`R.Prim(value=T.int32(1))`).
                    Some(crate::prim::PrimExprData::Int(..)) if opts.mode == Mode::Relax => {
                        super::prim_expr::write_relax_scalar(out, pool, *v, names)
                    }
                    _ => write_dim(out, pool, *v, opts, names),
                }
                out.push(')');
            }
            None => {
                out.push_str("R.Prim(");
                out.push_str(&quote(&dtype.to_string()));
                out.push(')');
            }
        },
        TyData::Shape { values, ndim } => match values {
            Some(vs) => {
                out.push_str("R.Shape([");
                for (i, &v) in vs.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    write_dim(out, pool, v, opts, names);
                }
                out.push_str("])");
            }
            None => out.push_str(&format!("R.Shape(ndim={ndim})")),
        },
        TyData::Tensor { shape, dtype, ndim, vdevice } => {
            let mut args: Vec<String> = Vec::new();
            match shape {
                TensorShape::Dims(dims) => {
                    let mut s = String::from("(");
                    for (i, &d) in dims.iter().enumerate() {
                        if i > 0 {
                            s.push_str(", ");
                        }
                        write_dim(&mut s, pool, d, opts, names);
                    }
                    if dims.len() == 1 {
                        s.push(',');
                    }
                    s.push(')');
                    args.push(s);
                }
                TensorShape::Var(v) => {
                    let mut s = String::new();
                    names.relax_var(&mut s, *v);
                    args.push(s);
                }
                TensorShape::Unknown => {}
            }
            if !dtype.is_void() {
                args.push(format!("dtype={}", quote(&dtype.to_string())));
            }
            if matches!(shape, TensorShape::Unknown) && *ndim != -1 {
                args.push(format!("ndim={ndim}"));
            }
            if let Some(vd) = vdevice {
                args.push(format!("vdevice={}", quote(&format!("{}:{}:{}", vd.kind, vd.index, vd.scope))));
            }
            out.push_str("R.Tensor");
            if !args.is_empty() {
                out.push('(');
                out.push_str(&args.join(", "));
                out.push(')');
            }
        }
        TyData::Tuple(fields) => {
            out.push_str("R.Tuple");
            if !fields.is_empty() {
                out.push('(');
                for (i, &f) in fields.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    write_ty_depth(out, pool, f, opts, names, depth + 1);
                }
                out.push(')');
            }
        }
        TyData::Callable { params, ret, pure } => match params {
            Some(ps) => {
                out.push_str("R.Callable((");
                for (i, &p) in ps.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    write_ty_depth(out, pool, p, opts, names, depth + 1);
                }
                if ps.len() == 1 {
                    out.push(',');
                }
                out.push_str("), ");
                write_ty_depth(out, pool, *ret, opts, names, depth + 1);
                out.push_str(if *pure { ", True)" } else { ", False)" });
            }
            None => {
                let ret_is_object = matches!(pool.tys.get(*ret), Some(TyData::Object));
                out.push_str("R.Callable");
                if !ret_is_object || *pure {
                    out.push('(');
                    if !ret_is_object {
                        out.push_str("ret=");
                        write_ty_depth(out, pool, *ret, opts, names, depth + 1);
                    }
                    if *pure {
                        if !ret_is_object {
                            out.push_str(", ");
                        }
                        out.push_str("purity=True");
                    }
                    out.push(')');
                }
            }
        },
    }
}

/// True for the default type of an extern function: an opaque impure callable returning
/// `R.Object` (TVM then prints `R.ExternFunc("name")` without a type).
pub(crate) fn is_default_extern_ty(pool: &Pool, t: Ty) -> bool {
    match pool.tys.get(t) {
        Some(TyData::Callable { params: None, ret, pure: false }) => {
            matches!(pool.tys.get(*ret), Some(TyData::Object))
        }
        _ => false,
    }
}
