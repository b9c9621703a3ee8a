//! Helpers shared by the `lower_tir*` tests: sample discovery, transcript cutting, and
//! extraction of the PrimFuncs of a section into a module of their own.

#![allow(dead_code, reason = "each test file uses a different subset")]

use std::path::{Path, PathBuf};

use relax_parser::ast::{ExprKind, StmtKind};
use relax_parser::parse_syntax;

/// The shared samples folder, if present.
pub fn samples_dir() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../test/Corpus/shared-samples");
    if dir.is_dir() { Some(dir) } else { None }
}

/// The crate's own test data folder.
pub fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

/// Every `.rlx` file under `dir`, sorted.
pub fn rlx_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    collect(dir, &mut out);
    out
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            collect(&path, out);
        } else if path.extension().is_some_and(|e| e == "rlx") {
            out.push(path);
        }
    }
}

/// Cuts a transcript at its marker lines (`=== `, `######## `, `prim funcs:`,
/// `out shapes:`); a plain file is one section. Each section keeps its first line number.
pub fn sections(text: &str) -> Vec<(usize, String)> {
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

/// One PrimFunc of a section: its name and its text (decorators included, indented as a
/// class member).
pub struct PrimFuncText {
    /// The function name.
    pub name: String,
    /// Byte range of the definition in the section.
    pub range: std::ops::Range<usize>,
    /// The text, indented by 4.
    pub text: String,
}

/// The PrimFuncs of a section, in order.
pub fn prim_funcs(section: &str) -> Vec<PrimFuncText> {
    let (file, errors) = parse_syntax(section);
    assert!(errors.is_empty(), "syntax errors: {errors:?}");
    let file = file.expect("a syntax tree");
    let mut members: Vec<&relax_parser::ast::Stmt> = Vec::new();
    for s in &file.body {
        match &s.kind {
            StmtKind::ClassDef(c) => members.extend(c.body.iter()),
            StmtKind::FunctionDef(_) => members.push(s),
            _ => {}
        }
    }
    let mut out = Vec::new();
    for s in members {
        let StmtKind::FunctionDef(f) = &s.kind else { continue };
        let prim = f.decorators.iter().any(|d| {
            let target = d.as_call().map_or(d, |c| &c.func);
            target.is_dotted("T.prim_func")
        });
        if !prim {
            continue;
        }
        let start = section[..s.span.start as usize].rfind('\n').map_or(0, |i| i + 1);
        let end = s.span.end as usize;
        let raw = &section[start..end];
        let column = s.span.start as usize - start;
        let text = if column == 0 {
            raw.lines()
                .map(|l| if l.is_empty() { String::new() } else { format!("    {l}") })
                .collect::<Vec<_>>()
                .join("\n")
        } else {
            raw.to_string()
        };
        out.push(PrimFuncText { name: f.name.name.clone(), range: s.span.start as usize..end, text });
    }
    out
}

/// The header comments and module-level `TypeVar` lines of a section.
pub fn preamble(section: &str) -> String {
    let (file, _) = parse_syntax(section);
    let mut out = String::new();
    for line in section.lines() {
        if line.starts_with("# from") {
            out.push_str(line);
            out.push('\n');
        }
    }
    out.push('\n');
    if let Some(file) = file {
        for s in &file.body {
            if let StmtKind::Assign { value, .. } = &s.kind
                && let ExprKind::Call(c) = &value.kind
                && c.func.is_dotted("TypeVar")
            {
                out.push_str(&section[s.span.start as usize..s.span.end as usize]);
                out.push('\n');
            }
        }
    }
    out
}

/// A module made of the given PrimFuncs only.
pub fn prim_module(preamble: &str, funcs: &[&PrimFuncText]) -> String {
    let mut out = String::from(preamble);
    out.push_str("@I.ir_module\nclass Module:\n");
    let bodies: Vec<&str> = funcs.iter().map(|f| f.text.as_str()).collect();
    out.push_str(&bodies.join("\n\n"));
    out.push('\n');
    out
}

/// Renders diagnostics with line numbers.
pub fn render(src: &str, diags: &[relax_ir::Diagnostic]) -> String {
    diags
        .iter()
        .map(|d| {
            let start = (d.span.start as usize).min(src.len());
            let line = src[..start].matches('\n').count() + 1;
            let col = start - src[..start].rfind('\n').map_or(0, |i| i + 1) + 1;
            format!("{line}:{col}: {}", d.message)
        })
        .collect::<Vec<_>>()
        .join("\n")
}
