//! The standard library of element types, written in the fd language and embedded in
//! the `fdc` binary. Adding a force law is a change to a `.fd` file here, never to Rust.
//!
//! **Architecture invariant:** this crate holds only source text; it depends on nothing.

/// Every library file: (file name, source text).
pub const FILES: &[(&str, &str)] = &[];
