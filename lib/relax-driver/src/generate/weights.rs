//! Binding parameters to weights by name: `.npy` files of `--weights-dir` and the tensors
//! of a GGUF file (`--weights`, or a GGUF input).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use relax_ir::{Global, Module, RelaxFunction};
use relax_runtime::{Value, npy};

/// The inputs of `g` for a plain run: parameters with a tensor in `weights` from it, the
/// others from `inputs` in order (`None` where neither gives one).
pub fn named_inputs(
    m: &Module,
    g: Global,
    weights: &mut Weights<'_>,
    inputs: &[PathBuf],
) -> Result<Vec<Option<Value>>, String> {
    let f = m.relax(g).ok_or_else(|| format!("`{}` is not a Relax function", m.globals[g].name))?;
    let mut positional = inputs.iter();
    let mut out = Vec::with_capacity(f.func.params.len());
    let fname = &m.globals[g].name;
    for &p in &f.func.params {
        match weights.get(fname, f, p)? {
            Some(v) => out.push(Some(v)),
            None => match positional.next() {
                Some(path) => out.push(Some(Value::Tensor(npy::read_file(path).map_err(|e| e.message)?))),
                None => out.push(None),
            },
        }
    }
    let extra = positional.count();
    if extra > 0 {
        return Err(format!(
            "{} more `--input` file{} than `{}` has parameters left to fill",
            extra,
            if extra == 1 { "" } else { "s" },
            m.globals[g].name
        ));
    }
    // Trailing `None`s are parameters the seed may fill.
    while out.last().is_some_and(Option::is_none) {
        out.pop();
    }
    Ok(out)
}

/// Where weights come from: `.npy` files of a directory (each read at most once) and the
/// tensors of a mapped GGUF file.
pub struct Weights<'a> {
    dir: Option<PathBuf>,
    gguf: Option<&'a crate::llm::GgufWeights>,
    loaded: HashMap<String, Option<Value>>,
}

impl<'a> Weights<'a> {
    /// Weights from `dir` and `gguf` (a GGUF tensor wins over a file of the same name).
    pub fn new(dir: Option<&Path>, gguf: Option<&'a crate::llm::GgufWeights>) -> Weights<'a> {
        Weights { dir: dir.map(Path::to_path_buf), gguf, loaded: HashMap::new() }
    }

    /// The weight for parameter `p` of `f` (named `fname`), `None` when neither source
    /// has one. A parameter `quantize-weights` packed (`quantized_params`) takes a float
    /// file of the original shape, quantized on load, or the packed file
    /// ([`crate::weights`]); each form is loaded once.
    pub(crate) fn get(&mut self, fname: &str, f: &RelaxFunction, p: relax_ir::Var) -> Result<Option<Value>, String> {
        let name = &f.vars[p].name;
        let spec = crate::weights::quant_spec(f, fname, name)?;
        let key = match &spec {
            Some(s) => format!("{name}\0{s:?}"),
            None => name.to_string(),
        };
        if let Some(v) = self.loaded.get(&key) {
            return Ok(v.clone());
        }
        let mut v = match self.gguf {
            Some(w) => w.get(name, f.vars[p].ty, &f.pool)?,
            None => None,
        };
        if v.is_none()
            && let Some(dir) = &self.dir
        {
            let path = dir.join(format!("{name}.npy"));
            if path.is_file() {
                let t = match &spec {
                    Some(s) => crate::weights::load(&path, fname, name, s)?,
                    None => npy::read_file(&path).map_err(|e| e.message)?,
                };
                v = Some(Value::Tensor(t));
            }
        }
        self.loaded.insert(key, v.clone());
        Ok(v)
    }
}
