//! One open document: its text, its analysis (front end, then lowering when the front
//! end is clean), and the mapping from the front end's file ids to URIs (the document
//! itself, files it `use`s, and the stdlib).

use crate::position::LineIndex;
use fdc_frontend::ast::{FileId, Span};
use fdc_frontend::{analyze_source, Analysis, Diagnostic, SourceFiles};
use lsp_types::{Location, Url};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// The front end resolves `use` paths of unsaved text against the working directory,
/// which is process-wide: analyses that change it must not overlap.
static CWD_LOCK: Mutex<()> = Mutex::new(());

pub struct Document {
    pub uri: Url,
    pub text: String,
    /// Directory of the document on disk; `use` paths are relative to it.
    pub dir: Option<PathBuf>,
    pub analysis: Analysis,
    /// What the lowering found (spline tables, parameter values, ...), with spans into
    /// `analysis.files`; empty when the front end reported errors (lowering needs a
    /// checked model).
    pub lowering: Vec<Diagnostic>,
    /// The file id of this document in `analysis`.
    pub root: FileId,
}

impl Document {
    pub fn new(uri: Url, text: String) -> Document {
        let path = uri.to_file_path().ok();
        let dir = path
            .as_deref()
            .and_then(Path::parent)
            .map(Path::to_path_buf);
        // A stdlib file opened through go-to-definition: it is already part of every
        // analysis, so analyze an empty model and point at the stdlib's own copy
        // (analyzing it as a model would report every type as defined twice).
        if let Some(i) = path.as_deref().and_then(stdlib_index) {
            return Document {
                uri,
                text,
                dir,
                analysis: analyze_source("<empty>", ""),
                lowering: Vec::new(),
                root: i,
            };
        }
        let name = path
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| uri.to_string());
        let analysis = analyze_in(dir.as_deref(), &name, &text);
        Document {
            uri,
            text,
            dir,
            analysis,
            lowering: Vec::new(),
            root: fdc_stdlib::FILES.len(),
        }
    }

    /// A model whose front end found no errors: only such a one can be lowered.
    pub fn can_lower(&self) -> bool {
        self.root >= fdc_stdlib::FILES.len() && !self.analysis.has_errors()
    }

    /// Runs the lowering (as `fdc check` does) and keeps what it found in `lowering`.
    pub fn lower(&mut self) {
        self.lowering = if self.can_lower() {
            let path = self.uri.to_file_path().ok();
            lower(
                &self.analysis,
                self.root,
                path.as_deref(),
                self.dir.as_deref(),
            )
        } else {
            Vec::new()
        };
    }

    /// Keeps those lowering diagnostics of `old` (the previous text of this document)
    /// that lie wholly in this document before its first changed byte: their spans are
    /// still right, and the editor should not lose them at every keystroke until the
    /// lowering runs again. Those elsewhere or without a place wait for that run.
    pub fn carry_over(&mut self, old: &Document) {
        if !self.can_lower() {
            return;
        }
        // The text `old` was analyzed from: its `text` may since have taken changes
        // that were absorbed without analysis.
        let same = old
            .analysis
            .files
            .text(old.root)
            .bytes()
            .zip(self.text.bytes())
            .take_while(|(a, b)| a == b)
            .count();
        let unchanged =
            |l: &fdc_frontend::Label| l.span.file == self.root && l.span.end as usize <= same;
        self.lowering = old
            .lowering
            .iter()
            .filter(|d| {
                d.primary.as_ref().is_some_and(unchanged) && d.secondary.iter().all(unchanged)
            })
            .cloned()
            .collect();
    }

    /// The text of a file of the analysis (for the document itself, the editor's text).
    pub fn file_text(&self, file: FileId) -> &str {
        if file == self.root {
            &self.text
        } else {
            self.analysis.files.text(file)
        }
    }

    /// Where a file of the analysis lives, as a URI a client can open.
    pub fn file_uri(&self, file: FileId) -> Option<Url> {
        if file == self.root {
            return Some(self.uri.clone());
        }
        if file < fdc_stdlib::FILES.len() {
            return stdlib_dir()
                .map(|d| d.join(fdc_stdlib::FILES[file].0))
                .and_then(|p| Url::from_file_path(p).ok());
        }
        let p = self.analysis.files.path(file)?;
        // Relative paths are relative to where the analysis ran: the document's
        // directory, or the server's working directory for an untitled document.
        let abs = match &self.dir {
            _ if p.is_absolute() => p.to_path_buf(),
            Some(d) => d.join(p),
            None => std::env::current_dir().ok()?.join(p),
        };
        Url::from_file_path(abs).ok()
    }

    pub fn location(&self, span: Span) -> Option<Location> {
        let uri = self.file_uri(span.file)?;
        let text = self.file_text(span.file);
        let range = LineIndex::new(text).range(text, span.start as usize, span.end as usize);
        Some(Location::new(uri, range))
    }
}

/// Runs the front end on unsaved text with `use` resolved relative to `dir`.
fn analyze_in(dir: Option<&Path>, name: &str, text: &str) -> Analysis {
    let _guard = CWD_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let old = std::env::current_dir().ok();
    let moved = match dir {
        Some(d) => std::env::set_current_dir(d).is_ok(),
        None => false,
    };
    let analysis = analyze_source(name, text);
    if moved {
        if let Some(old) = old {
            let _ = std::env::set_current_dir(old);
        }
    }
    analysis
}

/// Runs the lowering (as `fdc check` does) on a clean analysis and returns its errors.
/// The lowering reads `table(...)` files relative to the file that declares the spline,
/// so it gets the files with absolute paths: the document's own (the front end saw
/// only unsaved text, without a path) and `use`d ones, which the front end resolved
/// relative to the document's directory.
fn lower(
    analysis: &Analysis,
    root: FileId,
    path: Option<&Path>,
    dir: Option<&Path>,
) -> Vec<Diagnostic> {
    let old = &analysis.files;
    let mut files = SourceFiles::default();
    for id in 0..old.len() {
        let p = if id == root {
            path.map(Path::to_path_buf)
        } else {
            old.path(id).map(|p| match dir {
                Some(d) if p.is_relative() => d.join(p),
                _ => p.to_path_buf(),
            })
        };
        // Same order, so the same file ids: spans stay valid.
        files.add(old.name(id), old.text(id), p);
    }
    match fdc_lower::lower_with_files(analysis, &[], Some(&files)) {
        Ok(_) => Vec::new(),
        Err(errors) => errors
            .iter()
            .map(fdc_lower::LowerError::to_diagnostic)
            .collect(),
    }
}

/// The stdlib is embedded in the binary; go-to-definition needs a file the client can
/// open, so the sources are written once to a directory under the system temp dir
/// named by a hash of their text (a new stdlib gets a new directory).
pub fn stdlib_dir() -> Option<&'static Path> {
    static DIR: OnceLock<Option<PathBuf>> = OnceLock::new();
    DIR.get_or_init(|| {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        fdc_stdlib::FILES.hash(&mut h);
        let dir = std::env::temp_dir().join(format!("fdc-stdlib-{:016x}", h.finish()));
        std::fs::create_dir_all(&dir).ok()?;
        for (name, text) in fdc_stdlib::FILES {
            let p = dir.join(name);
            if std::fs::read_to_string(&p).ok().as_deref() != Some(*text) {
                // Write then rename, so that another server writing the same file at the
                // same moment never lets a reader see it half written.
                let tmp = dir.join(format!(".{name}.{}", std::process::id()));
                std::fs::write(&tmp, text).ok()?;
                std::fs::rename(&tmp, &p).ok()?;
            }
        }
        Some(dir)
    })
    .as_deref()
}

/// Which stdlib file `path` is a copy of, if it is in [`stdlib_dir`].
fn stdlib_index(path: &Path) -> Option<FileId> {
    let dir = stdlib_dir()?;
    if path.parent()? != dir {
        return None;
    }
    let name = path.file_name()?.to_str()?;
    fdc_stdlib::FILES.iter().position(|(n, _)| *n == name)
}
