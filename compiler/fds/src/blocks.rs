//! The text layer of a `.fds` file: blocks `<Category> <Type>` … `End<Category>`,
//! separated by lines holding `%`, with `Key = value` lines inside. Every item keeps
//! its byte range, so each later error can name its line and column. Never panics:
//! every malformed line is an [`Error`] and parsing goes on with the next line.

use crate::error::{Error, Kind};
use std::ops::Range;

/// A piece of the file and where it is (byte offsets into the file text).
#[derive(Clone, Debug, PartialEq)]
pub struct Spanned {
    pub text: String,
    pub span: Range<usize>,
}

/// One `Key = value` line.
#[derive(Clone, Debug)]
pub struct Entry {
    pub key: Spanned,
    /// Trimmed; may be empty (`Name = `), then its span is empty after the `=`.
    pub value: Spanned,
}

#[derive(Clone, Debug)]
pub struct Block {
    pub category: Spanned,
    pub ty: Spanned,
    pub entries: Vec<Entry>,
    /// 1-based line of the block's first line (for comments in the generated file).
    pub line: usize,
}

impl Block {
    /// The span of the whole header line `<Category> <Type>`.
    pub fn head_span(&self) -> Range<usize> {
        self.category.span.start..self.ty.span.end
    }
}

/// Lines of `text` with their byte offset; the line ending (`\n` or `\r\n`) excluded.
fn lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut start = 0;
    text.split_inclusive('\n').map(move |raw| {
        let at = start;
        start += raw.len();
        let line = raw.strip_suffix('\n').unwrap_or(raw);
        (at, line.strip_suffix('\r').unwrap_or(line))
    })
}

/// `s` trimmed, with the byte range it has inside a line starting at `base`.
fn trimmed(s: &str, base: usize) -> Spanned {
    let lead = s.len() - s.trim_start().len();
    let t = s.trim();
    Spanned {
        text: t.to_string(),
        span: base + lead..base + lead + t.len(),
    }
}

/// Parses the blocks; returns those it could read and every problem found.
pub fn parse(text: &str) -> (Vec<Block>, Vec<Error>) {
    let mut blocks = Vec::new();
    let mut errors = Vec::new();
    let mut open: Option<Block> = None;
    for (no, (at, line)) in lines(text).enumerate() {
        let t = line.trim();
        let lead = line.len() - line.trim_start().len();
        let here = at + lead..at + lead + t.len();
        if t.is_empty() || t.starts_with('%') {
            continue;
        }
        match open.as_mut() {
            None => match block_head(t, at + lead) {
                Some((category, ty)) => {
                    open = Some(Block {
                        category,
                        ty,
                        entries: Vec::new(),
                        line: no + 1,
                    })
                }
                None => errors.push(Error::new(
                    Kind::Syntax,
                    here,
                    format!("expected a block `<Category> <Type>`, found `{t}`"),
                    "not a block header",
                    "blocks start with a line like `Body Rigid_EulerParameter_PAI` and end with `EndBody`",
                )),
            },
            Some(block) => {
                if let Some(end) = t.strip_prefix("End").filter(|_| !t.contains('=')) {
                    if end != block.category.text {
                        errors.push(Error::new(
                            Kind::Syntax,
                            here,
                            format!(
                                "`{t}` does not close the block `{}` opened on line {}",
                                block.category.text, block.line
                            ),
                            "mismatched end",
                            &format!("close it with `End{}`", block.category.text),
                        ));
                    }
                    blocks.extend(open.take());
                    continue;
                }
                match line.find('=') {
                    Some(eq) => {
                        let key = trimmed(&line[..eq], at);
                        let value = trimmed(&line[eq + 1..], at + eq + 1);
                        if key.text.is_empty() {
                            errors.push(Error::new(
                                Kind::Syntax,
                                here,
                                "a `= value` without a key",
                                "no key before `=`",
                                "write `Key = value`",
                            ));
                        } else {
                            block.entries.push(Entry { key, value });
                        }
                    }
                    None => errors.push(Error::new(
                        Kind::Syntax,
                        here,
                        format!("expected `Key = value` inside block `{}`, found `{t}`", block.category.text),
                        "no `=` on this line",
                        &format!("a block ends with `End{}`", block.category.text),
                    )),
                }
            }
        }
    }
    if let Some(block) = open {
        errors.push(Error::new(
            Kind::Syntax,
            block.head_span(),
            format!("block `{}` is never closed", block.category.text),
            "opened here",
            &format!("add a line `End{}`", block.category.text),
        ));
        blocks.push(block);
    }
    (blocks, errors)
}

/// `Category Type` (two words, no `=`).
fn block_head(t: &str, base: usize) -> Option<(Spanned, Spanned)> {
    if t.contains('=') {
        return None;
    }
    let mut words = t.split_whitespace();
    let (c, ty) = (words.next()?, words.next()?);
    if words.next().is_some() {
        return None;
    }
    let c_at = base + t.find(c)?;
    let ty_at = c_at + c.len() + t[c.len()..].find(ty)?;
    Some((
        Spanned {
            text: c.to_string(),
            span: c_at..c_at + c.len(),
        },
        Spanned {
            text: ty.to_string(),
            span: ty_at..ty_at + ty.len(),
        },
    ))
}
