//! PrimFuncs: decorator, parameters, buffers, the root block (`text-format.md` §7.2, §8).
//!
//! Follows TVM 0.25's `PrimFunc` printer:
//! * a handle parameter prints inline as `x: T.Buffer(shape, "dtype")` when the handle is
//!   used nowhere else, its buffer is simple (no strides, no variable in shape or offset,
//!   zero offset, global scope, default alignment 64 and offset factor 1, default type, no
//!   axis separators) and shares its data pointer with no other parameter buffer; otherwise
//!   `var_x: T.handle` plus `x = T.match_buffer(var_x, shape, ...)` after `T.func_attr`;
//! * a buffer declaration defines the new variables of its shape: a dim that is a bare new
//!   variable is declared just before the buffer statement (several at once as
//!   `m, n = T.int64(), T.int64()`), a new variable inside a compound dim is declared as
//!   soon as it is printed (so `(n, k * 2, k)` declares `k` before `n`);
//! * a buffer's new data pointer prints as `x.data` afterwards (a second buffer on the same
//!   pointer prints `data=x.data`); a new `elem_offset` variable prints as `x.elem_offset`
//!   and forces `offset_factor=`; a new stride variable prints as its quoted name;
//! * keywords in the order `data, strides, elem_offset, scope, align, offset_factor,
//!   buffer_type, axis_separators`; the dtype is omitted when `float32` (but always written
//!   in `T.Buffer`);
//! * the root block prints as the comment `# with T.sblock("root"):` when it has no
//!   predicate, annotations, match buffers, regions or init, and it allocates buffers, or
//!   its body is a block with iteration variables, or its body is no block but contains one.

use std::collections::{HashMap, HashSet};

use super::literals::{AttrCtx, quote, write_dict};
use super::module::ModCtx;
use super::names::{Ent, Namer, sanitize_name};
use super::out::{Buf, Line};
use super::prim_expr::{Mode, Names, vars_of, write_prim};
use super::span_map::{NameKey, SpanKey};
use crate::dtype::DataType;
use crate::entities::{Buffer, Global, PrimExpr, Stmt, SymVar};
use crate::prim::{PrimExprData, SymVarData};
use crate::tir::{AttrNode, PrimFunc, StmtData};

/// The creation call of a variable: `T.int64()`, `T.handle("float32", "global")`.
pub(crate) fn var_creation(v: &SymVarData) -> String {
    match &v.pointer {
        Some((t, scope)) if scope.is_empty() => format!("T.handle({})", quote(&t.to_string())),
        Some((t, scope)) => format!("T.handle({}, {})", quote(&t.to_string()), quote(scope)),
        None if v.size_var => format!("T.{}(is_size_var=True)", v.dtype),
        None => format!("T.{}()", v.dtype),
    }
}

/// The annotation of a variable: `T.int64`, `T.handle`, `T.handle("float32", "global")`.
pub(crate) fn var_type(v: &SymVarData) -> String {
    match &v.pointer {
        Some(_) => var_creation(v),
        None => format!("T.{}", v.dtype),
    }
}

/// Prints one PrimFunc.
pub(crate) struct TirPrinter<'a, 'c> {
    pub(super) ctx: &'c mut ModCtx<'a>,
    pub(super) g: Global,
    pub(super) f: &'a PrimFunc,
    pub(super) namer: Namer,
    /// The function's statements.
    pub(super) out: Buf,
    /// Indentation of the statement being printed.
    pub(super) indent: usize,
    /// Enclosing loops: variable, min, extent.
    pub(super) loops: Vec<(SymVar, PrimExpr, PrimExpr)>,
    /// Statements being printed (cycle guard).
    pub(super) on_path: HashSet<Stmt>,
    pub(super) depth: u32,
}

impl<'a, 'c> TirPrinter<'a, 'c> {
    pub(crate) fn new(ctx: &'c mut ModCtx<'a>, g: Global, f: &'a PrimFunc) -> Self {
        TirPrinter {
            ctx,
            g,
            f,
            namer: Namer::new(),
            out: Buf::new(),
            indent: 0,
            loops: Vec::new(),
            on_path: HashSet::new(),
            depth: 0,
        }
    }

    /// Prints the function `name` at `indent`, followed by an empty line.
    pub(crate) fn print_func(mut self, name: &str, indent: usize) -> Buf {
        let f = self.f;
        let g = self.g;
        self.namer.push();
        self.indent = indent + 4;
        let (inline, param_buffers) = self.inline_params();
        let mut def = Line::from("def ");
        def.push(name);
        def.push("(");
        for (i, &p) in f.params.iter().enumerate() {
            if i > 0 {
                def.push(", ");
            }
            let start = def.pos();
            match inline[i] {
                Some(b) => {
                    let bname = self.define_buffer(b);
                    def.push(&bname);
                    def.push(": ");
                    let ann = self.buffer_ann(b);
                    def.push(&ann);
                    def.mark(SpanKey::Buffer(g, b), start);
                }
                None => {
                    let pname = self.define_sym(p);
                    def.push(&pname);
                    def.push(": ");
                    let ty = f.pool.vars.get(p).map_or_else(|| format!("<invalid {p:?}>"), var_type);
                    def.push(&ty);
                    def.mark(SpanKey::SymVar(g, p), start);
                }
            }
        }
        def.push(")");
        if !f.ret.is_void() {
            def.push(&format!(" -> T.{}", f.ret));
        }
        def.push(":");
        def.mark(SpanKey::Def(g), 0);
        let attrs: Vec<_> = f
            .attrs
            .sorted()
            .into_iter()
            .filter(|(k, v)| !(*k == "global_symbol" && v.as_str() == Some(name)))
            .collect();
        if !attrs.is_empty() {
            let mut s = String::from("T.func_attr(");
            write_dict(&mut s, attrs.into_iter(), AttrCtx::Tir, 0);
            s.push(')');
            self.out.str_line(self.indent, &s);
        }
        for (i, &p) in f.params.iter().enumerate() {
            if inline[i].is_some() {
                continue;
            }
            let Some(&b) = param_buffers.get(&p) else { continue };
            let bname = self.define_buffer(b);
            let handle = self.namer.get(Ent::Sym(p)).unwrap_or("v").to_string();
            let rhs = self.buffer_decl("match_buffer", vec![handle], b);
            let mut line = Line::from(format!("{bname} = {rhs}"));
            line.mark(SpanKey::Buffer(g, b), 0);
            self.out.line(self.indent, line);
        }
        self.body_of_func();
        self.namer.pop();
        let mut kws = Vec::new();
        if f.attrs.get("global_symbol").is_none() {
            kws.push("private=True");
        }
        if f.s_tir {
            kws.push("s_tir=True");
        }
        if f.persistent {
            kws.push("persistent=True");
        }
        let deco =
            if kws.is_empty() { "@T.prim_func".to_string() } else { format!("@T.prim_func({})", kws.join(", ")) };
        let mut b = Buf::new();
        b.str_line(indent, &deco);
        b.line(indent, def);
        b.append(std::mem::take(&mut self.out));
        b.blank();
        b
    }

    /// The root block as a comment with its allocations at function level, or the body.
    fn body_of_func(&mut self) {
        let f = self.f;
        let g = self.g;
        if let Some(StmtData::Block(root)) = f.stmts.get(f.body)
            && root.iter_vars.is_empty()
            && root.predicate.is_none_or(|p| self.is_true(p))
            && root.annotations.is_empty()
            && root.match_buffers.is_empty()
            && root.reads.is_empty()
            && root.writes.is_empty()
            && root.init.is_none()
        {
            let body_is_iter_block =
                matches!(f.stmts.get(root.body), Some(StmtData::Block(b)) if !b.iter_vars.is_empty());
            let body_is_block = matches!(f.stmts.get(root.body), Some(StmtData::Block(_)));
            if !root.alloc_buffers.is_empty()
                || body_is_iter_block
                || (!body_is_block && self.contains_block(root.body))
            {
                let start = self.out.pos();
                self.out.str_line(self.indent, "# with T.sblock(\"root\"):");
                for &b in &root.alloc_buffers {
                    self.alloc_buffer_line(b, "sblock_alloc_buffer");
                }
                self.body(root.body);
                self.out.mark_lines(SpanKey::Stmt(g, f.body), start);
                return;
            }
        }
        self.body(f.body);
    }

    /// True for the constant `True` (or 1).
    pub(super) fn is_true(&self, e: PrimExpr) -> bool {
        matches!(self.f.pool.prims.get(e), Some(PrimExprData::Int(_, 1)))
    }

    /// Whether a block occurs anywhere under `s`.
    fn contains_block(&self, s: Stmt) -> bool {
        let f = self.f;
        let mut seen = HashSet::new();
        let mut stack = vec![s];
        while let Some(s) = stack.pop() {
            if !seen.insert(s) {
                continue;
            }
            match f.stmts.get(s) {
                Some(StmtData::Block(_)) => return true,
                Some(d) => d.for_each_child(|c| stack.push(c)),
                None => {}
            }
        }
        false
    }

    /// For each parameter, the buffer it prints inline as `T.Buffer(...)`, if any.
    /// Also returns the first buffer bound to each parameter. Counts are taken once, so a
    /// function with thousands of parameters prints in linear time.
    fn inline_params(&self) -> (Vec<Option<Buffer>>, HashMap<SymVar, Buffer>) {
        let f = self.f;
        let used = self.vars_used_outside_params();
        let mut param_count: HashMap<SymVar, usize> = HashMap::new();
        for &p in &f.params {
            *param_count.entry(p).or_default() += 1;
        }
        let mut bound_count: HashMap<SymVar, usize> = HashMap::new();
        let mut first_buffer: HashMap<SymVar, Buffer> = HashMap::new();
        let mut data_count: HashMap<SymVar, usize> = HashMap::new();
        for &(q, b) in &f.buffer_map {
            *bound_count.entry(q).or_default() += 1;
            first_buffer.entry(q).or_insert(b);
            if let Some(o) = f.buffers.get(b) {
                *data_count.entry(o.data).or_default() += 1;
            }
        }
        let inline = f
            .params
            .iter()
            .map(|&p| {
                let b = *first_buffer.get(&p)?;
                let bd = f.buffers.get(b)?;
                let once = param_count.get(&p) == Some(&1) && bound_count.get(&p) == Some(&1);
                let shared_data = data_count.get(&bd.data).copied().unwrap_or(0) > 1;
                let no_vars = |e: &PrimExpr| f.pool.prims.get(*e).is_some() && vars_of(&f.pool, *e).is_empty();
                let simple = bd.strides.is_empty()
                    && bd.shape.iter().all(no_vars)
                    && bd.elem_offset.is_none_or(|e| matches!(f.pool.prims.get(e), Some(PrimExprData::Int(_, 0))))
                    && (bd.scope == "global" || bd.scope.is_empty())
                    && bd.align.is_none_or(|a| a == 64)
                    && bd.offset_factor.is_none_or(|o| o == 1)
                    && bd.buffer_type.as_deref().is_none_or(|t| t == "default" || t.is_empty())
                    && bd.axis_separators.is_empty();
                (once && !shared_data && simple && !used.contains(&p)).then_some(b)
            })
            .collect();
        (inline, first_buffer)
    }

    /// Variables used by statements and buffer fields (handles used there cannot be
    /// hidden behind an inline `T.Buffer` parameter).
    fn vars_used_outside_params(&self) -> HashSet<SymVar> {
        let f = self.f;
        let mut exprs: Vec<PrimExpr> = Vec::new();
        for (_, s) in f.stmts.iter() {
            match s {
                StmtData::Seq(_) | StmtData::DeclBuffer { .. } | StmtData::Allocate { .. } => {}
                StmtData::For { min, extent, step, .. } => {
                    exprs.push(*min);
                    exprs.push(*extent);
                    exprs.extend(*step);
                }
                StmtData::Block(b) => {
                    for iv in &b.iter_vars {
                        exprs.extend([iv.dom.min, iv.dom.extent, iv.binding]);
                    }
                    exprs.extend(b.predicate);
                    for r in b.reads.iter().chain(&b.writes).chain(b.match_buffers.iter().map(|m| &m.source)) {
                        for rg in &r.region {
                            exprs.extend([rg.min, rg.extent]);
                        }
                    }
                }
                StmtData::Store { indices, value, .. } => {
                    exprs.extend(indices.iter().copied());
                    exprs.push(*value);
                }
                StmtData::If { cond, .. } | StmtData::While { cond, .. } => exprs.push(*cond),
                StmtData::Let { value, .. } => exprs.push(*value),
                StmtData::Evaluate(e) => exprs.push(*e),
                StmtData::Assert { cond, message, .. } => exprs.extend([*cond, *message]),
                StmtData::Attr { node, value, .. } => {
                    exprs.push(*value);
                    if let AttrNode::Expr(e) = node {
                        exprs.push(*e);
                    }
                }
            }
        }
        for (_, b) in f.buffers.iter() {
            exprs.extend(b.shape.iter().copied());
            exprs.extend(b.strides.iter().copied());
            exprs.extend(b.elem_offset);
        }
        let mut used = HashSet::new();
        for e in exprs {
            used.extend(vars_of(&f.pool, e));
        }
        let params: HashSet<SymVar> = f.params.iter().copied().collect();
        for (_, b) in f.buffers.iter() {
            if params.contains(&b.data) {
                used.insert(b.data);
            }
        }
        used
    }

    /// Defines a TIR variable in the current scope.
    pub(super) fn define_sym(&mut self, v: SymVar) -> String {
        let hint = self.f.pool.vars.get(v).map_or("", |d| d.name.as_str());
        let name = self.namer.define(hint, Some(Ent::Sym(v)));
        self.ctx.name(NameKey::SymVar(self.g, v), &name);
        name
    }

    /// Defines a buffer in the current scope.
    pub(super) fn define_buffer(&mut self, b: Buffer) -> String {
        let hint = self.f.buffers.get(b).map_or("", |d| d.name.as_str());
        let name = self.namer.define(hint, Some(Ent::Buf(b)));
        self.ctx.name(NameKey::Buffer(self.g, b), &name);
        name
    }

    /// Prints `name = T.<method>(...)` for an allocation, defining the buffer.
    pub(super) fn alloc_buffer_line(&mut self, b: Buffer, method: &str) {
        let bname = self.define_buffer(b);
        let rhs = self.buffer_decl(method, Vec::new(), b);
        let mut line = Line::from(format!("{bname} = {rhs}"));
        line.mark(SpanKey::Buffer(self.g, b), 0);
        self.out.line(self.indent, line);
    }

    /// Writes an expression in TIR spelling.
    pub(super) fn prim(&mut self, e: PrimExpr) -> String {
        let f = self.f;
        let mut s = String::new();
        write_prim(&mut s, &f.pool, e, Mode::Tir, self);
        s
    }

    /// `T.Buffer(shape, "dtype")` for an inline parameter.
    fn buffer_ann(&mut self, b: Buffer) -> String {
        let a = self.buffer_attrs(b, true);
        let dtype = self.f.buffers.get(b).map_or(DataType::FLOAT32, |d| d.dtype);
        format!("T.Buffer({}, {})", a.shape, quote(&dtype.to_string()))
    }

    /// `T.<method>(args..., shape[, dtype][, keywords])`, declaring new shape variables.
    pub(super) fn buffer_decl(&mut self, method: &str, mut args: Vec<String>, b: Buffer) -> String {
        self.buffer_decl_with(method, std::mem::take(&mut args), b, true)
    }

    /// [`TirPrinter::buffer_decl`], optionally leaving a new data pointer undefined.
    fn buffer_decl_with(&mut self, method: &str, mut args: Vec<String>, b: Buffer, define_data: bool) -> String {
        let a = self.buffer_attrs(b, define_data);
        args.push(a.shape);
        args.extend(a.dtype);
        args.extend(a.kwargs);
        format!("T.{method}({})", args.join(", "))
    }

    /// The pieces of a buffer declaration; emits the declarations of new variables.
    /// With `define_data` false (a `T.Buffer` declared at first use, TVM's
    /// `BufferVarDefinition::None`) a new data pointer is neither printed nor defined.
    fn buffer_attrs(&mut self, b: Buffer, define_data: bool) -> BufferAttrs {
        let f = self.f;
        let Some(bd) = f.buffers.get(b) else {
            return BufferAttrs { shape: format!("<invalid {b:?}>"), dtype: None, kwargs: Vec::new() };
        };
        let bname = self.namer.get(Ent::Buf(b)).map_or_else(|| sanitize_name(&bd.name), str::to_string);
        // How many fields of this buffer mention each variable.
        let fields: Vec<PrimExpr> = bd.shape.iter().chain(&bd.strides).copied().chain(bd.elem_offset).collect();
        let uses = |v: SymVar| {
            usize::from(bd.data == v) + fields.iter().filter(|&&e| vars_of(&f.pool, e).contains(&v)).count()
        };
        let mut deferred: Vec<SymVar> = Vec::new();
        let mut kwargs = Vec::new();
        // Shape.
        let mut shape = String::from("(");
        for (i, &d) in bd.shape.iter().enumerate() {
            if i > 0 {
                shape.push_str(", ");
            }
            if let Some(v) = self.new_bare_var(d) {
                let n = self.define_sym(v);
                deferred.push(v);
                shape.push_str(&n);
            } else {
                let s = self.prim(d);
                shape.push_str(&s);
            }
        }
        if bd.shape.len() == 1 {
            shape.push(',');
        }
        shape.push(')');
        let dtype = (bd.dtype != DataType::FLOAT32).then(|| quote(&bd.dtype.to_string()));
        // Data pointer.
        if self.namer.get(Ent::Sym(bd.data)).is_some() {
            let mut s = String::from("data=");
            self.sym(&mut s, bd.data);
            kwargs.push(s);
        } else if define_data && uses(bd.data) == 1 {
            self.namer.alias(Ent::Sym(bd.data), format!("{bname}.data"));
        } else if define_data {
            let n = self.define_sym(bd.data);
            deferred.push(bd.data);
            kwargs.push(format!("data={n}"));
        }
        // Strides.
        if !bd.strides.is_empty() {
            let mut s = String::from("strides=(");
            for (i, &st) in bd.strides.iter().enumerate() {
                if i > 0 {
                    s.push_str(", ");
                }
                match self.new_bare_var(st) {
                    Some(v) if uses(v) == 1 => {
                        self.namer.alias(Ent::Sym(v), format!("{bname}.strides[{i}]"));
                        let hint = f.pool.vars.get(v).map_or("", |d| d.name.as_str());
                        s.push_str(&quote(&sanitize_name(hint)));
                    }
                    Some(v) => {
                        let n = self.define_sym(v);
                        deferred.push(v);
                        s.push_str(&n);
                    }
                    None => {
                        let t = self.prim(st);
                        s.push_str(&t);
                    }
                }
            }
            if bd.strides.len() == 1 {
                s.push(',');
            }
            s.push(')');
            kwargs.push(s);
        }
        // Element offset.
        let mut needs_factor = false;
        if let Some(eo) = bd.elem_offset {
            match (f.pool.prims.get(eo), self.new_bare_var(eo)) {
                (Some(PrimExprData::Int(_, 0)), _) => {}
                (_, Some(v)) if uses(v) == 1 => {
                    self.namer.alias(Ent::Sym(v), format!("{bname}.elem_offset"));
                    needs_factor = true;
                }
                (_, Some(v)) => {
                    let n = self.define_sym(v);
                    deferred.push(v);
                    kwargs.push(format!("elem_offset={n}"));
                }
                _ => {
                    let t = self.prim(eo);
                    kwargs.push(format!("elem_offset={t}"));
                }
            }
        }
        if !bd.scope.is_empty() && bd.scope != "global" {
            kwargs.push(format!("scope={}", quote(&bd.scope)));
        }
        if let Some(a) = bd.align.filter(|&a| a != 64) {
            kwargs.push(format!("align={a}"));
        }
        if needs_factor || bd.offset_factor.is_some_and(|o| o != 1) {
            kwargs.push(format!("offset_factor={}", bd.offset_factor.unwrap_or(1)));
        }
        if let Some(t) = bd.buffer_type.as_deref().filter(|t| !t.is_empty() && *t != "default") {
            kwargs.push(format!("buffer_type={}", quote(t)));
        }
        if !bd.axis_separators.is_empty() {
            let items: Vec<String> = bd.axis_separators.iter().map(i64::to_string).collect();
            kwargs.push(format!("axis_separators=[{}]", items.join(", ")));
        }
        self.declare(&deferred);
        BufferAttrs { shape, dtype, kwargs }
    }

    /// `n = T.int64()` or `m, n = T.int64(), T.int64()` for already-named variables.
    fn declare(&mut self, vars: &[SymVar]) {
        if vars.is_empty() {
            return;
        }
        let f = self.f;
        let names: Vec<String> = vars.iter().map(|&v| self.namer.get(Ent::Sym(v)).unwrap_or("v").to_string()).collect();
        let rhs: Vec<String> =
            vars.iter().map(|&v| f.pool.vars.get(v).map_or_else(|| "T.int64()".to_string(), var_creation)).collect();
        let mut line = Line::from(format!("{} = {}", names.join(", "), rhs.join(", ")));
        for &v in vars {
            line.mark(SpanKey::SymVar(self.g, v), 0);
        }
        self.out.line(self.indent, line);
    }

    /// The variable of `e` if it is a bare variable not yet defined.
    fn new_bare_var(&self, e: PrimExpr) -> Option<SymVar> {
        match self.f.pool.prims.get(e) {
            Some(PrimExprData::Var(v))
                if self.namer.get(Ent::Sym(*v)).is_none() && self.f.pool.vars.get(*v).is_some() =>
            {
                Some(*v)
            }
            _ => None,
        }
    }
}

struct BufferAttrs {
    shape: String,
    dtype: Option<String>,
    kwargs: Vec<String>,
}

impl Names for TirPrinter<'_, '_> {
    /// A variable used before any definition is declared right before the statement being
    /// printed, as TVM declares it at the innermost frame covering its uses.
    fn sym(&mut self, out: &mut String, v: SymVar) {
        if let Some(n) = self.namer.get(Ent::Sym(v)) {
            out.push_str(n);
            return;
        }
        if self.f.pool.vars.get(v).is_none() {
            out.push_str(&format!("<invalid {v:?}>"));
            return;
        }
        let name = self.define_sym(v);
        self.declare(&[v]);
        out.push_str(&name);
    }
    fn buffer(&mut self, out: &mut String, b: Buffer) {
        if let Some(n) = self.namer.get(Ent::Buf(b)) {
            out.push_str(n);
            return;
        }
        if self.f.buffers.get(b).is_none() {
            out.push_str(&format!("<invalid {b:?}>"));
            return;
        }
        // Used before any declaration (lowered TIR): declared in place as TVM does,
        // `x = T.Buffer(shape, ...)`.
        let name = self.define_buffer(b);
        let rhs = self.buffer_decl_with("Buffer", Vec::new(), b, false);
        let mut line = Line::from(format!("{name} = {rhs}"));
        line.mark(SpanKey::Buffer(self.g, b), 0);
        self.out.line(self.indent, line);
        out.push_str(&name);
    }
}
