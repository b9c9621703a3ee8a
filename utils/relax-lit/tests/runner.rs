//! The runner on small test files written to a scratch folder: RUN lines, features,
//! failures and their reports, the round-trip hook, documentation blocks.

use std::path::{Path, PathBuf};

use relax_lit::{RunConfig, Status, TestCase, TestResult, collect, report, run_all, run_case};

/// A fresh scratch folder for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("runner").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn config(dir: &Path) -> RunConfig {
    RunConfig::new(dir.to_path_buf(), dir.join("tmp"))
}

/// Writes `text` as `dir/name` and runs it.
fn run_text(dir: &Path, name: &str, text: &str, config: &RunConfig) -> TestResult {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    let case = TestCase { name: name.into(), path, line_offset: 0, doc_text: None };
    run_case(&case, config)
}

fn failure(r: &TestResult) -> &relax_lit::Failure {
    match &r.status {
        Status::Failed(f) => f,
        s => panic!("expected a failure, got {s:?}"),
    }
}

#[test]
fn passing_and_failing_checks() {
    let dir = scratch("checks");
    std::fs::write(dir.join("out.txt"), "hello world\n").unwrap();
    let cfg = config(&dir);
    let ok = run_text(&dir, "ok.rlx", "# RUN: cat %S/out.txt | FileCheck %s\n# CHECK: {{hello}} world\n", &cfg);
    assert!(matches!(ok.status, Status::Passed), "{ok:?}");

    let text = "# RUN: true\n# RUN: cat %S/out.txt | FileCheck %s\n# CHECK: {{goodbye}}\n";
    let bad = run_text(&dir, "bad.rlx", text, &cfg);
    let f = failure(&bad);
    assert_eq!(f.line, 2);
    assert_eq!(f.run, "cat %S/out.txt | FileCheck %s");
    assert_eq!(f.reason, "`FileCheck` exited with status 1");
    assert!(f.details.contains("error: CHECK: expected string not found in input"), "{}", f.details);
    assert!(f.details.contains("<stdin>:1:1: note: scanning from here"), "{}", f.details);

    let mut out = Vec::new();
    let summary = report(&[ok, bad], &mut out).unwrap();
    let out = String::from_utf8(out).unwrap();
    assert_eq!((summary.passed, summary.failed, summary.unsupported), (1, 1, 0));
    assert!(out.starts_with("FAIL bad.rlx:2: RUN: cat %S/out.txt | FileCheck %s: `FileCheck` exited"), "{out}");
    assert!(out.ends_with("1 passed, 1 failed, 0 unsupported\n"), "{out}");
}

#[test]
fn features_decide_support() {
    let dir = scratch("features");
    let mut cfg = config(&dir);
    cfg.features = relax_lit::Features {
        llvm: false,
        spirv: true,
        spirv_val: false,
        ptxas: false,
        cuda: false,
        cuda_sim: None,
        arch: "x86_64",
    };
    let r = run_text(&dir, "a.rlx", "# REQUIRES: llvm\n# RUN: false\n", &cfg);
    assert!(matches!(r.status, Status::Unsupported(_)), "{r:?}");
    let r = run_text(&dir, "b.rlx", "# UNSUPPORTED: spirv\n# RUN: false\n", &cfg);
    assert!(matches!(r.status, Status::Unsupported(_)), "{r:?}");
    let r = run_text(&dir, "c.rlx", "# REQUIRES: spirv, !llvm\n# RUN: %if llvm %{ false %} %else %{ true %}\n", &cfg);
    assert!(matches!(r.status, Status::Passed), "{r:?}");
    let r = run_text(&dir, "d.rlx", "# REQUIRES: lvm\n# RUN: true\n", &cfg);
    assert!(failure(&r).reason.contains("unknown feature `lvm`"));
    let r = run_text(&dir, "e.rlx", "# RUN: %if rocm %{ true %}\n", &cfg);
    assert!(failure(&r).reason.contains("unknown feature `rocm`"));
}

#[test]
fn unsupported_run_lines_are_errors() {
    let dir = scratch("errors");
    let cfg = config(&dir);
    let cases = [
        ("# RUN: echo $HOME\n", "unquoted `$`"),
        ("# RUN: ls *.rlx\n", "unquoted `*`"),
        ("# RUN: true %T\n", "unsupported substitution `%T`"),
        ("# RUN: no-such-command-xyz\n", "command not found: no-such-command-xyz"),
        ("# RUN: relax-frobnicate %s\n", "is not among relax_driver::tools()"),
        ("# RUN: cat | FileCheck %s\n", "does not read stdin"),
        ("# RUN: not --crash true\n", "`not --crash` is not supported"),
        ("# XFAIL: *\n# RUN: true\n", "`XFAIL:` is not supported"),
        ("# RUN: true \\\n", "unterminated RUN line"),
        ("no directives\n", "no RUN: line"),
    ];
    for (i, (text, want)) in cases.iter().enumerate() {
        let r = run_text(&dir, &format!("t{i}.rlx"), text, &cfg);
        assert!(failure(&r).reason.contains(want), "{text:?}: {:?}", failure(&r));
    }
}

#[test]
fn shell_features() {
    let dir = scratch("shell");
    std::fs::write(dir.join("in.txt"), "abc\n").unwrap();
    let cfg = config(&dir);
    let text = "\
# RUN: cat %S/in.txt > %t && FileCheck %s --input-file %t
# RUN: FileCheck %s < %S/in.txt 2> %t.err; not FileCheck %s --check-prefix=NO < %S/in.txt
# RUN: cat %t.err | count 0
# RUN: not not true || false
# RUN: cat %S/in.txt %S/in.txt | \\
# RUN:   FileCheck %s --check-prefix=TWICE
# CHECK: abc
# NO: xyz
# TWICE: abc
# TWICE-NEXT: abc
";
    let r = run_text(&dir, "shell.rlx", text, &cfg);
    assert!(matches!(r.status, Status::Passed), "{r:?}");
    assert!(dir.join("tmp/Output/shell.rlx.tmp").exists());
}

#[test]
fn in_process_tools_and_relative_paths() {
    let dir = scratch("tools");
    let cfg = config(&dir);
    let r = run_text(&dir, "missing.rlx", "# RUN: not relax-opt %S/no-such-file.rlx\n", &cfg);
    assert!(matches!(r.status, Status::Passed), "{r:?}");
    let r = run_text(&dir, "relative.rlx", "# RUN: relax-opt relative.rlx\n", &cfg);
    assert!(failure(&r).reason.contains("write %S/relative.rlx"), "{r:?}");
}

fn hook_ok(_: &Path, text: &str) -> Result<(), String> {
    if text.contains("BROKEN") { Err("printed text differs".into()) } else { Ok(()) }
}

fn hook_panics(_: &Path, _: &str) -> Result<(), String> {
    panic!("hook exploded")
}

#[test]
fn roundtrip_hook() {
    let dir = scratch("roundtrip");
    let mut cfg = config(&dir);
    cfg.roundtrip = Some(hook_ok);
    let r = run_text(&dir, "good.rlx", "# RUN: true\n", &cfg);
    assert!(matches!(r.status, Status::Passed), "{r:?}");
    let r = run_text(&dir, "bad.rlx", "# RUN: true\n# BROKEN\n", &cfg);
    assert_eq!(failure(&r).reason, "round trip: printed text differs");
    let r = run_text(&dir, "skip.rlx", "# REQUIRES: ptxas && !ptxas\n# RUN: true\n# BROKEN\n", &cfg);
    assert!(matches!(r.status, Status::Unsupported(_)), "{r:?}");

    cfg.roundtrip = Some(hook_panics);
    std::fs::write(dir.join("p.rlx"), "# RUN: true\n").unwrap();
    let case = TestCase { name: "p.rlx".into(), path: dir.join("p.rlx"), line_offset: 0, doc_text: None };
    let results = run_all(&[case], &cfg);
    let reason = &failure(&results[0]).reason;
    assert!(reason.starts_with("round trip panicked: ") && reason.contains("hook exploded"), "{reason}");
}

#[test]
fn documentation_blocks() {
    let dir = scratch("docs");
    std::fs::create_dir_all(dir.join("docs")).unwrap();
    let md = "# Title\n\n```rlx\n# RUN: true\n```\n\ntext\n\n```rlx\n# RUN: true\n# RUN: false\n```\n\n```rlx\nno run line\n```\n";
    std::fs::write(dir.join("docs/guide.md"), md).unwrap();
    let cfg = config(&dir);
    let cases = collect::doc_blocks(&dir, &dir.join("docs"), &cfg.temp_root);
    let names: Vec<&str> = cases.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["docs/guide.md:4", "docs/guide.md:10", "docs/guide.md:15"]);
    let results = run_all(&cases, &cfg);
    assert!(matches!(results[0].status, Status::Passed), "{:?}", results[0]);
    assert_eq!(failure(&results[1]).line, 11);
    assert!(matches!(results[2].status, Status::Passed), "a block without RUN lines only gets the hook");
}

#[test]
fn test_files_are_sorted_and_skip_inputs() {
    let dir = scratch("collect");
    for f in ["b/x.rlx", "a/y.rlx", "a/Inputs/z.rlx", "a/Output/w.rlx", "a/notes.txt", "c.rlx"] {
        let p = dir.join(f);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, "").unwrap();
    }
    let names: Vec<String> = collect::test_files(&dir, &dir).into_iter().map(|c| c.name).collect();
    assert_eq!(names, ["a/y.rlx", "b/x.rlx", "c.rlx"]);
}
