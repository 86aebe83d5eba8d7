//! Time per step of two chains, with hand-written element functions from
//! `tests/runtime/common`: N pendulums (2-D point masses joined by distance constraints) and
//! N rigid bodies on R³×SO(3) joined by spherical joints; converged Newton and
//! real-time fixed(2), sparse and dense LU. Run with
//! `cargo bench -p fdc-runtime --bench chain` (add `-- quick` for a short run).
//! Prints a markdown table for docs/performance.md.

#[path = "../tests/runtime/common/mod.rs"]
mod common;

use std::time::Instant;

use fdc_runtime::{LinearSolverKind, Newton, Settings, System};

fn measure(
    model: fdc_runtime::Model,
    newton: Newton,
    linear: LinearSolverKind,
    steps: usize,
) -> (f64, f64, f64, f64, usize) {
    let s = Settings {
        end: 1e9,
        step: 1e-3,
        newton,
        linear,
        ..Settings::default()
    };
    let mut sys = System::new(model).expect("valid chain");
    sys.initialize(&s).expect("consistent start");
    for _ in 0..20 {
        sys.step(&s).expect("step");
    }
    let mut times = Vec::with_capacity(steps);
    let mut iterations = 0;
    let full0 = sys.full_factorizations();
    for _ in 0..steps {
        let t0 = Instant::now();
        let r = sys.step(&s).expect("step");
        times.push(t0.elapsed().as_secs_f64() * 1e6);
        iterations += r.newton_iterations;
    }
    let full = sys.full_factorizations() - full0;
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    let p99 = times[(times.len() as f64 * 0.99) as usize];
    let mean = times.iter().sum::<f64>() / times.len() as f64;
    (median, mean, p99, iterations as f64 / steps as f64, full)
}

fn main() {
    let quick = std::env::args().any(|a| a == "quick");
    println!("| model | N | unknowns | Newton | LU | median µs/step | mean | p99 | iterations/step | new pivot orders |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    type Build = fn(usize) -> fdc_runtime::Model;
    let models: [(&str, Build, usize, usize); 2] = [
        ("point-mass chain", common::chain, 3, 64),
        ("rigid-body chain", common::rigid_chain, 9, 16),
    ];
    for (name, build, per_body, dense_max) in models {
        for n in [1usize, 4, 16, 64, 256] {
            for (label, newton) in [
                ("converged", Newton::Velocity { tol: 1e-10 }),
                ("fixed(2)", Newton::Fixed(2)),
            ] {
                for linear in [LinearSolverKind::Sparse, LinearSolverKind::Dense] {
                    if linear == LinearSolverKind::Dense && n > dense_max {
                        continue;
                    }
                    let steps = if quick {
                        200
                    } else {
                        (40_000 / n).clamp(500, 20_000)
                    };
                    let (median, mean, p99, iters, full) = measure(build(n), newton, linear, steps);
                    // The dense LU pivots anew every time: the count says nothing there.
                    let full = if linear == LinearSolverKind::Dense {
                        "-".to_string()
                    } else {
                        full.to_string()
                    };
                    println!(
                        "| {name} | {n} | {} | {label} | {linear:?} | {median:.1} | {mean:.1} | {p99:.1} | {iters:.2} | {full} |",
                        per_body * n
                    );
                }
            }
        }
    }
}
