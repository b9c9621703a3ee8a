//! Lowering of Relax functions: signatures (phase 1) and bodies (phase 2).
//!
//! [`FuncCx`] holds the function being built and its scopes: one scope of symbolic
//! variables for the whole function (local functions share it) and a stack of scopes of
//! Relax variables. Bindings are collected into blocks as statements are read; nested
//! calls are flattened into fresh bindings (`lv`, `lv1`, ...) so the body is in A-normal
//! form.

pub(crate) mod calls;
pub(crate) mod exprs;
pub(crate) mod infer;
pub(crate) mod signature;
pub(crate) mod stmts;
pub(crate) mod tvm_ops;
pub(crate) mod types;

use std::collections::{HashMap, HashSet};

use relax_ir::{
    Binding, BindingKind, BlockData, DataType, Expr, ExprData, Pool, RelaxFunction, Span, SymVar, Ty, TyData, Var,
};

use super::Diags;
use super::module::{Decorator, ModuleCx};
use super::prim_expr::{PrimName, PrimScope};
use crate::ast;

pub(crate) use signature::lower_signature;
pub(crate) use stmts::lower_body;

/// The block being filled.
#[derive(Debug, Default)]
pub(crate) struct OpenBlock {
    /// True inside `with R.dataflow():`.
    pub dataflow: bool,
    /// Bindings so far.
    pub bindings: Vec<Binding>,
}

/// State while lowering one Relax function.
pub(crate) struct FuncCx<'a, 'd> {
    /// Module-wide state.
    pub cx: &'a mut ModuleCx<'d>,
    /// The function being built.
    pub f: &'a mut RelaxFunction,
    /// Symbolic variables by name.
    pub syms: HashMap<String, SymVar>,
    /// Relax variables by name, innermost scope last.
    pub scopes: Vec<HashMap<String, Var>>,
    /// The block being filled.
    pub block: OpenBlock,
    /// Finished blocks of the sequence being built.
    pub blocks: Vec<relax_ir::Block>,
    /// The names `fresh_name` gave out, each with the last suffix tried for it (TVM's
    /// `NameSupply` of the function's block builder).
    pub name_supply: HashMap<String, u32>,
    /// Where the dataflow variables of finished dataflow blocks were defined, by name,
    /// to explain an "undefined variable" error for a use after the block.
    pub dataflow_locals: HashMap<String, Span>,
    /// Variables whose binding failed (typed `R.Object`): a type error of a later call
    /// that uses one is a consequence, not reported again.
    pub poisoned: HashSet<Var>,
    /// Inside `with R.dataflow():`, the names its `R.output(...)` lists (read before the
    /// block's statements, as TVM's parser does): the other variables bound in the block
    /// are dataflow variables.
    pub dataflow_outputs: Option<HashSet<String>>,
}

impl<'a, 'd> FuncCx<'a, 'd> {
    /// A context over `f`.
    pub fn new(cx: &'a mut ModuleCx<'d>, f: &'a mut RelaxFunction) -> FuncCx<'a, 'd> {
        // Variables of the pool at this point are the signature's symbolic variables.
        let syms = f.pool.vars.iter().map(|(v, d)| (d.name.clone(), v)).collect();
        FuncCx {
            cx,
            f,
            syms,
            scopes: vec![HashMap::new()],
            block: OpenBlock::default(),
            blocks: Vec::new(),
            name_supply: HashMap::new(),
            dataflow_locals: HashMap::new(),
            poisoned: HashSet::new(),
            dataflow_outputs: None,
        }
    }

    /// Diagnostics.
    pub fn d(&mut self) -> &mut Diags {
        self.cx.diags
    }

    /// Interns a type.
    pub fn ty(&mut self, t: TyData) -> Ty {
        self.f.pool.intern_ty(t)
    }

    /// The Relax variable named `name`, innermost scope first.
    pub fn lookup_var(&self, name: &str) -> Option<Var> {
        self.scopes.iter().rev().find_map(|s| s.get(name).copied())
    }

    /// True when `v`, named `name`, is (or will be, once its dataflow block closes) a
    /// dataflow variable.
    pub fn is_dataflow_var(&self, v: Var, name: &str) -> bool {
        if self.f.vars[v].dataflow {
            return true;
        }
        match &self.dataflow_outputs {
            Some(outs) => {
                self.block.dataflow && self.scopes.last().and_then(|s| s.get(name)) == Some(&v) && !outs.contains(name)
            }
            None => false,
        }
    }

    /// Defines a Relax variable in the innermost scope.
    pub fn define_var(&mut self, name: &str, ty: Ty, span: ast::Span) -> Var {
        let v = self.f.add_var(name, ty, false);
        self.f.spans.vars.set(v, super::sp(span));
        self.scopes.last_mut().expect("a scope is always open").insert(name.to_string(), v);
        v
    }

    /// A fresh name `base`, `base1`, `base2`, ..., as TVM's `NameSupply::FreshName` gives
    /// them: it skips only the names it gave out before, not the names written in the text
    /// (the printer tells equal names apart, `gv` and `gv_1`, as TVM's does).
    pub fn fresh_name(&mut self, base: &str) -> String {
        let Some(&last) = self.name_supply.get(base) else {
            self.name_supply.insert(base.to_string(), 0);
            return base.to_string();
        };
        let mut suffix = last;
        let mut name = base.to_string();
        while self.name_supply.contains_key(&name) {
            suffix += 1;
            name = format!("{base}{suffix}");
        }
        self.name_supply.insert(base.to_string(), suffix);
        self.name_supply.insert(name.clone(), 0);
        name
    }

    /// The fresh name of a binding in the open block: TVM's block builder names every
    /// variable it emits `lv...` in a dataflow block and `gv...` elsewhere, and renames
    /// the ones the text names afterwards.
    pub fn binding_name(&mut self) -> String {
        self.fresh_name(if self.block.dataflow { "lv" } else { "gv" })
    }

    /// Takes the fresh name that TVM's block builder gives a binding written with a name
    /// (every assignment, `if` and expression statement): the next unnamed binding
    /// numbers on from it.
    pub fn skip_binding_name(&mut self) {
        let _ = self.binding_name();
    }

    /// Appends a binding to the open block.
    pub fn emit(&mut self, var: Var, value: Expr, kind: BindingKind) {
        self.block.bindings.push(Binding { var, value, kind });
    }

    /// Binds a non-leaf value to a fresh variable and returns a use of it.
    pub fn bind_fresh(&mut self, value: Expr, span: ast::Span) -> Expr {
        let ty = match self.f.ty_of(value) {
            Some(t) => t,
            None => {
                let t = self.ty(TyData::Object);
                self.f.expr_ty.set(value, Some(t));
                t
            }
        };
        // Not in scope: the text cannot refer to it by name (and a variable the text
        // defines under the same name stays visible).
        let name = self.binding_name();
        let v = self.f.add_var(name, ty, false);
        self.f.spans.vars.set(v, super::sp(span));
        self.emit(v, value, BindingKind::Value);
        // As for a named variable (`exprs::value`): outside a dataflow block, a use of a
        // void variable is `R.tuple()`.
        let e = if self.f.pool.ty(ty).is_void() && !self.block.dataflow {
            self.f.add_expr(ExprData::Tuple(relax_ir::ExprList::new()), Some(ty))
        } else {
            self.f.use_var(v)
        };
        self.f.spans.exprs.set(e, super::sp(span));
        e
    }

    /// Closes the open block (if it has bindings) into the list of finished blocks. As
    /// TVM's normaliser does, a block follows on from a previous block of the same kind
    /// instead of starting a new one.
    pub fn close_block(&mut self) -> Option<relax_ir::Block> {
        let open = std::mem::take(&mut self.block);
        if open.bindings.is_empty() {
            return None;
        }
        if let Some(&prev) = self.blocks.last()
            && self.f.blocks[prev].dataflow == open.dataflow
        {
            self.f.blocks[prev].bindings.extend(open.bindings);
            return Some(prev);
        }
        let b = self.f.blocks.push(BlockData { dataflow: open.dataflow, bindings: open.bindings });
        self.blocks.push(b);
        Some(b)
    }

    /// Adds an expression with its type and span.
    pub fn add(&mut self, data: ExprData, ty: Option<Ty>, span: ast::Span) -> Expr {
        let e = self.f.add_expr(data, ty);
        self.f.spans.exprs.set(e, super::sp(span));
        e
    }

    /// The symbolic variable `name`, created on demand for HEAD TypeVars.
    pub fn sym(&mut self, name: &str) -> Option<SymVar> {
        if let Some(&v) = self.syms.get(name) {
            return Some(v);
        }
        if self.cx.dialect.is_typevar(name) {
            let v = self.f.pool.new_var(name, DataType::INT64);
            self.syms.insert(name.to_string(), v);
            return Some(v);
        }
        None
    }

    /// A span in IR form.
    pub fn span(&self, s: ast::Span) -> Span {
        super::sp(s)
    }
}

impl PrimScope for FuncCx<'_, '_> {
    fn pool(&mut self) -> &mut Pool {
        &mut self.f.pool
    }
    fn diags(&mut self) -> &mut Diags {
        self.cx.diags
    }
    fn lookup(&mut self, name: &str) -> Option<PrimName> {
        self.sym(name).map(PrimName::Var)
    }
    fn buffer_info(&self, _b: relax_ir::Buffer) -> (DataType, usize) {
        (DataType::VOID, 0)
    }
}

/// Lowering helpers shared by the submodules.
pub(crate) fn function_decorator_attrs(name: &str, deco: &Decorator, attrs: &mut relax_ir::Attrs) {
    super::module::decorator_attrs(name, deco, attrs);
}

/// True when `e` (a leaf, or a tuple of leaves) uses a variable whose binding failed.
pub(crate) fn uses_poisoned(fx: &FuncCx<'_, '_>, e: Expr) -> bool {
    match &fx.f.exprs[e] {
        ExprData::Var(v) => fx.poisoned.contains(v),
        ExprData::Tuple(fields) => fx.f.list(*fields).iter().any(|&x| uses_poisoned(fx, x)),
        _ => false,
    }
}

/// The result type of an expression, or `R.Object` when unknown.
pub(crate) fn ty_or_object(fx: &mut FuncCx<'_, '_>, e: Expr) -> Ty {
    match fx.f.ty_of(e) {
        Some(t) => t,
        None => fx.ty(TyData::Object),
    }
}
