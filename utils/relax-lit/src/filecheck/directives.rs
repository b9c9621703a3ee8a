//! Reading directives out of a check file, as FileCheck's `readCheckFile` does.
//!
//! Prefixes are found anywhere in the text (not only in comments), must not follow a word
//! character, and a comment prefix (`COM:`, `RUN:`) hides the rest of its line. Each
//! positive directive collects the `-DAG`/`-NOT` directives written before it; trailing ones
//! hang off an implicit end-of-input check.

use std::collections::HashSet;

use super::diag::Source;
use super::options::Options;
use super::pattern::{Kind, ParseMode, Pattern};

/// A positive directive with the `-DAG`/`-NOT` directives that precede it.
#[derive(Debug, Clone)]
pub struct Check {
    /// The directive itself (`Plain`, `Next`, `Same`, `Label`, `Empty` or `Eof`).
    pub pattern: Pattern,
    /// `-DAG` and `-NOT` patterns to satisfy before it, in order.
    pub dag_nots: Vec<Pattern>,
}

/// A check-file error: byte offset and message.
pub type ScanError = (usize, String);

/// What follows a prefix.
enum Found {
    None,
    Comment(usize),
    Directive { kind: Kind, count: usize, literal: bool, after: usize },
    Misspelled(usize),
    BadNot(usize),
    BadCount(usize),
}

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-' || b == b'_'
}

/// Parses the check file `src` into checks, with `opts`' prefixes and implicit `-NOT`s.
pub fn scan(src: &Source, opts: &Options) -> Result<Vec<Check>, ScanError> {
    let text = src.text;
    let bytes = text.as_bytes();
    let mode = |offset| ParseMode {
        full_lines: opts.match_full_lines,
        strict: opts.strict_whitespace,
        literal: false,
        line: src.line_col(offset).0,
    };
    let implicit = implicit_nots(opts)?;
    let mut checks: Vec<Check> = Vec::new();
    let mut dag_nots = implicit.clone();
    let mut used: HashSet<&str> = HashSet::new();
    let mut pos = 0;
    while let Some((prefix, loc, found)) = next_prefix(text, pos, opts) {
        let after = match found {
            Found::None => unreachable!("next_prefix skips invalid prefixes"),
            Found::Misspelled(end) => {
                let word = &text[loc..end];
                return Err((loc, format!("misspelled directive '{word}'")));
            }
            Found::BadNot(at) => {
                return Err((at, format!("unsupported -NOT combo on prefix '{prefix}'")));
            }
            Found::BadCount(at) => {
                let msg = format!("invalid count in -COUNT specification on prefix '{prefix}'");
                return Err((at, msg));
            }
            Found::Comment(after) => after,
            Found::Directive { after, .. } => {
                used.insert(prefix);
                after
            }
        };
        // FileCheck drops just the prefix when nothing follows the suffix.
        let mut p = if after >= text.len() { loc + prefix.len() } else { after };
        if !(opts.strict_whitespace && opts.match_full_lines) {
            while p < bytes.len() && (bytes[p] == b' ' || bytes[p] == b'\t') {
                p += 1;
            }
        }
        let eol = text[p..].find(['\n', '\r']).map_or(text.len(), |i| p + i);
        pos = eol;
        let Found::Directive { kind, count, literal, .. } = found else {
            continue;
        };
        let m = ParseMode { literal, ..mode(loc) };
        let mut pat = Pattern::parse(&text[p..eol], kind, prefix, m).map_err(|(o, e)| (p + o, e))?;
        pat.count = count;
        pat.prefix_offset = loc;
        pat.offset = p;
        if kind == Kind::Label && pat.has_variable {
            let msg = format!("found '{prefix}-LABEL:' with variable definition or use");
            return Err((loc, msg));
        }
        if matches!(kind, Kind::Next | Kind::Same | Kind::Empty) && checks.is_empty() {
            let k = &kind.suffix()[1..];
            let msg = format!("found '{prefix}-{k}' without previous '{prefix}: line");
            return Err((loc, msg));
        }
        if matches!(kind, Kind::Dag | Kind::Not) {
            dag_nots.push(pat);
            continue;
        }
        let before = std::mem::replace(&mut dag_nots, implicit.clone());
        checks.push(Check { pattern: pat, dag_nots: before });
    }
    let missing: Vec<&String> = opts.prefixes.iter().filter(|p| !used.contains(p.as_str())).collect();
    let none_found = missing.len() == opts.prefixes.len();
    let unused = !opts.allow_unused_prefixes && !missing.is_empty();
    if (none_found || unused) && (implicit.is_empty() || !opts.default_prefix) {
        let s = if missing.len() > 1 { "es" } else { "" };
        let list: Vec<String> = missing.iter().map(|p| format!("'{p}:'")).collect();
        return Err((usize::MAX, format!("no check strings found with prefix{s} {}", list.join(", "))));
    }
    if !dag_nots.is_empty() {
        checks.push(Check { pattern: Pattern::eof(&opts.prefixes[0], text.len()), dag_nots });
    }
    Ok(checks)
}

/// The `--implicit-check-not` patterns, as `-NOT` directives.
fn implicit_nots(opts: &Options) -> Result<Vec<Pattern>, ScanError> {
    let mode = ParseMode { full_lines: opts.match_full_lines, strict: opts.strict_whitespace, literal: false, line: 0 };
    opts.implicit_check_not
        .iter()
        .map(|p| {
            let mut pat = Pattern::parse(p, Kind::Not, "IMPLICIT-CHECK", mode)
                .map_err(|(_, e)| (usize::MAX, format!("in --implicit-check-not='{p}': {e}")))?;
            pat.offset = usize::MAX;
            pat.prefix_offset = usize::MAX;
            Ok(pat)
        })
        .collect()
}

/// FileCheck's `FindFirstMatchingPrefix`: the next usable prefix at or after `pos`.
fn next_prefix<'o>(text: &str, mut pos: usize, opts: &'o Options) -> Option<(&'o str, usize, Found)> {
    let bytes = text.as_bytes();
    let all: Vec<(&str, bool)> = opts
        .prefixes
        .iter()
        .map(|p| (p.as_str(), false))
        .chain(opts.comment_prefixes.iter().map(|p| (p.as_str(), true)))
        .collect();
    while pos < text.len() {
        // The earliest occurrence of any prefix; the longest on a tie.
        let (loc, prefix, comment) = all
            .iter()
            .filter_map(|&(p, c)| text[pos..].find(p).map(|i| (pos + i, p, c)))
            .min_by_key(|&(i, p, _)| (i, usize::MAX - p.len()))?;
        if loc == pos || !is_word(bytes[loc - 1]) {
            let found = check_type(text, loc, prefix, comment);
            if !matches!(found, Found::None) {
                return Some((prefix, loc, found));
            }
        }
        pos = loc + prefix.len();
        while pos < bytes.len() && is_word(bytes[pos]) {
            pos += 1;
        }
    }
    None
}

/// FileCheck's `FindCheckType`: what follows `prefix` at `loc`.
fn check_type(text: &str, loc: usize, prefix: &str, comment: bool) -> Found {
    if text.len() <= loc + prefix.len() {
        return Found::None;
    }
    let start = loc + prefix.len();
    let rest = &text[start..];
    if comment {
        return if rest.starts_with(':') { Found::Comment(start + 1) } else { Found::None };
    }
    let directive = |kind, count, r: &str| modifiers(text, r, kind, count);
    if rest.starts_with(':') || rest.starts_with('{') {
        return directive(Kind::Plain, 1, rest);
    }
    let (misspelled, r) = if let Some(r) = rest.strip_prefix('_') {
        (true, r)
    } else if let Some(r) = rest.strip_prefix('-') {
        (false, r)
    } else {
        return Found::None;
    };
    const BAD_NOT: [&str; 8] =
        ["DAG-NOT:", "NOT-DAG:", "NEXT-NOT:", "NOT-NEXT:", "SAME-NOT:", "NOT-SAME:", "EMPTY-NOT:", "NOT-EMPTY:"];
    const SUFFIXES: [(&str, Kind); 6] = [
        ("NEXT", Kind::Next),
        ("SAME", Kind::Same),
        ("NOT", Kind::Not),
        ("DAG", Kind::Dag),
        ("LABEL", Kind::Label),
        ("EMPTY", Kind::Empty),
    ];
    let found = if let Some(r) = r.strip_prefix("COUNT-") {
        count(text, r)
    } else if BAD_NOT.iter().any(|b| r.starts_with(b)) {
        Found::BadNot(offset_of(text, r))
    } else if let Some((kind, r)) = SUFFIXES.iter().find_map(|&(s, k)| r.strip_prefix(s).map(|r| (k, r))) {
        directive(kind, 1, r)
    } else {
        Found::None
    };
    match found {
        Found::None => Found::None,
        _ if misspelled => Found::Misspelled(end_of_directive(text, loc)),
        f => f,
    }
}

/// Where a misspelled directive ends (after its colon), for the message.
fn end_of_directive(text: &str, loc: usize) -> usize {
    text[loc..].find(':').map_or(text.len(), |i| loc + i + 1)
}

fn offset_of(text: &str, tail: &str) -> usize {
    text.len() - tail.len()
}

/// `COUNT-n` followed by modifiers and a colon.
fn count(text: &str, r: &str) -> Found {
    let digits = r.bytes().take_while(u8::is_ascii_digit).count();
    let n: Option<usize> = r[..digits].parse().ok().filter(|&n| n > 0 && n <= i32::MAX as usize);
    let rest = &r[digits..];
    match n {
        Some(n) if rest.starts_with(':') || rest.starts_with('{') => modifiers(text, rest, Kind::Plain, n),
        _ => Found::BadCount(offset_of(text, rest)),
    }
}

/// FileCheck's `ConsumeModifiers`: `:` or `{LITERAL,…}:`.
fn modifiers(text: &str, r: &str, kind: Kind, count: usize) -> Found {
    if let Some(after) = r.strip_prefix(':') {
        return Found::Directive { kind, count, literal: false, after: offset_of(text, after) };
    }
    let Some(mut r) = r.strip_prefix('{') else {
        return Found::None;
    };
    loop {
        r = r.trim_start();
        let Some(rest) = r.strip_prefix("LITERAL") else {
            return Found::None;
        };
        r = rest.trim_start();
        match r.strip_prefix(',') {
            Some(rest) => r = rest,
            None => break,
        }
    }
    match r.strip_prefix("}:") {
        Some(after) => Found::Directive { kind, count, literal: true, after: offset_of(text, after) },
        None => Found::None,
    }
}
