//! Relax functions: decorator, signature, declarations, blocks and bindings
//! (`text-format.md` §4, §7.1).
//!
//! The layout follows TVM 0.25's frames. A function's own statements come first: the
//! symbolic-variable declarations `n = T.int64()` (in the order the printer first meets
//! each variable: return annotation, then parameters left to right), `R.func_attr(...)`,
//! then, in the order they are first met while printing the body, `cls = Module` and the
//! declarations of variables first met in the body. Declarations and `cls` always go to the
//! outermost function, even when first met inside a local function or an `if` branch, and
//! only the outermost signature quotes its dims.
//!
//! Checked against TVM 0.25 beyond the spec:
//! * a local function prints its own `# from tvm.script import ...` header (the prefixes
//!   used so far in the whole text) at its indentation, then a line holding only that
//!   indentation, before its decorator;
//! * a local function is never `private=True`;
//! * an `if` binding prints each branch's result as `y: Ann = <branch result>`;
//! * a Relax variable used but never defined is declared as `x: Ann` among the function's
//!   declarations.

use super::literals::{AttrCtx, write_dict};
use super::module::ModCtx;
use super::names::{Ent, Namer};
use super::out::{Buf, Line, Usage};
use super::prim_expr::{Mode, Names};
use super::span_map::{NameKey, SpanKey};
use super::types::{TyOpts, write_ty};
use crate::entities::Seq;
use crate::entities::{Block, Global, SymVar, Ty, Var};
use crate::module::Func;
use crate::relax::{Binding, BindingKind, ExprData, FunctionNode, RelaxFunction};
use crate::ty::TyData;

/// Nesting deeper than this (local functions, `if`, nested expressions) prints `...`.
pub(super) const MAX_DEPTH: u32 = 256;

/// How a sequence ends.
pub(super) enum Tail<'n> {
    /// `return <result>`.
    Return,
    /// `<name>: <ann> = <result>` (an `if` branch).
    Assign(&'n str, &'n str),
}

/// Prints one Relax function (and its local functions).
pub(crate) struct RelaxPrinter<'a, 'c> {
    pub(super) ctx: &'c mut ModCtx<'a>,
    pub(super) g: Global,
    pub(super) f: &'a RelaxFunction,
    pub(super) namer: Namer,
    /// Statement buffers of the open function frames; `[0]` is the outermost function.
    pub(super) frames: Vec<Buf>,
    /// Indentation of the outermost function's statements.
    pub(super) prelude_indent: usize,
    /// The namer scope of the outermost function.
    pub(super) outer_scope: usize,
    pub(super) cls_done: bool,
    /// Prefixes used by the lines of this function written so far.
    pub(super) usage: Usage,
    pub(super) depth: u32,
    /// Variables some expression of the function refers to (computed on first need).
    referenced: Option<std::collections::HashSet<crate::entities::Var>>,
}

impl<'a, 'c> RelaxPrinter<'a, 'c> {
    pub(crate) fn new(ctx: &'c mut ModCtx<'a>, g: Global, f: &'a RelaxFunction) -> Self {
        RelaxPrinter {
            ctx,
            g,
            f,
            namer: Namer::new(),
            frames: Vec::new(),
            prelude_indent: 0,
            outer_scope: 1,
            cls_done: false,
            usage: Usage::default(),
            depth: 0,
            referenced: None,
        }
    }

    /// Prints the module function `name` at `indent`, followed by an empty line.
    pub(crate) fn print_top(mut self, name: &str, indent: usize) -> Buf {
        let f = self.f;
        self.function(&f.func, name, true, indent, SpanKey::Def(self.g))
    }

    /// Body-context type options.
    pub(super) fn body_opts() -> TyOpts {
        TyOpts { mode: Mode::Relax, quote_vars: false }
    }

    /// Writes a line to `out`, noting the prefixes it uses.
    pub(super) fn emit(&mut self, out: &mut Buf, indent: usize, line: Line) {
        self.usage.scan(&line.text);
        out.line(indent, line);
    }

    /// Appends a line to the outermost function's statements.
    fn emit_prelude(&mut self, line: Line) {
        self.usage.scan(&line.text);
        let indent = self.prelude_indent;
        if let Some(f0) = self.frames.first_mut() {
            f0.line(indent, line);
        }
    }

    /// A function (top-level when `top`), followed by an empty line.
    fn function(&mut self, node: &FunctionNode, name: &str, top: bool, indent: usize, def_key: SpanKey) -> Buf {
        let scope = self.namer.push();
        self.frames.push(Buf::new());
        if top {
            self.outer_scope = scope;
            self.prelude_indent = indent + 4;
        }
        self.depth += 1;
        let f = self.f;
        let opts = TyOpts { mode: Mode::Relax, quote_vars: top };
        // The return annotation is printed first, so its variables are declared first.
        let mut ret = String::new();
        write_ty(&mut ret, &f.pool, node.ret, opts, self);
        let mut def = Line::from("def ");
        def.push(name);
        def.push("(");
        for (i, &p) in node.params.iter().enumerate() {
            if i > 0 {
                def.push(", ");
            }
            let start = def.pos();
            let pname = self.define_var(p);
            def.push(&pname);
            def.push(": ");
            let mut ann = String::new();
            self.write_var_ty(&mut ann, p, opts);
            def.push(&ann);
            def.mark(SpanKey::Var(self.g, p), start);
        }
        def.push(") -> ");
        def.push(&ret);
        def.push(":");
        def.mark(def_key, 0);
        self.usage.scan(&def.text);
        let attrs: Vec<_> = node
            .attrs
            .sorted()
            .into_iter()
            .filter(|(k, v)| !(*k == "global_symbol" && v.as_str() == Some(name)))
            .collect();
        if !attrs.is_empty() {
            let mut s = String::from("R.func_attr(");
            write_dict(&mut s, attrs.into_iter(), AttrCtx::Relax, 0);
            s.push(')');
            self.usage.scan(&s);
            if let Some(fr) = self.frames.last_mut() {
                fr.str_line(indent + 4, &s);
            }
        }
        let mut kws = Vec::new();
        if !node.pure {
            kws.push("pure=False");
        }
        if top && node.attrs.get("global_symbol").is_none() {
            kws.push("private=True");
        }
        let deco = if kws.is_empty() { "@R.function".to_string() } else { format!("@R.function({})", kws.join(", ")) };
        self.usage.scan(&deco);
        let body = if self.depth > MAX_DEPTH {
            let mut b = Buf::new();
            b.str_line(indent + 4, "...");
            b
        } else {
            self.seq(node.body, indent + 4, Tail::Return)
        };
        self.depth -= 1;
        let frame = self.frames.pop().unwrap_or_default();
        self.namer.pop();
        let mut out = Buf::new();
        out.str_line(indent, &deco);
        out.line(indent, def);
        out.append(frame);
        out.append(body);
        out.blank();
        out
    }

    /// The blocks of a sequence and its result, in a new scope.
    pub(super) fn seq(&mut self, seq: Seq, indent: usize, tail: Tail<'_>) -> Buf {
        let mut out = Buf::new();
        let Some(seq) = self.f.seqs.get(seq) else {
            out.str_line(indent, &format!("# <invalid {seq:?}>"));
            return out;
        };
        self.namer.push();
        for &b in &seq.blocks {
            self.block(&mut out, b, indent);
        }
        let mut line = Line::new();
        match tail {
            Tail::Return => {
                line.push("return ");
                self.expr(&mut line, seq.body, super::relax_expr::Pos::Return);
            }
            Tail::Assign(name, ann) => {
                line.push(name);
                if !ann.is_empty() {
                    line.push(": ");
                    line.push(ann);
                }
                line.push(" = ");
                self.expr(&mut line, seq.body, super::relax_expr::Pos::Rhs);
            }
        }
        self.emit(&mut out, indent, line);
        self.namer.pop();
        out
    }

    fn block(&mut self, out: &mut Buf, b: Block, indent: usize) {
        let f = self.f;
        let Some(bd) = f.blocks.get(b) else {
            out.str_line(indent, &format!("# <invalid {b:?}>"));
            return;
        };
        if !bd.dataflow {
            for bind in &bd.bindings {
                self.binding(out, bind, indent);
            }
            return;
        }
        let mut head = Line::from("with R.dataflow():");
        head.mark(SpanKey::Block(self.g, b), 0);
        self.emit(out, indent, head);
        for bind in &bd.bindings {
            self.binding(out, bind, indent + 4);
        }
        let outputs: Vec<String> = bd
            .bindings
            .iter()
            .filter(|bind| f.vars.get(bind.var).is_some_and(|v| !v.dataflow))
            .filter_map(|bind| self.namer.get(Ent::Var(bind.var)).map(str::to_string))
            .collect();
        let line = Line::from(format!("R.output({})", outputs.join(", ")));
        self.emit(out, indent + 4, line);
    }

    fn binding(&mut self, out: &mut Buf, bind: &Binding, indent: usize) {
        let f = self.f;
        let g = self.g;
        let start = out.pos();
        let value = f.exprs.get(bind.value);
        match (&bind.kind, value) {
            (BindingKind::Value, Some(ExprData::If { cond, then_branch, else_branch })) => {
                let mut ann = String::new();
                self.write_var_ty(&mut ann, bind.var, Self::body_opts());
                let name = self.define_var(bind.var);
                let mut head = Line::from("if ");
                self.expr(&mut head, *cond, super::relax_expr::Pos::Inner);
                head.push(":");
                self.emit(out, indent, head);
                if self.depth > MAX_DEPTH {
                    out.str_line(indent + 4, "...");
                } else {
                    self.depth += 1;
                    let t = self.seq(*then_branch, indent + 4, Tail::Assign(&name, &ann));
                    out.append(t);
                    out.str_line(indent, "else:");
                    let e = self.seq(*else_branch, indent + 4, Tail::Assign(&name, &ann));
                    out.append(e);
                    self.depth -= 1;
                }
                out.mark_lines(SpanKey::Var(g, bind.var), start);
            }
            (BindingKind::Value, Some(ExprData::Function(node))) => {
                let name = self.define_var(bind.var);
                let fb = if self.depth > MAX_DEPTH {
                    let mut b = Buf::new();
                    b.str_line(indent, &format!("{name} = ..."));
                    b
                } else {
                    self.function(node, &name, false, indent, SpanKey::Var(g, bind.var))
                };
                // TVM wraps every function it prints in a header of the prefixes used so far.
                let usage = self.ctx.prior.union(self.usage);
                for l in usage.header_lines() {
                    out.str_line(indent, l);
                }
                if usage.any() {
                    out.str_line(indent, "");
                }
                out.append(fb);
            }
            (BindingKind::Value, _) if self.is_void_binding(bind) => {
                let mut line = Line::new();
                self.expr(&mut line, bind.value, super::relax_expr::Pos::Stmt);
                line.mark(SpanKey::Var(g, bind.var), 0);
                self.emit(out, indent, line);
            }
            (BindingKind::MatchCast(cty), _) => {
                let mut ann = String::new();
                self.write_var_ty(&mut ann, bind.var, Self::body_opts());
                let mut rhs = Line::from("R.match_cast(");
                self.expr(&mut rhs, bind.value, super::relax_expr::Pos::Arg);
                rhs.push(", ");
                let mut t = String::new();
                write_ty(&mut t, &f.pool, *cty, Self::body_opts(), self);
                rhs.push(&t);
                rhs.push(")");
                let name = self.define_var(bind.var);
                self.assign(out, indent, bind.var, &name, Some(&ann), rhs);
            }
            (BindingKind::Value, _) => {
                let mut rhs = Line::new();
                self.expr(&mut rhs, bind.value, super::relax_expr::Pos::Rhs);
                let ann = if self.hide_annotation(bind) {
                    None
                } else {
                    let mut a = String::new();
                    self.write_var_ty(&mut a, bind.var, Self::body_opts());
                    Some(a)
                };
                let name = self.define_var(bind.var);
                self.assign(out, indent, bind.var, &name, ann.as_deref(), rhs);
            }
        }
    }

    /// `name[: ann] = rhs`, spanned as the binding of `var`.
    fn assign(&mut self, out: &mut Buf, indent: usize, var: Var, name: &str, ann: Option<&str>, rhs: Line) {
        let mut line = Line::from(name);
        if let Some(a) = ann {
            line.push(": ");
            line.push(a);
        }
        line.push(" = ");
        line.append(rhs);
        line.mark(SpanKey::Var(self.g, var), 0);
        self.emit(out, indent, line);
    }

    /// Both the value and the variable have the empty tuple type: TVM prints an expression
    /// statement. Not when the variable is used (a use of a dataflow variable, or IR that
    /// a pass left unnormalised) or is an output of a dataflow block: the statement would
    /// leave it undefined. (The parser, like TVM's normaliser, turns the uses of other void
    /// variables into `R.tuple()`.)
    fn is_void_binding(&mut self, bind: &Binding) -> bool {
        let f = self.f;
        let is_void = |t: Option<Ty>| t.and_then(|t| f.pool.tys.get(t)).is_some_and(TyData::is_void);
        if !(is_void(f.ty_of(bind.value)) && is_void(f.vars.get(bind.var).map(|v| v.ty))) {
            return false;
        }
        let referenced = self.referenced.get_or_insert_with(|| referenced_vars(f));
        !referenced.contains(&bind.var)
    }

    /// `R.call_tir` / `R.call_dps_packed` whose variable has exactly the call's output type.
    fn hide_annotation(&self, bind: &Binding) -> bool {
        let f = self.f;
        let Some(ExprData::Call(c)) = f.exprs.get(bind.value) else { return false };
        let Some(ExprData::Op(op)) = f.exprs.get(c.callee) else { return false };
        if !op.is_one_of(&[crate::op::ops::CALL_TIR, crate::op::ops::CALL_DPS_PACKED]) {
            return false;
        }
        let Some(vd) = f.vars.get(bind.var) else { return false };
        match c.sinfo_args.len() {
            0 => false,
            1 => c.sinfo_args[0] == vd.ty,
            _ => f.pool.tys.lookup(&TyData::Tuple(c.sinfo_args.clone())) == Some(vd.ty),
        }
    }

    /// Defines a Relax variable in the current scope and returns its printed name.
    pub(super) fn define_var(&mut self, v: Var) -> String {
        let hint = self.f.vars.get(v).map_or("", |d| d.name.as_str());
        let name = self.namer.define(hint, Some(Ent::Var(v)));
        self.ctx.name(NameKey::Var(self.g, v), &name);
        name
    }

    /// Writes the type of a Relax variable.
    pub(super) fn write_var_ty(&mut self, out: &mut String, v: Var, opts: TyOpts) {
        let f = self.f;
        match f.vars.get(v) {
            Some(vd) => write_ty(out, &f.pool, vd.ty, opts, self),
            None => out.push_str(&format!("<invalid {v:?}>")),
        }
    }

    /// The printed name of a Relax variable; an undefined one is declared `x: Ann` among
    /// the outermost function's statements.
    pub(super) fn var_text(&mut self, v: Var) -> String {
        if let Some(n) = self.namer.get(Ent::Var(v)) {
            return n.to_string();
        }
        if self.f.vars.get(v).is_none() {
            return format!("<invalid {v:?}>");
        }
        let hint = self.f.vars.get(v).map_or("", |d| d.name.as_str());
        let name = self.namer.define_in(self.outer_scope, hint, Some(Ent::Var(v)));
        self.ctx.name(NameKey::Var(self.g, v), &name);
        let mut ann = String::new();
        self.write_var_ty(&mut ann, v, Self::body_opts());
        let mut line = Line::from(format!("{name}: {ann}"));
        line.mark(SpanKey::Var(self.g, v), 0);
        self.emit_prelude(line);
        name
    }

    /// The module reference of a global: `cls.f` (printing `cls = Module` once), or the
    /// bare name in single-function text and for globals the module does not define.
    pub(super) fn global_text(&mut self, target: Global) -> String {
        let m = self.ctx.m;
        let Some(gd) = m.globals.get(target) else { return format!("<invalid {target:?}>") };
        let defined = matches!(gd.func, Func::Relax(_) | Func::Prim(_) | Func::Extern(_));
        if self.ctx.single() || !defined {
            return gd.name.clone();
        }
        if !self.cls_done {
            self.cls_done = true;
            self.emit_prelude(Line::from("cls = Module"));
        }
        format!("cls.{}", gd.name)
    }
}

impl Names for RelaxPrinter<'_, '_> {
    fn sym(&mut self, out: &mut String, v: SymVar) {
        if let Some(n) = self.namer.get(Ent::Sym(v)) {
            out.push_str(n);
            return;
        }
        let f = self.f;
        let Some(vd) = f.pool.vars.get(v) else {
            out.push_str(&format!("<invalid {v:?}>"));
            return;
        };
        let name = self.namer.define_in(self.outer_scope, &vd.name, Some(Ent::Sym(v)));
        self.ctx.name(NameKey::SymVar(self.g, v), &name);
        let mut line = Line::from(format!("{name} = {}", super::tir::var_creation(vd)));
        line.mark(SpanKey::SymVar(self.g, v), 0);
        self.emit_prelude(line);
        out.push_str(&name);
    }
    fn relax_var(&mut self, out: &mut String, v: Var) {
        let t = self.var_text(v);
        out.push_str(&t);
    }
}

/// The variables the expressions reachable from the function's body refer to (dead
/// expressions that passes leave in the arena do not count). Iterative: deep or cyclic
/// (ill-formed) IR does not recurse.
fn referenced_vars(f: &RelaxFunction) -> std::collections::HashSet<Var> {
    let mut out = std::collections::HashSet::new();
    let mut seen = std::collections::HashSet::new();
    let mut stack: Vec<crate::entities::Expr> = Vec::new();
    // The outputs of a dataflow block are referred to by its `R.output(...)`.
    let push_seq = |stack: &mut Vec<crate::entities::Expr>, out: &mut std::collections::HashSet<Var>, seq: Seq| {
        let Some(seq) = f.seqs.get(seq) else { return };
        for &b in &seq.blocks {
            if let Some(block) = f.blocks.get(b) {
                stack.extend(block.bindings.iter().map(|bind| bind.value));
                if block.dataflow {
                    let outputs = block.bindings.iter().map(|bind| bind.var);
                    out.extend(outputs.filter(|&v| f.vars.get(v).is_some_and(|d| !d.dataflow)));
                }
            }
        }
        stack.push(seq.body);
    };
    push_seq(&mut stack, &mut out, f.func.body);
    while let Some(e) = stack.pop() {
        if !seen.insert(e) {
            continue;
        }
        match f.exprs.get(e) {
            Some(ExprData::Var(v)) => {
                out.insert(*v);
            }
            Some(ExprData::Call(c)) => {
                stack.push(c.callee);
                stack.extend(f.lists.get(c.args).unwrap_or_default().iter().copied());
            }
            Some(ExprData::Tuple(fields)) => stack.extend(f.lists.get(*fields).unwrap_or_default().iter().copied()),
            Some(ExprData::GetItem { tuple, .. }) => stack.push(*tuple),
            Some(ExprData::If { cond, then_branch, else_branch }) => {
                stack.push(*cond);
                push_seq(&mut stack, &mut out, *then_branch);
                push_seq(&mut stack, &mut out, *else_branch);
            }
            Some(ExprData::Function(node)) => push_seq(&mut stack, &mut out, node.body),
            _ => {}
        }
    }
    out
}
