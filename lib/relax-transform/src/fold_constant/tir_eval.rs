//! The evaluator `fold-constant` uses unless it is given another: the TIR interpreter of
//! `relax-tir-eval`, which runs a PrimFunc on the constants' bytes (a lowered copy of it,
//! `relax_ir::tir_lower`, when it has blocks: the interpreter runs lowered TIR only).

use relax_ir::{ConstData, ConstPayload, DataType, Func, Global, Module, tir_lower};
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
        // The interpreter runs lowered TIR: a kernel with blocks runs as a lowered copy.
        let f = m.prim_func(func)?;
        if tir_lower::has_blocks(f) {
            let name = &m.globals[func].name;
            let mut lowered = f.clone();
            tir_lower::lower_prim_func(name, &mut lowered).ok()?;
            let mut one = Module::new();
            let g = one.add(name.clone(), Func::Prim(Box::new(lowered)));
            call_prim_func(&one, g, &values).ok()?;
        } else {
            call_prim_func(m, func, &values).ok()?;
        }
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
