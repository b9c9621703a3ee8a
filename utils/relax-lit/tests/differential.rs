//! The FileCheck front against real FileCheck-19: each case has an expected exit status
//! (0 pass, 1 check failure, 2 error) that the front must give, and, when
//! `/usr/lib/llvm-19/bin/FileCheck` exists, that FileCheck-19 must give too.

use std::path::Path;
use std::process::{Command, Stdio};

use relax_lit::filecheck::{Invocation, run};

/// `(name, input, check file, extra arguments, expected status)`.
type Case = (&'static str, &'static str, &'static str, &'static str, i32);

const CASES: &[Case] = &[
    ("substring", "add x\n", "# CHECK: dd\n", "", 0),
    ("substring-mid-word", "foobar\n", "# CHECK: oba\n", "", 0),
    ("missing", "add x\n", "# CHECK: sub\n", "", 1),
    ("space-runs-input", "a    b\n", "# CHECK: a b\n", "", 0),
    ("space-runs-pattern", "a b\n", "# CHECK: a    b\n", "", 0),
    ("tab-input", "a\tb\n", "# CHECK: a b\n", "", 0),
    ("strict-spaces", "a  b\n", "# CHECK: a b\n", "--strict-whitespace", 1),
    ("strict-spaces-ok", "a  b\n", "# CHECK: a  b\n", "--strict-whitespace", 0),
    ("leading-ws-ignored", "foo\n", "# CHECK:      foo\n", "", 0),
    ("regex-any", "foo = bar(1)\n", "# CHECK: foo = {{.*}}(1)\n", "", 0),
    ("regex-no-newline", "a\nb\n", "# CHECK: a{{.*}}b\n", "", 1),
    ("regex-dot-literal-outside", "axb(c)\n", "# CHECK: {{a}}.b(c)\n", "", 1),
    ("regex-dot-literal-ok", "a.b(c)\n", "# CHECK: {{a}}.b(c)\n", "", 0),
    ("regex-alternation-longest", "ab\n", "# CHECK: {{a|ab}}\n# CHECK-SAME: b\n", "", 1),
    ("regex-class", "x  \ty\n", "# CHECK: x{{[[:space:]]+}}y\n", "", 0),
    ("regex-negated-class-stops-at-newline", "a\nb\n", "# CHECK: a{{[^x]*}}b\n", "", 1),
    ("regex-unclosed", "a\n", "# CHECK: {{a\n", "", 2),
    ("dollar-literal", "x = $y\n", "# CHECK: = $y\n", "", 0),
    ("dollar-with-regex", "x = $y\n", "# CHECK: {{x}} = $y\n", "", 0),
    ("var-reuse", "%1 = add\nuse %1\n", "# CHECK: %[[V:[0-9]+]] = add\n# CHECK: use %[[V]]\n", "", 0),
    ("var-reuse-mismatch", "%1 = add\nuse %2\n", "# CHECK: %[[V:[0-9]+]] = add\n# CHECK: use %[[V]]\n", "", 1),
    ("var-rest-of-line", "x = 1 2\ny = 1 2\n", "# CHECK: x = [[V:.*]]\n# CHECK: y = [[V]]\n", "", 0),
    ("var-undefined", "a\n", "# CHECK: [[NOPE]]\n", "", 1),
    ("var-triple-bracket", "a[1]\n", "# CHECK: a[[[V:[0-9]]]]\n# CHECK-NOT: [[V]]\n", "", 0),
    ("var-in-not", "%1 = a\n%1 used\n", "# CHECK: [[V:%[0-9]]] = a\n# CHECK-NOT: [[V]]\n", "", 1),
    ("line-var", "line 3\n", "\n\n# CHECK: line [[@LINE]]\n", "", 0),
    ("line-var-offset", "line 4\n", "\n\n# CHECK: line [[@LINE+1]]\n", "", 0),
    ("not-between", "a\nb\nc\n", "# CHECK: a\n# CHECK-NOT: b\n# CHECK: c\n", "", 1),
    ("not-between-ok", "a\nx\nc\n", "# CHECK: a\n# CHECK-NOT: b\n# CHECK: c\n", "", 0),
    ("not-at-end", "a\nb\n", "# CHECK: a\n# CHECK-NOT: b\n", "", 1),
    ("not-at-start", "b\na\n", "# CHECK-NOT: b\n# CHECK: a\n", "", 1),
    ("not-before-match-only", "a\nb\n", "# CHECK-NOT: b\n# CHECK: a\n", "", 0),
    ("dag-any-order", "x\ny\nz\n", "# CHECK-DAG: y\n# CHECK-DAG: x\n# CHECK: z\n", "", 0),
    ("dag-after-check", "x\ny\nz\n", "# CHECK: z\n# CHECK-DAG: x\n", "", 1),
    ("dag-overlap", "x\n", "# CHECK-DAG: x\n# CHECK-DAG: x\n", "", 1),
    ("dag-two-matches", "x x\n", "# CHECK-DAG: x\n# CHECK-DAG: x\n", "", 0),
    ("dag-skip-overlap", "x y x\n", "# CHECK-DAG: x\n# CHECK-DAG: y\n# CHECK-DAG: x\n", "", 0),
    ("dag-not-dag", "a\nb\nc\n", "# CHECK-DAG: a\n# CHECK-NOT: b\n# CHECK-DAG: c\n", "", 1),
    ("dag-not-dag-ok", "a\nx\nc\n", "# CHECK-DAG: a\n# CHECK-NOT: b\n# CHECK-DAG: c\n", "", 0),
    ("dag-groups-ordered", "a\nb\nc\n", "# CHECK-DAG: c\n# CHECK-NOT: b\n# CHECK-DAG: a\n", "", 1),
    ("dag-then-next", "a\nb\nc\n", "# CHECK: a\n# CHECK-DAG: b\n# CHECK-NEXT: c\n", "", 0),
    ("dag-not-check", "a\nb\nc\n", "# CHECK-DAG: a\n# CHECK-NOT: b\n# CHECK: c\n", "", 1),
    ("label-scoping", "def f\n x\ndef g\n y\n", "# CHECK-LABEL: def f\n# CHECK: y\n# CHECK-LABEL: def g\n", "", 1),
    (
        "label-ok",
        "def f\n x\ndef g\n y\n",
        "# CHECK-LABEL: def f\n# CHECK: x\n# CHECK-LABEL: def g\n# CHECK: y\n",
        "",
        0,
    ),
    (
        "label-var-scope",
        "def f\n %1\ndef g\n %1\n",
        "# CHECK-LABEL: def f\n# CHECK: [[V:%[0-9]]]\n# CHECK-LABEL: def g\n# CHECK: [[V]]\n",
        "",
        1,
    ),
    (
        "label-global-var",
        "def f\n %1\ndef g\n %1\n",
        "# CHECK-LABEL: def f\n# CHECK: [[$V:%[0-9]]]\n# CHECK-LABEL: def g\n# CHECK: [[$V]]\n",
        "",
        0,
    ),
    ("label-missing", "def f\n", "# CHECK-LABEL: def g\n", "", 1),
    ("label-order", "g\nf\n", "# CHECK-LABEL: f\n# CHECK-LABEL: g\n", "", 1),
    ("label-with-var", "f\n", "# CHECK-LABEL: [[X:f]]\n", "", 2),
    ("label-dag-inside", "f\nb\na\ng\n", "# CHECK-LABEL: f\n# CHECK-DAG: a\n# CHECK-DAG: b\n# CHECK-LABEL: g\n", "", 0),
    ("label-not-inside", "f\nbad\ng\n", "# CHECK-LABEL: f\n# CHECK-NOT: bad\n# CHECK-LABEL: g\n", "", 1),
    ("label-next", "def f\nx\n", "# CHECK-LABEL: def f\n# CHECK-NEXT: x\n", "", 0),
    ("same-after-next", "a\nb c\n", "# CHECK: a\n# CHECK-NEXT: b\n# CHECK-SAME: c\n", "", 0),
    ("same-wrong-line", "a\nb\nc\n", "# CHECK: a\n# CHECK-NEXT: b\n# CHECK-SAME: c\n", "", 1),
    ("same-first", "a\n", "# CHECK-SAME: a\n", "", 2),
    ("next-same-line", "a b\nb\n", "# CHECK: a\n# CHECK-NEXT: b\n", "", 1),
    ("next-two-lines", "a\n\nb\n", "# CHECK: a\n# CHECK-NEXT: b\n", "", 1),
    ("next-ok", "a\nb\n", "# CHECK: a\n# CHECK-NEXT: b\n", "", 0),
    ("empty-ok", "a\n\nb\n", "# CHECK: a\n# CHECK-EMPTY:\n# CHECK-NEXT: b\n", "", 0),
    ("empty-not-next", "a\nx\n\nb\n", "# CHECK: a\n# CHECK-EMPTY:\n", "", 1),
    ("empty-at-end", "a\n", "# CHECK: a\n# CHECK-EMPTY:\n", "", 0),
    ("empty-at-end-blank", "a\n\n", "# CHECK: a\n# CHECK-EMPTY:\n", "", 0),
    ("empty-with-text", "a\n", "# CHECK: a\n# CHECK-EMPTY: x\n", "", 2),
    ("full-lines", "  foo bar  \n", "# CHECK: foo bar\n", "--match-full-lines", 0),
    ("full-lines-partial", "foo bar\n", "# CHECK: foo\n", "--match-full-lines", 1),
    ("full-lines-not-substring", "foo bar\n", "# CHECK: foo bar\n# CHECK-NOT: bar\n", "--match-full-lines", 0),
    ("full-lines-not", "foo bar\nx\n", "# CHECK-NOT: bar\n# CHECK: x\n", "--match-full-lines", 1),
    (
        "exact-ok",
        "def main():\n    return z\n",
        "# EXACT:def main():\n# EXACT-NEXT:    return z\n",
        "--check-prefix=EXACT --match-full-lines --strict-whitespace",
        0,
    ),
    (
        "exact-space-after-colon",
        "def main():\n    return z\n",
        "# EXACT: def main():\n# EXACT-NEXT:     return z\n",
        "--check-prefix=EXACT --match-full-lines --strict-whitespace",
        1,
    ),
    (
        "exact-indent",
        "def main():\n  return z\n",
        "# EXACT:def main():\n# EXACT-NEXT:    return z\n",
        "--check-prefix=EXACT --match-full-lines --strict-whitespace",
        1,
    ),
    ("exact-trailing-space", "a \n", "# EXACT:a\n", "--check-prefix=EXACT --match-full-lines --strict-whitespace", 1),
    (
        "exact-empty-line",
        "a\n\nb\n",
        "# EXACT:a\n# EXACT-EMPTY:\n# EXACT-NEXT:b\n",
        "--check-prefix=EXACT --match-full-lines --strict-whitespace",
        0,
    ),
    ("prefixes", "a\nb\n", "# A: a\n# B: b\n", "--check-prefixes=A,B", 0),
    ("prefix-unused", "a\nb\n", "# A: a\n", "--check-prefixes=A,C", 2),
    ("prefix-unused-allowed", "a\nb\n", "# A: a\n", "--check-prefixes=A,C --allow-unused-prefixes", 0),
    ("prefix-other-ignored", "a\n", "# CHECK: a\n# OTHER: zzz\n", "", 0),
    ("prefix-in-word", "a\n", "# XCHECK: zzz\n# CHECK: a\n", "", 0),
    ("prefix-in-run-line", "a\n", "# RUN: x | FileCheck CHECK: zzz\n# CHECK: a\n", "", 0),
    ("prefix-in-com", "a\n", "# COM: CHECK: zzz\n# CHECK: a\n", "", 0),
    ("prefix-lowercase-suffix", "a\n", "# CHECK: a\n# CHECK-next: zzz\n", "", 0),
    ("misspelled", "a\n", "# CHECK: a\n# CHECK_NEXT: a\n", "", 2),
    ("bad-not-combo", "a\n", "# CHECK: a\n# CHECK-NOT-DAG: a\n", "", 2),
    ("no-checks", "a\n", "nothing here\n", "", 2),
    ("empty-pattern", "a\n", "# CHECK:\n", "", 2),
    ("implicit-not", "a\nwarning: x\nb\n", "# CHECK: a\n# CHECK: b\n", "--implicit-check-not=warning", 1),
    ("implicit-not-ok", "a\nb\n", "# CHECK: a\n# CHECK: b\n", "--implicit-check-not=warning", 0),
    ("count", "x\nx\nx\n", "# CHECK-COUNT-3: x\n", "", 0),
    ("count-too-many", "x\nx\nx\n", "# CHECK-COUNT-4: x\n", "", 1),
    ("literal", "{{a}}\n", "# CHECK{LITERAL}: {{a}}\n", "", 0),
    ("empty-input", "", "# CHECK: a\n", "", 2),
    ("empty-input-allowed", "", "# CHECK-NOT: a\n", "--allow-empty", 0),
    ("unicode", "h\u{e9}llo w\u{f6}rld\n", "# CHECK: w\u{f6}rld\n", "", 0),
    ("crlf-input", "a\r\nb\r\n", "# CHECK: a\n# CHECK-NEXT: b\n", "", 0),
    ("no-trailing-newline", "a\nb", "# CHECK: a\n# CHECK-NEXT: b\n", "", 0),
    ("dag-group-then-next", "a\nc\nb\nd\n", "# CHECK: a\n# CHECK-DAG: b\n# CHECK-DAG: c\n# CHECK-NEXT: d\n", "", 0),
    ("not-before-dag", "b\na\n", "# CHECK-NOT: b\n# CHECK-DAG: a\n", "", 1),
    ("not-after-last-dag", "a\nb\n", "# CHECK-DAG: a\n# CHECK-NOT: b\n", "", 1),
    ("dag-overlap-retry", "ab a\n", "# CHECK-DAG: {{a}}\n# CHECK-DAG: {{ab}}\n", "", 1),
    (
        "dag-defines-vars",
        "b=2\na=1\nuse 1 2\n",
        "# CHECK-DAG: a=[[A:[0-9]]]\n# CHECK-DAG: b=[[B:[0-9]]]\n# CHECK: use [[A]] [[B]]\n",
        "",
        0,
    ),
    ("label-empty-region", "f\ng\n", "# CHECK-LABEL: f\n# CHECK-EMPTY:\n# CHECK-LABEL: g\n", "", 1),
    (
        "labels-with-next",
        "f\nx\ng\ny\n",
        "# CHECK-LABEL: f\n# CHECK-NEXT: x\n# CHECK-LABEL: g\n# CHECK-NEXT: y\n",
        "",
        0,
    ),
    ("label-next-gap", "f\n\nx\n", "# CHECK-LABEL: f\n# CHECK-NEXT: x\n", "", 1),
    ("caret-at-search-start", "xab\n", "# CHECK: x\n# CHECK-SAME: {{^}}ab\n", "", 0),
    ("var-empty-def", "a b\n", "# CHECK: a[[V:]] b\n# CHECK-SAME: b[[V]]\n", "", 1),
    ("var-empty-alone", "a b\n", "# CHECK: a[[V:]] b\n# CHECK-SAME: [[V]]\n", "", 1),
    ("regex-empty-group", "ab\n", "# CHECK: a{{()}}b\n", "", 0),
    ("regex-empty-branch", "ab\n", "# CHECK: a{{b|}}\n", "", 2),
    ("regex-lazy-rejected", "ab\n", "# CHECK: a{{b*?}}\n", "", 2),
    ("var-redefined", "x=1\nx=2\ny=2\n", "# CHECK: x=[[V:[0-9]]]\n# CHECK: x=[[V:[0-9]]]\n# CHECK: y=[[V]]\n", "", 0),
    ("not-regex", "a1\n", "# CHECK-NOT: {{[0-9]}}\n", "", 1),
    ("regex-spaces-canonical", "a  b\n", "# CHECK: {{a b}}\n", "", 0),
    ("regex-spaces-strict", "a  b\n", "# CHECK: {{a b}}\n", "--strict-whitespace", 1),
    ("single-bracket-literal", "x[0]\n", "# CHECK: x[0]\n", "", 0),
    ("escaped-braces", "{{x}}\n", "# CHECK: {{[{][{]}}x}}\n", "", 0),
    ("escaped-brackets", "[[1, 2]]\n", "# CHECK: {{\\[\\[}}1, 2]]\n", "", 0),
    ("escaped-run-keyword", "RUN: x\n", "# CHECK: RUN{{:}} x\n", "", 0),
    ("escaped-end-keyword", "END.\n", "# CHECK: END{{[.]}}\n", "", 0),
    ("implicit-not-regex", "a\nb\n", "# CHECK: a\n", "--implicit-check-not={{b}}", 1),
    ("empty-twice", "a\n\n\nb\n", "# CHECK: a\n# CHECK-EMPTY:\n# CHECK-EMPTY:\n# CHECK-NEXT: b\n", "", 0),
    (
        "exact-block-in-middle",
        "pre\na\nb\npost\n",
        "# EXACT:a\n# EXACT-NEXT:b\n",
        "--check-prefix=EXACT --match-full-lines --strict-whitespace",
        0,
    ),
    (
        "exact-first-occurrence-only",
        "a\nx\na\nb\n",
        "# EXACT:a\n# EXACT-NEXT:b\n",
        "--check-prefix=EXACT --match-full-lines --strict-whitespace",
        1,
    ),
    (
        "exact-path-regex",
        "/tmp/x/foo.rlx:1:2: error\n",
        "# EXACT:{{.*}}foo.rlx:1:2: error\n",
        "--check-prefix=EXACT --match-full-lines --strict-whitespace",
        0,
    ),
];

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

fn real_filecheck(args: &[String], input_path: &str) -> Option<(i32, String)> {
    let bin = Path::new(relax_lit::LLVM_BIN).join("FileCheck");
    if !bin.exists() {
        return None;
    }
    let out = Command::new(bin)
        .args(args)
        .env("FILECHECK_OPTS", "-enable-var-scope")
        .stdin(Stdio::from(std::fs::File::open(input_path).unwrap()))
        .output()
        .unwrap();
    Some((out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).into_owned()))
}

#[test]
fn front_agrees_with_filecheck_19() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("differential");
    std::fs::create_dir_all(&dir).unwrap();
    let mut problems = Vec::new();
    for &(name, input, check, extra, expected) in CASES {
        let check_path = write(&dir, &format!("{name}.chk"), check);
        let mut args = vec![check_path];
        args.extend(extra.split_whitespace().map(str::to_string));
        let ours = run(&Invocation { args: &args, stdin: input.as_bytes(), cwd: &dir, bless: false });
        if ours.code != expected {
            problems.push(format!("{name}: front gave {} (want {expected})\n{}", ours.code, ours.stderr));
        }
        let input_path = write(&dir, &format!("{name}.in"), input);
        if let Some((code, stderr)) = real_filecheck(&args, &input_path)
            && code != expected
        {
            problems.push(format!("{name}: FileCheck-19 gave {code} (want {expected})\n{stderr}"));
        }
    }
    assert!(problems.is_empty(), "{} disagreements:\n{}", problems.len(), problems.join("\n"));
}

/// A small deterministic generator (xorshift), so failures reproduce.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

/// Random inputs and check files, compared with FileCheck-19 (run with `--ignored`).
#[test]
#[ignore = "slow: spawns FileCheck-19 a few thousand times"]
fn random_cases_agree_with_filecheck_19() {
    const LINES: &[&str] = &["a", "b", "ab", "x y", "", "  a", "a  b", "%1 = a", "def f", "def g", "b a b"];
    const KINDS: &[&str] =
        &["CHECK:", "CHECK-NEXT:", "CHECK-SAME:", "CHECK-NOT:", "CHECK-DAG:", "CHECK-LABEL:", "CHECK-EMPTY:"];
    const PATS: &[&str] = &[
        "a",
        "b",
        "ab",
        "x y",
        "a b",
        "{{a|ab}}",
        "{{.*}}b",
        "[[V:[a-z]+]]",
        "[[V]]",
        "def {{[fg]}}",
        "%[[N:[0-9]]]",
        "[[N]] =",
        "y",
        "{{^}}a",
        "a{{$}}",
        "{{[^b]*}}",
    ];
    const OPTS: &[&str] = &["", "--match-full-lines", "--strict-whitespace", "--match-full-lines --strict-whitespace"];
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("differential-random");
    std::fs::create_dir_all(&dir).unwrap();
    let mut rng =
        Rng(0x9e37_79b9_7f4a_7c15 ^ std::env::var("RELAX_LIT_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0));
    let mut problems = Vec::new();
    let mut codes = [0usize; 3];
    for n in 0..3000 {
        let mut input: Vec<&str> = (0..1 + rng.below(6)).map(|_| rng.pick(LINES)).collect();
        if rng.below(3) > 0 {
            input.push("");
        }
        let input = input.join("\n");
        let mut check = String::new();
        for i in 0..1 + rng.below(5) {
            let kind = if i == 0 { rng.pick(&KINDS[..2]) } else { rng.pick(KINDS) };
            let kind = if kind == "CHECK-NEXT:" && i == 0 { "CHECK-LABEL:" } else { kind };
            let line = input.split('\n').nth(rng.below(3)).unwrap_or("a");
            let pat = match kind {
                "CHECK-EMPTY:" => "",
                "CHECK-LABEL:" => rng.pick(&["a", "b", "def f", "def g", "x y"]),
                _ if rng.below(3) == 0 && !line.trim().is_empty() => line.trim(),
                _ => rng.pick(PATS),
            };
            check.push_str(&format!("# {kind} {pat}\n"));
        }
        let extra = rng.pick(OPTS);
        let check_path = write(&dir, "c.chk", &check);
        let input_path = write(&dir, "c.in", &input);
        let mut args = vec![check_path];
        args.extend(extra.split_whitespace().map(str::to_string));
        let ours = run(&Invocation { args: &args, stdin: input.as_bytes(), cwd: &dir, bless: false });
        let Some((code, stderr)) = real_filecheck(&args, &input_path) else {
            return;
        };
        codes[ours.code.clamp(0, 2) as usize] += 1;
        if code != ours.code {
            problems.push(format!(
                "case {n} {extra}: front {} vs FileCheck-19 {code}\ninput: {input:?}\ncheck:\n{check}{}\n{stderr}",
                ours.code, ours.stderr
            ));
        }
    }
    assert!(problems.is_empty(), "{} disagreements:\n{}", problems.len(), problems[..problems.len().min(5)].join("\n"));
    // The generator must exercise passes and check failures, not just check-file errors.
    assert!(codes[0] > 300 && codes[1] > 300 && codes[2] < 1500, "exit status counts {codes:?}");
}
