//! The front end of the fd language: lexer (logos), parser (lalrpop), AST with spans,
//! name resolution across `use`d files and the standard library, type checking and
//! diagnostics (codespan-reporting).
//!
//! Entry points: [`analyze_file`] and [`analyze_source`] return an [`Analysis`]: the
//! files, the parsed modules, a resolved [`Model`] (every element type with its
//! parameters, connections and statements; every instance; params, inputs, functions,
//! gravity, simulate settings), the type of every checked expression, and diagnostics.
//!
//! **Architecture invariant:** the front end never fails and never panics. It returns a
//! (possibly partial) AST plus diagnostics, so the language server can work on
//! half-typed text. It knows nothing numeric: no IR, no LLVM, no runtime; numbers stay
//! source text. The stdlib is just more fd source (`fdc_stdlib::FILES`). A one-off
//! element `KIND NAME: on(BODIES) { ... }` is parsed into an element type `on@NAME`
//! and its instance; nothing after the parser needs to know the short form.
//!
//! [`print`] turns a tree back into source (round-trip tested). A cargo-fuzz target
//! lives in `fuzz/` (`cargo +nightly fuzz run analyze` from this directory).

pub mod ast;
pub mod builtins;
mod check;
pub mod diag;
mod excerpt;
pub mod expand;
pub mod lexer;
pub mod order;
mod parse;
pub mod print;
mod reach;
pub mod source;
pub mod stack;
#[allow(clippy::all, unused_parens, unused_imports)]
mod grammar {
    include!(concat!(env!("OUT_DIR"), "/grammar.rs"));
}

pub use builtins::SIM_KEYS;
pub use check::shapes::{ShapeField, SHAPE_COMMON, SHAPE_KINDS};
pub use check::{
    Coordinates, Decl, Definition, InstanceInfo, Model, Resolution, TypeInfo, TypeParam,
};
pub use diag::{did_you_mean, Diagnostic, Label, Severity, CODES};
pub use parse::parse_module;

use ast::{FileId, Item, Module, Span};
use codespan_reporting::files::{Files, SimpleFiles};
use serde::Serialize;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The value types of the language.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Ty {
    Scalar,
    Vec3,
    Mat3,
    Quat,
    Body,
    /// The result of a comparison: only an `if` condition.
    Bool,
    /// `[a, b, ...]` with a length other than a vec3/mat3: spline data only.
    List(usize),
    Str,
    /// A callable of one scalar made by `spline`.
    Spline,
    /// The type of an expression that already has an error (no follow-up errors).
    Error,
}

impl Ty {
    pub fn from_name(name: &str) -> Option<Ty> {
        Some(match name {
            "scalar" => Ty::Scalar,
            "vec3" => Ty::Vec3,
            "mat3" => Ty::Mat3,
            "quat" => Ty::Quat,
            "body" => Ty::Body,
            _ => return None,
        })
    }
    pub fn is_numeric(self) -> bool {
        matches!(
            self,
            Ty::Scalar | Ty::Vec3 | Ty::Mat3 | Ty::Quat | Ty::Error
        )
    }
}

impl std::fmt::Display for Ty {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Ty::Scalar => write!(f, "scalar"),
            Ty::Vec3 => write!(f, "vec3"),
            Ty::Mat3 => write!(f, "mat3"),
            Ty::Quat => write!(f, "quat"),
            Ty::Body => write!(f, "body"),
            Ty::Bool => write!(f, "condition"),
            Ty::List(n) => write!(f, "list of {n}"),
            Ty::Str => write!(f, "string"),
            Ty::Spline => write!(f, "spline"),
            Ty::Error => write!(f, "{{unknown}}"),
        }
    }
}

/// The source text of every file the analysis read (model files and stdlib).
#[derive(Clone)]
pub struct SourceFiles {
    inner: SimpleFiles<String, String>,
    paths: Vec<Option<PathBuf>>,
}

impl Default for SourceFiles {
    fn default() -> Self {
        SourceFiles {
            inner: SimpleFiles::new(),
            paths: Vec::new(),
        }
    }
}

impl SourceFiles {
    pub fn add(
        &mut self,
        name: impl Into<String>,
        text: impl Into<String>,
        path: Option<PathBuf>,
    ) -> FileId {
        self.paths.push(path);
        self.inner.add(name.into(), text.into())
    }
    pub fn len(&self) -> usize {
        self.paths.len()
    }
    pub fn is_empty(&self) -> bool {
        self.paths.is_empty()
    }
    pub fn name(&self, file: FileId) -> &str {
        self.inner
            .get(file)
            .map(|f| f.name().as_str())
            .unwrap_or("?")
    }
    pub fn text(&self, file: FileId) -> &str {
        self.inner
            .get(file)
            .map(|f| f.source().as_str())
            .unwrap_or("")
    }
    pub fn path(&self, file: FileId) -> Option<&Path> {
        self.paths.get(file).and_then(|p| p.as_deref())
    }
    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, file: FileId, offset: usize) -> (usize, usize) {
        let line = self.inner.line_index(file, offset).unwrap_or(0);
        let start = self.inner.line_range(file, line).map_or(0, |r| r.start);
        // Not codespan's column_number: it tests every byte of the line up to the
        // offset one by one, which many diagnostics on one 8 MB line make quadratic.
        let col = self
            .text(file)
            .get(start..offset)
            .map_or(1, |s| s.chars().count() + 1);
        (line + 1, col)
    }
    /// The source text under a span.
    pub fn snippet(&self, span: Span) -> &str {
        self.text(span.file).get(span.range()).unwrap_or("")
    }
}

/// How much of the standard library an analysis parses and checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Every library item: the language server completes and documents all of them.
    All,
    /// The library items the model can reach by name (`reach.rs`), for a build. The
    /// diagnostics are the ones of [`Scope::All`]: an analysis that reports anything
    /// is redone with the whole library (a suggestion for a misspelt name picks from
    /// all of it). The model's instances, and the types and functions they use, are
    /// the same; [`Model::types`] and [`Model::functions`] hold only those.
    Used,
}

/// Everything the front end knows about a model.
pub struct Analysis {
    pub files: SourceFiles,
    /// Parsed files, indexed by [`FileId`] (stdlib files come first).
    pub modules: Vec<Module>,
    pub model: Model,
    pub diagnostics: Vec<Diagnostic>,
    /// The type of every expression the checker visited, by span.
    pub types: HashMap<Span, Ty>,
    /// The declaration of every name use the checker resolved.
    pub resolution: Resolution,
    /// Model parameters the structure depends on (loop bounds, conditions, indices):
    /// a `--set` of one of them changes the instances ([`expand`]).
    pub structural: Vec<String>,
    /// The library this analysis checked: [`Scope::Used`] only if it left items out.
    pub scope: Scope,
}

impl Analysis {
    pub fn has_errors(&self) -> bool {
        self.diagnostics
            .iter()
            .any(|d| d.severity == Severity::Error)
    }
    /// All diagnostics rendered without colour, in order.
    pub fn render(&self) -> String {
        self.diagnostics
            .iter()
            .map(|d| d.render(&self.files))
            .collect()
    }
}

/// Analyzes the model in `path`; `use` paths are relative to the including file. A
/// model that cannot be read gives one E0208 without a place; one that is not UTF-8
/// an E0004 at its first bad byte.
pub fn analyze_file(path: &Path) -> Analysis {
    analyze_file_with(path, &[])
}

/// [`analyze_file`] with `--set` values of model parameters: a parameter that a loop
/// bound, an index or a condition reads changes the expanded instances.
pub fn analyze_file_with(path: &Path, overrides: &[(String, f64)]) -> Analysis {
    analyze_file_scoped(path, overrides, Scope::All)
}

/// [`analyze_file_with`], checking the library as far as `scope` says.
pub fn analyze_file_scoped(path: &Path, overrides: &[(String, f64)], scope: Scope) -> Analysis {
    let name = path.display().to_string();
    match source::read_text(path, source::MAX_SOURCE_BYTES) {
        Ok(text) => analyze(&name, &text, Some(path.to_path_buf()), overrides, scope),
        // Errors: the whole library, as any analysis with a diagnostic.
        Err(source::ReadError::NotUtf8 { lossy, offset }) => {
            let mut a = analyze(&name, "", None, &[], Scope::All);
            let id = a.files.add(name, lossy, Some(path.to_path_buf()));
            a.diagnostics.push(not_utf8(id, offset));
            a
        }
        Err(e) => {
            let mut a = analyze("<none>", "", None, &[], Scope::All);
            a.diagnostics.push(Diagnostic::error(
                "E0208",
                format!("cannot read `{}`: {e}", path.display()),
            ));
            a
        }
    }
}

/// E0004 at byte `offset` of file `id` (its text holds U+FFFD there).
fn not_utf8(id: FileId, offset: usize) -> Diagnostic {
    let span = Span {
        file: id,
        start: offset as u32,
        end: (offset + '\u{fffd}'.len_utf8()) as u32,
    };
    Diagnostic::error("E0004", "file is not valid UTF-8")
        .at(span, "first invalid byte")
        .note("fd source files are UTF-8; convert the file (e.g. `iconv -f latin1 -t utf-8`)")
}

/// Analyzes model text that has no file; `use` paths are relative to the working directory.
pub fn analyze_source(name: &str, text: &str) -> Analysis {
    analyze(name, text, None, &[], Scope::All)
}

/// [`analyze_source`] with `--set` values of model parameters ([`analyze_file_with`]).
pub fn analyze_source_with(name: &str, text: &str, overrides: &[(String, f64)]) -> Analysis {
    analyze(name, text, None, overrides, Scope::All)
}

/// [`analyze_source_with`], checking the library as far as `scope` says.
pub fn analyze_source_scoped(
    name: &str,
    text: &str,
    overrides: &[(String, f64)],
    scope: Scope,
) -> Analysis {
    analyze(name, text, None, overrides, scope)
}

fn analyze(
    name: &str,
    text: &str,
    path: Option<PathBuf>,
    overrides: &[(String, f64)],
    scope: Scope,
) -> Analysis {
    // The passes recurse once per nesting level: give them the stack that bounds.
    stack::with_compile_stack(|| {
        if let (Scope::Used, Some(index)) = (scope, reach::index()) {
            let a = analyze_here(name, text, path.clone(), overrides, Some(index));
            if a.diagnostics.is_empty() {
                return a;
            }
        }
        analyze_here(name, text, path, overrides, None)
    })
}

/// Parses a model file (not the library's), marking the library names it writes when
/// only the reachable library is parsed.
fn parse_own(
    file: FileId,
    text: &str,
    marks: Option<(&reach::Index, &mut Vec<bool>)>,
) -> (Module, Vec<Diagnostic>) {
    let lexed = lexer::lex(text);
    if let Some((index, wanted)) = marks {
        index.mark(&lexed.tokens, text, wanted);
    }
    parse::parse_lexed(file, text, lexed.tokens, &lexed.docs, &lexed.errors)
}

/// `index`: parse only the library items the model reaches (`None`: all of them).
fn analyze_here(
    name: &str,
    text: &str,
    path: Option<PathBuf>,
    overrides: &[(String, f64)],
    index: Option<&reach::Index>,
) -> Analysis {
    // Text from a file is normalized already; text from an editor may still hold lone
    // CRs, which the lexer and the line index must see as line ends.
    let normalized;
    let text = if text.contains('\r') {
        normalized = source::lone_cr_to_lf(text);
        normalized.as_str()
    } else {
        text
    };
    let mut files = SourceFiles::default();
    // The library's files come first (their ids are 0, 1, ...), parsed after the
    // model's, whose names say which library items a reachable parse keeps.
    let lib: Vec<FileId> = (fdc_stdlib::FILES.iter())
        .map(|(n, t)| files.add(format!("<stdlib>/{n}"), *t, None))
        .collect();
    let mut wanted = index.map(reach::Index::no_names);
    let (own, mut diagnostics) = read_own(&mut files, name, text, path, |id, t| {
        parse_own(id, t, index.zip(wanted.as_mut()))
    });
    let parsed = match (index, wanted) {
        (Some(index), Some(wanted)) => index.parse_reachable(wanted, &lib),
        _ => (fdc_stdlib::FILES.iter().zip(&lib))
            .map(|((_, t), &id)| parse_module(id, t))
            .collect(),
    };
    let stdlib_count = lib.len();
    let mut modules = Vec::with_capacity(stdlib_count + own.len());
    for (m, d) in parsed {
        modules.push(m);
        diagnostics.extend(d);
    }
    modules.extend(own);
    let expanded = expand::expand(&modules, overrides);
    // The files as parsed are not needed past the expansion (which copied them).
    stack::drop_aside(modules);
    diagnostics.extend(expanded.diagnostics);
    let modules = expanded.modules;
    let checked = check::check(&modules, stdlib_count);
    let bad = &expanded.bad_refs;
    diagnostics.extend(checked.diags.into_iter().filter(|d| {
        d.code != "E0201" || !d.primary.as_ref().is_some_and(|l| bad.contains(&l.span))
    }));
    // Report in source order: file by file, top to bottom (stable for equal places).
    diagnostics.sort_by_key(|d| d.primary.as_ref().map(|l| (l.span.file, l.span.start)));
    diag::cap(&mut diagnostics);
    Analysis {
        files,
        modules,
        model: checked.model,
        diagnostics,
        types: checked.types,
        resolution: checked.resolution,
        structural: expanded.structural,
        scope: if index.is_some() {
            Scope::Used
        } else {
            Scope::All
        },
    }
}

/// Adds and parses the model file `name` and, breadth-first, the files its `use` items
/// name (each read once, so cycles end): their modules and diagnostics.
fn read_own(
    files: &mut SourceFiles,
    name: &str,
    text: &str,
    path: Option<PathBuf>,
    mut parse: impl FnMut(FileId, &str) -> (Module, Vec<Diagnostic>),
) -> (Vec<Module>, Vec<Diagnostic>) {
    let mut modules = Vec::new();
    let mut diagnostics = Vec::new();
    let canonical = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let mut seen: Vec<PathBuf> = Vec::new();
    if let Some(p) = &path {
        seen.push(canonical(p));
    }
    let root = files.add(name, text, path);
    let (m, d) = parse(root, text);
    modules.push(m);
    diagnostics.extend(d);
    let mut next = 0;
    while next < modules.len() {
        let uses: Vec<(String, Span)> = modules[next]
            .items
            .iter()
            .filter_map(|i| match i {
                Item::Use { path, span } => Some((path.clone(), *span)),
                _ => None,
            })
            .collect();
        let base = files
            .path(modules[next].file)
            .and_then(|p| p.parent())
            .map(Path::to_path_buf)
            .unwrap_or_default();
        for (rel, span) in uses {
            let full = base.join(&rel);
            let key = canonical(&full);
            if seen.contains(&key) {
                continue;
            }
            match source::read_text(&full, source::MAX_SOURCE_BYTES) {
                Ok(t) => {
                    seen.push(key);
                    let id = files.add(full.display().to_string(), t.clone(), Some(full.clone()));
                    let (m, d) = parse(id, &t);
                    modules.push(m);
                    diagnostics.extend(d);
                }
                Err(source::ReadError::NotUtf8 { lossy, offset }) => {
                    seen.push(key);
                    let id = files.add(full.display().to_string(), lossy, Some(full.clone()));
                    diagnostics.push(not_utf8(id, offset).also(span, "used here"));
                }
                Err(e) => diagnostics.push(
                    Diagnostic::error("E0208", format!("cannot read `{rel}`: {e}"))
                        .at(span, format!("looked for `{}`", full.display()))
                        .note("`use` paths are relative to the file that contains them"),
                ),
            }
        }
        next += 1;
    }
    (modules, diagnostics)
}
