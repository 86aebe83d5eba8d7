//! `fdc.Model` (a built model) and `fdc.Results` (a run's channels as NumPy arrays).

use crate::{build_err, overrides, pairs, SimulationError};
use fdc_driver::settings::runtime_settings;
use fdc_driver::template::{Instance, Template};
use fdc_runtime::{ResultSink, RunStats, System};
use numpy::{PyArray1, ToPyArray};
use pyo3::exceptions::{PyKeyError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::sync::Arc;
use std::time::Instant;

/// A model checked, lowered and compiled once; runs and simulators are made from it.
#[pyclass(module = "fdc._fdc", frozen)]
pub struct Model {
    pub(crate) template: Arc<Template>,
}

impl Model {
    pub fn new(template: Template) -> Model {
        Model {
            template: Arc::new(template),
        }
    }

    /// The runtime model and settings for `set` and the keyword settings.
    pub(crate) fn prepare(
        &self,
        py: Python<'_>,
        set: Option<&Bound<'_, PyDict>>,
        kw: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<(System, fdc_runtime::Settings)> {
        let set = pairs(set)?;
        let o = overrides(kw)?;
        let t = &self.template;
        let Instance {
            model, settings, ..
        } = py
            .allow_threads(|| t.instantiate(&set))
            .map_err(|e| build_err(py, e))?;
        let settings = runtime_settings(&settings, &o).map_err(PyValueError::new_err)?;
        let sys = System::new(model).map_err(|e| crate::FdcError::new_err(e.to_string()))?;
        Ok((sys, settings))
    }
}

/// Keeps every row, one vector per channel.
struct Columns {
    names: Vec<String>,
    time: Vec<f64>,
    columns: Vec<Vec<f64>>,
}

impl ResultSink for Columns {
    fn header(&mut self, names: &[String]) {
        self.names = names.to_vec();
        self.columns = vec![Vec::new(); names.len()];
    }
    fn row(&mut self, t: f64, values: &[f64]) {
        self.time.push(t);
        for (c, &v) in self.columns.iter_mut().zip(values) {
            c.push(v);
        }
    }
}

#[pymethods]
impl Model {
    /// The model file.
    #[getter]
    fn path(&self) -> String {
        self.template.path.display().to_string()
    }

    /// Parameters and their values: a float, or a list for a vector parameter.
    #[getter]
    fn parameters<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new_bound(py);
        for (n, v) in &self.template.parameters {
            match v.as_slice() {
                [x] => d.set_item(n, *x)?,
                _ => d.set_item(n, v.clone())?,
            }
        }
        Ok(d)
    }

    /// Runtime inputs and their default values.
    #[getter]
    fn inputs<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new_bound(py);
        for (n, v) in &self.template.inputs {
            d.set_item(n, *v)?;
        }
        Ok(d)
    }

    /// Result channel names (`time` excluded), in the order of the CSV columns.
    #[getter]
    fn channels(&self) -> Vec<String> {
        self.template.channels.clone()
    }

    /// Build warnings (rendered).
    #[getter]
    fn warnings(&self) -> Vec<String> {
        self.template.built.warnings.clone()
    }

    /// run(set=None, **settings) -> Results. Raises SimulationError (with the partial
    /// results) when the run stops early.
    #[pyo3(signature = (set=None, **settings))]
    fn run(
        &self,
        py: Python<'_>,
        set: Option<&Bound<'_, PyDict>>,
        settings: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Results> {
        let (mut sys, settings) = self.prepare(py, set, settings)?;
        let mut sink = Columns {
            names: vec![],
            time: vec![],
            columns: vec![],
        };
        let t0 = Instant::now();
        let outcome = py.allow_threads(|| sys.run(&settings, &mut sink));
        let wall = t0.elapsed().as_secs_f64();
        let (stats, failure) = match outcome {
            Ok(s) => (s, None),
            Err(e) => (e.stats.clone(), Some(e)),
        };
        let results = Results::new(py, sink, &stats, wall, sys.warnings().to_vec());
        match failure {
            None => Ok(results),
            Some(e) => {
                let err = SimulationError::new_err(e.to_string());
                let value = err.value_bound(py);
                value.setattr("time", e.t)?;
                value.setattr("results", Py::new(py, results)?)?;
                Err(err)
            }
        }
    }

    /// simulator(set=None, **settings) -> Simulator, initialized at t = 0.
    #[pyo3(signature = (set=None, **settings))]
    fn simulator(
        &self,
        py: Python<'_>,
        set: Option<&Bound<'_, PyDict>>,
        settings: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<crate::sim::Simulator> {
        let (sys, settings) = self.prepare(py, set, settings)?;
        let inputs = self.template.inputs.iter().map(|i| i.0.clone()).collect();
        crate::sim::Simulator::new(py, sys, settings, inputs)
    }

    /// modes(at=0.0, set=None) -> dict: eigenmodes of the model linearized at time
    /// `at` (simulated to there first); the shape of `fdc modes --json`.
    #[pyo3(signature = (at=0.0, set=None))]
    fn modes(
        &self,
        py: Python<'_>,
        at: f64,
        set: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PyObject> {
        if !(at.is_finite() && at >= 0.0) {
            return Err(PyValueError::new_err(format!(
                "at = {at}: expected a time >= 0"
            )));
        }
        let (mut sys, mut settings) = self.prepare(py, set, None)?;
        let lin = py.allow_threads(|| {
            sys.initialize(&settings).map_err(|e| e.to_string())?;
            if at > 0.0 {
                settings.end = at;
                sys.run(&settings, &mut Discard)
                    .map_err(|e| format!("simulating to t = {at} s: {e}"))?;
            }
            sys.linearize().map_err(|e| e.to_string())
        });
        let lin = lin.map_err(crate::FdcError::new_err)?;
        crate::from_json(py, &fdc_driver::report::modes_json(&lin).to_string())
    }

    fn __repr__(&self) -> String {
        format!(
            "<fdc.Model {} ({} parameters, {} inputs, {} channels)>",
            self.template.path.display(),
            self.template.parameters.len(),
            self.template.inputs.len(),
            self.template.channels.len()
        )
    }
}

struct Discard;

impl ResultSink for Discard {
    fn header(&mut self, _: &[String]) {}
    fn row(&mut self, _: f64, _: &[f64]) {}
}

/// The rows of a run: `r.time`, `r["channel"]` (NumPy arrays) and the run summary.
#[pyclass(module = "fdc._fdc", frozen)]
pub struct Results {
    names: Vec<String>,
    rows: usize,
    time: Py<PyArray1<f64>>,
    columns: Vec<Py<PyArray1<f64>>>,
    /// Time reached [s].
    #[pyo3(get)]
    t_end: f64,
    /// Accepted and rejected steps.
    #[pyo3(get)]
    steps: usize,
    #[pyo3(get)]
    rejected: usize,
    /// Newton iterations (corrections) and factorizations of the whole run.
    #[pyo3(get)]
    iterations: usize,
    #[pyo3(get)]
    factorizations: usize,
    /// Wall-clock time of the run [s].
    #[pyo3(get)]
    wall_time: f64,
    /// Runtime warnings (e.g. removed redundant constraints).
    #[pyo3(get)]
    warnings: Vec<String>,
}

impl Results {
    fn new(
        py: Python<'_>,
        sink: Columns,
        s: &RunStats,
        wall: f64,
        warnings: Vec<String>,
    ) -> Results {
        Results {
            names: sink.names,
            rows: sink.time.len(),
            time: sink.time.to_pyarray_bound(py).unbind(),
            columns: sink
                .columns
                .into_iter()
                .map(|c| PyArray1::from_vec_bound(py, c).unbind())
                .collect(),
            t_end: s.t,
            steps: s.steps,
            rejected: s.rejected,
            iterations: s.newton_iterations,
            factorizations: s.factorizations,
            wall_time: wall,
            warnings,
        }
    }
}

#[pymethods]
impl Results {
    /// Output times [s].
    #[getter]
    fn time(&self, py: Python<'_>) -> Py<PyArray1<f64>> {
        self.time.clone_ref(py)
    }

    /// Channel names, in column order.
    #[getter]
    fn channels(&self) -> Vec<String> {
        self.names.clone()
    }

    fn keys(&self) -> Vec<String> {
        self.names.clone()
    }

    fn __getitem__(&self, py: Python<'_>, name: &str) -> PyResult<Py<PyArray1<f64>>> {
        if name == "time" {
            return Ok(self.time.clone_ref(py));
        }
        match self.names.iter().position(|n| n == name) {
            Some(i) => Ok(self.columns[i].clone_ref(py)),
            None => Err(PyKeyError::new_err(format!(
                "no channel `{name}` (channels: {})",
                self.names.join(", ")
            ))),
        }
    }

    fn __contains__(&self, name: &str) -> bool {
        name == "time" || self.names.iter().any(|n| n == name)
    }

    /// Number of rows.
    fn __len__(&self) -> usize {
        self.rows
    }

    /// A pandas DataFrame indexed by time (needs pandas).
    fn to_pandas(&self, py: Python<'_>) -> PyResult<PyObject> {
        let pd = py.import_bound("pandas")?;
        let data = PyDict::new_bound(py);
        for (n, c) in self.names.iter().zip(&self.columns) {
            data.set_item(n, c.clone_ref(py))?;
        }
        let index = pd.call_method1("Index", (self.time.clone_ref(py),))?;
        index.setattr("name", "time")?;
        let kw = PyDict::new_bound(py);
        kw.set_item("index", index)?;
        Ok(pd.call_method("DataFrame", (data,), Some(&kw))?.unbind())
    }

    fn __repr__(&self) -> String {
        format!(
            "<fdc.Results {} rows × {} channels, t_end = {}, {} steps>",
            self.rows,
            self.names.len(),
            self.t_end,
            self.steps
        )
    }
}
