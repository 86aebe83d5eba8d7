//! Errors of model setup, initial conditions and integration. Each names the element
//! instance (and its constraint row or dof) involved.

use std::fmt;

use crate::system::RunStats;

/// The element whose own output was the first non-finite number, found on the failure
/// path by calling the element functions one by one (an element whose inputs were
/// already non-finite is named only if no other is found).
#[derive(Clone, Debug, PartialEq)]
pub struct Culprit {
    /// Instance name.
    pub instance: String,
    /// What the function computes: "residual", "iteration matrix", "initial
    /// conditions", "initial values", "configuration update".
    pub role: &'static str,
}

impl fmt::Display for Culprit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "produced by the {} of `{}`", self.role, self.instance)
    }
}

/// `a`, `b` for instance names in messages.
pub(crate) fn quoted(names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn culprit_suffix(c: &Option<Culprit>) -> String {
    match c {
        Some(c) => format!(", {c}"),
        None => String::new(),
    }
}

/// Setup and initial-condition errors.
#[derive(Clone, Debug, PartialEq)]
pub enum RuntimeError {
    /// The function table was built for another ABI.
    AbiVersion { found: u32, expected: u32 },
    /// The model does not fit its function table (sizes, maps, missing roles).
    BadModel(String),
    /// Bad settings.
    BadSettings(String),
    /// Φ(q₀, 0) ≠ 0 in the named constraint row.
    InconsistentConfiguration {
        instance: String,
        row: String,
        residual: f64,
    },
    /// The initial position assembly could not close the constraints: the row with the
    /// largest remaining residual (`gap`) and the other instances left open.
    AssemblyFailed {
        instance: String,
        row: String,
        gap: f64,
        iterations: usize,
        others: Vec<String>,
    },
    /// Constraint rows that depend on others at the initial configuration (strict mode).
    RedundantConstraints { rows: Vec<String> },
    /// A time-dependent (rheonomic) constraint row, e.g. a driver's, that depends on
    /// other rows at the initial configuration: it demands a motion they forbid (or
    /// they forbid the one it prescribes); never dropped as redundant.
    ConflictingDriver {
        /// The elements with rheonomic rows in the dependent set.
        drivers: Vec<String>,
        /// The rows of the set (labels).
        rows: Vec<String>,
        /// The other elements of the set.
        joints: Vec<String>,
    },
    /// The velocity projection did not reach its tolerance.
    VelocityProjection { residual: f64 },
    /// The velocities held by `given` contradict a constraint: its velocity residual
    /// stays at `residual` whatever the other velocities are.
    GivenVelocities {
        given: Vec<String>,
        instance: String,
        row: String,
        residual: f64,
    },
    /// The initial-condition matrix [M Bᵀ; B 0] is singular at the named unknown;
    /// `elements` are the instances acting on it.
    Singular {
        unknown: String,
        elements: Vec<String>,
    },
    /// A non-finite number at the initial conditions, and the element that made it.
    NotFinite {
        unknown: String,
        culprit: Option<Culprit>,
    },
    /// `step` or `run` before `initialize`.
    NotInitialized,
    /// A snapshot that cannot be restored (another model, bytes that are no state).
    BadState(String),
}

impl fmt::Display for RuntimeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RuntimeError::AbiVersion { found, expected } => write!(
                f,
                "function table has ABI version {found}, the runtime needs {expected}; rebuild the model"
            ),
            RuntimeError::BadModel(m) => write!(f, "bad model: {m}"),
            RuntimeError::BadSettings(m) => write!(f, "bad settings: {m}"),
            RuntimeError::InconsistentConfiguration { instance, row, residual } => write!(
                f,
                "inconsistent initial configuration: constraint `{row}` of `{instance}` has residual {residual:.3e} (must be 0: fix the initial positions)"
            ),
            RuntimeError::AssemblyFailed { instance, row, gap, iterations, others } => {
                write!(
                    f,
                    "initial assembly failed: constraint `{row}` of `{instance}` keeps a gap of {gap:.3e} after {iterations} Gauss-Newton iterations"
                )?;
                if !others.is_empty() {
                    write!(f, " (also open: {})", quoted(others))?;
                }
                write!(
                    f,
                    "; the constraints cannot all hold: check the points and lengths of `{instance}` and its loop"
                )
            }
            RuntimeError::RedundantConstraints { rows } => write!(
                f,
                "redundant constraints (their Jacobian rows depend on the others at the initial configuration): {}",
                rows.join(", ")
            ),
            RuntimeError::ConflictingDriver {
                drivers,
                rows,
                joints,
            } => write!(
                f,
                "{} prescribes a motion that {} forbid{}: the time-dependent constraint rows depend on the others at the initial configuration ({}); a driven row is never dropped as redundant — drive a motion the joints leave free",
                quoted(drivers),
                if joints.is_empty() { "its own constraints".to_string() } else { quoted(joints) },
                if joints.len() == 1 { "s" } else { "" },
                rows.join(", ")
            ),
            RuntimeError::VelocityProjection { residual } => write!(
                f,
                "initial velocities: projection onto the constraints left a residual of {residual:.3e}"
            ),
            RuntimeError::GivenVelocities { given, instance, row, residual } => write!(
                f,
                "initial velocities: the given {} contradict{} constraint `{row}` of `{instance}` (its velocity residual stays {residual:.3e} whatever the other velocities are); give fewer velocities or values the constraints allow",
                quoted(given),
                if given.len() == 1 { "s" } else { "" },
            ),
            RuntimeError::Singular { unknown, elements } => write!(
                f,
                "initial conditions: the matrix [M B^T; B 0] is singular at {unknown} (elements acting on it: {}; redundant or conflicting constraints, or a dof without mass)",
                quoted(elements)
            ),
            RuntimeError::NotFinite { unknown, culprit } => write!(
                f,
                "initial conditions: non-finite value (NaN or infinity) at {unknown}{}",
                culprit_suffix(culprit)
            ),
            RuntimeError::NotInitialized => write!(f, "the system is not initialized"),
            RuntimeError::BadState(m) => write!(f, "cannot restore the state: {m}"),
        }
    }
}

impl std::error::Error for RuntimeError {}

/// Why a run ended early.
#[derive(Clone, Debug, PartialEq)]
pub enum SimErrorKind {
    /// Rejected steps (Newton divergence or error estimate) drove the step below h_min.
    StepBelowMinimum { h: f64, h_min: f64, cause: String },
    /// The iteration matrix stayed singular at the named unknown while the step to
    /// `t_trial` was halved down to the minimum; `elements` are the instances acting
    /// on it. `at_configuration`: [M Bᵀ; B 0] is singular at the configuration reached
    /// too (redundant or conflicting constraints there), else it became singular only
    /// along the way (the step is too large for the motion).
    Singular {
        unknown: String,
        elements: Vec<String>,
        t_trial: f64,
        at_configuration: bool,
    },
    /// The velocities or multipliers grew without bound: `unknown` grew most, by
    /// `growth` over its scale at the start; `cause` is the failure of the step
    /// control that revealed it, if any.
    Diverged {
        unknown: String,
        elements: Vec<String>,
        growth: f64,
        cause: Option<String>,
    },
    /// A residual, matrix entry or correction is NaN or infinite at the named unknown
    /// in the step to `t_trial`; `culprit` is the element that produced it (None when
    /// every element output was finite and the linear solve made it).
    NotFinite {
        unknown: String,
        t_trial: f64,
        culprit: Option<Culprit>,
    },
    /// Setup or settings error found when the run started.
    Setup(RuntimeError),
}

/// An integration error, with the time and the statistics of what ran.
#[derive(Clone, Debug, PartialEq)]
pub struct SimError {
    pub t: f64,
    pub kind: SimErrorKind,
    pub stats: RunStats,
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at t = {}: {}", self.t, self.kind)
    }
}

impl fmt::Display for SimErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimErrorKind::StepBelowMinimum { h, h_min, cause } => write!(
                f,
                "step size {h:.3e} below the minimum {h_min:.3e} ({cause})"
            ),
            SimErrorKind::Singular {
                unknown,
                elements,
                t_trial,
                at_configuration,
            } => {
                write!(
                    f,
                    "singular iteration matrix at {unknown} in the step to t = {t_trial} down to the minimum step (elements acting on it: {}; ",
                    quoted(elements)
                )?;
                if *at_configuration {
                    write!(f, "[M B^T; B 0] is singular at the configuration reached: redundant or conflicting constraints there, or a dof without mass)")
                } else {
                    write!(f, "[M B^T; B 0] is regular at the configuration reached, so the matrix became singular only along the way: reduce the step or add numerical damping)")
                }
            }
            SimErrorKind::Diverged {
                unknown,
                elements,
                growth,
                cause,
            } => {
                write!(
                    f,
                    "the solution diverged: {unknown} grew to {growth:.1e} times its scale at the start (elements acting on it: {}); reduce the step or add numerical damping (alpha closer to -1/3)",
                    quoted(elements)
                )?;
                match cause {
                    Some(c) => write!(f, "; it ended with: {c}"),
                    None => Ok(()),
                }
            }
            SimErrorKind::NotFinite {
                unknown,
                t_trial,
                culprit,
            } => {
                write!(
                    f,
                    "non-finite value (NaN or infinity) at {unknown} in the step to t = {t_trial}"
                )?;
                match culprit {
                    Some(c) => write!(f, ", {c}"),
                    None => write!(
                        f,
                        " (every element output was finite: the linear solve made it, the iteration matrix is nearly singular)"
                    ),
                }
            }
            SimErrorKind::Setup(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for SimError {}
