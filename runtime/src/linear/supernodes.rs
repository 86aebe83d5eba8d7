//! Supernodal refactorization and solve of the sparse LU on the kept pivot order.
//!
//! A supernode is a run of consecutive elimination steps `k0..=k1` whose columns of L
//! nest: column `c` of L holds the rows `c+1..=k1` and then one common set `R` below
//! `k1`. A multibody iteration matrix has them wherever a body's 6×6 block or a joint's
//! constraint rows are eliminated together. Their L columns are stored as one dense
//! row-major panel (rows `k0..=k1` and `R`, columns `k0..=k1`), so the update of a
//! column by a supernode is a small dense triangular solve and one dot product per row
//! of the panel: the row index is read once per row instead of once per entry, and the
//! inner loops run over contiguous numbers.
//!
//! The left-looking update of column `j` needs, within each supernode it touches, the
//! rows of U(:, j) to be a tail `k..=min(k1, j-1)`; structurally this follows from the
//! dense diagonal block, and [`Supernodes::new`] splits supernodes (or gives up) where
//! the patterns it is given do not show it, so the kernels can rely on it.

use super::SparseLu;

/// The supernodes of one L/U pattern and their dense panels.
pub(super) struct Supernodes {
    /// First elimination step of each supernode, and `n` at the end.
    start: Vec<usize>,
    /// Elimination step → its supernode.
    of: Vec<usize>,
    /// Rows of each panel: the supernode's own steps `k0..=k1`, then `R` ascending.
    rows_ptr: Vec<usize>,
    rows: Vec<usize>,
    /// Panel values, row-major (`rows × width`); the upper triangle of the diagonal
    /// block is unused.
    val_ptr: Vec<usize>,
    val: Vec<f64>,
    /// The U entries of the current column within one supernode.
    t: Vec<f64>,
}

/// Widest supernode: a panel costs width² numbers for its diagonal block.
const MAX_WIDTH: usize = 64;

pub(super) fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(a, b)| a * b).sum()
}

/// [`dot`] summed from the last term to the first. A backward substitution solves the
/// entries from the last to the first, so the first terms of its sums are those solved
/// last: summed last, only the final additions wait for them and the rest of each sum
/// runs ahead (from the first term, the whole chain of additions would wait).
pub(super) fn dot_descending(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).rev().map(|(a, b)| a * b).sum()
}

impl Supernodes {
    /// Supernodes of the strictly lower L pattern and strictly upper U pattern (rows in
    /// elimination numbering, columns as `ptr`/`row` arrays). `None` when the U
    /// pattern does not have the tail structure even after splitting (the caller then
    /// keeps the column-by-column kernel). Allocates: on a new pivot order only.
    pub(super) fn new(
        n: usize,
        l_ptr: &[usize],
        l_row: &[usize],
        u_ptr: &[usize],
        u_row: &[usize],
    ) -> Option<Supernodes> {
        let lcol: Vec<Vec<usize>> = (0..n)
            .map(|j| {
                let mut c = l_row[l_ptr[j]..l_ptr[j + 1]].to_vec();
                c.sort_unstable();
                c
            })
            .collect();
        // Column j continues the supernode of j-1 when L(:, j-1) = {j} ∪ L(:, j).
        let mut is_start: Vec<bool> = (0..n)
            .map(|j| j == 0 || lcol[j - 1].first() != Some(&j) || lcol[j - 1][1..] != lcol[j])
            .collect();
        let mut width = 0;
        for s in is_start.iter_mut() {
            width = if *s || width == MAX_WIDTH { 0 } else { width };
            *s |= width == 0;
            width += 1;
        }
        let of_starts = |is_start: &[bool]| {
            let mut of = vec![0; n];
            let mut start = vec![];
            for j in 0..n {
                if is_start[j] {
                    start.push(j);
                }
                of[j] = start.len() - 1;
            }
            start.push(n);
            (start, of)
        };
        let (start, of) = of_starts(&is_start);
        // Split where a U column enters a supernode other than as a tail: after the
        // split every piece is either all in or all out of that column, and the tails
        // of other columns stay tails of the pieces.
        let mut member = vec![false; n];
        for j in 0..n {
            let col = &u_row[u_ptr[j]..u_ptr[j + 1]];
            col.iter().for_each(|&k| member[k] = true);
            for &k in col {
                let s = of[k];
                let last = (start[s + 1] - 1).min(j - 1);
                let first = (start[s]..=last).find(|&r| member[r]).unwrap_or(k);
                if (first..=last).all(|r| member[r]) {
                    continue;
                }
                for r in start[s] + 1..=last {
                    if member[r] != member[r - 1] {
                        is_start[r] = true;
                    }
                }
            }
            col.iter().for_each(|&k| member[k] = false);
        }
        let (start, of) = of_starts(&is_start);
        let tails = (0..n).all(|j| {
            let col = &u_row[u_ptr[j]..u_ptr[j + 1]];
            let mut p = 0;
            while p < col.len() {
                let s = of[col[p]];
                let last = (start[s + 1] - 1).min(j - 1);
                if p + last - col[p] >= col.len()
                    || (col[p]..=last).zip(&col[p..]).any(|(k, &r)| k != r)
                {
                    return false;
                }
                p += last - col[p] + 1;
            }
            true
        });
        if !tails {
            return None;
        }
        let (mut rows_ptr, mut rows, mut val_ptr) = (vec![0], vec![], vec![0]);
        for s in 0..start.len() - 1 {
            let (k0, w) = (start[s], start[s + 1] - start[s]);
            rows.push(k0);
            rows.extend_from_slice(&lcol[k0]);
            let len = rows.len() - rows_ptr[s];
            rows_ptr.push(rows.len());
            val_ptr.push(val_ptr[s] + len * w);
        }
        let widest = start.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0);
        Some(Supernodes {
            val: vec![0.0; *val_ptr.last().unwrap_or(&0)],
            start,
            of,
            rows_ptr,
            rows,
            val_ptr,
            t: vec![0.0; widest],
        })
    }

    /// Number of supernodes (diagnostics and tests).
    pub(super) fn count(&self) -> usize {
        self.start.len() - 1
    }

    /// Subtracts the columns `k..=e` of supernode `s` (U entries taken from `x`, which
    /// the triangular part finishes and clears) from the rows below `e` in `x`;
    /// writes the U entries to `u`.
    fn apply(&mut self, s: usize, k: usize, e: usize, x: &mut [f64], u: &mut [f64]) {
        let k0 = self.start[s];
        let w = self.start[s + 1] - k0;
        let panel = &self.val[self.val_ptr[s]..self.val_ptr[s + 1]];
        let rows = &self.rows[self.rows_ptr[s]..self.rows_ptr[s + 1]];
        let (a, b) = (k - k0, e - k0 + 1);
        let t = &mut self.t[..b - a];
        for r in a..b {
            let v = x[k0 + r] - dot(&panel[r * w + a..r * w + r], &t[..r - a]);
            t[r - a] = v;
            u[r - a] = v;
            x[k0 + r] = 0.0;
        }
        for (r, &g) in rows.iter().enumerate().skip(b) {
            x[g] -= dot(&panel[r * w + a..r * w + b], t);
        }
    }

    /// Forward substitution with the panels of L (unit diagonal), in elimination
    /// numbering, in place.
    pub(super) fn forward(&self, y: &mut [f64]) {
        for s in 0..self.count() {
            let k0 = self.start[s];
            let w = self.start[s + 1] - k0;
            let panel = &self.val[self.val_ptr[s]..self.val_ptr[s + 1]];
            let rows = &self.rows[self.rows_ptr[s]..self.rows_ptr[s + 1]];
            forward_panel(k0, w, panel, rows, y);
        }
    }
}

/// Forward substitution with one supernode's panel (row-major, `rows.len() × w`, the
/// unit lower triangle of its diagonal block, then L below it), in place; shared by
/// the supernodal and the blocked kernels, whose panels have this layout.
pub(super) fn forward_panel(k0: usize, w: usize, panel: &[f64], rows: &[usize], y: &mut [f64]) {
    for r in 1..w {
        let (done, rest) = y[k0..].split_at_mut(r);
        rest[0] -= dot(&panel[r * w..r * w + r], done);
    }
    for (r, &g) in rows.iter().enumerate().skip(w) {
        let d = dot(&panel[r * w..r * w + w], &y[k0..k0 + w]);
        y[g] -= d;
    }
}

impl SparseLu {
    /// [`SparseLu::refactor`] on supernodes: the same elimination, the updates of a
    /// column grouped by supernode (round-off differs only in the order of the sums).
    pub(super) fn refactor_blocked(&mut self, values: &[f64], tau: f64) -> bool {
        let Some(sn) = self.blocks.as_mut() else {
            return self.refactor(values, tau);
        };
        let n = self.pattern.n;
        let x = &mut self.x;
        let mut ok = true;
        for j in 0..n {
            let c = self.q[j];
            for k in self.pattern.col_ptr[c]..self.pattern.col_ptr[c + 1] {
                x[self.pinv[self.pattern.row_idx[k]]] = values[k];
            }
            let own = sn.of[j];
            let (mut p, end) = (self.u_ptr[j], self.u_ptr[j + 1]);
            while p < end {
                let k = self.u_row[p];
                let s = sn.of[k];
                let e = if s == own { j - 1 } else { sn.start[s + 1] - 1 };
                let len = e - k + 1;
                sn.apply(s, k, e, x, &mut self.u_val[p..p + len]);
                p += len;
            }
            let pivot = x[j];
            x[j] = 0.0;
            let (k0, w) = (sn.start[own], sn.start[own + 1] - sn.start[own]);
            let col = j - k0;
            let rows = &sn.rows[sn.rows_ptr[own]..sn.rows_ptr[own + 1]];
            let col_max = rows[col + 1..]
                .iter()
                .fold(0.0f64, |m, &r| m.max(x[r].abs()));
            if !pivot.is_finite() || pivot == 0.0 || pivot.abs() < tau * col_max {
                ok = false;
            }
            self.diag[j] = pivot;
            let inv = 1.0 / pivot;
            let panel = &mut sn.val[sn.val_ptr[own]..sn.val_ptr[own + 1]];
            for (r, &g) in rows.iter().enumerate().skip(col + 1) {
                panel[r * w + col] = x[g] * inv;
                x[g] = 0.0;
            }
        }
        ok
    }
}
