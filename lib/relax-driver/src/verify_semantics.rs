//! `relax-opt --verify-semantics`: every pass's input and output run in the interpreter on
//! the same seeded inputs, and must agree (docs/passes.md, "Checking passes").
//!
//! Before each pass the module is kept; after it, every Relax function present in both
//! runs on both sides (each side's TIR lowered first, as `relax-run` does): inputs from
//! the function's annotations and `--seed`, its symbolic variables 2, 3, 4, ... (at most a
//! `tir_var_upper_bound`). Results are compared exactly for integers and booleans and
//! within a tolerance per float dtype ([`close`]). The first difference stops the checks
//! and is reported naming the pass, the function, the symbolic values and the first
//! differing element. A function whose input the interpreter rejects before the pass (an
//! index drawn out of range, an unsupported op) is not compared; one that ran before and
//! fails after is a difference.
//!
//! Limits: functions with effects or non-deterministic ops (random sampling, printing)
//! compare what they return only; a pass that renames or removes a function leaves it
//! unchecked; only the interpreter runs (engines are compared by `relax-run` and the
//! test suite).

use relax_ir::{DataType, Module, Span};
use relax_pass::instrument::PassInstrumentation;
use relax_runtime::{Interpreter, Scalar, Value, inputs};

/// The instrumentation.
pub struct VerifySemantics {
    seed: u64,
    before: Option<Module>,
    /// The first difference found, as a message.
    pub failure: Option<String>,
    /// Functions compared, over all passes.
    pub compared: usize,
}

impl VerifySemantics {
    /// Checks with inputs drawn from `seed`.
    pub fn new(seed: u64) -> VerifySemantics {
        VerifySemantics { seed, before: None, failure: None, compared: 0 }
    }

    fn check(&mut self, pass: &str, before: &Module, after: &Module) -> Option<String> {
        let mut before = before.clone();
        let mut after = after.clone();
        if crate::pipeline::lower_tir(&mut before).is_err() {
            return None;
        }
        if let Err(d) = crate::pipeline::lower_tir(&mut after) {
            let msg = d.first().map_or_else(String::new, |d| d.message.clone());
            return Some(format!("after pass `{pass}`, the module's kernels cannot be lowered: {msg}"));
        }
        for (g, gd) in before.globals.iter() {
            let Some(f) = before.relax(g) else { continue };
            let Some(g2) = after.lookup(&gd.name).filter(|&g2| after.relax(g2).is_some()) else { continue };
            let syms = sym_values(f);
            let Ok(args) = inputs::make_inputs(&before, g, &[], &syms, Some(self.seed)) else { continue };
            let run = |m: &Module, g| {
                Interpreter::new(m).with_lowering(&crate::lowering::Legalize).call_global(
                    g,
                    args.iter().map(copy).collect(),
                    Span::NONE,
                )
            };
            let Ok(want) = run(&before, g) else { continue };
            self.compared += 1;
            let with = if syms.is_empty() {
                String::new()
            } else {
                format!(" (with {})", syms.iter().map(|(n, v)| format!("{n}={v}")).collect::<Vec<_>>().join(", "))
            };
            let what = format!("pass `{pass}` changed the result of `{}`{with}", gd.name);
            match run(&after, g2) {
                Err(e) => return Some(format!("{what}: it ran before the pass and fails after it: {}", e.message)),
                Ok(got) => {
                    if let Err(d) = compare(&want, &got, "result") {
                        return Some(format!("{what}: {d}"));
                    }
                }
            }
        }
        None
    }
}

impl PassInstrumentation for VerifySemantics {
    fn before_pass(&mut self, _pass: &str, _scope: &str, m: &Module) {
        if self.failure.is_none() {
            self.before = Some(m.clone());
        }
    }

    fn after_pass(&mut self, pass: &str, _scope: &str, m: &Module, changed: bool) {
        let Some(before) = self.before.take() else { return };
        if self.failure.is_none() && changed {
            self.failure = self.check(pass, &before, m);
        }
    }
}

/// Values for the symbolic variables the parameters of `f` mention: 2, 3, 4, 2, ... in
/// order of first mention, each at most its `tir_var_upper_bound`.
fn sym_values(f: &relax_ir::RelaxFunction) -> Vec<(String, i64)> {
    let mut vars = Vec::new();
    for &p in &f.func.params {
        f.pool.ty_vars(f.vars[p].ty, &mut vars);
    }
    let mut out: Vec<(String, i64)> = Vec::new();
    for v in vars {
        let name = f.pool.vars[v].name.clone();
        if out.iter().any(|(n, _)| *n == name) {
            continue;
        }
        let mut x = 2 + (out.len() as i64 % 3);
        if let Some(ub) = upper_bound(f, &name) {
            x = x.min(ub.max(1));
        }
        out.push((name, x));
    }
    out
}

/// The function's `tir_var_upper_bound` for `name`, if any.
fn upper_bound(f: &relax_ir::RelaxFunction, name: &str) -> Option<i64> {
    let relax_ir::AttrValue::Dict(items) = f.func.attrs.get("tir_var_upper_bound")? else { return None };
    items.iter().find(|(k, _)| k == name).and_then(|(_, v)| v.as_int())
}

/// A copy of `v` that shares no tensor storage with it.
fn copy(v: &Value) -> Value {
    match v {
        Value::Tensor(t) => Value::Tensor(t.deep_copy()),
        Value::Tuple(f) => Value::tuple(f.iter().map(copy).collect()),
        other => other.clone(),
    }
}

/// Whether two floats of `dt` agree: NaN with NaN, else within `atol + rtol * |want|`
/// (float32 1e-5 and 1e-6, float64 1e-9 and 1e-12, 16-bit floats 1e-2 and 1e-3).
pub fn close(dt: DataType, want: f64, got: f64) -> bool {
    if want.is_nan() || got.is_nan() {
        return want.is_nan() && got.is_nan();
    }
    if want == got {
        return true;
    }
    let (rtol, atol) = match dt.bits {
        64 => (1e-9, 1e-12),
        32 => (1e-5, 1e-6),
        _ => (1e-2, 1e-3),
    };
    (want - got).abs() <= atol + rtol * want.abs()
}

/// Compares two results; `Err` names the first difference under `path`.
fn compare(want: &Value, got: &Value, path: &str) -> Result<(), String> {
    match (want, got) {
        (Value::Tensor(a), Value::Tensor(b)) => {
            if a.shape != b.shape || a.dtype != b.dtype {
                return Err(format!("{path}: {} before, {} after", want.describe(), got.describe()));
            }
            for (i, (x, y)) in a.scalars().into_iter().zip(b.scalars()).enumerate() {
                if !same(a.dtype, x, y) {
                    return Err(format!("{path}: element {i}: {} before, {} after", x.as_f64(), y.as_f64()));
                }
            }
            Ok(())
        }
        (Value::Tuple(a), Value::Tuple(b)) if a.len() == b.len() => {
            a.iter().zip(b.iter()).enumerate().try_for_each(|(i, (x, y))| compare(x, y, &format!("{path}[{i}]")))
        }
        (Value::Shape(a), Value::Shape(b)) if a == b => Ok(()),
        (Value::Prim(a), Value::Prim(b)) if same(a.dtype(), *a, *b) => Ok(()),
        _ if want.kind() != got.kind() => Err(format!("{path}: {} before, {} after", want.describe(), got.describe())),
        (Value::Tensor(_) | Value::Tuple(_) | Value::Shape(_) | Value::Prim(_), _) => {
            Err(format!("{path}: {} before, {} after", want.describe(), got.describe()))
        }
        _ => Ok(()),
    }
}

fn same(dt: DataType, x: Scalar, y: Scalar) -> bool {
    if dt.is_float() { close(dt, x.as_f64(), y.as_f64()) } else { x.as_i128() == y.as_i128() }
}
