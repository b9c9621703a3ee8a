//! `normalize` on IR that a pass left out of normal form: nested calls, split blocks,
//! missing and stale types.

use relax_ir::{ExprData, Func, Global, Module, TyData};
use relax_pass::{PassContext, PassKind, PassOptions, run_on_relax_function};
use relax_transform::normalize::normalize;

const SRC: &str = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        y: R.Tensor((4,), dtype="float32") = R.add(x, x)
        z: R.Tensor((4,), dtype="float32") = R.exp(y)
        return z
"#;

#[test]
fn binds_nested_calls_and_merges_blocks() {
    let mut m = relax_parser::parse_module(SRC).expect("parses");
    let g = m.lookup("main").unwrap();
    let Func::Relax(f) = &mut m.globals[g].func else { panic!() };
    // Inline `y`'s call into `z`'s argument and drop `y`'s binding: `z = R.exp(R.add(x, x))`.
    let b = f.body().blocks[0];
    let y = f.blocks[b].bindings.remove(0);
    let z_value = f.blocks[b].bindings[0].value;
    let ExprData::Call(call) = &mut f.exprs[z_value] else { panic!() };
    call.args.as_mut_slice(&mut f.lists)[0] = y.value;
    // Split the block in two, with an empty block in between.
    let rest = f.blocks[b].bindings.split_off(0);
    let empty = f.blocks.push(relax_ir::BlockData { dataflow: false, bindings: Vec::new() });
    let tail = f.blocks.push(relax_ir::BlockData { dataflow: false, bindings: rest });
    let body = f.func.body;
    f.seq_mut(body).blocks = vec![b, empty, tail];

    assert!(normalize(f).expect("no type errors"));
    assert_eq!(f.body().blocks.len(), 1, "blocks are merged and empty ones dropped");
    let text = relax_ir::printer::print_module(&m);
    assert!(text.contains("lv: R.Tensor((4,), dtype=\"float32\") = R.add(x, x)"), "{text}");
    assert!(text.contains("z: R.Tensor((4,), dtype=\"float32\") = R.exp(lv)"), "{text}");
    relax_ir::verify::verify_module(&m).expect("normal form verifies");
    // A second run changes nothing.
    let Func::Relax(f) = &mut m.globals[g].func else { panic!() };
    assert!(!normalize(f).expect("no type errors"));
}

const CALLS: &str = r#"
@I.ir_module
class Module:
    @R.function
    def double(x: R.Tensor(("n", 4), dtype="float32")) -> R.Tensor(("n * 2", 4), dtype="float32"):
        n = T.int64()
        y: R.Tensor((n * 2, 4), dtype="float32") = R.concat((x, x), axis=0)
        return y

    @R.function
    def main(a: R.Tensor(("m", 4), dtype="float32"), c: R.Tensor((), dtype="bool")) -> R.Tensor(("m * 2", 4), dtype="float32"):
        m = T.int64()
        cls = Module
        p: R.Tensor((m * 2, 4), dtype="float32") = cls.double(a)
        q: R.Tensor((m * 2, 4), dtype="float32") = R.exp(p)
        if c:
            r: R.Tensor((m * 2, 4), dtype="float32") = p
        else:
            r: R.Tensor((m * 2, 4), dtype="float32") = q
        s: R.Tensor((m * 2, 4), dtype="float32") = R.add(r, q)
        return s
"#;

fn run_normalize(m: &mut Module, g: Global) -> relax_pass::PassResult {
    let Ok(PassKind::RelaxFunction(pass)) = relax_transform::normalize::INFO.create(&PassOptions::default()) else {
        panic!("a Relax function pass")
    };
    run_on_relax_function(pass.as_ref(), m, g, &mut PassContext::default())
}

#[test]
fn recomputes_every_type() {
    let mut m = relax_parser::parse_module(CALLS).expect("parses");
    let expected = relax_ir::printer::print_module(&m);
    let g = m.lookup("main").unwrap();
    // Forget every expression's type and every variable's type: as if a pass had built
    // the bindings without typing them.
    let f = m.relax_mut(g).unwrap();
    let object = f.pool.intern_ty(TyData::Object);
    let exprs: Vec<_> = f.exprs.keys().collect();
    for e in exprs {
        f.expr_ty.set(e, None);
    }
    let params = f.func.params.clone();
    let vars: Vec<_> = f.vars.keys().filter(|v| !params.contains(v)).collect();
    for v in vars {
        f.vars[v].ty = object;
    }
    assert!(run_normalize(&mut m, g).expect("no type errors"));
    assert_eq!(relax_ir::printer::print_module(&m), expected);
    relax_ir::verify::verify_module(&m).expect("verifies");
    assert!(!run_normalize(&mut m, g).expect("no type errors"), "a second run changes nothing");
}

#[test]
fn keeps_annotations_and_reports_type_errors() {
    let mut m = relax_parser::parse_module(CALLS).expect("parses");
    let g = m.lookup("main").unwrap();
    // A less precise annotation stays.
    let f = m.relax_mut(g).unwrap();
    let b = f.body().blocks[0];
    let q = f.blocks[b].bindings[1].var;
    let loose = f.pool.intern_ty(TyData::tensor_ndim(2, relax_ir::DataType::FLOAT32));
    f.vars[q].ty = loose;
    run_normalize(&mut m, g).expect("no type errors");
    let text = relax_ir::printer::print_module(&m);
    assert!(text.contains("q: R.Tensor(dtype=\"float32\", ndim=2) = R.exp(p)"), "{text}");
    // `R.add` of a (m * 2, 4) and a (3, 5) tensor is an error.
    let f = m.relax_mut(g).unwrap();
    let bad = f.pool.i64(5);
    let three = f.pool.i64(3);
    let wrong = f.pool.intern_ty(TyData::tensor(vec![three, bad], relax_ir::DataType::FLOAT32));
    f.vars[q].ty = wrong;
    let errors = run_normalize(&mut m, g).expect_err("a type error");
    assert!(errors[0].message.contains("R.add: cannot broadcast dims `4` and `5`"), "{errors:?}");
}
