//! The integration tests of this crate, one binary (each file below was its own
//! binary once; one binary links the crate and `common` once instead of per file).
//! Run one file's tests with `cargo test --workspace --test frontend <file>::`.

mod model;
mod robust;
mod scope;
