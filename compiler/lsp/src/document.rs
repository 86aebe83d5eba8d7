//! One open document: its text, its analysis, and the mapping from the front end's
//! file ids to URIs (the document itself, files it `use`s, and the stdlib).

use crate::position::LineIndex;
use fdc_frontend::ast::{FileId, Span};
use fdc_frontend::{analyze_source, Analysis};
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
            root: fdc_stdlib::FILES.len(),
        }
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
