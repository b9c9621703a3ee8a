//! Formatting: the canonical printer's text as one whole-document edit.
//!
//! The printer writes TVM's text and knows nothing of comments except the ones it prints
//! itself (the `# from tvm.script import ...` header, `# with T.sblock("root"):`, the
//! metadata lines). Formatting keeps the document's leading comment block (a test file's
//! `# RUN:` and `# CHECK:` lines) in front of the printed module and refuses, rather than
//! silently dropping them, when other comments would be lost. It also refuses a document
//! that does not parse, one split by `# -----` markers, and (a printer bug) printed text
//! that would not parse again.

use relax_ir::printer::print_module;

use crate::analysis::Analysis;

/// The formatted text of the analysed document, or why it cannot be formatted.
pub fn format(a: &Analysis) -> Result<String, String> {
    if a.units.len() > 1 {
        return Err("cannot format a document split by `# -----` markers".to_string());
    }
    let Some(m) = a.units.first().and_then(|u| u.module.as_ref()) else {
        let first = a.diagnostics.first().map_or(String::new(), |d| format!(": {}", d.message));
        return Err(format!("cannot format a document with errors{first}"));
    };
    let printed = print_module(m);
    if let Err(d) = relax_parser::parse_module(&printed) {
        let first = d.first().map_or(String::new(), |x| x.message.clone());
        return Err(format!("the printed module does not parse again: {first}"));
    }
    let text = a.text();
    let leading_end = leading_block_end(text);
    let printed_comments: Vec<&str> = comments(&printed).into_iter().map(|(_, c)| c.trim_end()).collect();
    let lost: Vec<usize> = comments(text)
        .into_iter()
        .filter(|&(at, c)| at >= leading_end && !printed_comments.contains(&c.trim_end()))
        .map(|(at, _)| at)
        .collect();
    if let Some(&first) = lost.first() {
        let line = a.lines.position(first).line + 1;
        let n = lost.len();
        let s = if n == 1 { "" } else { "s" };
        return Err(format!(
            "formatting would drop {n} comment{s} (the first on line {line}); only the leading comment block is kept"
        ));
    }
    let mut out = String::new();
    let kept: Vec<&str> = text[..leading_end].lines().filter(|l| !is_header_line(l)).collect();
    let kept = trim_blank_lines(&kept);
    if !kept.is_empty() {
        for l in kept {
            out.push_str(l.trim_end());
            out.push('\n');
        }
        out.push('\n');
    }
    out.push_str(&printed);
    Ok(out)
}

/// True for a `# from ... import ...` line, which the printer writes itself.
fn is_header_line(l: &str) -> bool {
    let l = l.trim_end();
    l.starts_with("# from ") && l.contains(" import ")
}

fn trim_blank_lines<'s>(lines: &[&'s str]) -> Vec<&'s str> {
    let first = lines.iter().position(|l| !l.trim().is_empty()).unwrap_or(lines.len());
    let last = lines.iter().rposition(|l| !l.trim().is_empty()).map_or(first, |i| i + 1);
    lines[first..last.max(first)].to_vec()
}

/// The end of the leading block of comment and blank lines (a byte offset at a line start).
fn leading_block_end(text: &str) -> usize {
    let mut pos = 0;
    for line in text.split_inclusive('\n') {
        let t = line.trim();
        if !t.is_empty() && !t.starts_with('#') {
            break;
        }
        pos += line.len();
    }
    pos
}

/// Every comment of a text: its offset and its text from `#` to the end of the line.
/// Comments are the `#`s outside tokens.
pub fn comments(text: &str) -> Vec<(usize, &str)> {
    if u32::try_from(text.len()).is_err() {
        return Vec::new();
    }
    let tokens = relax_parser::lexer::lex(text).tokens;
    let mut gaps = Vec::new();
    let mut prev = 0usize;
    for &(s, _, e) in &tokens {
        gaps.push((prev, s as usize));
        prev = e as usize;
    }
    gaps.push((prev, text.len()));
    let mut out = Vec::new();
    for (s, e) in gaps {
        let mut i = s;
        while i < e {
            let rest = &text[i..e];
            let Some(h) = rest.find('#') else { break };
            let at = i + h;
            let end = text[at..].find('\n').map_or(text.len(), |n| at + n);
            out.push((at, text[at..end].trim_end_matches('\r')));
            i = end.max(at + 1);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_outside_strings() {
        let c = comments("x = \"#no\"  # yes\n# two\n");
        let texts: Vec<&str> = c.iter().map(|(_, t)| *t).collect();
        assert_eq!(texts, ["# yes", "# two"]);
    }

    #[test]
    fn keeps_the_leading_block_and_refuses_to_drop_comments() {
        let src = "# RUN: relax-opt %s\n\n# from tvm.script import relax as R\n@R.function\ndef f(x: R.Tensor((4,), dtype=\"float32\")):\n  return x\n";
        let out = format(&Analysis::new(src)).unwrap();
        assert!(out.starts_with("# RUN: relax-opt %s\n\n# from tvm.script import relax as R\n"), "{out}");
        let lost = format!("{src}# trailing\n");
        let err = format(&Analysis::new(&lost)).unwrap_err();
        assert!(err.contains("drop 1 comment (the first on line 7)"), "{err}");
    }
}
