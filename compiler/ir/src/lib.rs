//! The expression IR of fdc: a hash-consed DAG of scalar `f64` operations.
//!
//! Knows: scalar arithmetic and elementary functions, the fixed input signature of an
//! element function `(q, v, v̇, λ, p, c, Δ, t)`, symbols (placeholders the
//! differentiation crate substitutes), spline tables (piecewise cubics a graph holds,
//! [`spline`]; the interpolation methods that fill them are the lowering's business), and how to evaluate ([`interp`]), print
//! ([`mod@print`], the stable text form snapshot tests use), count ([`stats`]) and
//! simplify ([`simplify`], an egg e-graph with IEEE-exact rules only) a DAG.
//!
//! **Architecture invariant:** nothing here knows LLVM, the fd language or physics.
//! Every pass is IR → IR and can be checked against [`interp`] (the interpreter).
//! Nodes are hash-consed: building the same operation twice returns the same [`Id`],
//! so common subexpressions are shared for free. Commutative operands are put in a
//! canonical order by the builder, never by a rewrite rule. The simplifier never
//! changes a result bit (a NaN may become another NaN); `docs/ir.md` lists its rules
//! and the ones left out.

mod build;
mod graph;
pub mod interp;
pub mod print;
pub mod simplify;
pub mod spline;
pub mod stats;
pub mod verify;

pub use build::{transpose, M3, V3};
pub use graph::{Cmp, Func, Graph, Id, Op, Slot, SlotSizes, Unary};
pub use spline::SplineTable;
