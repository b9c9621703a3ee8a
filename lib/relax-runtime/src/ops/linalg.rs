//! `matmul` (numpy's semantics: 1-d operands are promoted and the added dim removed,
//! batch dims broadcast), accumulating `acc + a * b` from zero in the output dtype,
//! in order of the reduction index, as TOPI's `matmul` stage does.

use relax_ir::op::{OpId, ops};
use relax_ir::{BinOp, DataType};

use super::Kernel;
use super::elementwise::broadcast_shape;
use crate::error::{RunError, RunResult};
use crate::scalar::{Scalar, binary};
use crate::value::{Tensor, Value, numel, row_major_strides, shape_text};

/// The kernel of an op (name without `relax.`).
pub const fn lookup(id: OpId) -> Option<Kernel> {
    Some(match id {
        ops::MATMUL => |k| {
            let a = k.tensor(0)?;
            let b = k.tensor(1)?;
            let dt = k.attr_dtype("out_dtype").unwrap_or(a.dtype);
            Ok(Value::Tensor(matmul(a, b, dt)?))
        },
        _ => return None,
    })
}

/// `a @ b` with operands cast to `out` before multiplying (when it differs from theirs).
pub fn matmul(a: &Tensor, b: &Tensor, out: DataType) -> RunResult<Tensor> {
    if a.shape.is_empty() || b.shape.is_empty() {
        return Err(RunError::new("matmul of a 0-d tensor"));
    }
    let mut sa = a.shape.clone();
    let mut sb = b.shape.clone();
    let a1 = sa.len() == 1;
    let b1 = sb.len() == 1;
    if a1 {
        sa.insert(0, 1);
    }
    if b1 {
        sb.push(1);
    }
    let (n, ka) = (sa[sa.len() - 2], sa[sa.len() - 1]);
    let (kb, m) = (sb[sb.len() - 2], sb[sb.len() - 1]);
    if ka != kb {
        return Err(RunError::new(format!(
            "matmul of shapes {} and {}: reduction dims differ",
            shape_text(&a.shape),
            shape_text(&b.shape)
        )));
    }
    let batch = broadcast_shape(&sa[..sa.len() - 2], &sb[..sb.len() - 2])?;
    let nb = batch.len();
    let ast = super::elementwise::broadcast_strides(&sa[..sa.len() - 2], nb);
    let bst = super::elementwise::broadcast_strides(&sb[..sb.len() - 2], nb);
    let (av, bv) = (a.scalars(), b.scalars());
    let a_mat = (n * ka) as usize;
    let b_mat = (kb * m) as usize;
    let bstr = row_major_strides(&batch);
    let cast = |s: Scalar| if s.dtype() != out { s.cast(out) } else { s };
    let mut res = Vec::with_capacity(numel(&batch) * (n * m) as usize);
    for bi in 0..numel(&batch) {
        let (mut ao, mut bo) = (0usize, 0usize);
        for d in 0..nb {
            let i = (bi as i64 / bstr[d]) % batch[d].max(1);
            ao += (i * ast[d]) as usize;
            bo += (i * bst[d]) as usize;
        }
        for i in 0..n as usize {
            for j in 0..m as usize {
                let mut acc = Scalar::int(out, 0);
                for kk in 0..ka as usize {
                    let x = cast(av[ao * a_mat + i * ka as usize + kk]);
                    let y = cast(bv[bo * b_mat + kk * m as usize + j]);
                    let p = binary(BinOp::Mul, x, y).map_err(RunError::new)?;
                    acc = binary(BinOp::Add, acc, p).map_err(RunError::new)?;
                }
                res.push(acc);
            }
        }
    }
    let mut shape = batch;
    if !a1 {
        shape.push(n);
    }
    if !b1 {
        shape.push(m);
    }
    Ok(Tensor::from_scalars(&shape, out, res))
}
