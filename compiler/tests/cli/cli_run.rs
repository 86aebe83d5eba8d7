//! `fdc FILE.fd` as a user runs it: the real binary, its exit codes and its files.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fdc(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fdc"))
        .args(args)
        .arg("--cache-dir")
        .arg(dir.join("cache"))
        .output()
        .expect("fdc runs")
}

fn example(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../examples")
        .join(name)
        .display()
        .to_string()
}

fn temp(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("fdc-cli-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn runs_the_pendulum_and_writes_every_channel() {
    let dir = temp("run");
    let csv = dir.join("p.csv");
    let out = fdc(
        &[
            &example("pendulum.fd"),
            "--end",
            "0.5",
            "-o",
            csv.to_str().unwrap(),
        ],
        &dir,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("model: 1 bodies, 6 dofs, 5 constraints"),
        "{stderr}"
    );
    assert!(stderr.contains("real-time factor"), "{stderr}");
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    for col in [
        "time",
        "rod.R.x",
        "rod.theta.w",
        "rod.omega_body.y",
        "tip.x",
        "pivot.t0.lambda",
    ] {
        assert!(header.contains(&col), "no column {col} in {header:?}");
    }
    // Rows at 0, 0.01, ..., 0.5: exactly hit output times.
    let times: Vec<f64> = lines
        .map(|l| l.split(',').next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(times.len(), 51);
    for (k, t) in times.iter().enumerate() {
        assert!((t - 0.01 * k as f64).abs() < 1e-12, "row {k} at t = {t}");
    }
}

#[test]
fn a_bad_model_stops_before_compiling_and_writes_nothing() {
    let dir = temp("bad");
    let model = dir.join("bad.fd");
    std::fs::write(
        &model,
        "body b: rigid_body { mass = 1; inertia = [1, 1, 1]; stifness = 3; }\n",
    )
    .unwrap();
    let out = fdc(&[model.to_str().unwrap()], &dir);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("bad.fd:1:"), "{stderr}");
    assert!(!dir.join("bad.csv").exists());
}

#[test]
fn usage_errors_exit_with_2() {
    let dir = temp("usage");
    let out = fdc(&[&example("pendulum.fd"), "--set", "nope=1"], &dir);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no parameter `nope`"));
    let out = fdc(&[&example("pendulum.fd"), "--newton", "sometimes"], &dir);
    assert_eq!(out.status.code(), Some(2));
    let out = fdc(&[&dir.join("missing.fd").display().to_string()], &dir);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_solver_failure_names_the_problem_and_exits_with_1() {
    let dir = temp("fail");
    let model = dir.join("zero.fd");
    // A spring between two coincident points has no direction: its force is 0/0.
    std::fs::write(
        &model,
        "gravity [0, 0, -9.81];\n\
         body b: rigid_body { mass = 1; inertia = [1, 1, 1]; }\n\
         force s: spring_damper(b, ground) { at_a = [0, 0, 0]; at_b = [0, 0, 0]; stiffness = 10; }\n",
    )
    .unwrap();
    let out = fdc(&[model.to_str().unwrap(), "--end", "0.1"], &dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("error:"), "{stderr}");
    // The 0/0 is the spring's, not the body's.
    assert!(stderr.contains("of `s`"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn plots_channels_into_svg() {
    let dir = temp("plot");
    let csv = dir.join("p.csv");
    let svg = dir.join("p.svg");
    let out = fdc(
        &[
            &example("pendulum.fd"),
            "--end",
            "0.2",
            "-o",
            csv.to_str().unwrap(),
            "--plot",
            "tip.x",
            "tip.z",
            "--plot-output",
            svg.to_str().unwrap(),
        ],
        &dir,
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.contains("time [s]") && text.contains("tip.x") && text.contains("tip.z"));
    let out = Command::new(env!("CARGO_BIN_EXE_fdc"))
        .args(["plot", csv.to_str().unwrap(), "tip.q"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("did you mean `tip."));
}

#[test]
fn the_tutorial_model_runs() {
    // The fd blocks of docs/tutorial.md, in order, are one model.
    let doc = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/tutorial.md"),
    )
    .unwrap();
    let mut model = String::new();
    // None outside a block; Some(true) inside an fd block (no language tag).
    let mut block: Option<bool> = None;
    for line in doc.lines() {
        if let Some(lang) = line.strip_prefix("```") {
            block = match block {
                None => Some(lang.is_empty()),
                Some(_) => None,
            };
            continue;
        }
        if block == Some(true) {
            model.push_str(line);
            model.push('\n');
        }
    }
    let dir = temp("tutorial");
    let path = dir.join("crank.fd");
    std::fs::write(&path, &model).unwrap();
    let out = fdc(&[path.to_str().unwrap(), "--end", "0.2"], &dir);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\n{model}",
        String::from_utf8_lossy(&out.stderr)
    );
    let csv = std::fs::read_to_string(dir.join("crank.csv")).unwrap();
    assert!(csv.lines().next().unwrap().contains("piston"));
}

/// Runs an example through the binary and returns (header, rows).
fn run_example(name: &str, end: &str) -> (Vec<String>, Vec<Vec<f64>>) {
    let dir = temp(&format!("ex-{name}"));
    let csv = dir.join("out.csv");
    let out = fdc(
        &[&example(name), "--end", end, "-o", csv.to_str().unwrap()],
        &dir,
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    let header = lines.next().unwrap().split(',').map(String::from).collect();
    let rows = lines
        .map(|l| l.split(',').map(|x| x.parse().unwrap()).collect())
        .collect();
    (header, rows)
}

fn col(header: &[String], name: &str) -> usize {
    header
        .iter()
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("no column {name}"))
}

#[test]
fn every_example_runs_through_the_binary_with_its_physics_intact() {
    // Pendulum: the tip stays on the circle of radius L = 1 about the pivot.
    let (h, rows) = run_example("pendulum.fd", "1");
    let (x, z) = (col(&h, "tip.x"), col(&h, "tip.z"));
    for r in &rows {
        assert!(((r[x] * r[x] + r[z] * r[z]).sqrt() - 1.0).abs() < 1e-8);
    }
    // Spring–mass: z(t) = −x0 cos(√(k/m) t), x0 = 0.05, k/m = 100.
    let (h, rows) = run_example("spring_mass.fd", "1");
    let z = col(&h, "z");
    for r in &rows {
        assert!(
            (r[z] + 0.05 * (10.0 * r[0]).cos()).abs() < 1e-4,
            "t {}: z {}",
            r[0],
            r[z]
        );
    }
    // Double pendulum: the elbow stays at L1 = 1 from the pivot, the lower rod's centre
    // at L2/2 = 0.35 from the elbow.
    let (h, rows) = run_example("double_pendulum.fd", "1");
    let (ux, uz) = (col(&h, "upper.R.x"), col(&h, "upper.R.z"));
    let (lx, lz) = (col(&h, "lower.R.x"), col(&h, "lower.R.z"));
    for r in &rows {
        let (ex, ez) = (2.0 * r[ux], 2.0 * r[uz]);
        assert!(((ex * ex + ez * ez).sqrt() - 1.0).abs() < 1e-8);
        let (dx, dz) = (r[lx] - ex, r[lz] - ez);
        assert!(((dx * dx + dz * dz).sqrt() - 0.35).abs() < 1e-8);
    }
    // Slider-crank: the slider obeys the crank kinematics x = r cos φ + √(l² − r² sin² φ)
    // with φ the crank angle about z from its quaternion.
    let (h, rows) = run_example("slider_crank.fd", "0.5");
    let (px, w, qz) = (
        col(&h, "piston"),
        col(&h, "crank.theta.w"),
        col(&h, "crank.theta.z"),
    );
    let (r_, l) = (0.1f64, 0.3f64);
    for r in &rows {
        let phi = 2.0 * r[qz].atan2(r[w]);
        let want = r_ * phi.cos() + (l * l - (r_ * phi.sin()).powi(2)).sqrt();
        assert!(
            (r[px] - want).abs() < 1e-8,
            "t {}: x {} vs {want}",
            r[0],
            r[px]
        );
    }
}

#[test]
fn a_run_that_fails_mid_way_keeps_its_rows_and_names_the_time() {
    let dir = temp("midway");
    let model = dir.join("blowup.fd");
    // A force that grows without bound as t → 0.5: the integration cannot pass it.
    std::fs::write(
        &model,
        "body b: rigid_body { mass = 1; inertia = [1, 1, 1]; }\n\
         force push: constant_force(b) { value = [0, 0, 1/(0.5 - t)^2]; }\n\
         simulate { end = 1; step = 1e-3; output_every = 0.01; }\n",
    )
    .unwrap();
    let csv = dir.join("blowup.csv");
    let out = fdc(
        &[model.to_str().unwrap(), "-o", csv.to_str().unwrap()],
        &dir,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("at t = 0.4") || stderr.contains("at t = 0.5"),
        "{stderr}"
    );
    let rows = std::fs::read_to_string(&csv).unwrap().lines().count() - 1;
    // Rows at 0, 0.01, ..., up to just before 0.5 are kept.
    assert!((45..=51).contains(&rows), "{rows} rows; {stderr}");
}

#[test]
fn a_force_law_that_becomes_nan_is_named_and_the_rows_before_it_are_kept() {
    let dir = temp("nanforce");
    // √(0.25 − t) is not a number after t = 0.25; log(t) is −∞ at t = 0.
    for (law, rows_kept) in [("sqrt(0.25 - t)", Some(26)), ("log(t)", None)] {
        let model = dir.join("nan.fd");
        std::fs::write(
            &model,
            format!(
                "body b: rigid_body {{ mass = 1; inertia = [1, 1, 1]; }}\n\
                 force thrust: constant_force(b) {{ value = [0, 0, {law}]; }}\n\
                 simulate {{ end = 1; step = 1e-3; output_every = 0.01; }}\n"
            ),
        )
        .unwrap();
        let csv = dir.join("nan.csv");
        let out = fdc(
            &[model.to_str().unwrap(), "-o", csv.to_str().unwrap()],
            &dir,
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{law}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
        match rows_kept {
            Some(n) => {
                assert!(
                    stderr.contains("produced by the residual of `thrust`"),
                    "{law}: {stderr}"
                );
                assert!(stderr.contains("at t = 0.25"), "{law}: {stderr}");
                let text = std::fs::read_to_string(&csv).unwrap();
                let rows: Vec<&str> = text.lines().skip(1).collect();
                assert_eq!(rows.len(), n, "{law}: {stderr}");
                let last: f64 = rows[n - 1].split(',').next().unwrap().parse().unwrap();
                assert!((last - 0.25).abs() < 1e-12, "{last}");
            }
            None => assert!(
                stderr.contains("produced by the initial conditions of `thrust`"),
                "{law}: {stderr}"
            ),
        }
    }
}

#[test]
fn a_zero_axis_is_reported_at_the_users_joint_and_a_massless_body_without_a_panic() {
    let dir = temp("degenerate");
    let model = dir.join("axis.fd");
    std::fs::write(
        &model,
        "body b: rigid_body { mass = 1; inertia = [1, 1, 1]; }\n\
         joint j: revolute(b) { at = [0, 0, 0]; axis = [0, 0, 0]; }\n",
    )
    .unwrap();
    let out = fdc(&[model.to_str().unwrap()], &dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("axis.fd:2:40") && stderr.contains("is NaN"),
        "{stderr}"
    );
    let model = dir.join("massless.fd");
    std::fs::write(
        &model,
        "body b: rigid_body { mass = 0; inertia = [1, 1, 1]; }\n",
    )
    .unwrap();
    let out = fdc(&[model.to_str().unwrap(), "--end", "0.1"], &dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    // Refused before any run, at the mass field (plausibility check E0940).
    assert!(
        stderr.contains("E0940") && stderr.contains("massless.fd:1:29") && stderr.contains("`b`"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn every_example_file_checks_and_runs_to_its_end() {
    let dir_path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let mut names: Vec<String> = std::fs::read_dir(&dir_path)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".fd"))
        .collect();
    names.sort();
    assert!(names.len() >= 8, "{names:?}");
    let dir = temp("all-examples");
    for name in &names {
        let out = Command::new(env!("CARGO_BIN_EXE_fdc"))
            .args(["check", &example(name)])
            .output()
            .expect("fdc runs");
        assert_eq!(
            out.status.code(),
            Some(0),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let csv = dir.join(name.replace(".fd", ".csv"));
        let out = fdc(&[&example(name), "-o", csv.to_str().unwrap()], &dir);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{name}: {stderr}");
        // The run reached the model's own end time (`end = X;` in `simulate`).
        let end = std::fs::read_to_string(example(name))
            .unwrap()
            .lines()
            .find_map(|l| {
                let (key, value) = l.split_once('=')?;
                (key.trim() == "end").then_some(())?;
                value.split(';').next()?.trim().parse::<f64>().ok()
            })
            .unwrap_or_else(|| panic!("{name} has no `end = ...;` line"));
        assert!(
            stderr.contains(&format!("run: t = {end:.6} s")),
            "{name}: {stderr}"
        );
        if name == "four_bar.fd" {
            // A loop of planar joints: no constraint is redundant, nothing is warned.
            assert_eq!(
                stderr.matches(" removed — redundant").count(),
                0,
                "{stderr}"
            );
            assert!(!stderr.contains("redundant constraints:"), "{stderr}");
            assert!(stderr.contains("0 redundant removed"), "{stderr}");
        }
    }
    // The results of every example (and their object cache) are ~90 MB: not left behind.
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn rho_inf_and_atol_are_simulate_keys_and_two_dampings_are_an_error() {
    let dir = temp("rho");
    let body = "gravity [0, 0, -9.81];\n\
                body b: rigid_body { mass = 1; inertia = [1, 2, 3]; angular_velocity = [1, 0.1, 0]; }\n";
    let write = |name: &str, sim: &str| {
        let p = dir.join(name);
        std::fs::write(&p, format!("{body}simulate {{ {sim} }}\n")).unwrap();
        p.display().to_string()
    };
    let good = write(
        "good.fd",
        "end = 0.2; rho_inf = 0.8; adaptive = 1e-6; atol = 1e-9;",
    );
    let out = fdc(&[&good], &dir);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let both = write("both.fd", "end = 0.2; alpha = -0.1; rho_inf = 0.8;");
    let out = fdc(&[&both], &dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("both set the numerical damping") && stderr.contains("both.fd:"),
        "{stderr}"
    );
    let out = fdc(&[&good, "--alpha", "-0.1", "--rho-inf", "0.9"], &dir);
    assert_ne!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("keep one"));
    // Undamped with constraints (the pendulum's joint): refused before the first step.
    let out = fdc(
        &[&example("pendulum.fd"), "--rho-inf", "1", "--end", "0.1"],
        &dir,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("rho_inf 1 with constraints"), "{stderr}");
    let help = fdc(&["run", "--help"], &dir);
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(
        help.contains("--rho-inf") && help.contains("--atol") && help.contains("rho_inf"),
        "{help}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_output_that_stops_being_a_number_is_one_warning_with_its_first_time() {
    let dir = temp("nanoutput");
    let model = dir.join("nan.fd");
    // √(0.5 − t) is NaN after t = 0.5: the first row after it is t = 0.51. The
    // position stays finite: one warning, for `r` only, after the summary.
    std::fs::write(
        &model,
        "body b: rigid_body { mass = 1; inertia = [1, 1, 1]; }\n\
         output z = b.position.z;\n\
         output r = sqrt(0.5 - t);\n\
         simulate { end = 1; step = 1e-3; output_every = 0.01; }\n",
    )
    .unwrap();
    let csv = dir.join("nan.csv");
    let out = fdc(
        &[model.to_str().unwrap(), "-o", csv.to_str().unwrap()],
        &dir,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("non-finite"))
        .collect();
    assert_eq!(warnings.len(), 1, "{stderr}");
    assert!(
        warnings[0].starts_with("warning: output `r` is NaN from t = 0.51"),
        "{stderr}"
    );
    assert!(stderr.trim_end().ends_with(warnings[0]), "{stderr}");
    // The file agrees: the first NaN of `r` is in the row of t = 0.51.
    let text = std::fs::read_to_string(&csv).unwrap();
    let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
    let r = header.iter().position(|c| *c == "r").unwrap();
    let first_nan = text
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect::<Vec<_>>())
        .find(|cells| cells[r] == "NaN")
        .map(|cells| cells[0].parse::<f64>().unwrap())
        .unwrap_or_else(|| panic!("no NaN of `r` in {header:?}"));
    assert!((first_nan - 0.51).abs() < 1e-9, "{first_nan}");
}

#[test]
fn a_closed_stdout_ends_the_command_quietly() {
    // `fdc build --timings … | head -0`: the reader is gone before fdc prints. The
    // process must end (by SIGPIPE, as other command-line tools do), never with a panic.
    use std::io::Read;
    use std::process::Stdio;
    let dir = temp("pipe");
    let mut child = Command::new(env!("CARGO_BIN_EXE_fdc"))
        .args(["build", "--timings", &example("pendulum.fd")])
        .arg("--cache-dir")
        .arg(dir.join("cache"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("fdc runs");
    drop(child.stdout.take());
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let status = child.wait().unwrap();
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_ne!(status.code(), Some(101), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}
