//! Loading object code into an ORC LLJIT and finding the function addresses.
//!
//! Both a fresh compile and a cache hit end here with the same object bytes, so the two
//! paths run identical machine code. Undefined symbols of the object (libm functions
//! such as `tan` or `atan2`) resolve against the running process. The ORC C API used
//! here is the same from LLVM 13 to 18.

use inkwell::llvm_sys::core::LLVMCreateMemoryBufferWithMemoryRangeCopy;
use inkwell::llvm_sys::error::{LLVMDisposeErrorMessage, LLVMErrorRef, LLVMGetErrorMessage};
use inkwell::llvm_sys::orc2::lljit::{
    LLVMOrcCreateLLJIT, LLVMOrcCreateLLJITBuilder, LLVMOrcDisposeLLJIT, LLVMOrcLLJITAddObjectFile,
    LLVMOrcLLJITGetGlobalPrefix, LLVMOrcLLJITGetMainJITDylib, LLVMOrcLLJITLookup, LLVMOrcLLJITRef,
};
use inkwell::llvm_sys::orc2::{
    LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess, LLVMOrcJITDylibAddGenerator,
};
use std::ffi::{CStr, CString};
use std::ptr;

/// An LLJIT instance that owns loaded machine code. Dropping it frees the code: it must
/// outlive every function pointer taken from it (the crate hands it out as the
/// `owner` of [`crate::Compiled`]).
pub struct Jit {
    raw: LLVMOrcLLJITRef,
}

// SAFETY: after loading, the JIT is only read (its code executed) and finally disposed;
// LLJIT's execution session is internally synchronized, and disposal needs no
// particular thread.
unsafe impl Send for Jit {}
unsafe impl Sync for Jit {}

impl Drop for Jit {
    fn drop(&mut self) {
        // SAFETY: `raw` came from LLVMOrcCreateLLJIT and is disposed exactly once.
        let err = unsafe { LLVMOrcDisposeLLJIT(self.raw) };
        // Nothing sensible to do with an error while dropping; free its message.
        let _ = take_error(err);
    }
}

/// Turns an `LLVMErrorRef` into `Err(message)` (consuming it).
fn take_error(err: LLVMErrorRef) -> Result<(), String> {
    if err.is_null() {
        return Ok(());
    }
    // SAFETY: a non-null error is consumed by LLVMGetErrorMessage; the message is
    // copied and then freed with the matching function.
    unsafe {
        let msg = LLVMGetErrorMessage(err);
        let text = CStr::from_ptr(msg).to_string_lossy().into_owned();
        LLVMDisposeErrorMessage(msg);
        Err(text)
    }
}

impl Jit {
    /// A new JIT whose main library resolves unknown symbols in the running process.
    pub fn new() -> Result<Jit, String> {
        let mut raw: LLVMOrcLLJITRef = ptr::null_mut();
        // SAFETY: the builder is consumed by LLVMOrcCreateLLJIT, success or not.
        take_error(unsafe { LLVMOrcCreateLLJIT(&mut raw, LLVMOrcCreateLLJITBuilder()) })
            .map_err(|e| format!("cannot create the LLVM JIT: {e}"))?;
        let jit = Jit { raw };
        // SAFETY: `raw` is a live JIT; on success the generator is owned by the dylib.
        unsafe {
            let mut gen = ptr::null_mut();
            let prefix = LLVMOrcLLJITGetGlobalPrefix(jit.raw);
            take_error(LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(
                &mut gen,
                prefix,
                None,
                ptr::null_mut(),
            ))
            .map_err(|e| format!("cannot search the process for symbols: {e}"))?;
            LLVMOrcJITDylibAddGenerator(LLVMOrcLLJITGetMainJITDylib(jit.raw), gen);
        }
        Ok(jit)
    }

    /// Adds one relocatable object file (copied) to the main library.
    pub fn add_object(&self, bytes: &[u8]) -> Result<(), String> {
        let name = CString::new("fdc-object").expect("no NUL in a literal");
        // SAFETY: the buffer copies `bytes`; LLVMOrcLLJITAddObjectFile takes ownership of
        // it in every case.
        unsafe {
            let buf = LLVMCreateMemoryBufferWithMemoryRangeCopy(
                bytes.as_ptr().cast(),
                bytes.len(),
                name.as_ptr(),
            );
            take_error(LLVMOrcLLJITAddObjectFile(
                self.raw,
                LLVMOrcLLJITGetMainJITDylib(self.raw),
                buf,
            ))
        }
        .map_err(|e| format!("cannot load object code: {e}"))
    }

    /// The address of a defined function; materializes (links) the object on first use.
    pub fn lookup(&self, name: &str) -> Result<u64, String> {
        let c = CString::new(name).map_err(|_| format!("symbol name {name:?} contains NUL"))?;
        let mut addr = 0u64;
        // SAFETY: `raw` is live, `c` is a valid C string for the duration of the call.
        take_error(unsafe { LLVMOrcLLJITLookup(self.raw, &mut addr, c.as_ptr()) })
            .map_err(|e| format!("cannot link {name}: {e}"))?;
        if addr == 0 {
            return Err(format!("symbol {name} resolved to address 0"));
        }
        Ok(addr)
    }
}
