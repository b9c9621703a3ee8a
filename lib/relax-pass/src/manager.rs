//! The pass manager: resolves a pipeline against the registry, then runs it, verifying
//! after every pass and calling the instrumentation around each one.

use relax_ir::diag::Diagnostic;
use relax_ir::{Global, Module};

use crate::instrument::PassInstrumentation;
use crate::pass::{Anchor, Pass, PassContext};
use crate::pipeline::{Pipeline, PipelineElement};
use crate::registry::PassRegistry;

/// Checks a module after a pass; returns the problems as diagnostics.
pub type Verifier<'a> = Box<dyn Fn(&Module) -> Result<(), Vec<Diagnostic>> + 'a>;

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
    Run { name: &'static str, anchor: Anchor, pass: Box<dyn Pass> },
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
                Step::Run { name, anchor, pass } => match (anchor, only) {
                    (Anchor::Module, _) => {
                        self.run_one(name, "", m, cx, |m, cx| pass.run_module(m, cx))?;
                    }
                    (_, Some(g)) => {
                        let scope = m.globals[g].name.clone();
                        self.run_one(name, &scope, m, cx, |m, cx| pass.run_function(m, g, cx))?;
                    }
                    (anchor, None) => {
                        for g in function_targets(m, *anchor) {
                            let scope = m.globals[g].name.clone();
                            self.run_one(name, &scope, m, cx, |m, cx| pass.run_function(m, g, cx))?;
                        }
                    }
                },
                Step::Nested { anchor: Anchor::Module, steps } => self.run_steps(steps, m, only, cx)?,
                Step::Nested { anchor, steps } => {
                    for g in function_targets(m, *anchor) {
                        self.run_steps(steps, m, Some(g), cx)?;
                    }
                }
            }
        }
        Ok(())
    }

    fn run_one(
        &mut self,
        name: &str,
        scope: &str,
        m: &mut Module,
        cx: &mut PassContext,
        f: impl FnOnce(&mut Module, &mut PassContext) -> Result<bool, Vec<Diagnostic>>,
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
            && let Err(diagnostics) = v(m)
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

fn function_targets(m: &Module, anchor: Anchor) -> Vec<Global> {
    m.print_order().into_iter().filter(|&g| anchor.matches(m, g)).collect()
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
                    if within != Anchor::Module && info.anchor != within {
                        return Err(PipelineError::Invalid(format!(
                            "pass `{}` runs on {} and cannot be nested inside `{}(...)`",
                            info.name,
                            describe(info.anchor),
                            within.name()
                        )));
                    }
                    for (k, _) in &options.0 {
                        if !info.options.iter().any(|o| o.name == k) {
                            return Err(PipelineError::Invalid(format!("pass `{}` has no option `{k}`", info.name)));
                        }
                    }
                    let pass = (info.create)(options)
                        .map_err(|msg| PipelineError::Invalid(format!("pass `{}`: {msg}", info.name)))?;
                    steps.push(Step::Run { name: info.name, anchor: info.anchor, pass });
                } else if let Some(p) = registry.pipeline(name) {
                    if !options.0.is_empty() {
                        return Err(PipelineError::Invalid(format!("pipeline `{name}` takes no options")));
                    }
                    let inner = Pipeline::parse(p.text)
                        .map_err(|e| PipelineError::Invalid(format!("pipeline `{name}`: {e}")))?;
                    steps.extend(resolve(registry, &inner.elements, within, depth + 1)?);
                } else {
                    return Err(PipelineError::Invalid(format!("unknown pass or pipeline `{name}`")));
                }
            }
        }
    }
    Ok(steps)
}

fn describe(a: Anchor) -> &'static str {
    match a {
        Anchor::Module => "the whole module",
        Anchor::RelaxFunction => "Relax functions",
        Anchor::PrimFunc => "PrimFuncs",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pass::{PassOptions, PassResult};
    use crate::registry::{NamedPipeline, PassInfo};

    struct Count;
    impl Pass for Count {
        fn run_module(&self, m: &mut Module, _cx: &mut PassContext) -> PassResult {
            m.attrs
                .set("count", relax_ir::AttrValue::Int(m.attrs.get("count").and_then(|v| v.as_int()).unwrap_or(0) + 1));
            Ok(true)
        }
    }
    struct Fail;
    impl Pass for Fail {
        fn run_module(&self, _m: &mut Module, _cx: &mut PassContext) -> PassResult {
            Err(vec![Diagnostic::error(relax_ir::Span::NONE, "boom")])
        }
    }
    fn count(_: &PassOptions) -> Result<Box<dyn Pass>, String> {
        Ok(Box::new(Count))
    }
    fn fail(_: &PassOptions) -> Result<Box<dyn Pass>, String> {
        Ok(Box::new(Fail))
    }

    fn registry() -> PassRegistry {
        let mut r = PassRegistry::new();
        r.register(PassInfo {
            name: "count",
            aliases: &["tally"],
            summary: "counts",
            anchor: Anchor::Module,
            options: &[],
            create: count,
        })
        .unwrap();
        r.register(PassInfo {
            name: "fail",
            aliases: &[],
            summary: "fails",
            anchor: Anchor::Module,
            options: &[],
            create: fail,
        })
        .unwrap();
        r.register_pipeline(NamedPipeline { name: "twice", summary: "", text: "count,tally" }).unwrap();
        r
    }

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
        assert!(PassManager::new(&r, &Pipeline::parse("relax.function(count)").unwrap()).is_err());
        assert!(PassManager::new(&r, &Pipeline::parse("count{x=1}").unwrap()).is_err());
        let mut dup = registry();
        assert!(
            dup.register(PassInfo {
                name: "tally",
                aliases: &[],
                summary: "",
                anchor: Anchor::Module,
                options: &[],
                create: count
            })
            .is_err()
        );
    }

    #[test]
    fn verifier_failure_names_the_pass() {
        let r = registry();
        let mut pm = PassManager::new(&r, &Pipeline::parse("count").unwrap()).unwrap();
        pm.set_verifier(Box::new(|_m: &Module| Err(vec![Diagnostic::error(relax_ir::Span::NONE, "bad")])));
        let mut m = Module::new();
        match pm.run(&mut m, &mut PassContext::default()) {
            Err(PipelineError::VerifyFailed { pass, .. }) => assert_eq!(pass, "count"),
            other => panic!("{other:?}"),
        }
        let mut pm = PassManager::new(&r, &Pipeline::parse("fail").unwrap()).unwrap();
        assert!(matches!(pm.run(&mut m, &mut PassContext::default()), Err(PipelineError::PassFailed { .. })));
    }
}
