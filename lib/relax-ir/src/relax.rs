//! Relax functions: variables, expressions, binding blocks and sequence expressions.
//!
//! A [`RelaxFunction`] owns its arenas. The body is in A-normal form: binding values may
//! be any expression, but call arguments, callees, tuple fields, tuple-item operands and
//! `if` conditions are leaves (variables, globals, constants, shape/prim/string/dtype
//! values, or tuples of leaves). Local functions (`def f` inside a function) live in the
//! same arenas and share the enclosing function's symbolic variables.

use relax_entity::{PrimaryMap, SecondaryMap};

use crate::attrs::Attrs;
use crate::dtype::DataType;
use crate::entities::{Block, Constant, Expr, Global, PrimExpr, Ty, Var};
use crate::op::OpRef;
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
    Tuple(Vec<Expr>),
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
        then_branch: SeqExpr,
        /// The false branch.
        else_branch: SeqExpr,
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
    pub args: Vec<Expr>,
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

/// Blocks followed by a result.
#[derive(Clone, Debug, PartialEq)]
pub struct SeqExpr {
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
    pub body: SeqExpr,
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
    /// The function itself.
    pub func: FunctionNode,
    /// Source spans.
    pub spans: RelaxSpans,
}

impl RelaxFunction {
    /// The payload of an expression.
    pub fn expr(&self, e: Expr) -> &ExprData {
        &self.exprs[e]
    }
    /// The payload of a variable.
    pub fn var(&self, v: Var) -> &VarData {
        &self.vars[v]
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
    /// Adds a variable.
    pub fn add_var(&mut self, name: impl Into<String>, ty: Ty, dataflow: bool) -> Var {
        self.vars.push(VarData { name: name.into(), ty, dataflow })
    }
    /// An expression that uses `v`, typed as `v`.
    pub fn use_var(&mut self, v: Var) -> Expr {
        let ty = self.vars[v].ty;
        self.add_expr(ExprData::Var(v), Some(ty))
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
            ExprData::Tuple(fields) => fields.iter().all(|&f| self.is_leaf(f)),
            ExprData::Call(_) | ExprData::GetItem { .. } | ExprData::If { .. } | ExprData::Function(_) => false,
        }
    }
    /// Bindings of a sequence in order, with the block each belongs to.
    pub fn bindings_of<'a>(&'a self, seq: &'a SeqExpr) -> impl Iterator<Item = (Block, &'a Binding)> + 'a {
        seq.blocks.iter().flat_map(move |&b| self.blocks[b].bindings.iter().map(move |bd| (b, bd)))
    }
}
