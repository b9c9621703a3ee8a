//! Relax functions: variables, expressions, binding blocks and sequence expressions.
//!
//! A [`RelaxFunction`] owns its arenas. The body is in A-normal form: binding values may
//! be any expression, but call arguments, callees, tuple fields, tuple-item operands and
//! `if` conditions are leaves (variables, globals, constants, shape/prim/string/dtype
//! values, or tuples of leaves). Local functions (`def f` inside a function) live in the
//! same arenas and share the enclosing function's symbolic variables.
//!
//! Nesting is by handle: sequences (a function body, the branches of an `if`) are
//! entities of their own ([`Seq`]), and the operand lists of calls and tuples live in the
//! function's [`ListPool`] ([`ExprList`]), as Cranelift keeps `dfg.value_lists`. The
//! operands of an expression are listed in one place ([`ExprData::for_each_operand`],
//! [`ExprData::map_operands`], [`ExprData::nested_seqs`]); walkers use those instead of
//! matching every variant themselves.

use relax_entity::{EntityList, ListPool, PrimaryMap, SecondaryMap};

use crate::attrs::Attrs;
use crate::dtype::DataType;
use crate::entities::{Block, Constant, Expr, Global, PrimExpr, Seq, Ty, Var};
use crate::op::{OpId, OpRef};
use crate::pool::Pool;
use crate::span::Span;

/// A Relax variable.
#[derive(Clone, Debug, PartialEq)]
pub struct VarData {
    /// The name hint.
    pub name: String,
    /// Its type.
    pub ty: Ty,
    /// True for a `DataflowVar` (defined in a dataflow block and not an output).
    pub dataflow: bool,
}

/// A list of expressions in a function's [`ListPool`] (call arguments, tuple fields).
pub type ExprList = EntityList<Expr>;

/// The payload of a Relax expression.
#[derive(Clone, Debug, PartialEq)]
pub enum ExprData {
    /// A use of a variable.
    Var(Var),
    /// A module function (`cls.f`).
    Global(Global),
    /// An operator, used as a callee.
    Op(OpRef),
    /// `R.ExternFunc("name")`: a packed function found by name at run time. Also the callee
    /// of `R.call_packed("name", ...)` and the first argument of `R.call_dps_packed`.
    ExternFunc(String),
    /// A call.
    Call(Call),
    /// A tuple `(a, b)`.
    Tuple(ExprList),
    /// `t[i]`.
    GetItem {
        /// The tuple.
        tuple: Expr,
        /// The field index.
        index: u32,
    },
    /// `R.shape([1, n])`.
    Shape(Vec<PrimExpr>),
    /// `R.prim_value(e)`.
    Prim(PrimExpr),
    /// `R.str("...")`.
    Str(String),
    /// `R.dtype("float32")`.
    DType(DataType),
    /// A constant of the module (`R.const(...)` or `metadata[...]`).
    Const(Constant),
    /// `if cond: ... else: ...`, whose value is the branch results.
    If {
        /// A leaf: a bool scalar tensor or prim value.
        cond: Expr,
        /// The true branch.
        then_branch: Seq,
        /// The false branch.
        else_branch: Seq,
    },
    /// A local function.
    Function(Box<FunctionNode>),
}

/// A call node.
#[derive(Clone, Debug, PartialEq)]
pub struct Call {
    /// The callee: an `Op`, `Global`, `ExternFunc` or `Var` expression.
    pub callee: Expr,
    /// Positional Relax arguments.
    pub args: ExprList,
    /// Op attributes (keywords), in the op's declared order.
    pub attrs: Attrs,
    /// Result types given explicitly (`sinfo_args=`, `out_sinfo=` for DPS calls).
    pub sinfo_args: Vec<Ty>,
}

/// How a binding binds its variable.
#[derive(Clone, Debug, PartialEq)]
pub enum BindingKind {
    /// `x = value`.
    Value,
    /// `x: T = R.match_cast(value, T)`: checks the value at run time; may define
    /// symbolic variables.
    MatchCast(Ty),
}

/// One binding of a block.
#[derive(Clone, Debug, PartialEq)]
pub struct Binding {
    /// The defined variable.
    pub var: Var,
    /// The bound value.
    pub value: Expr,
    /// Plain or match-cast.
    pub kind: BindingKind,
}

/// A binding block.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BlockData {
    /// True for `with R.dataflow():`.
    pub dataflow: bool,
    /// Bindings in order.
    pub bindings: Vec<Binding>,
}

/// A sequence: blocks followed by a result (TVM's `SeqExpr`).
#[derive(Clone, Debug, PartialEq)]
pub struct SeqData {
    /// Blocks in order.
    pub blocks: Vec<Block>,
    /// The result (a leaf).
    pub body: Expr,
}

/// A function's signature and body (top-level or local).
#[derive(Clone, Debug, PartialEq)]
pub struct FunctionNode {
    /// Parameters.
    pub params: Vec<Var>,
    /// The declared result type.
    pub ret: Ty,
    /// The body.
    pub body: Seq,
    /// Attributes, including `global_symbol` for public top-level functions.
    pub attrs: Attrs,
    /// False for `@R.function(pure=False)`.
    pub pure: bool,
}

/// Source spans of a Relax function's entities.
#[derive(Clone, Debug, Default)]
pub struct RelaxSpans {
    /// Where each variable is defined (the parameter, or the binding statement).
    pub vars: SecondaryMap<Var, Span>,
    /// Where each expression was written.
    pub exprs: SecondaryMap<Expr, Span>,
    /// The `with R.dataflow():` line of each dataflow block.
    pub blocks: SecondaryMap<Block, Span>,
    /// The whole function (its `def` line).
    pub func: Span,
}

/// A Relax function with its arenas.
#[derive(Clone, Debug)]
pub struct RelaxFunction {
    /// Symbolic variables, TIR expressions and types.
    pub pool: Pool,
    /// Relax variables.
    pub vars: PrimaryMap<Var, VarData>,
    /// Expressions.
    pub exprs: PrimaryMap<Expr, ExprData>,
    /// The type of each expression (`None` for op references and not-yet-typed nodes).
    pub expr_ty: SecondaryMap<Expr, Option<Ty>>,
    /// Binding blocks.
    pub blocks: PrimaryMap<Block, BlockData>,
    /// Sequences: the body, `if` branches, local function bodies.
    pub seqs: PrimaryMap<Seq, SeqData>,
    /// The operand lists of calls and tuples.
    pub lists: ListPool<Expr>,
    /// The function itself.
    pub func: FunctionNode,
    /// Source spans.
    pub spans: RelaxSpans,
}

impl ExprData {
    /// Calls `f` on each direct operand: a call's callee and arguments, tuple fields, the
    /// tuple of an item access, an `if`'s condition. Not the contents of nested sequences
    /// ([`ExprData::nested_seqs`]).
    pub fn for_each_operand(&self, lists: &ListPool<Expr>, mut f: impl FnMut(Expr)) {
        match self {
            ExprData::Call(c) => {
                f(c.callee);
                c.args.as_slice(lists).iter().for_each(|&a| f(a));
            }
            ExprData::Tuple(fields) => fields.as_slice(lists).iter().for_each(|&a| f(a)),
            ExprData::GetItem { tuple, .. } => f(*tuple),
            ExprData::If { cond, .. } => f(*cond),
            ExprData::Var(_)
            | ExprData::Global(_)
            | ExprData::Op(_)
            | ExprData::ExternFunc(_)
            | ExprData::Shape(_)
            | ExprData::Prim(_)
            | ExprData::Str(_)
            | ExprData::DType(_)
            | ExprData::Const(_)
            | ExprData::Function(_) => {}
        }
    }

    /// The direct operands ([`ExprData::for_each_operand`]) in order.
    pub fn operands(&self, lists: &ListPool<Expr>) -> Vec<Expr> {
        let mut out = Vec::new();
        self.for_each_operand(lists, |e| out.push(e));
        out
    }

    /// Replaces each direct operand by `f(operand)`, in the order of
    /// [`ExprData::for_each_operand`]. A list whose items change is written to a new list,
    /// so expressions that share a list (a copied expression) keep theirs.
    pub fn map_operands(&mut self, lists: &mut ListPool<Expr>, mut f: impl FnMut(Expr) -> Expr) {
        fn map_list(l: &mut ExprList, lists: &mut ListPool<Expr>, f: &mut impl FnMut(Expr) -> Expr) {
            let new: Vec<Expr> = l.as_slice(lists).iter().map(|&a| f(a)).collect();
            if new.as_slice() != l.as_slice(lists) {
                *l = lists.alloc(new);
            }
        }
        match self {
            ExprData::Call(c) => {
                c.callee = f(c.callee);
                map_list(&mut c.args, lists, &mut f);
            }
            ExprData::Tuple(fields) => map_list(fields, lists, &mut f),
            ExprData::GetItem { tuple, .. } => *tuple = f(*tuple),
            ExprData::If { cond, .. } => *cond = f(*cond),
            ExprData::Var(_)
            | ExprData::Global(_)
            | ExprData::Op(_)
            | ExprData::ExternFunc(_)
            | ExprData::Shape(_)
            | ExprData::Prim(_)
            | ExprData::Str(_)
            | ExprData::DType(_)
            | ExprData::Const(_)
            | ExprData::Function(_) => {}
        }
    }

    /// The sequences nested directly in the expression: an `if`'s branches (then, else),
    /// a local function's body.
    pub fn nested_seqs(&self) -> impl Iterator<Item = Seq> + use<> {
        let (a, b) = match self {
            ExprData::If { then_branch, else_branch, .. } => (Some(*then_branch), Some(*else_branch)),
            ExprData::Function(node) => (Some(node.body), None),
            _ => (None, None),
        };
        a.into_iter().chain(b)
    }
}

impl RelaxFunction {
    /// A function with no parameters whose body is the empty tuple, of type `R.Object`:
    /// the start of a function a pass or a test builds.
    pub fn new() -> RelaxFunction {
        let mut pool = Pool::new();
        let object = pool.intern_ty(crate::ty::TyData::Object);
        let mut exprs = PrimaryMap::new();
        let unit = exprs.push(ExprData::Tuple(ExprList::new()));
        let mut seqs = PrimaryMap::new();
        let body = seqs.push(SeqData { blocks: Vec::new(), body: unit });
        RelaxFunction {
            pool,
            vars: PrimaryMap::new(),
            exprs,
            expr_ty: SecondaryMap::new(),
            blocks: PrimaryMap::new(),
            seqs,
            lists: ListPool::new(),
            func: FunctionNode { params: Vec::new(), ret: object, body, attrs: Attrs::new(), pure: true },
            spans: RelaxSpans::default(),
        }
    }
    /// The payload of an expression.
    pub fn expr(&self, e: Expr) -> &ExprData {
        &self.exprs[e]
    }
    /// The payload of a variable.
    pub fn var(&self, v: Var) -> &VarData {
        &self.vars[v]
    }
    /// The payload of a sequence.
    pub fn seq(&self, s: Seq) -> &SeqData {
        &self.seqs[s]
    }
    /// The payload of a sequence, for writing.
    pub fn seq_mut(&mut self, s: Seq) -> &mut SeqData {
        &mut self.seqs[s]
    }
    /// The function's body.
    pub fn body(&self) -> &SeqData {
        &self.seqs[self.func.body]
    }
    /// The items of an expression list (given by value or by reference).
    pub fn list(&self, l: impl std::borrow::Borrow<ExprList>) -> &[Expr] {
        l.borrow().as_slice(&self.lists)
    }
    /// A new expression list.
    pub fn new_list(&mut self, items: impl IntoIterator<Item = Expr>) -> ExprList {
        self.lists.alloc(items)
    }
    /// A new sequence.
    pub fn add_seq(&mut self, blocks: Vec<Block>, body: Expr) -> Seq {
        self.seqs.push(SeqData { blocks, body })
    }
    /// The type of an expression, if known.
    pub fn ty_of(&self, e: Expr) -> Option<Ty> {
        *self.expr_ty.get(e)
    }
    /// Adds an expression with its type.
    pub fn add_expr(&mut self, data: ExprData, ty: Option<Ty>) -> Expr {
        let e = self.exprs.push(data);
        self.expr_ty.set(e, ty);
        e
    }
    /// Adds a tuple of `fields`.
    pub fn add_tuple(&mut self, fields: impl IntoIterator<Item = Expr>, ty: Option<Ty>) -> Expr {
        let l = self.lists.alloc(fields);
        self.add_expr(ExprData::Tuple(l), ty)
    }
    /// Adds a call.
    pub fn add_call(
        &mut self,
        callee: Expr,
        args: impl IntoIterator<Item = Expr>,
        attrs: Attrs,
        sinfo_args: Vec<Ty>,
        ty: Option<Ty>,
    ) -> Expr {
        let args = self.lists.alloc(args);
        self.add_expr(ExprData::Call(Call { callee, args, attrs, sinfo_args }), ty)
    }
    /// Adds a variable.
    pub fn add_var(&mut self, name: impl Into<String>, ty: Ty, dataflow: bool) -> Var {
        self.vars.push(VarData { name: name.into(), ty, dataflow })
    }
    /// An expression that uses `v`, typed as `v`.
    pub fn use_var(&mut self, v: Var) -> Expr {
        let ty = self.vars[v].ty;
        self.add_expr(ExprData::Var(v), Some(ty))
    }
    /// The op of a call's callee, when it is an op of the table.
    pub fn callee_op(&self, call: &Call) -> Option<OpId> {
        match &self.exprs[call.callee] {
            ExprData::Op(op) => op.id(),
            _ => None,
        }
    }
    /// The op `e` calls, when `e` is a call of an op of the table.
    pub fn called_op(&self, e: Expr) -> Option<OpId> {
        match &self.exprs[e] {
            ExprData::Call(c) => self.callee_op(c),
            _ => None,
        }
    }
    /// The direct operands of an expression ([`ExprData::for_each_operand`]).
    pub fn operands(&self, e: Expr) -> Vec<Expr> {
        self.exprs[e].operands(&self.lists)
    }
    /// True for leaf expressions (what ANF allows as call arguments and tuple fields).
    pub fn is_leaf(&self, e: Expr) -> bool {
        match &self.exprs[e] {
            ExprData::Var(_)
            | ExprData::Global(_)
            | ExprData::Op(_)
            | ExprData::ExternFunc(_)
            | ExprData::Shape(_)
            | ExprData::Prim(_)
            | ExprData::Str(_)
            | ExprData::DType(_)
            | ExprData::Const(_) => true,
            ExprData::Tuple(fields) => self.list(*fields).iter().all(|&f| self.is_leaf(f)),
            ExprData::Call(_) | ExprData::GetItem { .. } | ExprData::If { .. } | ExprData::Function(_) => false,
        }
    }
    /// Bindings of a sequence in order, with the block each belongs to.
    pub fn bindings_of(&self, seq: Seq) -> impl Iterator<Item = (Block, &Binding)> + '_ {
        self.seqs[seq].blocks.iter().flat_map(move |&b| self.blocks[b].bindings.iter().map(move |bd| (b, bd)))
    }
    /// Every sequence reachable from the body, outer ones before the ones nested in them
    /// (a sequence's nested sequences in binding order, then-branch before else-branch).
    pub fn all_seqs(&self) -> Vec<Seq> {
        let mut out = vec![self.func.body];
        let mut i = 0;
        while i < out.len() {
            let s = out[i];
            for &b in &self.seqs[s].blocks {
                for bd in &self.blocks[b].bindings {
                    out.extend(self.exprs[bd.value].nested_seqs());
                }
            }
            i += 1;
        }
        out
    }
    /// Calls `f` on every expression reachable from the function's sequences: binding
    /// values, their operands (transitively), and sequence results.
    pub fn for_each_reachable(&self, mut f: impl FnMut(Expr, &ExprData)) {
        let mut stack: Vec<Expr> = Vec::new();
        for s in self.all_seqs() {
            let seq = &self.seqs[s];
            for &b in &seq.blocks {
                stack.extend(self.blocks[b].bindings.iter().map(|bd| bd.value));
            }
            stack.push(seq.body);
            while let Some(e) = stack.pop() {
                let data = &self.exprs[e];
                f(e, data);
                data.for_each_operand(&self.lists, |o| stack.push(o));
            }
        }
    }
}

impl Default for RelaxFunction {
    fn default() -> RelaxFunction {
        RelaxFunction::new()
    }
}
