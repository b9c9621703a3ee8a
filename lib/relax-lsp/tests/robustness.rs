//! No input makes the server panic: every request on every sample, and on truncated and
//! mutated copies of them, answers without unwinding (the `catch_unwind` in the server is
//! a last resort, so these tests call the handlers directly, where a panic fails them).

use std::path::{Path, PathBuf};

use relax_lsp::Analysis;

fn samples() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut out = Vec::new();
    let mut stack = vec![root.join("test/Corpus/shared-samples"), root.join("test/Parser"), root.join("test/Verifier")];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for e in entries {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "rlx") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Every request at `positions` offsets spread over the text.
fn exercise(text: &str, positions: usize) {
    let a = Analysis::new(text);
    let _ = relax_lsp::symbols::document_symbols(&a);
    let _ = relax_lsp::format::format(&a);
    let step = a.tokens.len().checked_div(positions).unwrap_or(0).max(1);
    for t in a.tokens.iter().step_by(step) {
        for off in [t.start, (t.start + t.end) / 2, t.end] {
            let _ = relax_lsp::hover::hover(&a, off);
            let _ = relax_lsp::definition::definition(&a, off);
        }
    }
    let _ = a.lines.position(text.len() + 10);
}

#[test]
fn every_request_on_every_sample() {
    let files = samples();
    assert!(files.len() > 50, "{}", files.len());
    for p in files {
        let text = std::fs::read_to_string(&p).unwrap();
        exercise(&text, 20);
    }
}

/// Text printed by TVM (`test/Corpus/tvm-*`), which the lookups were not written against:
/// every eighth file of each release, requests at 20 tokens of each.
#[test]
fn every_request_on_tvm_printed_files() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../test/Corpus");
    let mut n = 0;
    for release in ["tvm-0.25", "tvm-0.27"] {
        let mut files: Vec<PathBuf> =
            std::fs::read_dir(root.join(release)).unwrap().map(|e| e.unwrap().path()).collect();
        files.sort();
        for p in files.iter().filter(|p| p.extension().is_some_and(|e| e == "rlx")).step_by(8) {
            exercise(&std::fs::read_to_string(p).unwrap(), 20);
            n += 1;
        }
    }
    assert!(n > 40, "{n}");
}

#[test]
fn truncated_and_mutated_text() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("tests/data/add.rlx")).unwrap();
    // Every prefix on a char boundary: what an editor sees while the file is typed.
    for cut in (0..=text.len()).filter(|&i| text.is_char_boundary(i)).step_by(3) {
        exercise(&text[..cut], 8);
    }
    // Deterministic single-byte replacements by characters that matter to the front end.
    let mut seed = 0x2545_f491_u64;
    let bytes = text.as_bytes();
    for _ in 0..300 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let at = (seed as usize) % bytes.len();
        let with = b"()[]{}:,.\"'#\n =@x0\\\t"[(seed >> 32) as usize % 20];
        let mut m = bytes.to_vec();
        m[at] = with;
        if let Ok(s) = String::from_utf8(m) {
            exercise(&s, 8);
        }
    }
    // Odd text: non-ASCII, control characters, CRLF, nothing at all.
    for s in
        ["", "\n", "é𝄞\u{0}\r\n@", "x = \"\u{1b}[31m\"\r\n", "@I.ir_module\nclass M:\n\tpass\n", "# -----\n# -----\n"]
    {
        exercise(s, 8);
    }
}
