//! Small helpers for writing TVMScript: numbers, shapes and a list of bindings.

/// An `f64` as a TVMScript float literal that reads back to the same `f32`/`f64`.
pub fn float(v: f64) -> String {
    if v.is_finite() && v == v.trunc() && v.abs() < 1e15 { format!("{v:.1}") } else { format!("{v:?}") }
}

/// A `T.int64` literal.
pub fn i64_lit(v: usize) -> String {
    format!("T.int64({v})")
}

/// `R.shape([a, b, ...])`.
pub fn shape(dims: &[String]) -> String {
    format!("R.shape([{}])", dims.join(", "))
}

/// `R.Tensor((a, b, ...), dtype="...")`.
pub fn tensor(dims: &[String], dtype: &str) -> String {
    let inner = if dims.len() == 1 { format!("{},", dims[0]) } else { dims.join(", ") };
    format!("R.Tensor(({inner}), dtype=\"{dtype}\")")
}

/// Dims of numbers as strings.
pub fn dims(d: &[usize]) -> Vec<String> {
    d.iter().map(usize::to_string).collect()
}

/// The bindings of a dataflow block, one per line.
#[derive(Default)]
pub struct Block {
    lines: Vec<String>,
}

impl Block {
    /// Binds `name = value` and returns `name`.
    pub fn bind(&mut self, name: impl Into<String>, value: impl AsRef<str>) -> String {
        let name = name.into();
        self.lines.push(format!("{name} = {}", value.as_ref()));
        name
    }
    /// The lines, indented by `indent` spaces.
    pub fn render(&self, indent: usize) -> String {
        let pad = " ".repeat(indent);
        self.lines.iter().map(|l| format!("{pad}{l}\n")).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals() {
        assert_eq!(float(10000.0), "10000.0");
        assert_eq!(float(1e-5), "1e-5");
        assert_eq!(float(0.125), "0.125");
        assert_eq!(tensor(&dims(&[3]), "int32"), "R.Tensor((3,), dtype=\"int32\")");
        assert_eq!(shape(&dims(&[1, 2])), "R.shape([1, 2])");
    }
}
