//! Decoded instructions: what `crate::decode` makes of the PTX text and
//! `crate::exec` runs. Registers are indices into a thread's register file (one `u64`
//! each, holding the value's bits zero-extended from the register's width), immediates
//! are bit patterns of the instruction's type, and symbols are resolved to addresses, so
//! running an instruction does no string work.

use crate::parse::{Space, Ty};

/// An operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Opnd {
    /// A register.
    R(u32),
    /// An immediate (bits of the operand's type), or the address of a symbol.
    I(u64),
    /// A special register ([`Sreg`] as an index into the thread's table).
    S(u8),
}

/// The special registers, in the order of a thread's table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Sreg {
    TidX,
    TidY,
    TidZ,
    NtidX,
    NtidY,
    NtidZ,
    CtaidX,
    CtaidY,
    CtaidZ,
    NctaidX,
    NctaidY,
    NctaidZ,
    Laneid,
    Warpid,
    Nwarpid,
    LanemaskEq,
    LanemaskLt,
    LanemaskLe,
    LanemaskGt,
    LanemaskGe,
    Smid,
    Nsmid,
    Gridid,
    /// `%clock`, `%clock64`: the thread's instruction count.
    Clock,
    Clock64,
}

/// The number of special registers.
pub(crate) const NSREG: usize = 25;

impl Sreg {
    /// The special register PTX names `name`.
    pub(crate) fn parse(name: &str) -> Option<Sreg> {
        Some(match name {
            "%tid.x" => Sreg::TidX,
            "%tid.y" => Sreg::TidY,
            "%tid.z" => Sreg::TidZ,
            "%ntid.x" => Sreg::NtidX,
            "%ntid.y" => Sreg::NtidY,
            "%ntid.z" => Sreg::NtidZ,
            "%ctaid.x" => Sreg::CtaidX,
            "%ctaid.y" => Sreg::CtaidY,
            "%ctaid.z" => Sreg::CtaidZ,
            "%nctaid.x" => Sreg::NctaidX,
            "%nctaid.y" => Sreg::NctaidY,
            "%nctaid.z" => Sreg::NctaidZ,
            "%laneid" => Sreg::Laneid,
            "%warpid" => Sreg::Warpid,
            "%nwarpid" => Sreg::Nwarpid,
            "%lanemask_eq" => Sreg::LanemaskEq,
            "%lanemask_lt" => Sreg::LanemaskLt,
            "%lanemask_le" => Sreg::LanemaskLe,
            "%lanemask_gt" => Sreg::LanemaskGt,
            "%lanemask_ge" => Sreg::LanemaskGe,
            "%smid" => Sreg::Smid,
            "%nsmid" => Sreg::Nsmid,
            "%gridid" => Sreg::Gridid,
            "%clock" => Sreg::Clock,
            "%clock64" => Sreg::Clock64,
            _ => return None,
        })
    }
}

/// A rounding modifier.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rnd {
    /// None given: the instruction's default (nearest even for floats).
    Default,
    /// `.rn`: to nearest, ties to even.
    Rn,
    /// `.rz`: toward zero.
    Rz,
    /// `.rm`: toward minus infinity.
    Rm,
    /// `.rp`: toward plus infinity.
    Rp,
    /// `.rni`: to the nearest integer, ties to even.
    Rni,
    /// `.rzi`: to an integer toward zero.
    Rzi,
    /// `.rmi`: to an integer toward minus infinity.
    Rmi,
    /// `.rpi`: to an integer toward plus infinity.
    Rpi,
}

impl Rnd {
    pub(crate) fn parse(s: &str) -> Option<Rnd> {
        Some(match s {
            "rn" => Rnd::Rn,
            "rz" => Rnd::Rz,
            "rm" => Rnd::Rm,
            "rp" => Rnd::Rp,
            "rni" => Rnd::Rni,
            "rzi" => Rnd::Rzi,
            "rmi" => Rnd::Rmi,
            "rpi" => Rnd::Rpi,
            _ => return None,
        })
    }

    /// One of the integer rounding modes.
    pub(crate) fn is_integer(self) -> bool {
        matches!(self, Rnd::Rni | Rnd::Rzi | Rnd::Rmi | Rnd::Rpi)
    }
}

/// Two-operand operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BinOp {
    Add,
    Sub,
    /// `mul.lo` for integers, `mul` for floats.
    Mul,
    MulHi,
    /// `mul.wide`: the operands have the instruction's type, the result twice its width.
    MulWide,
    Div,
    Rem,
    Min,
    Max,
    And,
    Or,
    Xor,
    Shl,
    Shr,
    /// `copysign d, a, b`: `b` with the sign of `a`.
    Copysign,
}

/// One-operand operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum UnOp {
    Neg,
    Abs,
    Not,
    Cnot,
    Popc,
    Clz,
    Brev,
    Sqrt,
    /// `rsqrt.approx`: computed exactly rounded (see `docs/gpu.md`).
    Rsqrt,
    Rcp,
    Sin,
    Cos,
    Ex2,
    Lg2,
    Tanh,
}

/// Three-operand operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TernOp {
    /// `mad.lo`, and `fma` / `mad` for floats.
    Mad,
    MadHi,
    MadWide,
    Bfe,
    /// `prmt.b32` (default mode).
    Prmt,
    /// `lop3.b32 d, a, b, c, lut`: the lookup table is the instruction's immediate.
    Lop3(u8),
}

/// A comparison of `setp`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    /// Unsigned comparisons (`lo`, `ls`, `hi`, `hs`).
    Lo,
    Ls,
    Hi,
    Hs,
    /// Unordered float comparisons (true when an operand is NaN).
    Equ,
    Neu,
    Ltu,
    Leu,
    Gtu,
    Geu,
    /// Neither operand is NaN.
    Num,
    /// An operand is NaN.
    Nan,
}

impl Cmp {
    pub(crate) fn parse(s: &str) -> Option<Cmp> {
        Some(match s {
            "eq" => Cmp::Eq,
            "ne" => Cmp::Ne,
            "lt" => Cmp::Lt,
            "le" => Cmp::Le,
            "gt" => Cmp::Gt,
            "ge" => Cmp::Ge,
            "lo" => Cmp::Lo,
            "ls" => Cmp::Ls,
            "hi" => Cmp::Hi,
            "hs" => Cmp::Hs,
            "equ" => Cmp::Equ,
            "neu" => Cmp::Neu,
            "ltu" => Cmp::Ltu,
            "leu" => Cmp::Leu,
            "gtu" => Cmp::Gtu,
            "geu" => Cmp::Geu,
            "num" => Cmp::Num,
            "nan" => Cmp::Nan,
            _ => return None,
        })
    }
}

/// How `setp` combines its comparison with a third predicate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BoolOp {
    And,
    Or,
    Xor,
}

/// An atomic operation (`atom`, `red`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AtomOp {
    Add,
    Min,
    Max,
    And,
    Or,
    Xor,
    Exch,
    Cas,
    Inc,
    Dec,
}

/// A `shfl.sync` mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ShflMode {
    Up,
    Down,
    Bfly,
    Idx,
}

/// An address: a base operand (register or immediate) plus an offset, in a space.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Addr {
    pub space: Space,
    pub base: Opnd,
    pub off: i64,
}

/// Float modifiers of an arithmetic instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Fmods {
    pub rnd: Rnd,
    /// `.ftz`: subnormal inputs and results become zero (`.f32` only).
    pub ftz: bool,
    /// `.sat`: float results clamp to [0, 1]; integer results to the type's range.
    pub sat: bool,
}

impl Fmods {
    pub(crate) const NONE: Fmods = Fmods { rnd: Rnd::Default, ftz: false, sat: false };
}

/// An instruction.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Op {
    Bin {
        op: BinOp,
        ty: Ty,
        m: Fmods,
        d: u32,
        a: Opnd,
        b: Opnd,
    },
    Un {
        op: UnOp,
        ty: Ty,
        m: Fmods,
        d: u32,
        a: Opnd,
    },
    Tern {
        op: TernOp,
        ty: Ty,
        m: Fmods,
        d: u32,
        a: Opnd,
        b: Opnd,
        c: Opnd,
    },
    /// `bfi d, a, b, pos, len`.
    Bfi {
        ty: Ty,
        d: u32,
        a: Opnd,
        b: Opnd,
        c: Opnd,
        e: Opnd,
    },
    Setp {
        cmp: Cmp,
        ty: Ty,
        ftz: bool,
        d: Option<u32>,
        d2: Option<u32>,
        a: Opnd,
        b: Opnd,
        comb: Option<(BoolOp, Opnd, bool)>,
    },
    /// `selp d, a, b, p`: `p ? a : b`.
    Selp {
        d: u32,
        a: Opnd,
        b: Opnd,
        p: Opnd,
    },
    Cvt {
        dt: Ty,
        st: Ty,
        m: Fmods,
        d: u32,
        a: Opnd,
        ext: u8,
    },
    /// `mov`, and the bit-preserving `cvta` forms.
    Mov {
        d: u32,
        a: Opnd,
    },
    /// `mov.b64 d, {a, b}`: the parts low first, `bits` wide each.
    Pack {
        d: u32,
        parts: Vec<Opnd>,
        bits: u8,
    },
    /// `mov.b64 {a, b}, s`.
    Unpack {
        ds: Vec<Option<u32>>,
        a: Opnd,
        bits: u8,
    },
    /// `cvta.space` (`to_generic`) or `cvta.to.space`.
    Cvta {
        space: Space,
        to_generic: bool,
        d: u32,
        a: Opnd,
    },
    /// `ld`: `n` elements of `ty` into `ds` (`None`: `_`), sign- or zero-extended to
    /// `ext` bits (the destination registers' width).
    Ld {
        ty: Ty,
        n: u8,
        ds: [Option<u32>; 4],
        addr: Addr,
        ext: u8,
    },
    St {
        ty: Ty,
        n: u8,
        vals: [Opnd; 4],
        addr: Addr,
    },
    Atom {
        op: AtomOp,
        ty: Ty,
        d: Option<u32>,
        addr: Addr,
        b: Opnd,
        c: Opnd,
    },
    Bra {
        target: u32,
    },
    /// `ret` and `exit`: the thread is done.
    Exit,
    Trap,
    /// `bar.sync` / `barrier.sync`: the barrier's number (and thread count, checked at
    /// run time).
    Bar {
        id: Opnd,
        count: Option<Opnd>,
    },
    Shfl {
        mode: ShflMode,
        d: u32,
        p: Option<u32>,
        a: Opnd,
        b: Opnd,
        c: Opnd,
    },
    /// Fences and warp synchronization: nothing to do when threads run one at a time.
    Nop,
}

/// An instruction with its guard.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Inst {
    /// `@%p` (`Some((p, false))`) or `@!%p` (`Some((p, true))`).
    pub guard: Option<(u32, bool)>,
    pub op: Op,
}
