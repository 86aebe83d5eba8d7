//! The page in a real browser: headless Chromium driven over WebDriver (chromedriver;
//! both from Debian, installed by `.ci/run`). Loads `examples/slider_crank.fd`, takes
//! screenshots and asserts on pixels against the result rows; the screenshots stay in
//! `target/viewer-screenshots/` for a person to look at.

#[path = "browser/webdriver.rs"]
mod webdriver;

use fdc_viewer::{export_html, Server, Session, SessionOptions};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use webdriver::{Browser, Shot};

fn shots_dir() -> PathBuf {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/viewer-screenshots");
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Waits until the page has the scene and every run is finished, with at least
/// `scene` builds behind it.
fn wait_ready(b: &Browser, scene: u64) -> Value {
    let t0 = Instant::now();
    loop {
        let s =
            b.exec("return window.fdcView && window.fdcView.ready ? window.fdcView.state : null");
        if s["scene"].as_u64().is_some_and(|v| v >= scene) {
            return s;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(300),
            "page not ready: {s}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The pixel of the global point (x, y) on the top view (orthographic along −z).
fn pixel_of(cam: &Value, x: f64, y: f64) -> (usize, usize) {
    let f = |k: &str| cam[k].as_f64().unwrap();
    let (cx, cy) = (
        cam["target"][0].as_f64().unwrap(),
        cam["target"][1].as_f64().unwrap(),
    );
    let px = (x - (cx + f("left"))) / (f("right") - f("left")) * f("width");
    let py = (cy + f("top") - y) / (f("top") - f("bottom")) * f("height");
    (px as usize, py as usize)
}

/// The crank's centre at the output time nearest `t`, read from the run's rows
/// (independent of the page): (time, x, y).
fn crank_at(state: &fdc_viewer::State, t: f64) -> (f64, f64, f64) {
    let run = state.runs.last().unwrap();
    let col = |n: &str| run.channels.iter().position(|c| c == n).unwrap();
    let (ix, iy) = (col("crank.R.x"), col("crank.R.y"));
    let k = (0..run.times.len())
        .min_by(|&a, &b| {
            (run.times[a] - t)
                .abs()
                .total_cmp(&(run.times[b] - t).abs())
        })
        .unwrap();
    (run.times[k], run.rows[k][ix], run.rows[k][iy])
}

fn is_colour(px: [u8; 3], rgb: u32) -> bool {
    let want = [(rgb >> 16) as u8, (rgb >> 8) as u8, rgb as u8];
    px.iter().zip(want).all(|(a, b)| a.abs_diff(b) <= 12)
}

/// Shows time `t`, takes a screenshot and saves it as `name`.
fn shot_at(b: &Browser, t: f64, name: &str) -> Shot {
    b.exec(&format!("window.fdcView.setTime({t}); return 0"));
    std::thread::sleep(Duration::from_millis(150));
    let s = b.screenshot();
    s.save(&shots_dir().join(name));
    s
}

const VIEW: &str = "?bare=1&view=top&flat=1&t=0";

#[test]
fn slider_crank_in_chromium() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("slider_crank.fd");
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/slider_crank.fd");
    let text = std::fs::read_to_string(example).unwrap();
    std::fs::write(&model, &text).unwrap();
    let server = Arc::new(Server::start(SessionOptions::new(&model), 0).unwrap());
    let s = server.clone();
    std::thread::spawn(move || s.serve());
    let b = Browser::start();
    b.goto(&format!("http://127.0.0.1:{}/{VIEW}", server.port()));
    wait_ready(&b, 1);
    let crank = b
        .exec("return window.fdcView.colours().crank")
        .as_u64()
        .unwrap() as u32;

    // The crank's pixels are where its result rows put it, at two times a quarter
    // turn apart (omega0 = 10 rad/s); at the second the first place is empty.
    let mut first = None;
    for (t, name) in [(0.0, "crank_t0.png"), (0.157, "crank_t0157.png")] {
        let shot = shot_at(&b, t, name);
        let (tr, x, y) = crank_at(&server.session().state(), t);
        let cam = b.exec("return window.fdcView.camera()");
        let (px, py) = pixel_of(&cam, x, y);
        assert!(
            is_colour(shot.rgb(px, py), crank),
            "t = {tr}: crank at ({x:.4}, {y:.4}) -> pixel ({px}, {py}) is {:?}",
            shot.rgb(px, py)
        );
        if let Some((fx, fy)) = first {
            let (qx, qy) = pixel_of(&cam, fx, fy);
            assert!(
                !is_colour(shot.rgb(qx, qy), crank),
                "the crank stayed at ({fx}, {fy})"
            );
        }
        first = Some((x, y));
    }
    let before = shot_at(&b, 0.0, "before_edit.png");

    // Editing the file rebuilds: a longer crank (r = 0.15) moves its centre to x = 0.075.
    std::fs::write(&model, text.replace("param r = 0.1;", "param r = 0.15;")).unwrap();
    wait_ready(&b, 2);
    let after = shot_at(&b, 0.0, "after_edit.png");
    let (_, x, y) = crank_at(&server.session().state(), 0.0);
    assert!((x - 0.075).abs() < 1e-12, "crank x = {x}");
    let (px, py) = pixel_of(&b.exec("return window.fdcView.camera()"), x, y);
    assert!(
        is_colour(after.rgb(px, py), crank),
        "after the edit: {:?}",
        after.rgb(px, py)
    );
    let changed = before.fraction_differing(&after);
    assert!(
        changed > 0.01,
        "the picture changed in {changed} of the pixels"
    );

    // A broken file: the diagnostics with line:col are on the page, the scene stays.
    std::fs::write(&model, text.replace("mass = 0.5;", "mass = ;")).unwrap();
    let t0 = Instant::now();
    let diag = loop {
        let d = b.exec("return document.getElementById('diagnostics').textContent");
        if d.as_str().is_some_and(|d| !d.is_empty()) {
            break d.as_str().unwrap().to_string();
        }
        assert!(
            t0.elapsed() < Duration::from_secs(120),
            "no diagnostics on the page"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    assert!(diag.contains("slider_crank.fd:11:"), "{diag}");
    let broken = shot_at(&b, 0.0, "broken.png");
    assert!(broken.fraction_differing(&after) < 1e-3);

    // The whole page (panels, plot) for a person to look at (docs/viewer.png).
    std::fs::write(&model, text.replace("param r = 0.1;", "param r = 0.15;")).unwrap();
    b.goto(&format!("http://127.0.0.1:{}/?t=0.3", server.port()));
    wait_ready(&b, 3);
    b.exec(
        "const s = document.getElementById('channels'); s.value = 'piston'; s.onchange(); return 0",
    );
    shot_at(&b, 0.3, "page.png");

    // The exported file of the edited model renders as the live page did.
    let state = Session::run_once(&SessionOptions::new(&model));
    let out = dir.path().join("export.html");
    std::fs::write(&out, export_html(&state)).unwrap();
    b.goto(&format!("file://{}{VIEW}", out.display()));
    wait_ready(&b, 1);
    let exported = shot_at(&b, 0.0, "export.png");
    let d = after.fraction_differing(&exported);
    assert!(
        d < 1e-3,
        "export differs from the live page in {d} of the pixels"
    );
}
