//! `point_mass` (stdlib/bodies.fd): a lumped mass with three coordinates and no
//! rotation, against closed forms: a pendulum on a massless rod (IFToMM A01's lumped
//! mass) vs the elliptic-integral period, a damped oscillator on an axis spring vs
//! x(t) = (v₀/ω_d) e^{−ζωt} sin ω_d t, a joint that would fix its rotation refused,
//! a constant force vs x = F t²/2m, and a torque on it refused.

use crate::common;

use common::{build_text, channel, down_crossings, elliptic_k, no_cache, simulate};

/// The planar pendulum of amplitude a0 on a rod hanging from `pivot`: the period is
/// 4 √(L/g) K(sin(a0/2)). `support`: where the rod's upper end is attached (ground,
/// or a rigid body fixed to ground in a turned orientation, so the rod connects a point
/// mass and a rigid body and the build-time values of that connector read the rigid
/// body's rotation after the point mass's three coordinates).
fn pendulum_period(support: &str, extra: &str) -> (f64, f64) {
    let (l, g, a0) = (0.8f64, 9.81f64, 1.2f64);
    let text = format!(
        "param L = {l}; param a0 = {a0};
         gravity [0, 0, -{g}];
         {extra}
         body bob: point_mass {{ mass = 0.5; position = [L*sin(a0), 0, -L*cos(a0)]; }}
         joint link: rod(bob, {support}) {{ at1 = [L*sin(a0), 0, -L*cos(a0)]; at2 = [0, 0, 0]; }}
         simulate {{ end = 6; step = 2e-4; output_every = 1e-3; }}"
    );
    let (sink, _) = simulate(build_text("point-pendulum", &text), |_| {});
    let x = channel(&sink, "bob.R.x");
    let c = down_crossings(&sink.times, &x);
    assert!(c.len() >= 3, "{support}: crossings {c:?}");
    let measured = (c[c.len() - 1] - c[0]) / (c.len() - 1) as f64;
    let want = 4.0 * (l / g).sqrt() * elliptic_k((a0 / 2.0).sin());
    // The rod keeps its length (index-3: the position constraint holds to Newton's
    // tolerance) and the bob stays in the plane y = 0.
    let (y, z) = (channel(&sink, "bob.R.y"), channel(&sink, "bob.R.z"));
    for i in 0..x.len() {
        let r = (x[i] * x[i] + y[i] * y[i] + z[i] * z[i]).sqrt();
        assert!((r - l).abs() < 1e-9, "{support}: |R| = {r}");
        assert!(y[i].abs() < 1e-12, "{support}: y = {}", y[i]);
    }
    (measured, want)
}

#[test]
fn a_point_mass_pendulum_has_the_elliptic_integral_period() {
    // HHT's period error at h = 0.2 ms is O(h²): measured 1.2e-7 relative.
    let (measured, want) = pendulum_period("ground", "");
    assert!(
        (measured - want).abs() < 1e-6 * want,
        "period {measured} vs {want}"
    );
    // The same rod hung from a rigid body that is fixed in a turned orientation: the
    // joint point `at2` is the same global point, so the motion is the same (measured
    // 2.6e-15 relative).
    let support = "body base: rigid_body { mass = 3; inertia = [1, 2, 3];
                     orientation = quat(cos(0.4), sin(0.4)*0.6, 0, sin(0.4)*0.8); }
                   joint hold: fixed(base) { at = [0, 0, 0]; }";
    let (on_body, _) = pendulum_period("base", support);
    assert!(
        (on_body - measured).abs() < 1e-9 * want,
        "on a turned body {on_body} vs {measured}"
    );
}

#[test]
fn a_point_mass_on_an_axis_spring_is_a_damped_oscillator() {
    // m ẍ + c ẋ + k x = 0, x(0) = 0, ẋ(0) = v0: x = (v0/ω_d) e^{−ζωt} sin ω_d t.
    let (m, k, c, v0) = (2.0f64, 200.0f64, 4.0f64, 1.0f64);
    let text = format!(
        "body bob: point_mass {{ mass = {m}; velocity = [{v0}, 0, 0]; }}
         force s: axial_spring_damper(bob) {{ axis = [1, 0, 0]; stiffness = {k}; damping = {c}; }}
         simulate {{ end = 2; step = 1e-4; output_every = 1e-2; }}"
    );
    let (sink, _) = simulate(build_text("point-spring", &text), |_| {});
    let (w, zeta) = ((k / m).sqrt(), c / (2.0 * (k * m).sqrt()));
    let wd = w * (1.0 - zeta * zeta).sqrt();
    let x = channel(&sink, "bob.R.x");
    let t_ch = channel(&sink, "bob.T");
    let p = channel(&sink, "momentum.linear.x");
    let v = channel(&sink, "bob.Rdot.x");
    let mut worst = 0.0f64;
    for (i, &t) in sink.times.iter().enumerate() {
        let want = v0 / wd * (-zeta * w * t).exp() * (wd * t).sin();
        worst = worst.max((x[i] - want).abs());
        assert!((t_ch[i] - 0.5 * m * v[i] * v[i]).abs() < 1e-12, "T at {t}");
        assert!((p[i] - m * v[i]).abs() < 1e-12, "p at {t}");
    }
    // Amplitude 0.1 m; HHT at ωh = 1e-3: measured 3.5e-8 m.
    assert!(worst < 2e-7, "largest error {worst} m");
    assert!(x.iter().any(|&v| v > 0.05), "it moves");
}

#[test]
fn a_joint_that_would_fix_a_point_mass_rotation_is_an_error() {
    let dir = std::env::temp_dir().join(format!("fdc-point-revolute-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("model.fd");
    std::fs::write(
        &path,
        "body bob: point_mass { mass = 1; position = [1, 0, 0]; }
         joint hinge: revolute(bob) { at = [0, 0, 0]; axis = [0, 0, 1]; }",
    )
    .unwrap();
    let err = match fdc_driver::pipeline::build(&path, &no_cache()) {
        Ok(_) => panic!("a revolute joint on a point mass built"),
        Err(e) => format!("{e:?}"),
    };
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        err.contains("point mass") && err.contains("`r0`, `r1`"),
        "{err}"
    );
}

#[test]
fn a_constant_force_moves_a_point_mass_and_a_torque_on_one_is_an_error() {
    // Once an index out of bounds in the compiler: the lever-arm torque of a force at
    // a "body point" of a point mass had no rotational dof to land on.
    let (m, f) = (2.0f64, 3.0f64);
    let text = format!(
        "body bob: point_mass {{ mass = {m}; }}
         force push: constant_force(bob) {{ value = [{f}, 0, 0]; }}
         simulate {{ end = 1; step = 1e-3; output_every = 0.1; }}"
    );
    let (sink, _) = simulate(build_text("point-push", &text), |_| {});
    let x = channel(&sink, "bob.R.x");
    let worst = sink
        .times
        .iter()
        .zip(&x)
        .map(|(&t, &x)| (x - 0.5 * f / m * t * t).abs())
        .fold(0.0f64, f64::max);
    // A constant acceleration is integrated exactly up to round-off.
    assert!(worst < 1e-9, "x(t) off F t²/2m by {worst} m");
    assert!(x.last().copied().unwrap_or(0.0) > 0.7, "it moves: {x:?}");

    let dir = std::env::temp_dir().join(format!("fdc-point-torque-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("model.fd");
    std::fs::write(
        &path,
        "body bob: point_mass { mass = 1; }
         force turn: constant_torque(bob) { value = [0, 0, 1]; }",
    )
    .unwrap();
    let built = fdc_driver::pipeline::build(&path, &no_cache());
    let _ = std::fs::remove_dir_all(&dir);
    let err = match built {
        Ok(_) => panic!("a torque on a point mass built"),
        Err(e) => format!("{e:?}"),
    };
    assert!(
        err.contains("point mass") && err.contains("torque"),
        "{err}"
    );
}
