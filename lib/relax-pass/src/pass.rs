//! The three pass traits, one per anchor, and [`PassKind`], a built pass of one of them.
//!
//! A pass implements exactly one trait, and the trait decides where the manager runs it:
//! [`ModulePass`] on the whole module, [`RelaxFunctionPass`] on each Relax function,
//! [`PrimFuncPass`] on each PrimFunc. A function pass gets `&mut` to its function alone
//! and reads the rest of the module through its [`FunctionContext`]. A pass that adds to
//! the module (constants, PrimFuncs, functions) must be a module pass.
//!
//! [`ModuleFn`], [`RelaxFunctionFn`] and [`PrimFuncFn`] make a pass of a plain function,
//! for passes without options or state (`declare_pass!`'s `run:` form).

use relax_ir::diag::Diagnostic;
use relax_ir::{Module, PrimFunc, RelaxFunction};

use crate::anchor::Anchor;
use crate::context::{FunctionContext, PassContext};

/// What a pass run reports: whether it changed the IR, or the errors that stopped it.
pub type PassResult = Result<bool, Vec<Diagnostic>>;

/// A transformation of the whole module. It keeps no mutable state between runs.
pub trait ModulePass: Send + Sync {
    /// Runs on `m`.
    fn run(&self, m: &mut Module, cx: &mut PassContext) -> PassResult;
}

/// A transformation of one Relax function, run on each Relax function of the module.
///
/// While it runs, `f` is out of the module: [`FunctionContext::module`] shows the other
/// functions as they are, and the slot of `f` itself as `Func::Unresolved` (see
/// [`FunctionContext`]). The pass may change `f`'s body and attributes, but must keep its
/// signature valid for its callers, since only `f` is verified after the pass.
pub trait RelaxFunctionPass: Send + Sync {
    /// Runs on `f`.
    fn run(&self, f: &mut RelaxFunction, cx: &mut FunctionContext<'_>) -> PassResult;
}

/// A transformation of one PrimFunc, run on each PrimFunc of the module (as
/// [`RelaxFunctionPass`] is for Relax functions).
pub trait PrimFuncPass: Send + Sync {
    /// Runs on `f`.
    fn run(&self, f: &mut PrimFunc, cx: &mut FunctionContext<'_>) -> PassResult;
}

/// A built pass: one of the three kinds. Its anchor is its kind.
pub enum PassKind {
    /// A module pass.
    Module(Box<dyn ModulePass>),
    /// A Relax function pass.
    RelaxFunction(Box<dyn RelaxFunctionPass>),
    /// A PrimFunc pass.
    PrimFunc(Box<dyn PrimFuncPass>),
}

impl PassKind {
    /// What the pass runs on.
    pub fn anchor(&self) -> Anchor {
        match self {
            PassKind::Module(_) => Anchor::Module,
            PassKind::RelaxFunction(_) => Anchor::RelaxFunction,
            PassKind::PrimFunc(_) => Anchor::PrimFunc,
        }
    }
}

impl std::fmt::Debug for PassKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PassKind::{:?}", self.anchor())
    }
}

/// A module pass made of a function.
#[derive(Clone, Copy, Debug)]
pub struct ModuleFn(pub fn(&mut Module, &mut PassContext) -> PassResult);

impl ModulePass for ModuleFn {
    fn run(&self, m: &mut Module, cx: &mut PassContext) -> PassResult {
        (self.0)(m, cx)
    }
}

/// A Relax function pass made of a function.
#[derive(Clone, Copy, Debug)]
pub struct RelaxFunctionFn(pub fn(&mut RelaxFunction, &mut FunctionContext<'_>) -> PassResult);

impl RelaxFunctionPass for RelaxFunctionFn {
    fn run(&self, f: &mut RelaxFunction, cx: &mut FunctionContext<'_>) -> PassResult {
        (self.0)(f, cx)
    }
}

/// A PrimFunc pass made of a function.
#[derive(Clone, Copy, Debug)]
pub struct PrimFuncFn(pub fn(&mut PrimFunc, &mut FunctionContext<'_>) -> PassResult);

impl PrimFuncPass for PrimFuncFn {
    fn run(&self, f: &mut PrimFunc, cx: &mut FunctionContext<'_>) -> PassResult {
        (self.0)(f, cx)
    }
}
