//! What a pass runs on: the whole module, each Relax function or each PrimFunc.

use relax_ir::{Global, Module};

/// What a pass operates on. The anchor of a registered pass follows from the trait it
/// implements ([`crate::ModulePass`], [`crate::RelaxFunctionPass`],
/// [`crate::PrimFuncPass`]); function-anchored passes run once per function of their
/// kind, and may be nested under `relax.function(...)` / `tir.prim_func(...)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Anchor {
    /// The whole module.
    Module,
    /// Each Relax function.
    RelaxFunction,
    /// Each PrimFunc.
    PrimFunc,
}

impl Anchor {
    /// The name used in pipeline text (`module`, `relax.function`, `tir.prim_func`).
    pub fn name(self) -> &'static str {
        match self {
            Anchor::Module => "module",
            Anchor::RelaxFunction => "relax.function",
            Anchor::PrimFunc => "tir.prim_func",
        }
    }
    /// The anchor named `s`.
    pub fn from_name(s: &str) -> Option<Anchor> {
        match s {
            "module" => Some(Anchor::Module),
            "relax.function" => Some(Anchor::RelaxFunction),
            "tir.prim_func" => Some(Anchor::PrimFunc),
            _ => None,
        }
    }
    /// True when `g` is a function this anchor visits.
    pub fn matches(self, m: &Module, g: Global) -> bool {
        match self {
            Anchor::Module => true,
            Anchor::RelaxFunction => m.relax(g).is_some(),
            Anchor::PrimFunc => m.prim_func(g).is_some(),
        }
    }
    /// What the anchor covers, for messages (`the whole module`, `Relax functions`).
    pub fn describe(self) -> &'static str {
        match self {
            Anchor::Module => "the whole module",
            Anchor::RelaxFunction => "Relax functions",
            Anchor::PrimFunc => "PrimFuncs",
        }
    }
}
