//! Legacy FreeDyn models (`.fds`) as fd source text.
//!
//! `.fds` text → [`blocks`] (lines into blocks and `Key = value` entries, with spans)
//! → [`model`] (typed items, IDs and names resolved, every problem an [`Error`] at its
//! line:col) → [`write`] (idiomatic fd text). Depends on nothing of the compiler: the
//! `fdc` binary compiles the text like any model. The format as implemented and every
//! assumption are in `docs/fds.md`.

pub mod blocks;
pub mod error;
pub mod expr;
pub mod model;
mod names;
mod table;
mod values;
pub mod write;

pub use error::{line_col, Error, Kind};
pub use model::Model;
pub use write::WriteOptions;

/// Settings of the file that no fd `simulate` key carries; the driver's legacy
/// profile passes them to the runtime.
#[derive(Clone, Debug, PartialEq)]
pub struct SolverExtras {
    /// `MaxNumberOfInnerIterations`.
    pub max_newton_iterations: usize,
    /// Some body says `RegardVelocityInertiaForcesInsideJacobian = no`.
    pub iter_noqv: bool,
}

/// An imported model.
pub struct Imported {
    pub fd: String,
    pub extras: SolverExtras,
    pub model: Model,
}

/// Reads and validates `.fds` text; `dir` is the file's directory (spline data paths
/// are relative to it). All problems, in file order.
pub fn read(text: &str, dir: &std::path::Path) -> Result<Model, Vec<Error>> {
    let (blocks, mut errors) = blocks::parse(text);
    let model = model::read(&blocks, dir, &mut errors);
    errors.sort_by_key(|e| e.span.start);
    match model {
        Some(m) if errors.is_empty() => Ok(m),
        _ => Err(errors),
    }
}

/// Reads, validates and writes fd text.
pub fn import(text: &str, opts: &WriteOptions) -> Result<Imported, Vec<Error>> {
    let model = read(text, &opts.dir)?;
    let extras = extras(&model, text)?;
    let fd = write::write(&model, opts).map_err(|e| vec![e])?;
    Ok(Imported { fd, extras, model })
}

fn extras(m: &Model, text: &str) -> Result<SolverExtras, Vec<Error>> {
    let noqv: Vec<&model::Body> = m.bodies.iter().filter(|b| !b.full_jacobian).collect();
    if !noqv.is_empty() && noqv.len() != m.bodies.len() {
        // The runtime's option is one switch for the whole run.
        let b = noqv[0];
        // The key in that body's block (its first line is `b.line`).
        let start: usize = text
            .split_inclusive('\n')
            .take(b.line - 1)
            .map(str::len)
            .sum();
        let key = "RegardVelocityInertiaForcesInsideJacobian";
        let at = text[start..].find(key).map_or(start, |i| start + i);
        return Err(vec![Error::new(
            Kind::Unsupported,
            at..at + key.len(),
            format!(
                "`RegardVelocityInertiaForcesInsideJacobian` differs between bodies (`{}` says no)",
                b.name.raw
            ),
            "per-body setting",
            "the option holds for the whole run: give every body the same value",
        )]);
    }
    Ok(SolverExtras {
        max_newton_iterations: m.solver.as_ref().map_or(10, |s| s.max_iterations),
        iter_noqv: !noqv.is_empty() && !m.bodies.is_empty(),
    })
}
