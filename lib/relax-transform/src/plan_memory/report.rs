//! The memory report of `relax-opt --memory-report` (format in `docs/memory.md`).
//!
//! It describes the module as it is after the pipeline, one paragraph per Relax
//! function:
//!
//! * **tensors**: every tensor the function allocates (`R.builtin.alloc_tensor`,
//!   `R.memory.alloc_tensor`, `R.vm.alloc_tensor`, and the fresh outputs of `call_tir`
//!   and its siblings that are not rewritten yet), and the **naive total**: their bytes
//!   summed, as if each had an allocation of its own;
//! * **storages**: the allocations that really happen: every `alloc_storage`, plus every
//!   allocation that still allocates by itself (`R.builtin.alloc_tensor`, unrewritten
//!   DPS outputs); storages inside `if` branches (planning's run-time fit) are counted
//!   apart, since they are only allocated when the branch runs;
//! * **planned bytes**: the storages' bytes summed (the worst case: branches included).
//!
//! Byte counts print as simplified symbolic formulas, then at the upper bounds of the
//! function's `tir_var_upper_bound` attribute.

use std::fmt::Write;

use relax_ir::arith::Analyzer;
use relax_ir::ops;
use relax_ir::{BinOp, ExprData, Global, Module, PrimExpr, RelaxFunction, TensorShape, TyData};

use super::bounds::{Bounds, read_bounds, upper_bound_dim};

/// The figures of one function.
#[derive(Clone, Debug)]
pub struct FunctionMemory {
    /// The function's name.
    pub name: String,
    /// Tensors allocated.
    pub tensors: usize,
    /// Tensors whose size is not known.
    pub unknown: usize,
    /// Their bytes, summed (simplified).
    pub naive: String,
    /// The naive total at the upper bounds.
    pub naive_ub: String,
    /// Storages outside `if` branches (`alloc_storage` and self-allocating tensors).
    pub storages: usize,
    /// Of which allocate by themselves (not planned).
    pub unplanned: usize,
    /// Storages inside `if` branches.
    pub conditional: usize,
    /// Storage bytes, summed (simplified).
    pub planned: String,
    /// The planned bytes at the upper bounds.
    pub planned_ub: String,
}

/// The report of every Relax function of `m`, as text.
pub fn memory_report(m: &Module) -> String {
    let mut out = String::new();
    for g in m.print_order() {
        if let Some(r) = function_memory(m, g) {
            let _ = writeln!(out, "memory report for `{}`:", r.name);
            let _ = writeln!(
                out,
                "  tensors:  {} allocated{}, naive total {} bytes (at the upper bounds: {})",
                r.tensors,
                if r.unknown > 0 { format!(" ({} of unknown size)", r.unknown) } else { String::new() },
                r.naive,
                r.naive_ub
            );
            let _ = writeln!(
                out,
                "  storages: {} ({} not planned){}",
                r.storages,
                r.unplanned,
                if r.conditional > 0 {
                    format!(", plus {} allocated only when a run-time size check fails", r.conditional)
                } else {
                    String::new()
                }
            );
            let _ = writeln!(out, "  planned:  {} bytes (at the upper bounds: {})", r.planned, r.planned_ub);
        }
    }
    out
}

/// The figures of the Relax function `g`.
pub fn function_memory(m: &Module, g: Global) -> Option<FunctionMemory> {
    let f0 = m.relax(g)?;
    let mut f = f0.clone();
    let name = m.globals[g].name.clone();
    let bounds = read_bounds(&f, &name, &mut Vec::new()).unwrap_or_default();
    let mut tensors = 0;
    let mut unknown = 0;
    let mut storages = 0;
    let mut unplanned = 0;
    let mut conditional = 0;
    let mut naive: Vec<PrimExpr> = Vec::new();
    let mut planned: Vec<PrimExpr> = Vec::new();
    // The branches of `if`s: their allocations are conditional.
    let mut branches = std::collections::HashSet::new();
    f.for_each_reachable(|_, d| {
        if let ExprData::If { then_branch, else_branch, .. } = d {
            branches.extend([*then_branch, *else_branch]);
        }
    });
    for loc in f.all_seqs() {
        let nested = branches.contains(&loc);
        for b in f.seq(loc).blocks.clone() {
            for bd in f.blocks[b].bindings.clone() {
                let ExprData::Call(call) = f.exprs[bd.value].clone() else { continue };
                let Some(op) = f.callee_op(&call) else { continue };
                let ty = f.ty_of(bd.value);
                match op {
                    ops::BUILTIN_ALLOC_TENSOR | ops::MEMORY_ALLOC_TENSOR | ops::VM_ALLOC_TENSOR => {
                        tensors += 1;
                        let bytes = ty.and_then(|t| tensor_bytes(&mut f, t));
                        match bytes {
                            Some(x) => naive.push(x),
                            None => unknown += 1,
                        }
                        if op == ops::BUILTIN_ALLOC_TENSOR {
                            if nested {
                                conditional += 1;
                            } else {
                                storages += 1;
                                unplanned += 1;
                            }
                            planned.extend(bytes);
                        }
                    }
                    ops::MEMORY_ALLOC_STORAGE | ops::VM_ALLOC_STORAGE => {
                        if nested {
                            conditional += 1;
                        } else {
                            storages += 1;
                        }
                        let size = f.list(call.args).first().and_then(|&a| match &f.exprs[a] {
                            ExprData::Shape(d) if d.len() == 1 => Some(d[0]),
                            _ => f.ty_of(a).and_then(|t| f.pool.ty(t).dims().and_then(|d| d.first().copied())),
                        });
                        planned.extend(size);
                    }
                    ops::CALL_TIR | ops::CALL_TIR_INPLACE | ops::CALL_DPS_PACKED => {
                        let inplace: Vec<i64> =
                            call.attrs.get("inplace_indices").and_then(|v| v.as_int_list()).unwrap_or_default();
                        let mut leaves = Vec::new();
                        if let Some(t) = ty {
                            tensor_leaves(&f, t, &mut leaves);
                        }
                        for (i, t) in leaves.into_iter().enumerate() {
                            if op == ops::CALL_TIR_INPLACE && inplace.get(i).is_some_and(|&x| x >= 0) {
                                continue;
                            }
                            tensors += 1;
                            if nested {
                                conditional += 1;
                            } else {
                                storages += 1;
                                unplanned += 1;
                            }
                            match tensor_bytes(&mut f, t) {
                                Some(x) => {
                                    naive.push(x);
                                    planned.push(x);
                                }
                                None => unknown += 1,
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    let (naive, naive_ub) = total(&mut f, &bounds, &naive);
    let (planned, planned_ub) = total(&mut f, &bounds, &planned);
    Some(FunctionMemory {
        name,
        tensors,
        unknown,
        naive,
        naive_ub,
        storages,
        unplanned,
        conditional,
        planned,
        planned_ub,
    })
}

fn tensor_leaves(f: &RelaxFunction, t: relax_ir::Ty, out: &mut Vec<relax_ir::Ty>) {
    match f.pool.ty(t) {
        TyData::Tensor { .. } => out.push(t),
        TyData::Tuple(fields) => fields.iter().for_each(|&x| tensor_leaves(f, x, out)),
        _ => {}
    }
}

/// Exact bytes of a tensor type, when its shape and dtype are known.
fn tensor_bytes(f: &mut RelaxFunction, t: relax_ir::Ty) -> Option<PrimExpr> {
    let TyData::Tensor { shape: TensorShape::Dims(dims), dtype, .. } = f.pool.ty(t).clone() else { return None };
    if dtype.is_void() {
        return None;
    }
    Some(super::bounds::exact_bytes(&mut f.pool, &dims, dtype))
}

/// The sum of `terms`, simplified and printed, and the same at the upper bounds.
fn total(f: &mut RelaxFunction, bounds: &Bounds, terms: &[PrimExpr]) -> (String, String) {
    let mut acc = f.pool.i64(0);
    for &t in terms {
        acc = f.pool.binary(BinOp::Add, acc, t).unwrap_or(acc);
    }
    let an = Analyzer::new();
    let simple = an.simplify(&mut f.pool, acc);
    let text = relax_ir::printer::print_prim_in(&f.pool, simple);
    let bounded = bounds.analyzer();
    let ub = upper_bound_dim(f, &bounded, bounds, simple);
    let ub = an.simplify(&mut f.pool, ub);
    let ub_text = if f.pool.as_int(ub).is_none() && ub == simple {
        "unbounded".to_string()
    } else {
        relax_ir::printer::print_prim_in(&f.pool, ub)
    };
    (text, ub_text)
}
