//! Relax expressions and calls (`text-format.md` §6).
//!
//! Checked against TVM 0.25 beyond the spec:
//! * an `R.ExternFunc` used directly as a call argument prints as its bare name string
//!   (`R.call_pure_packed("f", x, ...)`, `R.make_closure("f", (x,), ...)`, `y("b", x)`); as a
//!   binding value or tuple field it prints `R.ExternFunc("f")`, plus its type when that is
//!   not the default opaque impure `R.Callable`;
//! * a binding's right-hand tuple of two or more fields prints without parentheses
//!   (`t: T = z, y`), a one-field tuple keeps them (`(x,)`), `return` keeps them;
//! * DPS calls print `out_sinfo=` (a list for a tuple type), then the attributes
//!   (`inplace_indices=[1]`), then `tir_vars=`.

use super::literals::{AttrCtx, inline_scalar_value, quote, write_attr};
use super::metadata::metadata_ref;
use super::out::Line;
use super::prim_expr::{Mode, write_prim};
use super::relax::{MAX_DEPTH, RelaxPrinter};
use super::span_map::SpanKey;
use super::types::{is_default_extern_ty, write_ty};
use crate::attrs::AttrValue;
use crate::entities::{Constant, Expr, Ty};
use crate::op::{ArgKind, OPS, OpClass, OpDef, OpRef, ParamRole};
use crate::relax::{Call, ExprData};
use crate::ty::TyData;

/// Where an expression is printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Pos {
    /// The right-hand side of a binding: tuples of two or more fields lose their parens.
    Rhs,
    /// After `return`.
    Return,
    /// A direct call argument: an extern function prints as its name string.
    Arg,
    /// An expression statement.
    Stmt,
    /// Anywhere else (tuple fields, callees, `if` conditions).
    Inner,
}

/// The table entry of an op, if its id is valid.
pub(super) fn op_def(op: &OpRef) -> Option<&'static OpDef> {
    match op {
        OpRef::Known(id) => OPS.get(usize::from(id.0)),
        OpRef::Custom(_) => None,
    }
}

/// The full name of an op (`relax.add`), never panicking.
pub(super) fn op_name(op: &OpRef) -> &str {
    match op {
        OpRef::Known(id) => OPS.get(usize::from(id.0)).map_or("<invalid op>", |d| d.name),
        OpRef::Custom(n) => n,
    }
}

/// The text of an op as a callee: `relax.nn.softmax` prints `R.nn.softmax`, other names as
/// they are.
fn op_text(op: &OpRef) -> String {
    let n = op_name(op);
    match n.strip_prefix("relax.") {
        Some(rest) => format!("R.{rest}"),
        None => n.to_string(),
    }
}

impl<'a> RelaxPrinter<'a, '_> {
    /// The items of a list; an invalid handle reads as empty (the verifier reports it).
    fn list(&self, l: crate::relax::ExprList) -> &'a [Expr] {
        self.f.lists.get(l).unwrap_or_default()
    }

    /// Appends expression `e`, recording its span.
    pub(super) fn expr(&mut self, line: &mut Line, e: Expr, pos: Pos) {
        if self.depth > MAX_DEPTH {
            line.push("...");
            return;
        }
        self.depth += 1;
        let start = line.pos();
        let f = self.f;
        match f.exprs.get(e) {
            None => line.push(&format!("<invalid {e:?}>")),
            Some(data) => match data {
                ExprData::Var(v) => {
                    let t = self.var_text(*v);
                    line.push(&t);
                }
                ExprData::Global(g) => {
                    let t = self.global_text(*g);
                    line.push(&t);
                }
                ExprData::Op(op) => line.push(&op_text(op)),
                ExprData::ExternFunc(s) => {
                    if pos == Pos::Arg {
                        line.push(&quote(s));
                    } else {
                        line.push("R.ExternFunc(");
                        line.push(&quote(s));
                        if let Some(t) = f.ty_of(e).filter(|&t| !is_default_extern_ty(&f.pool, t)) {
                            line.push(", ");
                            let ts = self.ty_text(t);
                            line.push(&ts);
                        }
                        line.push(")");
                    }
                }
                ExprData::Call(c) => self.call(line, c),
                ExprData::Tuple(fields) => {
                    let fields = self.list(*fields);
                    if fields.is_empty() {
                        line.push("R.tuple()");
                    } else {
                        let parens = !(pos == Pos::Rhs && fields.len() >= 2);
                        if parens {
                            line.push("(");
                        }
                        for (i, &fe) in fields.iter().enumerate() {
                            if i > 0 {
                                line.push(", ");
                            }
                            self.expr(line, fe, Pos::Inner);
                        }
                        if fields.len() == 1 {
                            line.push(",");
                        }
                        if parens {
                            line.push(")");
                        }
                    }
                }
                ExprData::GetItem { tuple, index } => {
                    self.expr(line, *tuple, Pos::Inner);
                    line.push(&format!("[{index}]"));
                }
                ExprData::Shape(dims) => {
                    let mut s = String::from("R.shape([");
                    for (i, &d) in dims.iter().enumerate() {
                        if i > 0 {
                            s.push_str(", ");
                        }
                        write_prim(&mut s, &f.pool, d, Mode::Relax, self);
                    }
                    s.push_str("])");
                    line.push(&s);
                }
                ExprData::Prim(p) => {
                    let mut s = String::from("R.prim_value(");
                    super::prim_expr::write_relax_scalar(&mut s, &f.pool, *p, self);
                    s.push(')');
                    line.push(&s);
                }
                ExprData::Str(s) => {
                    line.push("R.str(");
                    line.push(&quote(s));
                    line.push(")");
                }
                ExprData::DType(d) => {
                    line.push("R.dtype(");
                    line.push(&quote(&d.to_string()));
                    line.push(")");
                }
                ExprData::Const(c) => {
                    let t = self.const_text(*c);
                    line.push(&t);
                }
                ExprData::If { .. } => line.push("<if expression>"),
                ExprData::Function(_) => line.push("<local function>"),
            },
        }
        line.mark(SpanKey::Expr(self.g, e), start);
        self.depth -= 1;
    }

    /// A type in body context.
    pub(super) fn ty_text(&mut self, t: Ty) -> String {
        let f = self.f;
        let mut s = String::new();
        write_ty(&mut s, &f.pool, t, Self::body_opts(), self);
        s
    }

    /// `R.const(v, "dtype")` for inline scalars, else a metadata reference.
    fn const_text(&mut self, c: Constant) -> String {
        let Some(cd) = self.ctx.m.constants.get(c) else { return format!("<invalid {c:?}>") };
        match inline_scalar_value(cd) {
            Some(v) => format!("R.const({v}, {})", quote(&cd.dtype.to_string())),
            None => metadata_ref(self.ctx.const_index(c)),
        }
    }

    fn call(&mut self, line: &mut Line, c: &Call) {
        let f = self.f;
        match f.exprs.get(c.callee) {
            Some(ExprData::Op(op)) => {
                let def = op_def(op);
                if def.is_some_and(|d| d.class == OpClass::DpsCall) {
                    self.dps_call(line, op, c);
                } else {
                    self.op_call(line, op, def, c);
                }
            }
            Some(ExprData::ExternFunc(s)) => {
                line.push("R.call_packed(");
                line.push(&quote(s));
                let mut first = false;
                self.args(line, self.list(c.args), &mut first);
                self.attrs_and_sinfo(line, c, &mut first);
                line.push(")");
            }
            _ => {
                self.expr(line, c.callee, Pos::Inner);
                line.push("(");
                let mut first = true;
                self.args(line, self.list(c.args), &mut first);
                self.attrs_and_sinfo(line, c, &mut first);
                line.push(")");
            }
        }
    }

    fn sep(line: &mut Line, first: &mut bool) {
        if !*first {
            line.push(", ");
        }
        *first = false;
    }

    fn args(&mut self, line: &mut Line, args: &[Expr], first: &mut bool) {
        for &a in args {
            Self::sep(line, first);
            self.expr(line, a, Pos::Arg);
        }
    }

    /// Keyword attributes in stored order, then `sinfo_args=(...)`.
    fn attrs_and_sinfo(&mut self, line: &mut Line, c: &Call, first: &mut bool) {
        for (k, v) in c.attrs.iter() {
            Self::sep(line, first);
            let mut s = format!("{k}=");
            write_attr(&mut s, v, AttrCtx::Relax);
            self.usage.scan(&s);
            line.push(&s);
        }
        if !c.sinfo_args.is_empty() {
            Self::sep(line, first);
            line.push("sinfo_args=(");
            for (i, &t) in c.sinfo_args.iter().enumerate() {
                if i > 0 {
                    line.push(", ");
                }
                let ts = self.ty_text(t);
                line.push(&ts);
            }
            if c.sinfo_args.len() == 1 {
                line.push(",");
            }
            line.push(")");
        }
    }

    /// An op call: positional Relax arguments, `format=` for a format-string argument,
    /// keyword attributes, `sinfo_args=`.
    fn op_call(&mut self, line: &mut Line, op: &OpRef, def: Option<&'static OpDef>, c: &Call) {
        if op.is(crate::op::ops::HINT_ON_DEVICE) && self.hint_on_device(line, c) {
            return;
        }
        line.push(&op_text(op));
        line.push("(");
        let mut positional: Vec<Expr> = Vec::new();
        let mut format: Option<Expr> = None;
        let mut i = 0;
        if let Some(def) = def {
            for p in def.params {
                let ParamRole::Arg { kind, .. } = p.role else { continue };
                match kind {
                    ArgKind::FormatStr => {
                        if let Some(&a) = self.list(c.args).get(i) {
                            format = Some(a);
                            i += 1;
                        }
                    }
                    ArgKind::Variadic => {
                        positional.extend(self.list(c.args).iter().skip(i).copied());
                        i = self.list(c.args).len();
                    }
                    _ => {
                        if let Some(&a) = self.list(c.args).get(i) {
                            positional.push(a);
                            i += 1;
                        }
                    }
                }
            }
        }
        positional.extend(self.list(c.args).iter().skip(i).copied());
        let mut first = true;
        self.args(line, &positional, &mut first);
        if let Some(fmt) = format {
            Self::sep(line, &mut first);
            line.push("format=");
            self.expr(line, fmt, Pos::Inner);
        }
        self.attrs_and_sinfo(line, c, &mut first);
        line.push(")");
    }

    /// `R.hint_on_device(x, R.device(device_type=2, index=0), "global")`, TVM's spelling of
    /// the op's three attributes; false (nothing printed) when they are not all there.
    fn hint_on_device(&mut self, line: &mut Line, c: &Call) -> bool {
        let (Some(AttrValue::Int(t)), Some(AttrValue::Int(i)), Some(AttrValue::Str(scope)), [data]) =
            (c.attrs.get("device_type"), c.attrs.get("index"), c.attrs.get("memory_scope"), self.list(c.args))
        else {
            return false;
        };
        if c.attrs.iter().count() != 3 || !c.sinfo_args.is_empty() {
            return false;
        }
        line.push("R.hint_on_device(");
        self.expr(line, *data, Pos::Arg);
        line.push(&format!(", R.device(device_type={t}, index={i}), {})", quote(scope)));
        true
    }

    /// `R.call_tir(cls.f, (x, w), out_sinfo=T[, inplace_indices=[1]][, tir_vars=s])`.
    fn dps_call(&mut self, line: &mut Line, op: &OpRef, c: &Call) {
        line.push(&op_text(op));
        line.push("(");
        let mut first = true;
        let head = self.list(c.args).len().min(2);
        self.args(line, &self.list(c.args)[..head], &mut first);
        if self.list(c.args).len() > 3 {
            self.args(line, &self.list(c.args)[3..], &mut first);
        }
        if !c.sinfo_args.is_empty() {
            Self::sep(line, &mut first);
            line.push("out_sinfo=");
            let f = self.f;
            let fields: Option<Vec<Ty>> = if c.sinfo_args.len() > 1 {
                Some(c.sinfo_args.clone())
            } else {
                match f.pool.tys.get(c.sinfo_args[0]) {
                    Some(TyData::Tuple(fs)) => Some(fs.clone()),
                    _ => None,
                }
            };
            match fields {
                Some(fs) => {
                    line.push("[");
                    for (i, &t) in fs.iter().enumerate() {
                        if i > 0 {
                            line.push(", ");
                        }
                        let ts = self.ty_text(t);
                        line.push(&ts);
                    }
                    line.push("]");
                }
                None => {
                    let ts = self.ty_text(c.sinfo_args[0]);
                    line.push(&ts);
                }
            }
        }
        for (k, v) in c.attrs.iter() {
            Self::sep(line, &mut first);
            let mut s = format!("{k}=");
            write_attr(&mut s, v, AttrCtx::Relax);
            self.usage.scan(&s);
            line.push(&s);
        }
        if let Some(&tv) = self.list(c.args).get(2) {
            Self::sep(line, &mut first);
            line.push("tir_vars=");
            self.expr(line, tv, Pos::Inner);
        }
        line.push(")");
    }
}
