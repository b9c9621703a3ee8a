//! Printing parsed PrimFuncs: for TVM 0.25 text, `print(parse(s))` gives every PrimFunc
//! back byte for byte; for every dialect, printing is idempotent
//! (`print(parse(print(parse(s)))) == print(parse(s))`); the classic spelling prints as
//! its TVM 0.25 text.
//!
//! The PrimFuncs are compared function by function, so a difference in a Relax function
//! of the same section does not fail this test. Lowered TIR (`17_*`) is checked for
//! parsing only (see `lower_tir_samples.rs`): the printer does not yet declare buffers
//! that are only named by `T.attr` (`x = T.Buffer(...)`), so its output does not parse.

mod lower_tir_common;

use std::collections::BTreeMap;
use std::path::Path;

use lower_tir_common::{PrimFuncText, preamble, prim_funcs, prim_module, rlx_files, samples_dir, sections};

fn print(src: &str) -> Result<String, String> {
    match relax_parser::parse_module(src) {
        Ok(m) => Ok(relax_ir::printer::print_module(&m)),
        Err(d) => Err(lower_tir_common::render(src, &d)),
    }
}

/// The PrimFuncs of `text` by name.
fn by_name(text: &str) -> BTreeMap<String, String> {
    prim_funcs(text).into_iter().map(|f| (f.name, f.text)).collect()
}

/// The printed form of a section's PrimFuncs: the whole section when it parses, else a
/// module of its PrimFuncs alone.
fn printed_prim_funcs(section: &str) -> Result<String, String> {
    print(section).or_else(|_| {
        let funcs = prim_funcs(section);
        let refs: Vec<&PrimFuncText> = funcs.iter().collect();
        print(&prim_module(&preamble(section), &refs))
    })
}

fn is_lowered(path: &Path) -> bool {
    path.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("17_"))
}

#[test]
fn tvm_025_prim_funcs_print_back_unchanged() {
    let Some(dir) = samples_dir() else {
        eprintln!("note: shared/samples not found; skipping");
        return;
    };
    let mut failures = Vec::new();
    let mut compared = 0;
    for path in rlx_files(&dir.join("tvm-0.25")) {
        if path.file_name().is_some_and(|n| n.to_string_lossy().starts_with("90_")) {
            continue; // not printer output (classic spelling)
        }
        let text = std::fs::read_to_string(&path).expect("UTF-8");
        for (line, section) in sections(&text) {
            let originals = by_name(&section);
            if originals.is_empty() {
                continue;
            }
            let printed = match printed_prim_funcs(&section) {
                Ok(p) => by_name(&p),
                Err(e) => {
                    failures.push(format!("{}:{line}: does not parse:\n{e}", path.display()));
                    continue;
                }
            };
            for (name, original) in &originals {
                compared += 1;
                match printed.get(name) {
                    Some(p) if p.trim_end() == original.trim_end() => {}
                    Some(p) => failures.push(format!("{}:{line}: `{name}` prints as\n{p}", path.display())),
                    None => failures.push(format!("{}:{line}: `{name}` is not printed", path.display())),
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(compared >= 10, "only {compared} PrimFuncs compared");
}

#[test]
fn printing_is_idempotent() {
    let Some(dir) = samples_dir() else {
        eprintln!("note: shared/samples not found; skipping");
        return;
    };
    let mut failures = Vec::new();
    for path in rlx_files(&dir) {
        if is_lowered(&path) {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("UTF-8");
        for (line, section) in sections(&text) {
            let funcs = prim_funcs(&section);
            if funcs.is_empty() {
                continue;
            }
            let refs: Vec<&PrimFuncText> = funcs.iter().collect();
            let src = prim_module(&preamble(&section), &refs);
            let once = match print(&src) {
                Ok(p) => p,
                Err(e) => {
                    failures.push(format!("{}:{line}: does not parse:\n{e}", path.display()));
                    continue;
                }
            };
            match print(&once) {
                Ok(twice) if twice == once => {}
                Ok(twice) => failures.push(format!("{}:{line}: not idempotent:\n{once}\n---\n{twice}", path.display())),
                Err(e) => failures.push(format!("{}:{line}: the printed text does not parse:\n{e}", path.display())),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn classic_spelling_prints_as_tvm_025() {
    let Some(dir) = samples_dir() else {
        eprintln!("note: shared/samples not found; skipping");
        return;
    };
    let classic = std::fs::read_to_string(dir.join("tvm-0.25/90_classic_spelling_fused_matmul_add_relu_exp.rlx"))
        .expect("the classic sample");
    let canonical = std::fs::read_to_string(dir.join("tvm-0.25/01_fuse_matmul_add_relu_exp.rlx")).expect("sample 01");
    let cut = sections(&canonical);
    let fusetir = &cut.last().expect("sections").1;
    let printed = by_name(&printed_prim_funcs(&classic).expect("the classic sample parses"));
    let expected = by_name(fusetir);
    assert_eq!(printed, expected);
}

#[test]
fn local_classic_copy_prints_as_tvm_025() {
    let dir = lower_tir_common::data_dir();
    let classic = std::fs::read_to_string(dir.join("025_90_classic_spelling_fused_matmul_add_relu_exp.rlx"))
        .expect("the local classic copy");
    let printed = print(&classic).expect("the classic copy parses");
    assert!(printed.contains("@T.prim_func(private=True, s_tir=True)"));
    assert!(printed.contains("T.func_attr({\"tirx.noalias\": True})"));
    assert!(printed.contains("# with T.sblock(\"root\"):"));
    assert!(printed.contains("matmul_intermediate = T.sblock_alloc_buffer((n, T.int64(4)))"));
    assert!(!printed.contains("T.block(") && !printed.contains("T.alloc_buffer"));
    assert_eq!(print(&printed).expect("the printed text parses"), printed);
}

/// Hand-written PrimFuncs using most of the statement forms.
const FEATURES: [&str; 2] = [
    r#"# from tvm.script import ir as I
# from tvm.script import tirx as T

@I.ir_module
class Module:
    @T.prim_func(private=True, s_tir=True)
    def features(var_a: T.handle, B: T.Buffer((16, 8), "float32"), m: T.int32):
        n = T.int32()
        A = T.match_buffer(var_a, (n, 8), strides=("s0", "s1"), offset_factor=4, scope="global.texture")
        C = T.sblock_alloc_buffer((16,), "float16", scope="local")
        for i in T.serial(2, 16, annotations={"pragma": 1}):
            for j in T.unroll(8, unroll=True):
                for t in T.thread_binding(0, 4, thread="threadIdx.y"):
                    with T.sblock("b0"):
                        vi = T.axis.spatial((2, 16), i)
                        vj = T.axis.reduce(8, j)
                        T.where(i < m)
                        T.reads(B[vi, 0:8], A[0, vj])
                        T.writes(C[vi])
                        T.sblock_attr({"meta": "x", "n": [1, 2]})
                        sub = T.match_buffer(B[vi, 0:8], (8,), offset_factor=1)
                        with T.init():
                            C[vi] = T.float16(0.0)
                        if vj > 2:
                            C[vi] = C[vi] + T.Cast("float16", sub[vj])
                        else:
                            C[vi] = T.float16(1.0)
        for k in range(0, 16, 2):
            while m > 0:
                T.evaluate(T.call_extern("int32", "f", k))
        for k in T.vectorized(4):
            B[k, 0] = A[k, 0] * B[k, 1] + T.Cast("float32", C[k])
"#,
    r#"# from tvm.script import ir as I
# from tvm.script import tirx as T

@I.ir_module
class Module:
    @T.prim_func
    def low(args: T.handle, A: T.Buffer((16,), "float32"), n: T.int32) -> T.int32:
        T.func_attr({"calling_conv": 1, "target": T.target({"keys": ["cpu"], "kind": "llvm"})})
        assert n == 3, ("TypeError", ["Expected ", metadata["ir.StringImm"][0], "x"])
        assert n > 0, "plain"
        h: T.let[T.handle("int64", "global")] = T.tvm_struct_get(args, 0, 2, T.handle("int64", "global").ty)
        k: T.int64 = T.tvm_struct_get(h, 0, 17, "int64")
        if n > 1:
            t: T.let[T.int32] = n * 2
            A[t] = T.float32(0.0)
        B = T.decl_buffer((4,), data=A.data, elem_offset=0)
        C = T.alloc_buffer((4,), "int32")
        for i in range(4):
            c: T.let[T.int32] = i + 1
            B[i] = T.Cast("float32", c)
            C[i] = c
        with T.attr({"compute_scope": "low_compute_"}):
            A[0] = B[0]
        tx = T.launch_thread("threadIdx.x", 32)
        A[tx % 16] = T.float32(1.0)
        return 0
"#,
];

#[test]
fn hand_written_features_print_idempotently() {
    for src in FEATURES {
        let m = relax_parser::parse_module(src).unwrap_or_else(|d| panic!("{}", lower_tir_common::render(src, &d)));
        if let Err(errs) = relax_ir::verify::verify_module(&m) {
            panic!("verifier: {:?}", errs.iter().map(ToString::to_string).collect::<Vec<_>>());
        }
        let once = relax_ir::printer::print_module(&m);
        assert_eq!(print(&once).as_deref(), Ok(once.as_str()), "not idempotent:\n{once}");
    }
    let features = print(FEATURES[0]).expect("parses");
    for line in [
        "        A = T.match_buffer(var_a, (n, 8), strides=(\"s0\", \"s1\"), scope=\"global.texture\", offset_factor=4)",
        "                        vi, vj = T.axis.remap(\"SR\", [i, j])",
        "                        T.where(i < m)",
        "                        sub = T.match_buffer(B[vi, 0:8], (8,), offset_factor=1)",
        "        for k in range(0, 16, 2):",
    ] {
        assert!(features.lines().any(|l| l == line), "missing `{line}` in\n{features}");
    }
    let lowered = print(FEATURES[1]).expect("parses");
    for line in [
        "        h: T.let[T.handle(\"int64\", \"global\")] = T.tvm_struct_get(args, 0, 2, \"handle\")",
        "            t: T.let[T.int32] = n * 2",
        "        C = T.alloc_buffer((4,), \"int32\")",
        "            return 0",
    ] {
        assert!(lowered.lines().any(|l| l == line), "missing `{line}` in\n{lowered}");
    }
}
