//! The front end of the fd language: lexer (logos), parser (lalrpop), AST with spans,
//! name resolution across `use`d files, type checking and diagnostics
//! (codespan-reporting).
//!
//! **Architecture invariant:** the front end never fails. It returns a (possibly
//! partial) AST plus diagnostics, so the language server can work on half-typed text.
//! It knows nothing numeric: no IR, no LLVM, no runtime.
