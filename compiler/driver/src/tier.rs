//! The second tier of tiered compilation: the types that `crate::compile` built at
//! LLVM level 0 are compiled at the requested level on threads of their own, into
//! the build's JIT and the object cache, and published to the model's function table
//! ([`fdc_runtime::table::Upgrade`]), which the step loop switches to between two
//! steps. The quick code is the unsimplified roles at level 0; here they are
//! simplified (`crate::compile::prepare`) and compiled at the requested level. Every
//! simplifier rule is IEEE-exact and no fast-math flag is ever set, so both tiers
//! compute the same bits.
//!
//! Threads: while the model runs, one core is the run's, so the types are compiled on
//! `threads - 1` workers (at least one), `threads` being the build's bound on compile
//! threads (`crate::compile::jobs`: the available cores unless told otherwise). When
//! the caller stops to wait ([`TierBuild::wait`], e.g. `fdc run` after its results are
//! written) its core is free again, and helpers join the workers up to `threads`; all
//! of them take the next type from one shared counter. The result does not depend on
//! which thread built which type: every type is built alone, the table is put together
//! in type order.

use crate::compile::{add_timings, encode_which, prepare, Pending};
use fdc_backend::{SharedJit, Timings};
use fdc_runtime::table::{ElementFn, Role, Tier, Upgrade};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Instant;

/// The optimizing build running beside the model.
pub struct TierBuild {
    upgrade: Arc<Upgrade>,
    shared: Arc<Shared>,
    workers: Vec<JoinHandle<()>>,
    /// The bound on compile threads once the caller waits.
    threads: usize,
}

/// What the optimizing build did.
#[derive(Clone, Copy, Debug, Default)]
pub struct TierReport {
    /// Element types compiled.
    pub types: usize,
    /// Phases summed over the types; `total` is the wall time of the whole build.
    pub timings: Timings,
    /// Simplifier milliseconds, summed over the types.
    pub simplify: f64,
    /// The most threads that compiled at once (workers plus the helpers of `wait`).
    pub threads: usize,
}

impl TierBuild {
    /// Where the optimized code is published (once the build is done).
    pub fn upgrade(&self) -> &Arc<Upgrade> {
        &self.upgrade
    }

    /// Waits for the build, compiling the types nobody has started yet on helper
    /// threads (the caller's core is idle meanwhile); its error if a type failed to
    /// compile (the model then keeps running on the level-0 code, which computes the
    /// same numbers). The types that did compile are in the cache either way.
    pub fn wait(mut self) -> Result<TierReport, String> {
        let helpers = self.threads.saturating_sub(self.workers.len());
        for _ in 0..helpers {
            if self.shared.next.load(Ordering::Relaxed) >= self.shared.jobs.len() {
                break;
            }
            // A helper that cannot be spawned only means the workers do its share.
            if let Ok(h) = spawn(&self.shared, "fdc-tier2-helper") {
                self.workers.push(h);
            }
        }
        let threads = self.workers.len();
        for h in self.workers.drain(..) {
            // A worker catches the panics of its compiles; one that died anyway left
            // its type unfinished, which the check below reports.
            let _ = h.join();
        }
        let mut state = lock(&self.shared.state);
        match state.outcome.take() {
            Some(Ok(report)) => Ok(TierReport { threads, ..report }),
            Some(Err(e)) => Err(e),
            None => Err("an optimizing compile thread died before its type was built".into()),
        }
    }
}

/// One type awaiting its optimized code: its index in the table, its roles in the
/// order of its role functions, and its unsimplified IR.
pub(crate) struct Job {
    pub type_index: usize,
    pub roles: Vec<Role>,
    pub pending: Pending,
}

/// What the threads of one build share.
struct Shared {
    jobs: Vec<Job>,
    n_types: usize,
    jit: SharedJit,
    opts: fdc_backend::Options,
    upgrade: Arc<Upgrade>,
    /// The next job to take.
    next: AtomicUsize,
    state: Mutex<State>,
    start: Instant,
}

/// One job built: its unique functions, for each role function (in the order of
/// `Pending::funcs`) the index of the one serving it, the backend's times and the
/// simplifier's milliseconds.
type Built = Result<(Vec<ElementFn>, Vec<usize>, Timings, f64), String>;

#[derive(Default)]
struct State {
    /// Per job, once built.
    done: Vec<Option<Built>>,
    finished: usize,
    /// Set by the thread that finishes the last job.
    outcome: Option<Result<TierReport, String>>,
}

fn lock(m: &Mutex<State>) -> MutexGuard<'_, State> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Starts compiling `jobs` at `opts`; `n_types` is the table's number of element
/// types, `threads` the bound on compile threads (see the module comment).
pub(crate) fn start(
    jobs: Vec<Job>,
    n_types: usize,
    jit: SharedJit,
    opts: fdc_backend::Options,
    threads: usize,
) -> Result<TierBuild, String> {
    let upgrade = Arc::new(Upgrade::default());
    let n = jobs.len();
    let threads = threads.clamp(1, n.max(1));
    let shared = Arc::new(Shared {
        jobs,
        n_types,
        jit,
        opts,
        upgrade: upgrade.clone(),
        next: AtomicUsize::new(0),
        state: Mutex::new(State {
            done: (0..n).map(|_| None).collect(),
            ..State::default()
        }),
        start: Instant::now(),
    });
    let mut workers = Vec::new();
    for _ in 0..threads.saturating_sub(1).max(1) {
        match spawn(&shared, "fdc-tier2") {
            Ok(h) => workers.push(h),
            // One worker is enough to finish the build.
            Err(_) if !workers.is_empty() => break,
            Err(e) => return Err(format!("cannot start the optimizing compile thread: {e}")),
        }
    }
    Ok(TierBuild {
        upgrade,
        shared,
        workers,
        threads,
    })
}

fn spawn(shared: &Arc<Shared>, name: &str) -> std::io::Result<JoinHandle<()>> {
    let shared = shared.clone();
    std::thread::Builder::new()
        .name(name.into())
        .stack_size(fdc_frontend::stack::COMPILE_STACK_BYTES)
        .spawn(move || work(&shared))
}

/// Takes jobs until none is left; the thread finishing the last one publishes.
fn work(shared: &Shared) {
    loop {
        let k = shared.next.fetch_add(1, Ordering::Relaxed);
        let Some(job) = shared.jobs.get(k) else {
            return;
        };
        let built = catch_unwind(AssertUnwindSafe(|| compile_job(job, shared)))
            .unwrap_or_else(|_| Err(format!("{}: the optimizing compile panicked", name(job))));
        let mut state = lock(&shared.state);
        state.done[k] = Some(built);
        state.finished += 1;
        if state.finished == shared.jobs.len() {
            let outcome = finish(shared, &mut state.done);
            state.outcome = Some(outcome);
        }
    }
}

/// The element type of a job, for messages (role functions are named `type::role`).
fn name(job: &Job) -> &str {
    let f = job.pending.funcs.first().map_or("?", |f| f.name.as_str());
    f.split("::").next().unwrap_or(f)
}

fn compile_job(job: &Job, shared: &Shared) -> Built {
    let p = &job.pending;
    let (simplified, unique, which, simplify) = prepare(&p.graph, p.funcs.clone(), p.simplify);
    let compiled = fdc_backend::compile_recorded_in(
        simplified.as_ref().unwrap_or(&p.graph),
        &unique,
        &shared.opts,
        p.token.clone(),
        &encode_which(&which),
        Some(&shared.jit),
    )
    .map_err(|e| format!("{}: {e}", name(job)))?;
    Ok((compiled.functions, which, compiled.timings, simplify))
}

/// Puts the built types into a tier, in type order, and publishes it; the first error
/// of a type instead (nothing is published then).
fn finish(shared: &Shared, done: &mut [Option<Built>]) -> Result<TierReport, String> {
    let mut functions: Vec<[Option<ElementFn>; Role::ALL.len()]> =
        vec![Default::default(); shared.n_types];
    let mut report = TierReport::default();
    for (job, built) in shared.jobs.iter().zip(done.iter_mut()) {
        let (compiled, which, timings, simplify) = built
            .take()
            .unwrap_or_else(|| Err(format!("{}: not built", name(job))))?;
        let slots = &mut functions[job.type_index];
        for (role, &k) in job.roles.iter().zip(&which) {
            slots[*role as usize] = Some(compiled[k]);
        }
        add_timings(&mut report.timings, &timings);
        report.simplify += simplify;
        report.types += 1;
    }
    report.timings.total = shared.start.elapsed().as_secs_f64() * 1e3;
    shared.upgrade.publish(Tier {
        functions,
        owner: shared.jit.owner(),
    });
    Ok(report)
}
