//! Diagnostics: a serializable structure (the language server reuses it), the table
//! of stable codes, rendering through codespan-reporting, and "did you mean".

use crate::ast::Span;
use crate::excerpt::Excerpt;
use crate::SourceFiles;
use codespan_reporting::diagnostic as cs;
use codespan_reporting::term;
use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Label {
    pub span: Span,
    pub message: String,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Diagnostic {
    pub severity: Severity,
    /// Stable code, documented in `docs/errors.md`.
    pub code: &'static str,
    pub message: String,
    /// `None` only for problems that have no place in a file (an unreadable file).
    pub primary: Option<Label>,
    pub secondary: Vec<Label>,
    pub notes: Vec<String>,
}

impl Diagnostic {
    pub fn error(code: &'static str, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            code,
            message: message.into(),
            primary: None,
            secondary: Vec::new(),
            notes: Vec::new(),
        }
    }
    pub fn warning(code: &'static str, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(code, message)
        }
    }
    pub fn at(mut self, span: Span, label: impl Into<String>) -> Diagnostic {
        self.primary = Some(Label {
            span,
            message: label.into(),
        });
        self
    }
    pub fn also(mut self, span: Span, label: impl Into<String>) -> Diagnostic {
        self.secondary.push(Label {
            span,
            message: label.into(),
        });
        self
    }
    pub fn note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }
    /// Adds "did you mean `x`?" when a candidate is close to `name`.
    pub fn suggest<'a>(self, name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Self {
        match did_you_mean(name, candidates) {
            Some(s) => self.note(format!("did you mean `{s}`?")),
            None => self,
        }
    }

    /// As codespan renders it against `view`, whose long lines show only a window:
    /// the labels are clipped into those windows.
    fn to_codespan(&self, view: &mut Excerpt) -> cs::Diagnostic<usize> {
        let mut d = match self.severity {
            Severity::Error => cs::Diagnostic::error(),
            Severity::Warning => cs::Diagnostic::warning(),
        }
        .with_code(self.code)
        .with_message(&self.message)
        .with_notes(self.notes.clone());
        let mut labels = Vec::new();
        if let Some(p) = &self.primary {
            let range = view.clip(p.span.file, p.span.range());
            labels.push(cs::Label::primary(p.span.file, range).with_message(&p.message));
        }
        for s in &self.secondary {
            let range = view.clip(s.span.file, s.span.range());
            labels.push(cs::Label::secondary(s.span.file, range).with_message(&s.message));
        }
        d = d.with_labels(labels);
        d
    }

    /// Renders without colour, as `fdc check` prints it and snapshots record it.
    pub fn render(&self, files: &SourceFiles) -> String {
        let mut out = term::termcolor::NoColor::new(Vec::new());
        let config = term::Config::default();
        let mut view = Excerpt::new(files);
        let d = self.to_codespan(&mut view);
        if term::emit(&mut out, &config, &view, &d).is_err() {
            // A span outside its file would be a front-end bug; still say something.
            return format!(
                "{}[{}]: {}\n",
                self.severity_word(),
                self.code,
                self.message
            );
        }
        String::from_utf8_lossy(&out.into_inner()).into_owned()
    }

    /// Renders to a colour terminal writer.
    pub fn emit(
        &self,
        writer: &mut dyn term::termcolor::WriteColor,
        files: &SourceFiles,
    ) -> std::io::Result<()> {
        let config = term::Config::default();
        let mut view = Excerpt::new(files);
        let d = self.to_codespan(&mut view);
        term::emit(writer, &config, &view, &d).map_err(|e| std::io::Error::other(e.to_string()))
    }

    pub fn severity_word(&self) -> &'static str {
        match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// Most diagnostics one analysis reports; the rest are counted in one more (E0005).
/// Past a hundred mistakes the next ones are rarely news, and every one costs output
/// (a snippet of its line) and, in an editor, a squiggle.
pub const MAX_DIAGNOSTICS: usize = 100;

/// Keeps the first [`MAX_DIAGNOSTICS`] of `diags` (in the order given: source order)
/// and replaces the rest by one diagnostic at the first of them that says how many
/// were left out: an error when any of them is one.
pub fn cap(diags: &mut Vec<Diagnostic>) {
    if diags.len() <= MAX_DIAGNOSTICS {
        return;
    }
    let rest = diags.split_off(MAX_DIAGNOSTICS);
    let errors = rest.iter().any(|d| d.severity == Severity::Error);
    let word = if errors { "errors" } else { "warnings" };
    let message = format!("{} more {word} not shown", rest.len());
    let mut d = if errors {
        Diagnostic::error("E0005", message)
    } else {
        Diagnostic::warning("E0005", message)
    };
    d = d.note(format!(
        "at most {MAX_DIAGNOSTICS} are reported; fix the ones above and check again"
    ));
    if let Some(first) = rest.iter().find_map(|d| d.primary.as_ref()) {
        d = d.at(first.span, "the first of them");
    }
    diags.push(d);
}

/// The closest candidate by edit distance, if it is close enough to be a likely typo.
pub fn did_you_mean<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<String> {
    // One edit per three characters; names of one or two characters only match
    // up to case (`l` for `L`), else every short name would suggest every other.
    let limit = name.chars().count() / 3;
    let lower = name.to_lowercase();
    candidates
        .into_iter()
        .filter(|c| *c != name)
        .map(|c| (strsim::levenshtein(&lower, &c.to_lowercase()), c))
        .filter(|(d, _)| *d <= limit)
        .min_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(b.1)))
        .map(|(_, c)| c.to_string())
}

/// Every diagnostic code with a one-line title. `docs/errors.md` documents each one
/// (a test keeps the two in step).
pub const CODES: &[(&str, &str)] = &[
    ("E0001", "unexpected character"),
    ("E0002", "unterminated string"),
    ("E0003", "statement too deeply nested"),
    ("E0004", "file is not valid UTF-8"),
    ("E0005", "too many diagnostics"),
    ("E0101", "unexpected token"),
    ("E0102", "unexpected end of file"),
    ("E0201", "unknown name"),
    ("E0202", "duplicate definition"),
    ("E0203", "unknown element type"),
    ("E0204", "unknown field"),
    ("E0205", "missing required field"),
    ("E0206", "field given twice"),
    ("E0207", "instance kind does not match its type"),
    ("E0208", "cannot read file"),
    ("E0209", "unknown function"),
    ("E0210", "unknown simulate setting"),
    ("E0211", "unknown body member"),
    ("E0212", "name used before its definition"),
    ("E0213", "reserved name"),
    ("E0214", "invalid simulate setting value"),
    ("E0215", "invalid spline"),
    ("E0216", "unknown type"),
    ("E0220", "unknown shape kind"),
    ("E0301", "type mismatch"),
    ("E0302", "invalid operand types"),
    ("E0303", "wrong number of arguments"),
    ("E0304", "constraint is not a scalar"),
    ("E0305", "load has the wrong type"),
    ("E0306", "expected a body"),
    ("E0307", "wrong number of connections"),
    ("E0308", "comparison outside an `if` condition"),
    ("E0309", "`if` branches have different types"),
    ("E0310", "no such component"),
    ("E0311", "not callable"),
    ("E0312", "list or string where a value is expected"),
    ("E0401", "statement not allowed here"),
    ("E0402", "coordinates missing or declared twice"),
    ("E0403", "parameter needs a type or a default"),
    ("E0404", "element type contains itself"),
    ("E0601", "index out of range"),
    ("E0602", "not a whole number"),
    ("E0603", "not known when the model is built"),
    ("E0604", "array used without an index"),
    (
        "W0001",
        "non-smooth function of the state in a force law or constraint",
    ),
];
