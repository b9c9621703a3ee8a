//! Optimization remarks of `fuse-ops` (`relax-opt --remarks=fuse-ops`): one remark per
//! edge between two bindings that ended in different groups, at the user's binding,
//! with the producer's binding as a second location and the rule that kept them apart
//! (the [`Verdict`] of the producer's last fusion attempt: fusion always goes from a
//! binding into its post-dominator).

use relax_ir::{Diagnostic, Module, RelaxFunction, Var};

use super::graph::{Graph, NodeKind, Source};
use super::partition::{Partition, Verdict};
use crate::analysis::op_pattern::OpPatternKind;

/// A kind in words.
fn words(k: OpPatternKind) -> &'static str {
    match k {
        OpPatternKind::ElemWise => "elementwise",
        OpPatternKind::Broadcast => "broadcast",
        OpPatternKind::Injective => "injective",
        OpPatternKind::CommReduce => "a reduction",
        OpPatternKind::OutEWiseFusable => "out-elementwise-fusable",
        OpPatternKind::Tuple => "a tuple",
        OpPatternKind::Opaque => "opaque",
    }
}

fn var_of(g: &Graph, n: usize) -> Option<Var> {
    match g.nodes[n].kind {
        NodeKind::Binding { var, .. } => Some(var),
        NodeKind::Param(v) => Some(v),
        NodeKind::Leaf(_) => None,
    }
}

fn name(f: &RelaxFunction, g: &Graph, n: usize) -> String {
    match var_of(g, n) {
        Some(v) => format!("`{}`", f.vars[v].name),
        None => "an operand".to_string(),
    }
}

/// Why the node `n` (a producer) is opaque.
fn opaque_reason(m: &Module, f: &RelaxFunction, g: &Graph, n: usize) -> String {
    let who = name(f, g, n);
    match &g.nodes[n].source {
        Source::Kernel { callee, annotated: true } => {
            format!("{who} calls `{}`, whose op_pattern is 8 (opaque): it is never fused", m.globals[*callee].name)
        }
        Source::Kernel { callee, annotated: false } => format!(
            "{who} calls `{}`, which has no op_pattern attribute (run annotate-tir-op-pattern first)",
            m.globals[*callee].name
        ),
        Source::Op(op) if op.id().and_then(crate::legalize::legalization).is_some() => format!(
            "{who} calls the high-level op `{}` in a function that also calls kernels; \
             legalize-ops left it, so it is opaque",
            op.name()
        ),
        Source::Op(op) => format!("{who} calls `{}`, which has no legalization: it is opaque", op.name()),
        Source::OtherCall => format!("{who} calls a function or packed function, which is opaque"),
        Source::MatchCast => format!("{who} is a `match_cast`, which is opaque"),
        Source::WeightItem => format!("{who} is an item of a weight parameter (after `num_input`), which is opaque"),
        Source::TupleItem | Source::Other | Source::Input => {
            format!("{who} is not a kernel call (opaque)")
        }
    }
}

/// The rule that kept `p` (a producer) from fusing with its users.
fn reason(m: &Module, f: &RelaxFunction, g: &Graph, part: &Partition, p: usize) -> String {
    let who = name(f, g, p);
    let kind = part.groups[p].pattern;
    let dom = part.tree[p].parent.map(|d| name(f, g, d)).unwrap_or_default();
    match &part.verdicts[p] {
        Verdict::Opaque => opaque_reason(m, f, g, p),
        Verdict::Extern => {
            format!("{who} is not a dataflow variable (it is used after its block), so it can only end a group")
        }
        Verdict::NoPostDominator => {
            format!("the uses of {who} do not meet again at a single binding of the block (no post-dominator)")
        }
        Verdict::TooDeep { count, max } => {
            format!("fusing {who} would make a group of {count} bindings, more than max-depth={max}")
        }
        Verdict::Reduce => format!("{who} is a reduction, and a reduction never starts a fusion"),
        Verdict::ComplexEdge { path } => format!(
            "{} takes only elementwise epilogues, but the path to {dom} is {}",
            if g.nodes[p].pattern == OpPatternKind::OutEWiseFusable {
                format!("{who} is out-elementwise-fusable and")
            } else {
                format!("the group of {who} holds an out-elementwise-fusable op and")
            },
            words(*path)
        ),
        Verdict::BroadcastEdge { path } => format!(
            "{who} is {} and fuses only into injective, reduction or out-elementwise-fusable users, but the path to \
             {dom} is {}{}",
            words(kind),
            words(*path),
            if *path == OpPatternKind::OutEWiseFusable {
                " (nothing fuses into the inputs of an out-elementwise-fusable op)"
            } else {
                ""
            }
        ),
        Verdict::Path { node, kind: k, sink, allowed } => {
            let at = name(f, g, *node);
            if *sink {
                format!(
                    "{who} is {} and its post-dominator {at} is {}, which it cannot fuse into",
                    words(kind),
                    words(*k)
                )
            } else {
                format!(
                    "{who} is {}, and {at} on the path to {dom} is {}, beyond {}",
                    words(kind),
                    words(*k),
                    words(*allowed)
                )
            }
        }
        Verdict::Disabled => "fusion is disabled (opt-level=0)".to_string(),
        Verdict::Fused => format!("{who} was fused into the group of {dom}, which does not hold its user"),
    }
}

/// The remarks of one partitioned graph of function `func` of `m`.
pub fn collect(m: &Module, f: &RelaxFunction, func: &str, g: &Graph, part: &Partition, out: &mut Vec<Diagnostic>) {
    let span = |v: Var| *f.spans.vars.get(v);
    for (p, node) in g.nodes.iter().enumerate() {
        let NodeKind::Binding { var: pv, .. } = node.kind else { continue };
        let mut seen = Vec::new();
        for e in &node.outputs {
            let NodeKind::Binding { var: cv, .. } = g.nodes[e.node].kind else { continue };
            if seen.contains(&cv) || part.root(p) == part.root(e.node) {
                continue;
            }
            seen.push(cv);
            let why = reason(m, f, g, part, p);
            let d = Diagnostic::remark(
                span(cv),
                format!(
                    "`{}` is not fused with its producer `{}` in `{func}`: {why}",
                    f.vars[cv].name, f.vars[pv].name
                ),
            )
            .with_label(format!("user `{}`", f.vars[cv].name))
            .with_secondary(span(pv), format!("producer `{}`", f.vars[pv].name));
            out.push(d);
        }
    }
}
