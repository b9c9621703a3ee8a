//! Block-quantized weights: the ggml types relax computes with ([`layout`]) and their
//! decode kernels as TensorIR ([`decode`]), shared by the `quantize-weights` pass and
//! the GGUF importer (`relax-llm`).

pub mod decode;
pub mod layout;
pub mod q8;
pub mod rule;

pub use decode::{kernel, kernel_name};
pub use layout::QuantType;
