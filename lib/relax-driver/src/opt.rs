//! `relax-opt`: parse, verify, run passes, print (`cli.md`).

use std::ffi::OsString;
use std::io::Write;

use clap::{Arg, ArgAction, CommandFactory, FromArgMatches, Parser};
use relax_ir::diag::Diagnostic;
use relax_ir::{Module, Span};
use relax_pass::{
    PassContext, PassInstrumentation, PassManager, PassOptions, PassRegistry, Pipeline, PipelineElement, PipelineError,
};

use crate::Io;
use crate::expected;
use crate::ir_text::{IrPrinter, print_module, verify_diagnostics, verify_scope_diagnostics};
use crate::render::render_all;
use crate::source::{SourceFile, split_input};

/// The fixed flags of `relax-opt`; one flag per registered pass is added at run time.
#[derive(Parser, Debug)]
#[command(name = "relax-opt", about = "Parse, verify, transform and print relax modules", version, long_version = crate::LONG_VERSION)]
struct OptCli {
    /// Input file (`-` or absent: standard input).
    input: Option<String>,
    /// Output file (default: standard output).
    #[arg(short = 'o', value_name = "OUT")]
    output: Option<String>,
    /// A pass pipeline, e.g. `normalize,relax.function(canonicalize-bindings)`.
    #[arg(long = "pass-pipeline", value_name = "PIPELINE")]
    pass_pipeline: Vec<String>,
    /// List the registered passes and pipelines, then exit.
    #[arg(long = "list-passes")]
    list_passes: bool,
    /// Print the IR after every pass (to standard error).
    #[arg(long = "print-ir-after-all")]
    print_ir_after_all: bool,
    /// Print the IR after the named pass (repeatable).
    #[arg(long = "print-ir-after", value_name = "NAME")]
    print_ir_after: Vec<String>,
    /// Print the IR before every pass.
    #[arg(long = "print-ir-before-all")]
    print_ir_before_all: bool,
    /// Print the IR after a pass only when the pass changed it.
    #[arg(long = "print-ir-after-change")]
    print_ir_after_change: bool,
    /// Report the time spent in each pass (to standard error).
    #[arg(long)]
    timing: bool,
    /// Print, per Relax function, the storages and bytes of the final module (to
    /// standard error; `docs/memory.md`).
    #[arg(long = "memory-report")]
    memory_report: bool,
    /// Verify the IR after every pass (default true).
    #[arg(long = "verify-each", value_name = "BOOL", num_args = 0..=1, require_equals = true,
          default_value = "true", default_missing_value = "true", action = ArgAction::Set)]
    verify_each: bool,
    /// Split the input at `# -----` lines and process each part on its own.
    #[arg(long = "split-input-file")]
    split_input_file: bool,
    /// Check diagnostics against `# expected-error {{...}}` comments.
    #[arg(long = "verify-diagnostics")]
    verify_diagnostics: bool,
    /// Re-parse the printed output and check that it prints the same.
    #[arg(long = "verify-roundtrip")]
    verify_roundtrip: bool,
    /// Run every pass's input and output in the interpreter on seeded inputs and stop at
    /// the first pass that changes a result (docs/passes.md).
    #[arg(long = "verify-semantics")]
    verify_semantics: bool,
    /// The seed of `--verify-semantics`' inputs.
    #[arg(long = "seed", value_name = "S", default_value_t = 1, requires = "verify_semantics")]
    seed: u64,
    /// Print optimization remarks of the named pass (`all` for every pass).
    #[arg(long = "remarks", value_name = "PASS")]
    remarks: Vec<String>,
    /// Color diagnostics: `never` (default) or `always`.
    #[arg(long = "color", value_name = "WHEN", default_value = "never")]
    color: String,
}

/// Runs `relax-opt`.
pub fn opt_main(args: Vec<OsString>, io: &mut Io<'_>) -> i32 {
    let registry = relax_transform::registry();
    let mut cmd = OptCli::command();
    // Pass and pipeline names are static, so they serve as clap argument ids. Every flag
    // takes an optional `=OPTIONS` (checked below, so that the error names the flag).
    let mut pass_ids: Vec<&'static str> = Vec::new();
    for p in registry.passes() {
        for name in std::iter::once(p.name).chain(p.aliases.iter().copied()) {
            let help = if name == p.name { p.summary.to_string() } else { format!("alias of --{}", p.name) };
            cmd = cmd.arg(pass_flag(name, help));
            pass_ids.push(name);
        }
    }
    for p in registry.pipelines() {
        cmd = cmd.arg(pass_flag(p.name, p.summary.to_string()));
        pass_ids.push(p.name);
    }
    if let Some(msg) = crate::cli::non_utf8_arg("relax-opt", &args) {
        let _ = io.stderr.write_all(msg.as_bytes());
        return 1;
    }
    let matches = match cmd.try_get_matches_from(args) {
        Ok(m) => m,
        Err(e) => return crate::cli::clap_exit(&e, io),
    };
    let cli = match OptCli::from_arg_matches(&matches) {
        Ok(c) => c,
        Err(e) => {
            let _ = writeln!(io.stderr, "relax-opt: error: {e}");
            return 1;
        }
    };
    if cli.list_passes {
        let _ = io.stdout.write_all(registry.describe().as_bytes());
        return 0;
    }
    // `--print-ir-after=PASS` and `--remarks=PASS` name registered passes.
    let named = cli.print_ir_after.iter().map(|n| ("--print-ir-after", n));
    for (flag, name) in named.chain(cli.remarks.iter().map(|n| ("--remarks", n))) {
        if registry.lookup(name).is_none() && !(flag == "--remarks" && name == "all") {
            let hint = registry.did_you_mean(name);
            let _ = writeln!(io.stderr, "relax-opt: error: `{flag}={name}`: no pass is named `{name}`{hint}");
            return 1;
        }
    }
    // Passes run in command-line order: pass flags and --pass-pipeline by position.
    let mut ordered: Vec<(usize, Vec<PipelineElement>)> = Vec::new();
    for name in &pass_ids {
        if matches.value_source(name) != Some(clap::parser::ValueSource::CommandLine) {
            continue;
        }
        // Each occurrence has one value (empty without `=`), so indices and values pair up.
        let (Some(idx), Some(values)) = (matches.indices_of(name), matches.get_many::<String>(name)) else {
            continue;
        };
        for (i, value) in idx.zip(values) {
            match flag_options(&registry, name, value) {
                Ok(options) => ordered.push((i, vec![PipelineElement::Pass { name: name.to_string(), options }])),
                Err(msg) => {
                    let _ = writeln!(io.stderr, "relax-opt: error: {msg}");
                    return 1;
                }
            }
        }
    }
    if let Some(idx) = matches.indices_of("pass_pipeline") {
        for (i, text) in idx.zip(&cli.pass_pipeline) {
            match Pipeline::parse(text) {
                Ok(p) => ordered.push((i, p.elements)),
                Err(e) => {
                    let _ = writeln!(io.stderr, "relax-opt: error: {e}");
                    return 1;
                }
            }
        }
    }
    ordered.sort_by_key(|(i, _)| *i);
    let pipeline = Pipeline { elements: ordered.into_iter().flat_map(|(_, e)| e).collect() };
    if let Err(e) = PassManager::new(&registry, &pipeline) {
        let _ = writeln!(io.stderr, "relax-opt: error: {}", pipeline_error_text(&e));
        return 1;
    }
    let color = match crate::cli::parse_color(&cli.color) {
        Ok(c) => c,
        Err(e) => return crate::cli::fail(io, "relax-opt", e),
    };

    // Input.
    let (name, bytes) = match crate::cli::read_input_bytes(cli.input.as_deref(), io) {
        Ok(nb) => nb,
        Err(e) => return crate::cli::fail(io, "relax-opt", e),
    };
    let text = match String::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            let valid = e.utf8_error().valid_up_to();
            let lossy = String::from_utf8_lossy(e.as_bytes()).into_owned();
            let file = SourceFile::new(&name, lossy);
            // In the lossy text the bad bytes are U+FFFD: underline the whole character.
            let bad = Span::new(valid as u32, (valid + char::REPLACEMENT_CHARACTER.len_utf8()) as u32);
            let d = Diagnostic::error(bad, "the input is not valid UTF-8").with_label("not UTF-8");
            let _ = io.stderr.write_all(render_all(&file, &[d], color).as_bytes());
            return 1;
        }
    };
    let file = SourceFile::new(&name, text);

    let chunks = if cli.split_input_file {
        split_input(&file.text)
    } else {
        vec![crate::source::Chunk { text: file.text.clone(), start: 0, end: file.text.len() }]
    };
    let mut outputs: Vec<String> = Vec::new();
    let mut failed = false;
    for chunk in &chunks {
        let run = Run { cli: &cli, registry: &registry, pipeline: &pipeline, file: &file, color };
        let result = run.chunk(&chunk.text, io.stderr);
        let diags = result.diagnostics;
        if cli.verify_diagnostics {
            let problems = match expected::collect(&file, chunk.start, chunk.end) {
                Ok(exp) => expected::check(&file, &exp, &diags),
                Err(d) => vec![d],
            };
            if !problems.is_empty() {
                let _ = io.stderr.write_all(render_all(&file, &problems, color).as_bytes());
                failed = true;
            }
        } else {
            let _ = io
                .stderr
                .write_all(render_all(&result.diag_file.unwrap_or_else(|| file.clone()), &diags, color).as_bytes());
            if diags.iter().any(Diagnostic::is_error) {
                failed = true;
            }
        }
        if let Some(out) = result.output {
            outputs.push(out);
        }
    }
    if !failed || !outputs.is_empty() {
        let joined = outputs.join("# -----\n");
        let written = match cli.output.as_deref() {
            Some(path) if path != "-" => std::fs::write(path, joined.as_bytes()).map_err(|e| (path.to_string(), e)),
            _ => io.stdout.write_all(joined.as_bytes()).map_err(|e| ("<stdout>".to_string(), e)),
        };
        if let Err((path, e)) = written {
            let _ = writeln!(io.stderr, "relax-opt: error: cannot write `{path}`: {e}");
            return 1;
        }
    }
    i32::from(failed)
}

/// The flag of a pass or named pipeline: `--NAME` or `--NAME=OPTIONS`.
fn pass_flag(name: &'static str, help: String) -> Arg {
    Arg::new(name)
        .long(name)
        .num_args(0..=1)
        .require_equals(true)
        .default_missing_value("")
        .value_name("OPTIONS")
        .action(ArgAction::Append)
        .help(help)
}

/// The options of the pass flag `--flag=value` (`max-depth=8,opt-level=2` or
/// `max-depth=8 opt-level=2`; empty without `=`), checked against the pass's declared
/// options. An error names the flag and its value.
fn flag_options(registry: &PassRegistry, flag: &str, value: &str) -> Result<PassOptions, String> {
    if value.is_empty() {
        return Ok(PassOptions::default());
    }
    let given = format!("`--{flag}={value}`");
    let Some(info) = registry.lookup(flag) else { return Err(format!("{given}: pipeline `{flag}` takes no options")) };
    if info.options.is_empty() {
        return Err(format!("{given}: pass `{}` takes no options", info.name));
    }
    let options = PassOptions::parse(value).map_err(|e| format!("{given}: {}", e.message))?;
    info.create(&options).map_err(|e| format!("{given}: {e}"))?;
    Ok(options)
}

fn pipeline_error_text(e: &PipelineError) -> String {
    match e {
        PipelineError::Invalid(msg) => msg.clone(),
        PipelineError::PassFailed { pass, .. } => format!("pass `{pass}` failed"),
        PipelineError::VerifyFailed { pass, .. } => format!("verification failed after pass `{pass}`"),
    }
}

struct Run<'a> {
    cli: &'a OptCli,
    registry: &'a relax_pass::PassRegistry,
    pipeline: &'a Pipeline,
    file: &'a SourceFile,
    color: bool,
}

struct ChunkResult {
    output: Option<String>,
    diagnostics: Vec<Diagnostic>,
    /// The file the diagnostics refer to, when not the input (IR built by a pass).
    diag_file: Option<SourceFile>,
}

impl Run<'_> {
    fn chunk(&self, text: &str, stderr: &mut dyn Write) -> ChunkResult {
        let fail = |diagnostics| ChunkResult { output: None, diagnostics, diag_file: None };
        let mut module = match relax_parser::parse_module(text) {
            Ok(m) => m,
            Err(d) => return fail(d),
        };
        if let Err(d) = verify_diagnostics(&module) {
            return fail(d);
        }
        let mut printer = IrPrinter {
            after_all: self.cli.print_ir_after_all,
            after: self.cli.print_ir_after.clone(),
            before_all: self.cli.print_ir_before_all,
            only_changed: self.cli.print_ir_after_change,
            out: String::new(),
        };
        let mut timing = relax_pass::instrument::Timing::default();
        let mut semantics = crate::verify_semantics::VerifySemantics::new(self.cli.seed);
        let mut pm = PassManager::new(self.registry, self.pipeline).expect("validated before");
        pm.verify_each = self.cli.verify_each;
        pm.set_verifier(Box::new(verify_scope_diagnostics));
        pm.add_instrumentation(&mut printer);
        if self.cli.timing {
            pm.add_instrumentation(&mut timing);
        }
        if self.cli.verify_semantics {
            pm.add_instrumentation(&mut semantics);
        }
        let mut cx = PassContext { remarks_enabled: self.cli.remarks.clone(), ..Default::default() };
        let result = pm.run(&mut module, &mut cx);
        drop(pm);
        let _ = stderr.write_all(printer.out.as_bytes());
        if self.cli.timing {
            let _ = stderr.write_all(timing.report().as_bytes());
        }
        let mut diags = cx.remarks;
        if let Some(msg) = semantics.failure.take() {
            return fail(vec![Diagnostic::error(Span::NONE, msg)]);
        }
        if self.cli.verify_semantics {
            let _ = writeln!(
                stderr,
                "relax-opt: verify-semantics: every pass kept the results ({} function runs compared)",
                semantics.compared
            );
        }
        if let Err(e) = result {
            let (pass, mut d, what) = match e {
                PipelineError::PassFailed { pass, diagnostics } => (pass, diagnostics, "failed"),
                PipelineError::VerifyFailed { pass, diagnostics } => (pass, diagnostics, "produced invalid IR"),
                PipelineError::Invalid(msg) => return fail(vec![Diagnostic::error(Span::NONE, msg)]),
            };
            for x in &mut d {
                x.notes.push(format!("in pass `{pass}`, which {what}"));
            }
            // Diagnostics without a source span point into the printed IR of this module.
            if d.iter().any(|x| x.span.is_none()) {
                let printed = SourceFile::new(format!("<after {pass}>"), print_module(&module));
                let _ = stderr.write_all(
                    render_all(
                        &printed,
                        &d.iter().filter(|x| x.span.is_none()).cloned().collect::<Vec<_>>(),
                        self.color,
                    )
                    .as_bytes(),
                );
                d.retain(|x| !x.span.is_none());
                if d.is_empty() {
                    d.push(Diagnostic::error(Span::NONE, format!("pass `{pass}` {what}")));
                }
            }
            diags.extend(d);
            return ChunkResult { output: None, diagnostics: diags, diag_file: None };
        }
        if self.cli.memory_report {
            let _ = stderr.write_all(relax_transform::plan_memory::report::memory_report(&module).as_bytes());
        }
        let out = print_module(&module);
        if self.cli.verify_roundtrip
            && let Err(d) = roundtrip(&out)
        {
            diags.push(d);
            return ChunkResult { output: None, diagnostics: diags, diag_file: None };
        }
        let _ = self.file;
        ChunkResult { output: Some(out), diagnostics: diags, diag_file: None }
    }
}

/// Re-parses printed text and checks that it prints the same.
fn roundtrip(printed: &str) -> Result<(), Diagnostic> {
    let again = match relax_parser::parse_module(printed) {
        Ok(m) => print_module(&m),
        Err(d) => {
            let first = d.first().map_or(String::new(), |x| x.message.clone());
            return Err(Diagnostic::error(Span::NONE, format!("the printed module does not parse again: {first}")));
        }
    };
    if again == printed {
        return Ok(());
    }
    let line = printed.lines().zip(again.lines()).position(|(a, b)| a != b).unwrap_or(0);
    Err(Diagnostic::error(Span::NONE, format!("printing is not stable: line {} differs after re-parsing", line + 1))
        .with_note(format!("first print:  {}", printed.lines().nth(line).unwrap_or("")))
        .with_note(format!("second print: {}", again.lines().nth(line).unwrap_or(""))))
}

impl PassInstrumentation for IrPrinter {
    fn before_pass(&mut self, pass: &str, scope: &str, m: &Module) {
        if self.before_all {
            self.dump("Before", pass, scope, m);
        }
    }
    fn after_pass(&mut self, pass: &str, scope: &str, m: &Module, changed: bool) {
        if (self.after_all || self.after.iter().any(|a| a == pass)) && (changed || !self.only_changed) {
            self.dump("After", pass, scope, m);
        }
    }
    fn after_pass_failed(&mut self, pass: &str, scope: &str, m: &Module) {
        if self.after_all || self.after.iter().any(|a| a == pass) {
            self.dump("After Failed", pass, scope, m);
        }
    }
}
