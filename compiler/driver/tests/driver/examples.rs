//! The examples end to end against closed forms and conservation laws, and the
//! promise that a parameter change never generates code again.

use crate::common;

use common::{build_example, build_or_panic, build_text, channel, example_path, simulate};
use fdc_driver::pipeline::BuildOptions;

/// Largest deviation of the spring–mass from z(t) = −x0 cos(√(k/m) t).
fn spring_mass_error(step: f64) -> f64 {
    let (sink, _) = simulate(build_example("spring_mass.fd"), |s| {
        s.step = step;
        s.end = 1.0;
        s.output_every = 0.05;
    });
    let omega = (100.0f64 / 1.0).sqrt();
    let z = channel(&sink, "z");
    sink.times
        .iter()
        .zip(&z)
        .map(|(t, z)| (z + 0.05 * (omega * t).cos()).abs())
        .fold(0.0, f64::max)
}

#[test]
fn spring_mass_follows_the_harmonic_solution_with_second_order_convergence() {
    let e1 = spring_mass_error(4e-3);
    let e2 = spring_mass_error(2e-3);
    assert!(e2 < 2e-4 * 0.05 * 10.0, "error {e2}");
    let order = (e1 / e2).log2();
    assert!(
        (1.8..2.3).contains(&order),
        "order {order} ({e1:e} → {e2:e})"
    );
}

#[test]
fn a_parameter_change_hits_the_object_cache_and_changes_the_result() {
    let dir = std::env::temp_dir().join(format!("fdc-driver-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let opts = |k: Option<f64>| BuildOptions {
        overrides: k.map(|k| vec![("k".to_string(), k)]).unwrap_or_default(),
        simplify: true,
        backend: fdc_backend::Options {
            cache: fdc_backend::CacheMode::Dir(dir.clone()),
            ..Default::default()
        },
        jobs: 0,
    };
    let first = build_or_panic(&example_path("spring_mass.fd"), &opts(None));
    assert!(!first.cache_hit);
    let second = build_or_panic(&example_path("spring_mass.fd"), &opts(Some(400.0)));
    assert!(
        second.cache_hit,
        "a changed parameter must not generate code again"
    );
    // With k = 400 the block oscillates at 20 rad/s about its new equilibrium, which
    // the model's `length = 1 - m g/k` keeps at z = 0.
    let (sink, _) = simulate(second, |s| {
        s.end = 0.5;
        s.output_every = 0.05;
    });
    let z = channel(&sink, "z");
    for (t, z) in sink.times.iter().zip(&z) {
        assert!((z + 0.05 * (20.0 * t).cos()).abs() < 2e-4, "t {t}: z {z}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn double_pendulum_keeps_its_energy_and_joint_geometry() {
    let (sink, _) = simulate(build_example("double_pendulum.fd"), |s| {
        s.end = 2.0;
        s.alpha = -0.02;
        s.output_every = 0.01;
    });
    let g = 9.81;
    let bodies = [
        ("upper", 1.0, [1e-4, 1.0 / 12.0, 1.0 / 12.0]),
        ("lower", 0.5, [1e-4, 0.5 * 0.49 / 12.0, 0.5 * 0.49 / 12.0]),
    ];
    let mut energy = vec![0.0; sink.times.len()];
    for (name, m, j) in bodies {
        let c = |s: &str| channel(&sink, &format!("{name}.{s}"));
        let (vx, vy, vz) = (c("Rdot.x"), c("Rdot.y"), c("Rdot.z"));
        let (wx, wy, wz) = (c("omega_body.x"), c("omega_body.y"), c("omega_body.z"));
        let z = c("R.z");
        for i in 0..energy.len() {
            energy[i] += 0.5 * m * (vx[i] * vx[i] + vy[i] * vy[i] + vz[i] * vz[i])
                + 0.5 * (j[0] * wx[i] * wx[i] + j[1] * wy[i] * wy[i] + j[2] * wz[i] * wz[i])
                + m * g * z[i];
        }
    }
    let scale = 1.0 * g * 1.0 + 0.5 * g * 1.7;
    let drift = energy
        .iter()
        .map(|e| (e - energy[0]).abs())
        .fold(0.0, f64::max);
    assert!(drift / scale < 1e-3, "energy drift {drift} of {scale}");
    // The elbow stays at distance L1 from the pivot; the tip at L2/2 from the elbow.
    let (ux, uz) = (channel(&sink, "upper.R.x"), channel(&sink, "upper.R.z"));
    for i in 0..ux.len() {
        assert!(((ux[i] * ux[i] + uz[i] * uz[i]).sqrt() - 0.5).abs() < 1e-8);
    }
}

#[test]
fn slider_crank_keeps_the_slider_on_its_guide() {
    let (sink, _) = simulate(build_example("slider_crank.fd"), |s| {
        s.end = 0.5;
        s.output_every = 0.01;
    });
    let y = channel(&sink, "slider.R.y");
    let z = channel(&sink, "slider.R.z");
    let x = channel(&sink, "slider.R.x");
    let (r, l) = (0.1, 0.3);
    for i in 0..x.len() {
        assert!(y[i].abs() < 1e-8 && z[i].abs() < 1e-8);
        assert!(x[i] <= r + l + 1e-9 && x[i] >= l - r - 1e-9, "x {}", x[i]);
    }
    // The crank turns: the slider leaves top dead centre.
    assert!(x.iter().cloned().fold(f64::INFINITY, f64::min) < r + l - 0.05);
}

#[test]
fn a_rotation_driver_prescribes_the_angle_and_its_multiplier_is_the_torque() {
    // A crank on a bearing about z, driven at constant angular acceleration a from
    // rest: angle a t²/2; torque about the pivot J_p a with J_p = J_z + m d².
    let (m, jz, d, a) = (2.0, 0.03, 0.25, 4.0);
    let model = format!(
        "gravity [0, 0, -9.81];\n\
         body crank: rigid_body {{ mass = {m}; inertia = [0.01, 0.02, {jz}]; position = [{d}, 0, 0]; }}\n\
         joint bearing: revolute(crank) {{ at = [0, 0, 0]; axis = [0, 0, 1]; }}\n\
         driver spin: rotation_driver(crank) {{ axis = [0, 0, 1]; value = 0.5*{a}*t^2; }}\n\
         simulate {{ end = 3; step = 1e-3; output_every = 0.05; }}\n"
    );
    let (sink, _) = simulate(build_text("driven", &model), |_| {});
    let (w, z) = (
        channel(&sink, "crank.theta.w"),
        channel(&sink, "crank.theta.z"),
    );
    let lambda = channel(&sink, "spin.lambda");
    let jp = jz + m * d * d;
    for (i, t) in sink.times.iter().enumerate() {
        let angle = 2.0 * z[i].atan2(w[i]);
        let want = 0.5 * a * t * t;
        let wrapped = (angle - want + std::f64::consts::PI).rem_euclid(2.0 * std::f64::consts::PI)
            - std::f64::consts::PI;
        assert!(wrapped.abs() < 1e-8, "t {t}: angle {angle} vs {want}");
        // The multiplier carries the integrator's own error, O((ωh)²) with ω up to
        // 12 rad/s here (about 1e-4 relative at the end).
        assert!(
            (lambda[i] + jp * a).abs() < 5e-4 * jp * a,
            "t {t}: λ {} vs {}",
            lambda[i],
            -jp * a
        );
    }
    // Several revolutions: the formulation has no atan2 wrap.
    assert!(0.5 * a * sink.times.last().unwrap().powi(2) > 2.0 * std::f64::consts::TAU);
}

#[test]
fn a_body_on_a_bushing_sags_and_oscillates_as_the_closed_form() {
    // Released at the unloaded position: z(t) = −(m g/k)(1 − cos √(k/m) t) along the
    // stiff axis; the other directions stay at rest.
    let (m, k) = (2.0f64, 800.0f64);
    let text = format!(
        "gravity [0, 0, -9.81];\n\
         body b: rigid_body {{ mass = {m}; inertia = [0.1, 0.1, 0.1]; }}\n\
         force mount: bushing(b) {{ at = [0, 0, 0]; stiffness = [100, 100, {k}]; rot_stiffness = [5, 5, 5]; }}\n\
         simulate {{ end = 1; step = 5e-4; output_every = 0.01; }}\n"
    );
    let (sink, _) = simulate(build_text("bushing", &text), |_| {});
    let w = (k / m).sqrt();
    let (z, x, dz) = (
        channel(&sink, "b.R.z"),
        channel(&sink, "b.R.x"),
        channel(&sink, "mount.deflection.z"),
    );
    for (i, t) in sink.times.iter().enumerate() {
        let want = -(m * 9.81 / k) * (1.0 - (w * t).cos());
        // HHT phase error ~ ω³h²t/12 of an amplitude of 0.025 m: below 1e-5.
        assert!((z[i] - want).abs() < 1e-5, "t {t}: z {} vs {want}", z[i]);
        assert!(x[i].abs() < 1e-12);
        assert_eq!(dz[i], z[i]);
    }
}

#[test]
fn an_imu_on_a_spinning_falling_body_reads_the_closed_form() {
    // A body falling freely and spinning about its z axis at 2 rad/s: an accelerometer
    // at 0.5 m off the axis measures only the centripetal part, −ω² r toward the axis,
    // and no gravity (free fall); the gyro reads ω along its z axis.
    let text = "gravity [0, 0, -9.81];\n\
         body b: rigid_body { mass = 1; inertia = [0.2, 0.2, 0.3]; angular_velocity = [0, 0, 2]; }\n\
         sensor s: imu(b) { at = [0.5, 0, 0]; }\n\
         simulate { end = 1; step = 1e-3; output_every = 0.05; }\n";
    let (sink, _) = simulate(build_text("imu", text), |_| {});
    let c = |n: &str| channel(&sink, &format!("s.{n}"));
    let (fx, fy, fz) = (
        c("specific_force.x"),
        c("specific_force.y"),
        c("specific_force.z"),
    );
    let (ax, az) = (c("acceleration.x"), c("acceleration.z"));
    let (wx, wz) = (c("angular_velocity.x"), c("angular_velocity.z"));
    for (i, t) in sink.times.iter().enumerate() {
        assert!((fx[i] + 4.0 * 0.5).abs() < 1e-8, "t {t}: fx {}", fx[i]);
        assert!(
            fy[i].abs() < 1e-8 && fz[i].abs() < 1e-8,
            "t {t}: f {} {}",
            fy[i],
            fz[i]
        );
        assert!((ax[i] + 2.0).abs() < 1e-8 && (az[i] + 9.81).abs() < 1e-8);
        assert!(wx[i].abs() < 1e-12 && (wz[i] - 2.0).abs() < 1e-12);
    }
}

/// Angles of a channel of wrapped angles made continuous.
fn unwrap_series(a: &[f64]) -> Vec<f64> {
    let tau = std::f64::consts::TAU;
    let mut out = vec![a[0]];
    for &x in &a[1..] {
        let last = *out.last().unwrap();
        out.push(last + (x - last + std::f64::consts::PI).rem_euclid(tau) - std::f64::consts::PI);
    }
    out
}

#[test]
fn the_heavy_top_precesses_at_the_gyroscopic_rate() {
    let (sink, _) = simulate(build_example("spinning_top.fd"), |_| {});
    let (m, g, l, j3, spin) = (1.0, 9.81, 0.05, 2e-3, 300.0);
    let omega = m * g * l / (j3 * spin);
    let az = unwrap_series(&channel(&sink, "azimuth"));
    let t_end = *sink.times.last().unwrap();
    let measured = (az.last().unwrap() - az[0]) / t_end;
    // The approximation neglects Ω² J1' cos θ against Ω J3 ω3 (J1' = J1 + m l² about
    // the tip): here about 0.6 %; the small nutation averages out over 2 s.
    assert!(
        (measured - omega).abs() < 0.01 * omega,
        "precession {measured} vs m g l/(J3 ω3) = {omega}"
    );
    // The tip stays at the origin: the centre of mass keeps its distance l.
    let r = [
        channel(&sink, "top.R.x"),
        channel(&sink, "top.R.y"),
        channel(&sink, "top.R.z"),
    ];
    for (i, t) in sink.times.iter().enumerate() {
        let d = (r[0][i].powi(2) + r[1][i].powi(2) + r[2][i].powi(2)).sqrt();
        assert!((d - l).abs() < 1e-9, "t {t}: |R| = {d}");
    }
}

#[test]
fn the_gear_pair_holds_its_ratio_over_many_revolutions() {
    let (sink, _) = simulate(build_example("gear_pair.fd"), |_| {});
    let (ratio, torque, j1, j2) = (2.5, 0.2, 2e-3, 2e-2);
    // Reduced to the pinion: (J1 + J2/n²) φ̈1 = τ.
    let acc = torque / (j1 + j2 / (ratio * ratio));
    let (a1, a2) = (channel(&sink, "mesh.angle1"), channel(&sink, "mesh.angle2"));
    // The pinion's angle from its quaternion, unwrapped here, independent of the
    // element state of the gear.
    let (w, z) = (
        channel(&sink, "pinion.theta.w"),
        channel(&sink, "pinion.theta.z"),
    );
    let q_angle: Vec<f64> = w.iter().zip(&z).map(|(w, z)| 2.0 * z.atan2(*w)).collect();
    let q_angle = unwrap_series(&q_angle);
    for (i, &t) in sink.times.iter().enumerate() {
        assert!((a1[i] + ratio * a2[i]).abs() < 1e-9, "t {t}: ratio broken");
        let want = 0.5 * acc * t * t;
        assert!(
            (a1[i] - want).abs() < 1e-4 * (1.0 + want),
            "t {t}: {} vs {want}",
            a1[i]
        );
        assert!((q_angle[i] - a1[i]).abs() < 1e-8, "t {t}: quaternion angle");
    }
    assert!(*a1.last().unwrap() > 10.0 * std::f64::consts::TAU);
}

#[test]
fn the_four_bar_closes_its_loop_while_the_crank_turns() {
    let (sink, _) = simulate(build_example("four_bar.fd"), |_| {});
    let (a, b, c, d) = (0.2f64, 0.5f64, 0.4f64, 0.5f64);
    let phi = channel(&sink, "motor.angle");
    let (rx, ry) = (channel(&sink, "rocker.R.x"), channel(&sink, "rocker.R.y"));
    for (i, &t) in sink.times.iter().enumerate() {
        // Crank pin B, then C on the circles about B (radius b) and D (radius c), on
        // the branch the model starts on (left of the line B → D).
        let th = std::f64::consts::FRAC_PI_2 + phi[i];
        let (bx, by) = (a * th.cos(), a * th.sin());
        let (ux, uy) = (d - bx, -by);
        let e = (ux * ux + uy * uy).sqrt();
        let x = (b * b - c * c + e * e) / (2.0 * e);
        let h = (b * b - x * x).sqrt();
        let (cx, cy) = (bx + (x * ux - h * uy) / e, by + (x * uy + h * ux) / e);
        assert!((rx[i] - (d + cx) / 2.0).abs() < 1e-8, "t {t}: rocker x");
        assert!((ry[i] - cy / 2.0).abs() < 1e-8, "t {t}: rocker y");
        // After the ramp the crank turns at one revolution per second.
        if t >= 0.5 {
            assert!((phi[i] - std::f64::consts::TAU * t).abs() < 1e-9, "t {t}");
        }
    }
}

#[test]
fn the_quarter_car_settles_on_the_bump_carrying_its_weight() {
    let (sink, _) = simulate(build_example("quarter_car.fd"), |_| {});
    let weight = (300.0 + 40.0) * 9.81;
    let tyre = channel(&sink, "tyre.tension");
    let height = channel(&sink, "ride_height");
    let n = sink.times.len() - 1;
    // At rest the tyre carries the whole weight (it pushes: negative tension).
    assert!(
        (tyre[0] + weight).abs() < 1e-6 * weight,
        "t = 0: {}",
        tyre[0]
    );
    assert!((tyre[n] + weight).abs() < 5e-3 * weight, "end: {}", tyre[n]);
    // The springs return to their static deflections, so the body sits `bump` higher
    // (less the bushings' sag under the load they did not carry at t = 0: < 1 mm).
    assert!((height[n] - 0.65).abs() < 2e-3, "end height {}", height[n]);
}
