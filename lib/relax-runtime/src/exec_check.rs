//! `# EXEC:` comments: tiny run tests inside a module (`relax-run --check-exec`).
//!
//! ```text
//! # EXEC: main([1.0, 2.0], [3.0, 4.0]) == [4.0, 6.0]
//! # EXEC: f([[1, 2]], 3) ~= ([0.5, 1.0], 7)
//! ```
//!
//! A line names a function, its arguments and the expected result. Literals are numbers
//! (`1`, `-2.5`, `1e-3`, `inf`, `nan`), `True` / `False`, nested lists (a tensor, whose
//! shape is the nesting) and tuples `(a, b)`. An argument takes its dtype from the
//! parameter's annotation (a list for an `R.Shape` parameter is a shape, a number for an
//! `R.Prim` parameter a scalar). `==` compares exactly (NaN equals NaN); `~=` allows
//! `|a - b| <= 1e-5 * |b| + 1e-6` for float32/float64 and `1e-2 * |b| + 1e-3` for
//! float16/bfloat16.

use relax_ir::{DataType, Ty, TyData};

use crate::error::{RunError, RunResult};
use crate::scalar::Scalar;
use crate::value::{Tensor, Value};

/// A literal.
#[derive(Clone, Debug, PartialEq)]
pub enum Lit {
    /// A number (integers keep their exact value).
    Num(f64, Option<i64>),
    /// `True` / `False`.
    Bool(bool),
    /// `[a, b]`.
    List(Vec<Lit>),
    /// `(a, b)`.
    Tuple(Vec<Lit>),
}

/// One `# EXEC:` line.
#[derive(Clone, Debug)]
pub struct ExecLine {
    /// Byte offset of the comment in the file.
    pub offset: usize,
    /// The text after `EXEC:`.
    pub text: String,
    /// The function called.
    pub func: String,
    /// Its arguments.
    pub args: Vec<Lit>,
    /// `~=` rather than `==`.
    pub approx: bool,
    /// The expected result.
    pub expected: Lit,
}

struct P<'a> {
    s: &'a [u8],
    i: usize,
}

impl P<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }
    fn eat(&mut self, c: u8) -> bool {
        self.ws();
        if self.s.get(self.i) == Some(&c) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn word(&mut self) -> String {
        self.ws();
        let st = self.i;
        while self.i < self.s.len()
            && (self.s[self.i].is_ascii_alphanumeric() || matches!(self.s[self.i], b'_' | b'.' | b'+' | b'-'))
        {
            // A sign only at the start or after an exponent.
            if matches!(self.s[self.i], b'+' | b'-') && self.i > st && !matches!(self.s[self.i - 1], b'e' | b'E') {
                break;
            }
            self.i += 1;
        }
        String::from_utf8_lossy(&self.s[st..self.i]).into_owned()
    }
    fn seq(&mut self, close: u8) -> Result<Vec<Lit>, String> {
        let mut v = Vec::new();
        if self.eat(close) {
            return Ok(v);
        }
        loop {
            v.push(self.lit()?);
            if self.eat(close) {
                return Ok(v);
            }
            if !self.eat(b',') {
                return Err(format!("expected `,` or `{}`", close as char));
            }
            if self.eat(close) {
                return Ok(v);
            }
        }
    }
    fn lit(&mut self) -> Result<Lit, String> {
        if self.eat(b'[') {
            return Ok(Lit::List(self.seq(b']')?));
        }
        if self.eat(b'(') {
            return Ok(Lit::Tuple(self.seq(b')')?));
        }
        let w = self.word();
        match w.as_str() {
            "True" => return Ok(Lit::Bool(true)),
            "False" => return Ok(Lit::Bool(false)),
            "inf" | "+inf" => return Ok(Lit::Num(f64::INFINITY, None)),
            "-inf" => return Ok(Lit::Num(f64::NEG_INFINITY, None)),
            "nan" => return Ok(Lit::Num(f64::NAN, None)),
            _ => {}
        }
        if let Ok(i) = w.parse::<i64>() {
            return Ok(Lit::Num(i as f64, Some(i)));
        }
        w.parse::<f64>().map(|f| Lit::Num(f, None)).map_err(|_| format!("expected a literal, found `{w}`"))
    }
}

/// Parses the text after `EXEC:`.
pub fn parse_line(text: &str) -> Result<(String, Vec<Lit>, bool, Lit), String> {
    let mut p = P { s: text.as_bytes(), i: 0 };
    p.ws();
    let st = p.i;
    while p.i < p.s.len() && (p.s[p.i].is_ascii_alphanumeric() || p.s[p.i] == b'_') {
        p.i += 1;
    }
    let func = text[st..p.i].to_string();
    if func.is_empty() || !p.eat(b'(') {
        return Err("expected `NAME(ARGS) == RESULT`".to_string());
    }
    let args = p.seq(b')')?;
    p.ws();
    let approx = if text[p.i..].starts_with("==") {
        false
    } else if text[p.i..].starts_with("~=") {
        true
    } else {
        return Err("expected `==` or `~=` after the call".to_string());
    };
    p.i += 2;
    let expected = p.lit()?;
    p.ws();
    if p.i != p.s.len() {
        return Err(format!("unexpected text after the result: `{}`", &text[p.i..]));
    }
    Ok((func, args, approx, expected))
}

/// Finds the `# EXEC:` lines of a file.
pub fn collect(text: &str) -> Vec<Result<ExecLine, (usize, String)>> {
    let mut out = Vec::new();
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if let Some(pos) = line.find("EXEC:")
            && line[..pos].trim_start().starts_with('#')
        {
            let body = line[pos + 5..].trim_end().to_string();
            out.push(match parse_line(&body) {
                Ok((func, args, approx, expected)) => {
                    Ok(ExecLine { offset: offset + pos, text: body.trim().to_string(), func, args, approx, expected })
                }
                Err(e) => Err((offset + pos, e)),
            });
        }
        offset += line.len();
    }
    out
}

fn flatten(l: &Lit, shape: &mut Vec<i64>, depth: usize, out: &mut Vec<Lit>) -> Result<(), String> {
    match l {
        Lit::List(items) => {
            if shape.len() == depth {
                shape.push(items.len() as i64);
            } else if shape[depth] != items.len() as i64 {
                return Err("a ragged nested list".to_string());
            }
            for x in items {
                flatten(x, shape, depth + 1, out)?;
            }
            Ok(())
        }
        Lit::Tuple(_) => Err("a tuple inside a list".to_string()),
        other => {
            if shape.len() > depth {
                return Err("a ragged nested list".to_string());
            }
            out.push(other.clone());
            Ok(())
        }
    }
}

fn scalar(l: &Lit, dt: DataType) -> Scalar {
    match l {
        Lit::Bool(b) => Scalar::bool(*b).cast(dt),
        Lit::Num(_, Some(i)) if !dt.is_float() => Scalar::int(dt, *i),
        Lit::Num(f, _) => Scalar::float(dt, *f),
        _ => Scalar::int(dt, 0),
    }
}

fn lit_dtype(items: &[Lit]) -> DataType {
    if items.iter().all(|l| matches!(l, Lit::Bool(_))) {
        DataType::BOOL
    } else if items.iter().all(|l| matches!(l, Lit::Num(_, Some(_)) | Lit::Bool(_))) {
        DataType::INT64
    } else {
        DataType::FLOAT32
    }
}

/// A tensor from a literal.
pub fn tensor(l: &Lit, dt: Option<DataType>) -> Result<Tensor, String> {
    let mut shape = Vec::new();
    let mut items = Vec::new();
    flatten(l, &mut shape, 0, &mut items)?;
    let dt = dt.unwrap_or_else(|| lit_dtype(&items));
    Ok(Tensor::from_scalars(&shape, dt, items.iter().map(|x| scalar(x, dt)).collect::<Vec<_>>()))
}

/// The argument value of a literal for a parameter of type `ty`.
pub fn to_value(pool: &relax_ir::Pool, ty: Ty, l: &Lit) -> Result<Value, String> {
    match (pool.ty(ty), l) {
        (TyData::Tuple(fields), Lit::Tuple(items)) => {
            if fields.len() != items.len() {
                return Err(format!("a tuple of {} fields for a tuple of {}", items.len(), fields.len()));
            }
            Ok(Value::tuple(fields.iter().zip(items).map(|(&f, x)| to_value(pool, f, x)).collect::<Result<_, _>>()?))
        }
        (TyData::Shape { .. }, Lit::List(items) | Lit::Tuple(items)) => Ok(Value::Shape(
            items
                .iter()
                .map(|x| if let Lit::Num(f, _) = x { Ok(*f as i64) } else { Err("a shape of numbers".to_string()) })
                .collect::<Result<_, _>>()?,
        )),
        (TyData::Prim { dtype, .. }, x) => {
            let dt = if dtype.is_void() { DataType::INT64 } else { *dtype };
            Ok(Value::Prim(scalar(x, dt)))
        }
        (TyData::Tensor { dtype, .. }, x) => Ok(Value::Tensor(tensor(x, (!dtype.is_void()).then_some(*dtype))?)),
        (_, Lit::Tuple(items)) => Ok(Value::tuple(items.iter().map(literal_value).collect::<Result<_, _>>()?)),
        (_, x) => literal_value(x),
    }
}

fn literal_value(l: &Lit) -> Result<Value, String> {
    match l {
        Lit::Tuple(items) => Ok(Value::tuple(items.iter().map(literal_value).collect::<Result<_, _>>()?)),
        other => Ok(Value::Tensor(tensor(other, None)?)),
    }
}

fn close(a: Scalar, b: &Lit, approx: bool) -> bool {
    let (x, y) = match b {
        Lit::Bool(v) => (a.as_f64(), f64::from(u8::from(*v))),
        Lit::Num(f, i) => {
            if let (Some(i), false) = (i, a.is_float()) {
                return a.as_i128() == i128::from(*i);
            }
            (a.as_f64(), *f)
        }
        _ => return false,
    };
    // A literal means the value of the result's type nearest to it.
    let y = if a.is_float() { crate::scalar::round_float(a.dtype(), y) } else { y };
    if x.is_nan() || y.is_nan() {
        return x.is_nan() && y.is_nan();
    }
    if x == y {
        return true;
    }
    if !approx || !a.is_float() {
        return false;
    }
    let (r, t) = if a.dtype().bits <= 16 { (1e-2, 1e-3) } else { (1e-5, 1e-6) };
    (x - y).abs() <= r * y.abs() + t
}

/// Compares a result with the expected literal; `Err` says how they differ.
pub fn compare(v: &Value, expected: &Lit, approx: bool) -> Result<(), String> {
    match (v, expected) {
        (Value::Tuple(fs), Lit::Tuple(items)) => {
            if fs.len() != items.len() {
                return Err(format!("a tuple of {} fields, expected {}", fs.len(), items.len()));
            }
            for (i, (f, x)) in fs.iter().zip(items).enumerate() {
                compare(f, x, approx).map_err(|e| format!("field {i}: {e}"))?;
            }
            Ok(())
        }
        (Value::Shape(s), Lit::List(items) | Lit::Tuple(items)) => {
            let want: Vec<i64> =
                items.iter().map(|x| if let Lit::Num(f, _) = x { *f as i64 } else { i64::MIN }).collect();
            if *s == want { Ok(()) } else { Err(format!("the shape {s:?}, expected {want:?}")) }
        }
        (Value::Prim(p), x @ (Lit::Num(..) | Lit::Bool(_))) => {
            if close(*p, x, approx) {
                Ok(())
            } else {
                Err(format!("{}, expected {x:?}", crate::print::scalar_text(*p)))
            }
        }
        (Value::Tensor(t), x) => {
            let mut shape = Vec::new();
            let mut items = Vec::new();
            flatten(x, &mut shape, 0, &mut items)?;
            if shape != t.shape {
                return Err(format!(
                    "a tensor of shape {}, expected shape {}",
                    crate::value::shape_text(&t.shape),
                    crate::value::shape_text(&shape)
                ));
            }
            for (i, (a, b)) in t.scalars().into_iter().zip(&items).enumerate() {
                if !close(a, b, approx) {
                    return Err(format!(
                        "element {i} is {}, expected {}",
                        crate::print::scalar_text(a),
                        match b {
                            Lit::Num(f, Some(i)) if *f == *i as f64 => i.to_string(),
                            Lit::Num(f, _) => format!("{f:?}"),
                            Lit::Bool(b) => if *b { "True" } else { "False" }.to_string(),
                            _ => "?".to_string(),
                        }
                    ));
                }
            }
            Ok(())
        }
        (v, x) => Err(format!("{}, expected {x:?}", v.describe())),
    }
}

/// Runs one `# EXEC:` line against a module, with PrimFuncs through `native` when given
/// (the JIT) and op calls without a reference kernel through `lowering`.
pub fn run_line_with(
    m: &relax_ir::Module,
    line: &ExecLine,
    native: Option<&dyn crate::native::NativeKernels>,
    lowering: Option<&dyn crate::lowering::OpLowering>,
) -> RunResult<()> {
    let mut interp = crate::Interpreter::new(m);
    interp.native = native;
    interp.lowering = lowering;
    run_line_call(m, line, &|g, args| interp.call_global(g, args, relax_ir::Span::NONE))
}

/// Runs one `# EXEC:` line of module `m` through `call` (the interpreter or the VM).
pub fn run_line_call(
    m: &relax_ir::Module,
    line: &ExecLine,
    call: &dyn Fn(relax_ir::Global, Vec<Value>) -> RunResult<Value>,
) -> RunResult<()> {
    let g = m.lookup(&line.func).ok_or_else(|| RunError::new(format!("the module has no function `{}`", line.func)))?;
    let f = m.relax(g).ok_or_else(|| RunError::new(format!("`{}` is not a Relax function", line.func)))?;
    if f.func.params.len() != line.args.len() {
        return Err(RunError::new(format!(
            "`{}` takes {} arguments, the line gives {}",
            line.func,
            f.func.params.len(),
            line.args.len()
        )));
    }
    let mut args = Vec::new();
    for (&p, l) in f.func.params.iter().zip(&line.args) {
        args.push(
            to_value(&f.pool, f.vars[p].ty, l)
                .map_err(|e| RunError::new(format!("argument `{}`: {e}", f.vars[p].name)))?,
        );
    }
    let v = call(g, args)?;
    compare(&v, &line.expected, line.approx).map_err(|e| {
        RunError::new(format!("EXEC check failed: `{}` gave {e}", line.text))
            .with_note(format!("the result is {}", crate::print::value_text(&v).replace('\n', " ")))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lines() {
        let (f, args, approx, exp) = parse_line(" main([1.0, 2.0], [[1, 2]], -3, True) ~= ([4.0, 6.0], 1e-3)").unwrap();
        assert_eq!(f, "main");
        assert_eq!(args.len(), 4);
        assert!(approx);
        assert_eq!(
            exp,
            Lit::Tuple(vec![Lit::List(vec![Lit::Num(4.0, None), Lit::Num(6.0, None)]), Lit::Num(1e-3, None)])
        );
        assert!(parse_line("main(1) = 2").is_err());
    }
}
