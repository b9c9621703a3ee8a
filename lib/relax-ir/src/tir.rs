//! TensorIR PrimFuncs: parameters, buffers, and the statement tree.
//!
//! Schedulable TIR (`s_tir`) has a root block around the body; the printer shows it as
//! the comment `# with T.sblock("root"):` and the parser rebuilds it. Statements nest by
//! handle; the order of a sequence lives in its `Vec<Stmt>`.

use relax_entity::{PrimaryMap, SecondaryMap};

use crate::attrs::Attrs;
use crate::dtype::DataType;
use crate::entities::{Buffer, PrimExpr, Stmt, SymVar};
use crate::pool::Pool;
use crate::prim::Range;
use crate::span::Span;

/// A buffer: a typed, shaped view of memory.
#[derive(Clone, Debug, PartialEq)]
pub struct BufferData {
    /// The name hint.
    pub name: String,
    /// The data pointer variable (a handle).
    pub data: SymVar,
    /// Element type.
    pub dtype: DataType,
    /// Dims.
    pub shape: Vec<PrimExpr>,
    /// Strides in elements; empty for the compact row-major layout.
    pub strides: Vec<PrimExpr>,
    /// Offset of the first element, in elements; `None` is the default (zero).
    pub elem_offset: Option<PrimExpr>,
    /// Storage scope (`global`, `shared`, `local`, ...).
    pub scope: String,
    /// Data alignment in bytes; `None` is the default.
    pub align: Option<i64>,
    /// Offset factor; `None` is the default.
    pub offset_factor: Option<i64>,
    /// `"auto"` for auto-broadcast buffers; `None` is the default.
    pub buffer_type: Option<String>,
    /// Axis separators; empty is the default.
    pub axis_separators: Vec<i64>,
}

impl BufferData {
    /// A compact global buffer.
    pub fn new(name: impl Into<String>, data: SymVar, dtype: DataType, shape: Vec<PrimExpr>) -> BufferData {
        BufferData {
            name: name.into(),
            data,
            dtype,
            shape,
            strides: Vec::new(),
            elem_offset: None,
            scope: "global".to_string(),
            align: None,
            offset_factor: None,
            buffer_type: None,
            axis_separators: Vec::new(),
        }
    }
    /// True when every layout field has its default value (the buffer may print inline
    /// as `T.Buffer(shape, dtype)`).
    pub fn is_simple(&self) -> bool {
        self.strides.is_empty()
            && self.elem_offset.is_none()
            && self.scope == "global"
            && self.align.is_none()
            && self.offset_factor.is_none()
            && self.buffer_type.is_none()
            && self.axis_separators.is_empty()
    }
}

/// The kind of a `for` loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ForKind {
    /// `range` / `T.serial`.
    Serial,
    /// `T.parallel`.
    Parallel,
    /// `T.vectorized`.
    Vectorized,
    /// `T.unroll`.
    Unrolled,
    /// `T.thread_binding(..., thread="threadIdx.x")`.
    ThreadBinding,
}

/// The kind of a block iteration variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IterKind {
    /// Data-parallel (`S`).
    Spatial,
    /// Reduction (`R`).
    Reduce,
    /// Scan.
    Scan,
    /// Opaque.
    Opaque,
}

impl IterKind {
    /// The letter used by `T.axis.remap`, if the kind can be remapped.
    pub fn remap_letter(self) -> Option<char> {
        match self {
            IterKind::Spatial => Some('S'),
            IterKind::Reduce => Some('R'),
            IterKind::Scan | IterKind::Opaque => None,
        }
    }
}

/// A block iteration variable and its binding.
#[derive(Clone, Debug, PartialEq)]
pub struct IterVar {
    /// The variable.
    pub var: SymVar,
    /// Its domain.
    pub dom: Range,
    /// Its kind.
    pub kind: IterKind,
    /// The value it takes, in terms of enclosing loop variables.
    pub binding: PrimExpr,
}

/// A region of a buffer: one range per dim.
#[derive(Clone, Debug, PartialEq)]
pub struct BufferRegion {
    /// The buffer.
    pub buffer: Buffer,
    /// One range per dim.
    pub region: Vec<Range>,
}

/// `sub = T.match_buffer(A[i, 0:4], shape, ...)` inside a block.
#[derive(Clone, Debug, PartialEq)]
pub struct MatchBufferRegion {
    /// The new buffer.
    pub buffer: Buffer,
    /// The region it views.
    pub source: BufferRegion,
}

/// A block with its realization (iteration bindings and predicate).
#[derive(Clone, Debug, PartialEq)]
pub struct BlockNode {
    /// The block name (unique within the PrimFunc).
    pub name: String,
    /// Iteration variables.
    pub iter_vars: Vec<IterVar>,
    /// `T.where(pred)`; `None` means always true.
    pub predicate: Option<PrimExpr>,
    /// `T.reads(...)`.
    pub reads: Vec<BufferRegion>,
    /// `T.writes(...)`.
    pub writes: Vec<BufferRegion>,
    /// `T.sblock_attr({...})`.
    pub annotations: Attrs,
    /// Buffers allocated in the block.
    pub alloc_buffers: Vec<Buffer>,
    /// Sub-region views.
    pub match_buffers: Vec<MatchBufferRegion>,
    /// `with T.init():`.
    pub init: Option<Stmt>,
    /// The body.
    pub body: Stmt,
}

/// A target of `T.attr`: what the attribute is attached to.
#[derive(Clone, Debug, PartialEq)]
pub enum AttrNode {
    /// A buffer (`T.attr(x, "storage_alignment", 64)`).
    Buffer(Buffer),
    /// A variable or other expression.
    Expr(PrimExpr),
    /// A string (`T.attr("default", "device_id", dev)`).
    Str(String),
}

/// The payload of a TIR statement.
#[derive(Clone, Debug, PartialEq)]
pub enum StmtData {
    /// Statements in order.
    Seq(Vec<Stmt>),
    /// A loop.
    For {
        /// Loop variable.
        var: SymVar,
        /// First value.
        min: PrimExpr,
        /// Trip count.
        extent: PrimExpr,
        /// Kind.
        kind: ForKind,
        /// The thread tag of a thread binding (`threadIdx.x`).
        thread: Option<String>,
        /// Step, when not one.
        step: Option<PrimExpr>,
        /// Annotations.
        annotations: Attrs,
        /// Body.
        body: Stmt,
    },
    /// A block.
    Block(Box<BlockNode>),
    /// `buffer[indices] = value`.
    Store {
        /// The buffer.
        buffer: Buffer,
        /// One index per dim.
        indices: Vec<PrimExpr>,
        /// The stored value.
        value: PrimExpr,
    },
    /// `if cond: ... else: ...`.
    If {
        /// Condition.
        cond: PrimExpr,
        /// True branch.
        then_branch: Stmt,
        /// False branch.
        else_branch: Option<Stmt>,
    },
    /// `while cond: ...`.
    While {
        /// Condition.
        cond: PrimExpr,
        /// Body.
        body: Stmt,
    },
    /// `var: T.let[dtype] = value` followed by `body`.
    Let {
        /// The variable.
        var: SymVar,
        /// Its value.
        value: PrimExpr,
        /// The scope.
        body: Stmt,
    },
    /// `T.evaluate(e)`.
    Evaluate(PrimExpr),
    /// `assert cond, message` followed by `body`.
    Assert {
        /// Condition.
        cond: PrimExpr,
        /// Message.
        message: PrimExpr,
        /// The scope.
        body: Stmt,
    },
    /// `with T.attr(node, key, value):`.
    Attr {
        /// Attached to.
        node: AttrNode,
        /// Key.
        key: String,
        /// Value.
        value: PrimExpr,
        /// Scope.
        body: Stmt,
    },
    /// `x = T.decl_buffer(...)` followed by `body`.
    DeclBuffer {
        /// The buffer.
        buffer: Buffer,
        /// The scope.
        body: Stmt,
    },
    /// `x = T.alloc_buffer(...)` in lowered TIR, followed by `body`.
    Allocate {
        /// The buffer.
        buffer: Buffer,
        /// The scope.
        body: Stmt,
    },
}

impl StmtData {
    /// Calls `f` on each direct sub-statement, in execution order: the items of a
    /// sequence, a scope's body, a block's init then body, an `if`'s branches. This is
    /// the one list of a statement's children; walkers use it (or
    /// [`StmtData::map_children`]) instead of matching every variant.
    pub fn for_each_child(&self, mut f: impl FnMut(Stmt)) {
        match self {
            StmtData::Seq(v) => v.iter().for_each(|&s| f(s)),
            StmtData::For { body, .. }
            | StmtData::While { body, .. }
            | StmtData::Let { body, .. }
            | StmtData::Assert { body, .. }
            | StmtData::Attr { body, .. }
            | StmtData::DeclBuffer { body, .. }
            | StmtData::Allocate { body, .. } => f(*body),
            StmtData::Block(b) => {
                if let Some(i) = b.init {
                    f(i);
                }
                f(b.body);
            }
            StmtData::If { then_branch, else_branch, .. } => {
                f(*then_branch);
                if let Some(e) = else_branch {
                    f(*e);
                }
            }
            StmtData::Store { .. } | StmtData::Evaluate(_) => {}
        }
    }

    /// The direct sub-statements ([`StmtData::for_each_child`]) in order.
    pub fn children(&self) -> Vec<Stmt> {
        let mut out = Vec::new();
        self.for_each_child(|s| out.push(s));
        out
    }

    /// Replaces each direct sub-statement by `f(child)`, in the order of
    /// [`StmtData::for_each_child`].
    pub fn map_children(&mut self, mut f: impl FnMut(Stmt) -> Stmt) {
        match self {
            StmtData::Seq(v) => v.iter_mut().for_each(|s| *s = f(*s)),
            StmtData::For { body, .. }
            | StmtData::While { body, .. }
            | StmtData::Let { body, .. }
            | StmtData::Assert { body, .. }
            | StmtData::Attr { body, .. }
            | StmtData::DeclBuffer { body, .. }
            | StmtData::Allocate { body, .. } => *body = f(*body),
            StmtData::Block(b) => {
                if let Some(i) = &mut b.init {
                    *i = f(*i);
                }
                b.body = f(b.body);
            }
            StmtData::If { then_branch, else_branch, .. } => {
                *then_branch = f(*then_branch);
                if let Some(e) = else_branch {
                    *e = f(*e);
                }
            }
            StmtData::Store { .. } | StmtData::Evaluate(_) => {}
        }
    }
}

/// Source spans of a PrimFunc's entities.
#[derive(Clone, Debug, Default)]
pub struct TirSpans {
    /// Each statement.
    pub stmts: SecondaryMap<Stmt, Span>,
    /// Where each buffer is declared.
    pub buffers: SecondaryMap<Buffer, Span>,
    /// Where each variable is defined.
    pub vars: SecondaryMap<SymVar, Span>,
    /// The whole function (its `def` line).
    pub func: Span,
}

/// A PrimFunc with its arenas.
#[derive(Clone, Debug)]
pub struct PrimFunc {
    /// Variables and expressions.
    pub pool: Pool,
    /// Buffers.
    pub buffers: PrimaryMap<Buffer, BufferData>,
    /// Statements.
    pub stmts: PrimaryMap<Stmt, StmtData>,
    /// Parameters, in calling-convention order: handles and scalars.
    pub params: Vec<SymVar>,
    /// The buffer bound to each handle parameter.
    pub buffer_map: Vec<(SymVar, Buffer)>,
    /// Result type (`void` for kernels).
    pub ret: DataType,
    /// Attributes, including `global_symbol` for public functions.
    pub attrs: Attrs,
    /// The body.
    pub body: Stmt,
    /// Schedulable TIR (blocks); printed `s_tir=True`.
    pub s_tir: bool,
    /// Printed `persistent=True`.
    pub persistent: bool,
    /// Source spans.
    pub spans: TirSpans,
}

impl PrimFunc {
    /// The payload of a statement.
    pub fn stmt(&self, s: Stmt) -> &StmtData {
        &self.stmts[s]
    }
    /// The payload of a buffer.
    pub fn buffer(&self, b: Buffer) -> &BufferData {
        &self.buffers[b]
    }
    /// The buffer bound to a handle parameter.
    pub fn param_buffer(&self, param: SymVar) -> Option<Buffer> {
        self.buffer_map.iter().find(|(p, _)| *p == param).map(|&(_, b)| b)
    }
    /// The root block, when the body is one (schedulable TIR).
    pub fn root_block(&self) -> Option<&BlockNode> {
        match &self.stmts[self.body] {
            StmtData::Block(b) if b.iter_vars.is_empty() => Some(b),
            _ => None,
        }
    }
    /// Calls `f` on every statement reachable from `root`, parents before children.
    pub fn walk(&self, root: Stmt, mut f: impl FnMut(Stmt, &StmtData)) {
        let mut stack = vec![root];
        while let Some(s) = stack.pop() {
            let data = &self.stmts[s];
            f(s, data);
            stack.extend(data.children().into_iter().rev());
        }
    }
}
