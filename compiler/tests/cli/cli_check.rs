//! Runs the real `fdc check` binary: exit codes, diagnostics with line:col on stderr,
//! JSON lines, and never a panic (exit 101).

use std::path::PathBuf;
use std::process::{Command, Output};

fn fdc(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fdc"))
        .args(args)
        .output()
        .expect("the fdc binary runs")
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("compiler/ is below the root")
        .to_path_buf()
}

fn temp_model(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fdc-cli-check-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write model");
    p
}

#[test]
fn valid_examples_exit_0_silently() {
    for ex in [
        "pendulum",
        "spring_mass",
        "double_pendulum",
        "slider_crank",
        "spline_lift",
    ] {
        let p = root().join(format!("examples/{ex}.fd"));
        let out = fdc(&["check", p.to_str().unwrap()]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{ex}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        // Only the degrees of freedom, on stdout.
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.stderr.is_empty(), "{ex} is not silent");
        assert_eq!(stdout.lines().count(), 1, "{ex}: {stdout}");
        assert!(stdout.contains(" of freedom ("), "{ex}: {stdout}");
    }
}

#[test]
fn invalid_model_exits_1_with_every_error_located() {
    let p = temp_model(
        "bad.fd",
        "param k = 1;\nbody rod: rigid_body { mass = 1; inertia = [1, 1, 1]; massa = 2; }\noutput x = rod.position.x + stifness;\n",
    );
    let out = fdc(&["check", p.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.fd:2:55"), "line:col of `massa`:\n{err}");
    assert!(
        err.contains("`massa`") && err.contains("did you mean `mass`?"),
        "{err}"
    );
    assert!(
        err.contains("bad.fd:3:29") && err.contains("`stifness`"),
        "{err}"
    );
    assert!(err.contains("E0204") && err.contains("E0201"), "{err}");
}

#[test]
fn warnings_alone_exit_0() {
    let p = temp_model(
        "warn.fd",
        "force f(a: body) {\n    apply force [abs(a.position.x), 0, 0] on a;\n}\n",
    );
    let out = fdc(&["check", p.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("W0001") && err.contains("warn.fd:2:18"),
        "{err}"
    );
}

#[test]
fn json_lines() {
    let p = temp_model("json.fd", "param a = b;\nparam c = 1 $ 2;\n");
    let out = fdc(&["check", "--message-format", "json", p.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<serde_json::Value> = err
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    assert_eq!(lines.len(), 2, "{err}");
    assert_eq!(lines[0]["code"], "E0201");
    assert_eq!(lines[0]["primary"]["line"], 1);
    assert_eq!(lines[0]["primary"]["column"], 11);
    assert_eq!(lines[1]["code"], "E0001");
    assert_eq!(lines[1]["primary"]["column"], 13);
}

#[test]
fn usage_and_io_errors_exit_2() {
    let out = fdc(&["check", "/nonexistent/model.fd"]);
    assert_eq!(out.status.code(), Some(2));
    let out = fdc(&["check"]);
    assert_eq!(out.status.code(), Some(2));
    let out = fdc(&["check", "--message-format", "xml", "x.fd"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn garbage_never_panics() {
    let texts = [
        "\u{0}\u{1}}}}{{{ param",
        "body b: rigid_body(((((",
        "joint j(a: body) { joint j2: j(a); constrain",
        "\"unterminated\n/// doc at end",
    ];
    for (i, t) in texts.iter().enumerate() {
        let p = temp_model(&format!("g{i}.fd"), t);
        let out = fdc(&["check", p.to_str().unwrap()]);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{t:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// A model whose front end is clean but whose spline table file does not exist: only
/// the lowering finds that, so `fdc check` must run it.
const MISSING_TABLE: &str = "param k = 1;\nspline law = table(\"no_such_table.txt\", 0, 1);\nbody b: rigid_body { mass = 1; inertia = [1, 1, 1]; }\noutput y = law(k);\n";

/// 1-based (line, column) of byte offset `off` in `text` (columns in characters).
fn line_col(text: &str, off: usize) -> (usize, usize) {
    let before = &text[..off];
    let line = before.matches('\n').count() + 1;
    let col = before[before.rfind('\n').map_or(0, |i| i + 1)..]
        .chars()
        .count()
        + 1;
    (line, col)
}

#[test]
fn lowering_errors_are_reported_at_their_span() {
    let p = temp_model("missing_table.fd", MISSING_TABLE);
    let out = fdc(&["check", p.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    // The span of the lowering's E0910 is the call `table(...)`.
    let (line, col) = line_col(MISSING_TABLE, MISSING_TABLE.find("table(").unwrap());
    assert_eq!((line, col), (2, 14));
    assert!(err.contains("E0910"), "{err}");
    assert!(
        err.contains(&format!("missing_table.fd:{line}:{col}")),
        "{err}"
    );
    assert!(err.contains("no_such_table.txt"), "{err}");
    // The hint says where relative paths start.
    assert!(err.contains("relative to the model file"), "{err}");

    let out = fdc(&["check", "--message-format", "json", p.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<serde_json::Value> = err
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    assert_eq!(lines.len(), 1, "{err}");
    let d = &lines[0];
    assert_eq!(d["code"], "E0910");
    assert_eq!(d["severity"], "error");
    let start = MISSING_TABLE.find("table(").unwrap();
    let end = MISSING_TABLE.find(");\nbody").unwrap() + 1;
    assert_eq!(d["primary"]["start"], start);
    assert_eq!(d["primary"]["end"], end);
    assert_eq!(d["primary"]["line"], 2);
    assert_eq!(d["primary"]["column"], 14);
    assert_eq!(d["primary"]["end_column"], line_col(MISSING_TABLE, end).1);
    assert!(d["primary"]["file"]
        .as_str()
        .unwrap()
        .ends_with("missing_table.fd"));
    assert!(!d["notes"].as_array().unwrap().is_empty(), "{d}");
}

#[test]
fn a_model_with_its_table_file_is_clean() {
    let p = temp_model(
        "with_table.fd",
        &MISSING_TABLE.replace("no_such_table.txt", "with_table.txt"),
    );
    std::fs::write(p.with_file_name("with_table.txt"), "0 0\n1 2\n2 3\n").unwrap();
    let out = fdc(&["check", p.to_str().unwrap()]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stderr.is_empty());
    assert!(String::from_utf8_lossy(&out.stdout).contains("degrees of freedom"));
}

#[test]
fn lowering_waits_for_a_clean_front_end() {
    // Front-end errors come alone: the lowering needs a checked model.
    let text = format!("{MISSING_TABLE}output z = nope;\n");
    let p = temp_model("both.fd", &text);
    let out = fdc(&["check", "--message-format", "json", p.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    let codes: Vec<String> = err
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["code"].to_string())
        .collect();
    assert_eq!(codes, ["\"E0201\""], "{err}");
}

#[test]
fn check_states_the_degrees_of_freedom_and_rejects_a_negative_mass() {
    let p = root().join("examples/pendulum.fd");
    let out = fdc(&["check", p.to_str().unwrap()]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "1 degree of freedom (1 body, 6 velocity dofs, 5 independent constraints, 0 redundant removed)"
    );
    let bad = temp_model(
        "negative_mass.fd",
        "body rod: rigid_body {\n    mass = -1;\n    inertia = [1, 1, 1];\n}\njoint pin: spherical(rod) { at = [0, 0, 0]; }\n",
    );
    let out = fdc(&["check", bad.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("E0940") && err.contains("negative_mass.fd:2:12"),
        "{err}"
    );
}

/// `fdc check` counts the degrees of freedom after the runtime's redundancy test, at the
/// configuration as written: the mobility of a planar loop built from 3-D hinges, not
/// velocity dofs minus rows (which gave "-8" for the squeezer).
#[test]
fn check_counts_the_mobility_of_closed_loops() {
    let squeezer = root().join("examples/squeezer.fd");
    let out = fdc(&["check", squeezer.to_str().unwrap()]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "1 degree of freedom (7 bodies, 42 velocity dofs, 41 independent constraints, 9 redundant removed)"
    );
    // A four-bar of revolute joints (Grübler: 3·3 − 2·4 = 1 in the plane; in space
    // 18 − 20 rows, 3 of them redundant).
    let link = |n: &str, x: f64, y: f64| {
        format!("body {n}: rigid_body {{ mass = 1; inertia = [0.1, 0.1, 0.1]; position = [{x}, {y}, 0]; }}\n")
    };
    let pin = |n: &str, a: &str, b: &str, x: f64, y: f64| {
        format!("joint {n}: revolute({a}, {b}) {{ at = [{x}, {y}, 0]; axis = [0, 0, 1]; }}\n")
    };
    let text = [
        link("crank", 0.0, 0.5),
        link("coupler", 1.25, 1.1),
        link("rocker", 2.75, 0.6),
        pin("a", "crank", "ground", 0.0, 0.0),
        pin("b", "crank", "coupler", 0.0, 1.0),
        pin("c", "coupler", "rocker", 2.5, 1.2),
        pin("d", "rocker", "ground", 3.0, 0.0),
    ]
    .concat();
    let four_bar = temp_model("four_bar_revolute.fd", &text);
    let out = fdc(&["check", four_bar.to_str().unwrap()]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "1 degree of freedom (3 bodies, 18 velocity dofs, 17 independent constraints, 3 redundant removed)",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `fdc check` and `fdc run` refuse the same settings with the same located message
/// (one validation): exit 1, `file:2:col` at the value, no code compiled or run.
#[test]
fn check_and_run_refuse_the_same_settings_at_their_values() {
    let bad = [
        ("step", "0", "step 0 must be positive"),
        ("alpha", "0.5", "HHT alpha 0.5 must lie in [-1/3, 0]"),
        ("end", "-1", "end time -1 must be finite"),
        ("output_every", "-1", "output interval -1 must be finite"),
        ("adaptive", "-1", "error tolerance -1 must be positive"),
        (
            "newton",
            "velocity(-1)",
            "Newton tolerance -1 must be positive",
        ),
        ("newton", "fixed(1000000000000)", "at most 1000 corrections"),
        (
            "step",
            "1e-300",
            "step 1e-300 is below what the time resolves",
        ),
        ("output_every", "1e-300", "output interval 1e-300 is below"),
    ];
    for (key, value, message) in bad {
        let line = format!("simulate {{ {key} = {value}; }}");
        let text = format!("body b: rigid_body {{ mass = 1; inertia = [1, 1, 1]; }}\n{line}\n");
        let p = temp_model("settings.fd", &text);
        let col = line.find(value).unwrap() + 1;
        for cmd in ["check", "run"] {
            let out = fdc(&[cmd, p.to_str().unwrap()]);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(
                out.status.code(),
                Some(1),
                "{cmd} {key} = {value}: {stderr}"
            );
            assert!(stderr.contains("E0920"), "{cmd} {key} = {value}: {stderr}");
            assert!(stderr.contains(message), "{cmd} {key} = {value}: {stderr}");
            assert!(
                stderr.contains(&format!("settings.fd:2:{col}")),
                "{cmd} {key} = {value}: {stderr}"
            );
            // Readable numbers: no tiny value printed with all its 300 digits.
            let error = stderr.lines().find(|l| l.contains("E0920")).unwrap();
            assert!(error.len() < 160, "{error}");
        }
    }
}
