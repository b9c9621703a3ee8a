//! A module's entry on the interpreter and on a GPU engine, compared, for the engine
//! tests (`gpu.rs`: Vulkan on lavapipe; `cuda_sim.rs`: CUDA on the PTX simulator): the
//! module goes through the default pipeline for the GPU (both copies then lowered, as the
//! tools lower them), both runs get the same seeded
//! inputs, and the results must be equal within the tolerance of `# EXEC:` `~=` lines
//! for floats and exactly for integers.

use relax_driver::pipeline::{Target, lower_tir, run_pipeline_for};
use relax_ir::Module;
use relax_runtime::native::NativeKernels;
use relax_runtime::{Interpreter, RunResult, Value, inputs};

/// One comparison: the module for the GPU, the inputs and the interpreter's result.
pub struct Case {
    path: String,
    entry: String,
    /// The module after the default pipeline for the GPU, lowered.
    pub gpu: Module,
    args: Vec<Value>,
    expected: Value,
}

impl Case {
    /// Reads `path` (relative to the repository), runs `entry` on the interpreter with
    /// inputs from seed 7 and the symbolic dims `syms`, and lowers the module for the GPU.
    pub fn new(path: &str, entry: &str, syms: &[(&str, i64)]) -> Case {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let text = std::fs::read_to_string(root.join(path)).expect("the test module");
        let mut orig = relax_parser::parse_module(&text).expect("parses");
        let mut gpu = orig.clone();
        run_pipeline_for(&mut gpu, Target::Gpu).expect("the GPU pipeline");
        lower_tir(&mut gpu).expect("lowered TIR for the GPU");
        lower_tir(&mut orig).expect("lowered TIR for the interpreter");
        let syms: Vec<(String, i64)> = syms.iter().map(|(n, v)| (n.to_string(), *v)).collect();
        let g = orig.lookup(entry).expect("the entry");
        let args = inputs::make_inputs(&orig, g, &[], &syms, Some(7)).expect("inputs");
        let expected = Interpreter::new(&orig)
            .with_lowering(&relax_driver::lowering::Legalize)
            .run(entry, args.clone())
            .expect("the interpreter runs");
        Case { path: path.into(), entry: entry.into(), gpu, args, expected }
    }

    /// Runs the entry of the GPU module with `kernels`.
    pub fn run(&self, kernels: &dyn NativeKernels) -> RunResult<Value> {
        let mut it = Interpreter::new(&self.gpu).with_lowering(&relax_driver::lowering::Legalize);
        it.native = Some(kernels);
        it.run(&self.entry, self.args.clone())
    }

    /// Compares `got` with the interpreter's result.
    pub fn assert_close(&self, got: &Value) {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        flatten(&self.expected, &mut a);
        flatten(got, &mut b);
        assert_eq!(a.len(), b.len());
        let path = &self.path;
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(x.shape, y.shape);
            assert_eq!(x.dtype, y.dtype);
            for (i, (p, q)) in x.scalars().into_iter().zip(y.scalars()).enumerate() {
                match (p, q) {
                    (relax_runtime::Scalar::Float(p, _), relax_runtime::Scalar::Float(q, _)) => {
                        assert!((p - q).abs() <= 1e-5 * p.abs() + 1e-5, "{path}: element {i}: {p} vs {q}");
                    }
                    (p, q) => assert_eq!(p, q, "{path}: element {i}"),
                }
            }
        }
    }
}

fn flatten(v: &Value, out: &mut Vec<relax_runtime::Tensor>) {
    match v {
        Value::Tensor(t) => out.push(t.clone()),
        Value::Tuple(fields) => fields.iter().for_each(|x| flatten(x, out)),
        _ => {}
    }
}
