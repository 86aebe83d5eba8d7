//! Completion: what may come at the cursor, from the text before it (the document
//! need not parse) and the checker's tables.

use super::*;

/// What the cursor is in, found from the text (which is often half-typed).
#[derive(Debug, PartialEq)]
enum Context {
    /// After `KIND NAME:`: element types of that kind.
    TypeOf(Kind),
    /// After `param x:`, `let x:`, in function signatures: value types.
    ValueType,
    /// Inside an instance's braces where a field name goes.
    Fields(String),
    /// Inside `simulate { }` where a setting name goes.
    Settings,
    /// In the connection list of an instance, or after `on`: bodies.
    Bodies,
    /// After `name.`: what a body offers.
    Member,
    /// Anywhere a value goes.
    Expr,
    /// Where an item or statement starts.
    Statement,
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The text of `before` after the last `;`, `{` or `}` (the statement being written).
fn statement_tail(before: &str) -> &str {
    let cut = before.rfind([';', '{', '}']).map(|i| i + 1).unwrap_or(0);
    &before[cut..]
}

/// Open brackets before the cursor, skipping strings and `//` comments.
fn open_brackets(before: &str) -> Vec<(char, usize)> {
    let mut stack = Vec::new();
    let mut chars = before.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '/' if chars.peek().map(|p| p.1) == Some('/') => {
                for (_, c) in chars.by_ref() {
                    if c == '\n' {
                        break;
                    }
                }
            }
            '"' => {
                for (_, c) in chars.by_ref() {
                    if c == '"' || c == '\n' {
                        break;
                    }
                }
            }
            '(' | '[' | '{' => stack.push((c, i)),
            ')' | ']' | '}' => {
                stack.pop();
            }
            _ => {}
        }
    }
    stack
}

/// `KIND NAME : TYPE` at the end of `header` (what precedes an instance's `(` or `{`).
fn instance_header(header: &str) -> Option<(Kind, String)> {
    let head = statement_tail(header);
    let head = head.split("//").next().unwrap_or(head);
    let (left, ty) = head.split_once(':')?;
    let mut words = left.split_whitespace();
    let kw = words.next()?;
    let kind = *KINDS.iter().find(|k| k.keyword() == kw)?;
    let ty = ty.split('(').next()?.trim();
    (words.next().is_some() && !ty.is_empty() && ty.chars().all(is_ident))
        .then(|| (kind, ty.to_string()))
}

fn context(before: &str) -> Context {
    let word_start = before.trim_end_matches(is_ident).len();
    let prefix = &before[..word_start];
    let line = &prefix[prefix.rfind('\n').map(|i| i + 1).unwrap_or(0)..];
    let stmt = statement_tail(prefix);
    let trimmed = prefix.trim_end();
    if trimmed.ends_with(':') {
        let head: Vec<&str> = line
            .trim_end()
            .trim_end_matches(':')
            .split_whitespace()
            .collect();
        if let [kw, _name] = head.as_slice() {
            if let Some(k) = KINDS.iter().find(|k| k.keyword() == *kw) {
                return Context::TypeOf(*k);
            }
            if ["param", "input", "let"].contains(kw) {
                return Context::ValueType;
            }
        }
        if head.first() == Some(&"fn") || head.len() == 1 {
            return Context::ValueType;
        }
    }
    // `b.` and `crank[3].` (an indexed instance).
    if prefix.ends_with('.')
        && prefix[..prefix.len() - 1].ends_with(|c: char| c.is_alphabetic() || c == '_' || c == ']')
    {
        return Context::Member;
    }
    if trimmed.ends_with(" on") || trimmed.ends_with("\ton") {
        return Context::Bodies;
    }
    match open_brackets(prefix).last() {
        Some(&('(', at)) => {
            let header = &prefix[..at];
            // `revolute(` opens the connections; `revolute(a, f(` a call inside them.
            if instance_header(header).is_some() && !statement_tail(header).contains('(') {
                Context::Bodies
            } else {
                Context::Expr
            }
        }
        Some(&('[', _)) => Context::Expr,
        Some(&('{', at)) => {
            let header = &prefix[..at];
            if stmt.contains('=') {
                Context::Expr
            } else if statement_tail(header).trim_start().starts_with("simulate") {
                Context::Settings
            } else if let Some((_, ty)) = instance_header(header) {
                Context::Fields(ty)
            } else {
                Context::Statement
            }
        }
        _ => {
            if stmt.contains('=') || stmt.trim_start().starts_with("gravity") {
                Context::Expr
            } else {
                Context::Statement
            }
        }
    }
}

fn item(
    label: &str,
    kind: CompletionItemKind,
    detail: String,
    doc: Option<String>,
) -> CompletionItem {
    CompletionItem {
        label: label.to_string(),
        kind: Some(kind),
        detail: Some(detail),
        documentation: doc.map(|d| {
            Documentation::MarkupContent(MarkupContent {
                kind: MarkupKind::Markdown,
                value: d.trim().to_string(),
            })
        }),
        ..Default::default()
    }
}

fn body_names(doc: &Document, scope: Scope<'_>, out: &mut Vec<CompletionItem>) {
    out.push(item(
        "ground",
        CompletionItemKind::CONSTANT,
        "body".into(),
        Some("The fixed inertial frame.".into()),
    ));
    for i in &doc.analysis.model.instances {
        if i.kind == Kind::Body {
            out.push(item(
                &i.name,
                CompletionItemKind::VARIABLE,
                format!("body: {}", i.type_name),
                None,
            ));
        }
    }
    if let Some(t) = scope.typedef {
        for c in t.connections.iter().filter(|c| c.ty.name == "body") {
            out.push(item(
                &c.name.name,
                CompletionItemKind::VARIABLE,
                "body (connection)".into(),
                None,
            ));
        }
    }
}

fn value_names(doc: &Document, scope: Scope<'_>, offset: usize, out: &mut Vec<CompletionItem>) {
    let m = &doc.analysis.model;
    for p in &m.params {
        let d = decl_markdown(doc, Decl::Param(p, false));
        out.push(item(
            &p.name.name,
            CompletionItemKind::CONSTANT,
            "param".into(),
            Some(d),
        ));
    }
    for p in &m.inputs {
        out.push(item(
            &p.name.name,
            CompletionItemKind::VARIABLE,
            "input".into(),
            p.doc.clone(),
        ));
    }
    for f in &m.functions {
        let d = decl_markdown(doc, Decl::Fn(f));
        out.push(item(
            &f.name.name,
            CompletionItemKind::FUNCTION,
            "fn".into(),
            Some(d),
        ));
    }
    for s in &m.splines {
        out.push(item(
            &s.name.name,
            CompletionItemKind::FUNCTION,
            format!("spline ({})", s.method.name),
            s.doc.clone(),
        ));
    }
    for b in builtins::FUNCTIONS {
        out.push(item(
            b.name,
            CompletionItemKind::FUNCTION,
            b.call.to_string(),
            Some(b.doc.to_string()),
        ));
    }
    for (name, what) in builtins::VALUES {
        out.push(item(
            name,
            CompletionItemKind::CONSTANT,
            what.to_string(),
            None,
        ));
    }
    for i in &m.instances {
        out.push(item(
            &i.name,
            CompletionItemKind::VARIABLE,
            format!("{}: {}", i.kind.keyword(), i.type_name),
            None,
        ));
    }
    if let Some(f) = scope.func {
        for (n, t) in &f.args {
            out.push(item(
                &n.name,
                CompletionItemKind::VARIABLE,
                t.name.clone(),
                None,
            ));
        }
    }
    if let Some(t) = scope.typedef {
        for c in &t.connections {
            out.push(item(
                &c.name.name,
                CompletionItemKind::VARIABLE,
                c.ty.name.clone(),
                None,
            ));
        }
        for st in t.body.iter().filter(|st| (st.span.start as usize) < offset) {
            for d in lookup::stmt_decls(st) {
                let text = decl_markdown(doc, d);
                out.push(item(
                    &d.ident().name,
                    CompletionItemKind::VARIABLE,
                    String::new(),
                    Some(text),
                ));
            }
        }
    }
}

pub fn completion(doc: &Document, offset: usize) -> Vec<CompletionItem> {
    let mut offset = offset.min(doc.text.len());
    while !doc.text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &doc.text[..offset];
    let scope = Scope {
        func: None,
        typedef: root_module(doc).and_then(|m| lookup::typedef_at(m, offset)),
    };
    let mut out = Vec::new();
    match context(before) {
        Context::TypeOf(kind) => {
            for t in doc.analysis.model.types.values().filter(|t| t.kind == kind) {
                out.push(item(
                    &t.name,
                    CompletionItemKind::CLASS,
                    type_signature(doc, t),
                    Some(type_markdown(doc, t)),
                ));
            }
        }
        Context::ValueType => {
            for t in ["scalar", "vec3", "mat3", "quat", "body"] {
                out.push(item(
                    t,
                    CompletionItemKind::TYPE_PARAMETER,
                    "type".into(),
                    None,
                ));
            }
        }
        Context::Fields(ty) => {
            if let Some(t) = instance_type(doc, &ty) {
                for p in &t.params {
                    let detail = match &p.default {
                        Some(d) => format!("{} = {}", p.ty, snippet(doc, d)),
                        None => format!("{} (required)", p.ty),
                    };
                    let mut c = item(&p.name, CompletionItemKind::FIELD, detail, p.doc.clone());
                    c.insert_text = Some(format!("{} = ", p.name));
                    out.push(c);
                }
            }
        }
        Context::Settings => {
            for k in fdc_frontend::SIM_KEYS {
                out.push(item(
                    k,
                    CompletionItemKind::PROPERTY,
                    "simulate setting".into(),
                    None,
                ));
            }
        }
        Context::Bodies => body_names(doc, scope, &mut out),
        Context::Member => {
            for m in builtins::BODY_MEMBERS.iter().filter(|m| !m.method) {
                out.push(item(
                    m.name,
                    CompletionItemKind::PROPERTY,
                    format!("{}: {}", m.ty, m.doc),
                    None,
                ));
            }
            for m in builtins::BODY_MEMBERS.iter().filter(|m| m.method) {
                let mut c = item(
                    m.name,
                    CompletionItemKind::METHOD,
                    format!("{}: {}", m.call, m.ty),
                    Some(m.doc.to_string()),
                );
                c.insert_text = Some(format!("{}(", m.name));
                out.push(c);
            }
        }
        Context::Expr => value_names(doc, scope, offset, &mut out),
        Context::Statement => {
            let words: &[&str] = if scope.typedef.is_some() {
                &[
                    "param",
                    "let",
                    "constrain",
                    "apply",
                    "state",
                    "output",
                    "coordinates",
                    "kinetic",
                    "potential",
                    "body",
                    "joint",
                    "force",
                    "driver",
                    "sensor",
                ]
            } else {
                &[
                    "use", "param", "input", "fn", "gravity", "output", "simulate", "spline",
                    "body", "joint", "force", "driver", "sensor", "element",
                ]
            };
            for w in words {
                out.push(item(w, CompletionItemKind::KEYWORD, "keyword".into(), None));
            }
        }
    }
    out
}
