//! Blocks (`text-format.md` §8.4): `with T.sblock("name"):` (classic `T.block`) and the
//! statements that make up a block's header: `T.axis.*`, `T.where`, `T.reads`,
//! `T.writes`, `T.sblock_attr` (classic `T.block_attr`), block allocations, block-level
//! `T.match_buffer` of a region and `with T.init():`.
//!
//! Header statements must sit directly in the block's body; they may come in any order
//! and each may appear once. `T.axis.remap("SR", [i, k])` binds new iteration variables
//! to the given enclosing loop variables over those loops' ranges (the variables take
//! the loops' dtypes). `T.axis.spatial(dom, binding)` takes an extent or a `(min, max)`
//! tuple; its variable is an integer as wide as the widest of the domain and `int32` (or
//! the `dtype=` given), as in TVM. A block without `T.reads`/`T.writes` gets them computed
//! from its body ([`super::regions`]).

use relax_ir::attrs::Attrs;
use relax_ir::{
    BlockNode, Buffer, BufferRegion, DataType, IterKind, IterVar, MatchBufferRegion, PrimExpr, PrimExprData, Range,
    Stmt, StmtData, TypeCode,
};

use super::super::{LResult, sp};
use super::buffers::Dims;
use super::scope::{Entry, SeqCtx, TirCx};
use super::stmts::Item;
use crate::ast::{self, ExprKind};

/// The header of a block being lowered.
#[derive(Debug, Default)]
pub(super) struct OpenBlock {
    /// Iteration variables so far.
    pub iter_vars: Vec<IterVar>,
    /// `T.where(...)`: `Some(None)` once given as constant true.
    pub predicate: Option<Option<PrimExpr>>,
    /// `T.reads(...)`.
    pub reads: Option<Vec<BufferRegion>>,
    /// `T.writes(...)`.
    pub writes: Option<Vec<BufferRegion>>,
    /// `T.sblock_attr({...})`.
    pub annotations: Option<Attrs>,
    /// Block allocations.
    pub alloc_buffers: Vec<Buffer>,
    /// Sub-region views.
    pub match_buffers: Vec<MatchBufferRegion>,
    /// `with T.init():`.
    pub init: Option<Stmt>,
}

impl TirCx<'_, '_> {
    /// `with T.sblock("name"):`.
    pub(super) fn lower_block(
        &mut self,
        s: &ast::Stmt,
        call: &ast::Call,
        item: &ast::Expr,
        body: &[ast::Stmt],
    ) -> LResult<Item> {
        let mut failed = None;
        let mut name = String::new();
        let name_e = call.args.first().or_else(|| call.keyword("name"));
        if let Some(n) = name_e {
            match n.as_str() {
                Some(t) => name = t.to_string(),
                None => failed = Some(self.err(n.span, "a block name must be a string")),
            }
        }
        for k in &call.keywords {
            if !matches!(k.name.name.as_str(), "name" | "no_realize") {
                failed = Some(self.err(k.name.span, format!("unknown argument `{}` of a block", k.name.name)));
            }
        }
        if call.args.len() > 1 {
            failed = Some(self.err(item.span, "a block takes its name only"));
        }
        self.blocks.push(OpenBlock::default());
        self.push_frame();
        let list = self.lower_seq(body, SeqCtx::Block);
        self.pop_frame();
        let open = self.blocks.pop().unwrap_or_default();
        for b in &open.alloc_buffers {
            self.region_buffers.remove(b);
        }
        if let Some(r) = failed {
            return Err(r);
        }
        let body = self.seq(list, s.span);
        let (reads, writes) = match (open.reads, open.writes) {
            (Some(r), Some(w)) => (r, w),
            (r, w) => {
                let (dr, dw) = self.detect_access(body, open.init, &open.match_buffers);
                (r.unwrap_or(dr), w.unwrap_or(dw))
            }
        };
        let node = BlockNode {
            name,
            iter_vars: open.iter_vars,
            predicate: open.predicate.flatten(),
            reads,
            writes,
            annotations: open.annotations.unwrap_or_default(),
            alloc_buffers: open.alloc_buffers,
            match_buffers: open.match_buffers,
            init: open.init,
            body,
        };
        Ok(Item::Stmt(self.add_stmt(StmtData::Block(Box::new(node)), sp(s.span))))
    }

    /// The innermost open block, when the statement is directly in its body.
    fn header_block(&mut self, what: &str, span: ast::Span, ctx: SeqCtx) -> LResult<&mut OpenBlock> {
        if ctx != SeqCtx::Block || self.blocks.is_empty() {
            return Err(self.err(span, format!("`{what}` must be directly inside a block")));
        }
        Ok(self.blocks.last_mut().expect("checked"))
    }

    /// `T.reads`, `T.writes`, `T.where`, `T.sblock_attr`/`T.block_attr`.
    pub(super) fn block_header(&mut self, name: &str, call: &ast::Call, e: &ast::Expr, ctx: SeqCtx) -> LResult<()> {
        self.header_block(name, e.span, ctx)?;
        if let Some(k) = call.keywords.first() {
            return Err(self.err(k.span, format!("`{name}` takes no keyword arguments")));
        }
        match name {
            "T.where" => {
                let [arg] = call.args.as_slice() else {
                    return Err(self.err(e.span, "`T.where` takes one condition"));
                };
                let p = self.expr(arg)?;
                let always = matches!(self.pool.prim(p), PrimExprData::Int(t, 1) if t.is_bool());
                let block = self.blocks.last_mut().expect("checked");
                if block.predicate.is_some() {
                    return Err(self.err(e.span, "`T.where` is given twice"));
                }
                block.predicate = Some(if always { None } else { Some(p) });
            }
            "T.reads" | "T.writes" => {
                let mut regions = Vec::new();
                for a in &call.args {
                    match &a.kind {
                        ExprKind::List(items) | ExprKind::Tuple { elts: items, .. } => {
                            for i in items {
                                regions.push(self.region(i)?);
                            }
                        }
                        _ => regions.push(self.region(a)?),
                    }
                }
                let block = self.blocks.last_mut().expect("checked");
                let slot = if name == "T.reads" { &mut block.reads } else { &mut block.writes };
                if slot.is_some() {
                    return Err(self.err(e.span, format!("`{name}` is given twice")));
                }
                *slot = Some(regions);
            }
            _ => {
                let [arg] = call.args.as_slice() else {
                    return Err(self.err(e.span, format!("`{name}` takes one dict")));
                };
                // Bare names are buffers of the PrimFunc (`layout_free_placeholders`).
                let mut names = Vec::new();
                bare_names(arg, &mut names);
                let mut buffers = std::collections::HashMap::new();
                for (n, span) in names {
                    match self.entry(n) {
                        Some(Entry::Buffer(b)) => {
                            buffers.insert(n.to_string(), b);
                        }
                        _ => {
                            let msg =
                                format!("`{n}` is not a buffer in scope (a name in block annotations is a buffer)");
                            return Err(self.err(span, msg));
                        }
                    }
                }
                let attrs =
                    super::super::attrs::lower_attr_dict_in(self.cx.diags, arg, &mut |n| buffers.get(n).copied())
                        .inspect_err(|_| self.failed = true)?;
                let block = self.blocks.last_mut().expect("checked");
                if block.annotations.is_some() {
                    return Err(self.err(e.span, "block annotations are given twice"));
                }
                block.annotations = Some(attrs);
            }
        }
        Ok(())
    }

    /// `with T.init():`.
    pub(super) fn lower_init(
        &mut self,
        call: &ast::Call,
        item: &ast::Expr,
        body: &[ast::Stmt],
        ctx: SeqCtx,
    ) -> LResult<()> {
        self.header_block("T.init", item.span, ctx)?;
        if !call.args.is_empty() || !call.keywords.is_empty() {
            return Err(self.err(item.span, "`T.init` takes no arguments"));
        }
        let init = self.lower_scoped_body(body, SeqCtx::Other, item.span);
        let block = self.blocks.last_mut().expect("checked");
        if block.init.is_some() {
            return Err(self.err(item.span, "`T.init()` is given twice"));
        }
        block.init = Some(init);
        Ok(())
    }

    /// `x = T.sblock_alloc_buffer(...)` (classic `T.alloc_buffer`) in a block or at
    /// function level (a root-block allocation).
    pub(super) fn alloc_buffer(
        &mut self,
        target: &ast::Expr,
        call: &ast::Call,
        span: ast::Span,
        ctx: SeqCtx,
        callee: &str,
    ) -> LResult<()> {
        let Some(name) = target.as_name() else {
            return Err(self.err(target.span, format!("the result of `{callee}` must be assigned to a name")));
        };
        if ctx == SeqCtx::Other || (ctx == SeqCtx::Block && self.blocks.is_empty()) {
            return Err(self.err(span, format!("`{callee}` must be directly inside a block or at function level")));
        }
        let args = self.buffer_args(call, callee, 0)?;
        let built = self.build_buffer(name, &args, Dims::Use, false, target.span)?;
        let b = self.define_buffer(built.data, target.span);
        self.region_buffers.insert(b);
        match ctx {
            SeqCtx::Block => self.blocks.last_mut().expect("checked").alloc_buffers.push(b),
            _ => self.root_allocs.push(b),
        }
        Ok(())
    }

    /// `sub = T.match_buffer(A[i, 0:4], shape, ...)` in a block.
    pub(super) fn block_match_buffer(
        &mut self,
        target: &ast::Expr,
        call: &ast::Call,
        span: ast::Span,
        ctx: SeqCtx,
    ) -> LResult<()> {
        self.header_block("T.match_buffer", span, ctx)?;
        let Some(name) = target.as_name() else {
            return Err(self.err(target.span, "`T.match_buffer` must be assigned to a name"));
        };
        let source = self.region(&call.args[0])?;
        let args = self.buffer_args(call, "T.match_buffer", 1)?;
        let built = self.build_buffer(name, &args, Dims::Define, false, target.span)?;
        let buffer = self.define_buffer(built.data, target.span);
        self.blocks.last_mut().expect("checked").match_buffers.push(MatchBufferRegion { buffer, source });
        Ok(())
    }

    /// `v = T.axis.spatial(dom, binding)` and the other kinds.
    pub(super) fn axis(
        &mut self,
        target: &ast::Expr,
        call: &ast::Call,
        value: &ast::Expr,
        callee: &str,
        ctx: SeqCtx,
    ) -> LResult<()> {
        self.header_block(callee, value.span, ctx)?;
        let Some(name) = target.as_name() else {
            return Err(self.err(target.span, "an iteration variable must be a name"));
        };
        let kind = match callee {
            "T.axis.spatial" => IterKind::Spatial,
            "T.axis.reduce" => IterKind::Reduce,
            "T.axis.scan" => IterKind::Scan,
            _ => IterKind::Opaque,
        };
        let mut dom_e = call.args.first();
        let mut binding_e = call.args.get(1);
        let mut dtype = DataType::INT32;
        if call.args.len() > 2 {
            return Err(self.err(value.span, format!("`{callee}` takes a domain and a binding")));
        }
        for k in &call.keywords {
            match k.name.name.as_str() {
                "dom" if dom_e.is_none() => dom_e = Some(&k.value),
                "binding" if binding_e.is_none() => binding_e = Some(&k.value),
                "dtype" => dtype = self.dtype_arg(&k.value)?,
                other => return Err(self.err(k.name.span, format!("unknown argument `{other}` of `{callee}`"))),
            }
        }
        let (Some(dom_e), Some(binding_e)) = (dom_e, binding_e) else {
            return Err(self.err(value.span, format!("`{callee}` takes a domain and a binding")));
        };
        let dom = self.axis_dom(dom_e)?;
        let binding = self.int_expr(binding_e, "an iteration binding")?;
        let bits = [self.pool.dtype(dom.min).bits, self.pool.dtype(dom.extent).bits, dtype.bits].into_iter().max();
        let code = if dtype.code == TypeCode::UInt { TypeCode::UInt } else { TypeCode::Int };
        let var_t = DataType::new(code, bits.unwrap_or(32));
        let var = self.define_var(name, var_t, target.span);
        self.blocks.last_mut().expect("checked").iter_vars.push(IterVar { var, dom, kind, binding });
        Ok(())
    }

    /// A domain: an extent (`n`, starting at zero of its type) or `(min, max)`.
    fn axis_dom(&mut self, e: &ast::Expr) -> LResult<Range> {
        match e.as_sequence() {
            Some([lo, hi]) => {
                let min = self.int_expr(lo, "a domain bound")?;
                let max = self.int_expr(hi, "a domain bound")?;
                let extent = self.sub_simplified(max, min, e.span)?;
                Ok(Range { min, extent })
            }
            Some(_) => Err(self.err(e.span, "a domain is an extent or a `(min, max)` pair")),
            None => {
                let extent = self.int_expr(e, "a domain extent")?;
                let t = self.pool.dtype(extent);
                Ok(Range { min: self.pool.int(t, 0), extent })
            }
        }
    }

    /// `a, b = T.axis.remap("SR", [i, k])`.
    pub(super) fn remap(
        &mut self,
        targets: &[&ast::Expr],
        call: &ast::Call,
        value: &ast::Expr,
        ctx: SeqCtx,
    ) -> LResult<()> {
        self.header_block("T.axis.remap", value.span, ctx)?;
        let [kinds_e, bindings_e] = call.args.as_slice() else {
            return Err(self.err(value.span, "`T.axis.remap` takes a kinds string and a list of loop variables"));
        };
        let kinds = self.str_arg(kinds_e, "the kinds of `T.axis.remap`")?;
        let Some(bindings) = bindings_e.as_sequence() else {
            return Err(self.err(bindings_e.span, "expected a list of loop variables"));
        };
        let letters = kinds.chars().count();
        if bindings.len() != letters {
            return Err(self.err(
                value.span,
                format!(
                    "`T.axis.remap` names {} loop variable{} but the kinds string has {letters} letter{}",
                    bindings.len(),
                    if bindings.len() == 1 { "" } else { "s" },
                    if letters == 1 { "" } else { "s" }
                ),
            ));
        }
        if targets.len() != letters {
            return Err(self.err(
                value.span,
                format!(
                    "`T.axis.remap` defines {letters} iteration variable{} but {} name{} assigned",
                    if letters == 1 { "" } else { "s" },
                    targets.len(),
                    if targets.len() == 1 { " is" } else { "s are" }
                ),
            ));
        }
        let mut staged = Vec::with_capacity(letters);
        for ((c, b), t) in kinds.chars().zip(bindings).zip(targets) {
            let kind = match c {
                'S' => IterKind::Spatial,
                'R' => IterKind::Reduce,
                other => {
                    return Err(self.err(
                        kinds_e.span,
                        format!("unknown iteration kind `{other}` in `T.axis.remap` (expected `S` or `R`)"),
                    ));
                }
            };
            let Some(name) = t.as_name() else {
                return Err(self.err(t.span, "an iteration variable must be a name"));
            };
            let loop_var = match b.as_name().and_then(|n| self.entry(n)) {
                Some(Entry::Var(v)) => self.loops.iter().rev().find(|l| l.var == v).copied(),
                _ => None,
            };
            let Some(info) = loop_var else {
                let what = b.as_name().map_or_else(|| b.describe().to_string(), |n| format!("`{n}`"));
                return Err(self.err(b.span, format!("{what} is not a loop variable of an enclosing loop")));
            };
            staged.push((name, t.span, kind, info));
        }
        for (name, span, kind, info) in staged {
            let dtype = self.pool.vars[info.var].dtype;
            let var = self.define_var(name, dtype, span);
            let binding = self.pool.var_ref(info.var);
            let dom = Range { min: info.min, extent: info.extent };
            self.blocks.last_mut().expect("checked").iter_vars.push(IterVar { var, dom, kind, binding });
        }
        Ok(())
    }
}

/// The bare names of an attribute value (inside lists, tuples and dict values).
fn bare_names<'e>(e: &'e ast::Expr, out: &mut Vec<(&'e str, ast::Span)>) {
    match &e.kind {
        ExprKind::Name(n) => out.push((n, e.span)),
        ExprKind::List(items) | ExprKind::Tuple { elts: items, .. } => items.iter().for_each(|i| bare_names(i, out)),
        ExprKind::Dict(pairs) => pairs.iter().for_each(|(_, v)| bare_names(v, out)),
        _ => {}
    }
}
