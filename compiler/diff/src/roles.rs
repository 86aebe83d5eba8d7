//! The roles of an element type and the layout of their outputs. These mirror
//! `fdc_runtime::table::{Role, Block}` with the same meaning (this crate must not
//! depend on the runtime); the driver maps one onto the other.

use fdc_ir::Func;
use std::fmt;

/// The functions generated per element type (theory §2); see `runtime/src/table.rs`
/// for the output blocks of each.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Role {
    /// [r_dyn (nv); r_con (nl); f (nv)], all dense.
    Res,
    /// Sparse (nv+nl)² = ∂r/∂v̇ + γ′h ∂r/∂v + β′h² (∂r/∂δ) T(Δ) | ∂r/∂λ.
    Iter,
    /// As `Iter`, without the derivatives of the gyroscopic loads.
    IterNoqv,
    /// [M sparse nv×nv; B sparse nl×nv; Q−h; Φ; Φ_t; acceleration rhs].
    Ic,
    /// [q₀ (nq); v₀ (nv)] (owners only).
    Init,
    /// q∘exp(Δ) (nq) (owners only).
    Update,
    /// Magnitude per velocity dof (nv) (owners only).
    Scale,
    /// Result channels.
    Out,
    /// New values of the state parameters.
    Post,
}

impl Role {
    pub fn name(self) -> &'static str {
        match self {
            Role::Res => "res",
            Role::Iter => "iter",
            Role::IterNoqv => "iter_noqv",
            Role::Ic => "ic",
            Role::Init => "init",
            Role::Update => "update",
            Role::Scale => "scale",
            Role::Out => "out",
            Role::Post => "post",
        }
    }
}

/// One part of a role's output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Block {
    /// `len` consecutive values.
    Dense { len: usize },
    /// A sparse `rows × cols` matrix; `entries[k] = (row, col)` of output value k.
    Sparse {
        rows: usize,
        cols: usize,
        entries: Vec<(u32, u32)>,
    },
}

impl Block {
    pub fn len(&self) -> usize {
        match self {
            Block::Dense { len } => *len,
            Block::Sparse { entries, .. } => entries.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Everything generated for one element type. All `Func`s live in the graph given to
/// the builder and contain no symbols.
#[derive(Clone, Debug)]
pub struct ElementFunctions {
    pub name: String,
    pub nq: usize,
    pub nv: usize,
    pub nl: usize,
    pub np: usize,
    pub owns_coordinates: bool,
    /// Names of the `Out` channels, in output order.
    pub outputs: Vec<String>,
    /// Names of the multipliers (constraint rows), in order.
    pub multipliers: Vec<String>,
    /// Parameter indices that `Post` overwrites, in output order.
    pub state_params: Vec<usize>,
    pub roles: Vec<(Role, Func, Vec<Block>)>,
}

impl ElementFunctions {
    pub fn role(&self, role: Role) -> Option<(&Func, &[Block])> {
        self.roles
            .iter()
            .find(|(r, _, _)| *r == role)
            .map(|(_, f, b)| (f, b.as_slice()))
    }
}

/// Why an element type could not be built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiffError {
    pub element: String,
    pub message: String,
}

impl fmt::Display for DiffError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "element `{}`: {}", self.element, self.message)
    }
}

impl std::error::Error for DiffError {}
