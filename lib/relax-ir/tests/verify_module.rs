//! Verifier tests for module-level rules, `verify_function`, and robustness: no IR, however
//! broken, makes the verifier (or error span lookup) panic.

mod verify_builder;

use relax_ir::verify::{Entity, verify_function, verify_module};
use relax_ir::{
    AttrValue, Attrs, Binding, BindingKind, BlockData, Call, ExprData, Func, FunctionNode, Module, PrimExprData,
    RelaxFunction, StmtData, TyData,
};
use verify_builder::{D, RB, add_kernel, assert_has, assert_ok, errors, prim, relax};

fn identity(name: &str) -> RelaxFunction {
    let mut r = RB::new();
    let n = r.sym("n");
    let t = r.tensor(&[D::S(n)]);
    let x = r.param(name, t);
    let e = r.use_(x);
    r.finish(e, t)
}

/// `main(x: (n, 4), y: (n, 4))` calling `add` through `call_tir` in a dataflow block.
fn sample_module() -> Module {
    let mut m = Module::new();
    let g_add = m.add("add", prim(add_kernel()));
    let mut r = RB::new();
    let n = r.sym("n");
    let t = r.tensor(&[D::S(n), D::C(4)]);
    let x = r.param("x", t);
    let y = r.param("y", t);
    r.block(true);
    let callee = r.global(g_add);
    let (ex, ey) = (r.use_(x), r.use_(y));
    let args = r.tuple(vec![ex, ey]);
    let call = r.op_call("relax.call_tir", vec![callee, args], vec![t], t);
    let lv = r.bind_df("lv", call, t, true);
    let elv = r.use_(lv);
    let gv = r.bind("gv", elv, t);
    let e = r.use_(gv);
    m.add("main", relax(r.finish(e, t)));
    m
}

#[test]
fn duplicate_global_names() {
    let mut m = Module::new();
    m.add("f", relax(identity("a")));
    let dup = m.add("f", relax(identity("b")));
    let es = verify_module(&m).unwrap_err();
    assert_eq!(es.len(), 1);
    assert!(es[0].message.contains("global `f` is defined more than once"));
    assert_eq!(es[0].global, Some(dup));
    assert!(verify_function(&m, dup).is_err());
    // A removed function does not count.
    m.globals[dup].func = Func::Removed;
    assert_ok(&m);
}

#[test]
fn reference_to_removed_function() {
    let mut m = sample_module();
    let g_add = m.lookup("add").unwrap();
    m.globals[g_add].func = Func::Removed;
    let msgs = errors(verify_module(&m));
    assert_has(&msgs, "`cls.add` refers to a removed function");
}

#[test]
fn global_symbol_of_lowered_primfuncs() {
    let mut k = add_kernel();
    k.attrs.set("global_symbol", AttrValue::Str("__tvm_ffi_add".into()));
    let mut m = Module::new();
    let g = m.add("add", prim(k));
    assert_has(&errors(verify_module(&m)), "expected `global_symbol` of `add` to be `add`, found `__tvm_ffi_add`");
    if let Func::Prim(p) = &mut m.globals[g].func {
        p.attrs.set("calling_conv", AttrValue::Int(1));
    }
    assert_ok(&m);
    if let Func::Prim(p) = &mut m.globals[g].func {
        p.attrs.set("global_symbol", AttrValue::Int(3));
    }
    assert_has(&errors(verify_module(&m)), "expected `global_symbol` of `add` to be a string");
}

#[test]
fn verify_function_checks_one_function() {
    let mut m = sample_module();
    let bad = m.add("bad", relax(identity("q")));
    if let Func::Relax(f) = &mut m.globals[bad].func {
        f.func.ret = relax_entity::EntityRef::new(99);
    }
    let main = m.lookup("main").unwrap();
    assert!(verify_function(&m, main).is_ok());
    let es = verify_function(&m, bad).unwrap_err();
    assert_eq!(es[0].global, Some(bad));
    assert!(es[0].message.contains("refers to type `ty99`"), "{}", es[0].message);
    let out_of_range = relax_entity::EntityRef::new(50);
    let es = verify_function(&m, out_of_range).unwrap_err();
    assert_eq!(es[0].entity, Entity::Module);
}

#[test]
fn expression_cycle_is_reported_not_followed() {
    let mut m = sample_module();
    let main = m.lookup("main").unwrap();
    let Func::Relax(f) = &mut m.globals[main].func else { unreachable!() };
    let tup = f.exprs.keys().find(|&e| matches!(f.exprs[e], ExprData::Tuple(_))).unwrap();
    if let ExprData::Tuple(fields) = &mut f.exprs[tup] {
        fields.push(tup, &mut f.lists);
    }
    let msgs = errors(verify_module(&m));
    assert_has(&msgs, "contains itself");
}

/// A tiny deterministic generator.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % (n.max(1) as u64 + 2)) as usize
    }
}

fn h<K: relax_entity::EntityRef>(i: usize) -> K {
    K::new(i)
}

/// Applies one random corruption to a Relax function: handles may go out of range, point
/// forwards, be shared or form cycles.
fn corrupt_relax(f: &mut RelaxFunction, rng: &mut Lcg) {
    let (ne, nv, nb, nt, np) = (f.exprs.len(), f.vars.len(), f.blocks.len(), f.pool.tys.len(), f.pool.prims.len());
    match rng.next() % 12 {
        0 => {
            let e = h(rng.below(ne - 1).min(ne - 1));
            f.exprs[e] = ExprData::Var(h(rng.below(nv)));
        }
        1 => {
            let e = h(rng.below(ne - 1).min(ne - 1));
            let items: Vec<relax_ir::Expr> = (0..rng.below(3)).map(|_| h(rng.below(ne))).collect();
            let args = if rng.next() % 4 == 0 {
                // A list handle of another pool, out of range here.
                let mut other = relax_entity::ListPool::new();
                other.alloc((0..f.lists.capacity_used() + 5).map(h));
                other.alloc(items)
            } else {
                f.lists.alloc(items)
            };
            f.exprs[e] = ExprData::Call(Call {
                callee: h(rng.below(ne)),
                args,
                attrs: Attrs::new(),
                sinfo_args: vec![h(rng.below(nt))],
            });
        }
        2 => {
            let e = h(rng.below(ne - 1).min(ne - 1));
            // Branches: new sequences, or existing (shared) or out-of-range handles.
            let ns = f.seqs.len();
            let then_branch = if rng.next() % 3 == 0 {
                h(rng.below(ns))
            } else {
                f.add_seq(vec![h(rng.below(nb))], h(rng.below(ne)))
            };
            let else_branch = f.add_seq(vec![], h(rng.below(ne)));
            f.exprs[e] = ExprData::If { cond: h(rng.below(ne)), then_branch, else_branch };
        }
        3 => {
            let e = h(rng.below(ne - 1).min(ne - 1));
            let body = f.add_seq(vec![h(rng.below(nb))], h(rng.below(ne)));
            let node = FunctionNode {
                params: vec![h(rng.below(nv))],
                ret: h(rng.below(nt)),
                body,
                attrs: Attrs::new(),
                pure: rng.next() % 2 == 0,
            };
            f.exprs[e] = ExprData::Function(Box::new(node));
        }
        4 => {
            let e = h(rng.below(ne - 1).min(ne - 1));
            f.exprs[e] = ExprData::GetItem { tuple: h(rng.below(ne)), index: rng.below(4) as u32 };
        }
        5 => {
            let b = f.blocks.push(BlockData {
                dataflow: rng.next() % 2 == 0,
                bindings: vec![Binding {
                    var: h(rng.below(nv)),
                    value: h(rng.below(ne)),
                    kind: if rng.next() % 2 == 0 {
                        BindingKind::Value
                    } else {
                        BindingKind::MatchCast(h(rng.below(nt)))
                    },
                }],
            });
            let body = f.func.body;
            let n = f.seq(body).blocks.len();
            f.seq_mut(body).blocks.insert(rng.below(n).min(n), b);
        }
        6 => {
            let e = h(rng.below(ne - 1).min(ne - 1));
            f.expr_ty.set(e, if rng.next() % 2 == 0 { None } else { Some(h(rng.below(nt))) });
        }
        7 => {
            let v = h(rng.below(nv - 1).min(nv - 1));
            f.vars[v].ty = h(rng.below(nt));
            f.vars[v].dataflow = rng.next() % 2 == 0;
        }
        8 => {
            let p = f.pool.raw(PrimExprData::Bin(relax_ir::BinOp::Add, h(rng.below(np + 2)), h(rng.below(np))));
            f.pool.intern_ty(TyData::shape(vec![p]));
            let t = f.pool.intern_ty(TyData::tensor(vec![p, h(rng.below(np))], relax_ir::DataType::FLOAT32));
            let v = h(rng.below(nv - 1).min(nv - 1));
            f.vars[v].ty = t;
        }
        9 => {
            let t = f.pool.intern_ty(TyData::Tuple(vec![h(rng.below(nt + 2))]));
            let e = h(rng.below(ne - 1).min(ne - 1));
            f.expr_ty.set(e, Some(t));
        }
        10 => f.func.params.push(h(rng.below(nv))),
        _ => {
            let e = h(rng.below(ne - 1).min(ne - 1));
            f.exprs[e] = ExprData::Shape(vec![h(rng.below(np))]);
        }
    }
}

fn corrupt_prim(f: &mut relax_ir::PrimFunc, rng: &mut Lcg) {
    let (ns, nsv, np, nbuf) = (f.stmts.len(), f.pool.vars.len(), f.pool.prims.len(), f.buffers.len());
    let s = h(rng.below(ns - 1).min(ns - 1));
    match rng.next() % 8 {
        0 => f.stmts[s] = StmtData::Seq(vec![h(rng.below(ns)), h(rng.below(ns))]),
        1 => {
            f.stmts[s] =
                StmtData::Store { buffer: h(rng.below(nbuf)), indices: vec![h(rng.below(np))], value: h(rng.below(np)) }
        }
        2 => f.stmts[s] = StmtData::Let { var: h(rng.below(nsv)), value: h(rng.below(np)), body: h(rng.below(ns)) },
        3 => f.stmts[s] = StmtData::DeclBuffer { buffer: h(rng.below(nbuf)), body: h(rng.below(ns)) },
        4 => {
            let b = h(rng.below(nbuf - 1).min(nbuf - 1));
            f.buffers[b].shape.push(h(rng.below(np)));
            f.buffers[b].data = h(rng.below(nsv));
        }
        5 => {
            f.pool.raw(PrimExprData::Load {
                dtype: relax_ir::DataType::FLOAT32,
                buffer: h(rng.below(nbuf)),
                indices: vec![h(rng.below(np + 1))],
            });
        }
        6 => {
            if let StmtData::Block(b) = &mut f.stmts[s] {
                b.iter_vars.push(relax_ir::IterVar {
                    var: h(rng.below(nsv)),
                    dom: relax_ir::Range { min: h(rng.below(np)), extent: h(rng.below(np)) },
                    kind: relax_ir::IterKind::Reduce,
                    binding: h(rng.below(np)),
                });
                b.alloc_buffers.push(h(rng.below(nbuf)));
            } else {
                f.stmts[s] = StmtData::If {
                    cond: h(rng.below(np)),
                    then_branch: h(rng.below(ns)),
                    else_branch: Some(h(rng.below(ns))),
                };
            }
        }
        _ => f.buffer_map.push((h(rng.below(nsv)), h(rng.below(nbuf)))),
    }
}

#[test]
fn never_panics_on_corrupted_ir() {
    let mut rng = Lcg(0x5eed);
    for round in 0..3_000 {
        let mut m = sample_module();
        let (g_add, g_main) = (m.lookup("add").unwrap(), m.lookup("main").unwrap());
        for _ in 0..1 + rng.below(3) {
            if rng.next() % 2 == 0 {
                if let Func::Relax(f) = &mut m.globals[g_main].func {
                    corrupt_relax(f, &mut rng);
                }
            } else if let Func::Prim(f) = &mut m.globals[g_add].func {
                corrupt_prim(f, &mut rng);
            }
        }
        let result = std::panic::catch_unwind(|| {
            let r = verify_module(&m);
            for g in [g_add, g_main] {
                let _ = verify_function(&m, g);
            }
            if let Err(es) = &r {
                for e in es {
                    let _ = e.to_diagnostic(&m);
                }
            }
        });
        assert!(result.is_ok(), "verifier panicked in round {round}");
    }
}

#[test]
fn error_spans_fall_back_to_the_function() {
    let mut m = sample_module();
    let main = m.lookup("main").unwrap();
    let Func::Relax(f) = &mut m.globals[main].func else { unreachable!() };
    f.spans.func = relax_ir::Span::new(5, 9);
    let e = relax_ir::verify::VerifyError::new(Some(main), Entity::Expr(relax_entity::EntityRef::new(10_000)), "x");
    assert_eq!(e.span(&m), relax_ir::Span::new(5, 9));
    let e = relax_ir::verify::VerifyError::new(None, Entity::Module, "x");
    assert!(e.span(&m).is_none());
    let mut k = add_kernel();
    let body = k.body;
    k.spans.stmts.set(body, relax_ir::Span::new(1, 2));
    let inner = k.stmts.keys().find(|&s| matches!(k.stmts[s], StmtData::Store { .. })).unwrap();
    let g = m.add("k", prim(k));
    let e = relax_ir::verify::VerifyError::new(Some(g), Entity::Stmt(inner), "x");
    assert_eq!(e.span(&m), relax_ir::Span::new(1, 2));
}
