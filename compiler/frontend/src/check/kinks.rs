//! The kinks (`abs`, `min`, `max`, `if` of a state-dependent value) an expression
//! contains, for the W0001 warnings of the statement that uses them.
//!
//! A `let` hands its kinks to every use of its name. They are shared, not copied: a
//! chain of `let`s, each using the one before and adding a kink of its own, holds one
//! entry per `let` (a copy per use made the chain quadratic in its length), and a
//! warning walks each shared list once per element type.

use crate::ast::Span;
use std::collections::HashMap;
use std::rc::Rc;

#[derive(Clone, Debug)]
enum Kink {
    /// A kinked call or `if` at its span, by the function's name.
    At(Span, &'static str),
    /// The kinks of a `let` whose name the expression uses.
    Let(Rc<Kinks>),
}

/// The kinks of one expression, in the order they are met.
#[derive(Clone, Debug, Default)]
pub(super) struct Kinks(Vec<Kink>);

/// The shared lists already walked (kept alive so an address is never reused).
pub(super) type Walked = HashMap<*const Kinks, Rc<Kinks>>;

impl Kinks {
    pub(super) fn push(&mut self, span: Span, name: &'static str) {
        self.0.push(Kink::At(span, name));
    }

    /// The expression uses a `let` whose value has the kinks `of`.
    pub(super) fn uses(&mut self, of: &Rc<Kinks>) {
        if !of.0.is_empty() {
            self.0.push(Kink::Let(of.clone()));
        }
    }

    pub(super) fn clear(&mut self) {
        self.0.clear();
    }

    /// The first kink's function name.
    pub(super) fn first(&self) -> Option<&'static str> {
        self.spans(&mut Walked::new()).first().map(|k| k.1)
    }

    /// Every kink in the order met, the shared lists in `walked` left out (their
    /// kinks were returned by an earlier call) and added. An explicit stack: a chain
    /// of 100,000 `let`s is 100,000 levels deep.
    pub(super) fn spans(&self, walked: &mut Walked) -> Vec<(Span, &'static str)> {
        let mut out = Vec::new();
        let mut stack: Vec<&Kink> = self.0.iter().rev().collect();
        while let Some(k) = stack.pop() {
            match k {
                Kink::At(span, name) => out.push((*span, *name)),
                Kink::Let(l) => {
                    if walked.insert(Rc::as_ptr(l), l.clone()).is_none() {
                        stack.extend(l.0.iter().rev());
                    }
                }
            }
        }
        out
    }
}
