//! Structural identity of functions: [`relax_function`] and [`prim_func`] write a
//! function as a name-free string, so two functions have the same fingerprint exactly
//! when they are equal up to renaming.
//!
//! TVM's `BlockBuilder::AddFunction` reuses a structurally equal function of the module
//! (`SEqHashIgnore`: names of variables, buffers and blocks do not matter, everything else
//! does); `legalize-ops` shares kernels and `fuse-ops` shares fused functions this way.
//! Every variable (Relax or symbolic) and buffer is written as the number of its first
//! occurrence; globals and constants are compared by identity. The shared part
//! ([`PoolWriter`]: TIR expressions, types, buffers) is written once for both kinds.

mod relax;
mod tir;

use std::collections::HashMap;
use std::fmt::Write;

use relax_entity::PrimaryMap;

use crate::entities::{Buffer, PrimExpr, SymVar, Ty, Var};
use crate::pool::Pool;
use crate::prim::PrimExprData;
use crate::tir::BufferData;
use crate::ty::{TensorShape, TyData};

pub use relax::relax_function;
pub use tir::prim_func;

/// Writes the pool-level entities of one function (symbolic variables, TIR expressions,
/// types, buffers), numbering variables and buffers by first occurrence.
struct PoolWriter<'a> {
    pool: &'a Pool,
    /// The function's buffers (PrimFuncs only).
    buffers: Option<&'a PrimaryMap<Buffer, BufferData>>,
    syms: HashMap<SymVar, usize>,
    bufs: HashMap<Buffer, usize>,
    /// Relax variables (Relax functions only; tensor types may name one).
    vars: HashMap<Var, usize>,
    /// Which Relax variables are dataflow variables.
    dataflow: &'a dyn Fn(Var) -> bool,
    out: String,
}

impl<'a> PoolWriter<'a> {
    fn new(
        pool: &'a Pool,
        buffers: Option<&'a PrimaryMap<Buffer, BufferData>>,
        dataflow: &'a dyn Fn(Var) -> bool,
    ) -> PoolWriter<'a> {
        PoolWriter {
            pool,
            buffers,
            syms: HashMap::new(),
            bufs: HashMap::new(),
            vars: HashMap::new(),
            dataflow,
            out: String::new(),
        }
    }

    fn push(&mut self, s: &str) {
        self.out.push_str(s);
    }

    /// A Relax variable.
    fn var(&mut self, v: Var) {
        let n = self.vars.len();
        let id = *self.vars.entry(v).or_insert(n);
        let _ = write!(self.out, "v{id}{}", if (self.dataflow)(v) { "d" } else { "" });
    }

    /// A symbolic (TIR) variable.
    fn sym(&mut self, v: SymVar) {
        let n = self.syms.len();
        let id = *self.syms.entry(v).or_insert(n);
        let d = &self.pool.vars[v];
        let _ = write!(self.out, "s{id}:{}:{:?}", d.dtype, d.pointer);
    }

    fn buffer(&mut self, b: Buffer) {
        if let Some(&id) = self.bufs.get(&b) {
            let _ = write!(self.out, "b{id}");
            return;
        }
        let id = self.bufs.len();
        self.bufs.insert(b, id);
        let Some(d) = self.buffers.map(|bs| &bs[b]) else {
            let _ = write!(self.out, "b{id}{{?}}");
            return;
        };
        let _ = write!(self.out, "b{id}{{{}:", d.dtype);
        self.sym(d.data);
        self.push("[");
        for &s in &d.shape {
            self.prim(s);
            self.push(",");
        }
        self.push("][");
        for &s in &d.strides {
            self.prim(s);
            self.push(",");
        }
        self.push("]");
        if let Some(o) = d.elem_offset {
            self.prim(o);
        }
        let _ = write!(
            self.out,
            ";{};{:?};{:?};{:?};{:?}}}",
            d.scope, d.align, d.offset_factor, d.buffer_type, d.axis_separators
        );
    }

    fn prim(&mut self, e: PrimExpr) {
        match self.pool.prim(e) {
            PrimExprData::Var(v) => self.sym(*v),
            PrimExprData::Load { dtype, buffer, indices } => {
                let _ = write!(self.out, "L{dtype}(");
                self.buffer(*buffer);
                for &i in indices {
                    self.push(",");
                    self.prim(i);
                }
                self.push(")");
            }
            PrimExprData::Let { var, value, body } => {
                self.push("Let(");
                self.sym(*var);
                self.prim(*value);
                self.prim(*body);
                self.push(")");
            }
            d => {
                // Leaves and operators: the payload's own text, with operands in order.
                let tag = match d {
                    PrimExprData::Int(t, v) => format!("I{t}:{v}"),
                    PrimExprData::Float(t, v) => format!("F{t}:{:x}", v.0),
                    PrimExprData::Str(s) => format!("S{s:?}"),
                    PrimExprData::Bin(op, ..) => format!("B{op:?}"),
                    PrimExprData::Not(_) => "Not".into(),
                    PrimExprData::Cast(t, _) => format!("C{t}"),
                    PrimExprData::Select(..) => "Sel".into(),
                    PrimExprData::Call { dtype, op, .. } => format!("Call{dtype}:{op}"),
                    PrimExprData::Ramp { lanes, .. } => format!("Ramp{lanes}"),
                    PrimExprData::Broadcast { lanes, .. } => format!("Bc{lanes}"),
                    PrimExprData::Var(_) | PrimExprData::Load { .. } | PrimExprData::Let { .. } => String::new(),
                };
                self.push(&tag);
                self.push("(");
                for k in d.operands() {
                    self.prim(k);
                    self.push(",");
                }
                self.push(")");
            }
        }
    }

    fn ty(&mut self, t: Ty) {
        match self.pool.ty(t) {
            TyData::Object => self.push("O"),
            TyData::Prim { dtype, value } => {
                let _ = write!(self.out, "P{dtype}(");
                if let Some(v) = value {
                    self.prim(*v);
                }
                self.push(")");
            }
            TyData::Shape { values, ndim } => {
                let _ = write!(self.out, "Sh{ndim}(");
                for &v in values.iter().flatten() {
                    self.prim(v);
                    self.push(",");
                }
                self.push(")");
            }
            TyData::Tensor { shape, dtype, ndim, vdevice } => {
                let _ = write!(self.out, "T{dtype}:{ndim}:{vdevice:?}(");
                match shape {
                    TensorShape::Dims(d) => {
                        for &v in d {
                            self.prim(v);
                            self.push(",");
                        }
                    }
                    TensorShape::Var(v) => {
                        self.push("@");
                        self.var(*v);
                    }
                    TensorShape::Unknown => self.push("?"),
                }
                self.push(")");
            }
            TyData::Tuple(fields) => {
                self.push("Tu(");
                for &x in fields {
                    self.ty(x);
                    self.push(",");
                }
                self.push(")");
            }
            TyData::Callable { params, ret, pure } => {
                let _ = write!(self.out, "Fn{pure}(");
                for &p in params.iter().flatten() {
                    self.ty(p);
                    self.push(",");
                }
                self.push("->");
                self.ty(*ret);
                self.push(")");
            }
        }
    }
}
