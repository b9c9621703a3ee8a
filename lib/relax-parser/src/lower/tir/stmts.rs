//! Statements: the dispatcher over statement kinds, statement lists, stores, `if`,
//! `while`, `T.evaluate`, expression statements, `let` bindings and declarations.
//!
//! Statements that scope the rest of their list in the IR (`x: T.let[T.int32] = e`,
//! `assert c, msg`, `T.attr(...)`, `x = T.decl_buffer(...)`, lowered `T.alloc_buffer`)
//! are collected as *pending* wrappers while the list is read; when the list ends, each
//! wrapper takes the statements after it as its body. This is done with an explicit
//! stack, so thousands of nested `let`s in lowered TIR do not deepen the recursion.
//!
//! After an error in a statement, lowering continues with the next one.

use relax_ir::{AttrNode, BinOp, Buffer, DataType, PrimExpr, Stmt, StmtData, SymVar};

use super::super::prim_expr::binary;
use super::super::{LResult, Reported, sp};
use super::buffers::Dims;
use super::exprs::type_annotation;
use super::params::declaration_type;
use super::scope::{Entry, SeqCtx, TirCx};
use crate::ast::{self, ExprKind, StmtKind};

/// A statement that takes the rest of its list as its body.
pub(super) struct Pending {
    /// What it is.
    pub kind: PendingKind,
    /// Its own span (not covering the body).
    pub span: relax_ir::Span,
}

/// The kinds of [`Pending`] statements.
pub(super) enum PendingKind {
    /// `x: T.let[dtype] = value`.
    Let {
        /// The variable.
        var: SymVar,
        /// Its value.
        value: PrimExpr,
    },
    /// `assert cond, message`.
    Assert {
        /// The condition.
        cond: PrimExpr,
        /// The message.
        message: PrimExpr,
    },
    /// `T.attr(node, key, value)`.
    Attr {
        /// What the attribute is attached to.
        node: AttrNode,
        /// The key.
        key: String,
        /// The value.
        value: PrimExpr,
    },
    /// `x = T.decl_buffer(...)`.
    DeclBuffer(Buffer),
    /// `x = T.alloc_buffer(...)` outside blocks (lowered TIR).
    Allocate(Buffer),
}

/// What lowering one statement produced.
pub(super) enum Item {
    /// A statement.
    Stmt(Stmt),
    /// Nothing (declarations, block headers, function attributes).
    Nothing,
    /// Wrappers around the rest of the list, outermost first.
    Scopes(Vec<Pending>),
}

impl TirCx<'_, '_> {
    /// Lowers a statement list.
    pub fn lower_seq(&mut self, stmts: &[ast::Stmt], ctx: SeqCtx) -> Vec<Stmt> {
        let mut open: Vec<(Vec<Stmt>, Pending)> = Vec::new();
        let mut out: Vec<Stmt> = Vec::new();
        for s in stmts {
            if self.cx.diags.full() {
                break;
            }
            match self.lower_stmt(s, ctx) {
                Ok(Item::Stmt(st)) => out.push(st),
                Ok(Item::Nothing) => {}
                Ok(Item::Scopes(pending)) => {
                    for p in pending {
                        open.push((std::mem::take(&mut out), p));
                    }
                }
                Err(Reported) => self.failed = true,
            }
        }
        while let Some((mut before, p)) = open.pop() {
            let body = self.rest_seq(out, p.span);
            let st = self.close(p, body);
            before.push(st);
            out = before;
        }
        out
    }

    /// Lowers the body of a compound statement in a new name scope.
    pub fn lower_scoped_body(&mut self, stmts: &[ast::Stmt], ctx: SeqCtx, span: ast::Span) -> Stmt {
        self.push_frame();
        let list = self.lower_seq(stmts, ctx);
        self.pop_frame();
        self.seq(list, span)
    }

    /// Wraps `body` into a pending statement.
    fn close(&mut self, p: Pending, body: Stmt) -> Stmt {
        let data = match p.kind {
            PendingKind::Let { var, value } => StmtData::Let { var, value, body },
            PendingKind::Assert { cond, message } => StmtData::Assert { cond, message, body },
            PendingKind::Attr { node, key, value } => StmtData::Attr { node, key, value, body },
            PendingKind::DeclBuffer(buffer) => StmtData::DeclBuffer { buffer, body },
            PendingKind::Allocate(buffer) => StmtData::Allocate { buffer, body },
        };
        self.add_stmt(data, p.span)
    }

    /// Lowers one statement.
    fn lower_stmt(&mut self, s: &ast::Stmt, ctx: SeqCtx) -> LResult<Item> {
        match &s.kind {
            StmtKind::Expr(e) => self.expr_stmt(s, e, ctx),
            StmtKind::Assign { targets, annotation, value } => self.assign(s, targets, annotation.as_ref(), value, ctx),
            StmtKind::AugAssign { target, op, value } => {
                let op = match op {
                    ast::BinOp::Add => BinOp::Add,
                    ast::BinOp::Sub => BinOp::Sub,
                    ast::BinOp::Mul => BinOp::Mul,
                    ast::BinOp::Div => BinOp::Div,
                    ast::BinOp::FloorDiv => BinOp::FloorDiv,
                    ast::BinOp::Mod => BinOp::FloorMod,
                    other => return Err(self.err(s.span, format!("`{other}=` is not supported in TIR"))),
                };
                self.store(s, target, value, Some(op))
            }
            StmtKind::With { item, target: Some(target), body } => self.with_as(s, item, target, body),
            StmtKind::With { item, target: None, body } => self.with_stmt(s, item, body, ctx),
            StmtKind::For { targets, iter, body } => self.lower_for(s, targets, iter, body),
            StmtKind::If { cond, then_body, else_body } => self.if_stmt(s, cond, then_body, else_body.as_deref()),
            StmtKind::While { cond, body } => {
                let c = self.expr(cond);
                let body = self.lower_scoped_body(body, SeqCtx::Other, s.span);
                let cond = c?;
                Ok(Item::Stmt(self.add_stmt(StmtData::While { cond, body }, sp(s.span))))
            }
            StmtKind::Return(value) => self.return_stmt(s, value.as_ref()),
            StmtKind::Assert { test, msg } => self.assert_stmt(s, test, msg.as_ref()),
            StmtKind::Pass => Ok(Item::Nothing),
            StmtKind::Break | StmtKind::Continue => {
                Err(self.err(s.span, "`break` and `continue` are not supported in TIR"))
            }
            StmtKind::FunctionDef(f) => Err(self.err(f.name.span, "functions cannot be nested in a PrimFunc")),
            StmtKind::ClassDef(c) => Err(self.err(c.name.span, "classes cannot appear in a PrimFunc")),
            StmtKind::Import { .. } => Err(self.err(s.span, "imports cannot appear in a PrimFunc")),
        }
    }

    /// An expression statement: `T.func_attr`, block headers, `T.evaluate`, `T.attr`, or
    /// a call evaluated for its effect.
    fn expr_stmt(&mut self, s: &ast::Stmt, e: &ast::Expr, ctx: SeqCtx) -> LResult<Item> {
        if matches!(e.kind, ExprKind::Str(_)) {
            // A docstring.
            return Ok(Item::Nothing);
        }
        if let Some((call, name)) = e.as_dotted_call() {
            match name.as_str() {
                "T.func_attr" => {
                    if ctx != SeqCtx::Function {
                        return Err(self.err(e.span, "`T.func_attr` must be at function level"));
                    }
                    self.func_attr(call, e.span)?;
                    return Ok(Item::Nothing);
                }
                "T.reads" | "T.writes" | "T.where" | "T.sblock_attr" | "T.block_attr" => {
                    self.block_header(&name, call, e, ctx)?;
                    return Ok(Item::Nothing);
                }
                "T.evaluate" => {
                    let [arg] = call.args.as_slice() else {
                        return Err(self.err(e.span, "`T.evaluate` takes one argument"));
                    };
                    let v = self.expr(arg)?;
                    return Ok(Item::Stmt(self.add_stmt(StmtData::Evaluate(v), sp(s.span))));
                }
                "T.attr" => return Ok(Item::Scopes(self.attr_pending(call, e.span)?)),
                "T.init" | "T.sblock" | "T.block" | "T.launch_thread" => {
                    return Err(self.err(e.span, format!("`{name}(...)` must be used as `with {name}(...):`")));
                }
                "T.match_buffer"
                | "T.sblock_alloc_buffer"
                | "T.alloc_buffer"
                | "T.decl_buffer"
                | "T.Buffer"
                | "T.alloc_local"
                | "T.alloc_shared" => {
                    return Err(self.err(e.span, format!("the result of `{name}` must be assigned to a name")));
                }
                _ => {}
            }
        }
        let v = self.expr(e)?;
        Ok(Item::Stmt(self.add_stmt(StmtData::Evaluate(v), sp(s.span))))
    }

    /// `T.func_attr({...})`.
    fn func_attr(&mut self, call: &ast::Call, span: ast::Span) -> LResult<()> {
        let [arg] = call.args.as_slice() else {
            return Err(self.err(span, "`T.func_attr` takes one dict"));
        };
        let attrs = super::super::attrs::lower_attr_dict(self.cx.diags, arg).inspect_err(|_| self.failed = true)?;
        for (k, v) in attrs.0 {
            if self.attrs.get(&k).is_some() {
                return Err(self.err(arg.span, format!("function attribute `{k}` is given twice")));
            }
            self.attrs.0.push((k, v));
        }
        Ok(())
    }

    /// `with ...:` statements.
    fn with_stmt(&mut self, s: &ast::Stmt, item: &ast::Expr, body: &[ast::Stmt], ctx: SeqCtx) -> LResult<Item> {
        let Some((call, name)) = item.as_dotted_call() else {
            return Err(self.err(item.span, "expected `with T.sblock(...)`, `with T.init()` or `with T.attr(...)`"));
        };
        match name.as_str() {
            "T.sblock" | "T.block" => self.lower_block(s, call, item, body),
            "T.init" => {
                self.lower_init(call, item, body, ctx)?;
                Ok(Item::Nothing)
            }
            "T.Assert" => {
                let pending = match call.args.as_slice() {
                    [c, m] => self.assert_stmt(s, c, Some(m)),
                    _ => Err(self.err(item.span, "`T.Assert` takes a condition and a message")),
                };
                let body = self.lower_scoped_body(body, SeqCtx::Other, s.span);
                match pending? {
                    Item::Scopes(ps) => {
                        let mut body = body;
                        for p in ps.into_iter().rev() {
                            body = self.close(p, body);
                        }
                        Ok(Item::Stmt(body))
                    }
                    _ => Ok(Item::Stmt(body)),
                }
            }
            "T.attr" | "T.launch_thread" => {
                let pending = if name == "T.attr" {
                    self.attr_pending(call, item.span)
                } else {
                    self.launch_thread_pending(None, call, item.span)
                };
                let body = self.lower_scoped_body(body, SeqCtx::Other, s.span);
                let mut body = body;
                for p in pending?.into_iter().rev() {
                    body = self.close(p, body);
                }
                Ok(Item::Stmt(body))
            }
            other => Err(self.err(item.span, format!("unexpected `with {other}(...)` in a PrimFunc"))),
        }
    }

    /// The explicit scoped forms the printer writes when a scoped statement is not the
    /// last of its list: `with T.LetStmt(v) as x:`, `with T.decl_buffer(...) as X:`,
    /// `with T.alloc_buffer(...) as X:`.
    fn with_as(&mut self, s: &ast::Stmt, item: &ast::Expr, target: &ast::Expr, body: &[ast::Stmt]) -> LResult<Item> {
        let Some((call, name)) = item.as_dotted_call() else {
            return Err(self.err(item.span, "expected `with T.LetStmt(...) as x:` or `with T.decl_buffer(...) as x:`"));
        };
        self.push_frame();
        let header = match name.as_str() {
            "T.LetStmt" => self.let_stmt_call(s, target, call, item),
            "T.decl_buffer" | "T.alloc_buffer" if !self.classic => self.decl_buffer(s, target, call, &name),
            other => Err(self.err(item.span, format!("unexpected `with {other}(...) as ...` in a PrimFunc"))),
        };
        let list = self.lower_seq(body, SeqCtx::Other);
        self.pop_frame();
        let pending = match header? {
            Item::Scopes(p) => p,
            _ => Vec::new(),
        };
        let mut stmt = self.seq(list, s.span);
        for p in pending.into_iter().rev() {
            stmt = self.close(p, stmt);
        }
        Ok(Item::Stmt(stmt))
    }

    /// `T.LetStmt(value[, type_annotation])` bound by `with ... as x`.
    fn let_stmt_call(
        &mut self,
        s: &ast::Stmt,
        target: &ast::Expr,
        call: &ast::Call,
        item: &ast::Expr,
    ) -> LResult<Item> {
        let value = call.args.first().or_else(|| call.keyword("value"));
        let ann = call.args.get(1).or_else(|| call.keyword("type_annotation"));
        match value {
            Some(v) => self.let_stmt(s, target, ann, v),
            None => Err(self.err(item.span, "`T.LetStmt` takes a value")),
        }
    }

    /// `if cond: ... else: ...`.
    fn if_stmt(
        &mut self,
        s: &ast::Stmt,
        cond: &ast::Expr,
        then_body: &[ast::Stmt],
        else_body: Option<&[ast::Stmt]>,
    ) -> LResult<Item> {
        let c = self.expr(cond);
        let then_branch = self.lower_scoped_body(then_body, SeqCtx::Other, s.span);
        let else_branch = else_body.map(|b| self.lower_scoped_body(b, SeqCtx::Other, s.span));
        let cond = c?;
        Ok(Item::Stmt(self.add_stmt(StmtData::If { cond, then_branch, else_branch }, sp(s.span))))
    }

    /// Assignments: stores, declarations, buffers, iteration variables and `let`s.
    fn assign(
        &mut self,
        s: &ast::Stmt,
        targets: &[ast::Expr],
        annotation: Option<&ast::Expr>,
        value: &ast::Expr,
        ctx: SeqCtx,
    ) -> LResult<Item> {
        let flat: Vec<&ast::Expr> = match targets {
            [one] => match &one.kind {
                ExprKind::Tuple { elts, .. } | ExprKind::List(elts) => elts.iter().collect(),
                _ => vec![one],
            },
            many => many.iter().collect(),
        };
        if let Some(ann) = annotation {
            return self.let_stmt(s, flat[0], Some(ann), value);
        }
        if flat.len() != 1 {
            return self.multi_assign(&flat, value, ctx);
        }
        let target = flat[0];
        match &target.kind {
            ExprKind::Subscript { .. } => return self.store(s, target, value, None),
            ExprKind::Name(_) => {}
            _ => return Err(self.err(target.span, format!("cannot assign to {}", target.describe()))),
        }
        if let Some(ty) = declaration_type(value) {
            self.declare(target, ty)?;
            return Ok(Item::Nothing);
        }
        if let Some((call, callee)) = value.as_dotted_call() {
            match callee.as_str() {
                "T.match_buffer" => {
                    let region = call.args.first().is_some_and(|a| matches!(a.kind, ExprKind::Subscript { .. }));
                    if region {
                        self.block_match_buffer(target, call, value.span, ctx)?;
                    } else if ctx == SeqCtx::Function {
                        self.param_match_buffer(target, call, value.span)?;
                    } else {
                        return Err(self.err(value.span, "`T.match_buffer` of a parameter must be at function level"));
                    }
                    return Ok(Item::Nothing);
                }
                "T.sblock_alloc_buffer" => {
                    self.alloc_buffer(target, call, value.span, ctx, &callee)?;
                    return Ok(Item::Nothing);
                }
                "T.alloc_buffer" if self.classic => {
                    self.alloc_buffer(target, call, value.span, ctx, &callee)?;
                    return Ok(Item::Nothing);
                }
                "T.alloc_buffer" | "T.decl_buffer" | "T.Buffer" | "T.alloc_local" | "T.alloc_shared" => {
                    return self.decl_buffer(s, target, call, &callee);
                }
                "T.axis.spatial" | "T.axis.reduce" | "T.axis.scan" | "T.axis.opaque" => {
                    self.axis(target, call, value, &callee, ctx)?;
                    return Ok(Item::Nothing);
                }
                "T.axis.remap" => return self.multi_assign(&[target], value, ctx),
                "T.launch_thread" => {
                    return Ok(Item::Scopes(self.launch_thread_pending(Some(target), call, value.span)?));
                }
                "T.env_thread" => {
                    self.env_thread(target, call, value.span)?;
                    return Ok(Item::Nothing);
                }
                _ => {}
            }
        }
        self.let_stmt(s, target, None, value)
    }

    /// `a, b = ...`: `T.axis.remap` or several declarations.
    fn multi_assign(&mut self, targets: &[&ast::Expr], value: &ast::Expr, ctx: SeqCtx) -> LResult<Item> {
        if let Some((call, callee)) = value.as_dotted_call()
            && callee == "T.axis.remap"
        {
            if let Err(r) = self.remap(targets, call, value, ctx) {
                // Keep the names defined, so that their uses do not report again.
                for t in targets {
                    if let Some(name) = t.as_name() {
                        self.define_var(name, DataType::INT32, t.span);
                    }
                }
                return Err(r);
            }
            return Ok(Item::Nothing);
        }
        if let ExprKind::Tuple { elts, .. } = &value.kind
            && elts.len() == targets.len()
        {
            let mut result = Ok(Item::Nothing);
            for (t, v) in targets.iter().zip(elts) {
                match declaration_type(v) {
                    Some(ty) => {
                        if let Err(r) = self.declare(t, ty) {
                            result = Err(r);
                        }
                    }
                    None => {
                        result = Err(self.err(v.span, "expected a declaration such as `T.int64()`"));
                    }
                }
            }
            return result;
        }
        Err(self.err(value.span, "several names can only be assigned `T.axis.remap(...)` or declarations"))
    }

    /// `A[i, j] = value` (and `A[i] += value` when `aug` is given).
    fn store(&mut self, s: &ast::Stmt, target: &ast::Expr, value_e: &ast::Expr, aug: Option<BinOp>) -> LResult<Item> {
        let ExprKind::Subscript { value: base, index } = &target.kind else {
            return Err(self.err(target.span, format!("cannot assign to {}", target.describe())));
        };
        let Some(name) = base.as_name() else {
            return Err(self.err(base.span, "only buffers can be stored to"));
        };
        let buffer = self.buffer_named(name, base.span)?;
        let index = crate::lower::prim_expr::subscript_indices(index);
        let mut indices = Vec::with_capacity(index.len());
        for i in index {
            if matches!(i.kind, ExprKind::Slice { .. }) {
                return Err(self.err(i.span, "a slice is not a store index"));
            }
            indices.push(self.expr(i)?);
        }
        let (dtype, ndim) = (self.buffers[buffer].dtype, self.buffers[buffer].shape.len());
        if indices.len() != ndim {
            return Err(self.err(
                target.span,
                format!(
                    "buffer `{name}` has {ndim} dimension{} but is indexed with {}",
                    if ndim == 1 { "" } else { "s" },
                    indices.len()
                ),
            ));
        }
        let mut value = self.expr(value_e)?;
        if let Some(op) = aug {
            let load = self.pool.raw(relax_ir::PrimExprData::Load { dtype, buffer, indices: indices.clone() });
            value = binary(self, s.span, op, load, value)?;
        }
        let lanes = indices.iter().map(|&i| self.pool.dtype(i).lanes).max().unwrap_or(1).max(1);
        let expected = dtype.with_lanes(dtype.lanes.max(1) * lanes);
        value = self.convert(value, expected, value_e.span)?;
        Ok(Item::Stmt(self.add_stmt(StmtData::Store { buffer, indices, value }, sp(s.span))))
    }

    /// Checks that `value` has type `expected`; a constant is converted as TVM's `cast`
    /// converts it, anything else is an error.
    pub fn convert(&mut self, value: PrimExpr, expected: DataType, span: ast::Span) -> LResult<PrimExpr> {
        let found = self.pool.dtype(value);
        if found == expected {
            return Ok(value);
        }
        let constant =
            matches!(self.pool.prim(value), relax_ir::PrimExprData::Int(..) | relax_ir::PrimExprData::Float(..));
        if constant && found.lanes == expected.lanes {
            return Ok(self.pool.cast(expected, value));
        }
        Err(self.err(span, format!("expected `{expected}`, found `{found}`")))
    }

    /// `x: T.let[T.int32] = e`, `x: T.int32 = e` or `x = e`: a `let` over the rest of the
    /// list.
    fn let_stmt(
        &mut self,
        s: &ast::Stmt,
        target: &ast::Expr,
        annotation: Option<&ast::Expr>,
        value: &ast::Expr,
    ) -> LResult<Item> {
        let Some(name) = target.as_name() else {
            return Err(self.err(target.span, format!("cannot assign to {}", target.describe())));
        };
        let ty = match annotation {
            Some(a) => match type_annotation(a) {
                Some(t) => Some(t),
                None => {
                    return Err(self.err(a.span, format!("expected a type such as `T.int32`, found {}", a.describe())));
                }
            },
            None => None,
        };
        let lowered = self.expr(value);
        let v = match lowered {
            Ok(v) => v,
            Err(r) => {
                // Define the name anyway so that later uses do not report it undefined.
                self.define_var(name, ty.map_or(DataType::INT32, |t| t.0), target.span);
                return Err(r);
            }
        };
        let dtype = ty.as_ref().map_or_else(|| self.pool.dtype(v), |t| t.0);
        let converted = self.convert(v, dtype, value.span);
        let var = self.define_var(name, dtype, target.span);
        self.pool.vars[var].pointer = ty.and_then(|t| t.1);
        let value = converted?;
        Ok(Item::Scopes(vec![Pending { kind: PendingKind::Let { var, value }, span: sp(s.span) }]))
    }

    /// A buffer for `T.Buffer`, `T.decl_buffer` and a lowered `T.alloc_buffer`.
    fn decl_buffer(&mut self, s: &ast::Stmt, target: &ast::Expr, call: &ast::Call, callee: &str) -> LResult<Item> {
        let Some(name) = target.as_name() else {
            return Err(self.err(target.span, format!("the result of `{callee}` must be assigned to a name")));
        };
        let args = self.buffer_args(call, callee, 0)?;
        // TVM 0.27 spells `T.alloc_buffer(..., scope="local")` as `T.alloc_local(...)`.
        let sugar_scope = match callee {
            "T.alloc_local" => Some("local"),
            "T.alloc_shared" => Some("shared"),
            _ => None,
        };
        let scope_lit = ast::Expr::new(call.func.span, ExprKind::Str(sugar_scope.unwrap_or_default().to_string()));
        let (args, callee) = match sugar_scope {
            Some(_) => (Self::with_default_scope(args, &scope_lit), "T.alloc_buffer"),
            None => (args, callee),
        };
        let decl = callee == "T.decl_buffer";
        let built = self.build_buffer(name, &args, Dims::Use, decl, target.span)?;
        let data_var = built.data.data;
        let b = self.define_buffer(built.data, target.span);
        let span = sp(s.span);
        let mut pending = Vec::new();
        if let Some(value) = built.data_value {
            pending.push(Pending { kind: PendingKind::Let { var: data_var, value }, span });
        }
        match callee {
            "T.decl_buffer" => pending.push(Pending { kind: PendingKind::DeclBuffer(b), span }),
            "T.alloc_buffer" => pending.push(Pending { kind: PendingKind::Allocate(b), span }),
            _ => {}
        }
        Ok(if pending.is_empty() { Item::Nothing } else { Item::Scopes(pending) })
    }

    /// The buffer a name refers to in `T.attr`, if it is one.
    pub fn entry_buffer(&self, e: &ast::Expr) -> Option<Buffer> {
        match e.as_name().and_then(|n| self.entry(n)) {
            Some(Entry::Buffer(b)) => Some(b),
            _ => None,
        }
    }
}
