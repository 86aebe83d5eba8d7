//! Generalized-α by ρ∞ (Chung–Hulbert's parameters on the Arnold–Brüls form) against
//! HHT, closed forms and its own spectral radius; the refusal of ρ∞ ≈ 1 with
//! constraints (issue 13).

use crate::common;

use common::*;
use fdc_runtime::{Form, MemorySink, Scheme, Settings, System};
use std::f64::consts::PI;

fn run(model: fdc_runtime::Model, s: &Settings) -> (MemorySink, fdc_runtime::RunStats) {
    let mut sys = System::new(model).expect("model is valid");
    let mut sink = MemorySink::default();
    let stats = sys.run(s, &mut sink).expect("run succeeds");
    (sink, stats)
}

fn rho(rho: f64, step: f64, end: f64) -> Settings {
    Settings {
        end,
        step,
        output_every: 0.0,
        rho_inf: Some(rho),
        ..Settings::default()
    }
}

#[test]
fn rho_inf_one_half_is_hht_alpha_minus_one_third() {
    // Chung–Hulbert at ρ∞ = ½ has α_m = 0, α_f = ⅓, β = 4/9, γ = 5/6: HHT's α = −⅓.
    let g = Scheme::generalized_alpha(0.5);
    let h = Scheme::hht(-1.0 / 3.0);
    for (a, b) in [
        (g.alpha_m, h.alpha_m),
        (g.alpha_f, h.alpha_f),
        (g.beta, h.beta),
        (g.gamma, h.gamma),
    ] {
        assert!((a - b).abs() < 1e-15, "{g:?} vs {h:?}");
    }
    let model = || pendulum(1.0, [1.0, 0.0], 9.81);
    let (a, _) = run(model(), &rho(0.5, 1e-3, 1.0));
    let hht = Settings {
        rho_inf: None,
        alpha: -1.0 / 3.0,
        ..rho(0.5, 1e-3, 1.0)
    };
    let (b, _) = run(model(), &hht);
    let (xa, xb) = (a.channel("bob.x").unwrap(), b.channel("bob.x").unwrap());
    assert_eq!(xa.len(), xb.len());
    let d = xa
        .iter()
        .zip(&xb)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(d < 1e-13, "largest difference {d:e}");
}

/// Largest deviation of x(t) from A cos(ωt) for the undamped spring-mass.
fn spring_error(rho_inf: f64, h: f64) -> f64 {
    let (a, w) = (0.1, 2.0 * PI);
    let (sink, _) = run(spring_mass(1.0, w * w, 0.0, a, 0.0), &rho(rho_inf, h, 2.0));
    let x = sink.channel("mass.x").unwrap();
    sink.times
        .iter()
        .zip(&x)
        .map(|(t, x)| (x - a * (w * t).cos()).abs())
        .fold(0.0, f64::max)
}

#[test]
fn second_order_for_every_rho_inf() {
    for r in [0.0, 0.6, 0.9, 1.0] {
        let e: Vec<f64> = [0.01, 0.005, 0.0025]
            .iter()
            .map(|&h| spring_error(r, h))
            .collect();
        let (p1, p2) = ((e[0] / e[1]).log2(), (e[1] / e[2]).log2());
        eprintln!("rho_inf {r}: errors {e:?}, orders {p1:.3} {p2:.3}");
        assert!(e[2] < 3e-4, "rho_inf {r}: error {} at h = 2.5 ms", e[2]);
        assert!(
            (1.8..2.2).contains(&p1) && (1.8..2.2).contains(&p2),
            "rho_inf {r}: orders {p1} {p2}"
        );
    }
}

#[test]
fn rho_inf_one_conserves_the_energy_of_a_linear_oscillator() {
    // ρ∞ = 1 (α_m = α_f = ½, β = ¼, γ = ½) keeps a_n = v̇_n: the trapezoidal rule,
    // which conserves ½mv² + ½kx² of a linear oscillator exactly.
    let (k, a) = (40.0, 0.1);
    let mut s = rho(1.0, 0.02, 20.0);
    s.output_every = 0.1;
    let mut sys = System::new(spring_mass(1.0, k, 0.0, a, 0.0)).unwrap();
    let mut sink = MemorySink::default();
    sys.run(&s, &mut sink).unwrap();
    let (x, v) = (
        sink.channel("mass.x").unwrap(),
        sink.channel("mass.vx").unwrap(),
    );
    let e0 = 0.5 * k * a * a;
    let worst = x
        .iter()
        .zip(&v)
        .map(|(x, v)| ((0.5 * v * v + 0.5 * k * x * x) / e0 - 1.0).abs())
        .fold(0.0, f64::max);
    assert!(worst < 1e-9, "relative energy drift {worst:e}");
}

/// The rate at which a stiff oscillator (ωh = 1000) decays per step: the spectral
/// radius of the scheme near ωh → ∞. The three eigenvalues meet at −ρ∞ there, so the
/// amplitude goes as n² ρ∞ⁿ; over steps 90 → 190 the n² contributes (190/90)^(2/100).
fn decay_rate(s: &Settings) -> f64 {
    let (sink, _) = run(spring_mass(1.0, 1e10, 0.0, 1.0, 0.0), s);
    let x = sink.channel("mass.x").unwrap();
    let env = |n: usize| x[n..n + 3].iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let (n0, n1) = (90usize, 190usize);
    let poly = ((n1 as f64) / (n0 as f64)).powf(2.0 / (n1 - n0) as f64);
    (env(n1) / env(n0)).powf(1.0 / (n1 - n0) as f64) / poly
}

#[test]
fn the_high_frequency_decay_per_step_is_rho_inf() {
    for r in [0.3, 0.6, 0.9] {
        let rate = decay_rate(&rho(r, 1e-2, 2.0));
        eprintln!("rho_inf {r}: decay per step {rate:.4}");
        assert!((rate - r).abs() < 0.02, "rho_inf {r}: decay {rate}");
    }
    // HHT α = −0.1 has ρ∞ = 0.9/1.1.
    let hht = Settings {
        rho_inf: None,
        alpha: -0.1,
        ..rho(0.0, 1e-2, 2.0)
    };
    let expected = Scheme::hht(-0.1).rho_inf();
    assert!((expected - 0.9 / 1.1).abs() < 1e-15);
    let rate = decay_rate(&hht);
    assert!((rate - expected).abs() < 0.02, "HHT: decay {rate}");
}

#[test]
fn rho_inf_near_one_with_constraints_is_refused_before_the_first_step() {
    // Undamped index-3 multipliers grow (issue 13): refused up front, fixed step or not.
    for (r, adaptive) in [(1.0, None), (1.0, Some(1e-6)), (0.96, None)] {
        let s = Settings {
            adaptive,
            ..rho(r, 1e-3, 100.0)
        };
        let err = System::new(pendulum(1.0, [1.0, 0.0], 9.81))
            .unwrap()
            .initialize(&s)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(&format!("rho_inf {r} with constraints"))
                && err.contains("multipliers oscillate"),
            "{err}"
        );
    }
    // The largest accepted value runs; just above it is refused.
    let s = rho(0.95, 1e-2, 1.0);
    run(pendulum(1.0, [1.0, 0.0], 9.81), &s);
    // Out of range, or with the Negrut form: a settings error.
    for bad in [
        rho(1.5, 1e-3, 1.0),
        Settings {
            form: Form::Negrut,
            ..rho(0.8, 1e-3, 1.0)
        },
    ] {
        let msg = bad.validate().unwrap_err();
        assert!(msg.contains("rho_inf"), "{msg}");
    }
}

#[test]
fn rho_inf_with_a_pendulum_stays_bounded_over_100_s() {
    // ρ∞ = 0.95 (the least damping allowed with constraints), fixed h = 10 ms: the
    // energy stays within 1 % over 100 s (measured: at ρ∞ = 0.99, and HHT α = −0.005,
    // the rod force alternates and grows until "diverged" at 6.5 s / 9.0 s).
    let mut s = rho(0.95, 1e-2, 100.0);
    s.output_every = 0.05;
    let (sink, _) = run(pendulum(1.0, [1.0, 0.0], 9.81), &s);
    let (y, vx, vy) = (
        sink.channel("bob.y").unwrap(),
        sink.channel("bob.vx").unwrap(),
        sink.channel("bob.vy").unwrap(),
    );
    let worst = (0..y.len())
        .map(|i| (0.5 * (vx[i] * vx[i] + vy[i] * vy[i]) + 9.81 * y[i]).abs())
        .fold(0.0, f64::max);
    assert!(worst < 0.01 * 9.81, "energy departs by {worst} J/kg");
}
