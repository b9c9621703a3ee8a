//! `quantize-weights`: stores the weight matrices of a module's matrix products
//! block-quantized, ggml's way (`relax-opt --quantize-weights=q4_0`, `docs/passes.md`).
//!
//! Which parameters: those [`crate::quant::rule`] takes, in every Relax function that no
//! function of the module calls (a callee's signature must stay as its callers see it):
//! static 2-D float matrices used only as the weight of `R.matmul`, directly (`(K, N)`)
//! or through `R.permute_dims` (`(N, K)`), whose contraction length `K` is a multiple of
//! the block.
//!
//! What happens to one: it keeps its name and becomes the packed `uint8` matrix of its
//! rows along `K`, `(N, K / block * block_bytes)`; before each use, a binding decodes it
//! with the type's kernel (`decode_<type>_<K>`, added once per module, see
//! [`crate::quant::decode`]) back to `(N, K)` float32, cast back to the parameter's
//! float type when that is not float32, and transposed for a direct use. `fuse-ops
//! {matmul-operands=true}` then puts the decode and the transpose inside the matmul. The
//! function records what it did in its attribute `quantized_params`, one entry per
//! parameter, which the weight loaders of `relax-run` read to pack a float `.npy` of the
//! original shape:
//!
//! ```text
//! R.func_attr({"quantized_params": {"l0_wqkv": {"type": "q4_0", "shape": [256, 512], "dtype": "float32", "transposed": True}}})
//! ```
//!
//! `transposed` says the packed rows are the original's columns (a direct use of a
//! `(K, N)` weight). `--remarks=quantize-weights` reports each float matrix parameter:
//! quantized, or why not.

use std::collections::BTreeMap;

use relax_ir::attrs::AttrValue;
use relax_ir::op::OpRef;
use relax_ir::{
    Attrs, Binding, DataType, Diagnostic, ExprData, Func, Global, Module, PrimExpr, RelaxFunction, Ty, TyData, ops,
};
use relax_pass::options::FromLiteral;
use relax_pass::{ModulePass, OptionValue, PassContext, PassResult};

use crate::emit;
use crate::legalize::rewrite::set_var_type;
use crate::quant::rule::{self, Candidate, UseKind};
use crate::quant::{QuantType, decode};

relax_pass::declare_pass! {
    /// Registry entry.
    pub INFO: Module "quantize-weights" {
        summary: "store the weights of matrix products block-quantized (ggml's q4_0, q8_0, q4_k, q6_k), decoded by kernels before use",
        new: |options| QuantizeWeights { options },
    }
    /// The options of `quantize-weights`.
    pub struct QuantizeWeightsOptions {
        /// The block type.
        pub ty: QuantType = "q4_0" {
            key: "type",
            help: "the block type: q4_0, q8_0, q4_k or q6_k",
            default_key: true,
        },
    }
}

impl OptionValue for QuantType {
    const EXPECTED: &'static str = "`q4_0`, `q8_0`, `q4_k` or `q6_k`";
    const VALUES: &'static [&'static str] = &["q4_0", "q8_0", "q4_k", "q6_k"];
    fn parse_value(text: &str) -> Option<QuantType> {
        QuantType::from_name(text)
    }
}

impl FromLiteral<&'static str> for QuantType {
    /// The type named by a declared default; an unknown name (a typo in the
    /// declaration, caught by this file's tests) reads as `q4_0`.
    fn from_literal(literal: &'static str) -> QuantType {
        QuantType::from_name(literal).unwrap_or(QuantType::Q4_0)
    }
}

/// The attribute that records the quantized parameters of a function.
pub const ATTR: &str = "quantized_params";

/// The pass.
pub struct QuantizeWeights {
    /// Its options.
    pub options: QuantizeWeightsOptions,
}

impl ModulePass for QuantizeWeights {
    fn run(&self, m: &mut Module, cx: &mut PassContext) -> PassResult {
        let ty = self.options.ty;
        let remarks = cx.wants_remarks(INFO.name);
        let called = called_functions(m);
        let mut plans: Vec<(Global, Vec<Candidate>)> = Vec::new();
        for g in m.print_order() {
            let Some(f) = m.relax(g) else { continue };
            let fname = &m.globals[g].name;
            let (taken, skipped) = rule::plan(f, ty);
            if remarks {
                for s in &skipped {
                    let dtype = rule::float_matrix(f, s.param).map_or(DataType::FLOAT32, |(_, d)| d);
                    let msg = format!("`{}` of `{fname}` stays {dtype}: {}", s.name, s.reason);
                    cx.remarks.push(Diagnostic::remark(f.spans.vars[s.param], msg));
                }
            }
            if let Some(caller) = called.get(&g) {
                if remarks {
                    for c in &taken {
                        let msg = format!(
                            "`{}` of `{fname}` stays {}: `{fname}` is called from `{}`, so its signature stays",
                            c.name, c.dtype, m.globals[*caller].name
                        );
                        cx.remarks.push(Diagnostic::remark(f.spans.vars[c.param], msg));
                    }
                }
                continue;
            }
            if remarks {
                for c in &taken {
                    let rb = ty.row_bytes(c.k()).unwrap_or(0);
                    let how = if c.kind == UseKind::Direct { ", transposed" } else { "" };
                    let msg = format!(
                        "`{}` of `{fname}` is quantized to {ty}: ({}, {}) {} becomes ({}, {rb}) uint8{how}",
                        c.name,
                        c.shape[0],
                        c.shape[1],
                        c.dtype,
                        c.n()
                    );
                    cx.remarks.push(Diagnostic::remark(f.spans.vars[c.param], msg));
                }
            }
            if !taken.is_empty() {
                plans.push((g, taken));
            }
        }
        if plans.is_empty() {
            return Ok(false);
        }
        let mut kernels: BTreeMap<usize, Global> = BTreeMap::new();
        for (_, taken) in &plans {
            for c in taken {
                kernels.entry(c.k()).or_insert_with(|| add_kernel(m, ty, c.k()));
            }
        }
        for (g, taken) in plans {
            relax_pass::with_relax_function(m, g, |_, f| rewrite(f, ty, &taken, &kernels));
        }
        Ok(true)
    }
}

/// The Relax functions the module calls, each with one caller.
fn called_functions(m: &Module) -> BTreeMap<Global, Global> {
    let mut out = BTreeMap::new();
    for (caller, gd) in m.live() {
        let Func::Relax(f) = &gd.func else { continue };
        f.for_each_reachable(|_, d| {
            if let ExprData::Global(g) = d
                && m.relax(*g).is_some()
            {
                out.entry(*g).or_insert(caller);
            }
        });
    }
    out
}

/// The decode kernel of rows of `k` elements: an equal PrimFunc already in the module,
/// or a new one named `decode_<type>_<k>` (with a suffix when the name is taken).
fn add_kernel(m: &mut Module, ty: QuantType, k: usize) -> Global {
    let func = decode::kernel(ty, k);
    let fp = relax_ir::structural::prim_func(&func);
    for (g, gd) in m.live() {
        if let Func::Prim(p) = &gd.func
            && relax_ir::structural::prim_func(p) == fp
        {
            return g;
        }
    }
    let base = decode::kernel_name(ty, k);
    let mut name = base.clone();
    let mut i = 0;
    while m.lookup(&name).is_some() {
        i += 1;
        name = format!("{base}_{i}");
    }
    m.add(name, Func::Prim(Box::new(func)))
}

/// A tensor type of static dims.
fn tensor_ty(f: &mut RelaxFunction, dims: &[usize], dtype: DataType) -> Ty {
    let dims: Vec<PrimExpr> = dims.iter().map(|&d| f.pool.i64(d as i64)).collect();
    f.pool.intern_ty(TyData::tensor(dims, dtype))
}

/// Quantizes the parameters `taken` of `f`.
fn rewrite(f: &mut RelaxFunction, ty: QuantType, taken: &[Candidate], kernels: &BTreeMap<usize, Global>) {
    // Bindings to insert: (block, index, bindings), applied from the back.
    let mut inserts = Vec::new();
    let mut names = emit::NameSupply::new();
    for c in taken {
        let (n, k) = (c.n(), c.k());
        let rb = ty.row_bytes(k).unwrap_or(0);
        let packed = tensor_ty(f, &[n, rb], DataType::UINT8);
        set_var_type(f, c.param, packed);
        let decoded = tensor_ty(f, &[n, k], DataType::FLOAT32);
        let cast = tensor_ty(f, &[n, k], c.dtype);
        let transposed = tensor_ty(f, &[k, n], c.dtype);
        for u in &c.uses {
            let dataflow = f.blocks[u.block].dataflow;
            let mut new = Vec::new();
            // dq = R.call_tir(cls.decode_<type>_<k>, (w,), out_sinfo=R.Tensor((n, k), "float32"))
            let object = f.pool.intern_ty(TyData::Object);
            let callable = f.pool.intern_ty(TyData::Callable { params: None, ret: object, pure: true });
            let kernel = f.add_expr(ExprData::Global(kernels[&k]), Some(callable));
            let arg = f.use_var(c.param);
            let tuple_ty = f.pool.intern_ty(TyData::Tuple(vec![packed]));
            let tuple = f.add_tuple([arg], Some(tuple_ty));
            let op = f.add_expr(ExprData::Op(OpRef::Known(ops::CALL_TIR)), None);
            let call = f.add_call(op, [kernel, tuple], Attrs::new(), vec![decoded], Some(decoded));
            let b = emit::bind(f, &names.fresh(&format!("{}_dq", c.name)), call, dataflow);
            let mut last = b.var;
            new.push(b);
            if c.dtype != DataType::FLOAT32 {
                let mut attrs = Attrs::new();
                attrs.set("dtype", AttrValue::Str(c.dtype.to_string()));
                let x = f.use_var(last);
                let op = f.add_expr(ExprData::Op(OpRef::Known(ops::ASTYPE)), None);
                let call = f.add_call(op, [x], attrs, Vec::new(), Some(cast));
                let b = emit::bind(f, &names.fresh(&format!("{}_dq_{}", c.name, c.dtype)), call, dataflow);
                last = b.var;
                new.push(b);
            }
            if c.kind == UseKind::Direct {
                let mut attrs = Attrs::new();
                attrs.set("axes", AttrValue::List(vec![AttrValue::Int(1), AttrValue::Int(0)]));
                let x = f.use_var(last);
                let op = f.add_expr(ExprData::Op(OpRef::Known(ops::PERMUTE_DIMS)), None);
                let call = f.add_call(op, [x], attrs, Vec::new(), Some(transposed));
                let b = emit::bind(f, &names.fresh(&format!("{}_dqt", c.name)), call, dataflow);
                last = b.var;
                new.push(b);
            }
            // The use now reads the decoded weight.
            f.exprs[u.expr] = ExprData::Var(last);
            let t = f.vars[last].ty;
            f.expr_ty.set(u.expr, Some(t));
            inserts.push((u.block, u.index, new));
        }
    }
    inserts.sort_by_key(|(b, i, _)| std::cmp::Reverse((*b, *i)));
    for (block, index, new) in inserts {
        let bindings: &mut Vec<Binding> = &mut f.blocks[block].bindings;
        bindings.splice(index..index, new);
    }
    record(f, ty, taken);
}

/// Adds the entries of `taken` to the function's `quantized_params` attribute.
fn record(f: &mut RelaxFunction, ty: QuantType, taken: &[Candidate]) {
    let mut entries = match f.func.attrs.get(ATTR) {
        Some(AttrValue::Dict(kv)) => kv.clone(),
        _ => Vec::new(),
    };
    for c in taken {
        let entry = AttrValue::Dict(vec![
            ("type".to_string(), AttrValue::Str(ty.name().to_string())),
            ("shape".to_string(), AttrValue::List(c.shape.iter().map(|&d| AttrValue::Int(d as i64)).collect())),
            ("dtype".to_string(), AttrValue::Str(c.dtype.to_string())),
            ("transposed".to_string(), AttrValue::Bool(c.kind == UseKind::Direct)),
        ]);
        entries.retain(|(k, _)| *k != c.name);
        entries.push((c.name.clone(), entry));
    }
    f.func.attrs.set(ATTR, AttrValue::Dict(entries));
}

#[cfg(test)]
mod tests {
    use super::*;
    use relax_pass::{PassKind, PassOptions, TypedOptions};

    fn opts(kv: &[(&str, &str)]) -> PassOptions {
        PassOptions(kv.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect())
    }

    #[test]
    fn options_have_a_default_key_and_suggest_types() {
        assert_eq!(QuantizeWeightsOptions::default().ty, QuantType::Q4_0);
        assert_eq!((INFO.options[0].name, INFO.options[0].default), ("type", "q4_0"));
        assert!(INFO.options[0].default_key);
        let o = QuantizeWeightsOptions::from_options(&opts(&[("", "q8_0")])).unwrap();
        assert_eq!(o.ty, QuantType::Q8_0);
        let o = QuantizeWeightsOptions::from_options(&opts(&[("type", "Q4_K")])).unwrap();
        assert_eq!(o.ty, QuantType::Q4K);
        let err = |kv: &[(&str, &str)]| match INFO.create(&opts(kv)) {
            Err(e) => e,
            Ok(_) => panic!("{kv:?} should be rejected"),
        };
        assert_eq!(
            err(&[("", "q4_1")]),
            "pass `quantize-weights`: option `type` must be `q4_0`, `q8_0`, `q4_k` or `q6_k`, found `q4_1`; did you mean `q4_0`?"
        );
        assert_eq!(
            err(&[("", "q8_0"), ("type", "q4_0")]),
            "pass `quantize-weights`: option `type` is given more than once"
        );
        assert_eq!(err(&[("tpye", "q8_0")]), "pass `quantize-weights` has no option `tpye`; did you mean `type`?");
    }

    fn quantize(src: &str, ty: &str) -> (Module, bool) {
        let mut m = relax_parser::parse_module(src).unwrap_or_else(|e| panic!("{e:?}"));
        let Ok(PassKind::Module(p)) = INFO.create(&opts(&[("", ty)])) else { panic!("a module pass") };
        let changed = p.run(&mut m, &mut PassContext::default()).expect("runs");
        relax_ir::verify::verify_module(&m)
            .unwrap_or_else(|e| panic!("{e:?}\n{}", relax_ir::printer::print_module(&m)));
        let text = relax_ir::printer::print_module(&m);
        let back = relax_parser::parse_module(&text).unwrap_or_else(|e| panic!("{e:?}\n{text}"));
        assert_eq!(relax_ir::printer::print_module(&back), text, "prints back");
        (m, changed)
    }

    const SRC: &str = r#"
@I.ir_module
class Module:
    @R.function
    def helper(x: R.Tensor((1, 64), dtype="float32"), w: R.Tensor((64, 8), dtype="float32")) -> R.Tensor((1, 8), dtype="float32"):
        y = R.matmul(x, w)
        return y

    @R.function
    def main(x: R.Tensor((1, 64), dtype="float16"), w_kn: R.Tensor((64, 8), dtype="float16"), w_nk: R.Tensor((8, 64), dtype="bfloat16"), v: R.Tensor((64, 8), dtype="float32")) -> R.Tuple(R.Tensor((1, 8), dtype="float16"), R.Tensor((1, 8), dtype="bfloat16"), R.Tensor((1, 8), dtype="float32")):
        with R.dataflow():
            a = R.matmul(x, w_kn)
            t = R.permute_dims(w_nk, axes=[1, 0])
            xb = R.astype(x, dtype="bfloat16")
            b = R.matmul(xb, t)
            R.output(a, b)
        x32 = R.astype(x, dtype="float32")
        c = cls.helper(x32, v)
        return (a, b, c)
"#;

    #[test]
    fn half_weights_are_decoded_and_cast_back() {
        let (m, changed) = quantize(SRC, "q8_0");
        assert!(changed);
        let text = relax_ir::printer::print_module(&m);
        for line in [
            "w_kn: R.Tensor((8, 68), dtype=\"uint8\")",
            "w_nk: R.Tensor((8, 68), dtype=\"uint8\")",
            "v: R.Tensor((64, 8), dtype=\"float32\")",
            "w_kn_dq = R.call_tir(cls.decode_q8_0_64, (w_kn,), out_sinfo=R.Tensor((8, 64), dtype=\"float32\"))",
            "w_kn_dq_float16: R.Tensor((8, 64), dtype=\"float16\") = R.astype(w_kn_dq, dtype=\"float16\")",
            "w_kn_dqt: R.Tensor((64, 8), dtype=\"float16\") = R.permute_dims(w_kn_dq_float16, axes=[1, 0])",
            "a: R.Tensor((1, 8), dtype=\"float16\") = R.matmul(x, w_kn_dqt",
            "w_nk_dq_bfloat16: R.Tensor((8, 64), dtype=\"bfloat16\") = R.astype(w_nk_dq, dtype=\"bfloat16\")",
            "t: R.Tensor((64, 8), dtype=\"bfloat16\") = R.permute_dims(w_nk_dq_bfloat16, axes=[1, 0])",
            "\"w_kn\": {\"dtype\": \"float16\", \"shape\": [64, 8], \"transposed\": True, \"type\": \"q8_0\"}",
            "\"w_nk\": {\"dtype\": \"bfloat16\", \"shape\": [8, 64], \"transposed\": False, \"type\": \"q8_0\"}",
        ] {
            assert!(text.contains(line), "missing `{line}` in\n{text}");
        }
        // `helper` is called by `main`: its signature stays.
        let helper = m.relax(m.lookup("helper").unwrap()).unwrap();
        assert!(helper.func.attrs.get(ATTR).is_none());
        // One kernel for both weights (rows of 64).
        assert_eq!(text.matches("def decode_q8_0_64(").count(), 1, "{text}");
    }

    #[test]
    fn a_second_run_changes_nothing_and_keeps_the_record() {
        let (mut m, _) = quantize(SRC, "q4_0");
        let before = relax_ir::printer::print_module(&m);
        let Ok(PassKind::Module(p)) = INFO.create(&opts(&[("type", "q8_0")])) else { panic!("a module pass") };
        assert_eq!(p.run(&mut m, &mut PassContext::default()), Ok(false));
        assert_eq!(relax_ir::printer::print_module(&m), before);
    }

    #[test]
    fn remarks_say_what_happened() {
        let mut m = relax_parser::parse_module(SRC).unwrap();
        let Ok(PassKind::Module(p)) = INFO.create(&opts(&[("", "q4_0")])) else { panic!("a module pass") };
        let mut cx = PassContext { remarks_enabled: vec![INFO.name.to_string()], ..Default::default() };
        p.run(&mut m, &mut cx).unwrap();
        let msgs: Vec<&str> = cx.remarks.iter().map(|d| d.message.as_str()).collect();
        assert!(
            msgs.contains(&"`w` of `helper` stays float32: `helper` is called from `main`, so its signature stays"),
            "{msgs:?}"
        );
        assert!(
            msgs.contains(&"`w_kn` of `main` is quantized to q4_0: (64, 8) float16 becomes (8, 36) uint8, transposed"),
            "{msgs:?}"
        );
        assert!(msgs.contains(&"`x` of `main` stays float16: it is the first operand of `R.matmul`, not the weight of a matrix product"), "{msgs:?}");
    }
}
