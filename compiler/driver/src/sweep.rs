//! Parameter sweeps: the model is built once ([`Template`]), every parameter set is a
//! run on a pool of threads, each run's rows go to its own CSV file and a summary row
//! (the values, the status, final/min/max/RMS of named channels) is kept per run.
//! The one home of the sweep for `fdc sweep`, the Python package (also on each worker
//! of a distributed sweep) and its summary table.

use crate::pipeline::{render, BuildError};
use crate::results::{CsvSink, Number};
use crate::settings::{runtime_settings, Overrides};
use crate::template::Template;
use fdc_runtime::{ResultSink, System};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// One swept parameter and its values.
#[derive(Clone, Debug, PartialEq)]
pub struct Axis {
    pub name: String,
    pub values: Vec<f64>,
}

/// How several axes make parameter sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Combine {
    /// Every combination; the first axis varies slowest.
    #[default]
    Grid,
    /// The k-th values of all axes together (equal lengths; one value is repeated).
    Zip,
}

fn number(s: &str, what: &str) -> Result<f64, String> {
    s.trim()
        .parse()
        .map_err(|_| format!("`{what}`: `{}` is not a number", s.trim()))
}

/// `NAME=V1,V2,...`, `NAME=FROM:TO:N` (N equally spaced values, both ends included)
/// or `NAME=V`.
pub fn parse_axis(s: &str) -> Result<Axis, String> {
    let (name, rest) = s
        .split_once('=')
        .ok_or_else(|| format!("`{s}`: expected NAME=VALUES"))?;
    let name = name.trim().to_string();
    let parts: Vec<&str> = rest.split(':').collect();
    let values = match parts.as_slice() {
        [from, to, n] => {
            let (a, b) = (number(from, s)?, number(to, s)?);
            let n: usize = n
                .trim()
                .parse()
                .ok()
                .filter(|&n| n >= 1)
                .ok_or_else(|| format!("`{s}`: `{n}` is not a count of at least 1"))?;
            linspace(a, b, n)
        }
        [list] => list
            .split(',')
            .map(|v| number(v, s))
            .collect::<Result<_, _>>()?,
        _ => return Err(format!("`{s}`: use NAME=V1,V2,... or NAME=FROM:TO:N")),
    };
    Ok(Axis { name, values })
}

/// `n` values from `a` to `b`, the last one exactly `b`.
pub fn linspace(a: f64, b: f64, n: usize) -> Vec<f64> {
    if n == 1 {
        return vec![a];
    }
    (0..n)
        .map(|i| {
            if i + 1 == n {
                b
            } else {
                a + (b - a) * i as f64 / (n - 1) as f64
            }
        })
        .collect()
}

/// The parameter sets of the axes, each in axis order.
pub fn combine(axes: &[Axis], how: Combine) -> Result<Vec<Vec<f64>>, String> {
    for (i, a) in axes.iter().enumerate() {
        if axes[..i].iter().any(|b| b.name == a.name) {
            return Err(format!("parameter `{}` is swept twice", a.name));
        }
    }
    if axes.is_empty() {
        return Ok(vec![vec![]]);
    }
    match how {
        Combine::Grid => {
            let mut sets: Vec<Vec<f64>> = vec![vec![]];
            for a in axes {
                sets = sets
                    .iter()
                    .flat_map(|s| {
                        a.values.iter().map(move |&v| {
                            let mut t = s.clone();
                            t.push(v);
                            t
                        })
                    })
                    .collect();
            }
            Ok(sets)
        }
        Combine::Zip => {
            let n = axes.iter().map(|a| a.values.len()).max().unwrap_or(0);
            if let Some(a) = axes
                .iter()
                .find(|a| a.values.len() != n && a.values.len() != 1)
            {
                return Err(format!(
                    "--zip needs axes of equal length (or one value): `{}` has {}, another {n}",
                    a.name,
                    a.values.len()
                ));
            }
            Ok((0..n)
                .map(|k| {
                    axes.iter()
                        .map(|a| a.values[k.min(a.values.len() - 1)])
                        .collect()
                })
                .collect())
        }
    }
}

/// One run of a sweep: its number (names its CSV file) and values (in `names` order).
#[derive(Clone, Debug, PartialEq)]
pub struct Job {
    pub index: usize,
    pub values: Vec<f64>,
}

/// What every run of a sweep shares.
#[derive(Clone, Debug, Default)]
pub struct SweepOptions {
    /// The swept parameters, in the order of [`Job::values`].
    pub names: Vec<String>,
    pub overrides: Overrides,
    /// Threads; 0 means one per core.
    pub jobs: usize,
    /// Where each run's CSV goes (`run_NNNN.csv`); none keeps no rows.
    pub out_dir: Option<PathBuf>,
    /// Channels whose final, min, max and RMS go into the summary.
    pub summary: Vec<String>,
}

/// Key figures of one channel over the result rows (t = 0 included).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Figures {
    pub last: f64,
    pub min: f64,
    pub max: f64,
    pub rms: f64,
}

/// The summary row of one run.
#[derive(Clone, Debug, PartialEq)]
pub struct RunSummary {
    pub index: usize,
    pub values: Vec<f64>,
    /// Why the run failed (`None`: it reached the end).
    pub error: Option<String>,
    /// Time reached and accepted steps.
    pub t: f64,
    pub steps: usize,
    /// Per summary channel; `None` when the run wrote no row.
    pub figures: Vec<Option<Figures>>,
}

/// The result file of run `index` in the output folder.
pub fn csv_name(index: usize) -> String {
    format!("run_{index:04}.csv")
}

/// Accumulates the figures of some channels and passes rows on to a CSV file.
struct Sink {
    csv: Option<CsvSink>,
    wanted: Vec<usize>,
    acc: Vec<(f64, f64, f64, f64, usize)>,
}

impl ResultSink for Sink {
    fn header(&mut self, names: &[String]) {
        if let Some(c) = &mut self.csv {
            c.header(names);
        }
    }

    fn row(&mut self, t: f64, values: &[f64]) {
        if let Some(c) = &mut self.csv {
            c.row(t, values);
        }
        for (a, &i) in self.acc.iter_mut().zip(&self.wanted) {
            let x = values[i];
            *a = (x, a.1.min(x), a.2.max(x), a.3 + x * x, a.4 + 1);
        }
    }
}

/// The first line of why a build stopped (the full text is what `fdc check` prints).
pub fn build_error_text(e: &BuildError) -> String {
    match e {
        BuildError::Model { analysis, extra } => {
            let first = analysis
                .diagnostics
                .iter()
                .chain(extra)
                .find(|d| matches!(d.severity, fdc_frontend::Severity::Error));
            match first {
                Some(d) => d.message.clone(),
                None => render(analysis, extra),
            }
        }
        BuildError::Backend(m) => format!("code generation failed: {m}"),
        BuildError::Usage(m) => m.clone(),
    }
}

/// Checks the names of the sweep against the template: every swept parameter and
/// every summary channel must exist.
pub fn check(template: &Template, opts: &SweepOptions) -> Result<Vec<usize>, String> {
    for n in &opts.names {
        if !template.parameters.iter().any(|(p, _)| p == n) {
            let known: Vec<&str> = template.parameters.iter().map(|p| p.0.as_str()).collect();
            return Err(format!(
                "the model has no parameter `{n}` (parameters: {})",
                known.join(", ")
            ));
        }
    }
    opts.summary
        .iter()
        .map(|c| {
            template
                .channels
                .iter()
                .position(|x| x == c)
                .ok_or_else(|| {
                    format!(
                        "no channel `{c}` to summarize (channels: {})",
                        template.channels.join(", ")
                    )
                })
        })
        .collect()
}

/// Runs every job on `opts.jobs` threads; one summary per job, in job order. An error
/// is a usage problem found before any run (an unknown parameter or channel, an
/// output folder that cannot be made); a failing run is only reported in its row.
pub fn run(
    template: &Template,
    jobs: &[Job],
    opts: &SweepOptions,
) -> Result<Vec<RunSummary>, String> {
    let wanted = check(template, opts)?;
    if let Some(d) = &opts.out_dir {
        std::fs::create_dir_all(d).map_err(|e| format!("cannot make `{}`: {e}", d.display()))?;
    }
    let threads = match opts.jobs {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
    .min(jobs.len().max(1));
    let next = AtomicUsize::new(0);
    let done: Mutex<Vec<Option<RunSummary>>> = Mutex::new(vec![None; jobs.len()]);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some(job) = jobs.get(k) else { break };
                let row = run_one(template, job, opts, &wanted);
                done.lock().unwrap_or_else(|p| p.into_inner())[k] = Some(row);
            });
        }
    });
    Ok(done
        .into_inner()
        .unwrap_or_else(|p| p.into_inner())
        .into_iter()
        .flatten()
        .collect())
}

fn run_one(template: &Template, job: &Job, opts: &SweepOptions, wanted: &[usize]) -> RunSummary {
    let mut row = RunSummary {
        index: job.index,
        values: job.values.clone(),
        error: None,
        t: 0.0,
        steps: 0,
        figures: vec![None; wanted.len()],
    };
    let set: Vec<(String, f64)> = opts
        .names
        .iter()
        .cloned()
        .zip(job.values.iter().copied())
        .collect();
    let fail = |mut row: RunSummary, e: String| {
        row.error = Some(e);
        row
    };
    let inst = match template.instantiate(&set) {
        Ok(i) => i,
        Err(e) => return fail(row, build_error_text(&e)),
    };
    let settings = match runtime_settings(&inst.settings, &opts.overrides) {
        Ok(s) => s,
        Err(e) => return fail(row, e),
    };
    let mut sys = match System::new(inst.model) {
        Ok(s) => s,
        Err(e) => return fail(row, e.to_string()),
    };
    let csv = match &opts.out_dir {
        Some(d) => {
            let p = d.join(csv_name(job.index));
            match CsvSink::create(&p) {
                Ok(c) => Some(c),
                Err(e) => return fail(row, format!("cannot write `{}`: {e}", p.display())),
            }
        }
        None => None,
    };
    let mut sink = Sink {
        csv,
        wanted: wanted.to_vec(),
        acc: vec![(f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 0.0, 0); wanted.len()],
    };
    let result = sys.run(&settings, &mut sink);
    let (stats, error) = match result {
        Ok(s) => (s, None),
        Err(e) => (e.stats.clone(), Some(e.to_string())),
    };
    row.t = stats.t;
    row.steps = stats.steps;
    row.error = error;
    row.figures = sink
        .acc
        .iter()
        .map(|&(last, min, max, sq, n)| {
            (n > 0).then(|| Figures {
                last,
                min,
                max,
                rms: (sq / n as f64).sqrt(),
            })
        })
        .collect();
    if let Some(c) = sink.csv {
        if let Err(e) = c.finish() {
            row.error.get_or_insert(format!("writing results: {e}"));
        }
    }
    row
}

/// A CSV field: quoted when it holds a comma, quote or line break.
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The summary table: `run`, the swept parameters, `status` (ok or failed), `t_end`,
/// `steps`, `<channel>.final/.min/.max/.rms` per summary channel, `message`. Numbers
/// in Rust's shortest round-trip form (the same f64 when read back).
pub fn summary_csv(names: &[String], channels: &[String], rows: &[RunSummary]) -> String {
    let mut s = String::from("run");
    for n in names {
        let _ = write!(s, ",{}", field(n));
    }
    s.push_str(",status,t_end,steps");
    for c in channels {
        for k in ["final", "min", "max", "rms"] {
            let _ = write!(s, ",{}", field(&format!("{c}.{k}")));
        }
    }
    s.push_str(",message\n");
    for r in rows {
        let _ = write!(s, "{}", r.index);
        for v in &r.values {
            let _ = write!(s, ",{}", Number(*v));
        }
        let status = if r.error.is_some() { "failed" } else { "ok" };
        let _ = write!(s, ",{status},{},{}", Number(r.t), r.steps);
        for f in &r.figures {
            match f {
                Some(f) => {
                    let [last, min, max, rms] = [f.last, f.min, f.max, f.rms].map(Number);
                    let _ = write!(s, ",{last},{min},{max},{rms}");
                }
                None => s.push_str(",,,,"),
            }
        }
        let _ = writeln!(s, ",{}", field(r.error.as_deref().unwrap_or("")));
    }
    s
}
