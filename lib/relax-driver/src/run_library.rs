//! `relax-run model.so`: runs a function of a compiled library (`relax-translate
//! --emit=lib`, docs/library.md) on the VM with the library's kernels; no parser, no
//! pipeline, no LLVM. Inputs, `--sym`, `--seed`, the outputs and `--repeat` work as for
//! a module, and `--generate` as for a model's module (with `--weights FILE.gguf` or
//! `--weights-dir`); flags about compiling or about modules are errors.

use std::path::Path;

use relax_runtime::inputs::make_inputs_for;
use relax_runtime::library::Program;
use relax_runtime::{Value, npy};

use super::{RunCli, fail, fresh, refill, report_result};
use crate::Io;

/// True when `path` is an ELF file (a shared library, not module text).
pub(super) fn is_library(path: &str) -> bool {
    let mut magic = [0u8; 4];
    std::fs::File::open(path).and_then(|mut f| std::io::Read::read_exact(&mut f, &mut magic)).is_ok()
        && magic == *b"\x7fELF"
}

/// The flag given that a library cannot take, if any.
fn module_only_flag(cli: &RunCli) -> Option<&'static str> {
    let g = &cli.gen_args;
    [
        (cli.engine.is_some(), "--engine"),
        (cli.no_default_pipeline, "--no-default-pipeline"),
        (cli.cuda_driver.is_some(), "--cuda-driver"),
        (cli.check_exec, "--check-exec"),
        (cli.exec_from.is_some(), "--exec-from"),
        (cli.no_kernels, "--no-kernels"),
        (cli.no_cache, "--no-cache"),
        (cli.cache_dir.is_some(), "--cache-dir"),
        (cli.relax_exec.is_some(), "--relax-exec"),
        (cli.check_bounds, "--check-bounds"),
        (cli.unchecked, "--unchecked"),
        (g.convert_weights.is_some(), "--convert-weights"),
        (g.context.is_some(), "--context"),
        (g.cache_type.is_some(), "--cache-type"),
    ]
    .into_iter()
    .find_map(|(given, flag)| given.then_some(flag))
}

/// Runs `cli.entry` of the library at `path`.
pub(super) fn run_library(cli: &RunCli, path: &str, syms: &[(String, i64)], io: &mut Io<'_>) -> i32 {
    if let Some(flag) = module_only_flag(cli) {
        return fail(io, format!("`{flag}` is for modules: `{path}` is a compiled library (docs/library.md)"));
    }
    let start = std::time::Instant::now();
    let program = match Program::open(Path::new(path), cli.threads.unwrap_or(0)) {
        Ok(p) => p,
        Err(e) => return fail(io, e),
    };
    if cli.repeat > 1 || cli.gen_args.generate {
        let n = program.library().manifest.kernels.len();
        let s = start.elapsed().as_secs_f64();
        let _ = writeln!(io.stderr, "relax-run: library: {n} kernels ready in {s:.3} s");
    }
    if cli.gen_args.generate {
        return generate(cli, &program, io);
    }
    if cli.gen_args.weights.is_some() || cli.gen_args.weights_dir.is_some() {
        return fail(
            io,
            "`--weights` and `--weights-dir` go with `--generate` for a library: give inputs with `--input`",
        );
    }
    let Some(sig) = program.signature(&cli.entry) else {
        let names = program.function_names();
        let hint = relax_ir::diag::suggest(&cli.entry, names.iter().map(String::as_str))
            .map_or_else(|| format!(" (it has {})", names.join(", ")), |n| format!("; did you mean `{n}`?"));
        return fail(io, format!("the library has no function `{}`{hint}", cli.entry));
    };
    let mut given = Vec::new();
    for p in &cli.inputs {
        match npy::read_file(p) {
            Ok(t) => given.push(Some(Value::Tensor(t))),
            Err(e) => return fail(io, e),
        }
    }
    let args = match make_inputs_for(&sig, &given, syms, cli.seed) {
        Ok(a) => a,
        Err(e) => return fail(io, e),
    };
    let kernels = program.kernels();
    let vm = program.vm(&kernels);
    let copies: Vec<Value> = args.iter().map(fresh).collect();
    let mut times = Vec::new();
    let mut result = None;
    for rep in 0..cli.repeat.max(1) {
        if rep > 0 {
            copies.iter().zip(&args).for_each(|(c, a)| refill(c, a));
        }
        let start = std::time::Instant::now();
        let r = vm.call(&cli.entry, copies.clone());
        times.push(start.elapsed());
        let _ = io.stdout.write_all(vm.take_printed().as_bytes());
        match r {
            Ok(v) => result = Some(v),
            Err(e) => {
                // With the module's source in the library, the same text as a module's run.
                let m = &program.library().manifest;
                let text = if m.source.is_empty() {
                    format!("relax-run: {}", program.render_error(&e))
                } else {
                    let file = crate::source::SourceFile::new(&m.source_name, m.source.clone());
                    super::render_error(&file, &e, cli.color == "always")
                };
                let _ = io.stderr.write_all(text.as_bytes());
                return 1;
            }
        }
    }
    let result = result.expect("ran at least once");
    report_result(cli, &result, times, None, io)
}

/// `--generate` on a library: the step functions' parameters (which are weights, which
/// the KV cache, the bounds of their dims) come from the module's source the library
/// keeps (the module as written: its functions' signatures are the executable's); the
/// steps run on the VM with the library's kernels.
fn generate(cli: &RunCli, program: &Program, io: &mut Io<'_>) -> i32 {
    let m = &program.library().manifest;
    if m.source.is_empty() {
        return fail(io, "`--generate` needs the module's source in the library: build it without `--strip-source`");
    }
    let file = crate::source::SourceFile::new(&m.source_name, m.source.clone());
    let module = match relax_parser::parse_module(&file.text) {
        Ok(m) => m,
        Err(_) => return fail(io, "the library's copy of its module's source does not parse"),
    };
    let gguf = match cli.gen_args.weights.as_deref().map(crate::llm::GgufWeights::open) {
        None => None,
        Some(Ok(w)) => Some(w),
        Some(Err(e)) => return fail(io, e),
    };
    let kernels = program.kernels();
    let runner = crate::runner::Runner::vm(program.executable(), &kernels, &module);
    crate::generate::generate(&cli.gen_args, gguf.as_ref(), &file, &module, &runner, cli.color == "always", io)
}
