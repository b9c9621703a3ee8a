//! The memory ops that memory planning and VM lowering emit (`text-format.md` §6.3).
//!
//! * `R.builtin.alloc_tensor(shape, dtype, device, scope)`: a fresh zero-filled tensor.
//! * `R.memory.alloc_storage(size, device, scope, dtype)`: `size[0]` bytes;
//!   `R.vm.alloc_storage(size, device, dtype, scope)`: `prod(size)` elements of `dtype`.
//! * `R.memory.alloc_tensor(storage, offset, shape, dtype, device)` and
//!   `R.vm.alloc_tensor(...)`: a view of the storage at a byte offset; it must fit.
//! * `R.memory.view(x, shape, dtype, relative_byte_offset)`: another view of `x`'s
//!   storage; `R.memory.ensure_zero_offset(x)`: `x`, or a copy when its offset is not 0.
//! * `R.memory.kill_storage`, `R.memory.kill_tensor`, `R.vm.kill_object`: end the
//!   variable (a later use is an error); the bytes stay with the other views.

use relax_ir::op::{OpId, ops};
use relax_ir::{Call, ExprData};

use super::{Frame, Interpreter, Slot};
use crate::error::{RunError, RunResult};
use crate::value::{Storage, Tensor, Value, numel, shape_text};

fn shape_arg(v: &Value, op: &str) -> RunResult<Vec<i64>> {
    match v {
        Value::Shape(s) => Ok(s.clone()),
        other => Err(RunError::new(format!("`R.{op}`: expected a shape, got {}", other.describe()))),
    }
}

fn dtype_arg(v: &Value, op: &str) -> RunResult<relax_ir::DataType> {
    match v {
        Value::DType(d) => Ok(*d),
        other => Err(RunError::new(format!("`R.{op}`: expected a dtype, got {}", other.describe()))),
    }
}

fn int_arg(v: &Value, op: &str) -> RunResult<i64> {
    match v {
        Value::Prim(s) => Ok(s.as_i64()),
        other => Err(RunError::new(format!("`R.{op}`: expected an integer, got {}", other.describe()))),
    }
}

/// A view of `bytes` at `offset`, checked to fit.
fn carve(
    bytes: &crate::value::Bytes,
    offset: i64,
    shape: &[i64],
    dtype: relax_ir::DataType,
    op: &str,
) -> RunResult<Tensor> {
    let len = bytes.borrow().len();
    let need = numel(shape) * dtype.bytes() as usize;
    if offset < 0 || offset as usize + need > len {
        return Err(RunError::new(format!(
            "`R.{op}`: a tensor of shape {} and dtype {dtype} ({need} bytes) at byte offset {offset} does not fit in a storage of {len} bytes",
            shape_text(shape)
        )));
    }
    Ok(Tensor::view(bytes, offset as usize, shape, dtype))
}

/// The memory ops, run by [`Interpreter::memory_op`].
pub const MEMORY_OPS: &[OpId] = &[
    ops::BUILTIN_ALLOC_TENSOR,
    ops::MEMORY_ALLOC_STORAGE,
    ops::MEMORY_ALLOC_TENSOR,
    ops::MEMORY_KILL_STORAGE,
    ops::MEMORY_KILL_TENSOR,
    ops::MEMORY_VIEW,
    ops::MEMORY_ENSURE_ZERO_OFFSET,
    ops::VM_ALLOC_STORAGE,
    ops::VM_ALLOC_TENSOR,
    ops::VM_KILL_OBJECT,
];

impl<'m> Interpreter<'m> {
    /// Runs a memory op.
    pub(crate) fn memory_op(&self, fr: &mut Frame<'m>, call: &'m Call, id: OpId) -> RunResult<Value> {
        if matches!(id, ops::MEMORY_KILL_STORAGE | ops::MEMORY_KILL_TENSOR | ops::VM_KILL_OBJECT) {
            let what: &'static str = match id {
                ops::MEMORY_KILL_STORAGE => "R.memory.kill_storage",
                ops::MEMORY_KILL_TENSOR => "R.memory.kill_tensor",
                _ => "R.vm.kill_object",
            };
            if let Some(&a) = fr.f.list(call.args).first() {
                if let ExprData::Var(v) = fr.f.exprs[a] {
                    fr.get(v)?;
                    fr.vars[relax_entity::EntityRef::index(v)] = Slot::Killed(what);
                }
            }
            return Ok(Value::unit());
        }
        let args = self.eval_args(fr, fr.f.list(call.args))?;
        run_memory_op(id, &args)
    }
}

/// Runs a memory op other than the kills on its evaluated arguments.
pub(crate) fn run_memory_op(id: OpId, args: &[Value]) -> RunResult<Value> {
    // The op's name without `R.`: messages add it (no string is made unless one fails).
    let op = id.def().text_name();
    let arg = |i: usize| args.get(i).cloned().unwrap_or(Value::Null);
    match id {
        ops::BUILTIN_ALLOC_TENSOR => {
            let shape = shape_arg(&arg(0), op)?;
            let dtype = dtype_arg(&arg(1), op)?;
            Ok(Value::Tensor(Tensor::zeros(&shape, dtype)))
        }
        ops::MEMORY_ALLOC_STORAGE => {
            let size = shape_arg(&arg(0), op)?;
            Ok(Value::Storage(Storage::new(numel(&size))))
        }
        ops::VM_ALLOC_STORAGE => {
            let size = shape_arg(&arg(0), op)?;
            let dtype = dtype_arg(&arg(2), op)?;
            Ok(Value::Storage(Storage::new(numel(&size) * dtype.bytes() as usize)))
        }
        ops::MEMORY_ALLOC_TENSOR | ops::VM_ALLOC_TENSOR => {
            let Value::Storage(s) = arg(0) else {
                return Err(RunError::new(format!("`R.{op}`: expected a storage, got {}", arg(0).describe())));
            };
            let offset = int_arg(&arg(1), op)?;
            let shape = shape_arg(&arg(2), op)?;
            let dtype = dtype_arg(&arg(3), op)?;
            Ok(Value::Tensor(carve(&s.bytes, offset, &shape, dtype, op)?))
        }
        ops::MEMORY_VIEW => {
            let Value::Tensor(x) = arg(0) else {
                return Err(RunError::new(format!("`R.{op}`: expected a tensor, got {}", arg(0).describe())));
            };
            let shape = match arg(1) {
                Value::Shape(s) => s,
                _ => x.shape.clone(),
            };
            let dtype = match arg(2) {
                Value::DType(d) => d,
                _ => x.dtype,
            };
            let rel = match arg(3) {
                Value::Prim(p) => p.as_i64(),
                _ => 0,
            };
            Ok(Value::Tensor(carve(&x.data, x.offset as i64 + rel, &shape, dtype, op)?))
        }
        ops::MEMORY_ENSURE_ZERO_OFFSET => match arg(0) {
            Value::Tensor(x) if x.offset != 0 => Ok(Value::Tensor(x.deep_copy())),
            other => Ok(other),
        },
        _ => Err(RunError::new(format!("the op `R.{op}` is not supported by the interpreter"))),
    }
}
