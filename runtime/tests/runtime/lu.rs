//! The blocked (on relaxed and on exact supernodes) and the supernodal
//! refactorizations against the column-by-column one and a dense LU with partial
//! pivoting, on multibody iteration matrices (a chain,
//! closed loops, loops whose redundant rows are held at zero, a vehicle-like tree with
//! closed suspension loops) and random sparse matrices.

#[path = "common/matrices.rs"]
pub(crate) mod matrices;

use fdc_runtime::assembly::Pattern;
use fdc_runtime::linear::{DenseLu, LinearSolver, LuKernel, Singular, SparseLu};
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

/// A sparse LU with the given kernel.
fn sparse(pattern: &Pattern, kernel: LuKernel) -> SparseLu {
    let mut lu = SparseLu::new(pattern).unwrap();
    lu.set_kernel(kernel);
    lu
}

/// Solves with the blocked (relaxed and exact supernodes), supernodal and column
/// kernels and a dense LU, over several value sets of one pattern (the later ones keep
/// the first pivot order), and compares. Returns the number of supernodes of the
/// blocked kernel (relaxed).
fn agree(pattern: &Pattern, value_sets: &[Vec<f64>]) -> usize {
    let kernels = [
        LuKernel::Blocked,
        LuKernel::Supernodal,
        LuKernel::Column,
        LuKernel::Blocked,
    ];
    let mut lus = kernels.map(|k| sparse(pattern, k));
    lus[3].set_relaxed(false);
    let mut dense = DenseLu::new(pattern);
    let mut seed = 11;
    for values in value_sets {
        let b: Vec<f64> = (0..pattern.n).map(|_| lcg(&mut seed)).collect();
        let mut xs = [b.clone(), b.clone(), b.clone(), b.clone(), b.clone()];
        for (lu, x) in lus.iter_mut().zip(&mut xs) {
            lu.factorize(values).unwrap();
            lu.solve(x);
        }
        dense.factorize(values).unwrap();
        dense.solve(&mut xs[4]);
        for x in &xs {
            let r = residual(pattern, values, x, &b);
            assert!(r < 1e-12, "residual {r:e}");
        }
        let xmax = xs[4].iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let diff = |a: &[f64], b: &[f64]| {
            a.iter()
                .zip(b)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max)
                / xmax
        };
        let (db, de, ds, dd) = (
            diff(&xs[0], &xs[2]),
            diff(&xs[3], &xs[2]),
            diff(&xs[1], &xs[2]),
            diff(&xs[0], &xs[4]),
        );
        eprintln!(
            "n = {}: relative difference to the column kernels {db:.1e} (blocked), \
             {de:.1e} (blocked, exact supernodes), {ds:.1e} (supernodal); blocked to \
             dense {dd:.1e}",
            pattern.n
        );
        // Same elimination, other order of the sums: round-off apart.
        assert!(db <= 1e-12, "{db:e}");
        assert!(de <= 1e-12, "{de:e}");
        assert!(ds <= 1e-11, "{ds:e}");
        assert!(dd <= 1e-9, "{dd:e}");
    }
    for lu in &lus[1..] {
        assert_eq!(lus[0].full_factorizations(), lu.full_factorizations());
    }
    // The blocked kernel ran (its structure fits every pattern here), relaxed on no
    // more supernodes than the exact ones.
    assert_eq!(lus[0].active(), LuKernel::Blocked);
    assert_eq!(lus[3].active(), LuKernel::Blocked);
    let sn = lus[0].supernodes();
    assert!(sn <= lus[3].supernodes(), "{sn} > {}", lus[3].supernodes());
    assert!(sn > 0 && sn <= pattern.n);
    sn
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
    let mut blocked = sparse(&p, LuKernel::Blocked);
    for v in &sets {
        blocked.factorize(v).unwrap();
    }
    assert!(blocked.full_factorizations() > 1);
    // The other kernels take the same decisions (`agree` compares the counts).
    agree(&p, &sets);
}

#[test]
fn a_vehicle_like_mechanism_solves_alike() {
    let (bodies, joints) = vehicle_joints();
    let (p, v0) = iteration_matrix(bodies, &joints, 1);
    let sets: Vec<Vec<f64>> = (0..3)
        .map(|s| {
            let (_, v) = iteration_matrix(bodies, &joints, 2 + s);
            v0.iter().zip(&v).map(|(a, b)| a + 0.01 * (b - a)).collect()
        })
        .collect();
    let sn = agree(&p, &sets);
    assert!(p.n >= 2 * sn, "{} unknowns, {sn} supernodes", p.n);
}

#[test]
fn random_sparse_matrices_solve_alike() {
    // Diagonally weighted (pivots stay acceptable when the values move) and not: the
    // second family chooses new row orders with long pivot rows.
    for (n, per_column, shift, seed) in [(30, 2, 4.0, 3), (120, 3, 4.0, 5), (80, 4, 0.0, 9)] {
        let (p, v0) = random_matrix(n, per_column, shift, seed);
        let sets: Vec<Vec<f64>> = (0..3)
            .map(|s| {
                let mut r = 100 + s;
                v0.iter().map(|a| a + 1e-3 * lcg(&mut r)).collect()
            })
            .collect();
        agree(&p, &sets);
    }
}

#[test]
fn the_blocked_kernel_is_deterministic() {
    let n = 20;
    let (p, sets) = value_sets(n, &|| loop_joints(n));
    let mut seed = 3;
    let b: Vec<f64> = (0..p.n).map(|_| lcg(&mut seed)).collect();
    let mut lu = SparseLu::new(&p).unwrap();
    let mut other = SparseLu::new(&p).unwrap();
    let mut first = vec![];
    // The same numbers after other ones, and in a fresh solver: the same bits.
    for values in [&sets[0], &sets[1], &sets[0]] {
        let mut x = b.clone();
        lu.factorize(values).unwrap();
        lu.solve(&mut x);
        first.push(x);
    }
    let mut x = b.clone();
    other.factorize(&sets[0]).unwrap();
    other.solve(&mut x);
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&first[0]), bits(&first[2]));
    assert_eq!(bits(&first[0]), bits(&x));
    assert_ne!(bits(&first[0]), bits(&first[1]));
}

#[test]
fn a_singular_matrix_names_the_dependent_column_in_every_kernel() {
    let n = 8;
    let (p, sets) = value_sets(n, &|| chain_joints(n));
    // The second multiplier of joint 3 made equal to its first: the same column of B
    // transposed (both columns have the same rows apart from their zero diagonals).
    let (c1, c2) = (6 * n + 15, 6 * n + 16);
    let mut singular = sets[1].clone();
    for (k1, k2) in (p.col_ptr[c1]..p.col_ptr[c1 + 1]).zip(p.col_ptr[c2]..p.col_ptr[c2 + 1]) {
        singular[k2] = singular[k1];
    }
    let expected = DenseLu::new(&p).factorize(&singular).unwrap_err();
    assert!(expected.index >= 6 * n, "{expected:?}");
    for kernel in [LuKernel::Blocked, LuKernel::Supernodal, LuKernel::Column] {
        let mut lu = sparse(&p, kernel);
        lu.factorize(&sets[0]).unwrap();
        assert_eq!(lu.factorize(&singular), Err::<(), Singular>(expected));
        // The next good matrix factorizes again.
        lu.factorize(&sets[2]).unwrap();
        let mut x: Vec<f64> = (0..p.n).map(|i| i as f64).collect();
        let b = x.clone();
        lu.solve(&mut x);
        assert!(residual(&p, &sets[2], &x, &b) < 1e-12);
    }
}

#[test]
fn the_blocked_shapes_cover_the_elimination() {
    let (bodies, joints) = vehicle_joints();
    for (p, v) in [
        iteration_matrix(16, &chain_joints(16), 1),
        iteration_matrix(bodies, &joints, 1),
    ] {
        let mut lu = SparseLu::new(&p).unwrap();
        assert!(
            lu.blocked_shapes().is_empty(),
            "no order before a factorization"
        );
        lu.factorize(&v).unwrap();
        let shapes = lu.blocked_shapes();
        assert_eq!(shapes.len(), lu.supernodes());
        // The supernodes' widths partition the unknowns; a panel holds its own rows;
        // the last supernode has nothing right of it.
        assert_eq!(shapes.iter().map(|s| s.0).sum::<usize>(), p.n);
        assert!(shapes.iter().all(|&(w, m, _)| w >= 1 && m >= w));
        assert_eq!(shapes.last().map(|s| s.2), Some(0));
    }
}

/// Numbers held in the blocked kernel's panels and U blocks (without the padding).
fn block_numbers(lu: &SparseLu) -> usize {
    lu.blocked_shapes()
        .iter()
        .map(|&(w, m, nc)| w * (m + nc))
        .sum()
}

#[test]
fn relaxed_supernodes_are_wider_blocks_with_explicit_zeros() {
    let (bodies, joints) = vehicle_joints();
    for (p, v, name) in [
        (iteration_matrix(bodies, &joints, 1), "vehicle-like"),
        (iteration_matrix(12, &loop_joints(12), 1), "loops"),
        (random_matrix(120, 3, 4.0, 5), "random"),
    ]
    .map(|((p, v), name)| (p, v, name))
    {
        let mut exact = SparseLu::new(&p).unwrap();
        exact.set_relaxed(false);
        exact.factorize(&v).unwrap();
        let mut relaxed = SparseLu::new(&p).unwrap();
        relaxed.factorize(&v).unwrap();
        let (se, sr) = (exact.supernodes(), relaxed.supernodes());
        let (ne, nr) = (block_numbers(&exact), block_numbers(&relaxed));
        eprintln!("{name}: {se} exact supernodes, {sr} relaxed; block numbers {ne} → {nr}");
        // Fewer nodes, and the merged blocks hold entries outside the exact pattern.
        assert!(sr < se, "{name}: {sr} relaxed, {se} exact supernodes");
        assert!(nr > ne, "{name}: {nr} relaxed, {ne} exact numbers");
        let shapes = relaxed.blocked_shapes();
        assert_eq!(shapes.iter().map(|s| s.0).sum::<usize>(), p.n);
        // Switching back keeps the order and gives the exact nodes again.
        relaxed.set_relaxed(false);
        assert_eq!(relaxed.supernodes(), se);
        assert_eq!(relaxed.blocked_shapes(), exact.blocked_shapes());
        assert_eq!(relaxed.full_factorizations(), 1);
    }
}

#[test]
fn avx2_refactorization_is_bitwise_the_baseline() {
    // The blocked kernel compiled for AVX2 (where the processor has it) and for
    // baseline x86-64 must give the same bits: the same factors, the same pivot
    // decisions, the same solutions, on every family of matrices here.
    let (vehicle_bodies, vehicle) = vehicle_joints();
    let mut families = vec![
        iteration_matrix(40, &chain_joints(40), 1),
        iteration_matrix(12, &loop_joints(12), 2),
        iteration_matrix(vehicle_bodies, &vehicle, 3),
        rod_chain_matrix(64, 4, true),
        random_matrix(80, 4, 0.0, 9),
    ];
    for (p, v0) in families.drain(..) {
        let mut wide = sparse(&p, LuKernel::Blocked);
        let mut narrow = sparse(&p, LuKernel::Blocked);
        narrow.set_wide_registers(false);
        assert!(!narrow.wide_registers());
        #[cfg(target_arch = "x86_64")]
        assert_eq!(
            wide.wide_registers(),
            std::arch::is_x86_feature_detected!("avx2")
        );
        let mut seed = 11;
        let b: Vec<f64> = (0..p.n).map(|_| lcg(&mut seed)).collect();
        for round in 0..4 {
            // Small moves keep the pivot order; round 2 moves far enough to test it.
            let size = if round == 2 { 0.5 } else { 1e-3 };
            let values: Vec<f64> = v0.iter().map(|a| a + size * lcg(&mut seed)).collect();
            let (rw, rn) = (wide.factorize(&values), narrow.factorize(&values));
            assert_eq!(rw.is_ok(), rn.is_ok(), "round {round}");
            assert_eq!(wide.full_factorizations(), narrow.full_factorizations());
            if rw.is_err() {
                continue;
            }
            let (mut xw, mut xn) = (b.clone(), b.clone());
            wide.solve(&mut xw);
            narrow.solve(&mut xn);
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&xw), bits(&xn), "round {round}");
            assert!(residual(&p, &values, &xw, &b) < 1e-12, "round {round}");
        }
    }
}
