//! The checker's links from name uses to declarations: a side table keyed by the span
//! of each use, kept so that lowering and the language server read what the checker
//! resolved instead of looking names up again (a small version of rust-analyzer's
//! `hir`, "a fully resolved view").
//!
//! A span can stand for several uses: the expansion copies the text of a loop body or
//! of a specialized type, and an indexed name (`b[i]`) is a different name in every
//! copy. So a use is found by its span *and* its name.

use crate::ast::Span;
use std::collections::HashMap;

/// What a name use refers to. Indices are into the lists of the checked
/// [`Model`](super::Model) (`params`, `inputs`, `functions`, `splines`, `instances`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decl {
    Param(usize),
    Input(usize),
    Fn(usize),
    Spline(usize),
    /// A top-level instance (a body used as a value or connection).
    Instance(usize),
    /// An element type, by name (the key of `Model::types`).
    Type(String),
    /// A name declared inside an element type or a function (a parameter, `let`,
    /// `state`, connection, coordinate, loop variable, function argument, `self`):
    /// the span of its declaring name.
    Local(Span),
    /// A field of an element type, given in an instance's braces.
    Field {
        ty: String,
        name: String,
    },
    /// A name the language provides (`t`, `pi`, `gravity`, `ground`, a builtin
    /// function).
    Builtin(&'static str),
}

/// Every name use the checker resolved.
#[derive(Clone, Debug, Default)]
pub struct Resolution {
    uses: HashMap<Span, Vec<(String, Decl)>>,
}

impl Resolution {
    /// What the use of `name` at `span` refers to (`None`: not resolved, e.g. an
    /// unknown name the checker reported).
    pub fn get(&self, span: Span, name: &str) -> Option<&Decl> {
        let uses = self.uses.get(&span)?;
        uses.iter().find(|(n, _)| n == name).map(|(_, d)| d)
    }

    /// Every use: its span, name and declaration (in no particular order).
    pub fn iter(&self) -> impl Iterator<Item = (Span, &str, &Decl)> {
        self.uses
            .iter()
            .flat_map(|(s, us)| us.iter().map(move |(n, d)| (*s, n.as_str(), d)))
    }

    /// Records a use; a copy made by the expansion records the same one again.
    pub(super) fn record(&mut self, span: Span, name: &str, decl: Decl) {
        let uses = self.uses.entry(span).or_default();
        if !uses.iter().any(|(n, _)| n == name) {
            uses.push((name.to_string(), decl));
        }
    }

    pub fn len(&self) -> usize {
        self.uses.values().map(Vec::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.uses.is_empty()
    }
}
