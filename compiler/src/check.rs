//! `fdc check FILE.fd`: runs the front end and, when it finds no errors, the lowering
//! (without code generation), and prints their diagnostics: everything `fdc build`
//! would stop at, e.g. a missing spline table file. A `.fds` file is imported first.
//!
//! Exit codes: 0 valid (warnings may still be printed), 1 invalid (also a model that is
//! not UTF-8: E0004 at the bad byte), 2 usage or I/O error. With `--message-format
//! json` every line on stderr is a JSON object, an unreadable model included.

use codespan_reporting::term::termcolor::{BufferWriter, ColorChoice};
use fdc_frontend::{Diagnostic, SourceFiles};
use std::io::{IsTerminal, Write};
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
    if fdc_driver::fds::is_fds(file) {
        return run_fds(file, format);
    }
    let src = fdc_driver::pipeline::ModelSource::File(file);
    let (analysis, lowering, dofs) = fdc_driver::pipeline::check_dofs(src);
    let all: Vec<&Diagnostic> = analysis.diagnostics.iter().chain(&lowering).collect();
    let mut written = emit(&analysis.files, &all, format);
    if let (Some(line), MessageFormat::Human) = (dofs, format) {
        // The model's size on stdout: not a diagnostic, so stderr stays silent.
        written = written.and_then(|_| writeln!(std::io::stdout(), "{line}"));
    }
    // An unreadable model (the one diagnostic without a place) is an I/O problem
    // (exit 2), not an invalid model; so is a closed stderr.
    let unreadable = all.iter().any(|d| d.code == "E0208" && d.primary.is_none());
    if unreadable || written.is_err() {
        ExitCode::from(2)
    } else if analysis.has_errors() || lowering.iter().any(is_error) {
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
            let all: Vec<&Diagnostic> = diagnostics.iter().collect();
            return match emit(&files, &all, format) {
                Ok(()) => ExitCode::from(1),
                Err(_) => ExitCode::from(2),
            };
        }
    };
    let name = format!("{} (imported)", file.display());
    let src = fdc_driver::pipeline::ModelSource::Text {
        name: &name,
        text: &imported.fd,
        path: file,
    };
    let (analysis, lowering) = fdc_driver::pipeline::check_from(src);
    let all: Vec<&Diagnostic> = analysis.diagnostics.iter().chain(&lowering).collect();
    if emit(&analysis.files, &all, format).is_err() {
        ExitCode::from(2)
    } else if analysis.has_errors() || lowering.iter().any(is_error) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// Everything goes out in one write: codespan writes a few bytes at a time, and stderr
/// is unbuffered (1,000 errors on one long line took 13.4 s that way).
fn emit(files: &SourceFiles, all: &[&Diagnostic], format: MessageFormat) -> std::io::Result<()> {
    match format {
        MessageFormat::Human => print_human(files, all),
        MessageFormat::Json => {
            let mut out = String::new();
            for d in all {
                out.push_str(&fdc_driver::report::diagnostic_json(files, d).to_string());
                out.push('\n');
            }
            std::io::stderr().lock().write_all(out.as_bytes())
        }
    }
}

/// With source excerpts, in colour on a terminal; buffered, then written at once.
fn print_human(files: &SourceFiles, all: &[&Diagnostic]) -> std::io::Result<()> {
    // termcolor's `Auto` does not look at whether stderr is a terminal.
    let choice = if std::io::stderr().is_terminal() {
        ColorChoice::Auto
    } else {
        ColorChoice::Never
    };
    let writer = BufferWriter::stderr(choice);
    let mut buf = writer.buffer();
    for d in all {
        if d.emit(&mut buf, files).is_err() {
            write!(buf, "{}", d.render(files))?;
        }
    }
    writer.print(&buf)
}

fn is_error(d: &Diagnostic) -> bool {
    d.severity == fdc_frontend::Severity::Error
}
