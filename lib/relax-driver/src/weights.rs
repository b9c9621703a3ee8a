//! Float weights for quantized parameters: what `--weights-dir` does with a parameter
//! that `quantize-weights` packed (listed in its function's `quantized_params`
//! attribute, `docs/passes.md`), and `relax-run FILE --weights-dir DIR
//! --convert-weights OUT`, which writes the packed files once (`docs/cli.md`).
//!
//! A listed parameter accepts either file: the float weight of the original shape and
//! dtype (float32, float16 or bfloat16 `.npy`), quantized on load with ggml's reference
//! quantizer (`relax_gguf::quantize`, bit for bit what `llama-quantize` writes without
//! an importance matrix), or its packed form, the `uint8` matrix of the parameter's
//! type, used as it is. Anything else is an error that names the parameter, the
//! function and the file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use relax_gguf::GgmlType;
use relax_ir::attrs::AttrValue;
use relax_ir::{DataType, Func, Module, RelaxFunction};
use relax_runtime::value::shared_bytes;
use relax_runtime::{Tensor, npy};

/// The attribute `quantize-weights` writes.
const ATTR: &str = "quantized_params";

/// How a parameter was quantized: one entry of `quantized_params`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QuantSpec {
    /// The block type.
    pub ty: GgmlType,
    /// The float weight's shape.
    pub shape: [usize; 2],
    /// True when the packed rows are the float weight's columns.
    pub transposed: bool,
}

impl QuantSpec {
    /// The packed shape: `(rows, row bytes)`, rows along the contraction.
    pub fn packed_shape(&self) -> Option<[usize; 2]> {
        let [a, b] = self.shape;
        let (n, k) = if self.transposed { (b, a) } else { (a, b) };
        Some([n, usize::try_from(self.ty.bytes_for(k as u64)?).ok()?])
    }
    /// A short description: `q4_0, from (256, 512) float32, transposed`.
    fn describe(&self) -> String {
        let t = if self.transposed { ", transposed" } else { "" };
        format!("{}, from ({}, {}){t}", self.ty.name().to_ascii_lowercase(), self.shape[0], self.shape[1])
    }
}

/// The entry of parameter `name` in `f`'s `quantized_params`, if it has one.
pub fn quant_spec(f: &RelaxFunction, fname: &str, name: &str) -> Result<Option<QuantSpec>, String> {
    let Some(attr) = f.func.attrs.get(ATTR) else { return Ok(None) };
    let bad = |what: &str| format!("the attribute `{ATTR}` of `{fname}`: {what}");
    let AttrValue::Dict(entries) = attr else { return Err(bad("expected a dict of parameter names")) };
    let Some((_, entry)) = entries.iter().find(|(k, _)| k == name) else { return Ok(None) };
    let bad = |what: &str| bad(&format!("the entry of `{name}` {what}"));
    let AttrValue::Dict(fields) = entry else { return Err(bad("is not a dict")) };
    let field = |key: &str| fields.iter().find(|(k, _)| k == key).map(|(_, v)| v);
    let ty = field("type")
        .and_then(AttrValue::as_str)
        .and_then(GgmlType::from_name)
        .filter(|t| matches!(t, GgmlType::Q4_0 | GgmlType::Q8_0 | GgmlType::Q4_K | GgmlType::Q6_K))
        .ok_or_else(|| bad("needs a `type` of \"q4_0\", \"q8_0\", \"q4_k\" or \"q6_k\""))?;
    let shape = match field("shape").and_then(AttrValue::as_int_list).as_deref() {
        Some(&[a, b]) if a > 0 && b > 0 => [a as usize, b as usize],
        _ => return Err(bad("needs a `shape` of two positive integers")),
    };
    let transposed = field("transposed").and_then(AttrValue::as_bool).ok_or_else(|| bad("needs `transposed`"))?;
    let spec = QuantSpec { ty, shape, transposed };
    if spec.packed_shape().is_none() {
        return Err(bad(&format!("has rows that are not whole {} blocks", ty.name())));
    }
    Ok(Some(spec))
}

/// The float values of a float tensor, as float32, in row-major order.
fn float_values(t: &Tensor) -> Vec<f32> {
    if t.dtype == DataType::FLOAT32 {
        return t.bytes().chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    }
    t.scalars().into_iter().map(|s| s.as_f64() as f32).collect()
}

/// `t` packed as `spec` says. `t` must have the float shape.
fn quantize(t: &Tensor, spec: &QuantSpec) -> Result<Tensor, String> {
    let [a, b] = spec.shape;
    let v = float_values(t);
    let rows = if spec.transposed {
        let mut out = vec![0f32; v.len()];
        for i in 0..a {
            for j in 0..b {
                out[j * a + i] = v[i * b + j];
            }
        }
        out
    } else {
        v
    };
    let bytes = relax_gguf::quantize(spec.ty, &rows).map_err(|e| e.to_string())?;
    let [n, rb] = spec.packed_shape().ok_or("not whole blocks")?;
    Ok(Tensor::view(&shared_bytes(bytes), 0, &[n as i64, rb as i64], DataType::UINT8))
}

fn shape_text(s: &[i64]) -> String {
    let d: Vec<String> = s.iter().map(i64::to_string).collect();
    if d.len() == 1 { format!("({},)", d[0]) } else { format!("({})", d.join(", ")) }
}

/// The tensor for the quantized parameter `name` of `fname` from the `.npy` file at
/// `path`: packed as it is, or a float weight quantized.
pub fn load(path: &Path, fname: &str, name: &str, spec: &QuantSpec) -> Result<Tensor, String> {
    let t = npy::read_file(path).map_err(|e| e.message)?;
    let [n, rb] = spec.packed_shape().unwrap_or([0, 0]);
    let packed = [n as i64, rb as i64];
    let float = [spec.shape[0] as i64, spec.shape[1] as i64];
    if t.dtype == DataType::UINT8 && t.shape == packed {
        return Ok(t);
    }
    if matches!(t.dtype, DataType::FLOAT32 | DataType::FLOAT16 | DataType::BFLOAT16) && t.shape == float {
        return quantize(&t, spec).map_err(|e| format!("`{}`: {e}", path.display()));
    }
    Err(format!(
        "`{}` for parameter `{name}` of `{fname}` ({}): expected a float weight of shape {} or its packed form, a uint8 array of shape {}; found {} {}",
        path.display(),
        spec.describe(),
        shape_text(&float),
        shape_text(&packed),
        t.dtype,
        shape_text(&t.shape)
    ))
}

/// What `--convert-weights` wrote.
#[derive(Debug, Default)]
pub struct Converted {
    /// Quantized parameters: (name, float bytes read, packed bytes written).
    pub quantized: Vec<(String, usize, usize)>,
    /// Files copied as they are.
    pub copied: Vec<String>,
}

/// `--convert-weights OUT`: for every parameter of a Relax function of `m` with a file
/// `DIR/NAME.npy`, writes `OUT/NAME.npy`: packed when some function lists it in
/// `quantized_params`, else the same array. A parameter that two functions want in
/// different forms is an error (one file cannot serve both).
pub fn convert(m: &Module, dir: &Path, out: &Path) -> Result<Converted, String> {
    // name -> (function, spec)
    let mut wanted: BTreeMap<String, (String, Option<QuantSpec>)> = BTreeMap::new();
    for (_, gd) in m.live() {
        let Func::Relax(f) = &gd.func else { continue };
        for &p in &f.func.params {
            let name = f.vars[p].name.clone();
            let spec = quant_spec(f, &gd.name, &name)?;
            match wanted.get(&name) {
                Some((other, s)) if *s != spec => {
                    let form = |s: &Option<QuantSpec>| s.map_or("not quantized".to_string(), |s| s.describe());
                    return Err(format!(
                        "parameter `{name}` is {} in `{other}` but {} in `{}`: one file cannot serve both",
                        form(s),
                        form(&spec),
                        gd.name
                    ));
                }
                Some(_) => {}
                None => {
                    wanted.insert(name, (gd.name.clone(), spec));
                }
            }
        }
    }
    std::fs::create_dir_all(out).map_err(|e| format!("cannot create `{}`: {e}", out.display()))?;
    if let (Ok(a), Ok(b)) = (dir.canonicalize(), out.canonicalize())
        && a == b
    {
        return Err(format!(
            "`--convert-weights {}` is the `--weights-dir`: write the packed weights to another directory",
            out.display()
        ));
    }
    let mut done = Converted::default();
    for (name, (fname, spec)) in &wanted {
        let src: PathBuf = dir.join(format!("{name}.npy"));
        if !src.is_file() {
            continue;
        }
        let dst = out.join(format!("{name}.npy"));
        match spec {
            Some(spec) => {
                let t = load(&src, fname, name, spec)?;
                let bytes = npy::write(&t).map_err(|e| e.message)?;
                std::fs::write(&dst, &bytes).map_err(|e| format!("cannot write `{}`: {e}", dst.display()))?;
                let read = std::fs::metadata(&src).map_or(0, |m| m.len() as usize);
                done.quantized.push((name.clone(), read, bytes.len()));
            }
            None => {
                if src != dst {
                    std::fs::copy(&src, &dst).map_err(|e| format!("cannot write `{}`: {e}", dst.display()))?;
                }
                done.copied.push(name.clone());
            }
        }
    }
    Ok(done)
}
