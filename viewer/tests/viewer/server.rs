//! The server without a browser: who it answers, which files it serves, and that a
//! broken model or a failing run leaves it answering.

use crate::common;

use common::save;
use fdc_viewer::{resolve_file, Server, SessionOptions};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn start(model: &Path) -> Arc<Server> {
    let server = Arc::new(Server::start(SessionOptions::new(model), 0).expect("server"));
    let s = server.clone();
    std::thread::spawn(move || s.serve());
    server
}

/// One HTTP/1.0 request with this Host header; the status code and the body.
fn request(port: u16, method: &str, path: &str, host: &str, body: &str) -> (u16, String) {
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        c,
        "{method} {path} HTTP/1.0\r\nHost: {host}\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut text = String::new();
    c.read_to_string(&mut text).unwrap();
    let code = text[9..12].parse().unwrap();
    let body = text.split_once("\r\n\r\n").map_or("", |x| x.1).to_string();
    (code, body)
}

fn get(port: u16, path: &str) -> (u16, String) {
    request(port, "GET", path, "127.0.0.1", "")
}

fn state(port: u16) -> serde_json::Value {
    serde_json::from_str(&get(port, "/api/state").1).unwrap()
}

/// Polls the state until `pred` holds (builds take seconds on a loaded machine).
fn wait_for(port: u16, what: &str, pred: impl Fn(&serde_json::Value) -> bool) -> serde_json::Value {
    let t0 = Instant::now();
    loop {
        let s = state(port);
        if pred(&s) {
            return s;
        }
        assert!(t0.elapsed() < Duration::from_secs(300), "no {what}: {s}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn settled(s: &serde_json::Value) -> bool {
    (s["status"] == "ready" || s["status"] == "failed")
        && s["runs"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["done"] == true)
}

const PENDULUM: &str = "param len = 1;\ngravity [0, 0, -9.81];\n\
body bob: rigid_body { mass = 1; inertia = [0.01, 0.01, 0.01]; position = [len, 0, 0]; }\n\
joint pivot: spherical(bob) { at = [0, 0, 0]; }\n\
simulate { end = 0.05; step = 1e-3; output_every = 1e-2; }\n";

#[test]
fn answers_only_localhost_names() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("m.fd");
    save(&model, PENDULUM);
    let s = start(&model);
    let (code, _) = request(s.port(), "GET", "/api/state", "evil.example:80", "");
    assert_eq!(code, 403);
    let (code, _) = request(s.port(), "GET", "/", "localhost", "");
    assert_eq!(code, 200);
}

#[test]
fn serves_the_model_folder_only() {
    let outer = tempfile::tempdir().unwrap();
    let dir = outer.path().join("model");
    std::fs::create_dir_all(dir.join("meshes")).unwrap();
    std::fs::write(outer.path().join("secret.txt"), "secret").unwrap();
    std::fs::write(dir.join("meshes/part.stl"), "solid part").unwrap();
    std::os::unix::fs::symlink(outer.path().join("secret.txt"), dir.join("link.txt")).unwrap();
    let model = dir.join("m.fd");
    save(&model, PENDULUM);
    let s = start(&model);
    assert_eq!(
        get(s.port(), "/files/meshes/part.stl"),
        (200, "solid part".into())
    );
    for bad in [
        "/files/../secret.txt",
        "/files/%2e%2e/secret.txt",
        "/files/meshes/..%2f..%2fsecret.txt",
        "/files//etc/passwd",
        "/files/%2fetc%2fpasswd",
        "/files/link.txt",
        "/files/meshes",
    ] {
        let (code, body) = get(s.port(), bad);
        assert_eq!(code, 404, "{bad}: {body}");
    }
    let root = dir.canonicalize().unwrap();
    assert_eq!(resolve_file(&root, "m.fd"), Some(root.join("m.fd")));
    assert_eq!(resolve_file(&root, "meshes/../m.fd"), None);
}

#[test]
fn survives_a_broken_model_and_a_failing_run() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("m.fd");
    save(&model, PENDULUM.replace("mass = 1;", "mass = ;"));
    let s = start(&model);
    let p = s.port();
    let st = wait_for(p, "failed build", |s| s["status"] == "failed");
    let diag = st["diagnostics"].as_str().unwrap();
    // file:line:col of the missing value: line 3.
    assert!(diag.contains("m.fd:3:"), "{diag}");
    assert!(st["runs"].as_array().unwrap().is_empty());

    // Fixed: the build and the run go through; 6 rows for t = 0, 0.01, ..., 0.05.
    save(&model, PENDULUM);
    let st = wait_for(p, "a run", |s| {
        s["status"] == "ready" && settled(s) && !s["runs"].as_array().unwrap().is_empty()
    });
    assert_eq!(st["runs"][0]["rows"], 6, "{st}");
    assert_eq!(st["scene"]["bodies"][0]["name"], "bob");

    // A parameter the model does not have: the run fails with the reason, the
    // server goes on and the run before stays.
    let (code, _) = request(p, "POST", "/api/rerun", "localhost", "nosuch=2\n");
    assert_eq!(code, 200);
    let st = wait_for(p, "failed run", |s| {
        s["runs"].as_array().unwrap().len() == 2 && settled(s)
    });
    let err = st["runs"][1]["error"].as_str().unwrap();
    assert!(err.contains("nosuch"), "{err}");
    assert_eq!(st["runs"][0]["rows"], 6);

    // Broken again: the diagnostics are shown and the last good scene stays.
    save(&model, PENDULUM.replace("bob", "bob bob"));
    let st = wait_for(p, "failed rebuild", |s| s["status"] == "failed");
    assert_eq!(st["scene"]["bodies"][0]["name"], "bob");
    assert_eq!(get(p, "/api/run/0?from=4").0, 200);

    // A parameter set re-runs without touching the file: len = 2 puts the bob at x = 2.
    save(&model, PENDULUM);
    wait_for(p, "rebuild", |s| s["status"] == "ready" && settled(s));
    request(p, "POST", "/api/rerun", "localhost", "len=2\n");
    let st = wait_for(p, "run with len=2", |s| {
        settled(s)
            && s["runs"]
                .as_array()
                .unwrap()
                .iter()
                .any(|r| r["set"][0][0] == "len")
    });
    // The run with the override, not the last one: under load a late rebuild of the
    // saved file may have added a run after it.
    let run = (st["runs"].as_array().unwrap().iter())
        .rfind(|r| r["set"][0][0] == "len")
        .unwrap();
    let id = run["id"].as_u64().unwrap();
    let rows: serde_json::Value =
        serde_json::from_str(&get(p, &format!("/api/run/{id}")).1).unwrap();
    let x = rows["channels"]
        .as_array()
        .unwrap()
        .iter()
        .position(|c| c == "bob.R.x")
        .unwrap();
    assert_eq!(rows["rows"][0][x], 2.0);
}

#[test]
fn shows_a_result_file_with_its_model() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("m.fd");
    save(&model, PENDULUM);
    let csv = dir.path().join("m.csv");
    std::fs::write(&csv, "time,bob.R.x,bob.R.y\n0,1,0\n0.5,0.5,0.25\n").unwrap();
    let opts = SessionOptions {
        results: Some(csv.clone()),
        ..SessionOptions::new(&model)
    };
    let server = Arc::new(Server::start(opts, 0).unwrap());
    let s = server.clone();
    std::thread::spawn(move || s.serve());
    let p = server.port();
    let st = wait_for(p, "the file's run", |s| {
        settled(s) && !s["runs"].as_array().unwrap().is_empty()
    });
    assert_eq!(st["runs"][0]["rows"], 2, "{st}");
    let rows: serde_json::Value = serde_json::from_str(&get(p, "/api/run/0").1).unwrap();
    assert_eq!(rows["times"][1], 0.5);
    assert_eq!(rows["rows"][1][1], 0.25);
    assert_eq!(rows["channels"][0], "bob.R.x");
    // A broken line: the rows before it stay, the run says where.
    let mut run = fdc_viewer::Run::default();
    std::fs::write(&csv, "time,a\n0,1\n0.1,x\n").unwrap();
    let e = fdc_viewer::read_csv(&csv, &mut run).unwrap_err();
    assert!(e.contains("line 3"), "{e}");
    assert_eq!(run.rows, vec![vec![1.0]]);
}

/// While a long run goes, the state and the rows endpoint already hold some of its
/// rows: more than none and fewer than the run ends with.
#[test]
fn rows_while_running() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("m.fd");
    // 100 s of pendulum at 1 ms steps: seconds of work (not so long that the worker,
    // which goes on after the test, slows the other tests much).
    let long = PENDULUM.replace(
        "end = 0.05; step = 1e-3; output_every = 1e-2;",
        "end = 100; step = 1e-3; output_every = 1e-2;",
    );
    assert_ne!(long, PENDULUM);
    save(&model, long);
    let s = start(&model);
    let mid = wait_for(s.port(), "rows of a running run", |s| {
        s["runs"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["done"] == false && r["rows"].as_u64() > Some(0))
    });
    let run = &mid["runs"][0];
    let (id, seen) = (run["id"].as_u64().unwrap(), run["rows"].as_u64().unwrap());
    let final_rows = 10_001;
    assert!(0 < seen && seen < final_rows, "{seen} rows mid-run");
    let (code, body) = get(s.port(), &format!("/api/run/{id}?from=0"));
    assert_eq!(code, 200);
    let part: serde_json::Value = serde_json::from_str(&body).unwrap();
    let n = part["rows"].as_array().unwrap().len() as u64;
    assert!(seen <= n && n < final_rows, "{n} rows served mid-run");
    // The times are the output grid from 0.
    let t = part["times"].as_array().unwrap();
    assert_eq!(t[0].as_f64(), Some(0.0));
    assert!((t[1].as_f64().unwrap() - 0.01).abs() < 1e-12);
    let t0 = Instant::now();
    let done = wait_for(s.port(), "the end of the run", settled);
    eprintln!("rest of the run: {:?}", t0.elapsed());
    assert_eq!(done["runs"][0]["rows"], final_rows);
}
