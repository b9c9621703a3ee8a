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

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use relax_ir::{AttrValue, DataType, Global, Module, PrimExprData, RelaxFunction, TyData};
use relax_runtime::{Interpreter, RunError, Scalar, Tensor, Value, npy};

use crate::Io;
use crate::source::SourceFile;

/// The flags of `--generate` and `--weights-dir`.
#[derive(clap::Args, Debug, Default)]
pub struct GenerateArgs {
    /// Generate tokens: run `prefill` on `--prompt`, then `decode` once per further
    /// token, feeding each call's state (the KV cache) to the next (docs/llama.md).
    #[arg(long, requires = "prompt", conflicts_with_all = ["check_exec", "output", "output_dir", "inputs", "repeat", "seed", "syms"])]
    pub generate: bool,
    /// With `--generate`: the prompt's token ids, comma-separated (`1,2,3`).
    #[arg(long, value_name = "IDS", requires = "generate")]
    pub prompt: Option<String>,
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
}

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
    fn get(&mut self, fname: &str, f: &RelaxFunction, p: relax_ir::Var) -> Result<Option<Value>, String> {
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

/// What each parameter of a step function receives.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Role {
    Tokens,
    Weight,
    State,
}

/// One of the two functions, with its parameter roles.
struct StepFn<'m> {
    name: &'static str,
    g: Global,
    f: &'m RelaxFunction,
    roles: Vec<Role>,
    /// The weights, in parameter order.
    weights: Vec<Value>,
    /// The token tensor's dtype and rank.
    token_dtype: DataType,
    token_rank: usize,
    /// Upper bounds of bare symbolic dims of the parameters: (param, dim, variable, bound).
    bounds: Vec<(usize, usize, String, i64)>,
}

impl<'m> StepFn<'m> {
    fn new(m: &'m Module, name: &'static str, weights: &mut Weights<'_>) -> Result<StepFn<'m>, String> {
        let g = m
            .lookup(name)
            .ok_or_else(|| format!("`--generate` needs a function `{name}` (docs/llama.md); the module has none"))?;
        let f = m.relax(g).ok_or_else(|| format!("`{name}` is not a Relax function"))?;
        let params = &f.func.params;
        let Some(&p0) = params.first() else {
            return Err(format!("`{name}` has no parameters: its first must be the token ids"));
        };
        let (token_dtype, token_rank) = match f.pool.ty(f.vars[p0].ty) {
            TyData::Tensor { dtype, ndim, .. } if dtype.is_int() && (*ndim == 1 || *ndim == 2) => {
                (*dtype, *ndim as usize)
            }
            _ => {
                return Err(format!(
                    "parameter `{}` of `{name}` must be the token ids, an integer tensor of rank 1 or 2",
                    f.vars[p0].name
                ));
            }
        };
        let mut roles = vec![Role::Tokens];
        let mut ws = Vec::new();
        for &p in &params[1..] {
            match weights.get(name, f, p)? {
                Some(v) => {
                    roles.push(Role::Weight);
                    ws.push(v);
                }
                None => roles.push(Role::State),
            }
        }
        let bounds = param_bounds(f);
        Ok(StepFn { name, g, f, roles, weights: ws, token_dtype, token_rank, bounds })
    }

    fn state_count(&self) -> usize {
        self.roles.iter().filter(|&&r| r == Role::State).count()
    }

    /// The names of the state parameters.
    fn state_names(&self) -> Vec<&str> {
        self.f
            .func
            .params
            .iter()
            .zip(&self.roles)
            .filter(|(_, r)| **r == Role::State)
            .map(|(&p, _)| self.f.vars[p].name.as_str())
            .collect()
    }

    /// The arguments of a call.
    fn args(&self, tokens: &[i64], state: Vec<Value>) -> Vec<Value> {
        let n = tokens.len() as i64;
        let shape: Vec<i64> = if self.token_rank == 2 { vec![1, n] } else { vec![n] };
        let ids =
            Tensor::from_scalars(&shape, self.token_dtype, tokens.iter().map(|&t| Scalar::int(self.token_dtype, t)));
        let mut weights = self.weights.iter();
        let mut state = state.into_iter();
        self.roles
            .iter()
            .map(|r| match r {
                Role::Tokens => Value::Tensor(ids.clone()),
                Role::Weight => weights.next().expect("one weight per weight role").clone(),
                Role::State => state.next().expect("one state value per state role"),
            })
            .collect()
    }

    /// Checks the arguments' dims against the function's `tir_var_upper_bound`.
    fn check_bounds(&self, args: &[Value]) -> Result<(), String> {
        for (p, d, var, ub) in &self.bounds {
            let dims = match args.get(*p) {
                Some(Value::Tensor(t)) => &t.shape,
                Some(Value::Shape(s)) => s,
                _ => continue,
            };
            if let Some(&dim) = dims.get(*d)
                && dim > *ub
            {
                return Err(format!(
                    "`{}` would run with `{var}` = {dim}, above its `tir_var_upper_bound` of {ub}: use a shorter prompt or fewer new tokens",
                    self.name
                ));
            }
        }
        Ok(())
    }
}

/// (param, dim, variable name, upper bound) for each dim of a tensor or shape parameter
/// that is a bare variable named in `tir_var_upper_bound`.
fn param_bounds(f: &RelaxFunction) -> Vec<(usize, usize, String, i64)> {
    let Some(AttrValue::Dict(items)) = f.func.attrs.get("tir_var_upper_bound") else { return Vec::new() };
    let mut out = Vec::new();
    for (i, &p) in f.func.params.iter().enumerate() {
        let Some(dims) = f.pool.ty(f.vars[p].ty).dims() else { continue };
        for (d, &e) in dims.iter().enumerate() {
            let PrimExprData::Var(s) = f.pool.prim(e) else { continue };
            let name = &f.pool.vars[*s].name;
            let bound = items.iter().find(|(k, _)| k == name).and_then(|(_, v)| match v {
                AttrValue::Int(x) | AttrValue::PrimInt(_, x) => Some(*x),
                _ => None,
            });
            if let Some(ub) = bound {
                out.push((i, d, name.clone(), ub));
            }
        }
    }
    out
}

/// The vocabulary size: the last dim of the logits in `prefill`'s declared result, when
/// static.
fn vocab_size(f: &RelaxFunction) -> Option<i64> {
    let TyData::Tuple(fields) = f.pool.ty(f.func.ret) else { return None };
    let dims = f.pool.ty(*fields.get(1)?).dims()?;
    f.pool.as_int(*dims.last()?)
}

/// Parses `--prompt`.
fn parse_prompt(text: &str) -> Result<Vec<i64>, String> {
    let ids: Result<Vec<i64>, _> = text.split(',').map(|s| s.trim().parse::<i64>()).collect();
    match ids {
        Ok(v) if !v.is_empty() && v.iter().all(|&x| x >= 0) => Ok(v),
        _ => Err(format!("`--prompt {text}`: expected comma-separated non-negative token ids, as in `1,2,3`")),
    }
}

/// The result of one step: the next token, its logits and the state.
struct StepOut {
    token: i64,
    logits: Tensor,
    state: Vec<Value>,
}

/// Splits a step's result; the token must be in `0..vocab` (it goes into the next step's
/// embedding lookup, which compiled kernels do not bounds-check).
fn split_result(name: &str, v: Value, states: usize, vocab: Option<i64>) -> Result<StepOut, String> {
    let expect = format!("`{name}` must return a tuple (next token, logits, {states} state values)");
    let Value::Tuple(fields) = v else { return Err(format!("{expect}, but it returned {}", v.describe())) };
    if fields.len() != 2 + states {
        return Err(format!("{expect}, but it returned {} values", fields.len()));
    }
    let token = match &fields[0] {
        Value::Tensor(t) if t.numel() == 1 && !t.dtype.is_float() => t.get(0).as_i64(),
        other => {
            return Err(format!(
                "{expect}; the next token is {}, not an integer tensor of one element",
                other.describe()
            ));
        }
    };
    let logits = match &fields[1] {
        Value::Tensor(t) => t.clone(),
        other => return Err(format!("{expect}; the logits are {}, not a tensor", other.describe())),
    };
    if token < 0 || vocab.is_some_and(|n| token >= n) {
        let range = vocab.map_or(String::new(), |n| format!(" of {n} tokens"));
        return Err(format!("`{name}` returned token {token}, outside the vocabulary{range}"));
    }
    Ok(StepOut { token, logits, state: fields[2..].to_vec() })
}

/// Runs `--generate`: returns the exit status.
#[expect(clippy::too_many_arguments, reason = "the pieces of one relax-run invocation")]
pub(crate) fn generate(
    args: &GenerateArgs,
    gguf: Option<&crate::llm::GgufWeights>,
    file: &SourceFile,
    module: &Module,
    native: Option<&dyn relax_runtime::native::NativeKernels>,
    options: relax_runtime::Options,
    color: bool,
    io: &mut Io<'_>,
) -> i32 {
    let fail = |io: &mut Io<'_>, msg: String| {
        let _ = writeln!(io.stderr, "relax-run: error: {msg}");
        1
    };
    let prompt = match parse_prompt(args.prompt.as_deref().unwrap_or("")) {
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
    let states = decode.state_count();
    let mut interp = Interpreter::with_options(module, options).with_lowering(&crate::lowering::Legalize);
    interp.native = native;
    let run_err = |io: &mut Io<'_>, interp: &Interpreter<'_>, e: RunError| {
        let _ = io.stdout.write_all(interp.printed.borrow().as_bytes());
        let _ = io.stderr.write_all(crate::run::render_error(file, &e, color).as_bytes());
        1
    };

    // Copies: a result may be a view into a storage much larger than the logits.
    let keep_logits = args.logits_out.is_some();
    let mut logits_rows: Vec<Tensor> = Vec::new();
    let mut generated = Vec::with_capacity(args.max_new_tokens);
    let call_args = prefill.args(&prompt, Vec::new());
    if let Err(e) = prefill.check_bounds(&call_args) {
        return fail(io, e);
    }
    let start = Instant::now();
    let out = match interp.call_global(prefill.g, call_args, relax_ir::Span::NONE) {
        Ok(v) => v,
        Err(e) => return run_err(io, &interp, e),
    };
    let prefill_time = start.elapsed();
    let mut step = match split_result("prefill", out, states, vocab) {
        Ok(s) => s,
        Err(e) => return fail(io, e),
    };
    let _ = write!(io.stdout, "{}", step.token);
    let _ = io.stdout.flush();
    generated.push(step.token);
    if keep_logits {
        logits_rows.push(step.logits.deep_copy());
    }
    let mut step_times: Vec<Duration> = Vec::new();
    while generated.len() < args.max_new_tokens {
        let call_args = decode.args(&[step.token], std::mem::take(&mut step.state));
        if let Err(e) = decode.check_bounds(&call_args) {
            let _ = writeln!(io.stdout);
            return fail(io, e);
        }
        let start = Instant::now();
        let out = match interp.call_global(decode.g, call_args, relax_ir::Span::NONE) {
            Ok(v) => v,
            Err(e) => {
                let _ = writeln!(io.stdout);
                return run_err(io, &interp, e);
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
        let _ = write!(io.stdout, ",{}", step.token);
        let _ = io.stdout.flush();
        generated.push(step.token);
        if keep_logits {
            logits_rows.push(step.logits.deep_copy());
        }
    }
    let _ = writeln!(io.stdout);
    let _ = io.stdout.write_all(interp.printed.borrow().as_bytes());

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompts() {
        assert_eq!(parse_prompt("1,2, 3").unwrap(), vec![1, 2, 3]);
        assert!(parse_prompt("").is_err());
        assert!(parse_prompt("1,,2").is_err());
        assert!(parse_prompt("-1").is_err());
        assert!(parse_prompt("a").is_err());
    }
}
