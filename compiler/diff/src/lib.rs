//! Symbolic differentiation on the IR DAG and the construction of every element role.
//!
//! Knows: forward differentiation with structural sparsity and the iteration matrix by
//! vertex elimination on the linearized DAG ([`ad`]), derivatives on
//! the Lie group R³×SO(3) along q∘exp(δ) (the rotation matrix of each connected body is
//! a symbol with the known derivative ∂A/∂δφ_m = A ẽ_m), the quaternion exponential and
//! the tangent operator ([`lie`]), the memoized chain rule (each shared node of the
//! hash-consed DAG is differentiated once), and the roles of theory §2 (res, iter,
//! iter_noqv, ic, init, update, scale, out, post) built from an element definition
//! ([`ElementBuilder`]): rigid bodies, Euler-parameter bodies (theory 3.3), connectors
//! between bodies of either kind, and vector-space elements with Lagrange's equations
//! from kinetic and potential energy (theory 3.1). An element's coordinates are a
//! [`Layout`] of blocks: rigid bodies (update q∘exp(δ)) and vector spaces (q + δ); a
//! connector sees each body through the same [`BodyKin`], whatever its kind.
//!
//! Must not know: the fd language (the front end's lowering calls the builder), the
//! runtime crate (roles and blocks are the ABI's types, `fdc-abi`, which the runtime
//! shares), LLVM, or simplification (the IR crate's job).
//!
//! **Architecture invariant:** depends only on `fdc-ir` and `fdc-abi`. No finite differences: every
//! derivative is exact. No DAG is ever walked as a tree.

pub mod ad;
mod element;
pub mod lie;
pub mod roles;
pub mod stored;

pub use ad::{op_count, Differ, Family, Grad, Layout, Seg};
pub use element::iteration::with_iteration_form;
pub use element::{rotation_sym, BodyKin, BodyKind, Coordinates, ElementBuilder, IterationForm};
pub use roles::{Block, DiffError, ElementFunctions, Role};
