//! The layout layer: turns the lexer's physical lines into Python's logical structure.
//!
//! It reads the raw tokens of [`crate::lexer::lex`] and
//!
//! * drops newlines inside `()`, `[]` and `{}` (implicit line joining);
//! * drops blank and comment-only lines (they reach it as consecutive newlines), so a
//!   `# CHECK:` line at column 0 inside an indented body is harmless;
//! * keeps a stack of indentation columns and emits `Newline`, `Indent` and `Dedent`. Any
//!   consistent width is accepted; a tab in indentation is reported once per file (and
//!   counted to the next multiple of 8 so that layout continues);
//! * emits `Indent` only after a line that opens a block: one ending in `:`, or one
//!   starting with a compound-statement keyword and missing its `:` (the parser reports
//!   the colon, and the block stays a block). A deeper line anywhere else is an
//!   `unexpected indent` error, and its level is kept as a silent one (no `Indent`/`Dedent`
//!   tokens), so the rest of the file parses normally. A dedent to a column that is not on
//!   the stack is reported and recovered the same way;
//! * checks brackets: an unmatched or mismatched closing bracket and an unclosed opening
//!   one are reported here, with the span of the offending bracket;
//! * bounds nesting. Every recursive walk over the syntax tree (lowering, `Drop`, `Debug`)
//!   recurses once per level, so a file must not be able to build an arbitrarily deep tree.
//!   The layer keeps an upper bound of the tree depth at the current token: open
//!   brackets, plus, for each bracket level, the binary and prefix operators seen since
//!   the last `,`, `:` or `=` at that level (a chain `a + b + c` nests to the left, and
//!   `- - x` nests too), plus the depth of the deepest operand among them: its `.`, calls
//!   and subscripts (`a.b.c` nests) and the depth of its bracket groups (`(a + b) + c` is
//!   as deep as its group plus one). Every path from the root of an expression to a leaf
//!   crosses at most all of its operators and then one operand, so this bounds the depth
//!   of the tree built, closed brackets included. When it exceeds
//!   [`MAX_NESTING`], or the indentation stack exceeds [`MAX_INDENT_LEVELS`], or blocks
//!   nest deeper than [`MAX_BLOCK_NESTING`] (indentation levels plus `elif` chains, since each
//!   `elif` is an `If` inside the previous one's `else`), the layer reports one error and
//!   stops: the file is not parsed.

use crate::ast::Span;
use crate::lexer::{Spanned, Tok};
use crate::syntax::{MAX_ERRORS, SyntaxError};

/// The most nesting levels an expression may have (brackets, operators, postfix chains);
/// see the module documentation. TVM prints legalized kernels whose operator chains are
/// several hundred levels deep (cubic `resize3d`, `grid_sample` with reflection), so the
/// bound is 1000; the tools run on a thread with a large stack
/// (`relax_driver::on_large_stack`) to hold trees that deep.
pub const MAX_NESTING: usize = 1000;

/// The most blocks that may nest (indentation levels plus `elif` chains).
pub const MAX_BLOCK_NESTING: usize = 200;

/// The most indentation levels a file may have.
pub const MAX_INDENT_LEVELS: usize = 100;

/// The tab stop used to measure indentation that contains tabs (for recovery only: tabs in
/// indentation are an error).
const TAB_WIDTH: u32 = 8;

/// The result of [`layout`].
#[derive(Debug, Default)]
pub struct Layout<'src> {
    /// The tokens for the parser: no comments, and newlines only at the ends of logical
    /// lines; ends with `Newline` (if the last line has tokens) and one `Dedent` per open
    /// block.
    pub tokens: Vec<Spanned<'src>>,
    /// Layout errors, in source order (at most [`MAX_ERRORS`]).
    pub errors: Vec<SyntaxError>,
    /// Set when a nesting limit was exceeded: `tokens` is truncated and must not be parsed.
    pub fatal: bool,
    /// The innermost opening bracket still open at the end of the file, if any. Parse errors
    /// after it are consequences of the missing bracket.
    pub unclosed: Option<Span>,
}

/// One level of the indentation stack.
#[derive(Clone, Copy, Debug)]
struct Level {
    column: u32,
    /// Whether an `Indent` token was emitted for this level (so a `Dedent` is owed).
    real: bool,
    /// `elif` lines at this level since its last other statement: each nests the syntax
    /// tree one level deeper (an `elif` is an `If` inside the previous `else`).
    elifs: usize,
}

/// The nesting of one bracket level (index 0 is outside brackets).
#[derive(Clone, Copy, Debug, Default)]
struct Chain {
    /// Binary and prefix operators seen since the last separator at this level.
    ops: usize,
    /// The deepest operand before the current one since that separator.
    operands: usize,
    /// `.`, calls and subscripts of the current operand.
    postfix: usize,
    /// The deepest bracket group of the current operand.
    group: usize,
    /// The deepest item ended by a separator at this level: the group this level is
    /// the inside of is that deep plus one.
    items: usize,
}

impl Chain {
    /// An upper bound of the depth of the current item: its operators on top of its
    /// deepest operand.
    fn depth(&self) -> usize {
        self.ops + self.operands.max(self.postfix + self.group)
    }
    /// A binary or prefix operator: the current operand ends.
    fn operator(&mut self) {
        self.operands = self.operands.max(self.postfix + self.group);
        self.postfix = 0;
        self.group = 0;
        self.ops += 1;
    }
    /// Ends the current item at a separator; returns its depth.
    fn separate(&mut self) -> usize {
        let d = self.depth();
        *self = Chain { items: self.items.max(d), ..Chain::default() };
        d
    }
}

struct State<'a, 'src> {
    src: &'src str,
    out: &'a mut Layout<'src>,
    levels: Vec<Level>,
    /// Open brackets: the opening token and its span.
    brackets: Vec<(Tok<'src>, Span)>,
    /// Per bracket level (index 0 is outside brackets): what the current item at that
    /// level nests.
    chain: Vec<Chain>,
    /// `brackets.len() + chain.iter().map(Chain::depth).sum()`, maintained incrementally.
    nesting: usize,
    /// The sum of `elifs` over `levels`.
    elifs: usize,
    /// Start of the current physical line.
    line_start: u32,
    /// No token of the current logical line has been emitted yet.
    at_line_start: bool,
    /// The last token emitted, if it was an operand end (a name, literal or closing bracket).
    prev_operand_end: bool,
    /// The last emitted token was `:`.
    prev_colon: bool,
    /// The first token of the current logical line starts a compound statement (`if`,
    /// `def`, ...).
    compound_line: bool,
    /// The current logical line has a `:` outside brackets.
    colon_in_line: bool,
    /// The previous logical line opens a block: it ends with `:`, or it starts with a
    /// compound-statement keyword and has no `:` outside brackets (a header missing its
    /// colon, whose block is better kept as a block while the parser reports the colon).
    opens_block: bool,
    /// A tab in indentation has been reported (once per file is enough).
    reported_tab: bool,
}

/// Applies the layout rules to the raw tokens of `src`.
pub fn layout<'src>(src: &'src str, raw: Vec<Spanned<'src>>) -> Layout<'src> {
    let mut out = Layout { tokens: Vec::with_capacity(raw.len() + 16), ..Layout::default() };
    let mut st = State {
        src,
        out: &mut out,
        levels: vec![Level { column: 0, real: true, elifs: 0 }],
        brackets: Vec::new(),
        chain: vec![Chain::default()],
        nesting: 0,
        elifs: 0,
        line_start: 0,
        at_line_start: true,
        prev_operand_end: false,
        prev_colon: false,
        compound_line: false,
        colon_in_line: false,
        opens_block: false,
        reported_tab: false,
    };
    for (start, tok, end) in raw {
        if !st.token(start, tok, end) {
            st.out.fatal = true;
            return out;
        }
    }
    st.finish();
    out
}

impl<'src> State<'_, 'src> {
    fn error(&mut self, span: Span, message: impl Into<String>) {
        if self.out.errors.len() < MAX_ERRORS {
            self.out.errors.push(SyntaxError::new(span, message));
        }
    }

    fn emit(&mut self, start: u32, tok: Tok<'src>, end: u32) {
        self.out.tokens.push((start, tok, end));
    }

    /// Handles one raw token; returns `false` when a nesting limit is exceeded.
    fn token(&mut self, start: u32, tok: Tok<'src>, end: u32) -> bool {
        let span = Span::new(start, end);
        if tok == Tok::Newline {
            self.line_start = end;
            if self.brackets.is_empty() && !self.at_line_start {
                self.emit(start, Tok::Newline, end);
                self.at_line_start = true;
                self.opens_block = self.prev_colon || (self.compound_line && !self.colon_in_line);
                self.prev_colon = false;
                self.colon_in_line = false;
                self.prev_operand_end = false;
                self.nesting -= self.chain[0].depth();
                self.chain[0] = Chain::default();
            }
            return true;
        }
        if self.at_line_start {
            self.at_line_start = false;
            self.compound_line = matches!(
                tok,
                Tok::If | Tok::Elif | Tok::Else | Tok::For | Tok::While | Tok::With | Tok::Def | Tok::Class
            );
            if !self.indent(start) {
                return false;
            }
            if !self.count_elif(&tok, span) {
                return false;
            }
        }
        if tok == Tok::Colon && self.brackets.is_empty() {
            self.colon_in_line = true;
        }

        if tok.is_open_bracket() {
            if self.prev_operand_end {
                // A call or subscript: one more level of the current operand.
                self.update_chain(|c| c.postfix += 1);
            }
            self.brackets.push((tok.clone(), span));
            self.chain.push(Chain::default());
            self.nesting += 1;
            if self.nesting > MAX_NESTING {
                return self.too_deep(span);
            }
        } else if tok.is_close_bracket() {
            self.close_bracket(&tok, span);
            // The closed group is an operand as deep as its deepest item.
            if self.nesting > MAX_NESTING {
                return self.too_deep(span);
            }
        } else if is_separator(&tok) {
            let level = self.chain.len() - 1;
            self.nesting -= self.chain[level].separate();
        } else if tok == Tok::Dot {
            self.update_chain(|c| c.postfix += 1);
            if self.nesting > MAX_NESTING {
                return self.too_deep(span);
            }
        } else if is_nesting_operator(&tok) {
            self.update_chain(Chain::operator);
            if self.nesting > MAX_NESTING {
                return self.too_deep(span);
            }
        }
        self.prev_operand_end = matches!(
            tok,
            Tok::Name(_)
                | Tok::Int(_)
                | Tok::Float(_)
                | Tok::Str(_)
                | Tok::True
                | Tok::False
                | Tok::None
                | Tok::RParen
                | Tok::RBracket
                | Tok::RBrace
        );
        self.prev_colon = tok == Tok::Colon;
        self.emit(start, tok, end);
        true
    }

    /// Changes the innermost level and keeps `nesting` up to date.
    fn update_chain(&mut self, f: impl FnOnce(&mut Chain)) {
        if let Some(level) = self.chain.last_mut() {
            let before = level.depth();
            f(level);
            self.nesting = self.nesting - before + level.depth();
        }
    }

    fn too_deep(&mut self, span: Span) -> bool {
        self.error(span, format!("nesting too deep (more than {MAX_NESTING} levels)"));
        false
    }

    fn close_bracket(&mut self, tok: &Tok<'src>, span: Span) {
        let closing = tok.text().unwrap_or("?");
        match self.brackets.last() {
            None => self.error(span, format!("unmatched `{closing}`")),
            Some((open, _)) if closes(open, tok) => self.pop_bracket(),
            Some((open, _)) => {
                let expected = closer(open);
                self.error(span, format!("expected `{expected}`, found `{closing}`"));
                // Close the brackets left open inside the one this token matches; if none
                // matches, take it for a mistyped closer of the innermost one.
                let pos = self.brackets.iter().rposition(|(o, _)| closes(o, tok));
                let pos = pos.unwrap_or(self.brackets.len() - 1);
                while self.brackets.len() > pos {
                    self.pop_bracket();
                }
            }
        }
    }

    fn pop_bracket(&mut self) {
        self.brackets.pop();
        if let Some(mut inner) = self.chain.pop() {
            self.nesting -= inner.depth() + 1;
            let group = inner.separate().max(inner.items) + 1;
            self.update_chain(|c| c.group = c.group.max(group));
        }
    }

    /// Counts an `elif` at the start of a line, or ends the `elif` chain of the current level
    /// at any other statement (`else` continues it: its body nests inside the last `elif`).
    /// Returns `false` when blocks nest too deep.
    fn count_elif(&mut self, tok: &Tok<'src>, span: Span) -> bool {
        let Some(level) = self.levels.last_mut() else {
            return true;
        };
        match tok {
            Tok::Elif => {
                level.elifs += 1;
                self.elifs += 1;
                if self.levels.len() - 1 + self.elifs > MAX_BLOCK_NESTING {
                    self.error(span, format!("too many nested blocks (more than {MAX_BLOCK_NESTING})"));
                    return false;
                }
            }
            Tok::Else => {}
            _ => {
                self.elifs -= level.elifs;
                level.elifs = 0;
            }
        }
        true
    }

    /// Handles the indentation of the first token of a logical line, at `start`.
    fn indent(&mut self, start: u32) -> bool {
        let text = &self.src[self.line_start as usize..start as usize];
        // After a backslash continuation the indentation is that of the last physical line.
        let (offset, text) = match text.rfind('\n') {
            Some(i) => (i + 1, &text[i + 1..]),
            None => (0, text),
        };
        let ws_start = self.line_start + offset as u32;
        let ws = Span::new(ws_start, start);
        let mut column = 0u32;
        for (i, b) in text.bytes().enumerate() {
            match b {
                b'\t' => {
                    if !self.reported_tab {
                        self.reported_tab = true;
                        let at = ws_start + i as u32;
                        self.error(Span::new(at, at + 1), "tab character in indentation");
                    }
                    column = (column / TAB_WIDTH + 1) * TAB_WIDTH;
                }
                b'\x0C' => column = 0,
                _ => column += 1,
            }
        }
        let top = self.levels.last().map_or(0, |l| l.column);
        if column > top {
            let real = self.opens_block;
            if real {
                self.emit(ws.start, Tok::Indent, ws.end);
            } else {
                self.error(ws, "unexpected indent");
            }
            self.levels.push(Level { column, real, elifs: 0 });
            if self.levels.len() - 1 > MAX_INDENT_LEVELS {
                self.error(ws, format!("too many levels of indentation (more than {MAX_INDENT_LEVELS})"));
                return false;
            }
        } else if column < top {
            while self.levels.last().is_some_and(|l| l.column > column) {
                if let Some(level) = self.levels.pop() {
                    self.elifs -= level.elifs;
                    if level.real {
                        self.emit(start, Tok::Dedent, start);
                    }
                }
            }
            if self.levels.last().map_or(0, |l| l.column) != column {
                let span = if ws.is_empty() { Span::new(start, start + 1) } else { ws };
                self.error(span, "unindent does not match any outer indentation level");
                self.levels.push(Level { column, real: false, elifs: 0 });
            }
        }
        true
    }

    fn finish(&mut self) {
        let end = self.src.len() as u32;
        if let Some((open, span)) = self.brackets.last() {
            let opening = open.text().unwrap_or("?");
            let span = *span;
            self.error(span, format!("unclosed `{opening}`"));
            self.out.unclosed = Some(span);
        }
        if !self.at_line_start {
            self.emit(end, Tok::Newline, end);
        }
        while let Some(level) = self.levels.pop() {
            if level.real && !self.levels.is_empty() {
                self.emit(end, Tok::Dedent, end);
            }
        }
    }
}

/// Whether `close` closes `open`.
fn closes(open: &Tok<'_>, close: &Tok<'_>) -> bool {
    matches!((open, close), (Tok::LParen, Tok::RParen) | (Tok::LBracket, Tok::RBracket) | (Tok::LBrace, Tok::RBrace))
}

/// The closing bracket of `open`.
fn closer(open: &Tok<'_>) -> &'static str {
    match open {
        Tok::LBracket => "]",
        Tok::LBrace => "}",
        _ => ")",
    }
}

/// Tokens after which the next operand starts a sibling, not a child: the nesting chain of
/// the current bracket level restarts.
fn is_separator(tok: &Tok<'_>) -> bool {
    matches!(tok, Tok::Comma | Tok::Colon | Tok::Assign | Tok::AugAssign(_) | Tok::Arrow | Tok::Semi)
}

/// Binary and prefix operators: tokens that can add a level to the syntax tree above an
/// operand (`.` adds one inside it).
fn is_nesting_operator(tok: &Tok<'_>) -> bool {
    matches!(
        tok,
        Tok::Plus
            | Tok::Minus
            | Tok::Star
            | Tok::Slash
            | Tok::DoubleSlash
            | Tok::Percent
            | Tok::DoubleStar
            | Tok::At
            | Tok::Shl
            | Tok::Shr
            | Tok::Amp
            | Tok::Pipe
            | Tok::Caret
            | Tok::Tilde
            | Tok::Lt
            | Tok::Le
            | Tok::Gt
            | Tok::Ge
            | Tok::EqEq
            | Tok::Ne
            | Tok::Not
            | Tok::And
            | Tok::Or
            | Tok::Is
            | Tok::In
            | Tok::If
            | Tok::Else
            | Tok::Lambda
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lexer::lex;

    fn run(src: &str) -> Layout<'_> {
        let lexed = lex(src);
        assert!(lexed.errors.is_empty(), "{:?}", lexed.errors);
        layout(src, lexed.tokens)
    }

    /// The token stream as text: `NL`, `IN`, `DE` for layout tokens.
    fn stream(src: &str) -> String {
        let out = run(src);
        assert!(out.errors.is_empty(), "{:?}", out.errors);
        render(&out)
    }

    fn render(out: &Layout<'_>) -> String {
        out.tokens
            .iter()
            .map(|(_, t, _)| match t {
                Tok::Newline => "NL".to_string(),
                Tok::Indent => "IN".to_string(),
                Tok::Dedent => "DE".to_string(),
                other => other.to_string(),
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn errors(src: &str) -> Vec<(String, u32, u32)> {
        run(src).errors.into_iter().map(|e| (e.message, e.span.start, e.span.end)).collect()
    }

    #[test]
    fn blocks() {
        assert_eq!(
            stream("def f():\n    x\n    if y:\n        z\nw\n"),
            "def f ( ) : NL IN x NL if y : NL IN z NL DE DE w NL"
        );
        // Any width; end of file closes the blocks; no final newline needed.
        assert_eq!(stream("if a:\n  b\n  c"), "if a : NL IN b NL c NL DE");
        assert_eq!(stream(""), "");
        assert_eq!(stream("\n\n  # comment\n\n"), "");
    }

    #[test]
    fn blank_and_comment_lines() {
        assert_eq!(stream("if a:\n    b\n# CHECK: x\n\n      # deeper comment\n    c\n"), "if a : NL IN b NL c NL DE");
    }

    #[test]
    fn implicit_joining_and_crlf() {
        assert_eq!(stream("f(a,\n  b,\n)\r\nx = [\n1]\r\n"), "f ( a , b , ) NL x = [ 1 ] NL");
        assert_eq!(stream("x = 1 + \\\n    2\n"), "x = 1 + 2 NL");
    }

    #[test]
    fn dedent_positions() {
        let out = run("if a:\n  b\nc\n");
        let dedent = out.tokens.iter().find(|t| t.1 == Tok::Dedent).unwrap();
        assert_eq!((dedent.0, dedent.2), (10, 10));
        let indent = out.tokens.iter().find(|t| t.1 == Tok::Indent).unwrap();
        assert_eq!((indent.0, indent.2), (6, 8));
    }

    #[test]
    fn unexpected_indent() {
        let src = "x = 1\n    y = 2\n    z = 3\nw = 4\n";
        let out = run(src);
        assert_eq!(
            out.errors.iter().map(|e| (e.message.as_str(), e.span)).collect::<Vec<_>>(),
            vec![("unexpected indent", Span::new(6, 10))]
        );
        // The stray lines are kept at the outer level.
        assert_eq!(render(&out), "x = 1 NL y = 2 NL z = 3 NL w = 4 NL");
        assert_eq!(errors("  x\n"), vec![("unexpected indent".into(), 0, 2)]);
    }

    #[test]
    fn bad_dedent() {
        let src = "if a:\n        b\n    c\nd\n";
        let out = run(src);
        assert_eq!(
            out.errors.iter().map(|e| (e.message.as_str(), e.span)).collect::<Vec<_>>(),
            vec![("unindent does not match any outer indentation level", Span::new(16, 20))]
        );
        assert_eq!(render(&out), "if a : NL IN b NL DE c NL d NL");
    }

    #[test]
    fn tabs() {
        assert_eq!(errors("if a:\n\tb\n\tc\n"), vec![("tab character in indentation".into(), 6, 7)]);
        // A tab between tokens is fine.
        assert!(errors("x\t= 1\n").is_empty());
    }

    #[test]
    fn brackets() {
        assert_eq!(errors("x = (1, 2\ny = 3\n"), vec![("unclosed `(`".into(), 4, 5)]);
        assert_eq!(errors("x = 1)\n"), vec![("unmatched `)`".into(), 5, 6)]);
        assert_eq!(errors("x = f(a, [1)\ny\n"), vec![("expected `]`, found `)`".into(), 11, 12)]);
        assert_eq!(run("x = f(a, [1)\ny\n").unclosed, None);
        assert_eq!(run("x = {\n").unclosed, Some(Span::new(4, 5)));
    }

    #[test]
    fn nesting_limits() {
        let deep = format!("x = {}1{}\n", "(".repeat(10_000), ")".repeat(10_000));
        let out = run(&deep);
        assert!(out.fatal);
        assert_eq!(
            out.errors.iter().map(|e| (e.message.as_str(), e.span)).collect::<Vec<_>>(),
            vec![(format!("nesting too deep (more than {MAX_NESTING} levels)").as_str(), Span::new(1004, 1005))]
        );
        // Exactly at the limit is fine.
        let ok = format!("x = {}1{}\n", "(".repeat(MAX_NESTING), ")".repeat(MAX_NESTING));
        assert!(!run(&ok).fatal);
        for src in [
            format!("x = {}1\n", "-".repeat(100_000)),
            format!("x = {}1\n", "not ".repeat(MAX_NESTING + 1)),
            format!("x = a{}\n", " + a".repeat(MAX_NESTING + 1)),
            format!("x = a{}\n", ".b".repeat(MAX_NESTING + 1)),
            format!("x = f{}\n", "()".repeat(MAX_NESTING + 1)),
        ] {
            let out = run(&src);
            assert!(out.fatal, "{}", &src[..20]);
            assert_eq!(out.errors.len(), 1);
        }
        // Long flat lists are fine: commas restart the chain.
        let wide = format!("x = [{}]\n", "a + b, ".repeat(10_000));
        assert!(!run(&wide).fatal);
        // A closed group keeps its depth: chains of chains nest as deep as their product
        // (this overflowed the stack while only open brackets were counted).
        let mut e = "x".to_string();
        for _ in 0..40 {
            e = format!("({e}{})", " + 1".repeat(40));
        }
        assert!(run(&format!("y = {e}\n")).fatal);
        let mut e = "x".to_string();
        for _ in 0..40 {
            e = format!("f({e}){}", ".a".repeat(40));
        }
        assert!(run(&format!("y = {e}\n")).fatal);
        // ... but operands do not add up: a long chain of calls nests like the chain.
        let calls = format!("y = {}\n", vec!["T.Cast(\"float32\", T.floor(x[i, j]))"; 150].join(" + "));
        assert!(!run(&calls).fatal);
        let mut blocks = String::new();
        for depth in 0..150 {
            blocks.push_str(&" ".repeat(depth));
            blocks.push_str("if a:\n");
        }
        let out = run(&blocks);
        assert!(out.fatal);
        assert_eq!(out.errors[0].message, "too many levels of indentation (more than 100)");
    }
}
