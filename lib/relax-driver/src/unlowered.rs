//! Whether a module is ready for the engines and code generators: op calls that nothing
//! will run are errors at compile time (`relax-translate`, the JIT's compile), naming the
//! op and its source line, instead of a run-time surprise.
//!
//! * [`check_lowered`]: with `--no-default-pipeline` the module must already be lowered; a
//!   call of an op that `legalize-ops` lowers (a kernel, an expansion or a packed
//!   function) is an error naming the first one.
//! * [`check_runnable`]: after the default pipeline, a call of an op that neither the
//!   pipeline lowered nor the runtime can run (`relax_runtime::ops::route` says
//!   `Unsupported`: no reference kernel, no legalization, no builtin; an op outside the
//!   op table), and a call of a `relax.run.*` packed function the runtime does not
//!   provide, are errors.

use relax_ir::op::OpRef;
use relax_ir::{Diagnostic, Expr, ExprData, Module, RelaxFunction, ops};
use relax_runtime::lowering::{Lowered, OpLowering};
use relax_runtime::ops::{Route, route};

use crate::lowering::Legalize;

/// Every reachable call of `m`'s Relax functions, with its function's name.
fn calls(m: &Module) -> impl Iterator<Item = (&str, &RelaxFunction, Expr)> {
    m.live().filter_map(|(g, gd)| Some((gd.name.as_str(), m.relax(g)?))).flat_map(|(name, f)| {
        f.all_seqs()
            .into_iter()
            .flat_map(move |s| f.seq(s).blocks.iter().flat_map(move |&b| &f.blocks[b].bindings))
            .filter(move |bd| matches!(f.exprs[bd.value], ExprData::Call(_)))
            .map(move |bd| (name, f, bd.value))
    })
}

/// The callee of the call `e`.
fn callee(f: &RelaxFunction, e: Expr) -> Option<&ExprData> {
    match &f.exprs[e] {
        ExprData::Call(c) => Some(&f.exprs[c.callee]),
        _ => None,
    }
}

/// The packed function the call `e` calls by name: `R.call_packed("f", ...)`, or the first
/// argument of `R.call_pure_packed` / `R.call_inplace_packed` / `R.call_dps_packed`.
fn packed_callee(f: &RelaxFunction, e: Expr) -> Option<&str> {
    let ExprData::Call(c) = &f.exprs[e] else { return None };
    let target = match &f.exprs[c.callee] {
        ExprData::ExternFunc(name) => return Some(name),
        ExprData::Op(op) if op.is_one_of(&[ops::CALL_PURE_PACKED, ops::CALL_INPLACE_PACKED, ops::CALL_DPS_PACKED]) => {
            *f.list(c.args).first()?
        }
        _ => return None,
    };
    match &f.exprs[target] {
        ExprData::ExternFunc(name) => Some(name),
        _ => None,
    }
}

/// `R.add` for `relax.add`.
fn op_text(op: &OpRef) -> String {
    format!("R.{}", op.name().strip_prefix("relax.").unwrap_or(op.name()))
}

/// The first call of an op that the default pipeline would lower: an error for a module
/// given to `relax-translate --no-default-pipeline`.
pub fn check_lowered(m: &Module) -> Result<(), Vec<Diagnostic>> {
    for (name, f, e) in calls(m) {
        let Some(ExprData::Op(op)) = callee(f, e) else { continue };
        let lowers = match op.id() {
            Some(id) => Legalize.lowering_of(id) != Lowered::No,
            None => true,
        };
        if lowers {
            let d = Diagnostic::error(*f.spans.exprs.get(e), format!("`{}` in `{name}` is not lowered", op_text(op)))
                .with_label("a Relax op left in the module")
                .with_note(
                    "`--no-default-pipeline` needs a lowered module: run `relax-opt --legalize-ops` (or the \
                     whole pipeline) first, or leave the default pipeline on",
                );
            return Err(vec![d]);
        }
    }
    Ok(())
}

/// Calls that nothing can run: errors, one per call.
pub fn check_runnable(m: &Module) -> Result<(), Vec<Diagnostic>> {
    let mut out = Vec::new();
    for (name, f, e) in calls(m) {
        let at = *f.spans.exprs.get(e);
        if let Some(ExprData::Op(op)) = callee(f, e) {
            let unsupported = op.id().is_none_or(|id| route(id, &Legalize) == Route::Unsupported);
            if unsupported {
                let why = match op.id() {
                    None => "it is not in the op table, so it has no legalization".to_string(),
                    Some(id) => relax_transform::legalize::unsupported::NOT_LEGALIZED
                        .iter()
                        .find(|(o, _)| *o == id)
                        .map_or("it has no legalization".to_string(), |(_, r)| r.to_string()),
                };
                out.push(
                    Diagnostic::error(at, format!("`{}` in `{name}` cannot be compiled for this target", op_text(op)))
                        .with_label("no legalization, reference kernel or runtime function")
                        .with_note(why),
                );
            }
        }
        if let Some(packed) = packed_callee(f, e).filter(|p| p.starts_with("relax.run."))
            && !relax_runtime::builtins::NAMES.contains(&packed)
        {
            out.push(Diagnostic::error(
                at,
                format!("`{name}` calls the packed function `{packed}`, which the runtime does not provide"),
            ));
        }
    }
    if out.is_empty() { Ok(()) } else { Err(out) }
}

#[cfg(test)]
mod tests {
    /// Every packed function `legalize-ops` lowers an op to is one the runtime provides.
    #[test]
    fn every_packed_lowering_is_a_builtin() {
        for (op, name) in relax_transform::legalize::unsupported::PACKED {
            assert!(relax_runtime::builtins::NAMES.contains(name), "{op:?} lowers to `{name}`, not a builtin");
        }
    }
}
