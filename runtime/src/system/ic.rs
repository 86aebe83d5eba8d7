//! Initial conditions (theory §6): initial values, assembly and the position check, redundant
//! constraints, velocity projection, consistent accelerations and multipliers.

use super::*;

impl System {
    /// Removed rows become λ_k = 0: a unit diagonal, no right-hand side.
    pub(super) fn apply_removed_ic(&mut self) {
        let nv = self.nv;
        for l in 0..self.nl {
            if self.removed[l] {
                let d = self
                    .icp
                    .position(nv + l, nv + l)
                    .expect("diagonal is in the pattern");
                self.icv[d] = 1.0;
                self.ic_rhs[nv + l] = 0.0;
                self.ic_g[l] = 0.0;
            }
        }
    }

    /// Finds constraint rows whose B row depends on the rows before it (model order)
    /// with the rank-revealing test of [`redundant`], which factorizes densely only the
    /// groups of rows that a sparse LDLᵀ of B Bᵀ cannot clear. Removed rows keep λ = 0
    /// for the whole run.
    pub(super) fn find_redundant(&mut self) -> Result<Vec<String>, RuntimeError> {
        let (nv, nl) = (self.nv, self.nl);
        // B rows from the IC matrix (rows nv.., columns ..nv; duplicates are merged).
        let mut rows: Vec<Vec<(usize, f64)>> = vec![Vec::new(); nl];
        for c in 0..nv {
            for pos in self.icp.col_ptr[c]..self.icp.col_ptr[c + 1] {
                let r = self.icp.row_idx[pos];
                if r >= nv {
                    rows[r - nv].push((c, self.icv[pos]));
                }
            }
        }
        let removed = redundant::redundant_rows(nv, &rows);
        if !removed.is_empty() {
            self.check_rheonomic(&rows, &removed)?;
        }
        self.removed.fill(false);
        let mut names = Vec::new();
        for l in removed {
            self.removed[l] = true;
            names.push(self.labels[nv + l].clone());
        }
        self.apply_removed_positions();
        Ok(names)
    }

    /// Points the matrix entries of the removed constraint rows (`removed`) to the
    /// spare slot at the end of the value arrays, and the others to their places.
    pub(super) fn apply_removed_positions(&mut self) {
        let nv = self.nv;
        let types = &self.table.types;
        let (jtrash, ictrash) = (self.jp.nnz(), self.icp.nnz());
        for entries in [&mut self.iter_entries, &mut self.noqv_entries] {
            entries.remove_rows(nv, &self.removed, jtrash);
        }
        for e in &mut self.inst {
            let entries = sparse_entries(&types[e.ty], Role::Ic, 1);
            for (k, &(r, _)) in entries.iter().enumerate() {
                let gone = self.removed[e.lambda_map[r as usize]];
                e.ic_b_pos[k] = if gone { ictrash } else { e.ic_b_pos_all[k] };
            }
        }
    }

    /// Time-dependent rows: Φ or Φ_t of the `Ic` role change when only t does (at
    /// t₀, t₀ + 0.37 s and t₀ + 1.3 s, so a periodic driver does not hide).
    fn rheonomic_rows(&mut self) -> Vec<bool> {
        let mut base = vec![0.0; 2 * self.nl];
        let mut rheo = vec![false; self.nl];
        let c = Coefficients::at_rest(1.0);
        let types = &self.table.types;
        for (pass, dt) in [0.0, 0.37, 1.3].into_iter().enumerate() {
            let mut w = accepted_view!(self);
            w.t += dt;
            for e in &self.inst {
                let ty = &types[e.ty];
                if ty.nl == 0 {
                    continue;
                }
                call(types, e, Role::Ic, &mut self.s, &w, &c);
                let o = e.ic_m_pos.len() + e.ic_b_pos.len() + ty.nv;
                for k in 0..ty.nl {
                    let l = e.lambda_map[k];
                    let (phi, phi_t) = (self.s.out[o + k], self.s.out[o + ty.nl + k]);
                    if pass == 0 {
                        (base[2 * l], base[2 * l + 1]) = (phi, phi_t);
                    }
                    let moved = (phi - base[2 * l]).abs() > 1e-12 * (1.0 + base[2 * l].abs());
                    rheo[l] |= moved || phi_t != 0.0;
                }
            }
        }
        rheo
    }

    /// A removed row that is time-dependent, or that depends on a time-dependent row,
    /// is a conflict: an error naming the drivers and the joints, before the first step.
    fn check_rheonomic(
        &mut self,
        rows: &[Vec<(usize, f64)>],
        removed: &[usize],
    ) -> Result<(), RuntimeError> {
        let rheo = self.rheonomic_rows();
        if !rheo.iter().any(|&r| r) {
            return Ok(());
        }
        let comp = redundant::components(self.nv, rows);
        for &r in removed {
            if !(0..self.nl).any(|l| rheo[l] && comp[l] == comp[r]) {
                continue;
            }
            let mut set = redundant::dependence(self.nv, rows, removed, &comp, r);
            set.push(r);
            if !set.iter().any(|&l| rheo[l]) {
                continue;
            }
            let owner = |l: usize| {
                self.inst
                    .iter()
                    .find(|e| e.lambda_map.contains(&l))
                    .map_or_else(String::new, |e| e.name.clone())
            };
            let (mut drivers, mut joints) = (Vec::new(), Vec::new());
            for &l in &set {
                let name = owner(l);
                let list = if rheo[l] { &mut drivers } else { &mut joints };
                if !list.contains(&name) {
                    list.push(name);
                }
            }
            joints.retain(|j| !drivers.contains(j));
            return Err(RuntimeError::ConflictingDriver {
                drivers,
                rows: set
                    .iter()
                    .map(|&l| self.labels[self.nv + l].clone())
                    .collect(),
                joints,
            });
        }
        Ok(())
    }

    /// Warnings of the last `initialize` (removed redundant constraints).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// One warning line per element with removed rows: "`jE3`: t2, r0, r1 removed — …"
    /// (the multiplier names without `.lambda`), in model order.
    fn redundant_by_element(&self) -> Vec<String> {
        let types = &self.table.types;
        let mut lines = Vec::new();
        for e in &self.inst {
            let names: Vec<&str> = e
                .lambda_map
                .iter()
                .enumerate()
                .filter(|&(_, &l)| self.removed[l])
                .map(|(k, _)| {
                    let m = types[e.ty].multipliers[k].as_str();
                    m.strip_suffix(".lambda").unwrap_or(m)
                })
                .collect();
            if !names.is_empty() {
                lines.push(format!(
                    "`{}`: {} removed — redundant: the Jacobian {} on the other constraints at the initial configuration; {} 0",
                    e.name,
                    names.join(", "),
                    if names.len() == 1 { "row depends" } else { "rows depend" },
                    if names.len() == 1 { "its multiplier is" } else { "their multipliers are" },
                ));
            }
        }
        lines
    }

    /// The one-line total of the removed redundant rows, if any:
    /// "redundant constraints: 3 rows of 1 element removed".
    pub fn redundant_summary(&self) -> Option<String> {
        let rows = self.redundant_removed();
        let elements = self
            .inst
            .iter()
            .filter(|e| e.lambda_map.iter().any(|&l| self.removed[l]))
            .count();
        (rows > 0).then(|| {
            format!(
                "redundant constraints: {rows} row{} of {elements} element{} removed",
                if rows == 1 { "" } else { "s" },
                if elements == 1 { "" } else { "s" }
            )
        })
    }

    /// True once the step loop switched to the optimized tier of tiered code.
    pub fn code_upgraded(&self) -> bool {
        self.table.upgraded()
    }

    /// Constraint rows removed as redundant by the last `initialize`.
    pub fn redundant_removed(&self) -> usize {
        self.removed.iter().filter(|r| **r).count()
    }

    pub(super) fn ic_solve(&mut self, c: &Coefficients) -> Result<(), RuntimeError> {
        if let Some(k) = self.icv[..self.icp.nnz()]
            .iter()
            .position(|x| !x.is_finite())
        {
            let row = self.icp.row_idx[k];
            return Err(self.ic_not_finite(self.labels[row].clone(), Role::Ic, c));
        }
        let solver = self
            .ics
            .as_mut()
            .expect("solvers exist after ensure_solvers");
        if let Err(s) = solver.factorize(&self.icv[..self.icp.nnz()]) {
            return Err(RuntimeError::Singular {
                unknown: self.labels[s.index].clone(),
                elements: self.acting_on(s.index),
            });
        }
        let solver = self
            .ics
            .as_mut()
            .expect("solvers exist after ensure_solvers");
        solver.solve(&mut self.ic_rhs);
        if let Some(i) = self.ic_rhs.iter().position(|x| !x.is_finite()) {
            return Err(self.ic_not_finite(self.labels[i].clone(), Role::Ic, c));
        }
        Ok(())
    }

    /// Initial conditions (theory §6): q₀ and v₀ from `Init`, the position check,
    /// velocity projection, consistent v̇ and λ (with the rheonomic terms of `Ic`).
    pub fn initialize(&mut self, settings: &Settings) -> Result<(), RuntimeError> {
        settings.validate().map_err(RuntimeError::BadSettings)?;
        if let Some(why) = undamped_constraints(settings, self.nl) {
            return Err(RuntimeError::BadSettings(why));
        }
        self.ensure_solvers(settings.linear);
        self.initialized = false;
        self.warnings.clear();
        // Start from the full set of constraints.
        self.removed.fill(false);
        self.apply_removed_positions();
        self.t = 0.0;
        self.h_prev = 0.0;
        self.extrapolate = [false; 2];
        self.vd.fill(0.0);
        self.lam.fill(0.0);
        let c = self.coefficients(settings, settings.step);
        self.initial_values(&c)?;

        // Assembly (when Φ(q₀) ≠ 0 and `assemble`), then the position check.
        self.assemble_positions(settings, &c)?;
        self.assemble_ic(&c);
        self.check_positions()?;

        // Redundant constraints (e.g. a planar loop of 3-D joints): integrate on an
        // independent set.
        let redundant = self.find_redundant()?;
        if !redundant.is_empty() {
            if settings.strict {
                return Err(RuntimeError::RedundantConstraints { rows: redundant });
            }
            let lines = self.redundant_by_element();
            self.warnings.extend(lines);
            self.assemble_ic(&c);
        }
        let held = self.held(&settings.given)?;
        let projected =
            self.project_velocities(&c, held.velocities().then_some(&held.velocity[..]));
        if let (Err(RuntimeError::VelocityProjection { .. }), true) =
            (&projected, held.velocities())
        {
            if let Some(e) = self.contradicted(&held) {
                return Err(e);
            }
        }
        projected?;

        // Consistent accelerations and multipliers.
        self.assemble_ic(&c);
        self.ic_solve(&c)?;
        self.vd.copy_from_slice(&self.ic_rhs[..self.nv]);
        self.lam.copy_from_slice(&self.ic_rhs[self.nv..]);
        self.acc.copy_from_slice(&self.vd);
        self.start_history(settings, &c)?;
        self.initialized = true;
        Ok(())
    }

    /// q₀ and v₀ from the bodies' `Init` roles.
    fn initial_values(&mut self, c: &Coefficients) -> Result<(), RuntimeError> {
        {
            let w = View {
                q: &self.q,
                v: &self.v,
                vd: &self.vd,
                lam: &self.lam,
                delta: &self.zeros_v,
                t: 0.0,
            };
            let types = &self.table.types;
            for e in &self.inst {
                if !types[e.ty].owns_coordinates {
                    continue;
                }
                call(types, e, Role::Init, &mut self.s, &w, c);
                let nq = e.q_map.len();
                for (k, &g) in e.q_map.iter().enumerate() {
                    self.qt[g] = self.s.out[k];
                }
                for (k, &g) in e.v_map.iter().enumerate() {
                    self.vt[g] = self.s.out[nq + k];
                }
            }
        }
        self.q.copy_from_slice(&self.qt);
        self.v.copy_from_slice(&self.vt);
        if let Some(i) = self.q.iter().position(|x| !x.is_finite()) {
            return Err(self.ic_not_finite(format!("initial coordinate q[{i}]"), Role::Init, c));
        }
        if let Some(i) = self.v.iter().position(|x| !x.is_finite()) {
            return Err(self.ic_not_finite(self.labels[i].clone(), Role::Init, c));
        }
        Ok(())
    }

    /// The position check ‖Φ(q₀, 0)‖∞ ≤ [`POSITION_TOL`] row by row (after `assemble_ic`).
    fn check_positions(&self) -> Result<(), RuntimeError> {
        for e in &self.inst {
            for (k, &l) in e.lambda_map.iter().enumerate() {
                let phi = self.ic_phi[l];
                if phi.is_nan() || phi.abs() > POSITION_TOL {
                    return Err(RuntimeError::InconsistentConfiguration {
                        instance: e.name.clone(),
                        row: self.table.types[e.ty].multipliers[k].clone(),
                        residual: phi,
                    });
                }
            }
        }
        Ok(())
    }

    /// Velocity projection onto B v + Φ_t = 0: the correction of least ½ΔvᵀMΔv, zero
    /// in the velocity dofs `held` by `given` (`given.rs`).
    fn project_velocities(
        &mut self,
        c: &Coefficients,
        held: Option<&[bool]>,
    ) -> Result<(), RuntimeError> {
        let mut converged = self.nl == 0;
        for _ in 0..10 {
            let g = two_norm(&self.ic_g);
            if g <= 1e-12 * (1.0 + inf_norm(&self.v)) {
                converged = true;
                break;
            }
            self.ic_rhs[..self.nv].fill(0.0);
            for l in 0..self.nl {
                self.ic_rhs[self.nv + l] = -self.ic_g[l];
            }
            if let Some(held) = held {
                let dead = self.dead_velocity_unknowns(held);
                self.cut_ic(&dead, None);
                for (x, _) in self.ic_rhs.iter_mut().zip(&dead).filter(|(_, &d)| d) {
                    *x = 0.0;
                }
            }
            self.ic_solve(c)?;
            for i in 0..self.nv {
                self.v[i] += self.ic_rhs[i];
            }
            self.assemble_ic(c);
        }
        if !converged {
            return Err(RuntimeError::VelocityProjection {
                residual: two_norm(&self.ic_g),
            });
        }
        Ok(())
    }

    /// f₀ for the Negrut form, the scales for the error weights, the step size, the
    /// controller, the statistics and the divergence watch of a new run.
    fn start_history(&mut self, settings: &Settings, c: &Coefficients) -> Result<(), RuntimeError> {
        self.t_new = 0.0;
        self.qt.copy_from_slice(&self.q);
        self.vt.copy_from_slice(&self.v);
        self.x[..self.nv].copy_from_slice(&self.vd);
        self.x[self.nv..].copy_from_slice(&self.lam);
        self.delta.fill(0.0);
        self.residual_and_forces(c);
        if let Some(i) = self.f.iter().position(|x| !x.is_finite()) {
            return Err(self.ic_not_finite(self.labels[i].clone(), Role::Res, c));
        }
        self.f_n.copy_from_slice(&self.f);
        self.scales(false);
        self.scale_max.copy_from_slice(&self.scale_n);
        // Real time: the pivot order of the first factorization is kept.
        let real_time = matches!(settings.newton, Newton::Fixed(_)) && settings.adaptive.is_none();
        if let Some(js) = self.js.as_mut() {
            js.set_keep_pivots(real_time);
        }
        self.real_time = real_time;
        self.kept = Default::default();
        self.forget_costs();
        self.h = settings.step;
        self.ctrl = Default::default();
        self.stats = RunStats::default();
        self.step_times = Vec::new();
        self.reserve_timing(settings);
        self.monitor = diverge::Monitor::start(&self.v, &self.lam);
        Ok(())
    }
}

/// The least HHT damping with which a constrained model runs, fixed step or
/// `adaptive` (measured: a chain of 4 pendulums at α = −0.005 stays bounded over 100 s
/// with `adaptive`, and a 90° pendulum and a four-bar at h = 1 ms with fixed steps;
/// at α = −0.001 and 0 the multipliers oscillate from step to step and grow, fixed
/// steps end "diverged" after seconds, `adaptive` cuts its steps without end).
pub const ALPHA_MAX_CONSTRAINED: f64 = -0.005;

/// The least damping `rho_inf` runs a constrained model with, fixed step or not
/// (measured: a 90° pendulum at h = 10 ms stays bounded over 100 s at ρ∞ = 0.95; at
/// ρ∞ = 0.99, as at HHT α = −0.005 (ρ∞ = 0.990), its rod force alternates and grows
/// until the run diverges at 6.5 s, 9.0 s; `tests/generalized_alpha.rs`).
pub const RHO_INF_MAX: f64 = 0.95;

/// Constraints with (almost) no numerical damping are refused before the first step,
/// fixed step or `adaptive`: the index-3 multipliers' parasitic oscillation is then
/// undamped and grows (issue 13: a pendulum's rod force at 2e6 N and a wrong
/// "singular matrix" at 8.9 s with fixed steps; millions of ever smaller steps with
/// `adaptive`). The legacy step control (the legacy profile) keeps the legacy solver's
/// behaviour for HHT α: such a run starts, and the divergence watcher ends it.
fn undamped_constraints(settings: &Settings, nl: usize) -> Option<String> {
    if nl == 0 {
        return None;
    }
    let why = "without numerical damping the index-3 multipliers oscillate from step to \
               step and grow";
    match settings.rho_inf {
        Some(rho) if rho > RHO_INF_MAX => Some(format!(
            "rho_inf {rho} with constraints: {why}; use rho_inf <= {RHO_INF_MAX}"
        )),
        Some(_) => None,
        None if settings.control == StepControl::Legacy && settings.adaptive.is_none() => None,
        None => (settings.alpha > ALPHA_MAX_CONSTRAINED).then(|| {
            format!(
                "HHT alpha {} with constraints: {why} (a fixed-step run diverges, the step \
                 control cannot follow them); use alpha <= {ALPHA_MAX_CONSTRAINED} (the \
                 default is {})",
                settings.alpha,
                Settings::default().alpha
            )
        }),
    }
}
