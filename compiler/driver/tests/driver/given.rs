//! `given` for single coordinates: a pendulum started with a given angular rate (or a
//! given velocity of its centre) keeps it through the velocity projection, and a body
//! placed off its joint keeps a given position coordinate through the assembly, each
//! against its closed form; without `given` the projection's mass-metric compromise
//! gives the other closed form (so the tests fail if `given` were ignored).

use crate::common;

use common::{build_text, channel, simulate};
use fdc_driver::settings::{runtime_settings, Overrides};
use fdc_runtime::{MemorySink, RuntimeError, SimErrorKind, System};

/// A rod of length 1 and mass 2 on a hinge about z at the origin (its centre at a =
/// 0.5), no gravity, started with `start` (fields of the body) and `given`.
fn pendulum(tag: &str, start: &str, given: &str) -> fdc_runtime::MemorySink {
    let text = format!(
        "body rod: rigid_body {{ mass = 2; inertia = [0.01, 1/6, 1/6]; position = [0.5, 0, 0]; {start} }}\n\
         joint hinge: revolute(rod) {{ at = [0, 0, 0]; axis = [0, 0, 1]; }}\n\
         simulate {{ end = 1; step = 1e-3; output_every = 0.01; {given} }}\n"
    );
    simulate(build_text(tag, &text), |_| {}).0
}

/// The largest deviation of the rod's centre from uniform rotation at `w` from the
/// x axis and of its angular rate from `w` over the run, and of the initial rate.
fn off_uniform(sink: &fdc_runtime::MemorySink, w: f64) -> (f64, f64, f64) {
    let (x, y, wz) = (
        channel(sink, "rod.R.x"),
        channel(sink, "rod.R.y"),
        channel(sink, "rod.omega.z"),
    );
    let mut worst = (0.0f64, 0.0f64, (wz[0] - w).abs());
    for (k, t) in sink.times.iter().enumerate() {
        let (ex, ey) = (x[k] - 0.5 * (w * t).cos(), y[k] - 0.5 * (w * t).sin());
        worst.0 = worst.0.max(ex.hypot(ey));
        worst.1 = worst.1.max((wz[k] - w).abs());
    }
    worst
}

#[test]
fn a_given_angular_rate_is_kept_by_the_projection() {
    let start = "angular_velocity = [0, 0, 2];";
    let held = pendulum("given-omega", start, "given = rod.omega_body.z;");
    let (pos, rate, rate0) = off_uniform(&held, 2.0);
    eprintln!(
        "given omega: centre off by {pos:.2e} m, rate by {rate:.2e} rad/s, at t = 0 {rate0:.2e}"
    );
    assert!(rate0 < 1e-12, "initial rate off by {rate0}");
    // Over the run HHT's numerical damping (α = −0.05, h = 1 ms) slows the rotation a
    // little: measured 6.4e-7 rad/s and 3.2e-7 m after one second.
    assert!(
        rate < 2e-6 && pos < 1e-6,
        "rate off by {rate}, centre by {pos}"
    );
    // Without `given` the projection minimizes ½ΔvᵀMΔv: ω = J ω₀ / (J + m a²) = 0.5.
    let free = pendulum("free-omega", start, "");
    let (_, _, rate0) = off_uniform(&free, 0.5);
    assert!(
        rate0 < 1e-12,
        "mass-metric projection: rate off 0.5 by {rate0}"
    );
}

#[test]
fn a_given_centre_velocity_is_kept_by_the_projection() {
    // ẏ = 1 of the centre at a = 0.5: ω = 2.
    let held = pendulum(
        "given-vel",
        "velocity = [0, 1, 0];",
        "given = [rod.velocity.y];",
    );
    let (pos, rate, rate0) = off_uniform(&held, 2.0);
    eprintln!(
        "given velocity: centre off by {pos:.2e} m, rate by {rate:.2e} rad/s, at t = 0 {rate0:.2e}"
    );
    assert!(rate0 < 1e-12, "initial rate off by {rate0}");
    assert!(rate < 2e-6 && pos < 1e-6, "rate {rate}, centre {pos}");
    let vy = channel(&held, "rod.Rdot.y")[0];
    assert!((vy - 1.0).abs() < 1e-12, "centre velocity {vy}");
}

#[test]
fn a_given_position_coordinate_is_kept_by_the_assembly() {
    // The hinge point [-0.5, 0, 0] of the rod on the origin, the rod written at
    // (0.6, 0.3): with y held it assembles to (0.4, 0.3), turned by atan2(0.3, 0.4).
    let model = |given: &str| {
        format!(
            "body rod: rigid_body {{ mass = 2; inertia = [0.01, 1/6, 1/6]; position = [0.6, 0.3, 0]; }}\n\
             joint hinge: revolute_local(rod) {{ at1 = [-0.5, 0, 0]; at2 = [0, 0, 0]; }}\n\
             simulate {{ end = 0.01; step = 1e-3; {given} }}\n"
        )
    };
    let sink = simulate(
        build_text("given-y", &model("given = rod.position.y;")),
        |_| {},
    )
    .0;
    let (x, y) = (channel(&sink, "rod.R.x")[0], channel(&sink, "rod.R.y")[0]);
    let (qw, qz) = (
        channel(&sink, "rod.theta.w")[0],
        channel(&sink, "rod.theta.z")[0],
    );
    let turn = 2.0 * qz.atan2(qw);
    eprintln!("given y: R = ({x}, {y}), turned {turn}");
    assert!(
        (x - 0.4).abs() < 1e-10 && (y - 0.3).abs() < 1e-12,
        "R = ({x}, {y})"
    );
    assert!((turn - 0.3f64.atan2(0.4)).abs() < 1e-10, "turned {turn}");
    // Without it the assembly moves y too.
    let sink = simulate(build_text("free-y", &model("")), |_| {}).0;
    let y = channel(&sink, "rod.R.y")[0];
    assert!((y - 0.3).abs() > 1e-3, "y = {y} unmoved without given");
}

#[test]
fn given_velocities_that_contradict_the_hinge_fail_before_the_first_step() {
    // The hinge asks ẏ = a ω = 0.5 · 3 = 1.5 of the centre; ẏ = 1 and ω = 3 are given.
    let text = "body rod: rigid_body { mass = 2; inertia = [0.01, 1/6, 1/6]; \
                position = [0.5, 0, 0]; velocity = [0, 1, 0]; angular_velocity = [0, 0, 3]; }\n\
                joint hinge: revolute(rod) { at = [0, 0, 0]; axis = [0, 0, 1]; }\n\
                simulate { end = 0.1; given = [rod.velocity.y, rod.omega_body.z]; }\n";
    let built = build_text("given-contradict", text);
    let s = runtime_settings(&built.settings, &Overrides::default()).unwrap();
    let mut sys = System::new(built.model).unwrap();
    let err = sys.run(&s, &mut MemorySink::default()).unwrap_err();
    assert_eq!(err.stats.steps, 0, "no step was taken");
    let SimErrorKind::Setup(RuntimeError::GivenVelocities {
        given,
        instance,
        residual,
        ..
    }) = &err.kind
    else {
        panic!("unexpected error: {err}");
    };
    assert_eq!(given, &["rod.velocity.y", "rod.omega_body.z"]);
    assert_eq!(instance, "hinge");
    // The velocity of the hinge point along y: ẏ − a ω = 1 − 1.5.
    assert!((residual - 0.5).abs() < 1e-12, "residual {residual}");
    let msg = err.to_string();
    eprintln!("{msg}");
    assert!(
        msg.contains("`rod.velocity.y`") && msg.contains("`hinge`"),
        "{msg}"
    );
    // The same pair when it agrees with the hinge (ω = 2) runs.
    let held = pendulum(
        "given-agree",
        "velocity = [0, 1, 0]; angular_velocity = [0, 0, 2];",
        "given = [rod.velocity.y, rod.omega_body.z];",
    );
    let (_, _, rate0) = off_uniform(&held, 2.0);
    assert!(rate0 < 1e-12, "initial rate off by {rate0}");
}
