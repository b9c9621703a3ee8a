//! Lowered-TIR statements (`samples/*/pipeline/17_*`, optional in the format): `assert`,
//! `T.attr`, `return`, `T.launch_thread` and `T.env_thread`. `let`, `T.decl_buffer`,
//! `T.Buffer` and lowered `T.alloc_buffer` are read with the other assignments
//! ([`super::stmts`]).
//!
//! Representation choices, for the printer:
//! * `assert c, "msg"` keeps the string; the HEAD form `assert c, ("Kind", [parts...])`
//!   becomes the call `T.assert_message("Kind", parts...)` (op `tir.assert_message`,
//!   result type `handle`);
//! * `T.attr({"key": value})` (one-entry dicts, as TVM HEAD prints `compute_scope`) is
//!   `T.attr(0, "key", value)`; a longer dict nests one attribute per entry;
//! * `return e` is `T.evaluate(T.ret(e))`, as TVM's parser builds it (op `tir.ret`);
//! * `T.launch_thread` is a `thread_extent` attribute on an `int32` thread variable (the
//!   thread tag is not kept).

use relax_ir::{AttrNode, DataType, PrimExprData, StmtData};
use relax_ir::{Intrinsic, TirOp};

use super::super::{LResult, sp};
use super::exprs::{is_metadata_ref, metadata_ref};
use super::scope::{Entry, TirCx};
use super::stmts::{Item, Pending, PendingKind};
use crate::ast::{self, ExprKind};

/// The op name of the HEAD assert message `("Kind", [parts...])`.
pub(crate) const ASSERT_MESSAGE_OP: &str = "tir.assert_message";

impl TirCx<'_, '_> {
    /// `assert cond, message`: an assertion over the rest of the list.
    pub(super) fn assert_stmt(&mut self, s: &ast::Stmt, test: &ast::Expr, msg: Option<&ast::Expr>) -> LResult<Item> {
        let cond = self.expr(test);
        let message = match msg {
            None => Ok(self.pool.raw(PrimExprData::Str(String::new()))),
            Some(m) => self.assert_message(m),
        };
        let (cond, message) = (cond?, message?);
        Ok(Item::Scopes(vec![Pending { kind: PendingKind::Assert { cond, message }, span: sp(s.span) }]))
    }

    /// A message: a string (or any expression), or the HEAD tuple `("Kind", [parts])`.
    fn assert_message(&mut self, m: &ast::Expr) -> LResult<relax_ir::PrimExpr> {
        let ExprKind::Tuple { elts, .. } = &m.kind else {
            return self.expr(m);
        };
        let [kind, parts] = elts.as_slice() else {
            return Err(self.err(m.span, "expected an assert message `(\"Kind\", [parts...])`"));
        };
        let kind = self.str_arg(kind, "the error kind")?.to_string();
        let Some(parts) = parts.as_sequence() else {
            return Err(self.err(parts.span, "expected a list of message parts"));
        };
        let mut args = vec![self.pool.raw(PrimExprData::Str(kind))];
        for p in parts {
            let v = if is_metadata_ref(p) { metadata_ref(self, p)? } else { self.expr(p)? };
            args.push(v);
        }
        Ok(self.pool.raw(PrimExprData::Call { dtype: DataType::HANDLE, op: TirOp::from_name(ASSERT_MESSAGE_OP), args }))
    }

    /// `return e`: `T.evaluate(T.ret(e))`.
    pub(super) fn return_stmt(&mut self, s: &ast::Stmt, value: Option<&ast::Expr>) -> LResult<Item> {
        let Some(value) = value else {
            return Err(self.err(s.span, "a PrimFunc `return` needs a value"));
        };
        let v = self.expr(value)?;
        let dtype = self.pool.dtype(v);
        let call = self.pool.raw(PrimExprData::Call { dtype, op: Intrinsic::Ret.into(), args: vec![v] });
        Ok(Item::Stmt(self.add_stmt(StmtData::Evaluate(call), sp(s.span))))
    }

    /// `T.attr(node, "key", value)` or `T.attr({"key": value})`: attributes over the
    /// rest of the list (or over the body of a `with`).
    pub(super) fn attr_pending(&mut self, call: &ast::Call, span: ast::Span) -> LResult<Vec<Pending>> {
        if !call.keywords.is_empty() {
            return Err(self.err(span, "`T.attr` takes no keyword arguments"));
        }
        match call.args.as_slice() {
            [node, key, value] => {
                let node = match &node.kind {
                    ExprKind::Str(s) => AttrNode::Str(s.clone()),
                    _ => match self.entry_buffer(node) {
                        Some(b) => AttrNode::Buffer(b),
                        None => AttrNode::Expr(self.expr(node)?),
                    },
                };
                let key = self.str_arg(key, "an attribute key")?.to_string();
                let value = self.expr(value)?;
                Ok(vec![Pending { kind: PendingKind::Attr { node, key, value }, span: sp(span) }])
            }
            [ast::Expr { kind: ExprKind::Dict(pairs), span: dspan }] if !pairs.is_empty() => {
                let mut out = Vec::with_capacity(pairs.len());
                for (k, v) in pairs {
                    let key = self.str_arg(k, "an attribute key")?.to_string();
                    let value = self.expr(v)?;
                    let zero = self.pool.int(DataType::INT32, 0);
                    out.push(Pending {
                        kind: PendingKind::Attr { node: AttrNode::Expr(zero), key, value },
                        span: sp(*dspan),
                    });
                }
                Ok(out)
            }
            _ => Err(self.err(span, "expected `T.attr(node, \"key\", value)`")),
        }
    }

    /// `t = T.launch_thread("threadIdx.x", extent)` or `with T.launch_thread(t, extent):`.
    pub(super) fn launch_thread_pending(
        &mut self,
        target: Option<&ast::Expr>,
        call: &ast::Call,
        span: ast::Span,
    ) -> LResult<Vec<Pending>> {
        let [thread, extent] = call.args.as_slice() else {
            return Err(self.err(span, "`T.launch_thread` takes a thread and an extent"));
        };
        let extent = self.int_expr(extent, "a thread extent")?;
        let (var, tag) = match (&thread.kind, target) {
            (ExprKind::Str(tag), Some(t)) => {
                let Some(name) = t.as_name() else {
                    return Err(self.err(t.span, "`T.launch_thread` must be assigned to a name"));
                };
                (self.define_var(name, DataType::INT32, t.span), tag.clone())
            }
            (ExprKind::Str(tag), None) => {
                let name = tag.replace('.', "_");
                (self.define_var(&name, DataType::INT32, thread.span), tag.clone())
            }
            (ExprKind::Name(n), _) => match self.entry(n) {
                Some(Entry::Var(v)) => (v, String::new()),
                _ => return Err(self.err(thread.span, format!("undefined variable `{n}`"))),
            },
            _ => return Err(self.err(thread.span, "expected a thread tag or a thread variable")),
        };
        let key = if tag == "vthread" { "virtual_thread" } else { "thread_extent" };
        let node = AttrNode::Expr(self.pool.var_ref(var));
        Ok(vec![Pending { kind: PendingKind::Attr { node, key: key.into(), value: extent }, span: sp(span) }])
    }

    /// `t = T.env_thread("threadIdx.x")`: an `int32` thread variable.
    pub(super) fn env_thread(&mut self, target: &ast::Expr, call: &ast::Call, span: ast::Span) -> LResult<()> {
        let Some(name) = target.as_name() else {
            return Err(self.err(target.span, "`T.env_thread` must be assigned to a name"));
        };
        match call.args.as_slice() {
            [tag] if tag.as_str().is_some() => {
                self.define_var(name, DataType::INT32, target.span);
                Ok(())
            }
            _ => Err(self.err(span, "`T.env_thread` takes a thread tag")),
        }
    }
}
