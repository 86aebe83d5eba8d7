//! Nanoseconds per call of every role of every element type of the standard library
//! (`tests/driver/every_stdlib_type.fd`), as the driver simplifies it and LLVM
//! compiles it at level 2, each role its own function (so `iter` here is the matrix
//! alone, as a build before the fused role compiled it: the baseline). Per type the
//! last columns compare the fused `res_iter` with the separate `res` + `iter` calls
//! it replaces at the start of a step (the baseline, measured in the same run), and
//! give the operations of the three. Times are the calling thread's CPU time (the
//! other processes of a loaded machine do not count), the best of interleaved
//! repetitions, on the first instance's parameters and fixed other inputs (generated
//! code has no branches, so the values do not change the path). Not a test: run with
//!
//! ```sh
//! cargo bench -p fdc-driver --bench roles            # add `-- quick`
//! ```

use fdc_backend::{compile, CacheMode, Options};
use fdc_driver::pipeline::{front, simplify_all, type_funcs, BuildError};
use fdc_ir::stats::op_count;
use fdc_ir::{Func, Slot};
use fdc_runtime::table::{ElementFn, Role};
use std::path::PathBuf;

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

/// The inputs of one call: `params` in the parameter slot, fixed numbers elsewhere.
struct Call {
    ins: Vec<Vec<f64>>,
    out: Vec<f64>,
}

impl Call {
    fn new(func: &Func, params: &[f64]) -> Call {
        let ins = Slot::ALL
            .iter()
            .map(|&s| {
                let n = func.inputs.get(s);
                if s == Slot::P && params.len() == n {
                    return params.to_vec();
                }
                (0..n).map(|i| 0.1 + (i % 13) as f64 * 0.037).collect()
            })
            .collect();
        Call {
            ins,
            out: vec![0.0; func.outputs.len()],
        }
    }

    fn run(&mut self, f: ElementFn) {
        let p = |s: usize| self.ins[s].as_ptr();
        // SAFETY: every input array has the size the function declares for its slot,
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
                self.out.as_mut_ptr(),
            )
        };
        std::hint::black_box(&mut self.out);
    }
}

/// Nanoseconds per round of `fs` (called in turn), at least `min_ms` of rounds.
fn ns_per_round(fs: &mut [(ElementFn, Call)], min_ms: f64) -> f64 {
    let mut rounds = 1u64;
    loop {
        let t = cpu_ms();
        for _ in 0..rounds {
            for (f, call) in fs.iter_mut() {
                call.run(*f);
            }
        }
        let el = cpu_ms() - t;
        if el >= min_ms {
            return el * 1e6 / rounds as f64;
        }
        rounds *= 2;
    }
}

/// The roles of the table's columns, then the fused role and its baseline.
const COLUMNS: [Role; 9] = [
    Role::Res,
    Role::Iter,
    Role::IterNoqv,
    Role::Ic,
    Role::Init,
    Role::Update,
    Role::Scale,
    Role::Out,
    Role::Post,
];

fn main() {
    let quick = std::env::args().any(|a| a == "quick");
    let (reps, min_ms) = if quick { (2, 2.0) } else { (5, 10.0) };
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/driver/every_stdlib_type.fd");
    let l = match front(&path, &[]) {
        Ok(f) => f.lowered,
        Err(BuildError::Backend(e) | BuildError::Usage(e)) => panic!("{e}"),
        Err(BuildError::Model { .. }) => panic!("{} does not build", path.display()),
    };
    let level2 = Options {
        opt_level: 2,
        cache: CacheMode::Off,
    };
    println!("\n## ns per call (CPU, best of {reps}), level 2, every stdlib type\n");
    let names: Vec<&str> = COLUMNS.iter().map(|r| r.name()).collect();
    println!(
        "| type | {} | res_iter | res + iter | ratio | ops res / iter / res_iter |",
        names.join(" | ")
    );
    println!("|---|{}---:|---:|---:|---:|", "---:|".repeat(COLUMNS.len()));
    for (k, ty) in l.types.iter().enumerate() {
        let params = l
            .instances
            .iter()
            .find(|i| i.type_index == k)
            .map_or(&[][..], |i| &i.params[..]);
        let (g, funcs, _) = simplify_all(&l.graph, type_funcs(ty));
        let code = compile(&g, &funcs, &level2).expect("compiles");
        let at = |r: Role| ty.roles.iter().position(|x| x.0 == r);
        let timed = |rs: &[Role]| -> Option<Vec<(ElementFn, Call)>> {
            rs.iter()
                .map(|&r| at(r).map(|i| (code.functions[i], Call::new(&funcs[i], params))))
                .collect()
        };
        // Columns, then res_iter, then the baseline pair; each repetition measures
        // all of them in turn (interleaved), the best is kept.
        let mut groups: Vec<Option<Vec<(ElementFn, Call)>>> =
            COLUMNS.iter().map(|&r| timed(&[r])).collect();
        groups.push(timed(&[Role::ResIter]));
        groups.push(timed(&[Role::Res, Role::Iter]));
        let mut best = vec![f64::INFINITY; groups.len()];
        for _ in 0..reps {
            for (b, grp) in best.iter_mut().zip(groups.iter_mut()) {
                if let Some(fs) = grp {
                    *b = b.min(ns_per_round(fs, min_ms));
                }
            }
        }
        let cell = |x: f64| {
            if x.is_finite() {
                format!("{x:.0}")
            } else {
                "–".to_string()
            }
        };
        let cells: Vec<String> = best.iter().map(|&x| cell(x)).collect();
        let n = COLUMNS.len();
        let ops = |r: Role| at(r).map_or(0, |i| op_count(&g, &funcs[i].outputs));
        println!(
            "| {} | {} | {:.2} | {} / {} / {} |",
            ty.name,
            cells.join(" | "),
            best[n] / best[n + 1],
            ops(Role::Res),
            ops(Role::Iter),
            ops(Role::ResIter)
        );
    }
}
