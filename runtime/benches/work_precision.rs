//! Work–precision of the step control (issue 13): global error against steps and wall
//! time, fixed steps against `adaptive`, both HHT forms, on the 90° pendulum (index-3,
//! a constraint) and a torque-free asymmetric rigid body (on the Lie group). Errors
//! are the largest deviation over the rows (every 0.05 s) from a run with a fixed step
//! 50× smaller than the smallest below. Run with
//! `cargo test -p fdc-runtime --bench work_precision` (or `cargo bench`); prints a table for
//! docs/performance.md. Not a test: nothing is asserted.

#[path = "../tests/common/mod.rs"]
mod common;

use std::time::Instant;

use common::*;
use fdc_runtime::{Form, MemorySink, Settings, System};

struct Case {
    name: &'static str,
    model: fn() -> fdc_runtime::Model,
    channels: &'static [&'static str],
    end: f64,
}

fn run(case: &Case, s: &Settings) -> (Vec<Vec<f64>>, usize, f64) {
    let mut sys = System::new((case.model)()).expect("valid model");
    let mut sink = MemorySink::default();
    let t0 = Instant::now();
    let st = sys.run(s, &mut sink).expect("run succeeds");
    let wall = t0.elapsed().as_secs_f64();
    let ch = case
        .channels
        .iter()
        .map(|c| sink.channel(c).expect("channel"))
        .collect();
    (ch, st.steps, wall)
}

fn error(a: &[Vec<f64>], b: &[Vec<f64>]) -> f64 {
    a.iter()
        .zip(b)
        .flat_map(|(x, y)| x.iter().zip(y).map(|(p, q)| (p - q).abs()))
        .fold(0.0, f64::max)
}

fn main() {
    let cases = [
        Case {
            name: "90° pendulum, 3.2 s",
            model: || pendulum(1.0, [1.0, 0.0], 9.81),
            channels: &["bob.x", "bob.y"],
            end: 3.2,
        },
        Case {
            name: "torque-free body, 10 s",
            model: || free_body(1.0, [2.0, 3.0, 4.5], [0.9, 0.1, -0.3, 0.2], [0.3, 1.0, 2.0]),
            channels: &["body.wx", "body.wy", "body.wz"],
            end: 10.0,
        },
    ];
    println!("| model | form | step control | steps | error | wall [ms] |");
    println!("|---|---|---|---|---|---|");
    for case in &cases {
        for form in [Form::ArnoldBruls, Form::Negrut] {
            let base = Settings {
                end: case.end,
                output_every: 0.05,
                form,
                ..Settings::default()
            };
            let reference = run(
                case,
                &Settings {
                    step: 5e-6,
                    ..base.clone()
                },
            )
            .0;
            let row = |label: String, s: &Settings| {
                let (ch, steps, wall) = run(case, s);
                println!(
                    "| {} | {form:?} | {label} | {steps} | {:.2e} | {:.1} |",
                    case.name,
                    error(&ch, &reference),
                    wall * 1e3
                );
            };
            for h in [4e-3, 2e-3, 1e-3, 5e-4, 2.5e-4] {
                let s = Settings {
                    step: h,
                    ..base.clone()
                };
                row(format!("fixed h = {h:e}"), &s);
            }
            for tol in [1e-4, 1e-5, 1e-6, 1e-7, 1e-8] {
                let s = Settings {
                    adaptive: Some(tol),
                    ..base.clone()
                };
                row(format!("adaptive {tol:e}"), &s);
            }
        }
    }
}
