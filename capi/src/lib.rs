//! The C API of fdc (`include/fdc.h`; tests/header.rs keeps it in step): load a model, set
//! parameters, make a simulator, set inputs, step, read outputs by index: the loop of a
//! driving simulator, a HIL rig or an FMU wrapper.
//!
//! Every function returns an [`FdcStatus`]; on an error the message is kept per thread
//! for [`fdc_last_error`]. Nothing panics across the boundary (a panic becomes
//! `FDC_STATUS_PANIC`), and null pointers are reported, not dereferenced. Models are
//! built by the driver's `Template` (as in `fdc run` and the Python package).

use fdc_driver::pipeline::{render, BuildError, BuildOptions};
use fdc_driver::settings::{runtime_settings, Overrides};
use fdc_driver::template::Template;
use fdc_runtime::{Settings, System};
use std::cell::RefCell;
use std::ffi::{c_char, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

/// What a call did.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FdcStatus {
    Ok = 0,
    /// A null pointer, an index out of range, a string that is not UTF-8.
    Argument = 1,
    /// The model file cannot be read.
    Io = 2,
    /// The model has errors (the message is the rendered diagnostics).
    Model = 3,
    /// Code generation or the runtime's setup failed.
    Build = 4,
    /// Initial conditions or a step failed (the simulator keeps its last state).
    Simulation = 5,
    /// No parameter, input or output of that name.
    NotFound = 6,
    /// An internal error (a bug): the object must not be used again.
    Panic = 7,
}

/// A built model; parameters set on it apply to the simulators made afterwards.
pub struct FdcModel {
    template: Template,
    set: Vec<(String, f64)>,
}

/// A simulator at its current time.
pub struct FdcSim {
    sys: System,
    settings: Settings,
    inputs: Vec<String>,
    channels: Vec<String>,
    /// Outputs at the current state; evaluated once after a step or an input change.
    outputs: Vec<f64>,
    fresh: bool,
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

fn fail(status: FdcStatus, msg: impl Into<String>) -> FdcStatus {
    let msg = msg.into().replace('\0', " ");
    LAST_ERROR.with(|e| *e.borrow_mut() = CString::new(msg).unwrap_or_default());
    status
}

/// Runs `f`, turning a panic into `FDC_STATUS_PANIC`.
fn guard(f: impl FnOnce() -> FdcStatus) -> FdcStatus {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(s) => s,
        Err(_) => fail(FdcStatus::Panic, "internal error (panic) in fdc"),
    }
}

/// A C string argument as `&str`.
///
/// # Safety
/// `s` is null or points to a NUL-terminated string.
unsafe fn text<'a>(s: *const c_char, what: &str) -> Result<&'a str, FdcStatus> {
    if s.is_null() {
        return Err(fail(FdcStatus::Argument, format!("{what} is null")));
    }
    CStr::from_ptr(s)
        .to_str()
        .map_err(|_| fail(FdcStatus::Argument, format!("{what} is not UTF-8")))
}

macro_rules! tri {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(s) => return s,
        }
    };
}

/// The message of the last failed call on this thread ("" if none). Valid until the
/// next call of this API on the same thread.
#[no_mangle]
pub extern "C" fn fdc_last_error() -> *const c_char {
    LAST_ERROR.with(|e| e.borrow().as_ptr())
}

/// Loads, checks and compiles the model file `path` (with the on-disk object cache).
///
/// # Safety
/// `path` is a NUL-terminated string, `out` a valid pointer; `*out` receives a model
/// to free with `fdc_model_free`.
#[no_mangle]
pub unsafe extern "C" fn fdc_model_load(path: *const c_char, out: *mut *mut FdcModel) -> FdcStatus {
    guard(|| {
        let path = tri!(text(path, "path"));
        if out.is_null() {
            return fail(FdcStatus::Argument, "out is null");
        }
        if let Err(e) = std::fs::metadata(path) {
            return fail(FdcStatus::Io, format!("cannot read `{path}`: {e}"));
        }
        let opts = BuildOptions {
            simplify: true,
            ..Default::default()
        };
        match Template::build(Path::new(path), &opts) {
            Ok(template) => {
                *out = Box::into_raw(Box::new(FdcModel {
                    template,
                    set: Vec::new(),
                }));
                FdcStatus::Ok
            }
            Err(e) => build_failure(e),
        }
    })
}

fn build_failure(e: BuildError) -> FdcStatus {
    match e {
        BuildError::Model { analysis, extra } => fail(FdcStatus::Model, render(&analysis, &extra)),
        BuildError::Backend(m) => fail(FdcStatus::Build, format!("code generation failed: {m}")),
        BuildError::Usage(m) => fail(FdcStatus::Argument, m),
    }
}

/// Frees a model (null is ignored). Simulators made from it stay valid.
///
/// # Safety
/// `m` is null or came from `fdc_model_load` and is not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn fdc_model_free(m: *mut FdcModel) {
    if !m.is_null() {
        drop(Box::from_raw(m));
    }
}

/// Sets a (scalar) model parameter for the simulators made afterwards.
///
/// # Safety
/// `m` came from `fdc_model_load`; `name` is a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn fdc_model_set_parameter(
    m: *mut FdcModel,
    name: *const c_char,
    value: f64,
) -> FdcStatus {
    guard(|| {
        let Some(m) = m.as_mut() else {
            return fail(FdcStatus::Argument, "model is null");
        };
        let name = tri!(text(name, "name"));
        if !m.template.parameters.iter().any(|(p, _)| p == name) {
            return fail(
                FdcStatus::NotFound,
                format!("the model has no parameter `{name}`"),
            );
        }
        m.set.retain(|(p, _)| p != name);
        m.set.push((name.to_string(), value));
        FdcStatus::Ok
    })
}

/// Makes a simulator at t = 0 (initial conditions solved) with the model's settings
/// and step size `step` (the model's `simulate { step }` when `step <= 0`).
///
/// # Safety
/// `m` came from `fdc_model_load`; `out` is a valid pointer; `*out` receives a
/// simulator to free with `fdc_sim_free`.
#[no_mangle]
pub unsafe extern "C" fn fdc_sim_new(
    m: *const FdcModel,
    step: f64,
    out: *mut *mut FdcSim,
) -> FdcStatus {
    guard(|| {
        let Some(m) = m.as_ref() else {
            return fail(FdcStatus::Argument, "model is null");
        };
        if out.is_null() {
            return fail(FdcStatus::Argument, "out is null");
        }
        let inst = match m.template.instantiate(&m.set) {
            Ok(i) => i,
            Err(e) => return build_failure(e),
        };
        let o = Overrides {
            step: (step > 0.0).then_some(step),
            ..Default::default()
        };
        let settings = match runtime_settings(&inst.settings, &o) {
            Ok(s) => s,
            Err(e) => return fail(FdcStatus::Argument, e),
        };
        let mut sys = match System::new(inst.model) {
            Ok(s) => s,
            Err(e) => return fail(FdcStatus::Build, e.to_string()),
        };
        if let Err(e) = sys.initialize(&settings) {
            return fail(FdcStatus::Simulation, format!("initial conditions: {e}"));
        }
        let channels = sys.channel_names();
        *out = Box::into_raw(Box::new(FdcSim {
            sys,
            settings,
            inputs: m.template.inputs.iter().map(|i| i.0.clone()).collect(),
            outputs: vec![0.0; channels.len()],
            channels,
            fresh: false,
        }));
        FdcStatus::Ok
    })
}

/// Frees a simulator (null is ignored).
///
/// # Safety
/// `s` is null or came from `fdc_sim_new` and is not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn fdc_sim_free(s: *mut FdcSim) {
    if !s.is_null() {
        drop(Box::from_raw(s));
    }
}

/// Index of a name in a list, for `*out`.
///
/// # Safety
/// `name` is a NUL-terminated string, `out` null or valid.
unsafe fn index_of(list: &[String], name: *const c_char, out: *mut usize, what: &str) -> FdcStatus {
    let name = tri!(text(name, "name"));
    if out.is_null() {
        return fail(FdcStatus::Argument, "out is null");
    }
    match list.iter().position(|n| n == name) {
        Some(i) => {
            *out = i;
            FdcStatus::Ok
        }
        None => fail(FdcStatus::NotFound, format!("no {what} `{name}`")),
    }
}

/// The index of the input `name` in `*out`.
///
/// # Safety
/// `s` came from `fdc_sim_new`; `name` is a NUL-terminated string; `out` is valid.
#[no_mangle]
pub unsafe extern "C" fn fdc_sim_input_index(
    s: *const FdcSim,
    name: *const c_char,
    out: *mut usize,
) -> FdcStatus {
    guard(|| match s.as_ref() {
        Some(s) => index_of(&s.inputs, name, out, "input"),
        None => fail(FdcStatus::Argument, "simulator is null"),
    })
}

/// Sets input `index`; the next step sees it.
///
/// # Safety
/// `s` came from `fdc_sim_new`.
#[no_mangle]
pub unsafe extern "C" fn fdc_sim_set_input(s: *mut FdcSim, index: usize, value: f64) -> FdcStatus {
    guard(|| {
        let Some(s) = s.as_mut() else {
            return fail(FdcStatus::Argument, "simulator is null");
        };
        if index >= s.inputs.len() {
            return fail(
                FdcStatus::Argument,
                format!("input index {index} out of range"),
            );
        }
        s.sys.set_input(index, value);
        s.fresh = false;
        FdcStatus::Ok
    })
}

/// One step of the simulator's step size. Allocates nothing.
///
/// # Safety
/// `s` came from `fdc_sim_new`.
#[no_mangle]
pub unsafe extern "C" fn fdc_sim_step(s: *mut FdcSim) -> FdcStatus {
    guard(|| {
        let Some(s) = s.as_mut() else {
            return fail(FdcStatus::Argument, "simulator is null");
        };
        s.fresh = false;
        match s.sys.step(&s.settings) {
            Ok(_) => FdcStatus::Ok,
            Err(e) => fail(FdcStatus::Simulation, e.to_string()),
        }
    })
}

/// The simulator's time [s] (NaN for a null simulator).
///
/// # Safety
/// `s` is null or came from `fdc_sim_new`.
#[no_mangle]
pub unsafe extern "C" fn fdc_sim_time(s: *const FdcSim) -> f64 {
    s.as_ref().map_or(f64::NAN, |s| s.sys.time())
}

/// Number of outputs (result channels); 0 for a null simulator.
///
/// # Safety
/// `s` is null or came from `fdc_sim_new`.
#[no_mangle]
pub unsafe extern "C" fn fdc_sim_output_count(s: *const FdcSim) -> usize {
    s.as_ref().map_or(0, |s| s.channels.len())
}

/// The index of the output (channel) `name` in `*out`.
///
/// # Safety
/// `s` came from `fdc_sim_new`; `name` is a NUL-terminated string; `out` is valid.
#[no_mangle]
pub unsafe extern "C" fn fdc_sim_output_index(
    s: *const FdcSim,
    name: *const c_char,
    out: *mut usize,
) -> FdcStatus {
    guard(|| match s.as_ref() {
        Some(s) => index_of(&s.channels, name, out, "output"),
        None => fail(FdcStatus::Argument, "simulator is null"),
    })
}

/// Output `index` at the current time in `*value`.
///
/// # Safety
/// `s` came from `fdc_sim_new`; `value` is valid.
#[no_mangle]
pub unsafe extern "C" fn fdc_sim_output(
    s: *mut FdcSim,
    index: usize,
    value: *mut f64,
) -> FdcStatus {
    guard(|| {
        let Some(s) = s.as_mut() else {
            return fail(FdcStatus::Argument, "simulator is null");
        };
        if value.is_null() {
            return fail(FdcStatus::Argument, "value is null");
        }
        if index >= s.channels.len() {
            return fail(
                FdcStatus::Argument,
                format!("output index {index} out of range"),
            );
        }
        if !s.fresh {
            s.outputs.copy_from_slice(s.sys.output_values());
            s.fresh = true;
        }
        *value = s.outputs[index];
        FdcStatus::Ok
    })
}
