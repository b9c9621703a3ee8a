//! The TVMScript text of a model: `prefill`, `decode`, `extend` and their kernels.

pub mod dequant;
mod graph;
pub mod kernels;
pub mod text;

pub use graph::param_type;

use crate::spec::ModelSpec;

/// The module's text, as the emitter writes it (bindings without annotations: parse it
/// and print it for the canonical form).
pub fn module_text(m: &ModelSpec) -> String {
    let (funcs, decoders) = graph::functions(m);
    let mut out = String::new();
    out.push_str(&format!(
        "# A {} model of {} layers (hidden {}, {} heads, {} key/value heads, MLP {}, vocabulary {}, context {}), written by relax-llm.\n",
        m.arch.name(),
        m.layers.len(),
        m.n_embd,
        m.n_head,
        m.n_head_kv,
        m.n_ff,
        m.n_vocab,
        m.n_ctx
    ));
    out.push_str("@I.ir_module\nclass Module:\n");
    for k in decoders.values() {
        out.push_str(k);
        out.push('\n');
    }
    out.push_str(&kernels::cache_write(m, true));
    out.push('\n');
    out.push_str(&kernels::cache_write(m, false));
    out.push('\n');
    out.push_str(&kernels::attention(m));
    out.push('\n');
    out.push_str(&funcs.join("\n"));
    out
}
