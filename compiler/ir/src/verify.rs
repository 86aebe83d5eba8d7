//! The IR's invariants, stated and checked in one place (Cranelift's verifier is the
//! model: passes assume the invariants, the verifier is what checks them).
//!
//! Of a [`Graph`], by construction (its fields are private, [`Graph::add`] is the
//! only way to make a node):
//! 1. **Topological ids.** Every operand of a node has a smaller id than the node, so
//!    every pass is one forward sweep and a cone sorted by id is an evaluation order
//!    (`add` asserts it).
//! 2. **Hash-consing.** Equal operations are one node; `+` and `×` have their operands
//!    in id order (`min`/`max` keep theirs, see [`Graph::add`]); constants are
//!    compared by bit pattern.
//! 3. **Tables by contents.** Spline tables with equal contents are stored once.
//!
//! Of a [`Func`] on a graph, checked here by [`verify_func`]:
//! 4. **Outputs exist.** Every output is a node of the graph.
//! 5. **Inputs in range.** Every input the outputs need reads an index below the
//!    function's [`SlotSizes`](crate::SlotSizes) for its slot.
//! 6. **Splines resolve.** Every spline node needed names a table of the graph and a
//!    derivative of at most [`MAX_DERIV`].
//! 7. **No symbols when compiled.** At [`Stage::Compiled`] (what the backend takes)
//!    no [`Op::Sym`] is needed: symbols are placeholders of differentiation.

use crate::graph::{Func, Graph, Id, Op};
use crate::spline::MAX_DERIV;

/// Which invariants apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// As differentiation builds it: symbols allowed.
    Derived,
    /// For code generation: symbols substituted.
    Compiled,
}

/// A broken invariant, with the node that breaks it (if it is one node).
#[derive(Clone, Debug, PartialEq)]
pub struct VerifyError {
    pub node: Option<Id>,
    pub message: String,
}

impl std::fmt::Display for VerifyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// Checks invariants 4–7 for `func` on `graph`.
pub fn verify_func(graph: &Graph, func: &Func, stage: Stage) -> Result<(), VerifyError> {
    if let Some(o) = graph.foreign(&func.outputs) {
        return Err(VerifyError {
            node: Some(o),
            message: format!(
                "output {o} is not a node of the graph ({} nodes)",
                graph.len()
            ),
        });
    }
    for id in graph.cone(&func.outputs) {
        let bad = |message: String| {
            Err(VerifyError {
                node: Some(id),
                message,
            })
        };
        match graph.op(id) {
            Op::Sym(s) if stage == Stage::Compiled => {
                return bad(format!(
                    "symbol s{s} (node {id}) reached the backend unsubstituted"
                ))
            }
            Op::Spline(t, d, _) if graph.table(t).is_none() || d > MAX_DERIV => {
                return bad(format!(
                    "node {id} is a spline of derivative {d} of table {t}, which the graph does not hold"
                ))
            }
            Op::Input(slot, index) => {
                let size = func.inputs.get(slot);
                if index as usize >= size {
                    return bad(format!(
                        "node {id} reads {}[{index}] but the function declares {size} {} value(s)",
                        slot.name(),
                        slot.name()
                    ));
                }
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{Slot, SlotSizes};

    fn func(outputs: Vec<Id>, p: usize) -> Func {
        Func {
            name: "f".into(),
            inputs: SlotSizes([0, 0, 0, 0, p, 0, 0, 0]),
            outputs,
        }
    }

    #[test]
    fn each_function_invariant_is_checked() {
        let mut g = Graph::new();
        let x = g.input(Slot::P, 2);
        let s = g.sym(9);
        let y = g.add2(x, s);
        let sp = g.spline(0, 1, x);
        assert_eq!(verify_func(&g, &func(vec![y], 3), Stage::Derived), Ok(()));
        let e = verify_func(&g, &func(vec![y], 3), Stage::Compiled).unwrap_err();
        assert_eq!((e.node, e.message.contains("symbol s9")), (Some(s), true));
        let e = verify_func(&g, &func(vec![x], 2), Stage::Derived).unwrap_err();
        assert!(e.message.contains("reads p[2]"), "{e}");
        let e = verify_func(&g, &func(vec![sp], 3), Stage::Derived).unwrap_err();
        assert!(e.message.contains("table 0"), "{e}");
        let mut big = Graph::new();
        let far = (0..8).map(|i| big.input(Slot::P, i)).last().unwrap();
        let e = verify_func(&g, &func(vec![far], 3), Stage::Derived).unwrap_err();
        assert_eq!(e.node, Some(far));
        assert!(e.message.contains("%7"), "{e}");
    }
}
