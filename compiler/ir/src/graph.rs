//! Nodes, the hash-consing graph and IR functions.

use crate::spline::SplineTable;
use rustc_hash::FxHashMap;

/// Index of a node in a [`Graph`]. Ids are dense and in topological order: the
/// operands of a node always have smaller ids than the node itself. Only a graph makes
/// ids (the field is private), so an id names a node of the graph that returned it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Id(u32);

impl Id {
    pub fn index(self) -> usize {
        self.0 as usize
    }

    /// The id of the `i`-th node, for passes that keep per-node tables of their own
    /// (the simplifier's e-graph) and map them back.
    pub(crate) fn from_index(i: usize) -> Id {
        Id(i as u32)
    }
}

/// `%n`, as the printer and every diagnostic about a node write it.
impl std::fmt::Display for Id {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "%{}", self.0)
    }
}

/// The eight input arrays of every element function, in signature order (the ABI's).
pub use fdc_abi::Slot;

/// Unary elementary functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Unary {
    Neg,
    Sqrt,
    Sin,
    Cos,
    Tan,
    Exp,
    Log,
    Tanh,
    Abs,
}

/// Comparison of a [`Op::Select`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Cmp {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

impl Cmp {
    pub fn eval(self, a: f64, b: f64) -> bool {
        match self {
            Cmp::Lt => a < b,
            Cmp::Le => a <= b,
            Cmp::Gt => a > b,
            Cmp::Ge => a >= b,
            Cmp::Eq => a == b,
            Cmp::Ne => a != b,
        }
    }
}

/// One scalar operation. Operands are ids of earlier nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// A constant, stored by its bit pattern so that `-0.0`, `0.0` and NaNs stay distinct.
    Const(u64),
    /// Element `index` of an input array.
    Input(Slot, u32),
    /// A symbol: a named placeholder (rotation matrix entry, memoized intermediate)
    /// that differentiation treats specially and substitutes before code generation.
    /// Never reaches the backend.
    Sym(u32),
    Unary(Unary, Id),
    Add(Id, Id),
    Sub(Id, Id),
    Mul(Id, Id),
    Div(Id, Id),
    /// x^n for an integer n.
    Powi(Id, i32),
    Pow(Id, Id),
    Atan2(Id, Id),
    Min(Id, Id),
    Max(Id, Id),
    /// `if a CMP b then t else f` — the only branch; becomes a select in machine code.
    Select(Cmp, [Id; 4]),
    /// `Spline(table, deriv, x)`: the `deriv`-th derivative (0..=3) at `x` of the
    /// piecewise cubic `table` of the graph ([`Graph::table`]).
    Spline(u32, u8, Id),
}

impl Op {
    /// The operands of the node, in order.
    pub fn operands(&self) -> Vec<Id> {
        match *self {
            Op::Const(_) | Op::Input(..) | Op::Sym(_) => vec![],
            Op::Unary(_, a) | Op::Powi(a, _) | Op::Spline(_, _, a) => vec![a],
            Op::Add(a, b)
            | Op::Sub(a, b)
            | Op::Mul(a, b)
            | Op::Div(a, b)
            | Op::Pow(a, b)
            | Op::Atan2(a, b)
            | Op::Min(a, b)
            | Op::Max(a, b) => vec![a, b],
            Op::Select(_, ids) => ids.to_vec(),
        }
    }

    /// The same operation on operands mapped by `m` (a spline keeps its table index).
    pub fn map_operands(self, m: impl Fn(Id) -> Id) -> Op {
        match self {
            Op::Const(_) | Op::Input(..) | Op::Sym(_) => self,
            Op::Unary(f, a) => Op::Unary(f, m(a)),
            Op::Add(a, b) => Op::Add(m(a), m(b)),
            Op::Sub(a, b) => Op::Sub(m(a), m(b)),
            Op::Mul(a, b) => Op::Mul(m(a), m(b)),
            Op::Div(a, b) => Op::Div(m(a), m(b)),
            Op::Powi(a, n) => Op::Powi(m(a), n),
            Op::Pow(a, b) => Op::Pow(m(a), m(b)),
            Op::Atan2(a, b) => Op::Atan2(m(a), m(b)),
            Op::Min(a, b) => Op::Min(m(a), m(b)),
            Op::Max(a, b) => Op::Max(m(a), m(b)),
            Op::Select(c, ids) => Op::Select(c, ids.map(m)),
            Op::Spline(t, d, x) => Op::Spline(t, d, m(x)),
        }
    }
}

/// A hash-consed DAG of scalar operations. Many functions may share one graph.
#[derive(Clone, Debug, Default)]
pub struct Graph {
    nodes: Vec<Op>,
    // Fx rather than SipHash: ops are small keys from our own code (no untrusted
    // input to defend against), and hash-consing is on every builder call.
    index: FxHashMap<Op, Id>,
    /// Spline tables, referred to by index from [`Op::Spline`]; equal contents are
    /// stored once, so a node's identity includes its table's contents.
    tables: Vec<SplineTable>,
}

impl Graph {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    pub fn op(&self, id: Id) -> Op {
        self.nodes[id.index()]
    }

    pub fn nodes(&self) -> &[Op] {
        &self.nodes
    }

    /// Adds `op` unless an identical node exists; returns the id either way.
    /// Commutative operations (`+`, `×`) get their operands in id order, so `a+b` and
    /// `b+a` are one node. `min`/`max` are *not* reordered: for ±0 and NaN operands
    /// IEEE allows either result, and the backend must see the order the user wrote.
    ///
    /// # Panics
    /// If an operand is not a node of this graph: that is the topological invariant
    /// every pass relies on ([`crate::verify`]), and only a bug breaks it (an id of
    /// another graph).
    pub fn add(&mut self, op: Op) -> Id {
        let n = self.nodes.len();
        // Through `map_operands`, which does not allocate: this runs on every node.
        op.map_operands(|a| {
            assert!(
                a.index() < n,
                "operand {a} of {op:?} is not a node of this graph ({n} nodes)"
            );
            a
        });
        let op = match op {
            Op::Add(a, b) if b < a => Op::Add(b, a),
            Op::Mul(a, b) if b < a => Op::Mul(b, a),
            other => other,
        };
        if let Some(&id) = self.index.get(&op) {
            return id;
        }
        let id = Id(self.nodes.len() as u32);
        self.nodes.push(op);
        self.index.insert(op, id);
        id
    }

    pub fn constant(&mut self, x: f64) -> Id {
        self.add(Op::Const(x.to_bits()))
    }

    pub fn input(&mut self, slot: Slot, index: usize) -> Id {
        self.add(Op::Input(slot, index as u32))
    }

    /// An empty graph that already holds the spline tables of `other`, under the same
    /// indices: for passes that rebuild a graph node by node (the simplifier).
    pub fn with_tables_of(other: &Graph) -> Self {
        Graph {
            tables: other.tables.clone(),
            ..Graph::default()
        }
    }

    /// Gives a graph without tables the tables of `other`, under the same indices.
    pub(crate) fn share_tables(&mut self, other: &Graph) {
        debug_assert!(self.tables.is_empty());
        self.tables = other.tables.clone();
    }

    /// Stores a spline table (or finds an identical one) and returns its index.
    pub fn add_table(&mut self, table: SplineTable) -> u32 {
        if let Some(k) = self.tables.iter().position(|t| t.same_bits(&table)) {
            return k as u32;
        }
        self.tables.push(table);
        (self.tables.len() - 1) as u32
    }

    /// The spline table with index `k`, if there is one.
    pub fn table(&self, k: u32) -> Option<&SplineTable> {
        self.tables.get(k as usize)
    }

    pub fn tables(&self) -> &[SplineTable] {
        &self.tables
    }

    /// `op` with its operands mapped by `m`, its spline table (if any) copied from
    /// `from` into this graph. For copying nodes between graphs; `None` if `op` names a
    /// table `from` does not have.
    pub fn import(&mut self, from: &Graph, op: Op, m: impl Fn(Id) -> Id) -> Option<Op> {
        Some(match op {
            Op::Spline(t, d, x) => {
                let table = from.table(t)?.clone();
                Op::Spline(self.add_table(table), d, m(x))
            }
            _ => op.map_operands(m),
        })
    }

    pub fn sym(&mut self, n: u32) -> Id {
        self.add(Op::Sym(n))
    }

    /// The ids of all nodes, ascending (an evaluation order).
    pub fn ids(&self) -> impl Iterator<Item = Id> {
        (0..self.nodes.len() as u32).map(Id)
    }

    /// The first of `roots` that is not a node of this graph, if any.
    pub fn foreign(&self, roots: &[Id]) -> Option<Id> {
        roots
            .iter()
            .copied()
            .find(|r| r.index() >= self.nodes.len())
    }

    /// The cone of `roots`: the nodes they depend on, themselves included, ascending
    /// (so in evaluation order). The one answer to "which nodes do these roots need".
    /// Roots that are not nodes of this graph ([`Graph::foreign`]) are left out.
    pub fn cone(&self, roots: &[Id]) -> Vec<Id> {
        self.cone_until(roots, |_| false)
    }

    /// [`Graph::cone`] without the nodes for which `done` holds and what only they
    /// need: for memoized passes that extend what earlier calls computed. A walk from
    /// the roots, so its cost is that of the new part, not of the graph.
    pub fn cone_until(&self, roots: &[Id], done: impl Fn(Id) -> bool) -> Vec<Id> {
        let n = self.nodes.len();
        let mut seen = rustc_hash::FxHashSet::default();
        let mut stack: Vec<Id> = roots
            .iter()
            .copied()
            .filter(|&r| r.index() < n && !done(r))
            .collect();
        let mut cone = Vec::new();
        while let Some(id) = stack.pop() {
            if !seen.insert(id) {
                continue;
            }
            cone.push(id);
            for a in self.nodes[id.index()].operands() {
                if !done(a) && !seen.contains(&a) {
                    stack.push(a);
                }
            }
        }
        cone.sort_unstable();
        cone
    }

    /// Which nodes `roots` depend on, as a mask over all ids ([`Graph::cone`]);
    /// `Err(root)` for a root that is not a node of this graph.
    pub fn needed(&self, roots: &[Id]) -> Result<Vec<bool>, Id> {
        if let Some(bad) = self.foreign(roots) {
            return Err(bad);
        }
        let mut needed = vec![false; self.nodes.len()];
        for id in self.cone(roots) {
            needed[id.index()] = true;
        }
        Ok(needed)
    }

    /// Copies the cone of `roots` into `to` and returns the roots' ids there;
    /// hash-consing shares what `to` already has, a spline's table is copied with it
    /// (a spline of a table this graph lacks keeps an index no graph has, for the
    /// backend's verifier to report). The one way to move IR between graphs.
    ///
    /// # Panics
    /// If a root is not a node of this graph.
    pub fn extract(&self, roots: &[Id], to: &mut Graph) -> Vec<Id> {
        let mut map: FxHashMap<Id, Id> = FxHashMap::default();
        for id in self.cone(roots) {
            let op = self.op(id);
            let m = |x: Id| map[&x];
            let op = to.import(self, op, m).unwrap_or_else(|| match op {
                Op::Spline(_, d, x) => Op::Spline(u32::MAX, d, m(x)),
                other => other,
            });
            let new = to.add(op);
            map.insert(id, new);
        }
        roots.iter().map(|r| map[r]).collect()
    }

    /// The value of a constant node, if it is one.
    pub fn as_const(&self, id: Id) -> Option<f64> {
        match self.op(id) {
            Op::Const(bits) => Some(f64::from_bits(bits)),
            _ => None,
        }
    }
}

/// Sizes of the eight input arrays of a function.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SlotSizes(pub [usize; 8]);

impl SlotSizes {
    pub fn get(&self, slot: Slot) -> usize {
        self.0[slot as usize]
    }
}

/// A function of the fixed signature: the outputs are nodes of a graph.
#[derive(Clone, Debug)]
pub struct Func {
    pub name: String,
    pub inputs: SlotSizes,
    pub outputs: Vec<Id>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_consing_shares_nodes_and_orders_commutative_operands() {
        let mut g = Graph::new();
        let x = g.input(Slot::Q, 0);
        let y = g.input(Slot::V, 1);
        let a = g.add(Op::Add(x, y));
        let b = g.add(Op::Add(y, x));
        assert_eq!(a, b);
        let s1 = g.add(Op::Sub(x, y));
        let s2 = g.add(Op::Sub(y, x));
        assert_ne!(s1, s2);
        assert_eq!(g.len(), 5);
    }

    #[test]
    fn constants_keep_their_sign_of_zero() {
        let mut g = Graph::new();
        let p = g.constant(0.0);
        let n = g.constant(-0.0);
        assert_ne!(p, n);
        assert_eq!(g.as_const(n).unwrap().to_bits(), (-0.0f64).to_bits());
    }

    #[test]
    #[should_panic(expected = "operand %7")]
    fn an_operand_that_is_not_an_earlier_node_is_rejected() {
        let mut g = Graph::new();
        g.add(Op::Unary(Unary::Neg, Id(7)));
    }

    #[test]
    fn cone_and_extract_take_exactly_what_the_roots_need() {
        let mut g = Graph::new();
        let x = g.input(Slot::Q, 0);
        let unused = g.input(Slot::V, 0);
        let two = g.constant(2.0);
        let y = g.mul(x, two);
        let z = g.add(Op::Unary(Unary::Sin, y));
        let w = g.add2(unused, two);
        assert_eq!(g.cone(&[z]), vec![x, two, y, z]);
        assert_eq!(g.cone_until(&[z], |id| id == y), vec![z]);
        assert_eq!(g.cone(&[z, w]).len(), 6);
        let mut h = Graph::new();
        let hx = h.input(Slot::Q, 0);
        let out = g.extract(&[z], &mut h);
        assert_eq!(h.len(), 4, "x is shared, the unused input is not copied");
        assert_eq!(h.op(out[0]), Op::Unary(Unary::Sin, Id(2)));
        assert_eq!(h.op(Id(2)), Op::Mul(hx, Id(1)));
    }
}
