//! PrimFunc lowering errors: each diagnostic class, at the offending node, with lowering
//! continuing after an error so that several are reported; malformed input never panics.

const HEADER: &str = "# from tvm.script import ir as I\n# from tvm.script import tirx as T\n\n";

/// The diagnostics of a module made of `members`, as `(text under the span, message)`.
fn errors(members: &str) -> Vec<(String, String)> {
    let src = format!("{HEADER}@I.ir_module\nclass Module:\n{members}");
    match relax_parser::parse_module(&src) {
        Ok(_) => panic!("expected errors for:\n{members}"),
        Err(diags) => diags
            .iter()
            .map(|d| {
                let (s, e) = (d.span.start as usize, d.span.end as usize);
                (src.get(s..e).unwrap_or("<no span>").to_string(), d.message.clone())
            })
            .collect(),
    }
}

/// A PrimFunc with the given parameters and body (body lines indented by 8).
fn func(params: &str, body: &str) -> String {
    format!("    @T.prim_func(private=True, s_tir=True)\n    def f({params}):\n{body}")
}

/// Asserts that exactly one error was reported, with `message`, at `at`.
fn expect_one(members: &str, at: &str, message: &str) {
    let errs = errors(members);
    assert_eq!(errs.len(), 1, "expected one error, got {errs:#?}");
    assert_eq!(errs[0].1, message);
    assert_eq!(errs[0].0, at, "wrong span for `{message}`");
}

const A2: &str = r#"A: T.Buffer((4, 4), "float32")"#;

#[test]
fn undefined_variable() {
    expect_one(&func(A2, "        A[0, 0] = T.float32(x)\n"), "x", "undefined variable `x`");
    expect_one(
        &func(A2, "        for i in range(n):\n            A[i, 0] = T.float32(0.0)\n"),
        "n",
        "undefined variable `n`",
    );
}

#[test]
fn undefined_buffer() {
    expect_one(&func(A2, "        B[0] = T.float32(0.0)\n"), "B", "undefined buffer `B`");
}

#[test]
fn wrong_number_of_indices() {
    let msg = "buffer `A` has 2 dimensions but is indexed with 3";
    expect_one(&func(A2, "        A[0, 0, 0] = T.float32(0.0)\n"), "A[0, 0, 0]", msg);
    expect_one(&func(A2, "        A[0, 0] = A[0, 0, 1]\n"), "A[0, 0, 1]", msg);
    let block = "        for i in range(4):\n            with T.sblock(\"b\"):\n                vi = T.axis.spatial(4, i)\n                T.reads(A[vi, 0, 0])\n                A[vi, 0] = T.float32(0.0)\n";
    expect_one(&func(A2, block), "A[vi, 0, 0]", msg);
}

#[test]
fn remap_arity() {
    let body = "        for i, j in T.grid(4, 4):\n            with T.sblock(\"b\"):\n                vi, vj = T.axis.remap(\"SSR\", [i, j])\n                A[vi, vj] = T.float32(0.0)\n";
    let errs = errors(&func(A2, body));
    assert_eq!(errs[0].1, "`T.axis.remap` names 2 loop variables but the kinds string has 3 letters");
    assert_eq!(errs[0].0, "T.axis.remap(\"SSR\", [i, j])");
    let body = "        for i, j in T.grid(4, 4):\n            with T.sblock(\"b\"):\n                vi = T.axis.remap(\"SS\", [i, j])\n";
    let errs = errors(&func(A2, body));
    assert_eq!(errs[0].1, "`T.axis.remap` defines 2 iteration variables but 1 name is assigned");
    // The names stay defined: their uses report nothing more.
    let body = "        for i, j in T.grid(4, 4):\n            with T.sblock(\"b\"):\n                vi, vj = T.axis.remap(\"SQ\", [i, j])\n                A[vi, vj] = T.float32(0.0)\n";
    expect_one(&func(A2, body), "\"SQ\"", "unknown iteration kind `Q` in `T.axis.remap` (expected `S` or `R`)");
}

#[test]
fn remap_needs_enclosing_loops() {
    let body = "        for i in range(4):\n            with T.sblock(\"b\"):\n                vi, vj = T.axis.remap(\"SS\", [i, j])\n                A[vi, vj] = T.float32(0.0)\n";
    let errs = errors(&func(A2, body));
    assert_eq!(errs[0], ("j".to_string(), "`j` is not a loop variable of an enclosing loop".to_string()));
    let body = "        for i in range(4):\n            with T.sblock(\"b\"):\n                vi, vj = T.axis.remap(\"SX\", [i, i])\n";
    let errs = errors(&func(A2, body));
    assert_eq!(errs[0].1, "unknown iteration kind `X` in `T.axis.remap` (expected `S` or `R`)");
}

#[test]
fn unknown_loop_kind() {
    expect_one(
        &func(A2, "        for i in T.foo(4):\n            A[i, 0] = T.float32(0.0)\n"),
        "T.foo",
        "unknown loop kind `T.foo`",
    );
    expect_one(
        &func(A2, "        for i, j in T.grid(4, 4, 4):\n            A[i, j] = T.float32(0.0)\n"),
        "T.grid(4, 4, 4)",
        "`T.grid` has 3 extents but the loop names 2 variables",
    );
    expect_one(
        &func(A2, "        for i in T.thread_binding(4):\n            A[i, 0] = T.float32(0.0)\n"),
        "T.thread_binding(4)",
        "`T.thread_binding` needs a thread tag (`thread=\"threadIdx.x\"`)",
    );
    expect_one(
        &func(A2, "        for i in range(1.5):\n            A[0, 0] = T.float32(0.0)\n"),
        "1.5",
        "a loop bound must be an integer, found `float32`",
    );
}

#[test]
fn store_type_mismatch() {
    let body = "        for i in range(4):\n            A[i, 0] = i\n";
    expect_one(&func(A2, body), "i", "expected `float32`, found `int32`");
}

#[test]
fn header_statements_out_of_place() {
    expect_one(
        &func(A2, "        T.reads(A[0, 0])\n"),
        "T.reads(A[0, 0])",
        "`T.reads` must be directly inside a block",
    );
    let body = "        for i in range(4):\n            T.func_attr({\"a\": 1})\n";
    expect_one(&func(A2, body), "T.func_attr({\"a\": 1})", "`T.func_attr` must be at function level");
    let body = "        for i in range(4):\n            with T.sblock(\"b\"):\n                for j in range(4):\n                    T.where(j < 2)\n";
    expect_one(&func(A2, body), "T.where(j < 2)", "`T.where` must be directly inside a block");
    let body = "        with T.sblock(\"b\"):\n            T.reads()\n            T.reads()\n";
    expect_one(&func(A2, body), "T.reads()", "`T.reads` is given twice");
    let body = "        T.func_attr({\"a\": 1})\n        T.func_attr({\"a\": 2})\n";
    expect_one(&func(A2, body), "{\"a\": 2}", "function attribute `a` is given twice");
}

#[test]
fn parameters() {
    expect_one(&func("x", "        T.evaluate(0)\n"), "x", "parameter `x` needs a type annotation");
    expect_one(
        &func("x: R.Tensor((4,))", "        T.evaluate(0)\n"),
        "R.Tensor((4,))",
        "expected `T.handle`, `T.Buffer(...)` or a scalar type, found a call",
    );
    expect_one(&func("x: T.handle, x: T.handle", "        T.evaluate(0)\n"), "x", "parameter `x` is defined twice");
    let body = "        A = T.match_buffer(m, (4,))\n";
    expect_one(&func("m: T.int64", body), "m", "`T.match_buffer` takes a handle parameter or a buffer region");
    let body = "        A = T.match_buffer(a, (4,))\n        B = T.match_buffer(a, (4,))\n";
    expect_one(&func("a: T.handle", body), "a", "parameter `a` is already bound to a buffer");
    let body = "        A = T.match_buffer(a, (4,), foo=1)\n";
    expect_one(&func("a: T.handle", body), "foo", "unknown argument `foo` of `T.match_buffer`");
    let body = "        A = T.match_buffer(a, (n,))\n";
    expect_one(&func("a: T.handle", body), "n", "undefined variable `n`");
    let body = "        n = T.int32()\n        A = T.match_buffer(a, (n,))\n";
    expect_one(&func("a: T.handle, n: T.int64", body), "n", "`n` is declared `int32` but was defined as `int64`");
}

#[test]
fn buffers() {
    let body = "        B = T.sblock_alloc_buffer((4,), layout=None)\n";
    expect_one(&func(A2, body), "None", "buffer layouts (`layout=`) are not supported");
    let body = "        B = T.sblock_alloc_buffer((4.0,))\n";
    expect_one(&func(A2, body), "4.0", "a buffer dim must be an integer, found `float32`");
    let body = "        for i in range(4):\n            B = T.sblock_alloc_buffer((4,))\n";
    expect_one(
        &func(A2, body),
        "T.sblock_alloc_buffer((4,))",
        "`T.sblock_alloc_buffer` must be directly inside a block or at function level",
    );
    let body = "        B = T.sblock_alloc_buffer((4,), buffer_type=\"odd\")\n";
    expect_one(&func(A2, body), "\"odd\"", "`buffer_type` must be `auto` or `default`, found `odd`");
}

#[test]
fn several_errors_are_reported() {
    let body = "        A[0, 0] = T.float32(x)\n        for i in T.foo(4):\n            A[i, 0] = T.float32(0.0)\n        A[0] = T.float32(0.0)\n        A[0, 0] = T.float32(y)\n";
    let errs = errors(&func(A2, body));
    let messages: Vec<&str> = errs.iter().map(|(_, m)| m.as_str()).collect();
    assert_eq!(
        messages,
        [
            "undefined variable `x`",
            "unknown loop kind `T.foo`",
            "buffer `A` has 2 dimensions but is indexed with 1",
            "undefined variable `y`",
        ]
    );
}

#[test]
fn errors_in_two_functions() {
    let members = format!(
        "{}\n{}",
        func(A2, "        A[0, 0] = T.float32(x)\n"),
        func(A2, "        A[0, 0] = T.float32(y)\n").replace("def f(", "def g(")
    );
    let errs = errors(&members);
    assert_eq!(errs.len(), 2, "{errs:#?}");
}

#[test]
fn a_failed_let_does_not_cascade() {
    let body = "        t: T.int32 = z\n        A[t, 0] = T.float32(0.0)\n";
    expect_one(&func(A2, body), "z", "undefined variable `z`");
}

#[test]
fn malformed_input_never_panics() {
    let bodies = [
        "        with T.sblock():\n            pass\n",
        "        with T.sblock(1, 2):\n            pass\n",
        "        with T.init():\n            pass\n",
        "        with T.attr():\n            pass\n",
        "        with T.foo():\n            pass\n",
        "        with T.sblock(\"b\") as x:\n            pass\n",
        "        x, y = 1, 2\n",
        "        (a, b), c = T.axis.remap(\"SS\", [1, 2])\n",
        "        A.x = 1\n",
        "        A[0:1, 0] = T.float32(0.0)\n",
        "        A[0, 0] += \"s\"\n",
        "        v = T.axis.spatial()\n",
        "        v = T.axis.spatial((1, 2, 3), 0)\n",
        "        for i in range():\n            pass\n",
        "        for i in range(1, 2, 3, 4):\n            pass\n",
        "        for A[0] in range(2):\n            pass\n",
        "        for i in T.grid(1, unroll=True):\n            pass\n",
        "        for i in T.serial(4, annotations=1):\n            pass\n",
        "        for i in T.thread_binding(4, thread=1):\n            pass\n",
        "        assert 1, (1, 2)\n",
        "        assert 1, (\"k\", 2)\n",
        "        return\n",
        "        x = T.decl_buffer()\n",
        "        x = T.decl_buffer((4,), data=1)\n",
        "        x = T.Buffer((4,), strides=1)\n",
        "        x = T.Buffer((4,), axis_separators=1)\n",
        "        x = T.Buffer((4,), align=\"a\")\n",
        "        x = T.Buffer((4,), \"float32\", None, None, None, \"global\", 0, 0, \"\", None, 1)\n",
        "        T.evaluate()\n",
        "        T.attr(1)\n",
        "        x = T.launch_thread(1, 2)\n",
        "        x = T.env_thread(1)\n",
        "        T.sblock_attr(1)\n",
        "        T.func_attr(1)\n",
        "        t: T.let[1] = 2\n",
        "        t: T.let[T.int32] = 2.5 + A\n",
        "        x = metadata[\"k\"][\"i\"]\n",
        "        x = A.strides[7]\n",
        "        x = A.elem_offset + B.data\n",
        "        with T.LetStmt() as x:\n            pass\n",
        "        with T.Assert(1):\n            pass\n",
        "        def g():\n            pass\n",
        "        break\n",
        "        import os\n",
    ];
    for body in bodies {
        let src = format!("{HEADER}@I.ir_module\nclass Module:\n{}", func(A2, body));
        if let Ok(m) = relax_parser::parse_module(&src) {
            // Whatever was accepted must print.
            let _ = relax_ir::printer::print_module(&m);
        }
    }
}
