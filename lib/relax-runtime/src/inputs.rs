//! Inputs of an entry function: values given by the caller (a 1-d integer tensor given
//! for an `R.Shape` parameter is a shape, a one-element tensor for an `R.Prim` parameter a
//! scalar), `--sym` values of symbolic variables, and deterministic pseudo-random values
//! for the rest (`--seed`).
//!
//! Random values follow each parameter's annotation: floats uniform in `[-1, 1)` (rounded
//! to the dtype), integers in `[1, 4]` (no division by zero, small indices), bools either
//! way; shapes from the dims, with symbolic variables taken from `--sym` or from the
//! given inputs; a tensor over 1 GiB is an error. Each parameter draws from its own stream (the seed and its position),
//! so giving one parameter by file does not change the others.

use relax_ir::{DataType, Global, Module, Pool, SymVar, TensorShape, Ty, TyData};

use crate::check::Checker;
use crate::error::{RunError, RunResult};
use crate::relax::sym::{Syms, eval_dim};
use crate::scalar::Scalar;
use crate::value::{Tensor, Value, numel};

/// The largest tensor `--seed` fills (1 GiB): a larger one would not fit in memory or take
/// minutes to draw, so it is an error.
const MAX_RANDOM_BYTES: u64 = 1 << 30;

/// A small deterministic generator (SplitMix64).
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator for stream `stream` of seed `seed`.
    pub fn new(seed: u64, stream: u64) -> Rng {
        let mut r = Rng(seed ^ stream.wrapping_mul(0xA076_1D64_78BD_642F));
        r.next_u64();
        r
    }
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// A double uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// An integer uniform in `[lo, hi]`.
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next_u64() % (hi - lo + 1) as u64) as i64
    }
    /// A random scalar of `dt`.
    pub fn scalar(&mut self, dt: DataType) -> Scalar {
        if dt.is_float() {
            Scalar::float(dt, self.unit() * 2.0 - 1.0)
        } else if dt.is_bool() {
            Scalar::bool(self.next_u64() & 1 == 1)
        } else {
            Scalar::int(dt, self.range(1, 4))
        }
    }
    /// A random tensor.
    pub fn tensor(&mut self, shape: &[i64], dt: DataType) -> Tensor {
        let vals: Vec<Scalar> = (0..numel(shape)).map(|_| self.scalar(dt)).collect();
        Tensor::from_scalars(shape, dt, vals)
    }
}

/// What inputs are made for: a function's name, the pool its types live in, and its
/// parameters' names and types (a module's Relax function, or a function of an
/// executable, which has no IR).
pub struct Signature<'a> {
    /// The function's name.
    pub name: &'a str,
    /// The pool of its types and symbolic variables.
    pub pool: &'a Pool,
    /// Each parameter's name and type.
    pub params: Vec<(&'a str, Ty)>,
}

impl<'a> Signature<'a> {
    /// The signature of Relax function `g` of `m`.
    pub fn of_global(m: &'a Module, g: Global) -> RunResult<Signature<'a>> {
        let name = &m.globals[g].name;
        let f = m.relax(g).ok_or_else(|| RunError::new(format!("`{name}` is not a Relax function")))?;
        let params = f.func.params.iter().map(|&p| (f.vars[p].name.as_str(), f.vars[p].ty)).collect();
        Ok(Signature { name, pool: &f.pool, params })
    }
}

/// The symbolic variable of `f` named `name`.
fn find_sym(f: &Signature<'_>, name: &str) -> Option<SymVar> {
    f.pool.vars.iter().find(|(_, d)| d.name == name).map(|(v, _)| v)
}

/// A dim below zero (from a negative `--sym`) is an error naming the parameter.
fn check_dims(pname: &str, dims: &[i64]) -> RunResult<()> {
    match dims.iter().position(|&d| d < 0) {
        Some(i) => Err(RunError::new(format!(
            "parameter `{pname}`: dim {i} would be {} (check `--sym`): dims must be 0 or more",
            dims[i]
        ))),
        None => Ok(()),
    }
}

fn random_value(f: &Signature<'_>, ty: Ty, syms: &Syms, rng: &mut Rng, pname: &str) -> RunResult<Value> {
    let unbound = |e| {
        let mut vs = Vec::new();
        f.pool.collect_vars(e, &mut vs);
        match vs.into_iter().find(|&v| syms.get(v).is_none()) {
            Some(v) => {
                let n = &f.pool.vars[v].name;
                RunError::new(format!(
                    "parameter `{pname}`: the symbolic variable `{n}` has no value; give it with `--sym {n}=INT` or give the parameter with `--input`"
                ))
            }
            None => RunError::new(format!("parameter `{pname}`: a dim cannot be evaluated")),
        }
    };
    match f.pool.ty(ty) {
        TyData::Tensor { shape: TensorShape::Dims(dims), dtype, .. } => {
            if dtype.is_void() {
                return Err(RunError::new(format!("parameter `{pname}` has no dtype: give it with `--input`")));
            }
            let mut s = Vec::with_capacity(dims.len());
            for &d in dims {
                s.push(eval_dim(f.pool, d, syms).map_err(|_| unbound(d))?);
            }
            check_dims(pname, &s)?;
            let bytes = s.iter().try_fold(dtype.bytes(), |n, &d| n.checked_mul(d.max(0) as u64));
            if bytes.is_none_or(|b| b > MAX_RANDOM_BYTES) {
                return Err(RunError::new(format!(
                    "parameter `{pname}` of shape {s:?} is too large for a random input (over {MAX_RANDOM_BYTES} bytes): give it with `--input`"
                )));
            }
            Ok(Value::Tensor(rng.tensor(&s, *dtype)))
        }
        TyData::Tensor { .. } => {
            Err(RunError::new(format!("parameter `{pname}` has no known shape: give it with `--input`")))
        }
        TyData::Shape { values: Some(dims), .. } => {
            let mut s = Vec::new();
            for &d in dims {
                s.push(eval_dim(f.pool, d, syms).map_err(|_| unbound(d))?);
            }
            check_dims(pname, &s)?;
            Ok(Value::Shape(s))
        }
        TyData::Prim { dtype, value: Some(v) } => {
            let x = crate::relax::sym::eval_sym(f.pool, *v, syms).map_err(|_| unbound(*v))?;
            Ok(Value::Prim(x.cast(*dtype)))
        }
        TyData::Prim { dtype, value: None } => {
            let dt = if dtype.is_void() { DataType::INT64 } else { *dtype };
            Ok(Value::Prim(if dt.is_int() { Scalar::int(dt, rng.range(1, 4)) } else { rng.scalar(dt) }))
        }
        TyData::Tuple(fields) => {
            let mut vs = Vec::new();
            for &t in fields {
                vs.push(random_value(f, t, syms, rng, pname)?);
            }
            Ok(Value::tuple(vs))
        }
        _ => Err(RunError::new(format!("parameter `{pname}` cannot be made up: give it with `--input`"))),
    }
}

/// The arguments of function `g`: `given[i]` where given, else random values (with a
/// seed) from the annotations. `sym` gives symbolic variables by name.
pub fn make_inputs(
    m: &Module,
    g: Global,
    given: &[Option<Value>],
    sym: &[(String, i64)],
    seed: Option<u64>,
) -> RunResult<Vec<Value>> {
    make_inputs_for(&Signature::of_global(m, g)?, given, sym, seed)
}

/// [`make_inputs`] for a function given by its signature.
pub fn make_inputs_for(
    f: &Signature<'_>,
    given: &[Option<Value>],
    sym: &[(String, i64)],
    seed: Option<u64>,
) -> RunResult<Vec<Value>> {
    let name = f.name;
    let params = &f.params;
    if given.len() > params.len() {
        return Err(RunError::new(format!(
            "`{name}` takes {} parameters, but {} inputs were given",
            params.len(),
            given.len()
        )));
    }
    // A given tensor for a shape parameter is its dims; a one-element tensor for a prim
    // parameter its value (`.npy` files hold only tensors).
    let given: Vec<Option<Value>> = given
        .iter()
        .zip(params)
        .map(|(v, &(_, ty))| match (v, f.pool.ty(ty)) {
            (Some(Value::Tensor(t)), TyData::Shape { .. }) if t.shape.len() == 1 && !t.dtype.is_float() => {
                Some(Value::Shape(t.scalars().into_iter().map(Scalar::as_i64).collect()))
            }
            (Some(Value::Tensor(t)), TyData::Prim { dtype, .. }) if t.numel() == 1 => {
                let dt = if dtype.is_void() { t.dtype } else { *dtype };
                Some(Value::Prim(t.get(0).cast(dt)))
            }
            (v, _) => v.clone(),
        })
        .collect();
    let given = &given[..];
    let mut syms = Syms::new(f.pool.vars.len());
    for (i, (n, v)) in sym.iter().enumerate() {
        let Some(s) = find_sym(f, n) else {
            let names = f.pool.vars.iter().map(|(_, d)| d.name.as_str());
            let hint = relax_ir::diag::suggest(n, names).map_or(String::new(), |m| format!("; did you mean `{m}`?"));
            return Err(RunError::new(format!("`--sym {n}={v}`: `{name}` has no symbolic variable `{n}`{hint}")));
        };
        if sym[..i].iter().any(|(m, _)| m == n) {
            return Err(RunError::new(format!("`--sym {n}` is given twice")));
        }
        // A variable the parameters do not mention gets its value in the body (a
        // `match_cast`): a value given for it would be ignored.
        let mut in_params = Vec::new();
        params.iter().for_each(|&(_, ty)| f.pool.ty_vars(ty, &mut in_params));
        if !in_params.contains(&s) {
            return Err(RunError::new(format!(
                "`--sym {n}={v}`: no parameter of `{name}` has `{n}` in its type (it gets its value in the function's body)"
            )));
        }
        syms.set(s, *v);
    }
    // Bind variables from the given inputs; a given input that contradicts `--sym` is an
    // error here (other mismatches are reported by the call's own check).
    {
        let nothing = |_| None;
        let mut ck = Checker::new(f.pool, &mut syms, &nothing);
        ck.item_name = "--sym".to_string();
        for (i, (&(_, ty), v)) in params.iter().zip(given).enumerate() {
            if let Some(v) = v {
                // A kind, dtype or rank mismatch is reported by the call's own check.
                let _ = ck.match_value(i, ty, v, "");
            }
        }
        if let Err(m) = ck.finish()
            && sym.iter().any(|(n, _)| m.detail.contains(&format!("`{n}`")))
        {
            return Err(RunError::new(format!(
                "parameter `{}` of `{name}` does not agree with `--sym`: {}",
                params[m.item].0, m.detail
            )));
        }
    }
    let mut out = Vec::with_capacity(params.len());
    for (i, &(pname, ty)) in params.iter().enumerate() {
        match given.get(i).cloned().flatten() {
            Some(v) => out.push(v),
            None => {
                let Some(seed) = seed else {
                    return Err(RunError::new(format!(
                        "parameter `{pname}` of `{name}` has no input: give it with `--input` or use `--seed`"
                    )));
                };
                let mut rng = Rng::new(seed, i as u64);
                out.push(random_value(f, ty, &syms, &mut rng, pname)?);
            }
        }
    }
    Ok(out)
}
