//! The executable format: a round trip gives the same bytes and the same results; every
//! truncation of a valid executable, a wrong magic or version, and corrupted bytes are
//! errors, never panics.

use relax_runtime::vm::format::{MAGIC, VERSION};
use relax_runtime::vm::{Executable, TirKernels, Vm, VmOptions};
use relax_runtime::{Tensor, Value};

/// A module with a kernel call, a direct kernel call, symbolic shapes, `match_cast`,
/// `if`, tuples, constants, strings, an op run by its reference kernel and a closure.
const MODULE: &str = r#"
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def add(a: T.handle, b: T.handle, c: T.handle):
        n = T.int64()
        A = T.match_buffer(a, (n,), "float32")
        B = T.match_buffer(b, (n,), "float32")
        C = T.match_buffer(c, (n,), "float32")
        for i in range(n):
            C[i] = A[i] + B[i]

    @R.function
    def main(x: R.Tensor(("n",), dtype="float32"), c: R.Tensor((), dtype="bool")):
        n = T.int64()
        cls = Module
        y = R.call_tir(cls.add, (x, x), out_sinfo=R.Tensor((n,), dtype="float32"))
        if c:
            z = R.call_tir(cls.add, (y, x), out_sinfo=R.Tensor((n,), dtype="float32"))
        else:
            z = R.cumsum(y, axis=0)
        w: R.Tensor((n,), dtype="float32") = R.match_cast(z, R.Tensor((n,), dtype="float32"))
        s = R.shape_of(w)
        @R.function
        def inc(a: R.Tensor(("n",), dtype="float32")) -> R.Tensor(("n",), dtype="float32"):
            b = R.call_tir(cls.add, (a, y), out_sinfo=R.Tensor((n,), dtype="float32"))
            return b
        v = inc(w)
        return (v, s, R.prim_value(n + 1), R.str("done"))
"#;

fn executable() -> (relax_ir::Module, Executable) {
    let mut m = relax_parser::parse_module(MODULE).expect("parses");
    relax_ir::tir_lower::lower_module(&mut m).expect("lowers");
    let e = Executable::compile(&m).expect("compiles");
    (m, e)
}

fn args(cond: bool) -> Vec<Value> {
    let x = Tensor::from_scalars(
        &[3],
        relax_ir::DataType::FLOAT32,
        [1.0, 2.0, 3.0].map(|v| relax_runtime::Scalar::float(relax_ir::DataType::FLOAT32, v)),
    );
    let c = Tensor::from_scalars(&[], relax_ir::DataType::BOOL, [relax_runtime::Scalar::bool(cond)]);
    vec![Value::Tensor(x), Value::Tensor(c)]
}

fn run(m: &relax_ir::Module, e: &Executable, cond: bool) -> String {
    let k = TirKernels::new(e, m);
    let vm = Vm::new(e, &k, VmOptions::default());
    match vm.call("main", args(cond)) {
        Ok(v) => relax_runtime::print::value_text(&v),
        Err(err) => format!("error: {}", err.message),
    }
}

#[test]
fn round_trip_keeps_bytes_and_results() {
    let (m, e) = executable();
    let bytes = e.to_bytes();
    assert_eq!(&bytes[..8], MAGIC);
    let back = Executable::from_bytes(&bytes).expect("reads back");
    assert_eq!(back.to_bytes(), bytes);
    for cond in [true, false] {
        let a = run(&m, &e, cond);
        assert!(!a.starts_with("error"), "{a}");
        assert_eq!(a, run(&m, &back, cond));
        let interp = relax_runtime::Interpreter::new(&m);
        let want = interp.run("main", args(cond)).expect("interpreter runs");
        assert_eq!(a, relax_runtime::print::value_text(&want));
    }
    assert_eq!(back.kernels().len(), 1);
    assert_eq!(back.kernels()[0].packed_symbol, "add_packed");
    assert!(back.function("main").is_some() && back.function("inc").is_none());
}

#[test]
fn every_truncation_is_an_error() {
    let (_, e) = executable();
    let bytes = e.to_bytes();
    for n in 0..bytes.len() {
        assert!(Executable::from_bytes(&bytes[..n]).is_err(), "a prefix of {n} bytes was accepted");
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(Executable::from_bytes(&longer).is_err());
}

#[test]
fn wrong_magic_and_version_are_errors() {
    let (_, e) = executable();
    let mut bytes = e.to_bytes();
    bytes[0] = b'X';
    let err = Executable::from_bytes(&bytes).expect_err("bad magic");
    assert!(err.message.contains("magic"), "{}", err.message);
    let mut bytes = e.to_bytes();
    bytes[8..12].copy_from_slice(&(VERSION + 1).to_le_bytes());
    let err = Executable::from_bytes(&bytes).expect_err("bad version");
    assert!(err.message.contains("version"), "{}", err.message);
}

#[test]
fn corrupted_bytes_never_panic() {
    let (_, e) = executable();
    let bytes = e.to_bytes();
    let mut accepted = 0;
    for i in 12..bytes.len() {
        for delta in [1u8, 0x80, 0xff] {
            let mut b = bytes.clone();
            b[i] = b[i].wrapping_add(delta);
            // Decoding checks every index and tag; what it accepts encodes again. (Running
            // a corrupted executable may loop forever, so it is not run here.)
            if let Ok(x) = Executable::from_bytes(&b) {
                accepted += 1;
                assert!(Executable::from_bytes(&x.to_bytes()).is_ok());
            }
        }
    }
    assert!(accepted < 3 * bytes.len());
}

#[test]
fn errors_render_from_the_debug_table_alone() {
    let (m, mut e) = executable();
    e.attach_source("m.rlx", MODULE);
    let back = Executable::from_bytes(&e.to_bytes()).expect("reads back");
    assert_eq!(back.source_name(), "m.rlx");
    let k = TirKernels::new(&back, &m);
    let vm = Vm::new(&back, &k, VmOptions::default());
    let mut bad = args(true);
    bad[0] = Value::Shape(vec![3]);
    let err = vm.call("main", bad).expect_err("a shape for a tensor");
    let text = back.render_error(&err);
    let line = MODULE.lines().position(|l| l.contains("def main(")).expect("main") + 1;
    assert!(text.starts_with(&format!("m.rlx:{line}:")), "{text}");
    assert!(text.contains("error: parameter `x` of `main`: expected R.Tensor((n,), dtype=\"float32\"), got"), "{text}");
    assert!(text.contains("def main(x: R.Tensor"), "{text}");
    assert!(text.contains("= expected a tensor, got a shape"), "{text}");
}
