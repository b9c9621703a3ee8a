//! What the interpreter's whole-suite comparisons (`differential.rs`, `jit.rs`) share: the
//! modules they run, seeded symbolic values, fresh argument copies, and the comparison of
//! two results with a per-element test.

#![allow(dead_code, reason = "each includer uses a different part")]

use std::path::{Path, PathBuf};

use relax_runtime::{Scalar, Value};

/// The `.rlx` files of `test/Run/` and `test/Transform/legalize-ops/`, sorted per folder.
pub fn files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../test");
    let mut out = Vec::new();
    for dir in ["Run", "Transform/legalize-ops"] {
        let mut v: Vec<PathBuf> = std::fs::read_dir(root.join(dir))
            .expect("test folder")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "rlx"))
            .collect();
        v.sort();
        out.extend(v);
    }
    out
}

/// `text` split at its `# -----` lines.
pub fn chunks(text: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    for line in text.split_inclusive('\n') {
        if line.trim_end().starts_with("# -----") {
            out.push(String::new());
        } else {
            out.last_mut().expect("one chunk").push_str(line);
        }
    }
    out
}

/// Values for the symbolic variables of `f`: 2, 3, 4, 2, ... by the order of its pool.
pub fn seeded_syms(f: &relax_ir::RelaxFunction) -> Vec<(String, i64)> {
    f.pool.vars.iter().enumerate().map(|(i, (_, v))| (v.name.clone(), 2 + (i as i64 % 3))).collect()
}

/// A copy of `v` that shares no tensor storage with it.
pub fn fresh(v: &Value) -> Value {
    match v {
        Value::Tensor(t) => Value::Tensor(t.deep_copy()),
        Value::Tuple(f) => Value::tuple(f.iter().map(fresh).collect()),
        other => other.clone(),
    }
}

/// Compares two results: same structure, shapes and dtypes, and every pair of elements
/// accepted by `close` (floats) or equal (integers); `Err` names the first difference
/// under `path` (e.g. `result[1]: element 3: ...`).
pub fn compare(a: &Value, b: &Value, path: &str, close: fn(Scalar, Scalar) -> bool) -> Result<(), String> {
    match (a, b) {
        (Value::Tensor(x), Value::Tensor(y)) => {
            if x.shape != y.shape || x.dtype != y.dtype {
                return Err(format!("{path}: {} vs {}", a.describe(), b.describe()));
            }
            for (i, (p, q)) in x.scalars().into_iter().zip(y.scalars()).enumerate() {
                let ok = if p.is_float() { close(p, q) } else { p.as_i128() == q.as_i128() };
                if !ok {
                    return Err(format!("{path}: element {i}: {p:?} vs {q:?}"));
                }
            }
            Ok(())
        }
        (Value::Tuple(x), Value::Tuple(y)) if x.len() == y.len() => {
            for (i, (p, q)) in x.iter().zip(y.iter()).enumerate() {
                compare(p, q, &format!("{path}[{i}]"), close)?;
            }
            Ok(())
        }
        (Value::Shape(x), Value::Shape(y)) if x == y => Ok(()),
        (Value::Prim(x), Value::Prim(y)) if x == y => Ok(()),
        _ => Err(format!("{path}: {} vs {}", a.describe(), b.describe())),
    }
}
