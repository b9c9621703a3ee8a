//! The syntax entry point [`parse_syntax`]: lexer, layout layer and grammar in one call, and
//! the [`SyntaxError`]s they report.
//!
//! Errors are collected, never thrown: lexing continues past bad bytes, the layout layer
//! past bad indentation and brackets, and the grammar resynchronises at the end of the
//! logical line (lalrpop's `!` recovery), so one run reports every independent error.
//! To keep the list readable, a parse error is dropped when it is on the same line as a
//! lexical or layout error (it is most likely a consequence: the lexer dropped a bad
//! character, the layout layer reported the bracket the parser trips on), or when it comes
//! after an unclosed bracket (everything after one is a consequence of it); at most
//! [`MAX_ERRORS`] errors are reported.

use std::cell::RefCell;
use std::convert::Infallible;
use std::fmt;

use lalrpop_util::{ErrorRecovery, ParseError};

use crate::ast::{BinOp, BoolOp, Expr, ExprKind, File, Keyword, Span, Stmt, UnaryOp};
use crate::grammar;
use crate::layout::layout;
use crate::lexer::{Tok, describe_token, lex};

/// The most errors [`parse_syntax`] reports; parsing stops once it has this many.
pub const MAX_ERRORS: usize = 100;

/// A lexical, layout or syntax error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyntaxError {
    /// Where the error is, in bytes of the parsed text.
    pub span: Span,
    /// The message: lowercase, no final period, such as ``expected `)`, found `:` ``.
    pub message: String,
}

impl SyntaxError {
    /// A new error.
    pub fn new(span: Span, message: impl Into<String>) -> SyntaxError {
        SyntaxError { span, message: message.into() }
    }
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for SyntaxError {}

/// Parses `src` into a syntax tree.
///
/// Returns the tree and every error found, sorted by position. The tree is `None` only when
/// the file could not be parsed at all: it exceeds a nesting limit
/// ([`crate::layout::MAX_NESTING`], [`crate::layout::MAX_INDENT_LEVELS`]), it is longer
/// than `u32::MAX` bytes, or the grammar could not recover from an error at the end of the
/// file. Otherwise the tree is present even when there are errors: statements with syntax
/// errors are left out of it, so it is fit for tooling (an outline, an editor) but a
/// compiler should not lower it unless the error list is empty.
///
/// Never panics, and runs in time linear in the input.
pub fn parse_syntax(src: &str) -> (Option<File>, Vec<SyntaxError>) {
    if u32::try_from(src.len()).is_err() {
        let error = SyntaxError::new(Span::new(0, 0), "file too large (more than 4 GiB)");
        return (None, vec![error]);
    }
    let lexed = lex(src);
    let mut errors = lexed.errors;
    let laid = layout(src, lexed.tokens);
    errors.extend(laid.errors);
    errors.sort_by_key(|e| e.span);
    if laid.fatal {
        errors.truncate(MAX_ERRORS);
        return (None, errors);
    }

    let sink = Sink::new(src);
    let early = errors.len();
    let tokens = laid.tokens.into_iter().take_while(|_| early + sink.len() < MAX_ERRORS).map(Ok::<_, Infallible>);
    let result = grammar::FileParser::new().parse(src, &sink, tokens);
    let body = match result {
        Ok(body) => Some(body),
        Err(error) => {
            sink.parse_error(error);
            None
        }
    };

    // Drop parse errors that are consequences of lexical and layout errors.
    let lines = LineIndex::new(src);
    let early_lines: Vec<usize> = errors.iter().map(|e| lines.line(e.span.start)).collect();
    let unclosed = laid.unclosed.map_or(u32::MAX, |s| s.start);
    let parse_errors = sink.errors.into_inner();
    errors.extend(
        parse_errors
            .into_iter()
            .filter(|e| e.span.start < unclosed && !early_lines.contains(&lines.line(e.span.start))),
    );
    errors.sort_by_key(|e| e.span);
    errors.dedup_by(|a, b| a.span == b.span);
    errors.truncate(MAX_ERRORS);

    let file = body.map(|body| File { header: lexed.header, metadata: lexed.metadata, body });
    (file, errors)
}

/// Line starts, to tell whether two offsets are on the same line.
struct LineIndex {
    starts: Vec<u32>,
}

impl LineIndex {
    fn new(src: &str) -> LineIndex {
        let mut starts = vec![0];
        starts.extend(src.bytes().enumerate().filter(|&(_, b)| b == b'\n').map(|(i, _)| i as u32 + 1));
        LineIndex { starts }
    }

    fn line(&self, offset: u32) -> usize {
        self.starts.partition_point(|&s| s <= offset)
    }
}

/// Where grammar actions report errors. The grammar gets it as a parameter; the token
/// iterator reads its length to stop after [`MAX_ERRORS`].
pub struct Sink<'src> {
    src: &'src str,
    errors: RefCell<Vec<SyntaxError>>,
}

/// The error recovery value lalrpop hands to a `!` rule.
pub type Recovery<'src> = ErrorRecovery<u32, Tok<'src>, Infallible>;

impl<'src> Sink<'src> {
    fn new(src: &'src str) -> Sink<'src> {
        Sink { src, errors: RefCell::new(Vec::new()) }
    }

    fn len(&self) -> usize {
        self.errors.borrow().len()
    }

    /// Reports an error found by a grammar action.
    pub fn error(&self, span: Span, message: impl Into<String>) {
        self.errors.borrow_mut().push(SyntaxError::new(span, message));
    }

    /// Reports the error a `!` rule recovered from.
    pub fn recovered(&self, recovery: Recovery<'src>) {
        self.parse_error(recovery.error);
    }

    /// Reports a parse error in the form ``expected X, found Y``.
    pub fn parse_error(&self, error: ParseError<u32, Tok<'src>, Infallible>) {
        let end = self.src.len() as u32;
        let (span, found, expected) = match error {
            ParseError::UnrecognizedToken { token: (l, tok, r), expected } => {
                let slice = self.src.get(l as usize..r as usize).unwrap_or("");
                let found = if matches!(tok, Tok::Newline | Tok::Dedent) && l == end {
                    "end of file".to_string()
                } else {
                    describe_token(&tok, slice)
                };
                (Span::new(l, r), found, expected)
            }
            ParseError::UnrecognizedEof { expected, .. } => (Span::new(end, end), "end of file".to_string(), expected),
            ParseError::ExtraToken { token: (l, tok, r) } => {
                let slice = self.src.get(l as usize..r as usize).unwrap_or("");
                let message = format!("unexpected {}", describe_token(&tok, slice));
                self.error(Span::new(l, r), message);
                return;
            }
            ParseError::InvalidToken { location } => {
                self.error(Span::new(location, location), "invalid token");
                return;
            }
            ParseError::User { error } => match error {},
        };
        let message = if found == "indent" {
            "unexpected indent".to_string()
        } else {
            format!("expected {}, found {found}", expected_message(&expected))
        };
        self.error(span, message);
    }

    /// Checks that `target` can be assigned to: a name, attribute or subscript, or a tuple or
    /// list of these.
    pub fn check_target(&self, target: &Expr) {
        match &target.kind {
            ExprKind::Name(_) | ExprKind::Attribute { .. } | ExprKind::Subscript { .. } => {}
            ExprKind::Tuple { elts, .. } | ExprKind::List(elts) => {
                for elt in elts {
                    self.check_target(elt);
                }
            }
            _ => self.error(target.span, format!("cannot assign to {}", target.describe())),
        }
    }

    /// Checks the single target of an annotated or augmented assignment: a name, attribute
    /// or subscript.
    pub fn check_single_target(&self, target: &Expr, what: &str) {
        if !matches!(target.kind, ExprKind::Name(_) | ExprKind::Attribute { .. } | ExprKind::Subscript { .. }) {
            self.error(target.span, format!("{what} target must be a name, attribute or subscript"));
        }
    }
}

/// The end of a block: the end of its last statement, or `fallback` if it has none (after
/// error recovery).
pub fn body_end(body: &[Stmt], fallback: u32) -> u32 {
    body.last().map_or(fallback, |s| s.span.end)
}

/// Grammar terminal names that can start an expression.
const EXPR_START: &[&str] =
    &["NAME", "INT", "FLOAT", "STRING", "True", "False", "None", "(", "[", "{", "-", "+", "~", "not", "lambda"];

/// Groups of terminals that can continue a complete expression. When a group's marker is
/// expected, the parser has just read an expression that the group's operators could
/// extend; they say nothing useful, so messages leave the group out.
const CONTINUATIONS: &[(&str, &[&str])] = &[
    ("+", &["+", "-", "*", "/", "//", "%", "**", "@", "<<", ">>", "&", "|", "^", ".", "(", "["]),
    ("==", &["<", "<=", ">", ">=", "==", "!=", "in", "is", "not"]),
    ("and", &["and", "or", "if"]),
];

/// The "expected ..." part of a parse error message, from lalrpop's expected terminals.
fn expected_message(expected: &[String]) -> String {
    // lalrpop names terminals as written in the grammar: `"("` with quotes, or `NAME`.
    let names: Vec<&str> =
        expected.iter().map(|s| s.strip_prefix('"').and_then(|s| s.strip_suffix('"')).unwrap_or(s)).collect();
    if names.is_empty() {
        return "nothing more".into();
    }
    if names == ["INDENT"] {
        return "an indented block".into();
    }
    if names.contains(&"pass") {
        return "a statement".into();
    }
    // An integer is expected exactly where any expression is.
    let wants_expr = names.contains(&"INT");
    let continuation =
        |n: &str| CONTINUATIONS.iter().any(|(marker, group)| names.contains(marker) && group.contains(&n));
    let mut others: Vec<&str> = names
        .iter()
        .copied()
        .filter(|&n| n != ";" && !continuation(n) && !(wants_expr && EXPR_START.contains(&n)))
        .collect();
    if others.is_empty() && !wants_expr {
        others = names;
    }
    let mut items: Vec<String> = Vec::new();
    if wants_expr {
        items.push("an expression".into());
    }
    items.extend(others.iter().map(|n| terminal_name(n)));
    if items.len() > 5 {
        items.truncate(if wants_expr { 1 } else { 5 });
    }
    let all_tokens = items.iter().all(|i| i.starts_with('`'));
    match items.as_slice() {
        [one] => one.clone(),
        [a, b] => format!("{a} or {b}"),
        [init @ .., last] if all_tokens => format!("one of {}, or {last}", init.join(", ")),
        [init @ .., last] => format!("{}, or {last}", init.join(", ")),
        [] => "nothing more".into(),
    }
}

/// How a user reads a grammar terminal.
fn terminal_name(name: &str) -> String {
    match name {
        "NAME" => "an identifier".into(),
        "INT" => "an integer".into(),
        "FLOAT" => "a float".into(),
        "STRING" => "a string".into(),
        "NEWLINE" => "newline".into(),
        "INDENT" => "an indented block".into(),
        "DEDENT" => "unindent".into(),
        "AUGASSIGN" => "an augmented assignment".into(),
        "COMMENT" => "a comment".into(),
        other => format!("`{other}`"),
    }
}

/// A call argument as the grammar reads it, before positional and keyword arguments are
/// separated.
#[derive(Clone, Debug, PartialEq)]
pub enum Arg {
    /// `value`
    Positional(Expr),
    /// `name=value`
    Keyword(Keyword),
}

/// Splits call arguments into positional and keyword ones, reporting a positional argument
/// after a keyword one.
pub(crate) fn split_args(sink: &Sink<'_>, args: Vec<Arg>) -> (Vec<Expr>, Vec<Keyword>) {
    let mut positional = Vec::new();
    let mut keywords: Vec<Keyword> = Vec::new();
    for arg in args {
        match arg {
            Arg::Positional(e) => {
                if !keywords.is_empty() {
                    sink.error(e.span, "positional argument follows keyword argument");
                }
                positional.push(e);
            }
            Arg::Keyword(k) => {
                if keywords.iter().any(|o| o.name.name == k.name.name) {
                    sink.error(k.name.span, format!("keyword argument repeated: `{}`", k.name.name));
                }
                keywords.push(k);
            }
        }
    }
    (positional, keywords)
}

/// Builds a binary operator node spanning `l..r`.
pub(crate) fn binary(l: u32, r: u32, op: BinOp, lhs: Expr, rhs: Expr) -> Expr {
    Expr::new(Span::new(l, r), ExprKind::Binary { op, lhs: Box::new(lhs), rhs: Box::new(rhs) })
}

/// Builds a boolean operator node spanning `l..r`.
pub(crate) fn bool_op(l: u32, r: u32, op: BoolOp, lhs: Expr, rhs: Expr) -> Expr {
    Expr::new(Span::new(l, r), ExprKind::BoolOp { op, lhs: Box::new(lhs), rhs: Box::new(rhs) })
}

/// Builds a prefix operator node spanning `l..r`.
pub(crate) fn unary(l: u32, r: u32, op: UnaryOp, operand: Expr) -> Expr {
    Expr::new(Span::new(l, r), ExprKind::Unary { op, operand: Box::new(operand) })
}
