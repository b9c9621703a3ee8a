//! EXACT mode: golden output written as FileCheck lines that both engines read alike.
//!
//! A FileCheck run whose only prefix is `EXACT` must also pass `--match-full-lines
//! --strict-whitespace`, so that real FileCheck-19 compares whole lines, indentation
//! included. Under those two flags FileCheck keeps everything after the colon, so the text
//! starts right after it: `# EXACT:def main():`, then `# EXACT-NEXT:    return x` per line
//! and `# EXACT-EMPTY:` for an empty line. The block must match a contiguous run of output
//! lines (FileCheck's own semantics; output before or after the run is not checked).
//!
//! On a mismatch the front appends a `similar` unified diff of the block against the
//! output. With `RELAX_TEST_BLESS=1` it instead rewrites the block in place with the actual
//! output (all of it, minus leading and trailing empty lines) and reports the file as
//! blessed; a file without EXACT lines gets a new block after its last `RUN:` line.

use std::path::Path;

use crate::filecheck::{Check, Kind, Options, Source, canonicalize, parse_options, scan};

/// The prefix that selects EXACT mode.
pub const PREFIX: &str = "EXACT";

/// Words lit treats as directives anywhere in a line; blessed lines must not contain them.
const LIT_KEYWORDS: [(&str, &str); 8] = [
    ("RUN:", "RUN{{:}}"),
    ("REQUIRES:", "REQUIRES{{:}}"),
    ("UNSUPPORTED:", "UNSUPPORTED{{:}}"),
    ("XFAIL:", "XFAIL{{:}}"),
    ("REDEFINE:", "REDEFINE{{:}}"),
    ("DEFINE:", "DEFINE{{:}}"),
    ("ALLOW_RETRIES:", "ALLOW_RETRIES{{:}}"),
    ("END.", "END{{[.]}}"),
];

/// Whether this FileCheck run is in EXACT mode.
pub fn is_exact(opts: &Options) -> bool {
    opts.prefixes.iter().any(|p| p == PREFIX)
}

/// EXACT needs the flags that make FileCheck-19 compare whole lines verbatim.
pub fn validate_options(opts: &Options) -> Result<(), String> {
    if !is_exact(opts) {
        return Ok(());
    }
    if opts.prefixes.len() != 1 {
        return Err("the EXACT prefix cannot be combined with other check prefixes".into());
    }
    if !(opts.match_full_lines && opts.strict_whitespace) {
        return Err("the EXACT prefix needs --match-full-lines --strict-whitespace, \
                    so that FileCheck-19 compares lines the same way"
            .into());
    }
    if !opts.implicit_check_not.is_empty() {
        return Err("the EXACT prefix cannot be combined with --implicit-check-not".into());
    }
    Ok(())
}

/// EXACT blocks hold only `EXACT:`, `EXACT-NEXT:` and `EXACT-EMPTY:` lines.
pub fn validate_checks(opts: &Options, checks: &[Check]) -> Result<(), (usize, String)> {
    if !is_exact(opts) {
        return Ok(());
    }
    for c in checks {
        let bad = c.dag_nots.first().unwrap_or(&c.pattern);
        let ok = c.dag_nots.is_empty()
            && c.pattern.count == 1
            && matches!(c.pattern.kind, Kind::Plain | Kind::Next | Kind::Empty | Kind::Eof);
        if !ok {
            let msg = "an EXACT block holds only EXACT:, EXACT-NEXT: and EXACT-EMPTY: lines";
            return Err((bad.prefix_offset, msg.into()));
        }
    }
    Ok(())
}

/// Splits output into lines, without line ends.
fn lines(text: &str) -> Vec<&str> {
    let mut v: Vec<&str> = text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l)).collect();
    if v.last() == Some(&"") {
        v.pop();
    }
    v
}

/// A unified diff of the EXACT lines against `actual`. Each block is lined up where
/// FileCheck would start it, and a pattern line that matches its output line (regexes and
/// variables included) is shown as that line, so only real differences stand out.
pub fn diff(checks: &[Check], actual: &str) -> String {
    let actual_text = canonicalize(actual, true);
    let got = lines(&actual_text);
    let mut expected: Vec<String> = Vec::new();
    let mut at = 0;
    for c in checks.iter().filter(|c| c.pattern.kind != Kind::Eof) {
        if c.pattern.kind == Kind::Plain {
            at = (at..got.len()).find(|&i| c.pattern.loosely_matches_line(got[i])).unwrap_or(got.len());
        }
        let shown = match got.get(at) {
            Some(line) if c.pattern.loosely_matches_line(line) => line.to_string(),
            _ => c.pattern.text.clone(),
        };
        expected.push(shown);
        at += 1;
    }
    let old = expected.iter().map(|l| format!("{l}\n")).collect::<String>();
    let new = got.iter().map(|l| format!("{l}\n")).collect::<String>();
    let diff = similar::TextDiff::from_lines(&old, &new);
    let body = diff.unified_diff().context_radius(3).header("EXACT block", "actual output").to_string();
    format!("EXACT block differs from the output (-expected +actual):\n{body}")
}

/// Rewrites the EXACT block of the check file at `path` to hold `actual`.
pub fn bless(path: &Path, actual: &str) -> Result<(), String> {
    let raw = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let text = canonicalize(&raw, true);
    let mut file_lines: Vec<String> = text.split_inclusive('\n').map(str::to_string).collect();
    let name = path.display().to_string();
    let src = Source::new(&name, &text);
    let args: Vec<String> = [&name, "--check-prefix=EXACT", "--match-full-lines", "--strict-whitespace"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let opts = parse_options(&args)?;
    let checks = match scan(&src, &opts) {
        Ok(c) => c,
        Err((usize::MAX, _)) => Vec::new(),
        Err((off, msg)) => return Err(format!("line {}: {msg}", src.line_col(off).0)),
    };
    let exact_lines: Vec<usize> = checks
        .iter()
        .filter(|c| c.pattern.kind != Kind::Eof)
        .map(|c| src.line_col(c.pattern.prefix_offset).0)
        .collect();
    let (start, end, lead) = match (exact_lines.first(), exact_lines.last()) {
        (Some(&first), Some(&last)) => {
            if last - first + 1 != exact_lines.len() {
                return Err("the EXACT lines are not one contiguous block".into());
            }
            let off = checks[0].pattern.prefix_offset;
            let (_, col) = src.line_col(off);
            (first - 1, last, text[off + 1 - col..off].to_string())
        }
        _ => {
            let after = file_lines.iter().rposition(|l| l.contains("RUN:")).map_or(0, |i| i + 1);
            (after, after, "# ".to_string())
        }
    };
    let block = render_block(actual, &lead, path)?;
    if end > 0 && !file_lines[end - 1].ends_with('\n') {
        file_lines[end - 1].push('\n');
    }
    file_lines.splice(start..end, block.into_iter().map(|l| l + "\n"));
    let tmp = path.with_extension("bless.tmp");
    std::fs::write(&tmp, file_lines.concat()).map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, path).map_err(|e| format!("cannot replace {}: {e}", path.display()))
}

/// The EXACT lines that describe `actual`, each starting with `lead` (such as `# `).
pub fn render_block(actual: &str, lead: &str, test_path: &Path) -> Result<Vec<String>, String> {
    let all = lines(actual);
    let first = all.iter().position(|l| !l.is_empty());
    let last = all.iter().rposition(|l| !l.is_empty());
    let (Some(first), Some(last)) = (first, last) else {
        return Err("the output is empty; there is nothing to bless".into());
    };
    let path = test_path.display().to_string();
    let file_name = test_path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    Ok(all[first..=last]
        .iter()
        .enumerate()
        .map(|(i, line)| {
            let text = escape_line(line, &path, &file_name);
            match (i, line.is_empty()) {
                (0, _) => format!("{lead}{PREFIX}:{text}"),
                (_, true) => format!("{lead}{PREFIX}-EMPTY:"),
                _ => format!("{lead}{PREFIX}-NEXT:{text}"),
            }
        })
        .collect())
}

/// Makes an output line safe as FileCheck pattern text: `{{` and `[[` become regexes, the
/// test's own path becomes `{{.*}}name.rlx`, and lit keywords are broken up.
pub fn escape_line(line: &str, test_path: &str, file_name: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("{{") {
            out.push_str("{{[{][{]}}");
            rest = r;
        } else if let Some(r) = rest.strip_prefix("[[") {
            out.push_str(r"{{\[\[}}");
            rest = r;
        } else {
            let c = rest.chars().next().unwrap_or_default();
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    if !test_path.is_empty() {
        out = out.replace(test_path, &format!("{{{{.*}}}}{file_name}"));
    }
    for (word, safe) in LIT_KEYWORDS {
        out = out.replace(word, safe);
    }
    out
}
