//! From a model file to a runtime model: check, lower, simplify, differentiate (inside
//! lowering), compile, and map the result onto the runtime's function table. The unit
//! of caching and compilation is the element type ([`crate::compile`]): before
//! simplifying a type, the object cache is asked with its unsimplified roles and a
//! recipe naming the simplification ([`recipe`]); a hit skips the simplifier and the
//! compiler for that type.

pub use crate::compile::{type_funcs, TypeCounts, JOBS_ENV};
use fdc_diff::ElementFunctions;
use fdc_frontend::{Analysis, Diagnostic};
use fdc_ir::{Func, Graph};
use fdc_runtime::table::{ElementType, FunctionTable, Role, RoleFn, ABI_VERSION};
use fdc_runtime::{ElementInstance, Model, RuntimeInput};
use std::path::Path;
use std::time::Instant;

/// How to build.
#[derive(Clone, Debug, Default)]
pub struct BuildOptions {
    pub overrides: Vec<(String, f64)>,
    pub simplify: bool,
    pub backend: fdc_backend::Options,
    /// Threads compiling element types in parallel; 0: `FDC_JOBS` from the
    /// environment, else the available cores. The code does not depend on it.
    pub jobs: usize,
}

/// Milliseconds per phase.
#[derive(Clone, Copy, Debug, Default)]
pub struct BuildTimings {
    pub parse_check: f64,
    /// Lowering incl. symbolic differentiation of every role.
    pub lower_diff: f64,
    pub simplify: f64,
    pub backend: fdc_backend::Timings,
}

/// What was built, ready for the runtime.
pub struct Built {
    pub model: Model,
    pub settings: fdc_lower::Settings,
    pub bodies: Vec<String>,
    pub element_types: usize,
    pub timings: BuildTimings,
    /// Every element type's object came from the cache (no LLVM code generation ran).
    pub cache_hit: bool,
    /// Every hit was on the unsimplified roles, so the simplifier did not run either.
    pub simplifier_skipped: bool,
    /// Per element type (the unit of caching and compilation): how many were compiled
    /// and how many came from the cache.
    pub types: TypeCounts,
    pub warnings: Vec<String>,
    /// Every file the model was read from ([`input_files`]): results must not go there.
    pub inputs: Vec<std::path::PathBuf>,
    /// Display shapes (`fdc view`), beside the model: no part of its code or cache key.
    pub shapes: Vec<fdc_lower::shapes::Shape>,
    /// Joint and force glyphs (`fdc view`), beside the model as well.
    pub glyphs: Vec<fdc_lower::shapes::Glyph>,
    /// The `--set` parameters that shape the model (a loop bound, an index, a
    /// condition reads them): they changed its instances, not only numbers.
    pub structure_set: Vec<String>,
    /// Tiered builds ([`build_from_tiered`]) where some type missed the cache: the
    /// optimizing build, whose code the model switches to between two steps. Wait for
    /// it before the process exits, or the cache never receives the optimized code.
    pub tier: Option<crate::tier::TierBuild>,
}

/// The files a model reads: the model, its `use`d files, its spline `table(...)`
/// files and the mesh files of its shapes (resolved as the lowering does: relative to
/// the declaring file's directory), and the tyre property and road files the lowering
/// read (`tir(...)`, `crg(...)`: `LoweredModel::data_files`).
pub fn input_files(
    analysis: &Analysis,
    lowered: &fdc_lower::LoweredModel,
) -> Vec<std::path::PathBuf> {
    use fdc_frontend::ast::{ExprKind, Item};
    let files = &analysis.files;
    let mut out: Vec<_> = (0..files.len())
        .filter_map(|f| files.path(f).map(Path::to_path_buf))
        .collect();
    for m in &analysis.modules {
        let Some(dir) = files.path(m.file).and_then(Path::parent) else {
            continue;
        };
        for item in &m.items {
            if let Item::Spline(s) = item {
                if let (Some(ExprKind::Str(f)), "table") =
                    (s.args.first().map(|a| &a.kind), s.method.name.as_str())
                {
                    out.push(dir.join(f));
                }
            }
            // Mesh files of display shapes: a change redraws `fdc view`.
            if let Item::Shape(sh) = item {
                for f in &sh.fields {
                    if let ExprKind::Str(f) = &f.value.kind {
                        out.push(dir.join(f));
                    }
                }
            }
        }
    }
    out.extend(lowered.data_files.iter().cloned());
    out
}

/// Why a build stopped: diagnostics about the model (exit 1), or an internal failure
/// of a later phase with a message.
pub enum BuildError {
    Model {
        analysis: Box<Analysis>,
        extra: Vec<Diagnostic>,
    },
    Backend(String),
    /// The request does not fit the model (e.g. `--set` of an unknown parameter).
    Usage(String),
}

/// For `unwrap` in tests and logs: a model error shows its rendered diagnostics.
impl std::fmt::Debug for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BuildError::Model { analysis, extra } => {
                write!(f, "Model(\n{})", render(analysis, extra))
            }
            BuildError::Backend(m) => write!(f, "Backend({m:?})"),
            BuildError::Usage(m) => write!(f, "Usage({m:?})"),
        }
    }
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

/// Renders the diagnostics of a failed build, like `fdc check` does.
pub fn render(analysis: &Analysis, extra: &[Diagnostic]) -> String {
    let mut s = analysis.render();
    for d in extra {
        s.push_str(&d.render(&analysis.files));
    }
    s
}

/// The checked and lowered model (every role derived), before code generation.
pub struct Front {
    pub analysis: Box<Analysis>,
    pub lowered: fdc_lower::LoweredModel,
    pub parse_check: f64,
    pub lower_diff: f64,
    /// Element types whose roles came from the roles cache ([`front_cached`]): not
    /// differentiated in this build.
    pub roles_cached: usize,
    /// Problems of the roles cache (each rebuilt), for the build's warnings.
    pub cache_warnings: Vec<String>,
}

/// Where a model's text comes from.
#[derive(Clone, Copy, Debug)]
pub enum ModelSource<'a> {
    File(&'a Path),
    /// Text that has no file of its own (an imported `.fds` model): shown as `name`;
    /// relative `table(...)` paths resolve against the directory of `path`.
    Text {
        name: &'a str,
        text: &'a str,
        path: &'a Path,
    },
}

/// The front end's analysis of a model from either source.
/// `overrides` reach the front end too: a parameter that a loop bound reads changes
/// the instances the expansion makes.
/// A build needs only the library items its model uses (`Scope::Used`: the same
/// diagnostics, a fraction of the front end's time on a small model).
fn analyze(src: ModelSource, overrides: &[(String, f64)]) -> Analysis {
    let scope = fdc_frontend::Scope::Used;
    match src {
        ModelSource::File(path) => fdc_frontend::analyze_file_scoped(path, overrides, scope),
        ModelSource::Text { name, text, path } => {
            let mut a = fdc_frontend::analyze_source_scoped(name, text, overrides, scope);
            // `analyze_source` knows no location; give the model's file one, so the
            // lowering finds its tables (the file ids stay the same).
            let mut files = fdc_frontend::SourceFiles::default();
            for id in 0..a.files.len() {
                let own = a.files.name(id) == name && a.files.path(id).is_none();
                let p = if own {
                    Some(path.to_path_buf())
                } else {
                    a.files.path(id).map(Path::to_path_buf)
                };
                files.add(a.files.name(id), a.files.text(id), p);
            }
            a.files = files;
            a
        }
    }
}

/// Check and lower: diagnostics stop here (exit 1), before any code is generated.
pub fn front(path: &Path, overrides: &[(String, f64)]) -> Result<Front, BuildError> {
    front_from(ModelSource::File(path), overrides)
}

/// [`front`] of a model from any source.
pub fn front_from(src: ModelSource, overrides: &[(String, f64)]) -> Result<Front, BuildError> {
    front_cached(src, overrides, None)
}

/// [`front_from`] with the roles cache of `cache` (none when `None` or off): an
/// element type whose definition was differentiated before gets its roles from there
/// (`crate::roles_cache`), the same roles as differentiating it.
pub fn front_cached(
    src: ModelSource,
    overrides: &[(String, f64)],
    cache: Option<&fdc_backend::Options>,
) -> Result<Front, BuildError> {
    let t0 = Instant::now();
    let analysis = analyze(src, overrides);
    let parse_check = ms(t0);
    if analysis.has_errors() {
        return Err(BuildError::Model {
            analysis: Box::new(analysis),
            extra: vec![],
        });
    }
    let t1 = Instant::now();
    let store = cache.and_then(crate::roles_cache::Store::of);
    let dyn_store = store
        .as_ref()
        .map(|s| s as &dyn fdc_lower::stored::RoleStore);
    let lowered =
        fdc_lower::lower_with_store(&analysis, overrides, Some(&analysis.files), dyn_store);
    let (roles_cached, cache_warnings) = store.map(|s| s.take()).unwrap_or_default();
    let lowered = match lowered {
        Ok(l) => l,
        Err(errors) => {
            if let [only] = errors.as_slice() {
                if only.span.is_none() {
                    return Err(BuildError::Usage(only.message.clone()));
                }
            }
            let extra = errors
                .iter()
                .map(fdc_lower::LowerError::to_diagnostic)
                .collect();
            return Err(BuildError::Model {
                analysis: Box::new(analysis),
                extra,
            });
        }
    };
    Ok(Front {
        analysis: Box::new(analysis),
        lowered,
        parse_check,
        lower_diff: ms(t1),
        roles_cached,
        cache_warnings,
    })
}

/// What `fdc check` reports: the front end's diagnostics and, when the front end found
/// no errors, the lowering's (spline tables, parameter values, ...): everything `fdc
/// build` would stop at before code generation. The lowered model itself is dropped.
pub fn check(path: &Path) -> (Analysis, Vec<Diagnostic>) {
    check_from(ModelSource::File(path))
}

/// [`check`] of a model from any source.
pub fn check_from(src: ModelSource) -> (Analysis, Vec<Diagnostic>) {
    let (analysis, extra, _) = check_dofs(src);
    (analysis, extra)
}

/// [`check_from`] plus, for a model that lowers, its degrees of freedom in words
/// ([`crate::report::dof_line`]).
pub fn check_dofs(src: ModelSource) -> (Analysis, Vec<Diagnostic>, Option<String>) {
    let analysis = analyze(src, &[]);
    // Lowering needs a checked model.
    if analysis.has_errors() {
        return (analysis, Vec::new(), None);
    }
    let (errors, dofs) = match fdc_lower::lower_with_files(&analysis, &[], Some(&analysis.files)) {
        Ok(l) => {
            let redundant = crate::dofs::redundant_rows(&l);
            let line = crate::report::dof_line(l.bodies.len(), l.nv, l.nl, redundant);
            (l.warnings, Some(line))
        }
        Err(errors) => (errors, None),
    };
    let extra = errors
        .iter()
        .map(fdc_lower::LowerError::to_diagnostic)
        .collect();
    (analysis, extra, dofs)
}

/// Every role of every element type as one list of functions, named `type::role`
/// ([`type_funcs`] of each type in turn).
pub fn role_funcs(lowered: &fdc_lower::LoweredModel) -> Vec<Func> {
    lowered.types.iter().flat_map(type_funcs).collect()
}

pub fn build(path: &Path, opts: &BuildOptions) -> Result<Built, BuildError> {
    build_from(ModelSource::File(path), opts)
}

/// [`build`] of a model from any source.
pub fn build_from(src: ModelSource, opts: &BuildOptions) -> Result<Built, BuildError> {
    build_front(
        front_cached(src, &opts.overrides, Some(&opts.backend))?,
        opts,
    )
}

/// [`build_from`], tiered: the types that miss the cache are compiled at LLVM level 0
/// first, and at `opts.backend.opt_level` on another thread while the model runs
/// ([`Built::tier`]). Level 0 asked for is one tier.
pub fn build_from_tiered(src: ModelSource, opts: &BuildOptions) -> Result<Built, BuildError> {
    build_front_with(
        front_cached(src, &opts.overrides, Some(&opts.backend))?,
        opts,
        true,
    )
}

/// [`build`] from a model already checked and lowered (the sweep keeps the lowered
/// model of its first parameter set to compare the others against).
pub fn build_front(front: Front, opts: &BuildOptions) -> Result<Built, BuildError> {
    build_front_with(front, opts, false)
}

fn build_front_with(front: Front, opts: &BuildOptions, tiered: bool) -> Result<Built, BuildError> {
    let Front {
        analysis,
        lowered,
        parse_check,
        lower_diff,
        roles_cached,
        cache_warnings,
    } = front;
    let input_paths = input_files(&analysis, &lowered);
    let structure_set: Vec<String> = analysis
        .structural
        .iter()
        .filter(|p| opts.overrides.iter().any(|(o, _)| o == *p))
        .cloned()
        .collect();
    let mut warnings: Vec<String> = analysis
        .diagnostics
        .iter()
        .map(|d| d.render(&analysis.files))
        .chain((lowered.warnings.iter()).map(|w| w.to_diagnostic().render(&analysis.files)))
        .chain(cache_warnings)
        .collect();

    // Differentiation and the IR passes recurse over expressions as deep as inlining
    // made them: on the compile stack, as the front end and the lowering (the per-type
    // worker threads of `compile_roles` get a stack of the same size).
    let compiled = fdc_frontend::stack::with_compile_stack(|| {
        crate::compile::compile_roles(&lowered, opts, tiered, &mut warnings)
    })?;
    let counts = TypeCounts {
        roles_cached,
        ..compiled.counts
    };
    let mut model = runtime_model(&lowered, &compiled.functions, &compiled.owner);
    let tier = if compiled.pending.is_empty() {
        None
    } else {
        let jobs = compiled
            .pending
            .into_iter()
            .map(|(k, pending)| crate::tier::Job {
                type_index: k,
                roles: lowered.types[k].roles.iter().map(|(r, _, _)| *r).collect(),
                pending,
            })
            .collect::<Vec<_>>();
        let threads = crate::compile::jobs(opts, jobs.len());
        let backend = opts.backend.clone();
        let t = crate::tier::start(jobs, lowered.types.len(), compiled.jit, backend, threads)
            .map_err(BuildError::Backend)?;
        model.table.upgrade = fdc_runtime::table::Upgradable::new(t.upgrade().clone());
        Some(t)
    };
    let built = Built {
        model,
        settings: lowered.settings,
        bodies: lowered.bodies,
        element_types: lowered.types.len(),
        timings: BuildTimings {
            parse_check,
            lower_diff,
            simplify: compiled.simplify,
            backend: compiled.timings,
        },
        cache_hit: counts.compiled == 0,
        simplifier_skipped: counts.simplifier_skipped == counts.total(),
        types: counts,
        warnings,
        inputs: input_paths,
        structure_set,
        shapes: lowered.shapes,
        glyphs: lowered.glyphs,
        tier,
    };
    // The analysis and the lowered IR are not needed past here; freeing them (most of
    // the allocations of the build) need not delay the first result.
    fdc_frontend::stack::drop_aside((analysis, lowered.graph, lowered.types, lowered.instances));
    Ok(built)
}

/// The runtime model: the function table of the compiled roles (`functions`, in the
/// order of [`role_funcs`]) and the instances and inputs of the lowered model.
fn runtime_model(
    lowered: &fdc_lower::LoweredModel,
    functions: &[fdc_runtime::table::ElementFn],
    owner: &std::sync::Arc<dyn std::any::Any + Send + Sync>,
) -> Model {
    let mut next = 0;
    let types: Vec<ElementType> = lowered
        .types
        .iter()
        .map(|ty| {
            let t = element_type(&lowered.graph, ty, &functions[next..]);
            next += ty.roles.len();
            t
        })
        .collect();
    let table = FunctionTable {
        abi_version: ABI_VERSION,
        types,
        owner: Some(owner.clone()),
        upgrade: Default::default(),
    };
    let instances = lowered
        .instances
        .iter()
        .map(|i| ElementInstance {
            name: i.name.clone(),
            type_index: i.type_index,
            params: i.params.clone(),
            q_map: i.q_map.clone(),
            v_map: i.v_map.clone(),
            lambda_map: i.lambda_map.clone(),
        })
        .collect();
    let inputs = lowered
        .inputs
        .iter()
        .map(|i| RuntimeInput {
            name: i.name.clone(),
            targets: i.targets.clone(),
        })
        .collect();
    Model {
        table,
        instances,
        nq: lowered.nq,
        nv: lowered.nv,
        nl: lowered.nl,
        inputs,
        roads: lowered.roads.clone(),
    }
}

/// Bump whenever what the driver makes of the unsimplified roles changes for the
/// same simplifier ([`simplify_all`], the driver's dedup, the unit of compilation and
/// the order of the role functions):
/// it enters the key of the cache level before simplification.
const PIPELINE_VERSION: &str = "driver pipeline 4";

/// Roles the e-graph is not run on. Measured (`benches/rules.rs`, docs/performance.md
/// "What the e-graph buys"): the iteration matrices take 70 % of the simplifier's time
/// over the standard library, its rules remove 6 % of their operations, and their
/// level-2 code is not reliably faster for it (LLVM's own CSE and instcombine do most
/// of the same), nor quicker to compile. `ResIter` is not simplified either: it holds
/// `Iter`'s nodes unchanged, so that it can serve `Iter` (`compile.rs` `dedup`: the
/// matrix is compiled once) — its residual part then differs from the simplified `Res`
/// only in operations, not in values (every rule is IEEE-exact). The other roles keep it.
pub const NOT_SIMPLIFIED: &[Role] = &[Role::Iter, Role::IterNoqv, Role::ResIter];

/// Whether the role function `name` (`type::role`, [`type_funcs`]) is simplified.
fn simplified_role(name: &str) -> bool {
    let role = crate::compile::role_of(name);
    !NOT_SIMPLIFIED.iter().any(|r| r.name() == role)
}

/// Names the transformation from the unsimplified role functions to the compiled
/// ones, for the cache level keyed before simplification: everything that may change
/// the simplified code must be in it (the backend's [`fdc_backend::Identity`] is the
/// one place that combines the versions).
pub fn recipe(simplify: bool) -> String {
    fdc_backend::Identity::current(PIPELINE_VERSION).recipe(simplify)
}

/// [`recipe`] with a given simplifier identity (tests vary it).
pub fn recipe_with(simplify: bool, simplifier: &str) -> String {
    let identity = fdc_backend::Identity {
        simplifier: simplifier.to_string(),
        ..fdc_backend::Identity::current(PIPELINE_VERSION)
    };
    identity.recipe(simplify)
}

/// Simplifies each function on its own (the e-graph is bounded per function) and
/// gathers the results into one graph again; one report per function. The roles of
/// [`NOT_SIMPLIFIED`] are gathered as they are (their report says so).
pub fn simplify_all(
    graph: &Graph,
    funcs: Vec<Func>,
) -> (Graph, Vec<Func>, Vec<fdc_ir::simplify::Report>) {
    let limits = fdc_ir::simplify::Limits::default();
    let mut out = Graph::new();
    let mut result: Vec<Func> = Vec::with_capacity(funcs.len());
    let mut reports: Vec<fdc_ir::simplify::Report> = Vec::with_capacity(funcs.len());
    // Roles with the same output nodes (a connector's iter_noqv is its iter) are
    // simplified once.
    let mut done: std::collections::HashMap<Vec<fdc_ir::Id>, usize> = Default::default();
    for f in funcs {
        if let Some(&k) = done.get(&f.outputs) {
            let outputs = result[k].outputs.clone();
            let report = reports[k].clone();
            result.push(Func {
                name: f.name,
                inputs: f.inputs,
                outputs,
            });
            reports.push(report);
            continue;
        }
        let s = if simplified_role(&f.name) {
            fdc_ir::simplify::simplify(graph, &f.outputs, &limits)
        } else {
            fdc_ir::simplify::skipped(graph, &f.outputs, "not run on this role")
        };
        let outputs = s.graph.extract(&s.outputs, &mut out);
        done.insert(f.outputs.clone(), result.len());
        result.push(Func {
            name: f.name,
            inputs: f.inputs,
            outputs,
        });
        reports.push(s.report);
    }
    (out, result, reports)
}

fn element_type(
    graph: &Graph,
    ty: &ElementFunctions,
    fns: &[fdc_runtime::table::ElementFn],
) -> ElementType {
    let mut roles: [Option<RoleFn>; Role::ALL.len()] = Default::default();
    for ((role, f, blocks), &func) in ty.roles.iter().zip(fns) {
        roles[*role as usize] = Some(RoleFn {
            func,
            blocks: blocks.clone(),
            ops: fdc_ir::stats::op_count(graph, &f.outputs),
            reads: fdc_ir::stats::reads(graph, &f.outputs),
        });
    }
    ElementType {
        name: ty.name.clone(),
        nq: ty.nq,
        nv: ty.nv,
        nl: ty.nl,
        np: ty.np,
        owns_coordinates: ty.owns_coordinates,
        outputs: ty.outputs.clone(),
        multipliers: ty.multipliers.clone(),
        state_params: ty.state_params.clone(),
        roles,
    }
}
