//! Accepting steps, step size control, the output grid, `step` and `run`.

use super::*;

/// Söderlind's H211b filter (b = 4): ρ = ê_n^(−1/(bk)) ê_{n−1}^(−1/(bk)) ρ_{n−1}^(−1/b)
/// with ê = err/TARGET and k = 3, the order of the local error in h.
const FILTER_B: f64 = 4.0;
const ERROR_ORDER: f64 = 3.0;
/// The controller aims at this normalized error, so that few steps fail the test.
const TARGET: f64 = 0.5;
/// Limits of the ratio of successive steps (after the smooth limiter 1 + atan(ρ − 1)).
const RATIO_MIN: f64 = 0.2;
const RATIO_MAX: f64 = 2.0;

/// The memory of the step size controller.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct Control {
    /// The history shift of the trial step (see `System::history_shift`).
    pub shift: f64,
    /// ê and the step ratio of the last accepted step (0: none since the start or a
    /// rejection).
    pub err_prev: f64,
    pub ratio_prev: f64,
    /// The last attempt was rejected: the next step does not grow.
    pub rejected: bool,
}

impl Control {
    /// The ratio of the next step to the accepted step of normalized error `err`.
    pub fn accepted(&mut self, err: f64) -> f64 {
        let e = (err / TARGET).max(1e-6);
        let k = FILTER_B * ERROR_ORDER;
        let raw = if self.err_prev > 0.0 {
            e.powf(-1.0 / k) * self.err_prev.powf(-1.0 / k) * self.ratio_prev.powf(-1.0 / FILTER_B)
        } else {
            // No history: the elementary (deadbeat-damped) controller.
            e.powf(-1.0 / (2.0 * ERROR_ORDER))
        };
        let mut ratio = (1.0 + (raw - 1.0).atan()).clamp(RATIO_MIN, RATIO_MAX);
        if self.rejected {
            ratio = ratio.min(1.0);
        }
        self.err_prev = e;
        self.ratio_prev = ratio;
        self.rejected = false;
        ratio
    }

    /// The ratio of the retry to a step the error test rejected with `err`.
    pub fn rejected(&mut self, err: f64) -> f64 {
        self.rejected = true;
        self.err_prev = 0.0;
        (0.9 * (err / TARGET).powf(-1.0 / ERROR_ORDER)).clamp(RATIO_MIN, 0.9)
    }
}

impl System {
    /// The last accepted step had the size h (up to the round-off of the last step
    /// before an output time, which is computed as a difference of times).
    pub(super) fn same_step(&self, h: f64) -> bool {
        (h - self.h_prev).abs() <= 1e-9 * h
    }

    /// Makes the trial state the accepted one and runs `Post`.
    pub(super) fn accept(&mut self, settings: &Settings, h: f64) {
        let nv = self.nv;
        // a_{n+1} = κ v̇_{n+1} + p_n, with the history of the step taken (shifted).
        let pseudo = newton::pseudo(settings);
        // In place: dof i's history reads only acc[i], vd[i] and x_prev[i].
        for i in 0..nv {
            self.acc[i] = pseudo.0 * self.x[i] + self.history_part(pseudo, i);
        }
        // Would the linear predictor have been closer to this step's v̇ (λ) than the
        // constant one? It loses where they alternate from step to step (a weakly
        // damped parasitic mode of the index-3 equations).
        if self.same_step(h) {
            let closer = |new: &[f64], last: &[f64], before: &[f64]| {
                let (mut e_const, mut e_lin) = (0.0f64, 0.0f64);
                for ((x, l), b) in new.iter().zip(last).zip(before) {
                    e_const = e_const.max((x - l).abs());
                    e_lin = e_lin.max((x - l - (l - b)).abs());
                }
                e_lin < e_const
            };
            self.extrapolate = [
                closer(&self.x[..nv], &self.vd, &self.x_prev[..nv]),
                closer(&self.x[nv..], &self.lam, &self.x_prev[nv..]),
            ];
        }
        self.x_prev[..nv].copy_from_slice(&self.vd);
        self.x_prev[nv..].copy_from_slice(&self.lam);
        self.h_prev = h;
        self.vd.copy_from_slice(&self.x[..nv]);
        self.lam.copy_from_slice(&self.x[nv..]);
        self.q.copy_from_slice(&self.qt);
        self.v.copy_from_slice(&self.vt);
        self.f_n.copy_from_slice(&self.f);
        self.t = self.t_new;
        if settings.adaptive.is_some() {
            self.scale_n.copy_from_slice(&self.scale_t);
        } else if matches!(settings.newton, Newton::Legacy) {
            self.scales(false);
        }
        for i in 0..nv {
            self.scale_max[i] = self.scale_max[i].max(self.scale_n[i]);
        }
        // Element state (e.g. the reference of a continuous angle).
        let c = self.coefficients(settings, h);
        let w = accepted_view!(self);
        let types = &self.table.types;
        for e in &mut self.inst {
            let ty = &types[e.ty];
            if ty.state_params.is_empty() {
                continue;
            }
            call(types, e, Role::Post, &mut self.s, &w, &c);
            for (k, &p) in ty.state_params.iter().enumerate() {
                e.params[p] = self.s.out[k];
            }
        }
        self.stats.steps += 1;
        self.stats.t = self.t;
    }

    /// The shortest step: `step_min`, and never below the resolution of the time
    /// (so no step is 0).
    fn h_floor(&self, settings: &Settings) -> f64 {
        settings
            .step_min
            .max(16.0 * f64::EPSILON * self.t.abs().max(1.0))
    }

    /// The error when a rejected step would go below the minimum: a singular
    /// iteration matrix says whether [M Bᵀ; B 0] is singular at the configuration
    /// reached (redundant or conflicting constraints there) or only along the way.
    #[cold]
    fn below_minimum(
        &mut self,
        settings: &Settings,
        cause: String,
        singular: Option<usize>,
    ) -> SimErrorKind {
        let Some(i) = singular else {
            return SimErrorKind::StepBelowMinimum {
                h: self.h,
                h_min: settings.step_min,
                cause,
            };
        };
        let t_trial = self.t_new;
        let c = self.coefficients(settings, self.h);
        self.assemble_ic(&c);
        let solver = self.ics.as_mut().expect("solvers exist after initialize");
        let at_configuration = solver.factorize(&self.icv[..self.icp.nnz()]).is_err();
        SimErrorKind::Singular {
            unknown: self.labels[i].clone(),
            elements: self.acting_on(i),
            t_trial,
            at_configuration,
        }
    }

    /// The size of the step after an accepted one of size h and normalized error err
    /// (`hit`: h was cut to land on an output time).
    fn next_step(&mut self, settings: &Settings, h: f64, err: f64, hit: bool) {
        if settings.adaptive.is_none() {
            if !hit || h >= self.h {
                self.h = (2.0 * self.h).min(settings.step);
            }
            return;
        }
        let floor = self.h_floor(settings);
        match settings.control {
            StepControl::Legacy => {
                // Controller of the legacy solver, growth limited to 5×.
                let factor = if err > 0.0 {
                    0.9 * err.powf(-1.0 / 3.0)
                } else {
                    5.0
                };
                self.h = (h * factor.min(5.0)).min(settings.step_max).max(floor);
            }
            StepControl::Smooth => {
                // A step cut short to land on an output time says little about the
                // step the controller wants: it keeps its proposal and its memory.
                if hit && h < self.h {
                    return;
                }
                let ratio = self.ctrl.accepted(err);
                self.h = (h * ratio).min(settings.step_max).max(floor);
            }
        }
    }

    /// Integrates from the accepted state to `t_stop` exactly, with step control.
    // SimError carries the statistics by value; the error path is cold.
    #[allow(clippy::result_large_err)]
    pub(super) fn advance_to(
        &mut self,
        settings: &Settings,
        t_stop: f64,
        mut sink: Option<&mut dyn ResultSink>,
        report: &mut StepReport,
    ) -> Result<(), SimError> {
        while t_stop - self.t > 1e-12 * t_stop.abs().max(1.0) {
            // The one swap point of tiered code: between two steps (a pointer copy).
            self.table.apply_upgrade();
            let mut h = self.h.min(settings.step_max);
            let remaining = t_stop - self.t;
            // Land on t_stop when it is near, and never leave a remainder shorter than
            // the minimum step (no accepted step is shorter than step_min).
            let hit = 1.1 * h >= remaining || remaining - h < self.h_floor(settings);
            if hit {
                h = remaining;
            }
            let start = settings.timing.then(Instant::now);
            let mut iters = 0;
            let mut corr = 0.0;
            let mut outcome = self
                .try_step(settings, h, &mut iters, &mut corr)
                .map_err(|k| self.sim_error(k))?;
            // Newton failed on a matrix factorized without row exchanges
            // (`linear/diagonal.rs`): the same step again with partial pivoting (for
            // the rest of the run) before a shorter one.
            let newton_failed = matches!(outcome, Outcome::Rejected { err: None, .. });
            if newton_failed && self.js.as_mut().is_some_and(|s| s.abandon_diagonal_order()) {
                outcome = self
                    .try_step(settings, h, &mut iters, &mut corr)
                    .map_err(|k| self.sim_error(k))?;
            }
            report.newton_iterations += iters;
            match outcome {
                Outcome::Accepted { err } => {
                    if let Some(s) = sink.as_deref_mut() {
                        self.dense_rows(settings, h, s);
                    }
                    self.accept(settings, h);
                    if let Some((i, g)) = self.monitor.check(&self.v, &self.lam) {
                        return Err(self.sim_error(self.diverged(i, g, None)));
                    }
                    if hit {
                        self.t = t_stop;
                        self.stats.t = t_stop;
                    }
                    if let Some(t0) = start {
                        if self.step_times.len() < self.step_times.capacity() {
                            self.step_times.push(t0.elapsed().as_secs_f64());
                        }
                    }
                    if let Some(s) = sink.as_deref_mut() {
                        self.dense_row_at_step(s);
                    }
                    report.substeps += 1;
                    report.correction = corr;
                    self.stats.max_correction = self.stats.max_correction.max(corr);
                    self.next_step(settings, h, err, hit);
                    if let Some(s) = sink.as_deref_mut() {
                        if settings.output_every == 0.0 {
                            self.outputs();
                            s.row(self.t, &self.row);
                        }
                    }
                }
                Outcome::Rejected {
                    cause,
                    singular,
                    err,
                } => {
                    self.stats.rejected += 1;
                    self.h = match (settings.control, err) {
                        (StepControl::Smooth, Some(e)) => h * self.ctrl.rejected(e),
                        _ => {
                            self.ctrl.rejected = true;
                            self.ctrl.err_prev = 0.0;
                            h / 2.0
                        }
                    };
                    if self.h < self.h_floor(settings) {
                        let kind = self.below_minimum(settings, cause, singular);
                        return Err(self.sim_error(self.or_diverged(kind)));
                    }
                }
            }
        }
        report.t = self.t;
        Ok(())
    }

    /// One step of `settings.step` for a caller-driven loop (real time): with
    /// `Newton::Fixed` and no `adaptive` every call does the same work. A rejected
    /// attempt is covered by smaller substeps. Needs [`System::initialize`] first.
    // SimError carries the statistics by value; the error path is cold.
    #[allow(clippy::result_large_err)]
    pub fn step(&mut self, settings: &Settings) -> Result<StepReport, SimError> {
        if !self.initialized {
            return Err(self.sim_error(SimErrorKind::Setup(RuntimeError::NotInitialized)));
        }
        let mut report = StepReport {
            t: self.t,
            substeps: 0,
            newton_iterations: 0,
            correction: 0.0,
        };
        let t_stop = self.t + settings.step;
        self.advance_to(settings, t_stop, None, &mut report)?;
        Ok(report)
    }

    /// Initializes (if needed) and integrates to `settings.end`, writing a row at t = 0
    /// and at every output time (every accepted step if `output_every` is 0). Rows
    /// between steps are interpolated (`system/dense.rs`) unless `output_exact`, which
    /// shortens steps to land on the output times.
    // SimError carries the statistics by value; the error path is cold.
    #[allow(clippy::result_large_err)]
    pub fn run(
        &mut self,
        settings: &Settings,
        sink: &mut dyn ResultSink,
    ) -> Result<RunStats, SimError> {
        if let Err(e) = settings.validate() {
            return Err(self.sim_error(SimErrorKind::Setup(RuntimeError::BadSettings(e))));
        }
        if !self.initialized {
            self.initialize(settings)
                .map_err(|e| self.sim_error(SimErrorKind::Setup(e)))?;
        }
        self.reserve_timing(settings);
        sink.header(&self.channels);
        self.outputs();
        sink.row(self.t, &self.row);
        let mut report = StepReport {
            t: self.t,
            substeps: 0,
            newton_iterations: 0,
            correction: 0.0,
        };
        let mut k: u64 = (self.t / settings.output_every.max(f64::MIN_POSITIVE)).floor() as u64 + 1;
        // Fixed steps land on the grid as before (time t_n is exact there, and a
        // step that divides the interval loses nothing).
        let dense =
            settings.output_every > 0.0 && !settings.output_exact && settings.adaptive.is_some();
        self.dense.every = if dense { settings.output_every } else { 0.0 };
        self.dense.k = k;
        if dense {
            // Rows between steps are interpolated; only `end` is landed on.
            self.advance_to(settings, settings.end, Some(&mut *sink), &mut report)?;
            let last = (self.dense.k - 1) as f64 * settings.output_every;
            if settings.end - last > 1e-12 * settings.end.abs().max(1.0) {
                self.outputs();
                sink.row(self.t, &self.row);
            }
            return Ok(self.final_stats());
        }
        while settings.end - self.t > 1e-12 * settings.end.abs().max(1.0) {
            let t_stop = if settings.output_every > 0.0 {
                (k as f64 * settings.output_every).min(settings.end)
            } else {
                settings.end
            };
            self.advance_to(settings, t_stop, Some(&mut *sink), &mut report)?;
            if settings.output_every > 0.0 {
                self.outputs();
                sink.row(self.t, &self.row);
                k += 1;
            }
        }
        Ok(self.final_stats())
    }
}
