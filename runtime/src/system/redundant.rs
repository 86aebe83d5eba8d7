//! Redundant constraint rows: which rows of B depend on the rows before them.
//!
//! The reference test is Gram–Schmidt with reorthogonalization in model order (a QR
//! factorization of Bᵀ that reveals the rank): row l is redundant when its part
//! orthogonal to the kept rows before it has a norm ≤ [`REL_TOL`] times its own norm.
//! That costs O(n_l² n_v) on a dense B, seconds for a 256-body chain.
//!
//! It is run only where it can find something. The LDLᵀ factorization of the Gram
//! matrix G = B Bᵀ in model order (no reordering, so the pivot d_l is the squared norm
//! of that orthogonal part, in exact arithmetic) is sparse for chains and trees. Rows
//! that share no column never interact, so each connected component of the row graph
//! is judged on its own: a component whose pivots are all above [`SCREEN`] G_ll (an
//! orthogonal part above 10⁻⁴ of the row norm, far above both the 10⁻⁹ of the test and
//! the round-off of the squared quantity) has no redundant row. Every other component
//! goes through the reference test, on its own rows and columns, which gives the same
//! answer as the test on all of B (the components are orthogonal to each other).

use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::linalg::cholesky::ldlt::factor::LdltRegularization;
use faer::sparse::linalg::cholesky::simplicial;
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};

/// Relative norm of the orthogonal part below which a row is redundant.
pub const REL_TOL: f64 = 1e-9;

/// Relative LDLᵀ pivot d_l / G_ll above which a row is certainly independent.
pub const SCREEN: f64 = 1e-8;

/// Indices (ascending) of the rows that depend on the rows before them. `rows[l]` is
/// row l of B as (column, value) pairs with distinct columns below `ncols`.
pub fn redundant_rows(ncols: usize, rows: &[Vec<(usize, f64)>]) -> Vec<usize> {
    let nl = rows.len();
    if nl == 0 {
        return Vec::new();
    }
    let comp = components(ncols, rows);
    let mut suspect = vec![false; nl];
    match gram_pivots(ncols, rows) {
        Some((pivots, diag)) => {
            for l in 0..nl {
                if !(diag[l] > 0.0 && pivots[l] > SCREEN * diag[l]) {
                    suspect[comp[l]] = true;
                }
            }
        }
        // A zero or non-finite pivot: no screen, every component is tested.
        None => suspect.fill(true),
    }
    let mut removed = Vec::new();
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); nl];
    for l in 0..nl {
        if suspect[comp[l]] {
            members[comp[l]].push(l);
        }
    }
    for m in members.iter().filter(|m| !m.is_empty()) {
        removed.extend(gram_schmidt(ncols, rows, m));
    }
    removed.sort_unstable();
    removed
}

/// Component id (the smallest row of the component) of every row; rows are joined
/// when they share a column.
pub fn components(ncols: usize, rows: &[Vec<(usize, f64)>]) -> Vec<usize> {
    fn find(p: &mut [usize], mut i: usize) -> usize {
        while p[i] != i {
            p[i] = p[p[i]];
            i = p[i];
        }
        i
    }
    let mut parent: Vec<usize> = (0..rows.len()).collect();
    let mut first = vec![usize::MAX; ncols];
    for (l, row) in rows.iter().enumerate() {
        for &(c, _) in row {
            if first[c] == usize::MAX {
                first[c] = l;
            } else {
                let (a, b) = (find(&mut parent, first[c]), find(&mut parent, l));
                let (lo, hi) = (a.min(b), a.max(b));
                parent[hi] = lo;
            }
        }
    }
    (0..rows.len()).map(|l| find(&mut parent, l)).collect()
}

/// LDLᵀ pivots of G = B Bᵀ in model order, and the diagonal of G; None if the
/// factorization met a zero or non-finite pivot.
fn gram_pivots(ncols: usize, rows: &[Vec<(usize, f64)>]) -> Option<(Vec<f64>, Vec<f64>)> {
    let nl = rows.len();
    // Rows touching each column, to form G column by column (upper triangle).
    let mut by_col: Vec<Vec<(usize, f64)>> = vec![Vec::new(); ncols];
    for (l, row) in rows.iter().enumerate() {
        for &(c, v) in row {
            by_col[c].push((l, v));
        }
    }
    let mut col_ptr = vec![0usize];
    let mut row_idx = Vec::new();
    let mut values = Vec::new();
    let mut acc = vec![0.0; nl];
    let mut mark = vec![usize::MAX; nl];
    let mut touched = Vec::new();
    let mut diag = vec![0.0; nl];
    for (l, row) in rows.iter().enumerate() {
        touched.clear();
        for &(c, v) in row {
            for &(m, w) in &by_col[c] {
                if m > l {
                    continue;
                }
                if mark[m] != l {
                    mark[m] = l;
                    acc[m] = 0.0;
                    touched.push(m);
                }
                acc[m] += v * w;
            }
        }
        // The diagonal is always stored, also for an empty row.
        if mark[l] != l {
            mark[l] = l;
            acc[l] = 0.0;
            touched.push(l);
        }
        touched.sort_unstable();
        for &m in &touched {
            row_idx.push(m);
            values.push(acc[m]);
        }
        diag[l] = acc[l];
        col_ptr.push(row_idx.len());
    }
    let sym = SymbolicSparseColMatRef::new_checked(nl, nl, &col_ptr, None, &row_idx);
    let a = SparseColMatRef::new(sym, &values);
    let mut etree = vec![0isize; nl];
    let mut counts = vec![0usize; nl];
    let req = StackReq::any_of(&[
        simplicial::prefactorize_symbolic_cholesky_scratch::<usize>(nl, values.len()),
        simplicial::factorize_simplicial_symbolic_cholesky_scratch::<usize>(nl),
        simplicial::factorize_simplicial_numeric_ldlt_scratch::<usize, f64>(nl),
    ]);
    let mut mem = MemBuffer::new(req);
    let stack = MemStack::new(&mut mem);
    let tree = simplicial::prefactorize_symbolic_cholesky(&mut etree, &mut counts, sym, stack);
    let symbolic =
        simplicial::factorize_simplicial_symbolic_cholesky(sym, tree, &counts, stack).ok()?;
    let mut l_values = vec![0.0; symbolic.len_val()];
    simplicial::factorize_simplicial_numeric_ldlt(
        &mut l_values,
        a,
        LdltRegularization::default(),
        &symbolic,
        stack,
    )
    .ok()?;
    // The first entry of each column of the factor is the pivot.
    let pivots = symbolic.col_ptr()[..nl]
        .iter()
        .map(|&k| l_values[k])
        .collect();
    Some((pivots, diag))
}

/// The reference test on the rows `members` (ascending), on the columns they touch.
fn gram_schmidt(ncols: usize, rows: &[Vec<(usize, f64)>], members: &[usize]) -> Vec<usize> {
    let mut local = vec![usize::MAX; ncols];
    let mut n = 0;
    for &l in members {
        for &(c, _) in &rows[l] {
            if local[c] == usize::MAX {
                local[c] = n;
                n += 1;
            }
        }
    }
    let two_norm = |x: &[f64]| x.iter().map(|a| a * a).sum::<f64>().sqrt();
    let mut basis: Vec<Vec<f64>> = Vec::new();
    let mut removed = Vec::new();
    for &l in members {
        let mut row = vec![0.0; n];
        for &(c, v) in &rows[l] {
            row[local[c]] += v;
        }
        let norm0 = two_norm(&row);
        for _ in 0..2 {
            for q in &basis {
                let d: f64 = q.iter().zip(&row).map(|(a, b)| a * b).sum();
                for (r, qi) in row.iter_mut().zip(q) {
                    *r -= d * qi;
                }
            }
        }
        let norm = two_norm(&row);
        if norm <= REL_TOL * norm0 || norm0 == 0.0 {
            removed.push(l);
        } else {
            row.iter_mut().for_each(|r| *r /= norm);
            basis.push(row);
        }
    }
    removed
}

/// The rows that removed row `r` is a combination of: the least-squares coefficients
/// c of b_r ≈ Σ c_k b_k over the kept rows k < r of its component (independent, so
/// the normal equations are positive definite), those with |c_k| ‖b_k‖ above 10⁻⁶ ‖b_r‖.
/// Dense in the component: called on the error path of a rheonomic row only.
pub fn dependence(
    ncols: usize,
    rows: &[Vec<(usize, f64)>],
    removed: &[usize],
    comp: &[usize],
    r: usize,
) -> Vec<usize> {
    let kept: Vec<usize> = (0..r)
        .filter(|&l| comp[l] == comp[r] && removed.binary_search(&l).is_err())
        .collect();
    let dense = |l: usize| {
        let mut x = vec![0.0; ncols];
        for &(c, v) in &rows[l] {
            x[c] += v;
        }
        x
    };
    let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>();
    let b: Vec<Vec<f64>> = kept.iter().map(|&l| dense(l)).collect();
    let br = dense(r);
    let n = kept.len();
    // Cholesky of G = B Bᵀ, then G c = B b_r.
    let mut g = vec![vec![0.0; n]; n];
    for i in 0..n {
        for j in 0..=i {
            let v = dot(&b[i], &b[j]) - dot(&g[i][..j], &g[j][..j]);
            g[i][j] = if i == j {
                v.max(0.0).sqrt()
            } else {
                v / g[j][j]
            };
        }
    }
    let mut c: Vec<f64> = b.iter().map(|bk| dot(bk, &br)).collect();
    for i in 0..n {
        c[i] = (c[i] - dot(&g[i][..i], &c[..i])) / g[i][i];
    }
    for i in (0..n).rev() {
        let later: f64 = (i + 1..n).map(|k| g[k][i] * c[k]).sum();
        c[i] = (c[i] - later) / g[i][i];
    }
    let norm_r = dot(&br, &br).sqrt();
    (0..n)
        .filter(|&i| (c[i] * dot(&b[i], &b[i]).sqrt()).abs() > 1e-6 * norm_r)
        .map(|i| kept[i])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference test on all rows at once (what the runtime did before the screen).
    fn reference(ncols: usize, rows: &[Vec<(usize, f64)>]) -> Vec<usize> {
        let all: Vec<usize> = (0..rows.len()).collect();
        gram_schmidt(ncols, rows, &all)
    }

    /// A planar chain of n links: rows 2k, 2k+1 tie body k to body k−1 (or the ground).
    fn chain(n: usize) -> Vec<Vec<(usize, f64)>> {
        let mut rows = Vec::new();
        for k in 0..n {
            for a in 0..2 {
                let mut r = vec![(2 * k + a, 1.0 + 0.1 * a as f64)];
                if k > 0 {
                    r.push((2 * (k - 1) + a, -1.0));
                    r.push((2 * (k - 1) + 1 - a, 0.3));
                }
                rows.push(r);
            }
        }
        rows
    }

    #[test]
    fn an_independent_chain_has_no_redundant_row() {
        let rows = chain(50);
        assert!(reference(100, &rows).is_empty());
        assert!(redundant_rows(100, &rows).is_empty());
    }

    #[test]
    fn dependent_rows_are_found_as_by_the_reference_test() {
        // Two independent chains (two components), each closed by extra rows: an exact
        // copy, a combination of two rows, a zero row, and a row that is independent
        // but nearly dependent (1e-6, above the 1e-9 tolerance, below the screen).
        let mut rows = chain(10);
        let off = 20;
        for r in chain(10) {
            rows.push(r.iter().map(|&(c, v)| (c + off, v)).collect());
        }
        // Column 40 is touched only by the nearly dependent row.
        let ncols = 41;
        let combo = |a: &[(usize, f64)], b: &[(usize, f64)], s: f64| {
            let mut d = vec![0.0; ncols];
            for &(c, v) in a {
                d[c] += v;
            }
            for &(c, v) in b {
                d[c] += s * v;
            }
            d.iter()
                .enumerate()
                .filter(|(_, v)| **v != 0.0)
                .map(|(c, &v)| (c, v))
                .collect::<Vec<_>>()
        };
        rows.push(rows[5].clone());
        rows.push(combo(&rows[3], &rows[4], -2.5));
        rows.push(Vec::new());
        let mut near = combo(&rows[30], &rows[31], 0.5);
        near.push((40, 1e-6));
        rows.push(near);
        rows.push(combo(&rows[25], &rows[26], 3.0));
        let want = reference(ncols, &rows);
        assert_eq!(want, vec![40, 41, 42, 44]);
        assert_eq!(redundant_rows(ncols, &rows), want);
    }
}
