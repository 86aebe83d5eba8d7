//! Numeric evaluation of IR nodes at build time (parameter defaults, `initial(e)`,
//! fields of nested instances), with the rotation symbols of the connected bodies
//! taken from their quaternions. Same arithmetic as the IR interpreter.

use fdc_ir::{interp, Graph, Id, Op, Slot};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

/// Whether a value computed at build time may depend on time (then t = 0 is used).
#[derive(Clone, Copy, PartialEq)]
pub enum Time {
    /// `initial(e)`: the value at t = 0 by definition.
    Initial,
    /// `at_time(e, T)`: the value at t = T in the initial configuration.
    At(f64),
    /// A parameter value: a dependence on t would be silently frozen, so it is an error.
    Forbidden,
}

/// An element's local configuration at build time: q in the element's layout (own
/// coordinates, then each connected body's block) and where the quaternion of each
/// connected body starts in it (`None`: a body without rotation, a point mass).
#[derive(Clone, Debug, Default)]
pub struct LocalQ {
    pub q: Vec<f64>,
    pub theta: Vec<Option<usize>>,
}

/// The cones of node lists evaluated before in one graph. Every instance of an element
/// type evaluates the same nodes (its parameter defaults, hidden slots, the fields of
/// its nested instances) with its own numbers: the walk that finds what they need, and
/// where each needed node sits in that cone, are per-type work, done once. Valid for
/// one graph only; since a graph only grows and a node never changes, a cone stays
/// right as nodes are added.
/// Also the values of the last evaluation, kept so the next one writes into memory it
/// has (a cone may have thousands of nodes, evaluated once per instance).
#[derive(Default)]
pub struct Cones {
    known: RefCell<HashMap<Vec<Id>, Rc<Cone>>>,
    values: RefCell<Vec<f64>>,
}

impl Cones {
    /// [`eval_nodes`] of `nodes` in `g`, the graph these cones belong to.
    pub fn eval(
        &self,
        g: &Graph,
        nodes: &[Id],
        q: &LocalQ,
        v: &[f64],
        p: &[f64],
        time: Time,
    ) -> Result<Vec<f64>, String> {
        check(g, nodes)?;
        let known = self.known.borrow().get(nodes).cloned();
        let cone = known.unwrap_or_else(|| {
            let c = Rc::new(Cone::new(g, nodes));
            self.known.borrow_mut().insert(nodes.to_vec(), c.clone());
            c
        });
        eval_cone(g, &cone, q, v, p, time, &mut self.values.borrow_mut())
    }
}

/// The operations of the nodes some roots need (in ascending id order, so operands
/// come first) and, for each, the position in that list of each of its operands: on
/// the path every instance takes, an operand's value is found among its node's own few
/// operands, not by a search of the whole cone.
pub struct Cone {
    ops: Vec<Op>,
    /// Node `i`'s operands are `operands[starts[i]..starts[i + 1]]`, at `at[..]`.
    starts: Vec<usize>,
    operands: Vec<Id>,
    at: Vec<usize>,
    /// Where each root is.
    roots: Vec<usize>,
}

impl Cone {
    fn new(g: &Graph, roots: &[Id]) -> Cone {
        let ids = g.cone(roots);
        let ops: Vec<Op> = ids.iter().map(|&id| g.op(id)).collect();
        let mut starts = vec![0];
        let mut operands = Vec::new();
        for op in &ops {
            operands.extend(op.operands());
            starts.push(operands.len());
        }
        let index = |a: &Id| ids.binary_search(a).expect("a node of the cone");
        let at = operands.iter().map(index).collect();
        let roots = roots.iter().map(index).collect();
        Cone {
            ops,
            starts,
            operands,
            at,
            roots,
        }
    }

    /// The index in the cone of operand `a` of node `i`.
    fn operand(&self, i: usize, a: Id) -> usize {
        let range = self.starts[i]..self.starts[i + 1];
        let k = self.operands[range.clone()]
            .iter()
            .position(|&o| o == a)
            .expect("an operand of the node");
        self.at[range.start + k]
    }
}

fn check(g: &Graph, nodes: &[Id]) -> Result<(), String> {
    match g.foreign(nodes) {
        Some(id) => Err(format!("internal: node {id} is not part of the graph")),
        None => Ok(()),
    }
}

/// Evaluates `nodes` with local configuration `q`, velocities `v`, parameters `p`, zero
/// accelerations, multipliers and increments.
pub fn eval_nodes(
    g: &Graph,
    nodes: &[Id],
    q: &LocalQ,
    v: &[f64],
    p: &[f64],
    time: Time,
) -> Result<Vec<f64>, String> {
    check(g, nodes)?;
    eval_cone(g, &Cone::new(g, nodes), q, v, p, time, &mut Vec::new())
}

/// [`eval_nodes`] of the roots of `cone`: the cost is that of the nodes needed, not of
/// the whole graph. `val` is scratch memory for the value of every node.
fn eval_cone(
    g: &Graph,
    cone: &Cone,
    lq: &LocalQ,
    v: &[f64],
    p: &[f64],
    time: Time,
    val: &mut Vec<f64>,
) -> Result<Vec<f64>, String> {
    let q = &lq.q[..];
    let rotations: Vec<Option<[[f64; 3]; 3]>> = lq
        .theta
        .iter()
        .map(|t| {
            t.and_then(|o| q.get(o..o + 4))
                .map(|c| fdc_diff::lie::num::shabana([c[0], c[1], c[2], c[3]]))
        })
        .collect();
    val.clear();
    for (i, &op) in cone.ops.iter().enumerate() {
        let x = match op {
            Op::Input(slot, k) => {
                let k = k as usize;
                let arr: &[f64] = match slot {
                    Slot::Q => q,
                    Slot::V => v,
                    Slot::P => p,
                    Slot::T | Slot::Vdot | Slot::Lambda | Slot::C | Slot::Delta => &[],
                };
                match slot {
                    Slot::Q | Slot::V | Slot::P => *arr.get(k).ok_or_else(|| {
                        format!(
                            "needs {}[{k}], which is not known at build time",
                            slot.name()
                        )
                    })?,
                    Slot::T if time == Time::Forbidden => {
                        return Err("depends on the time `t`: a parameter is a number fixed \
                                    at t = 0; only an instance's field may depend on t (it \
                                    becomes part of that instance's equations)"
                            .to_string())
                    }
                    Slot::T => match time {
                        Time::At(x) => x,
                        _ => 0.0,
                    },
                    _ => 0.0,
                }
            }
            Op::Sym(s) => {
                let (k, r) = (s as usize / 9, s as usize % 9);
                let a = rotations.get(k).copied().flatten().ok_or_else(|| {
                    format!("needs the rotation of body {k}, which is not connected")
                })?;
                a[r / 3][r % 3]
            }
            _ => interp::apply(&op, g.tables(), |a| val[cone.operand(i, a)]),
        };
        val.push(x);
    }
    Ok(cone.roots.iter().map(|&k| val[k]).collect())
}
