//! Cached summaries of interned TIR expressions and types: which variables they use, which
//! buffers they load from, and which symbolic variables a type can define.
//!
//! Interned nodes are shared, so each summary is computed once per root and reused; the
//! walks are iterative, so deep expressions cannot overflow the stack.

use std::rc::Rc;

use relax_entity::EntityRef;

use crate::entities::{PrimExpr, SymVar, Ty, Var};
use crate::pool::Pool;
use crate::prim::PrimExprData;
use crate::ty::{TensorShape, TyData};

/// What a TIR expression mentions.
#[derive(Debug, Default)]
pub(super) struct PrimFacts {
    /// Free variables, first occurrence first (variables bound by a `Let` inside the
    /// expression are left out).
    pub vars: Vec<SymVar>,
    /// The `Load` nodes inside the expression.
    pub loads: Vec<PrimExpr>,
}

/// A memo of [`PrimFacts`] for one pool.
pub(super) struct PrimScan {
    memo: Vec<Option<Rc<PrimFacts>>>,
    seen: Vec<u32>,
    var_seen: Vec<u32>,
    generation: u32,
    stack: Vec<PrimExpr>,
}

impl PrimScan {
    /// An empty memo sized for `pool`.
    pub fn new(pool: &Pool) -> PrimScan {
        PrimScan {
            memo: vec![None; pool.prims.len()],
            seen: vec![0; pool.prims.len()],
            var_seen: vec![0; pool.vars.len()],
            generation: 0,
            stack: Vec::new(),
        }
    }

    /// The facts of `e` (a valid handle of `pool`).
    pub fn facts(&mut self, pool: &Pool, e: PrimExpr) -> Rc<PrimFacts> {
        if let Some(f) = &self.memo[e.index()] {
            return Rc::clone(f);
        }
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            self.seen.iter_mut().for_each(|s| *s = 0);
            self.var_seen.iter_mut().for_each(|s| *s = 0);
            self.generation = 1;
        }
        let generation = self.generation;
        let mut facts = PrimFacts::default();
        let mut bound: Vec<SymVar> = Vec::new();
        self.stack.push(e);
        while let Some(x) = self.stack.pop() {
            if std::mem::replace(&mut self.seen[x.index()], generation) == generation {
                continue;
            }
            match pool.prim(x) {
                PrimExprData::Var(v) if std::mem::replace(&mut self.var_seen[v.index()], generation) != generation => {
                    facts.vars.push(*v);
                }
                PrimExprData::Load { .. } => facts.loads.push(x),
                PrimExprData::Let { var, .. } => bound.push(*var),
                _ => {}
            }
            let start = self.stack.len();
            pool.for_each_operand(x, |o| self.stack.push(o));
            self.stack[start..].reverse();
        }
        if !bound.is_empty() {
            facts.vars.retain(|v| !bound.contains(v));
        }
        let facts = Rc::new(facts);
        self.memo[e.index()] = Some(Rc::clone(&facts));
        facts
    }
}

/// What a Relax type mentions.
#[derive(Debug, Default, Clone)]
pub(super) struct TyFacts {
    /// Symbolic variables the type uses (those bound by the parameters of a callable type
    /// inside it are left out).
    pub uses: Vec<SymVar>,
    /// Symbolic variables at definable positions: a whole tensor or shape dim, the value of
    /// a prim type, recursively through tuples (not through callables).
    pub defs: Vec<SymVar>,
    /// Relax variables used as tensor shapes (`R.Tensor(s, ...)`).
    pub vars: Vec<Var>,
}

fn push_new<T: PartialEq + Copy>(v: &mut Vec<T>, items: &[T]) {
    for &x in items {
        if !v.contains(&x) {
            v.push(x);
        }
    }
}

/// The facts of every type of `pool`, indexed by `Ty`. Fields of a type always come
/// before it (checked by the handle check), so one pass in order suffices.
pub(super) fn ty_facts(pool: &Pool, scan: &mut PrimScan) -> Vec<TyFacts> {
    let mut all: Vec<TyFacts> = Vec::with_capacity(pool.tys.len());
    for (_, d) in pool.tys.iter() {
        let mut f = TyFacts::default();
        let mut dims = |f: &mut TyFacts, ds: &[PrimExpr]| {
            for &d in ds {
                push_new(&mut f.uses, &scan.facts(pool, d).vars);
                if let Some(v) = pool.as_var(d) {
                    push_new(&mut f.defs, &[v]);
                }
            }
        };
        match d {
            TyData::Object => {}
            TyData::Prim { value, .. } => dims(&mut f, value.as_slice()),
            TyData::Shape { values, .. } => dims(&mut f, values.as_deref().unwrap_or(&[])),
            TyData::Tensor { shape, .. } => match shape {
                TensorShape::Dims(ds) => dims(&mut f, ds),
                TensorShape::Var(v) => f.vars.push(*v),
                TensorShape::Unknown => {}
            },
            TyData::Tuple(fields) => {
                for &t in fields {
                    let sub = &all[t.index()];
                    push_new(&mut f.uses, &sub.uses);
                    push_new(&mut f.defs, &sub.defs);
                    push_new(&mut f.vars, &sub.vars);
                }
            }
            TyData::Callable { params, ret, .. } => {
                let mut bound: Vec<SymVar> = Vec::new();
                for &p in params.iter().flatten() {
                    let sub = &all[p.index()];
                    push_new(&mut bound, &sub.defs);
                    push_new(&mut f.uses, &sub.uses);
                    push_new(&mut f.vars, &sub.vars);
                }
                let sub = &all[ret.index()];
                push_new(&mut f.uses, &sub.uses);
                push_new(&mut f.vars, &sub.vars);
                f.uses.retain(|v| !bound.contains(v));
            }
        }
        all.push(f);
    }
    all
}

/// The facts of `t`, from a table made by [`ty_facts`].
pub(super) fn of(table: &[TyFacts], t: Ty) -> &TyFacts {
    &table[t.index()]
}
