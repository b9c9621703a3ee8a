//! PTX text to a syntax tree: the lexer and the parser of the module structure
//! (`.version`, `.target`, `.address_size`, variables, `.entry` kernels with their
//! parameters, performance directives and bodies). Instructions are kept as opcode,
//! modifiers and operands; `crate::decode` gives them meaning.

use crate::PtxError;

/// A token.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Tok {
    /// An identifier: a name, a register (`%r1`), a label (`$L__BB0_2`).
    Ident(String),
    /// A directive or modifier: `.reg`, `.f32`, `.L2::evict_last`.
    Dir(String),
    /// A number as written (`42`, `0x1F`, `0f3F800000`, `1.5`).
    Num(String),
    /// A string literal (without quotes).
    Str(String),
    /// Punctuation.
    P(char),
}

/// A token with its line and whether whitespace separates it from the previous one.
#[derive(Debug, Clone)]
pub(crate) struct Token {
    pub tok: Tok,
    pub line: u32,
    /// No whitespace or comment before it (`add.f32`: `.f32` is glued to `add`).
    pub glued: bool,
}

/// Splits PTX text into tokens.
pub(crate) fn lex(text: &str) -> Result<Vec<Token>, PtxError> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let (mut i, mut line, mut glued) = (0usize, 1u32, false);
    let ident_char = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'$';
    while i < b.len() {
        let c = b[i];
        if c == b'\n' {
            line += 1;
            i += 1;
            glued = false;
            continue;
        }
        if c.is_ascii_whitespace() {
            i += 1;
            glued = false;
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            glued = false;
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'*') {
            let start = line;
            i += 2;
            loop {
                if i + 1 >= b.len() {
                    return Err(PtxError::new(start, "unterminated `/*` comment"));
                }
                if b[i] == b'*' && b[i + 1] == b'/' {
                    i += 2;
                    break;
                }
                if b[i] == b'\n' {
                    line += 1;
                }
                i += 1;
            }
            glued = false;
            continue;
        }
        let start = i;
        let tok = if c == b'.' && b.get(i + 1).is_some_and(|&d| d.is_ascii_alphabetic() || d == b'_') {
            i += 1;
            while i < b.len() && (ident_char(b[i]) || (b[i] == b':' && b.get(i + 1) == Some(&b':'))) {
                i += if b[i] == b':' { 2 } else { 1 };
            }
            Tok::Dir(text[start + 1..i].to_string())
        } else if c.is_ascii_alphabetic() || c == b'_' || c == b'$' || c == b'%' {
            i += 1;
            while i < b.len() && ident_char(b[i]) {
                i += 1;
            }
            Tok::Ident(text[start..i].to_string())
        } else if c.is_ascii_digit() {
            i += 1;
            while i < b.len()
                && (b[i].is_ascii_alphanumeric()
                    || b[i] == b'.'
                    || ((b[i] == b'+' || b[i] == b'-')
                        && matches!(b[i - 1], b'e' | b'E')
                        && !is_hex_prefixed(&b[start..i])))
            {
                i += 1;
            }
            Tok::Num(text[start..i].to_string())
        } else if c == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' && b[i] != b'\n' {
                i += 1;
            }
            if i >= b.len() || b[i] != b'"' {
                return Err(PtxError::new(line, "unterminated string"));
            }
            i += 1;
            Tok::Str(text[start + 1..i - 1].to_string())
        } else if b",;:{}[]()<>+-!|@=".contains(&c) {
            i += 1;
            Tok::P(c as char)
        } else {
            let ch = text[i..].chars().next().unwrap_or('?');
            return Err(PtxError::new(line, format!("unexpected character `{ch}`")));
        };
        out.push(Token { tok, line, glued });
        glued = true;
    }
    Ok(out)
}

/// `0x…`, `0f…`, `0d…` (where `e` is a hex digit, not an exponent).
fn is_hex_prefixed(s: &[u8]) -> bool {
    s.len() >= 2 && s[0] == b'0' && matches!(s[1], b'x' | b'X' | b'f' | b'F' | b'd' | b'D')
}

/// A number literal.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Number {
    /// An integer.
    Int(i128),
    /// `0fXXXXXXXX`: the bits of a `.f32`.
    F32(u32),
    /// `0dXXXXXXXXXXXXXXXX`: the bits of a `.f64`.
    F64(u64),
    /// A decimal floating-point literal.
    Dec(f64),
}

/// Reads a number literal as PTX writes it (C-like integers with an optional `U`
/// suffix: decimal, `0x` hex, `0b` binary, leading-`0` octal).
pub(crate) fn number(s: &str) -> Option<Number> {
    let lower = s.to_ascii_lowercase();
    if let Some(h) = lower.strip_prefix("0f") {
        return (h.len() == 8).then(|| u32::from_str_radix(h, 16).ok().map(Number::F32)).flatten();
    }
    if let Some(h) = lower.strip_prefix("0d") {
        return (h.len() == 16).then(|| u64::from_str_radix(h, 16).ok().map(Number::F64)).flatten();
    }
    let digits = lower.strip_suffix('u').unwrap_or(&lower);
    if let Some(h) = digits.strip_prefix("0x") {
        return u128::from_str_radix(h, 16).ok().and_then(|v| i128::try_from(v).ok()).map(Number::Int);
    }
    if let Some(h) = digits.strip_prefix("0b") {
        return u128::from_str_radix(h, 2).ok().and_then(|v| i128::try_from(v).ok()).map(Number::Int);
    }
    if digits.bytes().all(|c| c.is_ascii_digit()) {
        if digits.len() > 1 && digits.starts_with('0') {
            return u128::from_str_radix(&digits[1..], 8).ok().and_then(|v| i128::try_from(v).ok()).map(Number::Int);
        }
        return digits.parse::<i128>().ok().map(Number::Int);
    }
    lower.parse::<f64>().ok().map(Number::Dec)
}

/// A state space.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Space {
    /// Generic addresses (any of the others but `.param`).
    Generic,
    /// Device memory.
    Global,
    /// Constant memory (device memory that kernels only read).
    Const,
    /// Per-block memory.
    Shared,
    /// Per-thread memory.
    Local,
    /// Kernel parameters.
    Param,
}

impl Space {
    /// The space a directive or modifier names.
    pub(crate) fn parse(s: &str) -> Option<Space> {
        Some(match s {
            "global" => Space::Global,
            "const" => Space::Const,
            "shared" => Space::Shared,
            "local" => Space::Local,
            "param" => Space::Param,
            _ => return None,
        })
    }

    /// Its name in PTX.
    pub fn name(self) -> &'static str {
        match self {
            Space::Generic => "generic",
            Space::Global => "global",
            Space::Const => "const",
            Space::Shared => "shared",
            Space::Local => "local",
            Space::Param => "param",
        }
    }
}

/// A fundamental type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ty {
    /// `.b8` … `.b64`: untyped bits.
    B8,
    /// `.b16`.
    B16,
    /// `.b32`.
    B32,
    /// `.b64`.
    B64,
    /// `.u8` … `.u64`: unsigned integers.
    U8,
    /// `.u16`.
    U16,
    /// `.u32`.
    U32,
    /// `.u64`.
    U64,
    /// `.s8` … `.s64`: signed integers.
    S8,
    /// `.s16`.
    S16,
    /// `.s32`.
    S32,
    /// `.s64`.
    S64,
    /// `.f16`: IEEE half precision.
    F16,
    /// `.bf16`: bfloat16.
    Bf16,
    /// `.f32`.
    F32,
    /// `.f64`.
    F64,
    /// `.pred`: a predicate.
    Pred,
}

impl Ty {
    /// The type a modifier names.
    pub(crate) fn parse(s: &str) -> Option<Ty> {
        Some(match s {
            "b8" => Ty::B8,
            "b16" => Ty::B16,
            "b32" => Ty::B32,
            "b64" => Ty::B64,
            "u8" => Ty::U8,
            "u16" => Ty::U16,
            "u32" => Ty::U32,
            "u64" => Ty::U64,
            "s8" => Ty::S8,
            "s16" => Ty::S16,
            "s32" => Ty::S32,
            "s64" => Ty::S64,
            "f16" => Ty::F16,
            "bf16" => Ty::Bf16,
            "f32" => Ty::F32,
            "f64" => Ty::F64,
            "pred" => Ty::Pred,
            _ => return None,
        })
    }

    /// Its width in bits (1 for a predicate).
    pub fn bits(self) -> u32 {
        match self {
            Ty::Pred => 1,
            Ty::B8 | Ty::U8 | Ty::S8 => 8,
            Ty::B16 | Ty::U16 | Ty::S16 | Ty::F16 | Ty::Bf16 => 16,
            Ty::B32 | Ty::U32 | Ty::S32 | Ty::F32 => 32,
            Ty::B64 | Ty::U64 | Ty::S64 | Ty::F64 => 64,
        }
    }

    /// Its size in memory.
    pub fn bytes(self) -> u32 {
        self.bits().div_ceil(8)
    }

    /// `.s8` … `.s64`.
    pub fn is_signed(self) -> bool {
        matches!(self, Ty::S8 | Ty::S16 | Ty::S32 | Ty::S64)
    }

    /// `.f16`, `.bf16`, `.f32`, `.f64`.
    pub fn is_float(self) -> bool {
        matches!(self, Ty::F16 | Ty::Bf16 | Ty::F32 | Ty::F64)
    }

    /// An integer or bits type.
    pub fn is_int(self) -> bool {
        !self.is_float() && self != Ty::Pred
    }

    /// Its name in PTX.
    pub fn name(self) -> &'static str {
        match self {
            Ty::B8 => "b8",
            Ty::B16 => "b16",
            Ty::B32 => "b32",
            Ty::B64 => "b64",
            Ty::U8 => "u8",
            Ty::U16 => "u16",
            Ty::U32 => "u32",
            Ty::U64 => "u64",
            Ty::S8 => "s8",
            Ty::S16 => "s16",
            Ty::S32 => "s32",
            Ty::S64 => "s64",
            Ty::F16 => "f16",
            Ty::Bf16 => "bf16",
            Ty::F32 => "f32",
            Ty::F64 => "f64",
            Ty::Pred => "pred",
        }
    }
}

/// An operand as written.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Arg {
    /// A register, special register (`%tid.x`) or symbol name.
    Name(String),
    /// `!%p`.
    Not(String),
    /// A number.
    Num(Number),
    /// `[base]`, `[base+off]`.
    Addr(Box<Arg>, i64),
    /// `{a, b, …}`.
    Vector(Vec<Arg>),
    /// `%p|%q` (the two results of `setp`).
    Pair(String, String),
    /// `_`: a result nobody reads.
    Sink,
}

/// An instruction as written.
#[derive(Debug, Clone)]
pub(crate) struct InstAst {
    /// `@%p` / `@!%p`: the guard predicate and whether it is negated.
    pub guard: Option<(String, bool)>,
    /// `add`.
    pub opcode: String,
    /// `rn`, `f32`.
    pub mods: Vec<String>,
    /// The operands.
    pub args: Vec<Arg>,
    /// The source line.
    pub line: u32,
}

/// A variable declaration (`.global`, `.const`, `.shared`, `.local`).
#[derive(Debug, Clone)]
pub(crate) struct VarDecl {
    pub space: Space,
    pub align: u32,
    pub ty: Ty,
    pub name: String,
    /// The array size in elements (product of the dimensions); `None` for `[]`
    /// (`.extern .shared`: the launch's dynamic shared memory).
    pub elems: Option<u64>,
    /// The initializer, one number per element given.
    pub init: Vec<Number>,
    pub line: u32,
}

/// A kernel parameter.
#[derive(Debug, Clone)]
pub(crate) struct ParamDecl {
    pub name: String,
    pub size: u32,
    pub align: u32,
}

/// A statement of a kernel body.
#[derive(Debug, Clone)]
pub(crate) enum Stmt {
    /// `.reg .ty %a, %r<N>;`: names with an optional count.
    Reg { ty: Ty, names: Vec<(String, Option<u32>)>, line: u32 },
    /// A `.local` or `.shared` variable.
    Var(VarDecl),
    /// `NAME:`.
    Label(String, u32),
    /// An instruction.
    Inst(InstAst),
    /// `{`: a new register scope.
    Open,
    /// `}`.
    Close,
}

/// An `.entry`.
#[derive(Debug, Clone)]
pub(crate) struct EntryAst {
    pub name: String,
    pub line: u32,
    pub params: Vec<ParamDecl>,
    /// `.maxntid x, y, z`.
    pub maxntid: Option<[u32; 3]>,
    /// `.reqntid x, y, z`.
    pub reqntid: Option<[u32; 3]>,
    pub body: Vec<Stmt>,
}

/// A parsed module.
#[derive(Debug, Clone, Default)]
pub(crate) struct ModuleAst {
    /// `.version major.minor`.
    pub version: Option<(u32, u32)>,
    /// `.target` names (`sm_80`).
    pub target: Vec<String>,
    pub vars: Vec<VarDecl>,
    pub entries: Vec<EntryAst>,
}

struct Parser {
    toks: Vec<Token>,
    i: usize,
}

/// Parses a module.
pub(crate) fn parse(text: &str) -> Result<ModuleAst, PtxError> {
    let mut p = Parser { toks: lex(text)?, i: 0 };
    p.module()
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.i).map(|t| &t.tok)
    }

    fn peek_at(&self, k: usize) -> Option<&Token> {
        self.toks.get(self.i + k)
    }

    fn line(&self) -> u32 {
        self.toks.get(self.i).or(self.toks.last()).map_or(1, |t| t.line)
    }

    fn next(&mut self) -> Result<Token, PtxError> {
        let t =
            self.toks.get(self.i).cloned().ok_or_else(|| PtxError::new(self.line(), "unexpected end of the PTX"))?;
        self.i += 1;
        Ok(t)
    }

    fn err<T>(&self, msg: impl Into<String>) -> Result<T, PtxError> {
        Err(PtxError::new(self.line(), msg))
    }

    fn eat_p(&mut self, c: char) -> bool {
        if self.peek() == Some(&Tok::P(c)) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn expect_p(&mut self, c: char) -> Result<(), PtxError> {
        if self.eat_p(c) {
            Ok(())
        } else {
            let found = self.describe();
            self.err(format!("expected `{c}`, found {found}"))
        }
    }

    fn eat_dir(&mut self, d: &str) -> bool {
        if matches!(self.peek(), Some(Tok::Dir(x)) if x == d) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn describe(&self) -> String {
        match self.peek() {
            None => "the end of the PTX".into(),
            Some(Tok::Ident(s)) => format!("`{s}`"),
            Some(Tok::Dir(s)) => format!("`.{s}`"),
            Some(Tok::Num(s)) => format!("`{s}`"),
            Some(Tok::Str(s)) => format!("\"{s}\""),
            Some(Tok::P(c)) => format!("`{c}`"),
        }
    }

    fn ident(&mut self) -> Result<String, PtxError> {
        match self.peek().cloned() {
            Some(Tok::Ident(s)) => {
                self.i += 1;
                Ok(s)
            }
            _ => {
                let found = self.describe();
                self.err(format!("expected a name, found {found}"))
            }
        }
    }

    fn int(&mut self) -> Result<i128, PtxError> {
        let neg = self.eat_p('-');
        match self.peek().cloned() {
            Some(Tok::Num(s)) => match number(&s) {
                Some(Number::Int(v)) => {
                    self.i += 1;
                    Ok(if neg { -v } else { v })
                }
                _ => self.err(format!("expected an integer, found `{s}`")),
            },
            _ => {
                let found = self.describe();
                self.err(format!("expected an integer, found {found}"))
            }
        }
    }

    fn u32(&mut self) -> Result<u32, PtxError> {
        let v = self.int()?;
        u32::try_from(v).or_else(|_| self.err(format!("{v} is out of range")))
    }

    /// Skips the rest of the current line (`.loc`, `.file`: no `;`).
    fn skip_line(&mut self, line: u32) {
        while self.toks.get(self.i).is_some_and(|t| t.line == line) {
            self.i += 1;
        }
    }

    /// Skips to the `;` that ends a declaration, over parentheses.
    fn skip_decl(&mut self) -> Result<(), PtxError> {
        let mut depth = 0i32;
        loop {
            match self.next()?.tok {
                Tok::P('(') => depth += 1,
                Tok::P(')') => depth -= 1,
                Tok::P(';') if depth <= 0 => return Ok(()),
                _ => {}
            }
        }
    }

    fn module(&mut self) -> Result<ModuleAst, PtxError> {
        let mut m = ModuleAst::default();
        while let Some(t) = self.toks.get(self.i).cloned() {
            let line = t.line;
            let Tok::Dir(d) = &t.tok else {
                let found = self.describe();
                return self.err(format!("expected a directive, found {found}"));
            };
            match d.as_str() {
                "version" => {
                    self.i += 1;
                    let Tok::Num(v) = self.next()?.tok else { return self.err("expected a version number") };
                    let parsed = v.split_once('.').and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)));
                    match parsed {
                        Some(ver) => m.version = Some(ver),
                        None => return self.err(format!("bad .version `{v}`")),
                    }
                }
                "target" => {
                    self.i += 1;
                    m.target.push(self.ident()?);
                    while self.eat_p(',') {
                        m.target.push(self.ident()?);
                    }
                }
                "address_size" => {
                    self.i += 1;
                    let n = self.int()?;
                    if n != 64 {
                        return Err(PtxError::new(line, format!(".address_size {n} is not supported (only 64)")));
                    }
                }
                "file" | "loc" => {
                    self.i += 1;
                    self.skip_line(line);
                }
                "pragma" => {
                    self.i += 1;
                    self.skip_decl()?;
                }
                "visible" | "extern" | "weak" | "entry" | "func" | "global" | "const" | "shared" => {
                    let mut external = false;
                    while let Some(Tok::Dir(l)) = self.peek() {
                        match l.as_str() {
                            "visible" | "weak" => self.i += 1,
                            "extern" => {
                                external = true;
                                self.i += 1;
                            }
                            _ => break,
                        }
                    }
                    if self.eat_dir("entry") {
                        m.entries.push(self.entry(line)?);
                    } else if self.eat_dir("func") {
                        if !external {
                            return Err(PtxError::new(
                                line,
                                "device functions (`.func`) are not supported by the simulator",
                            ));
                        }
                        // A declaration only; a `call` to it is reported where it is.
                        self.skip_decl()?;
                    } else {
                        let v = self.var(line, external)?;
                        m.vars.push(v);
                    }
                }
                other => return Err(PtxError::new(line, format!("unsupported directive `.{other}`"))),
            }
        }
        Ok(m)
    }

    /// `.global .align 4 .b8 name[16] = {…};` after the linkage directives.
    fn var(&mut self, line: u32, external: bool) -> Result<VarDecl, PtxError> {
        let space_name = match self.next()?.tok {
            Tok::Dir(s) => s,
            _ => return self.err("expected a state space"),
        };
        let Some(space) = Space::parse(&space_name).filter(|s| *s != Space::Param) else {
            return Err(PtxError::new(line, format!("unsupported directive `.{space_name}`")));
        };
        let mut align = 0;
        let mut ty = None;
        while let Some(Tok::Dir(d)) = self.peek().cloned() {
            self.i += 1;
            if d == "align" {
                align = self.u32()?;
            } else if let Some(t) = Ty::parse(&d) {
                ty = Some(t);
            } else {
                return Err(PtxError::new(line, format!("unsupported variable attribute `.{d}`")));
            }
        }
        let ty = ty.ok_or_else(|| PtxError::new(line, "a variable needs a type"))?;
        if ty == Ty::Pred {
            return Err(PtxError::new(line, "a `.pred` variable cannot live in memory"));
        }
        let name = self.ident()?;
        let mut elems = Some(1u64);
        while self.eat_p('[') {
            if self.eat_p(']') {
                if !(external && space == Space::Shared) {
                    return Err(PtxError::new(line, "an array without a size must be `.extern .shared`"));
                }
                elems = None;
                continue;
            }
            let n = u64::try_from(self.int()?).map_err(|_| PtxError::new(line, "a negative array size"))?;
            elems = elems.and_then(|e| e.checked_mul(n));
            if elems.is_some_and(|e| e.saturating_mul(u64::from(ty.bytes())) > 1 << 32) {
                return Err(PtxError::new(line, format!("`{name}` is too large")));
            }
            self.expect_p(']')?;
        }
        let mut init = Vec::new();
        if self.eat_p('=') {
            let braced = self.eat_p('{');
            loop {
                let neg = self.eat_p('-');
                let n = match self.next()?.tok {
                    Tok::Num(s) => number(&s).ok_or_else(|| PtxError::new(line, format!("bad number `{s}`")))?,
                    _ => return Err(PtxError::new(line, "initializers must be numbers")),
                };
                init.push(if neg { negate(n) } else { n });
                if !braced || !self.eat_p(',') {
                    break;
                }
            }
            if braced {
                self.expect_p('}')?;
            }
            if init.len() as u64 > elems.unwrap_or(0) {
                return Err(PtxError::new(line, format!("too many initializers for `{name}`")));
            }
        }
        self.expect_p(';')?;
        Ok(VarDecl { space, align: align.max(ty.bytes()), ty, name, elems, init, line })
    }

    fn entry(&mut self, line: u32) -> Result<EntryAst, PtxError> {
        let name = self.ident()?;
        let mut params = Vec::new();
        if self.eat_p('(') && !self.eat_p(')') {
            loop {
                if !self.eat_dir("param") {
                    return self.err("expected `.param`");
                }
                let mut align = 0;
                let mut ty = None;
                while let Some(Tok::Dir(d)) = self.peek().cloned() {
                    self.i += 1;
                    match d.as_str() {
                        "align" => align = self.u32()?,
                        "ptr" | "global" | "const" | "shared" | "local" => {}
                        _ => match Ty::parse(&d) {
                            Some(t) if t != Ty::Pred => ty = Some(t),
                            _ => return self.err(format!("unsupported parameter attribute `.{d}`")),
                        },
                    }
                }
                let ty = match ty {
                    Some(t) => t,
                    None => return self.err("a parameter needs a type"),
                };
                let pname = self.ident()?;
                let mut size = u64::from(ty.bytes());
                while self.eat_p('[') {
                    let n = u64::try_from(self.int()?).map_err(|_| PtxError::new(line, "a negative array size"))?;
                    size = size.saturating_mul(n);
                    self.expect_p(']')?;
                }
                if size > 4096 {
                    return self.err(format!("parameter `{pname}` is larger than 4 KiB"));
                }
                params.push(ParamDecl { name: pname, size: size as u32, align: align.max(ty.bytes()) });
                if self.eat_p(')') {
                    break;
                }
                self.expect_p(',')?;
            }
        }
        let (mut maxntid, mut reqntid) = (None, None);
        while let Some(Tok::Dir(d)) = self.peek().cloned() {
            self.i += 1;
            match d.as_str() {
                "maxntid" | "reqntid" => {
                    let mut dims = [1u32; 3];
                    dims[0] = self.u32()?;
                    for slot in dims.iter_mut().skip(1) {
                        if !self.eat_p(',') {
                            break;
                        }
                        *slot = self.u32()?;
                    }
                    if d == "maxntid" {
                        maxntid = Some(dims);
                    } else {
                        reqntid = Some(dims);
                    }
                }
                "minnctapersm" | "maxnreg" | "maxnctapersm" => {
                    self.u32()?;
                }
                "pragma" => self.skip_decl()?,
                _ => return self.err(format!("unsupported kernel directive `.{d}`")),
            }
        }
        if self.eat_p(';') {
            return Err(PtxError::new(line, format!("kernel `{name}` has no body")));
        }
        self.expect_p('{')?;
        let body = self.body()?;
        Ok(EntryAst { name, line, params, maxntid, reqntid, body })
    }

    /// The statements up to the `}` that closes the kernel.
    fn body(&mut self) -> Result<Vec<Stmt>, PtxError> {
        let mut out = Vec::new();
        let mut depth = 1;
        loop {
            let t = self.next()?;
            let line = t.line;
            match t.tok {
                Tok::P('{') => {
                    depth += 1;
                    out.push(Stmt::Open);
                }
                Tok::P('}') => {
                    depth -= 1;
                    if depth == 0 {
                        return Ok(out);
                    }
                    out.push(Stmt::Close);
                }
                Tok::P(';') => {}
                Tok::Dir(d) => match d.as_str() {
                    "reg" => {
                        let mut ty = None;
                        while let Some(Tok::Dir(x)) = self.peek().cloned() {
                            self.i += 1;
                            match Ty::parse(&x) {
                                Some(t) => ty = Some(t),
                                None => {
                                    return Err(PtxError::new(line, format!("unsupported register type `.{x}`")));
                                }
                            }
                        }
                        let ty = ty.ok_or_else(|| PtxError::new(line, "a register declaration needs a type"))?;
                        let mut names = Vec::new();
                        loop {
                            let n = self.ident()?;
                            let count = if self.eat_p('<') {
                                let c = self.u32()?;
                                self.expect_p('>')?;
                                if c > 1 << 20 {
                                    return Err(PtxError::new(line, "too many registers"));
                                }
                                Some(c)
                            } else {
                                None
                            };
                            names.push((n, count));
                            if !self.eat_p(',') {
                                break;
                            }
                        }
                        self.expect_p(';')?;
                        out.push(Stmt::Reg { ty, names, line });
                    }
                    "local" | "shared" => {
                        self.i -= 1;
                        let v = self.var(line, false)?;
                        out.push(Stmt::Var(v));
                    }
                    "pragma" => self.skip_decl()?,
                    "loc" | "file" => self.skip_line(line),
                    other => return Err(PtxError::new(line, format!("unsupported directive `.{other}` in a kernel"))),
                },
                Tok::P('@') => {
                    let neg = self.eat_p('!');
                    let p = self.ident()?;
                    let mut inst = self.inst()?;
                    inst.guard = Some((p, neg));
                    out.push(Stmt::Inst(inst));
                }
                Tok::Ident(name) => {
                    if self.eat_p(':') {
                        out.push(Stmt::Label(name, line));
                    } else {
                        self.i -= 1;
                        let inst = self.inst()?;
                        out.push(Stmt::Inst(inst));
                    }
                }
                _ => {
                    self.i -= 1;
                    let found = self.describe();
                    return self.err(format!("expected an instruction, found {found}"));
                }
            }
        }
    }

    /// `opcode.mods args;`
    fn inst(&mut self) -> Result<InstAst, PtxError> {
        let line = self.line();
        let opcode = self.ident()?;
        let mut mods = Vec::new();
        while let Some(t) = self.peek_at(0) {
            match &t.tok {
                Tok::Dir(d) if t.glued => {
                    mods.push(d.clone());
                    self.i += 1;
                }
                _ => break,
            }
        }
        let mut args = Vec::new();
        if opcode == "call" {
            // Its operand lists are not operands; the decoder rejects calls.
            self.skip_decl()?;
            return Ok(InstAst { guard: None, opcode, mods, args, line });
        }
        if !self.eat_p(';') {
            loop {
                args.push(self.arg()?);
                if self.eat_p(';') {
                    break;
                }
                if !self.eat_p(',') {
                    let found = self.describe();
                    return self.err(format!("expected `,` or `;` after an operand of `{opcode}`, found {found}"));
                }
            }
        }
        Ok(InstAst { guard: None, opcode, mods, args, line })
    }

    fn name(&mut self) -> Result<String, PtxError> {
        let mut n = self.ident()?;
        // `%tid.x`: a special register with its component.
        if n.starts_with('%')
            && let Some(t) = self.peek_at(0)
            && t.glued
            && let Tok::Dir(c) = &t.tok
            && matches!(c.as_str(), "x" | "y" | "z")
        {
            n.push('.');
            n.push_str(c);
            self.i += 1;
        }
        Ok(n)
    }

    fn arg(&mut self) -> Result<Arg, PtxError> {
        match self.peek().cloned() {
            Some(Tok::P('!')) => {
                self.i += 1;
                Ok(Arg::Not(self.ident()?))
            }
            Some(Tok::P('{')) => {
                self.i += 1;
                let mut v = Vec::new();
                loop {
                    v.push(self.arg()?);
                    if self.eat_p('}') {
                        break;
                    }
                    self.expect_p(',')?;
                }
                Ok(Arg::Vector(v))
            }
            Some(Tok::P('[')) => {
                self.i += 1;
                let base = match self.peek().cloned() {
                    Some(Tok::Ident(_)) => Arg::Name(self.name()?),
                    _ => Arg::Num(Number::Int(self.int()?)),
                };
                let mut off: i128 = 0;
                while let Some(Tok::P(c @ ('+' | '-'))) = self.peek().cloned() {
                    self.i += 1;
                    let v = self.int()?;
                    off = if c == '+' { off + v } else { off - v };
                }
                self.expect_p(']')?;
                let off = i64::try_from(off).or_else(|_| self.err("an address offset is out of range"))?;
                Ok(Arg::Addr(Box::new(base), off))
            }
            Some(Tok::P('-')) => {
                self.i += 1;
                match self.next()?.tok {
                    Tok::Num(s) => match number(&s) {
                        Some(n) => Ok(Arg::Num(negate(n))),
                        None => self.err(format!("bad number `{s}`")),
                    },
                    _ => self.err("expected a number after `-`"),
                }
            }
            Some(Tok::Num(s)) => {
                self.i += 1;
                number(&s).map(Arg::Num).ok_or_else(|| PtxError::new(self.line(), format!("bad number `{s}`")))
            }
            Some(Tok::Ident(s)) if s == "_" => {
                self.i += 1;
                Ok(Arg::Sink)
            }
            Some(Tok::Ident(_)) => {
                let n = self.name()?;
                if self.eat_p('|') {
                    let m = self.ident()?;
                    return Ok(Arg::Pair(n, m));
                }
                Ok(Arg::Name(n))
            }
            _ => {
                let found = self.describe();
                self.err(format!("expected an operand, found {found}"))
            }
        }
    }
}

/// `-n`.
fn negate(n: Number) -> Number {
    match n {
        Number::Int(v) => Number::Int(-v),
        Number::F32(b) => Number::F32(b ^ 0x8000_0000),
        Number::F64(b) => Number::F64(b ^ (1 << 63)),
        Number::Dec(v) => Number::Dec(-v),
    }
}
