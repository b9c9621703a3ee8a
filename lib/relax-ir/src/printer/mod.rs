//! The printer: canonical TVMScript text (TVM 0.25 dialect) for a [`Module`].
//!
//! [`print_module`] writes what TVM 0.25's `IRModule.script()` writes, byte for byte, plus a
//! final newline (`text-format.md` §1, §3-§10). A module in
//! [`ModuleForm::SingleFunction`](crate::module::ModuleForm) prints as
//! `Function.script()` does: no class, no `cls`, other functions called by bare name.
//! [`print_module_with_map`] also returns a [`SpanMap`]: where each entity landed in the
//! text and the name it was printed with, so diagnostics about IR built by passes can point
//! into the printed text and use printed names.
//!
//! The printer never fails and never panics: ill-formed IR prints with the same naming
//! rules, dangling handles print as `<invalid expr12>` and the like, and deep expressions
//! print without recursion. Output never depends on hash-map iteration order.
//!
//! Pieces: [`literals`] (numbers, strings, attribute values), [`names`] (name hints and
//! scopes), `prim_expr` (TIR expressions), `types` (Relax types), `relax` and
//! `relax_expr` (Relax functions), `tir` and `tir_stmt` (PrimFuncs), [`metadata`] (large
//! constants and their data comment lines), [`intrinsics`] (TIR call spellings),
//! [`span_map`] (the span table).

pub mod intrinsics;
pub mod literals;
pub mod metadata;
mod module;
pub mod names;
mod out;
pub(crate) mod prim_expr;
mod relax;
mod relax_expr;
pub mod span_map;
mod tir;
mod tir_stmt;
pub(crate) mod types;

pub use metadata::{METADATA_OMITTED, const_data_comment, parse_const_data_comment};
pub use names::sanitize_name;
pub use span_map::{NameKey, SpanKey, SpanMap};

use crate::entities::{Buffer, Global, PrimExpr, SymVar, Ty, Var};
use crate::module::{Func, Module};
use crate::pool::Pool;
use crate::relax::RelaxFunction;
use prim_expr::{Mode, Names};

/// Printed text with its span table.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Printed {
    /// The text; ends with exactly one `\n`.
    pub text: String,
    /// Spans into `text` and printed names.
    pub map: SpanMap,
}

/// The canonical text of a module (ends with exactly one `\n`).
pub fn print_module(m: &Module) -> String {
    module::print(m).text
}

/// The canonical text of a module with its span table.
pub fn print_module_with_map(m: &Module) -> Printed {
    module::print(m)
}

/// The name a Relax variable of function `g` gets in the printed module (its sanitised
/// hint if the printer never defines it).
pub fn printed_var_name(m: &Module, g: Global, v: Var) -> String {
    let p = module::print(m);
    match p.map.var_name(g, v) {
        Some(n) => n.to_string(),
        None => sanitize_name(m.relax(g).and_then(|f| f.vars.get(v)).map_or("", |d| d.name.as_str())),
    }
}

/// The name a TIR variable (symbolic dim, loop var, ...) of function `g` gets in the
/// printed module.
pub fn printed_sym_var_name(m: &Module, g: Global, v: SymVar) -> String {
    let p = module::print(m);
    match p.map.sym_var_name(g, v) {
        Some(n) => n.to_string(),
        None => sanitize_name(pool_of(m, g).and_then(|p| p.vars.get(v)).map_or("", |d| d.name.as_str())),
    }
}

/// The name a buffer of PrimFunc `g` gets in the printed module.
pub fn printed_buffer_name(m: &Module, g: Global, b: Buffer) -> String {
    let p = module::print(m);
    match p.map.buffer_name(g, b) {
        Some(n) => n.to_string(),
        None => sanitize_name(m.prim_func(g).and_then(|f| f.buffers.get(b)).map_or("", |d| d.name.as_str())),
    }
}

/// A type of function `g` as it would print in the function's body, with the function's
/// printed names: `R.Tensor((n, 4), dtype="float32")`. For error messages.
pub fn print_ty(m: &Module, g: Global, ty: Ty) -> String {
    let Some(pool) = pool_of(m, g) else { return format!("<{ty:?}>") };
    let map = module::print(m).map;
    let mut names = MapNames { map: &map, g, pool, m };
    let mut out = String::new();
    let mode = if m.prim_func(g).is_some() { Mode::Tir } else { Mode::Relax };
    types::write_ty(&mut out, pool, ty, types::TyOpts { mode, quote_vars: false }, &mut names);
    out
}

/// A TIR expression of function `g` as it would print in the function's body, with the
/// function's printed names. For error messages.
pub fn print_prim_expr(m: &Module, g: Global, e: PrimExpr) -> String {
    let Some(pool) = pool_of(m, g) else { return format!("<{e:?}>") };
    let map = module::print(m).map;
    let mut names = MapNames { map: &map, g, pool, m };
    let mut out = String::new();
    let mode = if m.prim_func(g).is_some() { Mode::Tir } else { Mode::Relax };
    prim_expr::write_prim(&mut out, pool, e, mode, &mut names);
    out
}

/// A TIR expression printed on its own (TIR spelling), naming each variable with
/// `name(v)`. Buffers print by their sanitised `<bufferN>` handle.
pub fn print_prim_expr_with(pool: &Pool, e: PrimExpr, name: &dyn Fn(SymVar) -> String) -> String {
    struct FnNames<'f>(&'f dyn Fn(SymVar) -> String);
    impl Names for FnNames<'_> {
        fn sym(&mut self, out: &mut String, v: SymVar) {
            out.push_str(&(self.0)(v));
        }
    }
    let mut out = String::new();
    prim_expr::write_prim(&mut out, pool, e, Mode::Tir, &mut FnNames(name));
    out
}

/// A type of a Relax function as it prints in the function's body, naming variables by
/// their (sanitised) name hints: `R.Tensor((n, 4), dtype="float32")`. For messages
/// produced without a module at hand (type inference while parsing or in passes).
pub fn print_ty_in(f: &RelaxFunction, ty: Ty) -> String {
    let mut names = HintNames { pool: &f.pool, f: Some(f) };
    let mut out = String::new();
    types::write_ty(&mut out, &f.pool, ty, types::TyOpts { mode: Mode::Relax, quote_vars: false }, &mut names);
    out
}

/// A type of any pool as it prints in a Relax body, naming symbolic variables by their
/// sanitised name hints (a shape variable prints as its handle). For messages about
/// types of other functions.
pub fn print_ty_pool(pool: &Pool, ty: Ty) -> String {
    let mut names = HintNames { pool, f: None };
    let mut out = String::new();
    types::write_ty(&mut out, pool, ty, types::TyOpts { mode: Mode::Relax, quote_vars: false }, &mut names);
    out
}

/// A TIR expression of a Relax function's pool as it prints in a Relax body (bare
/// integers), naming variables by their sanitised name hints: `n * 4`. For messages.
pub fn print_prim_in(pool: &Pool, e: PrimExpr) -> String {
    let mut names = HintNames { pool, f: None };
    let mut out = String::new();
    prim_expr::write_prim(&mut out, pool, e, Mode::Relax, &mut names);
    out
}

/// Names from the name hints of a pool (and of a Relax function's variables).
struct HintNames<'a> {
    pool: &'a Pool,
    f: Option<&'a RelaxFunction>,
}

impl Names for HintNames<'_> {
    fn sym(&mut self, out: &mut String, v: SymVar) {
        out.push_str(&sanitize_name(self.pool.vars.get(v).map_or("", |d| d.name.as_str())));
    }
    fn relax_var(&mut self, out: &mut String, v: Var) {
        match self.f.and_then(|f| f.vars.get(v)) {
            Some(d) => out.push_str(&sanitize_name(&d.name)),
            None => out.push_str(&format!("<{v:?}>")),
        }
    }
}

fn pool_of(m: &Module, g: Global) -> Option<&Pool> {
    match &m.globals.get(g)?.func {
        Func::Relax(f) => Some(&f.pool),
        Func::Prim(f) => Some(&f.pool),
        Func::Extern(e) => Some(&e.pool),
        Func::Unresolved | Func::Removed => None,
    }
}

/// Names from a finished span map, falling back to sanitised hints.
struct MapNames<'a> {
    map: &'a SpanMap,
    g: Global,
    pool: &'a Pool,
    m: &'a Module,
}

impl Names for MapNames<'_> {
    fn sym(&mut self, out: &mut String, v: SymVar) {
        match self.map.sym_var_name(self.g, v) {
            Some(n) => out.push_str(n),
            None => out.push_str(&sanitize_name(self.pool.vars.get(v).map_or("", |d| d.name.as_str()))),
        }
    }
    fn buffer(&mut self, out: &mut String, b: Buffer) {
        match self.map.buffer_name(self.g, b) {
            Some(n) => out.push_str(n),
            None => out.push_str(&sanitize_name(
                self.m.prim_func(self.g).and_then(|f| f.buffers.get(b)).map_or("", |d| d.name.as_str()),
            )),
        }
    }
    fn relax_var(&mut self, out: &mut String, v: Var) {
        match self.map.var_name(self.g, v) {
            Some(n) => out.push_str(n),
            None => out.push_str(&sanitize_name(
                self.m.relax(self.g).and_then(|f| f.vars.get(v)).map_or("", |d| d.name.as_str()),
            )),
        }
    }
}
