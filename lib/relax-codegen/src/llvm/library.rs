//! The kernels of a module as one relocatable object for a shared library
//! (`relax-translate --emit=lib`, `docs/library.md`).
//!
//! Besides the kernels (`name_packed` for each PrimFunc, exported), the object holds:
//!
//! * for each runtime function the kernels call ([`super::PARALLEL_FOR`],
//!   [`super::MATH_HELPERS`]), a local definition that calls through an exported pointer
//!   `relax_rt_ptr_<name>` ([`crate::abi::IMPORT_PREFIX`]), null until the loader sets it.
//!   The library thus has no undefined symbols of ours: any process can load it, and the
//!   runtime that loads it supplies its own thread pool and math helpers;
//! * named read-only byte arrays (the executable, the library's manifest), each with a
//!   `<name>_size` 64-bit word giving its length.

use inkwell::context::Context;
use inkwell::module::Linkage;
use inkwell::values::BasicMetadataValueEnum;

use super::{Emit, Kernel, Options, emit, host_machine, lower_module, optimize, verify};
use crate::abi::IMPORT_PREFIX;
use crate::error::CodegenError;
use relax_ir::Module;

/// A library's object and the kernels it holds.
#[derive(Clone, Debug)]
pub struct LibraryObject {
    /// The relocatable object (position-independent code for `opts`' target).
    pub object: Vec<u8>,
    /// The kernels, in the module's print order.
    pub kernels: Vec<Kernel>,
}

/// Compiles every PrimFunc of `m` (all of them must compile) with the runtime imports
/// and the data arrays `data` gives for the compiled kernels (`(symbol, bytes)`) into
/// one object.
pub fn library_object(
    m: &Module,
    opts: &Options,
    data: impl FnOnce(&[Kernel]) -> Vec<(String, Vec<u8>)>,
) -> Result<LibraryObject, CodegenError> {
    let tm = host_machine(opts)?;
    let cx = Context::create();
    let lowered = lower_module(&cx, m, &tm, opts);
    if let Some((g, e)) = lowered.failed.first() {
        let mut e = e.clone();
        e.message = format!("cannot compile `{}` for a library: {}", m.globals[*g].name, e.message);
        return Err(e);
    }
    let module = lowered.module;
    let b = cx.create_builder();
    let ptr_t = cx.ptr_type(inkwell::AddressSpace::default());
    let imports = [super::PARALLEL_FOR, super::INDEX_ERROR].into_iter().chain(super::MATH_HELPERS.iter().copied());
    for name in imports {
        let Some(f) = module.get_function(name) else { continue };
        if f.count_basic_blocks() > 0 {
            continue;
        }
        let slot = module.add_global(ptr_t, None, &format!("{IMPORT_PREFIX}{name}"));
        slot.set_initializer(&ptr_t.const_null());
        slot.set_linkage(Linkage::External);
        f.set_linkage(Linkage::Internal);
        let entry = cx.append_basic_block(f, "entry");
        b.position_at_end(entry);
        let target = b.build_load(ptr_t, slot.as_pointer_value(), "target")?.into_pointer_value();
        let args: Vec<BasicMetadataValueEnum> = f.get_param_iter().map(Into::into).collect();
        let r = b.build_indirect_call(f.get_type(), target, &args, "r")?;
        match r.try_as_basic_value().basic() {
            Some(v) => b.build_return(Some(&v))?,
            None => b.build_return(None)?,
        };
    }
    let i64t = cx.i64_type();
    for (name, bytes) in data(&lowered.kernels) {
        let arr = cx.const_string(&bytes, false);
        let g = module.add_global(arr.get_type(), None, &name);
        g.set_initializer(&arr);
        g.set_constant(true);
        g.set_linkage(Linkage::External);
        g.set_alignment(16);
        let size = module.add_global(i64t, None, &format!("{name}_size"));
        size.set_initializer(&i64t.const_int(bytes.len() as u64, false));
        size.set_constant(true);
        size.set_linkage(Linkage::External);
    }
    verify(&module)?;
    optimize(&module, &tm, opts)?;
    let object = emit(&module, &tm, Emit::Obj)?;
    Ok(LibraryObject { object, kernels: lowered.kernels })
}
