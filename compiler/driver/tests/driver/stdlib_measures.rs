//! Measures, continuous angles (element state) and the driver activation ramp of the
//! standard library through the real pipeline, against closed forms computed here.

use crate::common;

use common::{build_text, channel, simulate};
use std::f64::consts::PI;

/// `x` wrapped into (−π, π].
fn wrap(x: f64) -> f64 {
    let y = (x + PI).rem_euclid(2.0 * PI) - PI;
    if y == -PI {
        PI
    } else {
        y
    }
}

#[test]
fn every_measure_of_a_body_in_uniform_motion_matches_its_closed_form() {
    // No gravity: the centre moves at V, the body spins at w about its principal z
    // axis (so w stays constant), P(t) = R0 + V t + Rz(w t)(at − R0).
    let (r0, v, w, at, far) = (
        [0.2, -0.1, 0.3],
        [0.5, 0.2, -0.3],
        7.0,
        [0.5, 0.1, 0.3],
        [2.0, 1.0, -1.0],
    );
    let model = format!(
        "body b: rigid_body {{ mass = 1; inertia = [0.1, 0.2, 0.3]; position = {r0:?};
             velocity = {v:?}; angular_velocity = [0, 0, {w}]; }}
         sensor probe(b: body) {{
             param at: vec3;
             param far: vec3;
             output disp = displacement(b, ground, at, [3, 4, 0]);
             output vel = point_velocity(b, at);
             output dist = distance(b, at, ground, far);
             output dist_rate = distance_rate(b, at, ground, far);
             output omega = angular_velocity(b, ground);
             output spin = angular_rate(b, ground, [0, 0, 2]);
             let r = rotation_angle(b, ground, [0, 0, 1]);
             param turns = initial(r);
             let phi = unwrap(r, turns);
             state turns = phi;
             output ranged = r;
             output continuous = phi;
         }}
         sensor p: probe(b) {{ at = {at:?}; far = {far:?}; }}
         simulate {{ end = 3; step = 1e-3; output_every = 0.05; }}"
    );
    let (sink, _) = simulate(build_text("measures", &model), |_| {});
    let ch = |n: &str| channel(&sink, n);
    let (disp, dist, dist_rate) = (ch("p.disp"), ch("p.dist"), ch("p.dist_rate"));
    let vel = [ch("p.vel.x"), ch("p.vel.y"), ch("p.vel.z")];
    let omega = [ch("p.omega.x"), ch("p.omega.y"), ch("p.omega.z")];
    let (spin, ranged, cont) = (ch("p.spin"), ch("p.ranged"), ch("p.continuous"));
    for (i, &t) in sink.times.iter().enumerate() {
        let (s, c) = ((w * t).sin(), (w * t).cos());
        let u = [at[0] - r0[0], at[1] - r0[1], at[2] - r0[2]];
        let ru = [c * u[0] - s * u[1], s * u[0] + c * u[1], u[2]];
        let p: Vec<f64> = (0..3).map(|k| r0[k] + v[k] * t + ru[k]).collect();
        let pdot = [v[0] - w * ru[1], v[1] + w * ru[0], v[2]];
        let want_disp = ((p[0] - at[0]) * 3.0 + (p[1] - at[1]) * 4.0) / 5.0;
        let d: Vec<f64> = (0..3).map(|k| far[k] - p[k]).collect();
        let l = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
        let want_rate = -(d[0] * pdot[0] + d[1] * pdot[1] + d[2] * pdot[2]) / l;
        let tol = 1e-6;
        assert!((disp[i] - want_disp).abs() < tol, "t {t}: disp {}", disp[i]);
        assert!((dist[i] - l).abs() < tol, "t {t}: dist {} vs {l}", dist[i]);
        assert!(
            (dist_rate[i] - want_rate).abs() < tol,
            "t {t}: rate {}",
            dist_rate[i]
        );
        for k in 0..3 {
            assert!(
                (vel[k][i] - pdot[k]).abs() < tol,
                "t {t}: vel[{k}] {}",
                vel[k][i]
            );
            let wk = if k == 2 { w } else { 0.0 };
            assert!((omega[k][i] - wk).abs() < tol, "t {t}: omega[{k}]");
        }
        assert!((spin[i] - w).abs() < tol, "t {t}: spin {}", spin[i]);
        // The ranged angle wraps at ±π; the continuous one counts the 3+ turns.
        assert!(
            (wrap(ranged[i] - w * t)).abs() < tol,
            "t {t}: ranged {}",
            ranged[i]
        );
        assert!(ranged[i].abs() <= PI + 1e-12);
        assert!(
            (cont[i] - w * t).abs() < tol,
            "t {t}: continuous {} vs {}",
            cont[i],
            w * t
        );
    }
    assert!(w * sink.times.last().unwrap() > 3.0 * 2.0 * PI);
}

#[test]
fn a_torsion_spring_swings_beyond_pi_and_counts_revolutions() {
    // Torsion pendulum about z: J φ̈ = −k φ, φ(0) = 0, φ̇(0) = A ωn with amplitude
    // A = 4 rad > π (the ranged angle would flip the spring's sign at ±π). A second
    // body spins freely at 9 rad/s through a spring of zero stiffness: angle 9 t.
    let (j, k, amp, spin) = (0.02f64, 0.5f64, 4.0f64, 9.0f64);
    let wn = (k / j).sqrt();
    let model = format!(
        "body pend: rigid_body {{ mass = 1; inertia = [0.01, 0.01, {j}];
             angular_velocity = [0, 0, {w0}]; }}
         body wheel: rigid_body {{ mass = 1; inertia = [0.01, 0.01, {j}]; position = [1, 0, 0];
             angular_velocity = [0, 0, {spin}]; }}
         joint hinge: revolute(pend) {{ at = [0, 0, 0]; axis = [0, 0, 1]; }}
         joint axle: revolute(wheel) {{ at = [1, 0, 0]; axis = [0, 0, 1]; }}
         force spring: torsion_spring(pend) {{ axis = [0, 0, 1]; stiffness = {k}; }}
         force free: torsion_spring(wheel) {{ axis = [0, 0, 1]; }}
         simulate {{ end = 4; step = 5e-4; alpha = -0.005; output_every = 0.01; }}",
        w0 = amp * wn
    );
    let (sink, _) = simulate(build_text("torsion", &model), |_| {});
    let (angle, moment) = (
        channel(&sink, "spring.angle"),
        channel(&sink, "spring.moment"),
    );
    let free = channel(&sink, "free.angle");
    let mut max_angle = 0.0f64;
    for (i, &t) in sink.times.iter().enumerate() {
        let want = amp * (wn * t).sin();
        // Nearly the trapezoidal rule (α = −0.005, the least damping allowed with
        // joints): phase error ≈ (ωn h)² ωn t / 12 ≈ 1e-5 rad here.
        assert!(
            (angle[i] - want).abs() < 1e-3 * amp,
            "t {t}: φ {} vs {want}",
            angle[i]
        );
        assert!(
            (moment[i] + k * angle[i]).abs() < 1e-12 * k * amp,
            "t {t}: moment"
        );
        assert!(
            (free[i] - spin * t).abs() < 1e-8,
            "t {t}: free {} vs {}",
            free[i],
            spin * t
        );
        max_angle = max_angle.max(angle[i].abs());
    }
    assert!(max_angle > 3.9, "the swing passes ±π: max |φ| {max_angle}");
}

/// The activation polynomial of theory §5.2 with A = 0: value, rate, acceleration.
fn ramp(t: f64, ta: f64, f: [f64; 3]) -> [f64; 3] {
    let [f1, d1, dd1] = f;
    let b = 21.0 * f1 - 6.0 * d1 * ta + 0.5 * dd1 * ta * ta;
    let c = -35.0 * f1 + ta * (11.0 * d1 - dd1 * ta);
    let d = 15.0 * f1 - 5.0 * d1 * ta + 0.5 * dd1 * ta * ta;
    let s = t / ta;
    [
        b * s.powi(5) + c * s.powi(6) + d * s.powi(7),
        (5.0 * b * s.powi(4) + 6.0 * c * s.powi(5) + 7.0 * d * s.powi(6)) / ta,
        (20.0 * b * s.powi(3) + 30.0 * c * s.powi(4) + 42.0 * d * s.powi(5)) / (ta * ta),
    ]
}

#[test]
fn a_ramped_rotation_driver_follows_the_activation_polynomial_then_the_schedule() {
    // f(t) = 1 + 2t + 0.3 sin 3t is not 0 at t = 0: the ramp starts from rest at 0 and
    // joins f with value, rate and acceleration at ta = 0.4. The probe evaluates the
    // library's `activation` and its exact rates as the driver's equations see them.
    let ta = 0.4;
    let sched = |t: f64| {
        [
            1.0 + 2.0 * t + 0.3 * (3.0 * t).sin(),
            2.0 + 0.9 * (3.0 * t).cos(),
            -2.7 * (3.0 * t).sin(),
        ]
    };
    let model = format!(
        "body crank: rigid_body {{ mass = 2; inertia = [0.01, 0.02, 0.03]; position = [0.25, 0, 0]; }}
         joint bearing: revolute(crank) {{ at = [0, 0, 0]; axis = [0, 0, 1]; }}
         driver spin: rotation_driver(crank) {{ axis = [0, 0, 1];
             value = 1 + 2*t + 0.3*sin(3*t); ramp = {ta}; }}
         sensor probe(b: body) {{
             param value: scalar;
             param ramp = 0;
             let f = activation(value, ramp, 0);
             output f = f;
             output df = rate(f);
             output ddf = rate(rate(f));
         }}
         sensor s: probe(crank) {{ value = 1 + 2*t + 0.3*sin(3*t); ramp = {ta}; }}
         output rate = crank.omega.z;
         output acc = crank.alpha.z;
         simulate {{ end = 1.5; step = 1e-3; alpha = -0.05; output_every = 0.005; }}"
    );
    let (sink, _) = simulate(build_text("ramp", &model), |_| {});
    let ch = |n: &str| channel(&sink, n);
    let (angle, rate, acc) = (ch("spin.angle"), ch("rate"), ch("acc"));
    let reference = [ch("s.f"), ch("s.df"), ch("s.ddf")];
    let f1 = sched(ta);
    for (i, &t) in sink.times.iter().enumerate() {
        let want = if t < ta { ramp(t, ta, f1) } else { sched(t) };
        for k in 0..3 {
            let got = reference[k][i];
            assert!(
                (got - want[k]).abs() < 1e-9 * (1.0 + want[k].abs()),
                "t {t}: derivative {k} of the reference {got} vs {}",
                want[k]
            );
        }
        // The motion: the angle is exact (index-3 constraint); velocity and
        // acceleration carry the integrator's error. The jerk jumps by ≈5e3 rad/s³ at
        // ta (the polynomial is C2, not C3), which the index-3 accelerations answer
        // with a transient that HHT damps within ≈0.1 s.
        assert!(
            (angle[i] - want[0]).abs() < 1e-9,
            "t {t}: angle {} vs {}",
            angle[i],
            want[0]
        );
        assert!(
            (rate[i] - want[1]).abs() < 1e-3,
            "t {t}: rate {} vs {}",
            rate[i],
            want[1]
        );
        if !(ta..ta + 0.1).contains(&t) {
            assert!(
                (acc[i] - want[2]).abs() < 0.05,
                "t {t}: acc {} vs {}",
                acc[i],
                want[2]
            );
        }
    }
    // The program's reference equals the polynomial below ta and f from ta on, at
    // every output time; the polynomial (transcribed here from theory §5.2) meets f
    // with value, rate and acceleration at ta.
    let (below, above) = (ramp(ta * (1.0 - 1e-12), ta, f1), sched(ta));
    for k in 0..3 {
        assert!(
            (below[k] - above[k]).abs() < 1e-8 * (1.0 + above[k].abs()),
            "{k}"
        );
    }
    // At rest at t = 0, although f(0) = 1.
    assert!(angle[0].abs() < 1e-12 && rate[0].abs() < 1e-9);
}

#[test]
fn a_one_off_drag_torque_slows_a_wheel_exponentially() {
    // `force drag: on(wheel) { ... }` with the model parameter c: J ω̇ = −c ω, so
    // ω(t) = ω0 exp(−c t / J); the inline output is the dissipated power −c ω².
    let (j, c, w0) = (0.05, 0.02, 30.0);
    let model = format!(
        "param c = {c};
         body wheel: rigid_body {{ mass = 1; inertia = [0.1, 0.1, {j}];
             angular_velocity = [0, 0, {w0}]; }}
         joint axle: revolute(wheel) {{ at = [0, 0, 0]; axis = [0, 0, 1]; }}
         force drag: on(wheel, ground) {{
             apply torque -c*(wheel.omega - ground.omega) on wheel;
             output power = -c*dot(wheel.omega, wheel.omega);
         }}
         simulate {{ end = 2; step = 1e-3; output_every = 0.05; }}"
    );
    let (sink, _) = simulate(build_text("drag", &model), |_| {});
    let (w, p) = (
        channel(&sink, "wheel.omega.z"),
        channel(&sink, "drag.power"),
    );
    for (i, &t) in sink.times.iter().enumerate() {
        let want = w0 * (-c * t / j).exp();
        assert!(
            (w[i] - want).abs() < 1e-4 * w0,
            "t {t}: ω {} vs {want}",
            w[i]
        );
        assert!(
            (p[i] + c * w[i] * w[i]).abs() < 1e-9 * c * w0 * w0,
            "t {t}: power"
        );
    }
    assert!(*w.last().unwrap() < 0.5 * w0);
}

#[test]
fn fix_dof_rows_in_a_tilted_frame_make_the_same_hinge_as_revolute() {
    // Fix list [1, 1, 1, 1, 1, 0] in the frame whose third axis is the hinge axis:
    // five `fix_dof` rows. A twin pendulum on the `revolute` preset (built from the
    // other primitives) is the reference; both swing in 3-D about a tilted axis.
    let axis = [0.3f64, -0.4, 0.866];
    let n = (axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]).sqrt();
    let k = axis.map(|c| c / n);
    // Any frame with k as third column.
    let e0 = {
        let h = [1.0, 0.0, 0.0];
        let d = k[0];
        let v = [h[0] - d * k[0], h[1] - d * k[1], h[2] - d * k[2]];
        let m = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
        v.map(|c| c / m)
    };
    let e1 = [
        k[1] * e0[2] - k[2] * e0[1],
        k[2] * e0[0] - k[0] * e0[2],
        k[0] * e0[1] - k[1] * e0[0],
    ];
    let axes = format!(
        "[[{}, {}, {}], [{}, {}, {}], [{}, {}, {}]]",
        e0[0], e1[0], k[0], e0[1], e1[1], k[1], e0[2], e1[2], k[2]
    );
    let body = |name: &str, y: f64| {
        format!(
            "body {name}: rigid_body {{ mass = 1.5; inertia = [0.02, 0.05, 0.04];
                 position = [0.6, {y}, 0.1]; angular_velocity = [0.5, 0.2, 0.1]; }}\n"
        )
    };
    let mut model = String::from("gravity [0, 0, -9.81];\n");
    model += &body("twin", 0.0);
    model += &body("gen", 5.0);
    model += &format!("joint hinge: revolute(twin) {{ at = [0, 0, 0]; axis = {axis:?}; }}\n");
    for dof in 0..5 {
        model += &format!(
            "joint g{dof}: fix_dof(gen) {{ at = [0, 5, 0]; axes = {axes}; dof = {dof}; }}\n"
        );
    }
    model += "simulate { end = 1.5; step = 1e-3; output_every = 0.05; }\n";
    let (sink, _) = simulate(build_text("fixdof", &model), |_| {});
    for c in ["x", "y", "z"] {
        let (a, b) = (
            channel(&sink, &format!("twin.R.{c}")),
            channel(&sink, &format!("gen.R.{c}")),
        );
        let shift = if c == "y" { 5.0 } else { 0.0 };
        for (i, &t) in sink.times.iter().enumerate() {
            assert!(
                (b[i] - shift - a[i]).abs() < 1e-9,
                "t {t}: R.{c} {} vs {}",
                b[i],
                a[i]
            );
        }
    }
    // It did swing.
    let z = channel(&sink, "gen.R.z");
    assert!(z.iter().cloned().fold(f64::INFINITY, f64::min) < 0.0);
}

#[test]
fn measures_work_in_model_outputs() {
    // A crank on a hinge about z spinning freely at 5 rad/s: its angle is 5t (wrapped),
    // the crank point at [1, 0, 0] stays at distance 1 from the pivot, and the point
    // [0.5, 0, 0] (the centre) moves at 2.5 m/s.
    let model = "body crank: rigid_body { mass = 1; inertia = [0.1, 0.1, 0.1];
             position = [0.5, 0, 0]; velocity = [0, 2.5, 0]; angular_velocity = [0, 0, 5]; }
         joint j: revolute(crank) { at = [0, 0, 0]; axis = [0, 0, 1]; }
         output ang = rotation_angle(crank, ground, [0, 0, 1]);
         output d = distance(crank, [1, 0, 0], ground, [0, 0, 0]);
         output speed = norm(point_velocity(crank, [0.5, 0, 0]));
         simulate { end = 2; step = 1e-3; output_every = 0.05; }";
    let (sink, _) = simulate(build_text("outputs", model), |_| {});
    let (ang, d, speed) = (
        channel(&sink, "ang"),
        channel(&sink, "d"),
        channel(&sink, "speed"),
    );
    for (i, &t) in sink.times.iter().enumerate() {
        // The integrator's phase error is O((ωh)² ωt), about 1e-5 rad here.
        assert!(
            wrap(ang[i] - 5.0 * t).abs() < 1e-4,
            "t {t}: angle {}",
            ang[i]
        );
        assert!((d[i] - 1.0).abs() < 1e-9, "t {t}: distance {}", d[i]);
        assert!((speed[i] - 2.5).abs() < 1e-4, "t {t}: speed {}", speed[i]);
    }
}

#[test]
fn a_state_without_a_parameter_starts_at_its_value_and_follows_accepted_steps() {
    // `state z = ...;` alone: its start value is z(0), and after every accepted step
    // it is the new height, so at each output time it equals the body's own channel.
    // `peak` keeps the largest height seen: a state that uses its last value. (All
    // states are updated together from their last values, so `peak` uses the height
    // itself, not the state `z`, which would lag one step.)
    let model = "gravity [0, 0, -9.81];
         body ball: rigid_body { mass = 1; inertia = [1, 1, 1]; position = [0, 0, 2];
             velocity = [0, 0, 3]; }
         sensor tracker(b: body) {
             state z = b.position.z;
             param peak = initial(b.position.z);
             let h = b.position.z;
             state peak = 0.5*(peak + h + sqrt((peak - h)^2 + 1e-12));
             output z = z;
             output peak = peak;
         }
         sensor s: tracker(ball);
         simulate { end = 1; step = 1e-3; output_every = 0.01; }";
    let (sink, _) = simulate(build_text("state", model), |_| {});
    let (z, peak, rz) = (
        channel(&sink, "s.z"),
        channel(&sink, "s.peak"),
        channel(&sink, "ball.R.z"),
    );
    let top = 2.0 + 3.0 * 3.0 / (2.0 * 9.81);
    for (i, &t) in sink.times.iter().enumerate() {
        assert!(
            (z[i] - rz[i]).abs() < 1e-12,
            "t {t}: state {} vs {}",
            z[i],
            rz[i]
        );
        // The peak is max over the accepted steps of 2 + 3t − g t²/2 (smooth max with
        // a 1e-6 m blend), so at most the apex.
        let want = if t < 3.0 / 9.81 { rz[i] } else { top };
        assert!(
            (peak[i] - want).abs() < 1e-5,
            "t {t}: peak {} vs {want}",
            peak[i]
        );
    }
}

#[test]
fn continuous_angle_counts_two_and_a_half_revolutions_from_its_offset() {
    // A wheel spinning about its own principal axis z through its centre on a hinge:
    // ω stays constant and the group update is exact, so the angle is offset + ω t to
    // round-off while `rotation_angle` wraps five times. 2.5 revolutions in 1 s.
    let (w, offset) = (5.0 * PI, 0.3);
    let model = format!(
        "body wheel: rigid_body {{ mass = 1; inertia = [0.2, 0.2, 0.3];
             angular_velocity = [0, 0, {w}]; }}
         joint j: revolute(wheel) {{ at = [0, 0, 0]; axis = [0, 0, 1]; }}
         sensor turn: continuous_angle(wheel) {{ offset = {offset}; }}
         output wrapped = rotation_angle(wheel, ground, [0, 0, 1]);
         output beta = unwrapped_angle(wheel, ground, [0, 0, 1], {offset});
         output twice = 2*continuous(rotation_angle(wheel, ground, [0, 0, 1]));
         simulate {{ end = 1; step = 1e-3; output_every = 0.01; }}"
    );
    let (sink, _) = simulate(build_text("continuous-angle", &model), |_| {});
    let (angle, rate, wrapped) = (
        channel(&sink, "turn.angle"),
        channel(&sink, "turn.rate"),
        channel(&sink, "wrapped"),
    );
    let (beta, twice) = (channel(&sink, "beta"), channel(&sink, "twice"));
    for (i, &t) in sink.times.iter().enumerate() {
        let want = offset + w * t;
        assert!(
            (angle[i] - want).abs() < 1e-9,
            "t {t}: {} vs {want}",
            angle[i]
        );
        assert!((rate[i] - w).abs() < 1e-9, "t {t}: rate {}", rate[i]);
        // The same angle as a model-level output, which keeps state of its own.
        assert!((beta[i] - want).abs() < 1e-9, "t {t}: output {}", beta[i]);
        assert!((twice[i] - 2.0 * w * t).abs() < 2e-9, "t {t}: {}", twice[i]);
        assert!((wrap(wrapped[i] - w * t)).abs() < 1e-9, "t {t}: wrapped");
    }
    assert!((sink.times.last().unwrap() - 1.0).abs() < 1e-12);
    assert!(wrapped.iter().all(|a| a.abs() <= PI));
}
