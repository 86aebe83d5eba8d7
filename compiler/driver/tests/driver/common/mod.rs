//! Helpers of the driver's integration tests: build a model (example file or text)
//! without the object cache, simulate it, read channels; reference functions (elliptic
//! integral, zero crossings).
#![allow(dead_code)] // each test file uses its own subset

pub mod wheel;

use fdc_driver::pipeline::{build, render, BuildError, BuildOptions, Built};
use fdc_driver::settings::{runtime_settings, Overrides};
use fdc_runtime::{MemorySink, RunStats, Settings, System};
use std::path::{Path, PathBuf};

pub fn example_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(name)
}

pub fn no_cache() -> BuildOptions {
    BuildOptions {
        simplify: true,
        backend: fdc_backend::Options {
            cache: fdc_backend::CacheMode::Off,
            ..Default::default()
        },
        ..Default::default()
    }
}

/// Builds or fails the test with the rendered diagnostics.
pub fn build_or_panic(path: &Path, opts: &BuildOptions) -> Built {
    match build(path, opts) {
        Ok(b) => b,
        Err(BuildError::Model { analysis, extra }) => panic!("{}", render(&analysis, &extra)),
        Err(BuildError::Backend(e) | BuildError::Usage(e)) => panic!("{e}"),
    }
}

pub fn build_example(name: &str) -> Built {
    build_or_panic(&example_path(name), &no_cache())
}

/// Builds a model given as text (written to a temporary file).
pub fn build_text(tag: &str, text: &str) -> Built {
    let dir = std::env::temp_dir().join(format!("fdc-driver-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("model.fd");
    std::fs::write(&path, text).unwrap();
    let b = build_or_panic(&path, &no_cache());
    let _ = std::fs::remove_dir_all(&dir);
    b
}

/// Runs with the model's settings changed by `tweak`.
pub fn simulate(b: Built, tweak: impl FnOnce(&mut Settings)) -> (MemorySink, RunStats) {
    let mut s = runtime_settings(&b.settings, &Overrides::default()).unwrap();
    tweak(&mut s);
    let mut sys = System::new(b.model).unwrap();
    let mut sink = MemorySink::default();
    let stats = sys.run(&s, &mut sink).unwrap();
    (sink, stats)
}

pub fn channel(s: &MemorySink, name: &str) -> Vec<f64> {
    s.channel(name)
        .unwrap_or_else(|| panic!("no channel {name}; have {:?}", s.names))
}

/// K(k) by the arithmetic–geometric mean: K = π / (2 AGM(1, √(1−k²))).
pub fn elliptic_k(k: f64) -> f64 {
    let (mut a, mut b) = (1.0f64, (1.0 - k * k).sqrt());
    for _ in 0..30 {
        let (an, bn) = ((a + b) / 2.0, (a * b).sqrt());
        a = an;
        b = bn;
    }
    std::f64::consts::PI / (2.0 * a)
}

/// Times where `x` crosses zero from above, linearly interpolated.
pub fn down_crossings(t: &[f64], x: &[f64]) -> Vec<f64> {
    let mut out = Vec::new();
    for i in 1..x.len() {
        if x[i - 1] > 0.0 && x[i] <= 0.0 {
            out.push(t[i - 1] + (t[i] - t[i - 1]) * x[i - 1] / (x[i - 1] - x[i]));
        }
    }
    out
}
