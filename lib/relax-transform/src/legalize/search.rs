//! Search ops (`legalize_ops/search.py`; TOPI's `where`, `argmax`, `argmin`).
//!
//! * `where(c, x, y)`: `T_where` over the broadcast shape of the three operands, storing
//!   `T.Select(c != 0, x, y)` (which TVM's simplifier turns into `0 < c` for a `bool`
//!   condition).
//! * `argmax`, `argmin`: see [`super::reduce::arg_reduce`].

use relax_ir::DataType;
use relax_ir::op::{OpId, ops};
use relax_ir::prim::BinOp;

use super::binary::{broadcast_shape, input_index};
use super::cx::Cx;
use super::reduce::arg_reduce;
use super::te::{Axes, CombinerKind};
use super::{Legalize, Lowered};

/// The legalization of a search op (name without `relax.`).
pub const fn lookup(id: OpId) -> Option<Legalize> {
    Some(match id {
        ops::WHERE => where_,
        ops::ARGMAX => |cx| arg_reduce(cx, CombinerKind::ArgMax, "argmax"),
        ops::ARGMIN => |cx| arg_reduce(cx, CombinerKind::ArgMin, "argmin"),
        _ => return None,
    })
}

fn where_(cx: &mut Cx) -> Option<Lowered> {
    let c = cx.tensor(0)?;
    let x = cx.tensor(1)?;
    let y = cx.tensor(2)?;
    let te = &mut cx.te;
    let (sc, sx, sy) = (te.shape(c), te.shape(x), te.shape(y));
    let (common1, _, _) = broadcast_shape(te, &sx, &sy);
    let (oshape, _, _) = broadcast_shape(te, &sc, &common1);
    let (_, uc, _) = broadcast_shape(te, &sc, &oshape);
    let (_, ux, _) = broadcast_shape(te, &sx, &oshape);
    let (_, uy, _) = broadcast_shape(te, &sy, &oshape);
    let t = te.compute("T_where", oshape.clone(), Axes::Ax, |te, idx| {
        let ic = input_index(te, idx, &pad(&uc, idx.len()), sc.len());
        let ix = input_index(te, idx, &pad(&ux, idx.len()), sx.len());
        let iy = input_index(te, idx, &pad(&uy, idx.len()), sy.len());
        let cv = te.load(c, &ic);
        let zero = te.pool.int(DataType::INT32, 0);
        let cond = te.bin(BinOp::Ne, cv, zero);
        let a = te.load(x, &ix);
        let b = te.load(y, &iy);
        te.select(cond, a, b)
    });
    Lowered::one("where", t)
}

/// The use flags of an operand broadcast against the output, aligned to the output rank.
fn pad(uses: &[bool], n: usize) -> Vec<bool> {
    let mut v = vec![false; n.saturating_sub(uses.len())];
    v.extend_from_slice(uses);
    v
}
