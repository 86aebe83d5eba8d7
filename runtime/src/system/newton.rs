//! One attempt of a step (theory §7.4–§7.5): predict from the accepted state, correct
//! with Newton, test convergence, estimate the local error.

use super::kept::Kept;
use super::*;

/// The Newton iteration of one step: the matrix policy and the norms its tests compare.
struct Iteration {
    max_iter: usize,
    /// Assemble and factorize a new iteration matrix for the next correction.
    new_matrix: bool,
    /// Modified Newton: the matrix of the first correction serves the next ones while
    /// they contract fast (the state moves by no more than the first correction within
    /// a step, so the matrix hardly changes).
    keep: bool,
    /// The matrix in use was factorized in an earlier step (`Settings::matrix_steps`).
    stale: bool,
    /// Constraint residuals (× β′h²) below this are round-off: ε_machine (1 + ‖q‖∞).
    phi_floor: f64,
    /// Velocity criterion: the last two ‖Δv̇‖∞ (growing twice in a row = divergence).
    dvd_1: f64,
    dvd_2: f64,
    /// The last ‖Δλ‖∞ (the multipliers' rate on a kept matrix).
    dl_1: f64,
    /// v̇ has met the velocity criterion (on a kept matrix: its estimated remaining
    /// error too); later corrections serve the multipliers.
    v_settled: bool,
    /// On a kept matrix: how far λ moves (∞-norm) when the constraint rows are at
    /// their round-off floor ([`System::roundoff_reach`]).
    lambda_reach: f64,
    /// On a kept matrix: the largest rate θ the contraction rule saw in this step
    /// (from the second correction on), for [`Kept::rate`].
    kept_rate: f64,
    /// Legacy criterion: the last weighted correction norm, the residual norms of the
    /// predictor (dynamic rows, constraint rows × β′h²) and Negrut's ψ.
    prev_norm: f64,
    pred_dyn: f64,
    pred_con: f64,
    psi: f64,
}

/// The multipliers' test on a kept matrix ([`System::multiplier_test`]).
struct Multipliers {
    settled: bool,
    rate: f64,
    /// The estimated remaining error and what it may be.
    error: f64,
    target: f64,
}

/// The share of the velocity criterion's tolerance that the estimated remaining error
/// of v̇ and of λ may reach on a matrix of an earlier step. A new matrix converges
/// quadratically: when its last correction meets the tolerance the error left is far
/// below it (on the chain of 16 at 1e-10, a few 1e-4 of it on average). A kept one
/// contracts linearly and leaves θ/(1 − θ) of its last correction, so it goes on until
/// that estimate is this share of the tolerance (docs/runtime.md "Modified Newton":
/// with the last correction against the whole tolerance, the old test, the chain of
/// 16 at 1e-5 erred 1.46× the per-step run against a fine-step reference, the
/// multipliers 35×; with 0.01 1.0001× and 1.00×).
const KEPT_ERROR_SHARE: f64 = 0.01;

/// The share of [`System::roundoff_reach`] below which the multipliers' remaining
/// error is not asked to go on a kept matrix: the reach puts every constraint row at
/// the floor with one sign, while the rows' round-off is of both signs and mostly far
/// below it. Measured on the chain of 16 at 1e-10: with the whole reach its states
/// ended 7.9e-10 from the converged run, with 0.01 1.2e-10 (4.7e-11 with a new matrix
/// per step); without the floor 0.01 of λ's tolerance is below the multipliers'
/// round-off there and half the steps replaced their kept matrix.
const REACH_SHARE: f64 = 0.01;

/// The constraint rows' round-off floor on a kept matrix, as a share of a new matrix's
/// ([`System::correct`] leaves rows below it alone). After a correction with an exact
/// matrix the rows are at their round-off, far below the floor; a kept matrix reduces
/// them linearly and they stop anywhere below it, which moves v̇ by up to the floor
/// over β′h² in every step (measured on the chain of 16 at 1e-10 against a run
/// converged to 1e-13: states 3.6e-10 with the floor, 1.2e-10 with 0.3 of it, 4.7e-11
/// with a new matrix per step; 0.1 refreshes the matrix more often for no gain).
const KEPT_FLOOR_SHARE: f64 = 0.3;

/// Modified Newton's estimate of the distance left to the solution after a correction
/// of norm `d` that shrank by θ = d/d_prev against the one before on the same matrix:
/// θ/(1 − θ) d (Hairer and Wanner, Solving ODE II, IV.8). Infinite where the rate is
/// not known yet (`d_prev` infinite: the first correction) or the iteration does not
/// contract.
fn remaining(d: f64, d_prev: f64) -> f64 {
    if d == 0.0 {
        return 0.0;
    }
    let theta = d / d_prev;
    if !d_prev.is_finite() || theta.is_nan() || theta >= 1.0 {
        return f64::INFINITY;
    }
    theta / (1.0 - theta) * d
}

/// What a convergence test concluded after a correction.
enum Verdict {
    Converged,
    Continue,
    Reject(String),
}

/// α of the f_n term of the residual (the Negrut form; 0 in the Arnold–Brüls form).
fn alpha_negrut(settings: &Settings) -> f64 {
    match settings.form {
        Form::ArnoldBruls => 0.0,
        Form::Negrut => settings.alpha,
    }
}

/// How the Newmark history enters a step: a_{n+1} = κ v̇_{n+1} + p_n with
/// p_n = (α_f v̇_n − α_m a_n)/(1 − α_m) in the Arnold–Brüls form; the Negrut form runs
/// Newmark on v̇ itself (κ = 1, p = 0). Returns (κ, α_m, α_f).
pub(super) fn pseudo(settings: &Settings) -> (f64, f64, f64) {
    match settings.form {
        Form::ArnoldBruls => {
            let s = settings.scheme();
            (s.kappa(), s.alpha_m, s.alpha_f)
        }
        Form::Negrut => (1.0, 0.0, 0.0),
    }
}

/// The legacy solver's error constant β − 1/(6(1+α)) (theory §8).
fn error_constant(settings: &Settings) -> f64 {
    settings.beta_gamma().0 - 1.0 / (6.0 * (1.0 + settings.alpha))
}

/// Position errors below this many ε_machine (1 + scale) are round-off. The estimate
/// C h² (a_{n+1} − a_n) carries the round-off of the index-3 accelerations, ε|q|/(β′h²),
/// times C h², i.e. about (C/β) ε|q| ≈ ε|q|/3: 4 ε leaves a margin of 12. (It was 64 ε,
/// which is above the allowed error per step tol^(3/2)(1 + s) for tol < 6e-10, so
/// `adaptive` 1e-10 took the steps of 6e-10: 84 tol on the heavy top, 14 tol at 1e-9.)
const ROUNDOFF: f64 = 4.0 * f64::EPSILON;

/// The local error constant C of the positions, e = C h³ q⃛ + O(h⁴): with a_n ≈
/// q̈(t_n + δh), δ = α_m − α_f, Δ = h v_n + h²((½ − β) a_n + β a_{n+1}) = h v_n +
/// h²q̈/2 + (β + δ/2) h³ q⃛, so C = β + δ/2 − 1/6 (= 1/12 + δ²/4 for β = (1 − δ)²/4,
/// HHT's and Chung–Hulbert's); docs/runtime.md.
fn local_error_constant(settings: &Settings) -> f64 {
    let s = settings.scheme();
    s.beta + 0.5 * s.delta() - 1.0 / 6.0
}

/// The local error constant of the velocities, e_v = C_v h³ q⁗ + O(h⁴): with a_n ≈
/// q̈(t_n + δh) + c h² q⁗, c = −δ(1 + δ − 2α_m)/2 (the second order of the
/// recurrence), v_n + h((1 − γ) a_n + γ a_{n+1}) errs by (1/12 − δ²/2 + c) h³ q⁗
/// (1/12 − α/2 − α² for HHT, 1/12 for the trapezoidal rule); docs/runtime.md.
fn velocity_error_constant(settings: &Settings) -> f64 {
    let s = settings.scheme();
    let d = s.delta();
    let c = -0.5 * d * (1.0 + d - 2.0 * s.alpha_m);
    1.0 / 12.0 - 0.5 * d * d + c
}

/// The tightest rtol with the velocity term of the estimate. Its q⁗ is a second
/// difference of v̇, whose round-off grows as h shrinks (∝ ε/h against an allowed error
/// ∝ rtol^(3/2)); with it at rtol = 1e-10 the pendulum took 2,375 rejections and the
/// N-four-bar cut its steps until its multipliers blew up, and at 1e-9 the N-four-bar
/// (6.2e-9) was already more accurate than any run at 1e-10 (9.1e-9), so the
/// error would stop falling with the tolerance. Below it the position estimate alone is
/// used (docs/runtime.md).
const VELOCITY_TERM_MIN_RTOL: f64 = 1e-8;

/// How far below the error allowed per step, rtol^(3/2), the velocity criterion's
/// tolerance goes with `adaptive`: Newton's remaining error must not be what limits
/// the accuracy (measured on the N-four-bar at rtol = 1e-10: 1463·rtol with the
/// default 1e-10, 17.7·rtol with 1e-13, proportional as at the looser tolerances).
const NEWTON_PER_STEP: f64 = 100.0;

/// The velocity criterion's tolerance of a step: `tol`, and with the smooth step
/// control at most [`NEWTON_PER_STEP`] · rtol^(3/2) (the default 1e-10 down to rtol =
/// 1e-8), never below the round-off of the velocities (64 ε).
fn velocity_tol(settings: &Settings, tol: f64) -> f64 {
    match settings.adaptive {
        Some(rtol) if settings.control == StepControl::Smooth => {
            tol.min((NEWTON_PER_STEP * rtol.powf(1.5)).max(64.0 * f64::EPSILON))
        }
        _ => tol,
    }
}

impl System {
    /// One attempt of a step of size h from the accepted state: predict → correct →
    /// converge → estimate. Errors end the run; a rejection halves the step. After a
    /// rejection (or an error) the next attempt factorizes a new matrix.
    pub(super) fn try_step(
        &mut self,
        settings: &Settings,
        h: f64,
        iters: &mut usize,
        corr: &mut f64,
    ) -> Result<Outcome, SimErrorKind> {
        let (iters_0, facts_0) = (*iters, self.stats.factorizations);
        let (mut kept_age, mut fresh_from) = (0, 0);
        let outcome = self.attempt(settings, h, iters, corr, &mut kept_age, &mut fresh_from);
        if !matches!(outcome, Ok(Outcome::Accepted { .. })) {
            self.kept.valid = false;
        } else if settings.matrix_rule == MatrixRule::Cost && settings.matrix_steps_limit() > 1 {
            let costs = self.matrix_costs(settings.iter_noqv);
            let facts = (self.stats.factorizations - facts_0) as u64;
            let corrections = (*iters - iters_0) as u64;
            let on_new_matrix = u64::from(facts > 0) * (*iters + 1 - fresh_from) as u64;
            (self.kept.ledger).book(&costs, facts, corrections, on_new_matrix, kept_age);
        }
        outcome
    }

    /// [`System::try_step`] without the kept matrix's bookkeeping; `kept_age`: the age of
    /// the matrix it started on (0: new); `fresh_from`: `iters` at the last new matrix.
    fn attempt(
        &mut self,
        settings: &Settings,
        h: f64,
        iters: &mut usize,
        corr: &mut f64,
        kept_age: &mut usize,
        fresh_from: &mut usize,
    ) -> Result<Outcome, SimErrorKind> {
        let c = self.coefficients(settings, h);
        // Across steps (modified Newton): the last step's matrix starts this one when
        // it was made for the same coefficients; the contraction rule of `converge`
        // replaces it when it no longer contracts fast. Decided before the prediction:
        // a new matrix is then made at the predicted state, with its residual.
        let keep = settings.keep_matrix && !matches!(settings.newton, Newton::Legacy);
        let kept = keep && self.kept.serves(settings, &c) && self.cost_rule_keeps(settings);
        self.predict(settings, &c, (!kept).then_some(settings.iter_noqv))?;
        let mut it = self.iteration(settings, &c);
        if kept {
            it.new_matrix = false;
            it.stale = true;
            self.kept.age += 1;
            *kept_age = self.kept.age;
            let reach = match self.kept.reach {
                Some(r) => r,
                None => self.roundoff_reach(&c),
            };
            self.kept.reach = Some(reach);
            it.lambda_reach = reach * it.phi_floor;
        }
        for k in 1..=it.max_iter {
            *iters += 1;
            self.stats.newton_iterations += 1;
            let fresh = it.new_matrix;
            if fresh {
                it.stale = false;
                *fresh_from = *iters;
                if let Some(i) = self.factorize_iter(settings, &c)? {
                    // Like a Newton failure: a shorter step may pass (a mechanism near
                    // a singular position); at the minimum step the run ends.
                    let cause = format!(
                        "singular iteration matrix at {} (elements acting on it: {}) in the step to t = {}",
                        self.labels[i],
                        quoted(&self.acting_on(i)),
                        self.t_new
                    );
                    return Ok(Outcome::Rejected {
                        cause,
                        singular: Some(i),
                        err: None,
                    });
                }
            }
            it.new_matrix = !it.keep;
            let floor = if it.stale {
                KEPT_FLOOR_SHARE * it.phi_floor
            } else {
                it.phi_floor
            };
            self.correct(&c, floor)?;
            match self.converge(settings, &c, &mut it, k, fresh, corr)? {
                Verdict::Converged => {
                    if it.stale {
                        self.kept.rate = it.kept_rate;
                    }
                    return Ok(self.estimate(settings, &c));
                }
                Verdict::Continue => {}
                Verdict::Reject(cause) => {
                    return Ok(Outcome::Rejected {
                        cause,
                        singular: None,
                        err: None,
                    })
                }
            }
        }
        Ok(Outcome::Rejected {
            cause: format!(
                "Newton did not converge in {} iterations; largest residual at {}{}",
                it.max_iter,
                self.largest_residual(),
                self.largest_correction()
            ),
            singular: None,
            err: None,
        })
    }

    /// The Newmark prediction Δ_pred, v_pred from the history, the first guess of
    /// x = [v̇; λ], the trial state and its residual; with `matrix` also the iteration
    /// matrix there (`Some(noqv)`, the fused pass of `eval.rs`).
    fn predict(
        &mut self,
        settings: &Settings,
        c: &Coefficients,
        matrix: Option<bool>,
    ) -> Result<(), SimErrorKind> {
        let (beta, gamma) = settings.beta_gamma();
        let alpha_negrut = alpha_negrut(settings);
        let (nv, h) = (self.nv, c.h);
        self.t_new = self.t + h;
        self.ctrl.shift = self.history_shift(settings, h);
        let pseudo = pseudo(settings);
        for i in 0..nv {
            let a = self.history(i);
            let p = self.history_part(pseudo, i);
            self.delta_pred[i] = h * self.v[i] + h * h * ((0.5 - beta) * a + beta * p);
            self.v_pred[i] = self.v[i] + h * ((1.0 - gamma) * a + gamma * p);
        }
        let legacy = matches!(settings.newton, Newton::Legacy);
        self.x[..nv].copy_from_slice(&self.vd);
        self.x[nv..].copy_from_slice(&self.lam);
        if settings.predictor == Predictor::Linear && !legacy && self.same_step(h) {
            for (part, range) in [0..nv, nv..nv + self.nl].into_iter().enumerate() {
                if self.extrapolate[part] {
                    for i in range {
                        self.x[i] += self.x[i] - self.x_prev[i];
                    }
                }
            }
        }
        self.trial_state(c);
        self.residual_and_matrix(c, alpha_negrut, matrix);
        if let Some(u) = self.first_non_finite(&self.r) {
            return Err(self.trial_not_finite(u, Role::Res, c, false));
        }
        Ok(())
    }

    /// The iteration's starting norms (the predictor's residual for the legacy test).
    fn iteration(&mut self, settings: &Settings, c: &Coefficients) -> Iteration {
        let legacy = matches!(settings.newton, Newton::Legacy);
        let nv = self.nv;
        let tol_err = settings.adaptive.unwrap_or(LEGACY_DEFAULT_EPS);
        let cn = error_constant(settings);
        let (pred_dyn, pred_con) = if legacy {
            self.weights(settings, false);
            (two_norm(&self.r[..nv]), two_norm(&self.r[nv..]) * c.bh2())
        } else {
            (0.0, 0.0)
        };
        Iteration {
            max_iter: match settings.newton {
                Newton::Fixed(n) => n,
                _ => settings.max_newton_iterations,
            },
            new_matrix: true,
            keep: settings.keep_matrix && !legacy,
            stale: false,
            phi_floor: f64::EPSILON * (1.0 + inf_norm(&self.q)),
            dvd_1: f64::INFINITY,
            dvd_2: f64::INFINITY,
            dl_1: f64::INFINITY,
            v_settled: false,
            lambda_reach: 0.0,
            kept_rate: 0.0,
            prev_norm: f64::INFINITY,
            pred_dyn,
            pred_con,
            psi: nv as f64 * tol_err * tol_err / (cn * cn),
        }
    }

    /// With [`MatrixRule::Cost`]: whether the counted costs say the kept matrix (which
    /// serves) should start the step (`system/matrix_cost.rs`); true with `Age`.
    fn cost_rule_keeps(&mut self, settings: &Settings) -> bool {
        let too_slow = self.kept.next_rate() > KEEP_MATRIX_RATE;
        settings.matrix_rule == MatrixRule::Age || self.kept.ledger.keep(self.kept.age, too_slow)
    }

    /// Assembles and factorizes the iteration matrix at the trial state; a singular
    /// matrix gives the unknown of its dependent column.
    fn factorize_iter(
        &mut self,
        settings: &Settings,
        c: &Coefficients,
    ) -> Result<Option<usize>, SimErrorKind> {
        self.assemble_iter(c, settings.iter_noqv);
        // One pass over the values for the finiteness check and the LU's pivot
        // reference (`linear/scan.rs`).
        let values = &self.jv[..self.jp.nnz()];
        let scan = crate::linear::scan(values);
        if !scan.finite {
            let pos = culprit::position_non_finite(values).unwrap_or(0);
            let u = self.labels[self.jp_col_of(pos)].clone();
            return Err(self.trial_not_finite(u, Role::Iter, c, settings.iter_noqv));
        }
        let solver = self.js.as_mut().expect("solvers exist after initialize");
        self.stats.factorizations += 1;
        let singular = solver.factorize_scanned(values, scan).err();
        self.kept = Kept {
            valid: singular.is_none(),
            c: c.abi(),
            noqv: settings.iter_noqv,
            age: 1,
            ledger: self.kept.ledger,
            reach: None,
            rate: 0.0,
        };
        Ok(singular.map(|s| s.index))
    }

    /// How far λ moves (∞-norm) on the factorized matrix, per unit of the round-off
    /// floor, when every constraint row is at the floor of its Φ: J [z; μ] = [0;
    /// 1/(β′h²)], ‖μ‖∞ (linear, so times the step's floor). Below the floor
    /// [`System::correct`] leaves a row alone, so a kept matrix, which reduces the
    /// rows linearly, leaves them anywhere below it, and the multipliers' remaining
    /// error cannot be asked to go far below this (at the default tolerance 1e-10 it
    /// is about the tolerance on the chains). One solve per kept matrix.
    fn roundoff_reach(&mut self, c: &Coefficients) -> f64 {
        let nv = self.nv;
        if self.nl == 0 {
            return 0.0;
        }
        self.dx[..nv].fill(0.0);
        self.dx[nv..].fill(1.0 / c.bh2());
        let solver = self.js.as_mut().expect("solvers exist after initialize");
        solver.solve(&mut self.dx);
        inf_norm(&self.dx[nv..])
    }

    /// One Newton correction with the factorized matrix: Δx = −J⁻¹R, x += Δx, and the
    /// trial state at the new x.
    fn correct(&mut self, c: &Coefficients, phi_floor: f64) -> Result<(), SimErrorKind> {
        let (nv, bh2) = (self.nv, c.bh2());
        for i in 0..self.dx.len() {
            self.dx[i] = -self.r[i];
        }
        // Constraint rows already satisfied to round-off: no correction from them.
        // The round-off of Φ is relative to the coordinates it is made of, so the
        // level is ε_machine (1 + ‖q‖∞) (the theory's ε_machine for ‖q‖ ≤ 1).
        for i in nv..self.dx.len() {
            if (self.r[i] * bh2).abs() < phi_floor {
                self.dx[i] = 0.0;
            }
        }
        let solver = self.js.as_mut().expect("solvers exist after initialize");
        solver.solve(&mut self.dx);
        if let Some(u) = self.first_non_finite(&self.dx) {
            // The residual and the matrix were finite: no element to blame.
            return Err(SimErrorKind::NotFinite {
                unknown: u,
                t_trial: self.t_new,
                culprit: None,
            });
        }
        for i in 0..self.x.len() {
            self.x[i] += self.dx[i];
        }
        self.trial_state(c);
        Ok(())
    }

    /// The stopping rule of `settings.newton` after correction k (`fresh`: it used a
    /// new matrix); evaluates the residual at the new state where a test or the next
    /// correction needs it.
    fn converge(
        &mut self,
        settings: &Settings,
        c: &Coefficients,
        it: &mut Iteration,
        k: usize,
        fresh: bool,
        corr: &mut f64,
    ) -> Result<Verdict, SimErrorKind> {
        let nv = self.nv;
        let dvd = inf_norm(&self.dx[..nv]);
        *corr = c.gh() * dvd / (1.0 + inf_norm(&self.vt));
        let last_fixed = matches!(settings.newton, Newton::Fixed(n) if n == k);
        let (velocity, vtol) = match settings.newton {
            Newton::Velocity { tol } => (true, velocity_tol(settings, tol)),
            _ => (false, 0.0),
        };
        // The largest v̇ correction the velocity criterion accepts.
        let dvd_tol = vtol * (1.0 + inf_norm(&self.vt)) / c.gh();
        let lam = self.multiplier_test(it, k, vtol);
        // On a matrix of an earlier step the iteration contracts linearly: what is left
        // of v̇'s error is its estimate from the rate, not the last correction.
        let v_left = if it.stale {
            remaining(dvd, it.dvd_1)
        } else {
            0.0
        };
        let v_target = KEPT_ERROR_SHARE * dvd_tol;
        it.v_settled |= dvd <= dvd_tol && v_left <= v_target;
        let done = last_fixed || (velocity && it.v_settled && lam.settled);
        if done && settings.form == Form::ArnoldBruls {
            // No f_n term needs the residual at the converged state.
            return Ok(Verdict::Converged);
        }
        self.residual(c, alpha_negrut(settings));
        if let Some(u) = self.first_non_finite(&self.r) {
            return Err(self.trial_not_finite(u, Role::Res, c, false));
        }
        if done {
            return Ok(Verdict::Converged);
        }
        // Only the multipliers are left (kept matrix): v̇ may be at its round-off, so
        // its corrections judge neither divergence nor the rate.
        let only_lambda = velocity && it.v_settled;
        if it.stale && k >= 2 && velocity {
            // The rate the contraction rule judges below (not that of the correction
            // that converged: it may be at round-off).
            let rate = if only_lambda {
                lam.rate
            } else {
                dvd / it.dvd_1
            };
            it.kept_rate = it.kept_rate.max(rate);
        }
        if only_lambda {
            // After one correction the rate is not known yet (as for v̇).
            let left = i32::try_from(it.max_iter - k).unwrap_or(i32::MAX);
            it.new_matrix |= k >= 2
                && (lam.rate > KEEP_MATRIX_RATE || lam.error * lam.rate.powi(left) > lam.target);
        } else if velocity {
            if dvd > it.dvd_1 && it.dvd_1 > it.dvd_2 {
                return Ok(Verdict::Reject(format!(
                    "Newton diverged; largest residual at {}{}",
                    self.largest_residual(),
                    self.largest_correction()
                )));
            }
            // Keep the matrix while the corrections contract fast and at that rate
            // would pass the tolerance within the iteration limit (otherwise full
            // Newton converges in fewer iterations). A kept matrix that contracts
            // slowly is replaced; divergence is judged on new matrices only.
            let rate = dvd / it.dvd_1;
            let left = i32::try_from(it.max_iter - k).unwrap_or(i32::MAX);
            // On a kept matrix the projection is of the estimated remaining error.
            let (left_now, target) = if it.stale {
                (v_left, v_target)
            } else {
                (dvd, dvd_tol)
            };
            let slow = rate > KEEP_MATRIX_RATE || left_now * rate.powi(left) > target;
            it.new_matrix |= slow;
            it.dvd_2 = if slow && !fresh {
                f64::INFINITY
            } else {
                it.dvd_1
            };
            it.dvd_1 = dvd;
        }
        if matches!(settings.newton, Newton::Legacy) {
            return Ok(self.legacy_test(c, it, k));
        }
        Ok(Verdict::Continue)
    }

    /// The multipliers after correction k. On a matrix of an earlier step Newton
    /// contracts linearly and leaves them about rate · ‖Δλ‖∞ from the solution (a new
    /// matrix leaves them quadratically close), which the velocity criterion does not
    /// measure: it must meet the criterion's relative tolerance too, `vtol` (1 +
    /// ‖λ‖∞), with the rate of the λ corrections (1 after the first). Records ‖Δλ‖∞.
    fn multiplier_test(&self, it: &mut Iteration, k: usize, vtol: f64) -> Multipliers {
        let nv = self.nv;
        let dl = inf_norm(&self.dx[nv..]);
        let dl_1 = it.dl_1;
        let rate = if k >= 2 && it.dl_1 > 0.0 {
            (dl / it.dl_1).min(1.0)
        } else {
            1.0
        };
        it.dl_1 = dl;
        let tol = vtol * (1.0 + inf_norm(&self.x[nv..]));
        let target = (KEPT_ERROR_SHARE * tol).max(REACH_SHARE * it.lambda_reach);
        // Before the second correction the rate is unknown (`remaining` is infinite).
        let error = remaining(dl, if k >= 2 { dl_1 } else { f64::INFINITY });
        Multipliers {
            settled: !it.stale || error <= target,
            rate,
            error,
            target,
        }
    }

    /// Negrut et al. 2007 Eq. 40 on the weighted norm of Δv̇ after at least two
    /// corrections; a residual grown beyond the predictor's rejects the step.
    fn legacy_test(&self, c: &Coefficients, it: &mut Iteration, k: usize) -> Verdict {
        let nv = self.nv;
        let norm = (0..nv)
            .map(|i| (self.dx[i] / self.w[i]).powi(2))
            .sum::<f64>()
            .sqrt();
        if k >= 2 && it.prev_norm > 0.0 {
            let xi = norm / it.prev_norm;
            if xi < 1.0 && (xi / (1.0 - xi)).powi(2) * norm * norm <= 1e-6 * it.psi / c.h.powi(4) {
                return Verdict::Converged;
            }
        }
        if norm == 0.0 {
            return Verdict::Converged;
        }
        it.prev_norm = norm;
        let dyn_n = two_norm(&self.r[..nv]);
        let con_n = two_norm(&self.r[nv..]) * c.bh2();
        let limit = |p: f64| p.max(1e3 * f64::EPSILON * p.max(1.0));
        if dyn_n > limit(it.pred_dyn) || con_n > limit(it.pred_con) {
            return Verdict::Reject(format!(
                "Newton diverged: residual grew at {}{}",
                self.largest_residual(),
                self.largest_correction()
            ));
        }
        Verdict::Continue
    }

    /// The Newmark history a_n (the pseudo-acceleration, or v̇_n in the Negrut form)
    /// carried to the step size of the trial step: a_n approximates q̈(t_n + δh),
    /// δ = α_m − α_f (α for HHT), with the h of the step that made it, so a step of
    /// another size shifts it by δ (h − h_prev) q⃛ ≈ δ (h/h_prev − 1)(v̇_n − v̇_{n−1})
    /// (docs/runtime.md).
    fn history_shift(&self, settings: &Settings, h: f64) -> f64 {
        if settings.control == StepControl::Legacy || self.h_prev == 0.0 || self.same_step(h) {
            return 0.0;
        }
        settings.scheme().delta() * (h / self.h_prev - 1.0)
    }

    /// a_n of dof i for the trial step (see [`System::history_shift`]).
    pub(super) fn history(&self, i: usize) -> f64 {
        self.acc[i] + self.ctrl.shift * (self.vd[i] - self.x_prev[i])
    }

    /// p_n = (α_f v̇_n − α_m a_n)/(1 − α_m) of dof i, the part of a_{n+1} known before
    /// the step ([`pseudo`] gives (κ, α_m, α_f)).
    pub(super) fn history_part(&self, (_, am, af): (f64, f64, f64), i: usize) -> f64 {
        (af * self.vd[i] - am * self.history(i)) / (1.0 - am)
    }

    /// Removes from the error estimate in r[..nv] its part normal to the constraints:
    /// Φ(q_{n+1}) = 0 holds to round-off, so the positions err only along the
    /// constraint manifold, while v̇ there carries the multipliers' parasitic
    /// oscillation of index-3 HHT (which the error must not chase: shrinking h feeds
    /// it). With the factorized iteration matrix J = [M̂ Bᵀ; B 0] of the step,
    /// J [z; μ] = [0; B e] gives the M̂-orthogonal normal part z; e − z stays in r.
    fn project_error(&mut self) {
        let mut r = std::mem::take(&mut self.r);
        self.project_tangential(&mut r);
        self.r = r;
    }

    /// `e[..nv]` minus its part normal to the constraints (see
    /// [`System::project_error`]); `e[nv..]` is overwritten.
    fn project_tangential(&mut self, e: &mut [f64]) {
        let nv = self.nv;
        if self.nl == 0 {
            return;
        }
        e[nv..].fill(0.0);
        self.jp.mul(&self.jv[..self.jp.nnz()], e, &mut self.dx);
        self.dx[..nv].fill(0.0);
        let solver = self.js.as_mut().expect("solvers exist after initialize");
        solver.solve(&mut self.dx);
        for (x, z) in e[..nv].iter_mut().zip(&self.dx) {
            *x -= z;
        }
    }

    /// Adds the local error of the velocities to the (projected) position error in
    /// r[..nv]: e_v = C_v h³ q⁗ with q⁗ from the second divided difference of v̇
    /// over the last two steps, made a position error by the time scale τ = 1/ω of
    /// the motion, ω² = ‖q⁗‖/‖q̈‖ (tangential parts; exact for a harmonic motion,
    /// where a local error (e_q, e_v) becomes a global error of amplitude
    /// √(e_q² + (e_v/ω)²)); r_i := √(r_i² + (τ e_v,i)²). Without it the estimate
    /// vanishes where q⃛ does (a pendulum's turning points) while the velocity error
    /// there does not, and the step grows where it should not (docs/runtime.md).
    fn velocity_error(&mut self, settings: &Settings, h: f64) {
        let (nv, hp) = (self.nv, self.h_prev);
        let mut ev = std::mem::take(&mut self.err_v);
        let mut at = std::mem::take(&mut self.acc_t);
        for i in 0..nv {
            let (new, now, before) = (self.x[i], self.vd[i], self.x_prev[i]);
            ev[i] = 2.0 * ((new - now) / h - (now - before) / hp) / (h + hp);
            at[i] = new;
        }
        self.project_tangential(&mut ev);
        self.project_tangential(&mut at);
        let (q4, q2) = (two_norm(&ev[..nv]), two_norm(&at[..nv]));
        if q4 > 0.0 && q4.is_finite() {
            // τ C_v h³ q⁗_i with τ = (‖q̈‖/‖q⁗‖)^(1/2).
            let k = velocity_error_constant(settings) * h * h * h * (q2 / q4).sqrt();
            for (r, e) in self.r[..nv].iter_mut().zip(&ev) {
                *r = r.hypot(k * e);
            }
        }
        self.err_v = ev;
        self.acc_t = at;
    }

    /// The local error test of `adaptive` (theory §8) on the converged step: the
    /// normalized error err (RMS over the velocity dofs), accepted if err ≤ 1.
    fn estimate(&mut self, settings: &Settings, c: &Coefficients) -> Outcome {
        let Some(tol) = settings.adaptive else {
            return Outcome::Accepted { err: 0.0 };
        };
        let nv = self.nv;
        self.scales(true);
        self.weights(settings, true);
        let pseudo = pseudo(settings);
        let h = c.h;
        // Per dof: the estimated error e_i and the error it may have.
        let smooth = settings.control == StepControl::Smooth;
        let mixed = settings.weights == ErrorWeights::Mixed;
        let atol = settings.atol.unwrap_or(tol);
        let k_smooth = local_error_constant(settings) * h * h;
        // Equal error per step tol^(3/2) w: see docs/runtime.md (the fewest steps for
        // a global error ∝ tol).
        let per_step = tol.sqrt();
        let k_legacy = error_constant(settings) * h * h;
        if smooth {
            // e_i = C h² (a_{n+1} − a_n): the local position error, in r[..nv].
            for i in 0..nv {
                let a_new = pseudo.0 * self.x[i] + self.history_part(pseudo, i);
                self.r[i] = k_smooth * (a_new - self.history(i));
            }
            // Not in the first step: there a_0 = v̇_0 is no history yet, and from rest
            // the tangential error can vanish while the step is far too large.
            if self.h_prev > 0.0 {
                self.project_error();
                if tol >= VELOCITY_TERM_MIN_RTOL {
                    self.velocity_error(settings, h);
                }
            }
        }
        let ratio = |s: &Self, i: usize| -> f64 {
            if smooth {
                let e = s.r[i];
                let scale = s.scale_n[i].max(s.scale_t[i]);
                let allowed = per_step
                    * if mixed {
                        atol + tol * scale
                    } else {
                        tol * s.w[i]
                    };
                // A position error at the round-off of the coordinates is no error
                // (index-3 accelerations carry round-off ε/h²).
                e / allowed.max(ROUNDOFF * (1.0 + scale))
            } else {
                k_legacy * (s.x[i] - s.vd[i]) / (tol * s.w[i])
            }
        };
        let sum: f64 = (0..nv).map(|i| ratio(self, i).powi(2)).sum();
        let err = if nv > 0 {
            (sum / nv as f64).sqrt()
        } else {
            0.0
        };
        if err.is_finite() && err <= 1.0 {
            return Outcome::Accepted { err };
        }
        let i = (0..nv)
            .max_by(|&a, &b| ratio(self, a).abs().total_cmp(&ratio(self, b).abs()))
            .unwrap_or(0);
        Outcome::Rejected {
            cause: format!(
                "local error {err:.3e} > 1, largest at {} (elements acting on it: {}) in the step to t = {}",
                self.labels[i],
                quoted(&self.acting_on(i)),
                self.t_new
            ),
            singular: None,
            err: Some(err),
        }
    }
}

#[cfg(test)]
mod tests {
    /// On a geometric sequence of corrections d θ^k the estimate is the sum of all
    /// later ones, θ/(1 − θ) d; unknown rate or no contraction give infinity.
    #[test]
    fn remaining_error_sums_a_geometric_tail() {
        let (d, theta) = (0.3f64, 0.2f64);
        let tail: f64 = (1..60).map(|k| d * theta.powi(k)).sum();
        assert!((super::remaining(d, d / theta) - tail).abs() < 1e-15);
        assert_eq!(super::remaining(d, f64::INFINITY), f64::INFINITY);
        assert_eq!(super::remaining(d, d), f64::INFINITY);
        assert_eq!(super::remaining(0.0, 0.0), 0.0);
    }
}
