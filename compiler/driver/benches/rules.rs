//! What the e-graph simplifier buys, per role, for every element type of the standard
//! library (`tests/driver/every_stdlib_type.fd`) and of the vehicle
//! (`examples/vehicle.fd`): operations removed by each rule family (the full rule set
//! against the set without that family), by the e-graph without any rule (its
//! hash-consing, constant folding and extraction alone), and the simplifier's time;
//! then, for a few types, whether the removed operations show at LLVM level 2 (which
//! does its own CSE and instcombine): ns per call and level-2 compile time of the
//! unsimplified, rule-less and fully simplified IR. Every figure is measured in this
//! one invocation; times are the calling thread's CPU time (preemption by the other
//! processes of a loaded machine does not count), the best of several interleaved
//! repetitions. Not a test: run with
//!
//! ```sh
//! cargo bench --workspace --bench rules --profile dev      # add `-- quick`
//! ```

use fdc_backend::{compile, CacheMode, Options};
use fdc_driver::pipeline::{front, type_funcs, BuildError};
use fdc_ir::simplify::{rules::FAMILIES, simplify_without, Limits};
use fdc_ir::stats::stats;
use fdc_ir::{Func, Graph, Slot};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const STDLIB: &str = include_str!("../tests/driver/every_stdlib_type.fd");

/// Types whose code is compiled and timed at level 2 (every role of each).
const TIMED: &[&str] = &["spring_damper", "revolute", "torsion_spring", "rod"];

/// The families that remove no operation of any role of the standard library or the
/// vehicle (measured here): what switching them off saves in time.
const IDLE: &[&str] = &["abs", "div-pow2", "pow", "select"];

/// CPU time of the calling thread [ms].
fn cpu_ms() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid clock id and a valid out pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 * 1e3 + ts.tv_nsec as f64 * 1e-6
}

fn lowered(path: &Path) -> fdc_lower::LoweredModel {
    match front(path, &[]) {
        Ok(f) => f.lowered,
        Err(BuildError::Backend(e) | BuildError::Usage(e)) => panic!("{e}"),
        Err(BuildError::Model { .. }) => panic!("{} does not build", path.display()),
    }
}

/// Operations and best time [ms] of simplifying `f` without the families `off`.
fn simplified(g: &Graph, f: &Func, off: &[&str], reps: usize) -> (usize, f64, Graph, Func) {
    let mut best = f64::INFINITY;
    let mut last = None;
    for _ in 0..reps {
        let t = cpu_ms();
        let s = simplify_without(g, &f.outputs, &Limits::default(), off);
        best = best.min(cpu_ms() - t);
        last = Some(s);
    }
    let s = last.expect("reps > 0");
    let func = Func {
        name: f.name.clone(),
        inputs: f.inputs,
        outputs: s.outputs.clone(),
    };
    (stats(&s.graph, &s.outputs).total, best, s.graph, func)
}

/// Sums per role over the types.
#[derive(Default)]
struct Sums {
    functions: usize,
    before: usize,
    none: usize,
    full: usize,
    /// Per family: operations of the full set minus the set without the family
    /// (negative: the family's absence lets extraction find a cheaper form).
    family: BTreeMap<&'static str, i64>,
    t_none: f64,
    t_full: f64,
    /// Without the [`IDLE`] families: operations and time.
    idle_off: usize,
    t_idle_off: f64,
}

fn families() -> Vec<&'static str> {
    FAMILIES.iter().map(|(f, _)| *f).collect()
}

/// Op counts and simplifier times per role of every type of `l`.
fn op_table(label: &str, l: &fdc_lower::LoweredModel, reps: usize) {
    let all = families();
    let mut sums: BTreeMap<String, Sums> = BTreeMap::new();
    let mut seen = std::collections::HashSet::new();
    for ty in &l.types {
        for f in type_funcs(ty) {
            // A connector's iter_noqv is its iter: counted once.
            if !seen.insert((ty.name.clone(), f.outputs.clone())) {
                continue;
            }
            let role = f.name.rsplit("::").next().unwrap_or("?").to_string();
            let s = sums.entry(role).or_default();
            s.functions += 1;
            s.before += stats(&l.graph, &f.outputs).total;
            let (none, t_none, ..) = simplified(&l.graph, &f, &all, reps);
            let (full, t_full, ..) = simplified(&l.graph, &f, &[], reps);
            s.none += none;
            s.full += full;
            s.t_none += t_none;
            s.t_full += t_full;
            let (idle_off, t_idle_off, ..) = simplified(&l.graph, &f, IDLE, reps);
            s.idle_off += idle_off;
            s.t_idle_off += t_idle_off;
            for fam in &all {
                let (without, ..) = simplified(&l.graph, &f, &[fam], 1);
                *s.family.entry(fam).or_default() += without as i64 - full as i64;
            }
        }
    }
    println!(
        "\n## {label}: operations per role (sum over types), simplifier CPU ms (best of {reps})\n"
    );
    let fam_cols: Vec<String> = all.iter().map(|f| format!("{f} |")).collect();
    println!(
        "| role | fns | ops before | no rules | all rules | removed by e-graph alone | by rules | {} ms no rules | ms all | ops without {} | ms |",
        fam_cols.join(" "),
        IDLE.join("+")
    );
    println!(
        "|---|---|---|---|---|---|---|{}---|---|---|---|",
        "---|".repeat(all.len())
    );
    for (role, s) in &sums {
        let fams: Vec<String> = all
            .iter()
            .map(|f| format!("{} |", s.family.get(f).copied().unwrap_or(0)))
            .collect();
        println!(
            "| {role} | {} | {} | {} | {} | {} | {} | {} {:.1} | {:.1} | {} | {:.1} |",
            s.functions,
            s.before,
            s.none,
            s.full,
            s.before as i64 - s.none as i64,
            s.none as i64 - s.full as i64,
            fams.join(" "),
            s.t_none,
            s.t_full,
            s.idle_off,
            s.t_idle_off
        );
    }
}

/// Nanoseconds per call of `f` on fixed inputs, at least `min_ms` of calls.
fn ns_per_call(f: fdc_runtime::table::ElementFn, func: &Func, min_ms: f64) -> f64 {
    let ins: Vec<Vec<f64>> = Slot::ALL
        .iter()
        .map(|&s| {
            (0..func.inputs.get(s))
                .map(|i| 0.1 + (i % 13) as f64 * 0.037)
                .collect()
        })
        .collect();
    let mut out = vec![0.0; func.outputs.len()];
    let mut iters = 1u64;
    loop {
        let t = cpu_ms();
        for _ in 0..iters {
            // SAFETY: every input array has the size the function declares for its
            // slot, `out` one number per output.
            unsafe {
                f(
                    ins[0].as_ptr(),
                    ins[1].as_ptr(),
                    ins[2].as_ptr(),
                    ins[3].as_ptr(),
                    ins[4].as_ptr(),
                    ins[5].as_ptr(),
                    ins[6].as_ptr(),
                    ins[7].as_ptr(),
                    out.as_mut_ptr(),
                )
            };
            std::hint::black_box(&mut out);
        }
        let el = cpu_ms() - t;
        if el >= min_ms {
            return el * 1e6 / iters as f64;
        }
        iters *= 2;
    }
}

/// One variant of one role: its graph and function, ops, best ns/call, best level-2
/// compile ms (optimize + codegen).
struct Variant {
    graph: Graph,
    func: Func,
    ops: usize,
    ns: f64,
    compile: f64,
}

fn timed_rows(l: &fdc_lower::LoweredModel, reps: usize, min_ms: f64) {
    let level2 = Options {
        opt_level: 2,
        cache: CacheMode::Off,
    };
    let all = families();
    println!("\n## ns per call (CPU) and level-2 compile ms (wall): unsimplified / e-graph without rules / all rules (best of {reps})\n");
    println!("| type::role | ops raw | no rules | all | ns raw | ns no rules | ns all | all/raw | compile ms raw | no rules | all |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    let mut seen = std::collections::HashSet::new();
    for ty in l.types.iter().filter(|t| TIMED.contains(&t.name.as_str())) {
        for f in type_funcs(ty) {
            if !seen.insert((ty.name.clone(), f.outputs.clone())) {
                continue;
            }
            let mut raw_g = Graph::with_tables_of(&l.graph);
            let raw_out = l.graph.extract(&f.outputs, &mut raw_g);
            let raw_f = Func {
                outputs: raw_out,
                ..f.clone()
            };
            let (n_none, _, g_none, f_none) = simplified(&l.graph, &f, &all, 1);
            let (n_full, _, g_full, f_full) = simplified(&l.graph, &f, &[], 1);
            let mut v = [
                Variant {
                    ops: stats(&raw_g, &raw_f.outputs).total,
                    graph: raw_g,
                    func: raw_f,
                    ns: f64::INFINITY,
                    compile: f64::INFINITY,
                },
                Variant::new(g_none, f_none, n_none),
                Variant::new(g_full, f_full, n_full),
            ];
            // Interleaved repetitions: the machine's load hits every variant alike.
            for _ in 0..reps {
                for x in v.iter_mut() {
                    let c = compile(&x.graph, std::slice::from_ref(&x.func), &level2)
                        .expect("compiles");
                    x.compile = x.compile.min(c.timings.optimize + c.timings.codegen);
                    x.ns = x.ns.min(ns_per_call(c.functions[0], &x.func, min_ms));
                }
            }
            println!(
                "| {} | {} | {} | {} | {:.0} | {:.0} | {:.0} | {:.2} | {:.1} | {:.1} | {:.1} |",
                f.name,
                v[0].ops,
                v[1].ops,
                v[2].ops,
                v[0].ns,
                v[1].ns,
                v[2].ns,
                v[2].ns / v[0].ns,
                v[0].compile,
                v[1].compile,
                v[2].compile
            );
        }
    }
}

impl Variant {
    fn new(graph: Graph, func: Func, ops: usize) -> Variant {
        Variant {
            graph,
            func,
            ops,
            ns: f64::INFINITY,
            compile: f64::INFINITY,
        }
    }
}

fn main() {
    let quick = std::env::args().any(|a| a == "quick");
    let (reps, min_ms) = if quick { (1, 5.0) } else { (5, 20.0) };
    let dir = tempfile::tempdir().expect("temp dir");
    let stdlib = dir.path().join("every_stdlib_type.fd");
    std::fs::write(&stdlib, STDLIB).expect("writes the model");
    let vehicle = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/vehicle.fd");
    let (s, v) = (lowered(&stdlib), lowered(&vehicle));
    println!("# rule families: {}", families().join(", "));
    op_table("standard library", &s, reps);
    op_table("vehicle", &v, reps);
    timed_rows(&s, reps, min_ms);
}
