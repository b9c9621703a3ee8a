//! `quantize-activations`: matrix products with a block-quantized weight compute on
//! activations quantized to 8 bits and integer dot products, as llama.cpp does
//! (`docs/passes.md`).
//!
//! What it takes: `y = R.matmul(x, t)` where `t = R.permute_dims(d)` (a 2-D transpose)
//! and `d = R.call_tir(decode, (w,))` with `decode` a Q4_0, Q8_0, Q4_K or Q6_K decode kernel
//! (recognized by structure: equal to [`crate::quant::decode::kernel`] of its type and
//! row length, whatever its name), `x` a static `(m, k)` float32 matrix of at most
//! `max-rows` rows (the decode step of a language model). What it writes:
//!
//! ```text
//! x_q8 = R.call_tir(cls.quantize_q8_2048, (x,), out_sinfo=[R.Tensor((1, 2048), "int8"), R.Tensor((1, 64), "float32"), R.Tensor((1, 512), "int32")])
//! x_q = x_q8[0]; x_d = x_q8[1]; x_s = x_q8[2]
//! y = R.call_tir(cls.matmul_q8_q4_0_2048_r1, (w, x_q, x_d, x_s), out_sinfo=R.Tensor((1, n), "float32"))
//! ```
//!
//! one quantization per activation and block of bindings, shared by every matmul that
//! reads it (the query, key and value projections), and the decode and transpose go
//! when nothing else reads them. The kernels are [`crate::quant::q8`]'s, plain TIR: the
//! interpreter computes the rounding of the activations and the integer products the
//! way the JIT does. The matmul kernel is marked `op_pattern` 4 (out-elementwise
//! fusable: `fuse-ops` adds its elementwise consumers), the quantizer 8 (opaque: it runs
//! alone). This changes the numbers (the activations are rounded to 8 bits per block of
//! 32), exactly as llama.cpp's CPU backend always does for these types.

use std::collections::HashMap;

use relax_ir::attrs::AttrValue;
use relax_ir::op::OpRef;
use relax_ir::{
    Attrs, Binding, Block, DataType, Expr, ExprData, Func, Global, Module, PrimExpr, PrimFunc, RelaxFunction, Ty,
    TyData, Var, ops,
};
use relax_pass::{ModulePass, PassContext, PassResult};

use crate::analysis::op_pattern::{OP_PATTERN_ATTR, OpPatternKind};
use crate::emit;
use crate::quant::{QuantType, decode, q8};
use crate::walk;

relax_pass::declare_pass! {
    /// Registry entry.
    pub INFO: Module "quantize-activations" {
        summary: "matmuls with a block-quantized weight and a few activation rows run on activations quantized to 8 bits, with integer dot products (llama.cpp's numerics)",
        new: |options| QuantizeActivations { options },
    }
    /// The options of `quantize-activations`.
    pub struct QuantizeActivationsOptions {
        /// The most activation rows a rewritten matmul has.
        pub max_rows: i64 = 4 {
            key: "max-rows",
            help: "the most activation rows (a constant count) of a matmul that is rewritten",
            check: is_row_bound, "from 1 to 64",
        },
        /// Whether Q4_K and Q6_K weights are taken too.
        pub k_quants: bool = false {
            key: "k-quants",
            help: "also rewrite the matmuls of Q4_K and Q6_K weights",
        },
    }
}

fn is_row_bound(&r: &i64) -> bool {
    (1..=64).contains(&r)
}

/// The pass.
pub struct QuantizeActivations {
    /// Its options.
    pub options: QuantizeActivationsOptions,
}

/// A matmul to rewrite.
struct Site {
    block: Block,
    index: usize,
    x: Var,
    w: Expr,
    ty: QuantType,
    rows: usize,
    k: usize,
    n: PrimExpr,
    /// The transpose's and the decode's variables (removed when unused afterwards).
    dead: [Var; 2],
}

impl ModulePass for QuantizeActivations {
    fn run(&self, m: &mut Module, _cx: &mut PassContext) -> PassResult {
        let mut decoders = decoders(m);
        if !self.options.k_quants {
            decoders.retain(|_, (ty, _)| matches!(ty, QuantType::Q4_0 | QuantType::Q8_0));
        }
        if decoders.is_empty() {
            return Ok(false);
        }
        let mut plans: Vec<(Global, Vec<Site>)> = Vec::new();
        for g in m.print_order() {
            let Some(f) = m.relax(g) else { continue };
            let sites = find(f, &decoders, self.options.max_rows as usize);
            if !sites.is_empty() {
                plans.push((g, sites));
            }
        }
        if plans.is_empty() {
            return Ok(false);
        }
        let mut kernels: HashMap<String, Global> = HashMap::new();
        for (_, sites) in &plans {
            for s in sites {
                let qn = q8::quantize_name(s.k);
                if let std::collections::hash_map::Entry::Vacant(e) = kernels.entry(qn) {
                    let qn = e.key().clone();
                    e.insert(add_kernel(m, &qn, q8::quantize_kernel(s.k), OpPatternKind::Opaque));
                }
                let mn = q8::matmul_name(s.ty, s.k, s.rows);
                if let std::collections::hash_map::Entry::Vacant(e) = kernels.entry(mn) {
                    let mn = e.key().clone();
                    let func = q8::matmul_kernel(s.ty, s.k, s.rows);
                    e.insert(add_kernel(m, &mn, func, OpPatternKind::OutEWiseFusable));
                }
            }
        }
        for (g, sites) in plans {
            relax_pass::with_relax_function(m, g, |_, f| rewrite(f, &sites, &kernels));
        }
        Ok(true)
    }
}

/// The module's decode kernels: global, type and row length.
fn decoders(m: &Module) -> HashMap<Global, (QuantType, usize)> {
    let mut reference: HashMap<(QuantType, usize), String> = HashMap::new();
    let mut out = HashMap::new();
    for (g, gd) in m.live() {
        let Func::Prim(p) = &gd.func else { continue };
        let Some(k) = decoded_row_length(p) else { continue };
        let fp = relax_ir::structural::prim_func(p);
        for ty in QuantType::ALL {
            if !q8::supported(ty) || ty.row_bytes(k).is_none() {
                continue;
            }
            let want =
                reference.entry((ty, k)).or_insert_with(|| relax_ir::structural::prim_func(&decode::kernel(ty, k)));
            if fp == *want {
                out.insert(g, (ty, k));
            }
        }
    }
    out
}

/// The static last dim of a PrimFunc's last parameter buffer (a decode kernel's row
/// length), if it has one.
fn decoded_row_length(p: &PrimFunc) -> Option<usize> {
    let &(_, buf) = p.buffer_map.last()?;
    let shape = &p.buffer(buf).shape;
    if shape.len() != 2 {
        return None;
    }
    usize::try_from(p.pool.as_int(shape[1])?).ok()
}

/// The static dims of a tensor type of `dtype`.
fn static_dims(f: &RelaxFunction, ty: Ty, dtype: DataType) -> Option<Vec<usize>> {
    let t = f.pool.ty(ty);
    if t.dtype()? != dtype {
        return None;
    }
    t.dims()?.iter().map(|&d| f.pool.as_int(d).and_then(|v| usize::try_from(v).ok())).collect()
}

/// The variable an expression is, if it is one.
fn as_var(f: &RelaxFunction, e: Expr) -> Option<Var> {
    match f.exprs[e] {
        ExprData::Var(v) => Some(v),
        _ => None,
    }
}

/// The matmuls of `f` to rewrite.
fn find(f: &RelaxFunction, decoders: &HashMap<Global, (QuantType, usize)>, max_rows: usize) -> Vec<Site> {
    let mut def: HashMap<Var, Expr> = HashMap::new();
    for (_, b) in walk::all_blocks(f) {
        for bd in &f.blocks[b].bindings {
            def.insert(bd.var, bd.value);
        }
    }
    let call_of = |e: Expr| match &f.exprs[e] {
        ExprData::Call(c) => Some(c),
        _ => None,
    };
    let mut out = Vec::new();
    for (_, block) in walk::all_blocks(f) {
        for (index, bd) in f.blocks[block].bindings.iter().enumerate() {
            if f.called_op(bd.value) != Some(ops::MATMUL) {
                continue;
            }
            let Some(c) = call_of(bd.value) else { continue };
            let out_dtype = c.attrs.get("out_dtype").and_then(|a| a.as_str().map(str::to_string));
            if !matches!(out_dtype.as_deref(), None | Some("void") | Some("float32")) {
                continue;
            }
            let args = f.list(c.args);
            let (Some(x), Some(t)) = (as_var(f, args[0]), args.get(1).and_then(|&a| as_var(f, a))) else { continue };
            let Some(&tv) = def.get(&t) else { continue };
            if f.called_op(tv) != Some(ops::PERMUTE_DIMS) {
                continue;
            }
            let Some(pc) = call_of(tv) else { continue };
            let transpose = match pc.attrs.get("axes") {
                None | Some(AttrValue::None) => true,
                Some(v) => v.as_int_list().is_some_and(|a| a == [1, 0]),
            };
            let Some(d) = f.list(pc.args).first().and_then(|&a| as_var(f, a)) else { continue };
            if !transpose {
                continue;
            }
            let Some(&dv) = def.get(&d) else { continue };
            if f.called_op(dv) != Some(ops::CALL_TIR) {
                continue;
            }
            let Some(dc) = call_of(dv) else { continue };
            let dargs = f.list(dc.args);
            let ExprData::Global(kernel) = f.exprs[dargs[0]] else { continue };
            let Some(&(ty, k)) = decoders.get(&kernel) else { continue };
            let ExprData::Tuple(ops_list) = &f.exprs[dargs[1]] else { continue };
            let [w] = f.list(*ops_list) else { continue };
            let Some(xd) = static_dims(f, f.vars[x].ty, DataType::FLOAT32) else { continue };
            let [rows, xk] = xd[..] else { continue };
            let Some(TyData::Tensor { .. }) = f.ty_of(*w).map(|t| f.pool.ty(t)) else { continue };
            let Some(wdims) = f.ty_of(*w).and_then(|t| f.pool.ty(t).dims().map(<[PrimExpr]>::to_vec)) else {
                continue;
            };
            if xk != k || rows == 0 || rows > max_rows || wdims.len() != 2 {
                continue;
            }
            out.push(Site { block, index, x, w: *w, ty, rows, k, n: wdims[0], dead: [t, d] });
        }
    }
    out
}

/// A PrimFunc already in the module that equals `func`, or `func` added under `name`
/// (with a suffix when the name is taken), marked with the pattern kind `kind`.
fn add_kernel(m: &mut Module, name: &str, mut func: PrimFunc, kind: OpPatternKind) -> Global {
    func.attrs.set(OP_PATTERN_ATTR, AttrValue::Int(kind.value()));
    let fp = relax_ir::structural::prim_func(&func);
    for (g, gd) in m.live() {
        if let Func::Prim(p) = &gd.func
            && relax_ir::structural::prim_func(p) == fp
        {
            return g;
        }
    }
    let mut fresh = name.to_string();
    let mut i = 0;
    while m.lookup(&fresh).is_some() {
        i += 1;
        fresh = format!("{name}_{i}");
    }
    m.add(fresh, Func::Prim(Box::new(func)))
}

/// A tensor type.
fn tensor_ty(f: &mut RelaxFunction, dims: Vec<PrimExpr>, dtype: DataType) -> Ty {
    f.pool.intern_ty(TyData::tensor(dims, dtype))
}

/// `R.call_tir(kernel, (args...), out_sinfo=out)`.
fn call_tir(f: &mut RelaxFunction, kernel: Global, args: Vec<Expr>, out: Ty) -> Expr {
    let object = f.pool.intern_ty(TyData::Object);
    let callable = f.pool.intern_ty(TyData::Callable { params: None, ret: object, pure: true });
    let callee = f.add_expr(ExprData::Global(kernel), Some(callable));
    let arg_tys: Vec<Ty> = args.iter().map(|&a| f.ty_of(a).unwrap_or(object)).collect();
    let tuple_ty = f.pool.intern_ty(TyData::Tuple(arg_tys));
    let tuple = f.add_tuple(args, Some(tuple_ty));
    let op = f.add_expr(ExprData::Op(OpRef::Known(ops::CALL_TIR)), None);
    f.add_call(op, [callee, tuple], Attrs::new(), vec![out], Some(out))
}

/// Rewrites the matmuls `sites` of `f`.
fn rewrite(f: &mut RelaxFunction, sites: &[Site], kernels: &HashMap<String, Global>) {
    let mut names = emit::NameSupply::new();
    for v in f.vars.values() {
        names.fresh(&v.name);
    }
    // The quantized activations of each (block, variable): three variables, and the
    // bindings that make them, inserted before the first matmul that reads them.
    let mut quantized: HashMap<(Block, Var), [Var; 3]> = HashMap::new();
    let mut inserts: Vec<(Block, usize, Vec<Binding>)> = Vec::new();
    for s in sites {
        let dataflow = f.blocks[s.block].dataflow;
        let parts = match quantized.get(&(s.block, s.x)) {
            Some(p) => *p,
            None => {
                let r = f.pool.i64(s.rows as i64);
                let ke = f.pool.i64(s.k as i64);
                let nbe = f.pool.i64((s.k / q8::BLOCK) as i64);
                let nge = f.pool.i64((s.k / q8::GROUP) as i64);
                let tys = [
                    tensor_ty(f, vec![r, ke], DataType::INT8),
                    tensor_ty(f, vec![r, nbe], DataType::FLOAT32),
                    tensor_ty(f, vec![r, nge], DataType::INT32),
                ];
                let tuple_ty = f.pool.intern_ty(TyData::Tuple(tys.to_vec()));
                let x = f.use_var(s.x);
                let call = call_tir(f, kernels[&q8::quantize_name(s.k)], vec![x], tuple_ty);
                let base = f.vars[s.x].name.clone();
                let b = emit::bind(f, &names.fresh(&format!("{base}_q8")), call, dataflow);
                let tuple_var = b.var;
                let mut new = vec![b];
                let mut vars = Vec::new();
                for (i, (suffix, ty)) in ["q", "d", "s"].iter().zip(tys).enumerate() {
                    let t = f.use_var(tuple_var);
                    let item = f.add_expr(ExprData::GetItem { tuple: t, index: i as u32 }, Some(ty));
                    let b = emit::bind(f, &names.fresh(&format!("{base}_q8{suffix}")), item, dataflow);
                    vars.push(b.var);
                    new.push(b);
                }
                let p = [vars[0], vars[1], vars[2]];
                quantized.insert((s.block, s.x), p);
                inserts.push((s.block, s.index, new));
                p
            }
        };
        let r = f.pool.i64(s.rows as i64);
        let out = tensor_ty(f, vec![r, s.n], DataType::FLOAT32);
        let w = match f.exprs[s.w] {
            ExprData::Var(v) => f.use_var(v),
            _ => s.w,
        };
        let mut args = vec![w];
        args.extend(parts.iter().map(|&v| f.use_var(v)));
        let call = call_tir(f, kernels[&q8::matmul_name(s.ty, s.k, s.rows)], args, out);
        f.blocks[s.block].bindings[s.index].value = call;
    }
    inserts.sort_by_key(|(b, i, _)| std::cmp::Reverse((*b, *i)));
    for (block, index, new) in inserts {
        f.blocks[block].bindings.splice(index..index, new);
    }
    // The transposes, then the decodes, that nothing reads any more.
    for which in 0..2 {
        let counts = walk::use_counts(f);
        let dead: Vec<Var> =
            sites.iter().map(|s| s.dead[which]).filter(|v| counts.get(v).copied().unwrap_or(0) == 0).collect();
        for (_, b) in walk::all_blocks(f) {
            f.blocks[b].bindings.retain(|bd| !dead.contains(&bd.var));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use relax_pass::{PassKind, PassOptions};

    fn run(src: &str, kv: &[(&str, &str)]) -> (String, bool) {
        let mut m = relax_parser::parse_module(src).unwrap_or_else(|e| panic!("{e:?}"));
        let opts = PassOptions(kv.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect());
        let Ok(PassKind::Module(p)) = INFO.create(&opts) else { panic!("a module pass") };
        let changed = p.run(&mut m, &mut PassContext::default()).expect("runs");
        relax_ir::verify::verify_module(&m)
            .unwrap_or_else(|e| panic!("{e:?}\n{}", relax_ir::printer::print_module(&m)));
        let text = relax_ir::printer::print_module(&m);
        let back = relax_parser::parse_module(&text).unwrap_or_else(|e| panic!("{e:?}\n{text}"));
        assert_eq!(relax_ir::printer::print_module(&back), text, "prints back");
        (text, changed)
    }

    fn source(rows: usize) -> String {
        let mut m = Module::new();
        m.add("dq", Func::Prim(Box::new(decode::kernel(QuantType::Q4_0, 64))));
        m.add("dk", Func::Prim(Box::new(decode::kernel(QuantType::Q4K, 256))));
        let mut text = relax_ir::printer::print_module(&m);
        text.push_str(&format!(
            r#"
    @R.function
    def main(x: R.Tensor(({rows}, 64), dtype="float32"), a: R.Tensor((8, 36), dtype="uint8"), b: R.Tensor((4, 36), dtype="uint8"), c: R.Tensor((2, 144), dtype="uint8"), z: R.Tensor(({rows}, 256), dtype="float32")) -> R.Tuple(R.Tensor(({rows}, 8), dtype="float32"), R.Tensor(({rows}, 4), dtype="float32"), R.Tensor(({rows}, 2), dtype="float32"), R.Tensor((8, 64), dtype="float32")):
        cls = Module
        with R.dataflow():
            ad = R.call_tir(cls.dq, (a,), out_sinfo=R.Tensor((8, 64), dtype="float32"))
            at = R.permute_dims(ad, axes=[1, 0])
            ya = R.matmul(x, at, out_dtype="void")
            bd = R.call_tir(cls.dq, (b,), out_sinfo=R.Tensor((4, 64), dtype="float32"))
            bt = R.permute_dims(bd, axes=[1, 0])
            yb = R.matmul(x, bt, out_dtype="void")
            cd = R.call_tir(cls.dk, (c,), out_sinfo=R.Tensor((2, 256), dtype="float32"))
            ct = R.permute_dims(cd, axes=[1, 0])
            yc = R.matmul(z, ct, out_dtype="void")
            R.output(ya, yb, yc, ad)
        return (ya, yb, yc, ad)
"#
        ));
        text
    }

    #[test]
    fn q4_0_matmuls_share_one_quantization() {
        let (plain, _) = run(&source(1), &[]);
        assert!(
            plain.contains("yc: R.Tensor((1, 2), dtype=\"float32\") = R.matmul(z, ct"),
            "Q4_K stays by default:\n{plain}"
        );
        let (text, changed) = run(&source(1), &[("k-quants", "true")]);
        assert!(changed);
        for line in [
            "x_q8 = R.call_tir(cls.quantize_q8_64, (x,), out_sinfo=[R.Tensor((1, 64), dtype=\"int8\"), R.Tensor((1, 2), dtype=\"float32\"), R.Tensor((1, 16), dtype=\"int32\")])",
            "ya = R.call_tir(cls.matmul_q8_q4_0_64_r1, (a, x_q8q, x_q8d, x_q8s), out_sinfo=R.Tensor((1, 8), dtype=\"float32\"))",
            "yb = R.call_tir(cls.matmul_q8_q4_0_64_r1, (b, x_q8q, x_q8d, x_q8s)",
            // Q4_K too (its own quantization of `z`), and a decode that is returned stays.
            "z_q8 = R.call_tir(cls.quantize_q8_256, (z,)",
            "yc = R.call_tir(cls.matmul_q8_q4_k_256_r1, (c, z_q8q, z_q8d, z_q8s)",
            "ad = R.call_tir(cls.dq, (a,)",
        ] {
            assert!(text.contains(line), "missing `{line}` in\n{text}");
        }
        assert_eq!(text.matches("R.call_tir(cls.quantize_q8_64").count(), 1, "{text}");
        assert!(!text.contains("bd = "), "{text}");
        assert!(!text.contains("at = "), "{text}");
        let (again, changed) = run(&text, &[("k-quants", "true")]);
        assert!(!changed);
        assert_eq!(again, text);
    }

    #[test]
    fn more_rows_than_the_bound_stay() {
        let (text, changed) = run(&source(5), &[]);
        assert!(!changed, "{text}");
        let (text, changed) = run(&source(5), &[("max-rows", "8")]);
        assert!(changed, "{text}");
        assert!(text.contains("cls.matmul_q8_q4_0_64_r5"), "{text}");
    }
}
