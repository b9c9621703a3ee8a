//! The trees `parse_syntax` builds: statements, expressions, precedence and spans.

use relax_parser::ast::{BinOp, CmpOp, Expr, ExprKind, File, Span, Stmt, StmtKind, UnaryOp};
use relax_parser::parse_syntax;

fn parse(src: &str) -> File {
    let (file, errors) = parse_syntax(src);
    assert!(errors.is_empty(), "{src:?}: {errors:?}");
    file.expect("a tree")
}

fn stmt(src: &str) -> Stmt {
    let mut file = parse(src);
    assert_eq!(file.body.len(), 1, "{src:?}");
    file.body.remove(0)
}

fn expr(src: &str) -> Expr {
    match stmt(&format!("{src}\n")).kind {
        StmtKind::Expr(e) => e,
        other => panic!("not an expression statement: {other:?}"),
    }
}

/// A fully parenthesised rendering that shows the tree's shape.
fn sexpr(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Name(n) => n.clone(),
        ExprKind::Int(v) => v.to_string(),
        ExprKind::Float(v) => format!("{v:?}"),
        ExprKind::Str(s) => format!("{s:?}"),
        ExprKind::Bool(b) => if *b { "True" } else { "False" }.into(),
        ExprKind::None => "None".into(),
        ExprKind::Attribute { value, attr } => format!("{}.{}", sexpr(value), attr.name),
        ExprKind::Call(call) => {
            let mut parts: Vec<String> = call.args.iter().map(sexpr).collect();
            parts.extend(call.keywords.iter().map(|k| format!("{}={}", k.name.name, sexpr(&k.value))));
            format!("{}({})", sexpr(&call.func), parts.join(", "))
        }
        ExprKind::Subscript { value, index } => {
            let parts: Vec<String> = index.iter().map(sexpr).collect();
            format!("{}[{}]", sexpr(value), parts.join(", "))
        }
        ExprKind::Slice { lower, upper, step } => {
            let part = |p: &Option<Box<Expr>>| p.as_deref().map(sexpr).unwrap_or_default();
            match step {
                Some(s) => format!("{}:{}:{}", part(lower), part(upper), sexpr(s)),
                None => format!("{}:{}", part(lower), part(upper)),
            }
        }
        ExprKind::Tuple { elts, parenthesized } => {
            let parts: Vec<String> = elts.iter().map(sexpr).collect();
            let p = if *parenthesized { "tuple" } else { "bare" };
            format!("({p} {})", parts.join(" "))
        }
        ExprKind::List(elts) => {
            let parts: Vec<String> = elts.iter().map(sexpr).collect();
            format!("[{}]", parts.join(" "))
        }
        ExprKind::Set(elts) => {
            let parts: Vec<String> = elts.iter().map(sexpr).collect();
            format!("{{set {}}}", parts.join(" "))
        }
        ExprKind::Dict(items) => {
            let parts: Vec<String> = items.iter().map(|(k, v)| format!("{}: {}", sexpr(k), sexpr(v))).collect();
            format!("{{{}}}", parts.join(", "))
        }
        ExprKind::Unary { op, operand } => format!("({op} {})", sexpr(operand)),
        ExprKind::Binary { op, lhs, rhs } => format!("({op} {} {})", sexpr(lhs), sexpr(rhs)),
        ExprKind::BoolOp { op, lhs, rhs } => format!("({op} {} {})", sexpr(lhs), sexpr(rhs)),
        ExprKind::Compare { first, rest } => {
            let mut s = format!("(cmp {}", sexpr(first));
            for (op, e) in rest {
                s.push_str(&format!(" {op} {}", sexpr(e)));
            }
            s + ")"
        }
        ExprKind::IfExp { test, body, orelse } => {
            format!("(if {} {} {})", sexpr(test), sexpr(body), sexpr(orelse))
        }
        ExprKind::Lambda { params, body } => {
            let names: Vec<&str> = params.iter().map(|p| p.name.as_str()).collect();
            format!("(lambda [{}] {})", names.join(" "), sexpr(body))
        }
    }
}

fn shape(src: &str) -> String {
    sexpr(&expr(src))
}

#[test]
fn lambda_expressions() {
    assert_eq!(shape("T.index_map(lambda i, j: (j, i))"), "T.index_map((lambda [i j] (tuple j i)))");
    assert_eq!(shape("lambda: 0"), "(lambda [] 0)");
    assert_eq!(shape("lambda x: x if x else y"), "(lambda [x] (if x x y))");
}

#[test]
fn precedence() {
    let cases = [
        ("a + b * c", "(+ a (* b c))"),
        ("a * b + c", "(+ (* a b) c)"),
        ("a - b - c", "(- (- a b) c)"),
        ("a // b % c * d / e", "(/ (* (% (// a b) c) d) e)"),
        ("-x ** 2", "(- (** x 2))"),
        ("2 ** -1", "(** 2 (- 1))"),
        ("a ** b ** c", "(** a (** b c))"),
        ("-a * b", "(* (- a) b)"),
        ("- - x", "(- (- x))"),
        ("~a + +b", "(+ (~ a) (+ b))"),
        ("a | b ^ c & d << e + f", "(| a (^ b (& c (<< d (+ e f)))))"),
        ("a >> b << c", "(<< (>> a b) c)"),
        ("a @ b * c", "(* (@ a b) c)"),
        ("a < b + c", "(cmp a < (+ b c))"),
        ("a < b < c", "(cmp a < b < c)"),
        ("a == b != c >= d", "(cmp a == b != c >= d)"),
        ("a in b and c not in d", "(and (cmp a in b) (cmp c not in d))"),
        ("a is None or a is not b", "(or (cmp a is None) (cmp a is not b))"),
        ("not a == b", "(not (cmp a == b))"),
        ("not not a", "(not (not a))"),
        ("a or b and c", "(or a (and b c))"),
        ("a and b or c and d", "(or (and a b) (and c d))"),
        ("a or b or c", "(or (or a b) c)"),
        ("a if c else b", "(if c a b)"),
        ("a if c else b if d else e", "(if c a (if d b e))"),
        ("x or y if c or d else z", "(if (or c d) (or x y) z)"),
        ("(a + b) * c", "(* (+ a b) c)"),
        ("-(x)", "(- x)"),
        ("f(x).y[0](z)", "f(x).y[0](z)"),
        ("-f(x) ** 2", "(- (** f(x) 2))"),
        ("a.b.c", "a.b.c"),
        ("n * 256 + i // 4 % n", "(+ (* n 256) (% (// i 4) n))"),
    ];
    for (src, want) in cases {
        assert_eq!(shape(src), want, "{src}");
    }
}

#[test]
fn atoms() {
    let cases = [
        ("()", "(tuple )"),
        ("(a,)", "(tuple a)"),
        ("(a, b)", "(tuple a b)"),
        ("(a, b,)", "(tuple a b)"),
        ("[]", "[]"),
        ("[a, b,]", "[a b]"),
        ("{}", "{}"),
        ("{\"n\": 1024, 'm': {}}", "{\"n\": 1024, \"m\": {}}"),
        ("{a, b}", "{set a b}"),
        ("\"a\" 'b' \"c\"", "\"abc\""),
        ("True", "True"),
        ("None", "None"),
        ("1.0000000000000001e-05", "1e-5"),
        ("-340282346638528859811704183484516925440.0", "(- 3.4028234663852886e38)"),
    ];
    for (src, want) in cases {
        assert_eq!(shape(src), want, "{src}");
    }
}

#[test]
fn calls_and_subscripts() {
    let cases = [
        (
            "R.call_tir(cls.f, (x, w), out_sinfo=R.Tensor((n, 4), dtype=\"float32\"),)",
            "R.call_tir(cls.f, (tuple x w), out_sinfo=R.Tensor((tuple n 4), dtype=\"float32\"))",
        ),
        ("f()", "f()"),
        ("A[v0, 0:4]", "A[v0, 0:4]"),
        ("A[i:j:k]", "A[i:j:k]"),
        ("A[:]", "A[:]"),
        ("A[::2]", "A[::2]"),
        ("A[1:]", "A[1:]"),
        ("x[0]", "x[0]"),
        ("x[0,]", "x[0]"),
        ("x[(a, b)]", "x[(tuple a b)]"),
        ("T.let[T.int32]", "T.let[T.int32]"),
        ("metadata[\"relax.expr.Constant\"][0]", "metadata[\"relax.expr.Constant\"][0]"),
    ];
    for (src, want) in cases {
        assert_eq!(shape(src), want, "{src}");
    }
    let e = expr("R.nn.softmax(x, axis=-1)");
    let (call, name) = e.as_dotted_call().unwrap();
    assert_eq!(name, "R.nn.softmax");
    assert!(call.func.is_dotted("R.nn.softmax"));
    assert_eq!(call.keyword("axis").and_then(Expr::as_signed_int), Some(-1));
    assert_eq!(call.keyword("dtype"), None);
    assert_eq!(call.arg(0).and_then(Expr::as_name), Some("x"));
}

#[test]
fn assignments() {
    let s = stmt("y: R.Tensor((m, k), dtype=\"float32\") = R.match_cast(x, T)\n");
    let StmtKind::Assign { targets, annotation, value } = s.kind else { panic!() };
    assert_eq!(targets.len(), 1);
    assert_eq!(targets[0].as_name(), Some("y"));
    assert_eq!(sexpr(&annotation.unwrap()), "R.Tensor((tuple m k), dtype=\"float32\")");
    assert_eq!(sexpr(&value), "R.match_cast(x, T)");

    let s = stmt("v_i0, v_i1 = T.axis.remap(\"SS\", [i0, i1])\n");
    let StmtKind::Assign { targets, .. } = s.kind else { panic!() };
    assert_eq!(targets.iter().map(sexpr).collect::<Vec<_>>(), ["v_i0", "v_i1"]);

    let s = stmt("t: R.Tuple(A, B) = z, y\n");
    let StmtKind::Assign { value, .. } = s.kind else { panic!() };
    assert_eq!(sexpr(&value), "(bare z y)");
    assert_eq!(value.span, Span::new(19, 23));

    let s = stmt("A[v0, v1] = B[v0, v1] + T.float32(1.0)\n");
    let StmtKind::Assign { targets, .. } = s.kind else { panic!() };
    assert_eq!(sexpr(&targets[0]), "A[v0, v1]");

    let s = stmt("x_type_index: T.let[T.int32] = T.tvm_struct_get(args, 0, 13, \"int32\")\n");
    assert!(matches!(s.kind, StmtKind::Assign { annotation: Some(_), .. }));

    let s = stmt("(a, b) = c\n");
    let StmtKind::Assign { targets, .. } = s.kind else { panic!() };
    assert_eq!(targets.iter().map(sexpr).collect::<Vec<_>>(), ["(tuple a b)"]);

    let s = stmt("x.y += 1\n");
    let StmtKind::AugAssign { target, op, value } = s.kind else { panic!() };
    assert_eq!((sexpr(&target).as_str(), op, sexpr(&value).as_str()), ("x.y", BinOp::Add, "1"));
}

#[test]
fn simple_statements() {
    assert!(matches!(stmt("return\n").kind, StmtKind::Return(None)));
    let StmtKind::Return(Some(e)) = stmt("return a, b\n").kind else { panic!() };
    assert_eq!(sexpr(&e), "(bare a b)");
    let StmtKind::Return(Some(e)) = stmt("return (t0, sh, c)\n").kind else { panic!() };
    assert_eq!(sexpr(&e), "(tuple t0 sh c)");
    let StmtKind::Assert { test, msg } = stmt("assert num_args == 3, (\"TypeError\", [\"Expected \", \"3\"])\n").kind
    else {
        panic!()
    };
    assert_eq!(sexpr(&test), "(cmp num_args == 3)");
    assert_eq!(sexpr(&msg.unwrap()), "(tuple \"TypeError\" [\"Expected \" \"3\"])");
    assert!(matches!(stmt("pass\n").kind, StmtKind::Pass));
    let file = parse("a = 1; b = 2;\nc\n");
    assert_eq!(file.body.len(), 3);
    assert_eq!(file.body[1].span, Span::new(7, 12));
    let file = parse("from __future__ import annotations\nimport tvm.script as ts, numpy\n");
    let StmtKind::Import { from, names } = &file.body[0].kind else { panic!() };
    assert_eq!(from.as_ref().unwrap().name, "__future__");
    assert_eq!(names[0].name.name, "annotations");
    let StmtKind::Import { from, names } = &file.body[1].kind else { panic!() };
    assert!(from.is_none());
    assert_eq!(names[0].name.name, "tvm.script");
    assert_eq!(names[0].asname.as_ref().unwrap().name, "ts");
    assert_eq!(names[1].name.name, "numpy");
}

#[test]
fn compound_statements() {
    let src = "\
@I.ir_module
class Module:
    @T.prim_func(private=True, s_tir=True)
    def add(A: T.Buffer((4,), \"float32\"), n: T.int32 = 4,) -> T.int32:
        for i, j in T.grid(4, 4):
            with T.sblock(\"b\") as blk:
                A[i] = A[i] + 1
        while n > 0:
            n -= 1
        return 0
";
    let file = parse(src);
    assert_eq!(file.body.len(), 1);
    let class = &file.body[0];
    assert_eq!(class.span, Span::new(0, src.trim_end().len() as u32));
    let StmtKind::ClassDef(c) = &class.kind else { panic!() };
    assert_eq!(c.name.name, "Module");
    assert!(c.decorators[0].is_dotted("I.ir_module"));
    let StmtKind::FunctionDef(f) = &c.body[0].kind else { panic!() };
    assert_eq!(c.body[0].span.start, 31);
    assert_eq!(f.name.name, "add");
    let (dec, name) = f.decorators[0].as_dotted_call().unwrap();
    assert_eq!(name, "T.prim_func");
    let at = src.find("True").unwrap() as u32;
    assert_eq!(dec.keyword("private"), Some(&Expr::new(Span::new(at, at + 4), ExprKind::Bool(true))));
    assert_eq!(f.params.len(), 2);
    assert_eq!(f.params[0].name.name, "A");
    assert_eq!(sexpr(f.params[0].annotation.as_ref().unwrap()), "T.Buffer((tuple 4), \"float32\")");
    assert_eq!(sexpr(f.params[1].default.as_ref().unwrap()), "4");
    assert_eq!(sexpr(f.returns.as_ref().unwrap()), "T.int32");
    assert_eq!(f.body.len(), 3);
    let StmtKind::For { targets, iter, body } = &f.body[0].kind else { panic!() };
    assert_eq!(targets.iter().map(sexpr).collect::<Vec<_>>(), ["i", "j"]);
    assert_eq!(sexpr(iter), "T.grid(4, 4)");
    let StmtKind::With { item, target, body } = &body[0].kind else { panic!() };
    assert_eq!(sexpr(item), "T.sblock(\"b\")");
    assert_eq!(target.as_ref().and_then(Expr::as_name), Some("blk"));
    assert_eq!(body.len(), 1);
    assert!(matches!(f.body[1].kind, StmtKind::While { .. }));
    assert!(matches!(f.body[2].kind, StmtKind::Return(Some(_))));
}

#[test]
fn if_elif_else() {
    let src = "if a:\n    x\nelif b:\n    y\nelif c:\n    z\nelse:\n    w\n";
    let s = stmt(src);
    assert_eq!(s.span, Span::new(0, src.len() as u32 - 1));
    let StmtKind::If { cond, then_body, else_body } = s.kind else { panic!() };
    assert_eq!(sexpr(&cond), "a");
    assert_eq!(then_body.len(), 1);
    let else_body = else_body.unwrap();
    assert_eq!(else_body.len(), 1);
    // The elif is a nested If with its own span, starting at `elif`.
    assert_eq!(else_body[0].span, Span::new(12, src.len() as u32 - 1));
    let StmtKind::If { cond, else_body, .. } = &else_body[0].kind else { panic!() };
    assert_eq!(sexpr(cond), "b");
    let StmtKind::If { cond, else_body, .. } = &else_body.as_ref().unwrap()[0].kind else { panic!() };
    assert_eq!(sexpr(cond), "c");
    assert_eq!(
        sexpr(match &else_body.as_ref().unwrap()[0].kind {
            StmtKind::Expr(e) => e,
            _ => panic!(),
        }),
        "w"
    );

    let StmtKind::If { else_body, .. } = stmt("if a: x\n").kind else { panic!() };
    assert!(else_body.is_none());
}

#[test]
fn type_params_and_module_statements() {
    let file = parse("m = TypeVar(\"m\")\n@R.function\ndef f[m, n](x: R.Tensor((m, n), \"float32\")):\n    return x\n");
    assert_eq!(file.body.len(), 2);
    let StmtKind::FunctionDef(f) = &file.body[1].kind else { panic!() };
    let names: Vec<_> = f.type_params.iter().map(|i| i.name.as_str()).collect();
    assert_eq!(names, ["m", "n"]);
}

#[test]
fn spans() {
    let src = "x = R.add(a, b)  # comment\n";
    let s = stmt(src);
    assert_eq!(s.span, Span::new(0, 15));
    let StmtKind::Assign { targets, value, .. } = &s.kind else { panic!() };
    assert_eq!(targets[0].span, Span::new(0, 1));
    assert_eq!(value.span, Span::new(4, 15));
    let ExprKind::Call(call) = &value.kind else { panic!() };
    assert_eq!(call.func.span, Span::new(4, 9));
    let ExprKind::Attribute { attr, .. } = &call.func.kind else { panic!() };
    assert_eq!(attr.span, Span::new(6, 9));
    assert_eq!(call.args[1].span, Span::new(13, 14));
    let e = expr("f(k=v + 1)");
    assert_eq!(e.as_call().unwrap().keywords[0].span, Span::new(2, 9));
    // A parenthesised expression keeps the inner span; a tuple includes its parentheses.
    assert_eq!(expr("(a + b)").span, Span::new(1, 6));
    assert_eq!(expr("(a, b)").span, Span::new(0, 6));
}

#[test]
fn header_and_metadata_comments() {
    let src = "# from tvm.script import ir as I\n# from tvm.script import relax as R\n\n@R.function\ndef f():\n    return metadata[\"relax.expr.Constant\"][0]\n\n# Metadata omitted. Use show_meta=True in script() method to show it.\n# metadata[\"relax.expr.Constant\"][0] = [1, 2]\n";
    let file = parse(src);
    let header: Vec<_> = file.header.iter().map(|c| c.body()).collect();
    assert_eq!(header, ["from tvm.script import ir as I", "from tvm.script import relax as R"]);
    assert_eq!(file.header[1].span, Span::new(33, 68));
    assert_eq!(file.metadata.len(), 1);
    assert!(file.metadata[0].text.starts_with("# metadata[\"relax.expr.Constant\"][0]"));
}

#[test]
fn layout_forms() {
    // Comments at column 0 inside a body, blank lines, CRLF, any indentation width, implicit
    // joining, backslash continuation.
    let src = "def f(\r\n    x,\r\n    y,\r\n):\r\n  a = 1\r\n# CHECK: a\r\n\r\n  b = [1,\r\n    2]\r\n  c = a + \\\r\n      b\r\n";
    let file = parse(src);
    let StmtKind::FunctionDef(f) = &file.body[0].kind else { panic!() };
    assert_eq!(f.params.len(), 2);
    assert_eq!(f.body.len(), 3);
    assert!(parse("").body.is_empty());
    assert!(parse("\n\n# only a comment\n").body.is_empty());
    assert_eq!(parse("x").body.len(), 1);
}

#[test]
fn unary_ops_and_literals() {
    let e = expr("-1");
    assert_eq!(e.as_signed_int(), Some(-1));
    let ExprKind::Unary { op, operand } = &e.kind else { panic!() };
    assert_eq!(*op, UnaryOp::Neg);
    assert_eq!(operand.as_int(), Some(1));
    assert_eq!(expr("340282366920938463463374607431768211455").as_int(), Some(u128::MAX));
    let ExprKind::Compare { rest, .. } = expr("a is not b").kind else { panic!() };
    assert_eq!(rest[0].0, CmpOp::IsNot);
}
