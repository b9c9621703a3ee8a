//! Which parameters of a Relax function `quantize-weights` quantizes, and where they are
//! used (`docs/passes.md`, "quantize-weights").
//!
//! A parameter is taken when
//!
//! 1. its type is a static 2-D tensor of `float32`, `float16` or `bfloat16`;
//! 2. every use of it is as the weight of a matrix product, all in one of two ways:
//!    * *direct*: the second operand of `R.matmul(x, W)`, `W` laid out `(K, N)`;
//!    * *transposed*: the operand of `t = R.permute_dims(W)` (axes `[1, 0]` or none),
//!      `W` laid out `(N, K)` as GGUF and Hugging Face store weights, where every use
//!      of `t` is the second operand of an `R.matmul`;
//! 3. the contraction length `K` is a multiple of the type's block (32, or 256 for the
//!    k-quants).
//!
//! Rows of the packed weight run along `K`, so each row holds one output's weights, as
//! in a GGUF file: the packed parameter is `(N, K / block * block_bytes)` `uint8`.
//! Every other float matrix parameter is skipped, with the reason ([`Skipped`]).

use std::collections::HashMap;

use relax_ir::attrs::AttrValue;
use relax_ir::{Block, DataType, Expr, ExprData, RelaxFunction, Var, ops};

use super::layout::QuantType;

/// How a weight is used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UseKind {
    /// `R.matmul(x, W)`: the operand is replaced by the decoded weight, transposed.
    Direct,
    /// `R.permute_dims(W)`: the operand is replaced by the decoded weight.
    Transposed,
}

/// One use of a taken parameter: the `Var` node that uses it, and the binding it is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Use {
    /// The use's expression node (an `ExprData::Var` of the parameter).
    pub expr: Expr,
    /// The block of the binding whose value holds the use.
    pub block: Block,
    /// The binding's index in the block.
    pub index: usize,
}

/// A parameter to quantize.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    /// The parameter.
    pub param: Var,
    /// Its name.
    pub name: String,
    /// Its element type.
    pub dtype: DataType,
    /// Its shape, `(K, N)` for direct uses, `(N, K)` for transposed ones.
    pub shape: [usize; 2],
    /// How it is used (one way for all uses).
    pub kind: UseKind,
    /// Its uses, in program order.
    pub uses: Vec<Use>,
}

impl Candidate {
    /// The contraction length `K`: the packed rows' length.
    pub fn k(&self) -> usize {
        match self.kind {
            UseKind::Direct => self.shape[0],
            UseKind::Transposed => self.shape[1],
        }
    }
    /// The number of outputs `N`: the packed rows.
    pub fn n(&self) -> usize {
        match self.kind {
            UseKind::Direct => self.shape[1],
            UseKind::Transposed => self.shape[0],
        }
    }
}

/// A float matrix parameter that stays as it is, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skipped {
    /// The parameter.
    pub param: Var,
    /// Its name.
    pub name: String,
    /// Why (a phrase completing "it stays floating point: ...").
    pub reason: String,
}

/// A use of a variable found in a binding: where, and in what role.
#[derive(Clone, Copy, Debug)]
struct Found {
    expr: Expr,
    block: Block,
    index: usize,
    /// `Some(kind)` for a use as a weight (a permute's operand still needs its result
    /// checked), `None` for any other use.
    kind: Option<UseKind>,
    /// The permute's bound variable, for a transposed use.
    permuted: Option<Var>,
    /// What the other use is, for the message.
    what: &'static str,
}

/// True for `axes=[1, 0]` or no axes (a 2-D transpose).
fn is_transpose(attrs: &relax_ir::Attrs) -> bool {
    match attrs.get("axes") {
        None | Some(AttrValue::None) => true,
        Some(v) => v.as_int_list().is_some_and(|a| a == [1, 0]),
    }
}

/// The uses of every variable in `f`, by binding.
fn uses(f: &RelaxFunction) -> (HashMap<Var, Vec<Found>>, Vec<Var>) {
    let mut found: HashMap<Var, Vec<Found>> = HashMap::new();
    let mut returned = Vec::new();
    for s in f.all_seqs() {
        for &block in &f.seq(s).blocks {
            for (index, bd) in f.blocks[block].bindings.iter().enumerate() {
                let value = bd.value;
                let op = f.called_op(value);
                let args: Vec<Expr> = match &f.exprs[value] {
                    ExprData::Call(c) => f.list(c.args).to_vec(),
                    _ => Vec::new(),
                };
                // Every variable node the value holds, outside nested sequences.
                let mut stack = vec![value];
                while let Some(e) = stack.pop() {
                    if let ExprData::Var(v) = f.exprs[e] {
                        let (kind, permuted, what) = match op {
                            Some(ops::MATMUL) if args.get(1) == Some(&e) => (Some(UseKind::Direct), None, ""),
                            Some(ops::MATMUL) => (None, None, "the first operand of `R.matmul`"),
                            Some(ops::PERMUTE_DIMS) if args.first() == Some(&e) => {
                                let ExprData::Call(c) = &f.exprs[value] else { unreachable!("a call") };
                                if is_transpose(&c.attrs) {
                                    (Some(UseKind::Transposed), Some(bd.var), "")
                                } else {
                                    (None, None, "`R.permute_dims` with other axes than [1, 0]")
                                }
                            }
                            _ if e == value => (None, None, "bound to another variable"),
                            _ => (None, None, "an operand of something other than a matrix product"),
                        };
                        found.entry(v).or_default().push(Found { expr: e, block, index, kind, permuted, what });
                    }
                    stack.extend(f.operands(e));
                }
            }
        }
        let mut stack = vec![f.seq(s).body];
        while let Some(e) = stack.pop() {
            if let ExprData::Var(v) = f.exprs[e] {
                returned.push(v);
            }
            stack.extend(f.operands(e));
        }
    }
    (found, returned)
}

/// The op that uses a variable in a way the rule does not take, for messages.
fn describe_use(f: &RelaxFunction, bd_value: Expr) -> Option<String> {
    let ExprData::Call(c) = &f.exprs[bd_value] else { return None };
    match &f.exprs[c.callee] {
        ExprData::Op(op) => Some(format!("`R.{}`", op.name().strip_prefix("relax.").unwrap_or(op.name()))),
        ExprData::Global(_) => Some("a call of a function".to_string()),
        _ => None,
    }
}

/// The static 2-D float shape and dtype of `v`, if it has one.
pub fn float_matrix(f: &RelaxFunction, v: Var) -> Option<([usize; 2], DataType)> {
    let t = f.pool.ty(f.vars[v].ty);
    let dtype = t.dtype()?;
    if !matches!(dtype, DataType::FLOAT32 | DataType::FLOAT16 | DataType::BFLOAT16) {
        return None;
    }
    let dims = t.dims()?;
    let [a, b] = dims else { return None };
    let a = usize::try_from(f.pool.as_int(*a)?).ok()?;
    let b = usize::try_from(f.pool.as_int(*b)?).ok()?;
    Some(([a, b], dtype))
}

/// The parameters of `f` to quantize to `ty`, and the float matrix parameters that
/// stay, with the reason.
pub fn plan(f: &RelaxFunction, ty: QuantType) -> (Vec<Candidate>, Vec<Skipped>) {
    let (found, returned) = uses(f);
    let mut taken = Vec::new();
    let mut skipped = Vec::new();
    for &p in &f.func.params {
        let Some((shape, dtype)) = float_matrix(f, p) else { continue };
        let name = f.vars[p].name.clone();
        let skip = |reason: String| Skipped { param: p, name: name.clone(), reason };
        let list = found.get(&p).map(Vec::as_slice).unwrap_or_default();
        if returned.contains(&p) {
            skipped.push(skip("it is returned".to_string()));
            continue;
        }
        if list.is_empty() {
            skipped.push(skip("it is not used".to_string()));
            continue;
        }
        if let Some(bad) = list.iter().find(|u| u.kind.is_none()) {
            let value = f.blocks[bad.block].bindings[bad.index].value;
            let reason = match describe_use(f, value) {
                Some(op) if bad.what.starts_with("an operand") => format!("it is an operand of {op}"),
                _ => format!("it is {}", bad.what),
            };
            skipped.push(skip(format!("{reason}, not the weight of a matrix product")));
            continue;
        }
        // A transposed use counts only when the transpose feeds matrix products alone.
        let bad_permute = list.iter().filter_map(|u| u.permuted).find(|t| {
            returned.contains(t)
                || found.get(t).is_none_or(|us| us.is_empty() || us.iter().any(|u| u.kind != Some(UseKind::Direct)))
        });
        if let Some(t) = bad_permute {
            skipped.push(skip(format!(
                "its transpose `{}` is used other than as the weight of `R.matmul`",
                f.vars[t].name
            )));
            continue;
        }
        let kind = list[0].kind.expect("checked above");
        if list.iter().any(|u| u.kind != Some(kind)) {
            skipped.push(skip("it is used both directly and transposed".to_string()));
            continue;
        }
        let c = Candidate {
            param: p,
            name: name.clone(),
            dtype,
            shape,
            kind,
            uses: list.iter().map(|u| Use { expr: u.expr, block: u.block, index: u.index }).collect(),
        };
        if ty.row_bytes(c.k()).is_none() {
            skipped.push(skip(format!(
                "its contraction length {} is not a multiple of {}, the block of {ty}",
                c.k(),
                ty.block_elems()
            )));
            continue;
        }
        taken.push(c);
    }
    (taken, skipped)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Taken: (name, kind, uses); skipped: (name, reason).
    type Outcome = (Vec<(String, UseKind, usize)>, Vec<(String, String)>);

    /// The names taken (with their kind) and skipped (with the reason) in `main`.
    fn run(src: &str, ty: QuantType) -> Outcome {
        let m = relax_parser::parse_module(src).unwrap_or_else(|e| panic!("{e:?}"));
        let f = m.relax(m.lookup("main").expect("main")).expect("a Relax function");
        let (taken, skipped) = plan(f, ty);
        (
            taken.into_iter().map(|c| (c.name.clone(), c.kind, c.uses.len())).collect(),
            skipped.into_iter().map(|s| (s.name, s.reason)).collect(),
        )
    }

    const MODULE: &str = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 64), dtype="float32"), w_kn: R.Tensor((64, 8), dtype="float32"), w_nk: R.Tensor((8, 64), dtype="float16"), emb: R.Tensor((10, 64), dtype="float32"), w_odd: R.Tensor((48, 8), dtype="float32"), w_ret: R.Tensor((64, 8), dtype="float32"), w_first: R.Tensor((8, 64), dtype="float32"), w_int: R.Tensor((64, 8), dtype="int8"), w_3d: R.Tensor((2, 64, 8), dtype="float32"), w_sym: R.Tensor(("n", 8), dtype="float32"), w_unused: R.Tensor((64, 8), dtype="float32"), w_tboth: R.Tensor((8, 64), dtype="float32"), w_twice: R.Tensor((64, 8), dtype="float32")):
        n = T.int64()
        with R.dataflow():
            a = R.matmul(x, w_kn)
            t = R.permute_dims(w_nk, axes=[1, 0])
            x16 = R.astype(x, dtype="float16")
            b = R.matmul(x16, t)
            e = R.take(emb, R.const([1], "int32"), axis=0)
            xo = R.strided_slice(x, (R.prim_value(1),), (R.prim_value(0),), (R.prim_value(48),))
            c = R.matmul(xo, w_odd)
            d = R.matmul(w_first, R.permute_dims(x, axes=[1, 0]))
            u = R.permute_dims(w_tboth, axes=[1, 0])
            f = R.matmul(x, u)
            g = R.add(u, R.const(1.0, "float32"))
            h = R.matmul(x, w_twice)
            i = R.matmul(e, w_twice)
            R.output(a, b, c, d, f, g, h, i)
        return (a, b, c, d, f, g, h, i, w_ret)
"#;

    #[test]
    fn the_rule_takes_matmul_weights_only() {
        let (taken, skipped) = run(MODULE, QuantType::Q4_0);
        assert_eq!(
            taken,
            [
                ("w_kn".to_string(), UseKind::Direct, 1),
                ("w_nk".to_string(), UseKind::Transposed, 1),
                ("w_twice".to_string(), UseKind::Direct, 2)
            ]
        );
        let reason = |name: &str| skipped.iter().find(|(n, _)| n == name).map(|(_, r)| r.as_str());
        assert_eq!(reason("emb"), Some("it is an operand of `R.take`, not the weight of a matrix product"));
        assert_eq!(reason("w_odd"), Some("its contraction length 48 is not a multiple of 32, the block of q4_0"));
        assert_eq!(reason("w_ret"), Some("it is returned"));
        assert_eq!(
            reason("w_first"),
            Some("it is the first operand of `R.matmul`, not the weight of a matrix product")
        );
        assert_eq!(reason("w_unused"), Some("it is not used"));
        assert_eq!(reason("w_tboth"), Some("its transpose `u` is used other than as the weight of `R.matmul`"));
        // An activation is a float matrix too, and says why it stays.
        assert_eq!(reason("x"), Some("it is the first operand of `R.matmul`, not the weight of a matrix product"));
        // Not float matrices: not candidates at all.
        for name in ["w_int", "w_3d", "w_sym"] {
            assert_eq!(reason(name), None, "{name}");
        }
    }

    #[test]
    fn k_quants_need_rows_of_256() {
        let (taken, skipped) = run(MODULE, QuantType::Q4K);
        assert!(taken.is_empty(), "{taken:?}");
        let reasons: Vec<&str> = skipped.iter().map(|(_, r)| r.as_str()).collect();
        assert!(
            reasons.contains(&"its contraction length 64 is not a multiple of 256, the block of q4_k"),
            "{reasons:?}"
        );
    }

    #[test]
    fn other_uses_are_named() {
        let src = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 32), dtype="float32"), w: R.Tensor((32, 32), dtype="float32"), v: R.Tensor((32, 32), dtype="float32"), p: R.Tensor((32, 32), dtype="float32")):
        with R.dataflow():
            a = R.matmul(x, w)
            b = R.matmul(x, v)
            w2 = w
            c = R.matmul(x, R.permute_dims(p, axes=[0, 1]))
            d = R.matmul(x, p)
            R.output(a, b, c, d, w2)
        return (a, b, c, d, w2)
"#;
        let (taken, skipped) = run(src, QuantType::Q8_0);
        assert_eq!(taken, [("v".to_string(), UseKind::Direct, 1)]);
        assert_eq!(
            skipped,
            [
                (
                    "x".to_string(),
                    "it is the first operand of `R.matmul`, not the weight of a matrix product".to_string()
                ),
                ("w".to_string(), "it is bound to another variable, not the weight of a matrix product".to_string()),
                (
                    "p".to_string(),
                    "it is `R.permute_dims` with other axes than [1, 0], not the weight of a matrix product"
                        .to_string()
                ),
            ]
        );
    }
}
