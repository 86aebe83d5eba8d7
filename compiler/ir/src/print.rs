//! The stable text form of IR functions, used by snapshot tests and `fdc ir`.
//!
//! Format (one function):
//!
//! ```text
//! func spring(q: 14, p: 3)
//!   %0 = sub q[0], q[7]
//!   %1 = mul %0, %0
//!   %2 = select lt %1, 1.0, %1, -0.0
//!   out[0] = %2
//!   out[1] = 0.5
//! ```
//!
//! Only operations get a number; leaves are written in place: inputs as `q[0]`,
//! symbols as `s7`, constants as the round-trip `{:?}` of the `f64` (`-0.0`, `inf`,
//! `NaN`; a NaN with a payload other than the default one as `NaN(0x…)`).
//! A spline node is `spline d1 @<fingerprint>, %x`: derivative order, then a 64-bit
//! fingerprint of its table's contents (so the text does not depend on table indices).
//! Operations are numbered in the order the outputs first need them (depth-first,
//! operands left to right, each operation after its operands), so the text depends
//! only on the expressions, not on node ids or on other functions sharing the graph.

use crate::graph::{Cmp, Func, Graph, Id, Op, Slot, Unary};
use std::collections::HashMap;
use std::fmt::Write;

/// Prints `func` (header with the non-empty input slots, the operations its outputs
/// need, then the outputs).
pub fn print_func(graph: &Graph, func: &Func) -> String {
    let mut header = format!("func {}(", func.name);
    let mut first = true;
    for slot in Slot::ALL {
        let n = func.inputs.get(slot);
        if n > 0 {
            if !first {
                header.push_str(", ");
            }
            first = false;
            let _ = write!(header, "{}: {n}", slot.name());
        }
    }
    header.push(')');
    print_with_header(graph, &header, &func.outputs)
}

/// Prints the operations needed by `outputs` (under a `outputs` header line).
pub fn print_outputs(graph: &Graph, outputs: &[Id]) -> String {
    print_with_header(graph, "outputs", outputs)
}

fn print_with_header(graph: &Graph, header: &str, outputs: &[Id]) -> String {
    let mut out = String::new();
    out.push_str(header);
    out.push('\n');
    let mut names: HashMap<Id, String> = HashMap::new();
    let mut next = 0usize;
    for (k, &o) in outputs.iter().enumerate() {
        if o.index() >= graph.len() {
            let _ = writeln!(out, "  out[{k}] = <no node {o}>");
            continue;
        }
        // Iterative post-order: deep chains (long sums) must not overflow the stack.
        let mut stack: Vec<(Id, bool)> = vec![(o, false)];
        while let Some((id, expanded)) = stack.pop() {
            if names.contains_key(&id) {
                continue;
            }
            let op = graph.op(id);
            if let Some(leaf) = leaf_text(&op) {
                names.insert(id, leaf);
                continue;
            }
            if expanded {
                let line = op_text(graph, &op, &names);
                let name = format!("%{next}");
                next += 1;
                let _ = writeln!(out, "  {name} = {line}");
                names.insert(id, name);
            } else {
                stack.push((id, true));
                // Reversed so the leftmost operand is numbered first.
                for a in op.operands().into_iter().rev() {
                    if !names.contains_key(&a) {
                        stack.push((a, false));
                    }
                }
            }
        }
        let _ = writeln!(out, "  out[{k}] = {}", names[&o]);
    }
    out
}

/// The text of a constant: `{:?}` round-trips every finite value, `-0.0`, `inf` and
/// the default NaN; other NaN payloads are written out.
pub fn const_text(x: f64) -> String {
    if x.is_nan() && x.to_bits() != f64::NAN.to_bits() {
        format!("NaN(0x{:016x})", x.to_bits())
    } else {
        format!("{x:?}")
    }
}

fn leaf_text(op: &Op) -> Option<String> {
    match *op {
        Op::Const(bits) => Some(const_text(f64::from_bits(bits))),
        Op::Input(slot, i) => Some(format!("{}[{i}]", slot.name())),
        Op::Sym(s) => Some(format!("s{s}")),
        _ => None,
    }
}

pub(crate) fn unary_name(f: Unary) -> &'static str {
    match f {
        Unary::Neg => "neg",
        Unary::Sqrt => "sqrt",
        Unary::Sin => "sin",
        Unary::Cos => "cos",
        Unary::Tan => "tan",
        Unary::Exp => "exp",
        Unary::Log => "log",
        Unary::Tanh => "tanh",
        Unary::Abs => "abs",
    }
}

pub(crate) fn cmp_name(c: Cmp) -> &'static str {
    match c {
        Cmp::Lt => "lt",
        Cmp::Le => "le",
        Cmp::Gt => "gt",
        Cmp::Ge => "ge",
        Cmp::Eq => "eq",
        Cmp::Ne => "ne",
    }
}

/// The name of the kind of an operation (`add`, `powi`, `select`, ...); leaves are
/// `const`, `input` and `sym`.
pub fn kind_name(op: &Op) -> &'static str {
    match *op {
        Op::Const(_) => "const",
        Op::Input(..) => "input",
        Op::Sym(_) => "sym",
        Op::Unary(f, _) => unary_name(f),
        Op::Add(..) => "add",
        Op::Sub(..) => "sub",
        Op::Mul(..) => "mul",
        Op::Div(..) => "div",
        Op::Powi(..) => "powi",
        Op::Pow(..) => "pow",
        Op::Atan2(..) => "atan2",
        Op::Min(..) => "min",
        Op::Max(..) => "max",
        Op::Select(..) => "select",
        Op::Spline(..) => "spline",
    }
}

fn op_text(graph: &Graph, op: &Op, names: &HashMap<Id, String>) -> String {
    let n = |id: Id| names[&id].as_str();
    let kind = kind_name(op);
    match *op {
        Op::Powi(a, e) => format!("powi {}, {e}", n(a)),
        Op::Select(c, [a, b, t, f]) => format!(
            "select {} {}, {}, {}, {}",
            cmp_name(c),
            n(a),
            n(b),
            n(t),
            n(f)
        ),
        // The table by a fingerprint of its contents, not by its index in the graph.
        Op::Spline(t, d, x) => match graph.table(t) {
            Some(table) => format!("spline d{d} @{:016x}, {}", table.fingerprint(), n(x)),
            None => format!("spline d{d} <no table {t}>, {}", n(x)),
        },
        _ => {
            let args: Vec<&str> = op.operands().into_iter().map(n).collect();
            format!("{kind} {}", args.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::SlotSizes;

    #[test]
    fn numbering_follows_first_use_not_node_ids() {
        let mut g = Graph::new();
        // Build b before a so node ids disagree with first use.
        let y = g.input(Slot::V, 1);
        let b = g.sin(y);
        let x = g.input(Slot::Q, 0);
        let a = g.mul(x, x);
        let s = g.add2(a, b);
        let text = print_outputs(&g, &[a, s]);
        // The graph stores `a + b` as `b + a` (operands in id order); the printer
        // shows the stored order but numbers by first use.
        assert_eq!(
            text,
            "outputs\n  %0 = mul q[0], q[0]\n  out[0] = %0\n  %1 = sin v[1]\n  %2 = add %1, %0\n  out[1] = %2\n"
        );
    }

    #[test]
    fn constants_round_trip() {
        for x in [
            0.0,
            -0.0,
            1.5,
            -2.0e-310,
            f64::INFINITY,
            f64::NEG_INFINITY,
            1e300,
        ] {
            let t = const_text(x);
            assert_eq!(t.parse::<f64>().unwrap().to_bits(), x.to_bits(), "{t}");
        }
        assert_eq!(const_text(f64::NAN), "NaN");
        let odd = f64::from_bits(0x7ff0_0000_0000_0001);
        assert_eq!(const_text(odd), "NaN(0x7ff0000000000001)");
    }

    #[test]
    fn header_lists_nonempty_slots() {
        let mut g = Graph::new();
        let x = g.input(Slot::P, 0);
        let f = Func {
            name: "f".into(),
            inputs: SlotSizes([2, 0, 0, 0, 1, 0, 0, 1]),
            outputs: vec![x],
        };
        assert_eq!(
            print_func(&g, &f),
            "func f(q: 2, p: 1, t: 1)\n  out[0] = p[0]\n"
        );
    }

    #[test]
    fn missing_output_node_is_reported_not_panicking() {
        let g = Graph::new();
        assert_eq!(
            print_outputs(&g, &[Id::from_index(3)]),
            "outputs\n  out[0] = <no node %3>\n"
        );
    }
}
