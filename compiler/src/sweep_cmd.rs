//! `fdc sweep FILE.fd --set k=10,20,40 --set c=0.1:1.0:10 [--grid|--zip] -j N -o DIR`:
//! builds once, runs every parameter set on N threads, writes `DIR/run_NNNN.csv` and
//! `DIR/summary.csv` and prints the summary. The sweep itself is the driver's
//! (`fdc_driver::sweep`), shared with the Python package.

use crate::run::{build_options, usage, CompileArgs, SolverArgs};
use clap::Args;
use fdc_driver::pipeline::{render, BuildError};
use fdc_driver::sweep::{self, Combine, Job, SweepOptions};
use fdc_driver::template::Template;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug, Clone)]
pub struct SweepArgs {
    /// The model file (`.fd`).
    pub file: PathBuf,
    /// `--set NAME=V1,V2,...`, `NAME=FROM:TO:N` or `NAME=V` (repeatable); see `--grid`.
    #[command(flatten)]
    pub compile: CompileArgs,
    /// Every combination of the swept values (the default).
    #[arg(long, conflicts_with = "zip")]
    pub grid: bool,
    /// The k-th values of every swept parameter together.
    #[arg(long)]
    pub zip: bool,
    /// Runs in parallel (default: one per core).
    #[arg(short = 'j', long, default_value_t = 0)]
    pub jobs: usize,
    /// Output folder: `run_NNNN.csv` per run and `summary.csv`.
    #[arg(short = 'o', long, default_value = "sweep")]
    pub output: PathBuf,
    /// A channel whose final, min, max and RMS go into the summary (repeatable).
    #[arg(long, value_name = "CHANNEL")]
    pub summary: Vec<String>,
    /// Run only the sets `K/N`: every N-th starting at K (0-based), for job arrays.
    #[arg(long, value_name = "K/N")]
    pub shard: Option<String>,
    #[command(flatten)]
    pub solver: SolverArgs,
    /// Print nothing but errors.
    #[arg(short, long)]
    pub quiet: bool,
}

/// `K/N` of `--shard`.
fn parse_shard(s: &str) -> Result<(usize, usize), String> {
    let bad = || format!("`--shard {s}`: expected K/N with 0 <= K < N");
    let (k, n) = s.split_once('/').ok_or_else(bad)?;
    let (k, n): (usize, usize) = (
        k.trim().parse().map_err(|_| bad())?,
        n.trim().parse().map_err(|_| bad())?,
    );
    if k >= n {
        return Err(bad());
    }
    Ok((k, n))
}

pub fn run(a: &SweepArgs) -> ExitCode {
    if !a.file.is_file() {
        return usage(format!("cannot read `{}`", a.file.display()));
    }
    let axes = match a
        .compile
        .set
        .iter()
        .map(|s| sweep::parse_axis(s))
        .collect::<Result<Vec<_>, _>>()
    {
        Ok(x) => x,
        Err(e) => return usage(format!("--set {e}")),
    };
    let how = if a.zip { Combine::Zip } else { Combine::Grid };
    let sets = match sweep::combine(&axes, how) {
        Ok(s) => s,
        Err(e) => return usage(e),
    };
    let shard = match a.shard.as_deref().map(parse_shard).transpose() {
        Ok(s) => s.unwrap_or((0, 1)),
        Err(e) => return usage(e),
    };
    let overrides = match a.solver.overrides(false) {
        Ok(o) => o,
        Err(e) => return usage(e),
    };
    let compile = CompileArgs {
        set: vec![],
        ..a.compile.clone()
    };
    let opts = match build_options(&compile) {
        Ok(o) => o,
        Err(e) => return usage(e),
    };
    let template = match Template::build(&a.file, &opts) {
        Ok(t) => t,
        Err(BuildError::Model { analysis, extra }) => {
            eprint!("{}", render(&analysis, &extra));
            return ExitCode::from(1);
        }
        Err(e) => {
            eprintln!("error: {}", sweep::build_error_text(&e));
            return ExitCode::from(1);
        }
    };
    if !a.quiet {
        for w in &template.built.warnings {
            eprint!("{w}");
        }
    }
    let jobs: Vec<Job> = sets
        .into_iter()
        .enumerate()
        .filter(|(i, _)| i % shard.1 == shard.0)
        .map(|(index, values)| Job { index, values })
        .collect();
    let names: Vec<String> = axes.iter().map(|x| x.name.clone()).collect();
    let sopts = SweepOptions {
        names: names.clone(),
        overrides,
        jobs: a.jobs,
        out_dir: Some(a.output.clone()),
        summary: a.summary.clone(),
    };
    let rows = match sweep::run(&template, &jobs, &sopts) {
        Ok(r) => r,
        Err(e) => return usage(e),
    };
    let summary_name = match a.shard {
        Some(_) => format!("summary_{}.csv", shard.0),
        None => "summary.csv".to_string(),
    };
    let text = sweep::summary_csv(&names, &a.summary, &rows);
    let path = a.output.join(summary_name);
    if let Err(e) = std::fs::write(&path, &text) {
        eprintln!("error: cannot write `{}`: {e}", path.display());
        return ExitCode::from(1);
    }
    if !a.quiet {
        print!("{text}");
        let failed = rows.iter().filter(|r| r.error.is_some()).count();
        eprintln!(
            "sweep: {} runs ({failed} failed); results in {}, summary {}",
            rows.len(),
            a.output.display(),
            path.display()
        );
    }
    if rows.iter().any(|r| r.error.is_some()) {
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}
