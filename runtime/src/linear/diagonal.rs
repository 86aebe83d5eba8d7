//! A symmetric elimination order with the pivots on the diagonal.
//!
//! A multibody iteration matrix is a saddle point system: the velocity rows of a body
//! carry its mass matrix on the diagonal, the rows of a joint's constraints a zero
//! diagonal and the constraint Jacobian off it. Partial pivoting (faer's LU) exchanges
//! rows wherever an off-diagonal Jacobian entry exceeds a small inertia, and the L and
//! U patterns become unsymmetric: on a revolute chain each body's 11 unknowns reach 6
//! rows below and 17 columns right of them, where an order that eliminates a body
//! before the joints that couple it, and then those joints, reaches 6 and 6 (the
//! constraint's diagonal is filled by the body's elimination with −G M⁻¹ Gᵀ, a
//! definite block). The kept-order kernels then do about half the multiply-adds and
//! the solves touch two thirds of the entries.
//!
//! The order is minimum degree on the pattern of A + Aᵀ with one rule: a node may be
//! eliminated only once its diagonal is nonzero, in A's values or filled by an
//! eliminated neighbour. A constraint row waits for a body it couples. The caller
//! checks the pivots numerically and falls back to partial pivoting.

use super::{SparseLu, DIAGONAL_TAU, PIVOT_TOL};
use crate::assembly::Pattern;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A symmetric elimination order and the (symmetric) patterns of its factors.
pub(super) struct Order {
    /// Elimination step → original index, for rows and columns alike.
    pub order: Vec<usize>,
    /// Original index → elimination step.
    pub step: Vec<usize>,
    /// Strictly lower L by columns, rows ascending (elimination numbering).
    pub l_ptr: Vec<usize>,
    pub l_row: Vec<usize>,
    /// Strictly upper U by columns, rows ascending: the transpose of L's pattern.
    pub u_ptr: Vec<usize>,
    pub u_row: Vec<usize>,
}

/// Sorted union of `a` and `b` without `skip`.
fn merge_without(a: &[usize], b: &[usize], skip: [usize; 2], out: &mut Vec<usize>) {
    out.clear();
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        let next = match (a.get(i), b.get(j)) {
            (Some(&x), Some(&y)) if x == y => {
                i += 1;
                j += 1;
                x
            }
            (Some(&x), Some(&y)) if x < y => {
                i += 1;
                x
            }
            (Some(&x), None) => {
                i += 1;
                x
            }
            (_, Some(&y)) => {
                j += 1;
                y
            }
            (None, None) => unreachable!(),
        };
        if !skip.contains(&next) {
            out.push(next);
        }
    }
}

/// The order of minimum degree with pivots on nonzero diagonals (module doc) for the
/// matrix of `pattern` with `values`; `None` when nodes are left whose diagonal no
/// elimination fills (a row of zeros on the diagonal's side: partial pivoting's case).
pub(super) fn diagonal_order(pattern: &Pattern, values: &[f64]) -> Option<Order> {
    let n = pattern.n;
    let mut adj: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut eligible = vec![false; n];
    for c in 0..n {
        let (a, b) = (pattern.col_ptr[c], pattern.col_ptr[c + 1]);
        for (&r, &value) in pattern.row_idx[a..b].iter().zip(&values[a..b]) {
            if r == c {
                eligible[c] = value != 0.0;
            } else {
                adj[r].push(c);
                adj[c].push(r);
            }
        }
    }
    for a in &mut adj {
        a.sort_unstable();
        a.dedup();
    }
    let mut heap: BinaryHeap<Reverse<(usize, usize)>> = (0..n)
        .filter(|&i| eligible[i])
        .map(|i| Reverse((adj[i].len(), i)))
        .collect();
    let mut done = vec![false; n];
    let mut order = Vec::with_capacity(n);
    let mut lower: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut merged = Vec::new();
    while let Some(Reverse((degree, p))) = heap.pop() {
        if done[p] || degree != adj[p].len() {
            continue; // an entry made stale by a later elimination
        }
        done[p] = true;
        order.push(p);
        let front = std::mem::take(&mut adj[p]);
        for &u in &front {
            merge_without(&adj[u], &front, [u, p], &mut merged);
            std::mem::swap(&mut adj[u], &mut merged);
            eligible[u] = true;
            heap.push(Reverse((adj[u].len(), u)));
        }
        lower[p] = front;
    }
    if order.len() < n {
        return None;
    }
    let mut step = vec![0; n];
    for (k, &i) in order.iter().enumerate() {
        step[i] = k;
    }
    let (mut l_ptr, mut l_row) = (vec![0], Vec::new());
    let mut u_cols: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (k, &i) in order.iter().enumerate() {
        let start = l_row.len();
        l_row.extend(lower[i].iter().map(|&u| step[u]));
        l_row[start..].sort_unstable();
        for &r in &l_row[start..] {
            u_cols[r].push(k);
        }
        l_ptr.push(l_row.len());
    }
    let (mut u_ptr, mut u_row) = (vec![0], Vec::new());
    for col in &u_cols {
        u_row.extend_from_slice(col);
        u_ptr.push(u_row.len());
    }
    Some(Order {
        order,
        step,
        l_ptr,
        l_row,
        u_ptr,
        u_row,
    })
}

impl SparseLu {
    /// A new order with the pivots on the diagonal and its factorization; false (and
    /// partial pivoting for the rest of the run) where the analysis finds none or its
    /// pivots fail [`DIAGONAL_TAU`] or the singularity test.
    pub(super) fn diagonal_factorization(&mut self, values: &[f64], max: f64) -> bool {
        if self.diagonal_failed || !self.diagonal_allowed {
            return false;
        }
        let Some(o) = diagonal_order(&self.pattern, values) else {
            self.diagonal_failed = true;
            return false;
        };
        self.full += 1;
        self.q = o.order;
        self.q_inv.clone_from(&o.step);
        self.pinv = o.step;
        (self.l_ptr, self.l_row) = (o.l_ptr, o.l_row);
        (self.u_ptr, self.u_row) = (o.u_ptr, o.u_row);
        self.l_val.resize(self.l_row.len(), 0.0);
        self.u_val.resize(self.u_row.len(), 0.0);
        self.find_supernodes();
        self.have_factors = true;
        self.diagonal = true;
        if self.refactor_chosen(values, DIAGONAL_TAU) && self.pivots_pass(max) {
            return true;
        }
        self.have_factors = false;
        self.diagonal = false;
        self.diagonal_failed = true;
        false
    }

    /// Every pivot finite and above round-off of the matrix's largest entry `max`.
    pub(super) fn pivots_pass(&self, max: f64) -> bool {
        let floor = PIVOT_TOL * max.max(f64::MIN_POSITIVE);
        self.diag.iter().all(|d| d.is_finite() && d.abs() > floor)
    }
}
