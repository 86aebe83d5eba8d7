//! The gradients of the leaves: inputs and rotation-matrix symbols, per family.

use super::chain::scale;
use super::{Differ, Family, Grad, IterSeeds, Partial, QLeaf};
use fdc_ir::{Graph, Id, Op, Slot, Unary};

impl Differ {
    pub(super) fn leaf_grad(&self, g: &mut Graph, family: Family, slot: Slot, i: u32) -> Grad {
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
    pub(super) fn iter_leaf(&self, g: &mut Graph, s: &IterSeeds, op: Op) -> Grad {
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
    pub(super) fn sym_grad(&self, g: &mut Graph, family: Family, s: u32) -> Grad {
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
