//! The assembled system and the HHT integrator (theory §6–§9).
//!
//! Global unknowns of a step are x = [v̇; λ] (n_v + n_l); residual rows use the same
//! numbering, so one map per element serves rows and columns. All work arrays are
//! allocated in [`System::new`]; a time step only moves numbers.
//!
//! One job per file: `setup` (checks, maps, patterns), `eval` (element calls and
//! assembly), `ic` (initial conditions), `newton` (one attempt of a step),
//! `assemble` (initial position assembly), `given` (coordinates held as written), `step_control` (accepting, step size, output grid, `run`), `output` (rows and
//! statistics), `culprit` (failure messages), `linearize` (eigenmodes), `state` (snapshots).

use crate::assembly::Pattern;
use crate::error::{quoted, Culprit, RuntimeError, SimError, SimErrorKind};
use crate::linear::{make_solver, LinearSolver, LinearSolverKind, SolverMemory};
use crate::model::{Model, RuntimeInput};
use crate::settings::{
    ErrorWeights, Form, MatrixRule, Newton, Predictor, Settings, StepControl, KEEP_MATRIX_RATE,
    LEGACY_DEFAULT_EPS,
};
use crate::table::{Block, ElementType, FunctionTable, Role, ABI_VERSION};
use std::ops::Range;
use std::time::Instant;

/// Threshold of the initial position check ‖Φ(q₀, 0)‖∞.
pub const POSITION_TOL: f64 = 1e-10;

struct Inst {
    name: String,
    ty: usize,
    params: Vec<f64>,
    q_map: Vec<usize>,
    v_map: Vec<usize>,
    lambda_map: Vec<usize>,
    /// Local unknown [v̇; λ] → global unknown.
    x_map: Vec<usize>,
    /// Where `q_map`, `v_map`, `lambda_map` and `x_map` are one run of consecutive
    /// global indices (a body's own coordinates): its first index
    /// ([`eval::contiguous`]). Such a map is read in place and added to as a slice
    /// instead of entry by entry through the indices.
    q_start: Option<usize>,
    v_start: Option<usize>,
    lambda_start: Option<usize>,
    x_start: Option<usize>,
    /// The instance's entries in `System::iter_entries` (`Iter`) and `noqv_entries`
    /// (`IterNoqv`; empty if the type has none).
    iter_at: Range<usize>,
    noqv_at: Range<usize>,
    /// Value indices in the initial-condition matrix of the M, B and Bᵀ entries.
    ic_m_pos: Vec<usize>,
    ic_b_pos: Vec<usize>,
    ic_bt_pos: Vec<usize>,
    ic_b_pos_all: Vec<usize>,
}

/// Local gather buffers and the role output, sized for the largest element type.
struct Scratch {
    q: Vec<f64>,
    v: Vec<f64>,
    vd: Vec<f64>,
    l: Vec<f64>,
    d: Vec<f64>,
    out: Vec<f64>,
}

/// Global arrays an element call reads from.
struct View<'a> {
    q: &'a [f64],
    v: &'a [f64],
    vd: &'a [f64],
    lam: &'a [f64],
    delta: &'a [f64],
    t: f64,
}

/// The accepted state as element inputs (δ = 0). A macro rather than a method so that
/// the borrows stay field by field and other fields can be written meanwhile.
macro_rules! accepted_view {
    ($s:expr) => {
        View {
            q: &$s.q,
            v: &$s.v,
            vd: &$s.vd,
            lam: &$s.lam,
            delta: &$s.zeros_v,
            t: $s.t,
        }
    };
}

/// A Newton iterate at t_{n+1} as element inputs: configuration `q` (the trial one,
/// or the last accepted for the update role), trial velocities, and v̇, λ from the
/// unknowns `x`.
macro_rules! trial_view {
    ($s:expr, $q:expr) => {
        View {
            q: $q,
            v: &$s.vt,
            vd: &$s.x[..$s.nv],
            lam: &$s.x[$s.nv..],
            delta: &$s.delta,
            t: $s.t_new,
        }
    };
}

enum Outcome {
    /// `err`: the normalized local error (0 without `adaptive`).
    Accepted { err: f64 },
    /// `singular`: the iteration matrix was singular at this unknown; `err`: the
    /// normalized local error if the error test rejected the step.
    Rejected {
        cause: String,
        singular: Option<usize>,
        err: Option<f64>,
    },
}

/// A model ready to integrate.
pub struct System {
    table: FunctionTable,
    inst: Vec<Inst>,
    inputs: Vec<RuntimeInput>,
    nq: usize,
    nv: usize,
    nl: usize,
    labels: Vec<String>,
    channels: Vec<String>,
    s: Scratch,
    // accepted state
    t: f64,
    q: Vec<f64>,
    v: Vec<f64>,
    vd: Vec<f64>,
    lam: Vec<f64>,
    acc: Vec<f64>,
    f_n: Vec<f64>,
    scale_n: Vec<f64>,
    scale_max: Vec<f64>,
    zeros_v: Vec<f64>,
    /// [v̇; λ] of the accepted step before the last one, and the last step size (0
    /// before the first step): the linear predictor.
    x_prev: Vec<f64>,
    h_prev: f64,
    /// The linear predictor would have been closer than the constant one in the last
    /// step of the same size, for v̇ and for λ (each is extrapolated only then).
    extrapolate: [bool; 2],
    // trial state
    t_new: f64,
    x: Vec<f64>,
    qt: Vec<f64>,
    vt: Vec<f64>,
    delta: Vec<f64>,
    delta_pred: Vec<f64>,
    v_pred: Vec<f64>,
    r: Vec<f64>,
    f: Vec<f64>,
    dx: Vec<f64>,
    scale_t: Vec<f64>,
    w: Vec<f64>,
    /// Scratch of the error estimate ([nv + nl] each): the velocity error and the
    /// tangential acceleration (`newton.rs` `velocity_error`).
    err_v: Vec<f64>,
    acc_t: Vec<f64>,
    // matrices
    jp: Pattern,
    jv: Vec<f64>,
    /// Where every instance's `Iter` and `IterNoqv` entries go in `jv`.
    iter_entries: MatrixEntries,
    noqv_entries: MatrixEntries,
    js: Option<Box<dyn LinearSolver>>,
    icp: Pattern,
    icv: Vec<f64>,
    ics: Option<Box<dyn LinearSolver>>,
    solver_kind: Option<LinearSolverKind>,
    ic_rhs: Vec<f64>,
    ic_phi: Vec<f64>,
    ic_g: Vec<f64>,
    ic_acc: Vec<f64>,
    row: Vec<f64>,
    /// The channels each model total (`totals`) adds up; their values follow the
    /// instances' channels in `row`.
    totals: Vec<Vec<usize>>,
    /// Constraint rows found dependent at the initial configuration (λ fixed at 0).
    removed: Vec<bool>,
    warnings: Vec<String>,
    initialized: bool,
    /// Watches the accepted states for divergence.
    monitor: diverge::Monitor,
    h: f64,
    /// The step size controller's memory.
    ctrl: step_control::Control,
    /// The factorized iteration matrix kept across steps (`kept.rs`).
    kept: kept::Kept,
    /// The counted costs of a factorization and a correction (`matrix_cost.rs`).
    costs: matrix_cost::Costs,
    /// The sparse LU keeps its pivot order (real time: fixed Newton, fixed steps).
    real_time: bool,
    /// Rows between steps.
    dense: dense::Dense,
    stats: RunStats,
    step_times: Vec<f64>,
    /// Largest correction per body of the initial position assembly.
    corrections: Vec<assemble::Correction>,
    /// The fingerprint of the model's structure that snapshots carry (`state.rs`).
    identity: u64,
    /// Data roads: tangent planes written into the tyres' slots (`road_feed.rs`).
    roads: road_feed::Feed,
    /// Force elements whose loads are extra channels (`with_loads`; none by default).
    loads: Vec<loads::Load>,
    /// The fused pass (`eval.rs`): at the start of a step that factorizes a new matrix,
    /// one `ResIter` call per instance gives the predictor's residual and that matrix
    /// (on by default; [`System::set_fused_roles`]).
    fused: bool,
    /// The coefficients and `noqv` of the iteration matrix the fused pass left in `jv`
    /// at the current trial state; `trial_state` forgets it, `assemble_iter` takes it.
    matrix_at: Option<([f64; 4], bool)>,
    /// Fused passes since the system was made (not part of a snapshot).
    fused_passes: usize,
}

fn inf_norm(x: &[f64]) -> f64 {
    x.iter().fold(0.0, |m, &a| m.max(a.abs()))
}

fn two_norm(x: &[f64]) -> f64 {
    x.iter().map(|a| a * a).sum::<f64>().sqrt()
}

mod assemble;
mod culprit;
mod dense;
mod diverge;
mod entries;
mod eval;
mod given;
mod ic;
mod kept;
pub mod linearize;
mod loads;
mod matrix_cost;
mod mode_shape;
mod newton;
mod output;
mod redundant;
mod road_feed;
mod setup;
mod state;
mod step_control;
mod totals;

pub use assemble::Correction;
use entries::MatrixEntries;
use eval::{call, role_label, update_bodies, Coefficients};
pub use loads::LoadChannel;
pub use output::{MemorySink, ResultSink, RunStats, StepReport, TimingStats, MAX_TIMED_STEPS};
/// The redundancy test, for counting degrees of freedom before a run (`fdc check`).
pub use redundant::redundant_rows;
use setup::sparse_entries;
pub use state::State;

impl System {
    pub fn nq(&self) -> usize {
        self.nq
    }

    pub fn nv(&self) -> usize {
        self.nv
    }

    pub fn nl(&self) -> usize {
        self.nl
    }

    pub fn time(&self) -> f64 {
        self.t
    }

    /// Stored coordinates of the accepted state.
    pub fn q(&self) -> &[f64] {
        &self.q
    }

    pub fn v(&self) -> &[f64] {
        &self.v
    }

    pub fn vdot(&self) -> &[f64] {
        &self.vd
    }

    pub fn lambda(&self) -> &[f64] {
        &self.lam
    }

    /// Statistics of the steps since `initialize`.
    pub fn stats(&self) -> RunStats {
        self.final_stats()
    }

    /// Factorizations of the iteration matrix that chose a new pivot order so far
    /// (cheap: no allocation).
    pub fn full_factorizations(&self) -> usize {
        self.js.as_ref().map_or(0, |j| j.full_factorizations())
    }

    /// Nonzeros of the sparse LU factors of the iteration matrix (0 for dense).
    pub fn factor_nnz(&self) -> usize {
        self.js.as_ref().map_or(0, |j| j.factor_nnz())
    }

    /// Number of nonzeros of the iteration matrix pattern.
    pub fn iteration_nnz(&self) -> usize {
        self.jp.nnz()
    }

    /// Current parameter values of an instance (state parameters change after steps).
    pub fn params(&self, instance: usize) -> Option<&[f64]> {
        self.inst.get(instance).map(|e| e.params.as_slice())
    }

    pub fn input_index(&self, name: &str) -> Option<usize> {
        self.inputs.iter().position(|i| i.name == name)
    }

    /// Writes an input value into its parameter slots; seen by the next evaluation.
    /// An index that does not exist is ignored. A changed value drops the iteration
    /// matrix kept across steps (an input may be a mass or a stiffness: the next step
    /// factorizes the matrix of the new value).
    pub fn set_input(&mut self, i: usize, value: f64) {
        if let Some(input) = self.inputs.get(i) {
            for &(e, p) in &input.targets {
                let slot = &mut self.inst[e].params[p];
                if slot.to_bits() != value.to_bits() {
                    self.kept.valid = false;
                }
                *slot = value;
            }
        }
    }

    /// Whether the start of a step evaluates the residual and the iteration matrix in
    /// one `ResIter` call per instance (where the type has it), or in a `Res` and an
    /// `Iter` call. Both give the same bits, so the run is the same; off is the
    /// reference of the tests and the benchmark.
    pub fn set_fused_roles(&mut self, on: bool) {
        self.fused = on;
    }

    /// How many evaluations gave the residual and the iteration matrix together (the
    /// fused pass) since the system was made.
    pub fn fused_passes(&self) -> usize {
        self.fused_passes
    }

    /// `<instance>.<output>` for every `Out` output, then `<instance>.<multiplier>`,
    /// instance by instance; `time` is not included.
    pub fn channel_names(&self) -> Vec<String> {
        self.channels.clone()
    }

    fn ensure_solvers(&mut self, kind: LinearSolverKind) {
        if self.solver_kind != Some(kind) {
            let mut js = make_solver(kind, &self.jp);
            js.allow_diagonal_order();
            self.js = Some(js);
            self.ics = Some(make_solver(kind, &self.icp));
            self.solver_kind = Some(kind);
        }
    }

    fn sim_error(&self, kind: SimErrorKind) -> SimError {
        SimError {
            t: self.t,
            kind,
            stats: self.final_stats(),
        }
    }
}
