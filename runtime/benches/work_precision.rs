//! Work–precision of the step control (issue 13): global error against steps and wall
//! time, fixed steps against `adaptive`, for the default HHT α = −0.05 in both forms
//! and for other dampings (HHT α, generalized-α ρ∞) in the Arnold–Brüls form, on the
//! 90° pendulum (index-3, one constraint), a four-bar of point masses (a closed loop),
//! a torque-free asymmetric rigid body (measured on ω alone, and on ω and its axis: the
//! whole state it carries) and a heavy symmetric top (on the Lie group).
//! Errors are the largest deviation over the rows (every 0.05 s) from a run with a
//! fixed step of 5e-6 s (50× smaller than the smallest below). After each scheme's
//! rows, the steps a fixed step would need for the adaptive runs' errors (error ∝ h²
//! between the two fixed steps around it) and their ratio. Run with
//! `cargo test --workspace --bench work_precision` (or `cargo bench`); prints the
//! tables of docs/performance.md. Not a test: nothing is asserted. Arguments pick
//! models and schemes by a part of their names (`-- pendulum default`: the pendulum
//! with the default damping); without, all of them.

#[path = "../tests/runtime/common/mod.rs"]
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

/// Steps of a fixed step with error `e`, from the fixed runs (steps, error) by error ∝
/// h² between the two that bracket it (the nearest pair outside their range).
fn fixed_steps_for(fixed: &[(usize, f64)], e: f64) -> f64 {
    let k = fixed
        .windows(2)
        .position(|w| w[1].1 <= e)
        .unwrap_or(fixed.len() - 2);
    let ((n0, e0), (n1, e1)) = (fixed[k], fixed[k + 1]);
    // log n is linear in log e between the two.
    let p = (n1 as f64 / n0 as f64).ln() / (e1 / e0).ln();
    n0 as f64 * (e / e0).powf(p)
}

/// The models of the table: each with the channels its error is measured on.
fn cases() -> [Case; 5] {
    [
        Case {
            name: "90° pendulum, 3.2 s",
            model: || pendulum(1.0, [1.0, 0.0], 9.81),
            channels: &["bob.x", "bob.y"],
            end: 3.2,
        },
        Case {
            name: "four-bar, 3.2 s",
            model: || four_bar(1.2),
            channels: &["A.x", "A.y", "B.x", "B.y"],
            end: 3.2,
        },
        Case {
            name: "torque-free body, 10 s",
            model: || free_body(1.0, [2.0, 3.0, 4.5], [0.9, 0.1, -0.3, 0.2], [0.3, 1.0, 2.0]),
            channels: &["body.wx", "body.wy", "body.wz"],
            end: 10.0,
        },
        Case {
            name: "torque-free body, ω and axis, 10 s",
            model: || free_body(1.0, [2.0, 3.0, 4.5], [0.9, 0.1, -0.3, 0.2], [0.3, 1.0, 2.0]),
            channels: &[
                "body.wx", "body.wy", "body.wz", "body.ax", "body.ay", "body.az",
            ],
            end: 10.0,
        },
        Case {
            name: "heavy top, 2 s",
            model: || heavy_top(1.0, 0.1, 0.01, 0.008, 0.5, 50.0),
            channels: &["top.ax", "top.ay", "top.az"],
            end: 2.0,
        },
    ]
}

/// The integrator settings compared: (label, form, ρ∞, α).
fn schemes() -> [(&'static str, Form, Option<f64>, f64); 6] {
    [
        ("HHT α = −0.05 (default)", Form::ArnoldBruls, None, -0.05),
        ("HHT α = −0.05, Negrut", Form::Negrut, None, -0.05),
        ("HHT α = −0.1", Form::ArnoldBruls, None, -0.1),
        ("ρ∞ = 0.9", Form::ArnoldBruls, Some(0.9), -0.05),
        ("ρ∞ = 0.8", Form::ArnoldBruls, Some(0.8), -0.05),
        ("ρ∞ = 0.6", Form::ArnoldBruls, Some(0.6), -0.05),
    ]
}

fn main() {
    let cases = cases();
    let schemes = schemes();
    // Arguments that are not cargo's flags pick models and schemes by name.
    let picks: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    // A pick that matches a model's name picks models, one that matches a scheme's
    // picks schemes; no pick of a kind: all of that kind.
    let picked = |name: &str, names: &[&str]| {
        let mine: Vec<&String> = picks
            .iter()
            .filter(|p| names.iter().any(|n| n.contains(p.as_str())))
            .collect();
        mine.is_empty() || mine.iter().any(|p| name.contains(p.as_str()))
    };
    let model_names: Vec<&str> = cases.iter().map(|c| c.name).collect();
    let scheme_names: Vec<&str> = schemes.iter().map(|s| s.0).collect();
    println!("| model | scheme | step control | steps | error | wall [ms] |");
    println!("|---|---|---|---|---|---|");
    let mut ratios = Vec::new();
    for case in cases.iter().filter(|c| picked(c.name, &model_names)) {
        let base = Settings {
            end: case.end,
            output_every: 0.05,
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
        for &(label, form, rho_inf, alpha) in schemes.iter().filter(|s| picked(s.0, &scheme_names))
        {
            let base = Settings {
                form,
                rho_inf,
                alpha,
                ..base.clone()
            };
            let row = |control: String, s: &Settings| {
                let (ch, steps, wall) = run(case, s);
                let e = error(&ch, &reference);
                println!(
                    "| {} | {label} | {control} | {steps} | {e:.2e} | {:.1} |",
                    case.name,
                    wall * 1e3
                );
                (steps, e)
            };
            let fixed: Vec<(usize, f64)> = [4e-3, 2e-3, 1e-3, 5e-4, 2.5e-4]
                .iter()
                .map(|&h| {
                    let s = Settings {
                        step: h,
                        ..base.clone()
                    };
                    row(format!("fixed h = {h:e}"), &s)
                })
                .collect();
            for tol in [1e-4, 1e-5, 1e-6, 1e-7, 1e-8] {
                let s = Settings {
                    adaptive: Some(tol),
                    ..base.clone()
                };
                let (n, e) = row(format!("adaptive {tol:e}"), &s);
                ratios.push((case.name, label, tol, n, fixed_steps_for(&fixed, e), e));
            }
        }
    }
    println!();
    println!("| model | scheme | adaptive | error | steps | fixed steps for that error | ratio |");
    println!("|---|---|---|---|---|---|---|");
    for (case, label, tol, n, nf, e) in ratios {
        println!(
            "| {case} | {label} | {tol:e} | {e:.2e} | {n} | {nf:.0} | {:.2} |",
            n as f64 / nf
        );
    }
}
