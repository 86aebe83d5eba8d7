//! The real binary on legacy `.fds` files: `fdc check` names line:col, `fdc import`
//! writes a model `fdc check` accepts, `fdc FILE.fds` writes channels with the `.fds`
//! names.

use std::path::PathBuf;
use std::process::{Command, Output};

fn fdc(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fdc"))
        .args(args)
        .output()
        .expect("the fdc binary runs")
}

fn models() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fds/tests/models")
}

/// A copy of the test models (with their table files) in a directory of its own.
fn work_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fdc-cli-fds-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for e in std::fs::read_dir(models()).unwrap() {
        let p = e.unwrap().path();
        std::fs::copy(&p, dir.join(p.file_name().unwrap())).unwrap();
    }
    dir
}

#[test]
fn check_names_line_and_column_in_the_fds_file() {
    let dir = work_dir("check");
    let text = std::fs::read_to_string(dir.join("oscillator.fds")).unwrap();
    let bad = dir.join("bad.fds");
    std::fs::write(&bad, text.replace("PARVAL[k]", "PARVAL[kk]")).unwrap();
    let out = fdc(&["check", bad.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    // Line 78 of the model: `ForceExpression = -PARVAL[kk]…`, `kk` at column 28.
    assert!(
        err.contains("E1604") && err.contains("bad.fds:78:28"),
        "{err}"
    );
    let ok = fdc(&["check", dir.join("oscillator.fds").to_str().unwrap()]);
    assert_eq!(
        ok.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn import_writes_a_model_that_checks_and_run_writes_fds_names() {
    let dir = work_dir("import");
    let fd = dir.join("spline_force.fd");
    let out = fdc(&[
        "import",
        dir.join("spline_force.fds").to_str().unwrap(),
        "-o",
        fd.to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&fd).unwrap();
    // Next to the `.fds` file: the table path stays relative.
    assert!(
        text.contains("spline push = table(\"push.txt\", 0, 1, 1);"),
        "{text}"
    );
    let check = fdc(&["check", fd.to_str().unwrap()]);
    assert_eq!(
        check.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&check.stderr)
    );

    let csv = dir.join("osc.csv");
    let run = fdc(&[
        dir.join("oscillator.fds").to_str().unwrap(),
        "--end",
        "0.05",
        "-q",
        "-o",
        csv.to_str().unwrap(),
    ]);
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let header = std::fs::read_to_string(&csv).unwrap();
    let header = header.lines().next().unwrap();
    for c in [
        "mass_1.R.x",
        "prismatic_x_to_ground.dx.lambda",
        "x",
        "x_dot",
        "spring.value",
        "mass_1.norm",
    ] {
        assert!(header.split(',').any(|h| h == c), "no {c} in {header}");
    }
    let bad = fdc(&[
        dir.join("oscillator.fds").to_str().unwrap(),
        "--profile",
        "v3",
    ]);
    assert_eq!(bad.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&dir);
}
