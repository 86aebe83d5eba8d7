//! `.fds` names as fd identifiers: one namespace for every item (fd has one), clear
//! of fd's keywords, built-in functions and the standard library's declarations.

use crate::blocks::{Block, Entry};
use crate::error::{Error, Kind};
use std::collections::HashSet;

/// Keywords and built-in names of fd (docs/language.md §1, §3).
const RESERVED: &[&str] = &[
    "param",
    "input",
    "fn",
    "use",
    "gravity",
    "body",
    "joint",
    "force",
    "driver",
    "sensor",
    "element",
    "let",
    "constrain",
    "apply",
    "torque",
    "body_torque",
    "generalized",
    "on",
    "at",
    "along",
    "state",
    "output",
    "coordinates",
    "kinetic",
    "potential",
    "simulate",
    "spline",
    "if",
    "then",
    "else",
    "scalar",
    "vec3",
    "mat3",
    "quat",
    "pi",
    "t",
    "ground",
    "self",
    "sin",
    "cos",
    "tan",
    "sqrt",
    "exp",
    "log",
    "tanh",
    "atan2",
    "abs",
    "min",
    "max",
    "softplus",
    "step",
    "dot",
    "cross",
    "norm",
    "unit",
    "skew",
    "transpose",
    "diag",
    "rotation",
    "frame",
    "initial",
    "at_time",
    "rate",
    "akima",
    "zcc",
    "table",
    "rigid",
    "euler",
    // Names the generated elements use locally (lets, connections, nested joints).
    "value",
    "dir",
    "sep",
    "axis_n",
    "b1",
    "b2",
    "dx",
    "dy",
    "dz",
    "ax",
    "ay",
    "az",
];

pub struct Names {
    used: HashSet<String>,
    raw: HashSet<String>,
    reserved: HashSet<String>,
}

impl Names {
    pub fn new() -> Names {
        let mut reserved: HashSet<String> = RESERVED.iter().map(|s| s.to_string()).collect();
        // Every top-level declaration of the standard library (`joint fix_dof(`, `fn
        // carried(`, ...): a model name equal to one would shadow it.
        for (_, text) in fdc_stdlib::FILES {
            for line in text.lines() {
                let mut w = line.split_whitespace();
                if let (
                    Some("body" | "joint" | "force" | "driver" | "sensor" | "element" | "fn"),
                    Some(n),
                ) = (w.next(), w.next())
                {
                    let n: String = n
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    reserved.insert(n);
                }
            }
        }
        Names {
            used: HashSet::new(),
            raw: HashSet::new(),
            reserved,
        }
    }

    /// The identifier for `raw` (or `fallback` when it is empty). A name given twice is
    /// an error: expressions refer to items by name.
    pub fn claim(
        &mut self,
        raw: &str,
        fallback: &str,
        entry: Option<&Entry>,
        block: &Block,
        errors: &mut Vec<Error>,
    ) -> String {
        if !raw.is_empty() && !self.raw.insert(raw.to_string()) {
            let span = entry.map_or(block.head_span(), |e| e.value.span.clone());
            errors.push(Error::new(
                Kind::Value,
                span,
                format!("a second item is named `{raw}`"),
                "name used before",
                "names are unique in a model (expressions refer to them)",
            ));
        }
        let mut id = identifier(if raw.is_empty() { fallback } else { raw });
        if self.reserved.contains(&id) {
            id.push('_');
        }
        let base = id.clone();
        let mut k = 2;
        while self.used.contains(&id) {
            id = format!("{base}_{k}");
            k += 1;
        }
        self.used.insert(id.clone());
        id
    }
}

/// Letters, digits and `_` kept, every other character `_`; a leading digit gets `n_`.
pub fn identifier(raw: &str) -> String {
    let mut s: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert_str(0, "n_");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::identifier;

    #[test]
    fn names_become_identifiers() {
        assert_eq!(identifier("mass 1"), "mass_1");
        assert_eq!(identifier("1st-link"), "n_1st_link");
        assert_eq!(identifier("Feder(k)"), "Feder_k_");
    }
}
