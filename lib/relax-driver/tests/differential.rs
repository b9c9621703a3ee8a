//! The differential test: every module of `test/Run/` and `test/Transform/legalize-ops/`
//! (each `# -----` chunk that parses) gives the same numbers
//!
//! 1. un-legalized, through the reference kernels,
//! 2. un-legalized, through the legalization of each op call with its static shapes, and
//! 3. after `legalize-ops` (symbolic PrimFuncs), through the TIR interpreter,
//!
//! (the TIR of both modules lowered, as the tools lower it before running)
//! with the same seeded inputs (symbolic variables set to small distinct values).
//! Integers and bools must be equal; floats within `1e-5` relative (`+1e-6` absolute)
//! for float32/float64, and within one unit in the last place for float16/bfloat16.
//! It also checks that every op with both a reference kernel and a legalization ran in at
//! least one compared module.

use std::collections::BTreeSet;

use relax_driver::lowering::Legalize;
use relax_ir::{ExprData, Module, TypeCode, tir_lower};
use relax_runtime::{Interpreter, Options, Scalar, Value, inputs};
use support::interp::{chunks, files, fresh, seeded_syms};

mod support {
    pub mod interp;
}

fn ulp_close(a: Scalar, b: Scalar) -> bool {
    let (x, y) = (a.as_f64(), b.as_f64());
    if x.is_nan() && y.is_nan() || x == y {
        return true;
    }
    let t = a.dtype();
    match (t.code, t.bits) {
        (TypeCode::Float, 16) | (TypeCode::BFloat, 16) => {
            // One unit in the last place of the type at this magnitude.
            let mant = if t.code == TypeCode::BFloat { 7 } else { 10 };
            let e = x.abs().max(y.abs()).max(f64::MIN_POSITIVE).log2().floor();
            (x - y).abs() <= 2f64.powf(e - mant as f64) * 1.0001
        }
        _ => (x - y).abs() <= 1e-5 * y.abs().max(x.abs()) + 1e-6,
    }
}

fn compare(a: &Value, b: &Value) -> Result<(), String> {
    support::interp::compare(a, b, "result", ulp_close)
}

fn ops_of(m: &Module, out: &mut BTreeSet<String>) {
    for (_, g) in m.live() {
        if let relax_ir::Func::Relax(f) = &g.func {
            for (_, e) in f.exprs.iter() {
                if let ExprData::Call(c) = e
                    && let ExprData::Op(op) = &f.exprs[c.callee]
                {
                    out.insert(op.name().to_string());
                }
            }
        }
    }
}

#[test]
fn legalized_modules_give_the_same_numbers() {
    let mut compared = 0;
    let mut skipped = Vec::new();
    let mut failures = Vec::new();
    let mut covered = BTreeSet::new();
    for path in files() {
        let text = std::fs::read_to_string(&path).expect("readable");
        for (ci, chunk) in chunks(&text).iter().enumerate() {
            let Ok(mut m) = relax_parser::parse_module(chunk) else { continue };
            let mut legal = m.clone();
            relax_transform::legalize::legalize_module(&mut legal);
            // The interpreter runs lowered TIR.
            if let Err(e) = tir_lower::lower_module(&mut m).and_then(|_| tir_lower::lower_module(&mut legal)) {
                failures.push(format!("{}#{ci}: lowering failed: {e:?}", path.display()));
                continue;
            }
            let funcs: Vec<_> = m
                .live()
                .filter(|(_, g)| matches!(g.func, relax_ir::Func::Relax(_)))
                .map(|(g, d)| (g, d.name.clone()))
                .collect();
            for (g, name) in funcs {
                let f = m.relax(g).expect("relax");
                // Symbolic variables: 2, 3, 4, ... by name order of the pool.
                let syms = seeded_syms(f);
                let what = format!("{}#{ci} {name}", path.file_name().unwrap().to_string_lossy());
                // Distinct values first; all equal when the function needs that.
                let same: Vec<(String, i64)> = syms.iter().map(|(n, _)| (n.clone(), 3)).collect();
                let mut attempt = Err(String::new());
                for s in [&syms, &same] {
                    attempt = inputs::make_inputs(&m, g, &[], s, Some(1)).map_err(|e| e.message).and_then(|args| {
                        let r = Interpreter::new(&m).with_lowering(&Legalize).call_global(
                            g,
                            args.iter().map(fresh).collect(),
                            relax_ir::Span::NONE,
                        );
                        r.map(|v| (args, v)).map_err(|e| e.message)
                    });
                    if attempt.is_ok() {
                        break;
                    }
                }
                let (args, reference) = match attempt {
                    Ok(x) => x,
                    Err(e) => {
                        skipped.push(format!("{what}: {e}"));
                        continue;
                    }
                };
                let mut ops = BTreeSet::new();
                ops_of(&m, &mut ops);
                let no_kernels = Interpreter::with_options(&m, Options { kernels: false, ..Default::default() })
                    .with_lowering(&Legalize);
                match no_kernels.call_global(g, args.iter().map(fresh).collect(), relax_ir::Span::NONE) {
                    Ok(v) => {
                        if let Err(e) = compare(&reference, &v) {
                            failures.push(format!("{what}: kernels vs static legalization: {e}"));
                        }
                    }
                    Err(e) => failures.push(format!("{what}: static legalization failed: {}", e.message)),
                }
                let lg = legal.lookup(&name).expect("same functions");
                match Interpreter::new(&legal).with_lowering(&Legalize).call_global(
                    lg,
                    args.iter().map(fresh).collect(),
                    relax_ir::Span::NONE,
                ) {
                    Ok(v) => {
                        if let Err(e) = compare(&reference, &v) {
                            failures.push(format!("{what}: kernels vs legalize-ops: {e}"));
                        }
                    }
                    Err(e) => failures.push(format!("{what}: the legalized module failed: {}", e.message)),
                }
                covered.extend(ops);
                compared += 1;
            }
        }
    }
    eprintln!("differential: {compared} functions compared, {} skipped:", skipped.len());
    for s in &skipped {
        eprintln!("  skipped {s}");
    }
    let missing: Vec<&str> = (0..relax_ir::op::OP_COUNT)
        .map(|i| relax_ir::OpId(i as u16))
        .filter(|&id| {
            relax_runtime::ops::kernel(id).is_some()
                && relax_transform::legalize::legalization(id).is_some()
                && !covered.contains(id.name())
        })
        .map(relax_ir::OpId::name)
        .collect();
    assert!(failures.is_empty(), "{} mismatches:\n{}", failures.len(), failures.join("\n"));
    assert!(missing.is_empty(), "ops with a kernel that no compared module runs: {missing:?}");
    assert!(compared > 100, "only {compared} functions compared");
}
