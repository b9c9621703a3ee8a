//! One analysis of a document: its tokens, syntax tree, module and diagnostics.
//!
//! The document is parsed and verified exactly as `relax-opt` does it
//! (`relax_parser::parse_module`, then `relax_ir::verify::verify_module`), so the
//! diagnostics are the CLI's. A document with `# -----` split markers (the
//! `--split-input-file` test files) is analysed chunk by chunk, each chunk with the others
//! blanked out so that byte offsets stay those of the whole document
//! (`relax_parser::split`, which the driver uses too).

use relax_ir::{Diagnostic, Module, Span};
use relax_parser::ast;
use relax_parser::lexer::{Tok, lex};
use relax_parser::split::{Chunk, split_input};

use crate::line_index::LineIndex;

/// A token of the document, reduced to what lookups need.
#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    /// First byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
    /// What it is.
    pub kind: TokenKind,
}

/// The kinds of [`Token`] lookups distinguish.
#[derive(Clone, Debug, PartialEq)]
pub enum TokenKind {
    /// An identifier.
    Name(String),
    /// A string literal, escapes decoded.
    Str(String),
    /// `.`
    Dot,
    /// `(`, `[` or `{`.
    Open,
    /// `)`, `]` or `}`.
    Close,
    /// `:`
    Colon,
    /// `,`
    Comma,
    /// `=`
    Assign,
    /// Anything else.
    Other,
}

/// One independently parsed part of a document: the whole document, or one chunk between
/// `# -----` markers.
#[derive(Debug)]
pub struct Unit {
    /// First byte of the chunk.
    pub start: usize,
    /// One past its last byte.
    pub end: usize,
    /// The syntax tree (present even with syntax errors; bad statements are left out).
    pub syntax: Option<ast::File>,
    /// The module, when the chunk parsed and lowered without errors.
    pub module: Option<Module>,
}

/// The analysis of one version of a document.
#[derive(Debug)]
pub struct Analysis {
    /// The text with its line index.
    pub lines: LineIndex,
    /// The parts of the document.
    pub units: Vec<Unit>,
    /// Every diagnostic, in document order per unit.
    pub diagnostics: Vec<Diagnostic>,
    /// The tokens of the whole text.
    pub tokens: Vec<Token>,
}

impl Analysis {
    /// Parses and verifies `text`. Never panics on any input.
    pub fn new(text: &str) -> Analysis {
        let lines = LineIndex::new(text);
        if u32::try_from(text.len()).is_err() {
            let d = Diagnostic::error(Span::new(0, 0), "file too large (more than 4 GiB)");
            return Analysis { lines, units: Vec::new(), diagnostics: vec![d], tokens: Vec::new() };
        }
        let tokens = tokens(text);
        let mut units = Vec::new();
        let mut diagnostics = Vec::new();
        for Chunk { text: chunk, start, end } in split_input(text) {
            let (syntax, _) = relax_parser::parse_syntax(&chunk);
            let module = match relax_parser::parse_module(&chunk) {
                Ok(m) => {
                    if let Err(errs) = relax_ir::verify::verify_module(&m) {
                        diagnostics.extend(errs.iter().map(|e| e.to_diagnostic(&m)));
                    }
                    Some(m)
                }
                Err(d) => {
                    diagnostics.extend(d);
                    None
                }
            };
            units.push(Unit { start, end, syntax, module });
        }
        Analysis { lines, units, diagnostics, tokens }
    }

    /// The analysed text.
    pub fn text(&self) -> &str {
        self.lines.text()
    }

    /// True when some unit did not parse (syntax, lowering or type errors); verifier
    /// errors do not count: the module is still there for lookups.
    pub fn has_parse_errors(&self) -> bool {
        self.units.iter().any(|u| u.module.is_none())
    }

    /// The unit containing byte `offset` (the last one for the end of the text).
    pub fn unit_at(&self, offset: usize) -> Option<&Unit> {
        self.units.iter().find(|u| u.start <= offset && offset < u.end).or_else(|| self.units.last())
    }

    /// The identifier, string or dot token at `offset`: the token containing it, else the
    /// identifier or string ending right at it (a cursor just after a word).
    pub fn token_at(&self, offset: usize) -> Option<(usize, &Token)> {
        let i = self.tokens.partition_point(|t| t.end <= offset);
        if let Some(t) = self.tokens.get(i)
            && t.start <= offset
            && matches!(t.kind, TokenKind::Name(_) | TokenKind::Str(_) | TokenKind::Dot)
        {
            return Some((i, t));
        }
        let prev = i.checked_sub(1)?;
        let t = &self.tokens[prev];
        (t.end == offset && matches!(t.kind, TokenKind::Name(_) | TokenKind::Str(_))).then_some((prev, t))
    }

    /// The text of a span of the document (empty when out of range).
    pub fn slice(&self, start: usize, end: usize) -> &str {
        self.text().get(start..end).unwrap_or("")
    }
}

/// The tokens of `text` (at most `u32::MAX` bytes).
fn tokens(text: &str) -> Vec<Token> {
    lex(text)
        .tokens
        .into_iter()
        .map(|(s, tok, e)| {
            let kind = match tok {
                Tok::Name(n) => TokenKind::Name(n.to_string()),
                Tok::Str(s) => TokenKind::Str(s),
                Tok::Dot => TokenKind::Dot,
                Tok::LParen | Tok::LBracket | Tok::LBrace => TokenKind::Open,
                Tok::RParen | Tok::RBracket | Tok::RBrace => TokenKind::Close,
                Tok::Colon => TokenKind::Colon,
                Tok::Comma => TokenKind::Comma,
                Tok::Assign => TokenKind::Assign,
                _ => TokenKind::Other,
            };
            Token { start: s as usize, end: e as usize, kind }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_files_keep_offsets() {
        let text = "x = (\n# -----\n# empty\n";
        let a = Analysis::new(text);
        assert_eq!(a.units.len(), 2);
        assert_eq!((a.units[1].start, a.units[1].end), (14, text.len()));
        assert!(!a.diagnostics.is_empty());
        assert!(a.diagnostics.iter().all(|d| (d.span.start as usize) < 14), "{:?}", a.diagnostics);
    }

    #[test]
    fn token_at_prefers_words() {
        let a = Analysis::new("y = R.add(x, x)\n");
        let (_, t) = a.token_at(6).unwrap();
        assert_eq!(t.kind, TokenKind::Name("add".into()));
        // Right after `y`.
        let (_, t) = a.token_at(1).unwrap();
        assert_eq!(t.kind, TokenKind::Name("y".into()));
        assert!(a.token_at(3).is_none());
    }
}
