//! LLVM code generation (inkwell) and JIT for IR functions, with an on-disk object
//! cache keyed by the hash of the IR.
//!
//! **Architecture invariant:** depends on `fdc-ir` (input) and `fdc-runtime` (only for
//! the function table type it fills). Generated functions are straight-line code:
//! no allocation, no branches except selects.
