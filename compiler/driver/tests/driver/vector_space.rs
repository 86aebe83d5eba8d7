//! Vector-space elements (`coordinates x: T`, `kinetic`, `potential`) and the
//! Euler-parameter body `rigid_body_euler`, through front end, lowering, LLVM and the
//! runtime, against closed forms computed here and against `rigid_body`.

use crate::common;

use common::{build_text, channel, down_crossings, elliptic_k, simulate};
use fdc_runtime::Form;

/// Period of a pendulum released from rest at angle θ0: T = 4 √(I/(m g d)) K(sin(θ0/2)).
fn pendulum_period(i_over_mgd: f64, theta0: f64) -> f64 {
    4.0 * i_over_mgd.sqrt() * elliptic_k((theta0 / 2.0).sin())
}

#[test]
fn mass_on_a_spring_element_follows_the_cosine() {
    let (m, k, x0) = (2.0f64, 50.0f64, 0.1f64);
    let text = format!(
        "element oscillator {{
            param m: scalar;
            param k: scalar;
            param x0: scalar;
            coordinates x: scalar = x0;
            kinetic = 0.5*m*rate(x)^2;
            potential = 0.5*k*x^2;
            output x = x;
            output v = rate(x);
        }}
        element o: oscillator {{ m = {m}; k = {k}; x0 = {x0}; }}"
    );
    let (sink, _) = simulate(build_text("spring", &text), |s| {
        s.end = 2.0;
        s.step = 1e-4;
        s.output_every = 0.0;
        s.alpha = 0.0;
    });
    let w = (k / m).sqrt();
    let x = channel(&sink, "o.x");
    let v = channel(&sink, "o.v");
    for ((t, x), v) in sink.times.iter().zip(&x).zip(&v) {
        assert!((x - x0 * (w * t).cos()).abs() < 1e-5, "x({t}) = {x}");
        assert!((v + x0 * w * (w * t).sin()).abs() < 1e-4, "v({t}) = {v}");
    }
}

#[test]
fn damped_oscillator_with_a_generalized_force_on_its_coordinate() {
    let (m, k, c, x0) = (1.5f64, 60.0f64, 1.2f64, 0.2f64);
    let text = format!(
        "element damped {{
            param m: scalar;
            param k: scalar;
            param c: scalar;
            coordinates x: scalar = {x0};
            kinetic = 0.5*m*rate(x)^2;
            potential = 0.5*k*x^2;
            apply generalized -c*rate(x) along x;
            output x = x;
        }}
        element d: damped {{ m = {m}; k = {k}; c = {c}; }}"
    );
    let (sink, _) = simulate(build_text("damped", &text), |s| {
        s.end = 2.0;
        s.step = 1e-4;
        s.output_every = 0.0;
        s.alpha = 0.0;
    });
    // x = x0 e^{−ζω t} (cos ω_d t + ζω/ω_d sin ω_d t), released from rest.
    let w = (k / m).sqrt();
    let zeta = c / (2.0 * (k * m).sqrt());
    let wd = w * (1.0 - zeta * zeta).sqrt();
    let x = channel(&sink, "d.x");
    for (t, x) in sink.times.iter().zip(&x) {
        let want = x0 * (-zeta * w * t).exp() * ((wd * t).cos() + zeta * w / wd * (wd * t).sin());
        assert!((x - want).abs() < 1e-5, "x({t}) = {x} vs {want}");
    }
}

#[test]
fn cartesian_pendulum_with_a_length_constraint_has_the_elliptic_period() {
    let (l, g) = (0.8f64, 9.81f64);
    let text = format!(
        "gravity [0, 0, -{g}];
        /// A point mass in Cartesian coordinates on a massless rod of length L.
        element cartesian_pendulum {{
            param m: scalar;
            param L: scalar;
            coordinates p: vec3 = [L, 0, 0];
            kinetic = 0.5*m*dot(rate(p), rate(p));
            potential = -m*dot(gravity, p);
            constrain dot(p, p) - L^2;
            output p = p;
        }}
        element pend: cartesian_pendulum {{ m = 1.5; L = {l}; }}"
    );
    for form in [Form::ArnoldBruls, Form::Negrut] {
        let (sink, _) = simulate(build_text("cartesian", &text), |s| {
            s.end = 4.0;
            s.step = 1e-3;
            s.output_every = 0.0;
            s.alpha = -0.05;
            s.form = form;
        });
        let x = channel(&sink, "pend.p.x");
        let z = channel(&sink, "pend.p.z");
        for (xi, zi) in x.iter().zip(&z) {
            assert!(((xi * xi + zi * zi).sqrt() - l).abs() < 1e-8);
        }
        // A point mass: I/(m g d) = L/g; released horizontally, θ0 = π/2.
        let t_ref = pendulum_period(l / g, std::f64::consts::FRAC_PI_2);
        let c = down_crossings(&sink.times, &x);
        assert!(c.len() >= 2, "crossings {c:?}");
        let period = c[1] - c[0];
        let rel = (period - t_ref).abs() / t_ref;
        assert!(
            rel < 1e-4,
            "{form:?}: period {period} vs {t_ref} (rel {rel:e})"
        );
    }
}

#[test]
fn element_coordinate_coupled_to_a_body_oscillates_with_the_two_mass_frequency() {
    // A rigid body and the coordinate of an element, joined by a spring along x whose
    // potential reads the body's position: the relative motion is harmonic with
    // Ω² = k (m1 + m2)/(m1 m2) and the centre of mass stays at rest.
    let (m1, m2, k, d, e) = (3.0f64, 1.0f64, 40.0f64, 0.5f64, 0.05f64);
    let text = format!(
        "body a: rigid_body {{ mass = {m1}; inertia = [0.1, 0.1, 0.1]; }}
        element slider(b: body) {{
            param m: scalar;
            param k: scalar;
            param d: scalar;
            param x0: scalar;
            coordinates x: scalar = x0;
            kinetic = 0.5*m*rate(x)^2;
            potential = 0.5*k*(x - b.position.x - d)^2;
            output x = x;
        }}
        element s: slider(a) {{ m = {m2}; k = {k}; d = {d}; x0 = {}; }}",
        d + e
    );
    let (sink, _) = simulate(build_text("slider", &text), |s| {
        s.end = 2.0;
        s.step = 1e-4;
        s.output_every = 0.0;
        s.alpha = 0.0;
    });
    let big_x = channel(&sink, "a.R.x");
    let x = channel(&sink, "s.x");
    let w = (k * (m1 + m2) / (m1 * m2)).sqrt();
    let com0 = m2 * (d + e) / (m1 + m2);
    for i in 0..x.len() {
        let t = sink.times[i];
        let u = x[i] - big_x[i] - d;
        assert!((u - e * (w * t).cos()).abs() < 1e-5, "u({t}) = {u}");
        let com = (m1 * big_x[i] + m2 * x[i]) / (m1 + m2);
        assert!((com - com0).abs() < 1e-9, "centre of mass moved: {com}");
    }
}

/// The same free, axisymmetric, spinning body as `rigid_body` and `rigid_body_euler`,
/// turned by φ about the global x axis, with body angular velocity [w1, 0, w3].
fn spinning_bodies(j1: f64, j3: f64, w1: f64, w3: f64, phi: f64) -> String {
    // A = Rx(φ), so the global ω₀ = A [w1, 0, w3] = [w1, −w3 sin φ, w3 cos φ].
    let (c, s) = ((phi / 2.0).cos(), (phi / 2.0).sin());
    let (wy, wz) = (-w3 * phi.sin(), w3 * phi.cos());
    let body = |name: &str, ty: &str| {
        format!(
            "body {name}: {ty} {{ mass = 2; inertia = [{j1}, {j1}, {j3}];
                position = [0.1, 0.2, 0.3]; velocity = [0.4, -0.2, 0.1];
                orientation = quat({c}, {s}, 0, 0);
                angular_velocity = [{w1}, {wy}, {wz}]; }}"
        )
    };
    format!(
        "{}\n{}",
        body("lie", "rigid_body"),
        body("ep", "rigid_body_euler")
    )
}

#[test]
fn free_euler_parameter_body_precesses_at_the_closed_form_rate() {
    let (j1, j3, w1, w3) = (0.3f64, 0.5f64, 1.0f64, 3.0f64);
    let (sink, _) = simulate(
        build_text("spin", &spinning_bodies(j1, j3, w1, w3, 0.7)),
        |s| {
            s.end = 3.0;
            s.step = 1e-3;
            s.output_every = 0.0;
            s.alpha = -0.05;
        },
    );
    // Body-frame Euler equations of an axisymmetric body: ω̄3 constant, (ω̄1, ω̄2)
    // turns at λ = (J3 − J1)/J1 ω̄3.
    let lambda = (j3 - j1) / j1 * w3;
    let energy = 0.5 * (j1 * w1 * w1 + j3 * w3 * w3);
    let ch = |n: &str| channel(&sink, n);
    let (wx, wy, wz) = (
        ch("ep.omega_body.x"),
        ch("ep.omega_body.y"),
        ch("ep.omega_body.z"),
    );
    let th: Vec<Vec<f64>> = ["w", "x", "y", "z"]
        .iter()
        .map(|c| ch(&format!("ep.theta.{c}")))
        .collect();
    // θ̇₀ = ½Gᵀω₀ gives exactly the body angular velocity asked for.
    assert!((wx[0] - w1).abs() < 1e-12 && wy[0].abs() < 1e-12 && (wz[0] - w3).abs() < 1e-12);
    for i in 0..wx.len() {
        let t = sink.times[i];
        assert!((wz[i] - w3).abs() < 1e-6, "ω̄3({t}) = {}", wz[i]);
        let (c, s) = ((lambda * t).cos(), (lambda * t).sin());
        assert!(
            (wx[i] - w1 * c).abs() < 2e-3,
            "ω̄1({t}) = {} vs {}",
            wx[i],
            w1 * c
        );
        assert!(
            (wy[i] - w1 * s).abs() < 2e-3,
            "ω̄2({t}) = {} vs {}",
            wy[i],
            w1 * s
        );
        let e = 0.5 * (j1 * (wx[i] * wx[i] + wy[i] * wy[i]) + j3 * wz[i] * wz[i]);
        assert!((e - energy).abs() < 1e-3 * energy, "energy({t}) = {e}");
        let n2: f64 = th.iter().map(|c| c[i] * c[i]).sum();
        assert!((n2 - 1.0).abs() < 1e-10, "θ·θ({t}) = {n2}");
    }
    // The precession phase after three seconds, from the angle of (ω̄1, ω̄2).
    let last = wx.len() - 1;
    let t_end = sink.times[last];
    let phase = wy[last].atan2(wx[last]);
    let want = (lambda * t_end + std::f64::consts::PI).rem_euclid(2.0 * std::f64::consts::PI)
        - std::f64::consts::PI;
    assert!((phase - want).abs() < 2e-3, "phase {phase} vs {want}");
    // The same motion as the body on R³×SO(3), to the integrators' accuracy.
    for c in [
        "R.x", "R.y", "R.z", "omega.x", "omega.y", "omega.z", "theta.w", "theta.x",
    ] {
        let (a, b) = (ch(&format!("lie.{c}")), ch(&format!("ep.{c}")));
        let dev = a
            .iter()
            .zip(&b)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        assert!(
            dev < 2e-3,
            "{c}: rigid_body and rigid_body_euler differ by {dev}"
        );
    }
}

#[test]
fn euler_parameter_pendulum_has_the_elliptic_period_in_both_forms() {
    let text = "gravity [0, 0, -9.81];
        body rod: rigid_body_euler { mass = 2; inertia = [1e-4, 2/12, 2/12];
            position = [0.5, 0, 0]; }
        joint pivot: revolute(rod, ground) { at = [0, 0, 0]; axis = [0, 1, 0]; }
        output tip = rod.point([0.5, 0, 0]);";
    // Rod of length 1 about one end: I/(m g d) = (L²/3)/(g L/2) = 2L/(3g).
    let t_ref = pendulum_period(2.0 / (3.0 * 9.81), std::f64::consts::FRAC_PI_2);
    for form in [Form::ArnoldBruls, Form::Negrut] {
        let (sink, _) = simulate(build_text("eppend", text), |s| {
            s.end = 4.0;
            s.step = 1e-3;
            s.output_every = 0.0;
            s.alpha = -0.05;
            s.form = form;
        });
        let x = channel(&sink, "tip.x");
        let z = channel(&sink, "tip.z");
        let norm = channel(&sink, "rod.theta.w")
            .iter()
            .zip(channel(&sink, "rod.theta.y"))
            .map(|(w, y)| w * w + y * y)
            .fold(0.0f64, |m, n2| m.max((n2 - 1.0).abs()));
        assert!(norm < 1e-10, "{form:?}: |θ|² − 1 up to {norm}");
        for (xi, zi) in x.iter().zip(&z) {
            assert!(((xi * xi + zi * zi).sqrt() - 1.0).abs() < 1e-8);
        }
        let c = down_crossings(&sink.times, &x);
        assert!(c.len() >= 2, "crossings {c:?}");
        let period = c[1] - c[0];
        let rel = (period - t_ref).abs() / t_ref;
        assert!(
            rel < 1e-4,
            "{form:?}: period {period} vs {t_ref} (rel {rel:e})"
        );
    }
}

/// The message of a model the pipeline refuses (it must not panic).
fn refusal(tag: &str, text: &str) -> String {
    use fdc_driver::pipeline::{front, render, BuildError};
    let dir = std::env::temp_dir().join(format!("fdc-vs-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("model.fd");
    std::fs::write(&path, text).unwrap();
    let r = front(&path, &[]);
    let _ = std::fs::remove_dir_all(&dir);
    match r {
        Ok(_) => panic!("{tag}: the model was accepted"),
        Err(BuildError::Model { analysis, extra }) => render(&analysis, &extra),
        Err(BuildError::Backend(e) | BuildError::Usage(e)) => e,
    }
}

#[test]
fn energies_that_cannot_be_lowered_are_diagnostics() {
    let body = "body a: rigid_body { mass = 1; inertia = [1, 1, 1]; }\n";
    let kinetic_of_body = format!(
        "{body}element e(b: body) {{ coordinates x: scalar;
            kinetic = 0.5*rate(x)^2 + dot(b.velocity([0, 0, 0]), b.velocity([0, 0, 0])); }}
        element i: e(a);"
    );
    let msg = refusal("kin", &kinetic_of_body);
    assert!(
        msg.contains("kinetic energy reads a connected body"),
        "{msg}"
    );
    let moving_potential = "element e { coordinates x: scalar; kinetic = 0.5*rate(x)^2;
            potential = x*rate(x); }
        element i: e;";
    let msg = refusal("pot", moving_potential);
    assert!(msg.contains("potential energy reads velocities"), "{msg}");
    let group_in_element = "element e { coordinates euler([0, 0, 0], quat(1, 0, 0, 0),
            [0, 0, 0], [0, 0, 0]); }
        element i: e;";
    let msg = refusal("group", group_in_element);
    assert!(msg.contains("only allowed in a body type"), "{msg}");
}

#[test]
fn hanging_pendulums_linearize_to_the_small_angle_frequency() {
    // A rod hanging from one end (rigid_body_euler) and a point mass in Cartesian
    // coordinates (a vector-space element): ω² = m g d / I.
    let (g, l) = (9.81f64, 0.6f64);
    let text = format!(
        "gravity [0, 0, -{g}];
        body rod: rigid_body_euler {{ mass = 2; inertia = [2*{l}^2/12, 2*{l}^2/12, 1e-4];
            position = [0, 0, -{l}/2]; }}
        joint pivot: revolute(rod, ground) {{ at = [0, 0, 0]; axis = [0, 1, 0]; }}
        element point_pendulum {{
            param L: scalar;
            coordinates p: vec3 = [0, 0, -L];
            kinetic = 0.5*dot(rate(p), rate(p));
            potential = -dot(gravity, p);
            constrain dot(p, p) - L^2;
        }}
        element pp: point_pendulum {{ L = {l}; }}"
    );
    let b = build_text("modes", &text);
    let mut sys = fdc_runtime::System::new(b.model).unwrap();
    sys.initialize(&fdc_runtime::Settings::default()).unwrap();
    let lin = sys.linearize().unwrap();
    // The rod: I = m L²/3 about the pivot, d = L/2; the point mass: g/L. The point
    // mass swings in two planes.
    let two_pi = 2.0 * std::f64::consts::PI;
    let f_rod = (g * (l / 2.0) / (l * l / 3.0)).sqrt() / two_pi;
    let f_point = (g / l).sqrt() / two_pi;
    let mut f: Vec<f64> = lin.modes.iter().map(|m| m.frequency).collect();
    f.sort_by(f64::total_cmp);
    assert_eq!(f.len(), 3, "{:?}", lin.modes);
    for (got, want) in f.iter().zip([f_point, f_point, f_rod]) {
        assert!((got - want).abs() < 1e-8 * want, "{got} Hz vs {want} Hz");
    }
}
