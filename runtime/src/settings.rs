//! Integrator settings.

pub use crate::linear::LinearSolverKind;

/// The HHT form (theory §7.2, §7.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Form {
    /// Equations at t_{n+1}, Newmark on a pseudo-acceleration, configuration update
    /// through the element `Update` role (q ∘ exp(Δ)). Coefficients (0, (1+α)β, (1+α)γ, h).
    #[default]
    ArnoldBruls,
    /// Legacy form: r_dyn − α/(1+α) f_n, Newmark on the accelerations. Coefficients
    /// (α, β, γ, h). The configuration still goes through `Update` with the Newmark
    /// increment, which for vector-space elements is q_pred + βh² v̇.
    Negrut,
}

/// Newton stopping rule (theory §7.5).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Newton {
    /// γ′h‖Δv̇‖∞ ≤ tol (1 + ‖v‖∞).
    Velocity { tol: f64 },
    /// Negrut et al. 2007 Eq. 40 with the rejection rule; its ε is the error
    /// tolerance of `adaptive` (or [`LEGACY_DEFAULT_EPS`] without it).
    Legacy,
    /// Exactly N corrections (real time).
    Fixed(usize),
}

/// Tolerance of the default Newton criterion `Velocity` (also `--newton velocity`).
pub const NEWTON_TOL: f64 = 1e-10;

impl Default for Newton {
    fn default() -> Self {
        Newton::Velocity { tol: NEWTON_TOL }
    }
}

/// What decides, from step to step, whether a step starts on the last step's
/// factorized iteration matrix (within [`Settings::matrix_steps`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum MatrixRule {
    /// The matrix serves until it is `matrix_steps` steps old (or the contraction rule
    /// replaces it within a step).
    Age,
    /// Counted costs (`system/matrix_cost.rs`): the matrix serves while the last
    /// step on it cost less than the average step of its life, with the
    /// factorization's multiply-adds and the element functions' operation counts as
    /// the costs, never timings (reruns decide alike). `matrix_steps` stays the cap.
    /// The default: it keeps the matrix only where the counts say it pays.
    #[default]
    Cost,
}

impl MatrixRule {
    /// `age` or `cost` (the `--matrix-rule` flag).
    pub fn parse(s: &str) -> Result<MatrixRule, String> {
        match s {
            "age" => Ok(MatrixRule::Age),
            "cost" => Ok(MatrixRule::Cost),
            _ => Err(format!("`{s}`: use age or cost")),
        }
    }
}

/// First guess of the unknowns x = [v̇; λ] of a step (theory §7.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Predictor {
    /// The last accepted values x_n (the theory's predictor).
    Constant,
    /// 2 x_n − x_{n−1}, linear in time through the last two accepted steps, when they
    /// and this step have the same size and the extrapolation would have been the
    /// closer guess in the last step (separately for v̇ and λ); x_n otherwise. Its
    /// error is O(h²) instead of O(h), which saves corrections: the peers' chain of 64
    /// rods 4.2 → 3.0 per step with the matrix kept across steps (3.7 → 3.1 since the cost
    /// rule projects the contraction, session 27). With a new matrix
    /// every step the multipliers, which the velocity criterion does not measure, end
    /// about ten times farther from the converged ones after the second correction;
    /// with the kept matrix (the default) the multiplier test of a stale matrix holds
    /// them, and they end as close as the constant predictor's (session 25,
    /// `tests/runtime/newton.rs`).
    #[default]
    Linear,
}

/// Largest ratio of a Newton correction to the one before it (velocity criterion)
/// for which the next correction still uses the kept iteration matrix
/// (see [`Settings::keep_matrix`]); a slower contraction factorizes a new one. On a
/// kept matrix the convergence test projects the remaining error from the rate, so
/// the limit is about cost, not accuracy: 0.2 instead of 0.1 (session 27) let the
/// 1,000-rod chain finish most reuses it used to abandon after three corrections
/// (0.77 → 0.50 factorizations, 2.65 → 3.43 corrections per step, CPU 0.97), the
/// 64-rod chain 0.35 → 0.27 (3.53 → 3.76); the chain of 16's accuracy against a
/// new matrix per step unchanged (`tests/runtime/newton.rs`).
pub const KEEP_MATRIX_RATE: f64 = 0.2;

/// The default cap of [`Settings::matrix_steps`] (the cost rule decides below it).
pub const MATRIX_STEPS: usize = 1000;

/// ε of the legacy Newton criterion when the run has no error tolerance.
pub const LEGACY_DEFAULT_EPS: f64 = 1e-6;

/// Weights of the local error estimate (theory §8; docs/runtime.md "Error estimate").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ErrorWeights {
    /// The usual mixed test: component i may err by atol + rtol·max(s_n,i, s_n+1,i)
    /// with the element scales s (rtol = `adaptive`, atol = `atol` or rtol).
    #[default]
    Mixed,
    /// The legacy solver's w_i = max(1, largest s_i so far), times rtol.
    Legacy,
}

/// How the local error is measured and turned into the next step
/// (docs/runtime.md "Error estimate and step size").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum StepControl {
    /// The local position error of the scheme per unit step (global error ∝ tol),
    /// the Newmark history rescaled to every new step size, and Söderlind's smooth
    /// H211b digital-filter controller with a limited step ratio.
    #[default]
    Smooth,
    /// The legacy solver: error per step with the constant β − 1/(6(1+α)), no
    /// rescaling of the history, h := 0.9 h θ^(−1/6) (growth ≤ 5×), halving on rejection.
    Legacy,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    /// End time (the run starts at t = 0).
    pub end: f64,
    /// Step size (the initial one when adaptive).
    pub step: f64,
    /// Interval of result rows; 0 writes a row after every accepted step.
    pub output_every: f64,
    /// With `adaptive`: land on every output time (shorter steps) instead of
    /// interpolating the rows within the accepted steps. Fixed steps always land.
    pub output_exact: bool,
    /// HHT α in [−1/3, 0] (the legacy profile's damping); ignored with `rho_inf`.
    pub alpha: f64,
    /// Generalized-α (Chung–Hulbert; on the Lie group as Arnold–Brüls) by its spectral
    /// radius at infinity ρ∞ ∈ [0, 1]: 1 no numerical damping, 0 the most. `None` runs
    /// HHT with `alpha`. Arnold–Brüls form only.
    pub rho_inf: Option<f64>,
    pub form: Form,
    pub newton: Newton,
    /// Error tolerance ε of the step size control (the relative tolerance rtol);
    /// `None` runs with the fixed step.
    pub adaptive: Option<f64>,
    /// Absolute tolerance of the mixed weights; `None` takes rtol.
    pub atol: Option<f64>,
    pub control: StepControl,
    /// A step below this ends the run with an error; no accepted step is shorter
    /// (and none is 0: the floor is at least 16 ε_machine max(|t|, 1)).
    pub step_min: f64,
    pub step_max: f64,
    pub linear: LinearSolverKind,
    pub weights: ErrorWeights,
    /// Newton iterations before a step is rejected (velocity and legacy criteria).
    pub max_newton_iterations: usize,
    /// Record the wall-clock time of every step (statistics in [`crate::RunStats`]).
    pub timing: bool,
    /// Redundant constraints are an error instead of a warning.
    pub strict: bool,
    /// Newton matrix from `IterNoqv` where an element type has it (legacy option:
    /// without the derivatives of the gyroscopic terms; converges more slowly).
    pub iter_noqv: bool,
    /// First guess of a step. `Newton::Legacy` always uses [`Predictor::Constant`]:
    /// it reproduces the legacy solver's iterations.
    pub predictor: Predictor,
    /// Modified Newton: the later corrections of a step solve with the iteration
    /// matrix factorized for its first correction. With the velocity criterion a new
    /// matrix is assembled once a correction shrinks by less than
    /// [`KEEP_MATRIX_RATE`]; with `Newton::Fixed` the first matrix serves all N
    /// corrections (every step does the same work). `Newton::Legacy` always takes a
    /// new matrix per correction, as the legacy solver does.
    pub keep_matrix: bool,
    /// With `keep_matrix` and `Newton::Velocity`: the most steps one factorized
    /// iteration matrix serves ([`MATRIX_STEPS`] by default, a cap that the cost rule
    /// never reaches on the examples; 1: a new matrix every step). A step
    /// starts on the last step's matrix when it was made for the same coefficients (h
    /// within 1e-9, the scheme's β′, γ′), is younger than this many steps, and no
    /// attempt was rejected and no input changed since; the contraction rule
    /// ([`KEEP_MATRIX_RATE`]) replaces it within the step when it contracts slowly,
    /// and on a kept matrix the convergence test estimates the error left from the
    /// contraction rate (v̇ and the multipliers) instead of taking the last correction
    /// for it. The states then differ from a new matrix per step at the level of the
    /// Newton tolerance (docs/runtime.md "Modified Newton"; docs/performance.md
    /// "Modified Newton across steps by default"). `Newton::Fixed` (every real-time step does the same work, and
    /// fixed corrections on an older matrix are inaccurate) and `Newton::Legacy`
    /// always take a new matrix per step.
    pub matrix_steps: usize,
    /// What decides within `matrix_steps` whether the kept matrix serves the next step
    /// ([`MatrixRule`]; CLI `--matrix-rule age|cost`).
    pub matrix_rule: MatrixRule,
    /// Initial position assembly: when the initial configuration does not satisfy
    /// the constraints, move it to the nearest one that does (`system/assemble.rs`);
    /// `false` keeps the position check only.
    pub assemble: bool,
    /// Initial coordinates kept as written: a body instance name (its position, in
    /// the assembly), or `NAME.position.x`, `NAME.velocity.x`, `NAME.omega_body.x` (y, z
    /// alike) for one coordinate, held in the assembly or the velocity projection
    /// (`system/given.rs`).
    pub given: Vec<String>,
}

/// The one home of the integrator's defaults: `fdc run --help` prints this table and
/// `docs/language.md` §7 lists the same values (a driver test compares them).
impl Default for Settings {
    fn default() -> Self {
        Settings {
            end: 1.0,
            step: 1e-3,
            output_every: 1e-2,
            output_exact: false,
            alpha: -0.05,
            rho_inf: None,
            form: Form::default(),
            newton: Newton::default(),
            adaptive: None,
            atol: None,
            control: StepControl::Smooth,
            step_min: 1e-12,
            step_max: f64::INFINITY,
            linear: LinearSolverKind::default(),
            weights: ErrorWeights::default(),
            max_newton_iterations: 10,
            timing: false,
            strict: false,
            iter_noqv: false,
            predictor: Predictor::Linear,
            keep_matrix: true,
            matrix_steps: MATRIX_STEPS,
            matrix_rule: MatrixRule::Cost,
            assemble: true,
            given: Vec::new(),
        }
    }
}

/// A setting the run refuses: the `simulate` key it is about (the command line's flag
/// of the same value has the same name) and why. `fdc check` and the language server
/// put the message on the key's value, `fdc run` on a flag prints it as it is.
#[derive(Clone, Debug, PartialEq)]
pub struct SettingError {
    pub key: &'static str,
    pub message: String,
}

impl std::fmt::Display for SettingError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// Most corrections `newton = fixed(n)` may ask for per step (each is a factorization
/// or a solve; 1000 is far beyond any converging Newton iteration).
pub const MAX_FIXED_NEWTON: usize = 1000;

/// Most result rows a run may write, `end / output_every` (about 100 bytes each per
/// 10 channels: 10^8 rows are gigabytes already).
pub const MAX_ROWS: f64 = 1e8;

/// Most fixed steps a run may take, `end / step` (without `adaptive`).
pub const MAX_STEPS: f64 = 1e9;

/// Shortest step and output interval relative to max(end, 1): 1024 ε of the double
/// precision time (2.3e-13), so that t + step differs from t in about ten bits at the
/// end of the run; below it the time stands still (rows at one t forever).
pub const TIME_RESOLUTION: f64 = 1024.0 * f64::EPSILON;

/// `x` for a message: plain decimals for everyday magnitudes, exponent form for the
/// tiny and the huge (never a 300-digit number).
pub fn readable(x: f64) -> String {
    let a = x.abs();
    if x == 0.0 || !x.is_finite() || (1e-4..1e6).contains(&a) {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

impl Settings {
    /// Checks the numbers; a bad setting is an error, never a panic later (the first
    /// problem of [`Settings::problems`] as text).
    pub fn validate(&self) -> Result<(), String> {
        match self.problems().into_iter().next() {
            Some(e) => Err(e.message),
            None => Ok(()),
        }
    }

    /// Every setting the run refuses, each with its key: the one validation of
    /// `fdc run`, `fdc check` and the language server (through the lowering). A
    /// comparison of two settings is only made when each is valid on its own.
    pub fn problems(&self) -> Vec<SettingError> {
        let mut out = Vec::new();
        self.time_problems(&mut out);
        self.solver_problems(&mut out);
        out
    }

    /// `end`, `step` and `output_every`: ranges, the time's resolution, the counts.
    fn time_problems(&self, out: &mut Vec<SettingError>) {
        let mut bad = |key: &'static str, message: String| out.push(SettingError { key, message });
        let pos = |x: f64| x.is_finite() && x > 0.0;
        let r = readable;
        let end_ok = self.end.is_finite() && self.end >= 0.0;
        if !end_ok {
            bad(
                "end",
                format!("end time {} must be finite and not negative", r(self.end)),
            );
        }
        // The time's resolution at the end of the run.
        let floor = TIME_RESOLUTION * self.end.abs().max(1.0);
        let step_ok = pos(self.step);
        if !step_ok {
            bad("step", format!("step {} must be positive", r(self.step)));
        } else if end_ok && self.step < floor {
            bad(
                "step",
                format!(
                    "step {} is below what the time resolves at t = {} ({floor:.1e}): the time would stand still",
                    r(self.step),
                    r(self.end),
                ),
            );
        } else if end_ok && self.adaptive.is_none() && self.end / self.step > MAX_STEPS {
            bad(
                "step",
                format!(
                    "{} fixed steps to t = {} (more than {}): a longer step, or `adaptive`",
                    r((self.end / self.step).ceil()),
                    r(self.end),
                    r(MAX_STEPS)
                ),
            );
        }
        let every = self.output_every;
        if !(every.is_finite() && every >= 0.0) {
            bad(
                "output_every",
                format!(
                    "output interval {} must be finite and not negative",
                    r(every)
                ),
            );
        } else if every > 0.0 && end_ok && every < floor {
            bad(
                "output_every",
                format!(
                    "output interval {} is below what the time resolves at t = {} ({floor:.1e})",
                    r(every),
                    r(self.end),
                ),
            );
        } else if every > 0.0 && end_ok && self.end / every > MAX_ROWS {
            bad(
                "output_every",
                format!(
                    "{} result rows to t = {} (more than {}): a longer output interval",
                    r((self.end / every).ceil()),
                    r(self.end),
                    r(MAX_ROWS)
                ),
            );
        }
    }

    /// The integrator's and Newton's settings.
    fn solver_problems(&self, out: &mut Vec<SettingError>) {
        let mut bad = |key: &'static str, message: String| out.push(SettingError { key, message });
        let pos = |x: f64| x.is_finite() && x > 0.0;
        let r = readable;
        let every = self.output_every;
        let step_ok = pos(self.step);
        if !(-1.0 / 3.0 - 1e-12..=0.0).contains(&self.alpha) {
            bad(
                "alpha",
                format!("HHT alpha {} must lie in [-1/3, 0]", r(self.alpha)),
            );
        }
        if let Some(rho) = self.rho_inf {
            if !(0.0..=1.0).contains(&rho) {
                bad("rho_inf", format!("rho_inf {} must lie in [0, 1]", r(rho)));
            } else if self.form == Form::Negrut {
                bad(
                    "rho_inf",
                    "rho_inf needs the arnold_bruls form: the negrut form is HHT with alpha only"
                        .into(),
                );
            }
        }
        if let Some(tol) = self.adaptive.filter(|&t| !pos(t)) {
            bad(
                "adaptive",
                format!("error tolerance {} must be positive", r(tol)),
            );
        }
        if let Some(atol) = self.atol.filter(|&t| !pos(t)) {
            bad(
                "atol",
                format!("absolute tolerance {} must be positive", r(atol)),
            );
        }
        let min_ok = self.step_min >= 0.0 && self.step_min.is_finite();
        let max_ok = !self.step_max.is_nan() && self.step_max > 0.0;
        if !min_ok {
            bad(
                "step_min",
                format!(
                    "minimum step {} must be finite and not negative",
                    r(self.step_min)
                ),
            );
        } else if step_ok && self.step_min > self.step {
            bad(
                "step_min",
                format!(
                    "minimum step {} is longer than the step {}",
                    r(self.step_min),
                    r(self.step)
                ),
            );
        } else if max_ok && self.step_min > self.step_max {
            bad(
                "step_min",
                format!(
                    "minimum step {} is longer than the maximum step {}",
                    r(self.step_min),
                    r(self.step_max)
                ),
            );
        } else if every > 0.0 && every.is_finite() && every < self.step_min {
            bad(
                "output_every",
                format!(
                    "output interval {} is shorter than the minimum step {}",
                    r(every),
                    r(self.step_min)
                ),
            );
        }
        if !max_ok {
            bad(
                "step_max",
                format!("maximum step {} must be positive", r(self.step_max)),
            );
        }
        match self.newton {
            Newton::Velocity { tol } if !pos(tol) => bad(
                "newton",
                format!("Newton tolerance {} must be positive", r(tol)),
            ),
            Newton::Fixed(0) => bad(
                "newton",
                "fixed Newton needs at least one correction".into(),
            ),
            Newton::Fixed(n) if n > MAX_FIXED_NEWTON => bad(
                "newton",
                format!("fixed({n}): at most {MAX_FIXED_NEWTON} corrections per step"),
            ),
            _ => {}
        }
        if self.matrix_steps == 0 {
            bad(
                "matrix_steps",
                "matrix_steps must be at least 1 (1: a new matrix every step)".into(),
            );
        }
        if self.max_newton_iterations == 0 {
            bad(
                "max_newton_iterations",
                "max_newton_iterations must be at least 1".into(),
            );
        }
    }

    /// The defaults of the `simulate` keys, one `key = value  (meaning)` per line, from
    /// [`Settings::default`] (the text of `fdc run --help`).
    pub fn defaults_help() -> String {
        let d = Settings::default();
        let newton = match d.newton {
            Newton::Velocity { tol } => format!("velocity({tol:e})"),
            Newton::Legacy => "legacy".into(),
            Newton::Fixed(n) => format!("fixed({n})"),
        };
        let lines = [
            ("end", format!("{}", d.end), "end time [s]"),
            ("step", format!("{:e}", d.step), "(initial) step [s]"),
            (
                "output_every",
                format!("{:e}", d.output_every),
                "row interval [s]",
            ),
            (
                "output_exact",
                format!("{}", d.output_exact),
                "land on output times (else interpolate)",
            ),
            (
                "alpha",
                format!("{}", d.alpha),
                "HHT alpha in [-1/3, 0]; <= -0.005 with constraints",
            ),
            (
                "rho_inf",
                "off".into(),
                "generalized-alpha rho_inf in [0, 1] (instead of alpha)",
            ),
            ("form", "arnold_bruls".into(), "HHT form"),
            ("newton", newton, "Newton stopping rule"),
            (
                "max_newton_iterations",
                format!("{}", d.max_newton_iterations),
                "before a step is rejected",
            ),
            (
                "adaptive",
                "off".into(),
                "error tolerance of the step control (rtol)",
            ),
            (
                "atol",
                "rtol".into(),
                "absolute tolerance of the error weights",
            ),
            (
                "step_min",
                format!("{:e}", d.step_min),
                "smallest step [s] (at most `step`)",
            ),
            ("step_max", "unbounded".into(), "largest step [s]"),
            ("linear_solver", "sparse".into(), "sparse or dense LU"),
            (
                "assemble",
                format!("{}", d.assemble),
                "close the constraints at t = 0",
            ),
        ];
        let mut s = String::from("Defaults of the simulate settings (docs/language.md §7):\n");
        for (k, v, what) in lines {
            s.push_str(&format!("  {k:<22}{v:<16}{what}\n"));
        }
        s
    }

    /// The most steps one iteration matrix serves: [`Settings::matrix_steps`] with
    /// the velocity criterion and `keep_matrix`, else 1.
    pub fn matrix_steps_limit(&self) -> usize {
        match (self.newton, self.keep_matrix) {
            (Newton::Legacy, _) | (_, false) => 1,
            (Newton::Velocity { .. }, _) => self.matrix_steps,
            // Real time: the same work in every step; and two corrections on an older
            // matrix are not accurate (docs/performance.md "Matrix kept across steps").
            (Newton::Fixed(_), _) => 1,
        }
    }

    /// Newmark β and γ of the scheme (HHT's for α, or generalized-α's for ρ∞).
    pub fn beta_gamma(&self) -> (f64, f64) {
        let s = self.scheme();
        (s.beta, s.gamma)
    }

    /// The time integration scheme these settings select (docs/runtime.md "Numerical
    /// damping").
    pub fn scheme(&self) -> Scheme {
        match self.rho_inf {
            Some(rho) => Scheme::generalized_alpha(rho),
            None => Scheme::hht(self.alpha),
        }
    }
}

/// A generalized-α scheme: Newmark with β, γ on the pseudo-acceleration a, which
/// follows (1 − α_m) a_{n+1} + α_m a_n = (1 − α_f) v̇_{n+1} + α_f v̇_n (Arnold–Brüls
/// 2007; Chung–Hulbert 1993 with their α_m, α_f). HHT is α_m = 0, α_f = −α.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scheme {
    pub alpha_m: f64,
    pub alpha_f: f64,
    pub beta: f64,
    pub gamma: f64,
}

impl Scheme {
    /// HHT α ∈ [−1/3, 0]: β = (1 − α)²/4, γ = ½ − α.
    pub fn hht(alpha: f64) -> Scheme {
        Scheme {
            alpha_m: 0.0,
            alpha_f: -alpha,
            beta: 0.25 * (1.0 - alpha) * (1.0 - alpha),
            gamma: 0.5 - alpha,
        }
    }

    /// Chung–Hulbert's optimal parameters for the spectral radius ρ∞ at infinity:
    /// α_m = (2ρ∞ − 1)/(ρ∞ + 1), α_f = ρ∞/(ρ∞ + 1), γ = ½ + α_f − α_m,
    /// β = ¼ (γ + ½)² (second order, unconditionally stable, high-frequency damping
    /// maximal for the low-frequency damping).
    pub fn generalized_alpha(rho: f64) -> Scheme {
        let alpha_m = (2.0 * rho - 1.0) / (rho + 1.0);
        let alpha_f = rho / (rho + 1.0);
        let gamma = 0.5 + alpha_f - alpha_m;
        Scheme {
            alpha_m,
            alpha_f,
            beta: 0.25 * (gamma + 0.5) * (gamma + 0.5),
            gamma,
        }
    }

    /// ∂a_{n+1}/∂v̇_{n+1} = (1 − α_f)/(1 − α_m) (1 + α for HHT).
    pub fn kappa(&self) -> f64 {
        (1.0 - self.alpha_f) / (1.0 - self.alpha_m)
    }

    /// δ = α_m − α_f: a_n approximates q̈(t_n + δh) (α for HHT; docs/runtime.md).
    pub fn delta(&self) -> f64 {
        self.alpha_m - self.alpha_f
    }

    /// The spectral radius at infinity: ρ∞ for generalized-α, (1 + α)/(1 − α) for HHT
    /// (the non-trivial eigenvalue of the amplification matrix as ωh → ∞).
    pub fn rho_inf(&self) -> f64 {
        // The two families meet at α_m = 0, α_f = 1/3, where both formulas give ½.
        if self.alpha_m == 0.0 {
            (1.0 - self.alpha_f) / (1.0 + self.alpha_f)
        } else {
            (self.alpha_f / (1.0 - self.alpha_f)).min(1.0)
        }
    }
}
