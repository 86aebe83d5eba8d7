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

/// First guess of the unknowns x = [v̇; λ] of a step (theory §7.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Predictor {
    /// The last accepted values x_n (the theory's predictor).
    #[default]
    Constant,
    /// 2 x_n − x_{n−1}, linear in time through the last two accepted steps, when they
    /// and this step have the same size and the extrapolation would have been the
    /// closer guess in the last step (separately for v̇ and λ); x_n otherwise. Its
    /// error is O(h²) instead of O(h), which saves the correction where the second one
    /// just misses the velocity criterion (issue 5's chain of 64: 2.9 → 2.0 per step).
    /// The states meet the tolerance as before, but the multipliers, which the
    /// criterion does not measure, stop about ten times farther from the converged
    /// ones; hence not the default.
    Linear,
}

/// Largest ratio of a Newton correction to the one before it (velocity criterion)
/// for which the next correction still uses the kept iteration matrix
/// (see [`Settings::keep_matrix`]); a slower contraction factorizes a new one.
pub const KEEP_MATRIX_RATE: f64 = 0.1;

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
    /// Initial position assembly: when the initial configuration does not satisfy
    /// the constraints, move it to the nearest one that does (`system/assemble.rs`);
    /// `false` keeps the position check only.
    pub assemble: bool,
    /// Bodies (instance names) whose initial coordinates the assembly keeps.
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
            predictor: Predictor::Constant,
            keep_matrix: true,
            assemble: true,
            given: Vec::new(),
        }
    }
}

impl Settings {
    /// Checks the numbers; a bad setting is an error, never a panic later.
    pub fn validate(&self) -> Result<(), String> {
        let pos = |x: f64| x.is_finite() && x > 0.0;
        if !(self.end.is_finite() && self.end >= 0.0) {
            return Err(format!(
                "end time {} must be finite and not negative",
                self.end
            ));
        }
        if !pos(self.step) {
            return Err(format!("step {} must be positive", self.step));
        }
        if !(self.output_every.is_finite() && self.output_every >= 0.0) {
            return Err(format!(
                "output interval {} must be finite and not negative",
                self.output_every
            ));
        }
        if !(-1.0 / 3.0 - 1e-12..=0.0).contains(&self.alpha) {
            return Err(format!("HHT alpha {} must lie in [-1/3, 0]", self.alpha));
        }
        if let Some(rho) = self.rho_inf {
            if !(0.0..=1.0).contains(&rho) {
                return Err(format!("rho_inf {rho} must lie in [0, 1]"));
            }
            if self.form == Form::Negrut {
                return Err(
                    "rho_inf needs the arnold_bruls form: the negrut form is HHT with alpha only"
                        .into(),
                );
            }
        }
        if let Some(tol) = self.adaptive {
            if !pos(tol) {
                return Err(format!("error tolerance {tol} must be positive"));
            }
        }
        if let Some(atol) = self.atol {
            if !pos(atol) {
                return Err(format!("absolute tolerance {atol} must be positive"));
            }
        }
        if !(self.step_min >= 0.0 && self.step_min <= self.step) {
            return Err(format!(
                "minimum step {} must lie in [0, step]",
                self.step_min
            ));
        }
        if self.output_every > 0.0 && self.output_every < self.step_min {
            return Err(format!(
                "output interval {} is shorter than the minimum step {}",
                self.output_every, self.step_min
            ));
        }
        if self.step_max.is_nan() || self.step_max <= 0.0 {
            return Err(format!("maximum step {} must be positive", self.step_max));
        }
        match self.newton {
            Newton::Velocity { tol } if !pos(tol) => {
                return Err(format!("Newton tolerance {tol} must be positive"))
            }
            Newton::Fixed(0) => return Err("fixed Newton needs at least one correction".into()),
            _ => {}
        }
        if self.max_newton_iterations == 0 {
            return Err("max_newton_iterations must be at least 1".into());
        }
        Ok(())
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
            ("alpha", format!("{}", d.alpha), "HHT alpha in [-1/3, 0]"),
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
