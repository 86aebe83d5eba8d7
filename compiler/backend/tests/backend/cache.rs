//! The on-disk cache: hits skip code generation and give identical results, any change
//! of the IR misses, parameter values never matter, and broken entries are rebuilt.

use crate::common;

use common::*;
use fdc_backend::{compile, compile_recorded, lookup_source, CacheMode, Compiled, Options, Source};
use fdc_ir::{Func, Graph, Slot, SlotSizes};
use sha2::{Digest, Sha256};
use std::path::Path;

fn opts(dir: &Path, opt_level: u8) -> Options {
    Options {
        opt_level,
        cache: CacheMode::Dir(dir.to_path_buf()),
    }
}

/// `f(q, p) = [p0 * sin(q0) + c, atan2(q1, p1)]` with the constant `c`.
fn model(c: f64) -> (Graph, Vec<Func>) {
    let mut g = Graph::new();
    let q0 = g.input(Slot::Q, 0);
    let q1 = g.input(Slot::Q, 1);
    let p0 = g.input(Slot::P, 0);
    let p1 = g.input(Slot::P, 1);
    let s = g.sin(q0);
    let ps = g.mul(p0, s);
    let k = g.constant(c);
    let y0 = g.add2(ps, k);
    let y1 = g.atan2(q1, p1);
    let f = Func {
        name: "f".into(),
        inputs: SlotSizes([2, 0, 0, 0, 2, 0, 0, 0]),
        outputs: vec![y0, y1],
    };
    (g, vec![f])
}

fn run(c: &Compiled, q: [f64; 2], p: [f64; 2]) -> Vec<f64> {
    let mut inp: [Vec<f64>; 8] = Default::default();
    inp[0] = q.to_vec();
    inp[4] = p.to_vec();
    call(c.functions[0], &inp, 2)
}

fn expected(c: f64, q: [f64; 2], p: [f64; 2]) -> Vec<f64> {
    vec![p[0] * q[0].sin() + c, q[1].atan2(p[1])]
}

fn entries(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .map(|d| {
            d.filter(|e| {
                e.as_ref()
                    .map(|e| e.file_name().to_string_lossy().ends_with(".fdcobj"))
                    .unwrap_or(false)
            })
            .count()
        })
        .unwrap_or(0)
}

#[test]
fn second_compile_is_a_hit_with_identical_results() {
    let dir = tempfile::tempdir().unwrap();
    let (g, f) = model(0.25);
    let cold = compile(&g, &f, &opts(dir.path(), 2)).unwrap();
    assert!(!cold.cache_hit);
    assert!(cold.cache_warning.is_none(), "{:?}", cold.cache_warning);
    assert!(cold.timings.codegen > 0.0 && cold.timings.emit > 0.0);
    assert_eq!(entries(dir.path()), 1);

    let warm = compile(&g, &f, &opts(dir.path(), 2)).unwrap();
    assert!(warm.cache_hit);
    assert_eq!(warm.cache_entry, cold.cache_entry);
    // A hit runs neither the LLVM IR builder, the optimizer nor the code generator.
    assert_eq!((warm.timings.optimize, warm.timings.codegen), (0.0, 0.0));

    let mut r = rng(5);
    for _ in 0..100 {
        let q = [value(&mut r), value(&mut r)];
        let p = [value(&mut r), value(&mut r)];
        let a = run(&cold, q, p);
        let b = run(&warm, q, p);
        let e = expected(0.25, q, p);
        for k in 0..2 {
            assert_eq!(ulps(a[k], b[k]), 0);
            assert_eq!(ulps(a[k], e[k]), 0, "output {k} at q={q:?} p={p:?}");
        }
    }
}

#[test]
fn parameter_values_and_unused_nodes_do_not_change_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let (mut g, f) = model(1.5);
    let cold = compile(&g, &f, &opts(dir.path(), 2)).unwrap();
    assert!(!cold.cache_hit);
    // Nodes other functions use (same shared graph) are not part of this key.
    let x = g.input(Slot::V, 0);
    g.exp(x);
    let warm = compile(&g, &f, &opts(dir.path(), 2)).unwrap();
    assert!(warm.cache_hit);
    // Different parameters: same code, different numbers.
    for p in [[1.0, 2.0], [-3.0, 0.5], [0.0, -1.0]] {
        let q = [0.3, -0.7];
        assert_eq!(run(&warm, q, p), expected(1.5, q, p));
    }
}

#[test]
fn a_changed_constant_or_opt_level_is_a_miss() {
    let dir = tempfile::tempdir().unwrap();
    let (g1, f1) = model(1.0);
    let (g2, f2) = model(1.0 + f64::EPSILON);
    let (g3, f3) = model(-0.0);
    let (g4, f4) = model(0.0);
    let a = compile(&g1, &f1, &opts(dir.path(), 2)).unwrap();
    let b = compile(&g2, &f2, &opts(dir.path(), 2)).unwrap();
    let c = compile(&g3, &f3, &opts(dir.path(), 2)).unwrap();
    let d = compile(&g4, &f4, &opts(dir.path(), 2)).unwrap();
    let e = compile(&g1, &f1, &opts(dir.path(), 1)).unwrap();
    assert!(![&a, &b, &c, &d, &e].iter().any(|c| c.cache_hit));
    assert_eq!(entries(dir.path()), 5);
    let q = [0.0, 1.0];
    let p = [1.0, 1.0];
    assert_eq!(run(&b, q, p)[0], 1.0 + f64::EPSILON);
    assert_eq!(run(&c, [-0.0, 1.0], p)[0].to_bits(), (-0.0f64).to_bits());
    assert_eq!(run(&d, [-0.0, 1.0], p)[0].to_bits(), 0.0f64.to_bits());
    // Renaming the function is a change too (names show up in the key).
    let (g5, mut f5) = model(1.0);
    f5[0].name = "g".into();
    assert!(!compile(&g5, &f5, &opts(dir.path(), 2)).unwrap().cache_hit);
    assert!(compile(&g1, &f1, &opts(dir.path(), 2)).unwrap().cache_hit);
}

/// Damages the entry with `damage`, then checks the next compile rebuilds it (with a
/// warning and correct results) and the one after that is a hit again.
fn rebuilds_after(damage: impl Fn(&Path)) {
    let dir = tempfile::tempdir().unwrap();
    let (g, f) = model(2.0);
    let cold = compile(&g, &f, &opts(dir.path(), 2)).unwrap();
    let path = cold.cache_entry.clone().unwrap();
    damage(&path);
    let again = compile(&g, &f, &opts(dir.path(), 2)).unwrap();
    assert!(!again.cache_hit);
    assert!(again.cache_warning.is_some());
    let (q, p) = ([0.4, -2.0], [3.0, -1.0]);
    assert_eq!(run(&again, q, p), expected(2.0, q, p));
    let third = compile(&g, &f, &opts(dir.path(), 2)).unwrap();
    assert!(third.cache_hit, "{:?}", third.cache_warning);
    assert_eq!(run(&third, q, p), expected(2.0, q, p));
}

#[test]
fn a_truncated_entry_is_rebuilt() {
    for keep in [0, 7, 60, 100] {
        rebuilds_after(|p| {
            let b = std::fs::read(p).unwrap();
            std::fs::write(p, &b[..keep.min(b.len() - 1)]).unwrap();
        });
    }
    rebuilds_after(|p| {
        let b = std::fs::read(p).unwrap();
        std::fs::write(p, &b[..b.len() - 1]).unwrap();
    });
}

#[test]
fn a_corrupted_entry_is_rebuilt() {
    // A flipped bit in the magic, the key, the length, the checksum, the object.
    for at in [0, 9, 41, 50, 200] {
        rebuilds_after(|p| {
            let mut b = std::fs::read(p).unwrap();
            b[at] ^= 0x10;
            std::fs::write(p, &b).unwrap();
        });
    }
}

#[test]
fn a_well_formed_entry_with_a_bad_object_is_rebuilt() {
    // Passes every header check, but the object is not one: the JIT refuses it and
    // the backend compiles instead.
    rebuilds_after(|p| {
        let b = std::fs::read(p).unwrap();
        let junk = vec![0x5a_u8; 300];
        let mut out = b[..40].to_vec();
        out.extend_from_slice(&(junk.len() as u64).to_le_bytes());
        out.extend_from_slice(&Sha256::digest(&junk));
        out.extend_from_slice(&junk);
        std::fs::write(p, out).unwrap();
    });
}

#[test]
fn an_entry_of_another_key_is_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    let (g1, f1) = model(1.0);
    let (g2, f2) = model(9.0);
    let one = compile(&g1, &f1, &opts(dir.path(), 2)).unwrap();
    let nine = compile(&g2, &f2, &opts(dir.path(), 2)).unwrap();
    // Put model 9's (valid) object where model 1's belongs.
    std::fs::copy(
        nine.cache_entry.as_ref().unwrap(),
        one.cache_entry.as_ref().unwrap(),
    )
    .unwrap();
    let again = compile(&g1, &f1, &opts(dir.path(), 2)).unwrap();
    assert!(!again.cache_hit);
    assert!(again
        .cache_warning
        .as_deref()
        .unwrap()
        .contains("wrong key"));
    assert_eq!(run(&again, [0.0, 1.0], [1.0, 1.0])[0], 1.0);
}

#[test]
fn an_unusable_cache_directory_only_warns() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("not-a-dir");
    std::fs::write(&file, b"x").unwrap();
    let (g, f) = model(3.0);
    let c = compile(&g, &f, &opts(&file, 2)).unwrap();
    assert!(!c.cache_hit);
    assert!(c.cache_warning.is_some());
    assert_eq!(run(&c, [0.0, 1.0], [1.0, 1.0])[0], 3.0);
}

#[test]
fn the_owner_keeps_the_code_alive() {
    let (g, f) = model(0.5);
    let opts = Options {
        opt_level: 2,
        cache: CacheMode::Off,
    };
    let (func, owner) = {
        let c = compile(&g, &f, &opts).unwrap();
        (c.functions[0], c.owner.clone())
        // `c` (and its Arc) dropped here; only our clone keeps the JIT.
    };
    // Churn: other JITs come and go meanwhile.
    for i in 0..20 {
        let (g2, f2) = model(i as f64);
        let c2 = compile(&g2, &f2, &opts).unwrap();
        drop(c2);
    }
    let mut inp: [Vec<f64>; 8] = Default::default();
    inp[0] = vec![1.0, 2.0];
    inp[4] = vec![2.0, 3.0];
    let out = call(func, &inp, 2);
    assert_eq!(out, expected(0.5, [1.0, 2.0], [2.0, 3.0]));
    assert_eq!(std::sync::Arc::strong_count(&owner), 1);
    drop(owner);
}

#[test]
fn concurrent_compiles_share_one_cache_directory() {
    // Threads race on the same entries: atomic writes mean every reader sees either no
    // entry or a whole one, and every thread gets correct code.
    let dir = tempfile::tempdir().unwrap();
    std::thread::scope(|s| {
        for t in 0..4 {
            let path = dir.path();
            s.spawn(move || {
                for round in 0..3 {
                    let c = (t % 2) as f64 + 0.5;
                    let (g, f) = model(c);
                    let comp = compile(&g, &f, &opts(path, 2)).unwrap();
                    assert!(comp.cache_warning.is_none(), "{:?}", comp.cache_warning);
                    let q = [round as f64, 0.25];
                    let p = [1.5, -2.0];
                    assert_eq!(run(&comp, q, p), expected(c, q, p));
                }
            });
        }
    });
    assert_eq!(entries(dir.path()), 2);
    // No temporary files left behind.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
}

/// `f(t) = spline(t)` of the Hermite table through `ys` (zero slopes).
fn spline_model(ys: [f64; 3]) -> (Graph, Vec<Func>) {
    let mut g = Graph::new();
    let table = fdc_ir::SplineTable::hermite(&[0.0, 1.0, 2.0], &ys, &[0.0; 3]).unwrap();
    let t = g.add_table(table);
    let x = g.input(Slot::T, 0);
    let y = g.spline(t, 0, x);
    let f = Func {
        name: "f".into(),
        inputs: SlotSizes([0, 0, 0, 0, 0, 0, 0, 1]),
        outputs: vec![y],
    };
    (g, vec![f])
}

#[test]
fn a_changed_spline_table_is_a_miss() {
    let dir = tempfile::tempdir().unwrap();
    let (g1, f1) = spline_model([0.0, 1.0, 0.0]);
    let (g2, f2) = spline_model([0.0, 2.0, 0.0]);
    let a = compile(&g1, &f1, &opts(dir.path(), 2)).unwrap();
    let b = compile(&g2, &f2, &opts(dir.path(), 2)).unwrap();
    assert!(!a.cache_hit && !b.cache_hit);
    assert!(compile(&g1, &f1, &opts(dir.path(), 2)).unwrap().cache_hit);
    let mut inp: [Vec<f64>; 8] = Default::default();
    inp[7] = vec![1.0];
    assert_eq!(call(a.functions[0], &inp, 1), vec![1.0]);
    assert_eq!(call(b.functions[0], &inp, 1), vec![2.0]);
}

/// The source index: a "transformation" in these tests turns the source `model(c)`
/// into `model(2c)`, so a hit is recognizable by its results.
fn lookup(g: &Graph, f: &[Func], recipe: &str, o: &Options) -> fdc_backend::SourceLookup {
    let src = Source {
        graph: g,
        funcs: f,
        recipe,
    };
    lookup_source(&src, o).unwrap()
}

fn files_ending(dir: &Path, ext: &str) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(ext))
        .collect()
}

#[test]
fn a_source_hit_returns_the_recorded_object_and_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let o = opts(dir.path(), 2);
    let (g, f) = model(0.5);
    let first = lookup(&g, &f, "double c, v1", &o);
    assert!(first.hit.is_none());
    assert!(first.token.warning().is_none());
    let (tg, tf) = model(1.0);
    let built = compile_recorded(&tg, &tf, &o, first.token, b"which").unwrap();
    assert!(!built.cache_hit);
    assert!(built.cache_warning.is_none(), "{:?}", built.cache_warning);
    assert_eq!(files_ending(dir.path(), ".fdcsrc").len(), 1);

    let (hit, meta) = lookup(&g, &f, "double c, v1", &o)
        .hit
        .expect("a source hit");
    assert_eq!(meta, b"which");
    assert!(hit.cache_hit);
    assert_eq!(hit.cache_entry, built.cache_entry);
    assert_eq!((hit.timings.optimize, hit.timings.codegen), (0.0, 0.0));
    let (q, p) = ([0.3, 1.0], [2.0, -0.5]);
    // The transformed function (c = 1.0), not the source (c = 0.5).
    assert_eq!(run(&hit, q, p), expected(1.0, q, p));

    // Anything that may change the transformation's output misses: the recipe, a
    // constant of the source (one ulp), the optimization level, a function name.
    assert!(lookup(&g, &f, "double c, v2", &o).hit.is_none());
    let (g2, f2) = model(f64::from_bits(0.5f64.to_bits() + 1));
    assert!(lookup(&g2, &f2, "double c, v1", &o).hit.is_none());
    assert!(lookup(&g, &f, "double c, v1", &opts(dir.path(), 1))
        .hit
        .is_none());
    let mut renamed = f.clone();
    renamed[0].name = "g".into();
    assert!(lookup(&g, &renamed, "double c, v1", &o).hit.is_none());
    // A parameter is an input: its value is not in the source, so nothing to miss on.
}

#[test]
fn without_a_cache_the_source_index_neither_reads_nor_writes() {
    let (g, f) = model(0.5);
    let off = Options {
        cache: CacheMode::Off,
        ..Default::default()
    };
    let l = lookup(&g, &f, "r", &off);
    assert!(l.hit.is_none());
    let c = compile_recorded(&g, &f, &off, l.token, b"x").unwrap();
    assert!(c.cache_entry.is_none() && !c.cache_hit);
    assert!(lookup(&g, &f, "r", &off).hit.is_none());
}

/// Damages the source index entry or the object behind it: the next lookup misses
/// with a warning, recording again makes it hit.
fn source_rebuilds_after(ext: &str, damage: impl Fn(&Path)) {
    let dir = tempfile::tempdir().unwrap();
    let o = opts(dir.path(), 2);
    let (g, f) = model(0.5);
    let (tg, tf) = model(1.0);
    let l = lookup(&g, &f, "r", &o);
    compile_recorded(&tg, &tf, &o, l.token, b"m").unwrap();
    let files = files_ending(dir.path(), ext);
    assert_eq!(files.len(), 1);
    damage(&files[0]);
    let l = lookup(&g, &f, "r", &o);
    assert!(l.hit.is_none(), "a damaged {ext} entry was used");
    assert!(l.token.warning().is_some());
    let again = compile_recorded(&tg, &tf, &o, l.token, b"m").unwrap();
    assert!(
        again.cache_warning.is_some(),
        "the rebuild must say why it happened"
    );
    let (q, p) = ([0.1, 0.2], [0.3, 0.4]);
    assert_eq!(run(&again, q, p), expected(1.0, q, p));
    let (hit, meta) = lookup(&g, &f, "r", &o)
        .hit
        .expect("a hit after the rebuild");
    assert_eq!(meta, b"m");
    assert_eq!(run(&hit, q, p), expected(1.0, q, p));
}

#[test]
fn a_damaged_source_index_or_object_behind_it_is_rebuilt() {
    let truncate = |p: &Path| {
        let b = std::fs::read(p).unwrap();
        std::fs::write(p, &b[..b.len() - 1]).unwrap();
    };
    let flip_last = |p: &Path| {
        let mut b = std::fs::read(p).unwrap();
        let n = b.len() - 1;
        b[n] ^= 0x10;
        std::fs::write(p, &b).unwrap();
    };
    source_rebuilds_after(".fdcsrc", truncate);
    source_rebuilds_after(".fdcsrc", flip_last);
    source_rebuilds_after(".fdcobj", truncate);
    source_rebuilds_after(".fdcobj", flip_last);
}
