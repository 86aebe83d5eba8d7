//! The cache level keyed by the unsimplified roles: a warm build skips the simplifier
//! and runs the same code; anything compiled into the code (a model number used in a
//! one-off element, the simplifier's identity, `--no-egraph`) misses; a parameter
//! slot hits; damaged entries are rebuilt.

use crate::common;

use common::{build_or_panic, channel, example_path, no_cache, simulate};
use fdc_driver::pipeline::{
    front_cached, recipe, recipe_with, type_funcs, BuildOptions, Built, ModelSource,
};
use fdc_runtime::MemorySink;
use std::path::{Path, PathBuf};

fn cached(dir: &Path, sets: &[(&str, f64)], simplify: bool) -> BuildOptions {
    BuildOptions {
        overrides: sets.iter().map(|(n, v)| (n.to_string(), *v)).collect(),
        simplify,
        backend: fdc_backend::Options {
            cache: fdc_backend::CacheMode::Dir(dir.to_path_buf()),
            ..Default::default()
        },
        jobs: 0,
    }
}

fn uncached(sets: &[(&str, f64)]) -> BuildOptions {
    BuildOptions {
        overrides: sets.iter().map(|(n, v)| (n.to_string(), *v)).collect(),
        ..no_cache()
    }
}

fn run_short(b: Built) -> MemorySink {
    simulate(b, |s| {
        s.end = 0.3;
        s.output_every = 0.01;
    })
    .0
}

/// Every channel of both runs, bit for bit.
fn assert_same_run(a: &MemorySink, b: &MemorySink) {
    assert_eq!(a.names, b.names);
    assert_eq!(a.times.len(), b.times.len());
    for name in &a.names {
        let (x, y) = (channel(a, name), channel(b, name));
        for (i, (x, y)) in x.iter().zip(&y).enumerate() {
            assert_eq!(x.to_bits(), y.to_bits(), "{name}[{i}]: {x} vs {y}");
        }
    }
}

fn files_ending(dir: &Path, ext: &str) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(ext))
        .collect()
}

#[test]
fn a_warm_build_skips_the_simplifier_and_runs_the_same_code() {
    let dir = tempfile::tempdir().unwrap();
    let path = example_path("pendulum.fd");
    let cold = build_or_panic(&path, &cached(dir.path(), &[], true));
    assert!(!cold.cache_hit && !cold.simplifier_skipped);
    assert!(cold.warnings.is_empty(), "{:?}", cold.warnings);
    let warm = build_or_panic(&path, &cached(dir.path(), &[], true));
    assert!(warm.cache_hit && warm.simplifier_skipped);
    assert_eq!(warm.timings.simplify, 0.0);
    assert_eq!(warm.timings.backend.codegen, 0.0);
    assert!(warm.warnings.is_empty(), "{:?}", warm.warnings);
    // Against code compiled afresh without any cache.
    let fresh = build_or_panic(&path, &no_cache());
    assert_same_run(&run_short(warm), &run_short(fresh));

    // `--no-egraph` compiles other IR: neither level may serve the simplified code.
    let raw = build_or_panic(&path, &cached(dir.path(), &[], false));
    assert!(!raw.cache_hit && !raw.simplifier_skipped);
    let raw_warm = build_or_panic(&path, &cached(dir.path(), &[], false));
    assert!(raw_warm.cache_hit && raw_warm.simplifier_skipped);
    let raw_nocache = build_or_panic(
        &path,
        &BuildOptions {
            simplify: false,
            ..uncached(&[])
        },
    );
    assert_same_run(&run_short(raw_warm), &run_short(raw_nocache));
}

/// A pendulum with a one-off drag torque: `c_r` is compiled into the drag's code,
/// `m` is a parameter slot of the body.
const DRAG: &str = r#"
param L = 1.0;
param m = 2.0;
param c_r = 0.5;
gravity [0, 0, -9.81];
body rod: rigid_body {
    mass = m;
    inertia = [1e-4, m*L^2/12, m*L^2/12];
    position = [L/2, 0, 0];
}
joint pivot: revolute(rod, ground) {
    at = [0, 0, 0];
    axis = [0, 1, 0];
}
force drag: on(rod) { apply torque -c_r * rod.omega on rod; }
output tip = rod.point([L/2, 0, 0]);
simulate { end = 0.3; step = 1e-3; output_every = 0.01; }
"#;

#[test]
fn a_compiled_in_number_misses_and_a_parameter_slot_hits() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("drag.fd");
    std::fs::write(&model, DRAG).unwrap();
    let cache = dir.path().join("cache");

    let base = build_or_panic(&model, &cached(&cache, &[], true));
    assert!(!base.cache_hit);
    let base_run = run_short(base);

    // A parameter slot: same code, and the run is that of the changed model.
    let heavy = build_or_panic(&model, &cached(&cache, &[("m", 3.0)], true));
    assert!(heavy.cache_hit && heavy.simplifier_skipped);
    assert_same_run(
        &run_short(heavy),
        &run_short(build_or_panic(&model, &uncached(&[("m", 3.0)]))),
    );

    // A compiled-in number: new code, which must be the new model's.
    let draggy = build_or_panic(&model, &cached(&cache, &[("c_r", 2.0)], true));
    assert!(!draggy.cache_hit && !draggy.simplifier_skipped);
    let draggy_run = run_short(draggy);
    assert_same_run(
        &draggy_run,
        &run_short(build_or_panic(&model, &uncached(&[("c_r", 2.0)]))),
    );
    // The drag really changed the motion (else a stale hit could not be seen).
    let (a, b) = (channel(&base_run, "tip.z"), channel(&draggy_run, "tip.z"));
    assert!((a[a.len() - 1] - b[b.len() - 1]).abs() > 1e-6);

    let again = build_or_panic(&model, &cached(&cache, &[("c_r", 2.0)], true));
    assert!(again.cache_hit && again.simplifier_skipped);
    assert_same_run(&run_short(again), &draggy_run);
}

#[test]
fn another_simplifier_identity_misses() {
    let dir = tempfile::tempdir().unwrap();
    let path = example_path("pendulum.fd");
    let opts = cached(dir.path(), &[], true);
    build_or_panic(&path, &opts);
    // As the build lowers: with the roles cache, whose definition keys key the
    // source index.
    let lowered = match front_cached(ModelSource::File(&path), &[], Some(&opts.backend)) {
        Ok(f) => f.lowered,
        Err(_) => panic!("pendulum.fd must lower"),
    };
    // The unit of caching is the element type: every type must hit.
    let hits = |recipe: &str| {
        lowered
            .types
            .iter()
            .zip(&lowered.definition_keys)
            .all(|(ty, key)| {
                let funcs = type_funcs(ty);
                let defined = fdc_backend::Defined {
                    definition: key.as_ref().expect("lowered with a store"),
                    funcs: &funcs,
                    recipe,
                };
                fdc_backend::lookup_defined_in(&defined, &opts.backend, None)
                    .unwrap()
                    .hit
                    .is_some()
            })
    };
    assert!(hits(&recipe(true)));
    let simplifier = fdc_ir::simplify::identity();
    assert!(hits(&recipe_with(true, &simplifier)));
    // A bumped version, or one rule changed, is another identity, hence a miss.
    let mut specs = fdc_ir::simplify::rules::rule_specs();
    specs[0].lhs = "(neg (neg (neg ?x)))";
    for other in [
        fdc_ir::simplify::identity_of("simplify 999", &fdc_ir::simplify::rules::rule_specs()),
        fdc_ir::simplify::identity_of(fdc_ir::simplify::VERSION, &specs),
    ] {
        assert_ne!(other, simplifier);
        assert!(!hits(&recipe_with(true, &other)));
    }
    assert!(!hits(&recipe(false)));
}

/// Damages one entry ending in `ext` (one element type's), then checks the next build
/// warns and rebuilds what is needed, and the one after that skips the simplifier
/// again.
fn rebuilds_after_damage(ext: &str) -> Built {
    let dir = tempfile::tempdir().unwrap();
    let path = example_path("pendulum.fd");
    let opts = cached(dir.path(), &[], true);
    let first = build_or_panic(&path, &opts);
    let mut files = files_ending(dir.path(), ext);
    files.sort();
    // One entry of each kind per element type.
    assert_eq!(files.len(), first.element_types, "{ext}");
    let mut bytes = std::fs::read(&files[0]).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x01;
    std::fs::write(&files[0], &bytes).unwrap();
    let again = build_or_panic(&path, &opts);
    assert!(!again.simplifier_skipped);
    assert!(
        again.warnings.iter().any(|w| w.contains("rebuilt")),
        "{:?}",
        again.warnings
    );
    let third = build_or_panic(&path, &opts);
    assert!(third.cache_hit && third.simplifier_skipped);
    assert!(third.warnings.is_empty(), "{:?}", third.warnings);
    assert_same_run(
        &run_short(third),
        &run_short(build_or_panic(&path, &no_cache())),
    );
    again
}

#[test]
fn a_damaged_entry_of_either_level_is_rebuilt() {
    // The index entry: the object is still good, so only the simplifier ran again.
    let src = rebuilds_after_damage(".fdcsrc");
    assert!(src.cache_hit);
    assert_eq!(src.types.compiled, 0);
    assert_eq!(src.types.simplifier_skipped, src.element_types - 1);
    // The object behind the index: that type is compiled again, the others hit.
    let obj = rebuilds_after_damage(".fdcobj");
    assert!(!obj.cache_hit);
    assert_eq!(obj.types.compiled, 1);
    assert_eq!(obj.types.cached, obj.element_types - 1);
}

/// Two bodies, two revolute joints, a spring-damper and a one-off drag torque whose
/// coefficient `@C@` is compiled into the drag's code: six element types (a revolute
/// to ground and one between bodies are two patterns of one type, lowered apart).
const SIX_TYPES: &str = r#"
param L = 0.5;
param m = 0.2;
gravity [0, 0, -9.81];
body rod0: rigid_body { mass = m; inertia = [1e-4, m*L^2/12, m*L^2/12]; position = [L/2, 0, 0]; }
body rod1: rigid_body { mass = m; inertia = [1e-4, m*L^2/12, m*L^2/12]; position = [L + L/2, 0, 0]; }
joint j0: revolute(rod0, ground) { at = [0, 0, 0]; axis = [0, 1, 0]; }
joint j1: revolute(rod1, rod0) { at = [L, 0, 0]; axis = [0, 1, 0]; }
force s1: spring_damper(rod1, rod0) { at_a = [L + L/2, 0, 0.01]; at_b = [L/2, 0, 0.01]; stiffness = 50; damping = 0.1; }
force drag: on(rod0) { apply torque -@C@ * rod0.omega on rod0; }
output tip = rod1.point([L/2, 0, 0]);
simulate { end = 0.3; step = 1e-3; output_every = 0.01; }
"#;

fn six_types(dir: &Path, c: &str) -> PathBuf {
    let path = dir.join("six.fd");
    std::fs::write(&path, SIX_TYPES.replace("@C@", c)).unwrap();
    path
}

fn jobs(opts: BuildOptions, jobs: usize) -> BuildOptions {
    BuildOptions { jobs, ..opts }
}

#[test]
fn an_edit_recompiles_only_the_element_type_it_changed() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let opts = jobs(cached(&cache, &[], true), 2);
    let cold = build_or_panic(&six_types(dir.path(), "0.5"), &opts);
    let n = cold.element_types;
    assert_eq!(n, 6);
    assert_eq!((cold.types.compiled, cold.types.cached), (n, 0));
    let warm = build_or_panic(&six_types(dir.path(), "0.5"), &opts);
    assert_eq!((warm.types.compiled, warm.types.cached), (0, n));
    assert_eq!(warm.types.simplifier_skipped, n);
    // One literal of the drag changed: the drag alone is compiled again.
    let path = six_types(dir.path(), "0.75");
    let edited = build_or_panic(&path, &opts);
    assert_eq!((edited.types.compiled, edited.types.cached), (1, n - 1));
    assert_eq!(edited.types.simplifier_skipped, n - 1);
    assert!(edited.warnings.is_empty(), "{:?}", edited.warnings);
    // The code put together from five cached types and one new one is the edited
    // model's, bit for bit.
    assert_same_run(
        &run_short(edited),
        &run_short(build_or_panic(&path, &uncached(&[]))),
    );
}

#[test]
fn parallel_and_serial_builds_give_the_same_objects_and_results() {
    let dir = tempfile::tempdir().unwrap();
    let path = six_types(dir.path(), "0.5");
    let (serial_dir, parallel_dir) = (dir.path().join("serial"), dir.path().join("parallel"));
    let serial = build_or_panic(&path, &jobs(cached(&serial_dir, &[], true), 1));
    let parallel = build_or_panic(&path, &jobs(cached(&parallel_dir, &[], true), 4));
    let n = serial.element_types;
    assert_eq!(serial.types.compiled, n);
    assert_eq!(parallel.types.compiled, n);
    // Content-addressed entries: the same names with the same bytes.
    let entries = |d: &Path| {
        let mut v: Vec<(std::ffi::OsString, Vec<u8>)> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| {
                let p = e.unwrap().path();
                (
                    p.file_name().unwrap().to_owned(),
                    std::fs::read(&p).unwrap(),
                )
            })
            .collect();
        v.sort();
        v
    };
    let (a, b) = (entries(&serial_dir), entries(&parallel_dir));
    assert_eq!(
        a.len(),
        3 * n,
        "a roles, an object and an index entry per type"
    );
    assert!(
        a == b,
        "serial and parallel builds wrote different cache entries"
    );
    assert_same_run(&run_short(serial), &run_short(parallel));
    // Without a cache as well.
    let (s1, s4) = (jobs(uncached(&[]), 1), jobs(uncached(&[]), 4));
    assert_same_run(
        &run_short(build_or_panic(&path, &s1)),
        &run_short(build_or_panic(&path, &s4)),
    );
}
