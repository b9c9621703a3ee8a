//! TIR statements: loops, blocks, stores and the lowered forms (`text-format.md` §8.4,
//! §8.5).
//!
//! Follows TVM 0.25:
//! * `T.grid` for a chain of ≥ 2 perfectly nested serial loops starting at 0, with no
//!   step or annotations, whose extents use no earlier grid variable;
//! * otherwise `range(e)`, `range(a, b)`, `range(a, b, step)`, `T.serial(...)` when
//!   annotated, `T.parallel`, `T.vectorized`, `T.unroll`, `T.thread_binding(...,
//!   thread="...")`; a non-zero start (or any step) prints `(min, min + extent)`; keywords
//!   `thread=`, then `annotations=` (`{"pragma_unroll": 1}` alone prints `unroll=True`,
//!   `{"disable_unroll": 1}` alone `unroll=False`), then `step=`;
//! * block axes: consecutive spatial/reduce axes bound to an enclosing loop variable over
//!   exactly that loop's range print as one `T.axis.remap("SR", [i, k])`; a run of one and
//!   every other axis prints `v = T.axis.spatial(dom, binding)`;
//! * `T.where` unless the predicate is `True`; `T.reads`/`T.writes` always; regions print
//!   an extent-1 range as its index, others as `lo:hi`;
//! * `T.evaluate(call)` prints as the bare call, `T.evaluate(T.ret(x))` as `return x`;
//! * `if`/`else` nests (no `elif`);
//! * the lowered scoped statements print flat, their body following at the same
//!   indentation: `x: T.let[T.int32] = v`,
//!   `assert c, msg`, `X = T.decl_buffer(...)`, `X = T.alloc_buffer(...)`. TVM 0.25's TIR
//!   has only these flat forms (`Bind`, body-less `AssertStmt`), so a scoped statement in the
//!   middle of a sequence also prints flat: the text reads back with the following
//!   statements inside its scope, which changes nothing they mean;
//! * `unroll=True`/`unroll=False` only on `T.serial` (TVM 0.25 prints the sugar on every
//!   loop kind, but its parser accepts it only there).

use super::literals::{AttrCtx, quote, write_attr_with, write_dict};
use super::out::Line;
use super::prim_expr::{Mode, Names, PREC_ADD, Side, vars_of, write_prim_in, write_sum};
use super::span_map::SpanKey;
use super::tir::{TirPrinter, var_type};
use crate::attrs::{AttrValue, Attrs};
use crate::entities::{Buffer, PrimExpr, Stmt};
use crate::intrinsic::Intrinsic;
use crate::prim::PrimExprData;
use crate::tir::{AttrNode, BlockNode, BufferRegion, ForKind, IterKind, StmtData};

/// Nesting deeper than this prints `...` (real loop nests are far shallower).
const MAX_DEPTH: u32 = 256;

impl TirPrinter<'_, '_> {
    /// Prints a scope body: a sequence's statements in the current frame, or a single
    /// statement.
    pub(super) fn body(&mut self, s: Stmt) {
        let f = self.f;
        match f.stmts.get(s) {
            Some(StmtData::Seq(items)) => {
                let start = self.out.pos();
                for &c in items {
                    self.stmt(c);
                }
                self.out.mark_lines(SpanKey::Stmt(self.g, s), start);
            }
            _ => self.stmt(s),
        }
    }

    fn line(&mut self, text: String) {
        self.out.str_line(self.indent, &text);
    }

    /// Prints `s` and what it scopes. The scoped lowered statements (`x: T.int32 = v`,
    /// `assert`, `T.decl_buffer`, `T.alloc_buffer`) print flat, as TVM 0.25 writes them, with
    /// their body following at the same level; their variable or buffer stays named until
    /// the enclosing scope ends. Chains of them are followed in a loop, not by recursion.
    fn stmt(&mut self, s: Stmt) {
        if self.depth > MAX_DEPTH {
            self.line("...".to_string());
            return;
        }
        self.depth += 1;
        let f = self.f;
        let mut chain: Vec<(Stmt, u32)> = Vec::new();
        let mut cur = s;
        loop {
            if !self.on_path.insert(cur) {
                self.line(format!("# <cycle through {cur:?}>"));
                break;
            }
            chain.push((cur, self.out.pos()));
            let Some(data) = f.stmts.get(cur) else {
                self.line(format!("# <invalid {cur:?}>"));
                break;
            };
            let next = match data {
                StmtData::Let { var, value, body } => {
                    let v = self.prim(*value);
                    let name = self.define_sym(*var);
                    let ty = f.pool.vars.get(*var).map_or_else(|| "T.int32".to_string(), var_type);
                    self.line(format!("{name}: T.let[{ty}] = {v}"));
                    *body
                }
                StmtData::Assert { cond, message, body } => {
                    let c = self.prim(*cond);
                    let m = self.assert_message(*message);
                    self.line(format!("assert {c}, {m}"));
                    *body
                }
                StmtData::DeclBuffer { buffer, body } | StmtData::Allocate { buffer, body } => {
                    let method =
                        if matches!(data, StmtData::DeclBuffer { .. }) { "decl_buffer" } else { "alloc_buffer" };
                    self.alloc_buffer_line(*buffer, method);
                    *body
                }
                StmtData::Seq(items) if cur != s => {
                    // The body of a concise statement: its items continue at this level, and
                    // its last item may continue the chain.
                    let Some((&last, init)) = items.split_last() else { break };
                    for &item in init {
                        self.stmt(item);
                    }
                    last
                }
                _ => {
                    self.stmt_one(cur);
                    break;
                }
            };
            cur = next;
        }
        for &(c, at) in chain.iter().rev() {
            self.on_path.remove(&c);
            self.out.mark_lines(SpanKey::Stmt(self.g, c), at);
        }
        self.depth -= 1;
    }

    /// Prints one non-chained statement.
    fn stmt_one(&mut self, s: Stmt) {
        let f = self.f;
        let Some(data) = f.stmts.get(s) else { return };
        match data {
            StmtData::Seq(_) => {
                self.namer.push();
                self.body(s);
                self.namer.pop();
            }
            StmtData::For { .. } => self.for_loop(s),
            StmtData::Block(b) => self.block(b),
            StmtData::Store { buffer, indices, value } => {
                let mut t = self.access(*buffer, indices);
                t.push_str(" = ");
                let v = self.prim(*value);
                t.push_str(&v);
                self.line(t);
            }
            StmtData::If { cond, then_branch, else_branch } => {
                let c = self.prim(*cond);
                self.line(format!("if {c}:"));
                self.nested(*then_branch);
                if let Some(e) = else_branch {
                    self.line("else:".to_string());
                    self.nested(*e);
                }
            }
            StmtData::While { cond, body } => {
                let c = self.prim(*cond);
                self.line(format!("while {c}:"));
                self.nested(*body);
            }
            StmtData::Evaluate(e) => {
                let text = match f.pool.prims.get(*e) {
                    Some(PrimExprData::Call { op, args, .. }) if op.is(Intrinsic::Ret) && args.len() == 1 => {
                        format!("return {}", self.prim(args[0]))
                    }
                    Some(PrimExprData::Call { .. }) => self.prim(*e),
                    _ => format!("T.evaluate({})", self.prim(*e)),
                };
                self.line(text);
            }
            StmtData::Attr { node, key, value, body } => {
                let n = match node {
                    AttrNode::Buffer(b) => {
                        let mut t = String::new();
                        self.buffer(&mut t, *b);
                        t
                    }
                    AttrNode::Expr(e) => self.prim(*e),
                    AttrNode::Str(st) => quote(st),
                };
                let v = self.prim(*value);
                if matches!(f.stmts.get(*body), Some(StmtData::Seq(items)) if items.is_empty()) {
                    // Nothing in scope (a concise `T.attr(...)` ending its list): the concise
                    // form, which reads back the same; `with` would need a body.
                    self.line(format!("T.attr({n}, {}, {v})", quote(key)));
                } else {
                    self.line(format!("with T.attr({n}, {}, {v}):", quote(key)));
                    self.nested(*body);
                }
            }
            // Chained by `stmt` (TVM 0.25 has only the flat forms).
            StmtData::Let { .. }
            | StmtData::Assert { .. }
            | StmtData::DeclBuffer { .. }
            | StmtData::Allocate { .. } => {}
        }
    }

    /// A body one level deeper, in its own scope.
    fn nested(&mut self, s: Stmt) {
        self.namer.push();
        self.indent += 4;
        self.body(s);
        self.indent -= 4;
        self.namer.pop();
    }

    /// An assert message: a string, or TVM's `("Kind", [parts...])` (stored as the call
    /// `tir.assert_message("Kind", parts...)`).
    fn assert_message(&mut self, m: PrimExpr) -> String {
        let f = self.f;
        match f.pool.prims.get(m) {
            Some(PrimExprData::Call { op, args, .. })
                if op.short_name() == "assert_message"
                    && matches!(args.first().and_then(|&k| f.pool.prims.get(k)), Some(PrimExprData::Str(_))) =>
            {
                let kind = self.prim(args[0]);
                let parts: Vec<String> = args[1..].iter().map(|&p| self.prim(p)).collect();
                format!("({kind}, [{}])", parts.join(", "))
            }
            _ => self.prim(m),
        }
    }

    /// `A[i, j]`, with ramp indices as slices.
    fn access(&mut self, buffer: Buffer, indices: &[PrimExpr]) -> String {
        let f = self.f;
        // Print through a load node when one is interned, so ramps print as slices.
        let load = f.pool.prims.lookup(&PrimExprData::Load {
            dtype: f.buffers.get(buffer).map_or(crate::dtype::DataType::VOID, |b| b.dtype),
            buffer,
            indices: indices.to_vec(),
        });
        if let Some(l) = load {
            return self.prim(l);
        }
        let mut t = String::new();
        self.buffer(&mut t, buffer);
        t.push_str(if indices.is_empty() { "[()" } else { "[" });
        for (i, &ix) in indices.iter().enumerate() {
            if i > 0 {
                t.push_str(", ");
            }
            self.index(&mut t, ix);
        }
        t.push(']');
        t
    }

    /// One index of a store: a ramp with a constant stride prints as a slice.
    fn index(&mut self, t: &mut String, ix: PrimExpr) {
        let f = self.f;
        if let Some(PrimExprData::Ramp { base, stride, lanes }) = f.pool.prims.get(ix)
            && let Some(PrimExprData::Int(st, sv)) = f.pool.prims.get(*stride)
        {
            let b = self.prim(*base);
            t.push_str(&b);
            t.push(':');
            let k = i64::from(*lanes).wrapping_mul(*sv);
            match f.pool.prims.get(*base) {
                Some(PrimExprData::Int(bt, bv)) => {
                    t.push_str(&super::literals::tir_int(*bt, crate::prim::wrap_int(*bt, bv.wrapping_add(k))));
                }
                _ if k == 0 => t.push_str(&b),
                _ => {
                    let mut s = String::new();
                    write_prim_in(&mut s, &f.pool, *base, Mode::Tir, self, PREC_ADD, Side::Left);
                    t.push_str(&s);
                    t.push_str(" + ");
                    t.push_str(&super::literals::tir_int(*st, k));
                }
            }
            if *sv != 1 {
                t.push(':');
                let s = self.prim(*stride);
                t.push_str(&s);
            }
            return;
        }
        let s = self.prim(ix);
        t.push_str(&s);
    }

    /// `min + extent` as TVM's folding `+` builds it.
    fn sum(&mut self, a: PrimExpr, b: PrimExpr) -> String {
        let f = self.f;
        let mut s = String::new();
        write_sum(&mut s, &f.pool, a, b, Mode::Tir, self);
        s
    }

    fn is_zero(&self, e: PrimExpr) -> bool {
        matches!(self.f.pool.prims.get(e), Some(PrimExprData::Int(_, 0)))
    }

    fn for_loop(&mut self, s: Stmt) {
        let f = self.f;
        let g = self.g;
        // The T.grid chain.
        let mut grid: Vec<Stmt> = Vec::new();
        let mut grid_vars = Vec::new();
        let mut cur = s;
        while let Some(StmtData::For { var, min, extent, kind, step, annotations, body, .. }) = f.stmts.get(cur) {
            let ok = *kind == ForKind::Serial
                && self.is_zero(*min)
                && annotations.is_empty()
                && step.is_none()
                && !vars_of(&f.pool, *extent).iter().any(|v| grid_vars.contains(v))
                && !grid.contains(&cur);
            if !ok {
                break;
            }
            grid.push(cur);
            grid_vars.push(*var);
            cur = *body;
        }
        self.namer.push();
        let depth0 = self.loops.len();
        let body;
        // Inner loops of a grid span from the shared header to the end of the body.
        let mut inner_grid: Vec<(Stmt, u32)> = Vec::new();
        if grid.len() > 1 {
            let mut lhs = Vec::new();
            let mut rhs = Vec::new();
            let mut last_body = s;
            for &l in &grid {
                let Some(StmtData::For { var, min, extent, body, .. }) = f.stmts.get(l) else { continue };
                lhs.push(self.define_sym(*var));
                rhs.push(self.prim(*extent));
                self.loops.push((*var, *min, *extent));
                last_body = *body;
            }
            let at = self.out.pos();
            self.line(format!("for {} in T.grid({}):", lhs.join(", "), rhs.join(", ")));
            for &(v, _, _) in &self.loops[depth0..] {
                self.out.mark_lines(SpanKey::SymVar(g, v), at);
            }
            inner_grid.extend(grid[1..].iter().map(|&l| (l, at)));
            body = last_body;
        } else {
            let Some(StmtData::For { var, min, extent, kind, thread, step, annotations, body: b }) = f.stmts.get(s)
            else {
                self.namer.pop();
                return;
            };
            let name = self.define_sym(*var);
            let mut args = Vec::new();
            if step.is_some() || !self.is_zero(*min) {
                args.push(self.prim(*min));
                args.push(self.sum(*min, *extent));
            } else {
                args.push(self.prim(*extent));
            }
            let prefix = match kind {
                ForKind::Serial if annotations.is_empty() => "range",
                ForKind::Serial => "T.serial",
                ForKind::Parallel => "T.parallel",
                ForKind::Vectorized => "T.vectorized",
                ForKind::Unrolled => "T.unroll",
                ForKind::ThreadBinding => "T.thread_binding",
            };
            if *kind == ForKind::ThreadBinding {
                args.push(format!("thread={}", quote(thread.as_deref().unwrap_or(""))));
            }
            if !annotations.is_empty() {
                args.push(self.loop_annotations(annotations, *kind == ForKind::Serial));
            }
            if let Some(st) = step {
                let t = self.prim(*st);
                args.push(if prefix == "range" { t } else { format!("step={t}") });
            }
            let at = self.out.pos();
            self.line(format!("for {name} in {prefix}({}):", args.join(", ")));
            self.out.mark_lines(SpanKey::SymVar(g, *var), at);
            self.loops.push((*var, *min, *extent));
            body = *b;
        }
        self.indent += 4;
        self.body(body);
        self.indent -= 4;
        for (l, at) in inner_grid {
            self.out.mark_lines(SpanKey::Stmt(g, l), at);
        }
        self.loops.truncate(depth0);
        self.namer.pop();
    }

    /// `annotations={...}`, or the `unroll=` sugar.
    fn loop_annotations(&mut self, a: &Attrs, serial: bool) -> String {
        if serial && a.0.len() == 1 {
            let (k, v) = (&a.0[0].0, &a.0[0].1);
            if v.as_int() == Some(1) {
                if k == "pragma_unroll" {
                    return "unroll=True".to_string();
                }
                if k == "disable_unroll" {
                    return "unroll=False".to_string();
                }
            }
        }
        let mut s = String::from("annotations=");
        let mut entries: Vec<(&str, &AttrValue)> = a.iter().collect();
        entries.sort_by(|x, y| x.0.cmp(y.0));
        write_dict(&mut s, entries.into_iter(), AttrCtx::Tir, 0);
        s
    }

    /// `with T.sblock("name"):` and its contents.
    fn block(&mut self, b: &BlockNode) {
        let f = self.f;
        self.line(format!("with T.sblock({}):", quote(&b.name)));
        self.namer.push();
        self.indent += 4;
        self.axes(b);
        if let Some(p) = b.predicate.filter(|&p| !self.is_true(p)) {
            let t = self.prim(p);
            self.line(format!("T.where({t})"));
        }
        let reads = self.regions(&b.reads);
        self.line(format!("T.reads({reads})"));
        let writes = self.regions(&b.writes);
        self.line(format!("T.writes({writes})"));
        if !b.annotations.is_empty() {
            let mut s = String::from("T.sblock_attr(");
            let ann = AttrValue::Dict(b.annotations.0.clone());
            write_attr_with(&mut s, &ann, AttrCtx::Tir, &mut |out, buf| self.buffer(out, buf));
            s.push(')');
            self.line(s);
        }
        for &a in &b.alloc_buffers {
            self.alloc_buffer_line(a, "sblock_alloc_buffer");
        }
        for mb in &b.match_buffers {
            let bname = self.define_buffer(mb.buffer);
            let src = self.region(&mb.source);
            let rhs = self.buffer_decl("match_buffer", vec![src], mb.buffer);
            let mut line = Line::from(format!("{bname} = {rhs}"));
            line.mark(SpanKey::Buffer(self.g, mb.buffer), 0);
            self.out.line(self.indent, line);
        }
        if let Some(init) = b.init {
            self.line("with T.init():".to_string());
            self.nested(init);
        }
        if f.stmts.get(b.body).is_some() {
            self.body(b.body);
        } else {
            self.line(format!("# <invalid {:?}>", b.body));
        }
        self.indent -= 4;
        self.namer.pop();
    }

    /// The axis lines of a block.
    fn axes(&mut self, b: &BlockNode) {
        let f = self.f;
        let mut run: Vec<usize> = Vec::new();
        for (i, iv) in b.iter_vars.iter().enumerate() {
            let remappable = iv.kind.remap_letter().is_some()
                && matches!(f.pool.prims.get(iv.binding), Some(PrimExprData::Var(lv))
                    if self.loops.iter().rev().any(|&(v, min, ext)| v == *lv && min == iv.dom.min && ext == iv.dom.extent));
            if remappable {
                run.push(i);
            } else {
                self.flush_remap(b, &mut run);
                self.single_axis(b, i);
            }
        }
        self.flush_remap(b, &mut run);
    }

    fn flush_remap(&mut self, b: &BlockNode, run: &mut Vec<usize>) {
        match run.len() {
            0 => {}
            1 => self.single_axis(b, run[0]),
            _ => {
                let mut lhs = Vec::new();
                let mut kinds = String::new();
                let mut vars = Vec::new();
                for &i in run.iter() {
                    let iv = &b.iter_vars[i];
                    lhs.push(self.define_sym(iv.var));
                    vars.push(self.prim(iv.binding));
                    kinds.push(iv.kind.remap_letter().unwrap_or('S'));
                }
                let at = self.out.pos();
                self.line(format!("{} = T.axis.remap({}, [{}])", lhs.join(", "), quote(&kinds), vars.join(", ")));
                for &i in run.iter() {
                    self.out.mark_lines(SpanKey::SymVar(self.g, b.iter_vars[i].var), at);
                }
            }
        }
        run.clear();
    }

    fn single_axis(&mut self, b: &BlockNode, i: usize) {
        let iv = &b.iter_vars[i];
        let kind = match iv.kind {
            IterKind::Spatial => "spatial",
            IterKind::Reduce => "reduce",
            IterKind::Scan => "scan",
            IterKind::Opaque => "opaque",
        };
        let dom = if self.is_zero(iv.dom.min) {
            self.prim(iv.dom.extent)
        } else {
            format!("({}, {})", self.prim(iv.dom.min), self.sum(iv.dom.min, iv.dom.extent))
        };
        let binding = self.prim(iv.binding);
        let name = self.define_sym(iv.var);
        let at = self.out.pos();
        self.line(format!("{name} = T.axis.{kind}({dom}, {binding})"));
        self.out.mark_lines(SpanKey::SymVar(self.g, iv.var), at);
    }

    fn regions(&mut self, rs: &[BufferRegion]) -> String {
        let parts: Vec<String> = rs.iter().map(|r| self.region(r)).collect();
        parts.join(", ")
    }

    /// `A[v0, 0:4]`.
    fn region(&mut self, r: &BufferRegion) -> String {
        let f = self.f;
        let mut t = String::new();
        self.buffer(&mut t, r.buffer);
        t.push_str(if r.region.is_empty() { "[()" } else { "[" });
        for (i, rg) in r.region.iter().enumerate() {
            if i > 0 {
                t.push_str(", ");
            }
            let lo = self.prim(rg.min);
            t.push_str(&lo);
            if !matches!(f.pool.prims.get(rg.extent), Some(PrimExprData::Int(_, 1))) {
                t.push(':');
                let hi = self.sum(rg.min, rg.extent);
                t.push_str(&hi);
            }
        }
        t.push(']');
        t
    }
}
