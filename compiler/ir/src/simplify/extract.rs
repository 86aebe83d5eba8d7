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
use egg::{Id, Language};
use std::collections::VecDeque;

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
        // A handful of selects for the search, loads and a short Horner chain.
        Op::Spline(..) => 20.0,
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
    // Summed from the last node down, the order the costs were always added in.
    let mut total = 0.0;
    for &id in graph.cone(outputs).iter().rev() {
        total += op_cost(&graph.op(id));
    }
    total
}

/// Cost of an e-node (children do not matter except a `powi` exponent).
pub fn node_cost(egraph: &FdGraph, node: &FdLang) -> f64 {
    let op = to_op(node, |c| match egraph[c].data {
        Some(Konst::I(n)) => Arg::Int(n),
        _ => Arg::Node(NodeId::from_index(0)),
    });
    match op {
        Some(op) => op_cost(&op),
        // An Int leaf: not a value, never chosen for one.
        None => 0.0,
    }
}

/// The e-graph flattened for the worklists: every e-node gets an index, with its
/// class, canonical child classes and cost computed once.
pub struct Setup {
    /// One more than the largest class id.
    n_ids: usize,
    class: Vec<Id>,
    node: Vec<FdLang>,
    kids: Vec<Vec<usize>>,
    cost: Vec<f64>,
    /// parents[c] = e-nodes (flat indices) that use class c.
    parents: Vec<Vec<usize>>,
    /// Leaf e-nodes: where a bottom-up worklist starts.
    leaves: Vec<usize>,
}

impl Setup {
    pub fn new(egraph: &FdGraph) -> Setup {
        let n_ids = egraph
            .classes()
            .map(|c| usize::from(c.id) + 1)
            .max()
            .unwrap_or(0);
        let mut classes: Vec<Id> = egraph.classes().map(|c| c.id).collect();
        classes.sort();
        let mut st = Setup {
            n_ids,
            class: Vec::new(),
            node: Vec::new(),
            kids: Vec::new(),
            cost: Vec::new(),
            parents: vec![Vec::new(); n_ids],
            leaves: Vec::new(),
        };
        for &c in &classes {
            for n in &egraph[c].nodes {
                let i = st.node.len();
                let kids: Vec<usize> = n
                    .children()
                    .iter()
                    .map(|&ch| usize::from(egraph.find(ch)))
                    .collect();
                for &k in &kids {
                    st.parents[k].push(i);
                }
                if kids.is_empty() {
                    st.leaves.push(i);
                }
                st.class.push(c);
                st.cost.push(node_cost(egraph, n));
                st.node.push(n.clone());
                st.kids.push(kids);
            }
        }
        st
    }
}

/// A FIFO worklist of e-nodes that holds each at most once.
struct Worklist {
    queue: VecDeque<usize>,
    queued: Vec<bool>,
}

impl Worklist {
    fn new(n: usize, start: &[usize]) -> Self {
        let mut w = Worklist {
            queue: VecDeque::new(),
            queued: vec![false; n],
        };
        for &i in start {
            w.push(i);
        }
        w
    }
    fn push(&mut self, i: usize) {
        if !self.queued[i] {
            self.queued[i] = true;
            self.queue.push_back(i);
        }
    }
    fn pop(&mut self) -> Option<usize> {
        let i = self.queue.pop_front()?;
        self.queued[i] = false;
        Some(i)
    }
}

/// Tree-cost extraction (each use of a class pays for it again), by a bottom-up
/// worklist so that deep chains settle in one pass. All operations cost > 0, so the
/// cheapest choices never form a cycle.
///
/// With `paid`, a class marked there costs its users nothing (it is computed anyway,
/// by the previous extraction); that is one round of [`iterate`]. Then choices may
/// form a cycle, which [`build`] detects.
pub fn tree_choices(st: &Setup, paid: Option<&[bool]>) -> Vec<Option<FdLang>> {
    let mut best: Vec<Option<(f64, usize)>> = vec![None; st.n_ids];
    let mut work = Worklist::new(st.node.len(), &st.leaves);
    while let Some(i) = work.pop() {
        let mut total = st.cost[i];
        let mut ready = true;
        for &ci in &st.kids[i] {
            match best[ci] {
                Some(_) if paid.is_some_and(|p| p.get(ci) == Some(&true)) => {}
                Some((cost, _)) => total += cost,
                None => {
                    ready = false;
                    break;
                }
            }
        }
        if !ready {
            continue;
        }
        let c = usize::from(st.class[i]);
        let better = match best[c] {
            None => true,
            Some((b, _)) => total < b - 1e-9,
        };
        if better {
            best[c] = Some((total, i));
            for &p in &st.parents[c] {
                work.push(p);
            }
        }
    }
    best.into_iter()
        .map(|b| b.map(|(_, i)| st.node[i].clone()))
        .collect()
}

struct Best {
    node: FdLang,
    /// Every class this choice needs (itself included), sorted by class, with the
    /// cost of the node chosen there when this entry was computed.
    needs: Vec<(Id, f64)>,
    total: f64,
}

/// Union of two sorted `needs` lists (the left entry wins on equal classes: both
/// come from the same class, possibly from different rounds).
fn merge(a: &[(Id, f64)], b: &[(Id, f64)]) -> Vec<(Id, f64)> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].0.cmp(&b[j].0) {
            std::cmp::Ordering::Less => {
                out.push(a[i]);
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                out.push(b[j]);
                j += 1;
            }
            std::cmp::Ordering::Equal => {
                out.push(a[i]);
                i += 1;
                j += 1;
            }
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

/// Work bound of [`dag_choices`], in set entries copied. The sets grow with the
/// size of what a class needs, so big derivative graphs and long chains make the
/// greedy extraction quadratic; past this budget it gives up and [`iterate`] alone
/// is used.
const DAG_BUDGET: usize = 300_000;

/// Greedy DAG extraction: a choice of e-node per reachable class (indexed by class
/// id), or `None` when the work budget ran out.
pub fn dag_choices(st: &Setup) -> Option<Vec<Option<FdLang>>> {
    let mut work = 0usize;
    let mut list = Worklist::new(st.node.len(), &st.leaves);
    let mut best: Vec<Option<Best>> = (0..st.n_ids).map(|_| None).collect();
    while let Some(i) = list.pop() {
        let c = st.class[i];
        let kids = &st.kids[i];
        if kids.iter().any(|&ch| best[ch].is_none()) {
            continue;
        }
        let mut needs: Vec<(Id, f64)> = Vec::new();
        for &k in kids {
            let b = best[k].as_ref()?;
            needs = if needs.is_empty() {
                b.needs.clone()
            } else {
                merge(&needs, &b.needs)
            };
        }
        work += needs.len();
        if work > DAG_BUDGET {
            return None;
        }
        match needs.binary_search_by(|e| e.0.cmp(&c)) {
            Ok(_) => continue, // the choice would need its own class: a cycle
            Err(pos) => needs.insert(pos, (c, st.cost[i])),
        }
        let total: f64 = needs.iter().map(|e| e.1).sum();
        let slot = &mut best[usize::from(c)];
        let better = match slot {
            None => true,
            Some(b) => total < b.total - 1e-9,
        };
        if better {
            *slot = Some(Best {
                node: st.node[i].clone(),
                needs,
                total,
            });
            for &p in &st.parents[usize::from(c)] {
                list.push(p);
            }
        }
    }
    Some(best.into_iter().map(|b| b.map(|b| b.node)).collect())
}

/// Builds the chosen expressions of `roots` into a fresh graph (hash-consed, so
/// equal choices in different classes still become one node). `None` if a choice is
/// missing, cyclic, or not a value (a bug elsewhere; the caller falls back).
pub fn build(
    egraph: &FdGraph,
    choice: impl Fn(Id) -> Option<FdLang>,
    roots: &[Id],
) -> Option<(Graph, Vec<NodeId>)> {
    let n_ids = egraph
        .classes()
        .map(|c| usize::from(c.id) + 1)
        .max()
        .unwrap_or(0);
    let mut g = Graph::new();
    let mut done: Vec<Option<Arg<NodeId>>> = vec![None; n_ids];
    let mut on_path = vec![false; n_ids];
    let mut outputs = Vec::with_capacity(roots.len());
    for &root in roots {
        let root = egraph.find(root);
        // Iterative post-order (deep sums must not overflow the stack).
        let mut stack: Vec<(Id, bool)> = vec![(root, false)];
        while let Some((c, expanded)) = stack.pop() {
            let ci = usize::from(c);
            if done[ci].is_some() {
                continue;
            }
            if let Some(Konst::I(n)) = egraph[c].data {
                done[ci] = Some(Arg::Int(n));
                continue;
            }
            let node = choice(c)?;
            if expanded {
                on_path[ci] = false;
                let op = to_op(&node, |ch| {
                    done[usize::from(egraph.find(ch))]
                        .unwrap_or(Arg::Node(NodeId::from_index(u32::MAX as usize)))
                })?;
                if op.operands().iter().any(|a| a.index() == u32::MAX as usize) {
                    return None;
                }
                done[ci] = Some(Arg::Node(g.add(op)));
            } else {
                if on_path[ci] {
                    return None;
                }
                on_path[ci] = true;
                stack.push((c, true));
                for &ch in node.children().iter().rev() {
                    let ch = egraph.find(ch);
                    if on_path[usize::from(ch)] {
                        return None;
                    }
                    if done[usize::from(ch)].is_none() {
                        stack.push((ch, false));
                    }
                }
            }
        }
        match done[usize::from(root)] {
            Some(Arg::Node(id)) => outputs.push(id),
            _ => return None,
        }
    }
    Some((g, outputs))
}

/// Classes the choices need for `roots` (false where a choice is missing).
fn selected(egraph: &FdGraph, choices: &[Option<FdLang>], roots: &[Id]) -> Vec<bool> {
    let mut sel = vec![false; choices.len()];
    let mut stack: Vec<Id> = roots.iter().map(|&r| egraph.find(r)).collect();
    while let Some(c) = stack.pop() {
        let ci = usize::from(c);
        if ci >= sel.len() || sel[ci] {
            continue;
        }
        sel[ci] = true;
        if let Some(n) = &choices[ci] {
            stack.extend(n.children().iter().map(|&ch| egraph.find(ch)));
        }
    }
    sel
}

/// From `start` (tree extraction if `None`), rounds of re-extraction in which
/// what the current result computes anyway is free to reuse, each result measured
/// by its true DAG cost (hash-consed rebuild); stops when a round does not improve.
/// Linear per round, so it scales to derivative graphs where [`dag_choices`] runs
/// out of budget.
pub fn iterate(
    egraph: &FdGraph,
    st: &Setup,
    roots: &[Id],
    start: Option<Vec<Option<FdLang>>>,
    rounds: usize,
) -> Option<(f64, Graph, Vec<NodeId>)> {
    let mut choices = start.unwrap_or_else(|| tree_choices(st, None));
    let (g, outs) = build(
        egraph,
        |c| choices.get(usize::from(c)).cloned().flatten(),
        roots,
    )?;
    let mut best = (graph_cost(&g, &outs), g, outs);
    for _ in 0..rounds {
        let paid = selected(egraph, &choices, roots);
        let next = tree_choices(st, Some(&paid));
        let Some((g, outs)) = build(
            egraph,
            |c| next.get(usize::from(c)).cloned().flatten(),
            roots,
        ) else {
            break;
        };
        let cost = graph_cost(&g, &outs);
        if cost < best.0 - 1e-9 {
            best = (cost, g, outs);
            choices = next;
        } else {
            break;
        }
    }
    Some(best)
}
