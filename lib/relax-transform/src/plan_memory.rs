//! `plan-memory` (alias `static-plan-block-memory`): storage reuse for the explicit
//! allocations `call-tir-rewrite` made, as TVM's `StaticPlanBlockMemory`
//! (`algorithms.md` §5), with the project's rules on aliases, symbolic sizes and
//! run-time fits (`docs/memory.md`).
//!
//! * [`bounds`]: variable bounds from the function attributes, and byte sizes;
//! * [`tokens`]: phase 1, requests, aliases, reference counts and discards;
//! * [`allocate`]: phase 2, reuse and merging of storages;
//! * [`rewrite`]: phase 3, `R.memory.alloc_storage` / `R.memory.alloc_tensor`;
//! * [`check`]: the self-check run on every planned function;
//! * [`report`]: the memory report of `relax-opt --memory-report`.
//!
//! On a module that still calls `call_tir` (or another destination-passing op), the pass
//! first runs what precedes it in TVM's pipeline, on every Relax function ([`prepare`]):
//! `rewrite-dataflow-reshape`, `to-non-dataflow`, `remove-purity-checking`,
//! `call-tir-rewrite`.

pub mod allocate;
pub mod bounds;
pub mod check;
pub mod report;
pub mod rewrite;
pub mod tokens;

use relax_ir::diag::Diagnostic;
use relax_ir::{AttrValue, Global, Module, RelaxFunction};
use relax_pass::{ModulePass, PassContext, PassResult};

use crate::emit::NameSupply;

relax_pass::declare_pass! {
    /// Registry entry.
    pub INFO: Module "plan-memory" {
        aliases: ["static-plan-block-memory"],
        summary: "plan storage reuse for explicit allocations (runs call-tir-rewrite first when needed)",
        new: |o: PlanMemoryOptions| PlanMemory { check_only: o.check_only, upper_bounds: o.upper_bounds },
    }
    /// The options of `plan-memory`.
    pub struct PlanMemoryOptions {
        pub check_only: bool = false {
            key: "check-only",
            help: "do not plan: only check the plans already in the module (the self-check)",
        },
        pub upper_bounds: bool = true {
            key: "upper-bounds",
            help: "size storages by tir_var_upper_bound (TVM); false: by the run-time values, so memory follows the input",
        },
    }
}

struct PlanMemory {
    check_only: bool,
    upper_bounds: bool,
}

impl ModulePass for PlanMemory {
    fn run(&self, m: &mut Module, cx: &mut PassContext) -> PassResult {
        if self.check_only {
            return check_module(m).map(|()| false);
        }
        let mut changed = false;
        if crate::call_tir_rewrite::has_dps_calls(m) {
            changed |= prepare(m)?;
        }
        let (c, warnings) = plan_module(m, self.upper_bounds)?;
        cx.remarks.extend(warnings);
        Ok(changed | c)
    }
}

/// What TVM's pipeline runs before planning, on every Relax function:
/// `rewrite-dataflow-reshape`, `to-non-dataflow`, `remove-purity-checking`,
/// `call-tir-rewrite`.
pub fn prepare(m: &mut Module) -> Result<bool, Vec<Diagnostic>> {
    let mut changed = false;
    let globals: Vec<Global> = m.live().map(|(g, _)| g).collect();
    for &g in &globals {
        changed |= relax_pass::with_relax_function(m, g, crate::rewrite_dataflow_reshape::rewrite_dataflow_reshape)
            .unwrap_or(false);
        if let Some(f) = m.relax_mut(g) {
            changed |= crate::call_tir_rewrite::make_non_dataflow(f);
            changed |= crate::remove_purity_checking::remove_purity_checking(f);
        }
    }
    Ok(changed | crate::call_tir_rewrite::call_tir_rewrite_module(m)?)
}

/// Runs the self-check ([`check`]) on every Relax function of `m`.
pub fn check_module(m: &Module) -> Result<(), Vec<Diagnostic>> {
    let mut errors = Vec::new();
    for (g, gd) in m.live() {
        if let Some(f) = m.relax(g)
            && let Err(msg) = check::check(f)
        {
            errors.push(Diagnostic::error(f.spans.func, format!("the memory plan of `{}` is unsafe: {msg}", gd.name)));
        }
    }
    if errors.is_empty() { Ok(()) } else { Err(errors) }
}

/// The attribute asking for dynamic outputs to be planned at their upper bound.
pub const PLAN_DYNAMIC_OUTPUT: &str = "relax.memory_plan_dynamic_func_output";

/// Plans every Relax function of `m`; returns whether anything changed and the warnings,
/// or the errors (invalid bound attributes). With `upper_bounds` false the bound
/// attributes are checked but not used: sizes stay symbolic, and each storage is
/// allocated at run time with the size of the values of that call.
pub fn plan_module(m: &mut Module, upper_bounds: bool) -> Result<(bool, Vec<Diagnostic>), Vec<Diagnostic>> {
    let globals: Vec<Global> = m.live().map(|(g, _)| g).collect();
    let mut changed = false;
    let mut warnings = Vec::new();
    let mut errors = Vec::new();
    for g in globals {
        let Some(f) = m.relax(g) else { continue };
        let mut f = f.clone();
        let name = m.globals[g].name.clone();
        match plan_function(m, &mut f, &name, upper_bounds, &mut warnings) {
            Ok(true) => {
                changed = true;
                if let Some(slot) = m.relax_mut(g) {
                    *slot = f;
                }
            }
            Ok(false) => {}
            Err(mut e) => errors.append(&mut e),
        }
    }
    if errors.is_empty() { Ok((changed, warnings)) } else { Err(errors) }
}

/// Plans one function of `m` (a working copy `f`, named `name`), by the upper bounds of
/// its variables or (`upper_bounds` false) symbolically.
pub fn plan_function(
    m: &Module,
    f: &mut RelaxFunction,
    name: &str,
    upper_bounds: bool,
    warnings: &mut Vec<Diagnostic>,
) -> Result<bool, Vec<Diagnostic>> {
    let mut bounds = bounds::read_bounds(f, name, warnings)?;
    if !upper_bounds {
        bounds = bounds::Bounds::default();
    }
    let dynamic = f.func.attrs.get(PLAN_DYNAMIC_OUTPUT).and_then(AttrValue::as_bool) == Some(true);
    let mut names = NameSupply::new();
    let mut todo = vec![f.func.body];
    let mut changed = false;
    while let Some(root) = todo.pop() {
        let unit = tokens::collect(m, f, &bounds, root);
        let an = bounds.analyzer();
        let dataflow_of: Vec<bool> = unit.requests.iter().map(|r| f.blocks[r.block].dataflow).collect();
        let plan = allocate::allocate(f, &unit, &an, &|r| dataflow_of[r]);
        changed |= !plan.assign.is_empty();
        let mut rw = rewrite::Rewriter {
            unit: &unit,
            plan: &plan,
            names: &mut names,
            dynamic_output: if dynamic { Some(&bounds) } else { None },
        };
        if let Err(msg) = rw.run(f) {
            return Err(vec![Diagnostic::error(
                f.spans.func,
                format!("plan-memory: internal error in the plan of `{name}`: {msg}"),
            )]);
        }
        // Local functions are planned on their own, after their enclosing body.
        todo.extend(unit.locals.iter().rev().copied());
    }
    if dynamic {
        f.func.attrs.remove(PLAN_DYNAMIC_OUTPUT);
        changed = true;
    }
    if changed && let Err(msg) = check::check(f) {
        return Err(vec![Diagnostic::error(
            f.spans.func,
            format!("plan-memory: internal error in the plan of `{name}`: {msg}"),
        )]);
    }
    Ok(changed)
}
