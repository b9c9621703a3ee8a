//! Check 3, `call_tir` outputs: each tensor of `out_sinfo` must describe the PrimFunc
//! parameter it is passed as, the kernel's output buffer. A dtype, a rank or a constant
//! dim that differs is an error naming the kernel, the buffer and both types; symbolic
//! dims and unknown parts (`R.Tensor(ndim=-1)`, dtype `void`) always match.

use crate::entities::{Expr, Ty};
use crate::pool::Pool;
use crate::tir::PrimFunc;
use crate::ty::{TensorShape, TyData};

use super::error::Entity;
use super::names;
use super::relax_rules::RelaxChecker;

impl RelaxChecker<'_> {
    /// The outputs of the `call_tir` `e` (`on`, outputs passed from parameter `first_out`
    /// of `pf`, named `kernel`) against the `out_sinfo` type `out`.
    pub(super) fn check_dps_outputs(
        &mut self,
        e: Expr,
        on: &str,
        (pf, kernel): (&PrimFunc, &str),
        first_out: usize,
        out: Ty,
    ) {
        let pool = &self.f.pool;
        let outs: Vec<Ty> = match pool.ty(out) {
            TyData::Tensor { .. } => vec![out],
            TyData::Tuple(fields) => fields.clone(),
            _ => return,
        };
        for (i, t) in outs.into_iter().enumerate() {
            let Some(&param) = pf.params.get(first_out + i) else { return };
            let Some(&(_, b)) = pf.buffer_map.iter().find(|(v, _)| *v == param) else { continue };
            let Some(buf) = pf.buffers.get(b) else { continue };
            let Some(why) = tensor_vs_buffer(&self.f.pool, t, pf, buf) else { continue };
            let (bn, tn) = (names::buffer(pf, b), names::ty(&self.f.pool, t));
            let dims: Vec<String> = buf.shape.iter().map(|&d| names::prim(&pf.pool, d)).collect();
            let comma = if dims.len() == 1 { "," } else { "" };
            let bt = format!("T.Buffer(({}{comma}), \"{}\")", dims.join(", "), buf.dtype);
            self.err(
                Entity::Expr(e),
                format!(
                    "the `out_sinfo` of `{on}` does not match the output buffer `{bn}` of `{kernel}`: `{tn}` against `{bt}`"
                ),
            )
            .notes
            .push(why);
        }
    }
}

/// Why the tensor type `t` cannot describe the buffer `buf` of `pf`, if it provably
/// cannot.
fn tensor_vs_buffer(pool: &Pool, t: Ty, pf: &PrimFunc, buf: &crate::tir::BufferData) -> Option<String> {
    let TyData::Tensor { shape, dtype, ndim, .. } = pool.ty(t) else { return None };
    if !dtype.is_void() && *dtype != buf.dtype {
        return Some(format!("the dtype is `{dtype}`, the buffer's is `{}`", buf.dtype));
    }
    let rank = buf.shape.len();
    if *ndim >= 0 && usize::try_from(*ndim).ok() != Some(rank) {
        return Some(format!("the rank is {ndim}, the buffer's is {rank}"));
    }
    if let TensorShape::Dims(dims) = shape {
        if dims.len() != rank {
            return Some(format!("the rank is {}, the buffer's is {rank}", dims.len()));
        }
        for (i, (&d, &bd)) in dims.iter().zip(&buf.shape).enumerate() {
            if let (Some(a), Some(b)) = (pool.as_int(d), pf.pool.as_int(bd))
                && a != b
            {
                return Some(format!("dim {i} is {a}, the buffer's is {b}"));
            }
        }
    }
    None
}
