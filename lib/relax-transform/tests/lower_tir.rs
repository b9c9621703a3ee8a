//! `lower-tir` and the lowering it wraps (`relax_ir::tir_lower`): the lowered function has
//! no blocks, verifies, keeps the block statement's handle and span for what replaces it
//! (so run-time errors stay at their lines), and lowering again changes nothing; a
//! function that cannot be lowered is reported and left as it was.

use relax_entity::EntityRef;
use relax_ir::{Span, Stmt, StmtData, tir_lower, verify};
use relax_pass::{PassContext, PassManager, Pipeline};

const SRC: &str = r#"
@I.ir_module
class Module:
    @T.prim_func(private=True, s_tir=True)
    def row_sum(A: T.Buffer((T.int64(8), T.int64(4)), "float32"), B: T.Buffer((T.int64(8),), "float32")):
        tmp = T.sblock_alloc_buffer((T.int64(8),))
        for i, k in T.grid(T.int64(8), T.int64(4)):
            with T.sblock("sum"):
                v, r = T.axis.remap("SR", [i, k])
                T.where(i < T.int64(7))
                with T.init():
                    tmp[v] = T.float32(0.0)
                tmp[v] = tmp[v] + A[v, r]
        for i in range(T.int64(8)):
            with T.sblock("copy"):
                v = T.axis.spatial(T.int64(8), i)
                B[v] = tmp[v]
"#;

const BAD: &str = r#"
@I.ir_module
class Module:
    @T.prim_func(private=True, s_tir=True)
    def view(x: T.Buffer((T.int64(4),), "float32"), y: T.Buffer((T.int64(4),), "float32")):
        with T.sblock("all"):
            xr = T.match_buffer(x[T.int64(0):T.int64(4)], (T.int64(2), T.int64(2)))
            y[0] = xr[0, 1]
"#;

/// The block statements of a function with their spans.
fn blocks(f: &relax_ir::PrimFunc) -> Vec<(Stmt, Span)> {
    let mut out = Vec::new();
    f.walk(f.body, |s, d| {
        if matches!(d, StmtData::Block(_)) {
            out.push((s, f.spans.stmts[s]));
        }
    });
    out
}

#[test]
fn blocks_are_replaced_in_place_and_keep_their_spans() {
    let mut m = relax_parser::parse_module(SRC).expect("parses");
    let g = m.lookup("row_sum").expect("the kernel");
    let f = m.prim_func(g).expect("a PrimFunc");
    let before = blocks(f);
    assert_eq!(before.len(), 3, "the root block and two blocks");
    let old_len = f.stmts.len();
    assert!(tir_lower::lower_module(&mut m).expect("lowers"));
    verify::verify_module(&m).expect("the lowered module verifies");
    let f = m.prim_func(g).expect("a PrimFunc");
    assert!(!tir_lower::has_blocks(f));
    for &(s, span) in &before {
        assert!(!span.is_none());
        assert_eq!(f.spans.stmts[s], span, "the block's statement keeps its span");
        assert!(!matches!(f.stmts[s], StmtData::Block(_)));
    }
    // The root block became the allocation of `tmp`; the "sum" block a `let` chain.
    let (root, _) = before[0];
    assert!(matches!(f.stmts[root], StmtData::Allocate { .. }));
    let (sum, sum_span) = before[1];
    assert!(matches!(f.stmts[sum], StmtData::Let { .. }));
    // Every statement made for a block has that block's span.
    let mut made = Vec::new();
    f.walk(sum, |s, _| {
        if s.index() >= old_len {
            made.push(f.spans.stmts[s]);
        }
    });
    assert!(!made.is_empty());
    assert!(made.iter().all(|&sp| sp == sum_span), "{made:?}");
    // Lowered TIR lowers to itself.
    let text = relax_ir::printer::print_module(&m);
    assert!(!tir_lower::lower_module(&mut m).expect("lowers"));
    assert_eq!(relax_ir::printer::print_module(&m), text);
}

#[test]
fn the_pass_prints_lowered_tir_that_parses_back() {
    let mut m = relax_parser::parse_module(SRC).expect("parses");
    let registry = relax_transform::registry();
    let pipeline = Pipeline::parse("lower-tir").expect("a pipeline");
    let mut pm = PassManager::new(&registry, &pipeline).expect("the pass exists");
    pm.run(&mut m, &mut PassContext::default()).expect("runs");
    let text = relax_ir::printer::print_module(&m);
    assert!(text.contains("if r == T.int64(0):"), "{text}");
    assert!(text.contains("if i < T.int64(7):"), "{text}");
    assert!(text.contains("tmp = T.alloc_buffer((T.int64(8),))"), "{text}");
    assert!(!text.contains("T.sblock"), "{text}");
    let again = relax_parser::parse_module(&text).expect("the lowered text parses");
    assert_eq!(relax_ir::printer::print_module(&again), text);
}

#[test]
fn a_view_with_more_dims_than_its_region_is_reported_and_nothing_changes() {
    let mut m = relax_parser::parse_module(BAD).expect("parses");
    let g = m.lookup("view").expect("the kernel");
    let span = blocks(m.prim_func(g).expect("a PrimFunc"))[0].1;
    let errs = tir_lower::lower_module(&mut m).expect_err("cannot be lowered");
    assert_eq!(errs.len(), 1);
    assert_eq!(errs[0].span, span);
    assert!(errs[0].message.contains("`T.match_buffer` of `xr` has more dims than its source region"), "{:?}", errs[0]);
    assert!(tir_lower::has_blocks(m.prim_func(g).expect("a PrimFunc")), "left as it was");
}
