//! The model behind the page: a worker thread that builds the model, runs it, watches
//! the files it reads and re-runs with the panel's parameter values. The server only
//! reads [`State`] snapshots and queues requests.

use crate::scene::Scene;
use fdc_driver::pipeline::{render, BuildError, BuildOptions};
use fdc_driver::settings::{runtime_settings, Overrides};
use fdc_driver::template::Template;
use fdc_runtime::{LoadChannel, ResultSink, System};
use serde_json::{json, Value};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

/// What to view and how.
#[derive(Clone, Debug)]
pub struct SessionOptions {
    pub model: PathBuf,
    pub build: BuildOptions,
    /// Runs kept for the comparison in the plots (the oldest is dropped).
    pub keep_runs: usize,
    /// How often the files are looked at.
    pub poll: Duration,
    /// A result file to show instead of a first run (`fdc view RESULTS.csv --model`).
    pub results: Option<PathBuf>,
}

impl SessionOptions {
    pub fn new(model: &Path) -> SessionOptions {
        SessionOptions {
            model: model.to_path_buf(),
            build: BuildOptions {
                simplify: true,
                ..BuildOptions::default()
            },
            keep_runs: 4,
            poll: Duration::from_millis(250),
            results: None,
        }
    }
}

/// One simulation: its parameter values and the rows so far.
#[derive(Clone, Debug, Default)]
pub struct Run {
    pub id: u64,
    pub set: Vec<(String, f64)>,
    pub channels: Vec<String>,
    pub times: Vec<f64>,
    pub rows: Vec<Vec<f64>>,
    pub done: bool,
    pub error: Option<String>,
    /// The force elements with load channels `NAME.load.*` in this run, each with the
    /// body the load acts on (`System::with_loads`; none for a result file).
    pub loads: Vec<LoadChannel>,
    /// The eigenmodes with this run's values `set` (none: the build's, `State::modes`).
    pub modes: Option<Value>,
}

/// Everything the page sees. `version` rises with every change, so a poll that
/// brings the same version brings nothing new.
#[derive(Debug, Default)]
pub struct State {
    pub version: u64,
    /// `building`, `running` (built, a run going), `ready` or `failed` (the last build
    /// failed; runs of the previous build may still go and say their own outcome).
    pub status: String,
    /// Diagnostics of the last build when it failed (with file:line:col).
    pub diagnostics: Option<String>,
    pub scene: Option<Value>,
    /// The vertex bytes of the scene's meshes (`Scene::meshes`), served apart.
    pub meshes: Vec<Vec<u8>>,
    /// Rises with every successful build: the page rebuilds its meshes then.
    pub scene_version: u64,
    /// The eigenmodes of the last good build with the model's own values
    /// (`fdc modes --json`, mode vectors included), or `{"error": ...}`.
    pub modes: Option<Value>,
    pub runs: Vec<Run>,
    next_run: u64,
}

impl State {
    fn bump(&mut self) {
        self.version += 1;
    }

    /// The state without result rows (each run says how many it has).
    pub fn summary(&self) -> Value {
        json!({
            "version": self.version,
            "status": self.status,
            "diagnostics": self.diagnostics,
            "scene": self.scene,
            "scene_version": self.scene_version,
            "modes": self.modes,
            "runs": self.runs.iter().map(|r| json!({
                "id": r.id, "set": r.set, "rows": r.rows.len(), "done": r.done,
                "error": r.error, "modes": r.modes,
                "loads": r.loads.iter().map(|l| json!({"name": l.element, "body": l.body}))
                    .collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
        })
    }

    /// Rows `from..` of run `id`, with the channel names.
    pub fn rows(&self, id: u64, from: usize) -> Option<Value> {
        let r = self.runs.iter().find(|r| r.id == id)?;
        let from = from.min(r.rows.len());
        Some(json!({
            "id": r.id, "channels": r.channels, "from": from,
            "times": r.times[from..], "rows": r.rows[from..],
        }))
    }

    /// Everything, rows and meshes (base64) included: what `--export` embeds.
    pub fn snapshot(&self) -> Value {
        use base64::Engine;
        let mut s = self.summary();
        let b64 = base64::engine::general_purpose::STANDARD;
        s["mesh_data"] = json!(self
            .meshes
            .iter()
            .map(|m| b64.encode(m))
            .collect::<Vec<_>>());
        s["embedded"] = json!(self
            .runs
            .iter()
            .filter_map(|r| self.rows(r.id, 0))
            .collect::<Vec<_>>());
        s
    }
}

enum Request {
    Rerun(Vec<(String, f64)>),
}

/// A running viewer session: the worker thread and the state it fills.
pub struct Session {
    state: Arc<Mutex<State>>,
    requests: Sender<Request>,
}

impl Session {
    /// Starts the worker: it builds and runs at once, then watches.
    pub fn start(opts: SessionOptions) -> Session {
        let state = Arc::new(Mutex::new(State {
            status: "building".into(),
            ..State::default()
        }));
        let (tx, rx) = channel();
        let s = state.clone();
        std::thread::spawn(move || worker(&opts, &s, &rx));
        Session {
            state,
            requests: tx,
        }
    }

    /// Builds and runs once, without watching (`--export`); the state when done.
    pub fn run_once(opts: &SessionOptions) -> State {
        let state = Arc::new(Mutex::new(State::default()));
        if let Some(t) = rebuild(opts, &state) {
            first_run(opts, &t, &state);
        }
        let mut guard = lock(&state);
        std::mem::take(&mut *guard)
    }

    pub fn state(&self) -> std::sync::MutexGuard<'_, State> {
        lock(&self.state)
    }

    /// Queues a run with these parameter values (`--set` semantics: no recompilation
    /// unless a value changes the code).
    pub fn rerun(&self, set: Vec<(String, f64)>) {
        // The worker only ends with the session, so a send cannot fail before.
        let _ = self.requests.send(Request::Rerun(set));
    }
}

/// A poisoned lock means a panic in a holder that `catch_unwind` already reported;
/// the state itself is always whole (every change is one assignment or push).
fn lock(s: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    s.lock().unwrap_or_else(|e| e.into_inner())
}

/// Modification times of the watched files (`None` for a file that is missing).
fn stamps(files: &[PathBuf]) -> Vec<Option<SystemTime>> {
    files
        .iter()
        .map(|f| std::fs::metadata(f).and_then(|m| m.modified()).ok())
        .collect()
}

fn worker(opts: &SessionOptions, state: &Mutex<State>, rx: &Receiver<Request>) {
    let mut watched: Vec<PathBuf> = [Some(&opts.model), opts.results.as_ref()]
        .into_iter()
        .flatten()
        .cloned()
        .collect();
    let mut seen: Option<Vec<Option<SystemTime>>> = None;
    let mut template: Option<Template> = None;
    loop {
        let now = stamps(&watched);
        if seen.as_ref() != Some(&now) {
            seen = Some(now);
            if let Some(t) = rebuild(opts, state) {
                let mut files = vec![opts.model.clone()];
                files.extend(opts.results.iter().cloned());
                files.extend(t.built.inputs.iter().filter(|f| **f != opts.model).cloned());
                if files != watched {
                    watched = files;
                    seen = Some(stamps(&watched));
                }
                first_run(opts, &t, state);
                template = Some(t);
            }
        }
        match rx.recv_timeout(opts.poll) {
            Ok(Request::Rerun(set)) => {
                if let Some(t) = &template {
                    simulate(t, &set, opts.keep_runs, state);
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return,
        }
    }
}

/// The run after a build: the model's, or the given result file read as a run.
fn first_run(opts: &SessionOptions, t: &Template, state: &Mutex<State>) {
    let Some(path) = &opts.results else {
        return simulate(t, &[], opts.keep_runs, state);
    };
    let mut s = lock(state);
    let id = s.next_run;
    s.next_run += 1;
    let mut run = Run {
        id,
        done: true,
        ..Run::default()
    };
    if let Err(e) = read_csv(path, &mut run) {
        run.error = Some(format!("`{}`: {e}", path.display()));
    }
    s.runs.push(run);
    let excess = s.runs.len().saturating_sub(opts.keep_runs.max(1));
    s.runs.drain(..excess);
    s.status = "ready".into();
    s.bump();
}

/// A result file as `fdc run` writes it (docs/results.md): a header starting with
/// `time`, then one row of numbers per output time. The rows before a bad line stay.
pub fn read_csv(path: &Path, run: &mut Run) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or("").split(',').collect();
    if header.first() != Some(&"time") {
        return Err("the first column is not `time`".into());
    }
    run.channels = header[1..].iter().map(|c| c.to_string()).collect();
    for (k, line) in lines.enumerate() {
        let values: Result<Vec<f64>, _> = line.split(',').map(|v| v.trim().parse()).collect();
        match values {
            Ok(v) if v.len() == header.len() => {
                run.times.push(v[0]);
                run.rows.push(v[1..].to_vec());
            }
            _ => {
                return Err(format!(
                    "line {} is not a row of {} numbers",
                    k + 2,
                    header.len()
                ))
            }
        }
    }
    Ok(())
}

/// The text of a panic, for the page.
fn panic_text(p: Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

/// Builds the model; on failure keeps the last scene and runs and shows why.
fn rebuild(opts: &SessionOptions, state: &Mutex<State>) -> Option<Template> {
    {
        let mut s = lock(state);
        s.status = "building".into();
        s.bump();
    }
    let built = catch_unwind(AssertUnwindSafe(|| {
        Template::build(&opts.model, &opts.build)
    }));
    let modes = built
        .as_ref()
        .ok()
        .and_then(|b| b.as_ref().ok())
        .map(|t| modes_of(t, &[]));
    let mut s = lock(state);
    s.bump();
    let t = match built {
        Ok(Ok(t)) => t,
        Ok(Err(e)) => {
            s.status = "failed".into();
            s.diagnostics = Some(error_text(&e));
            return None;
        }
        Err(p) => {
            s.status = "failed".into();
            s.diagnostics = Some(format!("internal error: {}", panic_text(p)));
            return None;
        }
    };
    // The run that follows every build makes it `ready`.
    s.status = "running".into();
    s.diagnostics = None;
    let mut scene = Scene::of(&t);
    s.scene = Some(scene.to_json());
    s.meshes = std::mem::take(&mut scene.meshes)
        .into_iter()
        .map(|m| m.bytes)
        .collect();
    s.scene_version += 1;
    s.modes = modes;
    Some(t)
}

/// The modes about the initial state with the values `set` (`--set` semantics; none:
/// the model's own), as `fdc modes --json` prints them; a model that cannot be
/// linearized says why instead.
fn modes_of(t: &Template, set: &[(String, f64)]) -> Value {
    let outcome = catch_unwind(AssertUnwindSafe(|| -> Result<Value, String> {
        let inst = t.instantiate(set).map_err(|e| error_text(&e))?;
        let settings = runtime_settings(&inst.settings, &Overrides::default())?;
        let mut sys = System::new(inst.model).map_err(|e| e.to_string())?;
        sys.initialize(&settings).map_err(|e| e.to_string())?;
        let lin = sys.linearize().map_err(|e| e.to_string())?;
        Ok(fdc_driver::report::modes_json(&lin))
    }));
    match outcome {
        Ok(Ok(v)) => v,
        Ok(Err(e)) => json!({ "error": e }),
        Err(p) => json!({ "error": format!("internal error: {}", panic_text(p)) }),
    }
}

/// The full text of why a build stopped: rendered diagnostics with file:line:col.
fn error_text(e: &BuildError) -> String {
    match e {
        BuildError::Model { analysis, extra } => render(analysis, extra),
        BuildError::Backend(m) => format!("error: code generation failed: {m}"),
        BuildError::Usage(m) => format!("error: {m}"),
    }
}

/// Appends every row to the run in the state as it arrives (the page shows them).
struct StateSink<'a> {
    state: &'a Mutex<State>,
    id: u64,
}

impl StateSink<'_> {
    fn with_run(&self, f: impl FnOnce(&mut Run)) {
        let mut s = lock(self.state);
        if let Some(r) = s.runs.iter_mut().find(|r| r.id == self.id) {
            f(r);
        }
        s.bump();
    }
}

impl ResultSink for StateSink<'_> {
    fn header(&mut self, names: &[String]) {
        self.with_run(|r| r.channels = names.to_vec());
    }
    fn row(&mut self, t: f64, values: &[f64]) {
        self.with_run(|r| {
            r.times.push(t);
            r.rows.push(values.to_vec());
        });
    }
}

/// One run with the values `set`; a failure is recorded in the run, the rows so far
/// stay.
fn simulate(t: &Template, set: &[(String, f64)], keep: usize, state: &Mutex<State>) {
    let id = {
        let mut s = lock(state);
        let id = s.next_run;
        s.next_run += 1;
        if s.status != "failed" {
            s.status = "running".into();
        }
        s.runs.push(Run {
            id,
            set: set.to_vec(),
            ..Run::default()
        });
        let excess = s.runs.len().saturating_sub(keep.max(1));
        s.runs.drain(..excess);
        s.bump();
        id
    };
    let mut sink = StateSink { state, id };
    // Other values, other modes: the run's own, listed with it.
    if !set.is_empty() {
        let modes = modes_of(t, set);
        sink.with_run(|r| r.modes = Some(modes));
    }
    let outcome = catch_unwind(AssertUnwindSafe(|| -> Result<(), String> {
        let inst = t.instantiate(set).map_err(|e| error_text(&e))?;
        let settings = runtime_settings(&inst.settings, &Overrides::default())?;
        let mut sys = System::new(inst.model).map_err(|e| e.to_string())?;
        let loads = sys.with_loads();
        sink.with_run(|r| r.loads = loads);
        sys.run(&settings, &mut sink).map_err(|e| e.to_string())?;
        Ok(())
    }));
    let error = match outcome {
        Ok(Ok(())) => None,
        Ok(Err(e)) => Some(e),
        Err(p) => Some(format!("internal error: {}", panic_text(p))),
    };
    sink.with_run(|r| {
        r.done = true;
        r.error = error;
    });
    let mut s = lock(state);
    if s.status == "running" {
        s.status = "ready".into();
    }
}
