//! Structural checks of PrimFunc lowering on small inputs: parameters and the buffer map,
//! the root block, blocks and their iteration variables, loops, computed regions,
//! stores, attributes, the lowered-TIR forms and the equivalence of the dialects.

use relax_ir::Intrinsic;
use relax_ir::{
    AttrNode, AttrValue, BinOp, Buffer, DataType, ForKind, IterKind, Module, PrimExpr, PrimExprData, PrimFunc, Stmt,
    StmtData, SymVar,
};

const HEADER: &str = "# from tvm.script import ir as I\n# from tvm.script import tirx as T\n\n";

/// Parses a module, panicking with the diagnostics on failure; the module must pass the
/// verifier.
fn parse(src: &str) -> Module {
    match relax_parser::parse_module(src) {
        Ok(m) => {
            if let Err(errs) = relax_ir::verify::verify_module(&m) {
                panic!("verifier: {:?}", errs.iter().map(ToString::to_string).collect::<Vec<_>>());
            }
            m
        }
        Err(d) => panic!(
            "parse failed:\n{}",
            d.iter().map(|d| format!("{:?}: {}", d.span, d.message)).collect::<Vec<_>>().join("\n")
        ),
    }
}

/// A module holding the given class members (already indented by 4).
fn module(members: &str) -> String {
    format!("{HEADER}@I.ir_module\nclass Module:\n{members}")
}

/// The PrimFunc `name` of a module.
fn prim<'m>(m: &'m Module, name: &str) -> &'m PrimFunc {
    m.prim_func(m.lookup(name).expect("function exists")).expect("a PrimFunc")
}

/// The only PrimFunc of `members`.
fn one(members: &str) -> (Module, String) {
    let src = module(members);
    let m = parse(&src);
    let name = m.live().next().expect("one function").1.name.clone();
    (m, name)
}

fn block(f: &PrimFunc, s: Stmt) -> &relax_ir::BlockNode {
    match f.stmt(s) {
        StmtData::Block(b) => b,
        other => panic!("expected a block, found {other:?}"),
    }
}

/// Every block of the function, in walk order.
fn blocks(f: &PrimFunc) -> Vec<Stmt> {
    let mut out = Vec::new();
    f.walk(f.body, |s, d| {
        if matches!(d, StmtData::Block(_)) {
            out.push(s);
        }
    });
    out
}

/// Every loop of the function, in walk order.
fn loops(f: &PrimFunc) -> Vec<Stmt> {
    let mut out = Vec::new();
    f.walk(f.body, |s, d| {
        if matches!(d, StmtData::For { .. }) {
            out.push(s);
        }
    });
    out
}

fn var_of(f: &PrimFunc, e: PrimExpr) -> SymVar {
    f.pool.as_var(e).unwrap_or_else(|| panic!("expected a variable, found {:?}", f.pool.prim(e)))
}

fn int(f: &PrimFunc, e: PrimExpr) -> (DataType, i64) {
    match f.pool.prim(e) {
        PrimExprData::Int(t, v) => (*t, *v),
        other => panic!("expected an integer, found {other:?}"),
    }
}

fn buffer_named(f: &PrimFunc, name: &str) -> Buffer {
    f.buffers.iter().find(|(_, b)| b.name == name).map(|(k, _)| k).unwrap_or_else(|| panic!("no buffer `{name}`"))
}

fn print(m: &Module) -> String {
    relax_ir::printer::print_module(m)
}

const FUSED_025: &str = r#"    @T.prim_func(private=True, s_tir=True)
    def fused(var_x: T.handle, w: T.Buffer((T.int64(4), T.int64(4)), "float32"), var_out: T.handle):
        T.func_attr({"tirx.noalias": True})
        n = T.int64()
        x = T.match_buffer(var_x, (n, T.int64(4)))
        out = T.match_buffer(var_out, (n, T.int64(4)))
        # with T.sblock("root"):
        tmp = T.sblock_alloc_buffer((n, T.int64(4)))
        for i0, i1, k in T.grid(n, T.int64(4), T.int64(4)):
            with T.sblock("matmul"):
                v_i0, v_i1, v_k = T.axis.remap("SSR", [i0, i1, k])
                T.reads(x[v_i0, v_k], w[v_k, v_i1])
                T.writes(tmp[v_i0, v_i1])
                with T.init():
                    tmp[v_i0, v_i1] = T.float32(0.0)
                tmp[v_i0, v_i1] = tmp[v_i0, v_i1] + x[v_i0, v_k] * w[v_k, v_i1]
        for i0, i1 in T.grid(n, T.int64(4)):
            with T.sblock("compute"):
                v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
                T.reads(tmp[v_i0, v_i1])
                T.writes(out[v_i0, v_i1])
                out[v_i0, v_i1] = T.exp(tmp[v_i0, v_i1])
"#;

#[test]
fn params_and_buffer_map() {
    let src = module(
        r#"    @T.prim_func(private=True, s_tir=True)
    def f(var_a: T.handle, w: T.Buffer((4,), "float16"), var_b: T.handle, m: T.int64):
        n = T.int64()
        b = T.match_buffer(var_b, (n, m), "int8")
        a = T.match_buffer(var_a, (n, T.int64(4)), scope="shared", align=16, offset_factor=2)
        for i in range(4):
            w[i] = T.float16(0.0)
"#,
    );
    let m = parse(&src);
    let f = prim(&m, "f");
    let names: Vec<&str> = f.params.iter().map(|&p| f.pool.vars[p].name.as_str()).collect();
    assert_eq!(names, ["var_a", "var_w", "var_b", "m"]);
    let dtypes: Vec<DataType> = f.params.iter().map(|&p| f.pool.vars[p].dtype).collect();
    assert_eq!(dtypes, [DataType::HANDLE, DataType::HANDLE, DataType::HANDLE, DataType::INT64]);
    // The buffer map follows the parameter order, not the order of `T.match_buffer`.
    let mapped: Vec<(&str, &str)> =
        f.buffer_map.iter().map(|&(h, b)| (f.pool.vars[h].name.as_str(), f.buffers[b].name.as_str())).collect();
    assert_eq!(mapped, [("var_a", "a"), ("var_w", "w"), ("var_b", "b")]);
    let (a, b) = (buffer_named(f, "a"), buffer_named(f, "b"));
    // `n` is one variable, shared by both shapes; `m` is the scalar parameter.
    assert_eq!(f.buffers[a].shape[0], f.buffers[b].shape[0]);
    assert_eq!(var_of(f, f.buffers[b].shape[1]), f.params[3]);
    assert_eq!(f.buffers[b].dtype, DataType::INT8);
    assert_eq!(f.buffers[a].scope, "shared");
    assert_eq!((f.buffers[a].align, f.buffers[a].offset_factor), (Some(16), Some(2)));
    // An offset factor without an offset makes the offset a new variable, as in TVM.
    assert!(f.pool.as_var(f.buffers[a].elem_offset.expect("an offset")).is_some());
    let w = buffer_named(f, "w");
    assert_eq!(f.buffers[w].dtype, DataType::FLOAT16);
    assert_eq!(int(f, f.buffers[w].shape[0]), (DataType::INT32, 4));
    // The data pointer is a handle named after the buffer.
    let data = &f.pool.vars[f.buffers[w].data];
    assert_eq!((data.name.as_str(), data.dtype), ("w", DataType::HANDLE));
    assert_eq!(data.pointer, Some((DataType::FLOAT16, "global".to_string())));
    assert!(f.s_tir);
    assert_eq!(f.ret, DataType::VOID);
}

#[test]
fn root_block_wraps_function_level_statements() {
    let (m, name) = one(FUSED_025);
    let f = prim(&m, &name);
    let root = f.root_block().expect("a root block");
    assert_eq!(root.name, "root");
    assert!(root.iter_vars.is_empty() && root.reads.is_empty() && root.writes.is_empty());
    assert!(root.predicate.is_none() && root.init.is_none());
    let allocs: Vec<&str> = root.alloc_buffers.iter().map(|&b| f.buffers[b].name.as_str()).collect();
    assert_eq!(allocs, ["tmp"]);
    match f.stmt(root.body) {
        StmtData::Seq(items) => assert_eq!(items.len(), 2),
        other => panic!("expected the two loop nests, found {other:?}"),
    }
    assert_eq!(blocks(f).len(), 3);
    assert!(f.s_tir);
    assert!(f.attrs.get("global_symbol").is_none());
    assert_eq!(f.attrs.get("tirx.noalias"), Some(&AttrValue::Bool(true)));
}

#[test]
fn no_root_block_without_blocks() {
    let (m, name) = one(r#"    @T.prim_func(private=True, s_tir=True)
    def shape_func(H: T.Buffer((T.int64(4),), "int64")):
        T.func_attr({"tirx.is_host_func": True})
        H[T.int64(3)] = H[T.int64(0)] * T.int64(256)
        H[T.int64(1)] = T.int64(8) * H[T.int64(0)]
"#);
    let f = prim(&m, &name);
    assert!(f.root_block().is_none());
    let StmtData::Seq(items) = f.stmt(f.body) else { panic!("expected a sequence") };
    assert_eq!(items.len(), 2);
    assert!(items.iter().all(|&s| matches!(f.stmt(s), StmtData::Store { .. })));
    let StmtData::Store { indices, value, .. } = f.stmt(items[1]) else { unreachable!() };
    assert_eq!(int(f, indices[0]), (DataType::INT64, 1));
    assert!(matches!(f.pool.prim(*value), PrimExprData::Bin(BinOp::Mul, ..)));
}

#[test]
fn explicit_root_block_is_kept() {
    let (m, name) = one(r#"    @T.prim_func(private=True, s_tir=True)
    def f(A: T.Buffer((4,), "float32")):
        with T.sblock("root"):
            B = T.sblock_alloc_buffer((4,))
            for i in range(4):
                with T.sblock("b"):
                    vi = T.axis.spatial(4, i)
                    B[vi] = A[vi]
"#);
    let f = prim(&m, &name);
    let root = f.root_block().expect("a root block");
    assert_eq!(root.alloc_buffers.len(), 1);
    assert_eq!(blocks(f).len(), 2, "the explicit root is not wrapped again");
    assert!(matches!(f.stmt(root.body), StmtData::For { .. }));
}

#[test]
fn remap_binds_loop_variables() {
    let (m, name) = one(FUSED_025);
    let f = prim(&m, &name);
    let all = blocks(f);
    let matmul = block(f, all[1]);
    assert_eq!(matmul.name, "matmul");
    let kinds: Vec<IterKind> = matmul.iter_vars.iter().map(|iv| iv.kind).collect();
    assert_eq!(kinds, [IterKind::Spatial, IterKind::Spatial, IterKind::Reduce]);
    let nest = loops(f);
    for (iv, &l) in matmul.iter_vars.iter().zip(&nest[..3]) {
        let StmtData::For { var, min, extent, .. } = f.stmt(l) else { unreachable!() };
        assert_eq!(var_of(f, iv.binding), *var);
        assert_eq!((iv.dom.min, iv.dom.extent), (*min, *extent));
        assert_eq!(f.pool.vars[iv.var].dtype, DataType::INT64);
        assert_ne!(iv.var, *var);
    }
    assert!(matmul.init.is_some());
    let reads: Vec<&str> = matmul.reads.iter().map(|r| f.buffers[r.buffer].name.as_str()).collect();
    assert_eq!(reads, ["x", "w"]);
    // `v_i0` of the second block is another variable with the same name.
    let compute = block(f, all[2]);
    assert_ne!(compute.iter_vars[0].var, matmul.iter_vars[0].var);
    assert_eq!(f.pool.vars[compute.iter_vars[0].var].name, "v_i0");
    // Extent-1 regions: the index and `1` of its type.
    let r = &compute.writes[0].region[0];
    assert_eq!(var_of(f, r.min), compute.iter_vars[0].var);
    assert_eq!(int(f, r.extent), (DataType::INT64, 1));
}

#[test]
fn loop_kinds_and_dtypes() {
    let (m, name) = one(r#"    @T.prim_func(private=True, s_tir=True)
    def f(A: T.Buffer((T.int64(4), 8), "float32")):
        for i, j in T.grid(T.int64(4), 1):
            for a in T.parallel(2):
                for b in T.vectorized(4, annotations={"k": 1}):
                    for c in T.unroll(2, unroll=True):
                        for t in T.thread_binding(32, thread="threadIdx.x"):
                            for r in range(2, 8):
                                for s in T.serial(0, 8, unroll=False):
                                    A[i, r] = T.float32(1.0)
"#);
    let f = prim(&m, &name);
    let nest = loops(f);
    let info: Vec<(ForKind, DataType, Option<&str>)> = nest
        .iter()
        .map(|&l| match f.stmt(l) {
            StmtData::For { var, kind, thread, .. } => (*kind, f.pool.vars[*var].dtype, thread.as_deref()),
            _ => unreachable!(),
        })
        .collect();
    assert_eq!(
        info,
        [
            (ForKind::Serial, DataType::INT64, None),
            (ForKind::Serial, DataType::INT32, None),
            (ForKind::Parallel, DataType::INT32, None),
            (ForKind::Vectorized, DataType::INT32, None),
            (ForKind::Unrolled, DataType::INT32, None),
            (ForKind::ThreadBinding, DataType::INT32, Some("threadIdx.x")),
            (ForKind::Serial, DataType::INT32, None),
            (ForKind::Serial, DataType::INT32, None),
        ]
    );
    let ann = |i: usize| match f.stmt(nest[i]) {
        StmtData::For { annotations, .. } => annotations.clone(),
        _ => unreachable!(),
    };
    assert_eq!(ann(3).get("k"), Some(&AttrValue::Int(1)));
    assert_eq!(ann(4).get("pragma_unroll"), Some(&AttrValue::Bool(true)));
    assert_eq!(ann(7).get("disable_unroll"), Some(&AttrValue::Bool(true)));
    let StmtData::For { min, extent, .. } = f.stmt(nest[6]) else { unreachable!() };
    assert_eq!((int(f, *min), int(f, *extent)), ((DataType::INT32, 2), (DataType::INT32, 6)));
    let StmtData::For { min, extent, .. } = f.stmt(nest[0]) else { unreachable!() };
    assert_eq!((int(f, *min), int(f, *extent)), ((DataType::INT64, 0), (DataType::INT64, 4)));
}

#[test]
fn loop_bounds_widen_constants() {
    let (m, name) = one(r#"    @T.prim_func(private=True, s_tir=True)
    def f(var_a: T.handle):
        n = T.int64()
        A = T.match_buffer(var_a, (n,))
        for i in range(1, n):
            A[i] = T.float32(0.0)
"#);
    let f = prim(&m, &name);
    let StmtData::For { var, min, extent, .. } = f.stmt(loops(f)[0]) else { unreachable!() };
    assert_eq!(f.pool.vars[*var].dtype, DataType::INT64);
    assert_eq!(int(f, *min), (DataType::INT64, 1));
    assert!(matches!(f.pool.prim(*extent), PrimExprData::Bin(BinOp::Sub, ..)));
}

#[test]
fn axis_domains_and_predicates() {
    let (m, name) = one(r#"    @T.prim_func(private=True, s_tir=True)
    def f(A: T.Buffer((16,), "float32"), B: T.Buffer((T.int64(4),), "float32")):
        for i, k in T.grid(10, T.int64(4)):
            with T.sblock("b"):
                vi = T.axis.spatial((2, 12), i + 2)
                vk = T.axis.reduce(T.int64(4), k)
                vo = T.axis.opaque(4, 0)
                T.where(i < 9)
                T.reads(A[vi], B[0:4])
                T.writes(A[vi:vi + 1])
                T.sblock_attr({"axis": 1})
                A[vi] = A[vi] + B[vk]
"#);
    let f = prim(&m, &name);
    let b = block(f, blocks(f)[1]);
    assert_eq!(int(f, b.iter_vars[0].dom.min), (DataType::INT32, 2));
    assert_eq!(int(f, b.iter_vars[0].dom.extent), (DataType::INT32, 10));
    assert_eq!(f.pool.vars[b.iter_vars[1].var].dtype, DataType::INT64);
    assert_eq!(b.iter_vars[1].kind, IterKind::Reduce);
    assert_eq!(b.iter_vars[2].kind, IterKind::Opaque);
    assert!(matches!(f.pool.prim(b.predicate.expect("a predicate")), PrimExprData::Bin(BinOp::Lt, ..)));
    assert_eq!(b.annotations.get("axis"), Some(&AttrValue::Int(1)));
    // `lo:hi` regions: `vi:vi + 1` has extent 1, `0:4` extent 4.
    assert_eq!(int(f, b.writes[0].region[0].extent), (DataType::INT32, 1));
    assert_eq!(int(f, b.reads[1].region[0].extent), (DataType::INT32, 4));
}

#[test]
fn missing_regions_are_computed() {
    let (m, name) = one(r#"    @T.prim_func(private=True, s_tir=True)
    def f(A: T.Buffer((8, 4), "float32"), B: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
        for i in range(8):
            with T.sblock("sum"):
                vi = T.axis.spatial(8, i)
                with T.init():
                    C[vi] = T.float32(0.0)
                for k in range(4):
                    C[vi] = C[vi] + A[vi, k] * B[0] + B[3]
        for i in range(8):
            with T.sblock("copy"):
                vi = T.axis.spatial(8, i)
                T.reads(A[vi, 0])
                local = T.sblock_alloc_buffer((1,))
                local[0] = A[vi, 0]
                B[vi] = local[0] + B[vi]
"#);
    let f = prim(&m, &name);
    let all = blocks(f);
    let sum = block(f, all[1]);
    let region = |r: &relax_ir::BufferRegion| -> (String, Vec<String>) {
        let dims = r
            .region
            .iter()
            .map(|rg| {
                let show = |e: PrimExpr| match f.pool.prim(e) {
                    PrimExprData::Int(_, v) => v.to_string(),
                    PrimExprData::Var(v) => f.pool.vars[*v].name.clone(),
                    other => format!("{other:?}"),
                };
                format!("{}+{}", show(rg.min), show(rg.extent))
            })
            .collect();
        (f.buffers[r.buffer].name.clone(), dims)
    };
    let reads: Vec<_> = sum.reads.iter().map(region).collect();
    // The written buffer is left out of the reads of a block with an init; the inner loop
    // is covered; two constant points of `B` merge into their hull.
    assert_eq!(
        reads,
        [("A".to_string(), vec!["vi+1".to_string(), "0+4".to_string()]), ("B".to_string(), vec!["0+4".to_string()])]
    );
    let writes: Vec<_> = sum.writes.iter().map(region).collect();
    assert_eq!(writes, [("C".to_string(), vec!["vi+1".to_string()])]);
    // Given reads are kept; computed writes skip the block's own allocation.
    let copy = block(f, all[2]);
    assert_eq!(
        copy.reads.iter().map(region).collect::<Vec<_>>(),
        [("A".to_string(), vec!["vi+1".to_string(), "0+1".to_string()])]
    );
    assert_eq!(copy.writes.iter().map(region).collect::<Vec<_>>(), [("B".to_string(), vec!["vi+1".to_string()])]);
    assert_eq!(copy.alloc_buffers.len(), 1);
}

#[test]
fn stores_convert_literals() {
    let (m, name) = one(r#"    @T.prim_func(private=True, s_tir=True)
    def f(A: T.Buffer((4,), "float16"), B: T.Buffer((4,), "int64")):
        A[0] = 1
        A[1] = 0.5
        B[0] = 3
        B[1] += 2
"#);
    let f = prim(&m, &name);
    let StmtData::Seq(items) = f.stmt(f.body) else { panic!() };
    let value = |i: usize| match f.stmt(items[i]) {
        StmtData::Store { value, .. } => f.pool.prim(*value).clone(),
        _ => unreachable!(),
    };
    assert!(matches!(value(0), PrimExprData::Float(t, v) if t == DataType::FLOAT16 && v.get() == 1.0));
    assert!(matches!(value(1), PrimExprData::Float(t, v) if t == DataType::FLOAT16 && v.get() == 0.5));
    assert_eq!(value(2), PrimExprData::Int(DataType::INT64, 3));
    assert!(matches!(value(3), PrimExprData::Bin(BinOp::Add, ..)));
}

#[test]
fn decorator_and_attributes() {
    let src = module(
        r#"    @T.prim_func
    def public(A: T.Buffer((4,), "float32")):
        T.func_attr({"op_pattern": 0, "tir.noalias": T.bool(True)})
        A[0] = T.float32(0.0)

    @T.prim_func(s_tir=True, persistent=True)
    def named(A: T.Buffer((4,), "float32")):
        T.func_attr({"calling_conv": 1, "global_symbol": "__tvm_ffi_named"})
        A[0] = T.float32(0.0)

    @T.prim_func(private=True)
    def hidden(A: T.Buffer((4,), "float32")) -> T.int32:
        return 0
"#,
    );
    let m = parse(&src);
    let public = prim(&m, "public");
    assert_eq!(public.attrs.get("global_symbol"), Some(&AttrValue::Str("public".into())));
    assert_eq!(public.attrs.get("tirx.noalias"), Some(&AttrValue::Bool(true)));
    assert_eq!(public.attrs.get("op_pattern"), Some(&AttrValue::Int(0)));
    // `tir.*` keys make the function classic, and classic text without `s_tir` is
    // schedulable.
    assert!(public.s_tir);
    let named = prim(&m, "named");
    assert_eq!(named.attrs.get("global_symbol"), Some(&AttrValue::Str("__tvm_ffi_named".into())));
    assert!(named.s_tir && named.persistent);
    let hidden = prim(&m, "hidden");
    assert!(hidden.attrs.get("global_symbol").is_none());
    assert!(!hidden.s_tir, "0.24+ text: `@T.prim_func` means what it says");
    assert_eq!(hidden.ret, DataType::INT32);
    let StmtData::Evaluate(e) = hidden.stmt(hidden.body) else { panic!() };
    assert!(matches!(hidden.pool.prim(*e), PrimExprData::Call { op, .. } if op.is(Intrinsic::Ret)));
}

#[test]
fn classic_spelling_equals_canonical() {
    let classic = format!(
        "# from tvm.script import ir as I\n# from tvm.script import tir as T\n\n@I.ir_module\nclass Module:\n{}",
        FUSED_025
            .replace("@T.prim_func(private=True, s_tir=True)", "@T.prim_func(private=True)")
            .replace("T.sblock_alloc_buffer", "T.alloc_buffer")
            .replace("T.sblock(", "T.block(")
            .replace("tirx.noalias", "tir.noalias")
    );
    let a = parse(&classic);
    let b = parse(&module(FUSED_025));
    let fa = prim(&a, "fused");
    assert!(fa.s_tir);
    assert_eq!(fa.root_block().expect("a root").alloc_buffers.len(), 1);
    assert_eq!(print(&a), print(&b));
}

#[test]
fn dialect_parameter_spellings_are_equivalent() {
    let body = r#"        T.func_attr({"tirx.noalias": True})
        for i, j in T.grid(n, T.int64(4)):
            with T.sblock("c"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(x[vi, vj])
                T.writes(y[vi * T.int64(4) + vj])
                y[vi * T.int64(4) + vj] = x[vi, vj]
"#;
    let v25 = module(&format!(
        r#"    @T.prim_func(private=True, s_tir=True)
    def f(var_x: T.handle, var_y: T.handle):
        n = T.int64()
        x = T.match_buffer(var_x, (n, T.int64(4)))
        y = T.match_buffer(var_y, (n * T.int64(4),))
{body}"#
    ));
    let v26 = module(&format!(
        r#"    @T.prim_func(private=True, s_tir=True)
    def f(x: T.Buffer(("n", T.int64(4)), "float32"), y: T.Buffer((n * T.int64(4),), "float32")):
        n = T.int64()
{body}"#
    ));
    let v27 = format!(
        r#"# from typing import TypeVar
{HEADER}n = TypeVar("n")
@I.ir_module
class Module:
    @T.prim_func(private=True, s_tir=True)
    def f(x: T.Buffer((n, T.int64(4)), "float32"), y: T.Buffer(("n * T.int64(4)",), "float32")):
{body}"#
    );
    let v695 = module(&format!(
        r#"    @T.prim_func(private=True, s_tir=True)
    def f[n](x: T.Buffer((n, T.int64(4)), "float32"), y: T.Buffer[("n * T.int64(4)",), "float32"]):
{body}"#
    ));
    let printed = print(&parse(&v25));
    assert_eq!(print(&parse(&v26)), printed);
    assert_eq!(print(&parse(&v27)), printed);
    assert_eq!(print(&parse(&v695)), printed);
    let m = parse(&v27);
    let f = prim(&m, "f");
    let (x, y) = (buffer_named(f, "x"), buffer_named(f, "y"));
    let n = var_of(f, f.buffers[x].shape[0]);
    assert_eq!(f.pool.vars[n].dtype, DataType::INT64);
    assert!(f.pool.free_vars(f.buffers[y].shape[0]).contains(&n));
}

#[test]
fn lowered_forms() {
    let (m, name) = one(r#"    @T.prim_func
    def f(args: T.handle, num_args: T.int32) -> T.int32:
        assert num_args == 1, ("TypeError", ["Expected ", metadata["ir.StringImm"][0]])
        h: T.let[T.handle] = T.tvm_struct_get(args, 0, 15, T.handle().ty)
        x = T.Buffer((T.int64(4),))
        with T.attr(x, "storage_alignment", 64):
            T.attr("default", "device_id", 0)
            x_1 = T.decl_buffer((T.int64(4),), data=T.reinterpret(T.handle("float32", "global").ty, h))
            with T.attr({"compute_scope": "f_compute_"}):
                x_2 = T.decl_buffer((4,), data=x_1.data, elem_offset=0)
                for i in range(4):
                    t: T.let[T.int32] = i * 2
                    x_2[i] = T.Cast("float32", t)
            return 0
"#);
    let f = prim(&m, &name);
    let StmtData::Assert { message, body, .. } = f.stmt(f.body) else { panic!("expected an assert") };
    assert!(
        matches!(f.pool.prim(*message), PrimExprData::Call { op, args, .. } if op.short_name() == "assert_message" && args.len() == 3)
    );
    let StmtData::Let { var, value, body } = f.stmt(*body) else { panic!("expected a let") };
    assert_eq!(f.pool.vars[*var].dtype, DataType::HANDLE);
    // The dtype of `T.tvm_struct_get` is its last argument, which is not kept.
    assert!(
        matches!(f.pool.prim(*value), PrimExprData::Call { op, args, dtype } if op.short_name() == "tvm_struct_get" && args.len() == 3 && *dtype == DataType::HANDLE)
    );
    let StmtData::Attr { node: AttrNode::Buffer(x), key, body, .. } = f.stmt(*body) else { panic!("expected an attr") };
    assert_eq!((f.buffers[*x].name.as_str(), key.as_str()), ("x", "storage_alignment"));
    // `T.attr(...)` as a statement scopes the rest of its list.
    let StmtData::Attr { node: AttrNode::Str(d), body, .. } = f.stmt(*body) else { panic!("expected an attr") };
    assert_eq!(d, "default");
    // `data=<expression>` binds a new data pointer with a `let`.
    let StmtData::Let { var: data, body, .. } = f.stmt(*body) else { panic!("expected the data let") };
    let StmtData::DeclBuffer { buffer: x1, body } = f.stmt(*body) else { panic!("expected a decl_buffer") };
    assert_eq!(f.buffers[*x1].data, *data);
    let StmtData::Seq(rest) = f.stmt(*body) else { panic!("expected a sequence") };
    let StmtData::Attr { node: AttrNode::Expr(zero), key, body, .. } = f.stmt(rest[0]) else {
        panic!("expected an attr")
    };
    assert_eq!((int(f, *zero), key.as_str()), ((DataType::INT32, 0), "compute_scope"));
    let StmtData::DeclBuffer { buffer: x2, .. } = f.stmt(*body) else { panic!("expected a decl_buffer") };
    assert_eq!(f.buffers[*x2].data, *data, "`x_1.data` is the data pointer of `x_1`");
    assert!(matches!(f.stmt(rest[1]), StmtData::Evaluate(_)));
}

#[test]
fn spans_are_recorded() {
    let src = module(FUSED_025);
    let m = parse(&src);
    let f = prim(&m, "fused");
    assert_eq!(&src[f.spans.func.start as usize..f.spans.func.end as usize], "fused");
    let mut missing = 0;
    f.walk(f.body, |s, _| missing += usize::from(f.spans.stmts.get(s).is_none()));
    assert_eq!(missing, 0);
    for (b, data) in f.buffers.iter() {
        let span = *f.spans.buffers.get(b);
        assert!(!span.is_none(), "buffer `{}` has no span", data.name);
        assert!(src[span.start as usize..span.end as usize].starts_with(&data.name));
    }
    for p in &f.params {
        assert!(!f.spans.vars.get(*p).is_none());
    }
    let loop_span = *f.spans.stmts.get(loops(f)[0]);
    assert!(src[loop_span.start as usize..].starts_with("for i0, i1, k in T.grid"));
}

#[test]
fn block_match_buffer_and_allocations() {
    let (m, name) = one(r#"    @T.prim_func(private=True, s_tir=True)
    def f(A: T.Buffer((4, 8), "float32")):
        for i in range(4):
            with T.sblock("b"):
                vi = T.axis.spatial(4, i)
                T.reads(A[vi, 0:8])
                T.writes(A[vi, 0:8])
                sub = T.match_buffer(A[vi, 0:8], (8,))
                tmp = T.sblock_alloc_buffer((8,), scope="local")
                for j in range(8):
                    tmp[j] = sub[j]
                for j in range(8):
                    sub[j] = tmp[j]
"#);
    let f = prim(&m, &name);
    let b = block(f, blocks(f)[1]);
    assert_eq!(b.match_buffers.len(), 1);
    let mb = &b.match_buffers[0];
    assert_eq!(f.buffers[mb.buffer].name, "sub");
    assert_eq!(f.buffers[mb.source.buffer].name, "A");
    assert_eq!(int(f, mb.source.region[1].extent), (DataType::INT32, 8));
    assert_eq!(b.alloc_buffers.len(), 1);
    assert_eq!(f.buffers[b.alloc_buffers[0]].scope, "local");
}

#[test]
fn names_resolve_innermost_first() {
    let (m, name) = one(r#"    @T.prim_func(private=True, s_tir=True)
    def f(A: T.Buffer((4,), "float32")):
        for i in range(4):
            A[i] = T.float32(0.0)
        for i in range(2):
            for i in range(4):
                A[i] = T.float32(1.0)
"#);
    let f = prim(&m, &name);
    let nest = loops(f);
    let vars: Vec<SymVar> = nest
        .iter()
        .map(|&l| match f.stmt(l) {
            StmtData::For { var, .. } => *var,
            _ => unreachable!(),
        })
        .collect();
    assert_eq!(vars.len(), 3);
    assert!(vars[0] != vars[1] && vars[1] != vars[2]);
    let StmtData::For { body, .. } = f.stmt(nest[2]) else { unreachable!() };
    let StmtData::Store { indices, .. } = f.stmt(*body) else { panic!() };
    assert_eq!(var_of(f, indices[0]), vars[2]);
}
