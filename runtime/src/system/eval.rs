//! Element calls and global assembly: residual, iteration matrix, initial-condition
//! blocks, configuration update, scales, the integrator coefficients and weights.

use super::*;
use crate::table::{RoleFn, Slot};

/// The integrator coefficients an element function receives as `c`, in ABI order
/// c = [α′, β′, γ′, h]: the residual weighs f_n by α′ (the Negrut form), and the
/// iteration matrix and the configuration update take Δ = Δ_pred + β′h² v̇ and
/// v = v_pred + γ′h v̇ (theory §7.4).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Coefficients {
    pub alpha: f64,
    pub beta: f64,
    pub gamma: f64,
    pub h: f64,
}

impl Coefficients {
    /// Coefficients for roles that do not depend on a step (outputs, scales, the
    /// Jacobians of a linearization): the trapezoidal Newmark values.
    pub(super) const fn at_rest(h: f64) -> Coefficients {
        Coefficients {
            alpha: 0.0,
            beta: 0.25,
            gamma: 0.5,
            h,
        }
    }
    /// The array the element functions read.
    pub(super) fn abi(&self) -> [f64; 4] {
        [self.alpha, self.beta, self.gamma, self.h]
    }
    /// ∂Δ/∂v̇ = β′h².
    pub(super) fn bh2(&self) -> f64 {
        self.beta * self.h * self.h
    }
    /// ∂v/∂v̇ = γ′h.
    pub(super) fn gh(&self) -> f64 {
        self.gamma * self.h
    }
}

/// Calls `role` of `e` on the gathered local arrays; the output is in `s.out`.
/// Returns false if the element type has no such role.
pub(super) fn call(
    types: &[ElementType],
    e: &Inst,
    role: Role,
    s: &mut Scratch,
    w: &View,
    c: &Coefficients,
) -> bool {
    let Some(rf) = types[e.ty].role(role) else {
        return false;
    };
    // Only the arrays the function reads (a joint's residual needs neither v nor v̇
    // nor Δ): the gathers cost about as much as a small element's arithmetic. A map
    // that is one run of global indices is read in place: no gather at all.
    let input =
        |local: &mut [f64], (map, start): (&[usize], Option<usize>), global: &[f64], slot: Slot| {
            if !rf.reads.has(slot) {
                return local.as_ptr();
            }
            if let Some(start) = start {
                return global[start..start + map.len()].as_ptr();
            }
            for (x, &g) in local.iter_mut().zip(map) {
                *x = global[g];
            }
            local.as_ptr()
        };
    let v_map = (&e.v_map[..], e.v_start);
    let q = input(&mut s.q, (&e.q_map, e.q_start), w.q, Slot::Q);
    let v = input(&mut s.v, v_map, w.v, Slot::V);
    let vd = input(&mut s.vd, v_map, w.vd, Slot::Vdot);
    let d = input(&mut s.d, v_map, w.delta, Slot::Delta);
    let l = input(
        &mut s.l,
        (&e.lambda_map, e.lambda_start),
        w.lam,
        Slot::Lambda,
    );
    let t = w.t;
    let c = c.abi();
    // SAFETY: System::new checked that every array is at least as long as the sizes
    // the element type declares (a map read in place is a slice of the global array
    // as long as the map) and that `out` holds the role's output; the function writes
    // only `out`.
    unsafe {
        (rf.func)(
            q,
            v,
            vd,
            l,
            e.params.as_ptr(),
            c.as_ptr(),
            d,
            &t,
            s.out.as_mut_ptr(),
        );
    }
    true
}

/// The first index of `map` if its indices are consecutive (`[s, s + 1, …]`), else
/// `None` (also for an empty map, which has nothing to read).
pub(super) fn contiguous(map: &[usize]) -> Option<usize> {
    let &start = map.first()?;
    let consecutive = map.iter().enumerate().all(|(k, &g)| g == start + k);
    consecutive.then_some(start)
}

/// The configuration q ∘ exp(Δ) of every body through its `Update` role at the
/// inputs `w` (its q is the configuration moved from), into `q_out`: the one home of
/// the configuration update, for Newton's trial state, the initial assembly and the
/// rows between steps.
pub(super) fn update_bodies(
    types: &[ElementType],
    inst: &[Inst],
    s: &mut Scratch,
    w: &View,
    c: &Coefficients,
    q_out: &mut [f64],
) {
    for e in inst {
        if !types[e.ty].owns_coordinates {
            continue;
        }
        call(types, e, Role::Update, s, w, c);
        let nq = e.q_map.len();
        match e.q_start {
            Some(start) => q_out[start..start + nq].copy_from_slice(&s.out[..nq]),
            None => {
                for (k, &g) in e.q_map.iter().enumerate() {
                    q_out[g] = s.out[k];
                }
            }
        }
    }
}

/// The matrix role of `e` (`IterNoqv` with `noqv` where the type has it) and the
/// positions of its entries in the matrix values (`System::iter_entries` and
/// `noqv_entries`).
fn matrix_role<'a>(
    ty: &ElementType,
    e: &Inst,
    noqv: bool,
    (iter, noqv_entries): (&'a MatrixEntries, &'a MatrixEntries),
) -> (Role, &'a [usize]) {
    if noqv && ty.role(Role::IterNoqv).is_some() {
        (Role::IterNoqv, noqv_entries.of(e.noqv_at.clone()))
    } else {
        (Role::Iter, iter.of(e.iter_at.clone()))
    }
}

/// Adds an instance's matrix entries (`out`, in its role's order) into `jv`.
fn add_matrix(jv: &mut [f64], positions: &[usize], out: &[f64]) {
    for (&pos, &a) in positions.iter().zip(out) {
        jv[pos] += a;
    }
}

/// Adds an instance's `Res` output [r (nv + nl); f (nv)] into the global r and, when
/// given, f.
fn add_residual(r: &mut [f64], f: Option<&mut [f64]>, e: &Inst, ty: &ElementType, out: &[f64]) {
    let n = ty.nv + ty.nl;
    add_at(r, (&e.x_map, e.x_start), &out[..n]);
    if let Some(f) = f {
        add_at(f, (&e.v_map, e.v_start), &out[n..n + ty.nv]);
    }
}

/// `global[map[k]] += local[k]`; a slice addition where the map is one run.
fn add_at(global: &mut [f64], (map, start): (&[usize], Option<usize>), local: &[f64]) {
    match start {
        Some(start) => {
            for (x, &a) in global[start..start + map.len()].iter_mut().zip(local) {
                *x += a;
            }
        }
        None => {
            for (&g, &a) in map.iter().zip(local) {
                global[g] += a;
            }
        }
    }
}

/// What a role computes, for messages.
pub(super) fn role_label(role: Role) -> &'static str {
    match role {
        Role::Res => "residual",
        Role::ResIter => "residual and iteration matrix",
        Role::Iter | Role::IterNoqv => "iteration matrix",
        Role::Ic => "initial conditions",
        Role::Init => "initial values",
        Role::Update => "configuration update",
        Role::Scale => "scale",
        Role::Out => "output",
        Role::Post => "state update",
    }
}

impl System {
    /// Evaluates `Ic` of every element at the accepted state: fills the IC matrix,
    /// [Q−h; acceleration rhs] into `ic_rhs`, Φ into `ic_phi`, B v + Φ_t into `ic_g`.
    pub(super) fn assemble_ic(&mut self, c: &Coefficients) {
        self.icv.fill(0.0);
        self.ic_rhs.fill(0.0);
        self.ic_phi.fill(0.0);
        self.ic_g.fill(0.0);
        self.ic_acc.fill(0.0);
        self.roads.feed(&mut self.inst, &self.q);
        let nv = self.nv;
        let w = accepted_view!(self);
        let types = &self.table.types;
        for e in &self.inst {
            let ty = &types[e.ty];
            call(types, e, Role::Ic, &mut self.s, &w, c);
            let out = &self.s.out;
            let nm = e.ic_m_pos.len();
            let nb = e.ic_b_pos.len();
            for (k, &pos) in e.ic_m_pos.iter().enumerate() {
                self.icv[pos] += out[k];
            }
            let b_entries = sparse_entries(ty, Role::Ic, 1);
            for k in 0..nb {
                let val = out[nm + k];
                self.icv[e.ic_b_pos[k]] += val;
                self.icv[e.ic_bt_pos[k]] += val;
                let (r, cc) = b_entries[k];
                self.ic_g[e.lambda_map[r as usize]] += val * self.v[e.v_map[cc as usize]];
            }
            let mut o = nm + nb;
            for k in 0..ty.nv {
                self.ic_rhs[e.v_map[k]] += out[o + k];
            }
            o += ty.nv;
            for k in 0..ty.nl {
                let l = e.lambda_map[k];
                self.ic_phi[l] += out[o + k];
                self.ic_g[l] += out[o + ty.nl + k];
                self.ic_acc[l] += out[o + 2 * ty.nl + k];
                self.ic_rhs[nv + l] += out[o + 2 * ty.nl + k];
            }
        }
        self.apply_removed_ic();
    }

    /// Element scales at the accepted (`trial == false`) or trial configuration.
    pub(super) fn scales(&mut self, trial: bool) {
        let c = Coefficients::at_rest(1.0);
        let w = View {
            q: if trial { &self.qt } else { &self.q },
            v: &self.v,
            vd: &self.vd,
            lam: &self.lam,
            delta: &self.zeros_v,
            t: self.t,
        };
        let dst = if trial {
            &mut self.scale_t
        } else {
            &mut self.scale_n
        };
        dst.fill(0.0);
        let types = &self.table.types;
        for e in &self.inst {
            if !types[e.ty].owns_coordinates {
                continue;
            }
            if call(types, e, Role::Scale, &mut self.s, &w, &c) {
                for (k, &g) in e.v_map.iter().enumerate() {
                    dst[g] = self.s.out[k].abs();
                }
            }
        }
    }

    /// The trial state from x: v̇, v, Δ, q = q_n ∘ exp(Δ) through `Update`.
    pub(super) fn trial_state(&mut self, c: &Coefficients) {
        self.matrix_at = None;
        let (bh2, gh) = (c.bh2(), c.gh());
        for i in 0..self.nv {
            let vd = self.x[i];
            self.vt[i] = self.v_pred[i] + gh * vd;
            self.delta[i] = self.delta_pred[i] + bh2 * vd;
        }
        let w = trial_view!(self, &self.q);
        update_bodies(
            &self.table.types,
            &self.inst,
            &mut self.s,
            &w,
            c,
            &mut self.qt,
        );
    }

    /// R at the trial state, and f where the Negrut form needs it (`alpha_negrut` ≠ 0:
    /// it subtracts α/(1+α) f_n, and f becomes the next step's f_n).
    pub(super) fn residual(&mut self, c: &Coefficients, alpha_negrut: f64) {
        self.residual_and_matrix(c, alpha_negrut, None);
    }

    /// R (with α_negrut = 0) and f at the trial state, whatever the form (f₀ of a run).
    pub(super) fn residual_and_forces(&mut self, c: &Coefficients) {
        self.evaluate(c, 0.0, None, true);
    }

    /// [`System::residual`], and with `matrix = Some(noqv)` (and the fused roles on)
    /// the iteration matrix of [`System::assemble_iter`] at the same state too: one
    /// `ResIter` call per instance whose matrix is its `Iter` gives both (they share
    /// most of their operations), `Res` and the matrix role otherwise. The values are
    /// those of the separate roles bit for bit (the same nodes, `fdc-abi`), so the next
    /// `assemble_iter` at this state and `c` takes the matrix as it is.
    pub(super) fn residual_and_matrix(
        &mut self,
        c: &Coefficients,
        alpha_negrut: f64,
        matrix: Option<bool>,
    ) {
        self.evaluate(c, alpha_negrut, matrix, alpha_negrut != 0.0);
    }

    /// [`System::residual_and_matrix`]; f (the second part of every `Res` output) is
    /// summed only `with_forces`: the Arnold–Brüls form never reads it, and its scatter
    /// is about half of every residual's (a body's 6 of 12 outputs).
    fn evaluate(
        &mut self,
        c: &Coefficients,
        alpha_negrut: f64,
        matrix: Option<bool>,
        with_forces: bool,
    ) {
        let matrix = matrix.filter(|_| self.fused);
        self.r.fill(0.0);
        let mut f = with_forces.then_some(&mut self.f[..]);
        if let Some(f) = f.as_deref_mut() {
            f.fill(0.0);
        }
        if matrix.is_some() {
            self.jv.fill(0.0);
        }
        self.roads.feed(&mut self.inst, &self.qt);
        let w = trial_view!(self, &self.qt);
        let types = &self.table.types;
        for e in &self.inst {
            let ty = &types[e.ty];
            let Some(noqv) = matrix else {
                call(types, e, Role::Res, &mut self.s, &w, c);
                add_residual(&mut self.r, f.as_deref_mut(), e, ty, &self.s.out);
                continue;
            };
            let (role, positions) =
                matrix_role(ty, e, noqv, (&self.iter_entries, &self.noqv_entries));
            if role == Role::Iter && call(types, e, Role::ResIter, &mut self.s, &w, c) {
                // check_fused: the matrix blocks, then the residual's.
                let n_iter = ty.role(Role::Iter).map_or(0, RoleFn::output_len);
                let (m, res) = self.s.out.split_at(n_iter);
                add_matrix(&mut self.jv, positions, m);
                add_residual(&mut self.r, f.as_deref_mut(), e, ty, res);
            } else {
                call(types, e, Role::Res, &mut self.s, &w, c);
                add_residual(&mut self.r, f.as_deref_mut(), e, ty, &self.s.out);
                call(types, e, role, &mut self.s, &w, c);
                add_matrix(&mut self.jv, positions, &self.s.out);
            }
        }
        self.finish_residual(alpha_negrut);
        if let Some(noqv) = matrix {
            self.finish_matrix();
            self.matrix_at = Some((c.abi(), noqv));
            self.fused_passes += 1;
        }
    }

    /// The rows of removed constraints, the Negrut term and the count of a residual.
    fn finish_residual(&mut self, alpha_negrut: f64) {
        let nv = self.nv;
        for l in 0..self.nl {
            if self.removed[l] {
                self.r[nv + l] = self.x[nv + l];
            }
        }
        if alpha_negrut != 0.0 {
            let k = alpha_negrut / (1.0 + alpha_negrut);
            for i in 0..nv {
                self.r[i] -= k * self.f_n[i];
            }
        }
        self.stats.residual_evaluations += 1;
    }

    /// The iteration matrix at the trial state; `noqv` takes `IterNoqv` where a type
    /// has it (the legacy option without the derivatives of the gyroscopic terms).
    /// Nothing to evaluate when the fused pass left this matrix at this state.
    pub(super) fn assemble_iter(&mut self, c: &Coefficients, noqv: bool) {
        if self.matrix_at.take() == Some((c.abi(), noqv)) {
            return;
        }
        self.jv.fill(0.0);
        self.roads.feed(&mut self.inst, &self.qt);
        let w = trial_view!(self, &self.qt);
        let types = &self.table.types;
        for e in &self.inst {
            let (role, positions) = matrix_role(
                &types[e.ty],
                e,
                noqv,
                (&self.iter_entries, &self.noqv_entries),
            );
            call(types, e, role, &mut self.s, &w, c);
            add_matrix(&mut self.jv, positions, &self.s.out);
        }
        self.finish_matrix();
    }

    /// The unit diagonal of removed constraint rows.
    fn finish_matrix(&mut self) {
        for l in 0..self.nl {
            if self.removed[l] {
                let d = self
                    .jp
                    .position(self.nv + l, self.nv + l)
                    .expect("diagonal is in the pattern");
                self.jv[d] = 1.0;
            }
        }
    }

    /// Arnold–Brüls (0, κβ, κγ, h) with κ = ∂a_{n+1}/∂v̇_{n+1} (1 + α for HHT),
    /// Negrut (α, β, γ, h).
    pub(super) fn coefficients(&self, settings: &Settings, h: f64) -> Coefficients {
        let s = settings.scheme();
        match settings.form {
            Form::ArnoldBruls => Coefficients {
                alpha: 0.0,
                beta: s.kappa() * s.beta,
                gamma: s.kappa() * s.gamma,
                h,
            },
            Form::Negrut => Coefficients {
                alpha: settings.alpha,
                beta: s.beta,
                gamma: s.gamma,
                h,
            },
        }
    }

    /// Weights of the legacy Newton norm and the error estimate.
    pub(super) fn weights(&mut self, settings: &Settings, with_trial: bool) {
        for i in 0..self.nv {
            self.w[i] = match settings.weights {
                ErrorWeights::Mixed => {
                    let st = if with_trial { self.scale_t[i] } else { 0.0 };
                    1.0 + self.scale_n[i].max(st)
                }
                ErrorWeights::Legacy => {
                    let st = if with_trial { self.scale_t[i] } else { 0.0 };
                    self.scale_max[i].max(st).max(1.0)
                }
            };
        }
    }
}

#[cfg(test)]
mod tests {
    /// A map is read in place only where its indices run consecutively upwards.
    #[test]
    fn only_a_consecutive_run_is_contiguous() {
        assert_eq!(super::contiguous(&[3, 4, 5, 6]), Some(3));
        assert_eq!(super::contiguous(&[7]), Some(7));
        assert_eq!(super::contiguous(&[]), None);
        assert_eq!(super::contiguous(&[3, 5, 6]), None);
        assert_eq!(super::contiguous(&[4, 3]), None);
        assert_eq!(super::contiguous(&[3, 4, 3]), None);
    }
}
