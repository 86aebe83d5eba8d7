//! LLVM code generation (inkwell) and JIT for IR functions, with an on-disk object
//! cache keyed by the hash of the IR.
//!
//! Knows: the IR (`fdc-ir`: [`Graph`], [`Func`]), LLVM 14 through inkwell and the ORC
//! C API, and the native signature [`ElementFn`] of the runtime's function table.
//! [`compile`] turns a list of IR functions into callable native functions, one LLVM
//! module per call: IR → LLVM IR (`codegen`) → `default<O2>` pipeline → object file
//! (target machine for the host CPU) → ORC LLJIT. A cache hit loads the stored object
//! file and skips everything before the JIT. A second cache level, the source index
//! ([`lookup_source`], [`compile_recorded`]), is keyed by the IR *before* a
//! transformation of the caller (with a recipe naming it), so a hit there also skips
//! that transformation.
//!
//! Must not know: physics, roles, the fd language, or how the runtime uses the
//! functions (it does not build the `FunctionTable`: its caller adds block layouts).
//!
//! **Architecture invariant:** depends on `fdc-ir` (input) and `fdc-runtime` (only for
//! the function type it produces); `fdc-diff` is a dev-dependency only, for tests and
//! the benchmark to build real element roles. Generated functions are straight-line code: no
//! allocation, no branches except selects. Version-specific LLVM calls live in
//! `llvm14.rs` only.

mod cache;
mod codegen;
mod identity;
mod jit;
mod llvm14;
pub mod roles;

pub use identity::Identity;

use fdc_ir::{Func, Graph};
use fdc_runtime::table::ElementFn;
use inkwell::context::Context;
use inkwell::targets::{
    CodeModel, FileType, InitializationConfig, RelocMode, Target, TargetMachine,
};
use inkwell::OptimizationLevel;
use std::any::Any;
use std::collections::HashMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

/// Enters the cache key ([`Identity`]): bump the suffix whenever the generated code
/// changes for the same IR (new lowering of an op, other code model, ...).
pub const BACKEND_VERSION: &str = concat!("fdc-backend ", env!("CARGO_PKG_VERSION"), " codegen 5");

/// One JIT that the objects of several compiles load into (the element types of one
/// model): creating an LLJIT costs milliseconds (host detection, a target machine, a
/// session), so one per type made the warm build's link phase five times longer than
/// one module's. Symbols are named by their object's cache key, so two objects never
/// clash; loading the same object twice reuses the first copy. Safe to share between
/// threads: ORC's execution session is internally locked.
#[derive(Clone)]
pub struct SharedJit {
    jit: Arc<jit::Jit>,
    /// Objects already loaded, by key: their function addresses.
    loaded: Arc<Mutex<HashMap<cache::Key, Vec<ElementFn>>>>,
}

impl SharedJit {
    pub fn new() -> Result<SharedJit, BackendError> {
        init_native()?;
        Ok(SharedJit {
            jit: Arc::new(jit::Jit::new().map_err(BackendError::Jit)?),
            loaded: Arc::default(),
        })
    }

    /// What keeps the code of this JIT alive, for [`Compiled::owner`].
    pub fn owner(&self) -> Arc<dyn Any + Send + Sync> {
        self.jit.clone()
    }

    /// Loads `object` (whose key is `key`) and resolves its `n` functions.
    fn load(
        &self,
        object: &[u8],
        key: &cache::Key,
        n: usize,
    ) -> Result<Vec<ElementFn>, BackendError> {
        let mut loaded = self.loaded.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(f) = loaded.get(key).filter(|f| f.len() == n) {
            return Ok(f.clone());
        }
        self.jit.add_object(object).map_err(BackendError::Jit)?;
        let mut functions = Vec::with_capacity(n);
        for k in 0..n {
            let addr = self
                .jit
                .lookup(&codegen::symbol(key, k))
                .map_err(BackendError::Jit)?;
            // SAFETY: the symbol is a function emitted by `codegen::emit` with exactly
            // the `ElementFn` signature (nine pointers, no result, C calling convention).
            let f: ElementFn = unsafe { std::mem::transmute::<usize, ElementFn>(addr as usize) };
            functions.push(f);
        }
        loaded.insert(*key, functions.clone());
        Ok(functions)
    }
}

/// Where compiled objects are cached.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum CacheMode {
    /// `$XDG_CACHE_HOME/fdc`, else `~/.cache/fdc` (no cache if neither is known).
    #[default]
    Default,
    /// This directory (created if missing).
    Dir(PathBuf),
    /// Always compile, never read or write a cache.
    Off,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// 0..=3: the LLVM pipeline `default<O{n}>` and the code generator level.
    pub opt_level: u8,
    pub cache: CacheMode,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            opt_level: 2,
            cache: CacheMode::Default,
        }
    }
}

/// Wall-clock milliseconds of each phase of one [`compile`]. On a cache hit
/// `optimize` and `codegen` are zero and `emit` is only the check of the IR. The
/// "JIT/link" phase of `fdc build --timings` is [`Timings::jit_link`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Timings {
    /// Checking the IR and building LLVM IR (with the verifier in debug builds).
    pub emit: f64,
    /// The LLVM optimization pipeline.
    pub optimize: f64,
    /// Machine code generation into an object file.
    pub codegen: f64,
    /// Loading the object into the JIT and resolving the function addresses.
    pub link: f64,
    /// Hashing the IR, reading and writing the cache entry.
    pub cache: f64,
    /// The whole call.
    pub total: f64,
}

impl Timings {
    /// Machine code generation plus linking: the "JIT/link" phase.
    pub fn jit_link(&self) -> f64 {
        self.codegen + self.link
    }
}

/// Native functions, in the order of the `funcs` given to [`compile`].
pub struct Compiled {
    /// `functions[k]` computes `funcs[k]`: output j is written to `out[j]`.
    pub functions: Vec<ElementFn>,
    /// Keeps the machine code alive: keep a clone as long as any pointer of
    /// `functions` may be called.
    pub owner: Arc<dyn Any + Send + Sync>,
    pub timings: Timings,
    /// True when the object came from the cache (no LLVM codegen ran).
    pub cache_hit: bool,
    /// The cache entry read or written, if the cache is on.
    pub cache_entry: Option<PathBuf>,
    /// A cache problem that did not stop compilation (invalid entry rebuilt, entry not
    /// writable, no cache directory known), for the caller to show.
    pub cache_warning: Option<String>,
}

impl fmt::Debug for Compiled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Compiled")
            .field("functions", &self.functions.len())
            .field("timings", &self.timings)
            .field("cache_hit", &self.cache_hit)
            .field("cache_entry", &self.cache_entry)
            .field("cache_warning", &self.cache_warning)
            .finish()
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BackendError {
    /// The IR cannot be compiled (symbol, input outside the declared sizes, ...).
    InvalidIr {
        func: String,
        msg: String,
    },
    InvalidOptions(String),
    /// LLVM refused something (target, verifier, pass pipeline, code generation).
    Llvm(String),
    /// The JIT could not load or link the object code.
    Jit(String),
}

impl fmt::Display for BackendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BackendError::InvalidIr { func, msg } => write!(f, "function {func}: {msg}"),
            BackendError::InvalidOptions(m) => write!(f, "invalid backend options: {m}"),
            BackendError::Llvm(m) => write!(f, "LLVM: {m}"),
            BackendError::Jit(m) => write!(f, "JIT: {m}"),
        }
    }
}

impl std::error::Error for BackendError {}

/// The linked LLVM's version, e.g. `14.0.6`.
pub fn llvm_version() -> String {
    llvm14::version().to_string()
}

fn init_native() -> Result<(), BackendError> {
    static INIT: OnceLock<Result<(), String>> = OnceLock::new();
    INIT.get_or_init(|| {
        Target::initialize_native(&InitializationConfig::default())?;
        llvm14::set_global_codegen_options();
        Ok(())
    })
    .clone()
    .map_err(|e| BackendError::Llvm(format!("cannot initialize the native target: {e}")))
}

/// The CPU model code is scheduled for. All instruction set extensions of the host
/// are enabled through the feature string, but a generic scheduling model is used:
/// the detailed models of recent cores (e.g. `znver3`) make the machine scheduler of
/// LLVM 14 about four times slower on large straight-line functions, for no
/// measurable gain on out-of-order cores (docs/performance.md).
fn codegen_cpu(triple: &str) -> String {
    if triple.starts_with("x86_64") {
        "x86-64".to_string()
    } else {
        TargetMachine::get_host_cpu_name().to_string()
    }
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

/// The host target as the cache key sees it.
struct HostTarget {
    triple: inkwell::targets::TargetTriple,
    triple_str: String,
    cpu: String,
    features: String,
    /// [`Identity::current_object`].
    object: String,
}

impl HostTarget {
    fn get() -> Result<HostTarget, BackendError> {
        init_native()?;
        // Asked of LLVM once per process: the host's features come from parsing
        // /proc/cpuinfo, which every element type's cache look-up would repeat.
        static HOST: OnceLock<(String, String, String)> = OnceLock::new();
        let (triple_str, cpu, features) = HOST
            .get_or_init(|| {
                let triple = TargetMachine::get_default_triple();
                let triple_str = triple.as_str().to_string_lossy().into_owned();
                let cpu = codegen_cpu(&triple_str);
                let features = TargetMachine::get_host_cpu_features().to_string();
                (triple_str, cpu, features)
            })
            .clone();
        Ok(HostTarget {
            triple: inkwell::targets::TargetTriple::create(&triple_str),
            triple_str,
            cpu,
            features,
            object: Identity::current_object(),
        })
    }

    fn key_target(&self, opt_level: u8) -> cache::Target<'_> {
        cache::Target {
            backend: &self.object,
            llvm: llvm14::version(),
            triple: &self.triple_str,
            cpu: &self.cpu,
            features: &self.features,
            opt_level,
        }
    }
}

/// The cache directory of `opts`, and a warning when the default one is unknown.
fn cache_dir(opts: &Options) -> (Option<PathBuf>, Option<String>) {
    match &opts.cache {
        CacheMode::Off => (None, None),
        CacheMode::Dir(d) => (Some(d.clone()), None),
        CacheMode::Default => match cache::default_dir() {
            Some(d) => (Some(d), None),
            None => (
                None,
                Some("no cache directory: neither XDG_CACHE_HOME nor HOME is set".into()),
            ),
        },
    }
}

fn check_options(opts: &Options) -> Result<(), BackendError> {
    if opts.opt_level > 3 {
        return Err(BackendError::InvalidOptions(format!(
            "optimization level {} (must be 0 to 3)",
            opts.opt_level
        )));
    }
    Ok(())
}

/// IR that the caller turns into the IR it compiles (the driver simplifies it first),
/// named together with that transformation. Equal sources with equal recipes are
/// assumed to lead to the same compiled IR, so `recipe` must change whenever the
/// transformation's output may change (its version, rule set, options).
pub struct Source<'a> {
    pub graph: &'a Graph,
    pub funcs: &'a [Func],
    pub recipe: &'a str,
}

/// Where a compile of a [`Source`] is to be remembered; from [`lookup_source`], for
/// [`compile_recorded`].
#[derive(Clone, Debug, Default)]
pub struct SourceToken {
    entry: Option<(PathBuf, cache::Key)>,
    warning: Option<String>,
    /// Milliseconds spent hashing and reading in [`lookup_source`].
    time: f64,
}

impl SourceToken {
    /// Why the lookup missed, when it found something damaged.
    pub fn warning(&self) -> Option<&str> {
        self.warning.as_deref()
    }
}

/// What [`lookup_source`] found.
pub struct SourceLookup {
    /// The functions compiled earlier from this source, with the caller's bytes given
    /// to [`compile_recorded`] then.
    pub hit: Option<(Compiled, Vec<u8>)>,
    /// For [`compile_recorded`] when there is no hit (or the caller rejects it).
    pub token: SourceToken,
}

/// Looks up code compiled earlier from `source` (see [`compile_recorded`]), without
/// the caller's transformation. Anything missing, damaged or unloadable is a miss
/// (with a warning in the token when something was damaged), never an error, except
/// for invalid options.
pub fn lookup_source(source: &Source, opts: &Options) -> Result<SourceLookup, BackendError> {
    lookup_source_in(source, opts, None)
}

/// [`lookup_source`], loading a hit into `jit` (a new JIT if `None`).
pub fn lookup_source_in(
    source: &Source,
    opts: &Options,
    jit: Option<&SharedJit>,
) -> Result<SourceLookup, BackendError> {
    let start = Instant::now();
    check_options(opts)?;
    let (dir, warning) = cache_dir(opts);
    let miss = |entry, warning, start: Instant| SourceLookup {
        hit: None,
        token: SourceToken {
            entry,
            warning,
            time: ms(start),
        },
    };
    let Some(dir) = dir else {
        return Ok(miss(None, warning, start));
    };
    // IR the backend could not compile as given is not cached at this level; the
    // caller's transformation may still make it compilable.
    let Ok(plans) = source
        .funcs
        .iter()
        .map(|f| codegen::plan(source.graph, f))
        .collect::<Result<Vec<_>, _>>()
    else {
        return Ok(miss(None, warning, start));
    };
    let host = HostTarget::get()?;
    let key = cache::source_key(
        &host.key_target(opts.opt_level),
        source.recipe,
        source.graph,
        source.funcs,
        &plans,
    );
    source_entry(dir, key, warning, start, jit)
}

/// Looks up code compiled earlier from the roles of a type whose definition has the
/// key `defined.definition` (the roles cache, [`roles`]): like [`lookup_source_in`],
/// but keyed by that digest instead of by the roles' IR, so a hit neither checks nor
/// hashes the IR. Equal definitions derive equal roles, so the key names the same
/// source; a caller must use one keying or the other for one type consistently.
pub fn lookup_defined_in(
    defined: &Defined,
    opts: &Options,
    jit: Option<&SharedJit>,
) -> Result<SourceLookup, BackendError> {
    let start = Instant::now();
    check_options(opts)?;
    let (dir, warning) = cache_dir(opts);
    let Some(dir) = dir else {
        return Ok(SourceLookup {
            hit: None,
            token: SourceToken {
                entry: None,
                warning,
                time: ms(start),
            },
        });
    };
    let host = HostTarget::get()?;
    let key = cache::defined_key(&host.key_target(opts.opt_level), defined);
    source_entry(dir, key, warning, start, jit)
}

/// A type's roles named by their definition (see [`lookup_defined_in`]).
pub struct Defined<'a> {
    /// The definition's key in the roles cache.
    pub definition: &'a [u8; 32],
    /// The role functions compiled from it (their names and input sizes enter the key).
    pub funcs: &'a [Func],
    pub recipe: &'a str,
}

/// The source index entry `key` in `dir`, with the object it names.
fn source_entry(
    dir: PathBuf,
    key: cache::Key,
    warning: Option<String>,
    start: Instant,
    jit: Option<&SharedJit>,
) -> Result<SourceLookup, BackendError> {
    let miss = |entry, warning, start: Instant| SourceLookup {
        hit: None,
        token: SourceToken {
            entry,
            warning,
            time: ms(start),
        },
    };
    let entry = Some((dir.clone(), key));
    let payload = match cache::read(&dir, cache::Kind::Source, &key) {
        cache::Lookup::Hit(p) => p,
        cache::Lookup::Absent => return Ok(miss(entry, warning, start)),
        cache::Lookup::Invalid(why) => {
            return Ok(miss(
                entry,
                Some(format!("invalid source index entry {why}; rebuilt")),
                start,
            ))
        }
    };
    // Payload: object key (32) | function count (u64 LE) | caller bytes.
    if payload.len() < 40 {
        return Ok(miss(
            entry,
            Some("source index entry too short; rebuilt".into()),
            start,
        ));
    }
    let object_key: cache::Key = payload[..32].try_into().expect("32 bytes");
    let n = u64::from_le_bytes(payload[32..40].try_into().expect("8 bytes")) as usize;
    let object = match cache::read(&dir, cache::Kind::Object, &object_key) {
        cache::Lookup::Hit(o) => o,
        // The object was removed by hand: compile again, quietly.
        cache::Lookup::Absent => return Ok(miss(entry, warning, start)),
        cache::Lookup::Invalid(why) => {
            return Ok(miss(
                entry,
                Some(format!("invalid cache entry {why}; rebuilt")),
                start,
            ))
        }
    };
    let mut timings = Timings {
        cache: ms(start),
        ..Timings::default()
    };
    let t = Instant::now();
    match load(&object, &object_key, n, jit) {
        Ok((owner, functions)) => {
            timings.link = ms(t);
            timings.total = ms(start);
            Ok(SourceLookup {
                hit: Some((
                    Compiled {
                        functions,
                        owner,
                        timings,
                        cache_hit: true,
                        cache_entry: Some(cache::entry_path(
                            &dir,
                            cache::Kind::Object,
                            &object_key,
                        )),
                        cache_warning: warning,
                    },
                    payload[40..].to_vec(),
                )),
                token: SourceToken {
                    entry,
                    warning: None,
                    time: 0.0,
                },
            })
        }
        Err(e) => Ok(miss(
            entry,
            Some(format!("cache entry could not be loaded ({e}); rebuilt")),
            start,
        )),
    }
}

/// Compiles `funcs` (all nodes of `graph`) to native code, or loads them from the cache.
pub fn compile(graph: &Graph, funcs: &[Func], opts: &Options) -> Result<Compiled, BackendError> {
    compile_inner(graph, funcs, opts, None, None)
}

/// [`compile`], loading the code into `jit`.
pub fn compile_in(
    graph: &Graph,
    funcs: &[Func],
    opts: &Options,
    jit: &SharedJit,
) -> Result<Compiled, BackendError> {
    compile_inner(graph, funcs, opts, None, Some(jit))
}

/// [`compile`], then records in the source index of `token` (from [`lookup_source`])
/// which object serves that source, with `meta`, the caller's bytes that
/// [`lookup_source`] hands back on a hit. `graph`/`funcs` are what the caller made of
/// the source.
pub fn compile_recorded(
    graph: &Graph,
    funcs: &[Func],
    opts: &Options,
    token: SourceToken,
    meta: &[u8],
) -> Result<Compiled, BackendError> {
    compile_inner(graph, funcs, opts, Some((token, meta)), None)
}

/// [`compile_recorded`], loading the code into `jit` (a new JIT if `None`).
pub fn compile_recorded_in(
    graph: &Graph,
    funcs: &[Func],
    opts: &Options,
    token: SourceToken,
    meta: &[u8],
    jit: Option<&SharedJit>,
) -> Result<Compiled, BackendError> {
    compile_inner(graph, funcs, opts, Some((token, meta)), jit)
}

fn compile_inner(
    graph: &Graph,
    funcs: &[Func],
    opts: &Options,
    record: Option<(SourceToken, &[u8])>,
    jit: Option<&SharedJit>,
) -> Result<Compiled, BackendError> {
    let start = Instant::now();
    check_options(opts)?;
    let mut timings = Timings::default();
    let t = Instant::now();
    let plans = funcs
        .iter()
        .map(|f| codegen::plan(graph, f))
        .collect::<Result<Vec<_>, _>>()?;
    timings.emit += ms(t);

    let host = HostTarget::get()?;
    let (dir, mut warning) = cache_dir(opts);
    if let Some((token, _)) = &record {
        timings.cache += token.time;
        if token.warning.is_some() {
            warning = token.warning.clone();
        }
    }

    let t = Instant::now();
    // Also without a cache: the key names the object's symbols.
    let object_key = cache::key(&host.key_target(opts.opt_level), graph, funcs, &plans);
    let key = dir.as_ref().map(|_| object_key);
    let entry = dir
        .as_ref()
        .zip(key.as_ref())
        .map(|(d, k)| cache::entry_path(d, cache::Kind::Object, k));
    // Records the source index entry; a failure to write only warns.
    let remember = |warning: &mut Option<String>, timings: &mut Timings| {
        if let (Some((token, meta)), Some(k)) = (&record, &key) {
            if let Some((d, sk)) = &token.entry {
                let t = Instant::now();
                let mut payload = Vec::with_capacity(40 + meta.len());
                payload.extend_from_slice(k);
                payload.extend_from_slice(&(funcs.len() as u64).to_le_bytes());
                payload.extend_from_slice(meta);
                if let Err(e) = cache::write(d, cache::Kind::Source, sk, &payload) {
                    *warning = Some(e);
                }
                timings.cache += ms(t);
            }
        }
    };
    if let (Some(d), Some(k)) = (&dir, &key) {
        match cache::read(d, cache::Kind::Object, k) {
            cache::Lookup::Hit(object) => {
                timings.cache += ms(t);
                let t = Instant::now();
                match load(&object, k, funcs.len(), jit) {
                    Ok((owner, functions)) => {
                        timings.link += ms(t);
                        remember(&mut warning, &mut timings);
                        timings.total = ms(start);
                        return Ok(Compiled {
                            functions,
                            owner,
                            timings,
                            cache_hit: true,
                            cache_entry: entry,
                            cache_warning: warning,
                        });
                    }
                    Err(e) => {
                        warning = Some(format!("cache entry could not be loaded ({e}); rebuilt"))
                    }
                }
            }
            cache::Lookup::Invalid(why) => {
                warning = Some(format!("invalid cache entry {why}; rebuilt"));
                timings.cache += ms(t);
            }
            cache::Lookup::Absent => timings.cache += ms(t),
        }
    }

    let object = build_object(
        graph,
        funcs,
        &plans,
        &object_key,
        opts.opt_level,
        &host,
        &mut timings,
    )?;
    let t = Instant::now();
    let (owner, functions) = load(&object, &object_key, funcs.len(), jit)?;
    timings.link += ms(t);
    if let (Some(d), Some(k)) = (&dir, &key) {
        let t = Instant::now();
        let written = cache::write(d, cache::Kind::Object, k, &object);
        timings.cache += ms(t);
        match written {
            Ok(()) => remember(&mut warning, &mut timings),
            Err(e) => warning = Some(e),
        }
    }
    timings.total = ms(start);
    Ok(Compiled {
        functions,
        owner,
        timings,
        cache_hit: false,
        cache_entry: entry,
        cache_warning: warning,
    })
}

/// LLVM IR → optimized module → relocatable object file for the host CPU.
fn build_object(
    graph: &Graph,
    funcs: &[Func],
    plans: &[Vec<fdc_ir::Id>],
    key: &cache::Key,
    opt_level: u8,
    host: &HostTarget,
    timings: &mut Timings,
) -> Result<Vec<u8>, BackendError> {
    let (triple, cpu, features) = (&host.triple, host.cpu.as_str(), host.features.as_str());
    let llvm = |e: String| BackendError::Llvm(e);
    let t = Instant::now();
    let ctx = Context::create();
    let module = codegen::emit(&ctx, graph, funcs, plans, key)?;
    timings.emit += ms(t);

    let level = match opt_level {
        0 => OptimizationLevel::None,
        1 => OptimizationLevel::Less,
        2 => OptimizationLevel::Default,
        _ => OptimizationLevel::Aggressive,
    };
    let target = Target::from_triple(triple).map_err(|e| llvm(e.to_string()))?;
    // Large code model with absolute addresses: the JIT may place code and constants
    // anywhere in the address space, so no reference may assume ±2 GiB distance.
    let tm = target
        .create_target_machine(
            triple,
            cpu,
            features,
            level,
            RelocMode::Static,
            CodeModel::Large,
        )
        .ok_or_else(|| {
            llvm(format!(
                "no target machine for {}",
                triple.as_str().to_string_lossy()
            ))
        })?;
    module.set_triple(triple);
    module.set_data_layout(&tm.get_target_data().get_data_layout());

    let t = Instant::now();
    llvm14::optimize(&module, &tm, opt_level).map_err(llvm)?;
    timings.optimize += ms(t);
    // Debugging aid (docs/backend.md): the optimized LLVM IR, for `llc`/`opt` by hand.
    if let Some(path) = std::env::var_os("FDC_DUMP_LLVM_IR") {
        module
            .print_to_file(&path)
            .map_err(|e| llvm(e.to_string()))?;
    }

    let t = Instant::now();
    let buf = tm
        .write_to_memory_buffer(&module, FileType::Object)
        .map_err(|e| llvm(format!("code generation failed: {e}")))?;
    let object = buf.as_slice().to_vec();
    timings.codegen += ms(t);
    Ok(object)
}

/// Loads an object into `jit` (a new JIT if `None`) and resolves its `n` functions.
fn load(
    object: &[u8],
    key: &cache::Key,
    n: usize,
    jit: Option<&SharedJit>,
) -> Result<(Arc<dyn Any + Send + Sync>, Vec<ElementFn>), BackendError> {
    let own;
    let jit = match jit {
        Some(j) => j,
        None => {
            own = SharedJit::new()?;
            &own
        }
    };
    let functions = jit.load(object, key, n)?;
    Ok((jit.owner(), functions))
}
