//! TIR to SPIR-V, built with rspirv (`docs/gpu.md`).
//!
//! One module per input, SPIR-V 1.3 for Vulkan 1.1: every launch of every PrimFunc
//! scheduled by `schedule-gpu` ([`crate::gpu`]) is a `GLCompute` entry point with
//! `LocalSize(threads, 1, 1)`. A function's buffers are storage buffers (descriptor set
//! 0, binding `i` in the order of [`crate::gpu::GpuFunc::buffers`], each a block holding
//! one runtime array); its scalar arguments (scalar parameters and symbolic dims) are one
//! push-constant block with an 8-byte slot each. The block index is
//! `WorkgroupId.x + WorkgroupId.y * NumWorkgroups.x`, so a grid larger than one dispatch
//! dimension allows can be spread over two; indices past the grid size do nothing.
//!
//! Statements of lowered TIR (`relax_ir::tir_lower`, where blocks, `T.where` and
//! `T.init` became `let`s and `if`s) lower to structured control flow ([`lower`]):
//! loops with `OpLoopMerge`, `if` with `OpSelectionMerge`, and `T.if_then_else`
//! evaluates only the branch it takes. Supported element types: `float32`,
//! `float64`, `int32`, `int64`, `uint32`; math goes through `GLSL.std.450` (32-bit only,
//! as that instruction set requires).

mod lower;

use std::collections::HashMap;

use relax_ir::{Global, Module};
use rspirv::dr::{Builder, Operand};
use rspirv::spirv::{self, Word};

use crate::error::CodegenError;
use crate::gpu::{self, GpuFunc};

pub use rspirv;

/// The result of lowering a module.
pub struct SpirvModule {
    /// The SPIR-V words.
    pub words: Vec<u32>,
    /// The kernels, per PrimFunc that could be compiled.
    pub funcs: Vec<GpuFunc>,
    /// The PrimFuncs that could not be compiled, and why.
    pub failed: Vec<(Global, CodegenError)>,
}

impl SpirvModule {
    /// The module as little-endian bytes (a `.spv` file).
    pub fn bytes(&self) -> Vec<u8> {
        self.words.iter().flat_map(|w| w.to_le_bytes()).collect()
    }
}

impl From<rspirv::dr::Error> for CodegenError {
    fn from(e: rspirv::dr::Error) -> CodegenError {
        CodegenError::new(format!("internal error: SPIR-V builder: {e:?}"))
    }
}

/// Module-wide state: the builder, cached types and constants, the built-in inputs.
pub(crate) struct Cx {
    pub(crate) b: Builder,
    pub(crate) glsl: Word,
    consts: HashMap<(Word, u64), Word>,
    /// Storage-buffer block types by element type, already decorated.
    blocks: HashMap<Word, Word>,
    decorated: Vec<Word>,
    pub(crate) wg_id: Word,
    pub(crate) local_id: Word,
    pub(crate) num_wg: Word,
    pub(crate) int64: bool,
    pub(crate) float64: bool,
}

impl Cx {
    fn new() -> Cx {
        let mut b = Builder::new();
        b.set_version(1, 3);
        b.capability(spirv::Capability::Shader);
        let glsl = b.ext_inst_import("GLSL.std.450");
        b.memory_model(spirv::AddressingModel::Logical, spirv::MemoryModel::GLSL450);
        let u32t = b.type_int(32, 0);
        let v3 = b.type_vector(u32t, 3);
        let pv3 = b.type_pointer(None, spirv::StorageClass::Input, v3);
        let builtin = |b: &mut Builder, name: &str, bi: spirv::BuiltIn| {
            let v = b.variable(pv3, None, spirv::StorageClass::Input, None);
            b.decorate(v, spirv::Decoration::BuiltIn, [Operand::BuiltIn(bi)]);
            b.name(v, name);
            v
        };
        let wg_id = builtin(&mut b, "gl_WorkGroupID", spirv::BuiltIn::WorkgroupId);
        let local_id = builtin(&mut b, "gl_LocalInvocationID", spirv::BuiltIn::LocalInvocationId);
        let num_wg = builtin(&mut b, "gl_NumWorkGroups", spirv::BuiltIn::NumWorkgroups);
        Cx {
            b,
            glsl,
            consts: HashMap::new(),
            blocks: HashMap::new(),
            decorated: Vec::new(),
            wg_id,
            local_id,
            num_wg,
            int64: false,
            float64: false,
        }
    }

    /// A constant of type `ty` with the given bits (32-bit types use the low word).
    pub(crate) fn constant(&mut self, ty: Word, bits: u64, wide: bool) -> Word {
        if let Some(&c) = self.consts.get(&(ty, bits)) {
            return c;
        }
        let c = if wide { self.b.constant_bit64(ty, bits) } else { self.b.constant_bit32(ty, bits as u32) };
        self.consts.insert((ty, bits), c);
        c
    }

    pub(crate) fn bool_const(&mut self, v: bool) -> Word {
        let t = self.b.type_bool();
        let key = (t, v as u64);
        if let Some(&c) = self.consts.get(&key) {
            return c;
        }
        let c = if v { self.b.constant_true(t) } else { self.b.constant_false(t) };
        self.consts.insert(key, c);
        c
    }

    /// The decorated `{ T data[]; }` block type for element type `elem` of `bytes` bytes.
    fn storage_block(&mut self, elem: Word, bytes: u32) -> Word {
        if let Some(&t) = self.blocks.get(&elem) {
            return t;
        }
        let arr = self.b.type_runtime_array(elem);
        if !self.decorated.contains(&arr) {
            self.b.decorate(arr, spirv::Decoration::ArrayStride, [Operand::LiteralBit32(bytes)]);
            self.decorated.push(arr);
        }
        let id = self.b.id();
        let st = self.b.type_struct_id(Some(id), [arr]);
        self.b.decorate(st, spirv::Decoration::Block, []);
        self.b.member_decorate(st, 0, spirv::Decoration::Offset, [Operand::LiteralBit32(0)]);
        self.blocks.insert(elem, st);
        st
    }
}

/// Lowers every PrimFunc of `m` scheduled for the GPU into one SPIR-V module. A function
/// that cannot be compiled is listed in [`SpirvModule::failed`] and left out.
pub fn lower_module(m: &Module) -> SpirvModule {
    let mut funcs = Vec::new();
    let mut failed = Vec::new();
    let mut good = Vec::new();
    // A trial run in a module of its own keeps a failing function out of the result.
    for g in m.print_order() {
        let Some(f) = m.prim_func(g) else { continue };
        let name = m.globals[g].name.clone();
        let result = gpu::analyze(&name, g, f).and_then(|gf| {
            let mut cx = Cx::new();
            lower::lower_func(&mut cx, f, &gf)?;
            Ok(gf)
        });
        match result {
            Ok(gf) => good.push((g, gf)),
            Err(e) => failed.push((g, e)),
        }
    }
    let mut cx = Cx::new();
    for (g, gf) in good {
        let f = m.prim_func(g).expect("a PrimFunc");
        match lower::lower_func(&mut cx, f, &gf) {
            Ok(()) => funcs.push(gf),
            Err(e) => failed.push((g, e)),
        }
    }
    if cx.int64 {
        cx.b.capability(spirv::Capability::Int64);
    }
    if cx.float64 {
        cx.b.capability(spirv::Capability::Float64);
    }
    let module = cx.b.module();
    use rspirv::binary::Assemble;
    SpirvModule { words: module.assemble(), funcs, failed }
}
