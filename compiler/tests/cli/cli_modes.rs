//! `fdc modes` on models written in the language, against closed forms.

use std::f64::consts::PI;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn temp(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("fdc-modes-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn fdc(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fdc"))
        .args(args)
        .arg("--cache-dir")
        .arg(dir.join("cache"))
        .output()
        .expect("fdc runs")
}

/// Writes `src` as a model and returns `fdc modes --json` of it with `extra` flags.
fn modes(tag: &str, src: &str, extra: &[&str]) -> serde_json::Value {
    let dir = temp(tag);
    let file = dir.join(format!("{tag}.fd"));
    std::fs::write(&file, src).unwrap();
    let mut args = vec!["modes", file.to_str().unwrap(), "--json"];
    args.extend_from_slice(extra);
    let out = fdc(&args, &dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

fn list(v: &serde_json::Value) -> &Vec<serde_json::Value> {
    v["modes"].as_array().unwrap()
}

fn freqs(v: &serde_json::Value, kind: &str) -> Vec<f64> {
    list(v)
        .iter()
        .filter(|m| m["kind"] == kind)
        .map(|m| m["frequency_hz"].as_f64().unwrap())
        .collect()
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * b.abs()
}

const SPRING_MASS: &str = r#"
param m = 1.0;
param k = 100.0;
param c = 4.0;
gravity [0, 0, -9.81];
body block: rigid_body {
    mass = m;
    inertia = [0.01, 0.01, 0.01];
    position = [0, 0, -0.05];
}
joint slide: prismatic(block, ground) {
    at = [0, 0, -0.05];
    axis = [0, 0, 1];
}
force spring: spring_damper(block, ground) {
    at_a = [0, 0, -0.05];
    at_b = [0, 0, 1];
    stiffness = k;
    damping = c;
    length = 1 - m*9.81/k;
}
simulate { end = 1; step = 1e-3; }
"#;

#[test]
fn spring_mass_damper_frequency_and_damping_ratio() {
    // m s² + c s + k = 0: ω_n = √(k/m), ζ = c/(2√(k m)), f = ω_n √(1 − ζ²)/2π.
    let (m, k) = (1.0f64, 100.0f64);
    for c in [0.0f64, 4.0] {
        let set = format!("c={c}");
        let v = modes("sm", SPRING_MASS, &["--set", &set]);
        assert_eq!(v["free_dofs"], 1, "{v}");
        assert_eq!(list(&v).len(), 1, "{v}");
        let mode = &list(&v)[0];
        let zeta = c / (2.0 * (k * m).sqrt());
        let f = (k / m).sqrt() * (1.0 - zeta * zeta).sqrt() / (2.0 * PI);
        assert_eq!(mode["kind"], "oscillation");
        assert!(
            close(mode["frequency_hz"].as_f64().unwrap(), f, 1e-9),
            "{mode}"
        );
        assert!((mode["damping_ratio"].as_f64().unwrap() - zeta).abs() < 1e-9);
        assert_eq!(mode["energy"][0]["body"], "block");
    }
    // After a run to t = 0.3 s the state moved but the system is linear: same modes.
    let v = modes("sm_at", SPRING_MASS, &["--at", "0.3"]);
    assert!((v["t"].as_f64().unwrap() - 0.3).abs() < 1e-12);
    let f = 10.0 * 0.96f64.sqrt() / (2.0 * PI);
    assert!(close(freqs(&v, "oscillation")[0], f, 1e-7), "{v}");
}

const PENDULUM: &str = r#"
param L = 1.2;
param m = 2.0;
param axis_z = 0;
gravity [0, 0, -9.81];
body rod: rigid_body {
    mass = m;
    inertia = [m*L^2/12, m*L^2/12, 1e-4];
    position = [0, 0, -L/2];
}
joint pivot: revolute(rod, ground) {
    at = [0, 0, 0];
    axis = [0, 1 - axis_z, axis_z];
}
"#;

#[test]
fn physical_pendulum_has_one_mode_at_the_small_oscillation_frequency() {
    // About the pivot: J = m L²/3, restoring moment m g L/2 per radian: ω² = 3g/(2L).
    let v = modes("pend", PENDULUM, &[]);
    assert_eq!(
        (v["dofs"].as_u64(), v["constraints"].as_u64()),
        (Some(6), Some(5))
    );
    assert_eq!(v["free_dofs"], 1);
    assert_eq!(list(&v).len(), 1, "exactly one mode for the one dof: {v}");
    let f = (3.0 * 9.81 / (2.0 * 1.2f64)).sqrt() / (2.0 * PI);
    assert!(close(freqs(&v, "oscillation")[0], f, 1e-9), "{v}");
    assert!(list(&v)[0]["damping_ratio"].as_f64().unwrap().abs() < 1e-9);
    // The mode vector: a turn about the axis y, the centre (0, 0, −L/2) moving as
    // r × (R − P) = (−L/2, 0, 0) per radian; the rotation is the largest entry (1).
    let shape = &list(&v)[0]["shape"][0];
    assert_eq!(shape["body"], "rod");
    let want = [
        ("rotation", [0.0, 1.0, 0.0]),
        ("translation", [-0.6, 0.0, 0.0]),
    ];
    for (key, w) in want {
        for (i, w) in w.iter().enumerate() {
            let got = shape[key][i].as_f64().unwrap();
            assert!((got - w).abs() < 1e-9, "{key} {shape}");
            assert!(shape[format!("{key}_im")][i].as_f64().unwrap().abs() < 1e-12);
        }
    }

    // The same rod hinged about the vertical: gravity does not act on the angle,
    // the one remaining dof is a rigid-body mode reported at 0 Hz.
    let v = modes("pend_z", PENDULUM, &["--set", "axis_z=1"]);
    assert_eq!(list(&v).len(), 1, "{v}");
    assert_eq!(list(&v)[0]["kind"], "rigid_body");
    assert_eq!(list(&v)[0]["frequency_hz"], 0.0);
    assert_eq!(list(&v)[0]["energy"][0]["body"], "rod");
}

const CHAIN: &str = r#"
param m1 = 1.0;
param m2 = 2.0;
param k1 = 100.0;
param k2 = 50.0;
body a: rigid_body { mass = m1; inertia = [0.1, 0.1, 0.1]; position = [0, 0, 0]; }
body b: rigid_body { mass = m2; inertia = [0.1, 0.1, 0.1]; position = [1, 0, 0]; }
joint ra: prismatic(a, ground) { at = [0, 0, 0]; axis = [1, 0, 0]; }
joint rb: prismatic(b, ground) { at = [1, 0, 0]; axis = [1, 0, 0]; }
force s1: spring_damper(a, ground) { at_a = [0, 0, 0]; at_b = [-1, 0, 0]; stiffness = k1; }
force s2: spring_damper(b, a) { at_a = [1, 0, 0]; at_b = [0, 0, 0]; stiffness = k2; }
"#;

#[test]
fn two_mass_chain_has_both_closed_form_frequencies() {
    // det(K − ω² M) = 0: m1 m2 ω⁴ − (m1 k2 + m2 (k1 + k2)) ω² + k1 k2 = 0.
    let (m1, m2, k1, k2) = (1.0f64, 2.0f64, 100.0f64, 50.0f64);
    let p = m1 * k2 + m2 * (k1 + k2);
    let disc = (p * p - 4.0 * m1 * m2 * k1 * k2).sqrt();
    let w2 = [(p - disc) / (2.0 * m1 * m2), (p + disc) / (2.0 * m1 * m2)];
    let v = modes("chain", CHAIN, &[]);
    assert_eq!(v["free_dofs"], 2);
    let f = freqs(&v, "oscillation");
    assert_eq!(f.len(), 2, "{v}");
    for (got, w2) in f.iter().zip(w2) {
        assert!(
            close(*got, w2.sqrt() / (2.0 * PI), 1e-9),
            "{got} vs {}",
            w2.sqrt()
        );
    }
    // Mode vectors from (K − ω² M) x = 0, first row: x_b / x_a = (k1 + k2 − ω² m1) / k2,
    // along the axis x only, the larger amplitude 1.
    for (mode, w2) in list(&v).iter().zip(w2) {
        let ratio = (k1 + k2 - w2 * m1) / k2;
        let (a, b) = (&mode["shape"][0], &mode["shape"][1]);
        assert_eq!((&a["body"], &b["body"]), (&"a".into(), &"b".into()));
        let (xa, xb) = (
            a["translation"][0].as_f64().unwrap(),
            b["translation"][0].as_f64().unwrap(),
        );
        let scale = 1.0f64.max(ratio.abs());
        let (wa, wb) = (1.0 / scale, ratio / scale);
        assert!(
            (xa - wa).abs() < 1e-9 && (xb - wb).abs() < 1e-9,
            "{xa} {xb} vs {wa} {wb}"
        );
        for body in [a, b] {
            for i in 0..3 {
                let off = body["rotation"][i].as_f64().unwrap().abs()
                    + if i > 0 {
                        body["translation"][i].as_f64().unwrap().abs()
                    } else {
                        0.0
                    };
                assert!(off < 1e-9, "{mode}");
            }
        }
    }
    // Energy shares sum to one and name both bodies.
    for mode in list(&v) {
        let e = mode["energy"].as_array().unwrap();
        let total: f64 = e.iter().map(|x| x["share"].as_f64().unwrap()).sum();
        assert!((total - 1.0).abs() < 1e-12 && e.len() == 2, "{mode}");
    }
}

const ROTOR: &str = r#"
param J1 = 0.5;
param J3 = 0.6;
param Omega = 20.0;
param k = 100.0;
param a = 0.5;
body rotor: rigid_body {
    mass = 3.0;
    inertia = [J1, J1, J3];
    angular_velocity = [0, 0, Omega];
}
joint ball: spherical(rotor, ground) { at = [0, 0, 0]; }
force xt: spring_damper(rotor, ground) { at_a = [0, 0, a]; at_b = [1, 0, a]; stiffness = k; }
force yt: spring_damper(rotor, ground) { at_a = [0, 0, a]; at_b = [0, 1, a]; stiffness = k; }
force xb: spring_damper(rotor, ground) { at_a = [0, 0, -a]; at_b = [1, 0, -a]; stiffness = k; }
force yb: spring_damper(rotor, ground) { at_a = [0, 0, -a]; at_b = [0, 1, -a]; stiffness = k; }
"#;

#[test]
fn spinning_rotor_whirl_splits_as_the_gyroscopic_closed_form() {
    // A symmetric rotor (J1, J1, J3) held at its centre, spinning at Ω about its axis,
    // tilted against springs at the axis points ±a: each unstressed spring pulls only
    // along itself, so a tilt α about x or y meets the moment −k_t α, k_t = 2 k a².
    // With p = α_x + i α_y the body-fixed tilt and w = ω_x + i ω_y, the kinematics
    // ṗ = w − iΩ p (δ̇ = Δω̄ − ω̄̃ δ) and Euler's J1 ẇ − i (J3 − J1) Ω w = −k_t p give,
    // for p = e^{iωt}: J1 ω² + (2 J1 − J3) Ω ω − (J3 − J1) Ω² − k_t = 0. These are the
    // frequencies in the body-fixed frame; the inertial whirl frequencies are ω + Ω,
    // the roots of −J1 ω² + J3 Ω ω + k_t = 0 (forward and backward whirl). The spin
    // angle has no stiffness: one rigid-body mode.
    let (j1, j3, k, a) = (0.5f64, 0.6f64, 100.0f64, 0.5f64);
    let kt = 2.0 * k * a * a;
    for omega in [0.0f64, 20.0] {
        let set = format!("Omega={omega}");
        let v = modes("rotor", ROTOR, &["--set", &set]);
        assert_eq!(v["free_dofs"], 3, "{v}");
        let (bq, cq) = (
            (2.0 * j1 - j3) * omega / j1,
            -((j3 - j1) * omega * omega + kt) / j1,
        );
        let disc = (bq * bq - 4.0 * cq).sqrt();
        let mut want = [((-bq + disc) / 2.0).abs(), ((-bq - disc) / 2.0).abs()];
        want.sort_by(f64::total_cmp);
        let got = freqs(&v, "oscillation");
        assert_eq!(got.len(), 2, "{v}");
        for (g, w) in got.iter().zip(want) {
            assert!(
                close(*g, w / (2.0 * PI), 1e-8),
                "Ω = {omega}: {g} vs {}",
                w / (2.0 * PI)
            );
        }
        assert_eq!(freqs(&v, "rigid_body").len(), 1, "{v}");
    }
}

#[test]
fn table_output_and_bad_input() {
    let dir = temp("table");
    let file = dir.join("p.fd");
    std::fs::write(&file, PENDULUM).unwrap();
    let out = fdc(&["modes", file.to_str().unwrap()], &dir);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("frequency [Hz]") && stdout.contains("rod 100%"),
        "{stdout}"
    );
    let f = (3.0 * 9.81 / 2.4f64).sqrt() / (2.0 * PI);
    assert!(stdout.contains(&format!("{f:.6}")), "{stdout}");

    let out = fdc(&["modes", file.to_str().unwrap(), "--at", "-1"], &dir);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--at"));
    let out = fdc(&["modes", dir.join("missing.fd").to_str().unwrap()], &dir);
    assert_eq!(out.status.code(), Some(2));
}

const DOUBLE: &str = r#"
param L1 = 1.0;
param L2 = 0.7;
param m1 = 1.0;
param m2 = 0.5;
gravity [0, 0, -9.81];
body upper: rigid_body {
    mass = m1;
    inertia = [m1*L1^2/12, m1*L1^2/12, 1e-4];
    position = [0, 0, -L1/2];
}
body lower: rigid_body {
    mass = m2;
    inertia = [m2*L2^2/12, m2*L2^2/12, 1e-4];
    position = [0, 0, -L1 - L2/2];
}
joint shoulder: revolute(upper) { at = [0, 0, 0]; axis = [0, 1, 0]; }
joint elbow: revolute(lower, upper) { at = [0, 0, -L1]; axis = [0, 1, 0]; }
"#;

#[test]
fn hanging_double_pendulum_of_rods_has_two_modes_from_lagrange() {
    // Absolute angles θ1, θ2 of two uniform rods, small motion about hanging:
    // M = [[m1 L1²/3 + m2 L1², m2 L1 L2/2], [m2 L1 L2/2, m2 L2²/3]],
    // K = diag(g (m1 L1/2 + m2 L1), g m2 L2/2); det(K − ω² M) = 0.
    let (l1, l2, m1, m2, g) = (1.0f64, 0.7f64, 1.0f64, 0.5f64, 9.81f64);
    let m = [
        m1 * l1 * l1 / 3.0 + m2 * l1 * l1,
        m2 * l1 * l2 / 2.0,
        m2 * l2 * l2 / 3.0,
    ];
    let k = [g * (m1 * l1 / 2.0 + m2 * l1), g * m2 * l2 / 2.0];
    let (a, b, c) = (
        m[0] * m[2] - m[1] * m[1],
        k[0] * m[2] + k[1] * m[0],
        k[0] * k[1],
    );
    let disc = (b * b - 4.0 * a * c).sqrt();
    let w2 = [(b - disc) / (2.0 * a), (b + disc) / (2.0 * a)];
    let v = modes("double", DOUBLE, &[]);
    assert_eq!(
        (v["dofs"].as_u64(), v["constraints"].as_u64()),
        (Some(12), Some(10))
    );
    assert_eq!(v["free_dofs"], 2);
    let f = freqs(&v, "oscillation");
    assert_eq!(list(&v).len(), 2, "exactly one mode per remaining dof: {v}");
    for (got, w2) in f.iter().zip(w2) {
        assert!(
            close(*got, w2.sqrt() / (2.0 * PI), 1e-9),
            "{got} vs {}",
            w2.sqrt() / (2.0 * PI)
        );
    }
}
