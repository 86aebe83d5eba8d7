//! The source a rendered diagnostic shows: every line as it is, except that a line
//! longer than [`LONG_LINE`] bytes shows only a window of it (around a label, or its
//! start). Without this a diagnostic on an 8 MB line prints 8 MB of source and as many
//! carets, and a hundred of them print a gigabyte.

use crate::{ast::FileId, SourceFiles};
use codespan_reporting::files::{Error, Files};
use std::collections::HashMap;
use std::ops::Range;

/// Lines longer than this (in bytes) are shown as a window of at most this many.
pub const LONG_LINE: usize = 400;
/// Bytes shown before a label's start (after its end, on the line where it ends).
const CONTEXT: usize = 80;

/// [`SourceFiles`] as one diagnostic's renderer sees them.
pub struct Excerpt<'a> {
    files: &'a SourceFiles,
    /// The shown part of each long line a label touches, by (file, line index).
    windows: HashMap<(FileId, usize), Range<usize>>,
}

impl<'a> Excerpt<'a> {
    pub fn new(files: &'a SourceFiles) -> Excerpt<'a> {
        Excerpt {
            files,
            windows: HashMap::new(),
        }
    }

    /// The part of `range` the renderer may show: its ends moved into the windows of
    /// long lines (a window opens around the first label end that needs one, so list
    /// the primary label first).
    pub fn clip(&mut self, file: FileId, range: Range<usize>) -> Range<usize> {
        let start = self.place(file, range.start, true);
        let end = self
            .place(file, range.end.max(range.start), false)
            .max(start);
        start..end
    }

    /// `at` moved into the window of its line, opening one (starting `CONTEXT` bytes
    /// before a start, ending `CONTEXT` bytes after an end) if the line is long.
    fn place(&mut self, file: FileId, at: usize, is_start: bool) -> usize {
        let Ok(line) = self.files.inner.line_index(file, at) else {
            return at;
        };
        let Ok(full) = self.files.inner.line_range(file, line) else {
            return at;
        };
        if full.len() <= LONG_LINE {
            return at;
        }
        let text = self.files.text(file);
        let window = self.windows.entry((file, line)).or_insert_with(|| {
            let from = if is_start {
                at.saturating_sub(CONTEXT)
            } else {
                at.saturating_sub(LONG_LINE - CONTEXT)
            }
            .max(full.start);
            let to = (from + LONG_LINE).min(full.end);
            boundary(text, from)..boundary(text, to)
        });
        boundary(text, at.clamp(window.start, window.end))
    }
}

/// The nearest char boundary at or before `at`.
fn boundary(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

impl<'a> Files<'a> for Excerpt<'_> {
    type FileId = FileId;
    type Name = &'a str;
    type Source = &'a str;

    fn name(&'a self, id: FileId) -> Result<&'a str, Error> {
        Ok(self.files.name(id))
    }

    fn source(&'a self, id: FileId) -> Result<&'a str, Error> {
        Ok(self.files.text(id))
    }

    fn line_index(&'a self, id: FileId, byte_index: usize) -> Result<usize, Error> {
        self.files.inner.line_index(id, byte_index)
    }

    fn column_number(
        &'a self,
        id: FileId,
        _line: usize,
        byte_index: usize,
    ) -> Result<usize, Error> {
        Ok(self.files.line_col(id, byte_index).1)
    }

    /// A long line's window, or its first [`LONG_LINE`] bytes when no label is on it
    /// (a context line).
    fn line_range(&'a self, id: FileId, line: usize) -> Result<Range<usize>, Error> {
        if let Some(w) = self.windows.get(&(id, line)) {
            return Ok(w.clone());
        }
        let full = self.files.inner.line_range(id, line)?;
        if full.len() <= LONG_LINE {
            return Ok(full);
        }
        let text = self.files.text(id);
        Ok(full.start..boundary(text, full.start + LONG_LINE))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ast::Span, Diagnostic};

    fn one_line_file(text: &str) -> (SourceFiles, FileId) {
        let mut files = SourceFiles::default();
        let id = files.add("m.fd", text, None);
        (files, id)
    }

    /// A diagnostic in the middle of a 1 MB line shows a window around its label:
    /// output bounded by the window, not the line, and the column still the real one.
    #[test]
    fn a_label_on_a_megabyte_line_shows_a_window_with_its_true_column() {
        let n = 1 << 20;
        let text = format!("{}$${}\n", "a".repeat(n / 2), "b".repeat(n / 2));
        let (files, id) = one_line_file(&text);
        let at = n / 2;
        let span = Span {
            file: id,
            start: at as u32,
            end: at as u32 + 2,
        };
        let out = Diagnostic::error("E0001", "unexpected character")
            .at(span, "here")
            .render(&files);
        assert!(out.len() < 4 * LONG_LINE, "{} bytes", out.len());
        assert!(out.contains(&format!("m.fd:1:{}", at + 1)), "{out}");
        // The caret line puts `^^` under the two `$` of the window.
        let src = out.lines().find(|l| l.contains("$$")).unwrap();
        let carets = out.lines().find(|l| l.contains("^^")).unwrap();
        assert_eq!(src.find("$$"), carets.find("^^"), "{out}");
    }

    /// A label that covers a whole 1 MB line is cut to the window, carets included.
    #[test]
    fn a_label_over_a_whole_long_line_is_cut_to_the_window() {
        let text = format!("{}\n", "$".repeat(1 << 20));
        let (files, id) = one_line_file(&text);
        let span = Span {
            file: id,
            start: 0,
            end: 1 << 20,
        };
        let out = Diagnostic::error("E0001", "unexpected character")
            .at(span, "here")
            .render(&files);
        assert!(out.len() < 4 * LONG_LINE, "{} bytes", out.len());
        let carets = out.lines().find(|l| l.contains('^')).unwrap();
        assert_eq!(carets.matches('^').count(), LONG_LINE, "{out}");
    }
}
