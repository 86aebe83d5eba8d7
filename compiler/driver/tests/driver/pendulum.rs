//! End to end: the example pendulum through front end, lowering, differentiation,
//! LLVM and the runtime, against the period of a physical pendulum from the complete
//! elliptic integral (an independent closed form).

use crate::common;

use common::{build_example, channel, down_crossings, elliptic_k, simulate};

#[test]
fn pendulum_period_matches_the_elliptic_integral() {
    let (sink, _) = simulate(build_example("pendulum.fd"), |s| {
        s.end = 4.0;
        s.output_every = 0.0;
        s.step = 1e-3;
    });
    let x = channel(&sink, "tip.x");
    let z = channel(&sink, "tip.z");
    // Released horizontally: the tip stays on the circle of radius L = 1.
    for (xi, zi) in x.iter().zip(&z) {
        assert!(((xi * xi + zi * zi).sqrt() - 1.0).abs() < 1e-8);
    }
    // Physical pendulum, pivot at one end: T = 4 sqrt(I/(m g d)) K(sin(θ0/2)),
    // I = m L²/3 (+ the tiny axial term does not act), d = L/2, θ0 = π/2.
    let (l, g) = (1.0f64, 9.81f64);
    let t_ref =
        4.0 * (2.0 * l / (3.0 * g)).sqrt() * elliptic_k((std::f64::consts::FRAC_PI_4).sin());
    let c = down_crossings(&sink.times, &x);
    assert!(c.len() >= 2, "crossings {c:?}");
    let period = c[1] - c[0];
    let rel = (period - t_ref).abs() / t_ref;
    assert!(rel < 1e-4, "period {period} vs {t_ref} (rel {rel:e})");
}
