//! `schedule-cpu`: default CPU schedules for unscheduled kernels, written as TIR
//! (`docs/codegen.md`).
//!
//! Each PrimFunc with blocks that is not scheduled yet ([`is_unscheduled`]) gets, on the
//! statements of its root block, in this order:
//!
//! 1. `compute_inline` of elementwise producers into their readers ([`inline`]), so a
//!    fused chain of elementwise steps is one expression without intermediate buffers;
//! 2. matmuls whose weight is computed in the kernel (a decode, an `astype`, a
//!    transpose: [`dequant_matmul`]) as a GEMV or a panel GEMM, the weight never
//!    materialized;
//! 3. matmuls over blocks of integer dot products (the kernels of
//!    `quantize-activations`: [`int_dot`]) as one nest, the dot products computed per
//!    block in registers;
//! 4. for each remaining loop nest, the first rule that applies:
//!    * matmul-class reductions ([`matmul`]): cache and register tiling, the fused
//!      epilogue computed from the accumulator tile;
//!    * reductions whose spatial loops come first ([`rules::reduction`]): fused parallel
//!      spatial loops, `decompose_reduction`, the accumulator kept in a register;
//!    * spatial nests ([`rules::spatial`]): fused parallel outer loops, a vectorized
//!      innermost loop.
//!
//! Nests of other shapes stay as they are. The function is marked
//! `"tirx.is_scheduled": True` (TVM 0.25's spelling). Every rule but the dequant GEMV
//! (vector partial sums over `k`) keeps the order in which each value is computed
//! (reductions still run over their reduction loops in order), so the scheduled kernel
//! gives the same bits as the original.
//!
//! Option `vector-bits` (default 256) is the width of the target's vector registers; the
//! driver passes the host's.

mod dequant_matmul;
mod inline;
mod int_dot;
mod matmul;
mod nest;
mod rules;

use relax_ir::{AttrValue, ForKind, PrimFunc, Stmt, StmtData};
use relax_pass::{FunctionContext, PassResult, PrimFuncPass};

use self::nest::{Nest, block_mut};

/// The attribute that marks a scheduled kernel.
pub const SCHEDULED_ATTR: &str = "tirx.is_scheduled";

relax_pass::declare_pass! {
    /// Registry entry.
    pub INFO: PrimFunc "schedule-cpu" {
        summary: "default CPU schedules: parallel outer loops, vectorized inner loops, tiled matmuls",
        new: ScheduleCpu::new,
    }
    /// The options of `schedule-cpu`.
    pub struct ScheduleCpuOptions {
        pub vector_bits: i64 = 256 {
            key: "vector-bits",
            help: "the width of the target's vector registers",
            check: is_vector_width, "a power of two from 8 to 4096",
        },
    }
}

fn is_vector_width(&b: &i64) -> bool {
    (8..=4096).contains(&b) && (b as u64).is_power_of_two()
}

/// The pass.
#[derive(Clone, Copy, Debug)]
pub struct ScheduleCpu {
    /// The width of a vector register.
    pub vector_bits: i64,
}

impl ScheduleCpu {
    /// The pass with `options`.
    pub fn new(options: ScheduleCpuOptions) -> ScheduleCpu {
        ScheduleCpu { vector_bits: options.vector_bits }
    }
}

/// True when a kernel has blocks but neither the `tirx.is_scheduled` attribute nor a
/// parallel, vectorized or unrolled loop.
pub fn is_unscheduled(f: &PrimFunc) -> bool {
    let marked = [SCHEDULED_ATTR, "tir.is_scheduled"].iter().any(|k| match f.attrs.get(k) {
        Some(AttrValue::Bool(b)) => *b,
        Some(v) => v.as_int().is_some_and(|i| i != 0),
        None => false,
    });
    if marked || !f.s_tir {
        return false;
    }
    let mut scheduled = false;
    f.walk(f.body, |_, s| {
        if let StmtData::For { kind: ForKind::Parallel | ForKind::Vectorized | ForKind::Unrolled, .. } = s {
            scheduled = true;
        }
    });
    !scheduled
}

impl PrimFuncPass for ScheduleCpu {
    fn run(&self, f: &mut PrimFunc, _cx: &mut FunctionContext<'_>) -> PassResult {
        Ok(schedule_prim_func(f, self.vector_bits))
    }
}

/// Schedules one PrimFunc when it is unscheduled ([`is_unscheduled`]) and marks it
/// scheduled; returns whether it changed.
pub fn schedule_prim_func(f: &mut PrimFunc, vector_bits: i64) -> bool {
    if !is_unscheduled(f) {
        return false;
    }
    schedule(f, vector_bits);
    f.attrs.set(SCHEDULED_ATTR, AttrValue::Bool(true));
    true
}

/// The statements of a sequence (or the one statement).
fn seq_items(f: &PrimFunc, s: Stmt) -> Vec<Stmt> {
    match &f.stmts[s] {
        StmtData::Seq(v) => v.clone(),
        _ => vec![s],
    }
}

/// Schedules the nests of `f`'s root block.
fn schedule(f: &mut PrimFunc, vector_bits: i64) {
    let root = f.body;
    let (body, mut allocs) = match &f.stmts[root] {
        StmtData::Block(b) if b.iter_vars.is_empty() && b.init.is_none() && b.match_buffers.is_empty() => {
            (b.body, b.alloc_buffers.clone())
        }
        _ => (root, Vec::new()),
    };
    let mut stmts = seq_items(f, body);
    let in_root = body != root;
    if in_root {
        inline::inline_all(f, &mut stmts, &mut allocs);
        dequant_matmul::schedule_all(f, &mut stmts, &mut allocs, vector_bits);
        int_dot::schedule_all(f, &mut stmts, &mut allocs);
    }
    let mut i = 0;
    while i < stmts.len() {
        let ownable: &[relax_ir::Buffer] = if in_root { &allocs } else { &[] };
        if let Some((s, gone)) = matmul::schedule(f, &stmts, i, ownable, vector_bits) {
            if let Some(c) = gone {
                stmts.remove(i + 1);
                allocs.retain(|&b| b != c);
            }
            stmts[i] = s;
        } else if let Some(nest) = Nest::read(f, stmts[i]) {
            let scheduled = match rules::reduction(f, nest.clone()) {
                Some(s) => Some(s),
                None => rules::spatial(f, nest),
            };
            if let Some(s) = scheduled {
                stmts[i] = s;
            }
        }
        i += 1;
    }
    let new_body = if stmts.len() == 1 { stmts[0] } else { f.stmts.push(StmtData::Seq(stmts)) };
    if in_root {
        let b = block_mut(f, root);
        b.body = new_body;
        b.alloc_buffers = allocs;
    } else {
        f.body = new_body;
    }
}
