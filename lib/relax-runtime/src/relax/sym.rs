//! Symbolic variables of a Relax function at run time: their values, and the evaluation
//! of the TIR expressions of shapes and prim values over them.

use relax_entity::EntityRef;
use relax_ir::Intrinsic;
use relax_ir::{PrimExpr, PrimExprData, SymVar};

use crate::error::{RunError, RunResult};
use crate::scalar::{Scalar, binary};
use crate::tir::grow;

/// Values of a function's symbolic variables, by variable index.
#[derive(Clone, Debug, Default)]
pub struct Syms {
    vals: Vec<Option<i64>>,
}

impl Syms {
    /// No variable bound yet, for a pool of `n` variables.
    pub fn new(n: usize) -> Syms {
        Syms { vals: vec![None; n] }
    }
    /// The value of `v`, if bound.
    pub fn get(&self, v: SymVar) -> Option<i64> {
        self.vals.get(v.index()).copied().flatten()
    }
    /// Binds `v`.
    pub fn set(&mut self, v: SymVar, x: i64) {
        if v.index() >= self.vals.len() {
            self.vals.resize(v.index() + 1, None);
        }
        self.vals[v.index()] = Some(x);
    }
    /// Every bound variable and its value.
    pub fn bound(&self) -> impl Iterator<Item = (SymVar, i64)> + '_ {
        self.vals.iter().enumerate().filter_map(|(i, v)| v.map(|x| (SymVar::new(i), x)))
    }
}

/// Evaluates a symbolic expression of `pool` (no buffer loads). `name` names variables
/// in messages.
pub fn eval_sym(pool: &relax_ir::Pool, e: PrimExpr, syms: &Syms) -> RunResult<Scalar> {
    grow(|| eval_inner(pool, e, syms))
}

fn eval_inner(pool: &relax_ir::Pool, e: PrimExpr, syms: &Syms) -> RunResult<Scalar> {
    let d = pool.prim(e);
    if let Some(s) = crate::tir::literal(d) {
        return Ok(s);
    }
    match d {
        PrimExprData::Var(v) => match syms.get(*v) {
            Some(x) => Ok(Scalar::int(pool.vars[*v].dtype, x)),
            None => Err(RunError::new(format!("symbolic variable `{}` has no value", pool.vars[*v].name))),
        },
        PrimExprData::Bin(op, a, b) => {
            let x = eval_sym(pool, *a, syms)?;
            let y = eval_sym(pool, *b, syms)?;
            binary(*op, x, y).map_err(RunError::new)
        }
        PrimExprData::Not(a) => Ok(Scalar::bool(!eval_sym(pool, *a, syms)?.is_true())),
        PrimExprData::Cast(t, a) => Ok(eval_sym(pool, *a, syms)?.cast(*t)),
        PrimExprData::Select(c, t, f) => {
            if eval_sym(pool, *c, syms)?.is_true() {
                eval_sym(pool, *t, syms)
            } else {
                eval_sym(pool, *f, syms)
            }
        }
        PrimExprData::Let { var, value, body } => {
            let v = eval_sym(pool, *value, syms)?;
            let mut inner = syms.clone();
            inner.set(*var, v.as_i64());
            eval_sym(pool, *body, &inner)
        }
        PrimExprData::Call { dtype, op, args } => {
            let Some(intrinsic) = op.intrinsic() else {
                return Err(RunError::new(format!("the op `{op}` cannot be evaluated here")));
            };
            if intrinsic == Intrinsic::IfThenElse && args.len() == 3 {
                return if eval_sym(pool, args[0], syms)?.is_true() {
                    eval_sym(pool, args[1], syms)
                } else {
                    eval_sym(pool, args[2], syms)
                };
            }
            let mut vals = Vec::new();
            for &a in args {
                vals.push(eval_sym(pool, a, syms)?);
            }
            if intrinsic == Intrinsic::Likely && vals.len() == 1 {
                return Ok(vals[0]);
            }
            crate::tir::intrinsic(intrinsic, *dtype, &vals).ok_or_else(|| {
                RunError::new(format!("the intrinsic `T.{}` cannot be evaluated here", intrinsic.name()))
            })
        }
        _ => Err(RunError::new("this expression cannot be evaluated in a Relax function")),
    }
}

/// Evaluates a dim: an int64 expression.
pub fn eval_dim(pool: &relax_ir::Pool, e: PrimExpr, syms: &Syms) -> RunResult<i64> {
    Ok(eval_sym(pool, e, syms)?.as_i64())
}
