//! The evaluator `fold-constant` uses unless it is given another: the TIR interpreter of
//! `relax-tir-eval`, which runs a PrimFunc on the constants' bytes.

use relax_ir::{ConstData, ConstPayload, DataType, Global, Module};
use relax_tir_eval::scalar::Scalar;
use relax_tir_eval::tir::call_prim_func;
use relax_tir_eval::value::{Tensor, Value};

use super::ConstEvaluator;

/// Runs kernels with the TIR interpreter.
#[derive(Clone, Copy, Debug, Default)]
pub struct TirInterpreter;

impl ConstEvaluator for TirInterpreter {
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
