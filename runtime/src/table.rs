//! The function table: the one narrow interface between compiler and runtime.
//!
//! For every element *type* the compiler produces one native function per [`Role`].
//! All roles share one signature: eight input arrays and one output array,
//!
//! ```text
//! f(q, v, vdot, lambda, p, c, delta, t, out)
//! ```
//!
//! with local numbering: `q` the stored coordinates of the connected bodies (or of the
//! element itself), `v`, `vdot` and `delta` one entry per velocity dof, `lambda` the
//! element's own multipliers, `p` its parameters, `c = (α′, β′, γ′, h)`, `t` one entry.
//! The output is a sequence of [`Block`]s: dense vectors or sparse matrices whose
//! nonzeros are listed in output order. Generated functions allocate nothing.

use std::any::Any;
use std::sync::Arc;

/// Bumped whenever the signature, the roles or their block layout change. The
/// runtime refuses a table built for another version.
pub const ABI_VERSION: u32 = 1;

/// The native signature of every role. Every pointer is valid for the sizes the
/// element type declares; `out` for the role's output length.
pub type ElementFn = unsafe extern "C" fn(
    q: *const f64,
    v: *const f64,
    vdot: *const f64,
    lambda: *const f64,
    p: *const f64,
    c: *const f64,
    delta: *const f64,
    t: *const f64,
    out: *mut f64,
);

/// The functions generated per element type (theory §2). Output layout of each, with
/// `nv`, `nl`, `nq` the local sizes of the element type:
///
/// | role | output blocks |
/// |---|---|
/// | `Res` | dense `r_dyn` (nv), dense `r_con` (nl), dense `f` (nv) |
/// | `Iter` | sparse J (nv+nl)×(nv+nl) = ∂r/∂v̇ + γ′h ∂r/∂v + β′h² ∂r/∂δ T(Δ) \| ∂r/∂λ |
/// | `IterNoqv` | as `Iter`, without the derivatives of the gyroscopic terms |
/// | `Ic` | sparse M (nv×nv), sparse B (nl×nv), dense Q−h (nv), dense Φ (nl), dense Φ_t (nl), dense acceleration right-hand side −(∂(Bv)/∂δ)v − 2(Bv)_t − Φ_tt (nl) |
/// | `Init` | dense q₀ (nq), dense v₀ (nv) from the parameters (owners only) |
/// | `Update` | dense q∘exp(Δ) (nq) (owners only) |
/// | `Scale` | dense magnitude per velocity dof (nv) (owners only) |
/// | `Out` | dense result channels (`outputs.len()`) |
/// | `Post` | dense new values of the state parameters (`state_params.len()`) |
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Role {
    Res,
    Iter,
    IterNoqv,
    Ic,
    Init,
    Update,
    Scale,
    Out,
    Post,
}

impl Role {
    pub const ALL: [Role; 9] = [
        Role::Res,
        Role::Iter,
        Role::IterNoqv,
        Role::Ic,
        Role::Init,
        Role::Update,
        Role::Scale,
        Role::Out,
        Role::Post,
    ];

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

/// One role of one element type: a native function and the layout of its output.
#[derive(Clone, Debug)]
pub struct RoleFn {
    pub func: ElementFn,
    pub blocks: Vec<Block>,
}

impl RoleFn {
    pub fn output_len(&self) -> usize {
        self.blocks.iter().map(Block::len).sum()
    }
}

/// The local sizes and the roles of one element type.
#[derive(Clone, Debug)]
pub struct ElementType {
    pub name: String,
    /// Stored coordinates seen by the element (its own, or those of connected bodies).
    pub nq: usize,
    /// Velocity dofs seen by the element.
    pub nv: usize,
    /// Multipliers owned by the element (its constraint rows).
    pub nl: usize,
    /// Parameters of an instance.
    pub np: usize,
    /// True for bodies: the element owns its coordinates, so `Init`, `Update` and
    /// `Scale` exist and its instance maps point at its own global slots.
    pub owns_coordinates: bool,
    /// Names of the result channels of `Out`, e.g. `R.x`; the runtime prefixes the
    /// instance name (`rod.R.x`). An empty name is the instance's own channel.
    pub outputs: Vec<String>,
    /// Names of the multipliers (constraint rows), e.g. `tx.lambda`.
    pub multipliers: Vec<String>,
    /// Parameter indices that `Post` overwrites after every accepted step.
    pub state_params: Vec<usize>,
    /// Indexed by `Role as usize`; `None` where the role does not exist.
    pub roles: [Option<RoleFn>; 9],
}

impl ElementType {
    pub fn role(&self, role: Role) -> Option<&RoleFn> {
        self.roles[role as usize].as_ref()
    }
}

/// All element types of a model, and whatever owns their machine code.
#[derive(Clone)]
pub struct FunctionTable {
    pub abi_version: u32,
    pub types: Vec<ElementType>,
    /// Keeps the code alive (e.g. the JIT engine) as long as any pointer is in use.
    pub owner: Option<Arc<dyn Any + Send + Sync>>,
}

impl std::fmt::Debug for FunctionTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FunctionTable")
            .field("abi_version", &self.abi_version)
            .field("types", &self.types)
            .finish()
    }
}
