//! The instruction set of the VM (`docs/executable.md`): register-based instructions,
//! one Relax binding or less each, and the per-function code that holds them.
//!
//! Registers are the slots of a call's frame. A Relax variable's register is its index
//! in the function's variable arena (so a tensor type `R.Tensor(s, ...)` whose shape is
//! the variable `s` names the register of `s`); temporaries come after them. Symbolic
//! expressions and types are handles of the function's [`relax_ir::Pool`], which the
//! executable carries.

use relax_ir::{DataType, Pool};

/// A register of a frame.
pub type Reg = u32;

/// What a kill ends (named in the message of a later use).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KillKind {
    /// `R.memory.kill_storage`.
    Storage,
    /// `R.memory.kill_tensor`.
    Tensor,
    /// `R.vm.kill_object`.
    Object,
}

impl KillKind {
    /// The op's name, as the interpreter writes it.
    pub fn op_name(self) -> &'static str {
        match self {
            KillKind::Storage => "R.memory.kill_storage",
            KillKind::Tensor => "R.memory.kill_tensor",
            KillKind::Object => "R.vm.kill_object",
        }
    }
}

/// The DPS operands of a `call_tir`-like instruction: registers given one by one (a
/// tuple literal in the source), or one register holding a tuple.
#[derive(Clone, Debug, PartialEq)]
pub enum Operands {
    /// One register per operand.
    Regs(Vec<Reg>),
    /// A register holding a tuple of the operands (or a single non-tuple value).
    Tuple(Reg),
}

/// The callee of a `call_tir`: a module function known when compiling (the usual case,
/// a kernel), or a function value in a register.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Callee {
    /// Module global `g`.
    Global(u32),
    /// The function value in a register.
    Reg(Reg),
}

/// One instruction. `dst` registers receive the result; each variant's doc names its
/// operands.
#[derive(Clone, Debug, PartialEq)]
#[allow(missing_docs, reason = "the operands are described by each variant's doc")]
pub enum Instr {
    /// `dst = src`.
    Move { dst: Reg, src: Reg },
    /// `dst =` constant `index` of the executable's pool (tensors are fresh copies).
    Const { dst: Reg, index: u32 },
    /// `dst =` the module function `global` as a value.
    Func { dst: Reg, global: u32 },
    /// `dst =` the packed function named by string `name`.
    Packed { dst: Reg, name: u32 },
    /// `dst =` a shape: the pool expressions `dims` evaluated over the symbolic variables.
    Shape { dst: Reg, dims: Vec<u32> },
    /// `dst =` a prim value: the pool expression `expr` evaluated.
    Prim { dst: Reg, expr: u32 },
    /// `dst = (fields...)`.
    Tuple { dst: Reg, fields: Vec<Reg> },
    /// `dst = src[index]`.
    GetItem { dst: Reg, src: Reg, index: u32 },
    /// `dst = R.null_value()`.
    Null { dst: Reg },
    /// `dst = global(args...)`: a Relax function, a kernel or an extern function.
    CallGlobal { dst: Reg, global: u32, args: Vec<Reg> },
    /// `dst =` the packed function named by string `name` applied to `args`.
    CallPacked { dst: Reg, name: u32, args: Vec<Reg> },
    /// `dst = callee(args...)` for a function value.
    CallValue { dst: Reg, callee: Reg, args: Vec<Reg> },
    /// `R.call_tir` (`inplace`: `R.call_tir_inplace` with its `inplace_indices`):
    /// outputs of the types `outs` allocated, `callee(inputs..., outputs..., tir_vars...)`.
    CallTir {
        dst: Reg,
        callee: Callee,
        inputs: Operands,
        tir_vars: Option<Reg>,
        outs: Vec<u32>,
        inplace: Option<Vec<i64>>,
        tuple: bool,
    },
    /// `R.vm.call_tir_dyn(callee, args)`.
    CallTirDyn { dst: Reg, callee: Reg, args: Reg },
    /// `R.call_dps_packed(callee, args)` with outputs of the types `outs`.
    CallDpsPacked { dst: Reg, callee: Reg, args: Reg, outs: Vec<u32>, tuple: bool },
    /// `R.call_pure_packed` / `R.call_inplace_packed` (with its `inplace_indices`).
    CallPurePacked { dst: Reg, callee: Reg, args: Vec<Reg>, inplace: Option<Vec<i64>> },
    /// `R.call_builtin_with_ctx(callee, args)`.
    CallBuiltin { dst: Reg, callee: Reg, args: Reg },
    /// `R.invoke_closure` / `R.invoke_pure_closure`.
    InvokeClosure { dst: Reg, callee: Reg, args: Reg },
    /// `R.make_closure(func, captured)`.
    MakeClosure { dst: Reg, func: Reg, captured: Reg },
    /// `R.print(format, values...)`.
    Print { dst: Reg, args: Vec<Reg> },
    /// `R.assert_op(cond, format, values...)`.
    AssertOp { dst: Reg, args: Vec<Reg> },
    /// A memory op other than the kills (`R.memory.alloc_storage`, ...), by op name
    /// string `op`.
    Memory { dst: Reg, op: u32, args: Vec<Reg> },
    /// Ends `src`: a later use is an error.
    Kill { dst: Reg, src: Reg, what: KillKind },
    /// An op run by its reference kernel or as a value op: op name string `op`,
    /// attribute set `attrs`, the call's type `out` (a pool type) when it is a tensor.
    Op { dst: Reg, op: u32, attrs: u32, args: Vec<Reg>, out: Option<u32> },
    /// `dst =` a closure of local function `func` (an index into the executable's
    /// functions) over the registers and symbolic values bound so far; `self_reg`, the
    /// variable it is bound to, names it inside (recursion).
    Closure { dst: Reg, func: u32, self_reg: Option<Reg> },
    /// `R.match_cast`: checks `src` against pool type `ty` (printed as string `text`),
    /// binding symbolic variables; errors name variable register `var`.
    MatchCast { src: Reg, ty: u32, text: u32, var: Reg },
    /// Jumps to `target` when `cond` is false (the condition of an `if`).
    JumpIfNot { cond: Reg, target: u32 },
    /// Jumps to `target`.
    Jump { target: u32 },
    /// Returns `src`.
    Ret { src: Reg },
}

/// Source locations of one instruction: indices into the executable's span table (0:
/// none). An error without a location gets `site` (the call expression), then
/// `binding` (the variable bound), as the interpreter reports it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InstrDebug {
    /// The expression's span.
    pub site: u32,
    /// The binding's span.
    pub binding: u32,
}

/// A parameter of a function.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    /// Its register.
    pub reg: Reg,
    /// Its type (a pool handle).
    pub ty: u32,
    /// The type as printed in messages (a string index).
    pub text: u32,
}

/// A compiled Relax function.
#[derive(Clone, Debug)]
pub struct Function {
    /// Its name.
    pub name: String,
    /// Its global's index in the module.
    pub global: u32,
    /// The parameters.
    pub params: Vec<Param>,
    /// The result type (a pool handle) and its printed text (a string index).
    pub ret: (u32, u32),
    /// The span of the function (span table index), for result errors.
    pub span: u32,
    /// The number of registers.
    pub num_regs: u32,
    /// The code.
    pub code: Vec<Instr>,
    /// The locations of the code, one per instruction.
    pub debug: Vec<InstrDebug>,
    /// Names of the registers that hold Relax variables (empty for temporaries), for
    /// messages.
    pub reg_names: Vec<String>,
    /// The span table index of each register's variable (0 for temporaries).
    pub reg_spans: Vec<u32>,
    /// Symbolic variables, expressions and types.
    pub pool: Pool,
}

/// A constant of the pool.
#[derive(Clone, Debug, PartialEq)]
pub enum Constant {
    /// A module tensor constant: dtype, shape and its bytes (`None`: printed without
    /// data; loading it is an error naming `index`, the module's constant number).
    Tensor {
        /// The module's constant number.
        index: u32,
        /// Element type.
        dtype: DataType,
        /// Shape.
        shape: Vec<i64>,
        /// Bytes, row-major.
        data: Option<Vec<u8>>,
    },
    /// A string.
    Str(String),
    /// A dtype.
    DType(DataType),
    /// A shape whose dims are all literals.
    Shape(Vec<i64>),
    /// A literal prim value.
    Prim(crate::scalar::Scalar),
}

/// A source location of the debug table.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SpanInfo {
    /// Byte offsets into the source.
    pub lo: u32,
    /// End byte offset.
    pub hi: u32,
    /// 1-based line and column (0 when the source was not attached).
    pub line: u32,
    /// 1-based column.
    pub col: u32,
    /// The source line's text (empty when the source was not attached).
    pub text: String,
}
