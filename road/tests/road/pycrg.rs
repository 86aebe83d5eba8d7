//! fdc-road against the official OpenCRG C library (through the `pycrg` Python
//! package, a test-only dependency installed by `.ci/run`): elevation, the curve
//! mapping both ways and the reference line of every sample road, at random points on
//! and around the roads, to 1e-9 m.
//!
//! The Python interpreter is `$FDC_PYCRG_PYTHON`, else `target/ci-venv/bin/python`.
//! Without one that imports pycrg the test says so and passes, unless
//! `FDC_REQUIRE_PYCRG=1` (set by `.ci/run`), when it fails.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use fdc_road::Crg;
use serde_json::{json, Value};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn python() -> Option<PathBuf> {
    let candidates = [
        std::env::var_os("FDC_PYCRG_PYTHON").map(PathBuf::from),
        Some(root().join("target/ci-venv/bin/python")),
    ];
    for p in candidates.into_iter().flatten() {
        let ok = Command::new(&p)
            .args(["-c", "import pycrg"])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if ok {
            return Some(p);
        }
    }
    None
}

/// A small deterministic generator (no test randomness from the environment).
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap_or(f64::NAN))
        .collect()
}

fn pairs(v: &Value) -> Vec<(f64, f64)> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let p = floats(p);
            (p[0], p[1])
        })
        .collect()
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a.is_nan() && b.is_nan()) || (a - b).abs() <= tol
}

const ROADS: &[&str] = &[
    "straight",
    "curved",
    "banked",
    "nans",
    "nans_mods",
    "friction",
];

#[test]
fn sample_roads_equal_the_reference_library() {
    let Some(py) = python() else {
        assert!(
            std::env::var("FDC_REQUIRE_PYCRG").as_deref() != Ok("1"),
            "FDC_REQUIRE_PYCRG=1 but no Python with pycrg (set FDC_PYCRG_PYTHON)"
        );
        eprintln!("no Python with pycrg: the reference-library comparison did not run");
        return;
    };
    let mut child = Command::new(py)
        .arg(root().join("road/tests/pycrg_eval.py"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut rng = Lcg(17);
    let mut requests = vec![];
    let mut answers = vec![];
    for name in ROADS {
        let file = root().join(format!("examples/roads/{name}.crg"));
        let crg = Crg::open(&file).unwrap_or_else(|e| panic!("{name}: {e}"));
        let (u0, u1) = crg.u_range();
        let (v0, v1) = crg.v_range();
        // Random (u, v) on the road and up to 3 m beyond its ends and 0.6 m beyond
        // its borders, plus every reference line point.
        let mut uv: Vec<(f64, f64)> = (0..300)
            .map(|_| {
                let u = u0 - 3.0 + (u1 - u0 + 6.0) * rng.next();
                (u, v0 - 0.6 + (v1 - v0 + 1.2) * rng.next())
            })
            .collect();
        let nu = crg.reference_line().count();
        uv.extend((0..nu).map(|i| (u0 + (u1 - u0) * i as f64 / (nu - 1) as f64, 0.0)));
        // (x, y) inside the road band, where the inverse mapping is unique.
        let xy: Vec<(f64, f64)> = (0..300)
            .map(|_| {
                let u = u0 + (u1 - u0) * rng.next();
                crg.uv_to_xy(u, v0 + (v1 - v0) * rng.next())
            })
            .collect();
        // One request, one answer line (no pipe can fill up while the other waits).
        let req = json!({"file": file, "xy": xy, "uv": uv});
        writeln!(stdin, "{req}").unwrap();
        stdin.flush().unwrap();
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        assert!(!line.is_empty(), "{name}: the pycrg helper gave no answer");
        answers.push(serde_json::from_str::<Value>(&line).unwrap());
        requests.push((name, crg, uv, xy));
    }
    drop(stdin);
    assert!(child.wait().unwrap().success(), "pycrg helper failed");
    let mut worst = [0.0f64; 4];
    for ((name, crg, uv, xy), lib) in requests.iter().zip(&answers) {
        assert_eq!(
            floats(&lib["u_range"]),
            [crg.u_range().0, crg.u_range().1],
            "{name}"
        );
        assert_eq!(
            floats(&lib["v_range"]),
            [crg.v_range().0, crg.v_range().1],
            "{name}"
        );
        for (k, &(u, v)) in uv.iter().enumerate() {
            let z = crg.uv_to_z(u, v);
            let zl = floats(&lib["uv_z"])[k];
            assert!(
                close(z, zl, 1e-9),
                "{name}: z({u}, {v}) = {z}, library {zl}"
            );
            let (x, y) = crg.uv_to_xy(u, v);
            let (xl, yl) = pairs(&lib["uv_xy"])[k];
            assert!(
                close(x, xl, 1e-9) && close(y, yl, 1e-9),
                "{name}: xy({u}, {v}) = ({x}, {y}), library ({xl}, {yl})"
            );
            worst[0] = worst[0].max((z - zl).abs());
            worst[1] = worst[1].max((x - xl).abs().max((y - yl).abs()));
        }
        for (k, &(x, y)) in xy.iter().enumerate() {
            let (u, v) = crg.xy_to_uv(x, y);
            let (ul, vl) = pairs(&lib["xy_uv"])[k];
            assert!(
                close(u, ul, 1e-9) && close(v, vl, 1e-9),
                "{name}: uv({x}, {y}) = ({u}, {v}), library ({ul}, {vl})"
            );
            let z = crg.xy_to_z(x, y);
            let zl = floats(&lib["xy_z"])[k];
            assert!(
                close(z, zl, 1e-9),
                "{name}: z at ({x}, {y}) = {z}, library {zl}"
            );
            worst[2] = worst[2].max((u - ul).abs().max((v - vl).abs()));
            worst[3] = worst[3].max((z - zl).abs());
        }
    }
    eprintln!("largest differences to the library: z(u,v) {:.1e}, xy(u,v) {:.1e}, uv(x,y) {:.1e}, z(x,y) {:.1e}", worst[0], worst[1], worst[2], worst[3]);
}
