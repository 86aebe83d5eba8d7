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

use fdc_runtime::assembly::Pattern;
use fdc_runtime::linear::{LinearSolver, LuKernel, SparseLu};

/// Multiply-adds of one left-looking refactorization: every U entry (k, j) costs the
/// column k of L.
fn multiply_adds(lu: &SparseLu) -> usize {
    let m = lu.memory();
    let l_len = |k: usize| m.l_ptr[k + 1] - m.l_ptr[k];
    m.u_row.iter().map(|&k| l_len(k)).sum::<usize>() + m.l_row.len()
}

/// CPU time of this thread in ns, so that a factorization longer than a time slice of
/// the loaded machine is not charged for the other processes that run meanwhile; wall
/// time where the clock is not available. (It read /proc's schedstat before, which for
/// the running thread is only brought up to date at a scheduler tick: the quick runs'
/// timings of under a tick read 0.)
fn cpu_ns(start: Instant) -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec for the call to write.
    if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } == 0 {
        ts.tv_sec as f64 * 1e9 + ts.tv_nsec as f64
    } else {
        start.elapsed().as_nanos() as f64
    }
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
        measure(&label, n, &pattern, &values, quick, profile);
    }
}

/// The five solvers the table compares on one matrix, in the order they are timed.
const EXACT: usize = 0;
const RELAXED: usize = 1;
const DIAGONAL: usize = 2;
const RELAXED_BASELINE: usize = 3;
const DIAGONAL_BASELINE: usize = 4;

/// A sparse LU for `pattern` in one of the configurations of the table: exact or
/// relaxed supernodes, partial pivoting or the diagonal order (what the iteration
/// matrix tries first), the blocked refactorization's AVX2 compilation (the default
/// where the processor has it) or its baseline x86-64 one (the same bits).
fn solver(pattern: &Pattern, which: usize) -> SparseLu {
    let mut lu = SparseLu::new(pattern).expect("analysis");
    lu.set_relaxed(which != EXACT);
    if which == DIAGONAL || which == DIAGONAL_BASELINE {
        lu.allow_diagonal_order();
    }
    lu.set_wide_registers(which != RELAXED_BASELINE && which != DIAGONAL_BASELINE);
    lu
}

/// Times the five solvers on one matrix (interleaved rounds, the median of the
/// per-round figures) and prints its row of the table.
fn measure(label: &str, n: usize, pattern: &Pattern, values: &[f64], quick: bool, profile: bool) {
    let mut seed = 5;
    let rhs: Vec<f64> = (0..pattern.n).map(|_| matrices::lcg(&mut seed)).collect();
    let mut lus: Vec<SparseLu> = (0..5).map(|w| solver(pattern, w)).collect();
    let mut xs = vec![rhs.clone(); 5];
    // The first factorization chooses the pivot order; every later one keeps it.
    for (lu, x) in lus.iter_mut().zip(&mut xs) {
        time(lu, values, &rhs, x, 3);
    }
    let reps = if quick {
        50
    } else {
        (200_000 / n).clamp(200, 20_000)
    };
    let mut rounds = vec![vec![]; 5];
    for _ in 0..5 {
        for (w, (lu, x)) in lus.iter_mut().zip(&mut xs).enumerate() {
            // `-- profile`: the relaxed kernel alone (for perf; the ratios are then void).
            let r = if profile && w != RELAXED { 1 } else { reps };
            rounds[w].push(time(lu, values, &rhs, x, r));
        }
    }
    let t: Vec<f64> = rounds.iter_mut().map(|r| median(r)).collect();
    for (wide, narrow) in [(RELAXED, RELAXED_BASELINE), (DIAGONAL, DIAGONAL_BASELINE)] {
        assert_eq!(
            xs[wide], xs[narrow],
            "{label}: the AVX2 compilation changed the solution"
        );
    }
    // A solve alone on the kept factors (a correction on a kept matrix).
    let mut scratch = rhs.clone();
    let mut solve_alone = |w: usize| {
        let mut r: Vec<f64> = (0..5)
            .map(|_| time_solve(&mut lus[w], &rhs, &mut scratch, 4 * reps))
            .collect();
        median(&mut r)
    };
    let (tds, ts) = (solve_alone(DIAGONAL), solve_alone(RELAXED));
    let diff = xs[EXACT]
        .iter()
        .zip(&xs[RELAXED])
        .map(|(a, b)| (a - b).abs() / (1.0 + a.abs()))
        .fold(0.0, f64::max);
    let (old, new, diag) = (&lus[EXACT], &lus[RELAXED], &lus[DIAGONAL]);
    assert_eq!(old.full_factorizations(), 1);
    assert_eq!(new.full_factorizations(), 1);
    assert_eq!(new.active(), LuKernel::Blocked);
    assert_eq!(old.active(), LuKernel::Blocked);
    let (to, tn, td) = (t[EXACT], t[RELAXED], t[DIAGONAL]);
    let diagonal = if diag.memory().diagonal {
        format!(
            "{}, {td:.1}, {:.2}, {tds:.2} ({})",
            diag.blocked_multiply_adds().unwrap_or(0),
            td / tn,
            if diag.solves_by_rows() {
                "rows"
            } else {
                "panels"
            }
        )
    } else {
        "none (partial pivoting)".into()
    };
    let wide = if new.wide_registers() {
        format!(
            "{:.2} / {:.2}",
            tn / t[RELAXED_BASELINE],
            td / t[DIAGONAL_BASELINE]
        )
    } else {
        "no AVX2 here".into()
    };
    println!(
        "| {label} | {} | {} | {} / {} / {} | {} / {} | {to:.1} | {tn:.1} | {:.3} / {:.3} | {:.2} | {diff:.1e} | {ts:.2} | {diagonal} | {wide} |",
        pattern.n,
        new.factor_nnz(),
        multiply_adds(new),
        old.blocked_multiply_adds().unwrap_or(0),
        new.blocked_multiply_adds().unwrap_or(0),
        old.supernodes(),
        new.supernodes(),
        to / n as f64,
        tn / n as f64,
        tn / to,
    );
}

/// The median of five or more figures.
fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}
