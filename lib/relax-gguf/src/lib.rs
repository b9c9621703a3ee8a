//! GGUF, the model file format of llama.cpp and ggml: the file-format layer of relax.
//!
//! * [`GgufFile::open`] memory-maps a file read-only, parses and validates its header,
//!   metadata and tensor infos (every malformed input is a [`GgufError`] naming the key,
//!   tensor or byte offset, never a panic), and hands out each tensor's bytes borrowed from
//!   the map ([`GgufFile::tensor_data`]) or as a [`SharedBytes`] that keeps the map alive
//!   ([`GgufFile::tensor_bytes`]).
//! * [`Metadata`] has typed accessors (`get_u32("llama.block_count")`, string arrays for
//!   vocabularies) whose errors name the key and the expected type.
//! * [`GgmlType`] lists every ggml tensor type with its block layout; relax reads and
//!   writes [`SUPPORTED_TYPES`] (F32, F16, BF16, Q8_0, Q4_0, Q4_K, Q6_K) with ggml's
//!   reference [`dequantize`] and [`quantize`], bit for bit.
//! * [`GgufWriter`] writes GGUF version 3 files.
//! * [`generate`] writes random-weight Llama / Qwen2 models with a synthetic vocabulary,
//!   with llama.cpp's tensor names, shapes and Q4_K_M type mixture (`docs/gguf.md`).

mod cursor;
mod error;
mod file;
pub mod generate;
mod metadata;
mod parse;
pub mod quant;
mod tensor;
mod types;
mod value;
mod writer;

pub use error::{ErrorKind, GgufError, Result};
pub use file::GgufFile;
pub use generate::{Architecture, FileType, ModelConfig, RopeScaling, VocabKind};
pub use metadata::Metadata;
pub use parse::{ALIGNMENT_KEY, DEFAULT_ALIGNMENT, GGUF_MAGIC, MAX_DIMS, MAX_NAME_LEN};
pub use quant::{dequantize, dequantize_to_vec, quantize, quantize_into};
pub use tensor::{SharedBytes, TensorInfo};
pub use types::{GgmlType, SUPPORTED_TYPES};
pub use value::{Array, GgufStr, StrArray, Value, ValueType};
pub use writer::{GgufWriter, TensorSpec, WRITE_VERSION};
