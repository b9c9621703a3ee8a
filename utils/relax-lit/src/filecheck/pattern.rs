//! One check pattern: FileCheck's `parsePattern` and `match`.
//!
//! A pattern is a fixed string (FileCheck's fast path), the `CHECK-EMPTY` line test, the
//! implicit end-of-input, or a regex assembled from literal text, `{{re}}` blocks,
//! `[[V:re]]` definitions, `[[V]]` uses and `[[@LINE±n]]`.

use std::collections::HashMap;

use super::posix::{self, PosixRegex};
use super::syntax::{Piece, parse_pieces};

/// What a directive asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `CHECK:` (and `CHECK-COUNT-n:`).
    Plain,
    /// `CHECK-NEXT:`.
    Next,
    /// `CHECK-SAME:`.
    Same,
    /// `CHECK-NOT:`.
    Not,
    /// `CHECK-DAG:`.
    Dag,
    /// `CHECK-LABEL:`.
    Label,
    /// `CHECK-EMPTY:`.
    Empty,
    /// The implicit end of input that carries trailing `CHECK-NOT`/`CHECK-DAG`.
    Eof,
}

impl Kind {
    /// The suffix after the prefix, as FileCheck prints it.
    pub fn suffix(self) -> &'static str {
        match self {
            Kind::Plain => "",
            Kind::Next => "-NEXT",
            Kind::Same => "-SAME",
            Kind::Not => "-NOT",
            Kind::Dag => "-DAG",
            Kind::Label => "-LABEL",
            Kind::Empty => "-EMPTY",
            Kind::Eof => "-EOF",
        }
    }
}

#[derive(Debug, Clone)]
enum Body {
    Fixed(String),
    Empty,
    Eof,
    Regex { pieces: Vec<Piece>, defs: Vec<(String, String)> },
}

/// A parsed check pattern and where it came from.
#[derive(Debug, Clone)]
pub struct Pattern {
    /// The directive kind.
    pub kind: Kind,
    /// `CHECK-COUNT-n`: how many consecutive matches (1 otherwise).
    pub count: usize,
    /// The prefix that introduced it (`CHECK`, `EXACT`, `IMPLICIT-CHECK`, …).
    pub prefix: String,
    /// Byte offset of the prefix in the check text.
    pub prefix_offset: usize,
    /// Byte offset of the pattern text in the check text.
    pub offset: usize,
    /// The pattern text as written (after FileCheck's trimming).
    pub text: String,
    /// Whether it defines or uses a variable (`CHECK-LABEL` may not).
    pub has_variable: bool,
    body: Body,
}

/// Settings that shape how patterns are parsed.
#[derive(Debug, Clone, Copy)]
pub struct ParseMode {
    /// `--match-full-lines`.
    pub full_lines: bool,
    /// `--strict-whitespace`.
    pub strict: bool,
    /// `{LITERAL}` modifier.
    pub literal: bool,
    /// The 1-based line of the directive, for `@LINE`.
    pub line: usize,
}

/// A match: offset from the start of the searched text, and length.
pub type Match = (usize, usize);

impl Pattern {
    /// The end-of-input pattern that carries trailing `CHECK-NOT`/`CHECK-DAG` directives.
    pub fn eof(prefix: &str, offset: usize) -> Self {
        Self {
            kind: Kind::Eof,
            count: 1,
            prefix: prefix.to_string(),
            prefix_offset: offset,
            offset,
            text: String::new(),
            has_variable: false,
            body: Body::Eof,
        }
    }

    /// Parses `text` as a `kind` pattern; an error carries a byte offset into `text`.
    pub fn parse(text: &str, kind: Kind, prefix: &str, mode: ParseMode) -> Result<Self, (usize, String)> {
        let full = mode.full_lines && kind != Kind::Not;
        let text = if mode.strict && mode.full_lines { text } else { text.trim_end_matches([' ', '\t']) };
        if text.is_empty() && kind != Kind::Empty {
            return Err((0, format!("found empty check string with prefix '{prefix}:'")));
        }
        if !text.is_empty() && kind == Kind::Empty {
            return Err((0, format!("found non-empty check string for empty check with prefix '{prefix}:'")));
        }
        let mut pat = Self {
            kind,
            count: 1,
            prefix: prefix.to_string(),
            prefix_offset: 0,
            offset: 0,
            text: text.to_string(),
            has_variable: false,
            body: Body::Empty,
        };
        if kind == Kind::Empty {
            return Ok(pat);
        }
        if mode.literal || (!full && (text.len() < 2 || (!text.contains("{{") && !text.contains("[[")))) {
            pat.body = Body::Fixed(text.to_string());
            return Ok(pat);
        }
        let (pieces, defs, has_variable) = parse_pieces(text, full, mode)?;
        pat.has_variable = has_variable;
        pat.body = Body::Regex { pieces, defs };
        // Compile once with every use empty, so syntax errors surface while parsing.
        pat.compile(&HashMap::new(), true).map_err(|e| (0, e))?;
        Ok(pat)
    }

    /// Searches `hay` (the rest of the region, as FileCheck slices it); on a match, records
    /// the variables the pattern defines. `Err` is an undefined variable.
    pub fn find(&self, hay: &str, vars: &mut HashMap<String, String>) -> Result<Option<Match>, String> {
        match &self.body {
            Body::Eof => Ok(Some((hay.len(), 0))),
            Body::Fixed(s) => Ok(hay.find(s.as_str()).map(|p| (p, s.len()))),
            Body::Empty => Ok(find_empty_line(hay).map(|p| (p, 0))),
            Body::Regex { defs, .. } => {
                let re = self.compile(vars, false)?;
                if self.resolves_empty(vars) {
                    return Ok(None);
                }
                let Some(found) = re.find(hay) else {
                    return Ok(None);
                };
                for ((var, _), (_, value)) in defs.iter().zip(found.groups) {
                    vars.insert(var.clone(), value);
                }
                Ok(Some((found.start, found.end - found.start)))
            }
        }
    }

    /// Whether `line` matches this pattern as a whole line, reading each variable use as
    /// `.*`; used to line up EXACT diffs.
    pub fn loosely_matches_line(&self, line: &str) -> bool {
        match &self.body {
            Body::Fixed(s) => line == s,
            Body::Empty => line.is_empty(),
            Body::Eof => false,
            Body::Regex { .. } => self
                .compile(&HashMap::new(), true)
                .ok()
                .and_then(|re| re.find(line))
                .is_some_and(|f| f.start == 0 && f.end == line.len()),
        }
    }

    /// The variables whose values appear in this pattern, for "with V equal to" notes.
    pub fn uses(&self) -> Vec<&str> {
        match &self.body {
            Body::Regex { pieces, .. } => pieces
                .iter()
                .filter_map(|p| match p {
                    Piece::Use(v) => Some(v.as_str()),
                    Piece::Re(_) => None,
                })
                .collect(),
            _ => Vec::new(),
        }
    }

    fn compile(&self, vars: &HashMap<String, String>, loose: bool) -> Result<PosixRegex, String> {
        let Body::Regex { pieces, defs } = &self.body else {
            unreachable!("compile is only called on regex patterns");
        };
        let mut re = String::new();
        for piece in pieces {
            match piece {
                Piece::Re(s) => re.push_str(s),
                Piece::Use(_) if loose => re.push_str("(?:.*)"),
                Piece::Use(v) => match vars.get(v) {
                    Some(value) => re.push_str(&posix::escape(value)),
                    None => return Err(format!("undefined variable: {v}")),
                },
            }
        }
        PosixRegex::new(&re, defs.iter().map(|(_, g)| g.clone()).collect())
    }

    /// Whether the regex is empty once variables are substituted; LLVM's `Regex` cannot
    /// compile an empty pattern, so FileCheck finds no match.
    fn resolves_empty(&self, vars: &HashMap<String, String>) -> bool {
        let Body::Regex { pieces, .. } = &self.body else {
            return false;
        };
        pieces.iter().all(|p| match p {
            Piece::Re(s) => s.is_empty(),
            Piece::Use(v) => vars.get(v).is_some_and(String::is_empty),
        })
    }
}

/// `CHECK-EMPTY`'s regex `(\n$)`: the first newline followed by a line end; the match
/// starts after that newline.
fn find_empty_line(hay: &str) -> Option<usize> {
    let b = hay.as_bytes();
    (0..b.len()).find(|&i| b[i] == b'\n' && (i + 1 == b.len() || b[i + 1] == b'\n')).map(|i| i + 1)
}
