//! Symbolic differentiation on the IR DAG and the construction of every element role.
//!
//! Knows: forward/reverse differentiation with structural sparsity, derivatives on the
//! Lie group R³×SO(3) along q∘exp(δ), the tangent operator, the memoized chain rule
//! through symbols, and the roles of theory §2 (res, iter, iter_noqv, ic, init,
//! update, scale, out, post).
//!
//! **Architecture invariant:** depends only on `fdc-ir`. No finite differences: every
//! derivative is exact.
