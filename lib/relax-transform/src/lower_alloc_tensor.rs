//! `lower-alloc-tensor`: every allocation memory planning left alone gets a storage of
//! its own, as TVM's `LowerAllocTensor` (`algorithms.md` §6).
//!
//! `x = R.builtin.alloc_tensor(shape, dtype, dev, scope)` becomes
//!
//! ```text
//! storage = R.memory.alloc_storage(R.shape([nbytes]), dev, scope, R.dtype("uint8"))
//! x = R.memory.alloc_tensor(storage, R.prim_value(0), shape, dtype, dev)
//! ```
//!
//! where `nbytes = elem_bytes * d0 * d1 * ...`, built with the folding constructors and
//! not simplified (`(2, n)` float32 gives `8 * n`, `(n, 4)` gives `4 * n * 4`). The shape
//! may also be a variable of known `R.Shape([...])` type. The names come from a fresh
//! supply (`storage`, `storage1`, ...), so the printer shows `storage_1` where planning
//! already made a `storage`, as TVM prints.

use relax_ir::diag::Diagnostic;
use relax_ir::ops;
use relax_ir::{Binding, DataType, ExprData, PrimExpr, RelaxFunction, TyData};

use crate::emit::{self, NameSupply};
use relax_ir::Seq;

relax_pass::declare_pass! {
    /// Registry entry.
    pub INFO: RelaxFunction "lower-alloc-tensor" {
        summary: "give every remaining builtin.alloc_tensor a storage of its own",
        run: |f, _| lower_alloc_tensor(f),
    }
}

/// Runs the pass on one function.
pub fn lower_alloc_tensor(f: &mut RelaxFunction) -> Result<bool, Vec<Diagnostic>> {
    let mut cx = Cx { names: NameSupply::new(), changed: false, errors: Vec::new() };
    let body = f.func.body;
    cx.seq(f, body);
    if cx.errors.is_empty() { Ok(cx.changed) } else { Err(cx.errors) }
}

struct Cx {
    names: NameSupply,
    changed: bool,
    errors: Vec<Diagnostic>,
}

impl Cx {
    /// Lowers the sequence at `loc`, nested sequences when their binding is reached
    /// (TVM's visiting order, which decides the names).
    fn seq(&mut self, f: &mut RelaxFunction, loc: Seq) {
        for b in f.seq(loc).blocks.clone() {
            let dataflow = f.blocks[b].dataflow;
            let bindings = std::mem::take(&mut f.blocks[b].bindings);
            let mut out = Vec::with_capacity(bindings.len());
            for bd in bindings {
                let nested: Vec<Seq> = f.exprs[bd.value].nested_seqs().collect();
                for s in nested {
                    self.seq(f, s);
                }
                if f.called_op(bd.value) != Some(ops::BUILTIN_ALLOC_TENSOR) {
                    out.push(bd);
                    continue;
                }
                match lower(f, &bd, dataflow, &mut self.names, &mut out) {
                    Ok(value) => {
                        out.push(Binding { value, ..bd });
                        self.changed = true;
                    }
                    Err(d) => {
                        self.errors.push(d);
                        out.push(bd);
                    }
                }
            }
            f.blocks[b].bindings = out;
        }
    }
}

fn lower(
    f: &mut RelaxFunction,
    bd: &Binding,
    dataflow: bool,
    names: &mut NameSupply,
    out: &mut Vec<Binding>,
) -> Result<relax_ir::Expr, Diagnostic> {
    let ExprData::Call(call) = f.exprs[bd.value].clone() else { return Ok(bd.value) };
    let span = *f.spans.exprs.get(bd.value);
    if call.args.len() != 4 {
        return Err(Diagnostic::error(
            span,
            format!(
                "`R.builtin.alloc_tensor` takes 4 arguments (shape, dtype, device, scope), not {}",
                call.args.len()
            ),
        ));
    }
    let (shape_arg, dtype_arg, dev, scope) =
        (f.list(call.args)[0], f.list(call.args)[1], f.list(call.args)[2], f.list(call.args)[3]);
    let dims: Vec<PrimExpr> = match &f.exprs[shape_arg] {
        ExprData::Shape(d) => d.clone(),
        _ => match f.ty_of(shape_arg).map(|t| f.pool.ty(t).clone()) {
            Some(TyData::Shape { values: Some(v), .. }) => v,
            _ => {
                return Err(Diagnostic::error(
                    span,
                    "the shape of `R.builtin.alloc_tensor` must be `R.shape([...])` or a variable of known shape",
                ));
            }
        },
    };
    let dtype = match &f.exprs[dtype_arg] {
        ExprData::DType(t) => *t,
        _ => return Err(Diagnostic::error(span, "the dtype of `R.builtin.alloc_tensor` must be `R.dtype(...)`")),
    };
    let nbytes = crate::plan_memory::bounds::exact_bytes(&mut f.pool, &dims, dtype);
    let size = emit::shape(f, vec![nbytes]);
    let dev_s = copy(f, dev);
    let scope_s = copy(f, scope);
    let u8 = emit::dtype(f, DataType::UINT8);
    let object = emit::object(f);
    let storage_call = emit::call_op(f, ops::MEMORY_ALLOC_STORAGE, vec![size, dev_s, scope_s, u8], Vec::new(), object);
    let name = names.fresh("storage");
    let sb = emit::bind(f, &name, storage_call, dataflow);
    let storage = sb.var;
    out.push(sb);
    let s = f.use_var(storage);
    let offset = emit::prim_i64(f, 0);
    let ty = f.ty_of(bd.value).unwrap_or(f.vars[bd.var].ty);
    Ok(emit::call_op(f, ops::MEMORY_ALLOC_TENSOR, vec![s, offset, shape_arg, dtype_arg, dev], Vec::new(), ty))
}

fn copy(f: &mut RelaxFunction, e: relax_ir::Expr) -> relax_ir::Expr {
    let data = f.exprs[e].clone();
    let ty = f.ty_of(e);
    f.add_expr(data, ty)
}
