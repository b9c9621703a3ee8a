//! Variable bounds from function attributes, and the byte sizes of allocations
//! (`algorithms.md` §5.1, §5.2).
//!
//! * `tir_var_upper_bound: {name: ub}` with an optional `tir_var_lower_bound: {name: lb}`
//!   (default 0) bounds the variable to `[lb, ub]`; only variables of the function's
//!   signature (parameter and result types) are bound.
//! * A lower bound without an upper bound, and `tir_non_negative_var: [names]`, only say
//!   the variable is non-negative, which the analyzer assumes of every shape variable
//!   anyway: such a size is never treated as static.
//! * Values that are not integers, an upper bound below the lower bound, and a negative
//!   upper bound are errors; a name that is not a variable of the signature is a warning.

use std::collections::HashMap;

use relax_ir::arith::{Analyzer, Atom, Interval};
use relax_ir::diag::Diagnostic;
use relax_ir::{AttrValue, BinOp, DataType, PrimExpr, RelaxFunction, SymVar};

/// `tir_var_upper_bound`.
pub const UPPER: &str = "tir_var_upper_bound";
/// `tir_var_lower_bound`.
pub const LOWER: &str = "tir_var_lower_bound";
/// `tir_non_negative_var`.
pub const NON_NEGATIVE: &str = "tir_non_negative_var";

/// The bounds of one function's signature variables.
#[derive(Clone, Debug, Default)]
pub struct Bounds {
    /// `[lb, ub]` of each upper-bounded variable.
    pub ranges: HashMap<SymVar, (i64, i64)>,
}

impl Bounds {
    /// An analyzer that knows the bounds (every other variable is non-negative).
    pub fn analyzer(&self) -> Analyzer {
        let mut an = Analyzer::new();
        for (&v, &(lo, hi)) in &self.ranges {
            an.bind(v, Interval::new(lo, hi));
        }
        an
    }
}

/// The symbolic variables of the signature (parameter types, then the result type).
pub fn signature_vars(f: &RelaxFunction) -> Vec<SymVar> {
    let mut out = Vec::new();
    for &p in &f.func.params {
        f.pool.ty_vars(f.vars[p].ty, &mut out);
    }
    f.pool.ty_vars(f.func.ret, &mut out);
    out
}

/// Reads and checks the bound attributes of `f` (named `name` in messages). Errors are
/// returned; warnings are appended to `warnings`.
pub fn read_bounds(f: &RelaxFunction, name: &str, warnings: &mut Vec<Diagnostic>) -> Result<Bounds, Vec<Diagnostic>> {
    let span = f.spans.func;
    let mut errors = Vec::new();
    let mut int_map = |key: &str| -> Vec<(String, i64)> {
        let Some(v) = f.func.attrs.get(key) else { return Vec::new() };
        let AttrValue::Dict(items) = v else {
            errors.push(Diagnostic::error(
                span,
                format!("`{key}` of `{name}` must map variable names to integers, as in {{\"n\": 1024}}"),
            ));
            return Vec::new();
        };
        let mut out = Vec::new();
        for (k, v) in items {
            match v {
                AttrValue::Int(x) | AttrValue::PrimInt(_, x) => out.push((k.clone(), *x)),
                _ => errors.push(Diagnostic::error(
                    span,
                    format!("`{key}` of `{name}` gives `{k}` a value that is not an integer"),
                )),
            }
        }
        out
    };
    let upper = int_map(UPPER);
    let lower = int_map(LOWER);
    let mut non_negative = Vec::new();
    if let Some(v) = f.func.attrs.get(NON_NEGATIVE) {
        match v.as_list() {
            Some(items) if items.iter().all(|x| x.as_str().is_some()) => {
                non_negative.extend(items.iter().filter_map(|x| x.as_str().map(str::to_string)));
            }
            _ => errors.push(Diagnostic::error(
                span,
                format!("`{NON_NEGATIVE}` of `{name}` must be a list of variable names, as in [\"n\"]"),
            )),
        }
    }
    let sig = signature_vars(f);
    let by_name = |n: &str| sig.iter().copied().find(|&v| f.pool.vars[v].name == n);
    let mut bounds = Bounds::default();
    for (key, names) in [
        (UPPER, upper.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>()),
        (LOWER, lower.iter().map(|(k, _)| k.clone()).collect()),
        (NON_NEGATIVE, non_negative.clone()),
    ] {
        for n in names {
            if by_name(&n).is_none() {
                warnings.push(Diagnostic::warning(
                    span,
                    format!("`{key}` of `{name}` names `{n}`, which is not a symbolic variable of its signature; it is ignored"),
                ));
            }
        }
    }
    for (n, ub) in &upper {
        let Some(v) = by_name(n) else { continue };
        let lb = lower.iter().find(|(k, _)| k == n).map_or(0, |&(_, x)| x);
        if *ub < 0 {
            errors.push(Diagnostic::error(span, format!("`{UPPER}` of `{name}` gives `{n}` the negative bound {ub}")));
        } else if lb > *ub {
            errors.push(Diagnostic::error(
                span,
                format!("the bounds of `{n}` in `{name}` are empty: lower bound {lb} is above upper bound {ub}"),
            ));
        } else {
            bounds.ranges.insert(v, (lb, *ub));
        }
    }
    if errors.is_empty() { Ok(bounds) } else { Err(errors) }
}

/// The upper bound of one dim: a constant when the bounds give one; otherwise the dim
/// with every bounded variable replaced by the end of its range that maximises it, when
/// the dim is a polynomial with that monotonicity; otherwise the dim itself.
pub fn upper_bound_dim(f: &mut RelaxFunction, an: &Analyzer, bounds: &Bounds, dim: PrimExpr) -> PrimExpr {
    if let Some(hi) = an.bound(&f.pool, dim).hi {
        return f.pool.i64(hi);
    }
    let vars = f.pool.free_vars(dim);
    if !vars.iter().any(|v| bounds.ranges.contains_key(v)) {
        return dim;
    }
    let s = an.canonical(&f.pool, dim);
    let mut out = relax_ir::arith::Sum::constant(s.konst);
    for (mono, &c) in &s.terms {
        let mut term = relax_ir::arith::Sum::constant(c);
        for a in mono {
            let Atom::Var(v) = a else { return dim };
            let factor = match bounds.ranges.get(v) {
                Some(&(lo, hi)) => relax_ir::arith::Sum::constant(if c > 0 { hi } else { lo }),
                None => relax_ir::arith::Sum::atom(Atom::Var(*v)),
            };
            let Some(t) = term.checked_mul(&factor) else { return dim };
            term = t;
        }
        let Some(o) = out.checked_add(&term) else { return dim };
        out = o;
    }
    relax_ir::arith::build::from_sum(&mut f.pool, &out, DataType::INT64)
}

/// The bytes of a planned allocation of `dims` elements of `dtype`, TVM's way:
/// `C * (d_i * d_j ...)` where `C` is the element size times the constant dims and the
/// product runs over the symbolic dims in order (folding constructors, not simplified).
/// `None` when the constant part overflows.
pub fn token_bytes(f: &mut RelaxFunction, dims: &[PrimExpr], dtype: DataType) -> Option<PrimExpr> {
    let mut coeff = dtype.bytes() as i64;
    let mut size = f.pool.i64(1);
    for &d in dims {
        match f.pool.as_int(d) {
            Some(v) => coeff = coeff.checked_mul(v)?,
            None => size = f.pool.binary(BinOp::Mul, size, d).ok()?,
        }
    }
    let c = f.pool.i64(coeff);
    f.pool.binary(BinOp::Mul, c, size).ok()
}

/// The exact bytes of a tensor, as `LowerAllocTensor` builds them:
/// `elem_bytes * d0 * d1 ...` (folding constructors, not simplified).
pub fn exact_bytes(pool: &mut relax_ir::Pool, dims: &[PrimExpr], dtype: DataType) -> PrimExpr {
    let mut acc = pool.i64(dtype.bytes() as i64);
    for &d in dims {
        acc = pool.binary(BinOp::Mul, acc, d).unwrap_or(acc);
    }
    acc
}
