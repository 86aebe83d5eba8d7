//! The runtime's acceptance on models built by the compiler: free rigid body,
//! pendulum convergence in both HHT forms, adaptive stepping.

use crate::common;

use common::{build_example as example, build_text, channel as ch, simulate as run};
use fdc_runtime::{Form, MemorySink};

#[test]
fn free_axisymmetric_body_precesses_at_the_closed_form_rate_and_conserves() {
    // J1 = J2 = 1, J3 = 2, ω̄(0) = (1, 0, 3): in body axes (ω̄x, ω̄y) turns at
    // Ω = (J3 − J1)/J1 · ω̄z = 3 rad/s, ω̄z stays 3 (Euler's equations, closed form).
    let b = build_text(
        "free",
        "body top: rigid_body { mass = 2; inertia = [1, 1, 2]; velocity = [0.5, 0, 1]; \
         angular_velocity = [1, 0, 3]; }\n",
    );
    let (s, _) = run(b, |s| {
        s.end = 2.0;
        s.step = 1e-3;
        s.output_every = 0.05;
        s.alpha = -0.02;
    });
    let (wx, wy, wz) = (
        ch(&s, "top.omega_body.x"),
        ch(&s, "top.omega_body.y"),
        ch(&s, "top.omega_body.z"),
    );
    let (vx, vz, rx) = (
        ch(&s, "top.Rdot.x"),
        ch(&s, "top.Rdot.z"),
        ch(&s, "top.R.x"),
    );
    let (ox, oy, oz) = (
        ch(&s, "top.omega.x"),
        ch(&s, "top.omega.y"),
        ch(&s, "top.omega.z"),
    );
    for (i, t) in s.times.iter().enumerate() {
        let phase = 3.0 * t;
        assert!((wx[i] - phase.cos()).abs() < 1e-4, "t {t}: ωx {}", wx[i]);
        assert!((wy[i] - phase.sin()).abs() < 1e-4, "t {t}: ωy {}", wy[i]);
        assert!((wz[i] - 3.0).abs() < 1e-12);
        // No force: linear momentum is exact, the centre moves uniformly.
        assert!((vx[i] - 0.5).abs() < 1e-12 && (vz[i] - 1.0).abs() < 1e-12);
        assert!((rx[i] - 0.5 * t).abs() < 1e-10);
        // Angular momentum in global axes (A J̄ ω̄) is constant: here J̄ ω̄ in body axes
        // has length √(1 + 36) and its global image keeps its direction.
        let energy = 0.5 * (wx[i].powi(2) + wy[i].powi(2) + 2.0 * wz[i].powi(2));
        assert!(
            (energy - 0.5 * (1.0 + 18.0)).abs() < 1e-6,
            "t {t}: energy {energy}"
        );
        let w = (ox[i].powi(2) + oy[i].powi(2) + oz[i].powi(2)).sqrt();
        assert!((w - 10f64.sqrt()).abs() < 1e-6);
    }
}

/// Largest error of the pendulum tip against a reference run with a 16× smaller step.
fn pendulum_error(form: Form, step: f64, reference: &[f64]) -> f64 {
    let (s, _) = run(example("pendulum.fd"), |s| {
        s.form = form;
        s.step = step;
        s.end = 1.0;
        s.output_every = 0.1;
    });
    ch(&s, "tip.z")
        .iter()
        .zip(reference)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max)
}

#[test]
fn pendulum_converges_at_second_order_in_both_forms() {
    for form in [Form::ArnoldBruls, Form::Negrut] {
        let (r, _) = run(example("pendulum.fd"), |s| {
            s.form = form;
            s.step = 1e-3 / 16.0;
            s.end = 1.0;
            s.output_every = 0.1;
        });
        let reference = ch(&r, "tip.z");
        let e1 = pendulum_error(form, 4e-3, &reference);
        let e2 = pendulum_error(form, 2e-3, &reference);
        let order = (e1 / e2).log2();
        assert!(
            (1.7..2.4).contains(&order),
            "{form:?}: order {order} ({e1:e} → {e2:e})"
        );
    }
}

#[test]
fn adaptive_steps_meet_the_accuracy_with_fewer_steps() {
    let (r, _) = run(example("pendulum.fd"), |s| {
        s.step = 1e-5;
        s.end = 2.0;
        s.output_every = 0.1;
    });
    let reference = ch(&r, "tip.z");
    let err = |s: &MemorySink| {
        ch(s, "tip.z")
            .iter()
            .zip(&reference)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max)
    };
    let (a, stats_a) = run(example("pendulum.fd"), |s| {
        s.adaptive = Some(1e-6);
        s.step = 1e-3;
        s.end = 2.0;
        s.output_every = 0.1;
    });
    let err_a = err(&a);
    // The fixed step with (at least) the adaptive run's accuracy takes more steps.
    let mut step = 1e-2;
    let fixed = loop {
        let (f, stats) = run(example("pendulum.fd"), |s| {
            s.step = step;
            s.end = 2.0;
            s.output_every = 0.1;
        });
        if err(&f) <= err_a || step < 1e-5 {
            break stats;
        }
        step /= 2.0;
    };
    assert!(
        stats_a.steps < fixed.steps,
        "adaptive {} steps (error {err_a:e}) vs fixed {} steps at h = {step}",
        stats_a.steps,
        fixed.steps
    );
}

#[test]
fn clamp_limits_a_state_dependent_value_through_the_pipeline() {
    // A free body at 1 m/s along x without forces: R.x = t - 0.5 exactly. `clamp` is a
    // table entry plus its lowering (issue 20); the reference is min(max(x, lo), hi).
    let b = build_text(
        "clamp",
        "body ball: rigid_body { mass = 1; inertia = [1, 1, 1]; position = [-0.5, 0, 0];
             velocity = [1, 0, 0]; }
         output c = clamp(ball.position.x, -0.2, 0.3);
         output swapped = clamp(ball.position.x, 0.3, -0.2);
         output v = clamp(ball.velocity([0, 0, 0]).x * 2, 0, 5);\n",
    );
    let (s, _) = run(b, |s| {
        s.end = 1.0;
        s.step = 0.01;
        s.output_every = 0.05;
    });
    let (c, swapped, v) = (ch(&s, "c"), ch(&s, "swapped"), ch(&s, "v"));
    let mut inside = 0;
    for (i, &t) in s.times.iter().enumerate() {
        let x = t - 0.5;
        let want = x.clamp(-0.2, 0.3);
        inside += usize::from(want == x);
        assert!(
            (c[i] - want).abs() < 1e-9,
            "t {t}: clamp {} vs {want}",
            c[i]
        );
        assert_eq!(swapped[i], -0.2, "t {t}: lo > hi gives hi");
        assert!((v[i] - 2.0).abs() < 1e-9, "t {t}: {}", v[i]);
    }
    // The samples cover both limits and the free range between them.
    assert!(
        inside > 3 && inside < s.times.len() - 3,
        "{inside} samples inside"
    );
}
