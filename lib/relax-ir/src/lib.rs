//! The relax IR: one [`Module`] holds Relax functions and TensorIR PrimFuncs.
//!
//! * [`module`]: the module, its globals and constants.
//! * [`relax`]: Relax functions (bindings, blocks, expressions).
//! * [`tir`]: PrimFuncs (buffers, loops, blocks, stores); [`tir_lower`]: their lowering to
//!   lowered TIR (no blocks), which the TIR interpreter and the code generators run.
//! * [`pool`], [`prim`], [`prim_build`], [`ty`]: per-function pools of TIR variables,
//!   interned TIR expressions (with TVM's folding constructors) and interned types.
//! * [`op`]: the operator table; [`intrinsic`]: the TIR intrinsics.
//! * [`infer`]: type inference (struct info): subtyping, joins, call and op result types.
//! * [`structural`]: name-free fingerprints of functions (structural equality).
//! * [`dtype`], [`attrs`], [`span`], [`entities`]: the small vocabulary.
//!
//! The data layout follows Cranelift: typed `u32` handles into arenas owned by each
//! function, spans in side tables, nesting by handle, no `Rc` or `RefCell`.

pub mod arith;
pub mod attrs;
pub mod diag;
pub mod dtype;
pub mod entities;
mod half;
pub mod infer;
pub mod intrinsic;
pub mod layout;
pub mod module;
pub mod op;
pub mod pool;
pub mod prim;
pub mod prim_build;
pub mod printer;
pub mod relax;
pub mod span;
pub mod structural;
pub mod tir;
pub mod tir_lower;
pub mod ty;
pub mod verify;

pub use attrs::{AttrValue, Attrs, FloatBits};
pub use diag::{Diagnostic, Severity};
pub use dtype::{DataType, TypeCode};
pub use entities::{Block, Buffer, Constant, Expr, Global, PrimExpr, Seq, Stmt, SymVar, Ty, Var};
pub use intrinsic::{Intrinsic, TirOp};
pub use module::{ConstData, ConstPayload, ExternFunc, Func, GlobalData, Module, ModuleForm, VDeviceInfo};
pub use op::{OpId, ops};
pub use pool::Pool;
pub use prim::{BinOp, PrimExprData, Range, SymVarData};
pub use relax::{
    Binding, BindingKind, BlockData, Call, ExprData, ExprList, FunctionNode, RelaxFunction, RelaxSpans, SeqData,
    VarData,
};
pub use span::Span;
pub use tir::{
    AttrNode, BlockNode, BufferData, BufferRegion, ForKind, IterKind, IterVar, MatchBufferRegion, PrimFunc, StmtData,
    TirSpans,
};
pub use ty::{TensorShape, TyData, VDevice};
