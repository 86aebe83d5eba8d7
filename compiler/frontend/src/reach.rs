//! The library items a model can reach, for an analysis that checks only those
//! ([`crate::Scope::Used`]): a build needs the element types and functions its model
//! names, and those name others, but parsing, expanding and checking all ~1,300
//! library lines on every run was most of a small model's front end.
//!
//! Reach is by name, over tokens, before anything is parsed: a library item is kept
//! when its name is written anywhere in a model file (any identifier token, whatever
//! it means there) or in a kept library item. That over-approximates every real use
//! (a local `distance` keeps the function `distance`; harmless) and also keeps the
//! library item a model's own declaration of the same name clashes with, so the clash
//! is still reported. Only what the parser needs is split here: a library file into its
//! top-level items, at a `;` or `}` outside brackets. An item that is not a plain
//! `fn NAME(` or `KIND NAME(`/`KIND NAME {` definition declares no name this module
//! knows and is always kept, as is every item of a file the split does not fit (then
//! the whole library is parsed, [`index`] is `None`).
//!
//! The kept items' tokens keep their offsets into the file's text, so their spans, doc
//! comments and parsed trees are the ones the whole file gives.

use crate::ast::{FileId, Module};
use crate::diag::Diagnostic;
use crate::lexer::{lex, Doc, Tok, Token};
use crate::parse::parse_lexed;
use std::collections::HashMap;
use std::ops::Range;
use std::sync::OnceLock;

/// One top-level item of a library file, as a range of the file's tokens.
struct Piece {
    tokens: Range<usize>,
    /// The name it defines (an index into [`Index::names`]); `None`: always kept.
    defines: Option<usize>,
    /// The library names its tokens mention, each once.
    mentions: Vec<usize>,
}

struct LibFile {
    text: &'static str,
    tokens: Vec<Token>,
    docs: Vec<Doc>,
    pieces: Vec<Piece>,
}

/// The library split into items, with the names each defines and mentions: built
/// once per process ([`index`]).
pub(crate) struct Index {
    files: Vec<LibFile>,
    /// Every name an item defines, numbered.
    names: HashMap<&'static str, usize>,
    /// Per name number: the items (file, piece) that define it.
    defined_by: Vec<Vec<(usize, usize)>>,
}

/// The index of `fdc_stdlib::FILES`; `None` if a file does not split into items (a
/// lexer error, unbalanced brackets): then every analysis parses the whole library.
pub(crate) fn index() -> Option<&'static Index> {
    static INDEX: OnceLock<Option<Index>> = OnceLock::new();
    INDEX
        .get_or_init(|| Index::build(fdc_stdlib::FILES))
        .as_ref()
}

/// The text of a token that can be a name (`at` is a keyword only after
/// `apply force`).
fn name_text<'t>(t: &Token, text: &'t str) -> Option<&'t str> {
    match t.1 {
        Tok::Ident(_) | Tok::At => text.get(t.0..t.2),
        _ => None,
    }
}

/// The token ranges of the top-level items of a file; `None` if brackets do not
/// balance or tokens trail the last item.
fn split(tokens: &[Token]) -> Option<Vec<Range<usize>>> {
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

/// The name a definition `fn NAME(`, `KIND NAME(` or `KIND NAME {` defines.
fn defined_name<'t>(tokens: &[Token], text: &'t str) -> Option<&'t str> {
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

impl Index {
    fn build(files: &[(&str, &'static str)]) -> Option<Index> {
        let mut names: HashMap<&'static str, usize> = HashMap::new();
        let mut defined_by: Vec<Vec<(usize, usize)>> = Vec::new();
        let mut lib = Vec::new();
        for (fi, (_, text)) in files.iter().enumerate() {
            let lexed = lex(text);
            if !lexed.errors.is_empty() {
                return None;
            }
            let mut pieces = Vec::new();
            for (pi, range) in split(&lexed.tokens)?.into_iter().enumerate() {
                let defines = defined_name(&lexed.tokens[range.clone()], text).map(|n| {
                    let next = names.len();
                    let id = *names.entry(n).or_insert(next);
                    if id == defined_by.len() {
                        defined_by.push(Vec::new());
                    }
                    defined_by[id].push((fi, pi));
                    id
                });
                pieces.push(Piece {
                    tokens: range,
                    defines,
                    mentions: Vec::new(),
                });
            }
            lib.push(LibFile {
                text,
                tokens: lexed.tokens,
                docs: lexed.docs,
                pieces,
            });
        }
        // Mentions once every name is known (items use names defined further on).
        for f in &mut lib {
            for p in &mut f.pieces {
                let mut m: Vec<usize> = (f.tokens[p.tokens.clone()].iter())
                    .filter_map(|t| names.get(name_text(t, f.text)?).copied())
                    .collect();
                m.sort_unstable();
                m.dedup();
                p.mentions = m;
            }
        }
        Some(Index {
            files: lib,
            names,
            defined_by,
        })
    }

    /// No library name marked yet: the argument of [`Index::mark`].
    pub(crate) fn no_names(&self) -> Vec<bool> {
        vec![false; self.defined_by.len()]
    }

    /// Marks the library names written in `tokens` (lexed from `text`).
    pub(crate) fn mark(&self, tokens: &[Token], text: &str, wanted: &mut [bool]) {
        for t in tokens {
            if let Some(&id) = name_text(t, text).and_then(|n| self.names.get(n)) {
                wanted[id] = true;
            }
        }
    }

    /// Which pieces of each file to keep: the ones that define no name, and every
    /// definition of a name that `wanted` marks or a kept piece mentions.
    fn keep(&self, mut wanted: Vec<bool>) -> Vec<Vec<bool>> {
        let mut keep: Vec<Vec<bool>> = (self.files.iter())
            .map(|f| f.pieces.iter().map(|p| p.defines.is_none()).collect())
            .collect();
        let mut queue: Vec<usize> = (0..wanted.len()).filter(|&n| wanted[n]).collect();
        for f in &self.files {
            for p in f.pieces.iter().filter(|p| p.defines.is_none()) {
                queue.extend(&p.mentions);
            }
        }
        let mut done = vec![false; wanted.len()];
        while let Some(n) = queue.pop() {
            if std::mem::replace(&mut done[n], true) {
                continue;
            }
            wanted[n] = true;
            for &(f, p) in &self.defined_by[n] {
                if !std::mem::replace(&mut keep[f][p], true) {
                    queue.extend(&self.files[f].pieces[p].mentions);
                }
            }
        }
        keep
    }

    /// The library files (as file ids `ids`, in order) parsed to the items reachable
    /// from the names `wanted` marks.
    pub(crate) fn parse_reachable(
        &self,
        wanted: Vec<bool>,
        ids: &[FileId],
    ) -> Vec<(Module, Vec<Diagnostic>)> {
        let keep = self.keep(wanted);
        (self.files.iter().zip(&keep).zip(ids))
            .map(|((f, keep), &id)| {
                let tokens: Vec<Token> = (f.pieces.iter().zip(keep))
                    .filter(|(_, &k)| k)
                    .flat_map(|(p, _)| f.tokens[p.tokens.clone()].iter().cloned())
                    .collect();
                parse_lexed(id, f.text, tokens, &f.docs, &[])
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse_module;

    /// Every item of the real library is a definition this module names, and its items
    /// all kept parse to exactly the trees the whole files give: the split fits.
    #[test]
    fn the_library_splits_into_named_definitions() {
        let index = index().expect("the library splits into items");
        for (f, (name, _)) in index.files.iter().zip(fdc_stdlib::FILES) {
            let unnamed: Vec<String> = (f.pieces.iter())
                .filter(|p| p.defines.is_none())
                .map(|p| format!("{:?}", f.tokens[p.tokens.start].1))
                .collect();
            assert!(
                unnamed.is_empty(),
                "{name}: items without a name: {unnamed:?}"
            );
        }
        let ids: Vec<FileId> = (0..index.files.len()).collect();
        let all = index.parse_reachable(vec![true; index.defined_by.len()], &ids);
        for ((id, (name, text)), (m, d)) in ids.iter().zip(fdc_stdlib::FILES).zip(all) {
            let (whole, dw) = parse_module(*id, text);
            assert!(d.is_empty() && dw.is_empty(), "{name}: {d:?} {dw:?}");
            assert!(!whole.items.is_empty(), "{name} is empty");
            assert_eq!(m, whole, "{name}");
        }
    }

    /// A name keeps its definition and what that mentions, transitively, and nothing
    /// else; a file with no name kept parses to no items.
    #[test]
    fn reach_follows_mentions_and_nothing_else() {
        let text: &'static str = "fn a(x: scalar) = b(x) + 1;\n\
             fn b(x: scalar) = x * 2;\n\
             fn c(x: scalar) = a(x);\n\
             force d(p: body) { let y = b(1); }\n";
        let index =
            Index::build(&[("one.fd", text), ("two.fd", "fn e(x: scalar) = x;")]).expect("splits");
        let kept = |names: &[&str]| -> Vec<Vec<String>> {
            let mut wanted = index.no_names();
            for n in names {
                wanted[index.names[n]] = true;
            }
            (index.parse_reachable(wanted, &[0, 1]).into_iter())
                .map(|(m, d)| {
                    assert!(d.is_empty(), "{d:?}");
                    m.items.iter().map(item_name).collect()
                })
                .collect()
        };
        assert_eq!(kept(&["a"]), vec![vec!["a", "b"], vec![]]);
        assert_eq!(kept(&["c"]), vec![vec!["a", "b", "c"], vec![]]);
        assert_eq!(kept(&["d", "e"]), vec![vec!["b", "d"], vec!["e"]]);
        assert_eq!(kept(&[]), vec![Vec::<String>::new(), vec![]]);
    }

    /// What is not a plain definition is always kept (and keeps what it mentions);
    /// unbalanced brackets or a lexer error give no index at all.
    #[test]
    fn other_items_are_kept_and_bad_files_give_no_index() {
        let text: &'static str = "fn f(x: scalar) = x;\nfn g(x: scalar) = x;\n\
             body ball: rigid { mass = f(1); }\n";
        let index = Index::build(&[("one.fd", text)]).expect("splits");
        let (m, _) = index.parse_reachable(index.no_names(), &[0]).remove(0);
        let names: Vec<String> = m.items.iter().map(item_name).collect();
        assert_eq!(names, ["f", "ball"]);
        for bad in [
            "fn f(x: scalar) = (x;",
            "fn f(x: scalar) = x",
            "fn f(x: scalar) = x $;",
        ] {
            assert!(Index::build(&[("bad.fd", bad)]).is_none(), "{bad}");
        }
    }

    fn item_name(item: &crate::ast::Item) -> String {
        use crate::ast::Item;
        match item {
            Item::Fn(f) => f.name.name.clone(),
            Item::TypeDef(t) => t.name.name.clone(),
            Item::Instance(i) => i.name.name.clone(),
            other => format!("{other:?}"),
        }
    }
}
