//! The `Pass` trait and what a pass sees while it runs.

use relax_ir::diag::Diagnostic;
use relax_ir::{Global, Module};

/// What a pass operates on; function-anchored passes run once per function of their
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
}

/// Options given to a pass in pipeline text: `fuse-ops{max-depth=8}`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PassOptions(pub Vec<(String, String)>);

impl PassOptions {
    /// The raw value of an option.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }
}

/// What a pass run reports: whether it changed the module, or the errors that stopped it.
pub type PassResult = Result<bool, Vec<Diagnostic>>;

/// State shared by the passes of one pipeline run.
#[derive(Debug, Default)]
pub struct PassContext {
    /// Optimization remarks and warnings emitted by passes (not errors).
    pub remarks: Vec<Diagnostic>,
    /// Names of passes (`fuse-ops`) whose remarks were requested (`--remarks=NAME`).
    pub remarks_enabled: Vec<String>,
}

impl PassContext {
    /// True when remarks of `pass` were requested.
    pub fn wants_remarks(&self, pass: &str) -> bool {
        self.remarks_enabled.iter().any(|p| p == pass || p == "all")
    }
}

/// A transformation of the module.
///
/// A pass keeps no mutable state between runs. Function-anchored passes implement
/// [`Pass::run_function`]; the manager calls it for every function of the anchor's kind.
/// Module passes implement [`Pass::run_module`].
pub trait Pass: Send + Sync {
    /// Runs on the whole module (module-anchored passes).
    fn run_module(&self, m: &mut Module, cx: &mut PassContext) -> PassResult {
        let _ = (m, cx);
        Ok(false)
    }
    /// Runs on one function (function-anchored passes).
    fn run_function(&self, m: &mut Module, g: Global, cx: &mut PassContext) -> PassResult {
        let _ = (m, g, cx);
        Ok(false)
    }
}

/// A module pass made of a function, for passes without options or state: the
/// registry entry's factory is `|_| Ok(Box::new(ModuleFn(run)))`, so a pass file needs no
/// type of its own.
#[derive(Clone, Copy, Debug)]
pub struct ModuleFn(pub fn(&mut Module, &mut PassContext) -> PassResult);

impl Pass for ModuleFn {
    fn run_module(&self, m: &mut Module, cx: &mut PassContext) -> PassResult {
        (self.0)(m, cx)
    }
}

/// A function-anchored pass made of a function ([`Pass::run_function`]), as
/// [`ModuleFn`] is for module passes: `|_| Ok(Box::new(FunctionFn(run)))`.
#[derive(Clone, Copy, Debug)]
pub struct FunctionFn(pub fn(&mut Module, Global, &mut PassContext) -> PassResult);

impl Pass for FunctionFn {
    fn run_function(&self, m: &mut Module, g: Global, cx: &mut PassContext) -> PassResult {
        (self.0)(m, g, cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn function_adapters_run_their_function() {
        let mut m = Module::default();
        let g = m.add("f", relax_ir::Func::Unresolved);
        let mut cx = PassContext::default();
        let module_pass: Box<dyn Pass> = Box::new(ModuleFn(|_, cx| {
            cx.remarks.push(Diagnostic::remark(relax_ir::Span::NONE, "ran"));
            Ok(true)
        }));
        assert_eq!(module_pass.run_module(&mut m, &mut cx), Ok(true));
        assert_eq!(cx.remarks.len(), 1);
        let function_pass: Box<dyn Pass> = Box::new(FunctionFn(|m, g, _| Ok(m.globals[g].name == "f")));
        // A function pass does nothing as a module pass, and the reverse.
        assert_eq!(function_pass.run_module(&mut m, &mut cx), Ok(false));
        assert_eq!(module_pass.run_function(&mut m, g, &mut cx), Ok(false));
        assert_eq!(function_pass.run_function(&mut m, g, &mut cx), Ok(true));
    }
}
