//! The four-bar of `examples/four_bar.fd` as written, from `planar` + `planar_revolute`
//! joints (no redundant row), and with 3-D `revolute` joints instead (the runtime
//! removes 3 redundant rows): the same motion.

use crate::common;

use common::{build_text, channel, example_path};
use fdc_driver::settings::{runtime_settings, Overrides};
use fdc_runtime::{MemorySink, System};

/// Runs a model text for 1.5 s; returns the results and the removed redundant rows.
fn run(tag: &str, text: &str) -> (MemorySink, usize) {
    let b = build_text(tag, text);
    let mut s = runtime_settings(&b.settings, &Overrides::default()).unwrap();
    s.end = 1.5;
    let mut sys = System::new(b.model).unwrap();
    let mut sink = MemorySink::default();
    sys.run(&s, &mut sink).unwrap();
    (sink, sys.redundant_removed())
}

#[test]
fn a_planar_four_bar_moves_like_the_revolute_one_without_redundant_rows() {
    let planar = std::fs::read_to_string(example_path("four_bar.fd")).unwrap();
    let mut revolute = String::new();
    for line in planar.lines() {
        if line.starts_with("joint flat_") {
            continue;
        }
        revolute.push_str(&line.replace(": planar_revolute(", ": revolute("));
        revolute.push('\n');
    }
    assert!(revolute.contains(": revolute(") && planar.contains(": planar(crank)"));
    let (a, removed_a) = run("four-bar-revolute", &revolute);
    let (b, removed_b) = run("four-bar-planar", &planar);
    assert_eq!(removed_a, 3, "a loop of revolute joints repeats 3 rows");
    assert_eq!(removed_b, 0, "planar joints need no removal");
    assert_eq!(a.times, b.times);
    for ch in [
        "rocker.R.x",
        "rocker.R.y",
        "coupler.omega.z",
        "rocker.Rdot.x",
    ] {
        let (x, y) = (channel(&a, ch), channel(&b, ch));
        let worst = x
            .iter()
            .zip(&y)
            .fold(0.0f64, |m, (p, q)| m.max((p - q).abs()));
        assert!(
            worst < 1e-6,
            "{ch}: revolute and planar differ by {worst:e}"
        );
    }
    // Out of the plane nothing moves.
    let z = channel(&b, "coupler.R.z");
    assert!(z.iter().all(|z| z.abs() < 1e-12), "coupler left the plane");
}
