//! The FileCheck front's messages and its refusals, and the runner's negative self-tests
//! failing for the reason they claim (a check failure, not a check-file error).

use std::path::{Path, PathBuf};

use relax_lit::filecheck::{Invocation, Outcome, run};

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("front").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs the front on `check` (written to a file) with `input` on stdin.
fn check(name: &str, check: &str, extra: &[&str], input: &str) -> Outcome {
    let dir = scratch(name);
    std::fs::write(dir.join("c.chk"), check).unwrap();
    let mut args = vec!["c.chk".to_string()];
    args.extend(extra.iter().map(|s| s.to_string()));
    run(&Invocation { args: &args, stdin: input.as_bytes(), cwd: &dir, bless: false })
}

#[test]
fn messages_look_like_filecheck() {
    let out = check("missing", "# CHECK: a\n# CHECK-NEXT: zz\n", &[], "a\nb\n");
    assert_eq!(out.code, 1);
    let want = "c.chk:2:15: error: CHECK-NEXT: expected string not found in input\n\
                # CHECK-NEXT: zz\n              ^\n\
                <stdin>:1:2: note: scanning from here\na\n ^\n";
    assert_eq!(out.stderr, want);

    let out = check("not", "# CHECK: a\n# CHECK-NOT: b\n", &[], "a\nb\n");
    assert!(out.stderr.contains("c.chk:2:14: error: CHECK-NOT: excluded string found in input"), "{}", out.stderr);
    assert!(out.stderr.contains("<stdin>:2:1: note: found here"), "{}", out.stderr);

    let out = check("var", "# CHECK: [[V:[a-z]]]=\n# CHECK: use [[V]]\n", &[], "x=\nuse y\n");
    assert!(out.stderr.contains("note: with \"V\" equal to \"x\""), "{}", out.stderr);
}

#[test]
fn usage_errors_exit_2() {
    let cases: [(&str, &[&str], &str); 7] = [
        ("# CHECK: a\n", &["--bogus"], "unsupported FileCheck option `--bogus`"),
        ("# CHECK: a\n", &["-DX=1"], "unsupported FileCheck option `-DX=1`"),
        ("# CHECK: {{\\d+}}\n", &[], "means a plain `d` to FileCheck-19"),
        ("# CHECK: {{(a)\\1}}\n", &[], "back-reference"),
        ("# CHECK: [[V:a]] [[V]]\n", &[], "needs a back-reference"),
        ("# CHECK: [[#N+1]]\n", &[], "numeric substitution `N+1` is not supported"),
        ("# A: a\n", &["--check-prefixes=A,B"], "no check strings found with prefix 'B:'"),
    ];
    for (i, (text, extra, want)) in cases.iter().enumerate() {
        let out = check(&format!("usage{i}"), text, extra, "a\n");
        assert_eq!(out.code, 2, "{text:?}: {}", out.stderr);
        assert!(out.stderr.contains(want), "{text:?}: {}", out.stderr);
    }
    let out = check("empty", "# CHECK: a\n", &[], "");
    assert_eq!((out.code, out.stderr.as_str()), (2, "FileCheck error: '<stdin>' is empty.\n"));
}

#[test]
fn input_file_is_read_from_the_working_directory() {
    let dir = scratch("input-file");
    std::fs::write(dir.join("in.txt"), "hello\n").unwrap();
    let out = check("input-file", "# CHECK: hello\n", &["--input-file", "in.txt"], "");
    assert_eq!(out.code, 0, "{}", out.stderr);
}

/// Each `not FileCheck` prefix of the negative self-tests must fail with status 1.
#[test]
fn negative_self_tests_fail_for_the_right_reason() {
    let runner = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../test/Runner");
    let cases: [(&str, &[&str]); 11] = [
        ("filecheck-negative.rlx", &["--check-prefix=NEXT"]),
        ("filecheck-negative.rlx", &["--check-prefix=NEXTSAME"]),
        ("filecheck-negative.rlx", &["--check-prefix=SAME"]),
        ("filecheck-negative.rlx", &["--check-prefix=NOT"]),
        ("filecheck-negative.rlx", &["--check-prefix=DAG"]),
        ("filecheck-negative.rlx", &["--check-prefix=EMPTY"]),
        ("filecheck-negative.rlx", &["--check-prefix=MISSING"]),
        ("filecheck-negative.rlx", &["--check-prefix=FULL", "--match-full-lines"]),
        ("filecheck-negative.rlx", &["--check-prefix=STRICT", "--strict-whitespace"]),
        ("filecheck-label.rlx", &["--check-prefix=SCOPE"]),
        ("filecheck-label.rlx", &["--check-prefix=CROSS"]),
    ];
    for (file, extra) in cases {
        let input = std::fs::read(runner.join(file)).unwrap();
        let mut args = vec![file.to_string()];
        args.extend(extra.iter().map(|s| s.to_string()));
        let out = run(&Invocation { args: &args, stdin: &input, cwd: &runner, bless: false });
        assert_eq!(out.code, 1, "{file} {extra:?}: {}", out.stderr);
    }
}
