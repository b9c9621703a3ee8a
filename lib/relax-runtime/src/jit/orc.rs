//! The in-process linker of the JIT: LLVM's ORC `LLJIT` (through its C API), which loads
//! relocatable object files into executable memory and resolves their imports: the
//! runtime functions by the addresses the JIT gives ([`OrcJit::new`]), everything else
//! (libm, libc) from the running process. Objects come from the code generator or from
//! the disk cache alike (`relax_codegen::llvm::kernel_object`).
#![expect(unsafe_code, reason = "LLVM's ORC C API")]

use std::ffi::{CStr, CString, c_char};
use std::ptr;

use relax_codegen::CodegenError;
use relax_codegen::llvm::inkwell::llvm_sys::core::LLVMCreateMemoryBufferWithMemoryRangeCopy;
use relax_codegen::llvm::inkwell::llvm_sys::error::{LLVMDisposeErrorMessage, LLVMErrorRef, LLVMGetErrorMessage};
use relax_codegen::llvm::inkwell::llvm_sys::orc2::lljit::{
    LLVMOrcCreateLLJIT, LLVMOrcCreateLLJITBuilder, LLVMOrcDisposeLLJIT, LLVMOrcLLJITAddObjectFile,
    LLVMOrcLLJITGetGlobalPrefix, LLVMOrcLLJITGetMainJITDylib, LLVMOrcLLJITLookup, LLVMOrcLLJITMangleAndIntern,
    LLVMOrcLLJITRef,
};
use relax_codegen::llvm::inkwell::llvm_sys::orc2::{
    LLVMJITEvaluatedSymbol, LLVMJITSymbolFlags, LLVMJITSymbolGenericFlags, LLVMOrcAbsoluteSymbols,
    LLVMOrcCSymbolMapPair, LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess, LLVMOrcDefinitionGeneratorRef,
    LLVMOrcExecutorAddress, LLVMOrcJITDylibAddGenerator, LLVMOrcJITDylibDefine, LLVMOrcJITDylibRef,
};

/// An `LLJIT` instance; the code it loaded lives until it is dropped.
pub struct OrcJit {
    jit: LLVMOrcLLJITRef,
    dylib: LLVMOrcJITDylibRef,
}

/// The message of an LLVM error (consumed), or `Ok` for none.
fn check(err: LLVMErrorRef, what: &str) -> Result<(), CodegenError> {
    if err.is_null() {
        return Ok(());
    }
    // SAFETY: `err` is a live error; LLVMGetErrorMessage consumes it and returns a string
    // we dispose of after copying it.
    let msg = unsafe {
        let m = LLVMGetErrorMessage(err);
        let s = CStr::from_ptr(m).to_string_lossy().into_owned();
        LLVMDisposeErrorMessage(m);
        s
    };
    Err(CodegenError::new(format!("{what}: {msg}")))
}

fn c_name(name: &str) -> Result<CString, CodegenError> {
    CString::new(name).map_err(|_| CodegenError::new(format!("symbol `{name}` contains a NUL byte")))
}

impl OrcJit {
    /// A JIT for the host whose objects may call the functions `symbols` gives by
    /// address, and anything the process itself exports.
    pub fn new(symbols: &[(&str, usize)]) -> Result<OrcJit, CodegenError> {
        relax_codegen::llvm::initialize()?;
        let mut jit: LLVMOrcLLJITRef = ptr::null_mut();
        // SAFETY: the builder is consumed by LLVMOrcCreateLLJIT; `jit` is set on success.
        check(unsafe { LLVMOrcCreateLLJIT(&mut jit, LLVMOrcCreateLLJITBuilder()) }, "cannot start the JIT")?;
        // SAFETY: `jit` is live; its main dylib lives as long as it does.
        let dylib = unsafe { LLVMOrcLLJITGetMainJITDylib(jit) };
        let orc = OrcJit { jit, dylib };
        let mut generator: LLVMOrcDefinitionGeneratorRef = ptr::null_mut();
        // SAFETY: a search generator over the process's symbols, handed to the dylib.
        unsafe {
            let prefix = LLVMOrcLLJITGetGlobalPrefix(jit);
            check(
                LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(&mut generator, prefix, None, ptr::null_mut()),
                "cannot search the process's symbols",
            )?;
            LLVMOrcJITDylibAddGenerator(dylib, generator);
        }
        let names = symbols.iter().map(|(n, _)| c_name(n)).collect::<Result<Vec<_>, _>>()?;
        let flags = || LLVMJITSymbolFlags {
            GenericFlags: LLVMJITSymbolGenericFlags::LLVMJITSymbolGenericFlagsExported as u8
                | LLVMJITSymbolGenericFlags::LLVMJITSymbolGenericFlagsCallable as u8,
            TargetFlags: 0,
        };
        let mut pairs: Vec<LLVMOrcCSymbolMapPair> = names
            .iter()
            .zip(symbols)
            .map(|(name, &(_, addr))| LLVMOrcCSymbolMapPair {
                // SAFETY: `jit` is live; the pool entry's reference passes to the pair.
                Name: unsafe { LLVMOrcLLJITMangleAndIntern(jit, name.as_ptr()) },
                Sym: LLVMJITEvaluatedSymbol { Address: addr as LLVMOrcExecutorAddress, Flags: flags() },
            })
            .collect();
        if !pairs.is_empty() {
            // SAFETY: the unit takes the pairs' name references; the dylib takes the unit.
            check(
                unsafe { LLVMOrcJITDylibDefine(dylib, LLVMOrcAbsoluteSymbols(pairs.as_mut_ptr(), pairs.len())) },
                "cannot define the runtime functions",
            )?;
        }
        Ok(orc)
    }

    /// Loads an object file (copied; linked when one of its symbols is first looked up).
    pub fn add_object(&self, name: &str, object: &[u8]) -> Result<(), CodegenError> {
        let cname = c_name(name)?;
        // SAFETY: the buffer is a copy of `object`; LLVMOrcLLJITAddObjectFile takes it.
        check(
            unsafe {
                let buf = LLVMCreateMemoryBufferWithMemoryRangeCopy(
                    object.as_ptr().cast::<c_char>(),
                    object.len(),
                    cname.as_ptr(),
                );
                LLVMOrcLLJITAddObjectFile(self.jit, self.dylib, buf)
            },
            &format!("cannot load the code of `{name}`"),
        )
    }

    /// The address of `symbol`, linking the object that defines it (and what it needs)
    /// first.
    pub fn lookup(&self, symbol: &str) -> Result<usize, CodegenError> {
        let cname = c_name(symbol)?;
        let mut addr: LLVMOrcExecutorAddress = 0;
        // SAFETY: `jit` is live; `addr` is set on success.
        check(unsafe { LLVMOrcLLJITLookup(self.jit, &mut addr, cname.as_ptr()) }, &format!("cannot link `{symbol}`"))?;
        Ok(addr as usize)
    }
}

impl Drop for OrcJit {
    fn drop(&mut self) {
        // SAFETY: `jit` is live and disposed of once; its code is not called afterwards
        // (the kernels' addresses do not outlive `jit::compile`'s closure).
        let err = unsafe { LLVMOrcDisposeLLJIT(self.jit) };
        let _ = check(err, "cannot shut the JIT down");
    }
}
