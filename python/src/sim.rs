//! `fdc.Simulator`: a caller-driven loop (set inputs, step, read outputs) as in a
//! driving simulator or a co-simulation. A step allocates nothing on the Rust side:
//! the runtime's step does not, and `outputs()` refreshes one NumPy array made once.

use crate::SimulationError;
use fdc_runtime::{Settings, State, System};
use numpy::{PyArray1, PyArrayMethods};
use pyo3::exceptions::{PyIndexError, PyKeyError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

#[pyclass(module = "fdc._fdc")]
pub struct Simulator {
    sys: System,
    settings: Settings,
    /// `settings` with the step cut to reach a target time exactly (`advance_to`).
    last: Settings,
    names: Vec<String>,
    inputs: Vec<String>,
    /// The input names as Python strings, to find a name without allocating.
    input_keys: Vec<Py<PyString>>,
    out: Py<PyArray1<f64>>,
}

impl Simulator {
    /// `inputs`: the names of the runtime inputs in index order (the template's).
    pub fn new(
        py: Python<'_>,
        mut sys: System,
        settings: Settings,
        inputs: Vec<String>,
    ) -> PyResult<Simulator> {
        py.allow_threads(|| sys.initialize(&settings))
            .map_err(|e| crate::FdcError::new_err(format!("initial conditions: {e}")))?;
        let names = sys.channel_names();
        let out = PyArray1::<f64>::zeros_bound(py, names.len(), false).unbind();
        let input_keys = inputs
            .iter()
            .map(|n| PyString::new_bound(py, n).unbind())
            .collect();
        Ok(Simulator {
            input_keys,
            sys,
            last: settings.clone(),
            settings,
            names,
            inputs,
            out,
        })
    }

    fn input(&self, key: &Bound<'_, PyAny>) -> PyResult<usize> {
        if let Ok(i) = key.extract::<usize>() {
            return if i < self.inputs.len() {
                Ok(i)
            } else {
                Err(PyIndexError::new_err(format!(
                    "input index {i} out of range"
                )))
            };
        }
        let py = key.py();
        for (i, k) in self.input_keys.iter().enumerate() {
            if key.eq(k.bind(py))? {
                return Ok(i);
            }
        }
        let name: String = key.extract()?;
        Err(PyKeyError::new_err(format!(
            "no input `{name}` (inputs: {})",
            self.inputs.join(", ")
        )))
    }
}

#[pymethods]
impl Simulator {
    /// Current time [s].
    #[getter]
    fn time(&self) -> f64 {
        self.sys.time()
    }

    /// Step size of `step()` [s].
    #[getter]
    fn step_size(&self) -> f64 {
        self.settings.step
    }

    /// Channel names, in the order of `outputs()`.
    #[getter]
    fn channels(&self) -> Vec<String> {
        self.names.clone()
    }

    /// Input names, in index order.
    #[getter]
    fn inputs(&self) -> Vec<String> {
        self.inputs.clone()
    }

    /// set_input(name_or_index, value): seen by the next step.
    fn set_input(&mut self, key: &Bound<'_, PyAny>, value: f64) -> PyResult<()> {
        let i = self.input(key)?;
        self.sys.set_input(i, value);
        Ok(())
    }

    /// One step of `step_size` (the GIL is released meanwhile); returns the new time.
    fn step(&mut self, py: Python<'_>) -> PyResult<f64> {
        let (sys, settings) = (&mut self.sys, &self.settings);
        match py.allow_threads(|| sys.step(settings)) {
            Ok(r) => Ok(r.t),
            Err(e) => Err(step_error(py, e)),
        }
    }

    /// Steps until `t` (the last step shortened to end there); returns the time.
    fn advance_to(&mut self, py: Python<'_>, t: f64) -> PyResult<f64> {
        if !t.is_finite() {
            return Err(PyValueError::new_err("advance_to: t must be finite"));
        }
        let (sys, settings, last) = (&mut self.sys, &self.settings, &mut self.last);
        let done = py.allow_threads(|| {
            let eps = 1e-12 * t.abs().max(1.0);
            while t - sys.time() > eps {
                let left = t - sys.time();
                let s = if left < settings.step * (1.0 + 1e-9) {
                    last.step = left;
                    &*last
                } else {
                    settings
                };
                sys.step(s)?;
            }
            Ok(sys.time())
        });
        done.map_err(|e| step_error(py, e))
    }

    /// The current outputs in channel order: the same NumPy array on every call,
    /// overwritten in place (copy it to keep values).
    fn outputs<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let arr = self.out.bind(py);
        let vals = self.sys.output_values();
        // SAFETY: the array was made by this object with the channel count and is
        // written only here, while the GIL is held.
        unsafe { arr.as_slice_mut()? }.copy_from_slice(vals);
        Ok(arr.clone())
    }

    /// A snapshot of the complete integrator state (time, coordinates, the integrator's
    /// history and step control, element state, input values) as bytes: opaque,
    /// picklable, for `restore()` on a simulator of the same model.
    fn state<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new_bound(py, &self.sys.state().to_bytes())
    }

    /// restore(state): continues from a snapshot of `state()`; the steps that follow
    /// repeat those after the snapshot bit for bit. A state of another model raises
    /// FdcError and changes nothing.
    fn restore(&mut self, state: &[u8]) -> PyResult<()> {
        State::from_bytes(state)
            .and_then(|s| self.sys.restore(&s))
            .map_err(|e| crate::FdcError::new_err(e.to_string()))
    }

    fn __repr__(&self) -> String {
        format!(
            "<fdc.Simulator t = {}, step {}, {} channels>",
            self.sys.time(),
            self.settings.step,
            self.names.len()
        )
    }
}

fn step_error(py: Python<'_>, e: fdc_runtime::SimError) -> PyErr {
    let err = SimulationError::new_err(e.to_string());
    let _ = err.value_bound(py).setattr("time", e.t);
    err
}
