//! The public op-pattern API as FuseOps uses it: the kind of a parsed PrimFunc, and the
//! attribute the pass stores and [`annotated_op_pattern`] reads back.

use relax_pass::{Anchor, PassContext, PassKind, PassOptions, run_on_prim_func};
use relax_transform::{OpPatternKind, analyze_prim_func, annotate_tir_op_pattern, annotated_op_pattern};

const SRC: &str = r#"
@I.ir_module
class Module:
    @T.prim_func(private=True, s_tir=True)
    def bias(A: T.Buffer((T.int64(8), T.int64(4)), "float32"), B: T.Buffer((T.int64(4),), "float32"), C: T.Buffer((T.int64(8), T.int64(4)), "float32")):
        for i, j in T.grid(T.int64(8), T.int64(4)):
            with T.sblock("add"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = A[vi, vj] + B[vj]

    @T.prim_func(private=True, s_tir=True)
    def row_sum(A: T.Buffer((T.int64(8), T.int64(4)), "float32"), B: T.Buffer((T.int64(8),), "float32")):
        T.func_attr({"op_pattern": 2})
        for i, k in T.grid(T.int64(8), T.int64(4)):
            with T.sblock("sum"):
                v, r = T.axis.remap("SR", [i, k])
                with T.init():
                    B[v] = T.float32(0.0)
                B[v] = B[v] + A[v, r]
"#;

#[test]
fn analysis_and_attribute() {
    let mut m = relax_parser::parse_module(SRC).expect("parses");
    let bias = m.lookup("bias").unwrap();
    let row_sum = m.lookup("row_sum").unwrap();
    assert_eq!(analyze_prim_func(m.prim_func(bias).unwrap()), OpPatternKind::ElemWise);
    assert_eq!(analyze_prim_func(m.prim_func(row_sum).unwrap()), OpPatternKind::CommReduce);
    assert_eq!(annotated_op_pattern(m.prim_func(bias).unwrap()), None);

    let info = annotate_tir_op_pattern::INFO;
    assert_eq!(info.anchor(), Anchor::PrimFunc);
    let Ok(PassKind::PrimFunc(pass)) = info.create(&PassOptions::default()) else { panic!("a PrimFunc pass") };
    let pass = pass.as_ref();
    let mut cx = PassContext::default();
    assert!(run_on_prim_func(pass, &mut m, bias, &mut cx).unwrap());
    // A non-zero annotation is kept, as in TVM.
    assert!(!run_on_prim_func(pass, &mut m, row_sum, &mut cx).unwrap());
    assert_eq!(annotated_op_pattern(m.prim_func(bias).unwrap()), Some(OpPatternKind::ElemWise));
    assert_eq!(annotated_op_pattern(m.prim_func(row_sum).unwrap()), Some(OpPatternKind::Injective));
    // Running again changes nothing.
    assert!(!run_on_prim_func(pass, &mut m, bias, &mut cx).unwrap());
}
