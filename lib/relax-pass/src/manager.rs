//! The pass manager: resolves a pipeline against the registry, then runs it, verifying
//! after every pass what the pass could change and calling the instrumentation around
//! each one.
//!
//! A module pass runs on the module; a function pass runs on each function of its kind
//! in printing order (or on the one function of an enclosing `relax.function(...)` /
//! `tir.prim_func(...)`), taken out of the module for the run
//! ([`crate::context::run_on_relax_function`]). After a module pass the verifier checks
//! the whole module ([`VerifyScope::Module`]); after a function pass only that function
//! ([`VerifyScope::Function`]), since the pass could change nothing else.

use relax_ir::diag::Diagnostic;
use relax_ir::{Global, Module};

use crate::anchor::Anchor;
use crate::context::{PassContext, run_on_prim_func, run_on_relax_function};
use crate::instrument::PassInstrumentation;
use crate::pass::{PassKind, PassResult};
use crate::pipeline::{Pipeline, PipelineElement};
use crate::registry::PassRegistry;

/// What the verifier checks after a pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VerifyScope {
    /// The whole module (after a module pass).
    Module,
    /// One function: its handles, the module rules that concern it and its body (after
    /// a function pass on it; `relax_ir::verify::verify_function`).
    Function(Global),
}

/// Checks a module, or one function of it, after a pass; returns the problems as
/// diagnostics.
pub type Verifier<'a> = Box<dyn Fn(&Module, VerifyScope) -> Result<(), Vec<Diagnostic>> + 'a>;

/// Why a pipeline did not complete.
#[derive(Debug)]
pub enum PipelineError {
    /// The pipeline text names an unknown pass or nests it wrongly, or options are bad.
    Invalid(String),
    /// A pass reported errors.
    PassFailed {
        /// The pass.
        pass: String,
        /// Its diagnostics.
        diagnostics: Vec<Diagnostic>,
    },
    /// The verifier rejected the module after a pass.
    VerifyFailed {
        /// The pass after which verification failed.
        pass: String,
        /// The verifier's diagnostics.
        diagnostics: Vec<Diagnostic>,
    },
}

enum Step {
    Run { name: &'static str, pass: PassKind },
    Nested { anchor: Anchor, steps: Vec<Step> },
}

/// Runs a resolved pipeline.
pub struct PassManager<'a> {
    steps: Vec<Step>,
    /// Verify after every pass (on by default).
    pub verify_each: bool,
    verifier: Option<Verifier<'a>>,
    instruments: Vec<&'a mut dyn PassInstrumentation>,
}

impl<'a> PassManager<'a> {
    /// Resolves `pipeline` against `registry`: every name must be a pass or a named
    /// pipeline, options must be accepted by the pass, and passes nested under an anchor
    /// must be anchored on that kind of function.
    pub fn new(registry: &PassRegistry, pipeline: &Pipeline) -> Result<PassManager<'a>, PipelineError> {
        let steps = resolve(registry, &pipeline.elements, Anchor::Module, 0)?;
        Ok(PassManager { steps, verify_each: true, verifier: None, instruments: Vec::new() })
    }
    /// Sets the verifier run after each pass.
    pub fn set_verifier(&mut self, v: Verifier<'a>) {
        self.verifier = Some(v);
    }
    /// Adds an instrumentation.
    pub fn add_instrumentation(&mut self, i: &'a mut dyn PassInstrumentation) {
        self.instruments.push(i);
    }
    /// The canonical names of the passes that will run, in order (nested ones included).
    pub fn pass_names(&self) -> Vec<&'static str> {
        fn walk(steps: &[Step], out: &mut Vec<&'static str>) {
            for s in steps {
                match s {
                    Step::Run { name, .. } => out.push(name),
                    Step::Nested { steps, .. } => walk(steps, out),
                }
            }
        }
        let mut out = Vec::new();
        walk(&self.steps, &mut out);
        out
    }
    /// Runs the pipeline on `m`.
    pub fn run(&mut self, m: &mut Module, cx: &mut PassContext) -> Result<(), PipelineError> {
        let steps = std::mem::take(&mut self.steps);
        let r = self.run_steps(&steps, m, None, cx);
        self.steps = steps;
        r
    }

    fn run_steps(
        &mut self,
        steps: &[Step],
        m: &mut Module,
        only: Option<Global>,
        cx: &mut PassContext,
    ) -> Result<(), PipelineError> {
        for step in steps {
            match step {
                Step::Run { name, pass: PassKind::Module(p) } => {
                    self.run_one(name, "", VerifyScope::Module, m, cx, |m, cx| p.run(m, cx))?;
                }
                Step::Run { name, pass: PassKind::RelaxFunction(p) } => {
                    for g in targets(m, Anchor::RelaxFunction, only) {
                        self.run_on(name, g, m, cx, |m, cx| run_on_relax_function(p.as_ref(), m, g, cx))?;
                    }
                }
                Step::Run { name, pass: PassKind::PrimFunc(p) } => {
                    for g in targets(m, Anchor::PrimFunc, only) {
                        self.run_on(name, g, m, cx, |m, cx| run_on_prim_func(p.as_ref(), m, g, cx))?;
                    }
                }
                Step::Nested { anchor: Anchor::Module, steps } => self.run_steps(steps, m, only, cx)?,
                Step::Nested { anchor, steps } => {
                    for g in targets(m, *anchor, None) {
                        self.run_steps(steps, m, Some(g), cx)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Runs a function pass on `g`, verifying `g` alone afterwards.
    fn run_on(
        &mut self,
        name: &str,
        g: Global,
        m: &mut Module,
        cx: &mut PassContext,
        f: impl FnOnce(&mut Module, &mut PassContext) -> PassResult,
    ) -> Result<(), PipelineError> {
        let scope = m.globals[g].name.clone();
        self.run_one(name, &scope, VerifyScope::Function(g), m, cx, f)
    }

    fn run_one(
        &mut self,
        name: &str,
        scope: &str,
        verify: VerifyScope,
        m: &mut Module,
        cx: &mut PassContext,
        f: impl FnOnce(&mut Module, &mut PassContext) -> PassResult,
    ) -> Result<(), PipelineError> {
        for i in self.instruments.iter_mut() {
            i.before_pass(name, scope, m);
        }
        let changed = match f(m, cx) {
            Ok(c) => c,
            Err(diagnostics) => {
                for i in self.instruments.iter_mut() {
                    i.after_pass_failed(name, scope, m);
                }
                return Err(PipelineError::PassFailed { pass: name.to_string(), diagnostics });
            }
        };
        if self.verify_each
            && let Some(v) = &self.verifier
            && let Err(diagnostics) = v(m, verify)
        {
            for i in self.instruments.iter_mut() {
                i.after_pass_failed(name, scope, m);
            }
            return Err(PipelineError::VerifyFailed { pass: name.to_string(), diagnostics });
        }
        for i in self.instruments.iter_mut() {
            i.after_pass(name, scope, m, changed);
        }
        Ok(())
    }
}

/// The functions a function pass of `anchor` runs on: `only` when nested under an anchor
/// (resolution checked that it is of the pass's kind), else every function of that kind
/// in printing order.
fn targets(m: &Module, anchor: Anchor, only: Option<Global>) -> Vec<Global> {
    match only {
        Some(g) => vec![g],
        None => m.print_order().into_iter().filter(|&g| anchor.matches(m, g)).collect(),
    }
}

const MAX_EXPANSION_DEPTH: usize = 16;

fn resolve(
    registry: &PassRegistry,
    elements: &[PipelineElement],
    within: Anchor,
    depth: usize,
) -> Result<Vec<Step>, PipelineError> {
    if depth > MAX_EXPANSION_DEPTH {
        return Err(PipelineError::Invalid("named pipelines expand into themselves".to_string()));
    }
    let mut steps = Vec::new();
    for e in elements {
        match e {
            PipelineElement::Nested { anchor, elements } => {
                if within != Anchor::Module && *anchor != within {
                    return Err(PipelineError::Invalid(format!(
                        "`{}(...)` cannot be nested inside `{}(...)`",
                        anchor.name(),
                        within.name()
                    )));
                }
                steps.push(Step::Nested { anchor: *anchor, steps: resolve(registry, elements, *anchor, depth)? });
            }
            PipelineElement::Pass { name, options } => {
                if let Some(info) = registry.lookup(name) {
                    if within != Anchor::Module && info.anchor() != within {
                        return Err(PipelineError::Invalid(format!(
                            "pass `{}` runs on {} and cannot be nested inside `{}(...)`",
                            info.name,
                            info.anchor().describe(),
                            within.name()
                        )));
                    }
                    let pass = info.create(options).map_err(PipelineError::Invalid)?;
                    steps.push(Step::Run { name: info.name, pass });
                } else if let Some(p) = registry.pipeline(name) {
                    if !options.0.is_empty() {
                        return Err(PipelineError::Invalid(format!("pipeline `{name}` takes no options")));
                    }
                    let inner = Pipeline::parse(p.text)
                        .map_err(|e| PipelineError::Invalid(format!("pipeline `{name}`: {e}")))?;
                    steps.extend(resolve(registry, &inner.elements, within, depth + 1)?);
                } else {
                    let hint = registry.did_you_mean(name);
                    return Err(PipelineError::Invalid(format!("unknown pass or pipeline `{name}`{hint}")));
                }
            }
        }
    }
    Ok(steps)
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;

    use super::*;
    use crate::context::FunctionContext;
    use crate::registry::{NamedPipeline, PassInfo};

    fn count(m: &mut Module, _cx: &mut PassContext) -> PassResult {
        m.attrs.set("count", relax_ir::AttrValue::Int(m.attrs.get("count").and_then(|v| v.as_int()).unwrap_or(0) + 1));
        Ok(true)
    }
    fn fail(_m: &mut Module, _cx: &mut PassContext) -> PassResult {
        Err(vec![Diagnostic::error(relax_ir::Span::NONE, "boom")])
    }
    fn mark(f: &mut relax_ir::RelaxFunction, cx: &mut FunctionContext<'_>) -> PassResult {
        let n = cx.module().live().count() as i64;
        f.func.attrs.set("globals", relax_ir::AttrValue::Int(n));
        Ok(true)
    }

    crate::declare_pass! {
        /// Counts.
        COUNT: Module "count" { aliases: ["tally"], summary: "counts", run: count }
    }
    crate::declare_pass! {
        /// Fails.
        FAIL: Module "fail" { summary: "fails", run: fail }
    }
    crate::declare_pass! {
        /// Marks each Relax function.
        MARK: RelaxFunction "mark" { summary: "marks", run: mark }
    }

    fn registry() -> PassRegistry {
        let mut r = PassRegistry::new();
        r.register(COUNT).unwrap();
        r.register(FAIL).unwrap();
        r.register(MARK).unwrap();
        r.register_pipeline(NamedPipeline { name: "twice", summary: "", text: "count,tally" }).unwrap();
        r
    }

    const SRC: &str = r#"
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def k(A: T.Buffer((T.int64(4),), "float32")):
        A[T.int64(0)] = T.float32(1.0)

    @R.function
    def f(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        return x

    @R.function
    def main(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        return x
"#;

    #[test]
    fn runs_in_order_with_aliases_and_pipelines() {
        let r = registry();
        let mut pm = PassManager::new(&r, &Pipeline::parse("count,twice").unwrap()).unwrap();
        assert_eq!(pm.pass_names(), ["count", "count", "count"]);
        let mut m = Module::new();
        pm.run(&mut m, &mut PassContext::default()).unwrap();
        assert_eq!(m.attrs.get("count").and_then(|v| v.as_int()), Some(3));
    }

    #[test]
    fn rejects_bad_pipelines() {
        let r = registry();
        assert!(PassManager::new(&r, &Pipeline::parse("nope").unwrap()).is_err());
        let Err(PipelineError::Invalid(msg)) = PassManager::new(&r, &Pipeline::parse("relax.function(count)").unwrap())
        else {
            panic!("a module pass under a function anchor")
        };
        assert_eq!(msg, "pass `count` runs on the whole module and cannot be nested inside `relax.function(...)`");
        assert!(PassManager::new(&r, &Pipeline::parse("tir.prim_func(mark)").unwrap()).is_err());
        let Err(PipelineError::Invalid(msg)) = PassManager::new(&r, &Pipeline::parse("count{x=1}").unwrap()) else {
            panic!("an unknown option")
        };
        assert_eq!(msg, "pass `count` has no option `x`: it takes no options");
        let mut dup = registry();
        assert!(dup.register(PassInfo { name: "tally", ..COUNT }).is_err());
    }

    #[test]
    fn verifies_what_the_pass_could_change() {
        let r = registry();
        let scopes = RefCell::new(Vec::new());
        let mut m = relax_parser::parse_module(SRC).expect("parses");
        let (f, main) = (m.lookup("f").unwrap(), m.lookup("main").unwrap());
        let mut pm = PassManager::new(&r, &Pipeline::parse("mark,count,relax.function(mark)").unwrap()).unwrap();
        pm.set_verifier(Box::new(|_: &Module, scope| {
            scopes.borrow_mut().push(scope);
            Ok(())
        }));
        pm.run(&mut m, &mut PassContext::default()).unwrap();
        drop(pm);
        use VerifyScope::{Function, Module as Whole};
        assert_eq!(*scopes.borrow(), [Function(f), Function(main), Whole, Function(f), Function(main)]);
        // The pass saw every global (its own function as a placeholder), and the function
        // is back in the module.
        assert_eq!(m.relax(main).and_then(|f| f.func.attrs.get("globals")).and_then(|v| v.as_int()), Some(3));
        relax_ir::verify::verify_module(&m).expect("verifies");

        // `verify_each = false`: no verification.
        scopes.borrow_mut().clear();
        let mut pm = PassManager::new(&r, &Pipeline::parse("mark,count").unwrap()).unwrap();
        pm.verify_each = false;
        pm.set_verifier(Box::new(|_: &Module, scope| {
            scopes.borrow_mut().push(scope);
            Ok(())
        }));
        pm.run(&mut m, &mut PassContext::default()).unwrap();
        drop(pm);
        assert!(scopes.borrow().is_empty());
    }

    #[test]
    fn verifier_failure_names_the_pass() {
        let r = registry();
        let mut pm = PassManager::new(&r, &Pipeline::parse("count").unwrap()).unwrap();
        pm.set_verifier(Box::new(|_m: &Module, _| Err(vec![Diagnostic::error(relax_ir::Span::NONE, "bad")])));
        let mut m = Module::new();
        match pm.run(&mut m, &mut PassContext::default()) {
            Err(PipelineError::VerifyFailed { pass, .. }) => assert_eq!(pass, "count"),
            other => panic!("{other:?}"),
        }
        let mut pm = PassManager::new(&r, &Pipeline::parse("fail").unwrap()).unwrap();
        assert!(matches!(pm.run(&mut m, &mut PassContext::default()), Err(PipelineError::PassFailed { .. })));
    }
}
