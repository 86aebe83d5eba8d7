//! The answers: diagnostics, hover, definition, completion and document symbols, each a
//! pure function of a [`Document`] and a byte offset.

use crate::document::Document;
use crate::lookup::{self, Decl, Scope, Target};
use crate::position::LineIndex;
use fdc_frontend::ast::{Expr, Item, Kind, Module, Span, StmtKind};
use fdc_frontend::{builtins, Severity, TypeInfo};
use lsp_types::*;
use std::collections::BTreeMap;

mod completion;
mod indexed;
pub use completion::completion;

const KINDS: &[Kind] = &[
    Kind::Body,
    Kind::Joint,
    Kind::Force,
    Kind::Driver,
    Kind::Sensor,
    Kind::Element,
];

/// The diagnostics of an analysis grouped by the URI of their file (the document
/// always has an entry, empty when it is clean).
pub fn diagnostics(doc: &Document) -> BTreeMap<Url, Vec<Diagnostic>> {
    let mut out: BTreeMap<Url, Vec<Diagnostic>> = BTreeMap::new();
    out.insert(doc.uri.clone(), Vec::new());
    if doc.root < fdc_stdlib::FILES.len() {
        return out;
    }
    let mut indexes: BTreeMap<usize, LineIndex> = BTreeMap::new();
    for d in doc.analysis.diagnostics.iter().chain(&doc.lowering) {
        // A problem with no place (an unreadable file) is shown at the top of the document.
        let (file, start, end) = match &d.primary {
            Some(l) => (l.span.file, l.span.start as usize, l.span.end as usize),
            None => (doc.root, 0, 0),
        };
        let Some(uri) = doc.file_uri(file) else {
            continue;
        };
        let text = doc.file_text(file);
        let idx = indexes.entry(file).or_insert_with(|| LineIndex::new(text));
        let mut message = d.message.clone();
        if let Some(l) = &d.primary {
            if !l.message.is_empty() && l.message != d.message {
                message.push_str(&format!("\n{}", l.message));
            }
        }
        for n in &d.notes {
            message.push_str(&format!("\nnote: {n}"));
        }
        let related: Vec<DiagnosticRelatedInformation> = d
            .secondary
            .iter()
            .filter_map(|l| {
                Some(DiagnosticRelatedInformation {
                    location: doc.location(l.span)?,
                    message: l.message.clone(),
                })
            })
            .collect();
        out.entry(uri).or_default().push(Diagnostic {
            range: idx.range(text, start, end),
            severity: Some(match d.severity {
                Severity::Error => DiagnosticSeverity::ERROR,
                Severity::Warning => DiagnosticSeverity::WARNING,
            }),
            code: Some(NumberOrString::String(d.code.to_string())),
            source: Some("fdc".into()),
            message,
            related_information: (!related.is_empty()).then_some(related),
            ..Default::default()
        });
    }
    out
}

fn root_module(doc: &Document) -> Option<&Module> {
    doc.analysis.modules.get(doc.root)
}

fn snippet<'a>(doc: &'a Document, e: &Expr) -> &'a str {
    doc.file_text(e.span.file).get(e.span.range()).unwrap_or("")
}

fn type_of(doc: &Document, e: &Expr) -> Option<String> {
    doc.analysis.types.get(&e.span).map(|t| t.to_string())
}

/// `joint revolute(b1: body, b2: body = ground)`
fn type_signature(doc: &Document, t: &TypeInfo) -> String {
    let conns: Vec<String> = t
        .connections
        .iter()
        .map(|c| match &c.default {
            Some(d) => format!("{}: {} = {}", c.name.name, c.ty.name, snippet(doc, d)),
            None => format!("{}: {}", c.name.name, c.ty.name),
        })
        .collect();
    format!("{} {}({})", t.kind.keyword(), t.name, conns.join(", "))
}

fn type_markdown(doc: &Document, t: &TypeInfo) -> String {
    let mut s = format!("```fd\n{}\n```\n", type_signature(doc, t));
    if let Some(d) = &t.doc {
        s.push_str(&format!("\n{}\n", d.trim()));
    }
    if !t.params.is_empty() {
        s.push_str("\nFields:\n");
        for p in &t.params {
            s.push_str(&format!("- {}", param_line(doc, p)));
            if let Some(d) = &p.doc {
                s.push_str(&format!(" — {}", d.trim()));
            }
            s.push('\n');
        }
    }
    if t.stdlib {
        s.push_str("\n(standard library)\n");
    }
    s
}

/// `` `at`: vec3 (required) `` or `` `axis`: vec3 = [0, 0, 1] ``
fn param_line(doc: &Document, p: &fdc_frontend::TypeParam) -> String {
    match &p.default {
        Some(d) => format!("`{}`: {} = `{}`", p.name, p.ty, snippet(doc, d)),
        None => format!("`{}`: {} (required)", p.name, p.ty),
    }
}

fn decl_markdown(doc: &Document, d: Decl<'_>) -> String {
    let ty = |e: &Expr| type_of(doc, e).unwrap_or_else(|| "?".into());
    let (head, docstr) = match d {
        Decl::Param(p, input) => {
            let word = if input { "input" } else { "param" };
            let t =
                p.ty.as_ref()
                    .map(|t| t.name.clone())
                    .or_else(|| p.default.as_ref().map(ty))
                    .unwrap_or_else(|| "?".into());
            let default = p
                .default
                .as_ref()
                .map(|e| format!(" = {}", snippet(doc, e)))
                .unwrap_or_default();
            (
                format!("{word} {}: {t}{default}", p.name.name),
                p.doc.clone(),
            )
        }
        Decl::Let(n, t, v) => (
            format!(
                "let {}: {}",
                n.name,
                t.map(|t| t.name.clone()).unwrap_or_else(|| ty(v))
            ),
            None,
        ),
        Decl::Conn(c) => (format!("connection {}: {}", c.name.name, c.ty.name), None),
        Decl::FnArg(n, t) => (format!("argument {}: {}", n.name, t.name), None),
        Decl::Fn(f) => {
            let ret = f
                .ret
                .as_ref()
                .map(|r| r.name.clone())
                .unwrap_or_else(|| ty(&f.body));
            (
                format!(
                    "fn {}({}): {ret}",
                    f.name.name,
                    fdc_frontend::print::fn_args(f)
                ),
                f.doc.clone(),
            )
        }
        Decl::Spline(s) => (
            format!("spline {} ({})", s.name.name, s.method.name),
            s.doc.clone(),
        ),
        Decl::Instance(i) => {
            if let Some(t) = doc.analysis.model.types.get(&i.ty.name) {
                let mut s = format!(
                    "```fd\n{} {}: {}\n```\n\n",
                    i.kind.keyword(),
                    i.name.name,
                    i.ty.name
                );
                if let Some(f) = indexed::family_markdown(doc, i) {
                    s.push_str(&f);
                    s.push('\n');
                }
                s.push_str(&type_markdown(doc, t));
                return s;
            }
            (
                format!("{} {}: {}", i.kind.keyword(), i.name.name, i.ty.name),
                i.doc.clone(),
            )
        }
        Decl::State(n, v) => (format!("state {}: {}", n.name, ty(v)), None),
        Decl::Coord(c) => (format!("coordinate {}: {}", c.name.name, c.ty.name), None),
        Decl::Type(t) => match doc.analysis.model.types.get(&t.name.name) {
            Some(info) => return type_markdown(doc, info),
            None => (
                format!("{} {}", t.kind.keyword(), t.name.name),
                t.doc.clone(),
            ),
        },
        Decl::Output(n, v) => (format!("output {}: {}", n.name, ty(v)), None),
    };
    let mut s = format!("```fd\n{head}\n```\n");
    if let Some(d) = docstr {
        s.push_str(&format!("\n{}\n", d.trim()));
    }
    s
}

/// The element type named by an instance (in the document or in a nested instance).
fn instance_type<'a>(doc: &'a Document, name: &str) -> Option<&'a TypeInfo> {
    doc.analysis.model.types.get(name)
}

pub fn hover(doc: &Document, offset: usize) -> Option<Hover> {
    let module = root_module(doc)?;
    let target = lookup::target_at(module, offset)?;
    let (value, span) = match target {
        Target::Expr(e) => {
            let ty = type_of(doc, e);
            let text = match &e.kind {
                fdc_frontend::ast::ExprKind::Name(n) => match resolved_decl(doc, e.span, n) {
                    Some(d) => {
                        let mut s = format!("`{n}`: {}\n\n", ty.unwrap_or_else(|| "?".into()));
                        s.push_str(&decl_markdown(doc, d));
                        s
                    }
                    None => match builtins::VALUES.iter().find(|(b, _)| b == n) {
                        Some((_, what)) => format!("`{n}`: {what}"),
                        None => format!("`{n}`: {}", ty?),
                    },
                },
                _ => format!("```fd\n{}\n```\ntype: {}", snippet(doc, e), ty?),
            };
            (text, e.span)
        }
        Target::CallName(name, call) => {
            let ty = type_of(doc, call).unwrap_or_else(|| "?".into());
            let called = match doc.analysis.resolution.get(name.span, &name.name) {
                Some(fdc_frontend::Decl::Fn(i)) => doc.analysis.model.functions.get(*i),
                _ => None,
            };
            let text = if let Some(f) = called {
                decl_markdown(doc, Decl::Fn(f))
            } else if let Some(b) = builtins::function(&name.name) {
                format!("```fd\n{}\n```\nbuiltin: {}\n\nresult: {ty}", b.call, b.doc)
            } else {
                format!("`{}`: {ty}", name.name)
            };
            (text, name.span)
        }
        Target::Member(name, e) => (format!("`{}`: {}", name.name, type_of(doc, e)?), name.span),
        Target::TypeName(ident) => (
            type_markdown(doc, instance_type(doc, &ident.name)?),
            ident.span,
        ),
        Target::FieldName(ident, inst) => {
            let t = instance_type(doc, &inst.ty.name)?;
            let p = t.param(&ident.name)?;
            let mut s = format!("{}\n\nfield of `{}`", param_line(doc, p), t.name);
            if let Some(d) = &p.doc {
                s.push_str(&format!("\n\n{}", d.trim()));
            }
            (s, ident.span)
        }
        Target::Decl(d) => (decl_markdown(doc, d), d.ident().span),
        Target::Use(_) => return None,
    };
    let text = doc.file_text(span.file);
    Some(Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value,
        }),
        range: Some(LineIndex::new(text).range(text, span.start as usize, span.end as usize)),
    })
}

/// The declaring syntax of the name used at `span`, as the checker resolved it: a
/// top-level declaration by its index in the model, a local by the place of its
/// declaring name (loop copies share places, so the name tells them apart).
fn resolved_decl<'a>(doc: &'a Document, span: Span, name: &str) -> Option<Decl<'a>> {
    use fdc_frontend::Decl as D;
    let (m, modules) = (&doc.analysis.model, &doc.analysis.modules);
    Some(match doc.analysis.resolution.get(span, name)? {
        D::Param(i) => Decl::Param(m.params.get(*i)?, false),
        D::Input(i) => Decl::Param(m.inputs.get(*i)?, true),
        D::Fn(i) => Decl::Fn(m.functions.get(*i)?),
        D::Spline(i) => Decl::Spline(m.splines.get(*i)?),
        D::Instance(i) => Decl::Instance(lookup::top_instance(modules, *i)?),
        D::Local(at) => match lookup::target_at(modules.get(at.file)?, at.start as usize)? {
            Target::Decl(d) if d.ident().name == name => d,
            _ => return None,
        },
        D::Type(_) | D::Field { .. } | D::Builtin(_) => return None,
    })
}

/// Where the name used at `span` is declared, as the checker resolved it (`None` for
/// a builtin or a name the checker did not resolve).
fn resolved(doc: &Document, span: Span, name: &str) -> Option<Span> {
    use fdc_frontend::Decl as D;
    let m = &doc.analysis.model;
    Some(match doc.analysis.resolution.get(span, name)? {
        D::Param(i) => m.params.get(*i)?.name.span,
        D::Input(i) => m.inputs.get(*i)?.name.span,
        D::Fn(i) => m.functions.get(*i)?.name.span,
        D::Spline(i) => m.splines.get(*i)?.name.span,
        D::Instance(i) => m.instances.get(*i)?.name_span,
        D::Type(t) => m.types.get(t)?.name_span,
        D::Local(at) => *at,
        D::Field { ty, name } => m.types.get(ty)?.param(name)?.span,
        D::Builtin(_) => return None,
    })
}

pub fn definition(doc: &Document, offset: usize) -> Option<Location> {
    let module = root_module(doc)?;
    let span = match lookup::target_at(module, offset)? {
        // The checker's link (none for a name it reported).
        Target::Expr(e) => match &e.kind {
            fdc_frontend::ast::ExprKind::Name(n) => resolved(doc, e.span, n)?,
            _ => return None,
        },
        Target::CallName(name, _) => resolved(doc, name.span, &name.name)?,
        Target::Member(..) => return None,
        Target::TypeName(ident) => instance_type(doc, &ident.name)?.name_span,
        Target::FieldName(ident, inst) => {
            instance_type(doc, &inst.ty.name)?.param(&ident.name)?.span
        }
        Target::Decl(d) => d.ident().span,
        Target::Use(path) => {
            let p = std::path::Path::new(path);
            let full = match &doc.dir {
                _ if p.is_absolute() => p.to_path_buf(),
                Some(d) => d.join(p),
                None => std::env::current_dir().ok()?.join(p),
            };
            let uri = Url::from_file_path(full).ok()?;
            return Some(Location::new(uri, Range::default()));
        }
    };
    doc.location(span)
}

#[allow(deprecated)] // `DocumentSymbol::deprecated` must still be written.
fn symbol(
    name: &str,
    detail: String,
    kind: SymbolKind,
    range: Range,
    sel: Range,
    children: Vec<DocumentSymbol>,
) -> DocumentSymbol {
    DocumentSymbol {
        name: name.to_string(),
        detail: Some(detail),
        kind,
        tags: None,
        deprecated: None,
        range,
        selection_range: sel,
        children: (!children.is_empty()).then_some(children),
    }
}

fn kind_symbol(k: Kind) -> SymbolKind {
    match k {
        Kind::Body => SymbolKind::OBJECT,
        Kind::Joint => SymbolKind::INTERFACE,
        Kind::Force => SymbolKind::EVENT,
        Kind::Driver | Kind::Sensor | Kind::Element => SymbolKind::STRUCT,
    }
}

/// The outline: instances (bodies, joints, forces, ...), params, inputs, functions and
/// element types with their params and nested instances.
pub fn symbols(doc: &Document) -> Vec<DocumentSymbol> {
    let Some(module) = root_module(doc) else {
        return Vec::new();
    };
    let text = doc.file_text(doc.root);
    let idx = LineIndex::new(text);
    let r = |s: fdc_frontend::ast::Span| idx.range(text, s.start as usize, s.end as usize);
    // A symbol without children, and the one of an instance (top-level or nested).
    let leaf = |name: &fdc_frontend::ast::Ident, detail: String, kind, span| {
        symbol(&name.name, detail, kind, r(span), r(name.span), Vec::new())
    };
    let instance = |i: &fdc_frontend::ast::Instance| {
        let detail = format!("{}: {}", i.kind.keyword(), i.ty.name);
        leaf(&i.name, detail, kind_symbol(i.kind), i.span)
    };
    let mut out = Vec::new();
    for it in &module.items {
        match it {
            Item::Instance(i) => out.push(instance(i)),
            Item::Param(p) | Item::Input(p) => {
                let word = if matches!(it, Item::Param(_)) {
                    "param"
                } else {
                    "input"
                };
                out.push(leaf(&p.name, word.into(), SymbolKind::CONSTANT, p.span))
            }
            Item::Fn(f) => out.push(leaf(&f.name, "fn".into(), SymbolKind::FUNCTION, f.span)),
            Item::Spline(s) => {
                out.push(leaf(&s.name, "spline".into(), SymbolKind::FUNCTION, s.span))
            }
            Item::TypeDef(t) => {
                let children = t
                    .body
                    .iter()
                    .filter_map(|st| match &st.kind {
                        StmtKind::Param(p) => {
                            Some(leaf(&p.name, "param".into(), SymbolKind::FIELD, p.span))
                        }
                        StmtKind::Instance(i) => Some(instance(i)),
                        _ => None,
                    })
                    .collect();
                out.push(symbol(
                    &t.name.name,
                    format!("{} type", t.kind.keyword()),
                    SymbolKind::CLASS,
                    r(t.span),
                    r(t.name.span),
                    children,
                ));
            }
            _ => {}
        }
    }
    out
}
