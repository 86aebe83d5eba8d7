//! The blocked kernel's triangular solves, row by row.
//!
//! The blocked refactorization keeps L and U in dense panels, which is what its
//! products want. A solve over those panels, though, pays for every panel row it
//! visits (slices, lengths, a short dot product), and on multibody matrices the
//! panels are narrow: a chain body's translations, rotations and joint rows make
//! supernodes 3 to 5 columns wide, so at N = 64 the panel-wise solve ran ≈ 20
//! instructions per multiply-add. A Newton step solves several times on one matrix
//! (every correction, and the error estimate), so the solve has its own layout: the
//! entries the blocks hold (their own structure, with the few explicit zeros of merged
//! supernodes, without the U blocks' padding) by rows with their columns, their values
//! copied from the blocks after each
//! refactorization, so that a solve is two passes of short indexed dot products over
//! contiguous values. The row and column permutations are folded into those passes.
//! (Reading the values at their places in the blocks instead of copying them made
//! the solve of the 64-rod chain 1.3× slower, more than the copy costs: that matrix
//! is solved about nine times per factorization.)
//!
//! Sum order, for the latency of a substitution: every row sums its terms from the
//! entry solved longest ago to the one solved last (columns ascending in L,
//! descending in U), so only the last multiply-add and the subtraction wait for the
//! entry just solved; the pivots are applied as stored reciprocals. Every solve runs
//! this arithmetic, whether its matrix is new or kept. (Starting each row from its
//! right-hand side and storing U divided by its pivots shortened that wait further,
//! 8.4 → 7.6 µs on the 64-rod chain's matrix with the same backward errors, but moved
//! the 64-body chain of `tests/runtime/newton.rs` to 1.29e-9 from its converged run
//! against 0.55e-9 with the panel-wise solve and 0.70e-9 with this one: not kept.)

/// One entry of a factor: (row, column) in elimination numbering and its place in the
/// blocks' value array.
pub(super) type Entry = (usize, usize, u32);

/// One triangle by rows, each row's entries in summing order.
struct Triangle {
    /// The entries of row i: `ptr[i]..ptr[i + 1]`.
    ptr: Vec<usize>,
    col: Vec<u32>,
    /// The places of the values in the blocks' value array, and the values.
    place: Vec<u32>,
    val: Vec<f64>,
}

impl Triangle {
    /// The triangle of `entries` already sorted by row and summing order.
    fn new(n: usize, entries: &[Entry]) -> Triangle {
        let mut ptr = vec![0; n + 1];
        for &(r, _, _) in entries {
            ptr[r + 1] += 1;
        }
        for i in 0..n {
            ptr[i + 1] += ptr[i];
        }
        Triangle {
            ptr,
            col: entries.iter().map(|e| e.1 as u32).collect(),
            place: entries.iter().map(|e| e.2).collect(),
            val: vec![0.0; entries.len()],
        }
    }

    /// Copies the values from the blocks' value array.
    fn gather(&mut self, blocks: &[f64]) {
        for (v, &p) in self.val.iter_mut().zip(&self.place) {
            *v = blocks[p as usize];
        }
    }

    /// Σ value × y[column] over row i's entries, in the row's order.
    #[inline(always)]
    fn row_sum(&self, i: usize, y: &[f64]) -> f64 {
        let (a, b) = (self.ptr[i], self.ptr[i + 1]);
        let terms = self.col[a..b].iter().zip(&self.val[a..b]);
        terms.fold(0.0, |sum, (&c, &v)| sum + v * y[c as usize])
    }
}

/// The factors of the kept patterns by rows, and the permutations.
pub(super) struct RowFactors {
    /// Strictly lower L (elimination numbering), columns ascending in each row.
    lower: Triangle,
    /// Strictly upper U, columns descending in each row.
    upper: Triangle,
    /// The original row of each elimination step, and the original column.
    row_of_step: Vec<u32>,
    col_of_step: Vec<u32>,
    /// The solution in elimination numbering during a solve.
    y: Vec<f64>,
}

impl RowFactors {
    /// The row layout of the strictly lower `lower` and strictly upper `upper` entries
    /// of an `n × n` factorization with the row order `pinv` (original row →
    /// step) and column order `q_inv` (original column → step). `None` if an index
    /// does not fit 32 bits. Allocates: on a new pivot order only.
    pub(super) fn new(
        n: usize,
        mut lower: Vec<Entry>,
        mut upper: Vec<Entry>,
        pinv: &[usize],
        q_inv: &[usize],
    ) -> Option<RowFactors> {
        u32::try_from(n).ok()?;
        lower.sort_unstable_by_key(|&(r, c, _)| (r, c));
        upper.sort_unstable_by_key(|&(r, c, _)| (r, std::cmp::Reverse(c)));
        let mut row_of_step = vec![0; n];
        for (row, &step) in pinv.iter().enumerate() {
            row_of_step[step] = row as u32;
        }
        let mut col_of_step = vec![0; n];
        for (col, &step) in q_inv.iter().enumerate() {
            col_of_step[step] = col as u32;
        }
        Some(RowFactors {
            lower: Triangle::new(n, &lower),
            upper: Triangle::new(n, &upper),
            row_of_step,
            col_of_step,
            y: vec![0.0; n],
        })
    }

    /// Copies the factors' values from the blocks' value array (after a
    /// refactorization).
    pub(super) fn gather(&mut self, blocks: &[f64]) {
        self.lower.gather(blocks);
        self.upper.gather(blocks);
    }

    /// Overwrites `rhs` (original numbering) with the solution of A x = rhs, with
    /// `recip` the reciprocal pivots.
    pub(super) fn solve(&mut self, rhs: &mut [f64], recip: &[f64]) {
        let n = self.y.len();
        let y = &mut self.y;
        for i in 0..n {
            let sum = self.lower.row_sum(i, y);
            y[i] = rhs[self.row_of_step[i] as usize] - sum;
        }
        for i in (0..n).rev() {
            let sum = self.upper.row_sum(i, y);
            let yi = (y[i] - sum) * recip[i];
            y[i] = yi;
            rhs[self.col_of_step[i] as usize] = yi;
        }
    }
}
