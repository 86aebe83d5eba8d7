//! The second tier of tiered compilation: the types that `crate::compile` built at
//! LLVM level 0 are compiled at the requested level on a thread of their own, into
//! the build's JIT and the object cache, and published to the model's function table
//! ([`fdc_runtime::table::Upgrade`]), which the step loop switches to between two
//! steps. The optimized code is computed from the same simplified IR as the quick
//! code, and no fast-math flag is ever set, so both compute the same bits.

use crate::compile::{add_timings, encode_which, Pending};
use fdc_backend::{SharedJit, Timings};
use fdc_runtime::table::{ElementFn, Role, Tier, Upgrade};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

/// The optimizing build running beside the model.
pub struct TierBuild {
    upgrade: Arc<Upgrade>,
    handle: JoinHandle<Result<TierReport, String>>,
}

/// What the optimizing build did.
#[derive(Clone, Copy, Debug, Default)]
pub struct TierReport {
    /// Element types compiled.
    pub types: usize,
    /// Phases summed over the types; `total` is the wall time of the whole build.
    pub timings: Timings,
}

impl TierBuild {
    /// Where the optimized code is published (once the build is done).
    pub fn upgrade(&self) -> &Arc<Upgrade> {
        &self.upgrade
    }

    /// Waits for the build; its error if a type failed to compile (the model then
    /// keeps running on the level-0 code, which computes the same numbers).
    pub fn wait(self) -> Result<TierReport, String> {
        self.handle
            .join()
            .unwrap_or_else(|_| Err("the optimizing compile thread panicked".into()))
    }
}

/// One type awaiting its optimized code: its index in the table, its roles in the
/// order of its role functions, and its simplified IR.
pub(crate) struct Job {
    pub type_index: usize,
    pub roles: Vec<Role>,
    pub pending: Pending,
}

/// Starts compiling `jobs` at `opts` on another thread; `n_types` is the table's
/// number of element types.
pub(crate) fn start(
    jobs: Vec<Job>,
    n_types: usize,
    jit: SharedJit,
    opts: fdc_backend::Options,
) -> Result<TierBuild, String> {
    let upgrade = Arc::new(Upgrade::default());
    let published = upgrade.clone();
    let handle = std::thread::Builder::new()
        .name("fdc-tier2".into())
        .stack_size(fdc_frontend::stack::COMPILE_STACK_BYTES)
        .spawn(move || {
            let (tier, report) = build(jobs, n_types, &jit, &opts)?;
            published.publish(tier);
            Ok(report)
        })
        .map_err(|e| format!("cannot start the optimizing compile thread: {e}"))?;
    Ok(TierBuild { upgrade, handle })
}

fn build(
    jobs: Vec<Job>,
    n_types: usize,
    jit: &SharedJit,
    opts: &fdc_backend::Options,
) -> Result<(Tier, TierReport), String> {
    let start = Instant::now();
    let mut functions: Vec<[Option<ElementFn>; Role::ALL.len()]> =
        vec![Default::default(); n_types];
    let mut report = TierReport::default();
    for job in jobs {
        let p = job.pending;
        let compiled = fdc_backend::compile_recorded_in(
            &p.graph,
            &p.funcs,
            opts,
            p.token,
            &encode_which(&p.which),
            Some(jit),
        )
        .map_err(|e| e.to_string())?;
        let slots = &mut functions[job.type_index];
        for (role, &k) in job.roles.iter().zip(&p.which) {
            slots[*role as usize] = Some(compiled.functions[k]);
        }
        add_timings(&mut report.timings, &compiled.timings);
        report.types += 1;
    }
    report.timings.total = start.elapsed().as_secs_f64() * 1e3;
    let tier = Tier {
        functions,
        owner: jit.owner(),
    };
    Ok((tier, report))
}
