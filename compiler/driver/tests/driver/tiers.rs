//! Tiered compilation: the level-0 and the optimized code compute the same bits, so
//! switching between them mid-run changes no result; a tiered build stores only the
//! optimized code in the cache.

use crate::common::{example_path, no_cache};
use crate::stdlib_derivatives::{stdlib_front, Lcg};
use fdc_backend::{compile, CacheMode, Options};
use fdc_driver::pipeline::{
    build, build_from_tiered, simplify_all, type_funcs, BuildOptions, Built, ModelSource,
};
use fdc_driver::settings::{runtime_settings, Overrides};
use fdc_ir::interp::eval;
use fdc_ir::Slot;
use fdc_runtime::table::{ElementFn, Tier, Upgradable, Upgrade};
use fdc_runtime::{MemorySink, ResultSink, System};
use std::sync::Arc;

pub(crate) fn call(f: ElementFn, x: &[Vec<f64>; 8], n_out: usize) -> Vec<f64> {
    let mut out = vec![0.0; n_out];
    let p = |s: usize| x[s].as_ptr();
    // SAFETY: every input array has the size the function declares for its slot and
    // `out` one number per output.
    unsafe {
        f(
            p(0),
            p(1),
            p(2),
            p(3),
            p(4),
            p(5),
            p(6),
            p(7),
            out.as_mut_ptr(),
        )
    };
    out
}

fn opts(level: u8) -> Options {
    Options {
        opt_level: level,
        cache: CacheMode::Off,
    }
}

/// Inputs of the sizes `func` declares, in [-2, 2), with every fourth draw also
/// holding signed zeros and units, where a rule that is not IEEE-exact (`x + 0 → x`
/// at x = -0, say) would show.
fn inputs(func: &fdc_ir::Func, rng: &mut Lcg, draw: usize) -> [Vec<f64>; 8] {
    const SPECIAL: [f64; 4] = [0.0, -0.0, 1.0, -1.0];
    std::array::from_fn(|s| {
        let n = func.inputs.get(Slot::ALL[s]);
        (0..n)
            .map(|i| match (draw % 4, (i + s) % 5) {
                (3, 0) => SPECIAL[(i / 5 + s) % SPECIAL.len()],
                _ => 2.0 * rng.next(),
            })
            .collect()
    })
}

/// The same bits, except that any NaN equals any NaN (the simplifier's policy).
pub(crate) fn same_bits(a: &[f64], b: &[f64], what: &str) {
    assert_eq!(a.len(), b.len(), "{what}");
    for (j, (u, v)) in a.iter().zip(b).enumerate() {
        assert!(
            u.to_bits() == v.to_bits() || (u.is_nan() && v.is_nan()),
            "{what} output {j}: {u:e} vs {v:e}"
        );
    }
}

/// The two tiers as the driver builds them: the quick tier compiles the unsimplified
/// roles at level 0, the optimizing tier the simplified ones at level 2. Both, and
/// the IR interpreter on either IR, give the same bits for every stdlib role.
#[test]
fn every_stdlib_role_computes_the_same_bits_unsimplified_at_level_0_and_simplified_at_2() {
    let f = stdlib_front("tiers");
    let l = &f.lowered;
    let mut rng = Lcg(11);
    let (mut compared, mut outputs, mut specials) = (0, 0, 0);
    for ty in &l.types {
        let unsimplified = type_funcs(ty);
        let (g, funcs, _) = simplify_all(&l.graph, unsimplified.clone());
        let quick = compile(&l.graph, &unsimplified, &opts(0)).expect("level 0 compiles");
        let fast = compile(&g, &funcs, &opts(2)).expect("level 2 compiles");
        for (k, (func, before)) in funcs.iter().zip(&unsimplified).enumerate() {
            for draw in 0..40 {
                let x = inputs(func, &mut rng, draw);
                let a = call(quick.functions[k], &x, func.outputs.len());
                let b = call(fast.functions[k], &x, func.outputs.len());
                let what = format!("{} draw {draw}", func.name);
                same_bits(&a, &b, &format!("{what}: level 0 unsimplified vs level 2"));
                if draw % 8 == 3 {
                    // The interpreter is the reference of both IRs (slower: fewer draws).
                    let ins: [&[f64]; 8] = std::array::from_fn(|s| x[s].as_slice());
                    let lowered = eval(&l.graph, &before.outputs, &ins).unwrap();
                    let simplified = eval(&g, &func.outputs, &ins).unwrap();
                    same_bits(&lowered, &a, &format!("{what}: interpreter vs level 0"));
                    same_bits(&simplified, &b, &format!("{what}: interpreter vs level 2"));
                    specials += 1;
                }
                outputs += a.len();
            }
            compared += 1;
        }
    }
    assert!(l.types.len() >= 25, "{} types", l.types.len());
    assert!(
        compared >= 100 && outputs > 100_000 && specials >= 500,
        "{compared} roles, {outputs} outputs, {specials} interpreted"
    );
}

/// The optimized functions of `fast` as a tier for a table of the same model.
fn tier_of(fast: &Built) -> Tier {
    let functions = fast
        .model
        .table
        .types
        .iter()
        .map(|ty| std::array::from_fn(|r| ty.roles[r].as_ref().map(|rf| rf.func)))
        .collect();
    Tier {
        functions,
        owner: fast.model.table.owner.clone().expect("JIT-owned code"),
    }
}

/// Publishes the tier once `rows` rows were written: between two steps of `run`.
struct SwapAfter {
    inner: MemorySink,
    rows: usize,
    upgrade: Arc<Upgrade>,
    tier: Option<Tier>,
}

impl ResultSink for SwapAfter {
    fn header(&mut self, names: &[String]) {
        self.inner.header(names);
    }
    fn row(&mut self, t: f64, values: &[f64]) {
        self.inner.row(t, values);
        if self.inner.rows.len() == self.rows {
            assert!(self.upgrade.publish(self.tier.take().expect("once")));
        }
    }
}

pub(crate) fn bits(s: &MemorySink) -> Vec<Vec<u64>> {
    let mut v: Vec<Vec<u64>> = s
        .rows
        .iter()
        .map(|r| r.iter().map(|x| x.to_bits()).collect())
        .collect();
    v.push(s.times.iter().map(|x| x.to_bits()).collect());
    v
}

#[test]
fn a_run_switched_to_the_optimized_code_mid_run_writes_the_same_rows() {
    let path = example_path("squeezer.fd");
    let level = |l: u8| BuildOptions {
        backend: opts(l),
        ..no_cache()
    };
    let run_one = |b: Built| {
        let s = runtime_settings(&b.settings, &Overrides::default()).unwrap();
        let mut sys = System::new(b.model).unwrap();
        let mut sink = MemorySink::default();
        sys.run(&s, &mut sink).unwrap();
        assert!(!sys.code_upgraded());
        sink
    };
    let reference = run_one(build(&path, &level(2)).unwrap());
    assert!(reference.rows.len() > 20, "{} rows", reference.rows.len());
    assert_eq!(
        bits(&run_one(build(&path, &level(0)).unwrap())),
        bits(&reference)
    );
    for swap_at in [1, 7, reference.rows.len() / 2] {
        let fast = build(&path, &level(2)).unwrap();
        let mut quick = build(&path, &level(0)).unwrap();
        let upgrade = Arc::new(Upgrade::default());
        quick.model.table.upgrade = Upgradable::new(upgrade.clone());
        let s = runtime_settings(&quick.settings, &Overrides::default()).unwrap();
        let mut sys = System::new(quick.model).unwrap();
        let mut sink = SwapAfter {
            inner: MemorySink::default(),
            rows: swap_at,
            upgrade,
            tier: Some(tier_of(&fast)),
        };
        sys.run(&s, &mut sink).unwrap();
        assert!(
            sink.tier.is_none() && sys.code_upgraded(),
            "swapped at row {swap_at}"
        );
        assert_eq!(
            bits(&sink.inner),
            bits(&reference),
            "swapped at row {swap_at}"
        );
    }
}

#[test]
fn a_tiered_build_caches_only_the_optimized_code_and_switches_to_it() {
    let path = example_path("double_pendulum.fd");
    let cache = std::env::temp_dir().join(format!("fdc-tiers-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&cache);
    let opts = BuildOptions {
        backend: Options {
            opt_level: 2,
            cache: CacheMode::Dir(cache.clone()),
        },
        ..no_cache()
    };
    let mut first = build_from_tiered(ModelSource::File(&path), &opts).unwrap();
    assert!(first.types.compiled > 0 && first.types.cached == 0);
    // The quick tier runs no e-graph: the optimizing tier simplifies, on its thread.
    assert_eq!(first.timings.simplify, 0.0);
    let tier = first
        .tier
        .take()
        .expect("a miss starts the optimizing build");
    let upgrade = tier.upgrade().clone();
    // Nothing of level 0 is cached: only the optimized build writes entries.
    let report = tier.wait().expect("the optimized code builds");
    assert_eq!(report.types, first.types.compiled);
    assert!(report.simplify > 0.0, "{report:?}");
    assert!(upgrade.published());
    let s = runtime_settings(&first.settings, &Overrides::default()).unwrap();
    let mut sys = System::new(first.model).unwrap();
    let mut sink = MemorySink::default();
    sys.run(&s, &mut sink).unwrap();
    assert!(sys.code_upgraded());
    // An untiered level-2 build now hits every type: the cache holds level 2.
    let again = build(&path, &opts).unwrap();
    assert_eq!(again.types.cached, first.types.compiled);
    assert!(again.tier.is_none());
    let s = runtime_settings(&again.settings, &Overrides::default()).unwrap();
    let mut sys = System::new(again.model).unwrap();
    let mut reference = MemorySink::default();
    sys.run(&s, &mut reference).unwrap();
    assert_eq!(bits(&sink), bits(&reference));
    // A tiered build on a warm cache has nothing to upgrade.
    let warm = build_from_tiered(ModelSource::File(&path), &opts).unwrap();
    assert!(warm.tier.is_none() && warm.cache_hit);
    let entries = std::fs::read_dir(&cache).unwrap().count();
    assert_eq!(
        entries,
        3 * first.types.compiled,
        "one roles, one object and one source entry per type"
    );
    let _ = std::fs::remove_dir_all(&cache);
}

/// Five element types (two bodies, a joint, three forces) for the threads of the
/// optimizing tier to share out.
const FIVE_TYPES: &str = "
gravity [0, 0, -9.81];
body a: rigid_body { mass = 2; inertia = [0.1, 0.2, 0.3]; position = [0.3, 0.1, -0.2]; }
body b: rigid_body { mass = 1; inertia = [0.05, 0.04, 0.03]; position = [1.0, -0.2, 0.4]; }
joint r: revolute(a) { at = [0, 0, 0]; axis = [0.2, 0.3, 1]; }
force sd: spring_damper(a, b) { at_a = [0.4, 0.1, 0]; at_b = [0.9, 0, 0.3]; stiffness = 40; damping = 3; preload = 2; }
force ts: torsion_spring(a, b) { axis = [0, 0, 1]; stiffness = 5; damping = 0.5; preload = 0.1; }
force cf: constant_force(b) { value = [1, -2, 3]; at = [1.1, 0, 0.4]; }
simulate { end = 0.05; step = 1e-3; output_every = 0.01; }
";

/// The rows of `built` run to the end, and whether it switched tiers.
fn rows_of(built: Built) -> (MemorySink, bool) {
    let s = runtime_settings(&built.settings, &Overrides::default()).unwrap();
    let mut sys = System::new(built.model).unwrap();
    let mut sink = MemorySink::default();
    sys.run(&s, &mut sink).unwrap();
    (sink, sys.code_upgraded())
}

#[test]
fn the_optimizing_tier_on_several_threads_builds_every_type_and_the_same_bits() {
    let dir = std::env::temp_dir().join(format!("fdc-tier-threads-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("five.fd");
    std::fs::write(&path, FIVE_TYPES).unwrap();
    let opts = |jobs: usize, cache: &str| BuildOptions {
        jobs,
        backend: Options {
            opt_level: 2,
            cache: CacheMode::Dir(dir.join(cache)),
        },
        ..no_cache()
    };
    // The reference: one tier, level 2, on a cache of its own.
    let (reference, _) = rows_of(build(&path, &opts(1, "reference")).unwrap());
    assert!(reference.rows.len() >= 5);
    for jobs in [1, 3] {
        let cache = format!("cache-{jobs}");
        let mut tiered = build_from_tiered(ModelSource::File(&path), &opts(jobs, &cache)).unwrap();
        let tier = tiered
            .tier
            .take()
            .expect("a cold cache starts the optimizing build");
        let report = tier.wait().expect("the optimized code builds");
        assert!(tiered.types.compiled >= 5, "{:?}", tiered.types);
        assert_eq!(report.types, tiered.types.compiled, "jobs {jobs}");
        // One thread: one worker and no helper; three: at most three at once.
        assert!(
            (1..=jobs).contains(&report.threads),
            "jobs {jobs}: {} threads",
            report.threads
        );
        let (rows, upgraded) = rows_of(tiered);
        assert!(
            upgraded,
            "jobs {jobs}: the run switched to the optimized code"
        );
        assert_eq!(bits(&rows), bits(&reference), "jobs {jobs}");
        // Every optimized type reached the cache: a second build compiles nothing.
        let again = build(&path, &opts(jobs, &cache)).unwrap();
        assert_eq!(again.types.compiled, 0, "jobs {jobs}: {:?}", again.types);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_driver_leaves_the_iteration_matrices_to_llvm_and_simplifies_the_rest() {
    use fdc_ir::simplify::Stop;
    use fdc_ir::stats::stats;
    let f = stdlib_front("tiers-roles");
    let l = &f.lowered;
    let ty = l.types.iter().find(|t| t.name == "spring_damper").unwrap();
    let funcs = type_funcs(ty);
    let (g, out, reports) = simplify_all(&l.graph, funcs.clone());
    let (mut iter_seen, mut removed) = (false, 0);
    for ((before, after), report) in funcs.iter().zip(&out).zip(&reports) {
        let (n0, n1) = (
            stats(&l.graph, &before.outputs).total,
            stats(&g, &after.outputs).total,
        );
        let role = before.name.rsplit("::").next().unwrap();
        if ["iter", "iter_noqv", "res_iter"].contains(&role) {
            iter_seen = true;
            assert_eq!(n1, n0, "{}", before.name);
            assert!(matches!(report.stop, Stop::Skipped(_)), "{}", report.stop);
        } else {
            assert!(n1 <= n0, "{}: {n0} -> {n1}", before.name);
            removed += n0 - n1;
        }
    }
    assert!(iter_seen);
    // The residual's sign rules (benches/rules.rs: 10 of its 286 operations).
    assert!(removed >= 10, "{removed} operations removed");
}
