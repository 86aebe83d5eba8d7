//! Indexed names (`crank[3]`): the front end's expansion unrolls a loop into one
//! instance per index, all with the span of the one declaration in the file. Hover on
//! that declaration or on a use says which instances it stands for.

use super::*;
use fdc_frontend::ast::Instance;

/// At most this many names are listed; more are shown as first, second, …, last.
const LISTED: usize = 6;

/// Every instance made from the same declaration as `i` (top level or inside an
/// element type), in the order of the expansion.
fn family<'a>(doc: &'a Document, i: &Instance) -> Vec<&'a str> {
    let mut out = Vec::new();
    for item in doc.analysis.modules.iter().flat_map(|m| &m.items) {
        match item {
            Item::Instance(j) if j.name.span == i.name.span => out.push(j.name.name.as_str()),
            Item::TypeDef(t) => {
                for st in &t.body {
                    if let StmtKind::Instance(j) = &st.kind {
                        if j.name.span == i.name.span {
                            out.push(j.name.name.as_str());
                        }
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// "One of the 3 instances `crank[0]`, `crank[1]`, `crank[2]` made by a loop", for an
/// indexed instance; `None` for a plain one.
pub(super) fn family_markdown(doc: &Document, i: &Instance) -> Option<String> {
    if !i.name.name.ends_with(']') {
        return None;
    }
    let names = family(doc, i);
    let quoted = |n: &&str| format!("`{n}`");
    let listed: Vec<String> = if names.len() > LISTED {
        let head = names[..2].iter().map(quoted);
        head.chain(["…".to_string(), quoted(&names[names.len() - 1])])
            .collect()
    } else {
        names.iter().map(quoted).collect()
    };
    let (base, _) = i.name.name.split_once('[')?;
    Some(format!(
        "One of the {} instances {} that a loop makes from this declaration; their \
         results are named alike (`{base}[k].…`).\n",
        names.len(),
        listed.join(", ")
    ))
}
