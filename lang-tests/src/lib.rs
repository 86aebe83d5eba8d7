//! Language tests: one `.fd` file per case under `lang-tests/cases`, with the expected
//! diagnostics written in comments next to the code they are about. Run by `cargo test`.
