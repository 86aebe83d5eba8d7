//! Dense LU with partial pivoting (faer): the solver for small systems, the fallback
//! where the sparse analysis fails, and the tests' reference.

use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::linalg::lu::partial_pivoting;
use faer::perm::PermRef;
use faer::{Mat, MatMut, Par};

use super::{LinearSolver, Singular, SolverMemory, PIVOT_TOL};
use crate::assembly::Pattern;

/// Dense LU with partial pivoting (faer), for small systems and as a reference.
pub struct DenseLu {
    pattern: Pattern,
    a: Mat<f64>,
    perm: Vec<usize>,
    perm_inv: Vec<usize>,
    mem: MemBuffer,
    full: usize,
}

impl DenseLu {
    pub fn new(pattern: &Pattern) -> DenseLu {
        let n = pattern.n;
        let req = StackReq::any_of(&[
            partial_pivoting::factor::lu_in_place_scratch::<usize, f64>(
                n,
                n,
                Par::Seq,
                Default::default(),
            ),
            partial_pivoting::solve::solve_in_place_scratch::<usize, f64>(n, 1, Par::Seq),
        ]);
        DenseLu {
            pattern: pattern.clone(),
            a: Mat::zeros(n, n),
            perm: vec![0; n],
            perm_inv: vec![0; n],
            mem: MemBuffer::new(req),
            full: 0,
        }
    }
}

impl DenseLu {
    /// The step of the smallest pivot of the last factorization.
    pub(super) fn smallest_pivot(&self) -> usize {
        let a = &self.a;
        (0..self.pattern.n)
            .min_by(|&i, &j| a[(i, i)].abs().total_cmp(&a[(j, j)].abs()))
            .unwrap_or(0)
    }
}

impl LinearSolver for DenseLu {
    fn factorize(&mut self, values: &[f64]) -> Result<(), Singular> {
        let n = self.pattern.n;
        self.a.fill(0.0);
        let mut max = 0.0f64;
        for j in 0..n {
            let (a, b) = (self.pattern.col_ptr[j], self.pattern.col_ptr[j + 1]);
            for (&r, &val) in self.pattern.row_idx[a..b].iter().zip(&values[a..b]) {
                self.a[(r, j)] = val;
                max = max.max(val.abs());
            }
        }
        partial_pivoting::factor::lu_in_place(
            self.a.as_mut(),
            &mut self.perm,
            &mut self.perm_inv,
            Par::Seq,
            MemStack::new(&mut self.mem),
            Default::default(),
        );
        self.full += 1;
        // A pivot that is round-off relative to the largest entry of the matrix means
        // the column depends on the ones before it.
        for i in 0..n {
            let d = self.a[(i, i)];
            if !d.is_finite() || d.abs() <= PIVOT_TOL * max.max(f64::MIN_POSITIVE) {
                return Err(Singular { index: i });
            }
        }
        Ok(())
    }

    fn solve(&mut self, rhs: &mut [f64]) {
        let n = self.pattern.n;
        let rhs = MatMut::from_column_major_slice_mut(rhs, n, 1);
        let lu = self.a.as_ref();
        let perm = PermRef::new_checked(&self.perm, &self.perm_inv, n);
        partial_pivoting::solve::solve_in_place(
            lu,
            lu,
            perm,
            rhs,
            Par::Seq,
            MemStack::new(&mut self.mem),
        );
    }

    fn full_factorizations(&self) -> usize {
        self.full
    }

    /// Every factorization is a full one: only the count carries over.
    fn restore_memory(&mut self, m: &SolverMemory) {
        self.full = m.full;
    }
}
