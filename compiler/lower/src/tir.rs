//! Tyre property files (`.tir`, the TYDEX/MDI text format of Magic Formula tyres) and
//! the builtin `tir("file.tir", "NAME")` that reads one coefficient at build time.
//!
//! The format, as far as a coefficient lookup needs it: `[SECTION]` header lines,
//! `NAME = value` lines, comments from `!` or `$` to the end of a line (a `$` also
//! ends a value: `PCX1 = 1.65 $shape factor`), and other lines (tables such as the
//! `[SHAPE]` section's `{radial width}` rows) which are skipped. Names are matched
//! without regard to case; the MF 5.2 coefficient names are unique across sections,
//! so a name alone finds its value (a name given twice with different values is an
//! error rather than a silent choice). Values may be quoted strings (`FILE_TYPE =
//! 'tir'`); asking for one of those is a malformed coefficient.

use crate::expr::Lowerer;
use crate::value::Val;
use crate::LowerError;
use fdc_frontend::ast::{Expr, ExprKind, Span};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// One `NAME = value` line: the value's text and its line number (1-based).
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub section: String,
    pub text: String,
    pub line: usize,
}

/// The `NAME = value` lines of a property file by upper-case name (all occurrences).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TirFile {
    pub entries: HashMap<String, Vec<Entry>>,
}

/// Why a coefficient could not be taken from a file.
#[derive(Clone, Debug, PartialEq)]
pub enum Lookup {
    Missing,
    /// The value text is not a finite number.
    NotNumber(Entry),
    /// Two different values (the first two).
    Twice(Entry, Entry),
}

impl TirFile {
    pub fn parse(text: &str) -> TirFile {
        let mut file = TirFile::default();
        let mut section = String::new();
        for (i, raw) in text.lines().enumerate() {
            let line = raw.split(['!', '$']).next().unwrap_or("").trim();
            if let Some(rest) = line.strip_prefix('[') {
                section = rest.trim_end_matches(']').trim().to_ascii_uppercase();
                continue;
            }
            let Some((name, value)) = line.split_once('=') else {
                continue;
            };
            let name = name.trim();
            if name.is_empty() || name.contains(char::is_whitespace) {
                continue;
            }
            file.entries
                .entry(name.to_ascii_uppercase())
                .or_default()
                .push(Entry {
                    section: section.clone(),
                    text: value.trim().to_string(),
                    line: i + 1,
                });
        }
        file
    }

    /// The number given for `name` (any case).
    pub fn number(&self, name: &str) -> Result<f64, Lookup> {
        let all = self
            .entries
            .get(&name.to_ascii_uppercase())
            .ok_or(Lookup::Missing)?;
        let first = &all[0];
        let parse = |e: &Entry| e.text.parse::<f64>().ok().filter(|v| v.is_finite());
        let v = parse(first).ok_or_else(|| Lookup::NotNumber(first.clone()))?;
        if let Some(other) = all[1..].iter().find(|e| parse(e) != Some(v)) {
            return Err(Lookup::Twice(first.clone(), other.clone()));
        }
        Ok(v)
    }
}

/// Files read so far in one lowering, by path (each file is read and parsed once).
pub type TirCache = HashMap<PathBuf, Result<Rc<TirFile>, String>>;

fn error(span: Span, code: &'static str, message: String, label: &str, hint: &str) -> LowerError {
    LowerError {
        span: Some(span),
        message,
        code: Some(code),
        label: Some(label.to_string()),
        hint: Some(hint.to_string()),
        warning: false,
    }
}

/// A file named in a model that cannot be read: where relative paths start from.
pub(crate) fn unreadable(
    span: Span,
    code: &'static str,
    what: &str,
    path: &str,
    why: String,
    dir: &Path,
) -> LowerError {
    let dir = if dir.as_os_str().is_empty() {
        ".".to_string()
    } else {
        dir.display().to_string()
    };
    error(
        span,
        code,
        format!("cannot read the {what} `{path}`: {why}"),
        "this file",
        &format!("the path is relative to the directory of the model file that names it (`{dir}`)"),
    )
}

impl Lowerer<'_, '_, '_> {
    /// `tir("file.tir", "NAME")`: the coefficient as a constant (the checker has made
    /// sure both arguments are string literals).
    pub(crate) fn tir_call(&mut self, args: &[Expr], span: Span) -> Option<Val> {
        let [file, name] = args else {
            return self.error(span, "`tir` takes a file name and a coefficient name");
        };
        let (ExprKind::Str(path), ExprKind::Str(key)) = (&file.kind, &name.kind) else {
            return self.error(span, "the arguments of `tir` are two strings");
        };
        let parsed = match self.tir_file(path, file.span) {
            Ok(f) => f,
            Err(e) => {
                self.errors.push(e);
                return None;
            }
        };
        let shown = path.as_str();
        let e = match parsed.number(key) {
            Ok(v) => return Some(Val::S(self.graph().constant(v))),
            Err(Lookup::Missing) => error(
                name.span,
                "E0916",
                format!("the tyre property file `{shown}` has no coefficient `{key}`"),
                "not in the file",
                "a coefficient is a line `NAME = value` in any [SECTION] (names in any case)",
            ),
            Err(Lookup::NotNumber(en)) => error(
                name.span,
                "E0917",
                format!(
                    "`{key}` in `{shown}` (line {}, [{}]) is `{}`, not a finite number",
                    en.line, en.section, en.text
                ),
                "malformed coefficient",
                "a coefficient's value is one number; `!` and `$` start a comment",
            ),
            Err(Lookup::Twice(a, b)) => error(
                name.span,
                "E0917",
                format!(
                    "`{key}` is given twice in `{shown}` with different values: `{}` on line {} and `{}` on line {}",
                    a.text, a.line, b.text, b.line
                ),
                "ambiguous coefficient",
                "keep one line per coefficient",
            ),
        };
        self.errors.push(e);
        None
    }

    /// `path` relative to the directory of the model file the call at `span` is in, or
    /// the error `code` (a `what` cannot be read) when that file's location is unknown.
    pub(crate) fn relative_path(
        &self,
        path: &str,
        span: Span,
        code: &'static str,
        what: &str,
    ) -> Result<PathBuf, LowerError> {
        match self.globals.files.and_then(|f| f.path(span.file)) {
            Some(model) => Ok(model.parent().unwrap_or(Path::new("")).join(path)),
            None => Err(unreadable(
                span,
                code,
                what,
                path,
                "the location of the model file is unknown".into(),
                Path::new(""),
            )),
        }
    }

    /// The parsed file `path`, relative to the directory of the file the call is in.
    fn tir_file(&mut self, path: &str, span: Span) -> Result<Rc<TirFile>, LowerError> {
        let what = "tyre property file";
        let full = self.relative_path(path, span, "E0915", what)?;
        let dir = full.parent().unwrap_or(Path::new("")).to_path_buf();
        let mut cache = self.globals.tir.borrow_mut();
        let entry = cache.entry(full.clone()).or_insert_with(|| {
            fdc_frontend::source::read_text(&full, fdc_frontend::source::MAX_DATA_BYTES)
                .map(|text| Rc::new(TirFile::parse(&text)))
                .map_err(|e| e.to_string())
        });
        match entry {
            Ok(f) => Ok(f.clone()),
            Err(why) => {
                let why = why.clone();
                drop(cache);
                Err(unreadable(span, "E0915", what, path, why, &dir))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_comments_strings_and_tables() {
        let f = TirFile::parse(
            "[MDI_HEADER]\nFILE_TYPE = 'tir'\n! a comment = 3\n$---- [not a section]\n\
             [LONGITUDINAL_COEFFICIENTS]\n pcx1 = 1.65 $Shape factor\nPDX1=1.2!peak\n\
             [SHAPE]\n{radial width}\n 1.0 0.0\nPEX1 = -0.5e0\nPEX2 = -0.5\nPEX2 = -0.50\n\
             PKX1 = 1.0\nPKX1 = 2.0\nBAD = 1.0 2.0\n",
        );
        assert_eq!(f.number("PCX1"), Ok(1.65));
        assert_eq!(f.number("pdx1"), Ok(1.2));
        assert_eq!(f.number("PEX1"), Ok(-0.5));
        assert_eq!(f.number("PEX2"), Ok(-0.5)); // twice, the same value
        assert_eq!(f.entries["PCX1"][0].section, "LONGITUDINAL_COEFFICIENTS");
        assert_eq!(f.entries["PCX1"][0].line, 6);
        assert!(
            matches!(f.number("PKX1"), Err(Lookup::Twice(a, b)) if a.line == 14 && b.line == 15)
        );
        assert!(matches!(f.number("FILE_TYPE"), Err(Lookup::NotNumber(e)) if e.text == "'tir'"));
        assert!(matches!(f.number("BAD"), Err(Lookup::NotNumber(_))));
        assert_eq!(f.number("A"), Err(Lookup::Missing));
        assert_eq!(f.number("NOT"), Err(Lookup::Missing));
    }
}
