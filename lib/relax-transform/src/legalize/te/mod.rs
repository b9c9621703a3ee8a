//! A small tensor-expression builder: the equivalent of TVM's `te.placeholder`,
//! `te.compute`, `te.reduce_axis` and `te.create_prim_func`, producing PrimFuncs in the
//! exact form TVM's legalization prints.
//!
//! ```text
//! let mut te = Te::new();
//! let x = te.placeholder("x", vec![n, four], DataType::FLOAT32);
//! let y = te.compute("compute", x_shape, Axes::I, |te, i| {
//!     let v = te.load(x, i);
//!     te.call(Intrinsic::Exp, v)
//! });
//! let built = te.build(&[y]);          // the PrimFunc, parameters in TVM's order
//! ```
//!
//! Every tensor is backed by one buffer, named after the placeholder or the compute's
//! name (TOPI's tags: `T_add`, `compute`, `T_reshape`). A compute's body is written over
//! its *block* variables (`v_ax0`, `v_i1`, `v_k`): `te.create_prim_func` substitutes the
//! axis variables by block variables without folding, so building over block variables
//! directly gives the same nodes. Expressions are built with TVM's folding constructors
//! ([`Te::bin`] is `Pool::binary`), as TOPI's Python and C++ operators are.
//!
//! [`Te::build`] then does what `create_prim_func(inputs + outputs + scalars, "int64")`
//! does (see [`emit`]): stages in post-DFS order from the outputs, one loop nest and
//! block per stage, bodies simplified by TVM's analyzer (the simplifier's TVM mode,
//! [`relax_ir::arith::tvm`]), reads and writes detected from the body, intermediates
//! allocated in the root block.

pub mod dtype;
pub mod emit;

use std::collections::HashMap;
use std::rc::Rc;

use relax_entity::PrimaryMap;
use relax_ir::Intrinsic;
use relax_ir::prim::{BinOp, PrimExprData};
use relax_ir::{Attrs, Buffer, BufferData, DataType, Pool, PrimExpr, SymVar, SymVarData};

pub use emit::Built;

/// A tensor of a compute definition (a placeholder or a compute's output).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Tensor(pub(crate) u32);

/// How the spatial axes of a compute are named, which is how TOPI names them.
#[derive(Clone, Copy, Debug)]
pub enum Axes<'a> {
    /// `ax0, ax1, ...`: C++ `te::compute`.
    Ax,
    /// `i0, i1, ...`: Python `te.compute(shape, lambda *i: ...)`.
    I,
    /// Explicit names (Python lambdas with named parameters).
    Named(&'a [&'a str]),
}

impl Axes<'_> {
    fn name(&self, i: usize) -> String {
        match self {
            Axes::Ax => format!("ax{i}"),
            Axes::I => format!("i{i}"),
            Axes::Named(n) => n.get(i).map_or_else(|| format!("i{i}"), |s| s.to_string()),
        }
    }
}

/// An iteration axis of a compute: the loop variable's name, the block variable
/// `v_<name>` that bodies use, and the range.
#[derive(Clone, Debug)]
pub struct Axis {
    /// The loop variable's name.
    pub name: String,
    /// The block variable.
    pub var: SymVar,
    /// First value.
    pub min: PrimExpr,
    /// Trip count.
    pub extent: PrimExpr,
}

/// A reduction axis made by [`Te::reduce_axis`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RAxis(pub(crate) usize);

/// How a reduction combines values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CombinerKind {
    /// `x + y`, identity 0.
    Sum,
    /// `x * y`, identity 1.
    Prod,
    /// `T.max(x, y)`, identity the lowest value.
    Max,
    /// `T.min(x, y)`, identity the highest value.
    Min,
    /// TOPI's `argmax` combiner over `(index, value)`.
    ArgMax,
    /// TOPI's `argmin` combiner over `(index, value)`.
    ArgMin,
    /// `MakeTupleSumReducer`: two sums at once (`x` and `x * x` of the norms).
    TupleSum,
}

/// A reduction body: `combiner` over `sources` along `axes`.
#[derive(Clone, Debug)]
pub struct Reduce {
    /// The combiner.
    pub kind: CombinerKind,
    /// One source per output (two for arg reductions).
    pub sources: Vec<PrimExpr>,
    /// The reduction axes, in loop order.
    pub axes: Vec<RAxis>,
}

/// Writes the statements of an [`Te::extern_stage`]: gets the builder, the statement
/// arena and the output buffer, returns the body.
pub type ExternBuild = Rc<dyn Fn(&mut Te, &mut emit::PrimaryStmts, Buffer) -> relax_ir::Stmt>;

/// The body of a stage written as statements (`te.extern`).
#[derive(Clone)]
pub(crate) struct Extern {
    /// The tensors the statements read.
    pub inputs: Vec<Tensor>,
    /// Writes the statements.
    pub build: ExternBuild,
}

impl std::fmt::Debug for Extern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Extern({:?})", self.inputs)
    }
}

/// The body of a compute.
#[derive(Clone, Debug)]
pub(crate) enum Body {
    /// A data-parallel value.
    Value(PrimExpr),
    /// A reduction.
    Reduce(Reduce),
    /// Statements (`te.extern`).
    Extern(Extern),
}

/// A compute stage.
#[derive(Clone, Debug)]
pub(crate) struct Compute {
    /// The op name (TOPI's tag).
    pub name: String,
    /// Spatial axes.
    pub axes: Vec<Axis>,
    /// The body.
    pub body: Body,
    /// The output tensors (one, or one per reduction value).
    pub outputs: Vec<Tensor>,
    /// Block annotations.
    pub attrs: Attrs,
    /// Where a data-parallel stage stores its value, when not at its own axes (the
    /// output of `sch.transform_layout` on a pass-through compute).
    pub store: Option<Vec<PrimExpr>>,
}

/// What produces a tensor.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Producer {
    /// An argument.
    Placeholder,
    /// Output `index` of compute stage `stage`.
    Compute {
        /// The stage.
        stage: usize,
    },
}

/// A tensor's buffer and producer.
#[derive(Clone, Debug)]
pub(crate) struct TensorData {
    pub buffer: Buffer,
    pub producer: Producer,
}

/// The builder.
#[derive(Debug, Default)]
pub struct Te {
    /// Variables and expressions of the PrimFunc being built.
    pub pool: Pool,
    /// Its buffers.
    pub buffers: PrimaryMap<Buffer, BufferData>,
    pub(crate) tensors: Vec<TensorData>,
    pub(crate) stages: Vec<Compute>,
    pub(crate) raxes: Vec<Axis>,
    /// Placeholders in argument order.
    pub(crate) inputs: Vec<Tensor>,
    /// Scalar expressions passed as arguments: their variables must be defined by the
    /// PrimFunc (by a buffer dim or as a scalar parameter).
    pub(crate) extra: Vec<PrimExpr>,
    /// Names given to block names so far (`compute`, `compute_1`, ...).
    pub(crate) block_names: HashMap<String, i64>,
}

impl Te {
    /// An empty builder.
    pub fn new() -> Te {
        Te::default()
    }

    /// A new variable of this PrimFunc.
    pub fn var(&mut self, name: &str, dtype: DataType) -> SymVar {
        self.pool.new_var(name, dtype)
    }

    fn new_buffer(&mut self, name: &str, shape: Vec<PrimExpr>, dtype: DataType) -> Buffer {
        let storage = if dtype.is_bool() { DataType::INT8 } else { dtype };
        let data = self.pool.vars.push(SymVarData::pointer(name, storage, "global"));
        self.buffers.push(BufferData::new(name, data, dtype, shape))
    }

    /// `te.placeholder(shape, dtype, name)`: an input tensor, in argument order.
    pub fn placeholder(&mut self, name: &str, shape: Vec<PrimExpr>, dtype: DataType) -> Tensor {
        let buffer = self.new_buffer(name, shape, dtype);
        let t = Tensor(self.tensors.len() as u32);
        self.tensors.push(TensorData { buffer, producer: Producer::Placeholder });
        self.inputs.push(t);
        t
    }

    /// Records a scalar expression passed as an argument (its variables must be defined).
    pub fn note_extra(&mut self, e: PrimExpr) {
        self.extra.push(e);
    }

    /// The shape of a tensor.
    pub fn shape(&self, t: Tensor) -> Vec<PrimExpr> {
        self.buffers[self.buffer(t)].shape.clone()
    }

    /// The dtype of a tensor.
    pub fn dtype(&self, t: Tensor) -> DataType {
        self.buffers[self.buffer(t)].dtype
    }

    /// The rank of a tensor.
    pub fn ndim(&self, t: Tensor) -> usize {
        self.buffers[self.buffer(t)].shape.len()
    }

    /// The buffer behind a tensor.
    pub fn buffer(&self, t: Tensor) -> Buffer {
        self.tensors[t.0 as usize].buffer
    }

    /// `t[indices]`.
    pub fn load(&mut self, t: Tensor, indices: &[PrimExpr]) -> PrimExpr {
        let buffer = self.buffer(t);
        let dtype = self.buffers[buffer].dtype;
        self.pool.raw(PrimExprData::Load { dtype, buffer, indices: indices.to_vec() })
    }

    /// TVM's operator constructor `a <op> b` (dtype matching and folding).
    pub fn bin(&mut self, op: BinOp, a: PrimExpr, b: PrimExpr) -> PrimExpr {
        self.pool.binary(op, a, b).unwrap_or_else(|_| self.pool.raw(PrimExprData::Bin(op, a, b)))
    }

    /// `a + b`.
    pub fn add(&mut self, a: PrimExpr, b: PrimExpr) -> PrimExpr {
        self.bin(BinOp::Add, a, b)
    }
    /// `a - b`.
    pub fn sub(&mut self, a: PrimExpr, b: PrimExpr) -> PrimExpr {
        self.bin(BinOp::Sub, a, b)
    }
    /// `a * b`.
    pub fn mul(&mut self, a: PrimExpr, b: PrimExpr) -> PrimExpr {
        self.bin(BinOp::Mul, a, b)
    }
    /// `a // b`.
    pub fn floordiv(&mut self, a: PrimExpr, b: PrimExpr) -> PrimExpr {
        self.bin(BinOp::FloorDiv, a, b)
    }
    /// `a % b`.
    pub fn floormod(&mut self, a: PrimExpr, b: PrimExpr) -> PrimExpr {
        self.bin(BinOp::FloorMod, a, b)
    }
    /// An `int64` constant.
    pub fn i64(&mut self, v: i64) -> PrimExpr {
        self.pool.i64(v)
    }
    /// `tvm.tirx.const(v, dtype)`.
    pub fn const_f(&mut self, dtype: DataType, v: f64) -> PrimExpr {
        self.pool.make_const_float(dtype, v)
    }
    /// `tvm.tirx.const(v, dtype)` for an integer value.
    pub fn const_i(&mut self, dtype: DataType, v: i64) -> PrimExpr {
        self.pool.make_const_int(dtype, v)
    }
    /// `T.Cast(dtype, e)` as `tvm.tirx.Cast`/`topi.cast` builds it (no-op for the same type).
    pub fn cast(&mut self, dtype: DataType, e: PrimExpr) -> PrimExpr {
        self.pool.cast(dtype, e)
    }
    /// An intrinsic call `T.<name>(args)` whose type is its first argument's.
    pub fn call(&mut self, op: Intrinsic, args: &[PrimExpr]) -> PrimExpr {
        let dtype = args.first().map_or(DataType::VOID, |&a| self.pool.dtype(a));
        self.pool.raw(PrimExprData::Call { dtype, op: op.into(), args: args.to_vec() })
    }
    /// An intrinsic call with an explicit result type.
    pub fn call_typed(&mut self, dtype: DataType, op: Intrinsic, args: &[PrimExpr]) -> PrimExpr {
        self.pool.raw(PrimExprData::Call { dtype, op: op.into(), args: args.to_vec() })
    }
    /// `T.Select(c, t, f)` (`tvm.tirx.Select`, no folding).
    pub fn select(&mut self, c: PrimExpr, t: PrimExpr, f: PrimExpr) -> PrimExpr {
        self.pool.raw(PrimExprData::Select(c, t, f))
    }
    /// `T.if_then_else(c, t, f)` as `tvm.tirx.if_then_else` builds it (folds a constant
    /// condition; the branches get one dtype by `BinaryOpMatchTypes`, so an integer branch
    /// beside a float one is cast).
    pub fn if_then_else(&mut self, c: PrimExpr, t: PrimExpr, f: PrimExpr) -> PrimExpr {
        if let Some(v) = self.pool.as_int(c) {
            return if v != 0 { t } else { f };
        }
        let (t, f) = self.pool.match_types(t, f).unwrap_or((t, f));
        let dtype = self.pool.dtype(t);
        self.pool.raw(PrimExprData::Call { dtype, op: Intrinsic::IfThenElse.into(), args: vec![c, t, f] })
    }

    /// An expression in an index position, widened to `int64` as
    /// `IndexDataTypeNormalizer` does.
    pub fn index(&mut self, e: PrimExpr) -> PrimExpr {
        dtype::normalize_index(&mut self.pool, e)
    }

    fn axes(&mut self, shape: &[PrimExpr], names: Axes<'_>) -> Vec<Axis> {
        shape
            .iter()
            .enumerate()
            .map(|(i, &extent)| {
                let extent = self.index(extent);
                let name = names.name(i);
                let var = self.pool.new_var(format!("v_{name}"), DataType::INT64);
                let min = self.pool.i64(0);
                Axis { name, var, min, extent }
            })
            .collect()
    }

    /// `te.compute(shape, fcompute, name)`: a data-parallel stage. `f` gets the block
    /// variables of the spatial axes and returns the value.
    pub fn compute(
        &mut self,
        name: &str,
        shape: Vec<PrimExpr>,
        names: Axes<'_>,
        f: impl FnOnce(&mut Te, &[PrimExpr]) -> PrimExpr,
    ) -> Tensor {
        let axes = self.axes(&shape, names);
        let idx: Vec<PrimExpr> = axes.iter().map(|a| self.pool.var_ref(a.var)).collect();
        let value = f(self, &idx);
        let dtype = self.pool.dtype(value);
        self.add_stage(name, shape, axes, Body::Value(value), vec![dtype], Attrs::new())[0]
    }

    /// Like [`Te::compute`], with block annotations (TOPI's compute `attrs`).
    pub fn compute_with_attrs(
        &mut self,
        name: &str,
        shape: Vec<PrimExpr>,
        names: Axes<'_>,
        attrs: Attrs,
        f: impl FnOnce(&mut Te, &[PrimExpr]) -> PrimExpr,
    ) -> Tensor {
        let axes = self.axes(&shape, names);
        let idx: Vec<PrimExpr> = axes.iter().map(|a| self.pool.var_ref(a.var)).collect();
        let value = f(self, &idx);
        let dtype = self.pool.dtype(value);
        self.add_stage(name, shape, axes, Body::Value(value), vec![dtype], attrs)[0]
    }

    /// A data-parallel stage over `iter_shape` whose value lands at other indices of an
    /// output of shape `out_shape`: `f` gets the block variables and returns the store
    /// indices and the value. This is what `sch.transform_layout` makes of a
    /// pass-through compute's output (`R.layout_transform`).
    pub fn compute_mapped(
        &mut self,
        name: &str,
        iter_shape: Vec<PrimExpr>,
        names: Axes<'_>,
        out_shape: Vec<PrimExpr>,
        f: impl FnOnce(&mut Te, &[PrimExpr]) -> (Vec<PrimExpr>, PrimExpr),
    ) -> Tensor {
        let axes = self.axes(&iter_shape, names);
        let idx: Vec<PrimExpr> = axes.iter().map(|a| self.pool.var_ref(a.var)).collect();
        let (store, value) = f(self, &idx);
        let dtype = self.pool.dtype(value);
        let t = self.add_stage(name, out_shape, axes, Body::Value(value), vec![dtype], Attrs::new())[0];
        if let Some(st) = self.stages.last_mut() {
            st.store = Some(store);
        }
        t
    }

    /// `te.extern`: an output of `shape` and `dtype` written by statements rather than
    /// a compute. The stage is one opaque block named `name` (dots become underscores)
    /// without iteration variables or access regions, holding what `build` writes; the
    /// output buffer is named `out_buf`, as TOPI's extern kernels declare it.
    pub fn extern_stage(
        &mut self,
        name: &str,
        shape: Vec<PrimExpr>,
        dtype: DataType,
        inputs: Vec<Tensor>,
        build: ExternBuild,
    ) -> Tensor {
        let shape: Vec<PrimExpr> = shape.into_iter().map(|d| self.index(d)).collect();
        let stage = self.stages.len();
        let buffer = self.new_buffer("out_buf", shape, dtype);
        let t = Tensor(self.tensors.len() as u32);
        self.tensors.push(TensorData { buffer, producer: Producer::Compute { stage } });
        let body = Body::Extern(Extern { inputs, build });
        self.stages.push(Compute {
            name: name.replace('.', "_"),
            axes: Vec::new(),
            body,
            outputs: vec![t],
            attrs: Attrs::new(),
            store: None,
        });
        t
    }

    /// `te.reduce_axis((0, extent), name)`: returns the axis and its block variable.
    pub fn reduce_axis(&mut self, name: &str, extent: PrimExpr) -> (RAxis, PrimExpr) {
        let var = self.pool.new_var(format!("v_{name}"), DataType::INT64);
        let min = self.pool.i64(0);
        let extent = self.index(extent);
        self.raxes.push(Axis { name: name.to_string(), var, min, extent });
        let e = self.pool.var_ref(var);
        (RAxis(self.raxes.len() - 1), e)
    }

    /// A reduction stage: `f` gets the spatial block variables and returns the
    /// reduction. Arg reductions produce two tensors (indices, values).
    pub fn compute_reduce(
        &mut self,
        name: &str,
        shape: Vec<PrimExpr>,
        names: Axes<'_>,
        f: impl FnOnce(&mut Te, &[PrimExpr]) -> Reduce,
    ) -> Vec<Tensor> {
        let axes = self.axes(&shape, names);
        let idx: Vec<PrimExpr> = axes.iter().map(|a| self.pool.var_ref(a.var)).collect();
        let r = f(self, &idx);
        let dtypes: Vec<DataType> = r.sources.iter().map(|&s| self.pool.dtype(s)).collect();
        self.add_stage(name, shape, axes, Body::Reduce(r), dtypes, Attrs::new())
    }

    /// Like [`Te::compute_reduce`], with block annotations (TOPI's
    /// `attrs={"layout_free_placeholders": [b]}`: a tensor is its buffer,
    /// `AttrValue::Buffer(te.buffer(b))`).
    pub fn compute_reduce_with_attrs(
        &mut self,
        name: &str,
        shape: Vec<PrimExpr>,
        names: Axes<'_>,
        attrs: Attrs,
        f: impl FnOnce(&mut Te, &[PrimExpr]) -> Reduce,
    ) -> Vec<Tensor> {
        let axes = self.axes(&shape, names);
        let idx: Vec<PrimExpr> = axes.iter().map(|a| self.pool.var_ref(a.var)).collect();
        let r = f(self, &idx);
        let dtypes: Vec<DataType> = r.sources.iter().map(|&s| self.pool.dtype(s)).collect();
        self.add_stage(name, shape, axes, Body::Reduce(r), dtypes, attrs)
    }

    fn add_stage(
        &mut self,
        name: &str,
        shape: Vec<PrimExpr>,
        axes: Vec<Axis>,
        body: Body,
        dtypes: Vec<DataType>,
        attrs: Attrs,
    ) -> Vec<Tensor> {
        let stage = self.stages.len();
        let shape: Vec<PrimExpr> = shape.into_iter().map(|d| self.index(d)).collect();
        let n = dtypes.len();
        let mut outputs = Vec::new();
        for (i, dt) in dtypes.into_iter().enumerate() {
            let bname = if n == 1 { name.to_string() } else { format!("{name}.v{i}") };
            let buffer = self.new_buffer(&bname, shape.clone(), dt);
            let t = Tensor(self.tensors.len() as u32);
            self.tensors.push(TensorData { buffer, producer: Producer::Compute { stage } });
            outputs.push(t);
        }
        self.stages.push(Compute { name: name.to_string(), axes, body, outputs: outputs.clone(), attrs, store: None });
        outputs
    }

    /// The axis of a reduction axis handle.
    pub(crate) fn raxis(&self, a: RAxis) -> &Axis {
        &self.raxes[a.0]
    }
}
