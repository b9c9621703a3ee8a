//! `remove-purity-checking`: the last step before explicit memory, as TVM's
//! `RemovePurityChecking` (`algorithms.md` §4).
//!
//! * Every pure function (local functions included) gets the attribute
//!   `relax.force_pure = True`, so that the explicit allocations and kernel calls
//!   `call-tir-rewrite` inserts may appear in it.
//! * `R.call_pure_packed(f, args...)` and `R.call_inplace_packed(f, args...)` become plain
//!   packed calls `R.call_packed(f, args...)` (same type); `R.invoke_pure_closure`
//!   becomes `R.invoke_closure`. Calls in dataflow blocks are left as they are: a
//!   dataflow block may only hold pure calls (TVM's pipeline runs `to-non-dataflow`
//!   first).

use relax_ir::op::OpRef;
use relax_ir::ops;
use relax_ir::{AttrValue, Attrs, Call, ExprData, RelaxFunction};

use crate::walk::all_blocks;

relax_pass::declare_pass! {
    /// Registry entry.
    pub INFO: RelaxFunction "remove-purity-checking" {
        summary: "mark pure functions relax.force_pure and turn pure packed calls into plain ones",
        run: |f, _| Ok(remove_purity_checking(f)),
    }
}

/// The attribute that lets a pure function hold impure calls.
pub const FORCE_PURE: &str = "relax.force_pure";

/// Runs the pass on one function; returns true if it changed anything.
pub fn remove_purity_checking(f: &mut RelaxFunction) -> bool {
    let mut changed = mark_force_pure(&mut f.func.attrs, f.func.pure);
    // Local functions.
    let mut locals = Vec::new();
    f.for_each_reachable(|e, d| {
        if matches!(d, ExprData::Function(_)) {
            locals.push(e);
        }
    });
    for e in locals {
        if let ExprData::Function(node) = &mut f.exprs[e] {
            let pure = node.pure;
            changed |= mark_force_pure(&mut node.attrs, pure);
        }
    }
    // Calls are binding values (A-normal form); those in dataflow blocks stay pure calls,
    // which is all a dataflow block may hold (TVM runs `to-non-dataflow` first).
    let mut calls = Vec::new();
    for (_, b) in all_blocks(f) {
        if !f.blocks[b].dataflow {
            calls.extend(f.blocks[b].bindings.iter().map(|bd| bd.value));
        }
    }
    for e in calls {
        let ExprData::Call(call) = f.exprs[e].clone() else { continue };
        let ExprData::Op(op) = &f.exprs[call.callee] else { continue };
        let new = match op.id() {
            Some(ops::CALL_PURE_PACKED) | Some(ops::CALL_INPLACE_PACKED) if !call.args.is_empty() => {
                let attrs = if op.is(ops::CALL_PURE_PACKED) { call.attrs.clone() } else { Attrs::new() };
                let args = f.list(call.args).to_vec();
                Call {
                    callee: args[0],
                    args: f.new_list(args[1..].iter().copied()),
                    attrs,
                    sinfo_args: call.sinfo_args,
                }
            }
            Some(ops::INVOKE_PURE_CLOSURE) => {
                let op = OpRef::Known(ops::INVOKE_CLOSURE);
                let callee = f.add_expr(ExprData::Op(op), None);
                Call { callee, ..call }
            }
            _ => continue,
        };
        f.exprs[e] = ExprData::Call(new);
        changed = true;
    }
    changed
}

/// Sets `relax.force_pure` on a pure function; true if it was not set yet.
pub fn mark_force_pure(attrs: &mut Attrs, pure: bool) -> bool {
    if !pure || attrs.get(FORCE_PURE).and_then(AttrValue::as_bool) == Some(true) {
        return false;
    }
    attrs.set(FORCE_PURE, AttrValue::Bool(true));
    true
}
