//! The full vehicle (`examples/vehicle.fd`): steady cornering against a linear
//! single-track model, a straight run, and the caller-driven loop of a driving
//! simulator (runtime input `steer`).

use crate::common;

use common::{build_or_panic, channel, example_path, no_cache, simulate};
use fdc_driver::pipeline::Built;
use fdc_driver::settings::{runtime_settings, Overrides};
use fdc_runtime::System;

fn vehicle(overrides: &[(&str, f64)]) -> Built {
    let mut opts = no_cache();
    opts.overrides = overrides.iter().map(|(n, v)| (n.to_string(), *v)).collect();
    build_or_panic(&example_path("vehicle.fd"), &opts)
}

/// Mean of a channel over the rows with t in [t0, t1].
fn mean(times: &[f64], x: &[f64], t0: f64, t1: f64) -> f64 {
    let picked: Vec<f64> = times
        .iter()
        .zip(x)
        .filter(|(t, _)| **t >= t0 && **t <= t1)
        .map(|(_, v)| *v)
        .collect();
    picked.iter().sum::<f64>() / picked.len() as f64
}

/// The cornering stiffness of the example's tyres (the `mf_tyre` defaults) at load
/// `fz`: Ky = ky Fz0 sin(2 atan(Fz/(q Fz0))).
fn ky(fz: f64) -> f64 {
    let (ky, q, fz0) = (20.0, 2.0, 4000.0);
    ky * fz0 * (2.0 * (fz / (q * fz0)).atan()).sin()
}

#[test]
fn steady_cornering_matches_a_linear_single_track_model() {
    // A small step steer on a flat road at 20 m/s (lateral acceleration ≈ 1.5 m/s²,
    // slip angles below 1°: the linear range). Averages over the last 2 s.
    let b = vehicle(&[("wave", 0.0), ("rack_step", -0.002)]);
    let (s, _) = simulate(b, |s| s.end = 7.0);
    let t = &s.times;
    let m = |n: &str| mean(t, &channel(&s, n), 5.0, 7.0);
    let wheels = ["fl", "fr", "rl", "rr"];
    let fz: Vec<f64> = wheels.iter().map(|w| m(&format!("tyre_{w}.fz"))).collect();
    let gamma: Vec<f64> = wheels
        .iter()
        .map(|w| m(&format!("tyre_{w}.camber")))
        .collect();
    let (r, v) = (m("yaw_rate"), m("speed"));
    let delta_f = 0.5 * (m("steer_fl") + m("steer_fr"));
    let delta_r = 0.5 * (m("steer_rl") + m("steer_rr"));
    // Static axle loads (before the steer) give the mass and its position.
    let fz_static: Vec<f64> = wheels
        .iter()
        .map(|w| mean(t, &channel(&s, &format!("tyre_{w}.fz")), 0.7, 0.95))
        .collect();
    let (front, rear) = (fz_static[0] + fz_static[1], fz_static[2] + fz_static[3]);
    let wheelbase = 2.6;
    let mass = (front + rear) / 9.81;
    let lf = wheelbase * rear / (front + rear);
    let lr = wheelbase - lf;
    // Axle stiffness from each tyre's load while cornering (load transfer included),
    // scaled by v/√(v² + v_s²) of the slip regularization; camber thrust (camber_shift
    // 0.1, an equivalent slip angle) as an extra steer angle of the axle.
    let reg = v / (v * v + 0.25f64).sqrt();
    let k: Vec<f64> = fz.iter().map(|&f| ky(f) * reg).collect();
    let (cf, cr) = (k[0] + k[1], k[2] + k[3]);
    let ef = 0.1 * (k[0] * gamma[0] + k[1] * gamma[1]) / cf;
    let er = 0.1 * (k[2] * gamma[2] + k[3] * gamma[3]) / cr;
    // Steady state of the single-track model with the pneumatic trail t₀ in the yaw
    // moment: unknowns β (side slip) and r.
    //   Ff = cf (δf' − β − lf r/v), Fr = cr (δr' − β + lr r/v)
    //   m v r = Ff + Fr,  (lf − t₀) Ff − (lr + t₀) Fr = 0.
    let (df, dr, tr) = (delta_f + ef, delta_r + er, 0.03);
    let (a, bb) = (lf - tr, lr + tr);
    // Rows: [β, r] coefficients and right-hand side.
    let row1 = [
        cf + cr,
        mass * v + (cf * lf - cr * lr) / v,
        cf * df + cr * dr,
    ];
    let row2 = [
        -a * cf + bb * cr,
        -(a * cf * lf + bb * cr * lr) / v,
        -a * cf * df + bb * cr * dr,
    ];
    let det = row1[0] * row2[1] - row1[1] * row2[0];
    let r_model = (row1[0] * row2[2] - row2[0] * row1[2]) / det;
    let gain = r / delta_f;
    let gain_model = r_model / delta_f;
    println!(
        "yaw-rate gain {gain:.4} 1/s vs single-track {gain_model:.4} (v {v:.2}, δf {delta_f:.5}, \
         r {r:.5}, ay {:.3}, Cf {cf:.0}, Cr {cr:.0}, lf {lf:.3})",
        v * r
    );
    assert!(
        delta_f.abs() > 5e-3,
        "the step steer turned the wheels {delta_f}"
    );
    assert!(
        (gain - gain_model).abs() < 0.05 * gain_model.abs(),
        "yaw-rate gain {gain} vs linear single-track {gain_model}"
    );
    // Steady: the yaw rate no longer changes.
    let late = mean(t, &channel(&s, "yaw_rate"), 6.5, 7.0);
    assert!(
        (late - r).abs() < 0.01 * r.abs(),
        "not steady: {late} vs {r}"
    );
}

#[test]
fn a_straight_run_stays_in_its_lane() {
    // Over the undulating road with no steer: it neither drifts nor yaws, and the
    // speed hold keeps 20 m/s against rolling resistance.
    let b = vehicle(&[("rack_step", 0.0)]);
    let (s, _) = simulate(b, |s| s.end = 6.0);
    let (y, r, v) = (
        channel(&s, "lateral"),
        channel(&s, "yaw_rate"),
        channel(&s, "speed"),
    );
    let fz = channel(&s, "tyre_fl.fz");
    for i in 0..s.times.len() {
        assert!(y[i].abs() < 0.01, "t {}: lateral {}", s.times[i], y[i]);
        assert!(r[i].abs() < 1e-4, "t {}: yaw rate {}", s.times[i], r[i]);
        assert!(
            fz[i] > 1000.0,
            "t {}: front tyre load {}",
            s.times[i],
            fz[i]
        );
    }
    let last = *v.last().unwrap();
    assert!((last - 20.0).abs() < 0.2, "speed {last}");
    // The road moves the car: the front load varies with the undulation.
    let (lo, hi) = fz[100..]
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), &x| (a.min(x), b.max(x)));
    assert!(hi - lo > 20.0, "front load range {lo}..{hi}");
}

#[test]
fn a_caller_driven_loop_steers_the_vehicle_through_its_input() {
    // A driving simulator's loop: fixed(2) Newton, one step per call, the rack offset
    // `steer` set between steps as a driver would turn the wheel: up to 2 mm over
    // 0.5–0.7 s, held, back to 0 over 1.3–1.5 s (smooth steps; a jump of the rack
    // within one step would be an impulse). The car turns while steered (right:
    // positive rack travel) and straightens out after.
    let smooth = |x: f64| {
        let s = x.clamp(0.0, 1.0);
        s * s * (3.0 - 2.0 * s)
    };
    let b = vehicle(&[("rack_step", 0.0), ("wave", 0.0)]);
    let over = Overrides {
        newton: Some(fdc_lower::NewtonSetting::Fixed(2)),
        ..Default::default()
    };
    let settings = runtime_settings(&b.settings, &over).unwrap();
    let mut sys = System::new(b.model).unwrap();
    let steer = sys.input_index("steer").unwrap();
    let names = sys.channel_names();
    let yaw = names.iter().position(|n| n == "yaw_rate").unwrap();
    let travel = names.iter().position(|n| n == "steering.travel").unwrap();
    sys.initialize(&settings).unwrap();
    let (mut peak, mut last, mut max_travel) = (0.0f64, 0.0, 0.0f64);
    for k in 0..4000 {
        let t = k as f64 * 1e-3;
        let rack = 0.002 * (smooth((t - 0.5) / 0.2) - smooth((t - 1.3) / 0.2));
        sys.set_input(steer, rack);
        let report = sys.step(&settings).unwrap();
        assert_eq!(report.substeps, 1, "one step per call at t {t}");
        let out = sys.output_values();
        peak = peak.min(out[yaw]);
        max_travel = max_travel.max(out[travel]);
        last = out[yaw];
    }
    assert!(
        (max_travel - 0.002).abs() < 1e-6,
        "rack travel {max_travel}"
    );
    assert!(
        peak < -0.02,
        "steering right turns right: peak yaw rate {peak}"
    );
    assert!(
        last.abs() < 0.05 * peak.abs(),
        "straightens out: {last} vs {peak}"
    );
}
