//! `multinomial_from_uniform`: the index each row samples from its distribution, computed
//! as TVM 0.25's CPU path does (`relax.backend.DispatchSampling`; its `LegalizeOps` leaves
//! the op alone).
//!
//! That path takes the running sum of `prob` along the vocabulary (`cumsum` in `prob`'s
//! dtype, sequential, each step rounded to the dtype) and runs the `get_sample_index`
//! PrimFunc: for output row `i`, with `u = uniform_sample[i, 0]` and the distribution
//! `c = cumsum[sample_indices[i, 0]]`, every `j` (in order) where `u < c[j]` or `j` is
//! the last index writes `j` when `j == 0` or `u >= c[j - 1]`. With a non-decreasing `c`
//! this is the first `j` whose running sum exceeds `u`, or the last index when none does.
//! A row no `j` writes (a NaN sample) is left as the output's initial value, here 0
//! (TVM leaves the memory uninitialized). A sample index outside `prob` is an error.

use super::{Kernel, KernelArgs};
use crate::error::{RunError, RunResult};
use crate::scalar::{Scalar, binary};
use crate::value::{Tensor, Value, shape_text};
use relax_ir::op::{OpId, ops};
use relax_ir::{BinOp, DataType};

/// The kernel of an op (name without `relax.`).
pub const fn lookup(id: OpId) -> Option<Kernel> {
    Some(match id {
        ops::MULTINOMIAL_FROM_UNIFORM => multinomial_from_uniform,
        _ => return None,
    })
}

fn multinomial_from_uniform(k: &KernelArgs<'_>) -> RunResult<Value> {
    let (prob, usample, indices) = (k.tensor(0)?, k.tensor(1)?, k.tensor(2)?);
    let dtype = k.attr_dtype("dtype").or(k.out_dtype()).unwrap_or(DataType::INT64);
    if prob.shape.len() != 2 {
        return Err(RunError::new(format!("`prob` must be 2-d, but has shape {}", shape_text(&prob.shape))));
    }
    let n = usample.shape.first().copied().unwrap_or(0);
    for (t, what) in [(usample, "uniform_sample"), (indices, "sample_indices")] {
        if t.shape != [n, 1] {
            return Err(RunError::new(format!(
                "`{what}` must have shape (N, 1) with the batch of `uniform_sample`, but has shape {}",
                shape_text(&t.shape)
            )));
        }
    }
    let (batch, vocab) = (prob.shape[0], prob.shape[1] as usize);
    let pdt = prob.dtype;
    // The running sums, row by row, in prob's dtype.
    let p = prob.scalars();
    let mut cum = Vec::with_capacity(p.len());
    for row in p.chunks(vocab.max(1)) {
        let mut acc = Scalar::int(pdt, 0);
        for &x in row {
            acc = binary(BinOp::Add, acc, x).map_err(RunError::new)?;
            cum.push(acc.as_f64());
        }
    }
    let mut out = Vec::with_capacity(n as usize);
    for i in 0..n as usize {
        let u = usample.get(i).as_f64();
        let row = indices.get(i).as_i64();
        if row < 0 || row >= batch {
            return Err(RunError::new(format!(
                "sample index {row} (row {i} of `sample_indices`) is outside the {batch} distributions of `prob`"
            )));
        }
        let c = &cum[row as usize * vocab..(row as usize + 1) * vocab];
        let mut index = 0;
        for j in 0..vocab {
            if (u < c[j] || j + 1 == vocab) && (j == 0 || u >= c[j - 1]) {
                index = j as i64;
            }
        }
        out.push(Scalar::int(dtype, index));
    }
    Ok(Value::Tensor(Tensor::from_scalars(&[n, 1], dtype, out)))
}
