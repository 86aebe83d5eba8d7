//! Initial position assembly: when the initial configuration q₀ does not satisfy
//! Φ(q) = 0 (joints given by body-local points, a loop written open), move it to the
//! nearest configuration that does, before the velocity projection.
//!
//! "Nearest" is measured in the metric of the velocity projection, the mass matrix:
//! the correction d (tangent coordinates, q = q₀ ∘ exp(d)) minimizes ½ dᵀ M d subject
//! to Φ(q₀ ∘ exp(d)) = 0. Each iteration is a damped Gauss–Newton (Levenberg–Marquardt)
//! step on the group,
//!
//! ```text
//! [ M   Bᵀ ] [ Δ ]   [ −M d ]
//! [ B  −μI ] [ y ] = [ −Φ   ]
//! ```
//!
//! i.e. the minimizer of |Φ + BΔ|²/μ + |d + Δ|²_M; q ← q ∘ exp(Δ) through `Update`.
//! μ → 0 is the constrained Gauss–Newton step (quadratic convergence on Φ); a step
//! that does not lower |Φ| is retried with a larger μ, so a loop that cannot close ends
//! at its least-squares gap, which the error reports. Dofs held by `given` (`given.rs`)
//! and constraint rows that are redundant once those dofs are held get a unit diagonal
//! (Δ = 0, y = 0); every row, redundant or not, must hold at the end.

use super::*;

/// The largest correction of one body's coordinates in the assembly.
#[derive(Clone, Debug, PartialEq)]
pub struct Correction {
    /// Body instance name.
    pub body: String,
    /// max |d_k| over the body's velocity dofs (tangent coordinates: for a rigid body
    /// dofs 0–2 are the translation [m], 3–5 the rotation about body axes [rad]).
    pub size: f64,
    /// The dof k of that largest entry.
    pub dof: usize,
}

/// Iterations before the assembly gives up.
const MAX_ITERATIONS: usize = 60;
/// Converged once ‖Φ‖∞ ≤ PHI_TOL (1 + ‖q₀‖∞) (length rows scale with the model size).
const PHI_TOL: f64 = 1e-14;
/// Relative damping μ / max diag(B M⁻¹ Bᵀ): first value, floor and give-up ceiling.
const MU_START: f64 = 1e-8;
const MU_MIN: f64 = 1e-18;
const MU_MAX: f64 = 1e8;

impl System {
    /// Largest correction per body of the last assembly (empty when none was needed).
    pub fn assembly_corrections(&self) -> &[Correction] {
        &self.corrections
    }

    /// Rows of B (from the IC matrix) without the held columns.
    pub(super) fn free_b_rows(&self, held: &[bool]) -> Vec<Vec<(usize, f64)>> {
        let nv = self.nv;
        let mut rows: Vec<Vec<(usize, f64)>> = vec![Vec::new(); self.nl];
        for c in (0..nv).filter(|&c| !held[c]) {
            for pos in self.icp.col_ptr[c]..self.icp.col_ptr[c + 1] {
                let r = self.icp.row_idx[pos];
                if r >= nv && self.icv[pos] != 0.0 {
                    rows[r - nv].push((c, self.icv[pos]));
                }
            }
        }
        rows
    }

    /// Moves q to the nearest configuration with Φ(q) = 0 (module comment). Does
    /// nothing when assembly is off or Φ(q₀) already passes the position check, so
    /// models whose joints are `e − initial(e)` start exactly as written.
    pub(super) fn assemble_positions(
        &mut self,
        settings: &Settings,
        c: &Coefficients,
    ) -> Result<(), RuntimeError> {
        self.corrections.clear();
        if !settings.assemble || self.nl == 0 {
            return Ok(());
        }
        let held = self.held(&settings.given)?.position;
        self.assemble_ic(c);
        let phi0 = inf_norm(&self.ic_phi);
        if phi0.is_finite() && phi0 <= POSITION_TOL {
            return Ok(());
        }
        let (nv, nl) = (self.nv, self.nl);
        let q0 = self.q.clone();
        let tol = PHI_TOL * (1.0 + inf_norm(&q0));
        let mut d = vec![0.0; nv];
        let mut q_prev = self.q.clone();
        let mut dead = vec![false; nv + nl];
        let mut mu = MU_START;
        let mut iterations = 0;
        let mut merit = f64::INFINITY;
        // The step that led to the current q (None after a rejection) and whether it
        // was negligible (then the nearest point is found too).
        let mut last: Option<Vec<f64>> = None;
        let mut small = false;
        while iterations < MAX_ITERATIONS {
            self.assemble_ic(c);
            // Rows that say nothing new once the held dofs are fixed.
            dead[..nv].copy_from_slice(&held);
            dead[nv..].fill(false);
            for l in redundant::redundant_rows(nv, &self.free_b_rows(&held)) {
                dead[nv + l] = true;
            }
            let (now, max) = (self.active_merit(&dead), self.active_max(&dead));
            if let Some(step) = last.take() {
                let better = now < merit || max <= tol;
                if !better {
                    // |Φ| did not go down: back to the last q, with more damping.
                    self.q.copy_from_slice(&q_prev);
                    for (di, si) in d.iter_mut().zip(&step) {
                        *di -= si;
                    }
                    mu *= 100.0;
                    if mu > MU_MAX {
                        break;
                    }
                    continue;
                }
                mu = (mu * 0.01).max(MU_MIN);
                small = inf_norm(&step) <= 1e-10 * (1.0 + inf_norm(&d));
            }
            merit = now;
            if max <= tol && small {
                break;
            }
            iterations += 1;
            let step = self.assembly_step(c, &dead, &d, mu)?;
            q_prev.copy_from_slice(&self.q);
            for (di, si) in d.iter_mut().zip(&step) {
                *di += si;
            }
            self.move_by(&step, c);
            last = Some(step);
        }
        // Every row must hold, redundant ones included.
        self.assemble_ic(c);
        let worst = (0..nl).max_by(|&a, &b| self.ic_phi[a].abs().total_cmp(&self.ic_phi[b].abs()));
        if let Some(l) = worst {
            let gap = self.ic_phi[l].abs();
            if gap.is_nan() || gap > POSITION_TOL {
                return Err(self.assembly_failed(l, iterations));
            }
        }
        self.record_corrections(&q0, &d);
        Ok(())
    }

    /// ‖Φ‖₂ over the rows the iteration solves for.
    fn active_merit(&self, dead: &[bool]) -> f64 {
        let nv = self.nv;
        let s: f64 = (0..self.nl)
            .filter(|&l| !dead[nv + l])
            .map(|l| self.ic_phi[l] * self.ic_phi[l])
            .sum();
        if s.is_nan() {
            f64::INFINITY
        } else {
            s.sqrt()
        }
    }

    /// ‖Φ‖∞ over the same rows (infinite if one is NaN).
    fn active_max(&self, dead: &[bool]) -> f64 {
        (0..self.nl)
            .filter(|&l| !dead[self.nv + l])
            .map(|l| self.ic_phi[l].abs())
            .fold(
                0.0,
                |m, x| if x.is_nan() { f64::INFINITY } else { m.max(x) },
            )
    }

    /// One damped Gauss–Newton correction Δ from the IC matrix assembled at q.
    fn assembly_step(
        &mut self,
        c: &Coefficients,
        dead: &[bool],
        d: &[f64],
        mu_rel: f64,
    ) -> Result<Vec<f64>, RuntimeError> {
        let (nv, nl) = (self.nv, self.nl);
        let nx = nv + nl;
        // −M d and the scale of B M⁻¹ Bᵀ, before the held dofs are cut out.
        let mut rhs = vec![0.0; nx];
        let mut schur = vec![0.0; nl];
        for col in 0..nv {
            let m_cc = self.icp.position(col, col).map_or(0.0, |p| self.icv[p]);
            for pos in self.icp.col_ptr[col]..self.icp.col_ptr[col + 1] {
                let r = self.icp.row_idx[pos];
                if r < nv {
                    rhs[r] -= self.icv[pos] * d[col];
                } else if m_cc > 0.0 && !dead[col] {
                    schur[r - nv] += self.icv[pos] * self.icv[pos] / m_cc;
                }
            }
        }
        let mu = mu_rel * schur.iter().fold(0.0f64, |m, &s| m.max(s)).max(1e-300);
        self.cut_ic(dead, Some(mu));
        for l in 0..nl {
            rhs[nv + l] = -self.ic_phi[l];
        }
        for (i, x) in rhs.iter_mut().enumerate() {
            if dead[i] {
                *x = 0.0;
            }
        }
        self.ic_rhs.copy_from_slice(&rhs);
        self.ic_solve(c)?;
        Ok(self.ic_rhs[..nv].to_vec())
    }

    /// q ← q ∘ exp(Δ) through the `Update` role of every body.
    fn move_by(&mut self, step: &[f64], c: &Coefficients) {
        self.delta.copy_from_slice(step);
        let w = View {
            q: &self.q,
            v: &self.v,
            vd: &self.vd,
            lam: &self.lam,
            delta: &self.delta,
            t: 0.0,
        };
        update_bodies(
            &self.table.types,
            &self.inst,
            &mut self.s,
            &w,
            c,
            &mut self.qt,
        );
        self.q.copy_from_slice(&self.qt);
        self.delta.fill(0.0);
    }

    /// The error for the row `l` with the largest gap, and the other open instances.
    fn assembly_failed(&self, l: usize, iterations: usize) -> RuntimeError {
        let owner = self.row_owner(l);
        let mut others = Vec::new();
        for e in &self.inst {
            let open = e
                .lambda_map
                .iter()
                .any(|&g| self.ic_phi[g].abs() > POSITION_TOL);
            if open && e.name != owner.0 && !others.contains(&e.name) {
                others.push(e.name.clone());
            }
        }
        RuntimeError::AssemblyFailed {
            instance: owner.0,
            row: owner.1,
            gap: self.ic_phi[l].abs(),
            iterations,
            others,
        }
    }

    /// The largest entry of the accumulated correction d per body that moved.
    fn record_corrections(&mut self, q0: &[f64], d: &[f64]) {
        let types = &self.table.types;
        for e in &self.inst {
            if !types[e.ty].owns_coordinates {
                continue;
            }
            let moved = e.q_map.iter().any(|&g| self.q[g] != q0[g]);
            let (dof, size) = e
                .v_map
                .iter()
                .enumerate()
                .map(|(k, &g)| (k, d[g].abs()))
                .fold((0, 0.0), |a, b| if b.1 > a.1 { b } else { a });
            if moved {
                self.corrections.push(Correction {
                    body: e.name.clone(),
                    size,
                    dof,
                });
            }
        }
    }
}
