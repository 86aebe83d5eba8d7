//! `fdc FILE.fd` / `fdc run FILE.fd`: compile and simulate in one call, write the
//! results as CSV and a summary on stderr.

use clap::Args;
use fdc_driver::fds::{import_file, is_fds, ImportError};
use fdc_driver::pipeline::{
    build_from, build_from_tiered, render, BuildError, BuildOptions, Built, ModelSource,
};
use fdc_driver::profile::Profile;
use fdc_driver::results::CsvSink;
use fdc_driver::settings::{parse_newton, runtime_settings, Overrides};
use fdc_runtime::System;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

/// What every compiling command takes besides the model: parameter values and build
/// flags.
#[derive(Args, Debug, Clone)]
pub struct CompileArgs {
    /// Set a model parameter: NAME=VALUE (repeatable). Never recompiles.
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub set: Vec<String>,
    /// Skip the e-graph simplifier.
    #[arg(long)]
    pub no_egraph: bool,
    /// Compile without the on-disk object cache.
    #[arg(long)]
    pub no_cache: bool,
    /// Directory of the object cache.
    #[arg(long)]
    pub cache_dir: Option<PathBuf>,
    /// LLVM optimization level 0..=3 (default 2). Without it `fdc run` starts on
    /// level-0 code while level 2 is built on another thread (tiered); with it, one tier.
    #[arg(long, value_parser = clap::value_parser!(u8).range(0..=3))]
    pub opt_level: Option<u8>,
}

/// The solver flags of `fdc run` and `fdc sweep`: each overrides its `simulate` key.
#[derive(Args, Debug, Clone, Default)]
pub struct SolverArgs {
    /// End time [s] (overrides `simulate { end }`).
    #[arg(long)]
    pub end: Option<f64>,
    /// Step size [s] (the initial one with --adaptive).
    #[arg(long)]
    pub step: Option<f64>,
    /// Interval of result rows [s]; 0 writes every step.
    #[arg(long)]
    pub output_every: Option<f64>,
    /// HHT alpha in [-1/3, 0]; with constraints at most -0.005.
    #[arg(long, allow_hyphen_values = true)]
    pub alpha: Option<f64>,
    /// Generalized-alpha by its spectral radius at infinity in [0, 1] (instead of
    /// --alpha; 1 = no numerical damping, refused with constraints above 0.95).
    #[arg(long)]
    pub rho_inf: Option<f64>,
    /// HHT form: arnold_bruls (default) or negrut.
    #[arg(long)]
    pub form: Option<String>,
    /// Newton: velocity:TOL, legacy or fixed:N.
    #[arg(long)]
    pub newton: Option<String>,
    /// Error-controlled step size with this (relative) tolerance.
    #[arg(long)]
    pub adaptive: Option<f64>,
    /// Absolute tolerance of the error weights (default: the --adaptive tolerance).
    #[arg(long)]
    pub atol: Option<f64>,
    /// Linear solver: sparse or dense.
    #[arg(long)]
    pub linear: Option<String>,
    /// No initial position assembly (as `simulate { assemble = false; }`).
    #[arg(long)]
    pub no_assemble: bool,
    /// With velocity Newton: the most steps one factorized iteration matrix serves
    /// (default 1000, below which the cost rule decides; 1: a new one every step;
    /// `Settings::matrix_steps`).
    #[arg(long)]
    pub matrix_steps: Option<usize>,
    /// What decides within --matrix-steps whether the matrix serves the next step:
    /// age (until it is that old) or cost (counted costs, the default;
    /// `Settings::matrix_rule`).
    #[arg(long)]
    pub matrix_rule: Option<String>,
}

impl SolverArgs {
    /// The command line's overrides of the model's settings.
    pub fn overrides(&self, timing: bool) -> Result<Overrides, String> {
        Ok(Overrides {
            end: self.end,
            step: self.step,
            output_every: self.output_every,
            alpha: self.alpha,
            rho_inf: self.rho_inf,
            form: self.form.clone(),
            newton: self.newton.as_deref().map(parse_newton).transpose()?,
            adaptive: self.adaptive,
            atol: self.atol,
            linear: self.linear.clone(),
            timing,
            assemble: self.no_assemble.then_some(false),
            matrix_steps: self.matrix_steps,
            matrix_rule: (self.matrix_rule.as_deref())
                .map(fdc_runtime::MatrixRule::parse)
                .transpose()?,
        })
    }
}

#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    /// The model file (`.fd`, or a legacy `.fds`).
    pub file: PathBuf,
    #[command(flatten)]
    pub compile: CompileArgs,
    #[command(flatten)]
    pub solver: SolverArgs,
    /// Results file (CSV); default: next to the model, `<model>.csv`.
    #[arg(short = 'o', long)]
    pub output: Option<PathBuf>,
    /// Print nothing but errors.
    #[arg(short, long)]
    pub quiet: bool,
    /// Print every warning line (e.g. all joints with removed redundant constraints).
    #[arg(long)]
    pub verbose: bool,
    /// Plot these channels after the run (SVG next to the results, or --plot-output).
    #[arg(long, num_args = 1..)]
    pub plot: Vec<String>,
    /// Where `--plot` writes (`.svg`); default: `<model>.svg`.
    #[arg(long)]
    pub plot_output: Option<PathBuf>,
    /// Per-step wall-clock statistics in the summary.
    #[arg(long)]
    pub timing: bool,
    /// Solver profile: `legacy` (default for `.fds` files: Euler-parameter bodies,
    /// legacy Newton and error weights) or `v2` (Lie group, today's defaults). On an
    /// `.fd` file, `legacy` sets the legacy error weights (what `fdc import` files need).
    #[arg(long)]
    pub profile: Option<String>,
}

/// Builds the model; on failure prints why (a model's diagnostics and a code-generation
/// failure exit with 1, a usage problem with 2). The caller prints the warnings. A
/// `.fds` file is imported with the legacy profile.
pub fn build_or_report(file: &Path, opts: &BuildOptions) -> Result<Built, ExitCode> {
    build_model(file, Profile::default(), opts, false).map(|(b, _)| b)
}

/// [`build_or_report`] with a profile for `.fds` files; also returns the imported
/// file's settings that have no `simulate` key. `tiered`: see
/// [`fdc_driver::pipeline::build_from_tiered`].
pub fn build_model(
    file: &Path,
    profile: Profile,
    opts: &BuildOptions,
    tiered: bool,
) -> Result<(Built, Option<fdc_fds::SolverExtras>), ExitCode> {
    let build_src = |src: ModelSource| {
        if tiered {
            build_from_tiered(src, opts)
        } else {
            build_from(src, opts)
        }
    };
    if !is_fds(file) {
        return report(build_src(ModelSource::File(file))).map(|b| (b, None));
    }
    let imported = match import_file(file, profile, None) {
        Ok(i) => i,
        Err(ImportError::Io(e)) => return Err(usage(e)),
        Err(ImportError::Model { files, diagnostics }) => {
            for d in &diagnostics {
                eprint!("{}", d.render(&files));
            }
            return Err(ExitCode::from(1));
        }
    };
    let name = format!("{} (imported)", file.display());
    let src = ModelSource::Text {
        name: &name,
        text: &imported.fd,
        path: file,
    };
    report(build_src(src)).map(|b| (b, Some(imported.extras)))
}

fn report(built: Result<Built, BuildError>) -> Result<Built, ExitCode> {
    match built {
        Ok(b) => Ok(b),
        Err(BuildError::Model { analysis, extra }) => {
            eprint!("{}", render(&analysis, &extra));
            Err(ExitCode::from(1))
        }
        Err(BuildError::Backend(e)) => {
            eprintln!("error: code generation failed: {e}");
            Err(ExitCode::from(1))
        }
        Err(BuildError::Usage(e)) => Err(usage(e)),
    }
}

pub fn usage(msg: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {msg}");
    ExitCode::from(2)
}

/// `NAME=VALUE` pairs of `--set`.
pub fn parse_sets(sets: &[String]) -> Result<Vec<(String, f64)>, String> {
    sets.iter()
        .map(|s| {
            let (n, v) = s
                .split_once('=')
                .ok_or_else(|| format!("`--set {s}`: expected NAME=VALUE"))?;
            let v: f64 = v
                .trim()
                .parse()
                .map_err(|_| format!("`--set {s}`: `{v}` is not a number"))?;
            Ok((n.trim().to_string(), v))
        })
        .collect()
}

/// How the build used the object cache, for the timing lines.
pub fn cache_word(cache_hit: bool, simplifier_skipped: bool) -> &'static str {
    match (cache_hit, simplifier_skipped) {
        (true, true) => "hit, simplifier skipped",
        (true, false) => "hit",
        (false, _) => "miss",
    }
}

pub fn build_options(a: &CompileArgs) -> Result<BuildOptions, String> {
    let cache = if a.no_cache {
        fdc_backend::CacheMode::Off
    } else if let Some(d) = &a.cache_dir {
        fdc_backend::CacheMode::Dir(d.clone())
    } else {
        fdc_backend::CacheMode::Default
    };
    Ok(BuildOptions {
        overrides: parse_sets(&a.set)?,
        simplify: !a.no_egraph,
        backend: fdc_backend::Options {
            opt_level: a.opt_level.unwrap_or(2),
            cache,
        },
        jobs: 0,
    })
}

fn default_output(model: &Path) -> PathBuf {
    model.with_extension("csv")
}

pub fn run(a: &RunArgs) -> ExitCode {
    let file = &a.file;
    if !file.is_file() {
        return usage(format!("cannot read `{}`", file.display()));
    }
    let out_path = a.output.clone().unwrap_or_else(|| default_output(file));
    // Before the build (seconds) when the answer is already known.
    if crate::stop::overwritten_input(&out_path, std::slice::from_ref(file)).is_some() {
        return usage(format!(
            "the results file `{}` is the model itself; choose another with -o",
            out_path.display()
        ));
    }
    let (opts, overrides, profile) = match run_options(a) {
        Ok(o) => o,
        Err(e) => return usage(e),
    };
    let t_build = Instant::now();
    // Tiered unless a level is asked for.
    let tiered = a.compile.opt_level.is_none();
    let (mut built, extras) = match build_model(file, profile.unwrap_or_default(), &opts, tiered) {
        Ok(b) => b,
        Err(code) => return code,
    };
    let build_ms = t_build.elapsed().as_secs_f64() * 1e3;
    if !a.quiet {
        for w in &built.warnings {
            eprint!("{w}");
        }
    }
    let mut settings = match runtime_settings(&built.settings, &overrides) {
        Ok(s) => s,
        Err(e) => return usage(e),
    };
    // A `.fds` file always runs with a profile; an `.fd` file only when asked.
    if let Some(p) = profile.or(extras.as_ref().map(|_| Profile::default())) {
        p.apply(&mut settings, extras.as_ref());
    }
    if let Some(input) = crate::stop::overwritten_input(&out_path, &built.inputs) {
        return usage(format!(
            "the results file `{}` would overwrite `{}`, which the model reads; choose another with -o",
            out_path.display(),
            input.display()
        ));
    }
    let sink = match CsvSink::create(&out_path) {
        Ok(s) => s,
        Err(e) => return usage(format!("cannot write `{}`: {e}", out_path.display())),
    };
    let summary = BuildSummary::of(&built, build_ms);
    let tier = built.tier.take();
    let mut sys = match System::new(built.model) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(1);
        }
    };
    let t_run = Instant::now();
    let signals = match crate::stop::Signals::register() {
        Ok(s) => s,
        Err(e) => return usage(format!("cannot install the SIGINT/SIGTERM handlers: {e}")),
    };
    let mut progress = Progress::new(sink, settings.end, a.quiet, &out_path, signals);
    let result = sys.run(&settings, &mut progress);
    let wall = t_run.elapsed().as_secs_f64();
    // A signal after the last row: the results are complete, the exit still says so.
    progress.stop_if_signalled(stats_t(&result));
    let non_finite = progress.inner.non_finite.warnings();
    let rows = progress.finish();
    let (stats, failure) = match result {
        Ok(s) => (s, None),
        Err(e) => (e.stats.clone(), Some(e)),
    };
    // Removed redundant constraints (e.g. a planar loop of 3-D joints).
    for w in fdc_driver::report::warning_lines(&sys, a.verbose) {
        eprintln!("{w}");
    }
    if !a.quiet {
        if let Some(line) = fdc_driver::report::assembly_line(sys.assembly_corrections()) {
            eprintln!("{line}");
        }
        summary.print(sys.redundant_removed());
        print_run_stats(&stats, wall);
        if let Ok(n) = &rows {
            eprintln!("results: {} ({n} rows)", out_path.display());
        }
    }
    // Last in the summary, also with -q: results that are not numbers.
    for w in &non_finite {
        eprintln!("warning: {w}");
    }
    finish_tier(tier, sys.code_upgraded(), a.verbose && !a.quiet);
    // Also with -q: every non-zero exit says why.
    if let Err(e) = &rows {
        eprintln!("error: writing `{}`: {e}", out_path.display());
    }
    let plot_failed = !a.plot.is_empty() && rows.is_ok() && !plot(a, &out_path);
    if let Some(e) = failure {
        eprintln!("error: {e}");
        eprintln!(
            "the rows up to t = {:.6} s are kept in {}",
            e.stats.t,
            out_path.display()
        );
        return ExitCode::from(1);
    }
    if rows.is_err() || plot_failed {
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}

/// Waits for the optimizing tier of a tiered build (the results are complete by then):
/// the cache gets the optimized code, so the next run starts on it. `verbose` says
/// when it was ready and whether the run switched to it.
fn finish_tier(tier: Option<fdc_driver::tier::TierBuild>, upgraded: bool, verbose: bool) {
    let Some(t) = tier else { return };
    match t.wait() {
        Ok(r) if verbose => eprintln!(
            "tiers: level 0 first, optimized code of {} types ready after {:.0} ms \
             ({} threads at most){}",
            r.types,
            r.timings.total,
            r.threads,
            if upgraded {
                ", switched during the run"
            } else {
                ""
            }
        ),
        Ok(_) => {}
        Err(e) => {
            eprintln!("warning: the optimized code was not built ({e}); the run used level 0")
        }
    }
}

/// The build options, solver overrides and profile a run was given.
fn run_options(a: &RunArgs) -> Result<(BuildOptions, Overrides, Option<Profile>), String> {
    let opts = build_options(&a.compile)?;
    let overrides = a.solver.overrides(a.timing)?;
    let profile = a.profile.as_deref().map(Profile::parse).transpose()?;
    Ok((opts, overrides, profile))
}

/// `--plot`: draws the channels from the results file; false if that failed (said).
fn plot(a: &RunArgs, out_path: &Path) -> bool {
    let plot_path = a
        .plot_output
        .clone()
        .unwrap_or_else(|| a.file.with_extension("svg"));
    let drawn = crate::plot::read_channels(out_path, &a.plot)
        .and_then(|(t, s)| crate::plot::draw(&plot_path, &t, &a.plot, &s));
    match drawn {
        Ok(()) if !a.quiet => eprintln!("plot: {}", plot_path.display()),
        Ok(()) => {}
        Err(e) => {
            eprintln!("error: {e}");
            return false;
        }
    }
    true
}

/// What `fdc run` says about the model and its build after the run.
struct BuildSummary {
    bodies: usize,
    dofs: usize,
    constraints: usize,
    element_types: usize,
    instances: usize,
    structure_set: Vec<String>,
    build_ms: f64,
    timings: fdc_driver::pipeline::BuildTimings,
    cache: &'static str,
}

impl BuildSummary {
    fn of(built: &Built, build_ms: f64) -> BuildSummary {
        BuildSummary {
            bodies: built.bodies.len(),
            dofs: built.model.nv,
            constraints: built.model.nl,
            element_types: built.element_types,
            instances: built.model.instances.len(),
            structure_set: built.structure_set.clone(),
            build_ms,
            timings: built.timings,
            cache: cache_word(built.cache_hit, built.simplifier_skipped),
        }
    }

    /// The `model:`, `structure:`, `dofs:` and `build:` lines; `removed` redundant
    /// constraint rows.
    fn print(&self, removed: usize) {
        let tm = &self.timings;
        eprintln!(
            "model: {} bodies, {} dofs, {} constraints, {} element types, {} instances",
            self.bodies, self.dofs, self.constraints, self.element_types, self.instances
        );
        if !self.structure_set.is_empty() {
            eprintln!(
                "structure: --set {} changed the instances (loops and conditions expanded again)",
                self.structure_set.join(", ")
            );
        }
        eprintln!(
            "dofs: {}",
            fdc_driver::report::dof_line(self.bodies, self.dofs, self.constraints, Some(removed))
        );
        eprintln!(
        "build: {:.0} ms (parse+check {:.0}, lower+differentiate {:.0}, simplify {:.0}, LLVM {:.0}; cache {})",
        self.build_ms,
        tm.parse_check,
        tm.lower_diff,
        tm.simplify,
        tm.backend.total,
        self.cache
    );
    }
}

/// The `run:` line (steps, Newton work, real-time factor) and, when measured, the
/// step-time percentiles.
fn print_run_stats(stats: &fdc_runtime::RunStats, wall: f64) {
    let per_step = |n: usize| {
        if stats.steps > 0 {
            n as f64 / stats.steps as f64
        } else {
            0.0
        }
    };
    eprintln!(
        "run: t = {:.6} s in {} steps ({} rejected), Newton {:.2} iterations/step ({:.2} factorizations), wall {:.3} s, real-time factor {:.1}",
        stats.t,
        stats.steps,
        stats.rejected,
        per_step(stats.newton_iterations),
        per_step(stats.factorizations),
        wall,
        if wall > 0.0 { stats.t / wall } else { f64::INFINITY }
    );
    if let Some(tm) = &stats.timing {
        eprintln!(
            "step time [µs]: min {:.1}, median {:.1}, p99 {:.1}, p99.9 {:.1}, max {:.1}",
            tm.min * 1e6,
            tm.median * 1e6,
            tm.p99 * 1e6,
            tm.p999 * 1e6,
            tm.max * 1e6
        );
    }
}

/// The time a run reached, finished or failed.
fn stats_t(r: &Result<fdc_runtime::RunStats, fdc_runtime::SimError>) -> f64 {
    match r {
        Ok(s) => s.t,
        Err(e) => e.stats.t,
    }
}

/// Passes rows on to the CSV and shows a progress bar on a terminal once a run has
/// taken more than a second (short runs stay quiet; pipes and files never see it).
/// Also where a SIGINT/SIGTERM ends the run: after a whole row ([`crate::stop`]).
struct Progress {
    inner: CsvSink,
    bar: Option<indicatif::ProgressBar>,
    start: Instant,
    end: f64,
    enabled: bool,
    path: PathBuf,
    signals: crate::stop::Signals,
}

impl Progress {
    fn new(
        inner: CsvSink,
        end: f64,
        quiet: bool,
        path: &Path,
        signals: crate::stop::Signals,
    ) -> Progress {
        use std::io::IsTerminal;
        Progress {
            inner,
            bar: None,
            start: Instant::now(),
            end,
            enabled: !quiet && std::io::stderr().is_terminal() && end > 0.0,
            path: path.to_path_buf(),
            signals,
        }
    }

    /// After a signal: flush the whole rows written so far, say so, and exit.
    fn stop_if_signalled(&mut self, t: f64) {
        let Some((code, name)) = self.signals.received() else {
            return;
        };
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
        let rows = self.inner.rows;
        match self.inner.flush() {
            Ok(()) => eprintln!(
                "interrupted by {name} at t = {t:.6} s; the {rows} rows up to it are kept in {}",
                self.path.display()
            ),
            Err(e) => eprintln!(
                "interrupted by {name} at t = {t:.6} s; error: writing `{}`: {e}",
                self.path.display()
            ),
        }
        std::process::exit(code.into());
    }

    fn finish(self) -> std::io::Result<usize> {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
        self.inner.finish()
    }
}

impl fdc_runtime::ResultSink for Progress {
    fn header(&mut self, names: &[String]) {
        self.inner.header(names);
    }

    fn row(&mut self, t: f64, values: &[f64]) {
        self.inner.row(t, values);
        self.stop_if_signalled(t);
        if !self.enabled {
            return;
        }
        if self.bar.is_none() && self.start.elapsed().as_secs_f64() > 1.0 {
            let bar = indicatif::ProgressBar::new(1000);
            bar.set_style(
                indicatif::ProgressStyle::with_template(
                    "{bar:40} t = {msg} s  [{elapsed} / ~{duration}]",
                )
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            self.bar = Some(bar);
        }
        if let Some(bar) = &self.bar {
            bar.set_position((1000.0 * t / self.end).clamp(0.0, 1000.0) as u64);
            bar.set_message(format!("{t:.3}"));
        }
    }
}
