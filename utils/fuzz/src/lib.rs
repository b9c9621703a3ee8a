//! Shared checks of the relax fuzz targets: what must hold for any input text.
//!
//! [`check_module`] runs the whole front end the way `relax-opt` does (parse, lower,
//! verify, print, render diagnostics) and then re-parses the print: a module that parses
//! and verifies must print text that parses, verifies and prints identically.

use relax_driver::render::render_all;
use relax_driver::source::SourceFile;
use relax_ir::Span;

/// The token-level mutator shared with `lib/relax-driver/tests/robustness.rs`.
#[path = "../../../lib/relax-driver/tests/support/mutate.rs"]
pub mod mutate;

/// Checks every property of the front end on one input; panics on a violation.
pub fn check_module(text: &str) {
    // As in the tools: trees as deep as the parser allows need a large stack.
    relax_driver::on_large_stack(|| check_module_here(text));
}

fn check_module_here(text: &str) {
    let file = SourceFile::new("fuzz.rlx", text);
    match relax_parser::parse_module(text) {
        Err(diags) => {
            assert!(!diags.is_empty(), "parse_module failed without a diagnostic");
            for d in &diags {
                check_span(text, d.span, &d.message);
                for (s, _) in &d.secondary {
                    check_span(text, *s, &d.message);
                }
                assert!(!d.message.is_empty(), "empty message");
            }
            let rendered = render_all(&file, &diags, false);
            assert!(rendered.contains("error: "), "rendering lost the error: {rendered}");
        }
        Ok(m) => {
            let verified = relax_driver::ir_text::verify_diagnostics(&m);
            let first = relax_ir::printer::print_module(&m);
            let diags = match verified {
                Ok(()) => Vec::new(),
                Err(d) => d,
            };
            // Verifier diagnostics point into the input too.
            for d in &diags {
                check_span(text, d.span, &d.message);
            }
            let _ = render_all(&file, &diags, false);
            if !diags.is_empty() {
                return;
            }
            let again = match relax_parser::parse_module(&first) {
                Ok(m2) => m2,
                Err(d) => panic!(
                    "the printed module does not parse: {}\n--- input\n{text}\n--- printed\n{first}",
                    render_all(&SourceFile::new("printed.rlx", first.as_str()), &d, false)
                ),
            };
            if let Err(d) = relax_driver::ir_text::verify_diagnostics(&again) {
                panic!(
                    "the printed module does not verify: {}\n--- input\n{text}\n--- printed\n{first}",
                    render_all(&SourceFile::new("printed.rlx", first.as_str()), &d, false)
                );
            }
            let second = relax_ir::printer::print_module(&again);
            if first != second {
                let line = first.lines().zip(second.lines()).position(|(a, b)| a != b).unwrap_or(0);
                panic!(
                    "printing is not idempotent at line {}:\n  first:  {}\n  second: {}\n--- input\n{text}\n--- printed\n{first}",
                    line + 1,
                    first.lines().nth(line).unwrap_or("<end>"),
                    second.lines().nth(line).unwrap_or("<end>"),
                );
            }
        }
    }
}

fn check_span(text: &str, span: Span, message: &str) {
    if span.is_none() {
        return;
    }
    assert!(span.start <= span.end, "inverted span {span:?} for `{message}`");
    assert!(span.end as usize <= text.len(), "span {span:?} past the end ({}) for `{message}`", text.len());
}
