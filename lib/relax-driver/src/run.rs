//! `relax-run`: run a function of a module with the reference interpreter (`cli.md`,
//! `docs/runtime.md`).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use clap::{CommandFactory, FromArgMatches, Parser};
use relax_runtime::{RunError, Value, exec_check, inputs, npy, print};

use crate::Io;
use crate::ir_text::verify_diagnostics;
use crate::render::render_all;
use crate::source::SourceFile;

/// The flags of `relax-run`.
#[path = "run_library.rs"]
mod library_run;

#[derive(Parser, Debug)]
#[command(
    name = "relax-run",
    about = "Run a function of a relax module with the reference interpreter or the JIT",
    version,
    long_version = crate::LONG_VERSION,
    after_help = "Results are printed (numpy-like text, docs/runtime.md) unless --output or --output-dir is given."
)]
struct RunCli {
    /// Input module (`-` or absent: standard input), a GGUF model file, which is
    /// imported (docs/llm.md) and whose tensors bind the weights, or a library written by
    /// `relax-translate --emit=lib` (docs/library.md).
    input: Option<String>,
    /// The function to run.
    #[arg(long, value_name = "NAME", default_value = "main")]
    entry: String,
    /// A `.npy` file for the next parameter, in parameter order (repeatable).
    #[arg(long = "input", value_name = "PATH.npy")]
    inputs: Vec<PathBuf>,
    /// The value of a symbolic variable, `NAME=INT` (repeatable).
    #[arg(long = "sym", value_name = "NAME=INT")]
    syms: Vec<String>,
    /// Fill parameters without `--input` with deterministic pseudo-random values.
    #[arg(long, value_name = "S")]
    seed: Option<u64>,
    /// Write a tensor result to this `.npy` file.
    #[arg(long, value_name = "PATH.npy", conflicts_with = "output_dir")]
    output: Option<PathBuf>,
    /// Write the result's tensors to DIR/out0.npy, DIR/out1.npy, ... (tuples flattened).
    #[arg(long = "output-dir", value_name = "DIR")]
    output_dir: Option<PathBuf>,
    /// The execution engine: `interp`, the reference interpreter, or `jit`, kernels
    /// compiled by LLVM (after the default lowering pipeline when the module needs it);
    /// `vulkan` (SPIR-V kernels) or `cuda` (PTX kernels) on a GPU (`gpu.rs`). Default:
    /// `interp`, or `jit` for a GGUF model.
    #[arg(long, value_name = "ENGINE", value_parser = ["interp", "jit", "vulkan", "cuda"])]
    engine: Option<String>,
    /// With `--engine jit`: what runs the Relax level, `vm` (the default: the module's
    /// executable, docs/executable.md) or `interp` (the tree interpreter). Without the
    /// flag, a module the VM cannot run falls back to the interpreter; with
    /// `--relax-exec=vm` that is an error.
    #[arg(long = "relax-exec", value_name = "EXEC", value_parser = ["vm", "interp"])]
    relax_exec: Option<String>,
    /// With `--engine jit`: check every buffer access of the compiled kernels against its
    /// buffer's dims (the default, but for `--generate` and GGUF models).
    #[arg(long = "check-bounds", conflicts_with = "unchecked")]
    check_bounds: bool,
    /// With `--engine jit`: compile the kernels without bounds checks (an index out of
    /// range is then undefined behaviour, as in C).
    #[arg(long = "unchecked")]
    unchecked: bool,
    /// With `--engine jit`: do not run the default lowering pipeline.
    #[arg(long = "no-default-pipeline")]
    no_default_pipeline: bool,
    /// With `--engine cuda`: the CUDA driver library to open instead of `libcuda.so.1`
    /// (default: `$RELAX_CUDA_DRIVER`), e.g. the PTX simulator `librelax_cuda_sim.so`.
    #[arg(long = "cuda-driver", value_name = "PATH")]
    cuda_driver: Option<PathBuf>,
    /// With `--engine jit`: the threads that compile the kernels and run their parallel
    /// loops, the calling thread included (default: one per CPU).
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = parse_threads)]
    threads: Option<usize>,
    /// Run N times and print the median wall time to standard error.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = parse_repeat)]
    repeat: usize,
    /// Print the result to standard output (the default without --output/--output-dir).
    #[arg(long)]
    print: bool,
    /// Check the `# EXEC:` lines of the file instead of running the entry function.
    #[arg(long = "check-exec")]
    check_exec: bool,
    /// With `--check-exec`: take the `# EXEC:` lines from this file (e.g. the source of a
    /// module that went through `relax-opt`, which drops comments).
    #[arg(long = "exec-from", value_name = "FILE")]
    exec_from: Option<PathBuf>,
    /// Run every op that has a legalization through it instead of its reference kernel.
    #[arg(long = "no-kernels")]
    no_kernels: bool,
    /// With `--engine jit`: compile every kernel, neither reading nor writing the compile
    /// cache (`$RELAX_CACHE_DIR`, else `$XDG_CACHE_HOME/relax`, else `~/.cache/relax`).
    #[arg(long = "no-cache", conflicts_with = "cache_dir")]
    no_cache: bool,
    /// With `--engine jit`: the compile cache's directory (instead of the default).
    #[arg(long = "cache-dir", value_name = "DIR")]
    cache_dir: Option<PathBuf>,
    /// `--generate` and `--weights-dir` (`generate.rs`).
    #[command(flatten)]
    gen_args: crate::generate::GenerateArgs,
    /// Color diagnostics: `never` (default) or `always`.
    #[arg(long = "color", value_name = "WHEN", default_value = "never")]
    color: String,
}

/// Renders a run-time error: at its source line when it has one.
pub(crate) fn render_error(file: &SourceFile, e: &RunError, color: bool) -> String {
    crate::cli::render_diagnostic("relax-run", file, &e.to_diagnostic(), color)
}

fn fail(io: &mut Io<'_>, msg: impl std::fmt::Display) -> i32 {
    crate::cli::fail(io, "relax-run", msg)
}

/// Runs `relax-run`.
pub fn run_main(args: Vec<OsString>, io: &mut Io<'_>) -> i32 {
    if let Some(msg) = crate::cli::non_utf8_arg("relax-run", &args) {
        let _ = io.stderr.write_all(msg.as_bytes());
        return 1;
    }
    let matches = match RunCli::command().try_get_matches_from(args) {
        Ok(m) => m,
        Err(e) => return crate::cli::clap_exit(&e, io),
    };
    let cli = match RunCli::from_arg_matches(&matches) {
        Ok(c) => c,
        Err(e) => return fail(io, e),
    };
    let color = match crate::cli::parse_color(&cli.color) {
        Ok(c) => c,
        Err(e) => return fail(io, e),
    };
    let syms = match parse_syms(&cli.syms) {
        Ok(s) => s,
        Err(e) => return fail(io, e),
    };
    if let Some(path) = cli.input.as_deref().filter(|p| *p != "-" && library_run::is_library(p)) {
        return library_run::run_library(&cli, path, &syms, io);
    }
    let gguf_input = cli.input.as_deref().filter(|p| *p != "-" && crate::llm::is_gguf(p));
    let (file, mut module) = if let Some(path) = gguf_input {
        match crate::llm::import(path, cli.gen_args.context, cli.gen_args.cache_type) {
            Ok(fm) => fm,
            Err(e) => return fail(io, e),
        }
    } else {
        if cli.gen_args.context.is_some() {
            return fail(io, "`--context` sizes the KV cache of an imported GGUF model: the input is not one");
        }
        if cli.gen_args.cache_type.is_some() {
            return fail(io, "`--cache-type` sets the KV cache of an imported GGUF model: the input is not one");
        }
        let file = match crate::cli::read_input(cli.input.as_deref(), io) {
            Ok(f) => f,
            Err(e) => return fail(io, e),
        };
        match relax_parser::parse_module(&file.text) {
            Ok(m) => (file, m),
            Err(d) => {
                let _ = io.stderr.write_all(render_all(&file, &d, color).as_bytes());
                return 1;
            }
        }
    };
    if let Err(d) = verify_diagnostics(&module) {
        let _ = io.stderr.write_all(render_all(&file, &d, color).as_bytes());
        return 1;
    }
    if let Some(out) = &cli.gen_args.convert_weights {
        return convert_weights(&module, cli.gen_args.weights_dir.as_deref(), out, io);
    }
    let weights_path = cli.gen_args.weights.clone().or_else(|| gguf_input.map(PathBuf::from));
    let gguf = match weights_path.as_deref().map(crate::llm::GgufWeights::open) {
        None => None,
        Some(Ok(w)) => Some(w),
        Some(Err(e)) => return fail(io, e),
    };
    let engine = cli.engine.clone().unwrap_or_else(|| {
        if gguf_input.is_some() && cfg!(feature = "llvm") { "jit".to_string() } else { "interp".to_string() }
    });
    let cx = RunCx { cli: &cli, file: &file, color, syms: &syms, gguf: gguf.as_ref(), llm: gguf_input.is_some() };
    if engine == "jit" {
        return run_jit(&cx, module, io);
    }
    if matches!(engine.as_str(), "vulkan" | "cuda") {
        let mut exec = |m: &relax_ir::Module,
                        native: Option<&dyn relax_runtime::native::NativeKernels>,
                        io: &mut Io<'_>| { execute(&cx, m, native, None, io) };
        let driver = cli.cuda_driver.as_deref().map(Path::as_os_str);
        return crate::gpu::run_gpu(&engine, !cli.no_default_pipeline, driver, &file, module, color, io, &mut exec);
    }
    // The interpreter runs lowered TIR: one lowered copy, made here.
    if let Err(d) = crate::pipeline::lower_tir(&mut module) {
        let _ = io.stderr.write_all(render_all(&file, &d, color).as_bytes());
        return 1;
    }
    execute(&cx, &module, None, None, io)
}

/// `--convert-weights OUT`: the weights of `--weights-dir` as the module takes them.
fn convert_weights(module: &relax_ir::Module, dir: Option<&Path>, out: &Path, io: &mut Io<'_>) -> i32 {
    let Some(dir) = dir else { return fail(io, "`--convert-weights` needs `--weights-dir`") };
    if !dir.is_dir() {
        return fail(io, format!("`--weights-dir {}` is not a directory", dir.display()));
    }
    match crate::weights::convert(module, dir, out) {
        Ok(done) => {
            let (read, written) = done.quantized.iter().fold((0, 0), |(r, w), (_, fr, fw)| (r + fr, w + fw));
            let mb = |b: usize| b as f64 / 1e6;
            let _ = writeln!(
                io.stderr,
                "relax-run: wrote {} weights to {}: {} quantized ({:.2} MB of .npy -> {:.2} MB), {} copied",
                done.quantized.len() + done.copied.len(),
                out.display(),
                done.quantized.len(),
                mb(read),
                mb(written),
                done.copied.len()
            );
            0
        }
        Err(e) => fail(io, e),
    }
}

/// What a run needs besides the module: the flags, the source, the symbols and the
/// weights file.
struct RunCx<'a> {
    cli: &'a RunCli,
    file: &'a SourceFile,
    color: bool,
    syms: &'a [(String, i64)],
    gguf: Option<&'a crate::llm::GgufWeights>,
    /// The input is an imported GGUF model: the JIT runs the LLM pipeline.
    llm: bool,
}

/// `--engine jit`: the default pipeline, then the module's kernels compiled once.
#[cfg(feature = "llvm")]
fn run_jit(cx: &RunCx<'_>, mut module: relax_ir::Module, io: &mut Io<'_>) -> i32 {
    let (cli, file, color) = (cx.cli, cx.file, cx.color);
    let bits = crate::pipeline::vector_bits(None);
    // The results each kernel overwrites completely, found before `schedule-cpu`.
    let mut overwrites = std::collections::HashMap::new();
    let mut note = |m: &relax_ir::Module| overwrites = crate::pipeline::overwritten_params(m);
    let piped = match (cli.no_default_pipeline, cx.llm) {
        (true, _) => Ok(()),
        (false, true) => crate::pipeline::run_llm_pipeline_with(&mut module, bits, &mut note),
        (false, false) => crate::pipeline::run_default_pipeline_with(&mut module, bits, &mut note).map(|_| ()),
    };
    if let Err(d) = piped {
        crate::cli::report(io, "relax-run", file, &d, color);
        return 1;
    }
    if let Err(d) = crate::pipeline::lower_tir(&mut module) {
        crate::cli::report(io, "relax-run", file, &d, color);
        return 1;
    }
    // Bounds checks: on for modules, off for model generation (its kernels come from our
    // own importer and run hot), unless a flag says otherwise (docs/codegen.md).
    let checked = cli.check_bounds || !(cli.unchecked || cx.llm || cli.gen_args.generate);
    let opts = relax_codegen::llvm::Options { check_bounds: checked, ..Default::default() };
    // The executable of the Relax level, unless the interpreter runs it.
    let exec = match cli.relax_exec.as_deref() {
        Some("interp") => None,
        explicit => match relax_runtime::vm::Executable::compile(&module) {
            Ok(mut e) => {
                e.set_overwrites(&overwrites);
                e.attach_source(&file.name, &file.text);
                Some(e)
            }
            Err(err) if explicit.is_some() => {
                let _ = io.stderr.write_all(render_error(file, &err, color).as_bytes());
                return 1;
            }
            Err(_) => None,
        },
    };
    let jit_opts = relax_runtime::jit::JitOptions {
        cache_dir: match (&cli.cache_dir, cli.no_cache) {
            (_, true) => None,
            (Some(d), false) => Some(d.clone()),
            (None, false) => relax_runtime::jit::cache::default_dir(),
        },
        threads: cli.threads.unwrap_or(0),
        overwrites,
    };
    let timed = cli.repeat > 1 || cli.gen_args.generate;
    let ran = relax_runtime::jit::compile_with(&module, &opts, &jit_opts, |jk| {
        if timed {
            let p = &jk.phase_seconds;
            let phases = if jk.cached < jk.len() {
                format!(
                    "; CPU time: TIR to LLVM IR {:.3} s, LLVM optimization {:.3} s, machine code {:.3} s",
                    p.lower, p.optimize, p.machine_code
                )
            } else {
                String::new()
            };
            let _ = writeln!(
                io.stderr,
                "relax-run: jit: {} kernels ready in {:.3} s ({} from the compile cache{phases})",
                jk.len(),
                jk.compile_seconds,
                jk.cached
            );
        }
        let Some(mut exec) = exec else { return execute(cx, &module, Some(jk), None, io) };
        if let Err(e) = jk.fill_errors(&mut exec) {
            return fail(io, e);
        }
        // Run what a library would hold: the executable as bytes, read back.
        let exec = match relax_runtime::vm::Executable::from_bytes(&exec.to_bytes()) {
            Ok(e) => e,
            Err(e) => return fail(io, e),
        };
        let provider = jk.provider(&exec, &module);
        execute(cx, &module, Some(jk), Some((&exec, &provider)), io)
    });
    match ran {
        Ok(code) => code,
        Err(e) => fail(io, e),
    }
}

#[cfg(not(feature = "llvm"))]
fn run_jit(_: &RunCx<'_>, _: relax_ir::Module, io: &mut Io<'_>) -> i32 {
    fail(io, "this build of relax-run has no JIT (built without the `llvm` feature)")
}

/// The most threads `--threads` accepts.
const MAX_THREADS: usize = 1024;

/// The value of `--threads`: a thread count from 1 to [`MAX_THREADS`].
fn parse_threads(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(n) if (1..=MAX_THREADS).contains(&n) => Ok(n),
        _ => Err(format!("expected a number of threads from 1 to {MAX_THREADS}")),
    }
}

/// The value of `--repeat`: a run count of at least 1.
fn parse_repeat(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err("expected a number of runs of at least 1".to_string()),
    }
}

/// `--sym NAME=INT` values.
fn parse_syms(raw: &[String]) -> Result<Vec<(String, i64)>, String> {
    let mut syms = Vec::new();
    for s in raw {
        let parsed = s.split_once('=').and_then(|(n, v)| Some((n.trim().to_string(), v.trim().parse::<i64>().ok()?)));
        match parsed {
            Some(p) if !p.0.is_empty() => syms.push(p),
            _ => return Err(format!("`--sym {s}`: expected NAME=INT")),
        }
    }
    Ok(syms)
}

/// Runs the entry (or the `# EXEC:` lines) with the VM over `vm` when given, else with
/// the interpreter, PrimFuncs through `native` when given.
fn execute(
    cx: &RunCx<'_>,
    module: &relax_ir::Module,
    native: Option<&dyn relax_runtime::native::NativeKernels>,
    vm: Option<(&relax_runtime::vm::Executable, &dyn relax_runtime::vm::KernelProvider)>,
    io: &mut Io<'_>,
) -> i32 {
    let (cli, file, color, syms) = (cx.cli, cx.file, cx.color, cx.syms);
    if cli.check_exec {
        let exec_file = match &cli.exec_from {
            Some(p) => match std::fs::read_to_string(p) {
                Ok(t) => SourceFile::new(p.display().to_string(), t),
                Err(e) => return fail(io, format!("cannot read `{}`: {e}", p.display())),
            },
            None => file.clone(),
        };
        return check_exec(&exec_file, module, native, vm, color, io);
    }
    let options = relax_runtime::Options { kernels: !cli.no_kernels, ..Default::default() };
    let runner = match vm {
        Some((e, k)) => crate::runner::Runner::vm(e, k, module),
        None => crate::runner::Runner::interp(module, options, native),
    };
    if cli.gen_args.generate {
        return crate::generate::generate(&cli.gen_args, cx.gguf, file, module, &runner, color, io);
    }
    let Some(g) = module.lookup(&cli.entry) else {
        let names = module.globals.iter().filter(|(g, _)| module.relax(*g).is_some()).map(|(_, d)| d.name.as_str());
        let hint =
            relax_ir::diag::suggest(&cli.entry, names).map_or(String::new(), |n| format!("; did you mean `{n}`?"));
        return fail(io, format!("the module has no function `{}`{hint}", cli.entry));
    };
    if module.relax(g).is_none() {
        return fail(io, format!("`{}` is not a Relax function", cli.entry));
    }
    let mut weights = crate::generate::Weights::new(cli.gen_args.weights_dir.as_deref(), cx.gguf);
    let given = match crate::generate::named_inputs(module, g, &mut weights, &cli.inputs) {
        Ok(v) => v,
        Err(e) => return fail(io, e),
    };
    let args = match inputs::make_inputs(module, g, &given, syms, cli.seed) {
        Ok(a) => a,
        Err(e) => return fail(io, e),
    };
    let mut times = Vec::new();
    let mut kernel_times = Vec::new();
    let mut result = None;
    // Kernels may write their inputs in place: every run gets fresh copies, made once
    // and refilled from the inputs before each later run (allocating and freeing them
    // every run would leave the allocator in a state no real caller sees).
    let copies: Vec<Value> = args.iter().map(fresh).collect();
    for rep in 0..cli.repeat.max(1) {
        if rep > 0 {
            for (c, a) in copies.iter().zip(&args) {
                refill(c, a);
            }
        }
        let run_args = copies.clone();
        let start = std::time::Instant::now();
        let r = runner.call_global(g, run_args);
        times.push(start.elapsed());
        kernel_times.push(native.map_or(0.0, |n| n.take_kernel_seconds()));
        match r {
            Ok(v) => result = Some(v),
            Err(e) => {
                let _ = io.stdout.write_all(runner.printed().as_bytes());
                let _ = io.stderr.write_all(render_error(file, &e, color).as_bytes());
                return 1;
            }
        }
        if result.is_some() && cli.repeat <= 1 {
            break;
        }
    }
    let result = result.expect("ran at least once");
    let _ = io.stdout.write_all(runner.printed().as_bytes());
    let kernel_times = native.is_some().then_some(kernel_times);
    report_result(cli, &result, times, kernel_times, io)
}

/// Prints or writes the result of the entry and, with `--repeat`, the median times.
fn report_result(
    cli: &RunCli,
    result: &Value,
    mut times: Vec<std::time::Duration>,
    kernel_times: Option<Vec<f64>>,
    io: &mut Io<'_>,
) -> i32 {
    if cli.repeat > 1 {
        times.sort();
        let median = times[times.len() / 2];
        let _ =
            writeln!(io.stderr, "relax-run: median time of {} runs: {:.3} ms", times.len(), median.as_secs_f64() * 1e3);
        if let Some(mut kernel_times) = kernel_times {
            kernel_times.sort_by(f64::total_cmp);
            let k = kernel_times[kernel_times.len() / 2];
            let _ = writeln!(io.stderr, "relax-run: median time in compiled kernels: {:.3} ms", k * 1e3);
        }
    }
    if cli.print || (cli.output.is_none() && cli.output_dir.is_none()) {
        let _ = writeln!(io.stdout, "{}", print::value_text(result));
    }
    if let Some(path) = &cli.output {
        let Value::Tensor(t) = result else {
            return fail(io, format!("the result is {}, not a tensor: use `--output-dir`", result.describe()));
        };
        if let Err(e) = write_npy(path, t) {
            return fail(io, e);
        }
    }
    if let Some(dir) = &cli.output_dir {
        if let Err(e) = std::fs::create_dir_all(dir) {
            return fail(io, format!("cannot create `{}`: {e}", dir.display()));
        }
        let mut tensors = Vec::new();
        flatten_tensors(result, &mut tensors);
        for (i, t) in tensors.iter().enumerate() {
            if let Err(e) = write_npy(&dir.join(format!("out{i}.npy")), t) {
                return fail(io, e);
            }
        }
    }
    0
}

/// Copies the tensors of `src` into those of `dst`, a [`fresh`] copy of it (tensors
/// `fresh` passed as they are, which share `src`'s storage, are left alone).
fn refill(dst: &Value, src: &Value) {
    match (dst, src) {
        (Value::Tensor(d), Value::Tensor(s)) if !std::rc::Rc::ptr_eq(&d.data, &s.data) => {
            let n = s.nbytes();
            let from = s.data.borrow();
            d.data.borrow_mut()[d.offset..d.offset + n].copy_from_slice(&from[s.offset..s.offset + n]);
        }
        (Value::Tuple(d), Value::Tuple(s)) => d.iter().zip(s.iter()).for_each(|(d, s)| refill(d, s)),
        _ => {}
    }
}

/// A copy of a value whose tensors have storage of their own; tensors of a mapped file
/// (weights, which kernels do not write) are passed as they are.
fn fresh(v: &Value) -> Value {
    match v {
        Value::Tensor(t) if t.data.borrow().is_mapped() => Value::Tensor(t.clone()),
        Value::Tensor(t) => Value::Tensor(t.deep_copy()),
        Value::Tuple(f) => Value::tuple(f.iter().map(fresh).collect()),
        other => other.clone(),
    }
}

/// The tensors of a result in order (tuples flattened; shapes and scalars as int64 /
/// 0-d tensors).
fn flatten_tensors(v: &Value, out: &mut Vec<relax_runtime::Tensor>) {
    use relax_ir::DataType;
    use relax_runtime::{Scalar, Tensor};
    match v {
        Value::Tensor(t) => out.push(t.clone()),
        Value::Tuple(f) => f.iter().for_each(|x| flatten_tensors(x, out)),
        Value::Shape(s) => out.push(Tensor::from_scalars(
            &[s.len() as i64],
            DataType::INT64,
            s.iter().map(|&x| Scalar::int(DataType::INT64, x)).collect::<Vec<_>>(),
        )),
        Value::Prim(p) => out.push(Tensor::from_scalars(&[], p.dtype(), [*p])),
        _ => {}
    }
}

fn write_npy(path: &Path, t: &relax_runtime::Tensor) -> Result<(), String> {
    let bytes = npy::write(t).map_err(|e| e.message)?;
    std::fs::write(path, bytes).map_err(|e| format!("cannot write `{}`: {e}", path.display()))
}

/// `--check-exec`: runs every `# EXEC:` line.
fn check_exec(
    file: &SourceFile,
    module: &relax_ir::Module,
    native: Option<&dyn relax_runtime::native::NativeKernels>,
    vm: Option<(&relax_runtime::vm::Executable, &dyn relax_runtime::vm::KernelProvider)>,
    color: bool,
    io: &mut Io<'_>,
) -> i32 {
    let lines = exec_check::collect(&file.text);
    let vm = vm.map(|(e, k)| relax_runtime::vm::Vm::new(e, k, relax_runtime::vm::VmOptions::default()));
    if lines.is_empty() {
        return fail(io, format!("`{}` has no `# EXEC:` lines", file.name));
    }
    let mut failed = 0;
    for l in &lines {
        let err = match l {
            Ok(line) => {
                let ran = match &vm {
                    Some(vm) => {
                        exec_check::run_line_call(module, line, &|g, args| vm.call(&module.globals[g].name, args))
                    }
                    None => exec_check::run_line_with(module, line, native, Some(&crate::lowering::Legalize)),
                };
                ran.err().map(|e| {
                    let e = if e.span.is_none() {
                        RunError { span: relax_ir::Span::new(line.offset as u32, (line.offset + 5) as u32), ..e }
                    } else {
                        e.with_note(format!("while checking `# EXEC: {}`", line.text))
                    };
                    render_error(file, &e, color)
                })
            }
            Err((off, msg)) => {
                let e =
                    RunError::at(relax_ir::Span::new(*off as u32, (*off + 5) as u32), format!("bad EXEC line: {msg}"));
                Some(render_error(file, &e, color))
            }
        };
        if let Some(text) = err {
            failed += 1;
            let _ = io.stderr.write_all(text.as_bytes());
        }
    }
    if failed > 0 {
        let _ = writeln!(io.stderr, "relax-run: {failed} of {} EXEC checks failed", lines.len());
        return 1;
    }
    0
}
