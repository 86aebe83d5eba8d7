//! `fdc check FILE.fd`: runs the front end and, when it finds no errors, the lowering
//! (without code generation), and prints their diagnostics: everything `fdc build`
//! would stop at, e.g. a missing spline table file.
//!
//! Exit codes: 0 valid (warnings may still be printed), 1 invalid, 2 usage or I/O error.

use codespan_reporting::term::termcolor::{ColorChoice, StandardStream};
use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum MessageFormat {
    /// Human-readable, with source excerpts.
    Human,
    /// One JSON object per diagnostic and line.
    Json,
}

pub fn run(file: &Path, format: MessageFormat) -> ExitCode {
    // An unreadable model is a usage/I/O problem (exit 2), not an invalid model.
    if let Err(e) = std::fs::read_to_string(file) {
        eprintln!("error: cannot read `{}`: {e}", file.display());
        return ExitCode::from(2);
    }
    let (analysis, lowering) = fdc_driver::pipeline::check(file);
    let all = || analysis.diagnostics.iter().chain(&lowering);
    match format {
        MessageFormat::Human => {
            // termcolor's `Auto` does not look at whether stderr is a terminal.
            let choice = if std::io::stderr().is_terminal() {
                ColorChoice::Auto
            } else {
                ColorChoice::Never
            };
            let mut err = StandardStream::stderr(choice);
            for d in all() {
                if d.emit(&mut err, &analysis.files).is_err() {
                    eprint!("{}", d.render(&analysis.files));
                }
            }
        }
        MessageFormat::Json => {
            for d in all() {
                eprintln!("{}", fdc_driver::report::diagnostic_json(&analysis, d));
            }
        }
    }
    if analysis.has_errors() || !lowering.is_empty() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
