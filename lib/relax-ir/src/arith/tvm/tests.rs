//! Unit tests of TVM mode: printed forms as TVM's simplifier writes them.

use super::simplify;
use crate::dtype::DataType;
use crate::entities::PrimExpr;
use crate::pool::Pool;
use crate::prim::BinOp;

fn setup() -> (Pool, PrimExpr, PrimExpr, PrimExpr) {
    let mut p = Pool::new();
    let x = p.new_var("x", DataType::INT64);
    let y = p.new_var("y", DataType::INT64);
    let n = p.new_var("n", DataType::INT64);
    let (x, y, n) = (p.var_ref(x), p.var_ref(y), p.var_ref(n));
    (p, x, y, n)
}

fn b(p: &mut Pool, op: BinOp, a: PrimExpr, c: PrimExpr) -> PrimExpr {
    p.binary(op, a, c).unwrap()
}

#[test]
fn linear_forms_follow_tvm() {
    let (mut p, x, y, n) = setup();
    // 4 * n => n * 4
    let four = p.i64(4);
    let e = b(&mut p, BinOp::Mul, four, n);
    let s = simplify(&mut p, e);
    let want = b(&mut p, BinOp::Mul, n, four);
    assert_eq!(s, want);
    // (x * 4 + y) // 4 => y // 4 + x
    let x4 = b(&mut p, BinOp::Mul, x, four);
    let sum = b(&mut p, BinOp::Add, x4, y);
    let d = b(&mut p, BinOp::FloorDiv, sum, four);
    let s = simplify(&mut p, d);
    let yd = b(&mut p, BinOp::FloorDiv, y, four);
    let want = b(&mut p, BinOp::Add, yd, x);
    assert_eq!(s, want);
    // x // 4 * 4 + x % 4 => x
    let xd = b(&mut p, BinOp::FloorDiv, x, four);
    let xd4 = b(&mut p, BinOp::Mul, xd, four);
    let xm = b(&mut p, BinOp::FloorMod, x, four);
    let e = b(&mut p, BinOp::Add, xd4, xm);
    assert_eq!(simplify(&mut p, e), x);
    // (x - 5) % 3 => (x + 1) % 3
    let five = p.i64(5);
    let three = p.i64(3);
    let one = p.i64(1);
    let xm5 = b(&mut p, BinOp::Sub, x, five);
    let e = b(&mut p, BinOp::FloorMod, xm5, three);
    let xp1 = b(&mut p, BinOp::Add, x, one);
    let want = b(&mut p, BinOp::FloorMod, xp1, three);
    assert_eq!(simplify(&mut p, e), want);
}

#[test]
fn comparisons_are_swapped() {
    let (mut p, x, _, _) = setup();
    let zero = p.i64(0);
    let e = b(&mut p, BinOp::Ge, x, zero);
    let want = b(&mut p, BinOp::Le, zero, x);
    assert_eq!(simplify(&mut p, e), want);
    // x + 1 < 5 => x < 4
    let one = p.i64(1);
    let five = p.i64(5);
    let four = p.i64(4);
    let x1 = b(&mut p, BinOp::Add, x, one);
    let e = b(&mut p, BinOp::Lt, x1, five);
    let want = b(&mut p, BinOp::Lt, x, four);
    assert_eq!(simplify(&mut p, e), want);
}

#[test]
fn modes_differ_in_order_and_strength() {
    let (mut p, x, y, n) = setup();
    let an = crate::arith::Analyzer::new();
    // y + x: TVM mode keeps the first occurrence first, normal form orders by variable.
    let e = b(&mut p, BinOp::Add, y, x);
    assert_eq!(simplify(&mut p, e), e);
    let want = b(&mut p, BinOp::Add, x, y);
    assert_eq!(an.simplify(&mut p, e), want);
    // x * n - n * x: a product is opaque to TVM mode, a monomial to normal form.
    let xn = b(&mut p, BinOp::Mul, x, n);
    let nx = b(&mut p, BinOp::Mul, n, x);
    let d = b(&mut p, BinOp::Sub, xn, nx);
    let tvm = simplify(&mut p, d);
    assert_ne!(p.as_int(tvm), Some(0));
    let normal = an.simplify(&mut p, d);
    assert_eq!(p.as_int(normal), Some(0));
}
