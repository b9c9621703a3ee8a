//! The verifier: checks a [`Module`] for well-formedness (`text-format.md` §13) and reports
//! every violation, never panicking, in time linear in the module's size.
//!
//! Checks run in this order; a function whose handles are broken gets no deeper check.
//!
//! **1. Handles** (`handles.rs`)
//! * every handle stored in a node is in range of its arena: `Var`, `Expr`, `Block` (Relax),
//!   `Stmt`, `Buffer` (TIR), `SymVar`, `PrimExpr`, `Ty` (the function's pool), `Global` and
//!   `Constant` (the module), op ids (the op table)
//! * an interned TIR expression or type refers only to entries interned before it
//! * a type's tensor-shape variable exists (only Relax functions have Relax variables)
//! * a TIR expression loads only from buffers of its own PrimFunc
//! * no Relax expression contains itself; no TIR statement contains itself
//!
//! **2. Module** (`module_rules.rs`)
//! * global names are unique among live functions (not `Func::Removed`)
//! * a `global_symbol` attribute is a string equal to the global's name; a lowered PrimFunc
//!   (with a `calling_conv` attribute) may instead carry TVM's `__tvm_ffi_<name>`
//! * `Func::Unresolved` globals appear only in `ModuleForm::SingleFunction`
//!
//! **3. Relax functions** (`relax_rules.rs`, `relax_calls.rs`)
//! * every reachable expression but an operator has a type
//! * each variable is defined once (parameters included) and before its use
//! * a local function sees the definitions before it, and its own binding variable
//! * variables defined in an `if` branch are not visible after the `if`
//! * variables defined in a local function are not visible after it
//! * dataflow variables are defined only in dataflow blocks, never as parameters
//! * dataflow variables are used only inside their own dataflow block
//! * symbolic variables are defined by a bare dim or prim value of a parameter annotation, or
//!   by the first bare occurrence in a `R.match_cast` type, and are used only after that
//! * the return annotation uses only symbolic variables the parameters define
//! * the body's result can be a value of the return type (`returns.rs`): a kind, rank,
//!   dtype or dim that provably differs is an error; unprovable symbolic facts are not
//! * symbolic variables defined in an `if` branch or a local function stay inside it
//! * the Relax variable of a `R.Tensor(s, ...)` type is visible where the type is used
//! * ANF: callees, call arguments, tuple fields, item-access tuples, `if` conditions and
//!   sequence results are leaves (variables, globals, constants, shape, prim, string and
//!   dtype values, extern functions, operators, tuples of leaves)
//! * an `if` or local function appears in one place only
//! * dataflow blocks contain no `if` bindings
//! * dataflow blocks contain no impure calls: ops marked impure in the op table,
//!   `R.call_packed` (an extern-function callee), PrimFunc calls, impure Relax functions,
//!   impure callables
//! * a pure function without `relax.force_pure` contains no impure call (local functions
//!   are checked on their own; recursive calls do not count)
//! * `relax.force_pure` is set only on pure functions
//! * a reference to a global does not name a removed function
//! * a callee is a function (operator, global, extern function or variable)
//! * a call to a Relax function, PrimFunc or typed local callable passes one argument per
//!   parameter
//! * `call_tir`, `call_tir_inplace`, `call_tir_with_grad`: 2 or 3 arguments; the callee is a
//!   PrimFunc global; the arguments are a tuple; exactly one `out_sinfo`, a tensor or a tuple
//!   of tensors; `tir_vars` is a shape; inputs (scalars in the tuple included) plus outputs
//!   plus `tir_vars` equal the PrimFunc's parameter count; each `out_sinfo` tensor has the
//!   dtype, rank and constant dims of the PrimFunc's output buffer (`dps_outputs.rs`;
//!   symbolic dims and unknown parts always match)
//! * `call_tir_inplace`: `inplace_indices` is a list with one entry per output, each `-1` or
//!   an argument index, no argument used twice
//! * `call_dps_packed`: 2 arguments; the callee is an extern function; one `out_sinfo`
//! * the variable a DPS call is bound to matches `out_sinfo` in kind, rank, dtype and
//!   constant dims (unknown parts always match)
//! * an item access on a tuple type has its index in range; on a non-tuple type it is an error
//! * a `R.match_cast` type has the value type's kind (or either is `R.Object`), and the
//!   variable it binds has exactly that type
//! * an `if` condition has a tensor, prim or object type
//!
//! **4. PrimFuncs** (`tir_rules.rs`)
//! * parameters are listed once; `buffer_map` keys are `handle` parameters, each bound once,
//!   each buffer bound once
//! * a buffer-map buffer defines its data pointer and the first bare occurrences in its
//!   shape, strides and offset; all other variables there are used
//! * TIR variables are defined once per function (parameters, loop variables, block
//!   iteration variables, `let` variables) and used only in scope: a loop variable inside its
//!   loop, an iteration variable inside its block, a `let` variable inside its body
//! * loop bounds and steps, block predicates, iteration domains and bindings use only
//!   variables of the enclosing scope (not the loop's or block's own)
//! * a binding uses no other block's iteration variables
//! * inside a block with iteration variables, enclosing loop variables are used only
//!   through the bindings
//! * buffers are declared before use and used only in scope: the buffer map, the
//!   `alloc_buffers` and `match_buffers` of an enclosing block, `DeclBuffer`/`Allocate`
//!   bodies (a buffer named only by a `T.attr` node is not checked)
//! * stores and loads give one index per buffer dim; `T.reads`/`T.writes`/`T.match_buffer`
//!   regions one range per dim
//! * block names are unique within the function
//! * in schedulable TIR (`s_tir`) with blocks, the body is the root block
//! * a statement that defines something appears in one place only
//!
//! [`verify_function`] runs checks 1–4 for one function, for pass managers.

mod dps_outputs;
mod error;
mod facts;
mod handles;
mod module_rules;
mod names;
mod relax_calls;
mod relax_rules;
mod returns;
mod tir_rules;

pub use error::{Entity, VerifyError};

use crate::entities::Global;
use crate::module::{Func, Module};

/// Verifies the whole module; `Err` holds every violation found.
pub fn verify_module(m: &Module) -> Result<(), Vec<VerifyError>> {
    let mut out = Vec::new();
    let live: Vec<Global> = m.live().map(|(g, _)| g).collect();
    let sound: Vec<bool> = live.iter().map(|&g| check_handles(m, g, &mut out)).collect();
    module_rules::check_module(m, &mut out);
    for kind in [Kind::Relax, Kind::Prim] {
        for (&g, &ok) in live.iter().zip(&sound) {
            if ok {
                check_body(m, g, kind, &mut out);
            }
        }
    }
    if out.is_empty() { Ok(()) } else { Err(out) }
}

/// Verifies one function of the module (its handles, the module rules that concern it,
/// and its body).
pub fn verify_function(m: &Module, g: Global) -> Result<(), Vec<VerifyError>> {
    let mut out = Vec::new();
    match m.globals.get(g) {
        None => {
            let n = m.globals.len();
            out.push(VerifyError::new(
                None,
                Entity::Module,
                format!("global `{g:?}` is out of range (the module has {n} globals)"),
            ));
        }
        Some(data) if matches!(data.func, Func::Removed) => {}
        Some(_) => {
            let ok = check_handles(m, g, &mut out);
            module_rules::check_one(m, g, &mut out);
            if ok {
                check_body(m, g, Kind::Relax, &mut out);
                check_body(m, g, Kind::Prim, &mut out);
            }
        }
    }
    if out.is_empty() { Ok(()) } else { Err(out) }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Relax,
    Prim,
}

fn check_handles(m: &Module, g: Global, out: &mut Vec<VerifyError>) -> bool {
    let data = &m.globals[g];
    match &data.func {
        Func::Relax(f) => handles::check_relax(m, g, &data.name, f, out),
        Func::Prim(f) => handles::check_prim(g, &data.name, f, out),
        Func::Extern(e) => handles::check_extern(g, &data.name, e, out),
        Func::Unresolved | Func::Removed => true,
    }
}

fn check_body(m: &Module, g: Global, kind: Kind, out: &mut Vec<VerifyError>) {
    let data = &m.globals[g];
    match (&data.func, kind) {
        (Func::Relax(f), Kind::Relax) => relax_rules::check_relax_function(m, g, &data.name, f, out),
        (Func::Prim(f), Kind::Prim) => tir_rules::check_prim_function(g, &data.name, f, out),
        _ => {}
    }
}
