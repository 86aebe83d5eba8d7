//! The sparse LU's refactorization on the kept pivot order plus one solve, alone, on
//! the iteration matrix of an N-link revolute chain (6 velocity unknowns per body, 5
//! constraint rows per joint, a spring-damper between neighbours:
//! `tests/runtime/common/matrices.rs`), the blocked kernel (supernode by supernode in
//! dense blocks) on relaxed supernodes (merged into wider ones with explicit zeros, the
//! default) against the same kernel on the exact ones (runs whose L columns nest) in
//! the same invocation, in CPU time of the thread (the machine is shared). Run with `cargo bench --workspace --bench lu` (add
//! `-- quick` for a short run, `-- profile` to time the relaxed blocked kernel alone, and sizes to replace N = 16, 64, 256, 1000); then the
//! same sizes of the peers' rod chain (`matrices::rod_chain_matrix` with the compiled
//! chain's translation–rotation couplings: no spring-dampers, whose diagonal order has
//! narrow supernodes that solve row by row), and last the
//! vehicle-like mechanism of `matrices::vehicle_joints` (17 bodies).
//! Then one solve alone on the relaxed factors (what a correction on a kept matrix
//! costs in the LU), and the same figures for the order with the pivots on the
//! diagonal (`linear/diagonal.rs`, what the iteration matrix tries first), timed
//! interleaved with the relaxed kernel under partial pivoting; last, both orders'
//! refactorization + solve with the blocked kernel's AVX2 compilation (the default where
//! the processor has AVX2) against its baseline x86-64 one, interleaved too (the
//! solutions must be the same bits). Prints a markdown table for docs/performance.md.

#[path = "../tests/runtime/common/matrices.rs"]
mod matrices;

use std::time::Instant;

use fdc_runtime::linear::{LinearSolver, LuKernel, SparseLu};

/// Multiply-adds of one left-looking refactorization: every U entry (k, j) costs the
/// column k of L.
fn multiply_adds(lu: &SparseLu) -> usize {
    let m = lu.memory();
    let l_len = |k: usize| m.l_ptr[k + 1] - m.l_ptr[k];
    m.u_row.iter().map(|&k| l_len(k)).sum::<usize>() + m.l_row.len()
}

/// CPU time of this thread in ns (Linux: the first field of its schedstat), so that a
/// factorization longer than a time slice of the loaded machine is not charged for the
/// other processes that run meanwhile; wall time where it is not available.
fn cpu_ns(start: Instant) -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| start.elapsed().as_nanos() as f64)
}

/// Mean CPU µs of one refactorization + solve over `reps` calls.
fn time(lu: &mut SparseLu, values: &[f64], rhs: &[f64], x: &mut [f64], reps: usize) -> f64 {
    let origin = Instant::now();
    let t0 = cpu_ns(origin);
    for _ in 0..reps {
        x.copy_from_slice(rhs);
        lu.factorize(values).expect("nonsingular");
        lu.solve(x);
    }
    (cpu_ns(origin) - t0) / reps as f64 * 1e-3
}

/// Mean CPU µs of one solve on the current factors over `reps` calls (a kept matrix's
/// share of a Newton correction).
fn time_solve(lu: &mut SparseLu, rhs: &[f64], x: &mut [f64], reps: usize) -> f64 {
    let origin = Instant::now();
    let t0 = cpu_ns(origin);
    for _ in 0..reps {
        x.copy_from_slice(rhs);
        lu.solve(x);
    }
    (cpu_ns(origin) - t0) / reps as f64 * 1e-3
}

fn main() {
    let quick = std::env::args().any(|a| a == "quick");
    let profile = std::env::args().any(|a| a == "profile");
    println!("| N | unknowns | nnz(L+U) | multiply-adds (column / exact / relaxed) | supernodes (exact / relaxed) | exact µs | relaxed µs | µs per body (exact / relaxed) | relaxed / exact | max rel. difference | solve alone µs (relaxed) | diagonal order: multiply-adds, µs, ÷ relaxed, solve alone µs (by rows or panels) | AVX2 ÷ baseline x86-64 (relaxed / diagonal order) |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    // Sizes on the command line replace the default ones.
    let mut sizes: Vec<usize> = std::env::args().filter_map(|a| a.parse().ok()).collect();
    if sizes.is_empty() {
        sizes = vec![16, 64, 256, 1000];
    }
    // N-link chains, the peers' rod chains (`bench/peers`: no spring-dampers, narrow
    // supernodes with the pivots on the diagonal), then the vehicle-like tree with closed
    // suspension loops (its 17 bodies in the per-body figures).
    let (vehicle_bodies, vehicle) = matrices::vehicle_joints();
    let chains = sizes.iter().map(|&n| {
        let joints = matrices::chain_joints(n);
        (n.to_string(), n, matrices::iteration_matrix(n, &joints, 1))
    });
    let rods = sizes.iter().map(|&n| {
        (
            format!("{n} rods"),
            n,
            matrices::rod_chain_matrix(n, 1, true),
        )
    });
    let vehicle_matrix = matrices::iteration_matrix(vehicle_bodies, &vehicle, 1);
    let cases = chains.chain(rods).chain([(
        "vehicle-like tree".to_string(),
        vehicle_bodies,
        vehicle_matrix,
    )]);
    for (label, n, (pattern, values)) in cases {
        let mut seed = 5;
        let rhs: Vec<f64> = (0..pattern.n).map(|_| matrices::lcg(&mut seed)).collect();
        let mut old = SparseLu::new(&pattern).expect("analysis");
        old.set_relaxed(false);
        let mut new = SparseLu::new(&pattern).expect("analysis");
        new.set_relaxed(true);
        // The order with the pivots on the diagonal (what the iteration matrix tries
        // first), on relaxed supernodes too.
        let mut diag = SparseLu::new(&pattern).expect("analysis");
        diag.allow_diagonal_order();
        // Both compiled for baseline x86-64 (by default the blocked refactorization
        // runs its AVX2 compilation where the processor has it; the same bits).
        let mut base = SparseLu::new(&pattern).expect("analysis");
        base.set_wide_registers(false);
        let mut diag_base = SparseLu::new(&pattern).expect("analysis");
        diag_base.allow_diagonal_order();
        diag_base.set_wide_registers(false);
        let (mut xo, mut xn, mut xd) = (rhs.clone(), rhs.clone(), rhs.clone());
        let (mut xb, mut xdb) = (rhs.clone(), rhs.clone());
        // The first factorization chooses the pivot order; every later one keeps it.
        time(&mut old, &values, &rhs, &mut xo, 3);
        time(&mut new, &values, &rhs, &mut xn, 3);
        time(&mut diag, &values, &rhs, &mut xd, 3);
        time(&mut base, &values, &rhs, &mut xb, 3);
        time(&mut diag_base, &values, &rhs, &mut xdb, 3);
        let reps = if quick {
            50
        } else {
            (200_000 / n).clamp(200, 20_000)
        };
        // Interleaved rounds, the median of the per-round medians.
        let (mut to, mut tn, mut td) = (vec![], vec![], vec![]);
        let (mut tb, mut tdb) = (vec![], vec![]);
        for _ in 0..5 {
            // `-- profile`: the relaxed kernel alone (for perf; the ratio is then void).
            let old_reps = if profile { 1 } else { reps };
            to.push(time(&mut old, &values, &rhs, &mut xo, old_reps));
            tn.push(time(&mut new, &values, &rhs, &mut xn, reps));
            td.push(time(&mut diag, &values, &rhs, &mut xd, old_reps));
            tb.push(time(&mut base, &values, &rhs, &mut xb, old_reps));
            tdb.push(time(&mut diag_base, &values, &rhs, &mut xdb, old_reps));
        }
        for t in [&mut to, &mut tn, &mut td, &mut tb, &mut tdb] {
            t.sort_by(f64::total_cmp);
        }
        let (to, tn, td, tb, tdb) = (to[2], tn[2], td[2], tb[2], tdb[2]);
        assert_eq!(xn, xb, "{label}: the AVX2 compilation changed the solution");
        assert_eq!(
            xd, xdb,
            "{label}: the AVX2 compilation changed the solution"
        );
        let mut tds: Vec<f64> = (0..5)
            .map(|_| time_solve(&mut diag, &rhs, &mut xd, 4 * reps))
            .collect();
        tds.sort_by(f64::total_cmp);
        let diagonal = diag.memory().diagonal;
        let mut ts: Vec<f64> = (0..5)
            .map(|_| time_solve(&mut new, &rhs, &mut xn, 4 * reps))
            .collect();
        ts.sort_by(f64::total_cmp);
        let diff = xo
            .iter()
            .zip(&xn)
            .map(|(a, b)| (a - b).abs() / (1.0 + a.abs()))
            .fold(0.0, f64::max);
        assert_eq!(old.full_factorizations(), 1);
        assert_eq!(new.full_factorizations(), 1);
        assert_eq!(new.active(), LuKernel::Blocked);
        assert_eq!(old.active(), LuKernel::Blocked);
        println!(
            "| {label} | {} | {} | {} / {} / {} | {} / {} | {to:.1} | {tn:.1} | {:.3} / {:.3} | {:.2} | {diff:.1e} | {:.2} | {} | {} |",
            pattern.n,
            new.factor_nnz(),
            multiply_adds(&new),
            old.blocked_multiply_adds().unwrap_or(0),
            new.blocked_multiply_adds().unwrap_or(0),
            old.supernodes(),
            new.supernodes(),
            to / n as f64,
            tn / n as f64,
            tn / to,
            ts[2],
            if diagonal {
                format!(
                    "{}, {td:.1}, {:.2}, {:.2} ({})",
                    diag.blocked_multiply_adds().unwrap_or(0),
                    td / tn,
                    tds[2],
                    if diag.solves_by_rows() { "rows" } else { "panels" }
                )
            } else {
                "none (partial pivoting)".into()
            },
            if new.wide_registers() {
                format!("{:.2} / {:.2}", tn / tb, td / tdb)
            } else {
                "no AVX2 here".into()
            }
        );
    }
}
