//! The TIR interpreter: runs a PrimFunc by walking its statements.
//!
//! * Parameters: a handle parameter with a buffer takes a tensor, whose dtype, rank,
//!   dims (binding symbolic variables on first sight, checking every other occurrence),
//!   strides and element offset are matched against the buffer; a scalar parameter takes
//!   a prim value. The buffer is a view of the tensor's storage, so the kernel writes
//!   its outputs in place.
//! * Statements ([`stmt`]): lowered TIR only (`relax_ir::tir_lower`: the callers lower
//!   blocks first; a block is an internal error). Loops of every kind run serially in
//!   order (thread bindings included, which gives a block-synchronous GPU kernel its
//!   sequential meaning); allocations are zero-filled; a buffer declaration is a view of
//!   its data pointer's storage at its element offset.
//! * Expressions ([`expr`]): exact dtype semantics from [`crate::scalar`], intrinsics
//!   from [`crate::math`]; `if_then_else` and `Select` evaluate only the chosen side.
//! * Every buffer access is bounds-checked per dimension.
//!
//! Deep expression and statement trees do not overflow the stack: the recursive walks
//! grow it on demand ([`stacker`]).

mod expr;
pub use expr::{intrinsic, literal};
mod stmt;

use std::collections::HashMap;

use relax_entity::EntityRef;
use relax_ir::{Buffer, Global, Module, PrimExpr, PrimExprData, PrimFunc, Span, SymVar};

use crate::error::{RunError, RunResult};
use crate::scalar::Scalar;
use crate::value::{Bytes, Tensor, Value, row_major_strides, shape_text};

/// Grows the stack before a recursive step when little is left.
pub fn grow<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(64 * 1024, 2 * 1024 * 1024, f)
}

/// A buffer bound to memory.
#[derive(Clone)]
pub(crate) struct BufView {
    pub data: Bytes,
    /// Byte offset of element 0.
    pub base: usize,
    pub shape: Vec<i64>,
    /// Strides in elements.
    pub strides: Vec<i64>,
    pub dtype: relax_ir::DataType,
}

/// The state of one PrimFunc call: what [`bind_call`] hands to the compiled engines.
pub struct Frame<'a> {
    /// The PrimFunc.
    pub f: &'a PrimFunc,
    /// Its global name.
    pub name: &'a str,
    /// The value of each variable, by index (`None` while unbound).
    pub vars: Vec<Option<Scalar>>,
    pub(crate) bufs: Vec<Option<BufView>>,
    /// Storage behind handle variables (buffer data pointers).
    pub(crate) data_vars: HashMap<SymVar, (Bytes, usize)>,
    /// The value of `T.ret`, once executed.
    pub(crate) ret: Option<Scalar>,
}

/// What a deferred shape check compares: an expression and the value it must have.
struct Deferred {
    expr: PrimExpr,
    actual: i64,
    what: Field,
}

/// The buffer field a shape check is about (its text is made only for an error).
#[derive(Clone, Copy)]
enum Field {
    Dim(usize, Buffer),
    Stride(usize, Buffer),
    Offset(Buffer),
}

impl Field {
    fn describe(self, f: &PrimFunc) -> String {
        match self {
            Field::Dim(i, b) => format!("dim {i} of buffer `{}`", f.buffer(b).name),
            Field::Stride(i, b) => format!("stride {i} of buffer `{}`", f.buffer(b).name),
            Field::Offset(b) => format!("element offset of buffer `{}`", f.buffer(b).name),
        }
    }
}

impl<'a> Frame<'a> {
    fn new(m: &'a Module, g: Global, views: bool) -> RunResult<Frame<'a>> {
        let f = m.prim_func(g).ok_or_else(|| RunError::new(format!("`{}` is not a PrimFunc", m.globals[g].name)))?;
        Ok(Frame {
            f,
            name: &m.globals[g].name,
            vars: vec![None; f.pool.vars.len()],
            bufs: if views { vec![None; f.buffers.len()] } else { Vec::new() },
            data_vars: HashMap::new(),
            ret: None,
        })
    }

    /// The name of a variable.
    pub fn var_name(&self, v: SymVar) -> &str {
        &self.f.pool.vars[v].name
    }

    pub(crate) fn set_var(&mut self, v: SymVar, s: Scalar) {
        let dt = self.f.pool.vars[v].dtype;
        let s = if dt.is_handle() || dt.is_void() { s } else { s.cast(dt) };
        self.vars[v.index()] = Some(s);
    }

    pub(crate) fn span_of(&self, s: relax_ir::Stmt) -> Span {
        *self.f.spans.stmts.get(s)
    }

    /// Binds `e` to `actual` if it is an unbound variable, else defers a check.
    fn bind_or_defer(&mut self, e: PrimExpr, actual: i64, what: Field, deferred: &mut Vec<Deferred>) {
        if let PrimExprData::Var(v) = self.f.pool.prim(e)
            && self.vars[v.index()].is_none()
        {
            let dt = self.f.pool.vars[*v].dtype;
            self.set_var(*v, Scalar::int(dt, actual));
            return;
        }
        deferred.push(Deferred { expr: e, actual, what });
    }

    /// Binds a parameter buffer to a tensor (and makes the buffer a view of it when
    /// `views`: the interpreter reads through it, the compiled engines do not).
    fn bind_param_buffer(&mut self, b: Buffer, t: &Tensor, deferred: &mut Vec<Deferred>, views: bool) -> RunResult<()> {
        let f = self.f;
        let bd = f.buffer(b);
        let fname = self.name;
        if bd.dtype != t.dtype {
            return Err(RunError::new(format!(
                "PrimFunc `{fname}`: buffer `{}` has dtype {}, but the argument is {}",
                bd.name,
                bd.dtype,
                Value::Tensor(t.clone()).describe()
            )));
        }
        if bd.shape.len() != t.shape.len() {
            return Err(RunError::new(format!(
                "PrimFunc `{fname}`: buffer `{}` has {} dims, but the argument has shape {}",
                bd.name,
                bd.shape.len(),
                shape_text(&t.shape)
            )));
        }
        for (i, (&d, &a)) in bd.shape.iter().zip(&t.shape).enumerate() {
            self.bind_or_defer(d, a, Field::Dim(i, b), deferred);
        }
        if !bd.strides.is_empty() {
            for (i, &s) in bd.strides.iter().enumerate().take(t.shape.len()) {
                let a: i64 = t.shape[i + 1..].iter().map(|&d| d.max(0)).product();
                if t.shape[i] == 1 {
                    // A unit dim's stride does not matter.
                    if let PrimExprData::Var(v) = self.f.pool.prim(s)
                        && self.vars[v.index()].is_none()
                    {
                        let dt = self.f.pool.vars[*v].dtype;
                        self.set_var(*v, Scalar::int(dt, a));
                    }
                    continue;
                }
                self.bind_or_defer(s, a, Field::Stride(i, b), deferred);
            }
        }
        let elem = bd.dtype.bytes() as usize;
        if let Some(off) = bd.elem_offset {
            self.bind_or_defer(off, (t.offset / elem) as i64, Field::Offset(b), deferred);
        }
        if views {
            self.data_vars.insert(bd.data, (t.data.clone(), t.offset));
            let strides = row_major_strides(&t.shape);
            self.bufs[b.index()] = Some(BufView {
                data: t.data.clone(),
                base: t.offset,
                shape: t.shape.clone(),
                strides,
                dtype: bd.dtype,
            });
        }
        Ok(())
    }

    /// Flat element index of an access, bounds-checked per dim.
    pub(crate) fn address(&self, b: Buffer, idx: &[i64]) -> RunResult<(BufView, usize)> {
        let view = self.bufs[b.index()].as_ref().ok_or_else(|| {
            RunError::new(format!(
                "PrimFunc `{}`: buffer `{}` is used outside its scope",
                self.name,
                self.f.buffer(b).name
            ))
        })?;
        if idx.len() != view.shape.len() {
            return Err(RunError::new(format!(
                "PrimFunc `{}`: buffer `{}` of {} dims accessed with {} indices",
                self.name,
                self.f.buffer(b).name,
                view.shape.len(),
                idx.len()
            )));
        }
        let mut flat: i64 = 0;
        for (k, (&i, &d)) in idx.iter().zip(&view.shape).enumerate() {
            if i < 0 || i >= d {
                return Err(RunError::new(format!(
                    "PrimFunc `{}`: index {i} out of bounds for dim {k} (extent {d}) of buffer `{}` (indices [{}])",
                    self.name,
                    self.f.buffer(b).name,
                    idx.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")
                )));
            }
            flat += i * view.strides[k];
        }
        let w = view.dtype.bytes() as usize;
        let at = view.base as i64 + flat * w as i64;
        let len = view.data.borrow().len();
        if at < 0 || at as usize + w > len {
            return Err(RunError::new(format!(
                "PrimFunc `{}`: access to buffer `{}` falls outside its storage",
                self.name,
                self.f.buffer(b).name
            )));
        }
        Ok((view.clone(), at as usize))
    }
}

/// Calls a PrimFunc with run-time values: tensors for buffer parameters, prim values for
/// scalar parameters. Tensors are written in place. Returns the value of `T.ret`, if the
/// function returns one.
pub fn call_prim_func(m: &Module, g: Global, args: &[Value]) -> RunResult<Option<Scalar>> {
    let mut fr = bind_call(m, g, args)?;
    let body = fr.f.body;
    fr.exec(body)?;
    Ok(fr.ret)
}

/// Binds the arguments of a PrimFunc call: checks them against the parameters and
/// buffers (dtype, rank, dims, strides) and binds the symbolic variables, as a call of
/// [`call_prim_func`] does before running the body. The JIT uses it too, so both
/// engines check and report alike.
pub fn bind_call<'a>(m: &'a Module, g: Global, args: &[Value]) -> RunResult<Frame<'a>> {
    bind(m, g, args, true)
}

/// [`bind_call`] for the compiled engines: the same checks and messages and the same
/// symbolic variables, but the frame has no buffer views (it cannot run the body).
pub fn bind_args<'a>(m: &'a Module, g: Global, args: &[Value]) -> RunResult<Frame<'a>> {
    bind(m, g, args, false)
}

fn bind<'a>(m: &'a Module, g: Global, args: &[Value], views: bool) -> RunResult<Frame<'a>> {
    let mut fr = Frame::new(m, g, views)?;
    let f = fr.f;
    if args.len() != f.params.len() {
        return Err(RunError::new(format!(
            "PrimFunc `{}` takes {} arguments, got {}",
            fr.name,
            f.params.len(),
            args.len()
        )));
    }
    let mut deferred = Vec::new();
    for (i, (&p, a)) in f.params.iter().zip(args).enumerate() {
        match (f.param_buffer(p), a) {
            (Some(b), Value::Tensor(t)) => fr.bind_param_buffer(b, t, &mut deferred, views)?,
            (None, Value::Tensor(t)) => {
                if views {
                    fr.data_vars.insert(p, (t.data.clone(), t.offset));
                }
            }
            (None, Value::Prim(s)) => fr.set_var(p, *s),
            (None, Value::Shape(s)) if s.len() == 1 => fr.set_var(p, Scalar::int(relax_ir::DataType::INT64, s[0])),
            (_, other) => {
                return Err(RunError::new(format!(
                    "PrimFunc `{}`: argument {i} (`{}`) must be {}, got {}",
                    fr.name,
                    fr.var_name(p),
                    if f.param_buffer(p).is_some() { "a tensor" } else { "a scalar" },
                    other.describe()
                )));
            }
        }
    }
    for d in deferred {
        let v = fr.eval(d.expr)?.as_i64();
        if v != d.actual {
            return Err(RunError::new(format!(
                "PrimFunc `{}`: {} is {}, but the argument has {}",
                fr.name,
                d.what.describe(f),
                v,
                d.actual
            )));
        }
    }
    Ok(fr)
}
