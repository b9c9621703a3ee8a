//! `fuse-ops` (TVM's `FuseOps`, `algorithms.md` §2): groups the bindings of dataflow
//! blocks into private `Primitive` Relax functions named `fused_...`, which `fuse-tir`
//! then turns into one PrimFunc each. `docs/fusion.md` describes the rules.
//!
//! For every Relax function that is neither `Primitive` nor `Codegen`, in name order:
//! 1. [`graph`]: the dataflow graph of the function body (parameters and bindings; each
//!    `call_tir` has its kernel's `op_pattern`);
//! 2. [`partition`]: the post-dominator tree and the three fusion phases, with the
//!    `max-depth` limit on the size of a group;
//! 3. [`rewrite`] and [`function`]: every group of more than one binding becomes a
//!    function (its free operands as parameters, the symbolic variables its parameters
//!    do not define as a last `tir_vars: R.Shape([...])` parameter, all symbolic
//!    variables its own), added to the module unless an equal one is there ([`relax_ir::structural`]),
//!    and is called at the place of its last binding.
//!
//! Nothing crosses a block boundary. **Project rule**: the dataflow blocks of `if`
//! branches and local functions are fused too, each sequence with a graph of its own
//! (TVM skips or rejects them).
//!
//! With `--remarks=fuse-ops`, every edge between two bindings that stayed apart gets a
//! remark naming both bindings and the rule ([`remarks`]).

pub mod function;
pub mod graph;
pub mod partition;
pub mod remarks;
pub mod rewrite;

use std::collections::HashMap;

use relax_ir::{Diagnostic, Func, Global, Module};
use relax_pass::{ModulePass, PassContext, PassResult};

/// The pass name, as remarks are requested (`--remarks=fuse-ops`).
pub const NAME: &str = INFO.name;

/// TVM's `zero` pipeline (`relax.get_pipeline("zero")`): lowering and fusion.
pub const ZERO_PIPELINE: relax_pass::registry::NamedPipeline = relax_pass::registry::NamedPipeline {
    name: "zero",
    summary: "legalize, annotate op patterns, fold constants, fuse ops and fuse TIR (TVM's zero pipeline)",
    text: "legalize-ops,annotate-tir-op-pattern,fold-constant,fuse-ops,fuse-tir",
};

relax_pass::declare_pass! {
    /// Registry entry.
    pub INFO: Module "fuse-ops" {
        summary: "group the bindings of dataflow blocks into Primitive functions by operator pattern",
        new: FuseOps::new,
    }
    /// The options of `fuse-ops`.
    pub struct FuseOpsOptions {
        /// TVM's `relax.FuseOps.max_depth`.
        pub max_depth: usize = 256 { key: "max-depth", help: "the largest number of bindings in one group" },
        pub opt_level: usize = 2 { key: "opt-level", help: "0 disables fusion" },
        pub matmul_operands: bool = false { key: "matmul-operands", help: "fuse injective producers (a weight's decode, a transpose) into the matmul they feed (not TVM's rule)" },
    }
}

/// The pass, with its options.
#[derive(Clone, Copy, Debug)]
pub struct FuseOps {
    /// The largest group.
    pub max_depth: usize,
    /// False at `opt-level=0`.
    pub fuse: bool,
    /// `matmul-operands`: injective producers fuse into the matmul they feed.
    pub matmul_operands: bool,
}

impl FuseOps {
    /// The pass with `options`.
    pub fn new(options: FuseOpsOptions) -> FuseOps {
        FuseOps { max_depth: options.max_depth, fuse: options.opt_level > 0, matmul_operands: options.matmul_operands }
    }
}

impl Default for FuseOps {
    fn default() -> Self {
        FuseOps::new(FuseOpsOptions::default())
    }
}

impl ModulePass for FuseOps {
    fn run(&self, m: &mut Module, cx: &mut PassContext) -> PassResult {
        let (changed, diags) = self.run(m, cx.wants_remarks(NAME));
        cx.remarks.extend(diags);
        Ok(changed)
    }
}

/// Fresh names as TVM's `NameSupply` hands them out (`.` becomes `_`; the first request
/// for a hint gets the hint itself, later ones `hint1`, `hint2`, ...).
#[derive(Clone, Debug, Default)]
pub struct Names(HashMap<String, i64>);

impl Names {
    /// A fresh name for `hint`.
    pub fn fresh(&mut self, hint: &str) -> String {
        crate::legalize::te::emit::fresh_name(&mut self.0, hint, false)
    }
}

/// True for functions FuseOps leaves alone: previously fused (`Primitive`) or offloaded
/// (`Codegen`) ones.
pub fn is_fused(f: &relax_ir::RelaxFunction) -> bool {
    let nonzero = |k: &str| {
        f.func.attrs.get(k).is_some_and(|v| match v {
            relax_ir::AttrValue::Bool(b) => *b,
            relax_ir::AttrValue::Int(i) | relax_ir::AttrValue::PrimInt(_, i) => *i != 0,
            _ => true,
        })
    };
    nonzero("Primitive") || f.func.attrs.get("Codegen").is_some()
}

impl FuseOps {
    /// Runs on a module. Returns whether it changed, and the warnings (groups dissolved
    /// because they would depend on themselves) with, when `remarks` is set, the remarks.
    pub fn run(&self, m: &mut Module, remarks: bool) -> (bool, Vec<Diagnostic>) {
        let mut globals: Vec<(String, Global)> = m
            .live()
            .filter(|(_, gd)| matches!(&gd.func, Func::Relax(f) if !is_fused(f)))
            .map(|(g, gd)| (gd.name.clone(), g))
            .collect();
        globals.sort();
        let mut fusor = rewrite::Fusor::new(m);
        let mut notes = Vec::new();
        let mut changed = false;
        for (name, g) in globals {
            let Some(mut f) = m.relax(g).cloned() else { continue };
            let mut remap = HashMap::new();
            let mut any_group = false;
            for loc in f.all_seqs() {
                let params = if loc == f.func.body { f.func.params.clone() } else { Vec::new() };
                let graph = graph::build(m, &f, loc, &params);
                let rules = partition::Rules {
                    max_depth: self.max_depth,
                    fuse: self.fuse,
                    matmul_operands: self.matmul_operands,
                };
                let part = partition::partition(&graph, rules);
                if remarks {
                    remarks::collect(m, &f, &name, &graph, &part, &mut notes);
                }
                if part.groups.iter().any(|grp| grp.parent.is_some()) {
                    any_group = true;
                    fusor.rewrite_seq(m, &mut f, &name, loc, &graph, &part, &mut remap, &mut notes);
                }
            }
            if any_group {
                rewrite::apply_remap(&mut f, &remap);
                crate::walk::tidy_blocks(&mut f);
                m.globals[g].func = Func::Relax(Box::new(f));
                changed = true;
            }
        }
        (changed, notes)
    }
}
