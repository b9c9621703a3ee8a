//! Entity handles of the IR: `u32` indices into the arenas of a module or a function.
//!
//! Module-wide: [`Global`] (a function slot) and [`Constant`].
//! Per function ([`crate::pool::Pool`]): [`SymVar`] (a TIR scalar variable: symbolic shape
//! dims, loop and block variables, handles), [`PrimExpr`] and [`Ty`] (both interned).
//! Per Relax function: [`Var`], [`Expr`], [`Block`], [`Seq`]. Per PrimFunc: [`Stmt`], [`Buffer`].

use relax_entity::entity_impl;

entity_impl!(
    /// A function of the module (Relax, PrimFunc, extern or unresolved).
    Global,
    "global"
);
entity_impl!(
    /// A Relax constant of the module.
    Constant,
    "const"
);
entity_impl!(
    /// A TIR scalar variable: symbolic dim, loop/block variable, parameter or handle.
    SymVar,
    "sym"
);
entity_impl!(
    /// An interned TIR expression.
    PrimExpr,
    "prim"
);
entity_impl!(
    /// An interned type: Relax struct info.
    Ty,
    "ty"
);
entity_impl!(
    /// A Relax variable (bound once).
    Var,
    "var"
);
entity_impl!(
    /// A Relax expression node.
    Expr,
    "expr"
);
entity_impl!(
    /// A Relax binding block (plain or dataflow).
    Block,
    "block"
);
entity_impl!(
    /// A Relax sequence: blocks and a result (a function body, an `if` branch).
    Seq,
    "seq"
);
entity_impl!(
    /// A TIR statement.
    Stmt,
    "stmt"
);
entity_impl!(
    /// A TIR buffer.
    Buffer,
    "buffer"
);
