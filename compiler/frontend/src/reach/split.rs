//! How a library file splits into top-level items, over its tokens: shared by the
//! build script, which writes the table of the library's items (`reach_table.rs`),
//! and the tests that check that table against the parser.

use crate::lexer::{Tok, Token};
use std::ops::Range;

/// The text of a token that can be a name (`at` is a keyword only after
/// `apply force`).
pub fn name_text<'t>(t: &Token, text: &'t str) -> Option<&'t str> {
    match t.1 {
        Tok::Ident(_) | Tok::At => text.get(t.0..t.2),
        _ => None,
    }
}

/// The token ranges of the top-level items of a file, each ending at a `;` or `}`
/// outside brackets; `None` if brackets do not balance or tokens trail the last item.
pub fn split(tokens: &[Token]) -> Option<Vec<Range<usize>>> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut depth = 0usize;
    for (i, t) in tokens.iter().enumerate() {
        match t.1 {
            Tok::LParen | Tok::LBracket | Tok::LBrace => depth += 1,
            Tok::RParen | Tok::RBracket | Tok::RBrace => depth = depth.checked_sub(1)?,
            _ => {}
        }
        if depth == 0 && matches!(t.1, Tok::Semi | Tok::RBrace) {
            out.push(start..i + 1);
            start = i + 1;
        }
    }
    (start == tokens.len()).then_some(out)
}

/// The name a definition `fn NAME(`, `KIND NAME(` or `KIND NAME {` defines; `None`
/// for any other item.
pub fn defined_name<'t>(tokens: &[Token], text: &'t str) -> Option<&'t str> {
    let [(_, head, _), name, (_, next, _), ..] = tokens else {
        return None;
    };
    let definition = match head {
        Tok::Fn => *next == Tok::LParen,
        Tok::Body | Tok::Joint | Tok::Force | Tok::Driver | Tok::Sensor | Tok::Element => {
            matches!(next, Tok::LParen | Tok::LBrace)
        }
        _ => false,
    };
    definition.then(|| name_text(name, text)).flatten()
}

/// One item of a file: its bytes (from the end of the item before, so the comments
/// and doc comments above it are its own, to its last token's end), the name it
/// defines and the library names it mentions (indices into the table's names).
pub struct Item {
    pub bytes: Range<usize>,
    pub defines: Option<usize>,
    pub mentions: Vec<usize>,
}

/// The items of every file and the names they define (numbered in order of first
/// definition); `None` if a file has a lexer error or does not split.
#[allow(clippy::type_complexity)]
pub fn table(files: &[(&str, &str)]) -> Option<(Vec<String>, Vec<Vec<Item>>)> {
    let mut names: Vec<String> = Vec::new();
    let mut split_files = Vec::new();
    for (_, text) in files {
        let lexed = crate::lexer::lex(text);
        if !lexed.errors.is_empty() {
            return None;
        }
        let ranges = split(&lexed.tokens)?;
        for r in &ranges {
            if let Some(n) = defined_name(&lexed.tokens[r.clone()], text) {
                if !names.iter().any(|m| m == n) {
                    names.push(n.to_string());
                }
            }
        }
        split_files.push((text, lexed.tokens, ranges));
    }
    let id = |n: &str| names.iter().position(|m| m == n);
    let mut out = Vec::new();
    for (text, tokens, ranges) in split_files {
        let mut items = Vec::new();
        let mut from = 0;
        for r in ranges {
            let toks = &tokens[r.clone()];
            let mut mentions: Vec<usize> = (toks.iter())
                .filter_map(|t| id(name_text(t, text)?))
                .collect();
            mentions.sort_unstable();
            mentions.dedup();
            let end = toks.last().map_or(from, |t| t.2);
            items.push(Item {
                bytes: from..end,
                defines: defined_name(toks, text).and_then(id),
                mentions,
            });
            from = end;
        }
        out.push(items);
    }
    Some((names, out))
}
