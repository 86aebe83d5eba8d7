//! The integration tests of this crate, one binary (each file below was its own
//! binary once; one binary links the crate and `common` once instead of per file).
//! Run one file's tests with `cargo test --workspace --test diff <file>::`.

mod ad;
mod common;
mod eliminate;
mod lie;
mod role_contracts;
mod roles;
mod simplified;
mod snapshots;
mod stored;
mod vector_space;
