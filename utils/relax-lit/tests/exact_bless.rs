//! EXACT mode and blessing on scratch files: diffs, in-place rewrites, escaping, and the
//! blessed block passing both the front and real FileCheck-19.

use std::path::{Path, PathBuf};
use std::process::Command;

use relax_lit::{RunConfig, Status, TestCase, TestResult, run_case};

const RUN: &str = "# RUN: cat %S/out.txt | FileCheck %s --check-prefix=EXACT --match-full-lines --strict-whitespace\n";

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("exact").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Writes the output and the test, then runs it.
fn run(dir: &Path, output: &str, test: &str, bless: bool) -> TestResult {
    std::fs::write(dir.join("out.txt"), output).unwrap();
    let path = dir.join("t.rlx");
    std::fs::write(&path, test).unwrap();
    rerun(dir, bless)
}

fn rerun(dir: &Path, bless: bool) -> TestResult {
    let mut cfg = RunConfig::new(dir.to_path_buf(), dir.join("tmp"));
    cfg.bless = bless;
    let case = TestCase { name: "t.rlx".into(), path: dir.join("t.rlx"), line_offset: 0, doc_text: None };
    run_case(&case, &cfg)
}

fn details(r: &TestResult) -> String {
    match &r.status {
        Status::Failed(f) => format!("{}\n{}", f.reason, f.details),
        s => panic!("expected a failure, got {s:?}"),
    }
}

fn test_text(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("t.rlx")).unwrap()
}

/// Real FileCheck-19 on the test file with the output as stdin, when installed.
fn filecheck_19(dir: &Path) -> Option<i32> {
    let bin = Path::new(relax_lit::LLVM_BIN).join("FileCheck");
    bin.exists().then(|| {
        Command::new(bin)
            .args([
                dir.join("t.rlx").to_str().unwrap(),
                "--check-prefix=EXACT",
                "--match-full-lines",
                "--strict-whitespace",
            ])
            .stdin(std::fs::File::open(dir.join("out.txt")).unwrap())
            .status()
            .unwrap()
            .code()
            .unwrap_or(-1)
    })
}

#[test]
fn mismatch_prints_a_diff() {
    let dir = scratch("diff");
    let test = format!("{RUN}# EXACT:def f():\n# EXACT-NEXT:    x = {{{{[0-9]+}}}}\n# EXACT-NEXT:    return x\n");
    let r = run(&dir, "def f():\n    x = 42\n  return x\n", &test, false);
    let d = details(&r);
    assert!(
        d.contains("EXACT-NEXT: expected string not found") || d.contains("EXACT-NEXT: is not on the line after"),
        "{d}"
    );
    // The regex line matched, so the diff shows it as the actual text, not as a change.
    assert!(d.contains("     x = 42\n"), "{d}");
    assert!(d.contains("-    return x\n"), "{d}");
    assert!(d.contains("+  return x\n"), "{d}");
}

#[test]
fn bless_rewrites_the_block() {
    let dir = scratch("rewrite");
    let test = format!("{RUN}# A comment that stays.\n#  EXACT:old\n#  EXACT-NEXT:lines\nbody\n");
    let out = "\ndef f():\n\n    return x\n\n";
    let r = run(&dir, out, &test, true);
    assert!(matches!(r.status, Status::Passed), "{r:?}");
    assert_eq!(r.blessed, [dir.join("t.rlx")]);
    let want =
        format!("{RUN}# A comment that stays.\n#  EXACT:def f():\n#  EXACT-EMPTY:\n#  EXACT-NEXT:    return x\nbody\n");
    assert_eq!(test_text(&dir), want);
    assert!(matches!(rerun(&dir, false).status, Status::Passed));
    assert_eq!(filecheck_19(&dir).unwrap_or(0), 0);
}

#[test]
fn bless_inserts_a_missing_block() {
    let dir = scratch("insert");
    let test = format!("# header\n{RUN}\nbody\n");
    let r = run(&dir, "a\nb\n", &test, true);
    assert!(matches!(r.status, Status::Passed), "{r:?}");
    assert_eq!(test_text(&dir), format!("# header\n{RUN}# EXACT:a\n# EXACT-NEXT:b\n\nbody\n"));
    assert!(matches!(rerun(&dir, false).status, Status::Passed));
}

#[test]
fn blessed_text_is_escaped_for_both_engines() {
    let dir = scratch("escape");
    let path = dir.join("t.rlx").display().to_string();
    let out =
        format!("x = R.const([[1, 2]])\n{{{{not a regex}}}} $x\n# RUN: not a directive END.\n{path}:3:1: error: bad\n");
    let r = run(&dir, &out, &format!("{RUN}# EXACT:stale\n"), true);
    assert!(matches!(r.status, Status::Passed), "{r:?}");
    let text = test_text(&dir);
    assert!(text.contains(r"# EXACT:x = R.const({{\[\[}}1, 2]])"), "{text}");
    assert!(text.contains("# EXACT-NEXT:{{[{][{]}}not a regex}} $x"), "{text}");
    assert!(text.contains("# EXACT-NEXT:# RUN{{:}} not a directive END{{[.]}}"), "{text}");
    assert!(text.contains("# EXACT-NEXT:{{.*}}t.rlx:3:1: error: bad"), "{text}");
    assert!(matches!(rerun(&dir, false).status, Status::Passed));
    assert_eq!(filecheck_19(&dir).unwrap_or(0), 0);
}

#[test]
fn bless_refuses_split_blocks_and_negated_runs() {
    let dir = scratch("refuse");
    let test = format!("{RUN}# EXACT:a\nbody\n# EXACT-NEXT:b\n");
    let r = run(&dir, "x\n", &test, true);
    assert!(details(&r).contains("cannot bless: the EXACT lines are not one contiguous block"), "{r:?}");
    assert_eq!(test_text(&dir), test);

    // Under `not` the mismatch is the expected outcome, so nothing is blessed.
    let negated = RUN.replace("| FileCheck", "| not FileCheck");
    let test = format!("{negated}# EXACT:a\n");
    let r = run(&dir, "x\n", &test, true);
    assert!(matches!(r.status, Status::Passed) && r.blessed.is_empty(), "{r:?}");
    assert_eq!(test_text(&dir), test);
}

#[test]
fn exact_needs_strict_full_lines() {
    let dir = scratch("flags");
    let test = "# RUN: cat %S/out.txt | FileCheck %s --check-prefix=EXACT\n# EXACT:a\n";
    let r = run(&dir, "a\n", test, false);
    assert!(details(&r).contains("needs --match-full-lines --strict-whitespace"), "{r:?}");
    let test = format!("{RUN}# EXACT:a\n# EXACT-NOT:b\n");
    let r = run(&dir, "a\n", &test, false);
    assert!(details(&r).contains("holds only EXACT:, EXACT-NEXT: and EXACT-EMPTY:"), "{r:?}");
}
