//! `relax-run --generate`: token generation with a model of two functions, `prefill` and
//! `decode` (`docs/llama.md`, `docs/llm.md`, `docs/cli.md`), and `--weights-dir` and
//! `--weights`, which bind parameters by name to `.npy` files and to a GGUF file's
//! tensors.
//!
//! The calling convention:
//!
//! * Parameter 0 of both functions is the token ids, an integer tensor of shape `(1, n)`
//!   (or `(n,)`): the prompt for `prefill`, the last token for `decode`.
//! * A parameter named `NAME` for which `DIR/NAME.npy` exists, or the GGUF file has a
//!   tensor, is a weight: each is read (or mapped) once and the same tensor is passed to
//!   every call (kernels must not write it).
//! * Every other parameter of `decode` is **state**: the first call gets the state that
//!   `prefill` returned, each later call the state of the call before (the KV cache).
//! * Both functions return a tuple `(next_token, logits, state...)`: `next_token` an
//!   integer tensor of one element, `logits` the scores it was chosen from (written with
//!   `--logits-out`), then one value per state parameter of `decode`, in order.
//!
//! `prefill` gives the first new token; each further one takes a `decode` call. The token
//! ids go to standard output as they come (the progress), comma-separated; the times go to
//! standard error, one line for the prefill and one for the decode steps.

mod step;
mod tokens;
mod weights;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use relax_ir::Module;
use relax_runtime::{RunError, Tensor, npy};

use crate::Io;
use crate::source::SourceFile;
use step::{StepFn, split_result, vocab_size};
use tokens::TokenIo;
pub use weights::{Weights, named_inputs};

/// The flags of `--generate` and `--weights-dir`.
#[derive(clap::Args, Debug, Default)]
pub struct GenerateArgs {
    /// Generate tokens: run `prefill` on `--prompt`, then `decode` once per further
    /// token, feeding each call's state (the KV cache) to the next (docs/llama.md).
    #[arg(long, conflicts_with_all = ["check_exec", "output", "output_dir", "inputs", "repeat", "seed", "syms"])]
    pub generate: bool,
    /// With `--generate`: the prompt's token ids, comma-separated (`1,2,3`); the new
    /// tokens print as ids.
    #[arg(long, value_name = "IDS", requires = "generate")]
    pub prompt: Option<String>,
    /// With `--generate`: the prompt as text, tokenized with the GGUF model's vocabulary
    /// as llama.cpp does (BOS added when the vocabulary says so); the new tokens print as
    /// text, and generation ends at an end-of-generation token.
    #[arg(long = "prompt-text", value_name = "TEXT", requires = "generate")]
    pub prompt_text: Option<String>,
    /// With `--prompt-text`: go on past end-of-generation tokens.
    #[arg(long = "ignore-eos", requires = "prompt_text")]
    pub ignore_eos: bool,
    /// With `--generate`: how many tokens to generate.
    #[arg(long = "max-new-tokens", value_name = "N", default_value_t = 16, requires = "generate")]
    pub max_new_tokens: usize,
    /// With `--generate`: write the logits of every new token to this `.npy` file, one
    /// row per token.
    #[arg(long = "logits-out", value_name = "PATH.npy", requires = "generate")]
    pub logits_out: Option<PathBuf>,
    /// Bind each parameter `NAME` for which `DIR/NAME.npy` exists to that file; `--input`
    /// files then fill the other parameters in order.
    #[arg(long = "weights-dir", value_name = "DIR")]
    pub weights_dir: Option<PathBuf>,
    /// Write the weights of `--weights-dir` to DIR as the module's functions take them:
    /// parameters that `quantize-weights` packed (`quantized_params`) as their packed
    /// `uint8` arrays, the others copied; nothing is run (docs/cli.md).
    #[arg(
        long = "convert-weights",
        value_name = "DIR",
        requires = "weights_dir",
        conflicts_with_all = ["generate", "check_exec", "output", "output_dir", "inputs", "repeat", "seed", "syms", "weights"]
    )]
    pub convert_weights: Option<PathBuf>,
    /// Bind each parameter to the tensor of this GGUF file whose name it is (`.` and other
    /// characters that cannot be in a name read as `_`: `blk_0_attn_q_weight` is
    /// `blk.0.attn_q.weight`), mapped from the file without a copy (docs/llm.md).
    #[arg(long = "weights", value_name = "FILE.gguf")]
    pub weights: Option<PathBuf>,
    /// With a GGUF model as the input: the positions the KV cache holds (default: the
    /// model's context length, at most 4096).
    #[arg(long = "context", value_name = "N")]
    pub context: Option<usize>,
    /// With a GGUF model as the input: the KV cache's element type, `f16` (default, as
    /// llama.cpp) or `f32`.
    #[arg(long = "cache-type", value_name = "TYPE", value_parser = relax_llm::spec::CacheType::parse)]
    pub cache_type: Option<relax_llm::spec::CacheType>,
    /// With `--generate` on a module that has `extend`: run the prompt in chunks of at
    /// most N positions (`prefill` on the first, `extend` on each next), as llama.cpp's
    /// `--ubatch-size`.
    #[arg(long = "ubatch", value_name = "N", default_value_t = 512, value_parser = clap::value_parser!(u64).range(1..))]
    pub ubatch: u64,
}

/// Runs `--generate`: returns the exit status.
pub(crate) fn generate(
    args: &GenerateArgs,
    gguf: Option<&crate::llm::GgufWeights>,
    file: &SourceFile,
    module: &Module,
    runner: &crate::runner::Runner<'_>,
    color: bool,
    io: &mut Io<'_>,
) -> i32 {
    let fail = |io: &mut Io<'_>, msg: String| {
        let _ = writeln!(io.stderr, "relax-run: error: {msg}");
        1
    };
    let tokenizer = match gguf.map(|w| relax_llm::vocab::tokenizer_from_gguf(w.file().metadata())) {
        Some(Ok(t)) => Some(t),
        // Only text needs the vocabulary: a file without a usable one still runs ids.
        Some(Err(e)) if args.prompt_text.is_some() => return fail(io, e),
        _ => None,
    };
    let (prompt, mut tokens) = match TokenIo::new(args, tokenizer.as_ref()) {
        Ok(p) => p,
        Err(e) => return fail(io, e),
    };
    if args.max_new_tokens == 0 {
        return fail(io, "`--max-new-tokens` must be at least 1".to_string());
    }
    if args.weights_dir.is_none() && gguf.is_none() {
        return fail(
            io,
            "`--generate` needs weights: `--weights FILE.gguf`, or `--weights-dir DIR` with DIR/NAME.npy".to_string(),
        );
    }
    if let Some(dir) = &args.weights_dir
        && !dir.is_dir()
    {
        return fail(io, format!("`--weights-dir {}` is not a directory", dir.display()));
    }
    let mut weights = Weights::new(args.weights_dir.as_deref(), gguf);
    let (prefill, decode) =
        match (StepFn::new(module, "prefill", &mut weights), StepFn::new(module, "decode", &mut weights)) {
            (Ok(p), Ok(d)) => (p, d),
            (Err(e), _) | (_, Err(e)) => return fail(io, e),
        };
    if prefill.state_count() > 0 {
        return fail(
            io,
            format!(
                "`prefill` takes the prompt and weights only, but no weight binds: {}",
                prefill.state_names().join(", ")
            ),
        );
    }
    let vocab = vocab_size(prefill.f);
    if let Some(vocab) = vocab
        && let Some(&bad) = prompt.iter().find(|&&t| t >= vocab)
    {
        return fail(io, format!("prompt token {bad} is out of range: the vocabulary has {vocab} tokens"));
    }
    let extend = match module.lookup("extend") {
        Some(_) => match StepFn::new(module, "extend", &mut weights) {
            Ok(e) => Some(e),
            Err(e) => return fail(io, e),
        },
        None => None,
    };
    let states = decode.state_count();
    let interp = runner;
    let run_err = |io: &mut Io<'_>, interp: &crate::runner::Runner<'_>, e: RunError| {
        let _ = io.stdout.write_all(interp.printed().as_bytes());
        let _ = io.stderr.write_all(crate::run::render_error(file, &e, color).as_bytes());
        1
    };

    // Copies: a result may be a view into a storage much larger than the logits.
    let keep_logits = args.logits_out.is_some();
    let mut logits_rows: Vec<Tensor> = Vec::new();
    let mut generated = Vec::with_capacity(args.max_new_tokens);
    // The prompt in chunks of `--ubatch` positions when the module can extend its cache.
    let chunk = if extend.is_some() { usize::try_from(args.ubatch).unwrap_or(usize::MAX) } else { prompt.len() };
    let mut chunks = prompt.chunks(chunk.max(1));
    let first = chunks.next().unwrap_or(&[]);
    let call_args = prefill.args(first, Vec::new());
    if let Err(e) = prefill.check_bounds(&call_args) {
        return fail(io, e);
    }
    let start = Instant::now();
    let out = match interp.call_global(prefill.g, call_args) {
        Ok(v) => v,
        Err(e) => return run_err(io, interp, e),
    };
    let mut step = match split_result("prefill", out, states, vocab) {
        Ok(s) => s,
        Err(e) => return fail(io, e),
    };
    for part in chunks {
        let Some(ext) = &extend else { break };
        let call_args = ext.args(part, std::mem::take(&mut step.state));
        if let Err(e) = ext.check_bounds(&call_args) {
            return fail(io, e);
        }
        let out = match interp.call_global(ext.g, call_args) {
            Ok(v) => v,
            Err(e) => return run_err(io, interp, e),
        };
        step = match split_result("extend", out, states, vocab) {
            Ok(s) => s,
            Err(e) => return fail(io, e),
        };
    }
    let prefill_time = start.elapsed();
    generated.push(step.token);
    if keep_logits {
        logits_rows.push(step.logits.deep_copy());
    }
    let mut stopped = tokens.stops_at(step.token);
    if !stopped && let Err(e) = show(io, &mut tokens, step.token) {
        return fail(io, e);
    }
    let mut step_times: Vec<Duration> = Vec::new();
    while generated.len() < args.max_new_tokens && !stopped {
        let call_args = decode.args(&[step.token], std::mem::take(&mut step.state));
        if let Err(e) = decode.check_bounds(&call_args) {
            let _ = writeln!(io.stdout);
            return fail(io, e);
        }
        let start = Instant::now();
        let out = match interp.call_global(decode.g, call_args) {
            Ok(v) => v,
            Err(e) => {
                let _ = writeln!(io.stdout);
                return run_err(io, interp, e);
            }
        };
        step_times.push(start.elapsed());
        step = match split_result("decode", out, states, vocab) {
            Ok(s) => s,
            Err(e) => {
                let _ = writeln!(io.stdout);
                return fail(io, e);
            }
        };
        generated.push(step.token);
        if keep_logits {
            logits_rows.push(step.logits.deep_copy());
        }
        stopped = tokens.stops_at(step.token);
        if !stopped && let Err(e) = show(io, &mut tokens, step.token) {
            let _ = writeln!(io.stdout);
            return fail(io, e);
        }
    }
    let _ = write!(io.stdout, "{}", tokens.finish());
    let _ = writeln!(io.stdout);
    let _ = io.stdout.write_all(interp.printed().as_bytes());

    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let _ = writeln!(
        io.stderr,
        "relax-run: prefill: {} prompt tokens in {:.3} ms ({:.1} tokens/s)",
        prompt.len(),
        ms(prefill_time),
        prompt.len() as f64 / prefill_time.as_secs_f64().max(1e-9)
    );
    if !step_times.is_empty() {
        let total: Duration = step_times.iter().sum();
        let mut sorted = step_times.clone();
        sorted.sort();
        let _ = writeln!(
            io.stderr,
            "relax-run: decode: {} tokens in {:.3} ms ({:.1} tokens/s, median step {:.3} ms)",
            step_times.len(),
            ms(total),
            step_times.len() as f64 / total.as_secs_f64().max(1e-9),
            ms(sorted[sorted.len() / 2])
        );
    }
    if let Some(path) = &args.logits_out
        && let Err(e) = write_logits(path, &logits_rows)
    {
        return fail(io, e);
    }
    0
}

/// Prints a new token as it comes.
fn show(io: &mut Io<'_>, tokens: &mut TokenIo<'_>, id: i64) -> Result<(), String> {
    let text = tokens.show(id)?;
    let _ = write!(io.stdout, "{text}");
    let _ = io.stdout.flush();
    Ok(())
}

/// Writes the logits of every step as one `(steps, vocab)` array.
fn write_logits(path: &Path, rows: &[Tensor]) -> Result<(), String> {
    let first = rows.first().ok_or("no logits to write")?;
    let (n, dtype) = (first.numel(), first.dtype);
    if rows.iter().any(|r| r.numel() != n || r.dtype != dtype) {
        return Err("the logits of the steps differ in size or dtype: cannot write them as one array".to_string());
    }
    let all = Tensor::from_scalars(&[rows.len() as i64, n as i64], dtype, rows.iter().flat_map(Tensor::scalars));
    let bytes = npy::write(&all).map_err(|e| e.message)?;
    std::fs::write(path, bytes).map_err(|e| format!("cannot write `{}`: {e}", path.display()))
}
