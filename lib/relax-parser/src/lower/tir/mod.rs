//! Lowering of TensorIR PrimFuncs (`text-format.md` §8): the syntax tree of one
//! `@T.prim_func` becomes a [`PrimFunc`].
//!
//! * [`params`]: dialect detection, parameters, return type, declarations of symbolic
//!   variables, `T.match_buffer` of parameters;
//! * [`buffers`]: the arguments of every buffer declaration;
//! * [`stmts`]: statement lists and the statement dispatcher (stores, `if`, `while`,
//!   `let`, expression statements);
//! * [`loops`], [`blocks`], [`regions`]: loops, blocks and buffer regions (with the
//!   computation of missing `T.reads`/`T.writes`);
//! * [`lowered`]: the optional lowered-TIR statements (`assert`, `T.attr`, `return`);
//! * [`exprs`], [`scope`]: expressions and the function's state.
//!
//! **Decorator.** A PrimFunc is schedulable (`s_tir`) when the decorator says
//! `s_tir=True`, or when it is written in the classic spelling and says nothing about
//! `s_tir` (`text-format.md` §2). Public functions get the `global_symbol` attribute.
//!
//! **Root block.** As TVM's script completer: when the body contains a block or there
//! are function-level allocations, and the body is not already a single block without
//! iteration variables, the function-level statements are wrapped in a block named
//! `"root"` (no iteration variables, empty reads and writes) that holds the
//! function-level `T.sblock_alloc_buffer`s.

mod blocks;
mod buffers;
mod exprs;
mod loops;
mod lowered;
mod params;
mod regions;
mod scope;
mod stmts;

use std::collections::HashMap;

use relax_ir::attrs::Attrs;
use relax_ir::{BlockNode, PrimFunc, StmtData};

use super::attrs::normalize_func_attrs;
use super::module::{Decorator, ModuleCx, decorator_attrs};
use super::{LResult, Reported, sp};
use crate::ast;
use scope::{SeqCtx, TirCx};

/// Lowers one PrimFunc.
pub(crate) fn lower_prim_func(cx: &mut ModuleCx<'_>, def: &ast::FunctionDef, deco: &Decorator) -> LResult<PrimFunc> {
    let errors_before = cx.diags.list.len();
    let classic = params::is_classic(cx, def);
    let mut tx = TirCx::new(cx, classic);
    tx.spans.func = sp(def.name.span);
    tx.decls = params::prescan_declarations(&def.body);
    tx.type_params = def.type_params.iter().map(|t| t.name.clone()).collect();
    params::lower_params(&mut tx, def);
    tx.param_set = tx.params.iter().copied().collect();
    let ret = params::lower_ret(&mut tx, def);
    let stmts = tx.lower_seq(&def.body, SeqCtx::Function);
    let body = wrap_root(&mut tx, stmts, def);

    let mut attrs = std::mem::take(&mut tx.attrs);
    normalize_func_attrs(&mut attrs);
    decorator_attrs(&def.name.name, deco, &mut attrs);
    let mut buffer_map = std::mem::take(&mut tx.buffer_map);
    let mut position = HashMap::new();
    for (i, &p) in tx.params.iter().enumerate() {
        position.entry(p).or_insert(i);
    }
    buffer_map.sort_by_key(|(h, _)| position.get(h).copied());

    let new_errors = tx.cx.diags.list.get(errors_before..).is_some_and(|d| d.iter().any(|d| d.is_error()));
    let failed = tx.failed || new_errors || tx.cx.diags.full();
    if failed {
        return Err(Reported);
    }
    Ok(PrimFunc {
        pool: tx.pool,
        buffers: tx.buffers,
        stmts: tx.stmts,
        params: tx.params,
        buffer_map,
        ret,
        attrs,
        body,
        s_tir: deco.s_tir || (!deco.s_tir_given && classic),
        persistent: deco.persistent,
        spans: tx.spans,
    })
}

/// The function body, wrapped in a root block when needed.
fn wrap_root(tx: &mut TirCx<'_, '_>, stmts: Vec<relax_ir::Stmt>, def: &ast::FunctionDef) -> relax_ir::Stmt {
    let span = def.body.first().map_or(def.name.span, |f| f.span.to(def.body.last().map_or(f.span, |l| l.span)));
    let has_block = stmts.iter().any(|&s| tx.contains_block(s));
    let explicit_root = tx.root_allocs.is_empty()
        && matches!(stmts.as_slice(), [one] if matches!(&tx.stmts[*one], StmtData::Block(b) if b.iter_vars.is_empty()));
    if explicit_root || (!has_block && tx.root_allocs.is_empty()) {
        return tx.seq(stmts, span);
    }
    let body = tx.seq(stmts, span);
    let node = BlockNode {
        name: "root".to_string(),
        iter_vars: Vec::new(),
        predicate: None,
        reads: Vec::new(),
        writes: Vec::new(),
        annotations: Attrs::new(),
        alloc_buffers: std::mem::take(&mut tx.root_allocs),
        match_buffers: Vec::new(),
        init: None,
        body,
    };
    let at = tx.spans.stmts.get(body).to(sp(span));
    tx.add_stmt(StmtData::Block(Box::new(node)), at)
}
