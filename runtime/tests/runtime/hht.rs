//! HHT against closed forms, with hand-written element types (see `common`).

use crate::common;

use common::*;
use fdc_runtime::{Form, LinearSolverKind, MemorySink, Newton, Settings, System};
use std::f64::consts::PI;

fn run(model: fdc_runtime::Model, s: &Settings) -> (MemorySink, fdc_runtime::RunStats) {
    let mut sys = System::new(model).expect("model is valid");
    let mut sink = MemorySink::default();
    let stats = sys.run(s, &mut sink).expect("run succeeds");
    (sink, stats)
}

fn fixed(step: f64, end: f64, form: Form) -> Settings {
    Settings {
        end,
        step,
        output_every: 0.0,
        alpha: -0.1,
        form,
        ..Settings::default()
    }
}

/// Largest deviation of x(t) from A cos(ωt) for the undamped spring-mass.
fn spring_error(h: f64, form: Form) -> f64 {
    let (a, w) = (0.1, 2.0 * PI);
    let (sink, _) = run(spring_mass(1.0, w * w, 0.0, a, 0.0), &fixed(h, 2.0, form));
    let x = sink.channel("mass.x").unwrap();
    sink.times
        .iter()
        .zip(&x)
        .map(|(t, x)| (x - a * (w * t).cos()).abs())
        .fold(0.0, f64::max)
}

#[test]
fn spring_mass_second_order_both_forms() {
    for form in [Form::ArnoldBruls, Form::Negrut] {
        let e: Vec<f64> = [0.01, 0.005, 0.0025]
            .iter()
            .map(|&h| spring_error(h, form))
            .collect();
        let p1 = (e[0] / e[1]).log2();
        let p2 = (e[1] / e[2]).log2();
        eprintln!("spring-mass {form:?}: errors {e:?}, orders {p1:.3} {p2:.3}");
        assert!(e[2] < 2e-4, "{form:?}: error {} at h = 2.5 ms", e[2]);
        assert!(
            (1.8..2.2).contains(&p1) && (1.8..2.2).contains(&p2),
            "{form:?}: orders {p1} {p2}"
        );
    }
}

#[test]
fn damped_spring_mass_against_closed_form() {
    // m = 1, k = ω0², d = 2ζω0: x = A e^{-ζω0 t}(cos ωd t + ζω0/ωd sin ωd t).
    let (w0, zeta, a): (f64, f64, f64) = (2.0 * PI, 0.1, 0.1);
    let wd = w0 * (1.0 - zeta * zeta).sqrt();
    let (sink, _) = run(
        spring_mass(1.0, w0 * w0, 2.0 * zeta * w0, a, 0.0),
        &fixed(1e-3, 2.0, Form::ArnoldBruls),
    );
    let x = sink.channel("mass.x").unwrap();
    let err = sink
        .times
        .iter()
        .zip(&x)
        .map(|(&t, x)| {
            let exact =
                a * (-zeta * w0 * t).exp() * ((wd * t).cos() + zeta * w0 / wd * (wd * t).sin());
            (x - exact).abs()
        })
        .fold(0.0, f64::max);
    assert!(err < 5e-6, "damped spring-mass error {err}");
}

/// Complete elliptic integral of the first kind by the arithmetic-geometric mean.
fn ellip_k(k: f64) -> f64 {
    let (mut a, mut b) = (1.0f64, (1.0 - k * k).sqrt());
    while (a - b).abs() > 1e-15 * a {
        let an = 0.5 * (a + b);
        b = (a * b).sqrt();
        a = an;
    }
    PI / (2.0 * a)
}

/// Period of the pendulum from two successive downward zero crossings of x.
fn pendulum_period(h: f64, form: Form, linear: LinearSolverKind) -> (f64, MemorySink) {
    let mut s = fixed(h, 3.2, form);
    s.linear = linear;
    let (sink, _) = run(pendulum(1.0, [1.0, 0.0], 9.81), &s);
    let x = sink.channel("bob.x").unwrap();
    let mut crossings = vec![];
    for i in 1..x.len() {
        if x[i - 1] > 0.0 && x[i] <= 0.0 {
            let (t0, t1) = (sink.times[i - 1], sink.times[i]);
            crossings.push(t0 + (t1 - t0) * x[i - 1] / (x[i - 1] - x[i]));
        }
    }
    assert!(
        crossings.len() >= 2,
        "pendulum must cross twice, got {crossings:?}"
    );
    (crossings[1] - crossings[0], sink)
}

#[test]
fn pendulum_period_against_elliptic_integral_both_forms() {
    let (l, g) = (1.0f64, 9.81f64);
    let exact = 4.0 * (l / g).sqrt() * ellip_k((PI / 4.0).sin());
    for form in [Form::ArnoldBruls, Form::Negrut] {
        let e: Vec<f64> = [4e-3, 2e-3, 1e-3]
            .iter()
            .map(|&h| (pendulum_period(h, form, LinearSolverKind::Sparse).0 - exact).abs())
            .collect();
        let p = (e[1] / e[2]).log2();
        eprintln!("pendulum {form:?}: period {exact}, errors {e:?}, order {p:.3}");
        assert!(e[2] < 1e-4, "{form:?}: period error {}", e[2]);
        assert!(p > 1.7, "{form:?}: order {p}");
    }
}

#[test]
fn pendulum_keeps_its_length_and_multiplier_is_the_rod_force() {
    let (_, sink) = pendulum_period(1e-3, Form::ArnoldBruls, LinearSolverKind::Sparse);
    let x = sink.channel("bob.x").unwrap();
    let y = sink.channel("bob.y").unwrap();
    let vx = sink.channel("bob.vx").unwrap();
    let vy = sink.channel("bob.vy").unwrap();
    let lam = sink.channel("rod.dist.lambda").unwrap();
    for i in 0..x.len() {
        let r = (x[i] * x[i] + y[i] * y[i]).sqrt();
        assert!((r - 1.0).abs() < 1e-12, "length {r} at row {i}");
        // Radial balance: λ L² = m (|v|² − g·x) with the force −λ x on the bob.
        let expected = vx[i] * vx[i] + vy[i] * vy[i] - 9.81 * y[i];
        assert!(
            (lam[i] - expected).abs() < 1e-2 * (1.0 + expected.abs()),
            "lambda {} vs {expected}",
            lam[i]
        );
    }
    // At release (at rest, rod horizontal) the rod carries no force.
    assert!(lam[0].abs() < 1e-12);
}

#[test]
fn sparse_and_dense_solvers_give_the_same_trajectory() {
    // A chain is chaotic: round-off differences grow, so compare over half a second.
    let mut s = fixed(1e-3, 0.5, Form::ArnoldBruls);
    s.output_every = 0.01;
    let (a, _) = run(chain(4), &s);
    s.linear = LinearSolverKind::Dense;
    let (b, _) = run(chain(4), &s);
    assert_eq!(a.names, b.names);
    assert_eq!(a.times, b.times);
    // Multipliers are converged only as far as the velocity criterion asks, so
    // they are compared more loosely than positions and velocities.
    let (mut states, mut multipliers) = (0.0f64, 0.0f64);
    for (ra, rb) in a.rows.iter().zip(&b.rows) {
        for ((x, y), name) in ra.iter().zip(rb).zip(&a.names) {
            let d = (x - y).abs() / (1.0 + x.abs());
            if name.ends_with("lambda") {
                multipliers = multipliers.max(d);
            } else {
                states = states.max(d);
            }
        }
    }
    eprintln!("sparse against dense: states {states:.3e}, multipliers {multipliers:.3e}");
    assert!(states < 1e-10, "sparse and dense states differ by {states}");
    assert!(
        multipliers < 1e-7,
        "sparse and dense multipliers differ by {multipliers}"
    );
    // The chain moved: a real comparison, not two resting states.
    let y3 = a.channel("m3.y").unwrap();
    assert!(y3.last().unwrap() < &-0.3, "{:?}", y3.last());
}

#[test]
fn torque_free_rigid_body_conserves_momentum_and_energy() {
    let j = [2.0, 3.0, 4.5];
    let th = [0.9, 0.1, -0.3, 0.2];
    let w0 = [0.3, 1.0, 2.0];
    let mut s = fixed(1e-3, 10.0, Form::ArnoldBruls);
    s.output_every = 0.01;
    s.alpha = -0.05;
    // A translational velocity too: linear momentum m v is constant, R = v t.
    let mut model = free_body(2.0, j, th, w0);
    model.instances[0].params[11..14].copy_from_slice(&[0.5, -1.0, 0.25]);
    let mut sys = System::new(model).unwrap();
    let mut sink = MemorySink::default();
    let stats = sys.run(&s, &mut sink).unwrap();
    assert_eq!(stats.rejected, 0);
    for (i, v) in [0.5, -1.0, 0.25].iter().enumerate() {
        assert!((sys.v()[i] - v).abs() < 1e-12, "linear velocity {i}");
        assert!(
            (sys.q()[i] - v * 10.0).abs() < 1e-9,
            "position {i}: {}",
            sys.q()[i]
        );
    }
    let l: Vec<Vec<f64>> = ["body.Lx", "body.Ly", "body.Lz"]
        .iter()
        .map(|n| sink.channel(n).unwrap())
        .collect();
    let t = sink.channel("body.T").unwrap();
    let l0 = [l[0][0], l[1][0], l[2][0]];
    let lnorm = (l0[0] * l0[0] + l0[1] * l0[1] + l0[2] * l0[2]).sqrt();
    // L at t = 0 is J_global ω0: check the initial-velocity transform too.
    let a = rot(&{
        let n = th.iter().map(|x| x * x).sum::<f64>().sqrt();
        [th[0] / n, th[1] / n, th[2] / n, th[3] / n]
    });
    let wb = mat_t_vec(&a, &w0);
    let l_ref = matvec(&a, &[j[0] * wb[0], j[1] * wb[1], j[2] * wb[2]]);
    for i in 0..3 {
        assert!((l0[i] - l_ref[i]).abs() < 1e-12);
    }
    let mut dl = 0.0f64;
    let mut de = 0.0f64;
    for k in 0..t.len() {
        for i in 0..3 {
            dl = dl.max((l[i][k] - l0[i]).abs() / lnorm);
        }
        de = de.max((t[k] - t[0]).abs() / t[0]);
    }
    eprintln!("free body: relative drift of L {dl:.3e}, of energy {de:.3e}");
    assert!(dl < 1e-5, "angular momentum drift {dl}");
    assert!(de < 1e-5, "energy drift {de}");
}

#[test]
fn symmetric_body_precesses_at_the_closed_form_rate() {
    // J1 = J2: in the body frame (ω1, ω2) turns at Ω = (J3 − J1)/J1 ω3 with ω3 constant;
    // in space the symmetry axis turns about L at |L|/J1.
    let (j1, j3) = (2.0, 3.0);
    let w0 = [0.4, 0.0, 3.0]; // global = body at θ = identity
    let mut s = fixed(1e-3, 4.0, Form::ArnoldBruls);
    s.output_every = 0.01;
    let (sink, _) = run(free_body(1.0, [j1, j1, j3], [1.0, 0.0, 0.0, 0.0], w0), &s);
    let wx = sink.channel("body.wx").unwrap();
    let wy = sink.channel("body.wy").unwrap();
    let wz = sink.channel("body.wz").unwrap();
    let omega = (j3 - j1) / j1 * w0[2];
    let mut err = 0.0f64;
    for (k, &t) in sink.times.iter().enumerate() {
        let (ex, ey) = (w0[0] * (omega * t).cos(), w0[0] * (omega * t).sin());
        err = err
            .max((wx[k] - ex).abs())
            .max((wy[k] - ey).abs())
            .max((wz[k] - w0[2]).abs());
    }
    eprintln!("body-frame precession error {err:.3e}");
    assert!(err < 1e-4, "body-frame angular velocity error {err}");

    // Space frame: L = (j1 w0x, 0, j3 w0z); the axis turns about L at |L|/J1.
    let l = [j1 * w0[0], 0.0, j3 * w0[2]];
    let ln = (l[0] * l[0] + l[2] * l[2]).sqrt();
    let e = [l[0] / ln, 0.0, l[2] / ln];
    let ax: Vec<Vec<f64>> = ["body.ax", "body.ay", "body.az"]
        .iter()
        .map(|n| sink.channel(n).unwrap())
        .collect();
    let rate = ln / j1;
    // Axis at t: Rodrigues rotation of e3 about e by rate·t.
    let mut aerr = 0.0f64;
    for (k, &t) in sink.times.iter().enumerate() {
        let a0 = [0.0, 0.0, 1.0];
        let (c, sn) = ((rate * t).cos(), (rate * t).sin());
        let ex = cross(&e, &a0);
        let dot = e[2];
        let rot_a: Vec<f64> = (0..3)
            .map(|i| a0[i] * c + ex[i] * sn + e[i] * dot * (1.0 - c))
            .collect();
        for i in 0..3 {
            aerr = aerr.max((ax[i][k] - rot_a[i]).abs());
        }
    }
    eprintln!("space-frame precession error {aerr:.3e}");
    assert!(aerr < 1e-4, "symmetry axis error {aerr}");
}

#[test]
fn adaptive_steps_hit_output_times_and_meet_the_tolerance_near_the_best_fixed_step() {
    let s = Settings {
        end: 3.2,
        step: 0.2, // far too large: the first attempts are rejected and halved
        output_every: 0.05,
        adaptive: Some(1e-6),
        ..Settings::default()
    };
    let mut sys = System::new(pendulum(1.0, [1.0, 0.0], 9.81)).unwrap();
    let mut sink = MemorySink::default();
    let stats = sys.run(&s, &mut sink).unwrap();
    assert!(stats.rejected > 0, "a 0.2 s first step must be rejected");
    // Every output time is hit exactly, on the grid k·0.05.
    assert_eq!(sink.times.len(), 65);
    for (k, &t) in sink.times.iter().enumerate() {
        assert_eq!(t, k as f64 * 0.05, "row {k}");
    }
    // Position error of the adaptive run against a reference with a tiny fixed step.
    let reference = {
        let mut r = fixed(1e-4, 3.2, Form::ArnoldBruls);
        r.output_every = 0.05;
        run(pendulum(1.0, [1.0, 0.0], 9.81), &r).0
    };
    let (adaptive, astats) = run(pendulum(1.0, [1.0, 0.0], 9.81), &s);
    let err = |a: &MemorySink| {
        let (xa, xr) = (
            a.channel("bob.x").unwrap(),
            reference.channel("bob.x").unwrap(),
        );
        xa.iter()
            .zip(&xr)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max)
    };
    let e_adapt = err(&adaptive);
    // The fixed step with the same accuracy needs more steps.
    let mut h = 0.05;
    let (e_fixed, fixed_steps) = loop {
        let mut f = fixed(h, 3.2, Form::ArnoldBruls);
        f.output_every = 0.05;
        let (sink, st) = run(pendulum(1.0, [1.0, 0.0], 9.81), &f);
        let e = err(&sink);
        if e <= e_adapt || h < 1e-4 {
            break (e, st.steps);
        }
        h /= 1.25;
    };
    eprintln!(
        "adaptive: {} steps ({} rejected), error {e_adapt:.3e}; fixed: {fixed_steps} steps for {e_fixed:.3e}",
        astats.steps, astats.rejected
    );
    assert!(e_adapt < 1e-3, "adaptive error {e_adapt}");
    // The swing is nearly uniform, so the best fixed step is close to optimal there:
    // measured 3,951 adaptive steps (error 3.74e-5) against 3,584 fixed (3.67e-5) — the
    // adaptive run stays within 1.5× of it (issue 13 asks for ≤ 1×: not met yet).
    assert!(
        (astats.steps as f64) < 1.5 * fixed_steps as f64,
        "adaptive {} vs fixed {fixed_steps}",
        astats.steps
    );
}

#[test]
fn fixed_corrections_stay_close_to_converged_newton() {
    // Real-time mode: 2 corrections per step, no error estimate.
    let mut conv = fixed(1e-3, 1.0, Form::ArnoldBruls);
    conv.output_every = 0.01;
    let mut rt = conv.clone();
    rt.newton = Newton::Fixed(2);
    rt.timing = true;
    let (a, sa) = run(chain(3), &conv);
    let (b, sb) = run(chain(3), &rt);
    assert_eq!(sb.newton_iterations, 2 * sb.steps);
    assert!(sa.newton_iterations >= sb.newton_iterations);
    let timing = sb.timing.expect("timing was requested");
    assert_eq!(timing.steps, sb.steps);
    assert!(timing.min <= timing.median && timing.median <= timing.p99 && timing.p99 <= timing.max);
    let mut worst = 0.0f64;
    for (ra, rb) in a.rows.iter().zip(&b.rows) {
        for (x, y) in ra.iter().zip(rb) {
            worst = worst.max((x - y).abs() / (1.0 + x.abs()));
        }
    }
    eprintln!(
        "fixed(2) against converged: {worst:.3e}; largest correction {:.3e}",
        sb.max_correction
    );
    assert!(worst < 1e-6, "fixed(2) deviates by {worst}");
}

#[test]
fn step_by_step_loop_with_an_input() {
    // A caller-driven loop with a runtime input: a constant force F on the spring-mass
    // moves the centre of oscillation to F/k.
    let s = fixed(1e-3, 0.5, Form::ArnoldBruls);
    let k = 4.0 * PI * PI;
    let mut model = spring_mass(1.0, k, 0.0, 0.1, 0.0);
    model.inputs.push(fdc_runtime::RuntimeInput {
        name: "force".into(),
        targets: vec![(0, 3)], // the mass's "gravity" slot: force m·g
    });
    let mut sys = System::new(model).unwrap();
    assert_eq!(sys.input_index("nope"), None);
    let i = sys.input_index("force").unwrap();
    sys.set_input(i, 0.05 * k);
    assert_eq!(sys.params(0).unwrap()[3], 0.05 * k);
    sys.initialize(&s).unwrap();
    for _ in 0..500 {
        let r = sys.step(&s).unwrap();
        assert_eq!(r.substeps, 1);
    }
    assert!((sys.time() - 0.5).abs() < 1e-12);
    let exact = 0.05 + 0.05 * PI.cos();
    assert!(
        (sys.q()[0] - exact).abs() < 1e-4,
        "x = {} vs {exact}",
        sys.q()[0]
    );
}

#[test]
fn post_updates_element_state_after_accepted_steps_only() {
    let mut model = spring_mass(1.0, 4.0 * PI * PI, 0.0, 0.1, 0.0);
    model.table.types.push(tracker());
    model.instances.push(inst(
        "track",
        2,
        vec![0.0, f64::NEG_INFINITY],
        &[0],
        &[0],
        &[],
    ));
    let s = Settings {
        end: 1.0,
        step: 0.2, // rejected and halved at first
        output_every: 0.1,
        adaptive: Some(1e-7),
        ..Settings::default()
    };
    let mut sys = System::new(model).unwrap();
    assert_eq!(
        sys.channel_names(),
        vec!["mass.x", "mass.vx", "track.count", "track.max"]
    );
    let mut sink = MemorySink::default();
    let stats = sys.run(&s, &mut sink).unwrap();
    assert!(stats.rejected > 0);
    let count = sink.channel("track.count").unwrap();
    assert_eq!(*count.last().unwrap(), stats.steps as f64);
    assert_eq!(sys.params(2).unwrap()[0], stats.steps as f64);
    // The largest position after the start: the amplitude 0.1, reached again at t = 1.
    let max = sink.channel("track.max").unwrap();
    assert!((max.last().unwrap() - 0.1).abs() < 1e-4, "{max:?}");
    // Until t = 0.5 every accepted position lies below the start 0.1 (which is not a
    // step, so not tracked); the first step moved it very little.
    assert!(max[5] < 0.1 && max[5] > 0.09, "{}", max[5]);
    assert_eq!(max[0], f64::NEG_INFINITY);
}

#[test]
fn legacy_newton_criterion_agrees_with_the_velocity_criterion() {
    // The legacy profile: Negrut form, Eq. 40 stopping rule, legacy weights, adaptive.
    let base = Settings {
        end: 2.0,
        step: 1e-3,
        output_every: 0.05,
        form: Form::Negrut,
        ..Settings::default()
    };
    let legacy = Settings {
        newton: Newton::Legacy,
        weights: fdc_runtime::ErrorWeights::Legacy,
        ..base.clone()
    };
    let (a, sa) = run(pendulum(1.0, [1.0, 0.0], 9.81), &base);
    let (b, sb) = run(pendulum(1.0, [1.0, 0.0], 9.81), &legacy);
    let (xa, xb) = (a.channel("bob.x").unwrap(), b.channel("bob.x").unwrap());
    let diff = xa
        .iter()
        .zip(&xb)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    eprintln!(
        "legacy Newton: {:.2} iterations/step (velocity {:.2}), difference {diff:.3e}",
        sb.newton_iterations as f64 / sb.steps as f64,
        sa.newton_iterations as f64 / sa.steps as f64
    );
    // Eq. 40 stops when the Newton error is far below the local error of the step
    // (ε = 1e-6 here): far smaller than the discretization error of ~1e-5.
    assert!(diff < 1e-6, "{diff}");
    assert!(
        sb.newton_iterations >= 2 * sb.steps,
        "at least two corrections per step"
    );
    // The adaptive legacy profile runs too.
    let (c, sc) = run(
        pendulum(1.0, [1.0, 0.0], 9.81),
        &Settings {
            adaptive: Some(1e-5),
            ..legacy
        },
    );
    let xc = c.channel("bob.x").unwrap();
    let diff = xa
        .iter()
        .zip(&xc)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    eprintln!("adaptive legacy: {} steps, difference {diff:.3e}", sc.steps);
    assert!(diff < 1e-2, "{diff}");
}

#[test]
fn driven_mass_follows_its_prescribed_motion() {
    // x = a sin ωt prescribed on a mass at rest at x = 0: the velocity projection must
    // start it at aω (Φ_t), the accelerations use −Φ_tt, and λ is the driving force
    // −m ẍ = m a ω² sin ωt.
    let (a, w, m) = (0.2f64, 3.0f64, 2.0f64);
    let model = fdc_runtime::Model {
        table: table(vec![point_mass::<1>(), driver1()]),
        instances: vec![
            inst(
                "mass",
                0,
                pm_params(m, &[0.0], &[0.0], &[0.0]),
                &[0],
                &[0],
                &[],
            ),
            inst("drive", 1, vec![a, w], &[0], &[0], &[0]),
        ],
        nq: 1,
        nv: 1,
        nl: 1,
        inputs: vec![],
        roads: Default::default(),
    };
    for form in [Form::ArnoldBruls, Form::Negrut] {
        let (sink, _) = run(model.clone(), &fixed(1e-3, 3.0, form));
        let x = sink.channel("mass.x").unwrap();
        let v = sink.channel("mass.vx").unwrap();
        let lam = sink.channel("drive.drive.lambda").unwrap();
        assert!((v[0] - a * w).abs() < 1e-12, "projected v0 = {}", v[0]);
        assert!((lam[0]).abs() < 1e-12);
        let (mut ex, mut ev, mut el) = (0.0f64, 0.0f64, 0.0f64);
        for (k, &t) in sink.times.iter().enumerate() {
            ex = ex.max((x[k] - a * (w * t).sin()).abs());
            ev = ev.max((v[k] - a * w * (w * t).cos()).abs());
            // Index-3 HHT starts the multipliers with an oscillating error of O(h)
            // that the numerical damping removes within tens of steps (order
            // reduction at the start, Arnold and Brüls): compare after it.
            if t >= 0.1 {
                el = el.max((lam[k] - m * a * w * w * (w * t).sin()).abs());
            }
        }
        eprintln!(
            "driver {form:?}: position {ex:.2e}, velocity {ev:.2e}, force after 0.1 s {el:.2e}"
        );
        assert!(ex < 1e-12, "{form:?}: position error {ex}");
        assert!(ev < 1e-5, "{form:?}: velocity error {ev}");
        assert!(el < 1e-5, "{form:?}: force error {el}");
    }
}

#[test]
fn failed_newton_halves_the_fixed_step_and_recovers() {
    // h = 0.4 s on the pendulum: Newton does not converge from the predictor, so the
    // step is halved (no error control) until it does, and grows back afterwards.
    let s = Settings {
        end: 2.0,
        step: 0.4,
        output_every: 0.4,
        max_newton_iterations: 6,
        ..Settings::default()
    };
    let mut sys = System::new(pendulum(1.0, [1.0, 0.0], 9.81)).unwrap();
    let mut sink = MemorySink::default();
    let stats = sys.run(&s, &mut sink).unwrap();
    eprintln!("{} steps, {} rejected", stats.steps, stats.rejected);
    assert!(stats.rejected > 0);
    let grid: Vec<f64> = (0..6).map(|k| k as f64 * 0.4).collect();
    assert_eq!(sink.times, grid);
    let (x, y) = (sys.q()[0], sys.q()[1]);
    assert!(((x * x + y * y).sqrt() - 1.0).abs() < 1e-10);
}

#[test]
fn iter_noqv_converges_to_the_same_steps_more_slowly() {
    let model = || free_body(1.0, [2.0, 3.0, 4.5], [0.9, 0.1, -0.3, 0.2], [0.3, 1.0, 2.0]);
    let exact = fixed(1e-2, 2.0, Form::ArnoldBruls);
    let noqv = Settings {
        iter_noqv: true,
        ..exact.clone()
    };
    let (a, sa) = run(model(), &exact);
    let (b, sb) = run(model(), &noqv);
    let (wa, wb) = (a.channel("body.wx").unwrap(), b.channel("body.wx").unwrap());
    let diff = wa
        .iter()
        .zip(&wb)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max);
    eprintln!(
        "iterations per step: exact matrix {:.2}, without gyroscopic derivatives {:.2}; difference {diff:.2e}",
        sa.newton_iterations as f64 / sa.steps as f64,
        sb.newton_iterations as f64 / sb.steps as f64
    );
    // Both stop at the same velocity tolerance: the same solution to about that level.
    assert!(diff < 1e-8, "{diff}");
    assert!(sb.newton_iterations > sa.newton_iterations);
}

#[test]
fn rigid_double_pendulum_on_the_lie_group_conserves_energy() {
    // Two slender rigid bodies and two spherical joints (the joint's Iter includes the
    // tangent operator T(Δ)); exact Newton matrices converge in about two iterations.
    let mut s = fixed(1e-3, 2.0, Form::ArnoldBruls);
    s.output_every = 0.01;
    s.alpha = -0.02;
    // The iteration count checks the Jacobian: a new matrix every step (a kept one
    // converges linearly whatever the Jacobian).
    s.matrix_steps = 1;
    let mut sys = System::new(rigid_chain(2)).unwrap();
    let mut sink = MemorySink::default();
    let stats = sys.run(&s, &mut sink).unwrap();
    let iters = stats.newton_iterations as f64 / stats.steps as f64;
    // Energy T + V from the outputs and the stored coordinates at the end.
    let t_end: f64 = ["b0.T", "b1.T"]
        .iter()
        .map(|n| *sink.channel(n).unwrap().last().unwrap())
        .sum();
    let v_end = 9.81 * (sys.q()[2] + sys.q()[9]);
    let e_end = t_end + v_end; // E(0) = 0: at rest on the x axis
                               // The joints hold: the end of body 0 is at the origin, body 1 starts at its tip.
    let q = sys.q();
    let a0 = rot(&q[3..7]);
    let a1 = rot(&q[10..14]);
    let p0 = matvec(&a0, &[-0.5, 0.0, 0.0]);
    let tip0 = matvec(&a0, &[0.5, 0.0, 0.0]);
    let base1 = matvec(&a1, &[-0.5, 0.0, 0.0]);
    let mut gap = 0.0f64;
    for i in 0..3 {
        gap = gap.max((q[i] + p0[i]).abs());
        gap = gap.max((q[i] + tip0[i] - q[7 + i] - base1[i]).abs());
    }
    eprintln!(
        "rigid double pendulum: {iters:.2} iterations/step, energy {e_end:.3e} J (of {:.2} J exchanged), joint gap {gap:.1e}",
        t_end
    );
    assert!(gap < 1e-10, "joint gap {gap}");
    assert!(
        iters < 3.0,
        "{iters} Newton iterations per step: Jacobian wrong?"
    );
    assert!(e_end.abs() < 1e-3 * t_end.max(1.0), "energy drift {e_end}");
    assert!(sys.q()[9] < -0.5, "the chain fell: z = {}", sys.q()[9]);
}
