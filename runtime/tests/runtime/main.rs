//! The integration tests of this crate, one binary (each file below was its own
//! binary once; one binary links the crate and `common` once instead of per file).
//! Run one file's tests with `cargo test --workspace --test runtime <file>::`.

#[macro_use]
mod common;
mod acceptance;
mod alloc;
mod assembly;
mod dense;
mod diagonal;
mod errors;
mod failures;
mod generalized_alpha;
mod hht;
mod lu;
mod modes;
mod newton;
mod state;
