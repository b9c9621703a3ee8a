//! Running a parsed RUN command.
//!
//! Pipeline stages run one after another, each reading the previous stage's stdout from
//! memory; a pipeline fails when any stage fails (lit's `pipefail`). The relax tools run in
//! process through `relax_driver::tools()`, `FileCheck`/`FileCheck-19` through the front,
//! and `not` inverts the status of the command it wraps (as LLVM's `not`: success only on a
//! non-zero exit). Everything else is spawned as a process in the test's directory; `cat`
//! is held to what lit's built-in `cat` can do, so that both runners agree.

use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::process::Stdio;

use super::{Command, Redirect, Script, SeqOp};
use crate::filecheck;
use crate::panic::panic_message;

/// Where a command runs and what it has done so far.
pub struct Context<'a> {
    /// The test's directory: the working directory of spawned commands and the base of
    /// relative paths.
    pub cwd: &'a Path,
    /// `PATH` for spawned commands (`None`: inherit).
    pub path_env: Option<OsString>,
    /// Whether FileCheck may bless EXACT blocks.
    pub bless: bool,
    /// Check files whose EXACT blocks were blessed.
    pub blessed: Vec<PathBuf>,
    /// One entry per command run, for the failure report.
    pub log: Vec<Stage>,
    /// How many `not`s wrap the command being run.
    negations: usize,
}

/// What one command did.
#[derive(Debug, Clone)]
pub struct Stage {
    /// The command, as words joined by spaces.
    pub command: String,
    /// Its exit status.
    pub code: i32,
    /// What it wrote to stderr (when not redirected).
    pub stderr: String,
}

/// A command's result before redirections.
struct Output {
    code: i32,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

impl<'a> Context<'a> {
    /// A context for a test in `cwd`.
    pub fn new(cwd: &'a Path, path_env: Option<OsString>, bless: bool) -> Self {
        Self { cwd, path_env, bless, blessed: Vec::new(), log: Vec::new(), negations: 0 }
    }
}

/// Runs `script`; `Ok` is its exit status, `Err` a reason to fail the test outright
/// (a tool panicked, a command does not exist, a file cannot be opened).
pub fn run(script: &Script, ctx: &mut Context) -> Result<i32, String> {
    match script {
        Script::Pipeline(cmds) => pipeline(cmds, ctx),
        Script::Seq(a, op, b) => {
            let left = run(a, ctx)?;
            match op {
                SeqOp::And if left != 0 => Ok(left),
                SeqOp::Or if left == 0 => Ok(left),
                _ => run(b, ctx),
            }
        }
    }
}

fn pipeline(cmds: &[Command], ctx: &mut Context) -> Result<i32, String> {
    let mut input = Vec::new();
    let mut status = 0;
    for cmd in cmds {
        let mut stdin = std::mem::take(&mut input);
        let mut targets = [Target::Pipe, Target::Stderr];
        let mut files: Vec<File> = Vec::new();
        for r in &cmd.redirects {
            match r {
                Redirect::Stdin(p) => {
                    stdin = std::fs::read(ctx.cwd.join(p)).map_err(|e| format!("cannot read {p}: {e}"))?
                }
                Redirect::Stdout { path, append } => targets[0] = open(ctx.cwd, path, *append, &mut files)?,
                Redirect::Stderr { path, append } => targets[1] = open(ctx.cwd, path, *append, &mut files)?,
                Redirect::StderrToStdout => targets[1] = targets[0],
            }
        }
        let out = command(&cmd.args, &stdin, ctx)?;
        let mut stderr_text = Vec::new();
        for (target, bytes) in targets.iter().zip([out.stdout, out.stderr]) {
            match *target {
                Target::Pipe => input.extend_from_slice(&bytes),
                Target::Stderr => stderr_text.extend_from_slice(&bytes),
                Target::File(i) => files[i].write_all(&bytes).map_err(|e| format!("cannot write: {e}"))?,
            }
        }
        ctx.log.push(Stage {
            command: cmd.args.join(" "),
            code: out.code,
            stderr: String::from_utf8_lossy(&stderr_text).into_owned(),
        });
        if out.code != 0 {
            status = out.code;
        }
    }
    Ok(status)
}

/// Where a stream goes.
#[derive(Clone, Copy)]
enum Target {
    /// Stdout: the next stage (or nowhere after the last).
    Pipe,
    /// Stderr: the failure report.
    Stderr,
    /// An opened redirection file.
    File(usize),
}

fn open(cwd: &Path, path: &str, append: bool, files: &mut Vec<File>) -> Result<Target, String> {
    let file = OpenOptions::new()
        .create(true)
        .write(true)
        .append(append)
        .truncate(!append)
        .open(cwd.join(path))
        .map_err(|e| format!("cannot open {path}: {e}"))?;
    files.push(file);
    Ok(Target::File(files.len() - 1))
}

/// Runs one simple command.
fn command(args: &[String], stdin: &[u8], ctx: &mut Context) -> Result<Output, String> {
    let name = args[0].as_str();
    match name {
        "not" => {
            let inner = args.get(1).ok_or("`not` needs a command")?;
            if inner.starts_with("--") {
                return Err(format!("`not {inner}` is not supported"));
            }
            ctx.negations += 1;
            let out = command(&args[1..], stdin, ctx);
            ctx.negations -= 1;
            let out = out?;
            // Success when the command fails; a crash (negative status) is still a failure.
            Ok(Output { code: i32::from(out.code <= 0), ..out })
        }
        "FileCheck" | "FileCheck-19" => {
            let inv =
                filecheck::Invocation { args: &args[1..], stdin, cwd: ctx.cwd, bless: ctx.bless && ctx.negations == 0 };
            let out = filecheck::run(&inv);
            ctx.blessed.extend(out.blessed);
            Ok(Output { code: out.code, stdout: Vec::new(), stderr: out.stderr.into_bytes() })
        }
        _ => {
            if let Some((_, tool)) = relax_driver::tools().iter().find(|(n, _)| *n == name) {
                return in_process(*tool, args, stdin, ctx.cwd);
            }
            if name.starts_with("relax-") {
                let known: Vec<&str> = relax_driver::tools().iter().map(|(n, _)| *n).collect();
                return Err(format!("`{name}` is not among relax_driver::tools() ({})", known.join(", ")));
            }
            if name == "cat" {
                check_cat(args)?;
            }
            spawn(args, stdin, ctx)
        }
    }
}

/// lit runs `cat` as a built-in that only concatenates named files (it never reads stdin)
/// and knows only `-v`; other uses would pass here and fail under lit.
fn check_cat(args: &[String]) -> Result<(), String> {
    let files: Vec<&String> = args[1..].iter().filter(|a| !a.starts_with('-') || *a == "-").collect();
    if files.is_empty() || files.iter().any(|f| *f == "-") {
        return Err("lit's built-in `cat` does not read stdin; give it file names".into());
    }
    match args[1..].iter().find(|a| a.starts_with('-') && *a != "-v" && *a != "--show-nonprinting") {
        Some(opt) => Err(format!("lit's built-in `cat` does not support `{opt}`")),
        None => Ok(()),
    }
}

/// Calls a relax driver with in-memory stdio; a panic fails the test.
fn in_process(tool: relax_driver::ToolMain, args: &[String], stdin: &[u8], cwd: &Path) -> Result<Output, String> {
    if let Some(rel) =
        args[1..].iter().find(|a| !a.starts_with('-') && !Path::new(a).is_absolute() && cwd.join(a).exists())
    {
        return Err(format!(
            "`{rel}` is a relative path, but {} runs in process and does not see the test's \
             directory; write %S/{rel}",
            args[0]
        ));
    }
    let argv: Vec<OsString> = args.iter().map(OsString::from).collect();
    let (mut input, mut stdout, mut stderr) = (stdin, Vec::new(), Vec::new());
    let result = relax_driver::on_large_stack(|| {
        catch_unwind(AssertUnwindSafe(|| {
            let mut io = relax_driver::Io { stdin: &mut input, stdout: &mut stdout, stderr: &mut stderr };
            tool(argv, &mut io)
        }))
    });
    match result {
        Ok(code) => Ok(Output { code, stdout, stderr }),
        Err(payload) => {
            let partial = String::from_utf8_lossy(&stderr);
            Err(format!("{} panicked: {}\n{partial}", args[0], panic_message(payload.as_ref())))
        }
    }
}

/// Runs an external program in the test's directory.
fn spawn(args: &[String], stdin: &[u8], ctx: &Context) -> Result<Output, String> {
    let mut cmd = std::process::Command::new(&args[0]);
    cmd.args(&args[1..]).current_dir(ctx.cwd).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    if let Some(path) = &ctx.path_env {
        cmd.env("PATH", path);
    }
    let mut child = cmd.spawn().map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => format!("command not found: {}", args[0]),
        _ => format!("cannot run {}: {e}", args[0]),
    })?;
    let mut pipe = child.stdin.take();
    let output = std::thread::scope(|s| {
        s.spawn(move || {
            if let Some(p) = pipe.as_mut() {
                // A command that exits without reading its input closes the pipe early.
                let _ = p.write_all(stdin);
            }
        });
        child.wait_with_output()
    })
    .map_err(|e| format!("cannot wait for {}: {e}", args[0]))?;
    Ok(Output { code: output.status.code().unwrap_or(-1), stdout: output.stdout, stderr: output.stderr })
}
