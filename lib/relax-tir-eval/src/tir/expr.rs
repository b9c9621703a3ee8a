//! Evaluation of TIR expressions.

use relax_entity::EntityRef;
use relax_ir::{DataType, Intrinsic, PrimExpr, PrimExprData, TirOp};

use super::{Frame, grow};
use crate::error::{RunError, RunResult};
use crate::math;
use crate::scalar::{Scalar, binary, round_float};
use crate::value::{load, store};

/// The value of a literal.
pub fn literal(data: &PrimExprData) -> Option<Scalar> {
    Some(match data {
        PrimExprData::Int(dt, v) if dt.is_float() => Scalar::Float(round_float(*dt, *v as f64), *dt),
        PrimExprData::Int(dt, v) => Scalar::Int(*v, *dt),
        PrimExprData::Float(dt, v) if dt.is_float() => Scalar::Float(round_float(*dt, v.get()), *dt),
        PrimExprData::Float(dt, v) => Scalar::float(*dt, v.get()),
        _ => return None,
    })
}

impl<'a> Frame<'a> {
    /// Evaluates an expression.
    pub fn eval(&mut self, e: PrimExpr) -> RunResult<Scalar> {
        grow(|| self.eval_inner(e))
    }

    fn eval_inner(&mut self, e: PrimExpr) -> RunResult<Scalar> {
        // The function outlives the frame's borrow: nodes are read in place, not cloned.
        let f: &'a relax_ir::PrimFunc = self.f;
        match f.pool.prim(e) {
            d @ (PrimExprData::Int(..) | PrimExprData::Float(..)) => Ok(literal(d).expect("a literal")),
            PrimExprData::Var(v) => self.vars[v.index()].ok_or_else(|| {
                RunError::new(format!(
                    "PrimFunc `{}`: variable `{}` is used before it has a value",
                    self.name,
                    self.var_name(*v)
                ))
            }),
            PrimExprData::Load { buffer, indices, dtype } => {
                if dtype.is_vector() {
                    return Err(self.unsupported("vector loads"));
                }
                let mut idx = Vec::with_capacity(indices.len());
                for &i in indices {
                    idx.push(self.eval(i)?.as_i64());
                }
                let (view, at) = self.address(*buffer, &idx)?;
                let b = view.data.borrow();
                Ok(load(&b, at, view.dtype))
            }
            &PrimExprData::Bin(op, a, b) => {
                let x = self.eval(a)?;
                if op == relax_ir::BinOp::And && !x.is_true() {
                    return Ok(Scalar::bool(false));
                }
                if op == relax_ir::BinOp::Or && x.is_true() {
                    return Ok(Scalar::bool(true));
                }
                let y = self.eval(b)?;
                binary(op, x, y).map_err(|m| RunError::new(format!("PrimFunc `{}`: {m}", self.name)))
            }
            &PrimExprData::Not(a) => Ok(Scalar::bool(!self.eval(a)?.is_true())),
            &PrimExprData::Cast(t, a) => Ok(self.eval(a)?.cast(t)),
            &PrimExprData::Select(c, t, e) => {
                if self.eval(c)?.is_true() {
                    self.eval(t)
                } else {
                    self.eval(e)
                }
            }
            &PrimExprData::Let { var, value, body } => {
                let v = self.eval(value)?;
                self.set_var(var, v);
                self.eval(body)
            }
            PrimExprData::Call { dtype, op, args } => match op {
                TirOp::Intrinsic(i) => self.call(*dtype, *i, args),
                TirOp::Other(name) => Err(RunError::new(format!(
                    "PrimFunc `{}`: the op `{name}` is not supported by the interpreter",
                    self.name
                ))),
            },
            PrimExprData::Str(_) => Err(self.unsupported("string values")),
            PrimExprData::Ramp { .. } | PrimExprData::Broadcast { .. } => Err(self.unsupported("vector expressions")),
        }
    }

    fn unsupported(&self, what: &str) -> RunError {
        RunError::new(format!("PrimFunc `{}`: {what} are not supported by the interpreter", self.name))
    }

    fn call(&mut self, dtype: DataType, op: Intrinsic, args: &[PrimExpr]) -> RunResult<Scalar> {
        let arity = |n: usize| -> RunResult<()> {
            if args.len() == n {
                Ok(())
            } else {
                Err(RunError::new(format!("intrinsic `T.{}` takes {n} arguments, got {}", op.name(), args.len())))
            }
        };
        match op {
            Intrinsic::IfThenElse => {
                arity(3)?;
                return if self.eval(args[0])?.is_true() { self.eval(args[1]) } else { self.eval(args[2]) };
            }
            Intrinsic::Likely | Intrinsic::Assume => {
                arity(1)?;
                return self.eval(args[0]);
            }
            Intrinsic::TvmStorageSync => {
                return Ok(Scalar::Int(0, DataType::INT32));
            }
            Intrinsic::Ret => {
                arity(1)?;
                let v = self.eval(args[0])?;
                self.ret = Some(v);
                return Ok(v);
            }
            Intrinsic::Reinterpret => {
                arity(1)?;
                let v = self.eval(args[0])?;
                let mut bytes = [0u8; 8];
                store(&mut bytes, 0, v.dtype(), v);
                return Ok(load(&bytes, 0, dtype));
            }
            _ => {}
        }
        let mut vals = Vec::with_capacity(args.len());
        for &a in args {
            vals.push(self.eval(a)?);
        }
        intrinsic(op, dtype, &vals).ok_or_else(|| {
            RunError::new(format!(
                "PrimFunc `{}`: the intrinsic `T.{}` with {} arguments is not supported by the interpreter",
                self.name,
                op.name(),
                args.len()
            ))
        })
    }
}

/// Evaluates a pure intrinsic on evaluated arguments; `None` when it is not a pure
/// function of its arguments of this arity.
pub fn intrinsic(op: Intrinsic, dtype: DataType, vals: &[Scalar]) -> Option<Scalar> {
    match vals {
        [x] => {
            let x = *x;
            if let Some(b) = math::float_class(op, x.as_f64()) {
                return Some(Scalar::bool(x.is_float() && b || (op == Intrinsic::Isfinite && !x.is_float())));
            }
            if !x.is_float() {
                match op {
                    Intrinsic::Abs | Intrinsic::Fabs => return Some(Scalar::int(x.dtype(), x.as_i128().abs() as i64)),
                    Intrinsic::BitwiseNot => return Some(Scalar::int(x.dtype(), !x.as_i64())),
                    Intrinsic::Popcount => {
                        return Some(Scalar::int(dtype, (x.as_i64() as u64 & mask(x.dtype())).count_ones() as i64));
                    }
                    Intrinsic::Floor | Intrinsic::Ceil | Intrinsic::Round | Intrinsic::Nearbyint | Intrinsic::Trunc => {
                        return Some(x);
                    }
                    _ => {}
                }
            }
            let t = if dtype.is_float() { dtype } else { x.dtype() };
            let t = if t.is_float() { t } else { DataType::FLOAT32 };
            math::float_unary(op, t, x.cast(t).as_f64())
        }
        [a, b] => {
            let (a, b) = (*a, *b);
            if let Some(r) = math::int_binary(op, a, b) {
                if !a.is_float() {
                    return Some(r);
                }
            }
            let t = if dtype.is_float() { dtype } else { a.dtype() };
            if !t.is_float() {
                return None;
            }
            math::float_binary(op, t, a.cast(t).as_f64(), b.cast(t).as_f64())
        }
        _ => None,
    }
}

fn mask(dt: DataType) -> u64 {
    if dt.bits >= 64 { u64::MAX } else { (1u64 << dt.bits) - 1 }
}
