//! `relax-translate --emit=lib`: a module as one shared library (`docs/library.md`): the
//! kernels' machine code for the target, the executable of the Relax level, and the
//! manifest (kernels, their run-time errors, the source text they point into), linked by
//! the target's C compiler driver ([`crate::link`]).

use std::path::Path;

use relax_codegen::llvm::{self, Options};
use std::collections::HashMap;

use relax_entity::EntityRef;
use relax_ir::{Diagnostic, Global, Module};
use relax_runtime::library::manifest::{KernelErrorInfo, KernelInfo, Manifest};
use relax_runtime::library::{EXECUTABLE_SYMBOL, MANIFEST_SYMBOL};
use relax_runtime::vm::Executable;

use crate::source::SourceFile;

/// What a library is built from.
pub(crate) struct LibraryRequest<'a> {
    /// The module after the default pipeline, its kernels lowered.
    pub module: &'a Module,
    /// Its source (kept in the manifest unless `strip_source`).
    pub file: &'a SourceFile,
    /// The results each kernel overwrites completely (found before scheduling).
    pub overwrites: &'a HashMap<Global, Vec<usize>>,
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
    let (strip_source, name, text) = (req.strip_source, req.file.name.clone(), req.file.text.clone());
    let (source_name, source) =
        if req.strip_source { (String::new(), String::new()) } else { (req.file.name.clone(), req.file.text.clone()) };
    let mut exec = Executable::compile(req.module).map_err(|e| vec![e.to_diagnostic()])?;
    exec.set_overwrites(req.overwrites);
    let manifest_triple = triple.clone();
    let mut exec_error = None;
    let obj = llvm::library_object(req.module, req.opts, |kernels| {
        for i in 0..exec.kernels().len() {
            let g = Global::new(exec.kernels()[i].global as usize);
            let Some(k) = kernels.iter().find(|k| k.global == g) else { continue };
            if let Err(e) = exec.set_kernel_errors(i, k.errors.iter().map(|e| (e.message.clone(), e.span)).collect()) {
                exec_error = Some(e);
            }
        }
        // After the kernels' errors, whose spans join the debug table.
        if !strip_source {
            exec.attach_source(&name, &text);
        }
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
        vec![(MANIFEST_SYMBOL.to_string(), manifest.to_bytes()), (EXECUTABLE_SYMBOL.to_string(), exec.to_bytes())]
    })
    .map_err(|e| vec![e.to_diagnostic()])?;
    if let Some(e) = exec_error {
        return Err(vec![e.to_diagnostic()]);
    }
    crate::link::link_shared(&obj.object, out, &linker).map_err(error)
}
