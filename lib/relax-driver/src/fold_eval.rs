//! The evaluator `fold-constant` uses: the reference interpreter's TIR interpreter
//! (`relax_runtime::tir::call_prim_func`), registered with
//! [`relax_transform::fold_constant::set_evaluator`] before a tool runs passes.
//!
//! relax-transform cannot call the interpreter itself (the interpreter depends on it),
//! so the drivers, which depend on both, connect them.

use std::sync::{Arc, Once};

use relax_ir::{ConstData, ConstPayload, DataType, Global, Module};
use relax_runtime::scalar::Scalar;
use relax_runtime::tir::call_prim_func;
use relax_runtime::value::{Tensor, Value};
use relax_transform::fold_constant::{ConstEvaluator, set_evaluator};

/// Runs kernels with the TIR interpreter.
struct Interpreter;

impl ConstEvaluator for Interpreter {
    fn call_tir(
        &self,
        m: &Module,
        func: Global,
        args: &[&ConstData],
        scalars: &[i64],
        outputs: &[(Vec<i64>, DataType)],
    ) -> Option<Vec<ConstData>> {
        let mut values = Vec::with_capacity(args.len() + outputs.len() + scalars.len());
        for a in args {
            let (ConstPayload::Data(bytes), Some(shape)) = (&a.payload, &a.shape) else { return None };
            let t = Tensor::zeros(shape, a.dtype);
            {
                let mut data = t.data.borrow_mut();
                if data.len() != bytes.len() {
                    return None;
                }
                data.copy_from_slice(bytes);
            }
            values.push(Value::Tensor(t));
        }
        let outs: Vec<Tensor> = outputs.iter().map(|(shape, dtype)| Tensor::zeros(shape, *dtype)).collect();
        values.extend(outs.iter().cloned().map(Value::Tensor));
        values.extend(scalars.iter().map(|&s| Value::Prim(Scalar::int(DataType::INT64, s))));
        call_prim_func(m, func, &values).ok()?;
        Some(
            outs.into_iter()
                .zip(outputs)
                .map(|(t, (shape, dtype))| ConstData {
                    dtype: *dtype,
                    shape: Some(shape.clone()),
                    payload: ConstPayload::Data(t.bytes()),
                })
                .collect(),
        )
    }
}

/// Registers the interpreter as `fold-constant`'s evaluator (once per process).
pub fn install() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| set_evaluator(Arc::new(Interpreter)));
}
