//! Drivers and sensors inside element types ("local" drivers): a preset that holds its
//! own driver and sensor, instantiated in a loop, with the driver's time-dependent
//! schedule reading the preset's fields. Checked against the closed form of the
//! prescribed motion: the body's own orientation, the sensor's continuous angle through
//! more than half a revolution and the driving torque J·φ''.

use crate::common;

use common::{build_text, channel, simulate};

/// Three wheels on hinges about z, each driven by its own `motor` preset with
/// φ(t) = w t + ½ a t², w = i + 1 rad/s, a = 2 rad/s², and a continuous-angle sensor.
const MODEL: &str = r#"
gravity [0, 0, -9.81];
element motor(b: body) {
    param w = 1;
    param a = 0;
    driver spin: rotation_driver(b) { axis = [0, 0, 1]; value = w*t + 0.5*a*t^2; }
    sensor turns: continuous_angle(b);
}
param N = 3;
for i in 0..N {
    body wheel[i]: rigid_body { mass = 2; inertia = [1, 1, 0.5]; position = [i, 0, 0]; }
    joint hub[i]: revolute(wheel[i]) { at = [i, 0, 0]; axis = [0, 0, 1]; }
    element m[i]: motor(wheel[i]) { w = i + 1; a = 2; }
}
simulate { end = 1; step = 1e-3; output_every = 0.01; }
"#;

/// The angle about z of the unit quaternion (w, 0, 0, z) − `phi`, wrapped to (−π, π].
fn angle_off(w: f64, z: f64, phi: f64) -> f64 {
    let d = 2.0 * z.atan2(w) - phi;
    d.sin().atan2(d.cos())
}

#[test]
fn looped_preset_driver_follows_its_schedule() {
    let built = build_text("local-drivers", MODEL);
    // rigid_body, revolute, continuous_angle and one driver type for all three motors
    // (the schedule's `w`, `a` are parameter slots of it, not compiled in).
    assert_eq!(built.element_types, 4, "one shared driver type");
    let (sink, stats) = simulate(built, |_| {});
    assert!((sink.times.last().unwrap() - 1.0).abs() < 1e-9);
    assert_eq!(stats.steps, 1000);
    let (a, jz) = (2.0, 0.5);
    for i in 0..3 {
        let w = (i + 1) as f64;
        let phi: Vec<f64> = (sink.times.iter())
            .map(|t| w * t + 0.5 * a * t * t)
            .collect();
        let (qw, qz) = (
            channel(&sink, &format!("wheel[{i}].theta.w")),
            channel(&sink, &format!("wheel[{i}].theta.z")),
        );
        let angle = channel(&sink, &format!("m[{i}].spin.angle"));
        let sensed = channel(&sink, &format!("m[{i}].turns.angle"));
        let torque = channel(&sink, &format!("m[{i}].spin.lambda"));
        let mut worst = [0.0f64; 4];
        for k in 0..phi.len() {
            worst[0] = worst[0].max(angle_off(qw[k], qz[k], phi[k]).abs());
            worst[1] = worst[1].max((angle[k] - phi[k]).abs());
            worst[2] = worst[2].max((sensed[k] - phi[k]).abs());
            if k > 0 {
                worst[3] = worst[3].max((torque[k].abs() - jz * a).abs());
            }
        }
        eprintln!(
            "wheel {i}: body {:.2e}, driver {:.2e}, sensor {:.2e} rad, torque {:.2e} N m",
            worst[0], worst[1], worst[2], worst[3]
        );
        // At t = 1 the wheel has turned w + 1 rad: wheel 2 past π, where the body's own
        // angle wraps and the continuous sensor must not.
        assert!(phi.last().unwrap() - w - 1.0 < 1e-12);
        assert!(
            worst[0] < 1e-12,
            "wheel {i}: body angle off by {}",
            worst[0]
        );
        assert!(
            worst[1] < 1e-12,
            "wheel {i}: driver angle off by {}",
            worst[1]
        );
        assert!(
            worst[2] < 1e-12,
            "wheel {i}: sensor angle off by {}",
            worst[2]
        );
        assert!(
            worst[3] < 1e-6,
            "wheel {i}: driving torque off by {}",
            worst[3]
        );
    }
}
