//! Splines end to end: a driver following a spline of time and a force law read from a
//! table file, through parse, lowering, differentiation, JIT and the integrator,
//! against closed forms.

use crate::common;

use common::{build_or_panic, channel, no_cache, simulate};
use fdc_driver::pipeline::{build, render, BuildError};

/// A directory of its own per test (tests run in parallel in one process).
fn scratch(tag: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("fdc-spline-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn a_driver_follows_a_zero_clamped_spline_of_time() {
    // f(t) = a (3t² − 2t³) has f'(0) = f'(1) = 0: the zero-clamped cubic through its
    // points is f itself on [0, 1], and constant a after (end slope 0).
    let (m, a) = (3.0, 0.2);
    let f = |t: f64| a * (3.0 * t * t - 2.0 * t * t * t);
    let f2 = |t: f64| if t < 1.0 { a * (6.0 - 12.0 * t) } else { 0.0 };
    let knots = [0.0, 0.2, 0.45, 0.7, 1.0];
    let list = |v: Vec<f64>| {
        v.iter()
            .map(|x| format!("{x:?}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let ys: Vec<f64> = knots.iter().map(|&t| f(t)).collect();
    let model = format!(
        "spline path = zcc([{}], [{}]);\n\
         body b: rigid_body {{ mass = {m}; inertia = [0.1, 0.1, 0.1]; }}\n\
         driver push: translation_driver(b) {{ at = [0, 0, 0]; axis = [1, 0, 0]; value = path(t); }}\n\
         simulate {{ end = 1.5; step = 1e-3; output_every = 0.01; }}\n",
        list(knots.to_vec()),
        list(ys)
    );
    let dir = scratch("driver");
    let path = dir.join("model.fd");
    std::fs::write(&path, model).unwrap();
    let built = build_or_panic(&path, &no_cache());
    let (sink, _) = simulate(built, |_| {});
    let _ = std::fs::remove_dir_all(&dir);
    let x = channel(&sink, "b.R.x");
    let lambda = channel(&sink, "push.lambda");
    for (i, &t) in sink.times.iter().enumerate() {
        assert!(
            (x[i] - f(t.min(1.0))).abs() < 1e-9,
            "t {t}: x {} vs {}",
            x[i],
            f(t)
        );
        // The multiplier is minus the driving force m x''. Up to the jump of x'' at
        // t = 1 it carries only the integrator's O(h²) error (after the jump HHT's
        // multiplier has a decaying transient, so it is not compared there).
        if t > 0.02 && t < 0.95 {
            assert!(
                (lambda[i] + m * f2(t)).abs() < 2e-3 * m * a * 6.0,
                "t {t}: λ {} vs {}",
                lambda[i],
                -m * f2(t)
            );
        }
    }
}

#[test]
fn a_force_law_from_a_table_file_gives_the_harmonic_oscillation() {
    // F(z) = −k z tabulated (a header line, time-like first column ignored): Akima
    // reproduces a straight line, so the body oscillates as z0 cos(√(k/m) t). The
    // amplitude stays inside the table's range.
    let (m, k, z0) = (2.0f64, 50.0f64, 0.1f64);
    let dir = scratch("table");
    let mut table = String::from("index z force\n");
    for i in 0..=8 {
        let z = -0.2 + 0.05 * i as f64;
        table.push_str(&format!("{i} {z:?} {:?}\n", -k * z));
    }
    std::fs::create_dir_all(dir.join("data")).unwrap();
    std::fs::write(dir.join("data/law.txt"), table).unwrap();
    let model = format!(
        "spline law = table(\"data/law.txt\", 1, 2, 1);\n\
         force table_spring(b: body) {{ apply force [0, 0, law(b.position.z)] on b; }}\n\
         body b: rigid_body {{ mass = {m}; inertia = [0.1, 0.1, 0.1]; position = [0, 0, {z0}]; }}\n\
         force s: table_spring(b);\n\
         simulate {{ end = 1; step = 5e-4; output_every = 0.01; }}\n"
    );
    let path = dir.join("model.fd");
    std::fs::write(&path, model).unwrap();
    let built = build_or_panic(&path, &no_cache());
    let _ = std::fs::remove_dir_all(&dir);
    let (sink, _) = simulate(built, |_| {});
    let z = channel(&sink, "b.R.z");
    let w = (k / m).sqrt();
    for (i, &t) in sink.times.iter().enumerate() {
        let want = z0 * (w * t).cos();
        // HHT phase error ~ ω³h²t/12 of the amplitude: well below 1e-5 here.
        assert!((z[i] - want).abs() < 1e-5, "t {t}: z {} vs {want}", z[i]);
    }
}

/// Builds `model` (with the table text `table` next to it, if any) and returns the
/// rendered diagnostics of the failure.
fn build_error(tag: &str, model: &str, table: Option<&str>) -> String {
    let dir = scratch(tag);
    if let Some(t) = table {
        std::fs::write(dir.join("t.txt"), t).unwrap();
    }
    let path = dir.join("model.fd");
    std::fs::write(&path, model).unwrap();
    let r = build(&path, &no_cache());
    let _ = std::fs::remove_dir_all(&dir);
    match r {
        Err(BuildError::Model { analysis, extra }) => render(&analysis, &extra),
        Err(BuildError::Backend(e) | BuildError::Usage(e)) => {
            panic!("expected a model error, got {e}")
        }
        Ok(_) => panic!("expected a model error"),
    }
}

#[test]
fn table_problems_are_diagnostics_with_codes_and_hints() {
    let use_it = "param p = s(0.5);\n";
    let missing = build_error(
        "missing",
        &format!("spline s = table(\"nope.txt\", 0, 1);\n{use_it}"),
        None,
    );
    assert!(
        missing.contains("E0910") && missing.contains("nope.txt"),
        "{missing}"
    );
    assert!(missing.contains("relative to the model file"), "{missing}");
    // The failed spline's uses do not add follow-on errors.
    assert!(!missing.contains("E0900"), "{missing}");

    let bad = build_error(
        "bad",
        &format!("spline s = table(\"t.txt\", 0, 1);\n{use_it}"),
        Some("0 1\n1 2\n2 x3\n"),
    );
    assert!(bad.contains("E0911") && bad.contains("line 3"), "{bad}");

    let col = build_error(
        "col",
        &format!("spline s = table(\"t.txt\", 0, 4);\n{use_it}"),
        Some("0 1\n1 2\n"),
    );
    assert!(
        col.contains("E0912") && col.contains("no column 4"),
        "{col}"
    );

    let few = build_error(
        "few",
        &format!("spline s = table(\"t.txt\", 0, 1, 1);\n{use_it}"),
        Some("x y\n0 1\n"),
    );
    assert!(few.contains("E0913"), "{few}");

    let order = build_error(
        "order",
        &format!("spline s = table(\"t.txt\", 0, 1);\n{use_it}"),
        Some("0 1\n1 2\n1 3\n"),
    );
    assert!(
        order.contains("E0914") && order.contains("line 3"),
        "{order}"
    );

    let inline = build_error(
        "inline",
        &format!("spline s = akima([0, 2, 1], [0, 1, 2]);\n{use_it}"),
        None,
    );
    assert!(inline.contains("E0914"), "{inline}");
}

#[test]
fn the_cam_example_passes_through_its_profile_points() {
    // 600 rpm = 3600 °/s: with outputs every 30° the samples land on the knots.
    let (sink, _) = simulate(common::build_example("spline_lift.fd"), |s| {
        s.step = 1.0 / 36000.0;
        s.output_every = 30.0 / 3600.0;
    });
    let profile = [0.0, 0.0, 0.0, 1.5, 5.5, 8.0, 8.0, 5.5, 1.5, 0.0, 0.0];
    let lift = channel(&sink, "lift");
    let mut compared = 0;
    for (i, &t) in sink.times.iter().enumerate() {
        let k = (t * 3600.0 / 30.0).round() as usize;
        if k < profile.len() && (t * 3600.0 - 30.0 * k as f64).abs() < 1e-6 {
            assert!(
                (lift[i] - 1e-3 * profile[k]).abs() < 1e-9,
                "{}°: lift {} vs {} mm",
                30 * k,
                lift[i],
                profile[k]
            );
            compared += 1;
        }
    }
    assert_eq!(compared, profile.len(), "samples on the knots");
}
