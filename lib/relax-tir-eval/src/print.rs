//! The text form of values that `relax-run --print` writes (`docs/runtime.md`).
//!
//! Tensors print like numpy's `repr`, with the dtype always shown:
//!
//! ```text
//! array([[1.0, 2.0, 3.0],
//!        [4.0, 5.0, 6.0]], dtype=float32)
//! ```
//!
//! Floats print as the shortest decimal that reads back to the same value of their type
//! (`float16` and `bfloat16` values as the `float32` they widen to), with `.0` on whole
//! numbers, `inf`, `-inf` and `nan`; integers in decimal; bools as `True` / `False`.
//! Other values print in the module's text syntax: `R.shape([2, 3])`,
//! `R.prim_value(T.int64(5))`, `R.str("s")`, `R.dtype("float32")`; a tuple prints its
//! fields between parentheses, one per line (indented by four spaces) when any field
//! takes more than one line.

use crate::scalar::Scalar;
use crate::value::{FuncValue, Object, Tensor, Value, shape_text};

/// One scalar in the print format.
pub fn scalar_text(v: Scalar) -> String {
    match v {
        Scalar::Int(x, t) if t.is_bool() => if x != 0 { "True" } else { "False" }.to_string(),
        Scalar::Int(x, t) if t.is_uint() && t.bits == 64 => (x as u64).to_string(),
        Scalar::Int(x, _) => x.to_string(),
        Scalar::Float(x, t) => {
            if x.is_nan() {
                return "nan".to_string();
            }
            if t.bits == 64 { format!("{x:?}") } else { format!("{:?}", x as f32) }
        }
    }
}

/// A tensor in numpy's `repr` layout.
pub fn tensor_text(t: &Tensor) -> String {
    let vals = t.scalars();
    if t.shape.is_empty() {
        return format!("array({}, dtype={})", scalar_text(vals[0]), t.dtype);
    }
    if vals.is_empty() {
        return format!("array([], shape={}, dtype={})", shape_text(&t.shape), t.dtype);
    }
    let mut out = String::from("array(");
    let mut pos = 0;
    nested(&mut out, &t.shape, 0, &vals, &mut pos);
    out.push_str(&format!(", dtype={})", t.dtype));
    out
}

fn nested(out: &mut String, shape: &[i64], depth: usize, vals: &[Scalar], pos: &mut usize) {
    out.push('[');
    let n = shape[depth];
    let inner = shape.len() - depth - 1;
    for i in 0..n {
        if i > 0 {
            out.push(',');
            if inner == 0 {
                out.push(' ');
            } else {
                out.push_str(&"\n".repeat(inner));
                out.push_str(&" ".repeat("array(".len() + depth + 1));
            }
        }
        if inner == 0 {
            out.push_str(&scalar_text(vals[*pos]));
            *pos += 1;
        } else {
            nested(out, shape, depth + 1, vals, pos);
        }
    }
    out.push(']');
}

fn prim_literal(v: Scalar) -> String {
    let t = v.dtype();
    format!("T.{t}({})", scalar_text(v))
}

/// A value in the print format.
pub fn value_text(v: &Value) -> String {
    match v {
        Value::Tensor(t) => tensor_text(t),
        Value::Shape(s) => format!("R.shape([{}])", s.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")),
        Value::Prim(p) => format!("R.prim_value({})", prim_literal(*p)),
        Value::Str(s) => format!("R.str({s:?})"),
        Value::DType(d) => format!("R.dtype(\"{d}\")"),
        Value::Tuple(fields) => {
            let texts: Vec<String> = fields.iter().map(value_text).collect();
            if texts.iter().all(|t| !t.contains('\n')) {
                let comma = if texts.len() == 1 { "," } else { "" };
                return format!("({}{comma})", texts.join(", "));
            }
            let mut out = String::from("(\n");
            for t in texts {
                for line in t.lines() {
                    out.push_str("    ");
                    out.push_str(line);
                    out.push('\n');
                }
                out.pop();
                out.push_str(",\n");
            }
            out.push(')');
            out
        }
        Value::Func(f) => match &**f {
            FuncValue::Global(_) | FuncValue::Local { .. } | FuncValue::Closure { .. } => "<function>".to_string(),
            FuncValue::Packed(name) => format!("R.ExternFunc({name:?})"),
        },
        Value::Storage(s) => format!("<storage of {} bytes>", s.len()),
        Value::Object(Object::KvCache(c)) => {
            let c = c.borrow();
            format!("<kv cache of {} rows>", c.fill_count)
        }
        Value::Null => "R.null_value()".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use relax_ir::DataType;

    #[test]
    fn numpy_layout() {
        let t = Tensor::from_scalars(
            &[2, 3],
            DataType::FLOAT32,
            (0..6).map(|i| Scalar::float(DataType::FLOAT32, i as f64)),
        );
        assert_eq!(tensor_text(&t), "array([[0.0, 1.0, 2.0],\n       [3.0, 4.0, 5.0]], dtype=float32)");
        let t = Tensor::from_scalars(&[2, 1, 2], DataType::INT32, (0..4).map(|i| Scalar::int(DataType::INT32, i)));
        assert_eq!(tensor_text(&t), "array([[[0, 1]],\n\n       [[2, 3]]], dtype=int32)");
        let t = Tensor::from_scalars(&[], DataType::BOOL, [Scalar::bool(true)]);
        assert_eq!(tensor_text(&t), "array(True, dtype=bool)");
        let h = Tensor::from_scalars(&[1], DataType::FLOAT16, [Scalar::float(DataType::FLOAT16, 0.1)]);
        assert_eq!(tensor_text(&h), "array([0.099975586], dtype=float16)");
    }
}
