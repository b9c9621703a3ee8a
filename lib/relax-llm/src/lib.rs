//! Llama-family language models as Relax modules.
//!
//! [`ModelSpec`] says what a model is (architecture, sizes, the type and dims of each
//! weight); [`build`] writes it as a module of two Relax functions, `prefill` and
//! `decode`, in readable high-level Relax (`R.nn.rms_norm`, `R.matmul`, rotary
//! embedding in elementwise ops, `R.nn.silu`), with TensorIR kernels where Relax has no
//! op for the job: the decode kernel of each quantized weight type, the in-place KV
//! cache write and attention over the cache. `docs/llm.md` describes the module and its
//! calling convention.

pub mod emit;
pub mod gguf;
pub mod spec;
pub mod tiny;
pub mod vocab;

pub use spec::{Arch, LayerWeights, ModelSpec, Rope, RopeStyle, Weight, WeightType};

/// The Relax parameter that holds the tensor named `name` in the model file: every
/// character that cannot be in a Python identifier becomes `_` (`blk.0.attn_q.weight`
/// is `blk_0_attn_q_weight`), and a leading digit gets a `w_` in front.
pub fn param_name(name: &str) -> String {
    let mut out: String = name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect();
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert_str(0, "w_");
    }
    out
}

/// The module of `spec`, parsed and verified by the parser.
pub fn build(spec: &ModelSpec) -> Result<relax_ir::Module, String> {
    spec.validate()?;
    let text = emit::module_text(spec);
    relax_parser::parse_module(&text).map_err(|diags| {
        let lines: Vec<&str> = text.lines().collect();
        let msgs: Vec<String> = diags
            .iter()
            .take(5)
            .map(|d| {
                let line = text[..(d.span.start as usize).min(text.len())].matches('\n').count();
                format!(
                    "internal error: the emitted model does not parse: {} (line {}: `{}`)",
                    d.message,
                    line + 1,
                    lines.get(line).map_or("", |l| l.trim())
                )
            })
            .collect();
        msgs.join("\n")
    })
}
