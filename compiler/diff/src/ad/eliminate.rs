//! The iteration matrix by vertex elimination on the linearized DAG (cross-country
//! Jacobian accumulation, Griewank & Walther, *Evaluating Derivatives*, ch. 9–10).
//!
//! Every node of the rows' cone is a vertex; an edge p → n carries the local partial
//! ∂n/∂p (the rules of [`super::chain`]). Sources are the unknowns x = [v̇; λ]; between
//! them and the leaves sit the δ directions (leaf → δ: ∂leaf/∂δ, δ → tangent column:
//! T(Δ), column → x: β′h²), so the tangent operator is just more edges. Eliminating an
//! intermediate vertex v replaces every path p → v → s by the edge p → s with weight
//! w(p,v)·w(v,s), added to an existing p → s edge. Once only sources and sinks are
//! left, the edges are the entries of the Jacobian: the same sum over paths of
//! products of partials as forward mode (which is elimination in id order), in
//! another association, so the entries agree up to roundoff.
//!
//! The order is Markowitz's: always the vertex with the fewest products
//! |preds|·|succs| (two tie-breaks, and two ways of summing parallel edges, see
//! [`plus`]; of the four results the cheapest is kept). That is what exploits the
//! structure forward mode misses: a scalar
//! bottleneck such as a damper's force s(q, v) is eliminated late, when its
//! successors are the outputs, so ∂Q/∂x = (∂Q/∂s)(∂s/∂x) is one outer product instead
//! of carrying all directions through the load's whole expression; and the β′h² and
//! T(Δ) factors are applied where the fewest entries remain.
//!
//! Branches (`min`, `max`, `select`) are not linear in their operands' derivatives
//! (a select picks one side, even where the other is NaN), so the ancestors of their
//! sides are eliminated first; the sides' edges are then their gradients, and the
//! branch's edge from each source is the select of the sides' entries, as in forward
//! mode.

use super::chain::unary_partial;
use super::chain::{atan2_r2, pow_partial_base, pow_partial_exponent, powi_partial};
use super::{Differ, Entries, Family, IterSeeds, Partial};
use fdc_ir::{Cmp, Graph, Id, Op, Slot, Unary, M3};
use rustc_hash::FxHashMap;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap};

/// A local partial derivative: ±1, ±w or ±1/w.
#[derive(Clone, Copy, Debug)]
struct Edge {
    neg: bool,
    w: Weight,
}

#[derive(Clone, Copy, Debug)]
enum Weight {
    One,
    Mul(Id),
    DivBy(Id),
}

impl Edge {
    const ONE: Edge = Edge {
        neg: false,
        w: Weight::One,
    };

    /// ±x with the sign of a negation or of a constant taken out (−(y·z) = (−y)·z
    /// exactly), `None` for the constant zero (no edge).
    fn of(g: &Graph, x: Id) -> Option<Edge> {
        let (neg, x) = match g.op(x) {
            Op::Unary(Unary::Neg, y) => (true, y),
            _ => (false, x),
        };
        let w = match g.as_const(x) {
            Some(0.0) => return None,
            Some(1.0) => Weight::One,
            Some(-1.0) => {
                return Some(Edge {
                    neg: !neg,
                    w: Weight::One,
                })
            }
            _ => Weight::Mul(x),
        };
        Some(Edge { neg, w })
    }

    fn of_partial(g: &Graph, p: Partial) -> Option<Edge> {
        match p {
            Partial::One => Some(Edge::ONE),
            Partial::Mul(x) => Edge::of(g, x),
            Partial::DivBy(b) => Some(Edge {
                neg: false,
                w: Weight::DivBy(b),
            }),
        }
    }

    fn negated(self) -> Edge {
        Edge {
            neg: !self.neg,
            ..self
        }
    }

    /// The weight as a node (without the sign).
    fn value(self, g: &mut Graph) -> Id {
        match self.w {
            Weight::One => g.constant(1.0),
            Weight::Mul(x) => x,
            Weight::DivBy(b) => {
                let one = g.constant(1.0);
                g.div(one, b)
            }
        }
    }

    /// The signed value as a node: an entry of the Jacobian. A negated difference is
    /// the swapped difference (−(a − b) = b − a exactly), a negated constant a constant.
    fn entry(self, g: &mut Graph) -> Id {
        let v = self.value(g);
        if !self.neg {
            return v;
        }
        if let Some(c) = g.as_const(v) {
            return g.constant(-c);
        }
        match g.op(v) {
            Op::Sub(a, b) => g.sub(b, a),
            _ => g.neg(v),
        }
    }
}

/// a·b for nodes, folding two constants (the product the code would compute anyway).
fn mul(g: &mut Graph, a: Id, b: Id) -> Id {
    match (g.as_const(a), g.as_const(b)) {
        (Some(x), Some(y)) => g.constant(x * y),
        _ => g.mul(a, b),
    }
}

/// The product of two edges along a path.
fn times(g: &mut Graph, a: Edge, b: Edge) -> Edge {
    use Weight::*;
    let w = match (a.w, b.w) {
        (One, x) | (x, One) => x,
        (Mul(x), Mul(y)) => Mul(mul(g, x, y)),
        (Mul(x), DivBy(y)) | (DivBy(y), Mul(x)) => Mul(g.div(x, y)),
        (DivBy(x), DivBy(y)) => DivBy(mul(g, x, y)),
    };
    Edge {
        neg: a.neg ^ b.neg,
        w,
    }
}

/// The sum of two parallel edges (two constants folded). With `one_orientation` a
/// difference is formed in one orientation, the smaller id first, with the sign on the
/// edge: p − q and q − p are one node with two signs, so a row and its negation (the
/// reaction's rows of a force, [`super::signs`]) share every partial sum. (−(p − q)
/// and q − p differ only in the sign of a zero, as in [`Edge::entry`]; an edge's
/// weight never divides, so a matrix entry can differ from the other orientation's
/// only in the sign of an exact zero.) Without it the difference keeps the order of
/// its terms, which shares more where rows are not negations of each other.
fn plus(g: &mut Graph, a: Edge, b: Edge, one_orientation: bool) -> Edge {
    let (x, y) = (a.value(g), b.value(g));
    // The positive and the negative term when the signs differ.
    let (p, q) = if a.neg { (y, x) } else { (x, y) };
    let (neg, w) = match (a.neg == b.neg, g.as_const(x), g.as_const(y)) {
        (true, Some(c), Some(d)) => (a.neg, g.constant(c + d)),
        (false, Some(c), Some(d)) if a.neg => (false, g.constant(d - c)),
        (false, Some(c), Some(d)) => (false, g.constant(c - d)),
        (true, ..) => (a.neg, g.add2(x, y)),
        (false, ..) if !one_orientation || p < q => (false, g.sub(p, q)),
        (false, ..) => (true, g.sub(q, p)),
    };
    let e = Edge::of(g, w).unwrap_or(Edge {
        neg: false,
        w: Weight::Mul(w),
    });
    if neg {
        e.negated()
    } else {
        e
    }
}

/// The elimination priority of a vertex, smallest first.
type Priority = (usize, usize, u32);

/// A vertex of the linearized graph.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Key {
    /// Unknown x_c (source).
    X(u32),
    /// Column c of (∂/∂δ) T(Δ), before the factor β′h².
    Col(u32),
    /// δ direction c.
    Delta(u32),
    Node(Id),
    /// Output row i (sink).
    Row(u32),
}

#[derive(Clone, Default)]
struct Linearized {
    keys: Vec<Key>,
    index: FxHashMap<Key, u32>,
    preds: Vec<BTreeMap<u32, Edge>>,
    succs: Vec<BTreeSet<u32>>,
    /// How parallel edges are summed ([`plus`]).
    one_orientation: bool,
}

impl Linearized {
    fn vertex(&mut self, k: Key) -> u32 {
        if let Some(&v) = self.index.get(&k) {
            return v;
        }
        let v = self.keys.len() as u32;
        self.keys.push(k);
        self.index.insert(k, v);
        self.preds.push(BTreeMap::new());
        self.succs.push(BTreeSet::new());
        v
    }

    /// Adds `e` to the edge p → s (creating it).
    fn add_edge(&mut self, g: &mut Graph, p: u32, s: u32, e: Edge) {
        let e = match self.preds[s as usize].get(&p) {
            Some(&old) => plus(g, old, e, self.one_orientation),
            None => e,
        };
        self.preds[s as usize].insert(p, e);
        self.succs[p as usize].insert(s);
    }

    /// The intermediate vertices that `roots` depend on (not the roots).
    fn ancestors(&self, roots: &[u32]) -> BTreeSet<u32> {
        let mut seen = BTreeSet::new();
        let mut stack: Vec<u32> = roots.to_vec();
        while let Some(v) = stack.pop() {
            for &p in self.preds[v as usize].keys() {
                if !matches!(self.keys[p as usize], Key::X(_)) && seen.insert(p) {
                    stack.push(p);
                }
            }
        }
        seen
    }

    /// Replaces the edges into `v` from intermediate vertices by edges from their
    /// predecessors (which must come from sources only): then `v`'s edges are its
    /// gradient, and `v` stays a vertex, so later nodes can still use it.
    fn front_eliminate(&mut self, g: &mut Graph, v: u32) {
        let inner: Vec<(u32, Edge)> = self.preds[v as usize]
            .iter()
            .filter(|(&p, _)| !matches!(self.keys[p as usize], Key::X(_)))
            .map(|(&p, &e)| (p, e))
            .collect();
        for (p, epv) in inner {
            self.preds[v as usize].remove(&p);
            self.succs[p as usize].remove(&v);
            let pp: Vec<(u32, Edge)> = self.preds[p as usize]
                .iter()
                .map(|(&x, &e)| (x, e))
                .collect();
            for (x, exp) in pp {
                let e = times(g, exp, epv);
                self.add_edge(g, x, v, e);
            }
        }
    }

    /// The incoming edges of a branch between `sides` (vertices of the branches' values):
    /// the sides and their ancestors are front-eliminated in topological order (vertex
    /// order) first, so each side's edges come from the sources only and are its
    /// gradient; then per source `pick(side values)` with an exact zero for a missing
    /// side, as forward mode does.
    fn branch(
        &mut self,
        g: &mut Graph,
        sides: [Option<u32>; 2],
        mut pick: impl FnMut(&mut Graph, Id, Id) -> Id,
    ) -> Vec<(u32, Edge)> {
        let roots: Vec<u32> = sides.iter().flatten().copied().collect();
        if roots.is_empty() {
            return Vec::new();
        }
        for v in self
            .ancestors(&roots)
            .into_iter()
            .chain(roots.iter().copied())
        {
            self.front_eliminate(g, v);
        }
        let grad = |lin: &Self, side: Option<u32>| -> BTreeMap<u32, Edge> {
            side.map(|v| lin.preds[v as usize].clone())
                .unwrap_or_default()
        };
        let (a, b) = (grad(self, sides[0]), grad(self, sides[1]));
        let cols: BTreeSet<u32> = a.keys().chain(b.keys()).copied().collect();
        let zero = g.constant(0.0);
        let mut out = Vec::new();
        for x in cols {
            let da = a.get(&x).map_or(zero, |e| e.entry(g));
            let db = b.get(&x).map_or(zero, |e| e.entry(g));
            let d = pick(g, da, db);
            if let Some(e) = Edge::of(g, d) {
                out.push((x, e));
            }
        }
        out
    }

    /// The priority of `v` (smallest first): Markowitz's degree |preds|·|succs| (the
    /// products that eliminating it forms), ties broken by `order`.
    fn priority(&self, v: u32, order: Order) -> Priority {
        let (np, ns) = (self.preds[v as usize].len(), self.succs[v as usize].len());
        match order {
            Order::FewerSuccs => (np * ns, ns, v),
            Order::FewerPreds => (np * ns, np, u32::MAX - v),
        }
    }

    /// Eliminates `v`; returns the vertices whose cost changed.
    fn eliminate(&mut self, g: &mut Graph, v: u32) -> Vec<u32> {
        let ps: Vec<(u32, Edge)> = std::mem::take(&mut self.preds[v as usize])
            .into_iter()
            .collect();
        let ss = std::mem::take(&mut self.succs[v as usize]);
        for &(p, _) in &ps {
            self.succs[p as usize].remove(&v);
        }
        let mut touched: Vec<u32> = ps.iter().map(|x| x.0).collect();
        touched.extend(ss.iter().copied());
        for s in ss {
            let evs = self.preds[s as usize]
                .remove(&v)
                .expect("successor edges have a predecessor entry");
            for &(p, epv) in &ps {
                let e = times(g, epv, evs);
                self.add_edge(g, p, s, e);
            }
        }
        touched
    }

    /// Eliminates every intermediate vertex in Markowitz order (lazy heap: the
    /// neighbours of an eliminated vertex are pushed with their new priority, and a
    /// popped entry whose priority is stale is dropped).
    fn eliminate_all(&mut self, g: &mut Graph, order: Order) {
        let mut heap: BinaryHeap<Reverse<(Priority, u32)>> = (0..self.keys.len() as u32)
            .filter(|&v| !matches!(self.keys[v as usize], Key::X(_) | Key::Row(_)))
            .map(|v| Reverse((self.priority(v, order), v)))
            .collect();
        let mut done = vec![false; self.keys.len()];
        while let Some(Reverse((c, v))) = heap.pop() {
            if done[v as usize] || self.priority(v, order) != c {
                continue;
            }
            done[v as usize] = true;
            for n in self.eliminate(g, v) {
                if !matches!(self.keys[n as usize], Key::X(_) | Key::Row(_)) && !done[n as usize] {
                    heap.push(Reverse((self.priority(n, order), n)));
                }
            }
        }
    }
}

/// The tie-break among vertices of equal Markowitz degree. Neither wins everywhere
/// (spring-damper 1435 against 1623 iter operations, revolute 1734 against 1566), so
/// both are run and the cheaper result kept.
#[derive(Clone, Copy)]
enum Order {
    /// Fewer successors first, then the earlier vertex.
    FewerSuccs,
    /// Fewer predecessors first, then the later vertex.
    FewerPreds,
}

impl Differ {
    /// The rows' Jacobian in the `Iter` family (d r/dx, x = [v̇; λ]) by vertex
    /// elimination, the cheapest of four candidates; `tangents` are T(Δ_k) per
    /// connected body (rigid ones read). Entries as (row, column), rows in order,
    /// columns sorted. Needs [`Differ::set_iteration`]; the tangents must be those of
    /// that iteration (the last result is reused for the same rows).
    pub fn iter_by_elimination(
        &mut self,
        g: &mut Graph,
        rows: &[Option<Id>],
        tangents: &[M3],
    ) -> Entries {
        if let Some((r, out)) = &self.last_elimination {
            if r == rows {
                return out.clone();
            }
        }
        // The linearized DAG does not depend on the order: built once, eliminated
        // in each (the elimination consumes it).
        let Some(lin) = self.linearize(g, rows, tangents) else {
            return (Vec::new(), Vec::new());
        };
        // Two tie-breaks × two ways of summing parallel edges; neither pair wins
        // everywhere, so the candidate with the fewest operations is kept (the first
        // on a tie, so the choice is deterministic).
        let mut best: Option<(usize, Entries)> = None;
        for one_orientation in [false, true] {
            for order in [Order::FewerSuccs, Order::FewerPreds] {
                let mut candidate = lin.clone();
                candidate.one_orientation = one_orientation;
                let out = accumulate(g, candidate, rows.len(), order);
                let ops = super::op_count(g, &out.0);
                if best.as_ref().is_none_or(|(b, _)| ops < *b) {
                    best = Some((ops, out));
                }
            }
        }
        let best = best.expect("four candidates").1;
        self.last_elimination = Some((rows.to_vec(), best.clone()));
        best
    }

    /// The linearized DAG of the rows' cone, with a sink per row (`None` without
    /// [`Differ::set_iteration`]). Independent of the elimination order, so it is built
    /// once for all four candidates.
    fn linearize(
        &mut self,
        g: &mut Graph,
        rows: &[Option<Id>],
        tangents: &[M3],
    ) -> Option<Linearized> {
        let seeds = self.iter.clone()?;
        let roots: Vec<Id> = rows.iter().flatten().copied().collect();
        let mut lin = Linearized::default();
        let mut active: FxHashMap<Id, u32> = FxHashMap::default();
        for n in g.cone(&roots) {
            let edges = self.local_edges(g, &seeds, tangents, &mut lin, &active, n);
            if edges.is_empty() {
                continue;
            }
            let v = lin.vertex(Key::Node(n));
            for (p, e) in edges {
                lin.add_edge(g, p, v, e);
            }
            active.insert(n, v);
        }
        for (i, r) in rows.iter().enumerate() {
            if let Some(&v) = r.and_then(|r| active.get(&r)) {
                let s = lin.vertex(Key::Row(i as u32));
                lin.add_edge(g, v, s, Edge::ONE);
            }
        }
        Some(lin)
    }

    /// The incoming edges of node `n` (empty if it does not depend on x).
    fn local_edges(
        &mut self,
        g: &mut Graph,
        seeds: &IterSeeds,
        tangents: &[M3],
        lin: &mut Linearized,
        active: &FxHashMap<Id, u32>,
        n: Id,
    ) -> Vec<(u32, Edge)> {
        let op = g.op(n);
        let mut out = Vec::new();
        let mut push = |v: Option<u32>, e: Option<Edge>| {
            if let (Some(v), Some(e)) = (v, e) {
                out.push((v, e));
            }
        };
        let of = |a: Id| active.get(&a).copied();
        match op {
            Op::Const(_) => {}
            Op::Input(Slot::Vdot, i) => push(Some(lin.vertex(Key::X(i))), Some(Edge::ONE)),
            Op::Input(Slot::V, i) => push(Some(lin.vertex(Key::X(i))), Edge::of(g, seeds.gh)),
            Op::Input(Slot::Lambda, j) => {
                push(Some(lin.vertex(Key::X(seeds.nv + j))), Some(Edge::ONE))
            }
            Op::Input(..) | Op::Sym(_) => {
                let gd = match op {
                    Op::Sym(k) => self.sym_grad(g, Family::Delta, k),
                    Op::Input(slot, i) => self.leaf_grad(g, Family::Delta, slot, i),
                    _ => unreachable!("leaves only"),
                };
                for (c, d) in gd {
                    let e = Edge::of(g, d);
                    let v = self.delta_vertex(g, seeds, tangents, lin, c);
                    push(Some(v), e);
                }
            }
            Op::Add(a, b) => {
                push(of(a), Some(Edge::ONE));
                push(of(b), Some(Edge::ONE));
            }
            Op::Sub(a, b) => {
                push(of(a), Some(Edge::ONE));
                push(of(b), Some(Edge::ONE.negated()));
            }
            Op::Unary(Unary::Neg, a) => push(of(a), Some(Edge::ONE.negated())),
            Op::Mul(a, b) => {
                push(of(a), Edge::of(g, b));
                push(of(b), Edge::of(g, a));
            }
            Op::Div(a, b) => {
                if of(a).is_some() {
                    push(of(a), Edge::of_partial(g, Partial::DivBy(b)));
                }
                if of(b).is_some() {
                    let q = g.div(n, b);
                    push(of(b), Edge::of(g, q).map(Edge::negated));
                }
            }
            Op::Unary(f, a) => {
                if of(a).is_some() {
                    let p = unary_partial(g, f, n, a);
                    push(of(a), Edge::of_partial(g, p));
                }
            }
            Op::Powi(a, k) => {
                if of(a).is_some() && k != 0 {
                    let p = powi_partial(g, a, k);
                    push(of(a), Edge::of_partial(g, p));
                }
            }
            Op::Pow(a, b) => {
                if of(a).is_some() {
                    let p = pow_partial_base(g, a, b);
                    push(of(a), Edge::of(g, p));
                }
                if of(b).is_some() {
                    let p = pow_partial_exponent(g, n, a);
                    push(of(b), Edge::of(g, p));
                }
            }
            Op::Atan2(y, x) => {
                if of(y).is_some() || of(x).is_some() {
                    let r2 = atan2_r2(g, [y, x]);
                    if of(y).is_some() {
                        let p = g.div(x, r2);
                        push(of(y), Edge::of(g, p));
                    }
                    if of(x).is_some() {
                        let p = g.div(y, r2);
                        push(of(x), Edge::of(g, p).map(Edge::negated));
                    }
                }
            }
            Op::Spline(t, d, a) => {
                if of(a).is_some() && d < fdc_ir::spline::MAX_DERIV {
                    let p = g.spline(t, d + 1, a);
                    push(of(a), Edge::of(g, p));
                }
            }
            Op::Min(x, y) | Op::Max(x, y) => {
                let cmp = if matches!(op, Op::Min(..)) {
                    Cmp::Le
                } else {
                    Cmp::Ge
                };
                out = lin.branch(g, [of(x), of(y)], |g, dx, dy| g.select(cmp, x, y, dx, dy));
            }
            Op::Select(cmp, [x, y, t, f]) => {
                out = lin.branch(g, [of(t), of(f)], |g, dt, df| g.select(cmp, x, y, dt, df));
            }
        }
        out
    }

    /// The vertex of δ direction `c`, with its edges to the unknowns: δ → column
    /// (T(Δ_k) for a rotation dof of rigid body k, the identity otherwise) → x (β′h²).
    fn delta_vertex(
        &self,
        g: &mut Graph,
        seeds: &IterSeeds,
        tangents: &[M3],
        lin: &mut Linearized,
        c: u32,
    ) -> u32 {
        if let Some(&v) = lin.index.get(&Key::Delta(c)) {
            return v;
        }
        let v = lin.vertex(Key::Delta(c));
        let col = |g: &mut Graph, lin: &mut Linearized, n: u32, e: Option<Edge>| {
            let Some(e) = e else { return };
            let fresh = !lin.index.contains_key(&Key::Col(n));
            let cv = lin.vertex(Key::Col(n));
            if fresh {
                let x = lin.vertex(Key::X(n));
                if let Some(b) = Edge::of(g, seeds.bh2) {
                    lin.add_edge(g, x, cv, b);
                }
            }
            lin.add_edge(g, cv, v, e);
        };
        match self.rotation_dof(c) {
            None => col(g, lin, c, Some(Edge::ONE)),
            Some((k, m)) => {
                let Some(t) = tangents.get(k as usize) else {
                    return v;
                };
                let base = c - m as u32;
                for (n, &tmn) in t[m].iter().enumerate() {
                    let e = Edge::of(g, tmn);
                    col(g, lin, base + n as u32, e);
                }
            }
        }
        v
    }
}

/// Eliminates every intermediate vertex of `lin` in `order`; the entries of the
/// `n_rows` rows, columns sorted.
fn accumulate(g: &mut Graph, mut lin: Linearized, n_rows: usize, order: Order) -> Entries {
    lin.eliminate_all(g, order);
    let mut out = Vec::new();
    let mut entries = Vec::new();
    for i in 0..n_rows as u32 {
        let Some(&s) = lin.index.get(&Key::Row(i)) else {
            continue;
        };
        let mut cols: Vec<(u32, Edge)> = lin.preds[s as usize]
            .iter()
            .map(|(&p, &e)| match lin.keys[p as usize] {
                Key::X(c) => (c, e),
                _ => unreachable!("only sources are left as predecessors"),
            })
            .collect();
        cols.sort_by_key(|x| x.0);
        for (c, e) in cols {
            entries.push((i, c));
            out.push(e.entry(g));
        }
    }
    (out, entries)
}
