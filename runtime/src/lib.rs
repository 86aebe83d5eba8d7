//! The fdc runtime: integrates a multibody model given only as element functions.
//!
//! Knows: the function table ([`table`]) of element types with their roles and
//! sparsity, element instances with parameters and local-to-global index maps
//! ([`model`]), scatter assembly into a fixed sparse pattern ([`assembly`]), linear
//! solvers behind one trait ([`linear`]: sparse and dense LU from faer), HHT in the
//! Arnold–Brüls and Negrut forms with Newton (the iteration matrix kept within a step
//! while it contracts fast), initial conditions (with the removal of redundant
//! constraints, screened by a sparse LDLᵀ of B Bᵀ), step size control, real-time stepping and result channels
//! ([`system`]), and linearization about a state with eigenmodes (`System::linearize`,
//! theory §12). It must not know what an element is physically: only sizes, maps,
//! block layouts and the names of outputs and multipliers (for messages). On a failure
//! (a non-finite number, a singular matrix, a step below the minimum) it names the
//! element instance involved, re-evaluating element functions one by one on that path
//! only ([`Culprit`]).
//!
//! **Architecture invariant:** the runtime depends on no compiler crate and knows no
//! physics. It never sees an expression; it calls function pointers of the fixed
//! signature `(q, v, v̇, λ, p, c, Δ, t) -> out` and adds numbers at precomputed places.
//! A time step allocates nothing: every work array is made by [`System::new`] and
//! [`System::initialize`].

pub mod assembly;
pub mod error;
pub mod linear;
pub mod model;
pub mod settings;
pub mod system;
pub mod table;

pub use error::{Culprit, RuntimeError, SimError, SimErrorKind};
pub use linear::{LinearSolverKind, LuKernel};
pub use model::{quat_matrix, ElementInstance, Model, RoadContact, Roads, RuntimeInput};
pub use settings::{
    ErrorWeights, Form, MatrixRule, Newton, Predictor, Scheme, SettingError, Settings, StepControl,
};
pub use system::linearize::{BodyMotion, Linearization, Mode, ModeKind};
pub use system::{
    redundant_rows, Correction, LoadChannel, MemorySink, ResultSink, RunStats, State, StepReport,
    System, TimingStats,
};
