//! Cost model and DAG-aware extraction.
//!
//! Tree cost (what egg's `Extractor` minimizes) counts a shared subexpression once
//! per use; the generated code computes it once. The greedy DAG extraction here keeps,
//! per e-class, the *set* of classes its best choice needs and minimizes the sum over
//! that set, so shared nodes are counted once. It is a heuristic (optimal DAG
//! extraction is NP-hard); the caller compares its result with egg's tree extraction
//! and the input and keeps the cheapest.

use super::lang::{to_op, Arg, FdGraph, FdLang, Konst};
use crate::graph::{Graph, Id as NodeId, Op, Unary};
use egg::{CostFunction, Id, Language};
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};

/// Number of multiplications `powi(x, |n|)` performs by repeated squaring.
fn powi_muls(n: i32) -> u32 {
    let m = n.unsigned_abs();
    if m == 0 {
        0
    } else {
        (31 - m.leading_zeros()) + m.count_ones() - 1
    }
}

/// Estimated cost of one operation (roughly cycles of throughput; leaves are free).
pub fn op_cost(op: &Op) -> f64 {
    match *op {
        Op::Const(_) | Op::Input(..) | Op::Sym(_) => 0.0,
        Op::Unary(Unary::Neg | Unary::Abs, _) => 1.0,
        Op::Unary(Unary::Sqrt, _) => 4.0,
        Op::Unary(_, _) => 20.0,
        Op::Add(..) | Op::Sub(..) | Op::Mul(..) | Op::Min(..) | Op::Max(..) => 1.0,
        Op::Div(..) => 4.0,
        Op::Select(..) => 2.0,
        Op::Pow(..) | Op::Atan2(..) => 20.0,
        Op::Powi(_, n) => {
            // Each multiplication a hair cheaper than one written out, so the compact
            // form wins ties; never free (powi(x,1) must lose to x).
            let muls = powi_muls(n) as f64 * 0.99;
            let cost = muls + if n < 0 { 4.0 } else { 0.0 };
            if cost == 0.0 {
                1.0
            } else {
                cost
            }
        }
    }
}

/// Total cost of what `outputs` need, each shared node once. Ids must be valid.
pub fn graph_cost(graph: &Graph, outputs: &[NodeId]) -> f64 {
    let mut needed = vec![false; graph.len()];
    for o in outputs {
        needed[o.index()] = true;
    }
    let mut total = 0.0;
    for i in (0..graph.len()).rev() {
        if needed[i] {
            let op = graph.op(NodeId(i as u32));
            total += op_cost(&op);
            for a in op.operands() {
                needed[a.index()] = true;
            }
        }
    }
    total
}

/// Cost of an e-node (children do not matter except a `powi` exponent).
pub fn node_cost(egraph: &FdGraph, node: &FdLang) -> f64 {
    let op = to_op(node, |c| match egraph[c].data {
        Some(Konst::I(n)) => Arg::Int(n),
        _ => Arg::Node(NodeId(0)),
    });
    match op {
        Some(op) => op_cost(&op),
        // An Int leaf: not a value, never chosen for one.
        None => 0.0,
    }
}

/// Tree cost for egg's `Extractor`.
pub struct TreeCost<'a>(pub &'a FdGraph);

impl CostFunction<FdLang> for TreeCost<'_> {
    type Cost = f64;
    fn cost<C>(&mut self, enode: &FdLang, mut costs: C) -> f64
    where
        C: FnMut(Id) -> f64,
    {
        let own = node_cost(self.0, enode);
        enode.fold(own, |sum, id| sum + costs(id))
    }
}

struct Best {
    node: FdLang,
    /// Every class this choice needs (itself included) with the cost of the node
    /// chosen there when this entry was computed.
    needs: BTreeMap<Id, f64>,
    total: f64,
}

/// Work bound of [`dag_choices`], in set entries copied. The sets grow with the
/// depth of the expression, so long chains (a 1000-term sum) make the greedy
/// extraction quadratic; past this budget it gives up and tree extraction is used.
const DAG_BUDGET: usize = 1_000_000;

/// Greedy DAG extraction: a choice of e-node per reachable class, or `None` when
/// the work budget ran out.
pub fn dag_choices(egraph: &FdGraph) -> Option<HashMap<Id, FdLang>> {
    let mut work = 0usize;
    // parents[c] = (parent class, node) pairs that use class c.
    let mut parents: HashMap<Id, Vec<(Id, usize)>> = HashMap::new();
    let mut classes: Vec<Id> = egraph.classes().map(|c| c.id).collect();
    classes.sort();
    let mut queue: VecDeque<(Id, usize)> = VecDeque::new();
    let mut queued: HashSet<(Id, usize)> = HashSet::new();
    for &c in &classes {
        for (k, n) in egraph[c].nodes.iter().enumerate() {
            for &ch in n.children() {
                parents.entry(egraph.find(ch)).or_default().push((c, k));
            }
            if n.is_leaf() && queued.insert((c, k)) {
                queue.push_back((c, k));
            }
        }
    }
    let mut best: HashMap<Id, Best> = HashMap::new();
    while let Some((c, k)) = queue.pop_front() {
        queued.remove(&(c, k));
        let node = &egraph[c].nodes[k];
        let kids: Vec<Id> = node.children().iter().map(|&ch| egraph.find(ch)).collect();
        if kids.iter().any(|ch| !best.contains_key(ch)) {
            continue;
        }
        // Union of the children's sets, starting from the largest to copy least.
        let mut order = kids.clone();
        order.sort_by_key(|ch| std::cmp::Reverse(best[ch].needs.len()));
        let mut needs = order
            .first()
            .map(|ch| best[ch].needs.clone())
            .unwrap_or_default();
        for ch in order.iter().skip(1) {
            for (&k2, &v) in &best[ch].needs {
                needs.insert(k2, v);
            }
        }
        work += needs.len();
        if work > DAG_BUDGET {
            return None;
        }
        if needs.contains_key(&c) {
            continue; // the choice would need its own class: a cycle
        }
        needs.insert(c, node_cost(egraph, node));
        let total: f64 = needs.values().sum();
        let better = match best.get(&c) {
            None => true,
            Some(b) => total < b.total - 1e-9,
        };
        if better {
            best.insert(
                c,
                Best {
                    node: node.clone(),
                    needs,
                    total,
                },
            );
            if let Some(ps) = parents.get(&c) {
                for &p in ps {
                    if queued.insert(p) {
                        queue.push_back(p);
                    }
                }
            }
        }
    }
    Some(best.into_iter().map(|(c, b)| (c, b.node)).collect())
}

/// Builds the chosen expressions of `roots` into a fresh graph (hash-consed, so
/// equal choices in different classes still become one node). `None` if a choice is
/// missing, cyclic, or not a value (a bug elsewhere; the caller falls back).
pub fn build(
    egraph: &FdGraph,
    choice: impl Fn(Id) -> Option<FdLang>,
    roots: &[Id],
) -> Option<(Graph, Vec<NodeId>)> {
    let mut g = Graph::new();
    let mut done: HashMap<Id, Arg<NodeId>> = HashMap::new();
    let mut on_path: HashSet<Id> = HashSet::new();
    let mut outputs = Vec::with_capacity(roots.len());
    for &root in roots {
        let root = egraph.find(root);
        // Iterative post-order (deep sums must not overflow the stack).
        let mut stack: Vec<(Id, bool)> = vec![(root, false)];
        while let Some((c, expanded)) = stack.pop() {
            if done.contains_key(&c) {
                continue;
            }
            if let Some(Konst::I(n)) = egraph[c].data {
                done.insert(c, Arg::Int(n));
                continue;
            }
            let node = choice(c)?;
            if expanded {
                on_path.remove(&c);
                let op = to_op(&node, |ch| {
                    done.get(&egraph.find(ch))
                        .copied()
                        .unwrap_or(Arg::Node(NodeId(u32::MAX)))
                })?;
                if op.operands().iter().any(|a| a.0 == u32::MAX) {
                    return None;
                }
                done.insert(c, Arg::Node(g.add(op)));
            } else {
                if !on_path.insert(c) {
                    return None;
                }
                stack.push((c, true));
                for &ch in node.children().iter().rev() {
                    let ch = egraph.find(ch);
                    if on_path.contains(&ch) {
                        return None;
                    }
                    if !done.contains_key(&ch) {
                        stack.push((ch, false));
                    }
                }
            }
        }
        match done.get(&root) {
            Some(Arg::Node(id)) => outputs.push(*id),
            _ => return None,
        }
    }
    Some((g, outputs))
}
