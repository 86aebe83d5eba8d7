//! Operation counts of IR functions, each shared node counted once.

use crate::graph::{Func, Graph, Id, Op};
use crate::print::kind_name;
use std::collections::BTreeMap;
use std::fmt;

/// What the outputs of a function need. A node used by several outputs (or several
/// times by one) is counted once: this is what the generated code computes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OpStats {
    /// Operations by kind name (`add`, `mul`, `sqrt`, `select`, ...; see
    /// [`crate::print::kind_name`]). Leaves are not in here.
    pub by_kind: BTreeMap<&'static str, usize>,
    /// Number of operations (all kinds, each shared node once).
    pub total: usize,
    /// Distinct constants, input elements and symbols the outputs read.
    pub constants: usize,
    pub inputs: usize,
    pub symbols: usize,
    /// Operations that more than one operation or output uses.
    pub shared: usize,
}

/// Counts the operations `outputs` need. Output ids that are not nodes of `graph`
/// are ignored (the interpreter reports them as errors).
pub fn stats(graph: &Graph, outputs: &[Id]) -> OpStats {
    let n = graph.len();
    let mut uses = vec![0usize; n];
    let mut needed = vec![false; n];
    for &o in outputs.iter().filter(|o| o.index() < n) {
        needed[o.index()] = true;
        uses[o.index()] += 1;
    }
    for id in graph.cone(outputs) {
        needed[id.index()] = true;
        for a in graph.op(id).operands() {
            uses[a.index()] += 1;
        }
    }
    let mut s = OpStats::default();
    for i in (0..n).filter(|&i| needed[i]) {
        let op = graph.nodes()[i];
        match op {
            Op::Const(_) => s.constants += 1,
            Op::Input(..) => s.inputs += 1,
            Op::Sym(_) => s.symbols += 1,
            _ => {
                *s.by_kind.entry(kind_name(&op)).or_default() += 1;
                s.total += 1;
                if uses[i] > 1 {
                    s.shared += 1;
                }
            }
        }
    }
    s
}

/// The `total` of [`stats`] by a walk of the outputs' cone only (its cost is that of
/// the function, not of the graph it lives in): the driver counts every role of every
/// type on the warm path (`RoleFn::ops`, the runtime's counted cost of a call).
pub fn op_count(graph: &Graph, outputs: &[Id]) -> usize {
    graph
        .cone(outputs)
        .into_iter()
        .filter(|&id| !matches!(graph.op(id), Op::Const(_) | Op::Input(..) | Op::Sym(_)))
        .count()
}

/// The input arrays the outputs depend on. Simplification only removes operations,
/// so the compiled function of these outputs reads no other array (the runtime
/// gathers only these).
pub fn reads(graph: &Graph, outputs: &[Id]) -> fdc_abi::Reads {
    graph
        .cone(outputs)
        .into_iter()
        .fold(fdc_abi::Reads::NONE, |r, id| match graph.op(id) {
            Op::Input(slot, _) => r.with(slot),
            _ => r,
        })
}

/// [`stats`] of a function's outputs.
pub fn func_stats(graph: &Graph, func: &Func) -> OpStats {
    stats(graph, &func.outputs)
}

impl fmt::Display for OpStats {
    /// One line: `12 ops (add 4, mul 6, sqrt 2), 3 shared, 5 inputs, 2 constants`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ops", self.total)?;
        if !self.by_kind.is_empty() {
            let kinds: Vec<String> = self
                .by_kind
                .iter()
                .map(|(k, v)| format!("{k} {v}"))
                .collect();
            write!(f, " ({})", kinds.join(", "))?;
        }
        write!(
            f,
            ", {} shared, {} inputs, {} constants",
            self.shared, self.inputs, self.constants
        )?;
        if self.symbols > 0 {
            write!(f, ", {} symbols", self.symbols)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::Slot;

    #[test]
    fn shared_nodes_count_once_and_unused_nodes_not_at_all() {
        let mut g = Graph::new();
        let x = g.input(Slot::Q, 0);
        let y = g.input(Slot::Q, 1);
        let unused = g.sin(x);
        let d = g.sub(x, y);
        let d2 = g.mul(d, d);
        let one = g.constant(1.0);
        let e = g.add2(d2, one);
        let r = g.sqrt(e);
        let s = stats(&g, &[r, d2, d2]);
        assert_eq!(s.total, 4);
        assert_eq!(op_count(&g, &[r, d2, d2]), 4);
        assert_eq!(s.by_kind.get("sub"), Some(&1));
        assert_eq!(s.by_kind.get("mul"), Some(&1));
        assert_eq!(s.by_kind.get("add"), Some(&1));
        assert_eq!(s.by_kind.get("sqrt"), Some(&1));
        assert_eq!(s.by_kind.get("sin"), None);
        // d is used twice by d2; d2 by e and by two outputs.
        assert_eq!(s.shared, 2);
        assert_eq!((s.inputs, s.constants, s.symbols), (2, 1, 0));
        assert_eq!(
            s.to_string(),
            "4 ops (add 1, mul 1, sqrt 1, sub 1), 2 shared, 2 inputs, 1 constants"
        );
        let _ = unused;
    }

    #[test]
    fn malformed_graph_and_bad_outputs_do_not_panic() {
        let mut g = Graph::new();
        let x = g.input(crate::graph::Slot::Q, 0);
        let bad = g.add(Op::Unary(crate::graph::Unary::Neg, x));
        let mut big = Graph::new();
        let far = (0..41).map(|i| big.constant(i as f64)).last().unwrap();
        let s = stats(&g, &[bad, far]);
        assert_eq!((s.total, s.by_kind.get("neg")), (1, Some(&1)));
    }
}
