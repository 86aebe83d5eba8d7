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
//! eliminated only while its pivot, in the Schur complement of the nodes eliminated
//! before it, passes [`DIAGONAL_TAU`] against the entries below it. The elimination of
//! the first matrix's values runs alongside the order for that (eligibility from the
//! pattern alone let a closed loop's joint rows in through fill that was numerically
//! zero, as in the four-bar and the vehicle's suspension). A constraint row so waits
//! for a body it couples, and a body's small axial inertia for its joint's rows. The
//! caller checks the pivots of every later matrix and falls back to partial pivoting.

use super::{LuKernel, SparseLu, DIAGONAL_TAU, PIVOT_TOL};
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

/// A neighbour `w` of a node in the elimination graph, with the current values of
/// the entries (node, w) and (w, node) (the Schur complement of the nodes eliminated
/// so far).
#[derive(Clone, Copy)]
struct Link {
    w: usize,
    row: f64,
    col: f64,
}

/// Whether a node with diagonal `d` and neighbours `links` may be eliminated now: its
/// pivot passes [`DIAGONAL_TAU`] against the entries below it in its column.
fn eligible(d: f64, links: &[Link]) -> bool {
    let below = links.iter().fold(0.0f64, |m, l| m.max(l.col.abs()));
    d.is_finite() && d != 0.0 && d.abs() >= DIAGONAL_TAU * below
}

/// Node `u`'s links after eliminating `p` with pivot `dp`, where `p`'s links are
/// `front` and A(u, p), A(p, u) are `a_up`, `a_pu`: the link to `p` dropped, every other
/// node of `front` joined, and the entries updated by the rank-one Schur complement
/// A(u, w) −= A(u, p) A(p, w) / dp, A(w, u) −= A(w, p) A(p, u) / dp. Both lists are
/// sorted by node, and so is the result.
fn eliminate_into(
    (u, p): (usize, usize),
    links: &[Link],
    front: &[Link],
    (a_up, a_pu, dp): (f64, f64, f64),
    out: &mut Vec<Link>,
) {
    out.clear();
    let mut own = links.iter().filter(|l| l.w != p).peekable();
    let mut from_p = front.iter().filter(|l| l.w != u).peekable();
    loop {
        let (mut link, pw) = match (own.peek(), from_p.peek()) {
            (None, None) => break,
            (Some(&&a), Some(&&b)) if a.w == b.w => {
                own.next();
                from_p.next();
                (a, Some(b))
            }
            (Some(&&a), Some(&&b)) if a.w < b.w => {
                own.next();
                (a, None)
            }
            (Some(&&a), None) => {
                own.next();
                (a, None)
            }
            (_, Some(&&b)) => {
                from_p.next();
                let fresh = Link {
                    w: b.w,
                    row: 0.0,
                    col: 0.0,
                };
                (fresh, Some(b))
            }
        };
        if let Some(pw) = pw {
            link.row -= a_up * pw.row / dp;
            link.col -= pw.col * a_pu / dp;
        }
        out.push(link);
    }
}

/// The order of minimum degree with pivots on the diagonal (module doc) for the matrix
/// of `pattern` with `values`: a node is eligible while its pivot in the Schur
/// complement of the nodes before it passes [`DIAGONAL_TAU`] (the elimination of the
/// values runs alongside the order). `None` when nodes are left that never become
/// eligible (partial pivoting's case).
pub(super) fn diagonal_order(pattern: &Pattern, values: &[f64]) -> Option<Order> {
    let n = pattern.n;
    let mut d = vec![0.0; n];
    let mut adj: Vec<Vec<Link>> = vec![Vec::new(); n];
    for c in 0..n {
        let (a, b) = (pattern.col_ptr[c], pattern.col_ptr[c + 1]);
        for (&r, &v) in pattern.row_idx[a..b].iter().zip(&values[a..b]) {
            if r == c {
                d[c] += v;
            } else {
                adj[r].push(Link {
                    w: c,
                    row: v,
                    col: 0.0,
                });
                adj[c].push(Link {
                    w: r,
                    row: 0.0,
                    col: v,
                });
            }
        }
    }
    for links in &mut adj {
        links.sort_unstable_by_key(|l| l.w);
        links.dedup_by(|b, a| {
            let same = a.w == b.w;
            if same {
                a.row += b.row;
                a.col += b.col;
            }
            same
        });
    }
    let mut heap: BinaryHeap<Reverse<(usize, usize)>> = (0..n)
        .filter(|&i| eligible(d[i], &adj[i]))
        .map(|i| Reverse((adj[i].len(), i)))
        .collect();
    let mut done = vec![false; n];
    let mut order = Vec::with_capacity(n);
    let mut lower: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut merged = Vec::new();
    while let Some(Reverse((degree, p))) = heap.pop() {
        if done[p] || degree != adj[p].len() || !eligible(d[p], &adj[p]) {
            continue; // an entry made stale by a later elimination
        }
        done[p] = true;
        order.push(p);
        let front = std::mem::take(&mut adj[p]);
        for &pu in &front {
            // p's link to u: row = A(p, u), col = A(u, p).
            let (u, a_pu, a_up) = (pu.w, pu.row, pu.col);
            d[u] -= a_up * a_pu / d[p];
            eliminate_into((u, p), &adj[u], &front, (a_up, a_pu, d[p]), &mut merged);
            std::mem::swap(&mut adj[u], &mut merged);
            if eligible(d[u], &adj[u]) {
                heap.push(Reverse((adj[u].len(), u)));
            }
        }
        lower[p] = front.iter().map(|l| l.w).collect();
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
    /// partial pivoting for the rest of the run) where the analysis finds none, its
    /// pivots fail [`DIAGONAL_TAU`] or the singularity test, or the blocked kernel's
    /// refactorization would take more multiply-adds in it than in partial pivoting's
    /// order (on a chain of rods with diagonal translational mass blocks 2.1× as
    /// many, 1.6× the time: the lu bench's rod chains).
    pub(super) fn diagonal_factorization(&mut self, values: &[f64], max: f64) -> bool {
        if self.diagonal_failed || !self.diagonal_allowed {
            return false;
        }
        let Some(o) = diagonal_order(&self.pattern, values) else {
            self.diagonal_failed = true;
            return false;
        };
        let partial = self.partial_multiply_adds(values);
        self.q = o.order;
        self.q_inv.clone_from(&o.step);
        self.pinv = o.step;
        (self.l_ptr, self.l_row) = (o.l_ptr, o.l_row);
        (self.u_ptr, self.u_row) = (o.u_ptr, o.u_row);
        self.l_val.resize(self.l_row.len(), 0.0);
        self.u_val.resize(self.u_row.len(), 0.0);
        self.find_supernodes();
        let dearer = matches!(
            (self.blocked_multiply_adds(), partial),
            (Some(diagonal), Some(partial)) if diagonal > partial
        );
        if dearer {
            self.diagonal_failed = true;
            return false;
        }
        self.full += 1;
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

    /// Multiply-adds of one blocked refactorization in the order partial pivoting
    /// takes for `values` (faer's factorization of them), where the blocked kernel is
    /// the chosen one and that order has its blocks; `None` otherwise. Leaves no
    /// factors (the caller sets up its own order next) and counts no full
    /// factorization.
    fn partial_multiply_adds(&mut self, values: &[f64]) -> Option<usize> {
        if self.kernel != LuKernel::Blocked {
            return None;
        }
        let full = self.full;
        let factorized = self.full_factorization(values);
        self.full = full;
        self.have_factors = false;
        factorized.then(|| self.blocked_multiply_adds()).flatten()
    }

    /// Every pivot finite and above round-off of the matrix's largest entry `max`.
    pub(super) fn pivots_pass(&self, max: f64) -> bool {
        let floor = PIVOT_TOL * max.max(f64::MIN_POSITIVE);
        self.diag.iter().all(|d| d.is_finite() && d.abs() > floor)
    }
}
