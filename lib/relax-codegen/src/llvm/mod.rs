//! TIR to LLVM IR, the `default<O3>` pipeline for the host CPU, and `.ll` / `.s` / `.o`.
//!
//! Each PrimFunc is lowered into a module of its own ([`func`]), verified, and linked
//! into the result, so one function that cannot be compiled does not spoil the others
//! (the JIT runs such a function with the interpreter). The input is lowered TIR
//! (`relax_ir::tir_lower`: no blocks; the callers lower first): statements ([`stmt`])
//! follow the interpreter's semantics, allocations are zero-filled. Parallel loops are outlined ([`outline`]) and run through the runtime
//! function [`PARALLEL_FOR`]. Scalars follow the interpreter exactly ([`expr`],
//! [`intrin`], [`types`]): float16 and bfloat16 compute in `f32` and round after every
//! operation, integers wrap, no fast-math flags, math through the same libm functions
//! the interpreter calls, so the two engines give the same bits.
//!
//! The calling convention is [`crate::abi`].
//!
//! GPU kernels (`crate::nvptx`) reuse this lowering through the hooks of [`device`].

pub mod cpus;
mod device;
mod dot;
mod expr;
mod ffi;
mod fill;
mod func;
mod intrin;
mod library;
mod object;
mod outline;
mod stmt;
mod types;
mod vector;

use std::cell::{Cell, RefCell};
use std::collections::HashMap;

pub use inkwell;
use inkwell::OptimizationLevel;
use inkwell::basic_block::BasicBlock;
use inkwell::builder::Builder;
use inkwell::context::Context;
use inkwell::module::Module as LModule;
use inkwell::passes::PassBuilderOptions;
use inkwell::targets::{CodeModel, FileType, InitializationConfig, RelocMode, Target, TargetMachine, TargetTriple};
use inkwell::values::{BasicValueEnum, FunctionValue, IntValue, PointerValue};
use relax_ir::{Buffer, DataType, Global, Module, PrimFunc, Span, SymVar};

pub(crate) use self::device::{Device, DeviceCx, lower_kernel};
pub use self::library::{LibraryObject, library_object};
pub use self::object::{CompileTimes, KernelObject, kernel_object};
use crate::abi::KernelAbi;
use crate::error::CodegenError;

pub use crate::abi::{INDEX_ERROR, KERNEL_STACK, MATH_HELPERS, PARALLEL_FOR};

/// Code generation options.
#[derive(Clone, Debug)]
pub struct Options {
    /// LLVM optimization level, 0 to 3 (`default<O3>` for 3).
    pub opt_level: u32,
    /// The CPU to generate code for (`--mcpu`); the host's when `None`.
    pub cpu: Option<String>,
    /// Target features (`+avx2,...`); the host's when `None` and the CPU is the host's.
    pub features: Option<String>,
    /// The target triple (`--target`); the host's when `None`.
    pub triple: Option<String>,
    /// Check every buffer access against its buffer's dims (`--check-bounds`): an index
    /// out of range is the kernel's run-time error, with the interpreter's message
    /// ([`crate::abi::INDEX_ERROR`]).
    pub check_bounds: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options { opt_level: 3, cpu: None, features: None, triple: None, check_bounds: false }
    }
}

impl Options {
    /// The target triple, normalized (`aarch64-linux-gnu` is
    /// `aarch64-unknown-linux-gnu`).
    pub fn target_triple(&self) -> TargetTriple {
        match &self.triple {
            Some(t) => TargetMachine::normalize_triple(&TargetTriple::create(t)),
            None => TargetMachine::get_default_triple(),
        }
    }

    /// True when the target is another architecture than the host's.
    pub fn is_cross(&self) -> bool {
        self.triple.is_some() && arch_of(&self.target_triple()) != arch_of(&TargetMachine::get_default_triple())
    }

    /// The CPU name and feature string to use: for another architecture, `generic` and
    /// no features unless given.
    pub fn cpu_and_features(&self) -> (String, String) {
        if self.is_cross() {
            let cpu = self.cpu.clone().filter(|c| c != "native").unwrap_or_else(|| "generic".into());
            return (cpu, self.features.clone().unwrap_or_default());
        }
        match &self.cpu {
            Some(cpu) if cpu != "native" => (cpu.clone(), self.features.clone().unwrap_or_default()),
            _ => {
                let host = host_features(&TargetMachine::get_host_cpu_features().to_string());
                let features = match &self.features {
                    // `--mattr` edits the host's features (the last mention wins).
                    Some(f) if !f.is_empty() => format!("{host},{f}"),
                    _ => host,
                };
                (TargetMachine::get_host_cpu_name().to_string(), features)
            }
        }
    }
}

/// The host's feature string, plus, on x86 with AVX-512 or AVX2, `+prefer-no-gather`
/// and `+prefer-no-scatter`: the vectorizers otherwise build the broadcast operands of a
/// register tile (`A[i, k]` for MR rows) with a gather per `k`, which costs more than
/// the scalar loads it replaces.
fn host_features(features: &str) -> String {
    let has = |f: &str| features.split(',').any(|x| x == format!("+{f}"));
    if has("avx2") || has("avx512f") {
        format!("{features},+prefer-no-gather,+prefer-no-scatter")
    } else {
        features.to_string()
    }
}

/// The architecture of a triple: its first component.
fn arch_of(triple: &TargetTriple) -> String {
    triple.as_str().to_string_lossy().split('-').next().unwrap_or("").to_string()
}

/// The CPU names and target features LLVM knows for `arch` ([`cpus`]), when we have them.
fn known_names(arch: &str) -> Option<(&'static [&'static str], &'static [&'static str])> {
    match arch {
        "x86_64" => Some((cpus::X86_64, cpus::X86_64_FEATURES)),
        "aarch64" | "arm64" => Some((cpus::AARCH64, cpus::AARCH64_FEATURES)),
        "riscv64" => Some((cpus::RISCV64, cpus::RISCV64_FEATURES)),
        _ => None,
    }
}

/// Whether a feature string turns `feature` on: its last mention is `+feature`.
fn feature_on(features: &str, feature: &str) -> bool {
    features
        .rsplit(',')
        .find_map(|x| match x.strip_prefix('+') {
            Some(f) if f == feature => Some(true),
            _ => x.strip_prefix('-').filter(|f| *f == feature).map(|_| false),
        })
        .unwrap_or(false)
}

/// Checks a `--mattr` list (`+avx2,-avx512f`) against the features LLVM knows for
/// `triple`'s architecture ([`cpus`]); LLVM itself ignores unknown ones with a warning.
pub fn check_features(triple: &str, features: &str) -> Result<(), CodegenError> {
    let arch = triple.split('-').next().unwrap_or("");
    let Some((_, known)) = known_names(arch) else { return Ok(()) };
    for item in features.split(',').filter(|x| !x.is_empty()) {
        let Some(name) = item.strip_prefix('+').or_else(|| item.strip_prefix('-')) else {
            return Err(CodegenError::new(format!(
                "`--mattr {features}`: `{item}` must start with `+` (on) or `-` (off)"
            )));
        };
        if !known.contains(&name) {
            let hint = match relax_ir::diag::suggest(name, known.iter().copied()) {
                Some(s) => format!("; did you mean `{s}`?"),
                None => String::new(),
            };
            return Err(CodegenError::new(format!(
                "`--mattr {features}`: LLVM knows no feature `{name}` for {arch}{hint}"
            )));
        }
    }
    Ok(())
}

/// The width in bits of the widest vector registers of the target CPU, from its
/// feature string: 512 with AVX-512, 256 with AVX, 128 otherwise (SSE, NEON); 256 for
/// a named CPU without features. `schedule-cpu` sizes its tiles by it.
pub fn vector_bits(opts: &Options) -> u32 {
    let (_, features) = opts.cpu_and_features();
    let triple = opts.target_triple().as_str().to_string_lossy().to_string();
    if triple.starts_with("aarch64") {
        // NEON; SVE's width is not known at compile time.
        return 128;
    }
    if triple.starts_with("riscv") {
        // RVV's width is not known at compile time; 128 is its common minimum.
        return 128;
    }
    let has = |f: &str| feature_on(&features, f);
    if features.is_empty() {
        256
    } else if has("avx512f") {
        512
    } else if has("avx") {
        256
    } else {
        128
    }
}

/// A run-time error a kernel can report: result code `k` is `errors[k - 1]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelError {
    /// The message, as the interpreter words it.
    pub message: String,
    /// The statement that failed.
    pub span: Span,
}

/// A compiled PrimFunc.
#[derive(Clone, Debug)]
pub struct Kernel {
    /// The PrimFunc.
    pub global: Global,
    /// Its name in the module.
    pub name: String,
    /// The symbol of `i32 name_packed(ptr args)`.
    pub packed_symbol: String,
    /// The argument slots.
    pub abi: KernelAbi,
    /// Its run-time errors, by result code minus one.
    pub errors: Vec<KernelError>,
}

/// The result of lowering a module.
pub struct Lowered<'ctx> {
    /// The LLVM module holding every kernel that could be compiled.
    pub module: LModule<'ctx>,
    /// Those kernels.
    pub kernels: Vec<Kernel>,
    /// The PrimFuncs that could not be compiled, and why.
    pub failed: Vec<(Global, CodegenError)>,
}

/// Initializes LLVM's native target (once per process).
pub fn initialize() -> Result<(), CodegenError> {
    static INIT: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();
    INIT.get_or_init(|| {
        let config = InitializationConfig::default();
        Target::initialize_native(&config)?;
        // The other CPU architectures this build can target (`--target`).
        Target::initialize_x86(&config);
        Target::initialize_aarch64(&config);
        Target::initialize_riscv(&config);
        Ok(())
    })
    .clone()
    .map_err(|e| CodegenError::new(format!("cannot initialize LLVM's native target: {e}")))
}

/// The CPU architectures `--target` may name.
pub const TARGET_ARCHS: &[&str] = &["x86_64", "aarch64", "riscv64"];

/// A target machine for the host (or `opts.triple`, `opts.cpu`), at the options'
/// optimization level.
pub fn host_machine(opts: &Options) -> Result<TargetMachine, CodegenError> {
    initialize()?;
    let triple = opts.target_triple();
    let arch = arch_of(&triple);
    if opts.triple.is_some() && !TARGET_ARCHS.contains(&arch.as_str()) {
        let given = opts.triple.as_deref().unwrap_or("");
        let hint = match relax_ir::diag::suggest(&arch, TARGET_ARCHS.iter().copied()) {
            Some(s) => format!("; did you mean `{s}`?"),
            None => String::new(),
        };
        return Err(CodegenError::new(format!(
            "`--target {given}`: this build generates CPU code for {} only (`x86_64-linux-gnu`, `aarch64-linux-gnu`, `riscv64-linux-gnu`, ...){hint}",
            TARGET_ARCHS.join(", ")
        )));
    }
    let target = Target::from_triple(&triple).map_err(|e| CodegenError::new(format!("unknown target: {e}")))?;
    let (cpu, features) = opts.cpu_and_features();
    if opts.cpu.as_deref().is_some_and(|c| c != "native") || opts.is_cross() {
        check_cpu(&triple.as_str().to_string_lossy(), &cpu)?;
    }
    if let Some(f) = &opts.features {
        check_features(&triple.as_str().to_string_lossy(), f)?;
    }
    let level = match opts.opt_level {
        0 => OptimizationLevel::None,
        1 => OptimizationLevel::Less,
        2 => OptimizationLevel::Default,
        _ => OptimizationLevel::Aggressive,
    };
    target
        .create_target_machine(&triple, &cpu, &features, level, RelocMode::PIC, CodeModel::Default)
        .ok_or_else(|| CodegenError::new(format!("LLVM cannot make a target machine for CPU `{cpu}`")))
}

/// An error unless LLVM knows `cpu` for `triple`'s architecture ([`cpus`]); LLVM itself
/// only warns, then may abort. Architectures without a table pass.
pub fn check_cpu(triple: &str, cpu: &str) -> Result<(), CodegenError> {
    let arch = triple.split('-').next().unwrap_or("");
    let Some((known, _)) = known_names(arch) else { return Ok(()) };
    if known.contains(&cpu) {
        return Ok(());
    }
    let hint = match relax_ir::diag::suggest(cpu, known.iter().copied()) {
        Some(s) => format!("; did you mean `{s}`?"),
        None => format!(" (known: {}, ...)", known[..known.len().min(6)].join(", ")),
    };
    Err(CodegenError::new(format!("`--mcpu {cpu}`: LLVM knows no CPU `{cpu}` for {arch}{hint}")))
}

/// Lowers every PrimFunc of `m` into one LLVM module for `tm`'s target.
pub fn lower_module<'ctx>(cx: &'ctx Context, m: &Module, tm: &TargetMachine, opts: &Options) -> Lowered<'ctx> {
    let module = target_module(cx, "relax", tm);
    let mut kernels = Vec::new();
    let mut failed = Vec::new();
    for g in m.print_order() {
        if m.prim_func(g).is_none() {
            continue;
        }
        match lower_kernel_module(cx, m, g, tm, opts) {
            Ok((part, k)) => {
                if let Err(e) = module.link_in_module(part) {
                    failed.push((g, CodegenError::new(format!("cannot link `{}`: {}", k.name, e.to_string()))));
                    continue;
                }
                kernels.push(k);
            }
            Err(e) => failed.push((g, e)),
        }
    }
    Lowered { module, kernels, failed }
}

/// An empty module for `tm`'s target.
fn target_module<'ctx>(cx: &'ctx Context, name: &str, tm: &TargetMachine) -> LModule<'ctx> {
    let module = cx.create_module(name);
    module.set_triple(&tm.get_triple());
    module.set_data_layout(&tm.get_target_data().get_data_layout());
    module
}

/// Lowers the PrimFunc `g` of `m` into a verified module of its own.
pub fn lower_kernel_module<'ctx>(
    cx: &'ctx Context,
    m: &Module,
    g: Global,
    tm: &TargetMachine,
    opts: &Options,
) -> Result<(LModule<'ctx>, Kernel), CodegenError> {
    let name = m.globals[g].name.clone();
    let f = m.prim_func(g).ok_or_else(|| CodegenError::new(format!("`{name}` is not a PrimFunc")))?;
    let part = target_module(cx, &name, tm);
    let (cpu, features) = opts.cpu_and_features();
    let (abi, errors) =
        func::lower_prim_func(cx, &part, f, &name, (cpu.as_str(), features.as_str()), opts.check_bounds)
            .map_err(|e| e.or_at(f.spans.func))?;
    part.verify().map_err(|e| {
        CodegenError::new(format!("internal error: invalid LLVM IR for `{name}`: {}", e.to_string()))
            .or_at(f.spans.func)
    })?;
    let packed_symbol = format!("{name}_packed");
    Ok((part, Kernel { global: g, name, packed_symbol, abi, errors }))
}

/// Runs LLVM's `default<On>` pipeline on a module.
pub fn optimize(module: &LModule<'_>, tm: &TargetMachine, opts: &Options) -> Result<(), CodegenError> {
    let pipeline = format!("default<O{}>", opts.opt_level.min(3));
    let po = PassBuilderOptions::create();
    po.set_loop_vectorization(opts.opt_level >= 2);
    po.set_loop_slp_vectorization(opts.opt_level >= 2);
    po.set_loop_unrolling(opts.opt_level >= 2);
    po.set_loop_interleaving(opts.opt_level >= 2);
    module.run_passes(&pipeline, tm, po).map_err(|e| CodegenError::new(format!("LLVM's pipeline failed: {e}")))
}

/// Checks a module with LLVM's verifier.
pub fn verify(module: &LModule<'_>) -> Result<(), CodegenError> {
    module.verify().map_err(|e| CodegenError::new(format!("internal error: invalid LLVM IR: {}", e.to_string())))
}

/// An output format of `relax-translate`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Emit {
    /// LLVM IR text.
    Llvm,
    /// Assembly text.
    Asm,
    /// An object file.
    Obj,
}

/// The module in the given format.
pub fn emit(module: &LModule<'_>, tm: &TargetMachine, kind: Emit) -> Result<Vec<u8>, CodegenError> {
    match kind {
        Emit::Llvm => Ok(module.print_to_string().to_bytes().to_vec()),
        Emit::Asm | Emit::Obj => {
            let ft = if kind == Emit::Asm { FileType::Assembly } else { FileType::Object };
            let buf = tm
                .write_to_memory_buffer(module, ft)
                .map_err(|e| CodegenError::new(format!("LLVM cannot emit code: {e}")))?;
            Ok(buf.as_slice().to_vec())
        }
    }
}

/// A buffer bound to memory in generated code: the address of its element 0 and its
/// strides in elements.
#[derive(Clone)]
struct BufInfo<'ctx> {
    ptr: PointerValue<'ctx>,
    strides: Vec<IntValue<'ctx>>,
    dtype: DataType,
    /// Its dims, when accesses are checked ([`Options::check_bounds`]); empty otherwise.
    dims: Vec<IntValue<'ctx>>,
    /// True for a parameter buffer or an allocation (a distinct object); false for views.
    distinct: bool,
}

/// What every LLVM function made for one PrimFunc shares.
struct Shared<'a, 'ctx> {
    cx: &'ctx Context,
    module: &'a LModule<'ctx>,
    f: &'a PrimFunc,
    name: &'a str,
    /// Run-time errors, by result code minus one.
    errors: RefCell<Vec<KernelError>>,
    /// Outlined functions made so far (for unique names).
    outlined: Cell<u32>,
    /// The PrimFunc promises its buffers do not overlap (`tirx.noalias`).
    noalias: bool,
    /// Check buffer accesses against their dims ([`Options::check_bounds`]).
    check_bounds: bool,
    /// `target-cpu` and `target-features` attributes for every function.
    target: (&'a str, &'a str),
    /// The statement being lowered, for error spans.
    at: Cell<Span>,
    /// The GPU target when lowering a kernel ([`device`]); `None` for the CPU.
    device: Option<&'a dyn device::Device>,
}

impl<'a, 'ctx> Shared<'a, 'ctx> {
    /// The shared state for lowering `f` into `module` as `name`: for the CPU when `device`
    /// is `None`, else as a kernel of that GPU target.
    fn new(
        cx: &'ctx Context,
        module: &'a LModule<'ctx>,
        f: &'a PrimFunc,
        name: &'a str,
        target: (&'a str, &'a str),
        device: Option<&'a dyn device::Device>,
        check_bounds: bool,
    ) -> Self {
        Shared {
            check_bounds: check_bounds && device.is_none(),
            cx,
            module,
            f,
            name,
            errors: RefCell::new(Vec::new()),
            outlined: Cell::new(0),
            noalias: func::noalias(f),
            target,
            at: Cell::new(f.spans.func),
            device,
        }
    }

    /// The result code of a new run-time error.
    fn error_code(&self, message: String) -> u64 {
        let mut e = self.errors.borrow_mut();
        let span = self.at.get();
        if let Some(i) = e.iter().position(|x| x.message == message && x.span == span) {
            return i as u64 + 1;
        }
        e.push(KernelError { message, span });
        e.len() as u64
    }
}

/// The state of one LLVM function being built.
struct Fx<'s, 'a, 'ctx> {
    sh: &'s Shared<'a, 'ctx>,
    b: Builder<'ctx>,
    func: FunctionValue<'ctx>,
    /// The entry block, where constant-size allocations go.
    entry: BasicBlock<'ctx>,
    vars: HashMap<SymVar, BasicValueEnum<'ctx>>,
    bufs: HashMap<Buffer, BufInfo<'ctx>>,
    /// Handle variables (buffer data pointers, handle parameters).
    data: HashMap<SymVar, PointerValue<'ctx>>,
    /// Inside an outlined parallel body: nested parallel loops run serially.
    in_parallel: bool,
    /// Where `T.ret` stores its value.
    ret_slot: Option<PointerValue<'ctx>>,
}

type R<T> = Result<T, CodegenError>;

impl From<inkwell::builder::BuilderError> for CodegenError {
    fn from(e: inkwell::builder::BuilderError) -> CodegenError {
        CodegenError::new(format!("internal error: LLVM builder: {e}"))
    }
}

#[cfg(test)]
mod feature_tests {
    use super::*;

    #[test]
    fn the_last_mention_of_a_feature_wins() {
        assert!(feature_on("+avx,+avx512f", "avx512f"));
        assert!(!feature_on("+avx,+avx512f,-avx512f", "avx512f"));
        assert!(feature_on("-avx2,+avx2", "avx2"));
        assert!(!feature_on("+avx512fp16", "avx512f"));
        assert!(!feature_on("", "avx"));
    }

    #[test]
    fn features_are_checked_per_architecture() {
        assert!(check_features("x86_64-unknown-linux-gnu", "+avx2,-avx512f").is_ok());
        assert!(check_features("aarch64-unknown-linux-gnu", "+sve").is_ok());
        let e = check_features("aarch64-unknown-linux-gnu", "+avx2").expect_err("not an AArch64 feature");
        assert!(e.message.contains("no feature `avx2` for aarch64"), "{}", e.message);
    }
}
