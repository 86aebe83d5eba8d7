//! A damped oscillator started with v₀ = 1 m/s from x = 0, written twice: as one
//! vector-space coordinate with an initial rate (`coordinates x: scalar = 0, rate =
//! v0`) and as a body on the library's `axial_spring_damper`. Both against the closed
//! form x(t) = (v₀/ω_d) e^{−ζωt} sin ω_d t.

use crate::common;

use common::{build_text, channel, simulate};

const M: f64 = 2.0;
const K: f64 = 80.0;
const C: f64 = 1.6;
const V0: f64 = 1.0;

fn closed_form(t: f64) -> f64 {
    let w = (K / M).sqrt();
    let zeta = C / (2.0 * (K * M).sqrt());
    let wd = w * (1.0 - zeta * zeta).sqrt();
    V0 / wd * (-zeta * w * t).exp() * (wd * t).sin()
}

fn assert_follows(times: &[f64], x: &[f64], what: &str) {
    assert!(times.len() > 100, "{what}: {} rows", times.len());
    let mut worst = 0.0f64;
    for (t, x) in times.iter().zip(x) {
        worst = worst.max((x - closed_form(*t)).abs());
    }
    // Amplitude v₀/ω_d ≈ 0.16 m; HHT with α = 0 and h = 1e-4 is second order.
    assert!(worst < 2e-5, "{what}: largest deviation {worst:e}");
}

fn run(tag: &str, text: &str) -> fdc_runtime::MemorySink {
    let (sink, _) = simulate(build_text(tag, text), |s| {
        s.end = 2.0;
        s.step = 1e-4;
        s.output_every = 1e-2;
        s.alpha = 0.0;
    });
    sink
}

#[test]
fn a_coordinate_with_an_initial_rate_follows_the_damped_sine() {
    let text = format!(
        "element oscillator {{
            param m: scalar;
            param k: scalar;
            param c: scalar;
            param v0: scalar;
            coordinates x: scalar = 0, rate = v0;
            kinetic = 0.5*m*rate(x)^2;
            potential = 0.5*k*x^2;
            apply generalized -c*rate(x) along x;
            output x = x;
            output v = rate(x);
        }}
        element o: oscillator {{ m = {M}; k = {K}; c = {C}; v0 = {V0}; }}"
    );
    let sink = run("rate", &text);
    let v = channel(&sink, "o.v");
    assert!((v[0] - V0).abs() < 1e-12, "v(0) = {}", v[0]);
    assert_follows(&sink.times, &channel(&sink, "o.x"), "coordinate");
}

#[test]
fn the_axial_spring_damper_on_a_free_body_follows_the_damped_sine() {
    // The axis is oblique and the body starts moving along it: only the motion along
    // the axis is sprung, so the displacement follows the same closed form.
    let n = [1.0f64, 2.0, 2.0];
    let u = [n[0] / 3.0, n[1] / 3.0, n[2] / 3.0];
    let text = format!(
        "body b: rigid_body {{ mass = {M}; inertia = [1, 1, 1]; position = [1, 0, 0];
            velocity = [{}, {}, {}]; }}
        force s: axial_spring_damper(b) {{ axis = [{}, {}, {}]; stiffness = {K}; damping = {C}; }}",
        V0 * u[0],
        V0 * u[1],
        V0 * u[2],
        n[0],
        n[1],
        n[2]
    );
    let sink = run("axial", &text);
    let x = channel(&sink, "s.displacement");
    assert_follows(&sink.times, &x, "axial spring-damper");
    // The force channel is the law itself: k x + c ẋ.
    let (f, v) = (channel(&sink, "s.law"), channel(&sink, "s.velocity"));
    for k in 0..x.len() {
        assert!((f[k] - (K * x[k] + C * v[k])).abs() < 1e-9);
    }
}
