//! The fused dequant matmul of the LLM pipeline (schedule-cpu's dequant-matmul rule,
//! `docs/codegen.md`) against the interpreter: `silu(x @ decode(w).T)` for every weight
//! type a GGUF model has (Q4_0, Q8_0, Q4_K, Q6_K through relax-llm's decode kernels,
//! F16 and BF16 through `astype`, F32 through the transpose alone), an odd number of
//! output columns (not a multiple of any vector width) and 1, 3, 5 and 17 rows, both as
//! a constant and as a symbolic row count. After the LLM pipeline
//! (`relax_driver::pipeline::run_llm_pipeline`):
//!
//! * the fused kernel has the rule's schedule (a `_gemv` or `_panel` block; Q4_0 and
//!   Q8_0 at up to 4 constant rows take `quantize-activations`' integer dot products,
//!   a `_dot` block, and their reference is the module after that pass: 8-bit
//!   activations, `tests/q8_matmul.rs`);
//! * the scheduled TIR in the interpreter, which checks every buffer access, gives the
//!   unscheduled module's numbers up to the rounding of a reassociated sum;
//! * the JIT gives the scheduled TIR's bits in the interpreter.

#![cfg(feature = "llvm")]

use relax_driver::lowering::Legalize;
use relax_gguf::GgmlType;
use relax_ir::{DataType, Func, Module};
use relax_runtime::value::shared_bytes;
use relax_runtime::{Interpreter, Tensor, Value};
use relax_transform::quant::{self, QuantType};
use support::rng::Rng;

mod support {
    pub mod rng;
}

/// Output columns: odd, so no vector width divides them.
const N: usize = 37;

/// A weight type: the GGUF type, the parameter's dtype and the reduction length used.
#[derive(Clone, Copy, Debug)]
enum Weight {
    Quant(QuantType),
    Float(GgmlType),
}

impl Weight {
    const ALL: [Weight; 7] = [
        Weight::Quant(QuantType::Q4_0),
        Weight::Quant(QuantType::Q8_0),
        Weight::Quant(QuantType::Q4K),
        Weight::Quant(QuantType::Q6K),
        Weight::Float(GgmlType::F16),
        Weight::Float(GgmlType::BF16),
        Weight::Float(GgmlType::F32),
    ];

    fn ggml(self) -> GgmlType {
        match self {
            Weight::Quant(QuantType::Q8_0) => GgmlType::Q8_0,
            Weight::Quant(QuantType::Q4_0) => GgmlType::Q4_0,
            Weight::Quant(QuantType::Q4K) => GgmlType::Q4_K,
            Weight::Quant(QuantType::Q6K) => GgmlType::Q6_K,
            Weight::Float(t) => t,
        }
    }

    /// The reduction length: two blocks, or 72 floats (a multiple of 8 lanes, not 16).
    fn k(self) -> usize {
        match self {
            Weight::Quant(q) => 2 * q.block_elems(),
            Weight::Float(_) => 72,
        }
    }

    /// The weight parameter's shape and dtype.
    fn param(self) -> (usize, DataType) {
        match self {
            Weight::Quant(q) => (q.row_bytes(self.k()).expect("whole blocks"), DataType::UINT8),
            Weight::Float(GgmlType::F16) => (self.k(), DataType::FLOAT16),
            Weight::Float(GgmlType::BF16) => (self.k(), DataType::BFLOAT16),
            Weight::Float(_) => (self.k(), DataType::FLOAT32),
        }
    }
}

/// `main(x, w) = silu(x @ decode(w).T)` with `rows` rows (`"m"` for a symbolic count).
fn module(w: Weight, rows: &str) -> Module {
    let k = w.k();
    let (cols, dt) = w.param();
    let mut m = Module::new();
    let weight = match w {
        Weight::Quant(q) => {
            let name = quant::kernel_name(q, k);
            m.add(name.clone(), Func::Prim(Box::new(quant::kernel(q, k))));
            format!("R.call_tir(cls.{name}, (w,), out_sinfo=R.Tensor(({N}, {k}), dtype=\"float32\"))")
        }
        Weight::Float(GgmlType::F32) => "w".to_string(),
        Weight::Float(_) => "R.astype(w, \"float32\")".to_string(),
    };
    let mut text = relax_ir::printer::print_module(&m);
    if m.globals.is_empty() {
        text = "@I.ir_module\nclass Module:\n".to_string();
    }
    let sym = if rows == "m" { "        m = T.int64()\n" } else { "" };
    let rows_t = if rows == "m" { "\"m\"".to_string() } else { rows.to_string() };
    text.push_str(&format!(
        r#"
    @R.function
    def main(x: R.Tensor(({rows_t}, {k}), dtype="float32"), w: R.Tensor(({N}, {cols}), dtype="{dt}")) -> R.Tensor(({rows_t}, {N}), dtype="float32"):
{sym}        cls = Module
        with R.dataflow():
            d = {weight}
            y = R.matmul(x, R.permute_dims(d, axes=[1, 0]))
            z = R.nn.silu(y)
            R.output(z)
        return z
"#
    ));
    relax_parser::parse_module(&text).unwrap_or_else(|e| panic!("{e:?}\n{text}"))
}

fn floats(v: &Value) -> Vec<f32> {
    let Value::Tensor(t) = v else { panic!("a tensor, got {}", v.describe()) };
    assert_eq!(t.dtype, DataType::FLOAT32);
    t.bytes().chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

fn call(m: &Module, native: Option<&dyn relax_runtime::native::NativeKernels>, args: &[Value]) -> Vec<f32> {
    let mut it = Interpreter::new(m).with_lowering(&Legalize);
    it.native = native;
    let g = m.lookup("main").expect("main");
    let out = it.call_global(g, args.to_vec(), relax_ir::Span::NONE).unwrap_or_else(|e| panic!("{}", e.message));
    floats(&out)
}

/// The inputs: `rows` activation rows and a weight quantized from random floats.
fn inputs(w: Weight, rows: usize, rng: &mut Rng) -> Vec<Value> {
    let k = w.k();
    let x: Vec<u8> = (0..rows * k).flat_map(|_| rng.uniform().to_le_bytes()).collect();
    let values: Vec<f32> = (0..N * k).map(|_| rng.uniform()).collect();
    let bytes = relax_gguf::quantize(w.ggml(), &values).expect("quantizes");
    let (cols, dt) = w.param();
    vec![
        Value::Tensor(Tensor::view(&shared_bytes(x), 0, &[rows as i64, k as i64], DataType::FLOAT32)),
        Value::Tensor(Tensor::view(&shared_bytes(bytes), 0, &[N as i64, cols as i64], dt)),
    ]
}

/// Compares the scheduled module (interpreter and JIT) with the reference on `rows`.
fn compare(what: &str, w: Weight, reference: &Module, sched: &Module, rows: usize, rng: &mut Rng) -> Option<String> {
    let opts = relax_codegen::llvm::Options::default();
    let args = inputs(w, rows, rng);
    let want = call(reference, None, &args);
    let got = call(sched, None, &args);
    let jit = relax_runtime::jit::compile(sched, &opts, |jk| call(sched, Some(jk), &args)).expect("compiles");
    assert_eq!(want.len(), rows * N, "{what}");
    for (i, ((a, b), c)) in want.iter().zip(&got).zip(&jit).enumerate() {
        // Sums of `k` products of values in [-1, 1] (times small scales), reassociated:
        // a few ulps of `k`.
        if (a - b).abs() > 1e-5 * (1.0 + a.abs()) * w.k() as f32 {
            return Some(format!("{what}: element {i}: {b:e} (scheduled) where the interpreter gives {a:e}"));
        }
        if b.to_bits() != c.to_bits() {
            return Some(format!("{what}: element {i}: {c:e} (JIT) where the scheduled TIR gives {b:e}"));
        }
    }
    None
}

/// Runs `quantize-activations` on `m`.
fn quantize_activations(m: &mut Module) {
    let Ok(relax_pass::PassKind::Module(p)) =
        relax_transform::quantize_activations::INFO.create(&relax_pass::PassOptions::default())
    else {
        panic!("a module pass")
    };
    p.run(m, &mut relax_pass::PassContext::default()).expect("quantize-activations runs");
}

#[test]
fn fused_dequant_matmul_matches_the_interpreter() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut failures = Vec::new();
    let host = relax_driver::pipeline::vector_bits(None);
    let mut widths = vec![128, 256, host];
    widths.dedup();
    for bits in widths {
        for w in Weight::ALL {
            // Constant row counts (1 and 3 take the GEMV) and one symbolic module for all.
            let mut cases: Vec<(String, Vec<usize>)> =
                [1, 3, 5, 17].iter().map(|r| (r.to_string(), vec![*r])).collect();
            cases.push(("m".to_string(), vec![1, 3, 5, 17]));
            for (rows_text, counts) in cases {
                let what = format!("{w:?}, rows {rows_text}, vector-bits={bits}");
                let source = module(w, &rows_text);
                let q8 = matches!(w, Weight::Quant(QuantType::Q4_0 | QuantType::Q8_0))
                    && rows_text.parse::<usize>().is_ok_and(|r| r <= 4);
                let mut reference = source.clone();
                if q8 {
                    quantize_activations(&mut reference);
                }
                relax_driver::pipeline::lower_tir(&mut reference).expect("lowers");
                let mut sched = source;
                relax_driver::pipeline::run_llm_pipeline(&mut sched, bits).expect("the LLM pipeline");
                let text = relax_ir::printer::print_module(&sched);
                let gemv = rows_text.parse::<usize>().is_ok_and(|r| r <= 4);
                let rule = if q8 {
                    "_dot\")"
                } else if gemv {
                    "_gemv\")"
                } else {
                    "_panel\")"
                };
                if !text.contains(rule) {
                    failures.push(format!("{what}: no {rule} block in\n{text}"));
                    continue;
                }
                relax_driver::pipeline::lower_tir(&mut sched).expect("lowers");
                for rows in counts {
                    if let Some(e) = compare(&format!("{what} = {rows}"), w, &reference, &sched, rows, &mut rng) {
                        failures.push(e);
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}
