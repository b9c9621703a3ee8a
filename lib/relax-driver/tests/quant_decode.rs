//! The decode kernels of `relax_transform::quant` against ggml's dequantization
//! (`relax_gguf::dequantize`, itself checked bit for bit against ggml's C code): on random
//! blocks of every type, the kernel called from a Relax function gives the same float32
//! bits in the interpreter, in the JIT, and in the JIT after `schedule-cpu` (the default
//! pipeline's schedule), NaN equal to NaN.
//!
//! Two kinds of blocks: random bytes (scales of every f16 class: subnormal, infinite,
//! NaN) and blocks that `relax_gguf::quantize` made of random floats (the scales real
//! weights have).

use relax_gguf::GgmlType;
use relax_ir::{DataType, Func, Module};
use relax_runtime::value::shared_bytes;
use relax_runtime::{Interpreter, Tensor, Value};
use relax_transform::quant::{self, QuantType};
use support::rng::Rng;

mod support {
    pub mod rng;
}

const ROWS: usize = 48;
const BLOCKS_PER_ROW: usize = 3;

fn ggml(ty: QuantType) -> GgmlType {
    match ty {
        QuantType::Q8_0 => GgmlType::Q8_0,
        QuantType::Q4_0 => GgmlType::Q4_0,
        QuantType::Q4K => GgmlType::Q4_K,
        QuantType::Q6K => GgmlType::Q6_K,
    }
}

/// The module: the kernel and `main(w) = call_tir(kernel, (w,))`.
fn module(ty: QuantType, k: usize) -> Module {
    let name = quant::kernel_name(ty, k);
    let mut m = Module::new();
    m.add(name.clone(), Func::Prim(Box::new(quant::kernel(ty, k))));
    let mut text = relax_ir::printer::print_module(&m);
    let rb = ty.row_bytes(k).expect("whole blocks");
    text.push_str(&format!(
        r#"
    @R.function
    def main(w: R.Tensor(({ROWS}, {rb}), dtype="uint8")) -> R.Tensor(({ROWS}, {k}), dtype="float32"):
        cls = Module
        y = R.call_tir(cls.{name}, (w,), out_sinfo=R.Tensor(({ROWS}, {k}), dtype="float32"))
        return y
"#
    ));
    relax_parser::parse_module(&text).unwrap_or_else(|e| panic!("{e:?}\n{text}"))
}

/// The blocks of both kinds, `ROWS` rows each.
fn inputs(ty: QuantType, k: usize, rng: &mut Rng) -> Vec<Vec<u8>> {
    let rb = ty.row_bytes(k).expect("whole blocks");
    let random: Vec<u8> = (0..ROWS * rb).map(|_| rng.byte()).collect();
    let mut floats = Vec::with_capacity(ROWS * k);
    for r in 0..ROWS {
        let scale = (2f32).powi((r % 9) as i32 - 4);
        floats.extend((0..k).map(|_| rng.normal(scale)));
    }
    let quantized = relax_gguf::quantize(ggml(ty), &floats).expect("quantizes");
    vec![random, quantized]
}

fn bits_equal(a: &[f32], b: &[f32]) -> Result<(), String> {
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        if x.to_bits() != y.to_bits() && !(x.is_nan() && y.is_nan()) {
            return Err(format!(
                "element {i} (row {}, column {}): {x:e} where ggml gives {y:e}",
                i / (a.len() / ROWS),
                i % (a.len() / ROWS)
            ));
        }
    }
    Ok(())
}

fn floats(v: &Value) -> Vec<f32> {
    let Value::Tensor(t) = v else { panic!("a tensor, got {}", v.describe()) };
    assert_eq!(t.dtype, DataType::FLOAT32);
    t.bytes().chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

fn call(m: &Module, native: Option<&dyn relax_runtime::native::NativeKernels>, bytes: &[u8], rb: usize) -> Vec<f32> {
    let w = Tensor::view(&shared_bytes(bytes.to_vec()), 0, &[ROWS as i64, rb as i64], DataType::UINT8);
    let mut it = Interpreter::new(m);
    it.native = native;
    let g = m.lookup("main").expect("main");
    let out =
        it.call_global(g, vec![Value::Tensor(w)], relax_ir::Span::NONE).unwrap_or_else(|e| panic!("{}", e.message));
    floats(&out)
}

/// Runs every type's kernel on both kinds of blocks with `engine` and compares with ggml.
fn check(engine: &str, run: impl Fn(&Module, &[u8], usize) -> Vec<f32>) {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for ty in QuantType::ALL {
        let k = ty.block_elems() * BLOCKS_PER_ROW;
        let rb = ty.row_bytes(k).expect("whole blocks");
        let m = module(ty, k);
        for (kind, bytes) in ["random bytes", "quantized floats"].iter().zip(inputs(ty, k, &mut rng)) {
            let want = relax_gguf::dequantize_to_vec(ggml(ty), &bytes, ROWS * k).expect("dequantizes");
            let got = run(&m, &bytes, rb);
            if let Err(e) = bits_equal(&got, &want) {
                panic!("{engine}, {ty}, {kind}: {e}");
            }
        }
    }
}

#[test]
fn interpreter_gives_ggmls_bits() {
    check("interpreter", |m, bytes, rb| {
        let mut m = m.clone();
        relax_driver::pipeline::lower_tir(&mut m).expect("lowers");
        call(&m, None, bytes, rb)
    });
}

#[cfg(feature = "llvm")]
#[test]
fn jit_gives_ggmls_bits() {
    let opts = relax_codegen::llvm::Options::default();
    for scheduled in [false, true] {
        let engine = if scheduled { "JIT after schedule-cpu" } else { "JIT" };
        check(engine, |m, bytes, rb| {
            let mut m = m.clone();
            if scheduled {
                let bits = relax_driver::pipeline::vector_bits(None);
                let passes = relax_driver::pipeline::run_default_pipeline(&mut m, bits).expect("schedules");
                assert_eq!(passes, ["schedule-cpu"]);
            }
            relax_driver::pipeline::lower_tir(&mut m).expect("lowers");
            relax_runtime::jit::compile(&m, &opts, |jk| call(&m, Some(jk), bytes, rb)).expect("compiles")
        });
    }
}
