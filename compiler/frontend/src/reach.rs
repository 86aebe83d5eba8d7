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
//! is still reported. The build script splits every library file into its top-level
//! items (at a `;` or `}` outside brackets, `reach/split.rs`, with this crate's lexer)
//! and writes which name each defines and which library names it mentions; a build
//! then lexes and parses only the kept items' text. An item that is not a plain
//! `fn NAME(` or `KIND NAME(`/`KIND NAME {` definition defines no name and is always
//! kept; a library the split does not fit has no table, and then the whole library is
//! parsed ([`index`] is `None`).
//!
//! An item's text runs from the end of the item before it, so the doc comments above
//! it are lexed with it; its tokens keep their offsets into the file, so spans, doc
//! comments and parsed trees are the ones the whole file gives.

use crate::ast::{FileId, Module};
use crate::diag::Diagnostic;
use crate::lexer::{lex, LexError, Lexed, Tok, Token};
use crate::parse::parse_lexed;
use std::collections::HashMap;
use std::ops::Range;
use std::sync::OnceLock;

#[cfg(test)]
mod split;

/// The library's items as the build script found them.
struct Table {
    /// Every name an item defines; its index is its number.
    names: &'static [&'static str],
    /// Per library file, in `fdc_stdlib::FILES` order: its items in order.
    files: &'static [&'static [Item]],
}

/// One top-level item of a library file.
struct Item {
    /// Its text, from the end of the item before it to its last token's end.
    bytes: Range<usize>,
    /// The name it defines; `None`: always kept.
    defines: Option<usize>,
    /// The library names its tokens mention, each once.
    mentions: &'static [usize],
}

mod table {
    use super::{Item, Table};
    include!(concat!(env!("OUT_DIR"), "/reach_table.rs"));
}

/// The table with the look-ups a build needs: made once per process ([`index`]).
pub(crate) struct Index {
    table: Table,
    texts: Vec<&'static str>,
    names: HashMap<&'static str, usize>,
    /// Per name number: the items (file, item) that define it.
    defined_by: Vec<Vec<(usize, usize)>>,
}

/// The index of `fdc_stdlib::FILES`; `None` if the library did not split into items
/// (then every analysis parses the whole library).
pub(crate) fn index() -> Option<&'static Index> {
    static INDEX: OnceLock<Option<Index>> = OnceLock::new();
    INDEX
        .get_or_init(|| Index::new(table::TABLE?, fdc_stdlib::FILES))
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

/// `lexed`, lexed from a part of a file that starts at byte `by`, with offsets into
/// the whole file.
fn shift(mut lexed: Lexed, by: usize) -> Lexed {
    for t in &mut lexed.tokens {
        (t.0, t.2) = (t.0 + by, t.2 + by);
    }
    for d in &mut lexed.docs {
        (d.0, d.1) = (d.0 + by, d.1 + by);
    }
    for e in &mut lexed.errors {
        let (LexError::BadChar { start, end }
        | LexError::Unterminated { start, end }
        | LexError::TooDeep { start, end }) = e;
        (*start, *end) = (*start + by, *end + by);
    }
    lexed
}

impl Index {
    /// `None` if the table is not of these files (each item's text must lie in its
    /// file, on character boundaries).
    fn new(table: Table, files: &[(&str, &'static str)]) -> Option<Index> {
        if table.files.len() != files.len() {
            return None;
        }
        let mut defined_by = vec![Vec::new(); table.names.len()];
        for (fi, (items, (_, text))) in table.files.iter().zip(files).enumerate() {
            for (ii, item) in items.iter().enumerate() {
                text.get(item.bytes.clone())?;
                if let Some(n) = item.defines {
                    defined_by.get_mut(n)?.push((fi, ii));
                }
                if item.mentions.iter().any(|&m| m >= table.names.len()) {
                    return None;
                }
            }
        }
        Some(Index {
            names: table
                .names
                .iter()
                .enumerate()
                .map(|(i, n)| (*n, i))
                .collect(),
            texts: files.iter().map(|(_, t)| *t).collect(),
            table,
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

    /// Which items of each file to keep: the ones that define no name, and every
    /// definition of a name that `wanted` marks or a kept item mentions.
    fn keep(&self, wanted: &[bool]) -> Vec<Vec<bool>> {
        let files = self.table.files;
        let mut keep: Vec<Vec<bool>> = (files.iter())
            .map(|f| f.iter().map(|p| p.defines.is_none()).collect())
            .collect();
        let mut queue: Vec<usize> = (0..wanted.len()).filter(|&n| wanted[n]).collect();
        for f in files {
            for p in f.iter().filter(|p| p.defines.is_none()) {
                queue.extend(p.mentions);
            }
        }
        let mut done = vec![false; wanted.len()];
        while let Some(n) = queue.pop() {
            if std::mem::replace(&mut done[n], true) {
                continue;
            }
            for &(f, p) in &self.defined_by[n] {
                if !std::mem::replace(&mut keep[f][p], true) {
                    queue.extend(files[f][p].mentions);
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
        let keep = self.keep(&wanted);
        let files = self.table.files.iter().zip(&self.texts);
        (files.zip(&keep).zip(ids))
            .map(|(((items, text), keep), &id)| {
                let mut all = Lexed {
                    tokens: Vec::new(),
                    docs: Vec::new(),
                    errors: Vec::new(),
                };
                for (item, _) in items.iter().zip(keep).filter(|(_, &k)| k) {
                    let part = shift(lex(&text[item.bytes.clone()]), item.bytes.start);
                    all.tokens.extend(part.tokens);
                    all.docs.extend(part.docs);
                    all.errors.extend(part.errors);
                }
                parse_lexed(id, text, all.tokens, &all.docs, &all.errors)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse_module;

    /// The index of `files` as the build script would make it (its table leaked: an
    /// index lives for the process).
    fn index_of(files: &[(&str, &'static str)]) -> Option<Index> {
        let (names, items) = split::table(files)?;
        let names: Vec<&'static str> = names.into_iter().map(|n| &*n.leak()).collect();
        let per_file: Vec<&'static [Item]> = (items.into_iter())
            .map(|f| {
                let f: Vec<Item> = (f.into_iter())
                    .map(|i| Item {
                        bytes: i.bytes,
                        defines: i.defines,
                        mentions: i.mentions.leak(),
                    })
                    .collect();
                &*f.leak()
            })
            .collect();
        let table = Table {
            names: names.leak(),
            files: per_file.leak(),
        };
        Index::new(table, files)
    }

    /// The table the build script wrote is the one of today's library; every item of
    /// it is a definition with a name, and its items all kept parse to exactly the
    /// trees the whole files give: the split fits.
    #[test]
    fn the_library_splits_into_named_definitions() {
        let index = index().expect("the library splits into items");
        let fresh = index_of(fdc_stdlib::FILES).expect("the library splits");
        assert_eq!(index.table.names, fresh.table.names);
        for ((f, g), (name, _)) in index
            .table
            .files
            .iter()
            .zip(fresh.table.files)
            .zip(fdc_stdlib::FILES)
        {
            let bytes = |f: &[Item]| -> Vec<_> {
                f.iter()
                    .map(|i| (i.bytes.clone(), i.defines, i.mentions.to_vec()))
                    .collect()
            };
            assert_eq!(bytes(f), bytes(g), "{name}");
            assert!(
                f.iter().all(|i| i.defines.is_some()),
                "{name}: an item without a name"
            );
        }
        let ids: Vec<FileId> = (0..index.texts.len()).collect();
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
            index_of(&[("one.fd", text), ("two.fd", "fn e(x: scalar) = x;")]).expect("splits");
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

    /// What is not a plain definition is always kept (and keeps what it mentions), with
    /// the doc comment above it; unbalanced brackets or a lexer error give no index.
    #[test]
    fn other_items_are_kept_and_bad_files_give_no_index() {
        let text: &'static str = "fn f(x: scalar) = x;\nfn g(x: scalar) = x;\n\
             /// A ball.\nbody ball: rigid { mass = f(1); }\n";
        let index = index_of(&[("one.fd", text)]).expect("splits");
        let (m, _) = index.parse_reachable(index.no_names(), &[0]).remove(0);
        let names: Vec<String> = m.items.iter().map(item_name).collect();
        assert_eq!(names, ["f", "ball"]);
        let crate::ast::Item::Instance(ball) = &m.items[1] else {
            panic!("{:?}", m.items[1]);
        };
        assert_eq!(ball.doc.as_deref(), Some("A ball."));
        for bad in [
            "fn f(x: scalar) = (x;",
            "fn f(x: scalar) = x",
            "fn f(x: scalar) = x $;",
        ] {
            assert!(index_of(&[("bad.fd", bad)]).is_none(), "{bad}");
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
