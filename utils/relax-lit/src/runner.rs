//! Running one test: directives, feature checks, substitutions, the RUN commands in order,
//! then the optional round-trip hook.

use std::ffi::OsString;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use crate::features::Features;
use crate::panic::panic_message;
use crate::run_line::{RunLine, parse_script};
use crate::shell::exec::{Context, Stage};
use crate::subst::{Paths, expand};
use crate::{boolexpr, shell};

/// A per-file check run after the RUN lines pass, given the file's path and text; the lead
/// engineer wires it to "parse, print, parse, print, compare".
pub type RoundtripHook = fn(&Path, &str) -> Result<(), String>;

/// How to run tests.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// The repository root; test names are shown relative to it.
    pub root: PathBuf,
    /// Where `%t` paths and extracted documentation blocks go.
    pub temp_root: PathBuf,
    /// Features for `REQUIRES:`, `UNSUPPORTED:` and `%if`.
    pub features: Features,
    /// Rewrite failing EXACT blocks in place (`RELAX_TEST_BLESS=1`).
    pub bless: bool,
    /// Called on each file whose RUN lines pass.
    pub roundtrip: Option<RoundtripHook>,
    /// `PATH` for spawned commands (`None`: inherit).
    pub path_env: Option<OsString>,
}

impl RunConfig {
    /// A configuration for the tree at `root`, with detected features, no blessing and no
    /// round-trip hook. Spawned commands see `/usr/lib/llvm-19/bin` first on `PATH`, as
    /// under `test/lit.cfg.py`.
    pub fn new(root: PathBuf, temp_root: PathBuf) -> Self {
        let llvm = Path::new(crate::LLVM_BIN);
        let path_env = llvm.is_dir().then(|| {
            let rest = std::env::var_os("PATH").unwrap_or_default();
            let mut dirs = vec![llvm.to_path_buf()];
            dirs.extend(std::env::split_paths(&rest));
            std::env::join_paths(dirs).unwrap_or(rest)
        });
        Self { root, temp_root, features: Features::detect(), bless: false, roundtrip: None, path_env }
    }
}

/// A test to run.
#[derive(Debug, Clone)]
pub struct TestCase {
    /// Shown in reports: a path relative to the root, or `docs/x.md:LINE` for a block.
    pub name: String,
    /// The file whose directives are run.
    pub path: PathBuf,
    /// Added to line numbers in reports (a documentation block's first line, minus one).
    pub line_offset: usize,
    /// For a documentation block: its text, written to `path` before running.
    pub doc_text: Option<String>,
}

/// How a test ended.
#[derive(Debug, Clone)]
pub enum Status {
    /// Every RUN line (and the round-trip hook) passed.
    Passed,
    /// `REQUIRES:` or `UNSUPPORTED:` ruled it out; the reason.
    Unsupported(String),
    /// It failed.
    Failed(Failure),
}

/// Why a test failed.
#[derive(Debug, Clone, Default)]
pub struct Failure {
    /// The line of the failing directive (0: the file as a whole).
    pub line: usize,
    /// The RUN command as written, if a RUN line failed.
    pub run: String,
    /// A one-line reason.
    pub reason: String,
    /// More lines: the expanded command, each stage's status and stderr, diffs.
    pub details: String,
}

/// The result of one test.
#[derive(Debug, Clone)]
pub struct TestResult {
    /// The test's name.
    pub name: String,
    /// How it ended.
    pub status: Status,
    /// Files whose EXACT blocks were blessed.
    pub blessed: Vec<PathBuf>,
}

fn fail(line: usize, reason: impl Into<String>) -> Status {
    Status::Failed(Failure { line, reason: reason.into(), ..Failure::default() })
}

/// Runs one test.
pub fn run_case(case: &TestCase, config: &RunConfig) -> TestResult {
    let mut blessed = Vec::new();
    let status = run_inner(case, config, &mut blessed);
    let status = match status {
        Status::Failed(mut f) if f.line > 0 => {
            f.line += case.line_offset;
            Status::Failed(f)
        }
        s => s,
    };
    TestResult { name: case.name.clone(), status, blessed }
}

fn run_inner(case: &TestCase, config: &RunConfig, blessed: &mut Vec<PathBuf>) -> Status {
    let temp = temp_path(case, config);
    if let Some(parent) = temp.parent()
        && let Err(e) = std::fs::create_dir_all(parent)
    {
        return fail(0, format!("cannot create {}: {e}", parent.display()));
    }
    if let Some(text) = &case.doc_text
        && let Err(e) =
            case.path.parent().map_or(Ok(()), std::fs::create_dir_all).and_then(|()| std::fs::write(&case.path, text))
    {
        return fail(0, format!("cannot write {}: {e}", case.path.display()));
    }
    let text = match std::fs::read_to_string(&case.path) {
        Ok(t) => t,
        Err(e) => return fail(0, format!("cannot read {}: {e}", case.path.display())),
    };
    let script = match parse_script(&text) {
        Ok(s) => s,
        Err(e) => return fail(e.line, e.message),
    };
    if script.runs.is_empty() && case.doc_text.is_none() {
        return fail(0, "the test has no RUN: line");
    }
    for (line, expr) in &script.requires {
        match boolexpr::evaluate(expr, &config.features) {
            Ok(true) => {}
            Ok(false) => return Status::Unsupported(format!("requires {expr}")),
            Err(e) => return fail(*line, format!("REQUIRES: {e}")),
        }
    }
    for (line, expr) in &script.unsupported {
        match boolexpr::evaluate(expr, &config.features) {
            Ok(false) => {}
            Ok(true) => return Status::Unsupported(format!("unsupported with {expr}")),
            Err(e) => return fail(*line, format!("UNSUPPORTED: {e}")),
        }
    }
    let dir = case.path.parent().unwrap_or(Path::new("/"));
    let paths = Paths {
        source: case.path.display().to_string(),
        source_dir: dir.display().to_string(),
        temp: temp.display().to_string(),
    };
    let mut ctx = Context::new(dir, config.path_env.clone(), config.bless && case.doc_text.is_none());
    for run in &script.runs {
        let result = run_line(run, &paths, config, &mut ctx);
        blessed.append(&mut ctx.blessed);
        if let Err(f) = result {
            return Status::Failed(f);
        }
    }
    if let Some(hook) = config.roundtrip {
        match catch_unwind(AssertUnwindSafe(|| hook(&case.path, &text))) {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return fail(0, format!("round trip: {e}")),
            Err(p) => return fail(0, format!("round trip panicked: {}", panic_message(p.as_ref()))),
        }
    }
    Status::Passed
}

/// Expands, parses and runs one RUN command.
fn run_line(run: &RunLine, paths: &Paths, config: &RunConfig, ctx: &mut Context) -> Result<(), Failure> {
    let failure = |reason: String, details: String| Failure {
        line: run.line,
        run: run.command.trim().to_string(),
        reason,
        details,
    };
    let expanded = expand(&run.command, paths, &config.features).map_err(|e| failure(e, String::new()))?;
    let script = match shell::parse(&expanded) {
        Ok(Some(s)) => s,
        Ok(None) => return Ok(()),
        Err(e) => return Err(failure(e, format!("$ {expanded}\n"))),
    };
    ctx.log.clear();
    let result = shell::exec::run(&script, ctx);
    let details = format!("$ {expanded}\n{}", stage_report(&ctx.log));
    match result {
        Ok(0) => Ok(()),
        Ok(code) => {
            let culprit = ctx.log.iter().rev().find(|s| s.code != 0).map_or("", |s| s.command.as_str());
            let program = culprit.split(' ').next().unwrap_or("");
            Err(failure(format!("`{program}` exited with status {code}"), details))
        }
        Err(e) => Err(failure(e.lines().next().unwrap_or("").to_string(), format!("{details}{e}\n"))),
    }
}

/// Each command's status and stderr, for commands that failed or wrote to stderr.
fn stage_report(log: &[Stage]) -> String {
    let mut out = String::new();
    for s in log.iter().filter(|s| s.code != 0 || !s.stderr.is_empty()) {
        out.push_str(&format!("# `{}` exited with status {}\n", s.command, s.code));
        out.push_str(&s.stderr);
        if !s.stderr.is_empty() && !s.stderr.ends_with('\n') {
            out.push('\n');
        }
    }
    out
}

/// `%t` for a test: `<temp_root>/<dir>/Output/<file>.tmp`, as lit lays it out.
fn temp_path(case: &TestCase, config: &RunConfig) -> PathBuf {
    let rel = [&config.root, &config.temp_root, Path::new("/")]
        .into_iter()
        .find_map(|base| case.path.strip_prefix(base).ok())
        .unwrap_or(&case.path);
    let file = rel.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
    let dir = rel.parent().unwrap_or(Path::new(""));
    config.temp_root.join(dir).join("Output").join(format!("{file}.tmp"))
}
