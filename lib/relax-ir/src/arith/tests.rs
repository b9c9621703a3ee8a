//! Unit and property tests of the arithmetic module.

use std::collections::HashMap;

use super::*;
use crate::prim_build::{floor_div, floor_mod};

fn setup() -> (Pool, PrimExpr, PrimExpr, PrimExpr) {
    let mut p = Pool::new();
    let n = p.new_var("n", DataType::INT64);
    let m = p.new_var("m", DataType::INT64);
    let x = p.new_var("x", DataType::INT64);
    let (n, m, x) = (p.var_ref(n), p.var_ref(m), p.var_ref(x));
    (p, n, m, x)
}

fn b(p: &mut Pool, op: BinOp, a: PrimExpr, c: PrimExpr) -> PrimExpr {
    p.binary(op, a, c).unwrap()
}

#[test]
fn linear_identities() {
    let (mut p, n, m, _) = setup();
    let an = Analyzer::new();
    let one = p.i64(1);
    let four = p.i64(4);
    // (n + 1) * 4 == 4 * n + 4
    let l = b(&mut p, BinOp::Add, n, one);
    let l = b(&mut p, BinOp::Mul, l, four);
    let r1 = b(&mut p, BinOp::Mul, four, n);
    let r = b(&mut p, BinOp::Add, r1, four);
    assert!(an.prove_equal(&p, l, r));
    // m + n == n + m
    let a = b(&mut p, BinOp::Add, m, n);
    let c = b(&mut p, BinOp::Add, n, m);
    assert!(an.prove_equal(&p, a, c));
    // n * 4 // 4 == n
    let q = b(&mut p, BinOp::Mul, n, four);
    let q = b(&mut p, BinOp::FloorDiv, q, four);
    assert!(an.prove_equal(&p, q, n));
    assert_eq!(an.simplify(&mut p, q), n);
    // n + 1 != n
    let n1 = b(&mut p, BinOp::Add, n, one);
    assert!(!an.prove_equal(&p, n1, n));
    assert!(an.prove_not_equal(&p, n1, n));
    assert!(an.prove_lt(&p, n, n1));
    assert!(an.prove_le(&p, n, n1));
    assert!(!an.prove_lt(&p, n1, n));
}

#[test]
fn division_rules() {
    let (mut p, n, _, x) = setup();
    let mut an = Analyzer::new();
    let yv = p.new_var("y", DataType::INT64);
    let y = p.var_ref(yv);
    let four = p.i64(4);
    // (x * 4 + y) // 4 == x when 0 <= y < 4
    let t = b(&mut p, BinOp::Mul, x, four);
    let t = b(&mut p, BinOp::Add, t, y);
    let q = b(&mut p, BinOp::FloorDiv, t, four);
    assert!(!an.prove_equal(&p, q, x), "y is unbounded above");
    an.bind(yv, Interval::new(0, 3));
    assert!(an.prove_equal(&p, q, x));
    let r = b(&mut p, BinOp::FloorMod, t, four);
    assert!(an.prove_equal(&p, r, y));
    // (x // 4) // 8 == x // 32
    let eight = p.i64(8);
    let d1 = b(&mut p, BinOp::FloorDiv, x, four);
    let d2 = b(&mut p, BinOp::FloorDiv, d1, eight);
    let k32 = p.i64(32);
    let d3 = b(&mut p, BinOp::FloorDiv, x, k32);
    assert!(an.prove_equal(&p, d2, d3));
    // (x * n) // n == x, x // 4 * 4 + x % 4 == x
    let xn = b(&mut p, BinOp::Mul, x, n);
    let q = b(&mut p, BinOp::FloorDiv, xn, n);
    assert!(an.prove_equal(&p, q, x));
    let fd = b(&mut p, BinOp::FloorDiv, x, four);
    let fd4 = b(&mut p, BinOp::Mul, fd, four);
    let fm = b(&mut p, BinOp::FloorMod, x, four);
    let back = b(&mut p, BinOp::Add, fd4, fm);
    assert!(an.prove_equal(&p, back, x));
    // (x - x % 4) // 4 == x // 4
    let xm = b(&mut p, BinOp::Sub, x, fm);
    let q = b(&mut p, BinOp::FloorDiv, xm, four);
    assert!(an.prove_equal(&p, q, fd));
    // (n + 63) // 64 * 64 stays symbolic but is >= n
    let k63 = p.i64(63);
    let k64 = p.i64(64);
    let up = b(&mut p, BinOp::Add, n, k63);
    let up = b(&mut p, BinOp::FloorDiv, up, k64);
    let up = b(&mut p, BinOp::Mul, up, k64);
    assert!(!an.prove_equal(&p, up, n));
    assert!(an.prove_le(&p, n, up), "rounding up to a multiple of 64 never decreases n");
    let k64n = b(&mut p, BinOp::Add, n, k64);
    assert!(an.prove_lt(&p, up, k64n));
}

#[test]
fn bounds_and_minmax() {
    let (mut p, n, _, _) = setup();
    let mut an = Analyzer::new();
    let nv = p.as_var(n).unwrap();
    an.bind(nv, Interval::new(1, 1024));
    let two = p.i64(2);
    let t = b(&mut p, BinOp::Mul, two, n);
    assert_eq!(an.bound(&p, t), Interval::new(2, 2048));
    let k = p.i64(5000);
    let mn = b(&mut p, BinOp::Min, t, k);
    assert_eq!(an.simplify(&mut p, mn), an.simplify(&mut p, t));
    let f = p.i64(7);
    let m = b(&mut p, BinOp::FloorMod, n, f);
    assert_eq!(an.bound(&p, m), Interval::new(0, 6));
    assert_eq!(an.as_const(&p, m), None);
}

#[test]
fn simplify_prints_canonically() {
    let (mut p, n, m, _) = setup();
    let an = Analyzer::new();
    let one = p.i64(1);
    // (n + 1) - 1 + m + n == n * 2 + m
    let e = b(&mut p, BinOp::Add, n, one);
    let e = b(&mut p, BinOp::Sub, e, one);
    let e = b(&mut p, BinOp::Add, e, m);
    let e = b(&mut p, BinOp::Add, e, n);
    let s = an.simplify(&mut p, e);
    let two = p.i64(2);
    let n2 = b(&mut p, BinOp::Mul, n, two);
    let want = b(&mut p, BinOp::Add, n2, m);
    assert_eq!(s, want);
}

#[test]
fn substitution_folds() {
    let (mut p, n, m, _) = setup();
    let one = p.i64(1);
    let e = b(&mut p, BinOp::Add, n, one);
    let e = b(&mut p, BinOp::Mul, e, m);
    let k3 = p.i64(3);
    let k4 = p.i64(4);
    let map = HashMap::from([(p.as_var(n).unwrap(), k3), (p.as_var(m).unwrap(), k4)]);
    let r = substitute(&mut p, e, &map);
    assert_eq!(p.as_int(r), Some(16));
}

/// A tiny deterministic generator (xorshift).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn random_expr(p: &mut Pool, rng: &mut Rng, vars: &[PrimExpr], depth: u32) -> PrimExpr {
    if depth == 0 || rng.below(4) == 0 {
        return if rng.below(3) == 0 {
            let v = rng.below(9) as i64 - 3;
            p.i64(v)
        } else {
            vars[rng.below(vars.len() as u64) as usize]
        };
    }
    let a = random_expr(p, rng, vars, depth - 1);
    let op = [BinOp::Add, BinOp::Sub, BinOp::Mul, BinOp::FloorDiv, BinOp::FloorMod, BinOp::Min, BinOp::Max]
        [rng.below(7) as usize];
    let c = if matches!(op, BinOp::FloorDiv | BinOp::FloorMod) {
        let k = [1, 2, 3, 4, 8, 16][rng.below(6) as usize];
        p.i64(k)
    } else {
        random_expr(p, rng, vars, depth - 1)
    };
    p.raw(PrimExprData::Bin(op, a, c))
}

fn eval(p: &Pool, e: PrimExpr, env: &HashMap<SymVar, i64>) -> Option<i64> {
    Some(match p.prim(e) {
        PrimExprData::Int(_, v) => *v,
        PrimExprData::Var(v) => env[v],
        PrimExprData::Cast(_, a) => eval(p, *a, env)?,
        PrimExprData::Bin(op, a, c) => {
            let (x, y) = (eval(p, *a, env)?, eval(p, *c, env)?);
            match op {
                BinOp::Add => x.checked_add(y)?,
                BinOp::Sub => x.checked_sub(y)?,
                BinOp::Mul => x.checked_mul(y)?,
                BinOp::FloorDiv if y != 0 => floor_div(x, y),
                BinOp::FloorMod if y != 0 => floor_mod(x, y),
                BinOp::Div if y != 0 => x.checked_div(y)?,
                BinOp::Mod if y != 0 => x.checked_rem(y)?,
                BinOp::Min => x.min(y),
                BinOp::Max => x.max(y),
                _ => return None,
            }
        }
        _ => return None,
    })
}

#[test]
fn simplification_keeps_values_under_random_assignments() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for round in 0..400 {
        let mut p = Pool::new();
        let mut an = Analyzer::new();
        let names = ["a", "b", "c"];
        let vars: Vec<SymVar> = names.iter().map(|n| p.new_var(*n, DataType::INT64)).collect();
        // Some rounds bound a variable to a small range, which enables more rules.
        if round % 3 == 0 {
            an.bind(vars[0], Interval::new(0, 7));
        }
        let refs: Vec<PrimExpr> = vars.iter().map(|&v| p.var_ref(v)).collect();
        let e = random_expr(&mut p, &mut rng, &refs, 4);
        let s = an.simplify(&mut p, e);
        for _ in 0..20 {
            let mut env = HashMap::new();
            for (i, &v) in vars.iter().enumerate() {
                let hi = if i == 0 && round % 3 == 0 { 8 } else { 50 };
                env.insert(v, rng.below(hi) as i64);
            }
            if let Some(want) = eval(&p, e, &env) {
                assert_eq!(eval(&p, s, &env), Some(want), "round {round}: simplified value differs");
            }
        }
    }
}
