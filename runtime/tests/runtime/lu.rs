//! The supernodal refactorization against the column-by-column one and a dense LU with
//! partial pivoting, on multibody iteration matrices: a chain, closed loops, and loops
//! whose redundant rows are held at zero.

#[path = "common/matrices.rs"]
mod matrices;

use fdc_runtime::assembly::Pattern;
use fdc_runtime::linear::{DenseLu, LinearSolver, SparseLu};
use matrices::*;

/// Largest |A x - b| relative to |A|·|x| + |b| (the backward error, max norms).
fn residual(p: &Pattern, values: &[f64], x: &[f64], b: &[f64]) -> f64 {
    let mut y = vec![0.0; p.n];
    p.mul(values, x, &mut y);
    let amax = values.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let norm = |v: &[f64]| v.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let scale = amax * norm(x) + norm(b);
    y.iter()
        .zip(b)
        .map(|(y, b)| (y - b).abs())
        .fold(0.0, f64::max)
        / scale
}

/// Solves with the three solvers, over several value sets of one pattern (the later
/// ones keep the first pivot order), and compares.
fn agree(pattern: &Pattern, value_sets: &[Vec<f64>]) -> usize {
    let mut blocked = SparseLu::new(pattern).unwrap();
    let mut column = SparseLu::new(pattern).unwrap();
    column.set_supernodal(false);
    let mut dense = DenseLu::new(pattern);
    let mut seed = 11;
    for values in value_sets {
        let b: Vec<f64> = (0..pattern.n).map(|_| lcg(&mut seed)).collect();
        let mut xs = [b.clone(), b.clone(), b.clone()];
        blocked.factorize(values).unwrap();
        column.factorize(values).unwrap();
        dense.factorize(values).unwrap();
        blocked.solve(&mut xs[0]);
        column.solve(&mut xs[1]);
        dense.solve(&mut xs[2]);
        for x in &xs {
            let r = residual(pattern, values, x, &b);
            assert!(r < 1e-12, "residual {r:e}");
        }
        let xmax = xs[2].iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let diff = |a: &[f64], b: &[f64]| {
            a.iter()
                .zip(b)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max)
                / xmax
        };
        let (dc, dd) = (diff(&xs[0], &xs[1]), diff(&xs[0], &xs[2]));
        eprintln!(
            "n = {}: relative difference to the column kernels {dc:.1e}, to dense {dd:.1e}",
            pattern.n
        );
        // Same elimination, other order of the sums: round-off apart.
        assert!(dc <= 1e-11, "{dc:e}");
        assert!(dd <= 1e-9, "{dd:e}");
    }
    assert_eq!(blocked.full_factorizations(), column.full_factorizations());
    assert!(blocked.supernodes() > 0 && blocked.supernodes() < pattern.n);
    blocked.supernodes()
}

/// The values of `iteration_matrix` with other seeds: the numbers a later step has.
fn value_sets(bodies: usize, joints: &dyn Fn() -> Vec<Joint>) -> (Pattern, Vec<Vec<f64>>) {
    let (p, v0) = iteration_matrix(bodies, &joints(), 1);
    let sets = (0..4)
        .map(|s| {
            let (_, v) = iteration_matrix(bodies, &joints(), 1 + s);
            // Small changes around the first values: the kept order stays good.
            v0.iter().zip(&v).map(|(a, b)| a + 0.01 * (b - a)).collect()
        })
        .collect();
    (p, sets)
}

#[test]
fn chains_solve_as_the_column_kernels_and_a_dense_lu() {
    for n in [1, 2, 7, 40] {
        let (p, sets) = value_sets(n, &|| chain_joints(n));
        let sn = agree(&p, &sets);
        // A supernode holds several steps on average (the 6×6 blocks).
        assert!(p.n >= 3 * sn || n < 7, "{} unknowns, {sn} supernodes", p.n);
    }
}

#[test]
fn closed_loops_solve_as_the_column_kernels_and_a_dense_lu() {
    for n in [4, 12, 31] {
        let (p, sets) = value_sets(n, &|| loop_joints(n));
        agree(&p, &sets);
    }
}

#[test]
fn redundant_rows_held_at_zero_solve_alike() {
    let n = 12;
    let (p, mut sets) = value_sets(n, &|| loop_joints(n));
    // The second row of every loop joint (they follow the 5n chain rows).
    let rows: Vec<usize> = (0..(n - 1) / 3).map(|k| 5 * n + 2 * k + 1).collect();
    for v in &mut sets {
        remove_rows(&p, v, 6 * n, &rows);
    }
    agree(&p, &sets);
}

#[test]
fn a_degraded_pivot_chooses_a_new_order_in_both_kernels() {
    let n = 10;
    let (p, mut sets) = value_sets(n, &|| chain_joints(n));
    // The velocity block 10⁴ times smaller: the kept pivots there fall below 10⁻³ of
    // the constraint entries in their columns.
    let mut small = sets[0].clone();
    for j in 0..6 * n {
        let (a, b) = (p.col_ptr[j], p.col_ptr[j + 1]);
        for (v, &i) in small[a..b].iter_mut().zip(&p.row_idx[a..b]) {
            if i < 6 * n {
                *v *= 1e-4;
            }
        }
    }
    sets.insert(2, small);
    let mut blocked = SparseLu::new(&p).unwrap();
    for v in &sets {
        blocked.factorize(v).unwrap();
    }
    assert!(blocked.full_factorizations() > 1);
    agree(&p, &sets);
}
