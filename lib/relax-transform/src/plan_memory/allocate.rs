//! Phase 2 of memory planning: which storage each request uses (`algorithms.md` §5.4),
//! then merging whole storages whose lifetimes do not overlap (the project's run-time
//! fit rule, `docs/memory.md`).
//!
//! **Reuse while replaying the events** (TVM's rule, with one extension). A request takes
//! a free storage of the same scope and dtype:
//!
//! * constant size `s`: among free constant storages of `s / 16 ..= s * 16` bytes, the
//!   smallest of at least `s` bytes, else the largest smaller one, which grows to `s`;
//! * symbolic size: the first free symbolic storage of provably equal size, else (the
//!   extension) the first one provably at least as large;
//! * a request no kernel uses gets a storage of its own, never released.
//!
//! A storage is released when the last use of its current request passes; storages
//! first allocated inside an `if` branch are forgotten when the branch ends, so a
//! storage variable is never used outside its scope.
//!
//! **Merging** (beyond TVM). A storage `B` whose first allocation comes after the last
//! release of an earlier storage `A` of the same scope, dtype and sequence takes over
//! `A`'s memory: statically when `B`'s size provably fits `A`'s, by growing `A` when
//! both are constants, and otherwise with a check at run time that reuses `A` when `B`
//! fits and allocates otherwise. `A` is never used again after its last release, so a
//! merge cannot take memory from a later request.

use std::collections::HashMap;

use relax_ir::arith::Analyzer;
use relax_ir::{BinOp, DataType, PrimExpr, RelaxFunction};

use super::tokens::{Event, ReqId, Unit};
use relax_ir::Seq;

/// A storage of the plan.
pub type StorageId = usize;

/// How a storage was merged into an earlier one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MergeKind {
    /// It provably fits.
    Fits,
    /// Both are constants; the earlier one grew.
    Grow,
    /// Checked at run time: reuse when it fits, allocate otherwise.
    RunTime,
}

/// A merge of a storage into an earlier one (the root of its chain).
#[derive(Clone, Debug)]
pub struct Merge {
    /// The storage whose memory is taken over (a chain root).
    pub into: StorageId,
    /// How.
    pub kind: MergeKind,
    /// For a run-time merge: the bytes the chain holds before it.
    pub held: PrimExpr,
}

/// A block of memory.
#[derive(Clone, Debug)]
pub struct Storage {
    /// Final bytes (after growth).
    pub bytes: PrimExpr,
    /// Element type.
    pub dtype: DataType,
    /// Scope.
    pub scope: String,
    /// The request that first uses it (where its `alloc_storage` goes).
    pub first: ReqId,
    /// Event index of that first use.
    pub start: usize,
    /// Event index of its last release; `None` when never released.
    pub end: Option<usize>,
    /// The sequence of its first use.
    pub seq: Seq,
    /// When merged into an earlier storage.
    pub merged: Option<Merge>,
    refs: u32,
}

/// The outcome of phase 2.
#[derive(Clone, Debug, Default)]
pub struct Plan {
    /// The storages, in order of first use.
    pub storages: Vec<Storage>,
    /// The storage of each planned request.
    pub assign: HashMap<ReqId, StorageId>,
}

impl Plan {
    /// The chain root a storage's memory belongs to.
    pub fn root(&self, mut s: StorageId) -> StorageId {
        while let Some(m) = &self.storages[s].merged {
            s = m.into;
        }
        s
    }
}

struct Entry {
    key: i64,
    id: StorageId,
}

/// Phase 2 for one unit; `in_dataflow(r)` tells whether request `r` is in a dataflow
/// block (no run-time merge may go there: a dataflow block holds no `if`).
pub fn allocate(f: &mut RelaxFunction, unit: &Unit, an: &Analyzer, in_dataflow: &dyn Fn(ReqId) -> bool) -> Plan {
    let mut plan = Plan::default();
    let mut pool: HashMap<(String, DataType), Vec<Entry>> = HashMap::new();
    for (i, ev) in unit.events.iter().enumerate() {
        match ev {
            Event::Alloc(r) => {
                let req = &unit.requests[*r];
                if req.discarded {
                    continue;
                }
                let entries = pool.entry((req.scope.clone(), req.dtype)).or_default();
                let taken = if req.refs == 0 { None } else { reuse(&f.pool, an, &plan, entries, req.bytes) };
                let id = match taken {
                    Some((id, grow)) => {
                        if let Some(v) = grow {
                            plan.storages[id].bytes = f.pool.i64(v);
                        }
                        id
                    }
                    None => {
                        plan.storages.push(Storage {
                            bytes: req.bytes,
                            dtype: req.dtype,
                            scope: req.scope.clone(),
                            first: *r,
                            start: i,
                            end: None,
                            seq: req.seq,
                            merged: None,
                            refs: 0,
                        });
                        plan.storages.len() - 1
                    }
                };
                plan.storages[id].refs = req.refs;
                plan.assign.insert(*r, id);
            }
            Event::Use(rs) => {
                for r in rs {
                    if unit.requests[*r].discarded {
                        continue;
                    }
                    let Some(&id) = plan.assign.get(r) else { continue };
                    let s = &mut plan.storages[id];
                    s.refs = s.refs.saturating_sub(1);
                    if s.refs == 0 {
                        s.end = Some(i);
                        let key = f.pool.as_int(s.bytes).unwrap_or(-1);
                        let entries = pool.entry((s.scope.clone(), s.dtype)).or_default();
                        let at = entries.partition_point(|e| e.key <= key);
                        entries.insert(at, Entry { key, id });
                    }
                }
            }
            Event::Enter(_) => {}
            Event::Exit(loc) => {
                for entries in pool.values_mut() {
                    entries.retain(|e| plan.storages[e.id].seq != *loc);
                }
            }
        }
    }
    merge(f, an, &mut plan, in_dataflow);
    plan
}

/// TVM's `RequestReuse` (plus provable fit for symbolic sizes): the storage taken, and
/// the size it grows to.
fn reuse(
    pool: &relax_ir::Pool,
    an: &Analyzer,
    plan: &Plan,
    entries: &mut Vec<Entry>,
    bytes: PrimExpr,
) -> Option<(StorageId, Option<i64>)> {
    match pool.as_int(bytes) {
        Some(s) => {
            let lo = s / 16;
            let hi = s.saturating_mul(16);
            let begin = entries.partition_point(|e| e.key < lo);
            let mid = entries.partition_point(|e| e.key < s);
            let end = entries.partition_point(|e| e.key <= hi);
            if mid < end {
                return Some((entries.remove(mid).id, None));
            }
            if mid > begin {
                return Some((entries.remove(mid - 1).id, Some(s)));
            }
            None
        }
        None => {
            let sym = |e: &Entry| e.key == -1;
            let size = |e: &Entry| plan.storages[e.id].bytes;
            if let Some(i) = entries.iter().position(|e| sym(e) && an.prove_equal(pool, bytes, size(e))) {
                return Some((entries.remove(i).id, None));
            }
            let i = entries.iter().position(|e| sym(e) && an.prove_le(pool, bytes, size(e)))?;
            Some((entries.remove(i).id, None))
        }
    }
}

/// Merges storages with disjoint lifetimes (see the module documentation).
fn merge(f: &mut RelaxFunction, an: &Analyzer, plan: &mut Plan, in_dataflow: &dyn Fn(ReqId) -> bool) {
    // What each chain root holds at run time, and whether that is its static size.
    let mut held: HashMap<StorageId, (PrimExpr, bool)> = HashMap::new();
    for b in 0..plan.storages.len() {
        let sb = plan.storages[b].clone();
        if in_dataflow(sb.first) {
            continue;
        }
        let req = f.pool.as_int(sb.bytes);
        // (storage, kind, preference: lower is better)
        let mut best: Option<(StorageId, MergeKind, (u8, i64))> = None;
        for a in 0..b {
            let sa = &plan.storages[a];
            if sa.merged.is_some() || sa.seq != sb.seq || sa.scope != sb.scope || sa.dtype != sb.dtype {
                continue;
            }
            if sa.end.is_none_or(|end| end >= sb.start) || in_dataflow(sa.first) {
                continue;
            }
            let (cur, is_static) = held.get(&a).copied().unwrap_or((sa.bytes, true));
            let cur_const = f.pool.as_int(cur);
            let cand = if an.prove_le(&f.pool, sb.bytes, cur) {
                // The smallest constant that fits; symbolic ones after, earliest first.
                (MergeKind::Fits, (0, cur_const.unwrap_or(i64::MAX)))
            } else if let (true, Some(c), Some(_)) = (is_static, cur_const, req) {
                // The largest constant grows least.
                (MergeKind::Grow, (1, -c))
            } else if an.prove_le(&f.pool, cur, sb.bytes) {
                // It could only fit when the sizes are equal: not worth a check.
                continue;
            } else {
                (MergeKind::RunTime, (2, 0))
            };
            if best.as_ref().is_none_or(|(_, _, p)| cand.1 < *p) {
                best = Some((a, cand.0, cand.1));
            }
        }
        let Some((a, kind, _)) = best else { continue };
        let (cur, is_static) = held.get(&a).copied().unwrap_or((plan.storages[a].bytes, true));
        let next = match kind {
            MergeKind::Fits => (cur, is_static),
            MergeKind::Grow => {
                plan.storages[a].bytes = sb.bytes;
                (sb.bytes, true)
            }
            MergeKind::RunTime => (f.pool.binary(BinOp::Max, cur, sb.bytes).unwrap_or(cur), false),
        };
        plan.storages[b].merged = Some(Merge { into: a, kind, held: cur });
        plan.storages[a].end = sb.end;
        held.insert(a, next);
    }
}
