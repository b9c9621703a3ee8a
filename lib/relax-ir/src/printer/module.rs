//! Module-level layout: header, `@I.ir_module class Module:`, module attributes and
//! global infos, members in TVM's order, and the metadata trailer (`text-format.md` §3).

use std::collections::HashMap;

use super::Printed;
use super::literals::{AttrCtx, quote, write_attr, write_dict};
use super::metadata::{METADATA_OMITTED, const_data_comment};
use super::out::{Buf, Line, Usage};
use super::prim_expr::{Mode, Names};
use super::relax::RelaxPrinter;
use super::span_map::{NameKey, SpanKey, SpanMap};
use super::tir::TirPrinter;
use super::types::{TyOpts, is_default_extern_ty, write_ty};
use crate::entities::{Constant, Global, SymVar};
use crate::module::{ExternFunc, Func, Module, ModuleForm};
use crate::span::Span;

/// State shared by the function printers of one module.
pub(crate) struct ModCtx<'a> {
    pub m: &'a Module,
    /// Metadata constants in order of first appearance.
    pub meta: Vec<Constant>,
    meta_index: HashMap<Constant, usize>,
    /// Prefixes used by the module text printed before the current function (TVM's
    /// `ir_usage` when a nested function prints its own header).
    pub prior: Usage,
    /// Printed names.
    pub map: SpanMap,
}

impl<'a> ModCtx<'a> {
    fn new(m: &'a Module) -> ModCtx<'a> {
        ModCtx { m, meta: Vec::new(), meta_index: HashMap::new(), prior: Usage::default(), map: SpanMap::new() }
    }
    /// True in single-function form (bare global names, no `cls`).
    pub fn single(&self) -> bool {
        self.m.form == ModuleForm::SingleFunction
    }
    /// The metadata index of a constant, assigning the next one on first use.
    pub fn const_index(&mut self, c: Constant) -> usize {
        if let Some(&i) = self.meta_index.get(&c) {
            return i;
        }
        let i = self.meta.len();
        self.meta.push(c);
        self.meta_index.insert(c, i);
        i
    }
    /// Records the printed name of an entity (first definition wins).
    pub fn name(&mut self, key: NameKey, name: &str) {
        self.map.insert_name(key, name);
    }
}

/// Prints a whole module.
pub(crate) fn print(m: &Module) -> Printed {
    let mut ctx = ModCtx::new(m);
    let mut body = Buf::new();
    let order: Vec<Global> = m.print_order();
    if ctx.single() {
        for &g in &order {
            let b = print_global(&mut ctx, g, 0);
            ctx.prior.scan(&b.text);
            body.append(b);
        }
    } else {
        body.str_line(0, "@I.ir_module");
        body.str_line(0, "class Module:");
        let mut members = 0usize;
        if !m.attrs.is_empty() {
            let mut s = String::from("I.module_attrs(");
            write_dict(&mut s, m.attrs.sorted().into_iter(), AttrCtx::Tir, 0);
            s.push(')');
            ctx.prior.scan(&s);
            body.str_line(4, &s);
            members += 1;
        }
        if !m.vdevices.is_empty() {
            let mut s = String::from("I.module_global_infos({\"vdevice\": [");
            for (i, vd) in m.vdevices.iter().enumerate() {
                if i > 0 {
                    s.push_str(", ");
                }
                s.push_str("I.vdevice(");
                write_attr(&mut s, &vd.target, AttrCtx::Tir);
                s.push_str(&format!(", {}, {})", vd.vdevice_id, quote(&vd.scope)));
            }
            s.push_str("]})");
            ctx.prior.scan(&s);
            body.str_line(4, &s);
            members += 1;
        }
        for &g in &order {
            let b = print_global(&mut ctx, g, 4);
            ctx.prior.scan(&b.text);
            body.append(b);
            members += 1;
        }
        if members == 0 {
            body.str_line(4, "pass");
        }
    }
    while body.text.ends_with("\n\n") {
        body.text.pop();
    }
    let mut usage = Usage::default();
    usage.scan(&body.text);
    let mut text = String::new();
    if usage.any() {
        for l in usage.header_lines() {
            text.push_str(l);
            text.push('\n');
        }
        text.push('\n');
    }
    let base = u32::try_from(text.len()).unwrap_or(u32::MAX);
    text.push_str(&body.text);
    if !text.ends_with('\n') {
        text.push('\n');
    }
    if !ctx.meta.is_empty() {
        text.push('\n');
        text.push_str(METADATA_OMITTED);
        text.push('\n');
        for (i, &c) in ctx.meta.iter().enumerate() {
            if let Some(line) = m.constants.get(c).and_then(|cd| const_data_comment(i, cd)) {
                text.push_str(&line);
                text.push('\n');
            }
        }
    }
    let mut map = ctx.map;
    for (k, s, e) in body.spans {
        map.insert_span(k, Span::new(s.saturating_add(base), e.saturating_add(base)));
    }
    Printed { text, map }
}

/// Prints one member: a function followed by an empty line, or an extern's assignment.
fn print_global(ctx: &mut ModCtx<'_>, g: Global, indent: usize) -> Buf {
    let m = ctx.m;
    let Some(gd) = m.globals.get(g) else { return Buf::new() };
    match &gd.func {
        Func::Relax(f) => RelaxPrinter::new(ctx, g, f).print_top(&gd.name, indent),
        Func::Prim(f) => TirPrinter::new(ctx, g, f).print_func(&gd.name, indent),
        Func::Extern(e) => extern_member(g, &gd.name, e, indent),
        Func::Unresolved | Func::Removed => Buf::new(),
    }
}

/// `name = R.ExternFunc("symbol")`, with the type when it is not the default one. Printed
/// outside any Relax function, so its integers use TIR spelling (TVM 0.25 prints
/// `R.Tensor((T.int64(2),), ...)` here).
fn extern_member(g: Global, name: &str, e: &ExternFunc, indent: usize) -> Buf {
    struct Hints<'p>(&'p crate::pool::Pool);
    impl Names for Hints<'_> {
        fn sym(&mut self, out: &mut String, v: SymVar) {
            out.push_str(&super::names::sanitize_name(self.0.vars.get(v).map_or("", |d| d.name.as_str())));
        }
    }
    let mut line = Line::new();
    line.push(name);
    line.push(" = R.ExternFunc(");
    line.push(&quote(&e.symbol));
    if let Some(t) = e.ty.filter(|&t| !is_default_extern_ty(&e.pool, t)) {
        let mut s = String::from(", ");
        write_ty(&mut s, &e.pool, t, TyOpts { mode: Mode::Tir, quote_vars: false }, &mut Hints(&e.pool));
        line.push(&s);
    }
    line.push(")");
    line.mark(SpanKey::Def(g), 0);
    let mut b = Buf::new();
    b.line(indent, line);
    b
}
