//! The executable form of the Relax level and the VM that runs it (`docs/executable.md`).
//!
//! [`Executable::compile`] turns every Relax function of a module into register-based
//! bytecode ([`bytecode`], [`compile`]) and gathers what running it needs without the
//! IR: a constant pool (tensors, strings, dtypes), the attributes of ops run by
//! reference kernels, a kernel table with each PrimFunc's signature and ABI slots
//! ([`kernels`]) and a debug table of source spans. [`Executable::to_bytes`] /
//! [`Executable::from_bytes`] ([`format`]) serialize it; [`Vm`] ([`exec`]) runs it,
//! calling kernels through a [`KernelProvider`] (the JIT's compiled code, a loaded
//! library's symbols, or the TIR interpreter). [`print`] lists the bytecode.

mod attr_codec;
pub mod bind;
pub mod bytecode;
mod calls;
mod code_codec;
pub mod compile;
pub mod exec;
pub mod format;
pub mod kernels;
mod pool_codec;
pub mod print;
mod tables;
pub mod tir_kernels;
mod verify;
pub(crate) mod wire;

use relax_entity::EntityRef;
use relax_ir::{Func, Module, Span};

pub use bytecode::{Constant, Function, Instr, SpanInfo};
pub use exec::{Vm, VmOptions};
pub use kernels::{KernelEntry, KernelError, KernelProvider, NoKernels, PackedFn};
pub use tir_kernels::TirKernels;

use crate::error::{RunError, RunResult};

/// What a module global is to the executable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GlobalKind {
    /// A Relax function: an index into [`Executable::functions`].
    Function(u32),
    /// A PrimFunc: an index into [`Executable::kernels`].
    Kernel(u32),
    /// An extern function, by symbol (a packed function).
    Extern(String),
    /// Anything else (calling it is an error).
    Other,
}

/// A module global: its name and what it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GlobalEntry {
    /// The global's name.
    pub name: String,
    /// What it is.
    pub kind: GlobalKind,
}

/// The executable form of a module's Relax level.
#[derive(Clone, Debug)]
pub struct Executable {
    pub(crate) functions: Vec<Function>,
    pub(crate) kernels: Vec<KernelEntry>,
    pub(crate) globals: Vec<GlobalEntry>,
    pub(crate) constants: Vec<Constant>,
    pub(crate) strings: Vec<String>,
    pub(crate) attrs: Vec<relax_ir::Attrs>,
    pub(crate) spans: Vec<SpanInfo>,
    /// The name of the source file the spans point into (empty when not attached).
    pub(crate) source_name: String,
}

impl Executable {
    /// Compiles every Relax function of `m` (lowered TIR, as the engines take it). An
    /// error names the first construct the VM cannot run, at its source span.
    pub fn compile(m: &Module) -> RunResult<Executable> {
        let mut t = compile::Tables::new();
        t.local_base = m.globals.iter().filter(|(_, gd)| matches!(gd.func, Func::Relax(_))).count() as u32;
        let mut globals = Vec::with_capacity(m.globals.len());
        let mut functions = Vec::new();
        let mut kernels = Vec::new();
        for (g, gd) in m.globals.iter() {
            let kind = match &gd.func {
                Func::Relax(_) => {
                    functions.push(compile::function(m, g, &mut t)?);
                    GlobalKind::Function(functions.len() as u32 - 1)
                }
                Func::Prim(_) => {
                    kernels.push(kernels::entry(m, g).map_err(RunError::new)?);
                    GlobalKind::Kernel(kernels.len() as u32 - 1)
                }
                Func::Extern(e) => GlobalKind::Extern(e.symbol.clone()),
                _ => GlobalKind::Other,
            };
            globals.push(GlobalEntry { name: gd.name.clone(), kind });
        }
        for l in std::mem::take(&mut t.locals) {
            functions.push(l.ok_or_else(|| RunError::new("internal error: a local function was not compiled"))?);
        }
        let spans = t.spans.iter().map(|s| SpanInfo { lo: s.start, hi: s.end, ..SpanInfo::default() }).collect();
        let exec = Executable {
            functions,
            kernels,
            globals,
            constants: t.constants,
            strings: t.strings,
            attrs: t.attrs,
            spans,
            source_name: String::new(),
        };
        format::check_encodable(&exec)?;
        Ok(exec)
    }

    /// The compiled Relax functions.
    pub fn functions(&self) -> &[Function] {
        &self.functions
    }

    /// The index in [`Executable::functions`] of the module's Relax function named
    /// `name` (local functions have no name here).
    pub fn function_index(&self, name: &str) -> Option<usize> {
        self.globals.iter().find_map(|g| match g.kind {
            GlobalKind::Function(i) if g.name == name => Some(i as usize),
            _ => None,
        })
    }

    /// The module's Relax function named `name`.
    pub fn function(&self, name: &str) -> Option<&Function> {
        self.function_index(name).and_then(|i| self.functions.get(i))
    }

    /// The kernel table.
    pub fn kernels(&self) -> &[KernelEntry] {
        &self.kernels
    }

    /// The module's globals, by index.
    pub fn globals(&self) -> &[GlobalEntry] {
        &self.globals
    }

    /// The debug table: source locations by index (entry 0 is "none").
    pub fn spans(&self) -> &[SpanInfo] {
        &self.spans
    }

    /// The source span of debug table entry `i` ([`Span::NONE`] for 0 or out of range).
    pub fn span(&self, i: u32) -> Span {
        match self.spans.get(i as usize) {
            Some(s) if i != 0 => Span::new(s.lo, s.hi),
            _ => Span::NONE,
        }
    }

    /// The debug table entry holding source span `s`, if any.
    pub fn span_info(&self, s: Span) -> Option<&SpanInfo> {
        self.spans.iter().skip(1).find(|x| x.lo == s.start && x.hi == s.end)
    }

    /// The source file's name, when attached.
    pub fn source_name(&self) -> &str {
        &self.source_name
    }

    /// Fills the debug table's file name, lines, columns and line texts from the
    /// module's source (`name`, `text`), so that the executable reports locations
    /// without it ([`Executable::render_error`]).
    pub fn attach_source(&mut self, name: &str, text: &str) {
        self.source_name = name.to_string();
        let starts: Vec<usize> = std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1)).collect();
        for s in self.spans.iter_mut().skip(1) {
            let lo = s.lo as usize;
            if lo > text.len() || !text.is_char_boundary(lo) {
                continue;
            }
            // The line holding `lo`: the last line start at or before it.
            let line = starts.partition_point(|&st| st <= lo);
            let start = starts[line - 1];
            let end = text[lo..].find('\n').map_or(text.len(), |i| lo + i);
            s.line = line as u32;
            s.col = text[start..lo].chars().count() as u32 + 1;
            s.text = text[start..end].to_string();
        }
    }

    /// A run-time error as `file:line:col: error: message`, the source line and the notes,
    /// from the debug table alone (for a runtime without the source); a span the table
    /// does not hold prints without a location.
    pub fn render_error(&self, e: &RunError) -> String {
        let mut out = match self.span_info(e.span).filter(|s| s.line != 0) {
            Some(s) => format!("{}:{}:{}: error: {}\n  {}\n", self.source_name, s.line, s.col, e.message, s.text),
            None => format!("error: {}\n", e.message),
        };
        for n in &e.notes {
            out.push_str(&format!("  = {n}\n"));
        }
        out
    }

    /// Sets the run-time errors of kernel `k` (its result code minus one indexes them):
    /// each a message and the span of the failing statement.
    pub fn set_kernel_errors(&mut self, k: usize, errors: Vec<(String, Span)>) -> RunResult<()> {
        let mut table = Vec::with_capacity(errors.len());
        for (message, span) in errors {
            let i = match self.spans.iter().skip(1).position(|x| x.lo == span.start && x.hi == span.end) {
                Some(i) => i as u32 + 1,
                None if span.is_none() => 0,
                None => {
                    self.spans.push(SpanInfo { lo: span.start, hi: span.end, ..SpanInfo::default() });
                    self.spans.len() as u32 - 1
                }
            };
            table.push(KernelError { message, span: i });
        }
        let entry = self.kernels.get_mut(k).ok_or_else(|| RunError::new(format!("no kernel {k}")))?;
        entry.errors = table;
        Ok(())
    }

    /// Records, for each kernel, the parameters its compiled code writes completely
    /// before reading them (by module global), so results passed there are not
    /// zero-filled first.
    pub fn set_overwrites(&mut self, by_global: &std::collections::HashMap<relax_ir::Global, Vec<usize>>) {
        for k in &mut self.kernels {
            if let Some(ps) = by_global.get(&relax_ir::Global::new(k.global as usize)) {
                k.overwrites = ps.iter().map(|&p| p as u32).collect();
            }
        }
    }
}
