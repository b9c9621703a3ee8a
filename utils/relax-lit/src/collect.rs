//! Finding tests: `*.rlx` files under a folder, and ```` ```rlx ```` blocks in Markdown.
//!
//! Folders are walked in sorted order; `Inputs` (data that RUN lines read), `Corpus` (TVM
//! text that `lib/relax-driver/tests/corpus.rs` reads), `Output` (lit's scratch space) and
//! hidden folders are skipped, as in `test/lit.cfg.py`.

use std::path::{Path, PathBuf};

use crate::runner::TestCase;

/// Folder names that never hold tests.
pub const EXCLUDED: [&str; 3] = ["Inputs", "Corpus", "Output"];

/// Every `*.rlx` file under `dir`, sorted, as test cases named relative to `root`.
pub fn test_files(root: &Path, dir: &Path) -> Vec<TestCase> {
    let mut files = Vec::new();
    walk(dir, &mut |p| {
        if p.extension().is_some_and(|e| e == "rlx") {
            files.push(p.to_path_buf());
        }
    });
    files
        .into_iter()
        .map(|path| TestCase { name: display(root, &path), path, line_offset: 0, doc_text: None })
        .collect()
}

/// Every ```` ```rlx ```` block in the Markdown files under `docs`, as a test case whose
/// text is written under `temp_root` when it runs.
pub fn doc_blocks(root: &Path, docs: &Path, temp_root: &Path) -> Vec<TestCase> {
    let mut cases = Vec::new();
    walk(docs, &mut |md| {
        if md.extension().is_none_or(|e| e != "md") {
            return;
        }
        let Ok(text) = std::fs::read_to_string(md) else {
            return;
        };
        let name = display(root, md);
        for (line, block) in blocks(&text) {
            let file = format!("{}-L{line}.rlx", name.replace('/', "_"));
            cases.push(TestCase {
                name: format!("{name}:{line}"),
                path: temp_root.join("docs").join(file),
                line_offset: line - 1,
                doc_text: Some(block),
            });
        }
    });
    cases
}

/// `(first line, text)` of each ```` ```rlx ```` fenced block.
pub fn blocks(markdown: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut current: Option<(usize, String)> = None;
    for (idx, line) in markdown.lines().enumerate() {
        let fence = line.trim_start();
        match &mut current {
            None if fence.strip_prefix("```").is_some_and(|info| info.trim() == "rlx") => {
                current = Some((idx + 2, String::new()));
            }
            Some(_) if fence.starts_with("```") => out.extend(current.take()),
            Some((_, text)) => {
                text.push_str(line);
                text.push('\n');
            }
            None => {}
        }
    }
    out
}

fn display(root: &Path, path: &Path) -> String {
    path.strip_prefix(root).unwrap_or(path).display().to_string()
}

fn walk(dir: &Path, f: &mut dyn FnMut(&Path)) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for p in paths {
        let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if p.is_dir() {
            if !name.starts_with('.') && !EXCLUDED.contains(&name.as_str()) {
                walk(&p, f);
            }
        } else {
            f(&p);
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn markdown_blocks() {
        let md = "text\n```rlx\n# RUN: true\nx\n```\n```text\nno\n```\n";
        assert_eq!(super::blocks(md), [(3, "# RUN: true\nx\n".to_string())]);
    }
}
