//! GGUF model files in the tools: importing one as a Relax module (`relax-translate
//! --import-gguf`, `relax-run model.gguf`) and binding a module's parameters to its
//! tensors without a copy (`relax-run --weights model.gguf`). `docs/llm.md`.

use std::collections::HashMap;
use std::path::Path;

use relax_gguf::{GgmlType, GgufFile, TensorInfo};
use relax_ir::{DataType, Pool, Ty};
use relax_runtime::value::{ByteBuf, Bytes};
use relax_runtime::{Tensor, Value};

use crate::source::SourceFile;

/// True when the file at `path` starts with GGUF's magic.
pub fn is_gguf(path: &str) -> bool {
    use std::io::Read;
    let mut magic = [0u8; 4];
    std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut magic)).is_ok() && &magic == b"GGUF"
}

/// The module of the model in a GGUF file, with a KV cache of `context` positions (the
/// model's context, at most 4096, by default) of `cache_type` (default float16), and its
/// text as the importer wrote it (the source that diagnostics point into).
pub fn import(
    path: &str,
    context: Option<usize>,
    cache_type: Option<relax_llm::spec::CacheType>,
) -> Result<(SourceFile, relax_ir::Module), String> {
    let file = GgufFile::open(path).map_err(|e| e.to_string())?;
    let mut spec = relax_llm::gguf::spec_from_gguf(&file, context).map_err(|e| format!("{path}: {e}"))?;
    spec.cache_type = cache_type.unwrap_or_default();
    let text = relax_llm::emit::module_text(&spec);
    let module = relax_llm::build(&spec).map_err(|e| format!("{path}: {e}"))?;
    Ok((SourceFile::new(format!("{path} (imported)"), text), module))
}

/// The tensors of a GGUF file, mapped once, by the Relax parameter name of each.
pub struct GgufWeights {
    path: String,
    file: GgufFile,
    bytes: Bytes,
    by_param: HashMap<String, usize>,
}

impl GgufWeights {
    /// Opens and maps `path`.
    pub fn open(path: &Path) -> Result<GgufWeights, String> {
        let name = path.display().to_string();
        let file = GgufFile::open(path).map_err(|e| e.to_string())?;
        let map = ByteBuf::map_file(path).map_err(|e| format!("cannot map `{name}`: {e}"))?;
        let mut by_param = HashMap::new();
        for (i, t) in file.tensors().iter().enumerate() {
            if let Some(j) = by_param.insert(relax_llm::param_name(&t.name), i) {
                return Err(format!(
                    "{name}: tensors `{}` and `{}` would both bind parameter `{}`",
                    file.tensors()[j].name,
                    t.name,
                    relax_llm::param_name(&t.name)
                ));
            }
        }
        Ok(GgufWeights { path: name, file, bytes: std::rc::Rc::new(std::cell::RefCell::new(map)), by_param })
    }

    /// The file's metadata and tensor table.
    pub fn file(&self) -> &GgufFile {
        &self.file
    }

    /// The tensor for parameter `param` of type `ty`, a view of the mapped file; `None`
    /// when the file has no tensor of that name. The tensor must have the parameter's
    /// dtype and static dims (a quantized tensor is a `uint8` matrix of its rows' bytes).
    pub fn get(&self, param: &str, ty: Ty, pool: &Pool) -> Result<Option<Value>, String> {
        let Some(&i) = self.by_param.get(param) else { return Ok(None) };
        let info = &self.file.tensors()[i];
        info.check_supported().map_err(|e| format!("{}: {e}", self.path))?;
        let (dtype, shape) = view_type(info);
        let want_dtype = pool.ty(ty).dtype();
        let want_dims: Option<Vec<Option<i64>>> =
            pool.ty(ty).dims().map(|d| d.iter().map(|&e| pool.as_int(e)).collect());
        let dims_ok = want_dims
            .as_ref()
            .is_none_or(|w| w.len() == shape.len() && w.iter().zip(&shape).all(|(w, &s)| w.is_none_or(|w| w == s)));
        if want_dtype.is_some_and(|d| d != dtype) || !dims_ok {
            return Err(format!(
                "parameter `{param}` is {}, but tensor `{}` of {} is {} {:?}: a tensor of dtype {dtype} and shape {shape:?}",
                relax_ir::printer::print_ty_pool(pool, ty),
                info.name,
                self.path,
                info.ggml_type,
                info.shape()
            ));
        }
        Ok(Some(Value::Tensor(Tensor::view(&self.bytes, info.file_offset as usize, &shape, dtype))))
    }
}

/// How a GGUF tensor appears to a Relax parameter: floats as themselves, a quantized
/// tensor as the `uint8` bytes of its rows.
fn view_type(info: &TensorInfo) -> (DataType, Vec<i64>) {
    let shape: Vec<i64> = info.shape().iter().map(|&d| d as i64).collect();
    match info.ggml_type {
        GgmlType::F32 => (DataType::FLOAT32, shape),
        GgmlType::F16 => (DataType::FLOAT16, shape),
        GgmlType::BF16 => (DataType::BFLOAT16, shape),
        ty => {
            let rows = info.n_rows() as i64;
            let row_bytes = ty.bytes_for(info.row_len()).unwrap_or(0) as i64;
            (DataType::UINT8, vec![rows, row_bytes])
        }
    }
}
