//! Ending a run early without damaging its results: SIGINT (Ctrl-C) and SIGTERM only
//! set a flag (signal-hook); the result writer looks at it after each whole row, then
//! flushes, says where the run stopped and exits 130 or 143 (128 + the signal number,
//! as a shell reports a process killed by it). A second signal of the same kind ends
//! the process at once, for a step that takes too long to finish; the file then ends
//! at the last flush, which may be inside a row.
//!
//! Also the guard that keeps results off the files a model was read from.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Rust starts programs with SIGPIPE ignored, so a closed stdout (`fdc build --timings |
/// head`) makes `println!` panic. Command-line tools end quietly there instead; the
/// viewer's server keeps the Rust default (a browser that closes a connection must not
/// end it), so `main` calls this for every other command.
pub fn end_quietly_on_closed_pipe() {
    #[cfg(unix)]
    // SAFETY: called at the start of `main` before any thread exists; SIG_DFL is the
    // handler the process would have had without Rust's start-up code.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

pub struct Signals {
    int: Arc<AtomicBool>,
    term: Arc<AtomicBool>,
}

impl Signals {
    /// Installs the handlers (for the rest of the process).
    pub fn register() -> std::io::Result<Signals> {
        use signal_hook::consts::{SIGINT, SIGTERM};
        use signal_hook::flag;
        let int = Arc::new(AtomicBool::new(false));
        let term = Arc::new(AtomicBool::new(false));
        // The conditional shutdown first: it acts only when the flag is already set,
        // i.e. on the second signal.
        for (sig, f, code) in [(SIGINT, &int, 130), (SIGTERM, &term, 143)] {
            flag::register_conditional_shutdown(sig, code, Arc::clone(f))?;
            flag::register(sig, Arc::clone(f))?;
        }
        Ok(Signals { int, term })
    }

    /// The exit status and name of a signal received so far.
    pub fn received(&self) -> Option<(u8, &'static str)> {
        if self.int.load(Ordering::Relaxed) {
            Some((130, "SIGINT"))
        } else if self.term.load(Ordering::Relaxed) {
            Some((143, "SIGTERM"))
        } else {
            None
        }
    }
}

/// Whether two paths name the same existing file (also through links).
fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let (Ok(x), Ok(y)) = (std::fs::metadata(a), std::fs::metadata(b)) {
            return x.dev() == y.dev() && x.ino() == y.ino();
        }
        false
    }
    #[cfg(not(unix))]
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

/// The input `out` would overwrite, if any.
pub fn overwritten_input<'a>(out: &Path, inputs: &'a [PathBuf]) -> Option<&'a PathBuf> {
    inputs.iter().find(|i| same_file(out, i))
}
