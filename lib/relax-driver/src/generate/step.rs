//! The two step functions of a model, `prefill` and `decode`: which parameters are the
//! tokens, the weights and the state, the upper bounds of their dims, and the result of
//! a step.

use relax_ir::{AttrValue, DataType, Global, Module, PrimExprData, RelaxFunction, TyData};
use relax_runtime::{Scalar, Tensor, Value};

use super::weights::Weights;

/// What each parameter of a step function receives.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Role {
    Tokens,
    Weight,
    State,
}

/// One of the two functions, with its parameter roles.
pub(crate) struct StepFn<'m> {
    pub(crate) name: &'static str,
    pub(crate) g: Global,
    pub(crate) f: &'m RelaxFunction,
    roles: Vec<Role>,
    /// The weights, in parameter order.
    weights: Vec<Value>,
    /// The token tensor's dtype and rank.
    token_dtype: DataType,
    token_rank: usize,
    /// Upper bounds of bare symbolic dims of the parameters: (param, dim, variable, bound).
    bounds: Vec<(usize, usize, String, i64)>,
}

impl<'m> StepFn<'m> {
    pub(crate) fn new(m: &'m Module, name: &'static str, weights: &mut Weights<'_>) -> Result<StepFn<'m>, String> {
        let g = m
            .lookup(name)
            .ok_or_else(|| format!("`--generate` needs a function `{name}` (docs/llama.md); the module has none"))?;
        let f = m.relax(g).ok_or_else(|| format!("`{name}` is not a Relax function"))?;
        let params = &f.func.params;
        let Some(&p0) = params.first() else {
            return Err(format!("`{name}` has no parameters: its first must be the token ids"));
        };
        let (token_dtype, token_rank) = match f.pool.ty(f.vars[p0].ty) {
            TyData::Tensor { dtype, ndim, .. } if dtype.is_int() && (*ndim == 1 || *ndim == 2) => {
                (*dtype, *ndim as usize)
            }
            _ => {
                return Err(format!(
                    "parameter `{}` of `{name}` must be the token ids, an integer tensor of rank 1 or 2",
                    f.vars[p0].name
                ));
            }
        };
        let mut roles = vec![Role::Tokens];
        let mut ws = Vec::new();
        for &p in &params[1..] {
            match weights.get(name, f, p)? {
                Some(v) => {
                    roles.push(Role::Weight);
                    ws.push(v);
                }
                None => roles.push(Role::State),
            }
        }
        let bounds = param_bounds(f);
        Ok(StepFn { name, g, f, roles, weights: ws, token_dtype, token_rank, bounds })
    }

    pub(crate) fn state_count(&self) -> usize {
        self.roles.iter().filter(|&&r| r == Role::State).count()
    }

    /// The names of the state parameters.
    pub(crate) fn state_names(&self) -> Vec<&str> {
        self.f
            .func
            .params
            .iter()
            .zip(&self.roles)
            .filter(|(_, r)| **r == Role::State)
            .map(|(&p, _)| self.f.vars[p].name.as_str())
            .collect()
    }

    /// The arguments of a call.
    pub(crate) fn args(&self, tokens: &[i64], state: Vec<Value>) -> Vec<Value> {
        let n = tokens.len() as i64;
        let shape: Vec<i64> = if self.token_rank == 2 { vec![1, n] } else { vec![n] };
        let ids =
            Tensor::from_scalars(&shape, self.token_dtype, tokens.iter().map(|&t| Scalar::int(self.token_dtype, t)));
        let mut weights = self.weights.iter();
        let mut state = state.into_iter();
        self.roles
            .iter()
            .map(|r| match r {
                Role::Tokens => Value::Tensor(ids.clone()),
                Role::Weight => weights.next().expect("one weight per weight role").clone(),
                Role::State => state.next().expect("one state value per state role"),
            })
            .collect()
    }

    /// Checks the arguments' dims against the function's `tir_var_upper_bound`.
    pub(crate) fn check_bounds(&self, args: &[Value]) -> Result<(), String> {
        for (p, d, var, ub) in &self.bounds {
            let dims = match args.get(*p) {
                Some(Value::Tensor(t)) => &t.shape,
                Some(Value::Shape(s)) => s,
                _ => continue,
            };
            if let Some(&dim) = dims.get(*d)
                && dim > *ub
            {
                return Err(format!(
                    "`{}` would run with `{var}` = {dim}, above its `tir_var_upper_bound` of {ub}: use a shorter prompt or fewer new tokens",
                    self.name
                ));
            }
        }
        Ok(())
    }
}

/// (param, dim, variable name, upper bound) for each dim of a tensor or shape parameter
/// that is a bare variable named in `tir_var_upper_bound`.
fn param_bounds(f: &RelaxFunction) -> Vec<(usize, usize, String, i64)> {
    let Some(AttrValue::Dict(items)) = f.func.attrs.get("tir_var_upper_bound") else { return Vec::new() };
    let mut out = Vec::new();
    for (i, &p) in f.func.params.iter().enumerate() {
        let Some(dims) = f.pool.ty(f.vars[p].ty).dims() else { continue };
        for (d, &e) in dims.iter().enumerate() {
            let PrimExprData::Var(s) = f.pool.prim(e) else { continue };
            let name = &f.pool.vars[*s].name;
            let bound = items.iter().find(|(k, _)| k == name).and_then(|(_, v)| match v {
                AttrValue::Int(x) | AttrValue::PrimInt(_, x) => Some(*x),
                _ => None,
            });
            if let Some(ub) = bound {
                out.push((i, d, name.clone(), ub));
            }
        }
    }
    out
}

/// The vocabulary size: the last dim of the logits in `prefill`'s declared result, when
/// static.
pub(crate) fn vocab_size(f: &RelaxFunction) -> Option<i64> {
    let TyData::Tuple(fields) = f.pool.ty(f.func.ret) else { return None };
    let dims = f.pool.ty(*fields.get(1)?).dims()?;
    f.pool.as_int(*dims.last()?)
}

/// The result of one step: the next token, its logits and the state.
pub(crate) struct StepOut {
    pub(crate) token: i64,
    pub(crate) logits: Tensor,
    pub(crate) state: Vec<Value>,
}

/// Splits a step's result; the token must be in `0..vocab` (it goes into the next step's
/// embedding lookup, which compiled kernels do not bounds-check).
pub(crate) fn split_result(name: &str, v: Value, states: usize, vocab: Option<i64>) -> Result<StepOut, String> {
    let expect = format!("`{name}` must return a tuple (next token, logits, {states} state values)");
    let Value::Tuple(fields) = v else { return Err(format!("{expect}, but it returned {}", v.describe())) };
    if fields.len() != 2 + states {
        return Err(format!("{expect}, but it returned {} values", fields.len()));
    }
    let token = match &fields[0] {
        Value::Tensor(t) if t.numel() == 1 && !t.dtype.is_float() => t.get(0).as_i64(),
        other => {
            return Err(format!(
                "{expect}; the next token is {}, not an integer tensor of one element",
                other.describe()
            ));
        }
    };
    let logits = match &fields[1] {
        Value::Tensor(t) => t.clone(),
        other => return Err(format!("{expect}; the logits are {}, not a tensor", other.describe())),
    };
    if token < 0 || vocab.is_some_and(|n| token >= n) {
        let range = vocab.map_or(String::new(), |n| format!(" of {n} tokens"));
        return Err(format!("`{name}` returned token {token}, outside the vocabulary{range}"));
    }
    Ok(StepOut { token, logits, state: fields[2..].to_vec() })
}
