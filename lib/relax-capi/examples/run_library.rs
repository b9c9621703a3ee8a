//! Runs a function of a compiled library through the Rust API (docs/library.md), the
//! counterpart of `examples/c/run_model.c`: `relax_runtime::library::Program` loads the
//! library, seeded inputs are made from the function's signature as `relax-run --seed`
//! makes them, and the result is printed in relax-run's text form or written as
//! `.npy` files. No LLVM and no parser, so it cross-compiles with the runtime
//! (`utils/test-cross.sh` runs it on aarch64 under qemu).
//!
//! ```text
//! cargo run -p relax-capi --example run_library -- LIB.so [--entry NAME] [--seed S]
//!     [--sym NAME=INT]... [--threads N] [--output-dir DIR]
//! ```

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use relax_runtime::inputs::make_inputs_for;
use relax_runtime::library::Program;
use relax_runtime::{Value, npy, print};

/// The command line.
struct Args {
    lib: PathBuf,
    entry: String,
    seed: u64,
    syms: Vec<(String, i64)>,
    threads: usize,
    output_dir: Option<PathBuf>,
}

fn parse_args() -> Result<Args, String> {
    let mut it = std::env::args().skip(1);
    let mut a =
        Args { lib: PathBuf::new(), entry: "main".into(), seed: 1, syms: Vec::new(), threads: 0, output_dir: None };
    let mut lib = None;
    while let Some(arg) = it.next() {
        let mut value = |flag: &str| it.next().ok_or_else(|| format!("`{flag}` needs a value"));
        match arg.as_str() {
            "--entry" => a.entry = value("--entry")?,
            "--seed" => a.seed = value("--seed")?.parse().map_err(|_| "`--seed` takes an integer".to_string())?,
            "--threads" => {
                a.threads = value("--threads")?.parse().map_err(|_| "`--threads` takes an integer".to_string())?
            }
            "--output-dir" => a.output_dir = Some(PathBuf::from(value("--output-dir")?)),
            "--sym" => {
                let s = value("--sym")?;
                let (n, v) = s.split_once('=').ok_or_else(|| format!("`--sym {s}`: expected NAME=INT"))?;
                let v = v.parse().map_err(|_| format!("`--sym {s}`: expected NAME=INT"))?;
                a.syms.push((n.to_string(), v));
            }
            flag if flag.starts_with('-') => return Err(format!("unknown flag `{flag}`")),
            path if lib.is_none() => lib = Some(PathBuf::from(path)),
            extra => return Err(format!("unexpected argument `{extra}`")),
        }
    }
    a.lib = lib.ok_or("usage: run_library LIB.so [--entry NAME] [--seed S] [--sym NAME=INT]... [--output-dir DIR]")?;
    Ok(a)
}

/// The tensors of a result, tuples flattened.
fn tensors(v: &Value, out: &mut Vec<relax_runtime::Tensor>) {
    match v {
        Value::Tensor(t) => out.push(t.clone()),
        Value::Tuple(fields) => fields.iter().for_each(|f| tensors(f, out)),
        _ => {}
    }
}

fn run(a: &Args) -> Result<(), String> {
    let program = Program::open(&a.lib, a.threads).map_err(|e| e.message)?;
    let sig = program.signature(&a.entry).ok_or_else(|| format!("the library has no function `{}`", a.entry))?;
    let args = make_inputs_for(&sig, &[], &a.syms, Some(a.seed)).map_err(|e| e.message)?;
    let result = program.call(&a.entry, args).map_err(|e| program.render_error(&e))?;
    match &a.output_dir {
        None => println!("{}", print::value_text(&result)),
        Some(dir) => {
            std::fs::create_dir_all(dir).map_err(|e| format!("cannot create `{}`: {e}", dir.display()))?;
            let mut ts = Vec::new();
            tensors(&result, &mut ts);
            for (i, t) in ts.iter().enumerate() {
                let path = Path::new(dir).join(format!("out{i}.npy"));
                let bytes = npy::write(t).map_err(|e| e.message)?;
                std::fs::write(&path, bytes).map_err(|e| format!("cannot write `{}`: {e}", path.display()))?;
            }
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    match parse_args().and_then(|a| run(&a)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("run_library: error: {e}");
            ExitCode::FAILURE
        }
    }
}
