//! The syntax tree: a short-lived, generic Python-subset AST with byte spans inline.
//!
//! The tree knows nothing about TVM. `R.add(x, y)` is a [`ExprKind::Call`] whose function is
//! the attribute chain `R.add`; `T.Buffer((4,), "float32")` is the same shape of node. The
//! lowering pass recognises such forms with the helpers at the bottom of this file
//! ([`Expr::dotted_name`], [`Expr::as_name`], [`Call::keyword`], ...).
//!
//! Depth is bounded: the layout layer rejects files whose brackets, prefix operators or
//! operator chains would nest deeper than [`crate::layout::MAX_NESTING`], whose indentation
//! is deeper than [`crate::layout::MAX_INDENT_LEVELS`], or whose blocks (counting each
//! `elif`, which nests an `If` in the previous `else`) nest deeper than `MAX_NESTING`. So
//! recursive walks over a tree returned by [`crate::parse_syntax`] (lowering, `Debug`,
//! `Clone`, `Drop`) stay within a few hundred levels and cannot overflow the stack.

use std::fmt;

/// A byte range `start..end` in the parsed text (the whole file).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Span {
    /// Offset of the first byte.
    pub start: u32,
    /// Offset one past the last byte.
    pub end: u32,
}

impl Span {
    /// The span `start..end`.
    pub const fn new(start: u32, end: u32) -> Span {
        Span { start, end }
    }

    /// The smallest span covering both `self` and `other`.
    pub fn to(self, other: Span) -> Span {
        Span::new(self.start.min(other.start), self.end.max(other.end))
    }

    /// The span as a `usize` range, for slicing the source.
    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }

    /// Length in bytes.
    pub fn len(self) -> u32 {
        self.end.saturating_sub(self.start)
    }

    /// Whether the span covers no bytes.
    pub fn is_empty(self) -> bool {
        self.end <= self.start
    }
}

/// A comment kept by the lexer: a `# from ... import ...` header line or a `# metadata[...`
/// line, both at column 0.
#[derive(Clone, Debug, PartialEq)]
pub struct Comment {
    /// The comment's bytes, from `#` to the end of the line (a trailing `\r` excluded).
    pub span: Span,
    /// The comment as written, starting with `#`, without the line terminator.
    pub text: String,
}

impl Comment {
    /// The comment without `#` and the whitespace after it:
    /// `from tvm.script import tirx as T`.
    pub fn body(&self) -> &str {
        self.text.strip_prefix('#').unwrap_or(&self.text).trim()
    }
}

/// A parsed file.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct File {
    /// `# from ... import ...` comment lines (column 0), in file order: the dialect hint.
    pub header: Vec<Comment>,
    /// `# metadata[...` comment lines (column 0), in file order: constant data.
    pub metadata: Vec<Comment>,
    /// The top-level statements.
    pub body: Vec<Stmt>,
}

/// An identifier with its span.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Ident {
    /// The span of the identifier.
    pub span: Span,
    /// The identifier's text.
    pub name: String,
}

/// A statement.
#[derive(Clone, Debug, PartialEq)]
pub struct Stmt {
    /// From the first token (the first decorator, for a decorated definition) to the last
    /// token of the statement, body included; the line terminator is excluded.
    pub span: Span,
    /// What the statement is.
    pub kind: StmtKind,
}

/// The kinds of statement.
#[derive(Clone, Debug, PartialEq)]
pub enum StmtKind {
    /// An expression evaluated for its effect: `R.output(a, b)`, `T.evaluate(0)`.
    Expr(Expr),
    /// `a = v`, `a: ann = v`, `a, b = v`, `A[i, j] = v`, `x.attr = v`.
    ///
    /// `targets` has one entry per comma-separated target on the left (`v_i0, v_i1 = ...`
    /// gives two); a parenthesised tuple on the left stays one [`ExprKind::Tuple`] entry.
    /// Targets are names, attributes, subscripts, or tuples and lists of these.
    /// `annotation` is present only for `NAME: ann = value` (exactly one target). A bare
    /// tuple on the right (`t = z, y`) is an unparenthesised [`ExprKind::Tuple`].
    Assign {
        /// The assignment targets.
        targets: Vec<Expr>,
        /// The annotation of `x: ann = value`.
        annotation: Option<Expr>,
        /// The assigned value.
        value: Expr,
    },
    /// `target op= value`.
    AugAssign {
        /// The target (a name, attribute or subscript).
        target: Expr,
        /// The operator: `+=` is [`BinOp::Add`].
        op: BinOp,
        /// The right-hand side.
        value: Expr,
    },
    /// `with item as target: body`.
    With {
        /// The context expression: `R.dataflow()`, `T.sblock("x")`.
        item: Expr,
        /// The `as` target.
        target: Option<Expr>,
        /// The block.
        body: Vec<Stmt>,
    },
    /// `for targets in iter: body`.
    For {
        /// One entry per comma-separated loop variable (`for i, j in T.grid(...)`).
        targets: Vec<Expr>,
        /// The iterated expression.
        iter: Expr,
        /// The loop body.
        body: Vec<Stmt>,
    },
    /// `if cond: then_body else: else_body`. An `elif` becomes a nested `If` (with its own
    /// span, starting at `elif`) as the only statement of `else_body`.
    If {
        /// The condition.
        cond: Expr,
        /// The statements run when `cond` holds.
        then_body: Vec<Stmt>,
        /// The `else` (or `elif`) branch.
        else_body: Option<Vec<Stmt>>,
    },
    /// `while cond: body`.
    While {
        /// The condition.
        cond: Expr,
        /// The loop body.
        body: Vec<Stmt>,
    },
    /// `return`, `return x`, `return a, b` (an unparenthesised tuple).
    Return(Option<Expr>),
    /// `assert test` or `assert test, msg`.
    Assert {
        /// The asserted condition.
        test: Expr,
        /// The message.
        msg: Option<Expr>,
    },
    /// `pass`.
    Pass,
    /// `break`.
    Break,
    /// `continue`.
    Continue,
    /// A function definition.
    FunctionDef(FunctionDef),
    /// A class definition.
    ClassDef(ClassDef),
    /// `import a.b as c` or `from a.b import c as d, e`.
    Import {
        /// The module after `from`; `None` for a plain `import`.
        from: Option<DottedName>,
        /// The imported names.
        names: Vec<ImportAlias>,
    },
}

/// `@decorators def name[type_params](params) -> returns: body`.
#[derive(Clone, Debug, PartialEq)]
pub struct FunctionDef {
    /// Decorator expressions in order: `R.function`, `T.prim_func(private=True)`.
    pub decorators: Vec<Expr>,
    /// The function name.
    pub name: Ident,
    /// PEP 695 type parameters: `def f[n, m](...)`.
    pub type_params: Vec<Ident>,
    /// The parameters.
    pub params: Vec<Param>,
    /// The return annotation after `->`.
    pub returns: Option<Expr>,
    /// The body.
    pub body: Vec<Stmt>,
}

/// A function parameter `name: annotation = default`.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    /// From the name to the end of the default (or annotation).
    pub span: Span,
    /// The parameter name.
    pub name: Ident,
    /// The annotation after `:`.
    pub annotation: Option<Expr>,
    /// The default value after `=`.
    pub default: Option<Expr>,
}

/// `@decorators class name(bases, keywords): body`.
#[derive(Clone, Debug, PartialEq)]
pub struct ClassDef {
    /// Decorator expressions in order: `I.ir_module`.
    pub decorators: Vec<Expr>,
    /// The class name.
    pub name: Ident,
    /// Positional arguments in the parentheses.
    pub bases: Vec<Expr>,
    /// Keyword arguments in the parentheses (`metaclass=...`).
    pub keywords: Vec<Keyword>,
    /// The class body.
    pub body: Vec<Stmt>,
}

/// A dotted module path `a.b.c` in an import.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DottedName {
    /// From the first to the last component.
    pub span: Span,
    /// The path as written: `tvm.script`.
    pub name: String,
}

/// One imported name: `name` or `name as asname`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImportAlias {
    /// The imported name (dotted in a plain `import`).
    pub name: DottedName,
    /// The name after `as`.
    pub asname: Option<Ident>,
}

/// An expression.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    /// The expression's bytes. A parenthesised expression `(a + b)` keeps the span of the
    /// inner `a + b`; a parenthesised tuple's span includes the parentheses.
    pub span: Span,
    /// What the expression is.
    pub kind: ExprKind,
}

/// The kinds of expression.
#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    /// A name: `x`, `R`, `cls`.
    Name(String),
    /// A non-negative integer literal (`-1` is [`UnaryOp::Neg`] applied to `1`).
    Int(u128),
    /// A float literal: `1.0`, `1e-05`, `.5`.
    Float(f64),
    /// A string literal, escapes decoded; adjacent literals are concatenated.
    Str(String),
    /// `True` or `False`.
    Bool(bool),
    /// `None`.
    None,
    /// `value.attr`.
    Attribute {
        /// The object.
        value: Box<Expr>,
        /// The attribute name.
        attr: Ident,
    },
    /// A call.
    Call(Call),
    /// `value[index, ...]`: one entry per comma-separated index (a trailing comma adds
    /// none); slices are [`ExprKind::Slice`] entries.
    Subscript {
        /// The subscripted object.
        value: Box<Expr>,
        /// The indices.
        index: Vec<Expr>,
    },
    /// `lower:upper:step` inside a subscript; each part may be absent (`A[:]`).
    Slice {
        /// The start.
        lower: Option<Box<Expr>>,
        /// The end.
        upper: Option<Box<Expr>>,
        /// The step.
        step: Option<Box<Expr>>,
    },
    /// `(a, b)`, `(a,)`, `()`, or a bare `a, b` on the right of `=` or after `return`.
    Tuple {
        /// The elements.
        elts: Vec<Expr>,
        /// Whether the tuple was written in parentheses.
        parenthesized: bool,
    },
    /// `[a, b]`.
    List(Vec<Expr>),
    /// `{k: v, ...}`.
    Dict(Vec<(Expr, Expr)>),
    /// `{a, b}` (non-empty).
    Set(Vec<Expr>),
    /// A prefix operator: `-x`, `+x`, `~x`, `not x`.
    Unary {
        /// The operator.
        op: UnaryOp,
        /// The operand.
        operand: Box<Expr>,
    },
    /// An arithmetic or bitwise binary operator.
    Binary {
        /// The operator.
        op: BinOp,
        /// The left operand.
        lhs: Box<Expr>,
        /// The right operand.
        rhs: Box<Expr>,
    },
    /// `lhs and rhs`, `lhs or rhs`; chains nest to the left.
    BoolOp {
        /// The operator.
        op: BoolOp,
        /// The left operand.
        lhs: Box<Expr>,
        /// The right operand.
        rhs: Box<Expr>,
    },
    /// A comparison chain `first op1 e1 op2 e2 ...` (Python semantics: `a < b < c` is
    /// `a < b and b < c`).
    Compare {
        /// The leftmost operand.
        first: Box<Expr>,
        /// The operators and right operands, in order (at least one).
        rest: Vec<(CmpOp, Expr)>,
    },
    /// `body if test else orelse`.
    IfExp {
        /// The condition.
        test: Box<Expr>,
        /// The value when the condition holds.
        body: Box<Expr>,
        /// The value otherwise.
        orelse: Box<Expr>,
    },
    /// `lambda a, b: body` (TVM prints index maps as `T.index_map(lambda i, j: (j, i))`).
    Lambda {
        /// The parameter names.
        params: Vec<Ident>,
        /// The body.
        body: Box<Expr>,
    },
}

/// A call `func(args, name=value)`.
#[derive(Clone, Debug, PartialEq)]
pub struct Call {
    /// The called expression: `R.add`, `T.Buffer`, `cls.f`.
    pub func: Box<Expr>,
    /// Positional arguments, in order.
    pub args: Vec<Expr>,
    /// Keyword arguments, in order.
    pub keywords: Vec<Keyword>,
}

/// A keyword argument `name=value`.
#[derive(Clone, Debug, PartialEq)]
pub struct Keyword {
    /// From the name to the end of the value.
    pub span: Span,
    /// The keyword.
    pub name: Ident,
    /// The value.
    pub value: Expr,
}

/// Prefix operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    /// `-x`
    Neg,
    /// `+x`
    Pos,
    /// `~x`
    Invert,
    /// `not x`
    Not,
}

/// Arithmetic and bitwise binary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `//`
    FloorDiv,
    /// `%`
    Mod,
    /// `**`
    Pow,
    /// `@`
    MatMul,
    /// `<<`
    LShift,
    /// `>>`
    RShift,
    /// `&`
    BitAnd,
    /// `|`
    BitOr,
    /// `^`
    BitXor,
}

/// Boolean operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BoolOp {
    /// `and`
    And,
    /// `or`
    Or,
}

/// Comparison operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CmpOp {
    /// `==`
    Eq,
    /// `!=`
    NotEq,
    /// `<`
    Lt,
    /// `<=`
    LtE,
    /// `>`
    Gt,
    /// `>=`
    GtE,
    /// `is`
    Is,
    /// `is not`
    IsNot,
    /// `in`
    In,
    /// `not in`
    NotIn,
}

impl UnaryOp {
    /// The operator as written.
    pub fn as_str(self) -> &'static str {
        match self {
            UnaryOp::Neg => "-",
            UnaryOp::Pos => "+",
            UnaryOp::Invert => "~",
            UnaryOp::Not => "not",
        }
    }
}

impl BinOp {
    /// The operator as written.
    pub fn as_str(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::FloorDiv => "//",
            BinOp::Mod => "%",
            BinOp::Pow => "**",
            BinOp::MatMul => "@",
            BinOp::LShift => "<<",
            BinOp::RShift => ">>",
            BinOp::BitAnd => "&",
            BinOp::BitOr => "|",
            BinOp::BitXor => "^",
        }
    }
}

impl BoolOp {
    /// The operator as written.
    pub fn as_str(self) -> &'static str {
        match self {
            BoolOp::And => "and",
            BoolOp::Or => "or",
        }
    }
}

impl CmpOp {
    /// The operator as written.
    pub fn as_str(self) -> &'static str {
        match self {
            CmpOp::Eq => "==",
            CmpOp::NotEq => "!=",
            CmpOp::Lt => "<",
            CmpOp::LtE => "<=",
            CmpOp::Gt => ">",
            CmpOp::GtE => ">=",
            CmpOp::Is => "is",
            CmpOp::IsNot => "is not",
            CmpOp::In => "in",
            CmpOp::NotIn => "not in",
        }
    }
}

macro_rules! display_as_str {
    ($($ty:ty),*) => {$(
        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    )*};
}
display_as_str!(UnaryOp, BinOp, BoolOp, CmpOp);

impl Expr {
    /// A new expression.
    pub fn new(span: Span, kind: ExprKind) -> Expr {
        Expr { span, kind }
    }

    /// The name, if this is a plain [`ExprKind::Name`].
    pub fn as_name(&self) -> Option<&str> {
        match &self.kind {
            ExprKind::Name(name) => Some(name),
            _ => None,
        }
    }

    /// The dotted path of a name or an attribute chain over a name: `"R.nn.softmax"` for
    /// `R.nn.softmax`, `"x"` for `x`; `None` for anything else (`f().a`, `a[0].b`).
    pub fn dotted_name(&self) -> Option<String> {
        let mut parts = Vec::new();
        let mut cur = self;
        loop {
            match &cur.kind {
                ExprKind::Name(name) => {
                    parts.push(name.as_str());
                    break;
                }
                ExprKind::Attribute { value, attr } => {
                    parts.push(attr.name.as_str());
                    cur = value;
                }
                _ => return None,
            }
        }
        parts.reverse();
        Some(parts.join("."))
    }

    /// Whether this is a name or an attribute chain spelling exactly `path` (`"R.add"`),
    /// without allocating.
    pub fn is_dotted(&self, path: &str) -> bool {
        let mut rest = path;
        let mut cur = self;
        loop {
            match &cur.kind {
                ExprKind::Name(name) => return rest == name,
                ExprKind::Attribute { value, attr } => {
                    match rest.strip_suffix(attr.name.as_str()) {
                        Some(head) => match head.strip_suffix('.') {
                            Some(head) => rest = head,
                            None => return false,
                        },
                        None => return false,
                    }
                    cur = value;
                }
                _ => return false,
            }
        }
    }

    /// The call, if this is a [`ExprKind::Call`].
    pub fn as_call(&self) -> Option<&Call> {
        match &self.kind {
            ExprKind::Call(call) => Some(call),
            _ => None,
        }
    }

    /// The call and the dotted name of its function: `(call, "R.add")` for `R.add(x, y)`.
    pub fn as_dotted_call(&self) -> Option<(&Call, String)> {
        let call = self.as_call()?;
        Some((call, call.func.dotted_name()?))
    }

    /// The string, if this is a [`ExprKind::Str`].
    pub fn as_str(&self) -> Option<&str> {
        match &self.kind {
            ExprKind::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The integer, if this is a [`ExprKind::Int`].
    pub fn as_int(&self) -> Option<u128> {
        match self.kind {
            ExprKind::Int(v) => Some(v),
            _ => None,
        }
    }

    /// The value of an integer literal, possibly negated (`-1`), if it fits in `i64`.
    pub fn as_signed_int(&self) -> Option<i64> {
        match &self.kind {
            ExprKind::Int(v) => i64::try_from(*v).ok(),
            ExprKind::Unary { op: UnaryOp::Neg, operand } => match operand.kind {
                ExprKind::Int(v) if v <= 1u128 << 63 => Some((v as i128).wrapping_neg() as i64),
                _ => None,
            },
            _ => None,
        }
    }

    /// The elements of a tuple (parenthesised or not) or a list.
    pub fn as_sequence(&self) -> Option<&[Expr]> {
        match &self.kind {
            ExprKind::Tuple { elts, .. } | ExprKind::List(elts) => Some(elts),
            _ => None,
        }
    }

    /// A short description for diagnostics: `a call`, `a name`, `a literal`.
    pub fn describe(&self) -> &'static str {
        match self.kind {
            ExprKind::Name(_) => "a name",
            ExprKind::Int(_) => "an integer",
            ExprKind::Float(_) => "a float",
            ExprKind::Str(_) => "a string",
            ExprKind::Bool(_) => "a boolean",
            ExprKind::None => "`None`",
            ExprKind::Attribute { .. } => "an attribute",
            ExprKind::Call(_) => "a call",
            ExprKind::Subscript { .. } => "a subscript",
            ExprKind::Slice { .. } => "a slice",
            ExprKind::Tuple { .. } => "a tuple",
            ExprKind::List(_) => "a list",
            ExprKind::Dict(_) => "a dict",
            ExprKind::Set(_) => "a set",
            ExprKind::Unary { .. } | ExprKind::Binary { .. } => "an operator expression",
            ExprKind::BoolOp { .. } => "a boolean expression",
            ExprKind::Compare { .. } => "a comparison",
            ExprKind::IfExp { .. } => "a conditional expression",
            ExprKind::Lambda { .. } => "a lambda",
        }
    }
}

impl Call {
    /// The value of keyword argument `name`, if given.
    pub fn keyword(&self, name: &str) -> Option<&Expr> {
        self.keywords.iter().find(|k| k.name.name == name).map(|k| &k.value)
    }

    /// Positional argument `i`, if given.
    pub fn arg(&self, i: usize) -> Option<&Expr> {
        self.args.get(i)
    }
}

impl Stmt {
    /// A new statement.
    pub fn new(span: Span, kind: StmtKind) -> Stmt {
        Stmt { span, kind }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(s: &str, start: u32) -> Expr {
        Expr::new(Span::new(start, start + s.len() as u32), ExprKind::Name(s.into()))
    }

    fn attr(value: Expr, a: &str) -> Expr {
        let end = value.span.end + 1 + a.len() as u32;
        Expr::new(
            Span::new(value.span.start, end),
            ExprKind::Attribute {
                value: Box::new(value),
                attr: Ident { span: Span::new(end - a.len() as u32, end), name: a.into() },
            },
        )
    }

    #[test]
    fn dotted_names() {
        let e = attr(attr(name("R", 0), "nn"), "softmax");
        assert_eq!(e.dotted_name().as_deref(), Some("R.nn.softmax"));
        assert!(e.is_dotted("R.nn.softmax"));
        assert!(!e.is_dotted("R.softmax"));
        assert!(!e.is_dotted("X.nn.softmax"));
        assert!(!e.is_dotted("R.nnsoftmax"));
        assert!(!e.is_dotted("softmax"));
        assert_eq!(name("x", 0).dotted_name().as_deref(), Some("x"));
        assert_eq!(name("x", 0).as_name(), Some("x"));
        assert_eq!(e.as_name(), None);
    }

    #[test]
    fn span_helpers() {
        let a = Span::new(3, 5);
        assert_eq!(a.to(Span::new(1, 4)), Span::new(1, 5));
        assert_eq!(a.len(), 2);
        assert!(Span::new(4, 4).is_empty());
        assert_eq!(a.range(), 3..5);
    }

    #[test]
    fn comment_body() {
        let c = Comment { span: Span::new(0, 10), text: "# from tvm.script import ir as I".into() };
        assert_eq!(c.body(), "from tvm.script import ir as I");
    }
}
