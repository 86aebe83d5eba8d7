//! Lexing + parsing one file into a [`Module`], with recovery: syntax errors become
//! diagnostics and `Error` nodes, never a failure.

use crate::ast::*;
use crate::diag::Diagnostic;
use crate::grammar::ModuleParser;
use crate::lexer::{lex, Doc, LexError, Tok, Token};
use lalrpop_util::ParseError;

/// Parses `text` as file `file`. Always returns a module (maybe with `Error` items).
pub fn parse_module(file: FileId, text: &str) -> (Module, Vec<Diagnostic>) {
    let lexed = lex(text);
    parse_lexed(file, text, lexed.tokens, &lexed.docs, &lexed.errors)
}

/// Parses tokens lexed from `text` (the file's own, or the ones of some of its items:
/// offsets are into `text` either way, so spans and doc comments come out the same).
pub(crate) fn parse_lexed(
    file: FileId,
    text: &str,
    tokens: Vec<Token>,
    docs: &[Doc],
    lex_errors: &[LexError],
) -> (Module, Vec<Diagnostic>) {
    let mut diags: Vec<Diagnostic> = lex_errors
        .iter()
        .map(|e| lex_diagnostic(file, text, e))
        .collect();
    let mut recovered = Vec::new();
    // Where each token starts and where the token before it ends.
    let gaps: Vec<(usize, usize)> = tokens
        .iter()
        .enumerate()
        .map(|(i, t)| (t.0, if i == 0 { 0 } else { tokens[i - 1].2 }))
        .collect();
    let declared = declared_names(&tokens);
    let tokens = tokens.into_iter().map(Ok::<_, LexError>);
    let result = ModuleParser::new().parse(file, &mut recovered, tokens);
    let mut errors: Vec<_> = recovered.into_iter().map(|r| r.error).collect();
    let maybe_declared = if errors.is_empty() && result.is_ok() {
        Vec::new()
    } else {
        declared
    };
    let mut items = match result {
        Ok(items) => items,
        Err(e) => {
            errors.push(e);
            Vec::new()
        }
    };
    let mut lex_spans: Vec<(usize, usize)> = (lex_errors.iter())
        .map(|le| match *le {
            LexError::BadChar { start, end }
            | LexError::Unterminated { start, end }
            | LexError::TooDeep { start, end } => (start, end),
        })
        .collect();
    lex_spans.sort_unstable();
    for e in errors {
        // A syntax error right after skipped characters is their consequence: the
        // lexer error already says what is wrong.
        let at = match &e {
            ParseError::UnrecognizedToken { token, .. } | ParseError::ExtraToken { token } => {
                token.0
            }
            ParseError::UnrecognizedEof { location, .. } => *location,
            _ => usize::MAX,
        };
        let prev_end = match gaps.binary_search_by_key(&at, |g| g.0) {
            Ok(i) => gaps[i].1,
            Err(_) => gaps.last().map(|g| g.0).unwrap_or(0),
        };
        // The first lexer error starting at or after `prev_end` is the one that can
        // lie inside the gap (a search, not a scan: many parse errors times many
        // lexer errors was quadratic on a line of bad characters).
        let first = lex_spans.partition_point(|&(s, _)| s < prev_end);
        let caused_by_lex_error = lex_spans[first..]
            .iter()
            .take_while(|&&(s, _)| s <= at)
            .any(|&(_, e)| e <= at);
        if !caused_by_lex_error {
            diags.push(parse_error(file, text, e));
        }
    }
    attach_docs(&mut items, docs, text);
    (
        Module {
            file,
            items,
            maybe_declared,
        },
        diags,
    )
}

/// The diagnostic of one lexer error.
fn lex_diagnostic(file: FileId, text: &str, e: &LexError) -> Diagnostic {
    match *e {
        LexError::BadChar { start, end } => {
            Diagnostic::error("E0001", bad_run_message(&text[start..end]))
                .at(Span::new(file, start, end), "no token starts with this")
        }
        LexError::Unterminated { start, end } => Diagnostic::error("E0002", "unterminated string")
            .at(
                Span::new(file, start, end),
                "this string has no closing `\"`",
            )
            .note("a string ends on the line where it starts"),
        LexError::TooDeep { start, end } => {
            Diagnostic::error("E0003", "statement too deeply nested")
                .at(
                    Span::new(file, start, end.min(start + 1)),
                    "this statement is skipped",
                )
                .note(format!(
            "at most {} operators and brackets per statement; split it with `let` or `param`",
            crate::lexer::MAX_NESTING
        ))
        }
    }
}

/// The names a declaration keyword is followed by (what a broken file may still
/// declare, for the checker's follow-up errors).
fn declared_names(tokens: &[Token]) -> Vec<String> {
    tokens
        .windows(2)
        .filter_map(|w| match (&w[0].1, &w[1].1) {
            (
                Tok::Param
                | Tok::Input
                | Tok::Fn
                | Tok::Spline
                | Tok::Body
                | Tok::Joint
                | Tok::Force
                | Tok::Driver
                | Tok::Sensor
                | Tok::Element
                | Tok::Let
                | Tok::State,
                Tok::Ident(n),
            ) => Some(n.clone()),
            _ => None,
        })
        .collect()
}

fn describe_expected(expected: &[String]) -> String {
    let has = |t: &str| expected.iter().any(|e| e == t);
    if has("Num") && has("\"(\"") && has("Ident") {
        return "expected an expression".to_string();
    }
    // `at` and `gravity` are names in some places; "a name" says enough.
    let expected: Vec<&String> = expected
        .iter()
        .filter(|e| !(has("Ident") && (*e == "\"at\"" || *e == "\"gravity\"")))
        .collect();
    let mut names: Vec<String> = expected
        .iter()
        .map(|e| match e.as_str() {
            "Ident" => "a name".to_string(),
            "Num" => "a number".to_string(),
            "Str" => "a string".to_string(),
            other => format!("`{}`", other.trim_matches('"')),
        })
        .collect();
    names.sort();
    names.dedup();
    if names.len() > 8 {
        return match (
            names.iter().any(|n| n == "`;`"),
            names.iter().any(|n| n == "`+`"),
        ) {
            (true, true) => "expected `;` or an operator".to_string(),
            (true, false) => "expected `;`".to_string(),
            _ => String::new(),
        };
    }
    match names.len() {
        0 => String::new(),
        1 => format!("expected {}", names[0]),
        _ => {
            let last = names.pop().unwrap_or_default();
            format!("expected {} or {}", names.join(", "), last)
        }
    }
}

fn parse_error(file: FileId, text: &str, e: ParseError<usize, Tok, LexError>) -> Diagnostic {
    match e {
        ParseError::UnrecognizedToken {
            token: (l, tok, r),
            expected,
        } => {
            let exp = describe_expected(&expected);
            let label = if exp.is_empty() {
                "unexpected here".to_string()
            } else {
                exp
            };
            Diagnostic::error("E0101", format!("unexpected {tok}")).at(Span::new(file, l, r), label)
        }
        ParseError::ExtraToken { token: (l, tok, r) } => {
            Diagnostic::error("E0101", format!("unexpected {tok}"))
                .at(Span::new(file, l, r), "unexpected here")
        }
        ParseError::UnrecognizedEof { location, expected } => {
            let at = location.min(text.len());
            let exp = describe_expected(&expected);
            Diagnostic::error("E0102", "unexpected end of file").at(
                Span::new(file, at, at),
                if exp.is_empty() {
                    "the file ends here".to_string()
                } else {
                    exp
                },
            )
        }
        ParseError::InvalidToken { location } => Diagnostic::error("E0001", "invalid token")
            .at(Span::new(file, location, location + 1), "here"),
        ParseError::User { error } => match error {
            LexError::BadChar { start, end }
            | LexError::Unterminated { start, end }
            | LexError::TooDeep { start, end } => {
                Diagnostic::error("E0001", "invalid token").at(Span::new(file, start, end), "here")
            }
        },
    }
}

/// The doc comment block (`///` lines) that ends right before `pos`, if any.
fn doc_before(docs: &[Doc], text: &str, pos: usize) -> Option<String> {
    let mut idx = docs.partition_point(|d| d.1 <= pos);
    let mut lines = Vec::new();
    let mut next = pos;
    while idx > 0 {
        let d = &docs[idx - 1];
        if !text.get(d.1..next).is_some_and(|gap| gap.trim().is_empty()) {
            break;
        }
        lines.push(d.2.clone());
        next = d.0;
        idx -= 1;
    }
    if lines.is_empty() {
        return None;
    }
    lines.reverse();
    Some(lines.join("\n"))
}

fn attach_docs(items: &mut [Item], docs: &[Doc], text: &str) {
    if docs.is_empty() {
        return;
    }
    let doc = |span: Span| doc_before(docs, text, span.start as usize);
    for item in items {
        match item {
            Item::Param(p) | Item::Input(p) => p.doc = doc(p.span),
            Item::Fn(f) => f.doc = doc(f.span),
            Item::Spline(s) => s.doc = doc(s.span),
            Item::Instance(i) => i.doc = doc(i.span),
            Item::TypeDef(t) => {
                t.doc = doc(t.span);
                for s in &mut t.body {
                    match &mut s.kind {
                        StmtKind::Param(p) => p.doc = doc(s.span),
                        StmtKind::Instance(i) => i.doc = doc(s.span),
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
}

/// The message of a run of bad characters: quoted whole when short, else its start
/// and its length (the label shows where it is).
fn bad_run_message(run: &str) -> String {
    const SHOWN: usize = 16;
    match run.char_indices().nth(SHOWN) {
        None => format!("unexpected character `{run}`"),
        Some((cut, _)) => format!(
            "unexpected characters `{}…` ({} bytes)",
            &run[..cut],
            run.len()
        ),
    }
}
