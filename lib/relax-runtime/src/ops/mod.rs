//! Compute ops: reference kernels, with the op's legalization as the fallback.
//!
//! An op call runs through its reference kernel when it has one ([`kernel`]) and the
//! interpreter's `kernels` option is on; otherwise through [`legalize`]: the call is put
//! alone in a scratch module with the actual argument shapes, `legalize-ops` turns it
//! into a `call_tir`, and the TIR interpreter runs that. A kernel computes in the order
//! and at the precision of the PrimFunc its legalization builds (TOPI's compute
//! definitions), with the scalar semantics of [`crate::scalar`], so both paths give the
//! same numbers; the differential tests hold them to it.
//!
//! Families: [`elementwise`] (unary, binary broadcasting, `where`, `clip`, `astype`),
//! [`reduce`] (sums, means, extrema, variance, arg-reductions), [`nn`] (activations,
//! softmax, norms), [`linalg`] (`matmul`), [`manipulate`] (reshape and friends,
//! indexing), [`create`] (`full`, `arange`, `tril`, ...), [`scan`] (`cumsum`, `cumprod`,
//! `sort`, `argsort`, which have no legalization), [`conv`] (convolutions),
//! [`conv_transpose`] (transposed convolutions), [`pool`] (pooling), [`norm`] (batch,
//! group and instance normalization), [`attention`] (`nn.attention`, `nn.attention_bias`), [`sampling`]
//! (`multinomial_from_uniform`, which has no legalization). A kernel that does not handle a case (a layout, a dtype) returns
//! [`unsupported`], and the call runs through its legalization instead.

pub mod attention;
pub mod conv;
pub mod conv_transpose;
pub mod create;
pub mod elementwise;
pub mod legalize;
pub mod linalg;
pub mod manipulate;
pub mod nn;
pub mod norm;
pub mod pool;
pub mod reduce;
pub mod sampling;
pub mod scan;

use relax_ir::op::{OpId, OpRef, OpTable, ops};
use relax_ir::{AttrValue, Call, DataType, Expr, TyData};

use crate::error::{RunError, RunResult};
use crate::lowering::{Lowered, OpLowering};
use crate::relax::exec::concrete_tensor;
use crate::relax::{Frame, Interpreter};
use crate::scalar::Scalar;
use crate::value::{Tensor, Value};

/// What a kernel sees: the evaluated arguments, the call (attributes) and the call's
/// type with its dims evaluated, when known.
pub struct KernelArgs<'a> {
    /// The op.
    pub op: OpId,
    /// The op's name without `relax.` (`nn.softmax`).
    pub op_name: &'static str,
    /// The arguments.
    pub args: Vec<Value>,
    /// The call.
    pub call: &'a Call,
    /// Shape and dtype of the call's (tensor) type, when every dim is known.
    pub out: Option<(Vec<i64>, DataType)>,
}

/// A reference kernel.
pub type Kernel = fn(&KernelArgs<'_>) -> RunResult<Value>;

impl KernelArgs<'_> {
    /// The op's name without `relax.`.
    pub fn call_name(&self) -> &'static str {
        self.op_name
    }
    /// The `i`-th argument as a tensor.
    pub fn tensor(&self, i: usize) -> RunResult<&Tensor> {
        match self.args.get(i) {
            Some(Value::Tensor(t)) => Ok(t),
            Some(other) => Err(RunError::new(format!("argument {i} is {}, not a tensor", other.describe()))),
            None => Err(RunError::new(format!("argument {i} is missing"))),
        }
    }
    /// The `i`-th argument as a shape.
    pub fn shape(&self, i: usize) -> RunResult<Vec<i64>> {
        match self.args.get(i) {
            Some(Value::Shape(s)) => Ok(s.clone()),
            Some(other) => Err(RunError::new(format!("argument {i} is {}, not a shape", other.describe()))),
            None => Err(RunError::new(format!("argument {i} is missing"))),
        }
    }
    /// The `i`-th argument as a scalar (a prim value or a one-element tensor).
    pub fn scalar(&self, i: usize) -> RunResult<Scalar> {
        self.args
            .get(i)
            .and_then(crate::relax::exec::scalar_of)
            .ok_or_else(|| RunError::new(format!("argument {i} is not a scalar")))
    }
    /// An attribute.
    pub fn attr(&self, key: &str) -> Option<&AttrValue> {
        self.call.attrs.get(key).filter(|v| !matches!(v, AttrValue::None))
    }
    /// An integer attribute.
    pub fn attr_int(&self, key: &str) -> Option<i64> {
        self.attr(key).and_then(AttrValue::as_int)
    }
    /// A float attribute.
    pub fn attr_f64(&self, key: &str) -> Option<f64> {
        match self.attr(key)? {
            AttrValue::Float(f) | AttrValue::PrimFloat(_, f) => Some(f.get()),
            AttrValue::Int(i) | AttrValue::PrimInt(_, i) => Some(*i as f64),
            _ => None,
        }
    }
    /// A boolean attribute.
    pub fn attr_bool(&self, key: &str) -> Option<bool> {
        self.attr(key).and_then(AttrValue::as_bool)
    }
    /// An integer-list attribute (a single integer is a list of one).
    pub fn attr_ints(&self, key: &str) -> Option<Vec<i64>> {
        match self.attr(key)? {
            AttrValue::List(v) => v.iter().map(AttrValue::as_int).collect(),
            other => other.as_int().map(|i| vec![i]),
        }
    }
    /// A dtype attribute (`None` for absent or `void`).
    pub fn attr_dtype(&self, key: &str) -> Option<DataType> {
        match self.attr(key)? {
            AttrValue::Str(s) => DataType::parse(s).filter(|d| !d.is_void()),
            _ => None,
        }
    }
    /// The call's result dtype, when known.
    pub fn out_dtype(&self) -> Option<DataType> {
        self.out.as_ref().map(|o| o.1)
    }
}

/// Normalizes a possibly negative axis.
pub fn norm_axis(axis: i64, ndim: usize) -> RunResult<usize> {
    let a = if axis < 0 { axis + ndim as i64 } else { axis };
    if a < 0 || a as usize >= ndim.max(1) && !(ndim == 0 && a == 0) {
        return Err(RunError::new(format!("axis {axis} out of range for rank {ndim}")));
    }
    Ok(a as usize)
}

/// The reference kernel of each op, from the families' tables (one file each).
static KERNELS: OpTable<Kernel> = relax_ir::op_table_of!(
    Kernel;
    elementwise::lookup,
    reduce::lookup,
    nn::lookup,
    linalg::lookup,
    manipulate::lookup,
    create::lookup,
    scan::lookup,
    conv::lookup,
    pool::lookup,
    conv_transpose::lookup,
    norm::lookup,
    attention::lookup,
    sampling::lookup,
);

/// The reference kernel of the op `id`, if it has one.
pub fn kernel(id: OpId) -> Option<Kernel> {
    KERNELS.get(id)
}

/// The message of [`unsupported`].
const UNSUPPORTED: &str = "\u{0}no kernel for this case";

/// What a kernel returns for a case it does not handle: the call then runs through its
/// legalization.
pub fn unsupported() -> RunError {
    RunError::new(UNSUPPORTED)
}

/// Runs a compute op (or one of the value-level ops: `shape_of`, ...).
pub fn run_op<'m>(
    interp: &Interpreter<'m>,
    fr: &mut Frame<'m>,
    e: Expr,
    call: &'m Call,
    op: &OpRef,
) -> RunResult<Value> {
    let name = op.name();
    let args = interp.eval_args(fr, fr.f.list(call.args))?;
    let Some(id) = op.id() else {
        // An op the table does not know: only a lowering can run it.
        return legalize::run(interp, fr, e, call, name, args);
    };
    if let Some(v) = value_op(id, &args)? {
        return Ok(v);
    }
    let out = fr.f.ty_of(e).and_then(|t| match fr.f.pool.ty(t) {
        TyData::Tensor { .. } => concrete_tensor(fr, t).ok(),
        _ => None,
    });
    // Without kernels, ops that have a legalization run through it; the others (scans,
    // sorts) still need their kernel.
    let legalizable = interp.lowering.is_some_and(|l| l.lowering_of(id) == Lowered::Kernel);
    if (interp.options.kernels || !legalizable)
        && let Some(k) = kernel(id)
    {
        let ka = KernelArgs { op: id, op_name: id.def().text_name(), args, call, out };
        match k(&ka) {
            Err(err) if err.message == UNSUPPORTED && legalizable => {
                return legalize::run(interp, fr, e, call, name, ka.args);
            }
            r => {
                return r.map_err(|err| RunError { message: format!("`R.{}`: {}", short(name), err.message), ..err });
            }
        }
    }
    legalize::run(interp, fr, e, call, name, args)
}

/// Runs a value op or an op with a reference kernel without the IR (the VM of
/// [`crate::vm`]): `attrs` are the call's attributes, `out` the call's type with its dims
/// evaluated. A case the kernel does not take is an error (there is no legalization to
/// fall back to at run time).
pub fn run_detached(
    id: OpId,
    args: Vec<Value>,
    attrs: &relax_ir::Attrs,
    out: Option<(Vec<i64>, DataType)>,
) -> RunResult<Value> {
    if let Some(v) = value_op(id, &args)? {
        return Ok(v);
    }
    let name = id.name();
    let Some(k) = kernel(id) else {
        return Err(RunError::new(format!("the op `R.{}` has no reference kernel", short(name))));
    };
    // Kernels read only the attributes of the call.
    let call = Call {
        callee: relax_entity::EntityRef::new(0),
        args: relax_ir::ExprList::default(),
        attrs: attrs.clone(),
        sinfo_args: Vec::new(),
    };
    let ka = KernelArgs { op: id, op_name: id.def().text_name(), args, call: &call, out };
    k(&ka).map_err(|err| {
        let message = if err.message == UNSUPPORTED {
            format!("`R.{}`: this case has no reference kernel and cannot be legalized at run time", short(name))
        } else {
            format!("`R.{}`: {}", short(name), err.message)
        };
        RunError { message, ..err }
    })
}

/// True when the VM can run the op `id` with [`run_detached`].
pub fn runs_detached(id: OpId) -> bool {
    VALUE_OPS.contains(&id) || kernel(id).is_some()
}

fn short(name: &str) -> &str {
    name.strip_prefix("relax.").unwrap_or(name)
}

/// The ops that only look at or pass along values, run by [`run_op`] before any kernel.
pub const VALUE_OPS: &[OpId] = &[
    ops::SHAPE_OF,
    ops::TENSOR_TO_SHAPE,
    ops::SHAPE_TO_TENSOR,
    ops::BUILTIN_STOP_LIFT_PARAMS,
    ops::HINT_ON_DEVICE,
    ops::TO_VDEVICE,
    ops::GRAD_NO_GRAD,
    ops::GRAD_START_CHECKPOINT,
    ops::GRAD_END_CHECKPOINT,
    ops::INSPECT_TENSOR_DTYPE_CODE,
    ops::INSPECT_TENSOR_DTYPE_BITS,
    ops::INSPECT_TENSOR_DTYPE_LANES,
    ops::INSPECT_TENSOR_NDIM,
    ops::INSPECT_TENSOR_BYTE_OFFSET,
    ops::INSPECT_TENSOR_ELEM_OFFSET,
    ops::INSPECT_TENSOR_SHAPE_I,
    ops::INSPECT_TENSOR_STRIDE_I,
];

/// How the interpreter runs an op (the "interpreted" column of `docs/legalize.md`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    /// The interpreter itself: calls, packed calls, closures, effects, memory and value
    /// ops.
    Interpreter,
    /// A reference kernel (which hands cases it does not take to the legalization).
    Kernel,
    /// The op's legalization, run by the TIR interpreter (or a packed builtin).
    Legalization,
    /// Not at all: running it is an error naming the op.
    Unsupported,
}

/// How the interpreter runs the op `id` when given `lowering`.
pub fn route(id: OpId, lowering: &dyn OpLowering) -> Route {
    if crate::relax::call::runs_directly(id) || VALUE_OPS.contains(&id) {
        return Route::Interpreter;
    }
    if kernel(id).is_some() {
        return Route::Kernel;
    }
    match lowering.lowering_of(id) {
        Lowered::Kernel | Lowered::Expanded => Route::Legalization,
        Lowered::Packed(f) if crate::builtins::NAMES.contains(&f) => Route::Legalization,
        Lowered::Packed(_) | Lowered::No => Route::Unsupported,
    }
}

/// Ops that only look at or pass along values.
fn value_op(id: OpId, args: &[Value]) -> RunResult<Option<Value>> {
    // Only the listed ops reach the arms below (so the list is what runs here).
    if !VALUE_OPS.contains(&id) {
        return Ok(None);
    }
    let name = id.name();
    let tensor = |i: usize| match args.get(i) {
        Some(Value::Tensor(t)) => Ok(t.clone()),
        _ => Err(RunError::new(format!("`R.{}`: argument {i} is not a tensor", short(name)))),
    };
    let prim = |dt: DataType, v: i64| Ok(Some(Value::Prim(Scalar::int(dt, v))));
    match id {
        ops::SHAPE_OF => Ok(Some(Value::Shape(tensor(0)?.shape))),
        ops::TENSOR_TO_SHAPE => Ok(Some(Value::Shape(tensor(0)?.scalars().into_iter().map(Scalar::as_i64).collect()))),
        ops::SHAPE_TO_TENSOR => match args.first() {
            Some(Value::Shape(s)) => Ok(Some(Value::Tensor(Tensor::from_scalars(
                &[s.len() as i64],
                DataType::INT64,
                s.iter().map(|&x| Scalar::int(DataType::INT64, x)),
            )))),
            _ => Err(RunError::new("`R.shape_to_tensor`: expected a shape")),
        },
        ops::BUILTIN_STOP_LIFT_PARAMS
        | ops::HINT_ON_DEVICE
        | ops::TO_VDEVICE
        | ops::GRAD_NO_GRAD
        | ops::GRAD_START_CHECKPOINT
        | ops::GRAD_END_CHECKPOINT => Ok(args.first().cloned()),
        ops::INSPECT_TENSOR_DTYPE_CODE => {
            let t = tensor(0)?;
            let code = match t.dtype.code {
                relax_ir::TypeCode::Int => 0,
                relax_ir::TypeCode::UInt => 1,
                relax_ir::TypeCode::Float => 2,
                relax_ir::TypeCode::BFloat => 4,
                relax_ir::TypeCode::Bool => 6,
                _ => 3,
            };
            prim(DataType::UINT8, code)
        }
        ops::INSPECT_TENSOR_DTYPE_BITS => prim(DataType::UINT8, i64::from(tensor(0)?.dtype.bits)),
        ops::INSPECT_TENSOR_DTYPE_LANES => {
            prim(DataType::new(relax_ir::TypeCode::UInt, 16), i64::from(tensor(0)?.dtype.lanes))
        }
        ops::INSPECT_TENSOR_NDIM => prim(DataType::INT32, tensor(0)?.shape.len() as i64),
        ops::INSPECT_TENSOR_BYTE_OFFSET => prim(DataType::new(relax_ir::TypeCode::UInt, 64), tensor(0)?.offset as i64),
        ops::INSPECT_TENSOR_ELEM_OFFSET => {
            let t = tensor(0)?;
            prim(DataType::new(relax_ir::TypeCode::UInt, 64), (t.offset / t.dtype.bytes() as usize) as i64)
        }
        ops::INSPECT_TENSOR_SHAPE_I | ops::INSPECT_TENSOR_STRIDE_I => {
            let t = tensor(0)?;
            let i = args.get(1).and_then(crate::relax::exec::scalar_of).map(Scalar::as_i64).unwrap_or(0);
            let dims = if name.ends_with("shape_i") { t.shape.clone() } else { t.strides() };
            let v = dims
                .get(i as usize)
                .copied()
                .ok_or_else(|| RunError::new(format!("`R.{}`: axis {i} out of range", short(name))))?;
            prim(DataType::INT64, v)
        }
        _ => Ok(None),
    }
}
