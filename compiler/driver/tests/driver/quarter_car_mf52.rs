//! The caller-driven loop of a driving simulator on `examples/quarter_car_mf52.fd`
//! (the full Magic Formula tyre): the Rust simulator API, fixed(2) Newton, one step
//! per call, the throttle (runtime input `drive_torque`) set before every step.

use crate::common;

use common::{build_or_panic, example_path, no_cache};
use fdc_driver::settings::{runtime_settings, Overrides};
use fdc_runtime::System;

const STEPS: usize = 2500;
const H: f64 = 1e-3;

/// The chassis speed after every step with the throttle `torque(t)`.
fn drive(torque: impl Fn(f64) -> f64) -> Vec<f64> {
    let b = build_or_panic(&example_path("quarter_car_mf52.fd"), &no_cache());
    let over = Overrides {
        newton: Some(fdc_lower::NewtonSetting::Fixed(2)),
        ..Default::default()
    };
    let settings = runtime_settings(&b.settings, &over).unwrap();
    let mut sys = System::new(b.model).unwrap();
    let throttle = sys.input_index("drive_torque").unwrap();
    let speed = sys
        .channel_names()
        .iter()
        .position(|n| n == "speed")
        .unwrap();
    sys.initialize(&settings).unwrap();
    (0..STEPS)
        .map(|k| {
            let t = k as f64 * H;
            sys.set_input(throttle, torque(t));
            let report = sys.step(&settings).unwrap();
            assert_eq!(report.substeps, 1, "one step per call at t {t}");
            sys.output_values()[speed]
        })
        .collect()
}

fn smooth(x: f64) -> f64 {
    let s = x.clamp(0.0, 1.0);
    s * s * (3.0 - 2.0 * s)
}

#[test]
fn a_throttle_set_between_steps_accelerates_the_quarter_car_by_its_impulse() {
    // 300 N m, ramped up over 0.5–0.7 s and down over 1.5–1.7 s (smooth: a jump
    // within one step would be an impulse): ∫T dt = 300 N m s. Momentum: the extra
    // speed is ∫T dt / ρ / (m + I_wheel/ρ²), ρ the loaded radius (Fx acts at the
    // contact point, r − m g/k_z below the centre), the tyre's slip and rolling
    // resistance cancelling against a run without throttle.
    let throttle = |t: f64| 300.0 * (smooth((t - 0.5) / 0.2) - smooth((t - 1.5) / 0.2));
    let on = drive(throttle);
    let off = drive(|_| 0.0);
    let (mass, inertia) = (300.0 + 25.0 + 15.0, 1.0);
    let rho = 0.3135 - mass * 9.81 / 2.1e5; // UNLOADED_RADIUS, VERTICAL_STIFFNESS
    let want = 300.0 / rho / (mass + inertia / (rho * rho));
    let got = on[STEPS - 1] - off[STEPS - 1];
    assert!(
        (got - want).abs() < 0.01 * want,
        "speed gain {got}, momentum {want}"
    );
    // It accelerates while the throttle is on, and not before.
    assert!((on[400] - off[400]).abs() < 1e-9, "before the throttle");
    assert!(
        on[1500] - on[700] > 0.6 * want,
        "accelerating: {} → {}",
        on[700],
        on[1500]
    );
    // A driving simulator's reruns are bitwise equal.
    assert_eq!(drive(throttle), on, "rerun");
}
