//! The logos lexer: source text to raw tokens with `u32` byte spans.
//!
//! [`lex`] produces identifiers, keywords, numbers, strings (escapes decoded), operators and
//! one [`Tok::Newline`] per physical line end. Spaces, tabs, `\r`, form feeds, backslash line
//! continuations and comments are skipped, except two kinds of column-0 comment kept in side
//! lists: `# from ... import ...` header lines (the dialect hint) and `# metadata[...` lines
//! (constant data). [`Tok::Indent`] and [`Tok::Dedent`] are never produced here; the layout
//! layer ([`crate::layout`]) adds them.
//!
//! Lexing never stops at an error. A run of bytes that cannot start a token (binary garbage,
//! non-ASCII outside strings and comments, a stray `$`) is one `invalid character` error; an
//! unterminated string or an integer too large for `u128` is reported and still yields a
//! token, so the parser sees a well-formed stream.

use std::fmt;

use logos::Logos;

use crate::ast::{BinOp, Comment, Span};
use crate::syntax::{MAX_ERRORS, SyntaxError};

/// Errors found inside tokens (strings, numbers), collected while lexing.
#[derive(Default, Debug)]
pub struct LexExtras {
    errors: Vec<SyntaxError>,
}

impl LexExtras {
    fn push_all(&mut self, errors: Vec<SyntaxError>) {
        let room = MAX_ERRORS.saturating_sub(self.errors.len());
        self.errors.extend(errors.into_iter().take(room));
    }
}

/// A token. The lexer produces every variant except `Indent` and `Dedent`; the layout layer
/// produces those and drops `Newline`s that carry no meaning.
#[derive(Logos, Clone, Debug, PartialEq)]
#[logos(extras = LexExtras)]
#[logos(skip r"[ \t\r\x0C]+")]
#[logos(skip r"\\\r?\n")]
pub enum Tok<'src> {
    /// An identifier `[A-Za-z_][A-Za-z0-9_]*` that is not a keyword.
    #[regex(r"[A-Za-z_][A-Za-z0-9_]*", |lex| lex.slice())]
    Name(&'src str),
    /// An integer literal (decimal, or `0x`/`0o`/`0b`); the value is 0 if it overflowed.
    #[regex(r"[0-9]+", |lex| lex_int(lex, 10))]
    #[regex(r"0[xX][0-9a-fA-F]+", |lex| lex_int(lex, 16))]
    #[regex(r"0[oO][0-7]+", |lex| lex_int(lex, 8))]
    #[regex(r"0[bB][01]+", |lex| lex_int(lex, 2))]
    Int(u128),
    /// A float literal: `1.0`, `5.`, `.5`, `1e-05`.
    #[regex(r"[0-9]+\.[0-9]*([eE][+-]?[0-9]+)?", lex_float)]
    #[regex(r"\.[0-9]+([eE][+-]?[0-9]+)?", lex_float)]
    #[regex(r"[0-9]+[eE][+-]?[0-9]+", lex_float)]
    Float(f64),
    /// A string literal, escapes decoded.
    #[token("\"", |lex| lex_string(lex, b'"', false))]
    #[token("'", |lex| lex_string(lex, b'\'', false))]
    #[token("\"\"\"", |lex| lex_string(lex, b'"', true))]
    #[token("'''", |lex| lex_string(lex, b'\'', true))]
    Str(String),
    /// A comment, `#` to the end of the line. [`lex`] drops it (after keeping header and
    /// metadata lines in side lists); the parser never sees it.
    #[regex(r"#[^\n]*", allow_greedy = true)]
    Comment,
    /// A line end (`\n`; a preceding `\r` is skipped as whitespace).
    #[token("\n")]
    Newline,
    /// The start of a more indented block (layout layer only).
    Indent,
    /// The end of an indented block (layout layer only).
    Dedent,

    /// `True`
    #[token("True")]
    True,
    /// `False`
    #[token("False")]
    False,
    /// `None`
    #[token("None")]
    None,
    /// `and`
    #[token("and")]
    And,
    /// `or`
    #[token("or")]
    Or,
    /// `not`
    #[token("not")]
    Not,
    /// `is`
    #[token("is")]
    Is,
    /// `in`
    #[token("in")]
    In,
    /// `if`
    #[token("if")]
    If,
    /// `elif`
    #[token("elif")]
    Elif,
    /// `else`
    #[token("else")]
    Else,
    /// `for`
    #[token("for")]
    For,
    /// `while`
    #[token("while")]
    While,
    /// `with`
    #[token("with")]
    With,
    /// `as`
    #[token("as")]
    As,
    /// `def`
    #[token("def")]
    Def,
    /// `class`
    #[token("class")]
    Class,
    /// `return`
    #[token("return")]
    Return,
    /// `assert`
    #[token("assert")]
    Assert,
    /// `pass`
    #[token("pass")]
    Pass,
    /// `break`
    #[token("break")]
    Break,
    /// `continue`
    #[token("continue")]
    Continue,
    /// `import`
    #[token("import")]
    Import,
    /// `from`
    #[token("from")]
    From,
    /// `lambda` (index maps: `T.index_map(lambda i, j: (j, i))`)
    #[token("lambda")]
    Lambda,

    /// `(`
    #[token("(")]
    LParen,
    /// `)`
    #[token(")")]
    RParen,
    /// `[`
    #[token("[")]
    LBracket,
    /// `]`
    #[token("]")]
    RBracket,
    /// `{`
    #[token("{")]
    LBrace,
    /// `}`
    #[token("}")]
    RBrace,
    /// `@`
    #[token("@")]
    At,
    /// `:`
    #[token(":")]
    Colon,
    /// `;`
    #[token(";")]
    Semi,
    /// `->`
    #[token("->")]
    Arrow,
    /// `=`
    #[token("=")]
    Assign,
    /// `,`
    #[token(",")]
    Comma,
    /// `.`
    #[token(".")]
    Dot,
    /// `+`
    #[token("+")]
    Plus,
    /// `-`
    #[token("-")]
    Minus,
    /// `*`
    #[token("*")]
    Star,
    /// `/`
    #[token("/")]
    Slash,
    /// `//`
    #[token("//")]
    DoubleSlash,
    /// `%`
    #[token("%")]
    Percent,
    /// `**`
    #[token("**")]
    DoubleStar,
    /// `<`
    #[token("<")]
    Lt,
    /// `<=`
    #[token("<=")]
    Le,
    /// `>`
    #[token(">")]
    Gt,
    /// `>=`
    #[token(">=")]
    Ge,
    /// `==`
    #[token("==")]
    EqEq,
    /// `!=`
    #[token("!=")]
    Ne,
    /// `~`
    #[token("~")]
    Tilde,
    /// `&`
    #[token("&")]
    Amp,
    /// `|`
    #[token("|")]
    Pipe,
    /// `^`
    #[token("^")]
    Caret,
    /// `<<`
    #[token("<<")]
    Shl,
    /// `>>`
    #[token(">>")]
    Shr,
    /// An augmented assignment: `+=`, `-=`, `*=`, `/=`, `//=`, `%=`, `**=`, `@=`, `&=`,
    /// `|=`, `^=`, `<<=`, `>>=`; the payload is the operator without `=`.
    #[token("+=", |_| BinOp::Add)]
    #[token("-=", |_| BinOp::Sub)]
    #[token("*=", |_| BinOp::Mul)]
    #[token("/=", |_| BinOp::Div)]
    #[token("//=", |_| BinOp::FloorDiv)]
    #[token("%=", |_| BinOp::Mod)]
    #[token("**=", |_| BinOp::Pow)]
    #[token("@=", |_| BinOp::MatMul)]
    #[token("&=", |_| BinOp::BitAnd)]
    #[token("|=", |_| BinOp::BitOr)]
    #[token("^=", |_| BinOp::BitXor)]
    #[token("<<=", |_| BinOp::LShift)]
    #[token(">>=", |_| BinOp::RShift)]
    AugAssign(BinOp),
}

impl Tok<'_> {
    /// The fixed spelling of a keyword or punctuation token; `None` for names, literals,
    /// comments and layout tokens.
    pub fn text(&self) -> Option<&'static str> {
        Some(match self {
            Tok::Name(_)
            | Tok::Int(_)
            | Tok::Float(_)
            | Tok::Str(_)
            | Tok::Comment
            | Tok::Newline
            | Tok::Indent
            | Tok::Dedent
            | Tok::AugAssign(_) => return None,
            Tok::True => "True",
            Tok::False => "False",
            Tok::None => "None",
            Tok::And => "and",
            Tok::Or => "or",
            Tok::Not => "not",
            Tok::Is => "is",
            Tok::In => "in",
            Tok::If => "if",
            Tok::Elif => "elif",
            Tok::Else => "else",
            Tok::For => "for",
            Tok::While => "while",
            Tok::With => "with",
            Tok::As => "as",
            Tok::Def => "def",
            Tok::Class => "class",
            Tok::Return => "return",
            Tok::Assert => "assert",
            Tok::Pass => "pass",
            Tok::Break => "break",
            Tok::Continue => "continue",
            Tok::Import => "import",
            Tok::From => "from",
            Tok::Lambda => "lambda",
            Tok::LParen => "(",
            Tok::RParen => ")",
            Tok::LBracket => "[",
            Tok::RBracket => "]",
            Tok::LBrace => "{",
            Tok::RBrace => "}",
            Tok::At => "@",
            Tok::Colon => ":",
            Tok::Semi => ";",
            Tok::Arrow => "->",
            Tok::Assign => "=",
            Tok::Comma => ",",
            Tok::Dot => ".",
            Tok::Plus => "+",
            Tok::Minus => "-",
            Tok::Star => "*",
            Tok::Slash => "/",
            Tok::DoubleSlash => "//",
            Tok::Percent => "%",
            Tok::DoubleStar => "**",
            Tok::Lt => "<",
            Tok::Le => "<=",
            Tok::Gt => ">",
            Tok::Ge => ">=",
            Tok::EqEq => "==",
            Tok::Ne => "!=",
            Tok::Tilde => "~",
            Tok::Amp => "&",
            Tok::Pipe => "|",
            Tok::Caret => "^",
            Tok::Shl => "<<",
            Tok::Shr => ">>",
        })
    }

    /// Whether this is `(`, `[` or `{`.
    pub fn is_open_bracket(&self) -> bool {
        matches!(self, Tok::LParen | Tok::LBracket | Tok::LBrace)
    }

    /// Whether this is `)`, `]` or `}`.
    pub fn is_close_bracket(&self) -> bool {
        matches!(self, Tok::RParen | Tok::RBracket | Tok::RBrace)
    }
}

/// How a user reads a token in a message: `` `def` ``, `` `)` ``, `` `foo` ``, `newline`,
/// `indent`, `a string`. `slice` is the token's source text.
pub fn describe_token(tok: &Tok<'_>, slice: &str) -> String {
    const MAX_SHOWN: usize = 24;
    let shown = |category: &str| {
        if !slice.is_empty() && slice.len() <= MAX_SHOWN && !slice.contains(['\n', '\r', '`']) {
            format!("`{slice}`")
        } else {
            category.to_string()
        }
    };
    match tok {
        Tok::Newline => "newline".into(),
        Tok::Indent => "indent".into(),
        Tok::Dedent => "unindent".into(),
        Tok::Comment => "a comment".into(),
        Tok::Name(_) => shown("an identifier"),
        Tok::Int(_) => shown("an integer"),
        Tok::Float(_) => shown("a float"),
        Tok::Str(_) => shown("a string"),
        Tok::AugAssign(op) => format!("`{}=`", op.as_str()),
        other => format!("`{}`", other.text().unwrap_or("?")),
    }
}

impl fmt::Display for Tok<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tok::Name(s) => f.write_str(s),
            Tok::Int(v) => write!(f, "{v}"),
            Tok::Float(v) => write!(f, "{v:?}"),
            Tok::Str(s) => write!(f, "{s:?}"),
            Tok::Comment => f.write_str("#"),
            Tok::Newline => f.write_str("NEWLINE"),
            Tok::Indent => f.write_str("INDENT"),
            Tok::Dedent => f.write_str("DEDENT"),
            Tok::AugAssign(op) => write!(f, "{}=", op.as_str()),
            other => f.write_str(other.text().unwrap_or("?")),
        }
    }
}

/// A token with its byte span: the triple the layout layer and the parser consume.
pub type Spanned<'src> = (u32, Tok<'src>, u32);

/// The result of [`lex`].
#[derive(Debug, Default)]
pub struct Lexed<'src> {
    /// The tokens, comments excluded, in source order.
    pub tokens: Vec<Spanned<'src>>,
    /// `# from ... import ...` lines at column 0.
    pub header: Vec<Comment>,
    /// `# metadata[...` lines at column 0.
    pub metadata: Vec<Comment>,
    /// Lexical errors, in source order.
    pub errors: Vec<SyntaxError>,
}

/// Lexes `src` (at most `u32::MAX` bytes; the caller checks). Never fails: errors are
/// collected in [`Lexed::errors`] (at most [`MAX_ERRORS`] of each kind) and lexing goes on
/// after each.
pub fn lex(src: &str) -> Lexed<'_> {
    debug_assert!(u32::try_from(src.len()).is_ok());
    let mut lexer = Tok::lexer(src);
    let mut out = Lexed::default();
    // A run of invalid bytes, reported as one error when it ends.
    let mut bad: Option<Span> = None;
    let flush_bad = |bad: &mut Option<Span>, errors: &mut Vec<SyntaxError>| {
        if let Some(span) = bad.take()
            && errors.len() < MAX_ERRORS
        {
            let c = src[span.range()].chars().next().unwrap_or('\u{fffd}');
            errors.push(SyntaxError::new(span, format!("invalid character `{}`", c.escape_debug())));
        }
    };
    while let Some(result) = lexer.next() {
        let range = lexer.span();
        let span = Span::new(range.start as u32, range.end as u32);
        match result {
            Ok(Tok::Comment) => {
                flush_bad(&mut bad, &mut out.errors);
                let at_line_start = range.start == 0 || src.as_bytes()[range.start - 1] == b'\n';
                if !at_line_start {
                    continue;
                }
                let text = src[range.clone()].trim_end_matches('\r');
                let span = Span::new(span.start, span.start + text.len() as u32);
                let comment = || Comment { span, text: text.to_string() };
                if text.starts_with("# from ") && text.contains(" import ") {
                    out.header.push(comment());
                } else if text.starts_with("# metadata[") {
                    out.metadata.push(comment());
                }
            }
            Ok(tok) => {
                flush_bad(&mut bad, &mut out.errors);
                out.tokens.push((span.start, tok, span.end));
            }
            Err(()) => match &mut bad {
                Some(run) if run.end == span.start => run.end = span.end,
                _ => {
                    flush_bad(&mut bad, &mut out.errors);
                    bad = Some(span);
                }
            },
        }
    }
    flush_bad(&mut bad, &mut out.errors);
    out.errors.append(&mut lexer.extras.errors);
    out.errors.sort_by_key(|e| e.span);
    out
}

fn token_span<'a>(lex: &logos::Lexer<'a, Tok<'a>>) -> Span {
    let r = lex.span();
    Span::new(r.start as u32, r.end as u32)
}

fn lex_int<'src>(lex: &mut logos::Lexer<'src, Tok<'src>>, radix: u32) -> u128 {
    let digits = if radix == 10 { lex.slice() } else { &lex.slice()[2..] };
    match u128::from_str_radix(digits, radix) {
        Ok(v) => v,
        Err(_) => {
            let span = token_span(lex);
            let error = SyntaxError::new(span, "integer literal too large");
            lex.extras.push_all(vec![error]);
            0
        }
    }
}

fn lex_float<'src>(lex: &mut logos::Lexer<'src, Tok<'src>>) -> Option<f64> {
    lex.slice().parse().ok()
}

/// The character spelled by UTF-8 lead byte `lead` (already read as `\xHH`) and the
/// continuation bytes escaped as `\xHH` at the start of `after`, with the number of bytes of
/// `after` used; `None` when they do not form one valid UTF-8 character.
fn utf8_escape_run(lead: u8, after: &str) -> Option<(char, usize)> {
    let len = match lead {
        0xC2..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF4 => 4,
        _ => return None,
    };
    let mut bytes = vec![lead];
    let mut used = 0;
    for _ in 1..len {
        let esc = after.get(used..used + 4)?;
        let hex = esc.strip_prefix("\\x")?;
        if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        bytes.push(u8::from_str_radix(hex, 16).ok()?);
        used += 4;
    }
    let mut chars = std::str::from_utf8(&bytes).ok()?.chars();
    Some((chars.next()?, used))
}

/// Scans a string body after its opening quote(s), decodes escapes, and bumps the lexer past
/// the closing quote(s). An unterminated single-line string ends at the line end (which is
/// left for the next token); an unterminated triple-quoted one at the end of the input.
fn lex_string<'src>(lex: &mut logos::Lexer<'src, Tok<'src>>, quote: u8, triple: bool) -> String {
    let open = token_span(lex);
    let rest = lex.remainder();
    let bytes = rest.as_bytes();
    let base = open.end;
    let mut out = String::new();
    let mut i = 0;
    let mut errors = Vec::new();
    let terminated = loop {
        // Copy the run of ordinary characters in one go.
        let run = bytes[i..].iter().position(|&b| b == quote || b == b'\\' || b == b'\n').unwrap_or(bytes.len() - i);
        out.push_str(&rest[i..i + run]);
        i += run;
        let Some(&b) = bytes.get(i) else {
            break false;
        };
        match b {
            b'\n' if !triple => break false,
            b'\n' => {
                out.push('\n');
                i += 1;
            }
            _ if b == quote => {
                if !triple {
                    i += 1;
                    break true;
                }
                if bytes[i..].starts_with(&[quote; 3]) {
                    i += 3;
                    break true;
                }
                out.push(quote as char);
                i += 1;
            }
            _ => {
                // A backslash.
                let esc_start = i;
                i += 1;
                let Some(c) = rest[i..].chars().next() else {
                    break false;
                };
                i += c.len_utf8();
                match c {
                    '\n' => {}
                    '\r' if bytes.get(i) == Some(&b'\n') => i += 1,
                    'n' => out.push('\n'),
                    't' => out.push('\t'),
                    'r' => out.push('\r'),
                    '\\' => out.push('\\'),
                    '\'' => out.push('\''),
                    '"' => out.push('"'),
                    'a' => out.push('\x07'),
                    'b' => out.push('\x08'),
                    'f' => out.push('\x0c'),
                    'v' => out.push('\x0b'),
                    '0'..='7' => {
                        let mut value = c as u32 - '0' as u32;
                        for _ in 0..2 {
                            match bytes.get(i) {
                                Some(d @ b'0'..=b'7') => {
                                    value = value * 8 + u32::from(d - b'0');
                                    i += 1;
                                }
                                _ => break,
                            }
                        }
                        out.push(char::from_u32(value).unwrap_or('\u{fffd}'));
                    }
                    'x' | 'u' | 'U' => {
                        let want = match c {
                            'x' => 2,
                            'u' => 4,
                            _ => 8,
                        };
                        let hex = bytes[i..].iter().take(want).take_while(|b| b.is_ascii_hexdigit()).count();
                        let span = Span::new(base + esc_start as u32, base + (i + hex) as u32);
                        if hex < want {
                            let shape = match c {
                                'x' => "\\xXX",
                                'u' => "\\uXXXX",
                                _ => "\\UXXXXXXXX",
                            };
                            errors.push(SyntaxError::new(span, format!("truncated `{shape}` escape")));
                        } else {
                            let value = u32::from_str_radix(&rest[i..i + hex], 16).unwrap_or(0);
                            // TVM escapes a string byte by byte (`é` is `\xC3\xA9`): a run of
                            // `\xHH` escapes that spells one UTF-8 character is that character.
                            // Other `\xHH` are code points, as in Python.
                            let utf8 = if c == 'x' { utf8_escape_run(value as u8, &rest[i + hex..]) } else { None };
                            match (utf8, char::from_u32(value)) {
                                (Some((ch, used)), _) => {
                                    out.push(ch);
                                    i += used;
                                }
                                (None, Some(ch)) => out.push(ch),
                                (None, None) => errors.push(SyntaxError::new(
                                    span,
                                    format!("invalid code point in `{}`", &rest[esc_start..i + hex]),
                                )),
                            }
                        }
                        i += hex;
                    }
                    // Python keeps unknown escapes verbatim.
                    other => {
                        out.push('\\');
                        out.push(other);
                    }
                }
            }
        }
    };
    if !terminated {
        let end = if triple { open.end } else { base + i as u32 };
        let span = Span::new(open.start, end);
        errors.push(SyntaxError::new(span, "unterminated string"));
    }
    lex.bump(i);
    lex.extras.push_all(errors);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(src: &str) -> Vec<Tok<'_>> {
        let lexed = lex(src);
        assert!(lexed.errors.is_empty(), "{:?}", lexed.errors);
        lexed.tokens.into_iter().map(|(_, t, _)| t).collect()
    }

    fn errors(src: &str) -> Vec<(String, u32, u32)> {
        lex(src).errors.into_iter().map(|e| (e.message, e.span.start, e.span.end)).collect()
    }

    #[test]
    fn names_and_keywords() {
        assert_eq!(
            toks("def define _x True not_ in"),
            vec![Tok::Def, Tok::Name("define"), Tok::Name("_x"), Tok::True, Tok::Name("not_"), Tok::In]
        );
    }

    #[test]
    fn numbers() {
        assert_eq!(
            toks("0 42 1.0 1e-05 1.0000000000000001e-05 .5 5. 0x1F 0b101 0o17"),
            vec![
                Tok::Int(0),
                Tok::Int(42),
                Tok::Float(1.0),
                Tok::Float(1e-05),
                Tok::Float(1e-5), // `1.0000000000000001e-05` is the same double
                Tok::Float(0.5),
                Tok::Float(5.0),
                Tok::Int(31),
                Tok::Int(5),
                Tok::Int(15),
            ]
        );
        assert_eq!(
            toks("-340282346638528859811704183484516925440.0"),
            vec![Tok::Minus, Tok::Float(340282346638528859811704183484516925440.0)]
        );
        assert_eq!(toks("340282366920938463463374607431768211455"), vec![Tok::Int(u128::MAX)]);
        assert_eq!(
            errors("x = 340282366920938463463374607431768211456"),
            vec![("integer literal too large".into(), 4, 43)]
        );
    }

    #[test]
    fn strings() {
        assert_eq!(
            toks(r#""a\"b" 'c\'d' "\\ \n \t \r \0 \x41 \u00e9" 'é'"#),
            vec![
                Tok::Str("a\"b".into()),
                Tok::Str("c'd".into()),
                Tok::Str("\\ \n \t \r \0 A é".into()),
                Tok::Str("é".into()),
            ]
        );
        assert_eq!(toks("\"\"\"a\n\"b\"\n\"\"\" ''"), vec![Tok::Str("a\n\"b\"\n".into()), Tok::Str(String::new())]);
        assert_eq!(toks(r#""\d""#), vec![Tok::Str("\\d".into())]);
    }

    #[test]
    fn byte_escapes_spelling_utf8() {
        // TVM's printer escapes strings byte by byte; such a run reads back as the character.
        assert_eq!(toks(r#""\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80""#), vec![Tok::Str("é € 😀".into())]);
        // A lone or ill-formed run is code points, as in Python.
        assert_eq!(toks(r#""\xE9 \xC3 \xC3\x41""#), vec![Tok::Str("é Ã ÃA".into())]);
    }

    #[test]
    fn string_errors() {
        assert_eq!(errors("x = \"abc\ny"), vec![("unterminated string".into(), 4, 8)]);
        assert_eq!(errors("x = '''abc"), vec![("unterminated string".into(), 4, 7)]);
        assert_eq!(errors("\"a\\"), vec![("unterminated string".into(), 0, 3)]);
        assert_eq!(errors(r#""\x4g""#), vec![("truncated `\\xXX` escape".into(), 1, 4)]);
        // The unterminated string still yields a token.
        let lexed = lex("x = \"abc\n");
        assert_eq!(lexed.tokens[2].1, Tok::Str("abc".into()));
        assert_eq!(lexed.tokens[3].1, Tok::Newline);
    }

    #[test]
    fn operators() {
        assert_eq!(
            toks("-> ** // <= >= == != << >> += //= **= @ ~"),
            vec![
                Tok::Arrow,
                Tok::DoubleStar,
                Tok::DoubleSlash,
                Tok::Le,
                Tok::Ge,
                Tok::EqEq,
                Tok::Ne,
                Tok::Shl,
                Tok::Shr,
                Tok::AugAssign(BinOp::Add),
                Tok::AugAssign(BinOp::FloorDiv),
                Tok::AugAssign(BinOp::Pow),
                Tok::At,
                Tok::Tilde,
            ]
        );
    }

    #[test]
    fn comments_and_newlines() {
        let src = "# from tvm.script import ir as I\n# metadata[\"x\"] = 1\nx = 1  # from a import b\r\n  # from not at column 0 import x\n";
        let lexed = lex(src);
        assert!(lexed.errors.is_empty());
        assert_eq!(lexed.header.len(), 1);
        assert_eq!(lexed.header[0].text, "# from tvm.script import ir as I");
        assert_eq!(lexed.header[0].span, Span::new(0, 32));
        assert_eq!(lexed.metadata.len(), 1);
        assert_eq!(lexed.metadata[0].text, "# metadata[\"x\"] = 1");
        let kinds: Vec<_> = lexed.tokens.iter().map(|t| t.1.clone()).collect();
        assert_eq!(
            kinds,
            vec![Tok::Newline, Tok::Newline, Tok::Name("x"), Tok::Assign, Tok::Int(1), Tok::Newline, Tok::Newline]
        );
    }

    #[test]
    fn invalid_characters() {
        assert_eq!(
            errors("a $ b \u{1b}\u{1b} é ?"),
            vec![
                ("invalid character `$`".into(), 2, 3),
                ("invalid character `\\u{1b}`".into(), 6, 8),
                ("invalid character `é`".into(), 9, 11),
                ("invalid character `?`".into(), 12, 13),
            ]
        );
        assert_eq!(errors("\0"), vec![("invalid character `\\0`".into(), 0, 1)]);
        // A backslash not followed by a line end.
        assert_eq!(errors("a \\ b"), vec![("invalid character `\\\\`".into(), 2, 3)]);
        // A backslash continuation is whitespace.
        assert_eq!(toks("a \\\n b"), vec![Tok::Name("a"), Tok::Name("b")]);
    }
}
