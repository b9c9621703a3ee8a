//! Hover: the inferred type of what is under the cursor.
//!
//! * a Relax variable: `y: R.Tensor((n, 4), dtype="float32")`, its type as the printer
//!   writes it (`relax_ir::printer::print_ty`);
//! * a call or other expression: `R.add(x, y) -> R.Tensor((n, 4), dtype="float32")`;
//! * a module function (`cls.f`, a `def` name): its decorator and `def` line;
//! * a symbolic variable: `n: T.int64`; a TIR variable: its dtype and what defines it (a
//!   loop and its extent, a block axis and its kind, a parameter);
//! * a buffer: `A: T.Buffer((n, T.int64(4)), "float32")` and its scope.

use lsp_types::{Hover, HoverContents, MarkupContent, MarkupKind};
use relax_ir::printer::{print_prim_expr, print_ty};
use relax_ir::{ExprData, Global, Module, PrimFunc, StmtData, SymVar};
use relax_parser::ast;

use crate::analysis::{Analysis, TokenKind};
use crate::lookup::{Site, Target, resolve, top_functions};

/// Longest expression text shown as written; longer calls show as `callee(...)`.
const MAX_EXPR_TEXT: usize = 80;

/// The hover at byte `offset`, if the word there names something typed.
pub fn hover(a: &Analysis, offset: usize) -> Option<Hover> {
    let (site, target) = resolve(a, offset)?;
    let m = site.module;
    let (code, note, range) = match target {
        Target::RelaxVar(g, v) => {
            let f = m.relax(g)?;
            let d = f.vars.get(v)?;
            let what = if f.func.params.contains(&v) {
                "parameter"
            } else if d.dataflow {
                "dataflow variable"
            } else {
                "variable"
            };
            (format!("{}: {}", site.word.name, print_ty(m, g, d.ty)), what.to_string(), word_range(&site))
        }
        Target::Expr(g, e) => {
            let f = m.relax(g)?;
            let ty = print_ty(m, g, f.ty_of(e)?);
            let span = *f.spans.exprs.get(e);
            let text = a.slice(span.start as usize, span.end as usize);
            let (code, what) = match f.expr(e) {
                ExprData::Call(c) => {
                    let shown = if text.len() <= MAX_EXPR_TEXT && !text.contains('\n') {
                        text.to_string()
                    } else {
                        let cs = *f.spans.exprs.get(c.callee);
                        format!("{}(...)", a.slice(cs.start as usize, cs.end as usize))
                    };
                    (format!("{shown} -> {ty}"), "call")
                }
                _ if text.len() <= MAX_EXPR_TEXT && !text.contains('\n') => (format!("{text}: {ty}"), "expression"),
                _ => (ty, "expression"),
            };
            (code, what.to_string(), (span.start as usize, span.end as usize))
        }
        Target::Function(g) => {
            let name = &m.globals.get(g)?.name;
            let kind = match &m.globals.get(g)?.func {
                relax_ir::Func::Relax(_) => "Relax function",
                relax_ir::Func::Prim(_) => "PrimFunc",
                relax_ir::Func::Extern(_) => "extern function",
                _ => "function",
            };
            let code = function_header(a, site.file, name).unwrap_or_else(|| format!("def {name}"));
            (code, kind.to_string(), word_range(&site))
        }
        Target::SymVar(g, v) => {
            let pool = match &m.globals.get(g)?.func {
                relax_ir::Func::Relax(f) => &f.pool,
                relax_ir::Func::Prim(p) => &p.pool,
                _ => return None,
            };
            let d = pool.vars.get(v)?;
            let what = match m.prim_func(g) {
                Some(p) => tir_var_role(m, g, p, v),
                None => format!("symbolic variable of `{}`", m.globals[g].name),
            };
            (format!("{}: T.{}", site.word.name, d.dtype), what, word_range(&site))
        }
        Target::Buffer(g, b) => {
            let p = m.prim_func(g)?;
            let d = p.buffers.get(b)?;
            let dims: Vec<String> = d.shape.iter().map(|&e| print_prim_expr(m, g, e)).collect();
            let shape = if dims.len() == 1 { format!("({},)", dims[0]) } else { format!("({})", dims.join(", ")) };
            let scope = if d.scope == "global" { String::new() } else { format!(", scope=\"{}\"", d.scope) };
            let code = format!("{}: T.Buffer({shape}, \"{}\"{scope})", site.word.name, d.dtype);
            (code, "buffer".to_string(), word_range(&site))
        }
    };
    let mut value = format!("```python\n{code}\n```");
    if !note.is_empty() {
        value.push_str(&format!("\n\n{note}"));
    }
    Some(Hover {
        contents: HoverContents::Markup(MarkupContent { kind: MarkupKind::Markdown, value }),
        range: Some(a.lines.range(range.0, range.1)),
    })
}

fn word_range(site: &Site<'_>) -> (usize, usize) {
    (site.word.start, site.word.end)
}

/// The decorator and `def` line of the module function `name`, as written:
/// `@R.function\ndef main(x: R.Tensor((4,), dtype="float32")) -> R.Tensor(...)`.
pub fn function_header(a: &Analysis, file: &ast::File, name: &str) -> Option<String> {
    let (_, def) = top_functions(file).into_iter().find(|(_, d)| d.name.name == name)?;
    let name_at = def.name.span.start as usize;
    let first = a.tokens.partition_point(|t| t.end <= name_at);
    let def_start = first.checked_sub(1).map_or(name_at, |i| a.tokens[i].start);
    let mut depth = 0usize;
    let mut end = def.name.span.end as usize;
    for t in &a.tokens[first..] {
        match t.kind {
            TokenKind::Open => depth += 1,
            TokenKind::Close => depth = depth.saturating_sub(1),
            TokenKind::Colon if depth == 0 => break,
            _ => {}
        }
        end = t.end;
    }
    let mut out = String::new();
    if let Some(d) = def.decorators.first() {
        out.push('@');
        out.push_str(a.slice(d.span.start as usize, d.span.end as usize));
        out.push('\n');
    }
    out.push_str(a.slice(def_start, end));
    Some(out)
}

/// What defines a TIR variable of a PrimFunc, for the hover note.
fn tir_var_role(m: &Module, g: Global, p: &PrimFunc, v: SymVar) -> String {
    if p.params.contains(&v) {
        return match p.param_buffer(v) {
            Some(b) => format!("handle parameter, bound to buffer `{}`", p.buffers[b].name),
            None => "scalar parameter".to_string(),
        };
    }
    for (_, s) in p.stmts.iter() {
        match s {
            StmtData::For { var, extent, kind, .. } if *var == v => {
                let kind = format!("{kind:?}").to_lowercase();
                return format!("loop variable ({kind}), extent `{}`", print_prim_expr(m, g, *extent));
            }
            StmtData::Block(b) => {
                if let Some(iv) = b.iter_vars.iter().find(|iv| iv.var == v) {
                    let kind = format!("{:?}", iv.kind).to_lowercase();
                    return format!(
                        "{kind} axis of block `{}`, bound to `{}`",
                        b.name,
                        print_prim_expr(m, g, iv.binding)
                    );
                }
            }
            StmtData::Let { var, .. } if *var == v => return "let variable".to_string(),
            _ => {}
        }
    }
    if let Some((_, b)) = p.buffers.iter().find(|(_, b)| b.data == v) {
        return format!("data pointer of buffer `{}`", b.name);
    }
    "symbolic variable".to_string()
}
