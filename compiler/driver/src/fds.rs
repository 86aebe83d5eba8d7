//! Legacy `.fds` models in the pipeline: import with a [`Profile`], and the importer's
//! errors as the front end's diagnostics (so `fdc check` shows them with excerpts).

use crate::profile::Profile;
use fdc_frontend::ast::Span;
use fdc_frontend::{Diagnostic, SourceFiles};
use std::path::{Path, PathBuf};

/// A `.fds` file is recognized by its extension (any case).
pub fn is_fds(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("fds"))
}

/// Why an import stopped.
pub enum ImportError {
    /// The file cannot be read (exit 2).
    Io(String),
    /// Problems in the file: its text as file 0 of `files`, diagnostics in file order.
    Model {
        files: SourceFiles,
        diagnostics: Vec<Diagnostic>,
    },
}

fn canonical(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

fn parent(p: &Path) -> PathBuf {
    match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Reads and imports `path`. `fd_dir` is where the fd text will be read from (the
/// directory of `fdc import -o`); `None` means next to the `.fds` file (in-memory
/// runs analyze the text as if it were there).
pub fn import_file(
    path: &Path,
    profile: Profile,
    fd_dir: Option<&Path>,
) -> Result<fdc_fds::Imported, ImportError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| ImportError::Io(format!("cannot read `{}`: {e}", path.display())))?;
    let dir = parent(path);
    // Table paths stay relative when the fd file sits next to the `.fds` file.
    let prefix = match fd_dir {
        Some(d) if canonical(d) != canonical(&dir) => canonical(&dir),
        _ => PathBuf::new(),
    };
    let name = path.display().to_string();
    let opts = profile.write_options(&name, &dir, &prefix);
    fdc_fds::import(&text, &opts).map_err(|errors| {
        let mut files = SourceFiles::default();
        let file = files.add(name, text, Some(path.to_path_buf()));
        let diagnostics = errors.iter().map(|e| diagnostic(file, e)).collect();
        ImportError::Model { files, diagnostics }
    })
}

/// An importer error as a diagnostic of the file `file`.
pub fn diagnostic(file: usize, e: &fdc_fds::Error) -> Diagnostic {
    Diagnostic::error(e.kind.code(), e.message.clone())
        .at(Span::new(file, e.span.start, e.span.end), e.label.clone())
        .note(format!("hint: {}", e.hint))
}
