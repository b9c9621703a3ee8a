//! Malformed inputs that cannot live in a lit test file: the empty file, binary garbage,
//! invalid UTF-8, NUL bytes, 10,000 nested brackets, a 5 MB line, every truncation of a
//! sample, CRLF line ends, tabs. Each goes through `relax-opt` in process and must give a
//! well-formed diagnostic (exit status 1) or a module that prints back (exit status 0),
//! quickly and without a panic (`support/driver.rs` checks the form of every line). The
//! lit suite `test/Parser/errors/` holds the malformed inputs that text can express.

mod support {
    pub mod driver;
}

use std::path::Path;
use std::time::{Duration, Instant};

use support::driver::{check, check_bytes, check_with, run_opt};

fn sample(rel: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../test/Corpus/shared-samples").join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Runs `relax-opt` and returns (status, stdout, stderr) after checking the output's form.
#[track_caller]
fn run_checked(input: &[u8]) -> (i32, String, String) {
    if let Err(why) = check_bytes(input) {
        panic!("{why}");
    }
    run_opt(input)
}

#[track_caller]
fn assert_error(input: &[u8], header: &str) -> String {
    let (status, stdout, stderr) = run_checked(input);
    assert_eq!(status, 1, "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(stderr.contains(header), "expected `{header}` in:\n{stderr}");
    stderr
}

const MODULE: &str = "@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4,), dtype=\"float32\")) -> R.Tensor((4,), dtype=\"float32\"):
        y: R.Tensor((4,), dtype=\"float32\") = R.add(x, x)
        return y
";

/// TVM prints an empty `IRModule` as a class whose body is `pass`; an empty file (or one
/// with only comments or blank lines) reads as that module and prints the same.
#[test]
fn an_empty_file_is_an_empty_module() {
    let empty = "# from tvm.script import ir as I\n\n@I.ir_module\nclass Module:\n    pass\n";
    for input in ["", "\n", "\n\n\n", "# only a comment\n", "   \n\t\n", "\r\n"] {
        let (status, stdout, stderr) = run_checked(input.as_bytes());
        assert_eq!((status, stdout.as_str(), stderr.as_str()), (0, empty, ""), "input {input:?}");
    }
    // ... and reads back.
    let (status, stdout, _) = run_checked(empty.as_bytes());
    assert_eq!((status, stdout.as_str()), (0, empty));
}

#[test]
fn binary_garbage_is_reported() {
    let mut x: u64 = 0x243f_6a88_85a3_08d3;
    for len in [1, 7, 64, 1000, 100_000] {
        let bytes: Vec<u8> = (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        let (status, ..) = run_checked(&bytes);
        assert_eq!(status, 1);
        // The same garbage as valid UTF-8 (every byte an ASCII or Latin-1 character).
        let text: String = bytes.iter().map(|&b| char::from(b)).collect();
        let (status, ..) = run_checked(text.as_bytes());
        assert_eq!(status, 1);
    }
}

#[test]
fn invalid_utf8_is_reported_where_it_is() {
    let mut bytes = MODULE.as_bytes().to_vec();
    // In `dtype="float32"` of line 4: `"fl\xFF\xFEoat32"`.
    let at = MODULE.find("float32").unwrap() + 2;
    bytes.splice(at..at, [0xff, 0xfe]);
    let stderr = assert_error(&bytes, "<stdin>:4:41: error: the input is not valid UTF-8");
    assert!(stderr.contains("^ not UTF-8"), "{stderr}");
    // A lone continuation byte, a truncated sequence at the end, an overlong encoding.
    for bad in [&b"\x80"[..], b"x = 1\n\xe2\x82", b"\xc0\xaf"] {
        assert_error(bad, "error: the input is not valid UTF-8");
    }
}

#[test]
fn nul_bytes_are_reported() {
    let input = MODULE.replace("R.add(x, x)", "R.add(x,\0x)");
    let stderr = assert_error(input.as_bytes(), "<stdin>:5:54: error: invalid character `\\0`");
    // The NUL shows as a control picture, with a caret under it.
    assert!(stderr.contains("R.add(x,\u{2400}x)") && stderr.contains("^"), "{stderr}");
    assert_error(b"\0", "<stdin>:1:1: error: invalid character `\\0`");
    assert_error(&[0u8; 10_000], "<stdin>:1:1: error: invalid character `\\0`");
}

#[test]
fn ten_thousand_nested_brackets_are_a_nesting_error() {
    for (open, close) in [("(", ")"), ("[", "]"), ("{", "}")] {
        let inner = format!("{}x{}", open.repeat(10_000), close.repeat(10_000));
        let input = MODULE.replace("R.add(x, x)", &format!("R.add({inner}, x)"));
        let start = Instant::now();
        assert_error(input.as_bytes(), "error: nesting too deep (more than 1000 levels)");
        assert!(start.elapsed() < Duration::from_secs(2));
        // Unclosed.
        assert_error(open.repeat(10_000).as_bytes(), "error: nesting too deep (more than 1000 levels)");
    }
}

#[test]
fn long_chains_and_groups_are_bounded() {
    // A chain of groups, each a chain: tree depth grows with the product, so the bound must
    // count closed groups, not just open ones (this overflowed the stack).
    let mut e = "x".to_string();
    for _ in 0..99 {
        e = format!("({e}{})", " + 1".repeat(99));
    }
    let input = format!(
        "@I.ir_module\nclass Module:\n    @T.prim_func\n    def f(a: T.Buffer((4,), \"int32\"), x: T.int32):\n        a[0] = {e}\n"
    );
    assert_error(input.as_bytes(), "error: nesting too deep (more than 1000 levels)");
}

#[test]
fn a_five_megabyte_line_is_shown_in_a_window() {
    let long = "a".repeat(5_000_000);
    // A valid module with a 5 MB string prints back.
    let input = MODULE.replace("return y", &format!("z = R.str(\"{long}\")\n        return y"));
    let (status, stdout, _) = run_checked(input.as_bytes());
    assert_eq!(status, 0);
    assert!(stdout.contains(&long));
    // An error at the end of a 5 MB line.
    let input = MODULE.replace("R.add(x, x)", &format!("R.add(x, x){} q", " ".repeat(5_000_000)));
    let stderr = assert_error(input.as_bytes(), "<stdin>:5:5000058: error: expected newline or `,`, found `q`");
    assert!(stderr.len() < 2_000, "the snippet is not windowed: {} bytes", stderr.len());
    // A 5 MB identifier.
    let input = MODULE.replace("R.add(x, x)", &format!("R.add(x, {long})"));
    let stderr = assert_error(input.as_bytes(), "<stdin>:5:55: error: undefined variable `aaaa");
    assert!(stderr.len() < 3_000, "the message is not cut: {} bytes", stderr.len());
}

#[test]
fn every_truncation_of_a_sample_is_handled() {
    for rel in ["tvm-0.25/04_gpu_scheduled_rms_norm.rlx", "tvm-0.27/02_types_match_cast_dps_packed.rlx"] {
        let text = sample(rel);
        let bytes = text.as_bytes();
        for cut in (0..bytes.len()).step_by(97) {
            if let Err(why) = check_bytes(&bytes[..cut]) {
                panic!("{rel} cut at byte {cut}: {why}");
            }
        }
    }
}

#[test]
fn crlf_files_read_like_lf_files() {
    for rel in ["tvm-0.25/02_types_match_cast_dps_packed.rlx", "tvm-0.25/04_gpu_scheduled_rms_norm.rlx"] {
        let lf = sample(rel);
        let crlf = lf.replace('\n', "\r\n");
        let (s1, out_lf, _) = run_checked(lf.as_bytes());
        let (s2, out_crlf, err) = run_checked(crlf.as_bytes());
        assert_eq!((s1, s2), (0, 0), "{err}");
        assert_eq!(out_lf, out_crlf);
    }
    // Errors in a CRLF file have the same locations, and no `\r` in the snippet.
    let bad = MODULE.replace("R.add(x, x)", "R.add(x, z)").replace('\n', "\r\n");
    let stderr = assert_error(bad.as_bytes(), "<stdin>:5:55: error: undefined variable `z`");
    assert!(!stderr.contains('\r'), "{stderr:?}");
    // A lone `\r` is not a line end.
    check("x = 1\ry = 2\n").unwrap();
}

#[test]
fn tabs_in_indentation_are_reported_once() {
    let input = MODULE.replace("        ", "\t\t");
    let stderr = assert_error(input.as_bytes(), "<stdin>:5:1: error: tab character in indentation");
    assert_eq!(stderr.matches("error:").count(), 1, "{stderr}");
    // A tab between tokens is whitespace.
    let input = MODULE.replace("R.add(x, x)", "R.add(x,\tx)");
    let (status, ..) = run_checked(input.as_bytes());
    assert_eq!(status, 0);
}

/// The deepest inputs the reader accepts (just under each nesting limit) go through the
/// whole driver on a test thread's stack (2 MiB by default) in a debug build: every walk
/// over syntax trees, IR and printed text is bounded by the limits.
#[test]
fn the_deepest_accepted_inputs_fit_on_the_stack() {
    let head = "@I.ir_module\nclass Module:\n";
    let prim = |body: &str| {
        format!(
            "{head}    @T.prim_func\n    def f(a: T.Buffer((4,), \"int32\"), x: T.int32, b: T.Buffer((4,), \"bool\"), y: T.bool):\n{body}"
        )
    };
    let relax = |body: &str| {
        format!("{head}    @R.function\n    def main(x: R.Tensor((4,), dtype=\"float32\")):\n{body}        return x\n")
    };
    let chain = vec!["x"; 190].join(" + ");
    let mut inputs = Vec::new();
    // Statements nested to the indentation limit, around the longest expression.
    let mut body = String::new();
    for i in 0..95 {
        body.push_str(&format!("{}if x == {i}:\n", "    ".repeat(i + 2)));
    }
    body.push_str(&format!("{}a[0] = {chain}\n", "    ".repeat(97)));
    inputs.push(prim(&body));
    let mut body = String::new();
    for i in 0..95 {
        body.push_str(&format!("{}for i{i} in range(2):\n", "    ".repeat(i + 2)));
    }
    body.push_str(&format!("{}a[0] = {chain}\n", "    ".repeat(97)));
    inputs.push(prim(&body));
    // Expressions to the nesting limit.
    // `-x` prints as `0 - x`: two levels each.
    inputs.push(prim(&format!("        a[0] = {}x\n", "-".repeat(95))));
    inputs.push(prim(&format!("        b[0] = {}y\n", "not ".repeat(195))));
    inputs.push(prim(&format!("        a[0] = {}0{}\n", "a[".repeat(99), "]".repeat(99))));
    inputs.push(prim(&format!("        a[0] = {}x{}\n", "T.max(".repeat(66), ", 1)".repeat(66))));
    inputs.push(relax(&format!("        y = {}x{}\n", "R.add(".repeat(66), ", x)".repeat(66))));
    inputs.push(relax(&format!("        y = {}x{}\n", "(".repeat(60), ",)".repeat(60))));
    inputs.push(relax(&format!("        R.func_attr({{\"a\": {}1{}}})\n", "[".repeat(190), "]".repeat(190))));
    inputs.push(relax(&format!("        y = R.const({}1.0{}, \"float32\")\n", "[".repeat(190), "]".repeat(190))));
    inputs.push(format!(
        "{head}    @R.function\n    def main(x: {}R.Object{}):\n        return x\n",
        "R.Tuple(".repeat(65),
        ")".repeat(65)
    ));
    inputs.push(format!(
        "{head}    @R.function\n    def main(x: R.Tensor((\"n\",), dtype=\"float32\")) -> R.Tensor((\"{}\",), dtype=\"float32\"):\n        n = T.int64()\n        return x\n",
        vec!["n"; 190].join(" + ")
    ));
    let mut elifs = "        if x == 0:\n            a[0] = 0\n".to_string();
    for i in 1..95 {
        elifs.push_str(&format!("        elif x == {i}:\n            a[0] = {i}\n"));
    }
    inputs.push(prim(&elifs));
    let passes = ["--normalize", "--canonicalize-bindings", "--dead-code-elimination", "--to-non-dataflow"];
    for input in &inputs {
        let (status, _, stderr) = run_checked(input.as_bytes());
        assert_eq!(status, 0, "{stderr}\n--- input\n{}", &input[..input.len().min(2000)]);
        // The passes walk the same IR.
        if let Err(why) = check_with(input.as_bytes(), &passes) {
            panic!("{why}\n--- input\n{}", &input[..input.len().min(2000)]);
        }
    }
}

/// Large inputs stay linear: thousands of bindings of one name (the printer's suffix
/// search was quadratic: 40,000 took 130 s in a release build), of functions (name
/// lookup was a linear scan per reference) and of PrimFunc parameters (the printer and
/// the lowering compared every parameter with every other).
///
/// Each input is checked at a quarter of its size and at full size; linear work takes
/// about 4 times as long, quadratic work 16 times. A ratio (the better of two runs of
/// each) rather than a time limit, so a loaded machine does not fail the test.
#[test]
fn large_inputs_stay_linear() {
    let t4 = "R.Tensor((4,), dtype=\"float32\")";
    let shadowed = |n: usize| {
        format!(
            "@I.ir_module\nclass Module:\n    @R.function\n    def main(y: {t4}) -> {t4}:\n{}        return y\n",
            "        y = R.add(y, y)\n".repeat(n)
        )
    };
    let functions = |n: usize| {
        let mut functions = String::from("@I.ir_module\nclass Module:\n");
        for i in 0..n {
            functions.push_str(&format!("    @R.function\n    def f{i}(x: {t4}) -> {t4}:\n        return x\n"));
        }
        functions.push_str(&format!("    @R.function\n    def main(x: {t4}) -> {t4}:\n        cls = Module\n"));
        for i in 0..n {
            functions.push_str(&format!("        x = cls.f{i}(x)\n"));
        }
        functions.push_str("        return x\n");
        functions
    };
    let handles = |n: usize| {
        let params: Vec<String> = (0..n).map(|i| format!("h{i}: T.handle")).collect();
        let mut handles = format!("@I.ir_module\nclass Module:\n    @T.prim_func\n    def f({}):\n", params.join(", "));
        for i in 0..n {
            handles.push_str(&format!("        a{i} = T.match_buffer(h{i}, (4,))\n"));
        }
        for i in 0..n {
            handles.push_str(&format!("        a{i}[0] = T.float32(1.0)\n"));
        }
        handles
    };
    let time = |input: &str| {
        let mut best = Duration::MAX;
        for _ in 0..2 {
            let start = Instant::now();
            if let Err(why) = check(input) {
                panic!("{}", &why[..why.len().min(2000)]);
            }
            best = best.min(start.elapsed());
        }
        best
    };
    type Make<'a> = &'a dyn Fn(usize) -> String;
    let inputs: [(&str, Make, usize); 3] =
        [("shadowed bindings", &shadowed, 10_000), ("functions", &functions, 3_000), ("parameters", &handles, 3_000)];
    for (what, make, n) in inputs {
        let small = time(&make(n / 4));
        let large = time(&make(n));
        let ratio = large.as_secs_f64() / small.as_secs_f64().max(1e-3);
        assert!(ratio < 10.0, "{what}: {n} took {large:?}, {} took {small:?}: {ratio:.1}x for 4x the input", n / 4);
    }
}

/// An argument that is not UTF-8 (a file name, a flag's value) is an error naming it, exit
/// status 1, on every tool.
#[test]
#[cfg(unix)]
fn non_utf8_arguments_are_named() {
    use std::os::unix::ffi::OsStringExt;
    let bad = std::ffi::OsString::from_vec(b"/tmp/\xff.rlx".to_vec());
    type Main = fn(Vec<std::ffi::OsString>, &mut relax_driver::Io<'_>) -> i32;
    let tools: [(&str, Main); 3] = [
        ("relax-opt", relax_driver::opt_main),
        ("relax-run", relax_driver::run_main),
        ("relax-translate", relax_driver::translate_main),
    ];
    for (tool, main) in tools {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let mut stdin = std::io::empty();
        let mut io = relax_driver::Io { stdin: &mut stdin, stdout: &mut out, stderr: &mut err };
        let code = main(vec![tool.into(), bad.clone()], &mut io);
        let err = String::from_utf8_lossy(&err);
        assert_eq!(code, 1, "{tool}: {err}");
        assert!(err.contains("argument 1 (`/tmp/\u{fffd}.rlx`) is not valid UTF-8"), "{tool}: {err}");
    }
}
