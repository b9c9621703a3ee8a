//! Verifier tests for PrimFuncs: well-formed TIR passes, each rule fires on a minimal
//! violation.

mod verify_builder;

use relax_ir::verify::{Entity, verify_module};
use relax_ir::{AttrNode, DataType, PrimExpr, PrimFunc, StmtData, SymVar};
use verify_builder::{TB, add_kernel, assert_has, assert_ok, errors, module, prim};

fn check(f: PrimFunc) -> Result<(), Vec<relax_ir::verify::VerifyError>> {
    let (m, _) = module(vec![("f", prim(f))]);
    verify_module(&m)
}

fn ok(f: PrimFunc) {
    let (m, _) = module(vec![("f", prim(f))]);
    assert_ok(&m);
}

/// A 1-d block `name` over `extent`, bound to loop var `i`, storing 0 into `buf[v]`.
fn simple_block(t: &mut TB, name: &str, buf: relax_ir::Buffer, extent: PrimExpr) -> (relax_ir::Stmt, SymVar, SymVar) {
    let (i, vi) = (t.var(&format!("i_{name}")), t.var(&format!("v_{name}")));
    let (ei, evi) = (t.v(i), t.v(vi));
    let zero = t.f32(0.0);
    let st = t.store(buf, vec![evi], zero);
    let blk = t.block(name, vec![(vi, extent, ei)], st);
    let w = t.point(buf, vec![evi]);
    t.block_mut(blk).writes = vec![w];
    let lp = t.for_(i, extent, blk);
    (lp, i, vi)
}

#[test]
fn well_formed_primfunc_passes() {
    ok(add_kernel());
}

#[test]
fn buffer_map_defines_dims_in_any_order() {
    // less_equal(lv17: (1, p + s), lv18: (s, 1), p: int64, out: (s, p + s)): `s` is defined
    // by `lv18`, after its use in `lv17`'s compound dim.
    let mut t = TB::new();
    let (p, s) = (t.var("p"), t.var("s"));
    let (ep, es, one) = (t.v(p), t.v(s), t.c(1));
    let sum = t.f.pool.raw(relax_ir::PrimExprData::Bin(relax_ir::BinOp::Add, ep, es));
    let lv17 = t.param_buffer("lv17", vec![one, sum]);
    t.param_buffer("lv18", vec![es, one]);
    t.f.params.push(p);
    let out = t.param_buffer("out", vec![es, sum]);
    let (i, j) = (t.var("i"), t.var("j"));
    let (ei, ej, zero) = (t.v(i), t.v(j), t.c(0));
    let ld = t.load(lv17, vec![zero, ej]);
    let st = t.store(out, vec![ei, ej], ld);
    let l2 = t.for_(j, sum, st);
    let l1 = t.for_(i, es, l2);
    t.f.s_tir = false;
    ok(t.finish(l1));
}

#[test]
fn duplicate_block_names() {
    let mut t = TB::new();
    let c8 = t.c(8);
    let a = t.param_buffer("A", vec![c8]);
    let (l1, _, _) = simple_block(&mut t, "b", a, c8);
    let (l2, _, _) = simple_block(&mut t, "b", a, c8);
    let body = t.seq(vec![l1, l2]);
    let msgs = errors(check(t.finish_root(vec![], body)));
    assert_has(&msgs, "block name `b` is used more than once");
}

#[test]
fn buffer_used_out_of_scope() {
    let mut t = TB::new();
    let c8 = t.c(8);
    let a = t.param_buffer("A", vec![c8]);
    let tmp = t.buffer("tmp", vec![c8]);
    let (l1, _, _) = simple_block(&mut t, "producer", tmp, c8);
    let (l2, _, _) = simple_block(&mut t, "consumer", a, c8);
    // `tmp` is allocated by the first block only; the second one reads it.
    let StmtData::For { body: blk1, .. } = t.f.stmts[l1] else { unreachable!() };
    t.block_mut(blk1).alloc_buffers = vec![tmp];
    let StmtData::For { body: blk2, .. } = t.f.stmts[l2] else { unreachable!() };
    let StmtData::Block(b2) = &t.f.stmts[blk2] else { unreachable!() };
    let st = b2.body;
    let vi = b2.iter_vars[0].var;
    let evi = t.v(vi);
    let ld = t.load(tmp, vec![evi]);
    if let StmtData::Store { value, .. } = &mut t.f.stmts[st] {
        *value = ld;
    }
    let body = t.seq(vec![l1, l2]);
    let msgs = errors(check(t.finish_root(vec![], body)));
    assert_has(&msgs, "buffer `tmp` is used outside its scope");
    // The store inside the producer writes to its own allocation: fine.
    assert_eq!(msgs.len(), 1, "{msgs:#?}");
}

#[test]
fn undeclared_buffer() {
    let mut t = TB::new();
    let c8 = t.c(8);
    let ghost = t.buffer("ghost", vec![c8]);
    let (i, zero) = (t.var("i"), t.f32(0.0));
    let ei = t.v(i);
    let st = t.store(ghost, vec![ei], zero);
    let lp = t.for_(i, c8, st);
    t.f.s_tir = false;
    assert_has(&errors(check(t.finish(lp))), "buffer `ghost` is not declared in function `f`");
}

#[test]
fn loop_var_used_outside_its_loop() {
    let mut t = TB::new();
    let c8 = t.c(8);
    let a = t.param_buffer("A", vec![c8]);
    let i = t.var("i");
    let (ei, zero) = (t.v(i), t.f32(0.0));
    let st = t.store(a, vec![ei], zero);
    let lp = t.for_(i, c8, st);
    let after = t.store(a, vec![ei], zero);
    let body = t.seq(vec![lp, after]);
    t.f.s_tir = false;
    let msgs = errors(check(t.finish(body)));
    assert_has(&msgs, "loop variable `i` is used outside its loop");
    assert_eq!(msgs.len(), 1, "{msgs:#?}");
}

#[test]
fn loop_extent_may_not_use_its_own_var() {
    let mut t = TB::new();
    let c8 = t.c(8);
    let a = t.param_buffer("A", vec![c8]);
    let i = t.var("i");
    let (ei, zero) = (t.v(i), t.f32(0.0));
    let st = t.store(a, vec![ei], zero);
    let lp = t.for_(i, ei, st);
    t.f.s_tir = false;
    assert_has(&errors(check(t.finish(lp))), "variable `i` is used before it is defined");
}

#[test]
fn binding_uses_another_blocks_iter_var() {
    let mut t = TB::new();
    let c8 = t.c(8);
    let a = t.param_buffer("A", vec![c8]);
    let b = t.param_buffer("B", vec![c8]);
    let (l1, _, v_a) = simple_block(&mut t, "A_blk", a, c8);
    let (l2, _, _) = simple_block(&mut t, "B_blk", b, c8);
    let StmtData::For { body: blk2, .. } = t.f.stmts[l2] else { unreachable!() };
    let eva = t.v(v_a);
    t.block_mut(blk2).iter_vars[0].binding = eva;
    let body = t.seq(vec![l1, l2]);
    let msgs = errors(check(t.finish_root(vec![], body)));
    assert_has(
        &msgs,
        "the binding of `v_B_blk` in block `B_blk` uses block iteration variable `v_A_blk` of block `A_blk`",
    );
}

#[test]
fn iter_var_used_outside_its_block() {
    let mut t = TB::new();
    let c8 = t.c(8);
    let a = t.param_buffer("A", vec![c8]);
    let (l1, _, v_a) = simple_block(&mut t, "blk", a, c8);
    let (eva, zero) = (t.v(v_a), t.f32(0.0));
    let after = t.store(a, vec![eva], zero);
    let body = t.seq(vec![l1, after]);
    let msgs = errors(check(t.finish_root(vec![], body)));
    assert_has(&msgs, "block iteration variable `v_blk` of block `blk` is used outside that block");
}

#[test]
fn loop_var_used_directly_inside_a_block() {
    let mut t = TB::new();
    let c8 = t.c(8);
    let a = t.param_buffer("A", vec![c8]);
    let (lp, i, _) = simple_block(&mut t, "blk", a, c8);
    let StmtData::For { body: blk, .. } = t.f.stmts[lp] else { unreachable!() };
    let StmtData::Block(b) = &t.f.stmts[blk] else { unreachable!() };
    let st = b.body;
    let ei = t.v(i);
    if let StmtData::Store { indices, .. } = &mut t.f.stmts[st] {
        indices[0] = ei;
    }
    let msgs = errors(check(t.finish_root(vec![], lp)));
    assert_has(&msgs, "loop variable `i_blk` is used inside block `blk`, which does not bind it");
}

#[test]
fn wrong_index_count() {
    let mut t = TB::new();
    let c8 = t.c(8);
    let a = t.param_buffer("A", vec![c8, c8]);
    let b = t.param_buffer("B", vec![c8]);
    let i = t.var("i");
    let ei = t.v(i);
    let ld = t.load(b, vec![ei, ei]);
    let st = t.store(a, vec![ei], ld);
    let lp = t.for_(i, c8, st);
    t.f.s_tir = false;
    let msgs = errors(check(t.finish(lp)));
    assert_has(&msgs, "expected 2 indices for buffer `A`, found 1");
    assert_has(&msgs, "expected 1 index for buffer `B`, found 2");
}

#[test]
fn region_rank() {
    let mut t = TB::new();
    let c8 = t.c(8);
    let a = t.param_buffer("A", vec![c8, c8]);
    let (lp, _, _) = simple_block(&mut t, "blk", a, c8);
    // simple_block's store uses one index and its write region one range.
    let msgs = errors(check(t.finish_root(vec![], lp)));
    assert_has(&msgs, "expected 2 ranges for buffer `A` in `T.writes` of block `blk`, found 1");
    assert_has(&msgs, "expected 2 indices for buffer `A`, found 1");
}

#[test]
fn blocks_outside_a_root_block() {
    let mut t = TB::new();
    let c8 = t.c(8);
    let a = t.param_buffer("A", vec![c8]);
    let (lp, _, _) = simple_block(&mut t, "blk", a, c8);
    let msgs = errors(check(t.finish(lp)));
    assert_has(&msgs, "PrimFunc `f` has blocks outside a root block");
}

#[test]
fn variable_defined_twice() {
    let mut t = TB::new();
    let c8 = t.c(8);
    let a = t.param_buffer("A", vec![c8]);
    let i = t.var("i");
    let (ei, zero) = (t.v(i), t.f32(0.0));
    let s1 = t.store(a, vec![ei], zero);
    let l1 = t.for_(i, c8, s1);
    let s2 = t.store(a, vec![ei], zero);
    let l2 = t.for_(i, c8, s2);
    let body = t.seq(vec![l1, l2]);
    t.f.s_tir = false;
    assert_has(&errors(check(t.finish(body))), "variable `i` is defined more than once");
}

#[test]
fn undefined_variable() {
    let mut t = TB::new();
    let c8 = t.c(8);
    let a = t.param_buffer("A", vec![c8]);
    let k = t.var("k");
    let (ek, zero) = (t.v(k), t.f32(0.0));
    let st = t.store(a, vec![ek], zero);
    t.f.s_tir = false;
    assert_has(&errors(check(t.finish(st))), "variable `k` is not defined in function `f`");
}

#[test]
fn buffer_map_keys() {
    let mut t = TB::new();
    let c8 = t.c(8);
    let a = t.param_buffer("A", vec![c8]);
    let m = t.scalar_param("m");
    let b = t.buffer("B", vec![c8]);
    t.f.buffer_map.push((m, b));
    let stray = t.var("stray");
    let c = t.buffer("C", vec![c8]);
    t.f.buffer_map.push((stray, c));
    let h = t.f.buffer_map[0].0;
    t.f.buffer_map.push((h, c));
    let zero = t.f32(0.0);
    let z = t.c(0);
    let st = t.store(a, vec![z], zero);
    t.f.s_tir = false;
    let msgs = errors(check(t.finish(st)));
    assert_has(&msgs, "expected a `handle` parameter for buffer `B`, found `m` of type `int64`");
    assert_has(&msgs, "buffer `C` is bound to `stray`, which is not a parameter of `f`");
    assert_has(&msgs, "parameter `var_A` is bound to more than one buffer");
    assert_has(&msgs, "buffer `C` is bound to more than one parameter");
}

#[test]
fn lowered_tir_with_deep_nesting() {
    // Lowered TIR: no root block, long chains of `let`/`assert`, attributes naming buffers
    // before their `decl_buffer`, a thread-extent attribute defining its variable.
    let mut t = TB::new();
    t.f.s_tir = true;
    let args = t.scalar_param("args");
    t.f.pool.vars[args].dtype = DataType::HANDLE;
    let n = t.var("n");
    let c8 = t.c(8);
    let en = t.v(n);
    let x = t.buffer("x", vec![en]);
    let i = t.var("i");
    let ei = t.v(i);
    let zero = t.f32(0.0);
    let st = t.store(x, vec![ei], zero);
    let lp = t.for_(i, en, st);
    let tx = t.var("threadIdx_x");
    let etx = t.v(tx);
    let launch = t.stmt(StmtData::Attr { node: AttrNode::Expr(etx), key: "thread_extent".into(), value: c8, body: lp });
    let decl = t.stmt(StmtData::DeclBuffer { buffer: x, body: launch });
    let align = t.c(64);
    let mut body =
        t.stmt(StmtData::Attr { node: AttrNode::Buffer(x), key: "storage_alignment".into(), value: align, body: decl });
    let truth = t.f.pool.bool_const(true);
    let msg = t.f.pool.raw(relax_ir::PrimExprData::Str("failed".into()));
    for k in 0..20_000 {
        body = if k % 2 == 0 {
            t.stmt(StmtData::Assert { cond: truth, message: msg, body })
        } else {
            let v = t.var(&format!("cse_v{k}"));
            let e = t.c(k);
            t.let_(v, e, body)
        };
    }
    let eargs = t.v(args);
    let size = t.f.pool.raw(relax_ir::PrimExprData::Call {
        dtype: DataType::INT64,
        op: relax_ir::TirOp::from_name("tir.tvm_struct_get"),
        args: vec![eargs],
    });
    let top = t.let_(n, size, body);
    let f = t.finish(top);
    let start = std::time::Instant::now();
    ok(f);
    assert!(start.elapsed().as_secs_f64() < 2.0);
}

#[test]
fn statement_cycle_is_reported_not_followed() {
    let mut t = TB::new();
    let s = t.seq(vec![]);
    if let StmtData::Seq(v) = &mut t.f.stmts[s] {
        v.push(s);
    }
    t.f.s_tir = false;
    let es = check(t.finish(s)).unwrap_err();
    assert_eq!(es.len(), 1);
    assert!(es[0].message.contains("contains itself"), "{}", es[0].message);
    assert_eq!(es[0].entity, Entity::Stmt(s));
}

#[test]
fn dangling_buffer_handle() {
    let mut t = TB::new();
    let c8 = t.c(8);
    let a = t.param_buffer("A", vec![c8]);
    let zero = t.f32(0.0);
    let z = t.c(0);
    let st = t.store(a, vec![z], zero);
    let bogus: relax_ir::Buffer = relax_entity::EntityRef::new(9);
    if let StmtData::Store { buffer, .. } = &mut t.f.stmts[st] {
        *buffer = bogus;
    }
    t.f.s_tir = false;
    let msgs = errors(check(t.finish(st)));
    assert_has(&msgs, "refers to buffer `buffer9`, which is out of range (function `f` has 1 buffer)");
}
