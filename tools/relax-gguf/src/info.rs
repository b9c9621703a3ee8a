//! `relax-gguf info`: the header, metadata and tensor table of a GGUF file, in the manner of
//! gguf-py's `gguf-dump`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write;
use std::path::PathBuf;

use clap::Args;
use relax_gguf::{Array, GgmlType, GgufFile, Value};

#[derive(Args, Debug)]
pub struct InfoArgs {
    /// The GGUF file.
    file: PathBuf,
    /// Print arrays in full (by default the first 8 elements).
    #[arg(long)]
    all: bool,
}

/// How many array elements to show unless `--all`.
const SHOWN: usize = 8;

fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => format!("{:?}", s.to_string()),
        Value::F32(x) => format!("{x:?}"),
        Value::F64(x) => format!("{x:?}"),
        Value::Bool(b) => b.to_string(),
        Value::Array(a) => array(a, SHOWN),
        v => v.as_integer().map(|i| i.to_string()).unwrap_or_default(),
    }
}

fn array(a: &Array, limit: usize) -> String {
    let n = a.len();
    let mut items: Vec<String> = (0..n.min(limit)).filter_map(|i| a.get(i)).map(|v| scalar(&v)).collect();
    if n > limit {
        items.push("...".into());
    }
    format!("[{}]", items.join(", "))
}

pub fn run(a: InfoArgs, out: &mut dyn Write) -> Result<(), String> {
    let f = GgufFile::open(&a.file).map_err(|e| e.to_string())?;
    let limit = if a.all { usize::MAX } else { SHOWN };
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{}: GGUF version {}, {} bytes, alignment {}, tensor data at byte {}",
        a.file.display(),
        f.version(),
        f.len(),
        f.alignment(),
        f.data_offset()
    );
    let _ = writeln!(s, "* {} key/value pairs", f.metadata().len());
    for (i, (key, value)) in f.metadata().iter().enumerate() {
        let (ty, count, shown) = match value {
            Value::Array(arr) => (format!("[{}]", arr.elem_type().name()), arr.len(), array(arr, limit)),
            v => (v.value_type().name().to_string(), 1, scalar(v)),
        };
        let _ = writeln!(s, "{:>7}: {ty:<10} | {count:>8} | {key} = {shown}", i + 1);
    }
    let data: u64 = f.tensors().iter().map(|t| t.n_bytes).sum();
    let _ = writeln!(s, "* {} tensors, {:.2} MiB of data", f.tensors().len(), data as f64 / (1 << 20) as f64);
    let mut by_type: BTreeMap<GgmlType, usize> = BTreeMap::new();
    for (i, t) in f.tensors().iter().enumerate() {
        *by_type.entry(t.ggml_type).or_default() += 1;
        let mut dims: Vec<String> = t.dims.iter().map(|d| format!("{d:>5}")).collect();
        dims.resize(4, format!("{:>5}", 1));
        let _ = writeln!(
            s,
            "{:>7}: {:>10} | {} | {:<7} | {}",
            i + 1,
            t.n_elements,
            dims.join(", "),
            t.ggml_type.name(),
            t.name
        );
    }
    let types: Vec<String> = by_type.iter().map(|(t, n)| format!("{t} × {n}")).collect();
    let _ = writeln!(s, "* types: {}", types.join(", "));
    out.write_all(s.as_bytes()).map_err(|e| format!("cannot write the output: {e}"))
}
