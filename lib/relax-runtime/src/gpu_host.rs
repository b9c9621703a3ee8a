//! The host side of a GPU call, shared by the Vulkan and CUDA engines: binding the
//! arguments, gathering the buffer contents and scalar arguments of a
//! [`GpuFunc`], the grid sizes, and writing the results back into the tensors.

use relax_codegen::gpu::{BufSource, GpuFunc, eval_int};
use relax_entity::EntityRef;
use relax_ir::{Global, Module};

use crate::error::{RunError, RunResult};
use crate::scalar::Scalar;
use crate::value::Value;

/// What a call sends to the device.
pub(crate) struct Call {
    /// The bytes of each buffer of [`GpuFunc::buffers`] (zeros for scratch memory).
    pub contents: Vec<Vec<u8>>,
    /// Each scalar argument in an 8-byte little-endian slot (4-byte types in its low
    /// half).
    pub scalars: Vec<[u8; 8]>,
    /// The number of blocks of each launch.
    pub grids: Vec<i64>,
}

/// Binds `args` to PrimFunc `g` with the TIR interpreter's binder (the same checks and
/// messages) and gathers what its kernels need.
pub(crate) fn prepare(m: &Module, g: Global, gf: &GpuFunc, args: &[Value]) -> RunResult<Call> {
    let fr = crate::tir::bind_args(m, g, args)?;
    let f = fr.f;
    let lookup = |v: relax_ir::SymVar| match fr.vars.get(v.index()).copied().flatten() {
        Some(Scalar::Int(x, _)) => Some(x),
        _ => None,
    };
    let mut contents: Vec<Vec<u8>> = Vec::new();
    for gb in &gf.buffers {
        let elems = gb.elems(&f.pool, &lookup).map_err(RunError::new)?;
        let bytes = elems as usize * (gb.dtype.bits as usize).div_ceil(8);
        contents.push(match gb.source {
            BufSource::Param(i) => match &args[i] {
                Value::Tensor(t) => {
                    let data = t.data.borrow();
                    data.get(t.offset..t.offset + bytes)
                        .ok_or_else(|| RunError::new(format!("PrimFunc `{}`: argument {i} is too small", gf.name)))?
                        .to_vec()
                }
                other => {
                    return Err(RunError::new(format!(
                        "PrimFunc `{}`: argument {i} must be a tensor, got {}",
                        gf.name,
                        other.describe()
                    )));
                }
            },
            BufSource::Scratch => vec![0u8; bytes],
        });
    }
    let mut scalars = Vec::with_capacity(gf.scalars.len());
    for &v in &gf.scalars {
        let mut slot = [0u8; 8];
        match fr.vars.get(v.index()).copied().flatten() {
            Some(Scalar::Int(x, dt)) if dt.bits <= 32 => slot[..4].copy_from_slice(&(x as i32).to_le_bytes()),
            Some(Scalar::Int(x, _)) => slot.copy_from_slice(&x.to_le_bytes()),
            Some(Scalar::Float(x, dt)) if dt.bits == 32 => slot[..4].copy_from_slice(&(x as f32).to_le_bytes()),
            Some(Scalar::Float(x, _)) => slot.copy_from_slice(&x.to_le_bytes()),
            None => {
                return Err(RunError::new(format!(
                    "PrimFunc `{}`: variable `{}` is used before it has a value",
                    gf.name,
                    fr.var_name(v)
                )));
            }
        }
        scalars.push(slot);
    }
    let mut grids = Vec::new();
    for l in &gf.launches {
        grids.push(eval_int(&f.pool, l.blocks, &lookup).map_err(RunError::new)?);
    }
    Ok(Call { contents, scalars, grids })
}

/// Copies the device's buffer contents `out` back into the parameter tensors.
pub(crate) fn write_back(gf: &GpuFunc, args: &[Value], out: Vec<Vec<u8>>) {
    for (gb, bytes) in gf.buffers.iter().zip(out) {
        if let BufSource::Param(i) = gb.source
            && let Value::Tensor(t) = &args[i]
        {
            let mut data = t.data.borrow_mut();
            data[t.offset..t.offset + bytes.len()].copy_from_slice(&bytes);
        }
    }
}
