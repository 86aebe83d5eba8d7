//! The iteration matrix of the dynamic and constraint rows, in one of its forms.

use super::{mul_s, ElementBuilder};
use crate::ad::{self, Family, Grad};
use fdc_ir::{Id, M3};
use std::cell::Cell;
use std::collections::BTreeMap;

/// How the dynamic rows of `iter` and `iter_noqv` are formed. All forms are exact
/// derivatives of the same residual; they differ in operation count.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum IterationForm {
    /// Build the assembled and the eliminated form and keep the one with fewer
    /// operations (the default). Elements without constraint rows (forces, bodies)
    /// build only the eliminated form: it won on every such library type.
    #[default]
    Cheaper,
    /// ∂r/∂v̇ + γ′h ∂r/∂v + β′h² (∂r/∂δ) T(Δ) from the separate partial derivatives.
    Assembled,
    /// d r/dx in one forward pass through the discrete state x ↦ (q, v, v̇, λ).
    Direct,
    /// d r/dx by vertex elimination ([`crate::Differ::iter_by_elimination`]).
    Eliminated,
}

thread_local! {
    /// The form of every element builder created on this thread.
    static FORM: Cell<IterationForm> = const { Cell::new(IterationForm::Cheaper) };
}

/// Runs `f` with `form` as the iteration form of every [`ElementBuilder`] created on
/// this thread, e.g. by lowering a model from fd source (which runs on the compile
/// thread: call this on it): tests and benchmarks compare the forms through it.
pub fn with_iteration_form<R>(form: IterationForm, f: impl FnOnce() -> R) -> R {
    let old = FORM.with(|c| c.replace(form));
    let r = f();
    FORM.with(|c| c.set(old));
    r
}

pub(super) fn default_form() -> IterationForm {
    FORM.with(|c| c.get())
}

impl ElementBuilder<'_> {
    /// (∂r/∂δ) T(Δ) for one sparse row: translations unchanged, the three rotation
    /// columns of body k multiplied by T_SO(3)(Δφ_k).
    fn times_tangent(&mut self, row: &Grad, tangents: &[M3]) -> Grad {
        let mut cols: BTreeMap<u32, Vec<Id>> = BTreeMap::new();
        for &(c, d) in row {
            // Translations and additive (vector-space) dofs: the identity.
            let Some((k, m)) = self.layout.rotation_dof(c) else {
                cols.entry(c).or_default().push(d);
                continue;
            };
            let base = c - m as u32;
            for (n, &tmn) in tangents[k as usize][m].iter().enumerate() {
                let t = mul_s(self.g, d, tmn);
                cols.entry(base + n as u32).or_default().push(t);
            }
        }
        cols.into_iter()
            .map(|(c, terms)| (c, self.g.sum(&terms).expect("entries have terms")))
            .collect()
    }

    /// The dynamic rows of the iteration matrix assembled from the partial
    /// derivatives: ∂r/∂v̇ + γ′h ∂r/∂v + β′h² (∂r/∂δ) T(Δ) | ∂r/∂λ.
    fn assembled_rows(
        &mut self,
        rows: &[Option<Id>],
        tangents: &[M3],
        gh: Id,
        bh2: Id,
    ) -> (Vec<Id>, Vec<(u32, u32)>) {
        let nv = rows.len();
        let mut out = Vec::new();
        let mut entries = Vec::new();
        for (i, r) in rows.iter().enumerate() {
            let Some(r) = *r else { continue };
            let gvd = self.differ.grad(self.g, Family::Vdot, r);
            let gv = self.differ.grad(self.g, Family::V, r);
            let gd = self.differ.grad(self.g, Family::Delta, r);
            let gl = self.differ.grad(self.g, Family::Lambda, r);
            let gdt = self.times_tangent(&gd, tangents);
            let mut cols: BTreeMap<u32, Vec<Id>> = BTreeMap::new();
            for (c, d) in gvd {
                cols.entry(c).or_default().push(d);
            }
            for (c, d) in gv {
                let t = mul_s(self.g, gh, d);
                cols.entry(c).or_default().push(t);
            }
            for (c, d) in gdt {
                let t = mul_s(self.g, bh2, d);
                cols.entry(c).or_default().push(t);
            }
            for (c, terms) in cols {
                entries.push((i as u32, c));
                out.push(self.g.sum(&terms).expect("entries have terms"));
            }
            for (j, d) in gl {
                entries.push((i as u32, nv as u32 + j));
                out.push(d);
            }
        }
        (out, entries)
    }

    /// The dynamic rows as d r/dx in one forward pass through the discrete state
    /// (the `Iter` family). Cheaper when the rows depend on few rotation matrices
    /// through long chains (forces), costlier for short ones (constraint reactions).
    fn direct_rows(&mut self, rows: &[Option<Id>]) -> (Vec<Id>, Vec<(u32, u32)>) {
        let mut out = Vec::new();
        let mut entries = Vec::new();
        for (i, r) in rows.iter().enumerate() {
            let Some(r) = *r else { continue };
            for (c, d) in self.differ.grad(self.g, Family::Iter, r) {
                entries.push((i as u32, c));
                out.push(d);
            }
        }
        (out, entries)
    }

    /// The cheapest of the candidate forms of the dynamic rows (the others' nodes
    /// stay unused in the graph).
    fn cheaper_rows(
        &mut self,
        rows: &[Option<Id>],
        tangents: &[M3],
        constrained: bool,
        [gh, bh2]: [Id; 2],
    ) -> (Vec<Id>, Vec<(u32, u32)>) {
        if let Some(e) = self.differ.remembered_iteration(rows) {
            return e;
        }
        // Without constraint rows the rows are loads, where elimination won on every
        // library type (docs/performance.md, session 19): the assembled form's
        // forward gradients in 12 or more δ directions are not built.
        if !constrained {
            let e = self.differ.iter_by_elimination(self.g, rows, tangents);
            self.differ.remember_iteration(rows, &e);
            return e;
        }
        // The one-pass form is elimination in id order, so Markowitz's order
        // replaces it here (it is never cheaper on the library's types).
        let a = self.assembled_rows(rows, tangents, gh, bh2);
        let e = self.differ.iter_by_elimination(self.g, rows, tangents);
        let best = if ad::op_count(self.g, &e.0) < ad::op_count(self.g, &a.0) {
            e
        } else {
            a
        };
        self.differ.remember_iteration(rows, &best);
        best
    }

    pub(super) fn iteration_matrix(
        &mut self,
        rows: &[Option<Id>],
        b_rows: &[Grad],
        tangents: &[M3],
        gh: Id,
        bh2: Id,
    ) -> (Vec<Id>, Vec<(u32, u32)>) {
        let nv = rows.len();
        // All forms are exact; keep the one with fewest operations (the rows of the
        // others stay unused in the graph).
        let (mut out, mut entries) = match self.iteration_form {
            IterationForm::Assembled => self.assembled_rows(rows, tangents, gh, bh2),
            IterationForm::Direct => self.direct_rows(rows),
            IterationForm::Eliminated => self.differ.iter_by_elimination(self.g, rows, tangents),
            IterationForm::Cheaper => {
                self.cheaper_rows(rows, tangents, !b_rows.is_empty(), [gh, bh2])
            }
        };
        // Constraint rows: ∂(Φ/(β′h²))/∂δ · β′h² T = B T exactly; Φ has no v, v̇, λ.
        for (j, row) in b_rows.iter().enumerate() {
            for (c, d) in self.times_tangent(row, tangents) {
                entries.push(((nv + j) as u32, c));
                out.push(d);
            }
        }
        (out, entries)
    }
}
