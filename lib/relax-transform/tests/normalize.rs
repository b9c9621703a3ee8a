//! `normalize` on IR that a pass left out of normal form: nested calls, split blocks.

use relax_ir::{ExprData, Func};
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
    let b = f.func.body.blocks[0];
    let y = f.blocks[b].bindings.remove(0);
    let z_value = f.blocks[b].bindings[0].value;
    let ExprData::Call(call) = &mut f.exprs[z_value] else { panic!() };
    call.args[0] = y.value;
    // Split the block in two, with an empty block in between.
    let rest = f.blocks[b].bindings.split_off(0);
    let empty = f.blocks.push(relax_ir::BlockData { dataflow: false, bindings: Vec::new() });
    let tail = f.blocks.push(relax_ir::BlockData { dataflow: false, bindings: rest });
    f.func.body.blocks = vec![b, empty, tail];

    assert!(normalize(f));
    assert_eq!(f.func.body.blocks.len(), 1, "blocks are merged and empty ones dropped");
    let text = relax_ir::printer::print_module(&m);
    assert!(text.contains("lv: R.Tensor((4,), dtype=\"float32\") = R.add(x, x)"), "{text}");
    assert!(text.contains("z: R.Tensor((4,), dtype=\"float32\") = R.exp(lv)"), "{text}");
    relax_ir::verify::verify_module(&m).expect("normal form verifies");
    // A second run changes nothing.
    let Func::Relax(f) = &mut m.globals[g].func else { panic!() };
    assert!(!normalize(f));
}
