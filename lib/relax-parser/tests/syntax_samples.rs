//! Every section of every sample under `shared/samples` (and the copies in `tests/data`)
//! parses with no error.

use std::path::{Path, PathBuf};

use relax_parser::parse_syntax;

/// Cuts a transcript at its marker lines (`=== `, `######## `, `prim funcs:`,
/// `out shapes:`); a plain file is one section. Each section keeps its offset in the file.
fn sections(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut first_line = 1;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        let marker = ["=== ", "######## ", "prim funcs:", "out shapes:"].iter().any(|m| line.starts_with(m));
        if marker {
            if !current.trim().is_empty() {
                out.push((first_line, std::mem::take(&mut current)));
            }
            current.clear();
            first_line = i + 2;
        } else {
            current.push_str(line);
        }
    }
    if !current.trim().is_empty() {
        out.push((first_line, current));
    }
    out
}

fn rlx_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rlx_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rlx") {
            out.push(path);
        }
    }
}

/// Parses every section of every `.rlx` file under `dir`; returns the number of sections.
fn check_dir(dir: &Path) -> usize {
    let mut files = Vec::new();
    rlx_files(dir, &mut files);
    let mut failures = Vec::new();
    let mut count = 0;
    for path in &files {
        let text = std::fs::read_to_string(path).expect("sample is UTF-8");
        for (line, section) in sections(&text) {
            count += 1;
            let (file, errors) = parse_syntax(&section);
            match file {
                Some(file) if errors.is_empty() => {
                    assert!(!file.body.is_empty(), "{}", path.display());
                    continue;
                }
                _ => {}
            }
            let first = errors.first().map(|e| {
                let before = &section[..e.span.start as usize];
                let l = before.matches('\n').count() + line;
                format!("line {l}: {}", e.message)
            });
            failures.push(format!(
                "{} (section at line {line}): {} errors, first: {first:?}",
                path.display(),
                errors.len()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    count
}

#[test]
fn shared_samples_parse() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../test/Corpus/shared-samples");
    if !dir.is_dir() {
        eprintln!("note: {} not found; skipping the shared samples", dir.display());
        return;
    }
    let count = check_dir(&dir);
    assert!(count > 50, "only {count} sections found");
}

#[test]
fn local_samples_parse() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let count = check_dir(&dir);
    assert!(count >= 3, "only {count} sections found");
}

#[test]
fn transcript_sections_are_cut() {
    let text = "=== A\nx = 1\n=== B\ny = 2\nprim funcs: ['a']\nout shapes: [(1,)]\n";
    let s = sections(text);
    assert_eq!(s, vec![(2, "x = 1\n".to_string()), (4, "y = 2\n".to_string())]);
}
