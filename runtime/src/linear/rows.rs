//! The blocked kernel's triangular solves, row by row.
//!
//! The blocked refactorization keeps L and U in dense panels, which is what its
//! products want. A solve over those panels, though, pays for every panel row it
//! visits (slices, lengths, a short dot product), and on multibody matrices the
//! panels are narrow: a chain body's translations, rotations and joint rows make
//! supernodes 3 to 5 columns wide, so at N = 64 the panel-wise solve ran ≈ 20
//! instructions per multiply-add. A Newton step solves several times on one matrix
//! (every correction, and the error estimate), so the solve has its own layout: the
//! entries of the symbolic L and U patterns (the panels' explicit zeros stay out) by
//! rows with their columns, their values copied from the blocks after each
//! refactorization, so that a solve is two passes of short indexed dot products over
//! contiguous values. The row and column permutations are folded into those passes.
//! (Reading the values at their places in the blocks instead of copying them made
//! the solve of the 64-rod chain 1.3× slower, more than the copy costs: that matrix
//! is solved about nine times per factorization.)
//!
//! Order of the arithmetic, for the latency of a substitution (each entry waits for
//! the ones it depends on, so a solve is one long chain of dependent rows): every row
//! starts from its right-hand side and subtracts its terms from the entry solved
//! longest ago to the one solved last (columns ascending in L, descending in U), so
//! only one multiplication and one subtraction wait for the entry just solved. The
//! rows of U are stored divided by their pivot (multiplied by its reciprocal when
//! copied), and the right-hand side of a backward row is scaled by the reciprocal
//! before its sums begin, so no division or scaling waits at a row's end either. On
//! the iteration matrix of the 64-rod chain (`bench/peers`) this took the solve from
//! 8.4 to 7.6 µs against the sums first and a subtraction and a scaling after them
//! (12.8 µs panel by panel). Taking the entry just solved from a register instead of
//! memory where a row's last term needs it was slower (8.6 µs: the test per row). Every solve runs this arithmetic,
//! whether its matrix is new or kept.

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

    /// Copies the values from the blocks' value array, each row multiplied by its
    /// `scale`.
    fn gather(&mut self, blocks: &[f64], scale: impl Fn(usize) -> f64) {
        for i in 0..self.ptr.len() - 1 {
            let (a, b) = (self.ptr[i], self.ptr[i + 1]);
            let s = scale(i);
            for (v, &p) in self.val[a..b].iter_mut().zip(&self.place[a..b]) {
                *v = blocks[p as usize] * s;
            }
        }
    }

    /// `start` − Σ value × y[column] over row i's entries, in the row's order.
    #[inline(always)]
    fn row_rest(&self, i: usize, start: f64, y: &[f64]) -> f64 {
        let (a, b) = (self.ptr[i], self.ptr[i + 1]);
        let terms = self.col[a..b].iter().zip(&self.val[a..b]);
        terms.fold(start, |rest, (&c, &v)| rest - v * y[c as usize])
    }
}

/// The factors of the kept patterns by rows, and the permutations.
pub(super) struct RowFactors {
    /// Strictly lower L (elimination numbering), columns ascending in each row.
    lower: Triangle,
    /// Strictly upper U, columns descending in each row.
    upper: Triangle,
    /// 1 / pivot of every elimination step (written by the refactorization).
    pub recip: Vec<f64>,
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
            recip: vec![0.0; n],
            row_of_step,
            col_of_step,
            y: vec![0.0; n],
        })
    }

    /// Copies the factors' values from the blocks' value array (after a
    /// refactorization, which has written `recip`): L as it is, U's rows divided by
    /// their pivots.
    pub(super) fn gather(&mut self, blocks: &[f64]) {
        self.lower.gather(blocks, |_| 1.0);
        let recip = &self.recip;
        self.upper.gather(blocks, |i| recip[i]);
    }

    /// Overwrites `rhs` (original numbering) with the solution of A x = rhs.
    pub(super) fn solve(&mut self, rhs: &mut [f64]) {
        let n = self.y.len();
        let y = &mut self.y;
        for i in 0..n {
            let b = rhs[self.row_of_step[i] as usize];
            y[i] = self.lower.row_rest(i, b, y);
        }
        for i in (0..n).rev() {
            let yi = self.upper.row_rest(i, y[i] * self.recip[i], y);
            y[i] = yi;
            rhs[self.col_of_step[i] as usize] = yi;
        }
    }
}
