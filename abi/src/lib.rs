//! The one home of the contract between the compiler's generated functions and the
//! runtime that calls them: the native signature ([`ElementFn`]) with its input arrays
//! ([`Slot`]) and which of them a function reads ([`Reads`]), the roles ([`Role`])
//! and the layout of their outputs ([`Block`]), the coordinate layout of a body
//! ([`layout`]) and the version of all of it ([`ABI_VERSION`]).
//!
//! `fdc-diff` emits these types directly, the backend and the driver fill them in, and
//! the runtime re-exports them as `fdc_runtime::table`. This crate depends on nothing.
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
//!
//! `out` holds the longest output of the element type's roles, not only the called
//! role's: the compiler may serve a role by the function of another role whose output
//! begins with it (`Iter`, and a connector's `IterNoqv`, by `ResIter`, so that the
//! iteration matrix is compiled once), which writes on past the role's own output.

/// Bumped whenever the signature, the roles, their block layout or the [`layout`] of a
/// body change. The runtime refuses a table built for another version, and the
/// compiler's caches key on it.
pub const ABI_VERSION: u32 = 2;

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

/// The eight input arrays of [`ElementFn`], in signature order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Slot {
    /// Stored coordinates of the connected bodies (local numbering).
    Q = 0,
    /// Velocity dofs.
    V = 1,
    /// Accelerations v̇.
    Vdot = 2,
    /// Multipliers λ owned by the element.
    Lambda = 3,
    /// Parameters of the instance.
    P = 4,
    /// Effective integrator coefficients c = (α′, β′, γ′, h).
    C = 5,
    /// Configuration increment Δ of the step (one entry per velocity dof).
    Delta = 6,
    /// Time t (one entry).
    T = 7,
}

impl Slot {
    pub const ALL: [Slot; 8] = [
        Slot::Q,
        Slot::V,
        Slot::Vdot,
        Slot::Lambda,
        Slot::P,
        Slot::C,
        Slot::Delta,
        Slot::T,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Slot::Q => "q",
            Slot::V => "v",
            Slot::Vdot => "vdot",
            Slot::Lambda => "lambda",
            Slot::P => "p",
            Slot::C => "c",
            Slot::Delta => "delta",
            Slot::T => "t",
        }
    }
}

/// The input arrays a function reads, one bit per [`Slot`]. Every pointer must still be
/// valid; an array a role does not read may hold anything, so the runtime gathers an
/// instance's local copy of an array only for the roles that read it (a joint's
/// residual reads neither v nor v̇ nor Δ, a body's update only q and Δ).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reads(u8);

impl Reads {
    /// Every array (for functions whose inputs are not known).
    pub const ALL: Reads = Reads(u8::MAX);
    pub const NONE: Reads = Reads(0);

    /// These reads and `slot`.
    pub const fn with(self, slot: Slot) -> Reads {
        Reads(self.0 | 1 << slot as u8)
    }

    pub const fn has(self, slot: Slot) -> bool {
        self.0 & (1 << slot as u8) != 0
    }
}

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
/// | `ResIter` | the blocks of `Iter` then those of `Res`: both at one state in one call (the start of a step needs both; they share most of their operations) |
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
    ResIter,
}

impl Role {
    /// Every role, in the order of their discriminants (`Role::ALL[r as usize] == r`).
    pub const ALL: [Role; 10] = [
        Role::Res,
        Role::Iter,
        Role::IterNoqv,
        Role::Ic,
        Role::Init,
        Role::Update,
        Role::Scale,
        Role::Out,
        Role::Post,
        Role::ResIter,
    ];

    /// The role's name in generated symbols, `fdc ir --role` and the cache.
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
            Role::ResIter => "res_iter",
        }
    }

    /// The role called `name` ([`Role::name`]).
    pub fn from_name(name: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|r| r.name() == name)
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

/// The coordinate layout of a body, as the generated code and the runtime see it.
///
/// A rigid body stores q = [R; θ]: the position R (3) and a unit quaternion θ, scalar
/// first (4); its velocities are v = [Ṙ; ω̄] (6, ω̄ in body components). An
/// Euler-parameter body stores the same q but in a vector space, so v = q̇ (7).
pub mod layout {
    use std::ops::Range;

    /// Stored coordinates of a body (rigid or Euler-parameter).
    pub const BODY_NQ: usize = 7;
    /// Velocity dofs of a rigid body.
    pub const RIGID_NV: usize = 6;
    /// Velocity dofs of an Euler-parameter body (v = q̇).
    pub const EULER_NV: usize = BODY_NQ;
    /// Where the position R sits in q (and Ṙ in v).
    pub const POSITION: Range<usize> = 0..3;
    /// Where the quaternion θ sits in q (and θ̇ in v of an Euler-parameter body).
    pub const THETA: [usize; 4] = [3, 4, 5, 6];
    /// Where ω̄ sits in v of a rigid body.
    pub const OMEGA: Range<usize> = 3..6;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_is_in_discriminant_order_and_names_round_trip() {
        for (i, r) in Role::ALL.into_iter().enumerate() {
            assert_eq!(r as usize, i);
            assert_eq!(Role::from_name(r.name()), Some(r));
        }
        assert_eq!(Role::from_name("nope"), None);
    }

    #[test]
    fn layout_is_consistent() {
        assert_eq!(
            layout::POSITION.len() + layout::THETA.len(),
            layout::BODY_NQ
        );
        assert_eq!(layout::THETA[0], layout::POSITION.end);
        assert_eq!(layout::OMEGA.end, layout::RIGID_NV);
        let sparse = Block::Sparse {
            rows: 2,
            cols: 2,
            entries: vec![(0, 0), (1, 1)],
        };
        assert_eq!(
            (sparse.len(), Block::Dense { len: 0 }.is_empty()),
            (2, true)
        );
    }
}
