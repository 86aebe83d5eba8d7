//! Problems found in a `.fds` file: each has a byte range in the file, so its line and
//! column, a label for the excerpt and a hint. The `fdc` binary turns them into the
//! front end's diagnostics (codes E1601–E1606, `docs/errors.md`).

use std::ops::Range;

/// What went wrong; selects the stable code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Not the block/line structure of the format.
    Syntax,
    /// A block category, type or key the format (as implemented) does not have.
    Unknown,
    /// A value that does not parse or is out of range (also: a key given twice, a
    /// required key missing).
    Value,
    /// A reference to an ID, parameter, measure or spline no block defines.
    Reference,
    /// Valid in the format but not supported by the importer.
    Unsupported,
    /// A spline data file that cannot be read.
    File,
}

impl Kind {
    pub fn code(self) -> &'static str {
        match self {
            Kind::Syntax => "E1601",
            Kind::Unknown => "E1602",
            Kind::Value => "E1603",
            Kind::Reference => "E1604",
            Kind::Unsupported => "E1605",
            Kind::File => "E1606",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Error {
    pub kind: Kind,
    pub span: Range<usize>,
    pub message: String,
    pub label: String,
    pub hint: String,
}

impl Error {
    pub fn new(
        kind: Kind,
        span: Range<usize>,
        message: impl Into<String>,
        label: impl Into<String>,
        hint: &str,
    ) -> Error {
        Error {
            kind,
            span,
            message: message.into(),
            label: label.into(),
            hint: hint.to_string(),
        }
    }

    /// `FILE:LINE:COL: error[CODE]: MESSAGE` plus the hint, for plain-text output.
    pub fn render(&self, file: &str, text: &str) -> String {
        let (line, col) = line_col(text, self.span.start);
        format!(
            "{file}:{line}:{col}: error[{}]: {} ({})\n  hint: {}\n",
            self.kind.code(),
            self.message,
            self.label,
            self.hint
        )
    }
}

/// 1-based line and column (in characters) of a byte offset (clamped to the text).
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let mut at = offset.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[start..].chars().count() + 1)
}
