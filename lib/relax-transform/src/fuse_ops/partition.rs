//! The post-dominator tree and the partition of a graph into fusion groups (TVM's
//! `DominatorTree` and `GraphPartitioner`, `algorithms.md` §2.3–2.5).
//!
//! Every node starts in a group of its own. Phases 0, 1 and 2 visit the nodes in
//! creation order and try to merge each node's group into the group of its immediate
//! post-dominator:
//! * phase 0: an out-elementwise-fusable op (matmul) takes elementwise epilogues;
//!   elementwise and broadcast ops fuse forward into injective, reduction or
//!   out-elementwise-fusable sinks;
//! * phase 1: the same for elementwise and broadcast ops, and injective chains;
//! * phase 2: the tuple rule of Relay, which never applies to Relax.
//!
//! For every node the partitioner records the [`Verdict`] of its last attempt, which the
//! remarks use to explain why an edge was not fused.

use std::collections::HashSet;

use super::graph::Graph;
use crate::analysis::op_pattern::OpPatternKind;

/// A node of the post-dominator tree.
#[derive(Clone, Copy, Debug)]
pub struct TreeNode {
    /// The immediate post-dominator.
    pub parent: Option<usize>,
    /// Depth in the tree (roots are 1).
    pub depth: usize,
    /// The strongest pattern on any path to the post-dominator.
    pub pattern: OpPatternKind,
}

/// The post-dominator tree, indexed like the graph's nodes.
pub fn post_dominators(g: &Graph) -> Vec<TreeNode> {
    let n = g.nodes.len();
    let mut tree = vec![TreeNode { parent: None, depth: 1, pattern: OpPatternKind::Opaque }; n];
    for i in (0..n).rev() {
        let node = &g.nodes[i];
        tree[i] = if node.extern_ref {
            TreeNode { parent: None, depth: 1, pattern: OpPatternKind::Opaque }
        } else {
            let mut pattern = OpPatternKind::ElemWise;
            let mut parent: Option<usize> = None;
            for (k, e) in node.outputs.iter().enumerate() {
                parent = if k == 0 { Some(e.node) } else { lca(&tree, parent, Some(e.node), &mut pattern) };
                pattern = combine(pattern, e.pattern);
            }
            let depth = parent.map_or(1, |p| tree[p].depth + 1);
            TreeNode { parent, depth, pattern }
        };
    }
    tree
}

/// `CombinePattern`: the stronger kind (TVM fails when both are complex; the kinds only
/// meet here along post-dominator paths, where that cannot happen for valid graphs).
fn combine(a: OpPatternKind, b: OpPatternKind) -> OpPatternKind {
    a.max(b)
}

fn lca(tree: &[TreeNode], mut a: Option<usize>, mut b: Option<usize>, pattern: &mut OpPatternKind) -> Option<usize> {
    while a != b {
        let (x, y) = (a?, b?);
        let (dx, dy) = (tree[x].depth, tree[y].depth);
        if dx < dy {
            *pattern = combine(*pattern, tree[y].pattern);
            b = tree[y].parent;
        } else if dy < dx {
            *pattern = combine(*pattern, tree[x].pattern);
            a = tree[x].parent;
        } else {
            *pattern = combine(*pattern, tree[x].pattern);
            *pattern = combine(*pattern, tree[y].pattern);
            a = tree[x].parent;
            b = tree[y].parent;
        }
    }
    a
}

/// A group of the union-find.
#[derive(Clone, Copy, Debug)]
pub struct Group {
    /// The parent group (`None` for a root).
    pub parent: Option<usize>,
    /// The group's pattern.
    pub pattern: OpPatternKind,
    /// Whether the group holds an out-elementwise-fusable anchor.
    pub anchor: bool,
    /// How many nodes the group holds.
    pub num_nodes: usize,
}

/// Why a node's group was not merged into its post-dominator's group (the last attempt).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// It was merged.
    Fused,
    /// Its group is opaque.
    Opaque,
    /// It is used outside the dataflow region (not a dataflow variable).
    Extern,
    /// Its uses do not meet again at a single binding.
    NoPostDominator,
    /// Fusing would put more than `max` nodes in one group.
    TooDeep {
        /// The group size fusing would give.
        count: usize,
        /// The limit.
        max: usize,
    },
    /// A reduction never starts a fusion.
    Reduce,
    /// An out-elementwise-fusable group fuses only along elementwise paths.
    ComplexEdge {
        /// The pattern of the path to the post-dominator.
        path: OpPatternKind,
    },
    /// An elementwise or broadcast group fuses only into injective, reduction or complex
    /// sinks along injective paths.
    BroadcastEdge {
        /// The pattern of the path to the post-dominator.
        path: OpPatternKind,
    },
    /// A node on the path to the post-dominator has a pattern the rule does not allow.
    Path {
        /// The node.
        node: usize,
        /// Its group's pattern.
        kind: OpPatternKind,
        /// Whether it is the post-dominator itself.
        sink: bool,
        /// The strongest pattern the rule allows there.
        allowed: OpPatternKind,
    },
    /// Fusion is disabled (`opt-level=0`).
    Disabled,
}

/// The partition of a graph.
#[derive(Clone, Debug)]
pub struct Partition {
    /// The union-find, one group per node.
    pub groups: Vec<Group>,
    /// The post-dominator tree.
    pub tree: Vec<TreeNode>,
    /// The verdict of each node's last fusion attempt.
    pub verdicts: Vec<Verdict>,
}

impl Partition {
    /// The root group of node `n` (without path compression).
    pub fn root(&self, n: usize) -> usize {
        let mut r = n;
        while let Some(p) = self.groups[r].parent {
            r = p;
        }
        r
    }
}

/// The fusion rules of a partition.
#[derive(Clone, Copy, Debug)]
pub struct Rules {
    /// The largest number of nodes in one group.
    pub max_depth: usize,
    /// False only initialises the groups (`opt-level=0`).
    pub fuse: bool,
    /// Fuse injective producers into the matmul they feed (see the module doc).
    pub matmul_operands: bool,
}

struct Partitioner<'a> {
    g: &'a Graph,
    tree: Vec<TreeNode>,
    groups: Vec<Group>,
    verdicts: Vec<Verdict>,
    max_depth: usize,
    visited: HashSet<usize>,
}

/// Partitions `g` by `rules`.
pub fn partition(g: &Graph, rules: Rules) -> Partition {
    let Rules { max_depth, fuse, matmul_operands } = rules;
    let groups = g
        .nodes
        .iter()
        .map(|n| Group {
            parent: None,
            pattern: n.pattern,
            anchor: n.pattern == OpPatternKind::OutEWiseFusable,
            num_nodes: 1,
        })
        .collect();
    let verdicts = vec![if fuse { Verdict::Opaque } else { Verdict::Disabled }; g.nodes.len()];
    let mut p = Partitioner { g, tree: post_dominators(g), groups, verdicts, max_depth, visited: HashSet::new() };
    if fuse {
        for phase in 0..3 {
            p.run(phase);
        }
        if matmul_operands {
            p.fuse_matmul_operands();
        }
    }
    Partition { groups: p.groups, tree: p.tree, verdicts: p.verdicts }
}

impl Partitioner<'_> {
    fn find_root(&mut self, n: usize) -> usize {
        let mut r = n;
        while let Some(p) = self.groups[r].parent {
            r = p;
        }
        let mut x = n;
        while let Some(p) = self.groups[x].parent {
            self.groups[x].parent = Some(r);
            x = p;
        }
        r
    }

    fn run(&mut self, phase: u32) {
        use OpPatternKind::*;
        for nid in 0..self.g.nodes.len() {
            let pattern = self.groups[nid].pattern;
            let dom = self.tree[nid];
            if pattern == Opaque {
                self.verdicts[nid] = Verdict::Opaque;
                continue;
            }
            let Some(parent) = dom.parent else {
                self.verdicts[nid] =
                    if self.g.nodes[nid].extern_ref { Verdict::Extern } else { Verdict::NoPostDominator };
                continue;
            };
            let count = self.count_fused_nodes_with_new_child(nid, parent);
            if count > self.max_depth {
                if phase < 2 {
                    self.verdicts[nid] = Verdict::TooDeep { count, max: self.max_depth };
                }
                continue;
            }
            if phase == 2 {
                // Fusing injective ops into intermediate tuples: Relax has no tuple nodes.
                continue;
            }
            if self.find_root(nid) == self.find_root(parent) {
                self.verdicts[nid] = Verdict::Fused;
                continue;
            }
            if self.groups[parent].pattern == Tuple {
                continue;
            }
            if pattern == OutEWiseFusable {
                if phase != 0 {
                    continue;
                }
                if dom.pattern != ElemWise {
                    self.verdicts[nid] = Verdict::ComplexEdge { path: dom.pattern };
                    continue;
                }
                self.try_fuse(nid, parent, &|kind, _| kind <= Broadcast, &|_| Broadcast);
            } else if pattern <= Broadcast {
                if !(dom.pattern <= Injective || dom.pattern == CommReduce) {
                    self.verdicts[nid] = Verdict::BroadcastEdge { path: dom.pattern };
                    continue;
                }
                self.try_fuse(
                    nid,
                    parent,
                    &|kind, sink| {
                        if sink {
                            kind <= Broadcast || kind == CommReduce || kind == Injective || kind == OutEWiseFusable
                        } else {
                            kind <= Injective
                        }
                    },
                    &|sink| if sink { OutEWiseFusable } else { Injective },
                );
            } else if pattern == Injective || pattern == Tuple {
                if phase != 1 {
                    continue;
                }
                self.try_fuse(nid, parent, &|kind, _| kind <= Injective, &|_| Injective);
            } else {
                self.verdicts[nid] = Verdict::Reduce;
            }
        }
    }

    /// The last phase of [`Rules::matmul_operands`].
    fn fuse_matmul_operands(&mut self) {
        use OpPatternKind::*;
        for nid in 0..self.g.nodes.len() {
            let root = self.find_root(nid);
            if self.groups[root].pattern > Injective || self.groups[root].anchor {
                continue;
            }
            let Some(parent) = self.tree[nid].parent else { continue };
            let sink_root = self.find_root(parent);
            if sink_root == root || !self.groups[sink_root].anchor || self.groups[sink_root].pattern != OutEWiseFusable
            {
                continue;
            }
            let count = self.count_fused_nodes_with_new_child(nid, parent);
            if count > self.max_depth {
                self.verdicts[nid] = Verdict::TooDeep { count, max: self.max_depth };
                continue;
            }
            self.try_fuse(
                nid,
                parent,
                &|kind, sink| if sink { kind == OutEWiseFusable } else { kind <= Injective },
                &|sink| if sink { OutEWiseFusable } else { Injective },
            );
        }
    }

    fn try_fuse(
        &mut self,
        src: usize,
        sink: usize,
        cond: &dyn Fn(OpPatternKind, bool) -> bool,
        allowed: &dyn Fn(bool) -> OpPatternKind,
    ) {
        match self.check_path(src, sink, cond) {
            None => {
                self.commit_fuse(src, sink);
                self.verdicts[src] = Verdict::Fused;
            }
            Some((node, kind, is_sink)) => {
                self.verdicts[src] = Verdict::Path { node, kind, sink: is_sink, allowed: allowed(is_sink) };
            }
        }
    }

    /// Tests `cond` on every node between `src` (excluded) and `sink` (included); the
    /// first node that fails, if any.
    fn check_path(
        &mut self,
        src: usize,
        sink: usize,
        cond: &dyn Fn(OpPatternKind, bool) -> bool,
    ) -> Option<(usize, OpPatternKind, bool)> {
        self.visited.clear();
        let outs: Vec<usize> = self.g.nodes[src].outputs.iter().map(|e| e.node).collect();
        for o in outs {
            if let Some(fail) = self.check_path_rec(o, sink, cond) {
                return Some(fail);
            }
        }
        None
    }

    fn check_path_rec(
        &mut self,
        start: usize,
        sink: usize,
        cond: &dyn Fn(OpPatternKind, bool) -> bool,
    ) -> Option<(usize, OpPatternKind, bool)> {
        // Depth-first, in the order of TVM's recursion, with an explicit stack.
        let mut stack = vec![start];
        while let Some(n) = stack.pop() {
            if !self.visited.insert(n) {
                continue;
            }
            let root = self.find_root(n);
            let kind = self.groups[root].pattern;
            if !cond(kind, n == sink) {
                return Some((n, kind, n == sink));
            }
            if n == sink {
                continue;
            }
            for e in self.g.nodes[n].outputs.iter().rev() {
                stack.push(e.node);
            }
        }
        None
    }

    fn commit_fuse(&mut self, src: usize, sink: usize) {
        let target = sink;
        self.visited.clear();
        let mut stack = vec![src];
        while let Some(n) = stack.pop() {
            if n == sink || !self.visited.insert(n) {
                continue;
            }
            self.merge_from_to(n, target);
            for e in self.g.nodes[n].outputs.iter().rev() {
                stack.push(e.node);
            }
        }
    }

    fn merge_from_to(&mut self, child: usize, parent: usize) {
        let c = self.find_root(child);
        let p = self.find_root(parent);
        if c == p {
            return;
        }
        self.groups[p].num_nodes += self.groups[c].num_nodes;
        self.groups[c].parent = Some(p);
        if self.groups[c].anchor {
            self.groups[p].anchor = true;
            self.groups[p].pattern = combine(self.groups[c].pattern, self.groups[p].pattern);
        }
    }

    fn count_fused_nodes_with_new_child(&mut self, child: usize, dom_parent: usize) -> usize {
        let root = self.find_root(dom_parent);
        self.visited.clear();
        let mut sum = self.groups[root].num_nodes;
        let mut stack = vec![child];
        while let Some(n) = stack.pop() {
            if n == dom_parent || !self.visited.insert(n) {
                continue;
            }
            sum += self.groups[n].num_nodes;
            for e in self.g.nodes[n].outputs.iter().rev() {
                stack.push(e.node);
            }
        }
        sum
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fuse_ops::graph::{Edge, Node, NodeKind, Source};
    use OpPatternKind::*;

    /// A graph of `kinds` (node i's kind, whether it is external) and edges.
    fn graph(kinds: &[(OpPatternKind, bool)], edges: &[(usize, usize)]) -> Graph {
        let mut g = Graph::default();
        for &(pattern, extern_ref) in kinds {
            let kind = NodeKind::Leaf(relax_entity::EntityRef::new(g.nodes.len()));
            g.nodes.push(Node { kind, pattern, source: Source::Other, extern_ref, outputs: Vec::new() });
        }
        for &(a, b) in edges {
            let pattern = kinds[b].0;
            g.nodes[a].outputs.push(Edge { node: b, pattern });
        }
        g
    }

    fn rules(max_depth: usize) -> Rules {
        Rules { max_depth, fuse: true, matmul_operands: false }
    }

    fn groups(p: &Partition) -> Vec<usize> {
        (0..p.groups.len()).map(|n| p.root(n)).collect()
    }

    #[test]
    fn matmul_takes_its_elementwise_epilogue() {
        // x (param) -> matmul -> add -> relu (output)
        let g = graph(
            &[(Opaque, true), (OutEWiseFusable, false), (ElemWise, false), (ElemWise, true)],
            &[(0, 1), (1, 2), (2, 3)],
        );
        let p = partition(&g, rules(256));
        assert_eq!(groups(&p), [0, 3, 3, 3]);
        assert_eq!(p.groups[3].pattern, OutEWiseFusable);
    }

    #[test]
    fn diamonds_fuse_at_the_post_dominator() {
        // x -> a; a -> b, a -> c; b, c -> d (output)
        let g = graph(
            &[(Opaque, true), (ElemWise, false), (ElemWise, false), (ElemWise, false), (Broadcast, true)],
            &[(0, 1), (1, 2), (1, 3), (2, 4), (3, 4)],
        );
        let p = partition(&g, rules(256));
        assert_eq!(p.tree[1].parent, Some(4));
        assert_eq!(groups(&p), [0, 4, 4, 4, 4]);
    }

    #[test]
    fn nothing_fuses_into_a_matmul_input_and_reductions_do_not_start() {
        // x -> e (elementwise) -> m (matmul, output); x -> s (reduce) -> r (output)
        let g = graph(
            &[(Opaque, true), (ElemWise, false), (OutEWiseFusable, true), (CommReduce, false), (ElemWise, true)],
            &[(0, 1), (1, 2), (0, 3), (3, 4)],
        );
        let p = partition(&g, rules(256));
        assert_eq!(groups(&p), [0, 1, 2, 3, 4]);
        assert_eq!(p.verdicts[1], Verdict::BroadcastEdge { path: OutEWiseFusable });
        assert_eq!(p.verdicts[3], Verdict::Reduce);
    }

    #[test]
    fn max_depth_and_opt_level() {
        let kinds = [(Opaque, true), (ElemWise, false), (ElemWise, false), (ElemWise, true)];
        let g = graph(&kinds, &[(0, 1), (1, 2), (2, 3)]);
        assert_eq!(groups(&partition(&g, rules(2))), [0, 2, 2, 3]);
        assert_eq!(groups(&partition(&g, Rules { fuse: false, ..rules(256) })), [0, 1, 2, 3]);
    }

    #[test]
    fn matmul_operands_take_their_injective_producers() {
        // w (param) -> decode (injective) -> transpose (injective) -> matmul -> add (output);
        // x (param) -> matmul.
        let g = graph(
            &[
                (Opaque, true),
                (Injective, false),
                (Injective, false),
                (Opaque, true),
                (OutEWiseFusable, false),
                (ElemWise, true),
            ],
            &[(0, 1), (1, 2), (2, 4), (3, 4), (4, 5)],
        );
        assert_eq!(groups(&partition(&g, rules(256))), [0, 2, 2, 3, 5, 5], "TVM's rules keep the operand apart");
        let p = partition(&g, Rules { matmul_operands: true, ..rules(256) });
        assert_eq!(groups(&p), [0, 5, 5, 3, 5, 5]);
        assert_eq!(p.groups[5].pattern, OutEWiseFusable);
        // A producer with a second consumer stays apart: its post-dominator is not the matmul.
        let g = graph(
            &[(Opaque, true), (Injective, false), (OutEWiseFusable, true), (ElemWise, true)],
            &[(0, 1), (1, 2), (1, 3)],
        );
        assert_eq!(groups(&partition(&g, Rules { matmul_operands: true, ..rules(256) })), [0, 1, 2, 3]);
    }
}
