//! The IR interpreter: the reference every other evaluation (simplified IR, JIT code,
//! derivatives) is checked against. It evaluates each needed node once, in id order
//! (ids are topological), so shared nodes are never recomputed.

use crate::graph::{Graph, Id, Op, Slot, Unary};
use crate::spline::SplineTable;
use std::fmt;

/// The eight input arrays, in signature order (see [`Slot`]).
pub type Inputs<'a> = [&'a [f64]; 8];

#[derive(Clone, Debug, PartialEq)]
pub enum EvalError {
    /// A symbol reached evaluation: it should have been substituted first.
    UnresolvedSymbol(u32),
    /// An input index outside the array given for its slot.
    InputOutOfRange { slot: Slot, index: u32, len: usize },
    /// An output id that is not a node of the graph.
    NoSuchNode(Id),
    /// A spline node names a table the graph does not hold.
    NoSuchTable(u32),
}

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EvalError::UnresolvedSymbol(s) => write!(f, "symbol s{s} was not substituted"),
            EvalError::InputOutOfRange { slot, index, len } => write!(
                f,
                "input {}[{index}] read, but only {len} values were given",
                slot.name()
            ),
            EvalError::NoSuchNode(id) => write!(f, "node {id} does not exist"),
            EvalError::NoSuchTable(t) => write!(f, "spline table {t} does not exist"),
        }
    }
}

impl std::error::Error for EvalError {}

/// The value of one operation on already computed operands; `tables` are the spline
/// tables of the graph (a spline node naming a missing table gives NaN: [`eval`]
/// reports it as an error before).
pub fn apply(op: &Op, tables: &[SplineTable], val: impl Fn(Id) -> f64) -> f64 {
    match *op {
        Op::Const(bits) => f64::from_bits(bits),
        Op::Input(..) | Op::Sym(_) => unreachable!("leaves are read by the caller"),
        Op::Unary(f, a) => {
            let x = val(a);
            match f {
                Unary::Neg => -x,
                Unary::Sqrt => x.sqrt(),
                Unary::Sin => x.sin(),
                Unary::Cos => x.cos(),
                Unary::Tan => x.tan(),
                Unary::Exp => x.exp(),
                Unary::Log => x.ln(),
                Unary::Tanh => x.tanh(),
                Unary::Abs => x.abs(),
            }
        }
        Op::Add(a, b) => val(a) + val(b),
        Op::Sub(a, b) => val(a) - val(b),
        Op::Mul(a, b) => val(a) * val(b),
        Op::Div(a, b) => val(a) / val(b),
        Op::Powi(a, n) => val(a).powi(n),
        Op::Pow(a, b) => val(a).powf(val(b)),
        Op::Atan2(y, x) => val(y).atan2(val(x)),
        Op::Min(a, b) => val(a).min(val(b)),
        Op::Max(a, b) => val(a).max(val(b)),
        Op::Select(cmp, [a, b, t, f]) => {
            if cmp.eval(val(a), val(b)) {
                val(t)
            } else {
                val(f)
            }
        }
        Op::Spline(t, d, x) => tables
            .get(t as usize)
            .map_or(f64::NAN, |table| table.eval(d, val(x))),
    }
}

/// Evaluates the nodes `outputs` of `graph` for the given inputs.
pub fn eval(graph: &Graph, outputs: &[Id], inputs: &Inputs) -> Result<Vec<f64>, EvalError> {
    let n = graph.len();
    // Only what the outputs need is evaluated, so unrelated parts of a shared graph
    // cost nothing; a malformed graph is reported, not evaluated.
    let needed = graph.needed(outputs).map_err(EvalError::NoSuchNode)?;
    let mut values = vec![0.0; n];
    for i in 0..n {
        if !needed[i] {
            continue;
        }
        let op = graph.nodes()[i];
        values[i] = match op {
            Op::Input(slot, index) => {
                let arr = inputs[slot as usize];
                *arr.get(index as usize).ok_or(EvalError::InputOutOfRange {
                    slot,
                    index,
                    len: arr.len(),
                })?
            }
            Op::Sym(s) => return Err(EvalError::UnresolvedSymbol(s)),
            Op::Spline(t, ..) if graph.table(t).is_none() => return Err(EvalError::NoSuchTable(t)),
            _ => apply(&op, graph.tables(), |a| values[a.index()]),
        };
    }
    Ok(outputs.iter().map(|o| values[o.index()]).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::Cmp;

    #[test]
    fn evaluates_shared_dag_against_direct_formula() {
        let mut g = Graph::new();
        let x = g.input(Slot::Q, 0);
        let y = g.input(Slot::T, 0);
        let s = g.sin(x);
        let xy = g.mul(x, y);
        let e = g.add2(s, xy);
        let e2 = g.mul(e, e);
        let zero = g.constant(0.0);
        let sel = g.select(Cmp::Gt, y, zero, e2, s);
        let q = [0.7];
        let t = [1.3];
        let empty: &[f64] = &[];
        let inputs = [&q[..], empty, empty, empty, empty, empty, empty, &t[..]];
        let out = eval(&g, &[e2, sel], &inputs).unwrap();
        let direct = (0.7f64.sin() + 0.7 * 1.3).powi(2);
        assert_eq!(out[0], direct);
        assert_eq!(out[1], direct);
    }

    #[test]
    fn reports_missing_inputs_and_symbols() {
        let mut g = Graph::new();
        let x = g.input(Slot::P, 3);
        let s = g.sym(7);
        let empty: &[f64] = &[];
        let inputs = [empty; 8];
        assert!(matches!(
            eval(&g, &[x], &inputs),
            Err(EvalError::InputOutOfRange { index: 3, .. })
        ));
        assert_eq!(eval(&g, &[s], &inputs), Err(EvalError::UnresolvedSymbol(7)));
    }

    #[test]
    fn outputs_that_are_not_nodes_are_errors() {
        // (An operand that is not an earlier node cannot be built: `Graph::add`
        // asserts it; an output from another graph can be passed.)
        let mut g = Graph::new();
        g.input(Slot::Q, 0);
        let mut big = Graph::new();
        let far = (0..8).map(|i| big.input(Slot::P, i)).last().unwrap();
        let empty: &[f64] = &[];
        assert_eq!(
            eval(&g, &[far], &[empty; 8]),
            Err(EvalError::NoSuchNode(far))
        );
    }
}
