//! Whether a step starts on the last step's factorized iteration matrix, decided from
//! counted costs (`Settings::matrix_rule` = [`MatrixRule::Cost`]; docs/runtime.md
//! "Modified Newton").
//!
//! The costs are counts, never timings, so a rerun (and a run continued from a
//! snapshot) makes the same decisions bit for bit: the operations of the generated
//! functions as lowered (`RoleFn::ops`), the multiply-adds of the LU on its kept
//! pivot order (from its L/U patterns) and one per entry of the scatters and vector
//! loops. A step costs `factorizations × matrix + corrections × correction`.
//!
//! The rule is the renewal argument: a matrix's life is the step that factorized it
//! and the steps that reused it; its average cost per step falls with one more step
//! exactly when that step costs less than the average so far. So a kept matrix serves
//! the next step while the last step on it cost less than the average of its life
//! (the first reuse is always tried). A kept step costs more corrections than a new
//! matrix's (modified Newton contracts linearly), so the rule refreshes when those
//! extra corrections have cost more than a refactorization saves. When the first reuse
//! of a matrix did not pay (or the contraction rule replaced the matrix within that
//! step), reuse is not tried again for `wait` steps, doubling up to [`MAX_WAIT`]:
//! where keeping never pays (a model whose correction is dear against its
//! factorization) the tries cost a few corrections per [`MAX_WAIT`] steps.
//!
//! The counts cannot see that the next reuse will fail: a kept matrix contracts more
//! slowly with every step it ages, and a step whose contraction the rule of
//! `newton.rs` finds too slow pays its corrections on the old matrix and then a new
//! one. So a life also ends, before such a step, when the last step's rate projected
//! to the next one exceeds the contraction rule's limit ([`Kept::next_rate`]); a life
//! that paid until then is not a reuse that failed, and reuse is tried again at once.

use super::*;

/// The longest wait between tries of a reuse that did not pay.
const MAX_WAIT: u64 = 64;

/// Counted costs of the two pieces of Newton work, for the pivot order of `full`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Costs {
    /// Assembling (`Iter` of every instance, the scatter) and factorizing the matrix.
    pub matrix: u64,
    /// One correction: the solve, the trial state (`Update` of every body) and the
    /// residual (`Res` of every instance, the scatter).
    pub correction: u64,
    /// The solver's count of full factorizations the LU's part was counted at (a new
    /// pivot order has other L/U patterns), and the matrix role counted.
    full: usize,
    noqv: bool,
    valid: bool,
}

/// The rule's memory from step to step; part of a snapshot (state format 4).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ledger {
    /// Counted cost of the steps on the current matrix, the step that made it included.
    pub life: u64,
    /// Counted cost of the last accepted step.
    pub last: u64,
    /// Steps left before reuse is tried again, and the length of the next wait.
    pub wait: u64,
    pub backoff: u64,
}

impl Ledger {
    /// Whether a step may start on the kept matrix that has served `age` steps (the
    /// one that factorized it included), given that it serves (same coefficients);
    /// `too_slow`: the next step on it is expected to contract too slowly.
    pub(super) fn keep(&mut self, age: usize, too_slow: bool) -> bool {
        if self.wait > 0 {
            self.wait -= 1;
            return false;
        }
        if age <= 1 {
            return true;
        }
        // The last step below the life's average: one more step lowers the average.
        let pays = u128::from(self.last) * (age as u128) < u128::from(self.life);
        if !pays || too_slow {
            // A first reuse that paid ends the life without a wait.
            self.ended(age == 2 && !pays);
        }
        pays && !too_slow
    }

    /// A reuse ended; `first`: on its first kept step (it never paid).
    fn ended(&mut self, first: bool) {
        if first {
            self.backoff = (2 * self.backoff).clamp(1, MAX_WAIT);
            self.wait = self.backoff;
        } else {
            self.backoff = 0;
        }
    }

    /// Books an accepted step of `factorizations` and `corrections` that started on
    /// a kept matrix of age `kept_age` (0: on a new one); `fresh_corrections` of the
    /// corrections were made on the step's last new matrix.
    pub(super) fn book(
        &mut self,
        costs: &Costs,
        factorizations: u64,
        corrections: u64,
        fresh_corrections: u64,
        kept_age: usize,
    ) {
        let cost = factorizations * costs.matrix + corrections * costs.correction;
        if factorizations > 0 && kept_age > 0 {
            self.failed_reuse(
                cost,
                costs.matrix + fresh_corrections * costs.correction,
                kept_age,
            );
            return;
        }
        if factorizations > 0 {
            self.life = cost;
        } else {
            self.life += cost;
        }
        self.last = cost;
    }

    /// The contraction rule replaced the kept matrix of age `kept_age` within a step
    /// of cost `cost`, of which `fresh` went to the new matrix and its corrections (what
    /// a step on a new matrix costs) and the rest was wasted on the old one. The waste
    /// is charged to the old life: keeping paid if its steps, waste included, cost less
    /// than as many steps on new matrices; if not, reuse backs off. The new matrix's
    /// life starts at `fresh` alone: starting it at the whole cost would make the
    /// next reuse look cheap against that average, so a model whose kept matrices
    /// keep failing (long chains, where a kept matrix contracts too slowly) would go
    /// on keeping them.
    fn failed_reuse(&mut self, cost: u64, fresh: u64, kept_age: usize) {
        let wasted = cost.saturating_sub(fresh);
        let steps = (kept_age - 1) as u128;
        let paid = u128::from(self.life) + u128::from(wasted) < u128::from(fresh) * steps;
        self.ended(!paid);
        self.life = fresh;
        self.last = fresh;
    }
}

impl System {
    /// The counted costs for the current pivot order and matrix role, counted again
    /// only when the LU chose new pivots (which allocates anyway) or the role changed.
    pub(super) fn matrix_costs(&mut self, noqv: bool) -> Costs {
        let js = self.js.as_ref().expect("solvers exist after initialize");
        let full = js.full_factorizations();
        let c = self.costs;
        if c.valid && c.full == full && c.noqv == noqv {
            return c;
        }
        let memory = js.memory();
        let (factor, solve) = lu_work(&memory, self.jp.n);
        let types = &self.table.types;
        let ops = |e: &Inst, role: Role| types[e.ty].role(role).map_or(0, |f| f.ops as u64);
        let (mut matrix, mut correction) = (factor + self.jp.nnz() as u64, solve);
        for e in &self.inst {
            let use_noqv = noqv && types[e.ty].role(Role::IterNoqv).is_some();
            matrix += ops(e, if use_noqv { Role::IterNoqv } else { Role::Iter });
            matrix += e.iter_at.len() as u64;
            correction += ops(e, Role::Res) + (e.x_map.len() + e.v_map.len()) as u64;
            if types[e.ty].owns_coordinates {
                correction += ops(e, Role::Update) + e.q_map.len() as u64;
            }
        }
        // The Newton vector loops: the right-hand side, the update, the trial state.
        correction += 4 * (self.nv + self.nl) as u64;
        self.costs = Costs {
            matrix,
            correction,
            full,
            noqv,
            valid: true,
        };
        self.costs
    }

    /// Forgets the counted costs (a new run, a restored snapshot).
    pub(super) fn forget_costs(&mut self) {
        self.costs = Costs::default();
    }
}

/// Multiply-adds of a refactorization and of a solve on the L/U patterns of a sparse
/// LU (left-looking: column j is updated by every column k of L with U(k, j) ≠ 0, and
/// divided by its pivot); a solver without patterns (dense) counts n³/3 and n².
fn lu_work(m: &SolverMemory, n: usize) -> (u64, u64) {
    let n64 = n as u64;
    if m.l_ptr.len() != n + 1 || m.u_ptr.len() != n + 1 {
        return (n64 * n64 * n64 / 3, n64 * n64);
    }
    let l_len = |k: usize| (m.l_ptr[k + 1] - m.l_ptr[k]) as u64;
    let updates: u64 = m.u_row.iter().map(|&k| l_len(k)).sum();
    let (l_nnz, u_nnz) = (m.l_row.len() as u64, m.u_row.len() as u64);
    (updates + l_nnz, l_nnz + u_nnz + n64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn costs(matrix: u64, correction: u64) -> Costs {
        Costs {
            matrix,
            correction,
            ..Costs::default()
        }
    }

    /// Keeping pays while a kept step (5 corrections) costs less than a new one
    /// (matrix 20 + 3 corrections = 23): the matrix serves every step.
    #[test]
    fn keeps_while_a_kept_step_is_cheaper_than_a_new_one() {
        let c = costs(20, 1);
        let mut l = Ledger::default();
        l.book(&c, 1, 3, 3, 0);
        for age in 1..50 {
            assert!(l.keep(age, false), "age {age}");
            l.book(&c, 0, 5, 0, age + 1);
        }
        assert_eq!(l.life, 23 + 49 * 5);
    }

    /// Where a kept step costs more than a new one (matrix 3, 2 corrections, kept 6),
    /// reuse is tried after waits of 1, 2, 4, ... 64 steps: a try, the step that
    /// refreshes and the wait make cycles of 3, 4, 6, 10, 18, 34, 66, 66 steps, so 8
    /// tries start within 200 steps (at 0, 3, 7, 13, 23, 41, 75, 141).
    #[test]
    fn backs_off_where_keeping_never_pays() {
        let c = costs(3, 1);
        let mut l = Ledger::default();
        let (mut age, mut tries) = (0usize, 0);
        l.book(&c, 1, 2, 2, 0);
        age += 1;
        for _ in 0..200 {
            if l.keep(age, false) {
                if age == 1 {
                    tries += 1;
                }
                age += 1;
                l.book(&c, 0, 6, 0, age);
            } else {
                age = 1;
                l.book(&c, 1, 2, 2, 0);
            }
        }
        assert_eq!(tries, 8);
        assert_eq!(l.backoff, MAX_WAIT);
    }

    /// Costs that grow with the age (the state drifts from the matrix's): the matrix
    /// is replaced when the last step costs at least the life's average. Matrix 10,
    /// a new step 2 corrections (12), kept steps 3, 4, 5, ...: averages 12, 7.5, 6.33,
    /// 6, 6, so the step of cost 6 (= average 6) ends the life at age 5.
    #[test]
    fn refreshes_when_the_marginal_step_reaches_the_average() {
        let c = costs(10, 1);
        let mut l = Ledger::default();
        l.book(&c, 1, 2, 2, 0);
        let mut age = 1;
        while l.keep(age, false) {
            age += 1;
            l.book(&c, 0, age as u64 + 1, 0, age);
        }
        assert_eq!(age, 5);
        assert_eq!(l.life, 12 + 3 + 4 + 5 + 6);
        assert_eq!((l.wait, l.backoff), (0, 0));
    }

    /// A reuse that fails within a step (matrix 10, correction 1): its corrections on
    /// the old matrix are charged to the old life, and the new life starts at the new
    /// matrix's share. A life of a new step (13) and a kept one (5) that then wastes 6
    /// cost 24 < 2 × 13: keeping paid, no back-off. A reuse failing at once (13, then
    /// 5 wasted) did not pay: reuse waits a step.
    #[test]
    fn a_failed_reuse_is_charged_to_the_life_it_ends() {
        let c = costs(10, 1);
        let mut l = Ledger::default();
        l.book(&c, 1, 3, 3, 0);
        assert!(l.keep(1, false));
        l.book(&c, 0, 5, 0, 2);
        assert!(l.keep(2, false));
        l.book(&c, 1, 9, 3, 3);
        assert_eq!((l.life, l.last, l.wait, l.backoff), (13, 13, 0, 0));
        assert!(l.keep(1, false));
        l.book(&c, 1, 8, 3, 2);
        assert_eq!((l.life, l.last, l.wait, l.backoff), (13, 13, 1, 1));
        assert!(!l.keep(1, false), "waits one step");
        assert!(l.keep(1, false));
    }

    /// A life that pays (matrix 10, new step 13, kept steps 5) but whose next step
    /// is expected to contract too slowly ends without a wait: the next matrix is
    /// reused at once. Where the counts say the first reuse did not pay (kept step
    /// 14 ≥ the average 13.5), the wait starts as before, slow or not.
    #[test]
    fn a_life_ended_for_its_contraction_waits_only_if_it_did_not_pay() {
        let c = costs(10, 1);
        let mut l = Ledger::default();
        l.book(&c, 1, 3, 3, 0);
        assert!(l.keep(1, false));
        l.book(&c, 0, 5, 0, 2);
        assert!(!l.keep(2, true), "too slow: a new matrix");
        assert_eq!((l.wait, l.backoff), (0, 0));
        l.book(&c, 1, 3, 3, 0);
        assert!(l.keep(1, false), "the next matrix is reused at once");
        l.book(&c, 0, 14, 0, 2);
        assert!(!l.keep(2, true));
        assert_eq!((l.wait, l.backoff), (1, 1));
    }

    /// The LU's work on a 3×3 pattern with L below and U above a full matrix: column
    /// 1 is updated by column 0 (2 entries of L), column 2 by columns 0 and 1 (2 + 1),
    /// plus 3 divisions; the solve reads 3 + 3 + 3 entries.
    #[test]
    fn counts_the_multiply_adds_of_a_full_3x3_lu() {
        let m = SolverMemory {
            l_ptr: vec![0, 2, 3, 3],
            l_row: vec![1, 2, 2],
            u_ptr: vec![0, 0, 1, 3],
            u_row: vec![0, 0, 1],
            ..SolverMemory::default()
        };
        assert_eq!(lu_work(&m, 3), (5 + 3, 9));
        assert_eq!(lu_work(&SolverMemory::default(), 3), (9, 9));
    }
}
