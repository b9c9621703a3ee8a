//! relax-gguf against llama.cpp's Python package gguf-py: its reader must see the same
//! metadata and tensor infos in files relax writes, its reference dequantizers
//! (`gguf.quants.dequantize`) must give the same floats, bit for bit, and its quantizers
//! (`gguf.quants.quantize`, where gguf-py implements the type) the same bytes.
//!
//! Needs a python3 that imports `gguf` and `numpy`: `$RELAX_GGUF_PYTHON`, or `python3` /
//! `/usr/bin/python3` with `${RELAX_TOOLS_DIR:-~/.cache/relax-tools}/python` on the path,
//! where `utils/install-deps.sh` installs gguf-py. Without one the test says it is skipped
//! and passes.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use relax_gguf::generate::write_model;
use relax_gguf::{Array, FileType, GgmlType, GgufFile, ModelConfig, Value, quantize};
use serde_json::{Value as Json, json};

fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/gguf_py_check.py")
}

/// The extra module path: where `utils/install-deps.sh` puts gguf-py.
fn tools_python_dir() -> PathBuf {
    match std::env::var_os("RELAX_TOOLS_DIR") {
        Some(d) => PathBuf::from(d).join("python"),
        None => PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/relax-tools/python"),
    }
}

fn python_command(py: &str) -> Command {
    let mut c = Command::new(py);
    let mut path = std::ffi::OsString::from(tools_python_dir());
    if let Some(old) = std::env::var_os("PYTHONPATH") {
        path.push(":");
        path.push(old);
    }
    c.env("PYTHONPATH", path);
    c
}

fn find_python() -> Option<String> {
    let mut candidates: Vec<String> = std::env::var("RELAX_GGUF_PYTHON").into_iter().collect();
    candidates.extend(["python3".to_string(), "/usr/bin/python3".to_string()]);
    candidates
        .into_iter()
        .find(|py| python_command(py).args(["-c", "import gguf, numpy"]).output().is_ok_and(|o| o.status.success()))
}

fn run(py: &str, args: &[&Path]) {
    let out = python_command(py).arg(script()).args(args).output().expect("run python");
    assert!(out.status.success(), "gguf_py_check.py {args:?} failed:\n{}", String::from_utf8_lossy(&out.stderr));
}

/// Our view of a value in the script's form: the leaf values, arrays flattened as gguf-py
/// flattens them, floats as bit patterns, strings as text.
fn leaves(v: &Value, out: &mut Vec<Json>) {
    match v {
        Value::F32(x) => out.push(json!(x.to_bits())),
        Value::F64(x) => out.push(json!(x.to_bits())),
        Value::Bool(b) => out.push(json!(b)),
        Value::String(s) => out.push(json!(s.as_str().unwrap())),
        Value::Array(a) => array_leaves(a, out),
        v => match v.as_integer() {
            Some(i) if i < 0 => out.push(json!(i as i64)),
            Some(i) => out.push(json!(i as u64)),
            None => {}
        },
    }
}

fn array_leaves(a: &Array, out: &mut Vec<Json>) {
    for i in 0..a.len() {
        if let Some(v) = a.get(i) {
            leaves(&v, out);
        }
    }
}

/// The value types gguf-py lists for a field: the type, then for arrays the element types
/// of the first element, recursively.
fn types(v: &Value) -> Vec<u32> {
    let mut t = vec![v.value_type().id()];
    if let Value::Array(a) = v {
        match a {
            Array::Array(inner) => {
                if let Some(first) = inner.first() {
                    t.extend(types(&Value::Array(first.clone())));
                }
            }
            _ if !a.is_empty() => t.push(a.elem_type().id()),
            _ => {}
        }
    }
    t
}

fn compare_file(py: &str, name: &str, bytes: Vec<u8>, dir: &Path) {
    let path = dir.join(format!("{name}.gguf"));
    std::fs::write(&path, &bytes).unwrap();
    let out = dir.join(name);
    run(py, &[Path::new("read"), &path, &out]);
    let meta: Json = serde_json::from_str(&std::fs::read_to_string(out.join("meta.json")).unwrap()).unwrap();
    let f = GgufFile::open(&path).unwrap();
    assert_eq!(meta["alignment"], json!(f.alignment()), "{name}");
    assert_eq!(meta["data_offset"], json!(f.data_offset()), "{name}");
    let fields = meta["fields"].as_array().unwrap();
    assert_eq!(fields.len(), f.metadata().len(), "{name}");
    for (field, (key, value)) in fields.iter().zip(f.metadata().iter()) {
        assert_eq!(field["key"], json!(key), "{name}");
        let mut ours = Vec::new();
        leaves(value, &mut ours);
        let theirs = match &field["value"] {
            Json::Array(v) => v.clone(),
            v => vec![v.clone()],
        };
        // gguf-py gives an empty array's contents as [] and its types as [ARRAY] only.
        assert_eq!(theirs, ours, "{name}: `{key}`");
        assert_eq!(field["types"], json!(types(value)), "{name}: types of `{key}`");
    }
    let tensors = meta["tensors"].as_array().unwrap();
    assert_eq!(tensors.len(), f.tensors().len());
    for (i, (t, info)) in tensors.iter().zip(f.tensors()).enumerate() {
        assert_eq!(t["name"], json!(info.name));
        assert_eq!(t["type"], json!(info.ggml_type.id()), "{}", info.name);
        assert_eq!(t["dims"], json!(info.dims), "{}", info.name);
        assert_eq!(t["n_elements"], json!(info.n_elements), "{}", info.name);
        assert_eq!(t["n_bytes"], json!(info.n_bytes), "{}", info.name);
        assert_eq!(t["file_offset"], json!(info.file_offset), "{}", info.name);
        let theirs = std::fs::read(out.join(format!("{i}.f32"))).unwrap();
        let ours: Vec<u8> = f.tensor_f32(&info.name).unwrap().iter().flat_map(|x| x.to_le_bytes()).collect();
        assert!(theirs == ours, "{name}: dequantized `{}` ({}) differs from gguf-py's", info.name, info.ggml_type);
    }
}

#[test]
fn same_as_gguf_py() {
    let Some(py) = find_python() else {
        eprintln!(
            "skipping the gguf-py comparison: no python3 that imports gguf and numpy \
             (utils/install-deps.sh installs gguf-py into {})",
            tools_python_dir().display()
        );
        return;
    };
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("gguf-py");
    std::fs::create_dir_all(&dir).unwrap();

    compare_file(&py, "rich", common::rich_file(64), &dir);
    let mut configs = vec![("tiny".to_string(), ModelConfig::tiny()), ("qwen2".to_string(), ModelConfig::tiny_qwen2())];
    for ft in FileType::ALL {
        configs.push((
            ft.name().to_string(),
            ModelConfig { file_type: ft, n_layers: 1, n_vocab: 300, ..ModelConfig::tiny() },
        ));
    }
    for (name, c) in configs {
        let mut bytes = Vec::new();
        write_model(&c, &mut bytes).unwrap();
        compare_file(&py, &name, bytes, &dir);
    }

    // Quantizers: the same bytes as gguf-py wherever gguf-py implements the type.
    let x: Vec<f32> = common::values(256 * 64, 3)
        .iter()
        .enumerate()
        .map(|(i, v)| if i % 256 < 32 { 0.0 } else { v * (1.0 + (i / 256) as f32) })
        .collect();
    let input = dir.join("quantize-in.f32");
    std::fs::write(&input, x.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>()).unwrap();
    let out = dir.join("quantize");
    run(&py, &[Path::new("quantize"), &input, &out]);
    let status: Json = serde_json::from_str(&std::fs::read_to_string(out.join("quantize.json")).unwrap()).unwrap();
    let mut compared = Vec::new();
    for ty in [GgmlType::F16, GgmlType::BF16, GgmlType::Q8_0, GgmlType::Q4_0, GgmlType::Q4_K, GgmlType::Q6_K] {
        if status[ty.name()] != json!("ok") {
            eprintln!(
                "gguf-py does not implement {ty} quantization; compared with ggml's C reference instead (tests/reference_vectors.rs)"
            );
            continue;
        }
        let theirs = std::fs::read(out.join(format!("{}.bin", ty.name()))).unwrap();
        assert!(theirs == quantize(ty, &x).unwrap(), "{ty}: quantized bytes differ from gguf-py's");
        compared.push(ty.name());
    }
    eprintln!("gguf-py quantizers compared: {}", compared.join(", "));
    assert!(compared.contains(&"Q8_0") && compared.contains(&"Q4_0"));
}
