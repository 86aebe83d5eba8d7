//! `fdc check FILE.fd`: runs the front end and, when it finds no errors, the lowering
//! (without code generation), and prints their diagnostics: everything `fdc build`
//! would stop at, e.g. a missing spline table file.
//!
//! Exit codes: 0 valid (warnings may still be printed), 1 invalid, 2 usage or I/O error.

use codespan_reporting::term::termcolor::{ColorChoice, StandardStream};
use fdc_frontend::{Diagnostic, SourceFiles};
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
    if fdc_driver::fds::is_fds(file) {
        return run_fds(file, format);
    }
    let (analysis, lowering) = fdc_driver::pipeline::check(file);
    emit(
        &analysis.files,
        analysis.diagnostics.iter().chain(&lowering),
        format,
    );
    if analysis.has_errors() || !lowering.is_empty() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// A `.fds` file: the importer's problems at their line:col in the file; once it
/// imports, the check of the fd text it becomes (as `fdc FILE.fds` would build it).
fn run_fds(file: &Path, format: MessageFormat) -> ExitCode {
    use fdc_driver::fds::{import_file, ImportError};
    let imported = match import_file(file, Default::default(), None) {
        Ok(i) => i,
        Err(ImportError::Io(e)) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
        Err(ImportError::Model { files, diagnostics }) => {
            emit(&files, diagnostics.iter(), format);
            return ExitCode::from(1);
        }
    };
    let name = format!("{} (imported)", file.display());
    let src = fdc_driver::pipeline::ModelSource::Text {
        name: &name,
        text: &imported.fd,
        path: file,
    };
    let (analysis, lowering) = fdc_driver::pipeline::check_from(src);
    emit(
        &analysis.files,
        analysis.diagnostics.iter().chain(&lowering),
        format,
    );
    if analysis.has_errors() || !lowering.is_empty() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

fn emit<'a>(files: &SourceFiles, all: impl Iterator<Item = &'a Diagnostic>, format: MessageFormat) {
    match format {
        MessageFormat::Human => {
            // termcolor's `Auto` does not look at whether stderr is a terminal.
            let choice = if std::io::stderr().is_terminal() {
                ColorChoice::Auto
            } else {
                ColorChoice::Never
            };
            let mut err = StandardStream::stderr(choice);
            for d in all {
                if d.emit(&mut err, files).is_err() {
                    eprint!("{}", d.render(files));
                }
            }
        }
        MessageFormat::Json => {
            for d in all {
                eprintln!("{}", fdc_driver::report::diagnostic_json(files, d));
            }
        }
    }
}
