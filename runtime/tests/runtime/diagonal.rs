//! The sparse LU's orders with the pivots on the diagonal (`linear/diagonal.rs`,
//! `LinearSolver::allow_diagonal_order`): symmetric factors with less work than
//! partial pivoting on multibody matrices, the same solutions, and partial pivoting
//! where no such order exists, where its pivots fail, or once it is abandoned.

use fdc_runtime::assembly::Pattern;
use fdc_runtime::linear::{DenseLu, LinearSolver, SparseLu};

use crate::lu::matrices::*;

/// The solution of `values` x = b by the dense LU with partial pivoting.
fn dense_solution(pattern: &Pattern, values: &[f64], b: &[f64]) -> Vec<f64> {
    let mut dense = DenseLu::new(pattern);
    dense.factorize(values).unwrap();
    let mut x = b.to_vec();
    dense.solve(&mut x);
    x
}

/// max |x − y| / (1 + |y|).
fn difference(x: &[f64], y: &[f64]) -> f64 {
    x.iter()
        .zip(y)
        .map(|(a, b)| (a - b).abs() / (1.0 + b.abs()))
        .fold(0.0, f64::max)
}

/// The backward error of x: max |A x − b| / (max|A| max|x| + max|b|).
fn backward_error(p: &Pattern, values: &[f64], x: &[f64], b: &[f64]) -> f64 {
    let mut y = vec![0.0; p.n];
    p.mul(values, x, &mut y);
    let max = |v: &[f64]| v.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let r = y
        .iter()
        .zip(b)
        .map(|(y, b)| (y - b).abs())
        .fold(0.0, f64::max);
    r / (max(values) * max(x) + max(b))
}

fn diagonal_lu(pattern: &Pattern) -> SparseLu {
    let mut lu = SparseLu::new(pattern).unwrap();
    lu.allow_diagonal_order();
    lu
}

/// The 2 × 2 matrix `a`: its off-diagonal nonzeros and the diagonal (always in a
/// pattern) with their values in the pattern's order.
fn two_by_two(a: [[f64; 2]; 2]) -> (Pattern, Vec<f64>) {
    let off: Vec<(usize, usize)> = [(0, 1), (1, 0)]
        .into_iter()
        .filter(|&(r, c)| a[r][c] != 0.0)
        .collect();
    let (pattern, _) = Pattern::build(2, &off);
    let values = (0..2)
        .flat_map(|c| {
            let rows = &pattern.row_idx[pattern.col_ptr[c]..pattern.col_ptr[c + 1]];
            rows.iter().map(move |&r| a[r][c]).collect::<Vec<_>>()
        })
        .collect();
    (pattern, values)
}

#[test]
fn a_chain_gets_symmetric_factors_with_about_half_the_multiply_adds() {
    for (bodies, joints) in [(16, chain_joints(16)), vehicle_joints()] {
        let (pattern, values) = iteration_matrix(bodies, &joints, 3);
        let mut seed = 7;
        let b: Vec<f64> = (0..pattern.n).map(|_| lcg(&mut seed)).collect();
        let mut partial = SparseLu::new(&pattern).unwrap();
        let mut diagonal = diagonal_lu(&pattern);
        let (mut xp, mut xd) = (b.clone(), b.clone());
        for (lu, x) in [(&mut partial, &mut xp), (&mut diagonal, &mut xd)] {
            lu.factorize(&values).unwrap();
            lu.solve(x);
        }
        let reference = dense_solution(&pattern, &values, &b);
        let (dp, dd) = (difference(&xp, &reference), difference(&xd, &reference));
        let backward = backward_error(&pattern, &values, &xd, &b);
        let (mp, md) = (
            partial.blocked_multiply_adds().unwrap(),
            diagonal.blocked_multiply_adds().unwrap(),
        );
        eprintln!(
            "{bodies} bodies: multiply-adds {mp} (partial pivoting) → {md} (diagonal); \
             differences to the dense LU {dp:.1e} / {dd:.1e}, backward error {backward:.1e}"
        );
        let m = diagonal.memory();
        assert!(m.diagonal && !partial.memory().diagonal);
        assert_eq!(m.l_row.len(), m.u_row.len(), "symmetric patterns");
        for (w, rows, cols) in diagonal.blocked_shapes() {
            assert_eq!(
                cols,
                rows - w,
                "a supernode reaches as many columns as rows"
            );
        }
        assert!(backward < 1e-13 && dd < 1e-11, "{backward} {dd}");
        assert!((md as f64) < 0.75 * mp as f64, "{md} vs {mp}");
        // A kept order serves new values without a new analysis.
        let (pattern2, values2) = iteration_matrix(bodies, &joints, 4);
        assert_eq!(pattern2.row_idx, pattern.row_idx);
        let mut x2 = b.clone();
        diagonal.factorize(&values2).unwrap();
        diagonal.solve(&mut x2);
        assert_eq!(diagonal.full_factorizations(), 1);
        let d2 = difference(&x2, &dense_solution(&pattern, &values2, &b));
        let backward2 = backward_error(&pattern, &values2, &x2, &b);
        eprintln!("kept order, new values: difference {d2:.1e}, backward error {backward2:.1e}");
        assert!(backward2 < 1e-13 && d2 < 1e-10, "{backward2} {d2}");
    }
}

#[test]
fn partial_pivoting_where_no_diagonal_order_exists_or_its_pivots_fail() {
    // [[0, 1], [1, 0]]: no diagonal is nonzero and none is filled; [[1e-12, 1], [1,
    // 1e-12]]: both diagonals are 1e-12 of the entry below them.
    let swap = two_by_two([[0.0, 1.0], [1.0, 0.0]]);
    let tiny = two_by_two([[1e-12, 1.0], [1.0, 1e-12]]);
    for (pattern, values) in [swap, tiny] {
        let mut lu = diagonal_lu(&pattern);
        lu.factorize(&values).unwrap();
        let mut x = vec![1.0, 2.0];
        lu.solve(&mut x);
        let reference = dense_solution(&pattern, &values, &[1.0, 2.0]);
        assert!(difference(&x, &reference) < 1e-14, "{x:?} vs {reference:?}");
        let m = lu.memory();
        assert!(!m.diagonal && m.diagonal_failed, "{values:?}");
    }
}

#[test]
fn a_small_diagonal_waits_until_the_elimination_has_grown_it() {
    // [[1e-12, 1], [1, 1]]: the first diagonal is 1e-12 of the entry below it, so the
    // second goes first and leaves 1e-12 − 1 on the first.
    let (pattern, values) = two_by_two([[1e-12, 1.0], [1.0, 1.0]]);
    let mut lu = diagonal_lu(&pattern);
    lu.factorize(&values).unwrap();
    let m = lu.memory();
    assert!(m.diagonal, "a diagonal order exists");
    assert_eq!(m.pinv, [1, 0], "the second row and column first");
    let mut x = vec![1.0, 2.0];
    lu.solve(&mut x);
    let reference = dense_solution(&pattern, &values, &[1.0, 2.0]);
    assert!(difference(&x, &reference) < 1e-14, "{x:?} vs {reference:?}");
}

#[test]
fn an_abandoned_diagonal_order_is_replaced_by_partial_pivoting_for_good() {
    let (pattern, values) = iteration_matrix(8, &chain_joints(8), 5);
    let b: Vec<f64> = (0..pattern.n).map(|i| (i as f64 * 0.37).sin()).collect();
    let reference = dense_solution(&pattern, &values, &b);
    let mut lu = diagonal_lu(&pattern);
    lu.factorize(&values).unwrap();
    assert!(lu.memory().diagonal);
    assert!(lu.abandon_diagonal_order(), "there was one");
    assert!(!lu.abandon_diagonal_order(), "no longer");
    lu.factorize(&values).unwrap();
    let mut x = b.clone();
    lu.solve(&mut x);
    let m = lu.memory();
    assert!(!m.diagonal && m.diagonal_failed);
    assert_eq!(lu.full_factorizations(), 2);
    assert!(difference(&x, &reference) < 1e-12);
    // The default solver never tries one.
    let mut plain = SparseLu::new(&pattern).unwrap();
    plain.factorize(&values).unwrap();
    assert!(!plain.memory().diagonal && !plain.memory().diagonal_failed);
    assert!(!plain.abandon_diagonal_order());
}

/// The solves run row by row where the blocked kernel's supernodes are narrow (the
/// rod chain with the pivots on the diagonal) and panel by panel where they are wide
/// (the chain with spring-dampers under partial pivoting); both give the dense LU's
/// solutions, on a new matrix and on the next one with the kept order.
#[test]
fn narrow_supernodes_solve_by_rows_and_wide_ones_by_panels() {
    let spring_chain = iteration_matrix(24, &chain_joints(24), 3);
    let cases = [(rod_chain_matrix(24, 3, true), true), (spring_chain, false)];
    for ((pattern, values), narrow) in cases {
        let mut lu = SparseLu::new(&pattern).unwrap();
        if narrow {
            lu.allow_diagonal_order();
        }
        let mut seed = 11;
        for round in 0..2 {
            // The second round refactorizes other values on the kept order.
            let scaled: Vec<f64> = values
                .iter()
                .map(|v| v * (1.0 + 0.1 * round as f64))
                .collect();
            lu.factorize(&scaled).unwrap();
            assert_eq!(lu.solves_by_rows(), narrow, "narrow {narrow}");
            let b: Vec<f64> = (0..pattern.n).map(|_| lcg(&mut seed)).collect();
            let mut x = b.clone();
            lu.solve(&mut x);
            let reference = dense_solution(&pattern, &scaled, &b);
            let (diff, err) = (
                difference(&x, &reference),
                backward_error(&pattern, &scaled, &x, &b),
            );
            assert!(
                diff < 1e-10 && err < 1e-14,
                "narrow {narrow} round {round}: {diff:e} {err:e}"
            );
        }
        assert_eq!(lu.full_factorizations(), 1);
    }
}

/// The diagonal order is taken only where the blocked kernel's refactorization costs
/// no more multiply-adds in it than in partial pivoting's order: the rod chain whose
/// translations have a diagonal block declines it (about twice the multiply-adds), the
/// one with the compiled chain's translation–rotation couplings takes it (fewer).
/// Either way the solutions are the dense LU's and one full factorization is counted.
#[test]
fn a_diagonal_order_dearer_than_partial_pivoting_is_declined() {
    for coupled in [false, true] {
        let (pattern, values) = rod_chain_matrix(24, 5, coupled);
        let partial = {
            let mut lu = SparseLu::new(&pattern).unwrap();
            lu.factorize(&values).unwrap();
            lu.blocked_multiply_adds().unwrap()
        };
        let mut lu = SparseLu::new(&pattern).unwrap();
        lu.allow_diagonal_order();
        lu.factorize(&values).unwrap();
        let taken = lu.memory().diagonal;
        let cost = lu.blocked_multiply_adds().unwrap();
        eprintln!("rod chain, coupled {coupled}: diagonal order taken {taken}, multiply-adds {cost} (partial pivoting {partial})");
        assert_eq!(taken, coupled, "coupled {coupled}");
        if taken {
            assert!(cost <= partial, "{cost} against {partial}");
        } else {
            assert_eq!(cost, partial);
        }
        assert_eq!(lu.full_factorizations(), 1);
        let mut seed = 3;
        let b: Vec<f64> = (0..pattern.n).map(|_| lcg(&mut seed)).collect();
        let mut x = b.clone();
        lu.solve(&mut x);
        let diff = difference(&x, &dense_solution(&pattern, &values, &b));
        assert!(diff < 1e-10, "coupled {coupled}: {diff:e}");
    }
}
