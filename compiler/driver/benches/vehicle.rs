//! Time per step of the full vehicle (`examples/vehicle.fd`: 14 bodies, 84 velocity
//! dofs, 70 constraints, four `mf_tyre`s) on the analytic road and on the OpenCRG
//! road `examples/roads/straight.crg`, converged Newton and real-time fixed(2), sparse
//! and dense LU, plus the quarter car on a rough road. Every row is measured in this
//! one invocation; the last column is the median against the first row (the
//! baseline), so the ratios hold on a loaded machine where the absolute figures do
//! not. Run with `cargo bench --workspace --bench vehicle` (add `-- quick` for a
//! short run). Prints a markdown table for docs/performance.md.

use std::path::PathBuf;
use std::time::Instant;

use fdc_driver::pipeline::{build, BuildError, BuildOptions};
use fdc_driver::settings::{runtime_settings, Overrides};
use fdc_runtime::{LinearSolverKind, Newton, System};

/// One row: the example, its `--set`s, Newton (`fixed`: fixed(2), else the default
/// converged rule), LU.
struct Case {
    label: &'static str,
    file: &'static str,
    set: &'static [(&'static str, f64)],
    fixed: bool,
    linear: LinearSolverKind,
}

/// Median, p99.9 and minimum of the step times [µs], iterations per step.
fn measure(case: &Case, steps: usize) -> (f64, f64, f64, f64) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(case.file);
    let mut opts = BuildOptions {
        simplify: true,
        ..Default::default()
    };
    opts.overrides = case.set.iter().map(|(n, v)| (n.to_string(), *v)).collect();
    let built = match build(&path, &opts) {
        Ok(b) => b,
        Err(BuildError::Backend(e) | BuildError::Usage(e)) => panic!("{e}"),
        Err(BuildError::Model { .. }) => panic!("{} does not build", case.file),
    };
    let mut s = runtime_settings(&built.settings, &Overrides::default()).expect("settings");
    // Past the last step measured (1 s settling + at most 5,000 steps).
    s.end = 100.0;
    s.step = 1e-3;
    if case.fixed {
        s.newton = Newton::Fixed(2);
    }
    s.linear = case.linear;
    let mut sys = System::new(built.model).expect("valid model");
    sys.initialize(&s).expect("consistent start");
    // The first second settles the car (and reaches the step steer's start).
    for _ in 0..1000 {
        sys.step(&s).expect("step");
    }
    let mut times = Vec::with_capacity(steps);
    let mut iterations = 0;
    for _ in 0..steps {
        let t0 = Instant::now();
        let r = sys.step(&s).expect("step");
        times.push(t0.elapsed().as_secs_f64() * 1e6);
        iterations += r.newton_iterations;
    }
    times.sort_by(f64::total_cmp);
    let at = |p: f64| times[((times.len() as f64 * p) as usize).min(times.len() - 1)];
    (
        at(0.5),
        at(0.999),
        times[0],
        iterations as f64 / steps as f64,
    )
}

fn main() {
    let quick = std::env::args().any(|a| a == "quick");
    let steps = if quick { 1000 } else { 5000 };
    let (converged, fixed) = (false, true);
    let (sparse, dense) = (LinearSolverKind::Sparse, LinearSolverKind::Dense);
    let crg: &[(&str, f64)] = &[("crg_road", 1.0), ("wave", 0.0)];
    let cases = [
        Case {
            label: "vehicle, analytic road",
            file: "vehicle.fd",
            set: &[],
            fixed: converged,
            linear: sparse,
        },
        Case {
            label: "vehicle, analytic road",
            file: "vehicle.fd",
            set: &[],
            fixed,
            linear: sparse,
        },
        Case {
            label: "vehicle, analytic road",
            file: "vehicle.fd",
            set: &[],
            fixed,
            linear: dense,
        },
        Case {
            label: "vehicle, straight.crg",
            file: "vehicle.fd",
            set: crg,
            fixed: converged,
            linear: sparse,
        },
        Case {
            label: "vehicle, straight.crg",
            file: "vehicle.fd",
            set: crg,
            fixed,
            linear: sparse,
        },
        Case {
            label: "quarter car, rough road",
            file: "quarter_car_tyre.fd",
            set: &[],
            fixed,
            linear: sparse,
        },
    ];
    println!("| model | Newton | LU | iterations/step | min µs | median µs | p99.9 µs | real-time factor | median / first row |");
    println!("|---|---|---|---|---|---|---|---|---|");
    let mut base = None;
    for c in &cases {
        let (median, p999, min, iters) = measure(c, steps);
        let base = *base.get_or_insert(median);
        let newton = if c.fixed { "fixed(2)" } else { "converged" };
        let lu = if c.linear == dense { "dense" } else { "sparse" };
        println!(
            "| {} | {newton} | {lu} | {iters:.2} | {min:.1} | {median:.1} | {p999:.0} | {:.1} | {:.2} |",
            c.label,
            1000.0 / median,
            median / base
        );
    }
}
