//! Document symbols: the outline of a document.
//!
//! Built from the syntax tree, which is there even when the text has errors (statements
//! with syntax errors are left out), so the outline follows the text as it is typed:
//!
//! * the module class, with its functions (Relax functions and PrimFuncs, the decorator
//!   as detail) and extern functions;
//! * in a Relax function: symbolic variable declarations, bindings (with their type when
//!   the module parsed), dataflow blocks holding their bindings, local functions;
//! * in a PrimFunc: buffers (`T.match_buffer`, allocations) and blocks (`T.sblock`),
//!   nested as written; loops and `if`s are looked through.

use lsp_types::{DocumentSymbol, SymbolKind};
use relax_ir::{Module, RelaxFunction};
use relax_parser::ast::{self, StmtKind};

use crate::analysis::{Analysis, Unit};
use crate::lookup::{FuncKind, func_kind};

/// The outline of every unit of the document.
pub fn document_symbols(a: &Analysis) -> Vec<DocumentSymbol> {
    let mut out = Vec::new();
    for unit in &a.units {
        let Some(file) = &unit.syntax else { continue };
        let cx = Cx { a, unit };
        for s in &file.body {
            match &s.kind {
                StmtKind::ClassDef(c) => {
                    let mut children = Vec::new();
                    for s in &c.body {
                        match &s.kind {
                            StmtKind::FunctionDef(d) => children.push(cx.function(s, d, None)),
                            StmtKind::Assign { targets, value, .. } => {
                                if let ([t], Some((_, callee))) = (targets.as_slice(), value.as_dotted_call()) {
                                    let kind =
                                        if callee == "R.ExternFunc" { SymbolKind::FUNCTION } else { SymbolKind::FIELD };
                                    children.push(cx.symbol(t, s.span, t.span, kind, Some(callee), Vec::new()));
                                }
                            }
                            _ => {}
                        }
                    }
                    let name = c.name.name.clone();
                    out.push(cx.make(
                        name,
                        Some("I.ir_module".into()),
                        SymbolKind::CLASS,
                        s.span,
                        c.name.span,
                        children,
                    ));
                }
                StmtKind::FunctionDef(d) => out.push(cx.function(s, d, None)),
                StmtKind::Assign { targets, value, .. } => {
                    if let ([t], Some((_, callee))) = (targets.as_slice(), value.as_dotted_call()) {
                        out.push(cx.symbol(t, s.span, t.span, SymbolKind::TYPE_PARAMETER, Some(callee), Vec::new()));
                    }
                }
                _ => {}
            }
        }
    }
    out
}

struct Cx<'a> {
    a: &'a Analysis,
    unit: &'a Unit,
}

impl Cx<'_> {
    fn text(&self, span: ast::Span) -> String {
        self.a.slice(span.start as usize, span.end as usize).to_string()
    }

    /// A symbol for a target expression (its text is the name).
    fn symbol(
        &self,
        target: &ast::Expr,
        range: ast::Span,
        selection: ast::Span,
        kind: SymbolKind,
        detail: Option<String>,
        children: Vec<DocumentSymbol>,
    ) -> DocumentSymbol {
        self.make(self.text(target.span), detail, kind, range, selection, children)
    }

    #[expect(deprecated, reason = "`DocumentSymbol::deprecated` must still be written")]
    fn make(
        &self,
        name: String,
        detail: Option<String>,
        kind: SymbolKind,
        range: ast::Span,
        selection: ast::Span,
        children: Vec<DocumentSymbol>,
    ) -> DocumentSymbol {
        let selection = if range.start <= selection.start && selection.end <= range.end { selection } else { range };
        DocumentSymbol {
            name: if name.trim().is_empty() { "?".to_string() } else { name },
            detail,
            kind,
            tags: None,
            deprecated: None,
            range: self.a.lines.range(range.start as usize, range.end as usize),
            selection_range: self.a.lines.range(selection.start as usize, selection.end as usize),
            children: (!children.is_empty()).then_some(children),
        }
    }

    fn module(&self) -> Option<&Module> {
        self.unit.module.as_ref()
    }

    /// A function and its body. `relax` is the enclosing Relax function of a local one.
    fn function(&self, s: &ast::Stmt, d: &ast::FunctionDef, relax: Option<&RelaxFunction>) -> DocumentSymbol {
        let kind = func_kind(d);
        let detail = d.decorators.first().map(|e| self.text(e.span));
        let relax =
            relax.or_else(|| self.module().and_then(|m| m.lookup(&d.name.name)).and_then(|g| self.module()?.relax(g)));
        let mut children = Vec::new();
        self.body(&d.body, kind, relax, &mut children);
        self.make(d.name.name.clone(), detail, SymbolKind::FUNCTION, s.span, d.name.span, children)
    }

    fn body(&self, body: &[ast::Stmt], kind: FuncKind, relax: Option<&RelaxFunction>, out: &mut Vec<DocumentSymbol>) {
        for s in body {
            match &s.kind {
                StmtKind::Assign { targets, annotation, value } => {
                    let [t] = targets.as_slice() else { continue };
                    if t.as_name().is_none() {
                        continue;
                    }
                    let callee = value.as_dotted_call();
                    if let Some((c, n)) = &callee
                        && n.starts_with("T.")
                        && c.args.is_empty()
                        && c.keywords.is_empty()
                    {
                        out.push(self.symbol(
                            t,
                            s.span,
                            t.span,
                            SymbolKind::TYPE_PARAMETER,
                            Some(n.clone()),
                            Vec::new(),
                        ));
                        continue;
                    }
                    if kind == FuncKind::Prim {
                        let buffer = callee.as_ref().is_some_and(|(_, n)| n.contains("buffer"));
                        if buffer {
                            let detail = callee.map(|(_, n)| n);
                            out.push(self.symbol(t, s.span, t.span, SymbolKind::VARIABLE, detail, Vec::new()));
                        }
                        continue;
                    }
                    let detail = relax
                        .and_then(|f| binding_type(f, t.span))
                        .or_else(|| annotation.as_ref().map(|a| self.text(a.span)))
                        .or_else(|| callee.map(|(_, n)| n));
                    out.push(self.symbol(t, s.span, t.span, SymbolKind::VARIABLE, detail, Vec::new()));
                }
                StmtKind::With { item, body, .. } => {
                    let call = item.as_dotted_call();
                    match call.as_ref().map(|(_, n)| n.as_str()) {
                        Some("R.dataflow") => {
                            let mut children = Vec::new();
                            self.body(body, kind, relax, &mut children);
                            out.push(self.make(
                                "dataflow".into(),
                                Some("R.dataflow()".into()),
                                SymbolKind::NAMESPACE,
                                s.span,
                                item.span,
                                children,
                            ));
                        }
                        Some("T.sblock" | "T.block") => {
                            let mut children = Vec::new();
                            self.body(body, kind, relax, &mut children);
                            let name = call.and_then(|(c, _)| c.args.first()?.as_str().map(str::to_string));
                            let name = name.unwrap_or_else(|| "block".into());
                            out.push(self.make(
                                name,
                                Some("T.sblock".into()),
                                SymbolKind::STRUCT,
                                s.span,
                                item.span,
                                children,
                            ));
                        }
                        _ => self.body(body, kind, relax, out),
                    }
                }
                StmtKind::For { body, .. } | StmtKind::While { body, .. } => self.body(body, kind, relax, out),
                StmtKind::If { then_body, else_body, .. } => {
                    self.body(then_body, kind, relax, out);
                    if let Some(e) = else_body {
                        self.body(e, kind, relax, out);
                    }
                }
                StmtKind::FunctionDef(d) => out.push(self.function(s, d, relax)),
                _ => {}
            }
        }
    }
}

/// The type of the Relax variable bound by the target at `span`, as printed.
fn binding_type(f: &RelaxFunction, span: ast::Span) -> Option<String> {
    let (_, d) = f.vars.iter().find(|(v, _)| f.spans.vars.get(*v).start == span.start)?;
    Some(relax_ir::printer::print_ty_in(f, d.ty))
}
