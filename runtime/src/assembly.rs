//! Scatter assembly: a global sparse pattern built once from the element patterns,
//! and for every local nonzero the index of its value in the global value array.
//!
//! The pattern is stored column by column (compressed sparse column, faer's native
//! form) with sorted row indices. Per evaluation the value array is zeroed and each
//! element adds its numbers at the precomputed positions: no search, no allocation.

/// The fixed sparsity pattern of a square `n × n` matrix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pattern {
    pub n: usize,
    pub col_ptr: Vec<usize>,
    pub row_idx: Vec<usize>,
}

impl Pattern {
    /// Builds the pattern of all `(row, col)` entries (duplicates merge) and returns
    /// the value index of each entry in input order. The diagonal is always part of
    /// the pattern, so every row and column has a slot for its pivot.
    pub fn build(n: usize, entries: &[(usize, usize)]) -> (Pattern, Vec<usize>) {
        let mut cols: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (j, col) in cols.iter_mut().enumerate() {
            col.push(j);
        }
        for &(r, c) in entries {
            cols[c].push(r);
        }
        let mut col_ptr = Vec::with_capacity(n + 1);
        let mut row_idx = Vec::new();
        col_ptr.push(0);
        for col in &mut cols {
            col.sort_unstable();
            col.dedup();
            row_idx.extend_from_slice(col);
            col_ptr.push(row_idx.len());
        }
        let pattern = Pattern {
            n,
            col_ptr,
            row_idx,
        };
        let map = entries
            .iter()
            .map(|&(r, c)| {
                pattern
                    .position(r, c)
                    .expect("entry is in the pattern by construction")
            })
            .collect();
        (pattern, map)
    }

    /// Index of the value of `(row, col)` in the value array, if it is in the pattern.
    pub fn position(&self, row: usize, col: usize) -> Option<usize> {
        let (a, b) = (self.col_ptr[col], self.col_ptr[col + 1]);
        self.row_idx[a..b].binary_search(&row).ok().map(|k| a + k)
    }

    pub fn nnz(&self) -> usize {
        self.row_idx.len()
    }

    /// Multiplies the matrix with these values by `x` into `y` (tests and diagnostics).
    pub fn mul(&self, values: &[f64], x: &[f64], y: &mut [f64]) {
        y.fill(0.0);
        for (j, &xj) in x.iter().enumerate().take(self.n) {
            let (a, b) = (self.col_ptr[j], self.col_ptr[j + 1]);
            for (&r, &val) in self.row_idx[a..b].iter().zip(&values[a..b]) {
                y[r] += val * xj;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pattern_merges_duplicates_and_maps_every_entry() {
        let entries = [(0, 1), (2, 0), (0, 1), (1, 1), (2, 2)];
        let (p, map) = Pattern::build(3, &entries);
        // Columns: 0 -> {0, 2}, 1 -> {0, 1}, 2 -> {2}.
        assert_eq!(p.col_ptr, vec![0, 2, 4, 5]);
        assert_eq!(p.row_idx, vec![0, 2, 0, 1, 2]);
        assert_eq!(map, vec![2, 1, 2, 3, 4]);
        let mut values = vec![0.0; p.nnz()];
        for (k, &m) in map.iter().enumerate() {
            values[m] += (k + 1) as f64;
        }
        // Dense check of A x with x = (1, 10, 100).
        let mut y = [0.0; 3];
        p.mul(&values, &[1.0, 10.0, 100.0], &mut y);
        // A = [[0, 1+3, 0], [0, 4, 0], [2, 0, 5]]
        assert_eq!(y, [40.0, 40.0, 502.0]);
    }
}
