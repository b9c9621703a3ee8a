//! TIR expressions (`PrimExpr`), printed without recursion.
//!
//! Long left-leaning chains (`a + a + ... + a`, thousands of terms) occur in real IR, so
//! the printer keeps an explicit task stack instead of recursing, and computes operand
//! dtypes with a memo (the pool's own `dtype` recurses). Operands must have smaller
//! handles than the node that uses them (interning guarantees it); anything else prints as
//! `<invalid primN>`, which also rules out cycles.
//!
//! Spellings (`text-format.md` §9, checked against TVM 0.25):
//! * infix `+ - * / // % < <= == != > >= and or` only when rebuilding the node with TVM's
//!   operator constructors gives the same node, else `T.Add(a, b)` etc.; integer `Div` is
//!   always `T.Div`, `Mod` is `T.truncmod`, `Min`/`Max` are `T.min`/`T.max`;
//! * Python precedence; a right operand of equal precedence is parenthesised
//!   (`a - (b - c)`), and (project rule) so is a comparison operand of a comparison;
//! * negative integer literals print bare (`x + -1`), as TVM prints them;
//! * `not a`, but `T.Not(lit)` for a literal operand (spec rule; TVM 0.25 itself prints
//!   `not T.bool(True)`, which reads back folded);
//! * in Relax context every integer prints bare (`True`/`False` for bool).

use std::collections::HashMap;

use relax_entity::EntityRef;

use super::intrinsics::{DtypeLoc, tir_call_spelling};
use super::literals::{relax_int, tir_float, tir_int, write_quoted};
use crate::dtype::{DataType, TypeCode};
use crate::entities::{Buffer, PrimExpr, SymVar, Var};
use crate::pool::Pool;
use crate::prim::{BinOp, PrimExprData, wrap_int};

/// How variables, buffers and Relax variables are named while printing.
pub(crate) trait Names {
    /// Writes the printed name (or alias text) of a TIR variable, defining it if needed.
    fn sym(&mut self, out: &mut String, v: SymVar);
    /// Writes the printed name of a buffer.
    fn buffer(&mut self, out: &mut String, b: Buffer) {
        out.push_str(&format!("<{b:?}>"));
    }
    /// Writes the printed name of a Relax variable (shape of `R.Tensor(s, ...)`).
    fn relax_var(&mut self, out: &mut String, v: Var) {
        out.push_str(&format!("<{v:?}>"));
    }
}

/// Which dispatch the expression is printed under.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Inside a PrimFunc (or at module level).
    Tir,
    /// Inside a Relax function: integers print bare.
    Relax,
}

/// Precedence levels (higher binds tighter).
pub(crate) const PREC_FREE: u8 = 0;
const PREC_OR: u8 = 1;
const PREC_AND: u8 = 2;
const PREC_NOT: u8 = 3;
const PREC_CMP: u8 = 4;
pub(crate) const PREC_ADD: u8 = 5;
const PREC_MUL: u8 = 6;
const PREC_ATOM: u8 = 10;

/// The position of an operand relative to its parent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Side {
    /// No parenthesisation needed (call argument, statement, subscript).
    Free,
    /// Left operand of a binary operator.
    Left,
    /// Right operand of a binary operator.
    Right,
    /// Operand of `not`.
    Unary,
}

enum Task {
    Expr(PrimExpr, u8, Side),
    Str(&'static str),
    Owned(String),
    /// `base + k` as TVM's folding `+` builds it (slice bounds of ramps).
    Sum(PrimExpr, i64),
}

/// Appends `e`.
pub(crate) fn write_prim(out: &mut String, pool: &Pool, e: PrimExpr, mode: Mode, names: &mut dyn Names) {
    write_prim_in(out, pool, e, mode, names, PREC_FREE, Side::Free);
}

/// Appends a Relax scalar value (`R.prim_value(e)`, `R.Prim(value=e)`): as [`write_prim`]
/// in Relax mode, except that an integer constant of a type other than `int64` (or bool)
/// is wrapped, `T.int32(1)`, because a bare integer reads back as `int64` (`text-format.md`
/// §9.1). TVM 0.25 prints it bare and so loses its type; TVM 0.25 and 0.27 both read the
/// wrapped form with its type.
pub(crate) fn write_relax_scalar(out: &mut String, pool: &Pool, e: PrimExpr, names: &mut dyn Names) {
    match pool.prims.get(e) {
        Some(&PrimExprData::Int(t, v)) if t == DataType::INT32 => out.push_str(&format!("T.int32({v})")),
        Some(&PrimExprData::Int(t, v)) if t != DataType::INT64 && !t.is_bool() => out.push_str(&tir_int(t, v)),
        _ => write_prim(out, pool, e, Mode::Relax, names),
    }
}

/// Appends `e` as an operand at `side` of a parent of precedence `parent`.
pub(crate) fn write_prim_in(
    out: &mut String,
    pool: &Pool,
    e: PrimExpr,
    mode: Mode,
    names: &mut dyn Names,
    parent: u8,
    side: Side,
) {
    let mut p = Printer { pool, mode, memo: HashMap::new() };
    p.run(out, names, vec![Task::Expr(e, parent, side)]);
}

/// Appends `a + b` as TVM's folding `+` would build it (loop and axis bounds, region ends):
/// constants fold, adding zero gives the other side, a constant of another int type takes
/// the other side's type.
pub(crate) fn write_sum(out: &mut String, pool: &Pool, a: PrimExpr, b: PrimExpr, mode: Mode, names: &mut dyn Names) {
    let mut p = Printer { pool, mode, memo: HashMap::new() };
    let ia = p.int_of(a);
    let ib = p.int_of(b);
    let (da, db) = (p.dtype(a), p.dtype(b));
    let tasks = match (ia, ib) {
        (Some(x), Some(y)) => {
            let t = if da.bits >= db.bits { da } else { db };
            vec![Task::Owned(p.int_lit(t, wrap_int(t, x.wrapping_add(y))))]
        }
        (Some(0), None) => vec![Task::Expr(b, PREC_FREE, Side::Free)],
        (None, Some(0)) => vec![Task::Expr(a, PREC_FREE, Side::Free)],
        (None, Some(y)) if da != db && da.is_int() => {
            vec![Task::Owned(p.int_lit(da, wrap_int(da, y))), Task::Str(" + "), Task::Expr(a, PREC_ADD, Side::Left)]
        }
        (Some(x), None) if da != db && db.is_int() => {
            vec![Task::Expr(b, PREC_ADD, Side::Right), Task::Str(" + "), Task::Owned(p.int_lit(db, wrap_int(db, x)))]
        }
        _ => vec![Task::Expr(b, PREC_ADD, Side::Right), Task::Str(" + "), Task::Expr(a, PREC_ADD, Side::Left)],
    };
    p.run(out, names, tasks);
}

/// The variables `e` mentions, in first-occurrence order (iterative, tolerant of invalid
/// handles, linear in the size of the DAG).
pub(crate) fn vars_of(pool: &Pool, e: PrimExpr) -> Vec<SymVar> {
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut stack = vec![e];
    while let Some(e) = stack.pop() {
        if !seen.insert(e) {
            continue;
        }
        let Some(d) = pool.prims.get(e) else { continue };
        if let PrimExprData::Var(v) = d {
            if !out.contains(v) {
                out.push(*v);
            }
            continue;
        }
        let ops = d.operands();
        if let PrimExprData::Let { var, .. } = d {
            if !out.contains(var) {
                out.push(*var);
            }
        }
        stack.extend(ops.into_iter().rev().filter(|o| o.index() < e.index()));
    }
    out
}

struct Printer<'p> {
    pool: &'p Pool,
    mode: Mode,
    memo: HashMap<PrimExpr, DataType>,
}

impl Printer<'_> {
    fn int_of(&self, e: PrimExpr) -> Option<i64> {
        match self.pool.prims.get(e)? {
            PrimExprData::Int(_, v) => Some(*v),
            _ => None,
        }
    }

    fn int_lit(&self, t: DataType, v: i64) -> String {
        match self.mode {
            Mode::Tir => tir_int(t, v),
            Mode::Relax => relax_int(t, v),
        }
    }

    /// The dtype of `e`, without recursion (memoised walk down the dtype-giving operand).
    fn dtype(&mut self, e: PrimExpr) -> DataType {
        let mut chain = Vec::new();
        let mut cur = e;
        let base = loop {
            if let Some(&t) = self.memo.get(&cur) {
                break t;
            }
            let Some(d) = self.pool.prims.get(cur) else { break DataType::VOID };
            let next = match d {
                PrimExprData::Int(t, _) | PrimExprData::Float(t, _) => break *t,
                PrimExprData::Str(_) => break DataType::HANDLE,
                PrimExprData::Var(v) => break self.pool.vars.get(*v).map_or(DataType::VOID, |v| v.dtype),
                PrimExprData::Load { dtype, .. } | PrimExprData::Call { dtype, .. } | PrimExprData::Cast(dtype, _) => {
                    break *dtype;
                }
                PrimExprData::Bin(_, a, _) | PrimExprData::Not(a) | PrimExprData::Select(_, a, _) => *a,
                PrimExprData::Let { body, .. } => *body,
                PrimExprData::Ramp { base, .. } => *base,
                PrimExprData::Broadcast { value, .. } => *value,
            };
            chain.push(cur);
            if next.index() >= cur.index() {
                break DataType::VOID;
            }
            cur = next;
        };
        let mut t = base;
        for &n in chain.iter().rev() {
            t = match self.pool.prims.get(n) {
                Some(PrimExprData::Bin(op, ..)) if op.is_compare() || op.is_logical() => {
                    DataType::BOOL.with_lanes(t.lanes.max(1))
                }
                Some(PrimExprData::Ramp { lanes, .. }) | Some(PrimExprData::Broadcast { lanes, .. }) => {
                    t.with_lanes(*lanes)
                }
                _ => t,
            };
            self.memo.insert(n, t);
        }
        t
    }

    /// `Pool::is_canonical_binary` without recursion: the operand types match and TVM's
    /// constructor would not fold.
    fn canonical(&mut self, op: BinOp, a: PrimExpr, b: PrimExpr) -> bool {
        let (ta, tb) = (self.dtype(a), self.dtype(b));
        let types_ok = if op.is_logical() { ta.is_bool() && tb.is_bool() } else { ta == tb };
        types_ok && !self.folds(op, a, b, ta)
    }

    /// Whether `Pool::try_const_fold(op, a, b)` returns `Some` (same decision tree).
    fn folds(&self, op: BinOp, a: PrimExpr, b: PrimExpr, t: DataType) -> bool {
        let (Some(da), Some(db)) = (self.pool.prims.get(a), self.pool.prims.get(b)) else { return false };
        let ia = if let PrimExprData::Int(_, v) = da { Some(*v) } else { None };
        let ib = if let PrimExprData::Int(_, v) = db { Some(*v) } else { None };
        let fa = if let PrimExprData::Float(_, f) = da { Some(f.get()) } else { None };
        let fb = if let PrimExprData::Float(_, f) = db { Some(f.get()) } else { None };
        let float_ok = matches!(t.bits, 32 | 64) && t.code == TypeCode::Float;
        let both_i = ia.is_some() && ib.is_some();
        let both_f = fa.is_some() && fb.is_some();
        match op {
            BinOp::Add => {
                both_i || ia == Some(0) || ib == Some(0) || (both_f && float_ok) || fa == Some(0.0) || fb == Some(0.0)
            }
            BinOp::Sub => both_i || ib == Some(0) || (both_f && float_ok) || fb == Some(0.0),
            BinOp::Mul => {
                both_i
                    || matches!(ia, Some(0 | 1))
                    || matches!(ib, Some(0 | 1))
                    || (both_f && float_ok)
                    || fa == Some(1.0)
                    || fa == Some(0.0)
                    || fb == Some(1.0)
                    || fb == Some(0.0)
            }
            BinOp::Div | BinOp::FloorDiv => {
                if both_i {
                    return ib != Some(0);
                }
                if ia == Some(0) || ib == Some(1) {
                    return true;
                }
                if both_f && float_ok {
                    return fb != Some(0.0);
                }
                fa == Some(0.0) || fb == Some(1.0)
            }
            BinOp::Mod | BinOp::FloorMod => {
                if both_i {
                    return ib != Some(0);
                }
                ia == Some(0) || ib == Some(1)
            }
            BinOp::Min | BinOp::Max => both_i || both_f,
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
                both_i || (both_f && fa.zip(fb).is_some_and(|(x, y)| x.partial_cmp(&y).is_some()))
            }
            BinOp::And | BinOp::Or => ia.is_some() || ib.is_some(),
        }
    }

    /// The precedence of `e` as it will print.
    fn prec(&mut self, d: &PrimExprData) -> u8 {
        match d {
            PrimExprData::Bin(op, a, b) => match self.infix(*op, *a, *b) {
                Some((_, p)) => p,
                None => PREC_ATOM,
            },
            PrimExprData::Not(a) if !self.is_literal(*a) => PREC_NOT,
            _ => PREC_ATOM,
        }
    }

    fn is_literal(&self, e: PrimExpr) -> bool {
        matches!(self.pool.prims.get(e), Some(PrimExprData::Int(..) | PrimExprData::Float(..)))
    }

    /// The infix spelling and precedence of a binary node, or `None` for call syntax.
    fn infix(&mut self, op: BinOp, a: PrimExpr, b: PrimExpr) -> Option<(&'static str, u8)> {
        let prec = match op {
            BinOp::Or => PREC_OR,
            BinOp::And => PREC_AND,
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => PREC_CMP,
            BinOp::Add | BinOp::Sub => PREC_ADD,
            BinOp::Mul | BinOp::Div | BinOp::FloorDiv | BinOp::FloorMod => PREC_MUL,
            BinOp::Mod | BinOp::Min | BinOp::Max => return None,
        };
        if op == BinOp::Div && self.dtype(a).is_int() && self.dtype(b).is_int() {
            return None;
        }
        if !self.canonical(op, a, b) {
            return None;
        }
        let sym = match op {
            BinOp::Add => " + ",
            BinOp::Sub => " - ",
            BinOp::Mul => " * ",
            BinOp::Div => " / ",
            BinOp::FloorDiv => " // ",
            BinOp::FloorMod => " % ",
            BinOp::Eq => " == ",
            BinOp::Ne => " != ",
            BinOp::Lt => " < ",
            BinOp::Le => " <= ",
            BinOp::Gt => " > ",
            BinOp::Ge => " >= ",
            BinOp::And => " and ",
            BinOp::Or => " or ",
            BinOp::Mod | BinOp::Min | BinOp::Max => return None,
        };
        Some((sym, prec))
    }

    fn run(&mut self, out: &mut String, names: &mut dyn Names, mut stack: Vec<Task>) {
        while let Some(task) = stack.pop() {
            match task {
                Task::Str(s) => out.push_str(s),
                Task::Owned(s) => out.push_str(&s),
                Task::Sum(base, k) => self.sum(out, &mut stack, base, k),
                Task::Expr(e, parent, side) => self.expr(out, names, &mut stack, e, parent, side),
            }
        }
    }

    fn sum(&mut self, out: &mut String, stack: &mut Vec<Task>, base: PrimExpr, k: i64) {
        let t = self.dtype(base);
        if let Some(v) = self.int_of(base) {
            out.push_str(&self.int_lit(t, wrap_int(t, v.wrapping_add(k))));
        } else if k == 0 {
            stack.push(Task::Expr(base, PREC_FREE, Side::Free));
        } else {
            stack.push(Task::Owned(self.int_lit(t, wrap_int(t, k))));
            stack.push(Task::Str(" + "));
            stack.push(Task::Expr(base, PREC_ADD, Side::Left));
        }
    }

    /// Pushes `child` of `parent_node` unless its handle is not older than the parent.
    fn child(stack: &mut Vec<Task>, parent_node: PrimExpr, child: PrimExpr, prec: u8, side: Side) {
        if child.index() < parent_node.index() {
            stack.push(Task::Expr(child, prec, side));
        } else {
            stack.push(Task::Owned(format!("<invalid {child:?}>")));
        }
    }

    /// Pushes `args` as a comma-separated list (in reverse, so they pop in order).
    fn list(stack: &mut Vec<Task>, parent_node: PrimExpr, args: &[PrimExpr]) {
        for (i, &a) in args.iter().enumerate().rev() {
            Self::child(stack, parent_node, a, PREC_FREE, Side::Free);
            if i > 0 {
                stack.push(Task::Str(", "));
            }
        }
    }

    fn expr(
        &mut self,
        out: &mut String,
        names: &mut dyn Names,
        stack: &mut Vec<Task>,
        e: PrimExpr,
        parent: u8,
        side: Side,
    ) {
        let Some(d) = self.pool.prims.get(e) else {
            out.push_str(&format!("<invalid {e:?}>"));
            return;
        };
        let prec = self.prec(d);
        let paren = match side {
            Side::Free => false,
            Side::Left => prec < parent || (parent == PREC_CMP && prec == PREC_CMP),
            Side::Right => prec <= parent,
            Side::Unary => prec < parent,
        };
        if paren {
            out.push('(');
            stack.push(Task::Str(")"));
        }
        match d {
            PrimExprData::Int(t, v) => out.push_str(&self.int_lit(*t, *v)),
            PrimExprData::Float(t, f) => out.push_str(&tir_float(*t, f.get())),
            PrimExprData::Str(s) => write_quoted(out, s),
            PrimExprData::Var(v) => names.sym(out, *v),
            PrimExprData::Load { buffer, indices, .. } => {
                names.buffer(out, *buffer);
                // A 0-d buffer prints `A[()]`.
                out.push_str(if indices.is_empty() { "[()" } else { "[" });
                stack.push(Task::Str("]"));
                for (i, &ix) in indices.iter().enumerate().rev() {
                    self.index(stack, e, ix);
                    if i > 0 {
                        stack.push(Task::Str(", "));
                    }
                }
            }
            PrimExprData::Bin(op, a, b) => match self.infix(*op, *a, *b) {
                Some((sym, p)) => {
                    Self::child(stack, e, *b, p, Side::Right);
                    stack.push(Task::Str(sym));
                    Self::child(stack, e, *a, p, Side::Left);
                }
                None => {
                    out.push_str(match op {
                        BinOp::Mod => "T.truncmod(",
                        BinOp::Min => "T.min(",
                        BinOp::Max => "T.max(",
                        _ => "",
                    });
                    if !matches!(op, BinOp::Mod | BinOp::Min | BinOp::Max) {
                        out.push_str("T.");
                        out.push_str(op.node_name());
                        out.push('(');
                    }
                    stack.push(Task::Str(")"));
                    Self::list(stack, e, &[*a, *b]);
                }
            },
            PrimExprData::Not(a) => {
                if self.is_literal(*a) {
                    out.push_str("T.Not(");
                    stack.push(Task::Str(")"));
                    Self::child(stack, e, *a, PREC_FREE, Side::Free);
                } else {
                    out.push_str("not ");
                    Self::child(stack, e, *a, PREC_NOT, Side::Unary);
                }
            }
            PrimExprData::Cast(t, a) => {
                out.push_str("T.Cast(");
                write_quoted(out, &t.to_string());
                out.push_str(", ");
                stack.push(Task::Str(")"));
                Self::child(stack, e, *a, PREC_FREE, Side::Free);
            }
            PrimExprData::Select(c, t, f) => {
                out.push_str("T.Select(");
                stack.push(Task::Str(")"));
                Self::list(stack, e, &[*c, *t, *f]);
            }
            // A reference to omitted metadata, stored as `tir.metadata("key", i)`.
            PrimExprData::Call { op, args, .. }
                if op.short_name() == "metadata"
                    && matches!(
                        args.as_slice(),
                        [k, i] if matches!(self.pool.prims.get(*k), Some(PrimExprData::Str(_)))
                            && matches!(self.pool.prims.get(*i), Some(PrimExprData::Int(..)))
                    ) =>
            {
                if let (Some(PrimExprData::Str(k)), Some(PrimExprData::Int(_, i))) =
                    (self.pool.prims.get(args[0]), self.pool.prims.get(args[1]))
                {
                    out.push_str("metadata[");
                    write_quoted(out, k);
                    out.push_str(&format!("][{i}]"));
                }
            }
            PrimExprData::Call { dtype, op, args } => {
                let (name, loc) = tir_call_spelling(&op.name());
                out.push_str("T.");
                out.push_str(&name);
                out.push('(');
                let dt = super::literals::quote(&dtype.to_string());
                stack.push(Task::Str(")"));
                if loc == DtypeLoc::Last {
                    stack.push(Task::Owned(dt.clone()));
                    if !args.is_empty() {
                        stack.push(Task::Str(", "));
                    }
                }
                Self::list(stack, e, args);
                if loc == DtypeLoc::First {
                    if !args.is_empty() {
                        stack.push(Task::Str(", "));
                    }
                    stack.push(Task::Owned(dt));
                }
            }
            PrimExprData::Let { var, value, body } => {
                out.push_str("T.Let(");
                stack.push(Task::Str("})"));
                Self::child(stack, e, *value, PREC_FREE, Side::Free);
                stack.push(Task::Str(": "));
                let mut v = String::new();
                names.sym(&mut v, *var);
                stack.push(Task::Owned(v));
                stack.push(Task::Str(", where={"));
                Self::child(stack, e, *body, PREC_FREE, Side::Free);
            }
            PrimExprData::Ramp { base, stride, lanes } => {
                out.push_str("T.Ramp(");
                stack.push(Task::Owned(format!(", {lanes})")));
                Self::list(stack, e, &[*base, *stride]);
            }
            PrimExprData::Broadcast { value, lanes } => {
                out.push_str("T.Broadcast(");
                stack.push(Task::Owned(format!(", {lanes})")));
                Self::child(stack, e, *value, PREC_FREE, Side::Free);
            }
        }
    }

    /// A buffer index: a ramp with a constant stride prints as a slice
    /// `base:base + lanes * stride[:stride]`, as TVM prints vector accesses.
    fn index(&mut self, stack: &mut Vec<Task>, load: PrimExpr, ix: PrimExpr) {
        if ix.index() < load.index()
            && let Some(PrimExprData::Ramp { base, stride, lanes }) = self.pool.prims.get(ix)
            && let Some(sv) = self.int_of(*stride)
            && base.index() < ix.index()
        {
            if sv != 1 {
                stack.push(Task::Expr(*stride, PREC_FREE, Side::Free));
                stack.push(Task::Str(":"));
            }
            stack.push(Task::Sum(*base, i64::from(*lanes).wrapping_mul(sv)));
            stack.push(Task::Str(":"));
            stack.push(Task::Expr(*base, PREC_FREE, Side::Free));
            return;
        }
        Self::child(stack, load, ix, PREC_FREE, Side::Free);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Plain;
    impl Names for Plain {
        fn sym(&mut self, out: &mut String, v: SymVar) {
            out.push_str(&format!("v{}", v.index()));
        }
    }

    #[test]
    fn precedence_and_sugar() {
        let mut p = Pool::new();
        let x = p.new_var("x", DataType::INT32);
        let y = p.new_var("y", DataType::INT32);
        let (x, y) = (p.var_ref(x), p.var_ref(y));
        let s = p.raw(PrimExprData::Bin(BinOp::Sub, y, x));
        let e = p.raw(PrimExprData::Bin(BinOp::Sub, x, s));
        let mut out = String::new();
        write_prim(&mut out, &p, e, Mode::Tir, &mut Plain);
        assert_eq!(out, "v0 - (v1 - v0)");
        let zero = p.int(DataType::INT32, 0);
        let e = p.raw(PrimExprData::Bin(BinOp::Add, x, zero));
        out.clear();
        write_prim(&mut out, &p, e, Mode::Tir, &mut Plain);
        assert_eq!(out, "T.Add(v0, 0)");
    }
}
