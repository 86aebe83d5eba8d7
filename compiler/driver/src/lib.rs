//! The pipeline behind the `fdc` commands: check → lower (and differentiate) →
//! simplify → LLVM JIT → runtime model, and running it with results written as rows
//! arrive.
//!
//! Knows every compiler crate and the runtime; it is the only place that maps the
//! compiler's description of element functions onto the runtime's function table.
//! Must not know: command-line parsing or terminal output (the `fdc` binary's job).

pub mod compile;
pub mod dofs;
pub mod fds;
pub mod pipeline;
pub mod profile;
pub mod report;
pub mod results;
mod roles_cache;
pub mod settings;
pub mod sweep;
pub mod template;
pub mod tier;
