//! What is under the cursor: the enclosing function, and the IR entity a word names.
//!
//! The syntax tree gives the structure (which `def` holds an offset, where a symbolic
//! variable is first written); the module's span side tables
//! ([`relax_ir::RelaxSpans`], [`relax_ir::TirSpans`]) tie expressions, variables, buffers
//! and TIR variables to the bytes they were parsed from.

use relax_ir::{Buffer, Expr, ExprData, Global, Module, RelaxFunction, Span, SymVar, Var};
use relax_parser::ast::{self, ExprKind, StmtKind};

use crate::analysis::{Analysis, TokenKind, Unit};

/// What a function's decorator makes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FuncKind {
    /// `@R.function`.
    Relax,
    /// `@T.prim_func`.
    Prim,
    /// Anything else.
    Other,
}

/// The kind of a function from its decorators.
pub fn func_kind(def: &ast::FunctionDef) -> FuncKind {
    for d in &def.decorators {
        let name = d.dotted_name().or_else(|| d.as_dotted_call().map(|(_, n)| n));
        match name.as_deref() {
            Some("R.function") => return FuncKind::Relax,
            Some("T.prim_func") => return FuncKind::Prim,
            _ => {}
        }
    }
    FuncKind::Other
}

/// The module-level functions of a file, with their statements: the `def`s of the class
/// body, or the top-level `def` of single-function text.
pub fn top_functions(file: &ast::File) -> Vec<(&ast::Stmt, &ast::FunctionDef)> {
    let mut out = Vec::new();
    for s in &file.body {
        match &s.kind {
            StmtKind::FunctionDef(d) => out.push((s, d)),
            StmtKind::ClassDef(c) => out.extend(c.body.iter().filter_map(|s| match &s.kind {
                StmtKind::FunctionDef(d) => Some((s, d)),
                _ => None,
            })),
            _ => {}
        }
    }
    out
}

/// The class names of a file (`Module`), which may stand for `cls`.
fn class_names(file: &ast::File) -> impl Iterator<Item = &str> {
    file.body.iter().filter_map(|s| match &s.kind {
        StmtKind::ClassDef(c) => Some(c.name.name.as_str()),
        _ => None,
    })
}

/// Where a module-level function (or `f = R.ExternFunc(...)` attribute) named `name` is
/// defined: its name in the `def` line.
pub fn function_name_span(file: &ast::File, name: &str) -> Option<ast::Span> {
    if let Some((_, d)) = top_functions(file).into_iter().find(|(_, d)| d.name.name == name) {
        return Some(d.name.span);
    }
    let class_body = file.body.iter().filter_map(|s| match &s.kind {
        StmtKind::ClassDef(c) => Some(&c.body),
        _ => None,
    });
    class_body.flatten().find_map(|s| match &s.kind {
        StmtKind::Assign { targets, .. } => targets.iter().find(|t| t.as_name() == Some(name)).map(|t| t.span),
        _ => None,
    })
}

/// The word under the cursor: an identifier token, or an identifier inside a string
/// (`"n"`, `"m + n"`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Word {
    /// First byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
    /// The identifier.
    pub name: String,
    /// True when it sits inside a string literal.
    pub in_string: bool,
    /// Index of its token in [`Analysis::tokens`].
    pub token: usize,
}

/// The word at `offset`.
pub fn word_at(a: &Analysis, offset: usize) -> Option<Word> {
    let (i, tok) = a.token_at(offset)?;
    match &tok.kind {
        TokenKind::Name(n) => {
            Some(Word { start: tok.start, end: tok.end, name: n.clone(), in_string: false, token: i })
        }
        TokenKind::Str(_) => {
            let raw = a.slice(tok.start, tok.end).as_bytes();
            let rel = offset.saturating_sub(tok.start).min(raw.len());
            let is_word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
            let mut s = rel;
            while s > 0 && is_word(raw[s - 1]) {
                s -= 1;
            }
            let mut e = rel;
            while e < raw.len() && is_word(raw[e]) {
                e += 1;
            }
            if s == e || raw[s].is_ascii_digit() {
                return None;
            }
            let name = String::from_utf8_lossy(&raw[s..e]).into_owned();
            Some(Word { start: tok.start + s, end: tok.start + e, name, in_string: true, token: i })
        }
        _ => None,
    }
}

/// An entity of the module.
#[derive(Clone, Debug, PartialEq)]
pub enum Target {
    /// A Relax variable (a use or its definition).
    RelaxVar(Global, Var),
    /// A module function.
    Function(Global),
    /// A symbolic variable of a Relax function, or any TIR variable of a PrimFunc.
    SymVar(Global, SymVar),
    /// A buffer of a PrimFunc.
    Buffer(Global, Buffer),
    /// Some other typed Relax expression (a call, a constant, a tuple).
    Expr(Global, Expr),
}

/// The place a request is about: the unit, its module and tree, and the word.
pub struct Site<'a> {
    /// The analysis.
    pub analysis: &'a Analysis,
    /// The unit holding the offset.
    pub unit: &'a Unit,
    /// Its module.
    pub module: &'a Module,
    /// Its syntax tree.
    pub file: &'a ast::File,
    /// The module-level function holding the offset, if any.
    pub top: Option<&'a ast::FunctionDef>,
    /// The word under the cursor.
    pub word: Word,
}

/// Resolves the word at `offset` to an entity.
pub fn resolve(a: &Analysis, offset: usize) -> Option<(Site<'_>, Target)> {
    let unit = a.unit_at(offset)?;
    let module = unit.module.as_ref()?;
    let file = unit.syntax.as_ref()?;
    let word = word_at(a, offset)?;
    let top = top_functions(file)
        .into_iter()
        .find(|(s, _)| s.span.start as usize <= word.start && word.end <= s.span.end as usize)
        .map(|(_, d)| d);
    let site = Site { analysis: a, unit, module, file, top, word };
    let target = resolve_site(&site)?;
    Some((site, target))
}

fn resolve_site(site: &Site<'_>) -> Option<Target> {
    let w = &site.word;
    let m = site.module;
    if !w.in_string && is_member_of_class(site) {
        return m.lookup(&w.name).map(Target::Function);
    }
    let top = site.top?;
    let g = m.lookup(&top.name.name)?;
    if !w.in_string && top.name.span.start as usize == w.start {
        return Some(Target::Function(g));
    }
    if let Some(f) = m.relax(g) {
        return resolve_relax(site, g, f);
    }
    let p = m.prim_func(g)?;
    if is_attribute(site) {
        // `T.exp`, `T.axis.spatial`: a name of the dialect, never a buffer or variable.
        return None;
    }
    if !w.in_string {
        let buffers = p.buffers.iter().filter(|(_, d)| d.name == w.name).map(|(b, _)| (b, *p.spans.buffers.get(b)));
        if let Some(b) = nearest(buffers, w) {
            return Some(Target::Buffer(g, b));
        }
    }
    let vars = p.pool.vars.iter().filter(|(_, d)| d.name == w.name).map(|(v, _)| (v, *p.spans.vars.get(v)));
    nearest(vars, w).map(|v| Target::SymVar(g, v))
}

/// True for a word right after a dot (`add` in `R.add`, `f` in `cls.f`).
fn is_attribute(site: &Site<'_>) -> bool {
    let i = site.word.token;
    !site.word.in_string && i >= 1 && site.analysis.tokens[i - 1].kind == TokenKind::Dot
}

/// True for the name of a keyword argument (`axis` in `R.sum(x, axis=1)`).
fn is_keyword(site: &Site<'_>) -> bool {
    let (toks, i) = (&site.analysis.tokens, site.word.token);
    !site.word.in_string
        && i >= 1
        && matches!(toks[i - 1].kind, TokenKind::Open | TokenKind::Comma)
        && toks.get(i + 1).is_some_and(|t| t.kind == TokenKind::Assign)
}

/// True for `f` in `cls.f` or `Module.f`.
fn is_member_of_class(site: &Site<'_>) -> bool {
    let toks = &site.analysis.tokens;
    let i = site.word.token;
    if i < 2 || toks[i - 1].kind != TokenKind::Dot {
        return false;
    }
    match &toks[i - 2].kind {
        TokenKind::Name(n) => n == "cls" || class_names(site.file).any(|c| c == n),
        _ => false,
    }
}

fn resolve_relax(site: &Site<'_>, g: Global, f: &RelaxFunction) -> Option<Target> {
    let w = &site.word;
    if !w.in_string {
        // A definition: a parameter or the target of a binding.
        for (v, d) in f.vars.iter() {
            let span = *f.spans.vars.get(v);
            if !span.is_none() && span.start as usize == w.start && d.name == w.name {
                return Some(Target::RelaxVar(g, v));
            }
        }
    }
    let inner = innermost_expr(f, w.start, w.end);
    if !w.in_string
        && let Some(e) = inner
    {
        let span = *f.spans.exprs.get(e);
        match f.expr(e) {
            ExprData::Var(v) if span.start as usize == w.start && span.end as usize == w.end => {
                return Some(Target::RelaxVar(g, *v));
            }
            ExprData::Global(callee) => return Some(Target::Function(*callee)),
            _ => {}
        }
    }
    // An op or attribute name (`R.take`) or a keyword (`axis=`) is no variable, even when
    // a variable has the same name; it stands for the call around it.
    let named = !is_attribute(site) && !is_keyword(site);
    if named && let Some((v, _)) = f.pool.vars.iter().find(|(_, d)| d.name == w.name) {
        return Some(Target::SymVar(g, v));
    }
    if w.in_string {
        return None;
    }
    // A variable named outside any expression (`R.output(z)`): the nearest definition.
    let vars = f.vars.iter().filter(|(_, d)| d.name == w.name).map(|(v, _)| (v, *f.spans.vars.get(v)));
    if named && let Some(v) = nearest(vars, w) {
        return Some(Target::RelaxVar(g, v));
    }
    let e = inner?;
    let typed_leaf = f.ty_of(e).is_some() && !matches!(f.expr(e), ExprData::Op(_) | ExprData::ExternFunc(_));
    if typed_leaf {
        return Some(Target::Expr(g, e));
    }
    enclosing_call(f, e).map(|c| Target::Expr(g, c))
}

/// The smallest expression whose span contains `start..end`.
pub fn innermost_expr(f: &RelaxFunction, start: usize, end: usize) -> Option<Expr> {
    f.exprs
        .keys()
        .filter_map(|e| {
            let s = *f.spans.exprs.get(e);
            (!s.is_none() && s.start as usize <= start && end <= s.end as usize).then_some((e, s.end - s.start))
        })
        .min_by_key(|&(e, len)| (len, std::cmp::Reverse(e)))
        .map(|(e, _)| e)
}

/// The smallest call whose span contains the span of `e`.
fn enclosing_call(f: &RelaxFunction, e: Expr) -> Option<Expr> {
    let inner = *f.spans.exprs.get(e);
    f.exprs
        .iter()
        .filter(|(_, d)| matches!(d, ExprData::Call(_)))
        .filter_map(|(c, _)| {
            let s = *f.spans.exprs.get(c);
            (!s.is_none() && s.start <= inner.start && inner.end <= s.end).then_some((c, s.end - s.start))
        })
        .min_by_key(|&(_, len)| len)
        .map(|(c, _)| c)
}

/// Of several same-named entities, the one whose definition contains the word, else the
/// last defined before it, else the first.
fn nearest<K: Copy>(candidates: impl Iterator<Item = (K, Span)>, w: &Word) -> Option<K> {
    let all: Vec<(K, Span)> = candidates.collect();
    let (start, end) = (w.start as u32, w.end as u32);
    if let Some(&(k, _)) = all.iter().find(|(_, s)| !s.is_none() && s.start <= start && end <= s.end) {
        return Some(k);
    }
    let before = all.iter().filter(|(_, s)| !s.is_none() && s.start <= start).max_by_key(|(_, s)| s.start);
    before.or(all.first()).map(|&(k, _)| k)
}

/// The first occurrence of `name` (an identifier, or a string holding it) inside a span
/// of the document; the whole span when there is none.
pub fn refine(a: &Analysis, span: Span, name: &str) -> (usize, usize) {
    let (start, end) = (span.start as usize, span.end as usize);
    let first = a.tokens.iter().skip_while(|t| t.start < start).take_while(|t| t.end <= end).find(|t| match &t.kind {
        TokenKind::Name(n) => n == name,
        TokenKind::Str(s) => s == name,
        _ => false,
    });
    match first {
        Some(t) if matches!(t.kind, TokenKind::Str(_)) => (t.start + 1, t.end.saturating_sub(1).max(t.start + 1)),
        Some(t) => (t.start, t.end),
        None => (start, end),
    }
}

/// Where the symbolic variable `name` of the Relax function `def` is defined, following
/// the parser's rule: a type parameter (`def f[n]`), else its first bare occurrence as a
/// whole dim (or prim value) in a parameter annotation, else in an `R.match_cast` type,
/// else the declaration `n = T.int64()`, else a module-level `n = TypeVar("n")`.
pub fn sym_var_definition(file: &ast::File, def: &ast::FunctionDef, name: &str) -> Option<ast::Span> {
    if let Some(tp) = def.type_params.iter().find(|t| t.name == name) {
        return Some(tp.span);
    }
    let mut names = Vec::new();
    for p in &def.params {
        if let Some(a) = &p.annotation {
            definable_names(a, &mut names);
        }
    }
    if let Some(&(_, span)) = names.iter().find(|(n, _)| *n == name) {
        return Some(span);
    }
    let mut casts = Vec::new();
    let mut decl = None;
    walk_stmts(&def.body, &mut |s| {
        let StmtKind::Assign { targets, value, .. } = &s.kind else { return };
        if let Some((call, callee)) = value.as_dotted_call() {
            if callee == "R.match_cast"
                && let Some(ty) = call.args.get(1)
            {
                definable_names(ty, &mut casts);
            }
            let declares = callee.starts_with("T.") && call.args.is_empty() && call.keywords.is_empty();
            if declares && decl.is_none() && targets.len() == 1 && targets[0].as_name() == Some(name) {
                decl = Some(targets[0].span);
            }
        }
    });
    if let Some(&(_, span)) = casts.iter().find(|(n, _)| *n == name) {
        return Some(span);
    }
    decl.or_else(|| {
        file.body.iter().find_map(|s| match &s.kind {
            StmtKind::Assign { targets, value, .. }
                if targets.len() == 1 && targets[0].as_name() == Some(name) && value.as_call().is_some() =>
            {
                Some(targets[0].span)
            }
            _ => None,
        })
    })
}

/// Calls `f` on every statement of a body, nested ones included (not local functions'
/// bodies: their symbolic variables are the enclosing function's anyway).
pub fn walk_stmts<'a>(body: &'a [ast::Stmt], f: &mut dyn FnMut(&'a ast::Stmt)) {
    for s in body {
        f(s);
        match &s.kind {
            StmtKind::With { body, .. } | StmtKind::For { body, .. } | StmtKind::While { body, .. } => {
                walk_stmts(body, f)
            }
            StmtKind::If { then_body, else_body, .. } => {
                walk_stmts(then_body, f);
                if let Some(e) = else_body {
                    walk_stmts(e, f);
                }
            }
            StmtKind::FunctionDef(d) => walk_stmts(&d.body, f),
            _ => {}
        }
    }
}

/// Names in definable positions of a type annotation, in order (the parser's rule, see
/// `relax_parser::lower::relax::signature`): whole dims of `R.Tensor` / `R.Shape`, the
/// value of `R.Prim`, recursively through `R.Tuple`.
fn definable_names<'e>(e: &'e ast::Expr, out: &mut Vec<(&'e str, ast::Span)>) {
    let Some((call, callee)) = e.as_dotted_call() else { return };
    let mut push = |d: &'e ast::Expr| match &d.kind {
        ExprKind::Str(s) if is_identifier(s) => {
            let inner = ast::Span::new(d.span.start + 1, d.span.end.saturating_sub(1).max(d.span.start + 1));
            out.push((s.as_str(), inner))
        }
        ExprKind::Name(n) => out.push((n.as_str(), d.span)),
        _ => {}
    };
    match callee.as_str() {
        "R.Tensor" | "R.Shape" => {
            let dims = call.args.first().or_else(|| call.keyword("shape"));
            for d in dims.and_then(|d| d.as_sequence()).unwrap_or(&[]) {
                push(d);
            }
        }
        "R.Prim" => {
            if let Some(v) = call.keyword("value") {
                push(v);
            }
        }
        "R.Tuple" => {
            for a in &call.args {
                definable_names(a, out);
            }
        }
        _ => {}
    }
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}
