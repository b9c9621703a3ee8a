//! Error messages and spans, recovery, and robustness on hostile input.

use std::time::{Duration, Instant};

use relax_parser::ast::Span;
use relax_parser::parse_syntax;
use relax_parser::syntax::MAX_ERRORS;

/// The errors for `src` as `(message, start, end)`.
fn errors(src: &str) -> Vec<(String, u32, u32)> {
    parse_syntax(src).1.into_iter().map(|e| (e.message, e.span.start, e.span.end)).collect()
}

/// Asserts that `src` gives exactly one error, with this message, at the first occurrence
/// of `at` in `src` (or at the end of the file when `at` is empty).
#[track_caller]
fn one_error(src: &str, message: &str, at: &str) {
    let start = if at.is_empty() { src.len() } else { src.find(at).expect("`at` occurs in `src`") } as u32;
    let want = vec![(message.to_string(), start, start + at.len() as u32)];
    assert_eq!(errors(src), want, "{src:?}");
}

#[test]
fn expected_found_messages() {
    one_error("x = (a, b]\n", "expected `)`, found `]`", "]");
    one_error("T.func_attr({\"a\": 1)\n", "expected `}`, found `)`", ")");
    one_error("x = \ny = 1\n", "expected an expression, found newline", "\n");
    one_error("x = 1 +* 2\n", "expected an expression, found `*`", "*");
    one_error("def (x):\n    pass\n", "expected an identifier, found `(`", "(");
    one_error("if x\n    y = 1\n", "expected `:`, found newline", "\n");
    one_error("x = a if b c\n", "expected `else`, found `c`", "c");
    one_error("x = {1: 2, 3}\n", "expected `:`, found `}`", "}");
    one_error("for x y in z:\n    pass\n", "expected `in` or `,`, found `y`", "y");
    one_error("x = 1 y\n", "expected newline or `,`, found `y`", "y");
    one_error("f(a b)\n", "expected one of `)`, `=`, or `,`, found `b`", "b");
    one_error("@R.function\nx = 1\n", "expected one of `def`, `class`, or `@`, found `x`", "x");
    one_error("x = lambda 1: 2\n", "expected an identifier or `:`, found `1`", "1");
    one_error("else:\n    pass\n", "expected a statement, found `else`", "else");
}

#[test]
fn spans_of_repeated_tokens() {
    // `one_error` points at the first occurrence; these need explicit offsets.
    assert_eq!(errors("x = [1, 2,, 3]\n"), vec![("expected an expression or `]`, found `,`".into(), 10, 11)]);
    assert_eq!(errors("return return\n"), vec![("expected an expression or newline, found `return`".into(), 7, 13)]);
}

#[test]
fn end_of_file_messages() {
    one_error("def f():\n", "expected an indented block, found end of file", "");
    one_error("class A:\n    def f():\n", "expected an indented block, found end of file", "");
    one_error("@R.function\n", "expected one of `def`, `class`, or `@`, found end of file", "");
    one_error("x = 1 +", "expected an expression, found end of file", "");
    one_error("def f():\nx = 1\n", "expected an indented block, found `x`", "x");
}

#[test]
fn layout_messages() {
    one_error("x = 1\n    y = 2\n", "unexpected indent", "    ");
    one_error("if a:\n\tb\n", "tab character in indentation", "\t");
    one_error("x = f(a, (b)\n\ny = 2\n", "unclosed `(`", "(");
    one_error("x = [\n", "unclosed `[`", "[");
    one_error("x = 1)\n", "unmatched `)`", ")");
    // The span is the indentation.
    assert_eq!(
        errors("if a:\n    b\n  c\n"),
        vec![("unindent does not match any outer indentation level".into(), 12, 14)]
    );
}

#[test]
fn lexical_messages() {
    one_error("x = \u{1b}\n", "invalid character `\\u{1b}`", "\u{1b}");
    one_error("x = 1 $ 2\n", "invalid character `$`", "$");
    one_error("x = \"abc\ny = 2\n", "unterminated string", "\"abc");
    one_error("x = 'abc", "unterminated string", "'abc");
    one_error("x = \"\"\"abc\n\n", "unterminated string", "\"\"\"");
    one_error(
        "x = 1234567890123456789012345678901234567890\n",
        "integer literal too large",
        "1234567890123456789012345678901234567890",
    );
    one_error("x = \"\\x4\"\n", "truncated `\\xXX` escape", "\\x4");
}

#[test]
fn semantic_checks_in_actions() {
    one_error("f(x) = 1\n", "cannot assign to a call", "f(x)");
    one_error("a, 1 = x\n", "cannot assign to an integer", "1");
    one_error("for f(x) in y:\n    pass\n", "cannot assign to a call", "f(x)");
    one_error("(a, b): T = 1\n", "annotated assignment target must be a name, attribute or subscript", "(a, b)");
    one_error("f(a=1, b)\n", "positional argument follows keyword argument", "b");
    assert_eq!(errors("f(a=1, a=2)\n"), vec![("keyword argument repeated: `a`".into(), 7, 8)]);
}

#[test]
fn several_errors_in_one_file() {
    let src = "x = 1\ny = = 2\nz = 3\nw = (4 5)\nv = 6\n";
    let (file, errs) = parse_syntax(src);
    let got: Vec<_> = errs.iter().map(|e| (e.message.as_str(), e.span)).collect();
    assert_eq!(
        got,
        vec![
            ("expected an expression, found `=`", Span::new(10, 11)),
            ("expected `)` or `,`, found `5`", Span::new(27, 28)),
        ]
    );
    // The good statements are in the partial tree.
    assert_eq!(file.unwrap().body.len(), 3);

    // Errors inside and after a block, and a bad header whose block is skipped whole.
    let src = "def f():\n    a = )\n    b = 1\ndef g(x y):\n    c = (\n\nd = 1 +\n";
    let got: Vec<_> = errors(src).into_iter().map(|e| e.0).collect();
    assert_eq!(got, vec!["unmatched `)`", "expected one of `)`, `:`, `=`, or `,`, found `y`", "unclosed `(`",]);
    let src = "def f(x y):\n    c = 1\nd = 1 +\ne = 2\n";
    let got: Vec<_> = errors(src).into_iter().map(|e| e.0).collect();
    assert_eq!(got, vec!["expected one of `)`, `:`, `=`, or `,`, found `y`", "expected an expression, found newline",]);
}

#[test]
fn one_error_per_line_after_lexical_errors() {
    // The invalid character is dropped; the parse error it causes on its line is not
    // reported, but an independent one on another line is.
    let src = "x = 5 \u{e9} y\nz = = 1\n";
    let got: Vec<_> = errors(src).into_iter().map(|e| e.0).collect();
    assert_eq!(got, vec!["invalid character `\u{e9}`", "expected an expression, found `=`"]);
}

#[test]
fn error_count_is_capped() {
    let src = "x = = 1\n".repeat(10_000);
    let (_, errs) = parse_syntax(&src);
    assert_eq!(errs.len(), MAX_ERRORS);
    let src = ")".repeat(100_000);
    assert_eq!(parse_syntax(&src).1.len(), MAX_ERRORS);
}

/// Runs `f` on a thread with the default 2 MiB test stack.
fn on_small_stack(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new().stack_size(2 << 20).spawn(f).unwrap().join().unwrap();
}

#[test]
fn deep_nesting_gives_one_diagnostic() {
    on_small_stack(|| {
        let src = format!("x = {}1{}\n", "(".repeat(10_000), ")".repeat(10_000));
        let (file, errs) = parse_syntax(&src);
        assert!(file.is_none());
        assert_eq!(
            errs.iter().map(|e| (e.message.as_str(), e.span)).collect::<Vec<_>>(),
            vec![("nesting too deep (more than 1000 levels)", Span::new(1004, 1005))]
        );
        for src in [
            format!("x = {}1\n", "-".repeat(100_000)),
            format!("x = {}1\n", "not ".repeat(100_000)),
            format!("x = {}1\n", "[".repeat(10_000)),
            format!("x = {}\n", "{a: ".repeat(10_000)),
            format!("x = a{}\n", " + a".repeat(100_000)),
            format!("x = a{}\n", " ** a".repeat(100_000)),
            format!("x = a{}\n", " if a else a".repeat(100_000)),
            format!("x = a{}\n", ".b".repeat(100_000)),
            format!("x = f{}\n", "(a)".repeat(100_000)),
            format!("x = a{}\n", "[0]".repeat(100_000)),
            format!("x = a{}\n", " < a".repeat(100_000)),
            "(".repeat(1_000_000),
        ] {
            let (file, errs) = parse_syntax(&src);
            assert!(file.is_none(), "{}", &src[..20]);
            assert_eq!(errs.len(), 1, "{}", &src[..20]);
            assert_eq!(errs[0].message, "nesting too deep (more than 1000 levels)");
        }
        let mut blocks = String::new();
        for depth in 0..10_000 {
            blocks.push_str(&" ".repeat(depth % 1000));
            blocks.push_str("if a:\n");
        }
        let (file, errs) = parse_syntax(&blocks);
        assert!(file.is_none());
        assert_eq!(errs[0].message, "too many levels of indentation (more than 100)");
        let elifs = format!("if a:\n    x\n{}", "elif b:\n    y\n".repeat(100_000));
        let (file, errs) = parse_syntax(&elifs);
        assert!(file.is_none());
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].message, "too many nested blocks (more than 200)");
        // Just inside the limits, the tree is built and dropped on the small stack.
        let src = format!("x = {}1{}\n", "(".repeat(200), ")".repeat(200));
        assert!(parse_syntax(&src).0.is_some());
        let src = format!("x = {}1\n", "-".repeat(199));
        assert!(parse_syntax(&src).0.is_some());
        let src = format!("x = a{}\n", " + a".repeat(199));
        assert!(parse_syntax(&src).0.is_some());
        let mut blocks = String::new();
        for depth in 0..100 {
            blocks.push_str(&" ".repeat(depth));
            blocks.push_str("if a:\n");
        }
        blocks.push_str(&" ".repeat(100));
        blocks.push_str("x = [(((1)))]\n");
        let (file, errs) = parse_syntax(&blocks);
        assert!(errs.is_empty(), "{errs:?}");
        assert!(file.is_some());
        // About the deepest tree the limits allow: 100 blocks, with an `elif` chain at the
        // innermost but one (199 nested blocks in all), then an
        // expression near the nesting limit inside calls. Walking it recursively
        // (Debug, Clone, PartialEq, Drop) fits in the small stack.
        let mut deep = String::new();
        for depth in 0..99 {
            deep.push_str(&" ".repeat(depth));
            deep.push_str("if a:\n");
        }
        let pad = " ".repeat(99);
        deep.push_str(&format!("{pad}if c:\n{pad} x\n"));
        for _ in 0..99 {
            deep.push_str(&format!("{pad}elif b:\n{pad} x\n"));
        }
        let operand = format!("{}a{}", "-".repeat(60), " + a".repeat(60));
        let nested = format!("{}{operand}{}", "f(".repeat(40), ")".repeat(40));
        deep.push_str(&format!("{pad} y = {nested}\n"));
        let (file, errs) = parse_syntax(&deep);
        assert!(errs.is_empty(), "{errs:?}");
        let file = file.unwrap();
        assert!(format!("{file:?}").len() > 1000);
        let copy = file.clone();
        assert_eq!(copy, file);
    });
}

/// Parses `src` and checks it finishes in reasonable time (a generous bound, to catch
/// quadratic behaviour rather than to benchmark; debug builds are slow).
#[track_caller]
fn parse_quickly(src: &str) -> (bool, usize) {
    let start = Instant::now();
    let (file, errs) = parse_syntax(src);
    let took = start.elapsed();
    assert!(took < Duration::from_secs(10), "took {took:?}");
    (file.is_some(), errs.len())
}

#[test]
fn hostile_inputs_do_not_panic() {
    on_small_stack(|| {
        // Empty and blank files are valid.
        assert_eq!(parse_quickly(""), (true, 0));
        assert_eq!(parse_quickly("\n\n   \n# c\n"), (true, 0));
        // NUL bytes, escape sequences, control characters.
        assert!(parse_quickly("x = 1\0\0\ndef\0f():\n").1 > 0);
        assert!(parse_quickly("\u{1b}[31mred\u{1b}[0m\n").1 > 0);
        // Non-ASCII outside strings and comments; fine inside.
        assert!(parse_quickly("λ = 1\n").1 > 0);
        assert_eq!(parse_quickly("x = \"λ\"  # λ\n"), (true, 0));
        // CRLF and lone CR.
        assert_eq!(parse_quickly("if a:\r\n    b\r\n"), (true, 0));
        parse_quickly("a\rb\r");
        // Binary garbage (deterministic).
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let garbage: Vec<u8> = (0..200_000)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state as u8
            })
            .collect();
        parse_quickly(&String::from_utf8_lossy(&garbage));
        // A 5 MB line: one long name, one long string, one long comment.
        assert_eq!(parse_quickly(&"x".repeat(5 << 20)), (true, 0));
        assert_eq!(parse_quickly(&format!("x = \"{}\"\n", "a".repeat(5 << 20))), (true, 0));
        assert_eq!(parse_quickly(&format!("# {}\n", "a".repeat(5 << 20))), (true, 0));
        // A long line of many tokens, and many lines.
        assert_eq!(parse_quickly(&format!("x = [{}]\n", "a + 1, ".repeat(50_000))), (true, 0));
        assert_eq!(parse_quickly(&"x = f(a, b=1)\n".repeat(20_000)), (true, 0));
        assert_eq!(parse_quickly(&"@a\n".repeat(100_000)).1, 1);
        parse_quickly(&")]}".repeat(100_000));
        parse_quickly(&"\"".repeat(100_001));
        parse_quickly(&"'''".repeat(100_001));
        parse_quickly(&"\\".repeat(100_001));
        parse_quickly(&" \t".repeat(100_000));
        parse_quickly(&"if a:\n".repeat(100_000));
        parse_quickly(&"x\n  y\n".repeat(100_000));
    });
}

#[test]
fn truncated_files_do_not_panic() {
    let src = include_str!("data/027_04_gpu_scheduled_rms_norm.rlx");
    let mut cuts = 0;
    for (i, _) in src.char_indices().step_by(7) {
        let (_, errs) = parse_syntax(&src[..i]);
        // A truncated file is either still valid (cut at a line end) or reports errors.
        let _ = errs;
        cuts += 1;
    }
    assert!(cuts > 100);
    // Mid-string, mid-call, mid-indent.
    assert!(!errors("x = R.add(a, \"ab").is_empty());
    assert!(!errors("x = R.add(a, b").is_empty());
    assert!(!errors("def f():\n    x = 1\n    if a:\n").is_empty());
    assert!(errors("def f():\n    x = 1\n  ").is_empty());
}
