//! The factorized iteration matrix a step may start on (modified Newton across steps,
//! `Settings::matrix_steps`): what it was made for, its age, and what the rules that
//! decide whether it serves the next step remember of it.

use super::*;

/// The factorized iteration matrix as the step loop keeps it from step to step
/// ([`Settings::matrix_steps`]): the solver's factors are those of `jv` at the
/// coefficients `c`, and have served `age` steps (the current one included).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct Kept {
    pub valid: bool,
    /// [α′, β′, γ′, h] of the matrix ([`Coefficients::abi`]) and `iter_noqv`.
    pub c: [f64; 4],
    pub noqv: bool,
    pub age: usize,
    /// The cost rule's memory (`Settings::matrix_rule`), kept across matrices.
    pub ledger: matrix_cost::Ledger,
    /// [`System::roundoff_reach`] per unit floor, a property of the factors alone:
    /// computed at the matrix's first reuse (not part of a snapshot: a restored
    /// matrix has the same factors bit for bit, so it computes the same value).
    pub reach: Option<f64>,
    /// The largest contraction rate of the corrections in the last step that ran on
    /// this matrix from start to end (0 before its first reuse): what
    /// [`Kept::next_rate`] projects.
    pub rate: f64,
}

impl Kept {
    /// Whether the step with coefficients `c` may start on the kept matrix: the same
    /// β′, γ′ and matrix role, h within the round-off of a landing step (an output time
    /// is reached with h = t_stop − t), younger than the limit.
    pub(super) fn serves(&self, settings: &Settings, c: &Coefficients) -> bool {
        let [alpha, beta, gamma, h] = self.c;
        self.valid
            && self.age < settings.matrix_steps_limit()
            && self.noqv == settings.iter_noqv
            && [alpha, beta, gamma] == [c.alpha, c.beta, c.gamma]
            && (h - c.h).abs() <= 1e-9 * c.h
    }

    /// The contraction rate the next step on this matrix may expect. Modified Newton
    /// contracts at about ‖J⁻¹ (J_now − J)‖, and the state drifts from the matrix's
    /// step by step: a step at age a (a − 1 steps after the matrix was made) that
    /// contracted at θ has a successor at a steps, so θ · a / (a − 1). 0 (unknown)
    /// before the first reuse. On the 1,000-rod chain the largest rate of a second
    /// reuse was 1.8–2× that of the first (docs/runtime.md "Modified Newton").
    pub(super) fn next_rate(&self) -> f64 {
        if self.age < 2 {
            return 0.0;
        }
        self.rate * self.age as f64 / (self.age - 1) as f64
    }
}
