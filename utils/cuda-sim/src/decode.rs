//! Loading a PTX module: checks `.version` and `.target` against the simulated device,
//! places the module's variables (`.global` and `.const` in device memory, `.shared` in
//! each block's shared memory), and decodes every kernel into `crate::inst`
//! instructions: registers become indices (with `{ }` scopes), labels become
//! instruction indices, symbols become addresses and immediates become bits of the
//! instruction's type. Anything the simulator does not implement is an error naming
//! the instruction and its line, never a silent skip.

use std::collections::HashMap;

use crate::PtxError;
use crate::inst::{Addr, AtomOp, BinOp, BoolOp, Cmp, Fmods, Inst, Op, Opnd, Rnd, ShflMode, Sreg, TernOp, UnOp};
use crate::memory::{DeviceMemory, LOCAL_WINDOW, SHARED_WINDOW};
use crate::parse::{Arg, EntryAst, InstAst, ModuleAst, Number, Space, Stmt, Ty, VarDecl};

/// The newest PTX ISA version the simulator accepts (CUDA 12.8's).
pub const MAX_PTX_VERSION: (u32, u32) = (8, 7);

/// The static shared memory a block may use (48 KiB, as on sm_80 without opt-in).
pub const MAX_SHARED_BYTES: u64 = 48 * 1024;

/// The size of a `.global` or `.const` variable the simulator accepts.
pub const MAX_VARIABLE_BYTES: u64 = 64 << 20;

/// The registers a kernel may declare.
pub const MAX_REGISTERS: usize = 1 << 16;

/// The local memory a thread may use.
pub const MAX_LOCAL_BYTES: u64 = 512 * 1024;

/// A kernel parameter's place in the parameter buffer.
#[derive(Debug, Clone)]
pub struct Param {
    /// Its name.
    pub name: String,
    /// Its offset in the parameter buffer.
    pub offset: usize,
    /// Its size in bytes.
    pub size: usize,
}

/// A decoded kernel.
#[derive(Debug, Clone)]
pub struct Kernel {
    /// Its name.
    pub name: String,
    pub(crate) code: Vec<Inst>,
    /// The source line of each instruction.
    pub(crate) lines: Vec<u32>,
    /// The width of each register in bits.
    pub(crate) reg_bits: Vec<u8>,
    /// Its parameters in order.
    pub params: Vec<Param>,
    /// The size of the parameter buffer.
    pub param_bytes: usize,
    /// Per-thread local memory.
    pub(crate) local_bytes: usize,
    /// Static shared memory per block; dynamic shared memory starts here.
    pub(crate) shared_bytes: usize,
    /// `.maxntid`.
    pub maxntid: Option<[u32; 3]>,
    /// `.reqntid`.
    pub reqntid: Option<[u32; 3]>,
    /// It has barriers or warp shuffles: the threads of a block run in phases.
    pub(crate) lockstep: bool,
}

/// A loaded module.
#[derive(Debug, Clone)]
pub struct Program {
    /// Its kernels.
    pub kernels: Vec<Kernel>,
    /// The source lines, for messages.
    pub(crate) source: Vec<String>,
}

impl Program {
    /// Loads `text` for a device of architecture `sm` (80 for sm_80): its `.global` and
    /// `.const` variables are allocated in `mem` for `owner` (freed with
    /// [`DeviceMemory::free_owned`]; on an error nothing stays allocated).
    pub fn load(text: &str, sm: u32, mem: &mut DeviceMemory, owner: u64) -> Result<Program, PtxError> {
        let ast = crate::parse::parse(text)?;
        check_header(&ast, sm)?;
        let mut syms: HashMap<String, (Space, u64)> = HashMap::new();
        let result = (|| {
            let mut shared = 0u64;
            let mut dynamic_shared = Vec::new();
            for v in &ast.vars {
                if syms.contains_key(&v.name) {
                    return Err(PtxError::new(v.line, format!("`{}` is declared twice", v.name)));
                }
                let addr = match v.space {
                    Space::Global | Space::Const => {
                        let size = var_size(v).max(1);
                        if size > MAX_VARIABLE_BYTES {
                            return Err(PtxError::new(
                                v.line,
                                format!(
                                    "`{}` ({size} bytes) is larger than the simulator's {MAX_VARIABLE_BYTES}",
                                    v.name
                                ),
                            ));
                        }
                        let addr = mem
                            .alloc(size, owner)
                            .map_err(|e| PtxError::new(v.line, format!("cannot place `{}`: {e}", v.name)))?;
                        mem.write(addr, &init_bytes(v)?).map_err(|e| PtxError::new(v.line, e.to_string()))?;
                        addr
                    }
                    Space::Shared if v.elems.is_none() => {
                        dynamic_shared.push(v.name.clone());
                        0
                    }
                    Space::Shared => place(&mut shared, v)?,
                    _ => {
                        return Err(PtxError::new(
                            v.line,
                            format!("`.{}` variables are not supported here", v.space.name()),
                        ));
                    }
                };
                syms.insert(v.name.clone(), (v.space, addr));
            }
            let mut kernels = Vec::new();
            for e in &ast.entries {
                if kernels.iter().any(|k: &Kernel| k.name == e.name) {
                    return Err(PtxError::new(e.line, format!("kernel `{}` is defined twice", e.name)));
                }
                kernels.push(decode_kernel(e, &syms, shared, &dynamic_shared)?);
            }
            Ok(kernels)
        })();
        match result {
            Ok(kernels) => Ok(Program { kernels, source: text.lines().map(str::to_string).collect() }),
            Err(e) => {
                mem.free_owned(owner);
                Err(e)
            }
        }
    }

    /// The kernel named `name`.
    pub fn kernel(&self, name: &str) -> Option<usize> {
        self.kernels.iter().position(|k| k.name == name)
    }

    /// Source line `line` (1-based) with its whitespace runs as single spaces.
    pub(crate) fn line_text(&self, line: u32) -> String {
        self.source
            .get(line.saturating_sub(1) as usize)
            .map_or(String::new(), |s| s.split_whitespace().collect::<Vec<_>>().join(" "))
    }
}

fn check_header(ast: &ModuleAst, sm: u32) -> Result<(), PtxError> {
    let Some(v) = ast.version else { return Err(PtxError::new(1, "the module has no `.version`")) };
    if v > MAX_PTX_VERSION {
        return Err(PtxError::version(format!(
            "PTX ISA {}.{} is newer than the simulator's {}.{}",
            v.0, v.1, MAX_PTX_VERSION.0, MAX_PTX_VERSION.1
        )));
    }
    let Some(t) = ast.target.iter().find(|t| t.starts_with("sm_")) else {
        return Err(PtxError::new(1, "the module has no `.target sm_XX`"));
    };
    let arch: u32 = t[3..].trim_end_matches(|c: char| c.is_ascii_alphabetic()).parse().unwrap_or(u32::MAX);
    if arch > sm {
        return Err(PtxError::new(
            1,
            format!("`.target {t}` is newer than the device (sm_{sm}); generate PTX for sm_{sm} or older"),
        ));
    }
    Ok(())
}

/// The size in bytes of a variable with a known size.
fn var_size(v: &VarDecl) -> u64 {
    v.elems.unwrap_or(0) * u64::from(v.ty.bytes())
}

/// Gives `v` an offset in a segment of `*size` bytes.
fn place(size: &mut u64, v: &VarDecl) -> Result<u64, PtxError> {
    let at = size.next_multiple_of(u64::from(v.align.max(1)));
    *size = at + var_size(v);
    if *size > MAX_SHARED_BYTES.max(MAX_LOCAL_BYTES) {
        return Err(PtxError::new(v.line, format!("`{}` does not fit in {} memory", v.name, v.space.name())));
    }
    Ok(at)
}

/// The initial contents of a `.global` / `.const` variable.
fn init_bytes(v: &VarDecl) -> Result<Vec<u8>, PtxError> {
    let mut out = vec![0u8; var_size(v).max(1) as usize];
    let w = v.ty.bytes() as usize;
    for (i, n) in v.init.iter().enumerate() {
        let bits = imm_bits(*n, v.ty).map_err(|e| PtxError::new(v.line, e))?;
        out[i * w..(i + 1) * w].copy_from_slice(&bits.to_le_bytes()[..w]);
    }
    Ok(out)
}

/// `v` masked to `bits`.
pub(crate) fn mask(v: u64, bits: u32) -> u64 {
    if bits >= 64 { v } else { v & ((1u64 << bits) - 1) }
}

/// The bits of immediate `n` as an operand of type `ty`.
fn imm_bits(n: Number, ty: Ty) -> Result<u64, String> {
    Ok(match ty {
        Ty::F32 => match n {
            Number::Int(v) => (v as f32).to_bits() as u64,
            Number::F32(b) => b as u64,
            Number::F64(b) => (f64::from_bits(b) as f32).to_bits() as u64,
            Number::Dec(x) => (x as f32).to_bits() as u64,
        },
        Ty::F64 => match n {
            Number::Int(v) => (v as f64).to_bits(),
            Number::F32(b) => f64::from(f32::from_bits(b)).to_bits(),
            Number::F64(b) => b,
            Number::Dec(x) => x.to_bits(),
        },
        Ty::F16 | Ty::Bf16 => {
            let x = match n {
                Number::Int(v) => return Ok(mask(v as u64, 16)),
                Number::F32(b) => f64::from(f32::from_bits(b)),
                Number::F64(b) => f64::from_bits(b),
                Number::Dec(x) => x,
            };
            if ty == Ty::F16 {
                half::f16::from_f64(x).to_bits() as u64
            } else {
                half::bf16::from_f64(x).to_bits() as u64
            }
        }
        _ => match n {
            Number::Int(v) => mask(v as u64, ty.bits()),
            Number::F32(b) => mask(b as u64, ty.bits()),
            Number::F64(b) => mask(b, ty.bits()),
            Number::Dec(_) => return Err(format!("a decimal number is not a `.{}` operand", ty.name())),
        },
    })
}

/// Decoding state of one kernel.
struct Dec<'a> {
    scopes: Vec<HashMap<String, u32>>,
    reg_bits: Vec<u8>,
    labels: HashMap<String, u32>,
    syms: HashMap<String, (Space, u64)>,
    globals: &'a HashMap<String, (Space, u64)>,
}

fn decode_kernel(
    e: &EntryAst,
    globals: &HashMap<String, (Space, u64)>,
    module_shared: u64,
    dynamic_shared: &[String],
) -> Result<Kernel, PtxError> {
    let mut d = Dec {
        scopes: vec![HashMap::new()],
        reg_bits: Vec::new(),
        labels: HashMap::new(),
        syms: HashMap::new(),
        globals,
    };
    let mut params = Vec::new();
    let mut off = 0usize;
    for p in &e.params {
        off = off.next_multiple_of(p.align.max(1) as usize);
        if d.syms.insert(p.name.clone(), (Space::Param, off as u64)).is_some() {
            return Err(PtxError::new(e.line, format!("parameter `{}` is declared twice", p.name)));
        }
        params.push(Param { name: p.name.clone(), offset: off, size: p.size as usize });
        off += p.size as usize;
    }
    let param_bytes = off;
    // Labels and the kernel's own variables first: branches may go forward.
    let (mut local, mut shared) = (0u64, module_shared);
    let mut kernel_dynamic = Vec::new();
    let mut n = 0u32;
    for s in &e.body {
        match s {
            Stmt::Inst(_) => n += 1,
            Stmt::Label(l, line) if d.labels.insert(l.clone(), n).is_some() => {
                return Err(PtxError::new(*line, format!("label `{l}` is defined twice")));
            }
            Stmt::Var(v) => {
                let at = match v.space {
                    Space::Local => place(&mut local, v)?,
                    Space::Shared if v.elems.is_none() => {
                        kernel_dynamic.push(v.name.clone());
                        0
                    }
                    Space::Shared => place(&mut shared, v)?,
                    _ => return Err(PtxError::new(v.line, "unsupported variable")),
                };
                if d.syms.insert(v.name.clone(), (v.space, at)).is_some() {
                    return Err(PtxError::new(v.line, format!("`{}` is declared twice", v.name)));
                }
            }
            _ => {}
        }
    }
    if local > MAX_LOCAL_BYTES {
        return Err(PtxError::new(
            e.line,
            format!("kernel `{}` uses {local} bytes of local memory per thread", e.name),
        ));
    }
    if shared > MAX_SHARED_BYTES {
        return Err(PtxError::new(e.line, format!("kernel `{}` uses {shared} bytes of shared memory", e.name)));
    }
    // Dynamic shared memory starts after the static variables.
    let dynamic_at = shared.next_multiple_of(16);
    for name in dynamic_shared.iter().chain(&kernel_dynamic) {
        d.syms.insert(name.clone(), (Space::Shared, dynamic_at));
    }
    let mut code = Vec::new();
    let mut lines = Vec::new();
    for s in &e.body {
        match s {
            Stmt::Open => d.scopes.push(HashMap::new()),
            Stmt::Close => {
                d.scopes.pop();
            }
            Stmt::Reg { ty, names, line } => {
                for (name, count) in names {
                    match count {
                        None => d.declare(name.clone(), *ty, *line)?,
                        Some(c) => {
                            for i in 0..*c {
                                d.declare(format!("{name}{i}"), *ty, *line)?;
                            }
                        }
                    }
                }
            }
            Stmt::Inst(i) => {
                let op = d.inst(i).map_err(|msg| PtxError::new(i.line, msg))?;
                let guard = match &i.guard {
                    None => None,
                    Some((p, neg)) => Some((d.reg(p).map_err(|msg| PtxError::new(i.line, msg))?, *neg)),
                };
                code.push(Inst { guard, op });
                lines.push(i.line);
            }
            Stmt::Label(..) | Stmt::Var(_) => {}
        }
    }
    // Falling off the end returns.
    code.push(Inst { guard: None, op: Op::Exit });
    lines.push(lines.last().copied().unwrap_or(e.line));
    let lockstep = code.iter().any(|i| matches!(i.op, Op::Bar { .. } | Op::Shfl { .. }));
    Ok(Kernel {
        name: e.name.clone(),
        code,
        lines,
        reg_bits: d.reg_bits,
        params,
        param_bytes,
        local_bytes: local as usize,
        shared_bytes: dynamic_at as usize,
        maxntid: e.maxntid,
        reqntid: e.reqntid,
        lockstep,
    })
}

/// Splits modifiers into a type list and the rest.
fn split_types(mods: &[String]) -> (Vec<Ty>, Vec<&str>) {
    let mut tys = Vec::new();
    let mut rest = Vec::new();
    for m in mods {
        match Ty::parse(m) {
            Some(t) => tys.push(t),
            None => rest.push(m.as_str()),
        }
    }
    (tys, rest)
}

/// Cache, ordering and scope modifiers of memory instructions, which change nothing
/// when threads run one at a time.
fn ignorable_mem_mod(m: &str) -> bool {
    matches!(
        m,
        "nc" | "volatile"
            | "relaxed"
            | "acquire"
            | "release"
            | "acq_rel"
            | "weak"
            | "cta"
            | "gpu"
            | "sys"
            | "ca"
            | "cg"
            | "cs"
            | "lu"
            | "cv"
            | "wb"
            | "wt"
    ) || ((m.starts_with("L1::") || m.starts_with("L2::")) && m != "L2::cache_hint")
}

impl Dec<'_> {
    fn declare(&mut self, name: String, ty: Ty, line: u32) -> Result<(), PtxError> {
        let idx = u32::try_from(self.reg_bits.len()).map_err(|_| PtxError::new(line, "too many registers"))?;
        if self.reg_bits.len() >= MAX_REGISTERS {
            return Err(PtxError::new(line, format!("more than {MAX_REGISTERS} registers")));
        }
        let scope = self.scopes.last_mut().expect("the kernel scope");
        if scope.insert(name.clone(), idx).is_some() {
            return Err(PtxError::new(line, format!("register `{name}` is declared twice")));
        }
        self.reg_bits.push(ty.bits().max(1) as u8);
        Ok(())
    }

    fn reg(&self, name: &str) -> Result<u32, String> {
        self.scopes
            .iter()
            .rev()
            .find_map(|s| s.get(name).copied())
            .ok_or_else(|| format!("`{name}` is not a declared register"))
    }

    fn sym(&self, name: &str) -> Option<(Space, u64)> {
        self.syms.get(name).or_else(|| self.globals.get(name)).copied()
    }

    /// A source operand of type `ty`.
    fn src(&self, a: &Arg, ty: Ty) -> Result<Opnd, String> {
        match a {
            Arg::Name(n) => {
                if let Ok(r) = self.reg(n) {
                    return Ok(Opnd::R(r));
                }
                if let Some(s) = Sreg::parse(n) {
                    return Ok(Opnd::S(s as u8));
                }
                if let Some((_, addr)) = self.sym(n) {
                    return Ok(Opnd::I(addr));
                }
                Err(format!("`{n}` is not a declared register or variable"))
            }
            Arg::Num(n) => imm_bits(*n, ty).map(Opnd::I),
            Arg::Not(_) => Err("`!` is only allowed on a predicate operand of `setp`".into()),
            Arg::Addr(..) => Err("an address `[...]` is not allowed here".into()),
            Arg::Vector(_) => Err("a vector `{...}` is not allowed here".into()),
            Arg::Pair(..) => Err("`a|b` is not allowed here".into()),
            Arg::Sink => Err("`_` is not allowed here".into()),
        }
    }

    /// A destination register.
    fn dst(&self, a: &Arg) -> Result<u32, String> {
        match a {
            Arg::Name(n) => self.reg(n),
            _ => Err("the destination must be a register".into()),
        }
    }

    fn bits(&self, r: u32) -> u8 {
        self.reg_bits[r as usize]
    }

    /// An address operand of an instruction on space `space`.
    fn addr(&self, a: &Arg, space: Space) -> Result<Addr, String> {
        let Arg::Addr(base, off) = a else { return Err("expected an address `[...]`".into()) };
        let base = match &**base {
            Arg::Name(n) => match self.reg(n) {
                Ok(r) => Opnd::R(r),
                Err(_) => {
                    let (s, at) = self.sym(n).ok_or_else(|| format!("`{n}` is not a declared register or variable"))?;
                    let same = s == space || (s == Space::Const && space == Space::Global);
                    if same {
                        Opnd::I(at)
                    } else if space == Space::Generic {
                        Opnd::I(match s {
                            Space::Shared => SHARED_WINDOW + at,
                            Space::Local => LOCAL_WINDOW + at,
                            Space::Global | Space::Const => at,
                            _ => return Err(format!("`{n}` (a .{} variable) has no generic address", s.name())),
                        })
                    } else {
                        return Err(format!("`{n}` is a .{} variable, not .{}", s.name(), space.name()));
                    }
                }
            },
            Arg::Num(Number::Int(v)) => Opnd::I(*v as u64),
            _ => return Err("bad address".into()),
        };
        Ok(Addr { space, base, off: *off })
    }

    fn args<'b>(&self, i: &'b InstAst, n: usize) -> Result<&'b [Arg], String> {
        if i.args.len() != n {
            return Err(format!("`{}` takes {n} operands, found {}", i.opcode, i.args.len()));
        }
        Ok(&i.args)
    }

    /// Decodes one instruction.
    fn inst(&mut self, i: &InstAst) -> Result<Op, String> {
        let full = if i.mods.is_empty() { i.opcode.clone() } else { format!("{}.{}", i.opcode, i.mods.join(".")) };
        let unknown = || format!("unknown instruction `{full}` (not supported by the simulator)");
        let (tys, rest) = split_types(&i.mods);
        let one_ty = || match tys.as_slice() {
            [t] => Ok(*t),
            _ => Err(format!("`{full}` needs one type")),
        };
        let bad_mod = |m: &str| format!("unsupported modifier `.{m}` in `{full}`");
        match i.opcode.as_str() {
            "add" | "sub" | "mul" | "div" | "rem" | "min" | "max" | "and" | "or" | "xor" | "shl" | "shr"
            | "copysign" => {
                let ty = one_ty()?;
                let mut m = Fmods::NONE;
                let mut op = match i.opcode.as_str() {
                    "add" => BinOp::Add,
                    "sub" => BinOp::Sub,
                    "mul" => BinOp::Mul,
                    "div" => BinOp::Div,
                    "rem" => BinOp::Rem,
                    "min" => BinOp::Min,
                    "max" => BinOp::Max,
                    "and" => BinOp::And,
                    "or" => BinOp::Or,
                    "xor" => BinOp::Xor,
                    "shl" => BinOp::Shl,
                    "shr" => BinOp::Shr,
                    _ => BinOp::Copysign,
                };
                for r in &rest {
                    match *r {
                        "lo" if op == BinOp::Mul => {}
                        "hi" if op == BinOp::Mul => op = BinOp::MulHi,
                        "wide" if op == BinOp::Mul => op = BinOp::MulWide,
                        "ftz" if ty.is_float() => m.ftz = true,
                        "sat" => m.sat = true,
                        "approx" | "full" if op == BinOp::Div && ty == Ty::F32 => {}
                        x => match Rnd::parse(x) {
                            Some(rnd @ (Rnd::Rn | Rnd::Rz | Rnd::Rm | Rnd::Rp)) if ty.is_float() => m.rnd = rnd,
                            _ => return Err(bad_mod(x)),
                        },
                    }
                }
                if ty.is_float() && matches!(op, BinOp::MulHi | BinOp::MulWide | BinOp::Rem | BinOp::Shl | BinOp::Shr) {
                    return Err(unknown());
                }
                if m.sat && !(ty.is_float() || (ty == Ty::S32 && matches!(op, BinOp::Add | BinOp::Sub))) {
                    return Err(bad_mod("sat"));
                }
                if matches!(op, BinOp::MulWide) && ty.bits() > 32 {
                    return Err(format!("`{full}`: `mul.wide` takes 16- or 32-bit operands"));
                }
                let a = self.args(i, 3)?;
                let bty = if matches!(op, BinOp::Shl | BinOp::Shr) { Ty::U32 } else { ty };
                Ok(Op::Bin { op, ty, m, d: self.dst(&a[0])?, a: self.src(&a[1], ty)?, b: self.src(&a[2], bty)? })
            }
            "mad" | "fma" => {
                let ty = one_ty()?;
                let mut m = Fmods::NONE;
                let mut op = TernOp::Mad;
                for r in &rest {
                    match *r {
                        "lo" if ty.is_int() => {}
                        "hi" if ty.is_int() => op = TernOp::MadHi,
                        "wide" if ty.is_int() => op = TernOp::MadWide,
                        "ftz" if ty.is_float() => m.ftz = true,
                        "sat" if ty.is_float() => m.sat = true,
                        x => match Rnd::parse(x) {
                            Some(rnd @ (Rnd::Rn | Rnd::Rz | Rnd::Rm | Rnd::Rp)) if ty.is_float() => m.rnd = rnd,
                            _ => return Err(bad_mod(x)),
                        },
                    }
                }
                if i.opcode == "fma" && !ty.is_float() {
                    return Err(unknown());
                }
                if ty == Ty::F64 && matches!(m.rnd, Rnd::Rz | Rnd::Rm | Rnd::Rp) {
                    return Err(format!(
                        "`{full}`: directed rounding of a `.f64` fma is not supported by the simulator"
                    ));
                }
                if op == TernOp::MadWide && ty.bits() > 32 {
                    return Err(format!("`{full}`: `mad.wide` takes 16- or 32-bit operands"));
                }
                let a = self.args(i, 4)?;
                let cty = if op == TernOp::MadWide { wide(ty) } else { ty };
                Ok(Op::Tern {
                    op,
                    ty,
                    m,
                    d: self.dst(&a[0])?,
                    a: self.src(&a[1], ty)?,
                    b: self.src(&a[2], ty)?,
                    c: self.src(&a[3], cty)?,
                })
            }
            "neg" | "abs" | "not" | "cnot" | "popc" | "clz" | "brev" | "sqrt" | "rsqrt" | "rcp" | "sin" | "cos"
            | "ex2" | "lg2" | "tanh" => {
                let ty = one_ty()?;
                let op = match i.opcode.as_str() {
                    "neg" => UnOp::Neg,
                    "abs" => UnOp::Abs,
                    "not" => UnOp::Not,
                    "cnot" => UnOp::Cnot,
                    "popc" => UnOp::Popc,
                    "clz" => UnOp::Clz,
                    "brev" => UnOp::Brev,
                    "sqrt" => UnOp::Sqrt,
                    "rsqrt" => UnOp::Rsqrt,
                    "rcp" => UnOp::Rcp,
                    "sin" => UnOp::Sin,
                    "cos" => UnOp::Cos,
                    "ex2" => UnOp::Ex2,
                    "lg2" => UnOp::Lg2,
                    _ => UnOp::Tanh,
                };
                let float_only = matches!(
                    op,
                    UnOp::Sqrt | UnOp::Rsqrt | UnOp::Rcp | UnOp::Sin | UnOp::Cos | UnOp::Ex2 | UnOp::Lg2 | UnOp::Tanh
                );
                let int_only = matches!(op, UnOp::Not | UnOp::Cnot | UnOp::Popc | UnOp::Clz | UnOp::Brev);
                if (float_only && !matches!(ty, Ty::F32 | Ty::F64)) || (int_only && ty.is_float()) {
                    return Err(unknown());
                }
                let mut m = Fmods::NONE;
                for r in &rest {
                    match *r {
                        "ftz" if ty.is_float() => m.ftz = true,
                        "approx" if float_only => {}
                        x => match Rnd::parse(x) {
                            Some(rnd @ (Rnd::Rn | Rnd::Rz | Rnd::Rm | Rnd::Rp))
                                if matches!(op, UnOp::Sqrt | UnOp::Rcp) =>
                            {
                                m.rnd = rnd
                            }
                            _ => return Err(bad_mod(x)),
                        },
                    }
                }
                let a = self.args(i, 2)?;
                Ok(Op::Un { op, ty, m, d: self.dst(&a[0])?, a: self.src(&a[1], ty)? })
            }
            "bfe" => {
                let ty = one_ty()?;
                if !matches!(ty, Ty::U32 | Ty::U64 | Ty::S32 | Ty::S64) || !rest.is_empty() {
                    return Err(unknown());
                }
                let a = self.args(i, 4)?;
                Ok(Op::Tern {
                    op: TernOp::Bfe,
                    ty,
                    m: Fmods::NONE,
                    d: self.dst(&a[0])?,
                    a: self.src(&a[1], ty)?,
                    b: self.src(&a[2], Ty::U32)?,
                    c: self.src(&a[3], Ty::U32)?,
                })
            }
            "bfi" => {
                let ty = one_ty()?;
                if !matches!(ty, Ty::B32 | Ty::B64) || !rest.is_empty() {
                    return Err(unknown());
                }
                let a = self.args(i, 5)?;
                Ok(Op::Bfi {
                    ty,
                    d: self.dst(&a[0])?,
                    a: self.src(&a[1], ty)?,
                    b: self.src(&a[2], ty)?,
                    c: self.src(&a[3], Ty::U32)?,
                    e: self.src(&a[4], Ty::U32)?,
                })
            }
            "prmt" => {
                if tys != [Ty::B32] || !rest.is_empty() {
                    return Err(unknown());
                }
                let a = self.args(i, 4)?;
                Ok(Op::Tern {
                    op: TernOp::Prmt,
                    ty: Ty::B32,
                    m: Fmods::NONE,
                    d: self.dst(&a[0])?,
                    a: self.src(&a[1], Ty::B32)?,
                    b: self.src(&a[2], Ty::B32)?,
                    c: self.src(&a[3], Ty::B32)?,
                })
            }
            "lop3" => {
                if tys != [Ty::B32] || !rest.is_empty() {
                    return Err(unknown());
                }
                let a = self.args(i, 5)?;
                let lut = match &a[4] {
                    Arg::Num(Number::Int(v)) if (0..=255).contains(v) => *v as u8,
                    _ => return Err("the lookup table of `lop3` must be an immediate in 0..=255".into()),
                };
                Ok(Op::Tern {
                    op: TernOp::Lop3(lut),
                    ty: Ty::B32,
                    m: Fmods::NONE,
                    d: self.dst(&a[0])?,
                    a: self.src(&a[1], Ty::B32)?,
                    b: self.src(&a[2], Ty::B32)?,
                    c: self.src(&a[3], Ty::B32)?,
                })
            }
            "setp" => {
                let ty = one_ty()?;
                let mut cmp = None;
                let mut comb = None;
                let mut ftz = false;
                for r in &rest {
                    match *r {
                        "and" if cmp.is_some() => comb = Some(BoolOp::And),
                        "or" if cmp.is_some() => comb = Some(BoolOp::Or),
                        "xor" if cmp.is_some() => comb = Some(BoolOp::Xor),
                        "ftz" if ty.is_float() => ftz = true,
                        x => match Cmp::parse(x) {
                            Some(c) if cmp.is_none() => cmp = Some(c),
                            _ => return Err(bad_mod(x)),
                        },
                    }
                }
                let cmp = cmp.ok_or_else(|| format!("`{full}` needs a comparison"))?;
                let float_cmp = matches!(
                    cmp,
                    Cmp::Equ | Cmp::Neu | Cmp::Ltu | Cmp::Leu | Cmp::Gtu | Cmp::Geu | Cmp::Num | Cmp::Nan
                );
                let unsigned_cmp = matches!(cmp, Cmp::Lo | Cmp::Ls | Cmp::Hi | Cmp::Hs);
                let bits_ty = matches!(ty, Ty::B16 | Ty::B32 | Ty::B64);
                let unsigned_ty = matches!(ty, Ty::U16 | Ty::U32 | Ty::U64);
                if (float_cmp && !ty.is_float())
                    || (unsigned_cmp && !unsigned_ty)
                    || (bits_ty && !matches!(cmp, Cmp::Eq | Cmp::Ne))
                    || matches!(ty, Ty::Pred | Ty::B8 | Ty::U8 | Ty::S8)
                {
                    return Err(unknown());
                }
                let n = if comb.is_some() { 4 } else { 3 };
                let a = self.args(i, n)?;
                let (d, d2) = match &a[0] {
                    Arg::Pair(p, q) => (Some(self.reg(p)?), Some(self.reg(q)?)),
                    Arg::Sink => (None, None),
                    other => (Some(self.dst(other)?), None),
                };
                let comb = match comb {
                    None => None,
                    Some(op) => Some(match &a[3] {
                        Arg::Not(p) => (op, Opnd::R(self.reg(p)?), true),
                        other => (op, self.src(other, Ty::Pred)?, false),
                    }),
                };
                Ok(Op::Setp { cmp, ty, ftz, d, d2, a: self.src(&a[1], ty)?, b: self.src(&a[2], ty)?, comb })
            }
            "selp" => {
                let ty = one_ty()?;
                if !rest.is_empty() {
                    return Err(bad_mod(rest[0]));
                }
                let a = self.args(i, 4)?;
                Ok(Op::Selp {
                    d: self.dst(&a[0])?,
                    a: self.src(&a[1], ty)?,
                    b: self.src(&a[2], ty)?,
                    p: self.src(&a[3], Ty::Pred)?,
                })
            }
            "cvt" => {
                let [dt, st] = tys[..] else { return Err(format!("`{full}` needs two types")) };
                let mut m = Fmods::NONE;
                for r in &rest {
                    match *r {
                        "ftz" => m.ftz = true,
                        "sat" => m.sat = true,
                        x => match Rnd::parse(x) {
                            Some(rnd) => m.rnd = rnd,
                            None => return Err(bad_mod(x)),
                        },
                    }
                }
                if dt == Ty::Pred || st == Ty::Pred {
                    return Err(unknown());
                }
                // PTX's rounding rules: float to integer and float to float of the same
                // size take an integer rounding; narrowing floats and integer to float take
                // a float rounding; integer to integer takes none.
                let ok = match (dt.is_float(), st.is_float()) {
                    (false, false) => m.rnd == Rnd::Default,
                    (false, true) => m.rnd.is_integer(),
                    (true, false) => !m.rnd.is_integer(),
                    (true, true) if dt == st => m.rnd == Rnd::Default || m.rnd.is_integer(),
                    (true, true) if dt.bits() > st.bits() => m.rnd == Rnd::Default,
                    (true, true) => !m.rnd.is_integer(),
                };
                if !ok {
                    return Err(format!("`{full}`: this rounding modifier does not fit this conversion"));
                }
                let a = self.args(i, 2)?;
                let d = self.dst(&a[0])?;
                Ok(Op::Cvt { dt, st, m, d, a: self.src(&a[1], st)?, ext: self.bits(d) })
            }
            "mov" => {
                let ty = one_ty()?;
                if !rest.is_empty() {
                    return Err(bad_mod(rest[0]));
                }
                let a = self.args(i, 2)?;
                match (&a[0], &a[1]) {
                    (Arg::Vector(ds), src) => {
                        let n = ds.len() as u32;
                        if !matches!(n, 2 | 4) || ty.bits() % n != 0 || ty.bits() / n < 8 {
                            return Err(format!("`{full}`: cannot split into {n} parts"));
                        }
                        let ds = ds
                            .iter()
                            .map(|x| if *x == Arg::Sink { Ok(None) } else { self.dst(x).map(Some) })
                            .collect::<Result<Vec<_>, _>>()?;
                        Ok(Op::Unpack { ds, a: self.src(src, ty)?, bits: (ty.bits() / n) as u8 })
                    }
                    (d, Arg::Vector(parts)) => {
                        let n = parts.len() as u32;
                        if !matches!(n, 2 | 4) || ty.bits() % n != 0 || ty.bits() / n < 8 {
                            return Err(format!("`{full}`: cannot join {n} parts"));
                        }
                        let pty = match ty.bits() / n {
                            8 => Ty::B8,
                            16 => Ty::B16,
                            _ => Ty::B32,
                        };
                        let parts = parts.iter().map(|x| self.src(x, pty)).collect::<Result<Vec<_>, _>>()?;
                        Ok(Op::Pack { d: self.dst(d)?, parts, bits: (ty.bits() / n) as u8 })
                    }
                    (d, src) => Ok(Op::Mov { d: self.dst(d)?, a: self.src(src, ty)? }),
                }
            }
            "cvta" => {
                let to = rest.first() == Some(&"to");
                let space_mods = if to { &rest[1..] } else { &rest[..] };
                let [space] = space_mods else { return Err(unknown()) };
                let space = Space::parse(space).ok_or_else(unknown)?;
                if !matches!(tys[..], [Ty::U64] | [Ty::U32]) {
                    return Err(unknown());
                }
                let a = self.args(i, 2)?;
                let d = self.dst(&a[0])?;
                let src = self.src(&a[1], Ty::U64)?;
                match space {
                    Space::Global | Space::Const => Ok(Op::Mov { d, a: src }),
                    Space::Shared | Space::Local => Ok(Op::Cvta { space, to_generic: !to, d, a: src }),
                    _ => Err(unknown()),
                }
            }
            "ld" | "ldu" | "st" => {
                let ty = one_ty()?;
                if ty == Ty::Pred {
                    return Err(unknown());
                }
                let mut space = Space::Generic;
                let mut n = 1u8;
                for r in &rest {
                    match *r {
                        "v2" => n = 2,
                        "v4" => n = 4,
                        x if ignorable_mem_mod(x) && !(x == "nc" && i.opcode == "st") => {}
                        x => match Space::parse(x) {
                            Some(s) if space == Space::Generic => space = s,
                            _ => return Err(bad_mod(x)),
                        },
                    }
                }
                if n > 1 && u32::from(n) * ty.bytes() > 16 {
                    return Err(format!("`{full}`: a vector access is at most 16 bytes"));
                }
                let a = self.args(i, 2)?;
                let (data, addr) = if i.opcode == "st" { (&a[1], &a[0]) } else { (&a[0], &a[1]) };
                let addr = self.addr(addr, space)?;
                let items: Vec<&Arg> = match data {
                    Arg::Vector(v) if n > 1 && v.len() == n as usize => v.iter().collect(),
                    Arg::Vector(_) => return Err(format!("`{full}` needs {n} values")),
                    x if n == 1 => vec![x],
                    _ => return Err(format!("`{full}` needs a vector `{{...}}` of {n} values")),
                };
                if i.opcode == "st" {
                    let mut vals = [Opnd::I(0); 4];
                    for (k, x) in items.iter().enumerate() {
                        vals[k] = self.src(x, ty)?;
                    }
                    Ok(Op::St { ty, n, vals, addr })
                } else {
                    let mut ds = [None; 4];
                    let mut ext = ty.bits() as u8;
                    for (k, x) in items.iter().enumerate() {
                        if **x != Arg::Sink {
                            let r = self.dst(x)?;
                            ext = self.bits(r).max(ty.bits() as u8);
                            ds[k] = Some(r);
                        }
                    }
                    Ok(Op::Ld { ty, n, ds, addr, ext })
                }
            }
            "atom" | "red" => {
                let ty = one_ty()?;
                let mut space = Space::Generic;
                let mut op = None;
                for r in &rest {
                    let aop = match *r {
                        "add" => Some(AtomOp::Add),
                        "min" => Some(AtomOp::Min),
                        "max" => Some(AtomOp::Max),
                        "and" => Some(AtomOp::And),
                        "or" => Some(AtomOp::Or),
                        "xor" => Some(AtomOp::Xor),
                        "exch" if i.opcode == "atom" => Some(AtomOp::Exch),
                        "cas" if i.opcode == "atom" => Some(AtomOp::Cas),
                        "inc" => Some(AtomOp::Inc),
                        "dec" => Some(AtomOp::Dec),
                        _ => None,
                    };
                    match (aop, *r) {
                        (Some(o), _) if op.is_none() => op = Some(o),
                        (None, x) if ignorable_mem_mod(x) && x != "nc" => {}
                        (None, x) => match Space::parse(x) {
                            Some(s @ (Space::Global | Space::Shared)) if space == Space::Generic => space = s,
                            _ => return Err(bad_mod(x)),
                        },
                        (Some(_), x) => return Err(bad_mod(x)),
                    }
                }
                let op = op.ok_or_else(|| format!("`{full}` needs an operation"))?;
                let valid = match op {
                    AtomOp::Add => matches!(ty, Ty::U32 | Ty::S32 | Ty::U64 | Ty::S64 | Ty::F32 | Ty::F64),
                    AtomOp::Min | AtomOp::Max => matches!(ty, Ty::U32 | Ty::S32 | Ty::U64 | Ty::S64),
                    AtomOp::And | AtomOp::Or | AtomOp::Xor => matches!(ty, Ty::B32 | Ty::B64),
                    AtomOp::Exch | AtomOp::Cas => matches!(ty, Ty::B32 | Ty::B64),
                    AtomOp::Inc | AtomOp::Dec => ty == Ty::U32,
                };
                if !valid {
                    return Err(unknown());
                }
                let with_d = usize::from(i.opcode == "atom");
                let n = with_d + 2 + usize::from(op == AtomOp::Cas);
                let a = self.args(i, n)?;
                let d = if with_d == 1 { Some(self.dst(&a[0])?) } else { None };
                let addr = self.addr(&a[with_d], space)?;
                let b = self.src(&a[with_d + 1], ty)?;
                let c = if op == AtomOp::Cas { self.src(&a[with_d + 2], ty)? } else { Opnd::I(0) };
                Ok(Op::Atom { op, ty, d, addr, b, c })
            }
            "bra" => {
                if !tys.is_empty() || rest.iter().any(|r| *r != "uni") {
                    return Err(unknown());
                }
                let a = self.args(i, 1)?;
                let Arg::Name(l) = &a[0] else { return Err("`bra` needs a label".into()) };
                let target = *self.labels.get(l).ok_or_else(|| format!("no label `{l}` in this kernel"))?;
                Ok(Op::Bra { target })
            }
            "ret" | "exit" => {
                if !tys.is_empty() || rest.iter().any(|r| *r != "uni") || !i.args.is_empty() {
                    return Err(unknown());
                }
                Ok(Op::Exit)
            }
            "trap" => {
                if !i.mods.is_empty() || !i.args.is_empty() {
                    return Err(unknown());
                }
                Ok(Op::Trap)
            }
            "bar" | "barrier" => {
                if rest == ["warp", "sync"] {
                    return Ok(Op::Nop);
                }
                let sync = rest.iter().all(|r| matches!(*r, "sync" | "aligned" | "cta"))
                    && (rest.contains(&"sync") || (i.opcode == "bar" && rest.is_empty()));
                if !sync || !tys.is_empty() || !(1..=2).contains(&i.args.len()) {
                    return Err(unknown());
                }
                let id = self.src(&i.args[0], Ty::U32)?;
                let count = match i.args.get(1) {
                    Some(c) => Some(self.src(c, Ty::U32)?),
                    None => None,
                };
                Ok(Op::Bar { id, count })
            }
            "membar" | "fence" => Ok(Op::Nop),
            "shfl" => {
                let mode = match rest.as_slice() {
                    ["sync", "up"] => ShflMode::Up,
                    ["sync", "down"] => ShflMode::Down,
                    ["sync", "bfly"] => ShflMode::Bfly,
                    ["sync", "idx"] => ShflMode::Idx,
                    _ => return Err(unknown()),
                };
                if tys != [Ty::B32] {
                    return Err(unknown());
                }
                let a = self.args(i, 5)?;
                let (d, p) = match &a[0] {
                    Arg::Pair(d, p) => (self.reg(d)?, Some(self.reg(p)?)),
                    other => (self.dst(other)?, None),
                };
                Ok(Op::Shfl {
                    mode,
                    d,
                    p,
                    a: self.src(&a[1], Ty::B32)?,
                    b: self.src(&a[2], Ty::B32)?,
                    c: self.src(&a[3], Ty::B32)?,
                })
            }
            "call" => Err("calls (`call`) are not supported by the simulator".into()),
            _ => Err(unknown()),
        }
    }
}

/// The type twice as wide as `ty` (`mul.wide`, `mad.wide`).
pub(crate) fn wide(ty: Ty) -> Ty {
    match ty {
        Ty::U16 => Ty::U32,
        Ty::S16 => Ty::S32,
        Ty::U32 => Ty::U64,
        Ty::S32 => Ty::S64,
        other => other,
    }
}
