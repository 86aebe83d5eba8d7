//! The roles cache, keyed by each element type's definition before differentiation:
//! a warm build differentiates nothing and runs bit for bit the code of a cold one;
//! an edited literal re-derives (and recompiles) only its type, a parameter value
//! nothing; a damaged or foreign entry is rebuilt; what reads the roles' IR (the
//! interpreter behind `fdc check`'s dofs and `fdc ir`, the tiered build) sees the
//! same roles on a hit.

use crate::common;

use common::{build_or_panic, channel, no_cache, simulate};
use fdc_driver::pipeline::{front_cached, BuildOptions, Built, ModelSource};
use fdc_runtime::MemorySink;
use std::path::{Path, PathBuf};

/// A pendulum of two rods with a spring and a one-off drag whose coefficient `@C@`
/// is a literal of its expression (compiled in), `m` a parameter (a slot).
const MODEL: &str = r#"
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

fn model(dir: &Path, c: &str) -> PathBuf {
    let path = dir.join("two_rods.fd");
    std::fs::write(&path, MODEL.replace("@C@", c)).unwrap();
    path
}

fn cached(cache: &Path, sets: &[(&str, f64)]) -> BuildOptions {
    BuildOptions {
        overrides: sets.iter().map(|(n, v)| (n.to_string(), *v)).collect(),
        simplify: true,
        backend: fdc_backend::Options {
            cache: fdc_backend::CacheMode::Dir(cache.to_path_buf()),
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

fn run(b: Built) -> MemorySink {
    simulate(b, |_| {}).0
}

fn assert_same_run(a: &MemorySink, b: &MemorySink) {
    assert_eq!(a.names, b.names);
    assert_eq!(a.times.len(), b.times.len());
    assert!(a.times.len() > 10);
    for name in &a.names {
        for (i, (x, y)) in channel(a, name).iter().zip(&channel(b, name)).enumerate() {
            assert_eq!(x.to_bits(), y.to_bits(), "{name}[{i}]: {x} vs {y}");
        }
    }
}

fn roles_entries(cache: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(cache)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "fdcdef"))
        .collect();
    v.sort();
    v
}

#[test]
fn a_warm_build_differentiates_nothing_and_runs_the_same_code() {
    let dir = tempfile::tempdir().unwrap();
    let (path, cache) = (model(dir.path(), "0.5"), dir.path().join("cache"));
    let cold = build_or_panic(&path, &cached(&cache, &[]));
    assert_eq!(cold.types.roles_cached, 0);
    assert!(!cold.cache_hit);
    let n = cold.element_types;
    assert!(n >= 5, "{n} element types");
    assert_eq!(roles_entries(&cache).len(), n);
    let warm = build_or_panic(&path, &cached(&cache, &[]));
    assert_eq!(warm.types.roles_cached, n);
    assert!(warm.cache_hit && warm.simplifier_skipped);
    assert!(warm.warnings.is_empty(), "{:?}", warm.warnings);
    assert_same_run(&run(warm), &run(build_or_panic(&path, &uncached(&[]))));
}

#[test]
fn a_parameter_value_rederives_nothing_and_an_edited_literal_one_type() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let path = model(dir.path(), "0.5");
    let n = build_or_panic(&path, &cached(&cache, &[])).element_types;

    // `m` is a slot: every type from the cache, and the run is the heavier model's.
    let heavy = build_or_panic(&path, &cached(&cache, &[("m", 0.3)]));
    assert_eq!((heavy.types.roles_cached, heavy.types.compiled), (n, 0));
    assert_same_run(
        &run(heavy),
        &run(build_or_panic(&path, &uncached(&[("m", 0.3)]))),
    );

    // The drag's literal is compiled in: that type alone is derived and compiled.
    let path = model(dir.path(), "2.0");
    let edited = build_or_panic(&path, &cached(&cache, &[]));
    assert_eq!(edited.types.roles_cached, n - 1);
    assert_eq!(edited.types.compiled, 1);
    let edited_run = run(edited);
    assert_same_run(&edited_run, &run(build_or_panic(&path, &uncached(&[]))));
    // The edit changed the motion, so a stale hit would have shown.
    let base = run(build_or_panic(&model(dir.path(), "0.5"), &uncached(&[])));
    let (a, b) = (channel(&base, "tip.z"), channel(&edited_run, "tip.z"));
    assert!((a[a.len() - 1] - b[b.len() - 1]).abs() > 1e-6);
}

/// The key of an entry, from its file name (`<key hex>.fdcdef`).
fn key_of(entry: &Path) -> [u8; 32] {
    let hex = entry.file_stem().unwrap().to_str().unwrap();
    let mut key = [0u8; 32];
    for (k, b) in key.iter_mut().enumerate() {
        *b = u8::from_str_radix(&hex[2 * k..2 * k + 2], 16).unwrap();
    }
    key
}

#[test]
fn a_damaged_or_foreign_roles_entry_is_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    let (path, cache) = (model(dir.path(), "0.5"), dir.path().join("cache"));
    let opts = cached(&cache, &[]);
    let n = build_or_panic(&path, &opts).element_types;
    let entries = roles_entries(&cache);
    let reference = run(build_or_panic(&path, &uncached(&[])));

    // A flipped bit: the checksum refuses it.
    let mut bytes = std::fs::read(&entries[0]).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&entries[0], &bytes).unwrap();
    // A valid entry whose payload is no element type (another format, a foreign
    // writer): the decoder refuses it.
    let foreign = fdc_backend::roles::write(&opts.backend, &key_of(&entries[1]), b"not roles");
    foreign.unwrap();
    // Another type's entry under this key: refused by the key in its header.
    std::fs::copy(&entries[3], &entries[2]).unwrap();

    let again = build_or_panic(&path, &opts);
    assert_eq!(again.types.roles_cached, n - 3);
    let warned = |what: &str| again.warnings.iter().any(|w| w.contains(what));
    assert!(warned("checksum"), "{:?}", again.warnings);
    assert!(
        warned("no element type of this build"),
        "{:?}",
        again.warnings
    );
    assert!(warned("wrong key"), "{:?}", again.warnings);
    assert_same_run(&run(again), &reference);
    // Rewritten: the next build takes every type from the cache again.
    let third = build_or_panic(&path, &opts);
    assert_eq!(third.types.roles_cached, n);
    assert!(third.warnings.is_empty(), "{:?}", third.warnings);
    assert_same_run(&run(third), &reference);
}

/// Every role of every type evaluated by the IR interpreter at one set of inputs.
fn role_values(l: &fdc_lower::LoweredModel) -> Vec<Vec<u64>> {
    let data: Vec<Vec<f64>> = (0..8)
        .map(|s| {
            (0..512)
                .map(|i| 0.1 + 0.37 * ((i * 7 + s * 3) % 11) as f64)
                .collect()
        })
        .collect();
    let inputs: [&[f64]; 8] = std::array::from_fn(|s| data[s].as_slice());
    l.types
        .iter()
        .flat_map(|ty| &ty.roles)
        .map(|(_, f, _)| {
            let v = fdc_ir::interp::eval(&l.graph, &f.outputs, &inputs).unwrap();
            v.into_iter().map(f64::to_bits).collect()
        })
        .collect()
}

#[test]
fn what_reads_the_roles_ir_sees_the_same_roles_on_a_hit() {
    let dir = tempfile::tempdir().unwrap();
    let (path, cache) = (model(dir.path(), "0.5"), dir.path().join("cache"));
    let opts = cached(&cache, &[]);
    let src = ModelSource::File(&path);
    let cold = front_cached(src, &[], Some(&opts.backend)).unwrap();
    assert_eq!(cold.roles_cached, 0);
    let hit = front_cached(src, &[], Some(&opts.backend)).unwrap();
    assert_eq!(hit.roles_cached, cold.lowered.types.len());
    let (a, b) = (&cold.lowered, &hit.lowered);
    assert_eq!(a.types.len(), b.types.len());
    for (x, y) in a.types.iter().zip(&b.types) {
        assert_eq!(
            (&x.name, x.nq, x.nv, x.nl, x.np),
            (&y.name, y.nq, y.nv, y.nl, y.np)
        );
        assert_eq!((&x.outputs, &x.multipliers), (&y.outputs, &y.multipliers));
        let roles = |t: &fdc_diff::ElementFunctions| {
            let r: Vec<_> = t
                .roles
                .iter()
                .map(|(r, f, b)| (*r, f.inputs, b.clone()))
                .collect();
            r
        };
        assert_eq!(roles(x), roles(y));
    }
    // The interpreter (`fdc ir`, the dofs of `fdc check`) computes the same numbers.
    assert_eq!(role_values(a), role_values(b));
    assert_eq!(
        fdc_driver::dofs::redundant_rows(a),
        fdc_driver::dofs::redundant_rows(b)
    );
    assert_eq!(a.definition_keys, b.definition_keys);
    assert!(a.definition_keys.iter().all(Option::is_some));
}

#[test]
fn a_tiered_build_after_an_edit_runs_the_edited_model() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    build_or_panic(&model(dir.path(), "0.5"), &cached(&cache, &[]));
    let path = model(dir.path(), "1.5");
    let src = ModelSource::File(&path);
    let mut tiered = fdc_driver::pipeline::build_from_tiered(src, &cached(&cache, &[])).unwrap();
    assert_eq!(tiered.types.roles_cached, tiered.element_types - 1);
    assert_eq!(tiered.types.compiled, 1);
    let tier = tiered
        .tier
        .take()
        .expect("one type awaits its optimized code");
    assert_eq!(tier.wait().expect("the optimized code builds").types, 1);
    assert_same_run(&run(tiered), &run(build_or_panic(&path, &uncached(&[]))));
}
