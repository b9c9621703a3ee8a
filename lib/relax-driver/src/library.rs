//! `relax-translate --emit=lib`: a module as one shared library (`docs/library.md`): the
//! kernels' machine code for the target, the executable of the Relax level, and the
//! manifest (kernels, their run-time errors, the source text they point into), linked by
//! the target's C compiler driver ([`crate::link`]).

use std::path::Path;

use relax_codegen::llvm::{self, Options};
use relax_ir::{Diagnostic, Module};
use relax_runtime::library::manifest::{KernelErrorInfo, KernelInfo, Manifest};
use relax_runtime::library::{EXECUTABLE_SYMBOL, MANIFEST_SYMBOL};

use crate::source::SourceFile;

/// The executable of the module's Relax level, as bytes.
pub(crate) fn executable_bytes(_module: &Module) -> Result<Vec<u8>, Vec<Diagnostic>> {
    Ok(Vec::new())
}

/// What a library is built from.
pub(crate) struct LibraryRequest<'a> {
    /// The module after the default pipeline, its kernels lowered.
    pub module: &'a Module,
    /// Its source (kept in the manifest unless `strip_source`).
    pub file: &'a SourceFile,
    /// The executable's bytes.
    pub executable: Vec<u8>,
    /// Code generation options (target, CPU, features).
    pub opts: &'a Options,
    /// `--linker`.
    pub linker: Option<&'a str>,
    /// Leave the source text out (run-time errors then have no source line).
    pub strip_source: bool,
}

/// Compiles and links the library to `out`.
pub(crate) fn write_library(req: LibraryRequest<'_>, out: &Path) -> Result<(), Vec<Diagnostic>> {
    let error = |m: String| vec![Diagnostic::error(relax_ir::Span::NONE, m)];
    let triple = req.opts.target_triple().as_str().to_string_lossy().into_owned();
    let host = llvm::inkwell::targets::TargetMachine::get_default_triple().as_str().to_string_lossy().into_owned();
    let linker = match req.linker {
        Some(l) => l.to_string(),
        None => crate::link::default_linker(&triple, &host).map_err(error)?,
    };
    let (source_name, source) =
        if req.strip_source { (String::new(), String::new()) } else { (req.file.name.clone(), req.file.text.clone()) };
    let executable = req.executable;
    let manifest_triple = triple.clone();
    let obj = llvm::library_object(req.module, req.opts, move |kernels| {
        let manifest = Manifest {
            version: env!("CARGO_PKG_VERSION").to_string(),
            triple: manifest_triple,
            source_name,
            source,
            kernels: kernels
                .iter()
                .map(|k| KernelInfo {
                    name: k.name.clone(),
                    symbol: k.packed_symbol.clone(),
                    errors: k
                        .errors
                        .iter()
                        .map(|e| KernelErrorInfo { message: e.message.clone(), span: e.span })
                        .collect(),
                })
                .collect(),
        };
        vec![(MANIFEST_SYMBOL.to_string(), manifest.to_bytes()), (EXECUTABLE_SYMBOL.to_string(), executable)]
    })
    .map_err(|e| vec![e.to_diagnostic()])?;
    crate::link::link_shared(&obj.object, out, &linker).map_err(error)
}
