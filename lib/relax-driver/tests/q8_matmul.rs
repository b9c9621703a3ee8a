//! `quantize-activations` (matmuls with a block-quantized weight on activations
//! quantized to 8 bits, `docs/passes.md`) and schedule-cpu's int-dot rule, end to end:
//! `(silu(x @ decode(w).T), x @ decode(v).T)` with odd output counts (37 and 5), rows of
//! 512 (two K-quant super-blocks), 1 to 4 rows, every weight type, through the LLM
//! pipeline (`relax_driver::pipeline::run_llm_pipeline`; for Q4_K and Q6_K, which it
//! leaves float by default, after `quantize-activations{k-quants=true}`), checking that
//!
//! * both matmuls were rewritten (one quantization of `x`, `_dot` blocks);
//! * the kernels compute the product of the dequantized weights (`relax_gguf`'s
//!   dequantizers) with the activations rounded as ggml's `quantize_row_q8_0` rounds
//!   them (an independent Rust implementation), in float64, within 1e-5 of the largest
//!   output;
//! * for Q4_0 and Q8_0, they give llama.cpp's own numbers: its AVX2 dot product's 8
//!   lanes of 4 products (written from ggml, not from the kernels) gives the
//!   interpreter's bits on the unscheduled kernels (a few ulps where `silu` follows);
//! * the scheduled TIR gives those numbers in the interpreter, and the same bits in
//!   the JIT, with VNNI (`vpdpbusd`) and without (`--mattr=-avxvnni,-avx512vnni`: the
//!   code generator's generic vectors);
//! * the result is within the documented tolerance of the float32 matmul.

#![cfg(feature = "llvm")]

use relax_driver::lowering::Legalize;
use relax_gguf::GgmlType;
use relax_gguf::quant::{f16_to_f32, f32_to_f16};
use relax_ir::{DataType, Func, Module};
use relax_runtime::value::shared_bytes;
use relax_runtime::{Interpreter, Tensor, Value};
use relax_transform::quant::{self, QuantType};
use support::rng::Rng;

mod support {
    pub mod rng;
}

const N: usize = 37;
const N2: usize = 5;
const K: usize = 512;

fn module(ty: QuantType, rows: usize) -> Module {
    let rb = ty.row_bytes(K).expect("whole blocks");
    let mut m = Module::new();
    let name = quant::kernel_name(ty, K);
    m.add(name.clone(), Func::Prim(Box::new(quant::kernel(ty, K))));
    let mut text = relax_ir::printer::print_module(&m);
    text.push_str(&format!(
        r#"
    @R.function
    def main(x: R.Tensor(({rows}, {K}), dtype="float32"), w: R.Tensor(({N}, {rb}), dtype="uint8"), v: R.Tensor(({N2}, {rb}), dtype="uint8")) -> R.Tuple(R.Tensor(({rows}, {N}), dtype="float32"), R.Tensor(({rows}, {N2}), dtype="float32")):
        cls = Module
        with R.dataflow():
            d = R.call_tir(cls.{name}, (w,), out_sinfo=R.Tensor(({N}, {K}), dtype="float32"))
            y = R.matmul(x, R.permute_dims(d, axes=[1, 0]))
            z = R.nn.silu(y)
            e = R.call_tir(cls.{name}, (v,), out_sinfo=R.Tensor(({N2}, {K}), dtype="float32"))
            u = R.matmul(x, R.permute_dims(e, axes=[1, 0]))
            R.output(z, u)
        return (z, u)
"#
    ));
    relax_parser::parse_module(&text).unwrap_or_else(|e| panic!("{e:?}\n{text}"))
}

fn ggml(ty: QuantType) -> GgmlType {
    match ty {
        QuantType::Q4_0 => GgmlType::Q4_0,
        QuantType::Q8_0 => GgmlType::Q8_0,
        QuantType::Q4K => GgmlType::Q4_K,
        QuantType::Q6K => GgmlType::Q6_K,
    }
}

fn floats(v: &Value) -> Vec<f32> {
    let Value::Tensor(t) = v else { panic!("a tensor, got {}", v.describe()) };
    t.bytes().chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

/// Both outputs, flattened.
fn call(m: &Module, native: Option<&dyn relax_runtime::native::NativeKernels>, args: &[Value]) -> Vec<f32> {
    let mut it = Interpreter::new(m).with_lowering(&Legalize);
    it.native = native;
    let g = m.lookup("main").expect("main");
    let out = it.call_global(g, args.to_vec(), relax_ir::Span::NONE).unwrap_or_else(|e| panic!("{}", e.message));
    let Value::Tuple(items) = out else { panic!("a tuple") };
    items.iter().flat_map(floats).collect()
}

fn tensor(bytes: Vec<u8>, shape: &[usize], dt: DataType) -> Value {
    let shape: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
    Value::Tensor(Tensor::view(&shared_bytes(bytes), 0, &shape, dt))
}

/// ggml's `quantize_row_q8_0` as its AVX code computes it: per block of 32, the values
/// times `127 / amax` rounded half to even, and the scale `amax / 127` as a half float.
fn quantize_row(x: &[f32]) -> (Vec<i8>, Vec<f32>) {
    let mut q = Vec::new();
    let mut d = Vec::new();
    for blk in x.chunks(32) {
        let amax = blk.iter().fold(0f32, |m, v| m.max(v.abs()));
        let id = if amax != 0.0 { 127.0 / amax } else { 0.0 };
        q.extend(blk.iter().map(|v| (v * id).round_ties_even() as i8));
        d.push(f16_to_f32(f32_to_f16(amax / 127.0)));
    }
    (q, d)
}

/// The signed weights and scales of one packed row.
fn weight_row(ty: QuantType, row: &[u8]) -> (Vec<i32>, Vec<f32>) {
    let mut w = Vec::new();
    let mut d = Vec::new();
    for blk in row.chunks(ty.block_bytes()) {
        d.push(f16_to_f32(u16::from_le_bytes([blk[0], blk[1]])));
        match ty {
            QuantType::Q4_0 => {
                w.extend(blk[2..].iter().map(|&b| i32::from(b & 15) - 8));
                w.extend(blk[2..].iter().map(|&b| i32::from(b >> 4) - 8));
            }
            _ => w.extend(blk[2..].iter().map(|&b| i32::from(b as i8))),
        }
    }
    (w, d)
}

/// llama.cpp's AVX2 dot product of a weight row and a quantized activation row: per
/// block, 8 lanes of 4 integer products, each scaled by `d_w · d_x` into its lane's
/// float sum; the lanes summed at the end (in order, where ggml sums them as a tree).
fn dot(w: &(Vec<i32>, Vec<f32>), x: &(Vec<i8>, Vec<f32>)) -> f32 {
    let mut lanes = [0f32; 8];
    for b in 0..w.1.len() {
        let scale = w.1[b] * x.1[b];
        for (l, lane) in lanes.iter_mut().enumerate() {
            let sumi: i32 = (0..4).map(|t| w.0[b * 32 + 4 * l + t] * i32::from(x.0[b * 32 + 4 * l + t])).sum();
            *lane += sumi as f32 * scale;
        }
    }
    lanes.iter().fold(0.0, |s, &l| s + l)
}

fn silu(v: f32) -> f32 {
    v * (1.0 / (1.0 + (-v).exp()))
}

/// Runs `quantize-activations` on `m`, with `k-quants=true` (off by default in the LLM
/// pipeline) so that every type is rewritten.
fn quantize_activations(m: &mut Module) {
    let opts = relax_pass::PassOptions(vec![("k-quants".to_string(), "true".to_string())]);
    let Ok(relax_pass::PassKind::Module(p)) = relax_transform::quantize_activations::INFO.create(&opts) else {
        panic!("a module pass")
    };
    assert_eq!(p.run(m, &mut relax_pass::PassContext::default()), Ok(true), "rewrites");
}

#[test]
fn q8_matmul_gives_llama_cpp_numbers_in_both_engines() {
    let mut rng = Rng(0x51_7cc1_b727_220a);
    let opts = relax_codegen::llvm::Options::default();
    let host = relax_driver::pipeline::vector_bits(None);
    let mut failures = Vec::new();
    for ty in QuantType::ALL {
        for rows in 1..=4 {
            let what = format!("{ty}, {rows} rows");
            let source = module(ty, rows);
            let mut float_ref = source.clone();
            relax_driver::pipeline::lower_tir(&mut float_ref).expect("lowers");
            let mut reference = source.clone();
            quantize_activations(&mut reference);
            relax_driver::pipeline::lower_tir(&mut reference).expect("lowers");
            let mut sched = source;
            if matches!(ty, QuantType::Q4K | QuantType::Q6K) {
                quantize_activations(&mut sched);
            }
            relax_driver::pipeline::run_llm_pipeline(&mut sched, host).expect("the LLM pipeline");
            let text = relax_ir::printer::print_module(&sched);
            assert_eq!(text.matches("_dot\")").count(), 2, "{what}: two int-dot nests in\n{text}");
            assert_eq!(text.matches("cls.quantize_q8_512(").count(), 1, "{what}: one quantization in\n{text}");
            relax_driver::pipeline::lower_tir(&mut sched).expect("lowers");

            // Activations with a zero block and an outlier, and random weights.
            let mut x: Vec<f32> = (0..rows * K).map(|_| rng.normal(2.0)).collect();
            x[..32].iter_mut().for_each(|v| *v = 0.0);
            x[K - 1] = 40.0;
            let pack = |n: usize, rng: &mut Rng| {
                let vals: Vec<f32> = (0..n * K).map(|_| rng.uniform()).collect();
                relax_gguf::quantize(ggml(ty), &vals).expect("quantizes")
            };
            let (w, v) = (pack(N, &mut rng), pack(N2, &mut rng));
            let rb = ty.row_bytes(K).unwrap();
            let xb: Vec<u8> = x.iter().flat_map(|f| f.to_le_bytes()).collect();
            let args = vec![
                tensor(xb, &[rows, K], DataType::FLOAT32),
                tensor(w.clone(), &[N, rb], DataType::UINT8),
                tensor(v.clone(), &[N2, rb], DataType::UINT8),
            ];
            // llama.cpp's numbers (Q4_0, Q8_0), in the output order (z then u).
            let xq: Vec<_> = x.chunks(K).map(quantize_row).collect();
            let mut want = Vec::new();
            for (packed, n, act) in [(&w, N, true), (&v, N2, false)] {
                if !matches!(ty, QuantType::Q4_0 | QuantType::Q8_0) {
                    break;
                }
                for xr in &xq {
                    for row in packed.chunks(rb).take(n) {
                        let y = dot(&weight_row(ty, row), xr);
                        want.push(if act { silu(y) } else { y });
                    }
                }
            }
            // The float64 product with the rounded activations.
            let deq =
                |packed: &[u8], n: usize| relax_gguf::dequantize_to_vec(ggml(ty), packed, n * K).expect("dequantizes");
            let mut want64 = Vec::new();
            for (packed, n, act) in [(&w, N, true), (&v, N2, false)] {
                let wf = deq(packed, n);
                for (q, d) in &xq {
                    for row in wf.chunks(K) {
                        let y: f64 = (0..K).map(|i| f64::from(row[i]) * f64::from(q[i]) * f64::from(d[i / 32])).sum();
                        want64.push(if act { y / (1.0 + (-y).exp()) } else { y });
                    }
                }
            }
            let got_ref = call(&reference, None, &args);
            let got = call(&sched, None, &args);
            let jit = relax_runtime::jit::compile(&sched, &opts, |jk| call(&sched, Some(jk), &args)).expect("compiles");
            // Without VNNI the dot-product loops take the code generator's generic vectors.
            let plain = relax_codegen::llvm::Options { features: Some("-avxvnni,-avx512vnni".into()), ..opts.clone() };
            let jit_plain =
                relax_runtime::jit::compile(&sched, &plain, |jk| call(&sched, Some(jk), &args)).expect("compiles");
            let floats = call(&float_ref, None, &args);
            let scale = floats.iter().fold(0f32, |m, v| m.max(v.abs()));
            let mut worst = 0f32;
            // `silu` is an op in the unscheduled module and an epilogue in the scheduled
            // one, and the Rust loop's `exp` is Rust's: allow a few ulps there; the
            // matmuls themselves must agree to the bit (`u`, the second output).
            let close = |a: f32, b: f32| (a - b).abs() <= 4.0 * f32::EPSILON * a.abs().max(b.abs());
            let zs = rows * N;
            let scale64 = want64.iter().fold(0f64, |m, v| m.max(v.abs()));
            for (i, &r) in got_ref.iter().enumerate() {
                if (f64::from(r) - want64[i]).abs() > 1e-5 * scale64 {
                    failures.push(format!("{what}: element {i}: the kernels give {r:e}, float64 {:e}", want64[i]));
                    break;
                }
                if !matches!(ty, QuantType::Q4_0 | QuantType::Q8_0) {
                    if got[i].to_bits() != jit[i].to_bits()
                        || got[i].to_bits() != jit_plain[i].to_bits()
                        || (got[i] - r).abs() > 4.0 * f32::EPSILON * r.abs()
                    {
                        failures.push(format!(
                            "{what}: element {i}: unscheduled {r:e}, scheduled {:e}, JIT {:e}",
                            got[i], jit[i]
                        ));
                        break;
                    }
                    worst = worst.max((r - floats[i]).abs() / scale);
                    continue;
                }
                let exact = i >= zs;
                let same = |a: f32, b: f32| if exact { a.to_bits() == b.to_bits() } else { close(a, b) };
                if !same(r, want[i]) {
                    failures
                        .push(format!("{what}: element {i}: the kernels give {r:e}, llama.cpp's loop {:e}", want[i]));
                    break;
                }
                if !same(got[i], r)
                    || jit[i].to_bits() != got[i].to_bits()
                    || jit_plain[i].to_bits() != got[i].to_bits()
                {
                    failures.push(format!(
                        "{what}: element {i}: unscheduled {r:e}, scheduled {:e}, JIT {:e}",
                        got[i], jit[i]
                    ));
                    break;
                }
                worst = worst.max((r - floats[i]).abs() / scale);
            }
            eprintln!("{what}: largest difference from float32, relative to the largest output: {worst:.2e}");
            if !(worst > 0.0 && worst < 0.05) {
                failures.push(format!("{what}: {worst:e} from the float32 matmul (tolerance 0.05)"));
            }
        }
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}
