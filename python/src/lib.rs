//! `fdc._fdc`: the native part of the Python package `fdc` (python/fdc/__init__.py
//! wraps it). Models are built by the driver's [`Template`], runs and steps are the
//! runtime's, sweeps are the driver's (`fdc_driver::sweep`): this crate only converts
//! between Python and those, and releases the GIL while simulating.
//!
//! Knows: the driver and the runtime's public API. Must not know: how a model is
//! compiled or integrated.

// pyo3 0.22's `#[pymethods]`/`#[pyfunction]` expansion converts a `PyErr` into itself,
// which this clippy flags on every signature (fixed upstream in later pyo3 versions).
#![allow(clippy::useless_conversion)]
// `SimError` is large (it carries the failing element, time and partial statistics); it
// crosses `allow_threads` once per call and is turned into a Python exception at once.
#![allow(clippy::result_large_err)]

mod model;
mod sim;

use fdc_driver::pipeline::{render, BuildError, BuildOptions};
use fdc_driver::report::diagnostic_json;
use fdc_driver::settings::{parse_newton, Overrides};
use fdc_driver::sweep::{self, Axis, Combine, Figures, Job, RunSummary, SweepOptions};
use fdc_driver::template::Template;
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyFileNotFoundError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::alloc::{GlobalAlloc, Layout, System};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Counts the Rust side's heap allocations, so that a test can show that a loop of
/// `Simulator.step()` allocates nothing (one relaxed atomic add per allocation).
struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards every call to the system allocator unchanged.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// _allocations() -> heap allocations made by the Rust side so far.
#[pyfunction]
fn _allocations() -> usize {
    ALLOCATIONS.load(Ordering::Relaxed)
}

create_exception!(_fdc, FdcError, PyException, "Base class of fdc's errors.");
create_exception!(
    _fdc,
    ModelError,
    FdcError,
    "The model has errors: `text` is the rendered report, `diagnostics` a list of dicts."
);
create_exception!(
    _fdc,
    SimulationError,
    FdcError,
    "A run stopped early: `time` is where, `results` what was computed up to there."
);

/// `json.loads(text)`.
fn from_json(py: Python<'_>, text: &str) -> PyResult<PyObject> {
    Ok(py
        .import_bound("json")?
        .call_method1("loads", (text,))?
        .unbind())
}

/// A build failure as the matching Python exception.
pub(crate) fn build_err(py: Python<'_>, e: BuildError) -> PyErr {
    match e {
        BuildError::Model { analysis, extra } => {
            let text = render(&analysis, &extra);
            let items: Vec<String> = analysis
                .diagnostics
                .iter()
                .chain(&extra)
                .map(|d| diagnostic_json(&analysis.files, d).to_string())
                .collect();
            let err = ModelError::new_err(text.clone());
            let value = err.value_bound(py);
            let set = || -> PyResult<()> {
                value.setattr("text", text)?;
                value.setattr(
                    "diagnostics",
                    from_json(py, &format!("[{}]", items.join(",")))?,
                )
            };
            match set() {
                Ok(()) => err,
                Err(e) => e,
            }
        }
        BuildError::Backend(m) => FdcError::new_err(format!("code generation failed: {m}")),
        BuildError::Usage(m) => PyValueError::new_err(m),
    }
}

/// `{"k": 100, ...}` as override pairs.
pub(crate) fn pairs(set: Option<&Bound<'_, PyDict>>) -> PyResult<Vec<(String, f64)>> {
    let Some(set) = set else { return Ok(vec![]) };
    set.iter()
        .map(|(k, v)| Ok((k.extract::<String>()?, v.extract::<f64>()?)))
        .collect()
}

/// The keyword settings of `run`, `simulator` and `sweep` (the flags of `fdc run`).
pub(crate) fn overrides(kw: Option<&Bound<'_, PyDict>>) -> PyResult<Overrides> {
    let mut o = Overrides::default();
    let Some(kw) = kw else { return Ok(o) };
    for (k, v) in kw.iter() {
        let key: String = k.extract()?;
        if v.is_none() {
            continue;
        }
        match key.as_str() {
            "end" => o.end = Some(v.extract()?),
            "step" => o.step = Some(v.extract()?),
            "output_every" => o.output_every = Some(v.extract()?),
            "alpha" => o.alpha = Some(v.extract()?),
            "rho_inf" => o.rho_inf = Some(v.extract()?),
            "form" => o.form = Some(v.extract()?),
            "newton" => {
                let s: String = v.extract()?;
                o.newton = Some(parse_newton(&s).map_err(PyValueError::new_err)?);
            }
            "adaptive" => o.adaptive = Some(v.extract()?),
            "atol" => o.atol = Some(v.extract()?),
            "linear" => o.linear = Some(v.extract()?),
            "timing" => o.timing = v.extract()?,
            other => {
                return Err(PyTypeError::new_err(format!(
                    "unknown setting `{other}` (end, step, output_every, alpha, rho_inf, form, \
                     newton, adaptive, atol, linear, timing)"
                )))
            }
        }
    }
    Ok(o)
}

fn readable(path: &Path) -> PyResult<()> {
    std::fs::metadata(path)
        .map(|_| ())
        .map_err(|e| PyFileNotFoundError::new_err(format!("cannot read `{}`: {e}", path.display())))
}

/// Build options of `load` and of a sweep.
fn build_options(
    set: Vec<(String, f64)>,
    simplify: bool,
    cache: bool,
    cache_dir: Option<PathBuf>,
    opt_level: u8,
) -> PyResult<BuildOptions> {
    if opt_level > 3 {
        return Err(PyValueError::new_err("opt_level must be 0..=3"));
    }
    let cache = match (cache, cache_dir) {
        (false, _) => fdc_backend::CacheMode::Off,
        (true, Some(d)) => fdc_backend::CacheMode::Dir(d),
        (true, None) => fdc_backend::CacheMode::Default,
    };
    Ok(BuildOptions {
        overrides: set,
        simplify,
        backend: fdc_backend::Options { opt_level, cache },
        jobs: 0,
    })
}

fn template(py: Python<'_>, path: &Path, opts: &BuildOptions) -> PyResult<Template> {
    readable(path)?;
    py.allow_threads(|| Template::build(path, opts))
        .map_err(|e| build_err(py, e))
}

/// load(path, set=None, *, simplify=True, cache=True, cache_dir=None, opt_level=2)
#[pyfunction]
#[pyo3(signature = (path, set=None, *, simplify=true, cache=true, cache_dir=None, opt_level=2))]
fn load(
    py: Python<'_>,
    path: PathBuf,
    set: Option<&Bound<'_, PyDict>>,
    simplify: bool,
    cache: bool,
    cache_dir: Option<PathBuf>,
    opt_level: u8,
) -> PyResult<model::Model> {
    let opts = build_options(pairs(set)?, simplify, cache, cache_dir, opt_level)?;
    Ok(model::Model::new(template(py, &path, &opts)?))
}

/// check(path) -> list of diagnostics (dicts; empty when the model is valid).
#[pyfunction]
fn check(py: Python<'_>, path: PathBuf) -> PyResult<PyObject> {
    readable(&path)?;
    let (analysis, extra) = py.allow_threads(|| fdc_driver::pipeline::check(&path));
    let items: Vec<String> = analysis
        .diagnostics
        .iter()
        .chain(&extra)
        .map(|d| diagnostic_json(&analysis.files, d).to_string())
        .collect();
    from_json(py, &format!("[{}]", items.join(",")))
}

/// _axis("k=1,2,3") -> ("k", [1.0, 2.0, 3.0]): the grammar of `fdc sweep --set`.
#[pyfunction]
fn _axis(spec: &str) -> PyResult<(String, Vec<f64>)> {
    let a = sweep::parse_axis(spec).map_err(PyValueError::new_err)?;
    Ok((a.name, a.values))
}

/// _combine([(name, values), ...], zip) -> parameter sets, in axis order.
#[pyfunction]
fn _combine(axes: Vec<(String, Vec<f64>)>, zip: bool) -> PyResult<Vec<Vec<f64>>> {
    let axes: Vec<Axis> = axes
        .into_iter()
        .map(|(name, values)| Axis { name, values })
        .collect();
    let how = if zip { Combine::Zip } else { Combine::Grid };
    sweep::combine(&axes, how).map_err(PyValueError::new_err)
}

/// A summary row as a plain tuple (picklable, for distributed sweeps):
/// (index, values, error, t_end, steps, [(final, min, max, rms) or None per channel]).
type Row = (
    usize,
    Vec<f64>,
    Option<String>,
    f64,
    usize,
    Vec<Option<(f64, f64, f64, f64)>>,
);

fn to_row(r: RunSummary) -> Row {
    let f = r
        .figures
        .iter()
        .map(|f| f.map(|f| (f.last, f.min, f.max, f.rms)))
        .collect();
    (r.index, r.values, r.error, r.t, r.steps, f)
}

fn from_row(r: Row) -> RunSummary {
    RunSummary {
        index: r.0,
        values: r.1,
        error: r.2,
        t: r.3,
        steps: r.4,
        figures: r
            .5
            .into_iter()
            .map(|f| {
                f.map(|(last, min, max, rms)| Figures {
                    last,
                    min,
                    max,
                    rms,
                })
            })
            .collect(),
    }
}

/// _sweep_run(path, names, jobs, ...) -> rows: builds once, runs `jobs` (a list of
/// (index, values)) on `threads` threads without the GIL.
#[pyfunction]
#[pyo3(signature = (path, names, jobs, *, set=None, out=None, summary=vec![], threads=0, simplify=true, cache=true, cache_dir=None, opt_level=2, settings=None))]
#[allow(clippy::too_many_arguments)]
fn _sweep_run(
    py: Python<'_>,
    path: PathBuf,
    names: Vec<String>,
    jobs: Vec<(usize, Vec<f64>)>,
    set: Option<&Bound<'_, PyDict>>,
    out: Option<PathBuf>,
    summary: Vec<String>,
    threads: usize,
    simplify: bool,
    cache: bool,
    cache_dir: Option<PathBuf>,
    opt_level: u8,
    settings: Option<&Bound<'_, PyDict>>,
) -> PyResult<Vec<Row>> {
    let opts = build_options(pairs(set)?, simplify, cache, cache_dir, opt_level)?;
    let t = template(py, &path, &opts)?;
    let jobs: Vec<Job> = jobs
        .into_iter()
        .map(|(index, values)| Job { index, values })
        .collect();
    if let Some(j) = jobs.iter().find(|j| j.values.len() != names.len()) {
        return Err(PyValueError::new_err(format!(
            "run {} has {} values for {} parameters",
            j.index,
            j.values.len(),
            names.len()
        )));
    }
    let sopts = SweepOptions {
        names,
        overrides: overrides(settings)?,
        jobs: threads,
        out_dir: out,
        summary,
    };
    let rows = py
        .allow_threads(|| sweep::run(&t, &jobs, &sopts))
        .map_err(PyValueError::new_err)?;
    Ok(rows.into_iter().map(to_row).collect())
}

/// _summary_csv(names, channels, rows) -> the text of summary.csv.
#[pyfunction]
fn _summary_csv(names: Vec<String>, channels: Vec<String>, rows: Vec<Row>) -> String {
    let rows: Vec<RunSummary> = rows.into_iter().map(from_row).collect();
    sweep::summary_csv(&names, &channels, &rows)
}

#[pymodule]
fn _fdc(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("FdcError", py.get_type_bound::<FdcError>())?;
    m.add("ModelError", py.get_type_bound::<ModelError>())?;
    m.add("SimulationError", py.get_type_bound::<SimulationError>())?;
    m.add_class::<model::Model>()?;
    m.add_class::<model::Results>()?;
    m.add_class::<sim::Simulator>()?;
    m.add_function(wrap_pyfunction!(load, m)?)?;
    m.add_function(wrap_pyfunction!(check, m)?)?;
    m.add_function(wrap_pyfunction!(_axis, m)?)?;
    m.add_function(wrap_pyfunction!(_combine, m)?)?;
    m.add_function(wrap_pyfunction!(_sweep_run, m)?)?;
    m.add_function(wrap_pyfunction!(_summary_csv, m)?)?;
    m.add_function(wrap_pyfunction!(_allocations, m)?)?;
    m.add("ABI_VERSION", fdc_runtime::table::ABI_VERSION)?;
    Ok(())
}
