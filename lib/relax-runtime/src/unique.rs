//! `relax.run.unique(x, sorted, return_index, return_inverse, return_counts[, axis])`, the
//! packed function `legalize-ops` lowers `R.unique` to (TVM's `relax.run.unique`, which
//! calls `numpy.unique` on the flattened tensor).
//!
//! The result is the unique elements, ascending when `sorted` is set and in the order of
//! their first occurrence otherwise, followed by the arrays the flags ask for, in numpy's
//! order: the index of each unique element's first occurrence, the index into the unique
//! elements of every element (`inverse`), and each unique element's count. A
//! 0-dimensional input gives one-element results. `axis` is not supported (TVM's own
//! implementation rejects it too).

use std::cmp::Ordering;

use relax_ir::DataType;

use crate::error::{RunError, RunResult};
use crate::scalar::Scalar;
use crate::value::{Tensor, Value};

/// Runs `relax.run.unique` on its arguments.
pub fn unique(args: &[Value]) -> RunResult<Value> {
    const NAME: &str = "relax.run.unique";
    let Some(Value::Tensor(x)) = args.first() else {
        return Err(RunError::new(format!("`{NAME}`: expected a tensor as the first argument")));
    };
    let flag = |i: usize| match args.get(i) {
        Some(Value::Prim(s)) => Ok(s.as_i64() != 0),
        None => Ok(false),
        Some(other) => {
            Err(RunError::new(format!("`{NAME}`: argument {i} must be an integer, got {}", other.describe())))
        }
    };
    let (sorted, want_index, want_inverse, want_counts) = (flag(1)?, flag(2)?, flag(3)?, flag(4)?);
    if matches!(args.get(5), Some(Value::Prim(_))) {
        return Err(RunError::new(format!("`{NAME}`: `axis` is not supported (TVM's implementation rejects it too)")));
    }
    let values = x.scalars();
    let float = x.dtype.is_float();
    let cmp = |a: &Scalar, b: &Scalar| {
        if float { a.as_f64().total_cmp(&b.as_f64()) } else { a.as_i64().cmp(&b.as_i64()) }
    };
    // Sorting the positions groups equal values, the first occurrence first in each group.
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&i, &j| cmp(&values[i], &values[j]).then(i.cmp(&j)));
    let mut firsts: Vec<usize> = Vec::new();
    let mut group = vec![0usize; values.len()];
    for &i in &order {
        if firsts.last().is_none_or(|&f| cmp(&values[f], &values[i]) != Ordering::Equal) {
            firsts.push(i);
        }
        group[i] = firsts.len() - 1;
    }
    // Unsorted: the groups in order of first occurrence.
    let mut rank: Vec<usize> = (0..firsts.len()).collect();
    if !sorted {
        let mut by_first: Vec<usize> = (0..firsts.len()).collect();
        by_first.sort_unstable_by_key(|&g| firsts[g]);
        for (r, &g) in by_first.iter().enumerate() {
            rank[g] = r;
        }
        firsts.sort_unstable();
    }
    let n = firsts.len() as i64;
    let position = |i: usize| rank[group[i]];
    let uniq = Tensor::from_scalars(&[n], x.dtype, firsts.iter().map(|&f| values[f]));
    let ints = |len: usize, it: &mut dyn Iterator<Item = i64>| {
        Value::Tensor(Tensor::from_scalars(&[len as i64], DataType::INT64, it.map(|v| Scalar::int(DataType::INT64, v))))
    };
    let mut fields = vec![Value::Tensor(uniq)];
    if want_index {
        fields.push(ints(firsts.len(), &mut firsts.iter().map(|&f| f as i64)));
    }
    if want_inverse {
        fields.push(ints(values.len(), &mut (0..values.len()).map(|i| position(i) as i64)));
    }
    if want_counts {
        let mut counts = vec![0i64; firsts.len()];
        for i in 0..values.len() {
            counts[position(i)] += 1;
        }
        fields.push(ints(counts.len(), &mut counts.into_iter()));
    }
    Ok(if fields.len() == 1 { fields.swap_remove(0) } else { Value::tuple(fields) })
}
