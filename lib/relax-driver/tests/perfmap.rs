//! The JIT's perf map (`relax_runtime::jit::perfmap`): the lines of a kernel's object
//! name its packed function and its outlined parallel loop, at their offsets from the
//! packed function's load address, with the sizes of the object's symbol table; and a
//! run with `RELAX_PERF_MAP=1` writes them to `/tmp/perf-PID.map`.

#![cfg(feature = "llvm")]

use relax_runtime::jit::perfmap;

const MODULE: &str = r#"
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def scale(x: T.Buffer((T.int64(4096),), "float32"), y: T.Buffer((T.int64(4096),), "float32")):
        T.func_attr({"tir.noalias": True})
        for i in T.parallel(T.int64(4096)):
            y[i] = x[i] * T.float32(2.0)
"#;

#[test]
fn lines_name_the_functions_of_an_object() {
    let mut m = relax_parser::parse_module(MODULE).expect("parses");
    relax_driver::pipeline::lower_tir(&mut m).expect("lowers");
    let g = m.lookup("scale").expect("scale");
    let opts = relax_codegen::llvm::Options::default();
    let obj = relax_codegen::llvm::kernel_object(&m, g, &opts).expect("compiles");
    let lines = perfmap::lines(&obj.object, &obj.kernel.packed_symbol, 0x10_0000);
    let parsed: Vec<(u64, u64, &str)> = lines
        .iter()
        .map(|l| {
            let mut it = l.split(' ');
            let start = u64::from_str_radix(it.next().expect("start"), 16).expect("hex");
            let size = u64::from_str_radix(it.next().expect("size"), 16).expect("hex");
            (start, size, it.next().expect("name"))
        })
        .collect();
    let packed = parsed.iter().find(|l| l.2 == "scale_packed").unwrap_or_else(|| panic!("{lines:?}"));
    assert_eq!(packed.0, 0x10_0000, "{lines:?}");
    let body = parsed.iter().find(|l| l.2.starts_with("scale_par")).unwrap_or_else(|| panic!("{lines:?}"));
    assert!(packed.1 > 0 && body.1 > 0, "{lines:?}");
    // The functions do not overlap.
    let (a, b) = if packed.0 < body.0 { (packed, body) } else { (body, packed) };
    assert!(a.0 + a.1 <= b.0, "{lines:?}");
    assert!(perfmap::lines(b"not an object", "scale_packed", 0).is_empty());
}
