//! Fuzz target `parse_syntax`: arbitrary bytes, decoded as lossy UTF-8, go through
//! `relax_parser::parse_syntax`. It must never panic, overflow the stack or hang, and its
//! errors must be sorted, in bounds and on character boundaries.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (file, errors) = relax_parser::parse_syntax(&text);
    for pair in errors.windows(2) {
        assert!(pair[0].span <= pair[1].span, "errors out of order");
    }
    for error in &errors {
        assert!(error.span.start <= error.span.end, "inverted span");
        assert!(error.span.end as usize <= text.len(), "span out of bounds");
        assert!(text.is_char_boundary(error.span.start as usize), "span inside a character");
        assert!(!error.message.is_empty(), "empty message");
    }
    assert!(file.is_some() || !errors.is_empty(), "no tree and no error");
});
