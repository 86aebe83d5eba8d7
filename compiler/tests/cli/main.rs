//! The integration tests of this crate, one binary (each file below was its own
//! binary once; one binary links the crate and `common` once instead of per file).
//! Run one file's tests with `cargo test --workspace --test cli <file>::`.

mod cli_check;
mod cli_fds;
mod cli_hostile;
mod cli_modes;
mod cli_run;
mod fuzz;
mod ir_filetests;
mod lsp_neovim;
mod lsp_stdio;
