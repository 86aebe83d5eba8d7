//! The loads the page draws as arrows (`NAME.load.*`, read from each force element's
//! own force vector) against closed forms and the elements' own outputs, and the
//! modes of a re-run with the panel's values.

use crate::common;

use common::save;
use fdc_viewer::{Run, Session, SessionOptions, State};
use serde_json::Value;
use std::path::Path;
use std::time::{Duration, Instant};

/// A bushing to ground, a force of the model's own type at a point (turning with
/// time) and one without a point (growing with time), no gravity: the top view shows
/// every arrow in its plane.
pub const LOADS: &str = "
force swirl(b: body) {
    param at: vec3;
    param f = 2;
    param w = 5;
    apply force f*[cos(w*t), sin(w*t), 0] on b at b.local(at);
}
force pull(b: body) {
    apply force [0, 3*t, 0] on b;
}
body a: rigid_body { mass = 1; inertia = [1e-3, 1e-3, 1e-3]; velocity = [0, 0.3, 0]; }
force bush: bushing(a) { at = [0.1, 0, 0]; stiffness = [40, 10, 1000]; }
body c: rigid_body { mass = 1; inertia = [1e-3, 1e-3, 1e-3]; position = [0.6, 0, 0]; }
force spin: swirl(c) { at = [0.65, 0, 0]; }
body d: rigid_body { mass = 1; inertia = [1e-3, 1e-3, 1e-3]; position = [1.2, 0, 0]; }
force tug: pull(d);
simulate { end = 0.5; step = 1e-3; output_every = 0.01; }
";

/// Column `name` of `run`, every row.
pub fn column(run: &Run, name: &str) -> Vec<f64> {
    let i = (run.channels.iter().position(|c| c == name)).unwrap_or_else(|| panic!("{name}"));
    run.rows.iter().map(|r| r[i]).collect()
}

fn vector(run: &Run, name: &str) -> Vec<[f64; 3]> {
    let [x, y, z] = ["x", "y", "z"].map(|c| column(run, &format!("{name}.{c}")));
    (0..x.len()).map(|k| [x[k], y[k], z[k]]).collect()
}

fn run_of(dir: &Path, text: &str) -> State {
    let model = dir.join("m.fd");
    save(&model, text);
    let state = Session::run_once(&SessionOptions::new(&model));
    let run = state.runs.last().expect("a run");
    assert!(run.error.is_none() && run.done, "{:?}", run.error);
    state
}

#[test]
fn loads_of_a_bushing_and_general_forces() {
    let dir = tempfile::tempdir().unwrap();
    let state = run_of(dir.path(), LOADS);
    let run = state.runs.last().unwrap();
    let bodies: Vec<_> = (run.loads.iter())
        .map(|l| (l.element.as_str(), l.body.as_str()))
        .collect();
    assert_eq!(bodies, [("bush", "a"), ("spin", "c"), ("tug", "d")]);
    // The bushing to ground: K2 = I, so the force on `a` is −k d componentwise.
    let (load, d) = (vector(run, "bush.load"), vector(run, "bush.deflection"));
    let k = [40.0, 10.0, 1000.0];
    let mut peak: f64 = 0.0;
    for (f, d) in load.iter().zip(&d) {
        for i in 0..3 {
            assert!((f[i] + k[i] * d[i]).abs() < 1e-9, "{f:?} vs d = {d:?}");
        }
        peak = peak.max(f[1].abs());
    }
    assert!(peak > 0.5, "the bushing hardly moved: {peak} N");
    // The general forces: their expressions in t.
    for (k, &t) in run.times.iter().enumerate() {
        let f = vector(run, "spin.load")[k];
        let want = [2.0 * (5.0 * t).cos(), 2.0 * (5.0 * t).sin(), 0.0];
        let g = vector(run, "tug.load")[k];
        for i in 0..3 {
            assert!((f[i] - want[i]).abs() < 1e-12, "t = {t}: {f:?}");
            assert!(
                (g[i] - [0.0, 3.0 * t, 0.0][i]).abs() < 1e-12,
                "t = {t}: {g:?}"
            );
        }
    }
}

/// Display only: a system that does not ask for loads has the model's channels alone
/// (what `fdc run` writes); asking adds three per force element after them, and the
/// model's own channels keep their values.
#[test]
fn loads_are_extra_channels_on_request_only() {
    use fdc_driver::{pipeline::BuildOptions, template::Template};
    use fdc_runtime::{MemorySink, System};
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("m.fd");
    save(&model, LOADS);
    let t = Template::build(&model, &BuildOptions::default()).unwrap();
    let inst = t.instantiate(&[]).unwrap();
    let settings =
        fdc_driver::settings::runtime_settings(&inst.settings, &Default::default()).unwrap();
    let run = |loads: bool| {
        let mut sys = System::new(inst.model.clone()).unwrap();
        if loads {
            sys.with_loads();
        }
        let mut sink = MemorySink::default();
        sys.run(&settings, &mut sink).unwrap();
        sink
    };
    let (plain, with) = (run(false), run(true));
    assert!(
        plain.names.iter().all(|n| !n.contains(".load.")),
        "{:?}",
        plain.names
    );
    let n = plain.names.len();
    assert_eq!(with.names[..n], plain.names[..]);
    assert_eq!(with.names.len(), n + 9);
    assert_eq!(with.names[n], "bush.load.x");
    for (a, b) in plain.rows.iter().zip(&with.rows) {
        assert_eq!(a[..], b[..n]);
    }
}

#[test]
fn load_of_a_tyre_and_a_spring() {
    // The quarter car on a flat road: the tyre's force is fx ex + fy ey + fz n with
    // n = z, and the coil-over's force on the hub is its tension along the spring.
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/quarter_car_tyre.fd");
    let text = std::fs::read_to_string(p).unwrap();
    let text = text
        .replace("param roughness = 0.01;", "param roughness = 0;")
        .replace("end = 4;", "end = 0.3;");
    let dir = tempfile::tempdir().unwrap();
    let state = run_of(dir.path(), &text);
    let run = state.runs.last().unwrap();
    let load = vector(run, "tyre.load");
    let [fx, fy, fz] = ["fx", "fy", "fz"].map(|c| column(run, &format!("tyre.{c}")));
    for k in 0..load.len() {
        let f = load[k];
        let tol = 1e-9 * fz[k].abs().max(1.0);
        assert!((f[2] - fz[k]).abs() < tol, "row {k}: {f:?} vs fz {}", fz[k]);
        let planar = f[0].hypot(f[1]) - fx[k].hypot(fy[k]);
        assert!(
            planar.abs() < tol,
            "row {k}: {f:?} vs fx {} fy {}",
            fx[k],
            fy[k]
        );
    }
    assert!(fz.iter().all(|&z| z > 1000.0), "the tyre carries the car");
    // The spring acts along z between its points: on the hub, + tension upward.
    let spring = vector(run, "coilover.load");
    let tension = column(run, "coilover.tension");
    for (f, s) in spring.iter().zip(&tension) {
        assert!(f[0].abs() < 1e-9 && f[1].abs() < 1e-9, "{f:?}");
        assert!((f[2] - s).abs() < 1e-9 * s.abs().max(1.0), "{f:?} vs {s}");
    }
}

/// The one mode of the spring-mass slider with the values the page sets: a stiffer
/// spring raises its frequency by √(k2/k1), the closed form √(k/m)/2π.
#[test]
fn modes_of_a_rerun_use_its_values() {
    let model = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/spring_mass.fd");
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("spring_mass.fd");
    save(&copy, std::fs::read_to_string(model).unwrap());
    let session = Session::start(SessionOptions::new(&copy));
    let freq = |m: &Value| m["modes"][0]["frequency_hz"].as_f64().unwrap();
    let t0 = Instant::now();
    let wait = |what: &str, pred: &dyn Fn(&State) -> bool| loop {
        if pred(&session.state()) {
            return;
        }
        assert!(t0.elapsed() < Duration::from_secs(300), "no {what}");
        std::thread::sleep(Duration::from_millis(100));
    };
    wait("first run", &|s| s.runs.iter().any(|r| r.done));
    let f1 = freq(session.state().modes.as_ref().unwrap());
    let closed = |k: f64| (k / 1.0f64).sqrt() / (2.0 * std::f64::consts::PI);
    assert!((f1 - closed(100.0)).abs() < 1e-6 * f1, "{f1}");
    session.rerun(vec![("k".into(), 400.0)]);
    wait("re-run", &|s| {
        s.runs.iter().any(|r| !r.set.is_empty() && r.done)
    });
    let s = session.state();
    let run = s.runs.iter().find(|r| !r.set.is_empty()).unwrap();
    let f2 = freq(run.modes.as_ref().unwrap());
    assert!((f2 / f1 - 2.0).abs() < 1e-6, "{f2} / {f1}");
    // The page reads the run's modes beside its rows.
    let runs = s.summary()["runs"].clone();
    let listed = runs
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["set"][0][1] == 400.0);
    assert_eq!(freq(&listed.unwrap()["modes"]), f2);
    // The build's own modes stay those of the model's values.
    assert_eq!(freq(s.modes.as_ref().unwrap()), f1);
}
