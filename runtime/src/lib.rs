//! The fdc runtime: integrates a multibody model given only as element functions.
//!
//! Knows: the function table ([`table`]) of element types with their roles and
//! sparsity, element instances with parameters and local-to-global index maps, sparse
//! assembly, linear solvers, HHT (Arnold–Brüls and Negrut), Newton, initial
//! conditions, step size control and outputs.
//!
//! **Architecture invariant:** the runtime depends on no compiler crate and knows no
//! physics. It never sees an expression; it calls function pointers of the fixed
//! signature `(q, v, v̇, λ, p, c, Δ, t) -> out` and adds numbers at precomputed places.

pub mod table;
