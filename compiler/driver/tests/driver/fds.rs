//! Legacy `.fds` models (issue 16) through the whole pipeline: imported in memory and
//! run with the legacy profile, checked against closed forms and against hand-written
//! fd models; the written fd file run with `--profile legacy` equals the direct run;
//! result channels carry the `.fds` names.

use crate::common;

use common::{channel, no_cache};
use fdc_driver::fds::{import_file, ImportError};
use fdc_driver::pipeline::{build_from, render, BuildError, Built, ModelSource};
use fdc_driver::profile::Profile;
use fdc_driver::settings::{runtime_settings, Overrides};
use fdc_runtime::{MemorySink, System};
use std::path::{Path, PathBuf};

fn model(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../fds/tests/models")
        .join(name)
}

fn build_or_panic(src: ModelSource) -> Built {
    match build_from(src, &no_cache()) {
        Ok(b) => b,
        Err(BuildError::Model { analysis, extra }) => panic!("{}", render(&analysis, &extra)),
        Err(BuildError::Backend(e) | BuildError::Usage(e)) => panic!("{e}"),
    }
}

/// Runs a built model with its settings and a profile (what `fdc` does).
fn run(b: Built, profile: Profile, extras: Option<&fdc_fds::SolverExtras>) -> MemorySink {
    let mut s = runtime_settings(&b.settings, &Overrides::default()).unwrap();
    profile.apply(&mut s, extras);
    let mut sys = System::new(b.model).unwrap();
    let mut sink = MemorySink::default();
    sys.run(&s, &mut sink).unwrap();
    sink
}

/// `fdc FILE.fds [--profile p]`: import in memory, build, run.
fn run_fds(name: &str, profile: Profile) -> MemorySink {
    let path = model(name);
    let imported = match import_file(&path, profile, None) {
        Ok(i) => i,
        Err(ImportError::Io(e)) => panic!("{e}"),
        Err(ImportError::Model { files, diagnostics }) => {
            panic!(
                "{}",
                diagnostics
                    .iter()
                    .map(|d| d.render(&files))
                    .collect::<String>()
            )
        }
    };
    let b = build_or_panic(ModelSource::Text {
        name: "imported",
        text: &imported.fd,
        path: &path,
    });
    run(b, profile, Some(&imported.extras))
}

/// `fdc FILE.fd --profile legacy` of an fd file on disk.
fn run_fd_file(path: &Path) -> MemorySink {
    let b = build_or_panic(ModelSource::File(path));
    run(b, Profile::Legacy, None)
}

fn max_diff(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

/// Mass 2 on a generic joint (a slider along global x, given in a permuted joint
/// frame), spring and damper as a GenericForce of PARVAL and MEAVAL: the damped
/// oscillator x(t) = v0/ωd e^(−ζωn t) sin(ωd t).
#[test]
fn oscillator_on_a_generic_joint_follows_the_closed_form() {
    let r = run_fds("oscillator.fds", Profile::Legacy);
    let (m, k, c, v0) = (2.0f64, 200.0f64, 0.8f64, 0.3f64);
    let wn = (k / m).sqrt();
    let zeta = c / (2.0 * m * wn);
    let wd = wn * (1.0 - zeta * zeta).sqrt();
    let x = channel(&r, "x");
    let exact: Vec<f64> = r
        .times
        .iter()
        .map(|&t| v0 / wd * (-zeta * wn * t).exp() * (wd * t).sin())
        .collect();
    let err = max_diff(&x, &exact);
    println!(
        "oscillator: max |x - exact| = {err:.3e} (amplitude {:.3e})",
        v0 / wd
    );
    assert!(err < 2e-5, "max error {err}");
    // The body moves along global x only (the joint frame's third axis).
    let y = channel(&r, "mass_1.R.y");
    let z = channel(&r, "mass_1.R.z");
    assert!(y.iter().chain(&z).all(|v| v.abs() < 1e-10));
    // Channels by the `.fds` names: the joint's primitives, the measures, the force.
    let x0 = channel(&r, "mass_1.R.x");
    assert!(max_diff(&x0.iter().map(|v| v - 0.5).collect::<Vec<_>>(), &x) < 1e-12);
    let xd = channel(&r, "x_dot");
    let spring = channel(&r, "spring.value");
    let law: Vec<f64> = x.iter().zip(&xd).map(|(x, v)| -k * x - c * v).collect();
    assert!(max_diff(&spring, &law) < 1e-9);
    // Gravity along −z is carried by the joint's dy primitive (K axis 2 = global z):
    // λ = m g up to the sign convention of multipliers.
    let lz = channel(&r, "prismatic_x_to_ground.dy.lambda");
    assert!(
        lz.iter().all(|l| (l.abs() - m * 9.81).abs() < 1e-6),
        "{:?}",
        &lz[..3]
    );
}

/// A free Akima spline of F = 2t (straight lines are reproduced exactly) pushes mass 1:
/// x = t³/3; a zccspl of a constant 3 N pushes mass 2: x = 3/4 t².
#[test]
fn spline_forces_from_table_files_follow_the_closed_form() {
    let r = run_fds("spline_force.fds", Profile::Legacy);
    let xa = channel(&r, "pushed.R.x");
    let xb = channel(&r, "held.R.x");
    let ea: Vec<f64> = r.times.iter().map(|t| t.powi(3) / 3.0).collect();
    let eb: Vec<f64> = r.times.iter().map(|t| 0.75 * t * t).collect();
    let (da, db) = (max_diff(&xa, &ea), max_diff(&xb, &eb));
    println!("splines: max error akima {da:.3e}, zcc {db:.3e}");
    assert!(da < 1e-6 && db < 1e-6, "{da} {db}");
    let f = channel(&r, "push_force.value");
    assert!(max_diff(&f, &r.times.iter().map(|t| 2.0 * t).collect::<Vec<_>>()) < 1e-12);
}

/// Two free bodies tied by an in-line-of-sight force −k (d − L0) between two points on
/// the line joining them: the gap oscillates as L0 + (d0 − L0) cos(ω t), ω² = k/μ, and
/// the centre of mass stays at rest. Body `right` has rotated principal axes.
#[test]
fn line_of_sight_force_follows_the_closed_form() {
    let r = run_fds("line_of_sight.fds", Profile::Legacy);
    let (k, l0, d0, mu) = (12.0f64, 1.5f64, 2.0f64, 3.0f64 * 1.0 / 4.0);
    let w = (k / mu).sqrt();
    let gap = channel(&r, "gap");
    let exact: Vec<f64> = r
        .times
        .iter()
        .map(|t| l0 + (d0 - l0) * (w * t).cos())
        .collect();
    let err = max_diff(&gap, &exact);
    let rate = channel(&r, "gap_rate");
    let exact_rate: Vec<f64> = r
        .times
        .iter()
        .map(|t| -(d0 - l0) * w * (w * t).sin())
        .collect();
    let err_rate = max_diff(&rate, &exact_rate);
    println!("line of sight: max gap error {err:.3e}, rate error {err_rate:.3e}");
    assert!(err < 1e-4 && err_rate < 5e-4, "{err} {err_rate}");
    // Orientation from OrientationPAI rows (0,1,0), (−1,0,0), (0,0,1): body x = global y,
    // a quarter turn about z.
    let qw = channel(&r, "right.theta.w")[0];
    let qz = channel(&r, "right.theta.z")[0];
    let h = std::f64::consts::FRAC_1_SQRT_2;
    assert!(
        (qw - h).abs() < 1e-14 && (qz - h).abs() < 1e-14,
        "{qw} {qz}"
    );
    // Centre of mass at rest: (3 x_right + 1 x_left) / 4 = 0.5.
    let xr = channel(&r, "right.R.x");
    let xl = channel(&r, "left.R.x");
    let com: Vec<f64> = xr
        .iter()
        .zip(&xl)
        .map(|(a, b)| (3.0 * a + b) / 4.0 - 0.5)
        .collect();
    assert!(com.iter().all(|c| c.abs() < 1e-10));
}

/// The three-link arm with GenericTorques equals the hand-written fd model of library
/// revolute joints and constant_torque elements.
#[test]
fn three_link_arm_equals_the_hand_written_model() {
    let r = run_fds("three_link_arm.fds", Profile::Legacy);
    let hand =
        run_fd_file(&PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fds/three_link_arm.fd"));
    assert_eq!(r.times, hand.times);
    let mut worst: f64 = 0.0;
    for b in ["link_1", "link_2", "link_3"] {
        for c in ["R.x", "R.y", "theta.w", "theta.z", "omega.z"] {
            let name = format!("{b}.{c}");
            worst = worst.max(max_diff(&channel(&r, &name), &channel(&hand, &name)));
        }
    }
    println!("three-link arm: max difference to the hand-written model {worst:.3e}");
    assert!(worst < 1e-9, "{worst}");
    // It moved: the shoulder turned by more than a radian.
    let q = channel(&r, "link_1.theta.z");
    assert!(q.last().unwrap().abs() > 0.4, "{q:?}");
}

/// `fdc import` → `.fd` file → `fdc FILE.fd --profile legacy` equals `fdc FILE.fds`, row
/// for row, for every test model (the fd file written elsewhere, so table paths are
/// absolute).
#[test]
fn imported_fd_file_runs_like_the_direct_run() {
    let dir = std::env::temp_dir().join(format!("fdc-fds-import-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for name in [
        "oscillator.fds",
        "spline_force.fds",
        "line_of_sight.fds",
        "three_link_arm.fds",
    ] {
        let direct = run_fds(name, Profile::Legacy);
        let imported = import_file(&model(name), Profile::Legacy, Some(&dir))
            .ok()
            .unwrap();
        let fd = dir.join(Path::new(name).with_extension("fd"));
        std::fs::write(&fd, &imported.fd).unwrap();
        let via_file = run_fd_file(&fd);
        assert_eq!(direct.names, via_file.names, "{name}");
        assert_eq!(direct.times, via_file.times, "{name}");
        assert_eq!(direct.rows, via_file.rows, "{name}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--profile v2` runs the same model on the Lie group (no normalization multiplier)
/// and reaches the same closed form.
#[test]
fn profile_v2_runs_the_same_model_on_the_lie_group() {
    let r = run_fds("line_of_sight.fds", Profile::V2);
    assert!(r.channel("right.norm").is_none());
    let legacy = run_fds("line_of_sight.fds", Profile::Legacy);
    assert!(legacy.channel("right.norm").is_some());
    let (k, l0, d0, mu) = (12.0f64, 1.5f64, 2.0f64, 0.75f64);
    let w = (k / mu).sqrt();
    let gap = channel(&r, "gap");
    let exact: Vec<f64> = r
        .times
        .iter()
        .map(|t| l0 + (d0 - l0) * (w * t).cos())
        .collect();
    let err = max_diff(&gap, &exact);
    println!("line of sight, profile v2: max gap error {err:.3e}");
    assert!(err < 1e-4, "{err}");
}
