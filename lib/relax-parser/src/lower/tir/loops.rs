//! `for` loops (`text-format.md` §8.5, §12.5): `range`, `T.serial`, `T.parallel`,
//! `T.vectorized`, `T.unroll`, `T.thread_binding` and `T.grid`.
//!
//! As TVM's IR builder: the extent is `stop - start` built by the folding constructors
//! (`a + e - a` is recognised as `e`, so `range(n, n + 4)` has extent 4);
//! the loop variable is an integer as wide as the wider of start and extent
//! (`T.grid(T.int64(4), 1)` gives an `int64` and an `int32` variable); integer constants
//! narrower than the variable are widened, and any other bound of another type is an
//! error. `T.grid(a, b, ...)` is a nest of serial loops starting at zero. The keywords
//! `unroll=True`/`unroll=False` are the annotations `pragma_unroll`/`disable_unroll`.

use relax_ir::attrs::{AttrValue, Attrs};
use relax_ir::{DataType, ForKind, PrimExpr, PrimExprData, StmtData, TypeCode};

use super::super::{LResult, sp};
use super::scope::{LoopInfo, SeqCtx, TirCx};
use super::stmts::Item;
use crate::ast::{self, ExprKind};

/// One loop of a `for` statement, before its variable exists.
struct LoopSpec<'e> {
    name: &'e str,
    span: ast::Span,
    min: PrimExpr,
    extent: PrimExpr,
    dtype: DataType,
    kind: ForKind,
    thread: Option<String>,
    step: Option<PrimExpr>,
    annotations: Attrs,
}

impl TirCx<'_, '_> {
    /// Lowers a `for` statement.
    pub(super) fn lower_for(
        &mut self,
        s: &ast::Stmt,
        targets: &[ast::Expr],
        iter: &ast::Expr,
        body: &[ast::Stmt],
    ) -> LResult<Item> {
        let flat: Vec<&ast::Expr> = match targets {
            [one] => match &one.kind {
                ExprKind::Tuple { elts, .. } => elts.iter().collect(),
                _ => vec![one],
            },
            many => many.iter().collect(),
        };
        let mut names = Vec::with_capacity(flat.len());
        for t in flat {
            match t.as_name() {
                Some(n) => names.push((n, t.span)),
                None => return Err(self.err(t.span, "a loop variable must be a name")),
            }
        }
        let Some((call, kind_name)) = iter.as_dotted_call() else {
            return Err(
                self.err(iter.span, "expected `range(...)`, `T.grid(...)` or a loop kind such as `T.serial(...)`")
            );
        };
        let kind = match kind_name.as_str() {
            "range" | "T.serial" => ForKind::Serial,
            "T.parallel" => ForKind::Parallel,
            "T.vectorized" => ForKind::Vectorized,
            "T.unroll" => ForKind::Unrolled,
            "T.thread_binding" => ForKind::ThreadBinding,
            "T.grid" => {
                let specs = self.grid(&names, call, iter)?;
                return Ok(Item::Stmt(self.emit_loops(s, specs, body)));
            }
            other => return Err(self.err(call.func.span, format!("unknown loop kind `{other}`"))),
        };
        if names.len() != 1 {
            return Err(
                self.err(s.span, format!("`{kind_name}` defines one loop variable but the loop names {}", names.len()))
            );
        }
        let spec = self.loop_spec(names[0], kind, &kind_name, call, iter)?;
        Ok(Item::Stmt(self.emit_loops(s, vec![spec], body)))
    }

    /// `T.grid(e1, e2, ...)`.
    fn grid<'e>(
        &mut self,
        names: &[(&'e str, ast::Span)],
        call: &ast::Call,
        iter: &ast::Expr,
    ) -> LResult<Vec<LoopSpec<'e>>> {
        if let Some(k) = call.keywords.first() {
            return Err(self.err(k.span, "`T.grid` takes no keyword arguments"));
        }
        if call.args.len() != names.len() {
            return Err(self.err(
                iter.span,
                format!("`T.grid` has {} extents but the loop names {} variables", call.args.len(), names.len()),
            ));
        }
        let mut specs = Vec::with_capacity(names.len());
        for (&(name, span), e) in names.iter().zip(&call.args) {
            let extent = self.int_expr(e, "a loop extent")?;
            let dtype = self.pool.dtype(extent);
            let min = self.pool.int(dtype, 0);
            specs.push(LoopSpec {
                name,
                span,
                min,
                extent,
                dtype,
                kind: ForKind::Serial,
                thread: None,
                step: None,
                annotations: Attrs::new(),
            });
        }
        Ok(specs)
    }

    /// One loop: `range(stop)`, `range(start, stop[, step])`, `T.serial(...)`, ...,
    /// `T.thread_binding(start[, stop], thread=...)`.
    fn loop_spec<'e>(
        &mut self,
        (name, span): (&'e str, ast::Span),
        kind: ForKind,
        kind_name: &str,
        call: &ast::Call,
        iter: &ast::Expr,
    ) -> LResult<LoopSpec<'e>> {
        let mut positional: Vec<&ast::Expr> = call.args.iter().collect();
        let mut thread = None;
        let mut step_e = None;
        let mut annotations = Attrs::new();
        let mut unroll = None;
        if kind == ForKind::ThreadBinding
            && let Some(last) = positional.last()
            && last.as_str().is_some()
        {
            thread = last.as_str().map(str::to_string);
            positional.pop();
        }
        let max_positional = if kind_name == "range" { 3 } else { 2 };
        if positional.is_empty() || positional.len() > max_positional {
            return Err(self.err(iter.span, format!("`{kind_name}` takes 1 to {max_positional} positional arguments")));
        }
        if positional.len() == 3 {
            step_e = positional.pop();
        }
        for k in &call.keywords {
            match k.name.name.as_str() {
                "annotations" if kind_name != "range" => {
                    let a = super::super::attrs::lower_attr_dict(self.cx.diags, &k.value)
                        .inspect_err(|_| self.failed = true)?;
                    annotations.0.extend(a.0);
                }
                "thread" if kind == ForKind::ThreadBinding => {
                    thread = Some(self.str_arg(&k.value, "`thread`")?.to_string());
                }
                "step" if step_e.is_none() => step_e = Some(&k.value),
                "unroll" => match k.value.kind {
                    ExprKind::Bool(b) => unroll = Some(b),
                    _ => return Err(self.err(k.value.span, "`unroll` must be `True` or `False`")),
                },
                other => {
                    return Err(self.err(k.name.span, format!("unknown argument `{other}` of `{kind_name}`")));
                }
            }
        }
        if kind == ForKind::ThreadBinding && thread.is_none() {
            return Err(self.err(iter.span, "`T.thread_binding` needs a thread tag (`thread=\"threadIdx.x\"`)"));
        }
        match unroll {
            Some(true) => annotations.set("pragma_unroll", AttrValue::Bool(true)),
            Some(false) => annotations.set("disable_unroll", AttrValue::Bool(true)),
            None => {}
        }
        let (start, stop) = match positional.as_slice() {
            [stop] => {
                let stop_v = self.int_expr(stop, "a loop bound")?;
                let t = self.pool.dtype(stop_v);
                (self.pool.int(t, 0), stop_v)
            }
            [start, stop] => (self.int_expr(start, "a loop bound")?, self.int_expr(stop, "a loop bound")?),
            _ => unreachable!("checked above"),
        };
        let extent = self.sub_simplified(stop, start, iter.span)?;
        let (t_min, t_ext) = (self.pool.dtype(start), self.pool.dtype(extent));
        let code = if t_min.code == TypeCode::UInt { TypeCode::UInt } else { TypeCode::Int };
        let dtype = DataType::new(code, t_min.bits.max(t_ext.bits));
        let min = self.promote(start, dtype, iter.span)?;
        let extent = self.promote(extent, dtype, iter.span)?;
        let step = match step_e {
            Some(e) => {
                let v = self.int_expr(e, "a loop step")?;
                if self.pool.as_int(v) == Some(1) { None } else { Some(self.promote(v, dtype, e.span)?) }
            }
            None => None,
        };
        Ok(LoopSpec { name, span, min, extent, dtype, kind, thread, step, annotations })
    }

    /// Widens an integer constant to the loop variable's type; any other type mismatch is
    /// an error (TVM's `For` constructor).
    fn promote(&mut self, e: PrimExpr, dtype: DataType, span: ast::Span) -> LResult<PrimExpr> {
        let t = self.pool.dtype(e);
        if t == dtype {
            return Ok(e);
        }
        if let PrimExprData::Int(_, v) = *self.pool.prim(e)
            && t.bits <= dtype.bits
        {
            return Ok(self.pool.int(dtype, v));
        }
        Err(self.err(span, format!("loop bounds must have the loop variable's type `{dtype}`, found `{t}`")))
    }

    /// Defines the loop variables, lowers the body and builds the nest, outermost first.
    fn emit_loops(&mut self, s: &ast::Stmt, specs: Vec<LoopSpec<'_>>, body: &[ast::Stmt]) -> relax_ir::Stmt {
        self.push_frame();
        let mut vars = Vec::with_capacity(specs.len());
        for spec in &specs {
            let var = self.define_var(spec.name, spec.dtype, spec.span);
            self.loops.push(LoopInfo { var, min: spec.min, extent: spec.extent });
            vars.push(var);
        }
        let list = self.lower_seq(body, SeqCtx::Other);
        let mut stmt = self.seq(list, s.span);
        for _ in &specs {
            self.loops.pop();
        }
        self.pop_frame();
        for (spec, var) in specs.into_iter().zip(vars).rev() {
            let data = StmtData::For {
                var,
                min: spec.min,
                extent: spec.extent,
                kind: spec.kind,
                thread: spec.thread,
                step: spec.step,
                annotations: spec.annotations,
                body: stmt,
            };
            stmt = self.add_stmt(data, sp(s.span));
        }
        stmt
    }
}
