//! Forward-mode differentiation on the hash-consed DAG, and substitution.
//!
//! A gradient is sparse: the list of (direction, derivative node) pairs where the node
//! depends on the direction (structural sparsity). Gradients are computed for the
//! nodes of a cone in id order (ids are topological) and memoized per node, so a
//! shared node is differentiated once, whatever the number of paths to it: this is
//! the memoized chain rule of theory 4.2 on a hash-consed DAG. Derivative nodes are
//! ordinary nodes and can be differentiated again (second derivatives).
//!
//! Directions come in families: δ, v, v̇, λ and t. The δ directions follow the
//! element's [`Layout`]: 6 per rigid body (δR global, δφ body frame, along q∘exp(δ))
//! and one per vector-space coordinate (q + δ; an Euler-parameter body is 7 of them).
//! The leaves that carry a derivative:
//! - the position R of a rigid body (`Q[q+i]`, i < 3): ∂R/∂δR = I;
//! - its quaternion θ (`Q[q+3+j]`): ∂θ/∂δφ_m = ½ θ∘[0; e_m];
//! - `Sym(9k+3i+j)` (the rotation matrix A of rigid body k): ∂A/∂δφ_m = A ẽ_m;
//! - a vector-space coordinate `Q[i]`: ∂q_i/∂δ_i = 1;
//! - `V[i]`, `Vdot[i]`, `Lambda[i]`, `T[0]`: the identity in their family.
//!
//! Without a layout ([`Differ::new`]) every 7 coordinates are a rigid body.
//!
//! The `Rate` family is the single direction d/dt along the motion, (∂/∂δ) v + ∂/∂t,
//! seeded with Ṙ = v_R, Ȧ = A ω̄̃, θ̇ = ½ θ∘[0; ω̄] (or q̇ = v), ṫ = 1. The `Iter`
//! family differentiates along the unknowns x = [v̇; λ] of a Newton step, seeded with
//! the discrete state's dv/dx = γ′h and dδ/dx = β′h² T(Δ), so a gradient is a row
//! of the iteration matrix.
//!
//! Derivatives never contain structural zeros, `x·1` or `0+x`: an absent entry is
//! the zero, and unit factors are not multiplied in.

use fdc_ir::{Cmp, Graph, Id, Op, Slot, Unary, M3};
use std::collections::HashMap;

/// A family of differentiation directions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Family {
    /// δ: 6 per body, [δR (global); δφ (body frame)].
    Delta = 0,
    V = 1,
    Vdot = 2,
    Lambda = 3,
    T = 4,
    /// One direction: the time derivative along the motion, (∂/∂δ) v + ∂/∂t, as a
    /// single tangent (cheaper than contracting the δ-gradient with v afterwards).
    Rate = 5,
    /// The unknowns x = [v̇; λ] of a Newton step (theory 7.1): v̇ = x_v, v = v_pred +
    /// γ′h x_v, q = q_n∘exp(Δ_pred + β′h² x_v), λ = x_λ, so d/dx of an expression is a
    /// row of the iteration matrix directly. Needs [`Differ::set_iteration`].
    Iter = 6,
}

/// The seeds of [`Family::Iter`]: dv/dx = γ′h, dδ/dx = β′h² T(Δ).
#[derive(Clone, Debug)]
struct IterSeeds {
    gh: Id,
    bh2: Id,
    /// β′h² T_SO(3)(Δφ_k) per body.
    bh2_t: Vec<M3>,
    nv: u32,
}

/// A sparse gradient: (direction index, derivative node), sorted by direction.
pub type Grad = Vec<(u32, Id)>;

/// The local factor ∂node/∂operand, in the form that multiplies cheapest.
#[derive(Clone, Copy)]
enum Partial {
    One,
    Mul(Id),
    DivBy(Id),
}

/// One block of an element's coordinates, as the derivatives see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Seg {
    /// A rigid body on R³ × SO(3): 7 coordinates [R; θ] from `q`, 6 dofs [δR; δφ] from
    /// `v`; `body` is its connected-body index (its rotation matrix symbols).
    Rigid { q: u32, v: u32, body: u32 },
    /// `n` coordinates in a vector space from `q`, `n` dofs from `v`: v = q̇, q ↦ q + δ
    /// (the own coordinates of a vector-space element, an Euler-parameter body).
    Vector { q: u32, v: u32, n: u32 },
}

/// How the coordinates of an element are laid out: blocks in q and v order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Layout {
    pub segs: Vec<Seg>,
}

/// What an entry of `Slot::Q` is.
enum QLeaf {
    /// ∂q/∂δ_dir = 1.
    Plain(u32),
    /// Component j of the quaternion stored from `q`, rotation dofs from `v`.
    Quat {
        q: u32,
        v: u32,
        j: usize,
    },
    None,
}

impl Layout {
    /// `n` rigid bodies, 7 coordinates and 6 dofs each.
    pub fn rigid(n: usize) -> Self {
        let segs = (0..n as u32)
            .map(|k| Seg::Rigid {
                q: 7 * k,
                v: 6 * k,
                body: k,
            })
            .collect();
        Layout { segs }
    }

    pub fn nq(&self) -> usize {
        self.segs
            .iter()
            .map(|s| match s {
                Seg::Rigid { .. } => 7,
                Seg::Vector { n, .. } => *n as usize,
            })
            .sum()
    }

    pub fn nv(&self) -> usize {
        self.segs
            .iter()
            .map(|s| match s {
                Seg::Rigid { .. } => 6,
                Seg::Vector { n, .. } => *n as usize,
            })
            .sum()
    }

    fn q_leaf(&self, i: u32) -> QLeaf {
        for s in &self.segs {
            match *s {
                Seg::Rigid { q, v, .. } if (q..q + 7).contains(&i) => {
                    let c = i - q;
                    return if c < 3 {
                        QLeaf::Plain(v + c)
                    } else {
                        QLeaf::Quat {
                            q,
                            v,
                            j: (c - 3) as usize,
                        }
                    };
                }
                Seg::Vector { q, v, n } if (q..q + n).contains(&i) => {
                    return QLeaf::Plain(v + i - q);
                }
                _ => {}
            }
        }
        QLeaf::None
    }

    /// The rigid body and rotation index m of a δ direction, if it is a rotation dof.
    pub fn rotation_dof(&self, dir: u32) -> Option<(u32, usize)> {
        self.segs.iter().find_map(|s| match *s {
            Seg::Rigid { v, body, .. } if (v + 3..v + 6).contains(&dir) => {
                Some((body, (dir - v - 3) as usize))
            }
            _ => None,
        })
    }

    /// The first δ direction of the rotation dofs of rigid body `body`.
    fn rotation_v(&self, body: u32) -> Option<u32> {
        self.segs.iter().find_map(|s| match *s {
            Seg::Rigid { v, body: b, .. } if b == body => Some(v + 3),
            _ => None,
        })
    }
}

/// Memoized forward differentiation, one cache per family.
#[derive(Default)]
pub struct Differ {
    caches: [HashMap<Id, Grad>; 7],
    iter: Option<IterSeeds>,
    /// How `Slot::Q` entries and rotation symbols relate to the δ directions; `None`
    /// is the layout of rigid bodies only, 7 coordinates and 6 dofs each.
    layout: Option<Layout>,
}

impl Differ {
    /// Differentiation for rigid bodies on R³ × SO(3) (7 coordinates, 6 dofs per body).
    pub fn new() -> Self {
        Self::default()
    }

    /// Differentiation for a vector-space element (v = q̇, δ = dq).
    pub fn vector_space() -> Self {
        Self::with_layout(Layout {
            segs: vec![Seg::Vector {
                q: 0,
                v: 0,
                n: u32::MAX / 2,
            }],
        })
    }

    /// Differentiation for any mix of rigid bodies and vector-space blocks.
    pub fn with_layout(layout: Layout) -> Self {
        Differ {
            layout: Some(layout),
            ..Self::default()
        }
    }

    fn q_leaf(&self, i: u32) -> QLeaf {
        match &self.layout {
            Some(l) => l.q_leaf(i),
            None => {
                let k = i / 7;
                let c = i % 7;
                if c < 3 {
                    QLeaf::Plain(6 * k + c)
                } else {
                    QLeaf::Quat {
                        q: 7 * k,
                        v: 6 * k,
                        j: (c - 3) as usize,
                    }
                }
            }
        }
    }

    fn rotation_dof(&self, dir: u32) -> Option<(u32, usize)> {
        match &self.layout {
            Some(l) => l.rotation_dof(dir),
            None => (dir % 6 >= 3).then_some((dir / 6, (dir % 6 - 3) as usize)),
        }
    }

    fn rotation_v(&self, body: u32) -> Option<u32> {
        match &self.layout {
            Some(l) => l.rotation_v(body),
            None => Some(6 * body + 3),
        }
    }

    /// Sets the coefficients of [`Family::Iter`]: γ′h, β′h², β′h² T(Δ_k) per body (rigid
    /// bodies; empty for a vector-space element) and nv (λ_j is direction nv + j).
    pub fn set_iteration(&mut self, gh: Id, bh2: Id, bh2_t: Vec<M3>, nv: usize) {
        self.iter = Some(IterSeeds {
            gh,
            bh2,
            bh2_t,
            nv: nv as u32,
        });
        self.caches[Family::Iter as usize].clear();
    }

    /// The gradient of `root` in `family`.
    pub fn grad(&mut self, g: &mut Graph, family: Family, root: Id) -> Grad {
        self.prepare(g, family, &[root]);
        self.caches[family as usize][&root].clone()
    }

    /// The derivative of `root` in one direction, `None` where it is structurally zero.
    pub fn partial(&mut self, g: &mut Graph, family: Family, root: Id, dir: u32) -> Option<Id> {
        let gr = self.grad(g, family, root);
        gr.iter().find(|(d, _)| *d == dir).map(|&(_, id)| id)
    }

    /// Computes and caches the gradients of every node that `roots` depend on.
    pub fn prepare(&mut self, g: &mut Graph, family: Family, roots: &[Id]) {
        let cache = &self.caches[family as usize];
        // The cone of the roots not yet differentiated, by an explicit stack (never
        // recursion, never a tree walk: each node is visited once).
        let mut seen: std::collections::HashSet<Id> = Default::default();
        let mut stack: Vec<Id> = roots
            .iter()
            .copied()
            .filter(|r| !cache.contains_key(r))
            .collect();
        let mut cone = Vec::new();
        while let Some(n) = stack.pop() {
            if !seen.insert(n) {
                continue;
            }
            cone.push(n);
            for a in g.op(n).operands() {
                if !cache.contains_key(&a) && !seen.contains(&a) {
                    stack.push(a);
                }
            }
        }
        cone.sort_unstable();
        for n in cone {
            let gr = self.node_grad(g, family, n);
            self.caches[family as usize].insert(n, gr);
        }
    }

    fn node_grad(&mut self, g: &mut Graph, family: Family, n: Id) -> Grad {
        let cache = &self.caches[family as usize];
        let op = g.op(n);
        let empty = Grad::new();
        let get = |a: Id| -> &Grad { cache.get(&a).unwrap_or(&empty) };
        match op {
            Op::Const(_) => Grad::new(),
            Op::Input(..) | Op::Sym(_) if family == Family::Iter => {
                let Some(seeds) = self.iter.clone() else {
                    return Grad::new();
                };
                self.iter_leaf(g, &seeds, op)
            }
            Op::Input(slot, i) => self.leaf_grad(g, family, slot, i),
            Op::Sym(s) => self.sym_grad(g, family, s),
            Op::Add(a, b) => merge(g, get(a), get(b), false),
            Op::Sub(a, b) => merge(g, get(a), get(b), true),
            Op::Unary(Unary::Neg, a) => {
                let ga = get(a).clone();
                ga.into_iter().map(|(d, x)| (d, neg(g, x))).collect()
            }
            Op::Unary(f, a) => {
                let ga = get(a).clone();
                if ga.is_empty() {
                    return ga;
                }
                let p = match f {
                    Unary::Neg => unreachable!("handled above"),
                    Unary::Sqrt => {
                        let two = g.constant(2.0);
                        Partial::DivBy(g.mul(two, n))
                    }
                    Unary::Sin => Partial::Mul(g.cos(a)),
                    Unary::Cos => {
                        let s = g.sin(a);
                        Partial::Mul(g.neg(s))
                    }
                    Unary::Tan => {
                        let one = g.constant(1.0);
                        let t2 = g.powi(n, 2);
                        Partial::Mul(g.add2(one, t2))
                    }
                    Unary::Exp => Partial::Mul(n),
                    Unary::Log => Partial::DivBy(a),
                    Unary::Tanh => {
                        let one = g.constant(1.0);
                        let t2 = g.powi(n, 2);
                        Partial::Mul(g.sub(one, t2))
                    }
                    Unary::Abs => {
                        let zero = g.constant(0.0);
                        let one = g.constant(1.0);
                        let m1 = g.constant(-1.0);
                        Partial::Mul(g.select(Cmp::Ge, a, zero, one, m1))
                    }
                };
                scale_all(g, p, &ga)
            }
            Op::Mul(a, b) => {
                let (ga, gb) = (get(a).clone(), get(b).clone());
                let ta = scale_all(g, Partial::Mul(b), &ga);
                let tb = scale_all(g, Partial::Mul(a), &gb);
                merge(g, &ta, &tb, false)
            }
            Op::Div(a, b) => {
                let (ga, gb) = (get(a).clone(), get(b).clone());
                // d(a/b) = da/b − (a/b)·db/b
                let ta = scale_all(g, Partial::DivBy(b), &ga);
                let tb = if gb.is_empty() {
                    gb
                } else {
                    let q = g.div(n, b);
                    scale_all(g, Partial::Mul(q), &gb)
                };
                merge(g, &ta, &tb, true)
            }
            Op::Powi(a, k) => {
                let ga = get(a).clone();
                if ga.is_empty() || k == 0 {
                    return Grad::new();
                }
                let p = match k {
                    1 => Partial::One,
                    2 => {
                        let two = g.constant(2.0);
                        Partial::Mul(g.mul(two, a))
                    }
                    _ => {
                        let c = g.constant(k as f64);
                        let pw = if k - 1 == 1 { a } else { g.powi(a, k - 1) };
                        Partial::Mul(g.mul(c, pw))
                    }
                };
                scale_all(g, p, &ga)
            }
            Op::Pow(a, b) => {
                let (ga, gb) = (get(a).clone(), get(b).clone());
                // ∂/∂a = b·a^(b−1) (not b·a^b/a, which is 0/0 at a = 0), ∂/∂b = a^b·ln a
                let ta = if ga.is_empty() {
                    ga
                } else {
                    let one = g.constant(1.0);
                    let bm1 = g.sub(b, one);
                    let pw = g.pow(a, bm1);
                    let p = g.mul(b, pw);
                    scale_all(g, Partial::Mul(p), &ga)
                };
                let tb = if gb.is_empty() {
                    gb
                } else {
                    let l = g.log(a);
                    let p = g.mul(n, l);
                    scale_all(g, Partial::Mul(p), &gb)
                };
                merge(g, &ta, &tb, false)
            }
            Op::Atan2(y, x) => {
                let (gy, gx) = (get(y).clone(), get(x).clone());
                // ∂/∂y = x/(x²+y²), ∂/∂x = −y/(x²+y²)
                let x2 = g.powi(x, 2);
                let y2 = g.powi(y, 2);
                let r2 = g.add2(x2, y2);
                let ty = if gy.is_empty() {
                    gy
                } else {
                    let p = g.div(x, r2);
                    scale_all(g, Partial::Mul(p), &gy)
                };
                let tx = if gx.is_empty() {
                    gx
                } else {
                    let p = g.div(y, r2);
                    scale_all(g, Partial::Mul(p), &gx)
                };
                merge(g, &ty, &tx, true)
            }
            Op::Min(a, b) | Op::Max(a, b) => {
                let (ga, gb) = (get(a).clone(), get(b).clone());
                let cmp = if matches!(op, Op::Min(..)) {
                    Cmp::Le
                } else {
                    Cmp::Ge
                };
                branch(g, &ga, &gb, |g, da, db| g.select(cmp, a, b, da, db))
            }
            Op::Select(cmp, [a, b, t, f]) => {
                let (gt, gf) = (get(t).clone(), get(f).clone());
                branch(g, &gt, &gf, |g, dt, df| g.select(cmp, a, b, dt, df))
            }
            Op::Spline(t, d, a) => {
                let ga = get(a).clone();
                // The third derivative is piecewise constant: its derivative is 0
                // (the jumps at the knots are not distributions here).
                if ga.is_empty() || d >= fdc_ir::spline::MAX_DERIV {
                    return Grad::new();
                }
                let p = g.spline(t, d + 1, a);
                scale_all(g, Partial::Mul(p), &ga)
            }
        }
    }
}

impl Differ {
    fn leaf_grad(&self, g: &mut Graph, family: Family, slot: Slot, i: u32) -> Grad {
        let unit = |g: &mut Graph, d: u32| vec![(d, g.constant(1.0))];
        match (family, slot) {
            (Family::V, Slot::V) | (Family::Vdot, Slot::Vdot) | (Family::Lambda, Slot::Lambda) => {
                unit(g, i)
            }
            (Family::T | Family::Rate, Slot::T) => unit(g, 0),
            (Family::Rate, Slot::Q) => {
                let gd = self.leaf_grad(g, Family::Delta, slot, i);
                contract_with_v(g, &gd)
            }
            (Family::Delta, Slot::Q) => {
                let (qo, vo, j) = match self.q_leaf(i) {
                    QLeaf::Plain(d) => return unit(g, d),
                    QLeaf::None => return Grad::new(),
                    QLeaf::Quat { q, v, j } => (q, v, j),
                };
                // θ∘[0; e_m] = [−θ_m; θ_0 e_m + θ_v × e_m]; component j of it is ±θ_l or 0.
                let th = |g: &mut Graph, l: usize| g.input(Slot::Q, (qo + 3) as usize + l);
                let half = g.constant(0.5);
                let mut out = Grad::new();
                for m in 0..3usize {
                    let (positive, l) = if j == 0 {
                        (false, m + 1)
                    } else if j - 1 == m {
                        (true, 0)
                    } else {
                        // (θ_v × e_m)_{j−1} = ε_{(j−1) l m} θ_l
                        let a = j - 1;
                        let l = 3 - a - m;
                        (levi(a, l, m) > 0, l + 1)
                    };
                    let x = th(g, l);
                    let hx = g.mul(half, x);
                    let v = if positive { hx } else { g.neg(hx) };
                    out.push((vo + 3 + m as u32, v));
                }
                out
            }
            _ => Grad::new(),
        }
    }

    /// The seed of a leaf in [`Family::Iter`].
    fn iter_leaf(&self, g: &mut Graph, s: &IterSeeds, op: Op) -> Grad {
        let gd = match op {
            Op::Input(Slot::Vdot, i) => return vec![(i, g.constant(1.0))],
            Op::Input(Slot::V, i) => return vec![(i, s.gh)],
            Op::Input(Slot::Lambda, j) => return vec![(s.nv + j, g.constant(1.0))],
            Op::Input(Slot::Q, i) => self.leaf_grad(g, Family::Delta, Slot::Q, i),
            Op::Sym(k) => self.sym_grad(g, Family::Delta, k),
            _ => return Grad::new(),
        };
        // (∂/∂δ) β′h² T(Δ): translations and vector-space dofs scaled, rotations of
        // rigid body k mixed by β′h² T_k.
        let mut cols: std::collections::BTreeMap<u32, Vec<Id>> = Default::default();
        for (c, d) in gd {
            let Some((k, m)) = self.rotation_dof(c) else {
                cols.entry(c)
                    .or_default()
                    .push(scale(g, Partial::Mul(s.bh2), d));
                continue;
            };
            let Some(t) = s.bh2_t.get(k as usize) else {
                continue;
            };
            let base = c - m as u32;
            for (n, &tmn) in t[m].iter().enumerate() {
                let x = scale(g, Partial::Mul(tmn), d);
                cols.entry(base + n as u32).or_default().push(x);
            }
        }
        cols.into_iter()
            .filter_map(|(c, terms)| g.sum(&terms).map(|x| (c, x)))
            .collect()
    }

    /// ∂A_ij/∂δφ_m = (A ẽ_m)_ij. Column j of A ẽ_m is A (e_m × e_j) = ε_{mjl} A e_l, so
    /// the entry is ±A_il (l the third index) or zero for m = j.
    fn sym_grad(&self, g: &mut Graph, family: Family, s: u32) -> Grad {
        if family == Family::Rate {
            // Ȧ = A ω̄̃ = Σ_m (A ẽ_m) ω̄_m.
            let gd = self.sym_grad(g, Family::Delta, s);
            return contract_with_v(g, &gd);
        }
        if family != Family::Delta {
            return Grad::new();
        }
        let k = s / 9;
        let Some(rv) = self.rotation_v(k) else {
            return Grad::new();
        };
        let i = (s % 9) / 3;
        let j = (s % 3) as usize;
        let mut out = Grad::new();
        for m in 0..3usize {
            if m == j {
                continue;
            }
            let l = 3 - m - j;
            let a = g.sym(9 * k + 3 * i + l as u32);
            let v = if levi(m, j, l) > 0 { a } else { g.neg(a) };
            out.push((rv + m as u32, v));
        }
        out
    }
}

/// The Levi-Civita symbol of three distinct indices in 0..3.
fn levi(a: usize, b: usize, c: usize) -> i32 {
    match (a, b, c) {
        (0, 1, 2) | (1, 2, 0) | (2, 0, 1) => 1,
        _ => -1,
    }
}

/// A δ-gradient contracted with the velocities, Σ_i d_i v_i, as the single direction 0
/// (negated entries become subtractions).
fn contract_with_v(g: &mut Graph, gd: &Grad) -> Grad {
    let (mut pos, mut negs) = (Vec::new(), Vec::new());
    for &(i, d) in gd {
        let v = g.input(Slot::V, i as usize);
        match g.op(d) {
            Op::Unary(Unary::Neg, x) => negs.push(scale(g, Partial::Mul(v), x)),
            _ => pos.push(scale(g, Partial::Mul(v), d)),
        }
    }
    let p = g.sum(&pos);
    let n = g.sum(&negs);
    match (p, n) {
        (Some(p), Some(n)) => vec![(0, g.sub(p, n))],
        (Some(p), None) => vec![(0, p)],
        (None, Some(n)) => vec![(0, g.neg(n))],
        (None, None) => Grad::new(),
    }
}

fn neg(g: &mut Graph, x: Id) -> Id {
    // −(−y) = y exactly in IEEE arithmetic.
    if let Op::Unary(Unary::Neg, y) = g.op(x) {
        return y;
    }
    g.neg(x)
}

fn is_const(g: &Graph, x: Id, v: f64) -> bool {
    g.as_const(x).is_some_and(|c| c == v)
}

fn scale(g: &mut Graph, p: Partial, d: Id) -> Id {
    match p {
        Partial::One => d,
        Partial::Mul(f) => {
            if is_const(g, d, 1.0) {
                f
            } else if is_const(g, f, 1.0) {
                d
            } else if is_const(g, d, -1.0) {
                neg(g, f)
            } else {
                g.mul(f, d)
            }
        }
        Partial::DivBy(b) => {
            if is_const(g, b, 1.0) {
                d
            } else {
                g.div(d, b)
            }
        }
    }
}

fn scale_all(g: &mut Graph, p: Partial, gr: &Grad) -> Grad {
    gr.iter().map(|&(d, x)| (d, scale(g, p, x))).collect()
}

/// a ± b on sparse gradients.
fn merge(g: &mut Graph, a: &Grad, b: &Grad, sub: bool) -> Grad {
    let mut out = Grad::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        let da = a.get(i).map(|x| x.0).unwrap_or(u32::MAX);
        let db = b.get(j).map(|x| x.0).unwrap_or(u32::MAX);
        if da < db {
            out.push(a[i]);
            i += 1;
        } else if db < da {
            let x = if sub { neg(g, b[j].1) } else { b[j].1 };
            out.push((db, x));
            j += 1;
        } else {
            let x = if sub {
                g.sub(a[i].1, b[j].1)
            } else {
                g.add2(a[i].1, b[j].1)
            };
            out.push((da, x));
            i += 1;
            j += 1;
        }
    }
    out
}

/// Per direction, `f(da, db)` with a zero constant for a missing side (a branch value,
/// not a structural zero: the other branch is nonzero).
fn branch(g: &mut Graph, a: &Grad, b: &Grad, mut f: impl FnMut(&mut Graph, Id, Id) -> Id) -> Grad {
    let mut dirs: Vec<u32> = a.iter().chain(b.iter()).map(|x| x.0).collect();
    dirs.sort_unstable();
    dirs.dedup();
    let zero = g.constant(0.0);
    let find = |gr: &Grad, d: u32| gr.iter().find(|x| x.0 == d).map(|x| x.1);
    dirs.into_iter()
        .map(|d| {
            let da = find(a, d).unwrap_or(zero);
            let db = find(b, d).unwrap_or(zero);
            (d, f(g, da, db))
        })
        .collect()
}

/// A replacement for a leaf during [`substitute`]: `Some(None)` is the exact zero.
pub type Leaf<'a> = &'a dyn Fn(Op) -> Option<Option<Id>>;

/// Rebuilds the cone of `roots` with leaves replaced by `leaf`. A replacement by zero
/// (`Some(None)`) is propagated symbolically (0·x = 0, 0 + x = x, …): this sets a
/// variable to zero in the sense of the mathematics (e.g. f = r at v̇ = 0), and the
/// result has no structural zeros. `None` in the result is the zero. Memoized in
/// `memo`, which must be used with one `leaf` only.
pub fn substitute(
    g: &mut Graph,
    roots: &[Id],
    leaf: Leaf,
    memo: &mut HashMap<Id, Option<Id>>,
) -> Vec<Option<Id>> {
    let mut seen = std::collections::HashSet::new();
    let mut stack: Vec<Id> = roots
        .iter()
        .copied()
        .filter(|r| !memo.contains_key(r))
        .collect();
    let mut cone = Vec::new();
    while let Some(n) = stack.pop() {
        if !seen.insert(n) {
            continue;
        }
        cone.push(n);
        for a in g.op(n).operands() {
            if !memo.contains_key(&a) && !seen.contains(&a) {
                stack.push(a);
            }
        }
    }
    cone.sort_unstable();
    for n in cone {
        let op = g.op(n);
        let r = match op {
            Op::Const(_) | Op::Input(..) | Op::Sym(_) => leaf(op).unwrap_or(Some(n)),
            _ => rebuild(g, n, op, memo),
        };
        memo.insert(n, r);
    }
    roots.iter().map(|r| memo[r]).collect()
}

fn rebuild(g: &mut Graph, n: Id, op: Op, memo: &HashMap<Id, Option<Id>>) -> Option<Id> {
    let ops = op.operands();
    let new: Vec<Option<Id>> = ops.iter().map(|a| memo[a]).collect();
    if ops.iter().zip(&new).all(|(a, b)| Some(*a) == *b) {
        return Some(n);
    }
    let mut z = |x: Option<Id>| x.unwrap_or_else(|| g.constant(0.0));
    match op {
        Op::Add(..) => match (new[0], new[1]) {
            (None, b) => b,
            (a, None) => a,
            (Some(a), Some(b)) => Some(g.add2(a, b)),
        },
        Op::Sub(..) => match (new[0], new[1]) {
            (a, None) => a,
            (None, Some(b)) => Some(g.neg(b)),
            (Some(a), Some(b)) => Some(g.sub(a, b)),
        },
        Op::Mul(..) => match (new[0], new[1]) {
            (Some(a), Some(b)) => Some(g.mul(a, b)),
            _ => None,
        },
        Op::Div(..) => match (new[0], new[1]) {
            (None, _) => None,
            (Some(a), b) => {
                let b = z(b);
                Some(g.div(a, b))
            }
        },
        Op::Unary(Unary::Neg, _) => new[0].map(|a| g.neg(a)),
        Op::Unary(f, _) => {
            let a = z(new[0]);
            Some(g.unary(f, a))
        }
        Op::Powi(_, k) => match new[0] {
            None if k > 0 => None,
            a => {
                let a = z(a);
                Some(g.powi(a, k))
            }
        },
        _ => {
            let v: Vec<Id> = new.into_iter().map(&mut z).collect();
            let op2 = match op {
                Op::Pow(..) => Op::Pow(v[0], v[1]),
                Op::Atan2(..) => Op::Atan2(v[0], v[1]),
                Op::Min(..) => Op::Min(v[0], v[1]),
                Op::Max(..) => Op::Max(v[0], v[1]),
                Op::Select(c, _) => Op::Select(c, [v[0], v[1], v[2], v[3]]),
                Op::Spline(t, d, _) => Op::Spline(t, d, v[0]),
                _ => unreachable!("all other operations are matched above"),
            };
            Some(g.add(op2))
        }
    }
}

/// True if any node of the cone of `roots` satisfies `pred`.
pub fn cone_any(g: &Graph, roots: &[Id], pred: impl Fn(Op) -> bool) -> bool {
    let mut seen = std::collections::HashSet::new();
    let mut stack: Vec<Id> = roots.to_vec();
    while let Some(n) = stack.pop() {
        if !seen.insert(n) {
            continue;
        }
        let op = g.op(n);
        if pred(op) {
            return true;
        }
        stack.extend(op.operands());
    }
    false
}

/// The number of operation nodes (not constants, inputs or symbols) in the cone of
/// `roots`, each shared node counted once: the cost of evaluating them together.
pub fn op_count(g: &Graph, roots: &[Id]) -> usize {
    let mut seen = std::collections::HashSet::new();
    let mut stack: Vec<Id> = roots.to_vec();
    let mut count = 0;
    while let Some(n) = stack.pop() {
        if !seen.insert(n) {
            continue;
        }
        let op = g.op(n);
        if !matches!(op, Op::Const(_) | Op::Input(..) | Op::Sym(_)) {
            count += 1;
        }
        stack.extend(op.operands());
    }
    count
}
