//! The last check of [`crate::parse_module`]: a module it accepts must print as text it
//! accepts again.
//!
//! The syntax layer bounds nesting ([`crate::layout::MAX_NESTING`],
//! [`crate::layout::MAX_INDENT_LEVELS`]) so that no walk over a syntax tree can overflow the
//! stack. The printed form of a module can nest deeper than the text it was read from:
//! a tuple value `((x,),)` prints its type `R.Tuple(R.Tuple(...))` with three levels per
//! tuple, a chain of tuple bindings builds ever deeper types, comparison chains print as
//! `and` chains, `elif` chains print as nested `else:` blocks, and a concise `T.attr(...)`
//! statement prints as a `with` block. Rather than bound each of these separately (and
//! miss the next one), the module is printed and the printed text run through the lexer
//! and the layout layer, which cost a fraction of a parse. When a limit is exceeded, the
//! error points at the innermost entity (binding, statement, function) whose printed text
//! holds the offending token.

use relax_ir::diag::Diagnostic;
use relax_ir::module::Func;
use relax_ir::printer::{SpanKey, print_module_with_map};
use relax_ir::{Module, Span};

use crate::layout::layout;
use crate::lexer::lex;

/// Checks that the printed form of `m` stays within the nesting limits of the syntax
/// layer; the error points into the source of `m`.
pub(crate) fn check_printable(m: &Module) -> Result<(), Diagnostic> {
    let printed = print_module_with_map(m);
    let text = printed.text.as_str();
    let laid = layout(text, lex(text).tokens);
    if !laid.fatal {
        return Ok(());
    }
    // The fatal error is the last one the layout layer reported.
    let Some(error) = laid.errors.last() else { return Ok(()) };
    let at = error.span.start;
    // The innermost printed entity around the offending token that has a source span.
    let mut best: Option<(u32, Span)> = None;
    for (key, span) in printed.map.spans() {
        if span.is_none() || span.start > at || at >= span.end.max(span.start + 1) {
            continue;
        }
        let Some(source) = source_span(m, key).filter(|s| !s.is_none()) else { continue };
        let len = span.end - span.start;
        if best.is_none_or(|(l, _)| len < l) {
            best = Some((len, source));
        }
    }
    let span = best.map_or(m.span, |(_, s)| s);
    Err(Diagnostic::error(span, "nested too deeply to be printed and read back")
        .with_note(format!("its printed form exceeds a limit of the reader: {}", error.message)))
}

/// Where the entity printed under `key` was written in the source.
fn source_span(m: &Module, key: SpanKey) -> Option<Span> {
    let func = |g| m.globals.get(g).map(|d| &d.func);
    match key {
        SpanKey::Def(g) => match func(g)? {
            Func::Relax(f) => Some(f.spans.func),
            Func::Prim(p) => Some(p.spans.func),
            _ => None,
        },
        SpanKey::Var(g, v) => Some(*m.relax(g)?.spans.vars.get(v)),
        SpanKey::Expr(g, e) => Some(*m.relax(g)?.spans.exprs.get(e)),
        SpanKey::Block(g, b) => Some(*m.relax(g)?.spans.blocks.get(b)),
        SpanKey::Stmt(g, s) => match func(g)? {
            Func::Prim(p) => Some(*p.spans.stmts.get(s)),
            _ => None,
        },
        SpanKey::Buffer(g, b) => match func(g)? {
            Func::Prim(p) => Some(*p.spans.buffers.get(b)),
            _ => None,
        },
        SpanKey::SymVar(g, v) => match func(g)? {
            Func::Prim(p) => Some(*p.spans.vars.get(v)),
            _ => None,
        },
    }
}
