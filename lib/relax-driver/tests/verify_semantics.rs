//! `relax-opt --verify-semantics` (`relax_driver::verify_semantics`): the example
//! pipelines keep every result, and a deliberately broken pass (it flips the sign of a
//! float constant) is caught and named with the function and the first differing element.

use relax_driver::verify_semantics::VerifySemantics;
use relax_ir::{ConstPayload, DataType, Module};
use relax_pass::{PassContext, PassManager, PassResult, Pipeline};

const MODULE: &str = r#"# from tvm.script import ir as I, relax as R, tir as T
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 4), dtype="float32")) -> R.Tensor(("n", 4), dtype="float32"):
        n = T.int64()
        y: R.Tensor((n, 4), dtype="float32") = R.add(x, R.const(1.5, "float32"))
        z: R.Tensor((n, 4), dtype="float32") = R.nn.relu(y)
        return z
"#;

fn flip_const(m: &mut Module, _cx: &mut PassContext) -> PassResult {
    let mut changed = false;
    for (_, c) in m.constants.iter_mut() {
        if let ConstPayload::Data(bytes) = &mut c.payload
            && c.dtype == DataType::FLOAT32
            && bytes.len() >= 4
        {
            bytes[3] ^= 0x80;
            changed = true;
        }
    }
    Ok(changed)
}

relax_pass::declare_pass! {
    /// Breaks a module on purpose: flips the sign of every float32 constant.
    FLIP: Module "flip-const" { summary: "flips float32 constants (a broken pass, for the test)", run: flip_const }
}

fn run(pipeline: &str) -> VerifySemantics {
    let mut registry = relax_transform::registry();
    registry.register(FLIP).expect("a new name");
    let mut m = relax_parser::parse_module(MODULE).expect("parses");
    let pipeline = Pipeline::parse(pipeline).expect("a pipeline");
    let mut semantics = VerifySemantics::new(1);
    let mut pm = PassManager::new(&registry, &pipeline).expect("resolves");
    pm.add_instrumentation(&mut semantics);
    pm.run(&mut m, &mut PassContext::default()).expect("runs");
    drop(pm);
    semantics
}

#[test]
fn the_default_passes_keep_the_results() {
    let s = run("legalize-ops,annotate-tir-op-pattern,fold-constant,fuse-ops,fuse-tir,schedule-cpu,dce");
    assert!(s.failure.is_none(), "{:?}", s.failure);
    assert!(s.compared >= 5, "{} compared", s.compared);
}

#[test]
fn a_broken_pass_is_named() {
    let s = run("canonicalize-bindings,flip-const,legalize-ops");
    let msg = s.failure.expect("the flipped constant changes the result");
    assert!(msg.starts_with("pass `flip-const` changed the result of `main` (with n=2): result: element 0:"), "{msg}");
}
