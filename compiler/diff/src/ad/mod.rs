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

use fdc_ir::{Cmp, Graph, Id, Op, Unary, M3};
use rustc_hash::FxHashMap;

mod chain;
mod eliminate;
mod leaves;
mod signs;
mod subst;

use chain::{branch, merge, neg, scale_all};
pub use signs::Signs;
pub use subst::{cone_any, op_count, substitute, Leaf};

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

/// A sparse matrix as its entries' nodes and their (row, column), in the same order.
pub type Entries = (Vec<Id>, Vec<(u32, u32)>);

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
    caches: [FxHashMap<Id, Grad>; 7],
    iter: Option<IterSeeds>,
    /// The last [`Differ::iter_by_elimination`]: its rows and result (`iter` and
    /// `iter_noqv` of a connector have the same rows; elimination has no per-node
    /// cache to make the second call cheap).
    last_elimination: Option<(Vec<Option<Id>>, Entries)>,
    /// The last rows whose iteration matrix the element chose among its forms, and
    /// the choice ([`Differ::remember_iteration`]).
    last_choice: Option<(Vec<Option<Id>>, Entries)>,
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
            None => (dir % 6 >= 3).then(|| (dir / 6, (dir % 6 - 3) as usize)),
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
        self.last_elimination = None;
        self.last_choice = None;
    }

    /// The iteration matrix of `rows` remembered by [`Differ::remember_iteration`]
    /// since the last [`Differ::set_iteration`]: `iter` and `iter_noqv` of a connector
    /// have the same rows, and choosing a form again would rebuild every candidate.
    pub fn remembered_iteration(&self, rows: &[Option<Id>]) -> Option<Entries> {
        let (r, e) = self.last_choice.as_ref()?;
        (r == rows).then(|| e.clone())
    }

    pub fn remember_iteration(&mut self, rows: &[Option<Id>], entries: &Entries) {
        self.last_choice = Some((rows.to_vec(), entries.clone()));
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
        // The part of the cone not yet differentiated, in id order (operands first).
        let cone = g.cone_until(roots, |n| cache.contains_key(&n));
        for n in cone {
            let gr = self.node_grad(g, family, n);
            self.caches[family as usize].insert(n, gr);
        }
    }

    /// The gradient of node `n` from those of its operands (the chain rule, one
    /// operation at a time; [`chain`] holds the rules).
    fn node_grad(&mut self, g: &mut Graph, family: Family, n: Id) -> Grad {
        let cache = &self.caches[family as usize];
        let op = g.op(n);
        let empty = Grad::new();
        let get = |a: Id| -> Grad { cache.get(&a).unwrap_or(&empty).clone() };
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
            Op::Add(a, b) => merge(g, &get(a), &get(b), false),
            Op::Sub(a, b) => merge(g, &get(a), &get(b), true),
            Op::Unary(Unary::Neg, a) => {
                let ga = get(a);
                ga.into_iter().map(|(d, x)| (d, neg(g, x))).collect()
            }
            Op::Unary(f, a) => chain::unary(g, f, n, a, &get(a)),
            Op::Mul(a, b) => {
                let ta = scale_all(g, Partial::Mul(b), &get(a));
                let tb = scale_all(g, Partial::Mul(a), &get(b));
                merge(g, &ta, &tb, false)
            }
            Op::Div(a, b) => chain::div(g, n, [a, b], [&get(a), &get(b)]),
            Op::Powi(a, k) => chain::powi(g, a, k, &get(a)),
            Op::Pow(a, b) => chain::pow(g, n, [a, b], [&get(a), &get(b)]),
            Op::Atan2(y, x) => chain::atan2(g, [y, x], [&get(y), &get(x)]),
            Op::Min(a, b) | Op::Max(a, b) => {
                let cmp = if matches!(op, Op::Min(..)) {
                    Cmp::Le
                } else {
                    Cmp::Ge
                };
                branch(g, &get(a), &get(b), |g, da, db| g.select(cmp, a, b, da, db))
            }
            Op::Select(cmp, [a, b, t, f]) => {
                branch(g, &get(t), &get(f), |g, dt, df| g.select(cmp, a, b, dt, df))
            }
            Op::Spline(t, d, a) => {
                let ga = get(a);
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
