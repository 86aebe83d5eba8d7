//! Lowering of a checked fd model to element types (IR, via the differentiation
//! crate's [`ElementBuilder`]) and element instances (parameters and index maps).
//!
//! Knows: the AST and diagnostic type of the front end, the IR, the element builder of
//! `fdc-diff`, and the file system only for spline `table(...)` files and tyre
//! property files (`tir(...)`, [`tir`]) and OpenCRG road files (`crg(...)`, [`road`]).
//! What happens here: model parameters are evaluated to numbers; every instance is
//! flattened (a preset's primitives are inlined into the preset's own element, with
//! multipliers `<primitive>.lambda`; other nested instances become `<parent>.<name>`);
//! every element type is lowered once per pattern of connections (ground, a rigid body,
//! an Euler-parameter body); values that belong to an instance
//! (`initial(e)`, `at_time(e, T)`, `b.local(x)`, parameter defaults, the start values of
//! element `state`, fields of nested instances) become
//! parameter slots computed numerically at build time from the initial configuration.
//! So a changed number never changes the IR: `--set` never recompiles (except model
//! parameters in a time-dependent field or a one-off element, which are compiled in).
//! Spline declarations become IR spline tables at build time ([`spline`]: the Akima
//! and zero-clamped slopes, reading `table(...)` files relative to the model file); a
//! call `NAME(x)` is an `Op::Spline` node. Spline data are part of the IR (a changed
//! table is a changed model).
//! A vector-space element (`coordinates x: T`) becomes two runtime elements: a generated
//! owner `coordinates[n]` (instance `<name>.coordinates`: initial values, update q + Δ)
//! and the element's equations, which act on those coordinates and on its bodies like
//! a connector; `kinetic`/`potential` go to the builder's Lagrange equations.
//!
//! **Architecture invariant:** must not know LLVM or the runtime. It runs only on a
//! model the front end has checked; anything it still cannot lower is a [`LowerError`]
//! with a span, never a panic.

mod eval;
mod expr;
mod globals;
pub mod spline;
mod value;

mod instances;
pub mod mesh;
mod model;
mod params;
mod plausible;
pub mod road;
mod run_settings;
pub mod shapes;
mod spline_decls;
mod statements;
mod stmt_decls;
pub mod stored;
pub mod tir;
mod types;

use statements::*;

use eval::{eval_nodes, Cones, LocalQ, Time};
pub use expr::MAX_CALL_DEPTH;
use expr::{Hidden, Lowerer, Target};
use fdc_diff::{BodyKind, Coordinates, ElementBuilder, ElementFunctions, Role};
use fdc_frontend::ast::{Expr, ExprKind, Field, Item, Kind, ShapeDecl, Span, SplineDecl, StmtKind};
use fdc_frontend::{Analysis, Decl, Definition, Model, Resolution, SourceFiles, TypeInfo};
use fdc_ir::{Graph, Id};
use globals::Globals;
use std::collections::HashMap;
use value::{BodyRef, Val};

/// Something the lowering could not turn into element functions.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LowerError {
    pub span: Option<Span>,
    pub message: String,
    /// The diagnostic code; `None` is the generic `E0900` (cannot lower).
    pub code: Option<&'static str>,
    /// The label at the span; `None`: a generic one.
    pub label: Option<String>,
    /// What to do about it.
    pub hint: Option<String>,
    /// A warning (the model still lowers), not an error.
    pub warning: bool,
}

/// The codes of the errors found while lowering (besides the generic `E0900`), with a
/// one-line title each; `docs/errors.md` documents them (a test keeps them in step).
pub const CODES: &[(&str, &str)] = &[
    ("E0910", "spline table file cannot be read"),
    ("E0911", "spline data is not a finite number"),
    ("E0912", "spline table column out of range"),
    ("E0913", "spline table has fewer than 2 points"),
    ("E0914", "spline x values not increasing"),
    ("E0915", "tyre property file cannot be read"),
    ("E0916", "tyre property coefficient missing"),
    ("E0917", "tyre property coefficient malformed"),
    ("E0918", "road file cannot be read"),
    ("E0919", "road file is not a usable OpenCRG road"),
    (run_settings::E_SETTING, "simulate setting the run refuses"),
    ("E0921", "tyre `road` is not a road named by `crg(...)`"),
    (
        statements::E_TIMED_READS,
        "time-dependent nested field reads a body or a moving value",
    ),
    (plausible::E_MASS, "body mass not positive"),
    (plausible::E_INERTIA, "principal inertias not physical"),
    (plausible::E_SELF_JOINT, "joint connects a body to itself"),
    (
        plausible::E_NOT_FINITE,
        "parameter not finite (zero-length axis)",
    ),
    (plausible::W_ZERO_INERTIA, "zero principal inertia"),
    (shapes::E_SHAPE, "display shape value out of range"),
    (shapes::E_MESH_READ, "mesh file cannot be read"),
    (shapes::E_MESH_FORMAT, "mesh file malformed"),
    (plausible::W_FREE_BODY, "body with no path to the ground"),
];

impl LowerError {
    /// The error as a front-end diagnostic, so that `fdc check`, `fdc build` and the
    /// language server show it alike. One without a span has no place in a file.
    pub fn to_diagnostic(&self) -> fdc_frontend::Diagnostic {
        let code = self.code.unwrap_or("E0900");
        let mut d = if self.warning {
            fdc_frontend::Diagnostic::warning(code, &self.message)
        } else {
            fdc_frontend::Diagnostic::error(code, &self.message)
        };
        if let Some(s) = self.span {
            d = d.at(s, self.label.as_deref().unwrap_or("while lowering this"));
        }
        match &self.hint {
            Some(h) => d.note(h),
            None => d,
        }
    }
}

impl std::fmt::Display for LowerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// One element instance of the runtime: its type, parameters and global index maps.
#[derive(Clone, Debug, PartialEq)]
pub struct Instance {
    pub name: String,
    pub type_index: usize,
    pub params: Vec<f64>,
    pub q_map: Vec<usize>,
    pub v_map: Vec<usize>,
    pub lambda_map: Vec<usize>,
}

/// A runtime input: a name and the instance parameters it drives.
#[derive(Clone, Debug, PartialEq)]
pub struct Input {
    pub name: String,
    pub default: f64,
    pub targets: Vec<(usize, usize)>,
}

/// `newton = ...` of the simulate block.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum NewtonSetting {
    Velocity(f64),
    Legacy,
    Fixed(usize),
}

/// The `simulate { ... }` block; `None` where the model does not say.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Settings {
    pub end: Option<f64>,
    pub step: Option<f64>,
    pub output_every: Option<f64>,
    /// `true`: land on output times instead of interpolating rows.
    pub output_exact: Option<bool>,
    pub alpha: Option<f64>,
    /// Generalized-α by ρ∞ (instead of `alpha`).
    pub rho_inf: Option<f64>,
    /// `arnold_bruls` or `negrut`.
    pub form: Option<String>,
    pub newton: Option<NewtonSetting>,
    pub adaptive: Option<f64>,
    /// Absolute tolerance of the error weights.
    pub atol: Option<f64>,
    pub step_min: Option<f64>,
    pub step_max: Option<f64>,
    /// `sparse` or `dense`.
    pub linear_solver: Option<String>,
    /// `assemble = true | false`.
    pub assemble: Option<bool>,
    /// `given = [a, b]`: body instances the assembly keeps where they start.
    pub given: Vec<String>,
    /// Where each key's value is written (the last one counts): the place of a
    /// setting the runtime refuses (`run_settings.rs`).
    pub spans: Vec<(String, Span)>,
}

/// A model ready for code generation and the runtime.
pub struct LoweredModel {
    pub graph: Graph,
    pub types: Vec<ElementFunctions>,
    /// Per type: the key of its definition in the roles cache, when lowered with a
    /// store ([`lower_with_store`]); the driver keys its object cache by it.
    pub definition_keys: Vec<Option<stored::DefinitionKey>>,
    pub instances: Vec<Instance>,
    pub nq: usize,
    pub nv: usize,
    pub nl: usize,
    pub bodies: Vec<String>,
    pub inputs: Vec<Input>,
    pub settings: Settings,
    /// Model parameters with their values (after `--set`).
    pub params: Vec<(String, Vec<f64>)>,
    /// Warnings of the plausibility checks (`plausible`): the model is still valid.
    pub warnings: Vec<LowerError>,
    /// Data roads (`crg(...)`) and the tyres on them, for the runtime.
    pub roads: fdc_runtime::Roads,
    /// The data files the lowering read besides spline tables: tyre property files
    /// (`tir(...)`) and road files (`crg(...)`), sorted, each once. They are inputs of
    /// the model like its source files (the driver's `input_files`).
    pub data_files: Vec<std::path::PathBuf>,
    /// Display shapes for `fdc view`: beside the model, never part of its code.
    pub shapes: Vec<shapes::Shape>,
    /// Display glyphs of joints and forces for `fdc view`, beside the model too.
    pub glyphs: Vec<shapes::Glyph>,
}

/// A parameter slot of an element type.
#[derive(Clone, Debug)]
struct ParamSlot {
    name: String,
    offset: usize,
    size: usize,
    default: Option<Vec<Id>>,
    span: Span,
}

/// A nested instance inside an element type (a preset's primitive).
struct Sub {
    name: String,
    ty: String,
    conns: Vec<BodyRef>,
    fields: Vec<(String, Vec<Id>, Span)>,
    /// Fields that depend on `t` (a driver's schedule inside a preset): their names and
    /// the values of the enclosing type they read (see [`Timed`]).
    timed: Vec<(String, Vec<(String, Val)>)>,
}

/// A field that depends on `t`: no number but part of the instance's equations, so the
/// instance gets an element type of its own. `captures` are the names of an enclosing
/// element type that the expression reads (a nested driver's `value = w*t` reads the
/// preset's `w`): each becomes a parameter slot `FIELD@NAME` of the new type, filled per
/// instance, so all instances of the preset share that type's code.
pub(crate) struct Timed<'a> {
    pub(crate) field: String,
    pub(crate) expr: &'a Expr,
    pub(crate) captures: Vec<(String, Val)>,
}

/// The time-dependent fields of one instance and whose type they make: `TYPE@owner`.
pub(crate) struct TimedFields<'a> {
    pub(crate) list: Vec<Timed<'a>>,
    /// The nested instance's path in its enclosing type (`motor.spin`), shared by all
    /// instances of that type; `None`: the instance's own name (a top-level instance).
    pub(crate) owner: Option<String>,
}

/// An element type lowered for one pattern of connections.
struct LoweredType {
    fn_index: Option<usize>,
    n_params: usize,
    slots: Vec<ParamSlot>,
    hidden: Vec<Hidden>,
    subs: Vec<Sub>,
    /// Vector-space coordinates of the type (0 for none).
    n_own: usize,
    /// Parameter slots holding the initial values of those coordinates, in order.
    own_init: Vec<usize>,
    /// Parameter slots holding their initial rates, in order.
    own_rate: Vec<usize>,
}

/// The key of a lowered element type: its name and, per connection, ground (`None`)
/// or the kind of the body connected there.
type TypeKey = (String, Vec<Option<BodyKind>>);

struct Body {
    kind: BodyKind,
    q0: Vec<f64>,
    v0: Vec<f64>,
    q_offset: usize,
    v_offset: usize,
    /// The type's `param mass` and `param inertia` (`plausible`), if it has them.
    mass: Option<f64>,
    inertia: Option<[f64; 3]>,
    name: String,
    span: Span,
}

impl Body {
    fn nv(&self) -> usize {
        self.kind.sizes().1
    }

    fn nq(&self) -> usize {
        self.kind.sizes().0
    }
}

/// The body kind a body type declares with its coordinate group (`None`: not a body
/// type).
fn body_kind(def: &TypeInfo) -> Option<BodyKind> {
    def.body.iter().find_map(|s| match &s.kind {
        StmtKind::CoordinatesGroup { group, .. } if group.name == "euler" => Some(BodyKind::Euler),
        StmtKind::CoordinatesGroup { group, .. } if group.name == "point" => Some(BodyKind::Point),
        StmtKind::CoordinatesGroup { .. } => Some(BodyKind::Rigid),
        _ => None,
    })
}

/// The number of vector-space coordinates a type declares (`coordinates x: T, ...;`).
fn own_coordinates(def: &TypeInfo) -> usize {
    def.body
        .iter()
        .filter_map(|s| match &s.kind {
            StmtKind::Coordinates(cs) => Some(
                cs.iter()
                    .map(|c| size_of_type(&c.ty.name).unwrap_or(0))
                    .sum::<usize>(),
            ),
            _ => None,
        })
        .sum()
}

fn size_of_type(name: &str) -> Option<usize> {
    Some(match name {
        "scalar" => 1,
        "vec3" => 3,
        "quat" => 4,
        "mat3" => 9,
        _ => return None,
    })
}

struct Lowering<'a> {
    globals: Globals<'a>,
    cache: HashMap<TypeKey, LoweredType>,
    graph: Graph,
    /// What evaluations of `graph`'s nodes at build time need ([`Lowering::eval`]).
    cones: Cones,
    types: Vec<ElementFunctions>,
    definition_keys: Vec<Option<stored::DefinitionKey>>,
    /// Where derived roles are kept between builds (`stored`).
    store: Option<&'a dyn stored::RoleStore>,
    instances: Vec<Instance>,
    bodies: Vec<Body>,
    /// Per top-level instance (`Model::instances`): its body, if it is one.
    body_of: Vec<Option<usize>>,
    nq: usize,
    nv: usize,
    nl: usize,
    errors: Vec<LowerError>,
    /// Per input of the model (`Model::inputs`): its runtime input, once it has a value.
    input_index: Vec<Option<usize>>,
    inputs: Vec<Input>,
    /// The owner type of n vector-space coordinates, per n.
    owner_types: HashMap<usize, usize>,
    /// The connections of every top-level element instance (ground `None`).
    links: Vec<Vec<Option<usize>>>,
    /// Tyres on data roads (`road.rs`).
    road_contacts: Vec<fdc_runtime::RoadContact>,
    /// Display glyphs of joints and forces (`shapes::Glyph`).
    glyphs: Vec<shapes::Glyph>,
}

/// Lowers a model the front end has checked without errors: its modules (stdlib
/// modules included), its resolved model and the declaration of every name use.
/// `overrides` replace model parameter values (`--set`). Without the source files,
/// `table(...)` splines cannot be read (their path is relative to the model file):
/// see [`lower_with_files`].
pub fn lower(
    analysis: &Analysis,
    overrides: &[(String, f64)],
) -> Result<LoweredModel, Vec<LowerError>> {
    lower_with_files(analysis, overrides, None)
}

/// [`lower`], with the source files: where each module was read from.
pub fn lower_with_files<'a>(
    analysis: &'a Analysis,
    overrides: &[(String, f64)],
    files: Option<&'a SourceFiles>,
) -> Result<LoweredModel, Vec<LowerError>> {
    lower_with_store(analysis, overrides, files, None)
}

/// [`lower_with_files`], asking `store` for the roles of every element type before
/// differentiating it (a hit skips the differentiation, [`stored`]).
pub fn lower_with_store<'a>(
    analysis: &'a Analysis,
    overrides: &[(String, f64)],
    files: Option<&'a SourceFiles>,
    store: Option<&'a dyn stored::RoleStore>,
) -> Result<LoweredModel, Vec<LowerError>> {
    // Lowering recurses over expressions and into inlined functions.
    fdc_frontend::stack::with_compile_stack(|| lower_here(analysis, overrides, files, store))
}

fn lower_here<'a>(
    analysis: &'a Analysis,
    overrides: &[(String, f64)],
    files: Option<&'a SourceFiles>,
    store: Option<&'a dyn stored::RoleStore>,
) -> Result<LoweredModel, Vec<LowerError>> {
    let model = &analysis.model;
    let items: Vec<&Item> = (analysis.modules.iter())
        .flat_map(|m| m.items.iter())
        .collect();
    if let Some(e) = unknown_override(model, overrides) {
        return Err(vec![e]);
    }
    let mut l = Lowering::new(model, &analysis.resolution, files);
    l.store = store;
    let params = l.model_params(overrides, files);
    // The checker has typed gravity a vec3.
    if let Some(&[x, y, z]) = model.gravity.as_ref().and_then(|g| l.numeric(g)).as_deref() {
        l.globals.gravity = [x, y, z];
    }
    // Bodies first: every connector needs their initial configuration. The checker
    // lists the instances as the items come (`Model::instances`).
    let instances = items.iter().filter_map(|item| match item {
        Item::Instance(inst) => Some(inst),
        _ => None,
    });
    for (k, inst) in instances.enumerate() {
        if inst.kind == Kind::Body {
            l.body_instance(k, inst);
        }
    }
    for item in &items {
        if let Item::Instance(inst) = item {
            if inst.kind != Kind::Body {
                l.top_instance(inst);
            }
        }
    }
    for item in &items {
        if let Item::Output {
            name, value, span, ..
        } = item
        {
            l.model_output(&name.name, value, *span);
        }
    }
    let shapes = (items.iter())
        .filter_map(|i| match i {
            Item::Shape(sh) => l.shape(sh),
            _ => None,
        })
        .collect();
    let settings = l.settings(&items);
    l.check_settings(&settings, &items);
    let mut lowered = l.finish(settings, params)?;
    lowered.shapes = shapes;
    Ok(lowered)
}

/// The first `--set NAME=...` that names no parameter or input of the model.
fn unknown_override(model: &Model, overrides: &[(String, f64)]) -> Option<LowerError> {
    let name = overrides
        .iter()
        .map(|(n, _)| n)
        .find(|name| !(model.params.iter().chain(&model.inputs)).any(|p| &p.name.name == *name))?;
    Some(LowerError {
        span: None,
        message: format!("`--set {name}=...`: the model has no parameter `{name}`"),
        ..Default::default()
    })
}

impl<'a> Lowering<'a> {
    /// An empty lowering of the checked `model`.
    fn new(
        model: &'a Model,
        resolution: &'a Resolution,
        files: Option<&'a SourceFiles>,
    ) -> Lowering<'a> {
        Lowering {
            globals: Globals::new(model, resolution, files),
            cache: HashMap::new(),
            graph: Graph::new(),
            cones: Cones::default(),
            types: Vec::new(),
            definition_keys: Vec::new(),
            store: None,
            instances: Vec::new(),
            bodies: Vec::new(),
            body_of: vec![None; model.instances.len()],
            nq: 0,
            nv: 0,
            nl: 0,
            errors: Vec::new(),
            input_index: vec![None; model.inputs.len()],
            inputs: Vec::new(),
            owner_types: HashMap::new(),
            links: Vec::new(),
            road_contacts: Vec::new(),
            glyphs: Vec::new(),
        }
    }

    /// Model parameters, inputs and splines, in order (later ones may use earlier ones):
    /// their values, `--set` overrides applied.
    fn model_params(
        &mut self,
        overrides: &[(String, f64)],
        files: Option<&'a SourceFiles>,
    ) -> Vec<(String, Vec<f64>)> {
        // Each after the ones it uses (top-level names may be used before their
        // definition): the checker's order.
        let model = self.globals.model;
        let mut params = Vec::new();
        for &def in &model.definitions {
            let (p, is_input, i) = match def {
                Definition::Param(i) => (&model.params[i], false, i),
                Definition::Input(i) => (&model.inputs[i], true, i),
                Definition::Spline(i) => {
                    self.spline_decl(&model.splines[i], files);
                    continue;
                }
            };
            let value = match overrides.iter().rev().find(|(n, _)| *n == p.name.name) {
                Some((_, v)) => Some(vec![*v]),
                None => match &p.default {
                    Some(e) => self.numeric(e),
                    None => {
                        self.err(p.span, format!("parameter `{}` has no value", p.name.name));
                        None
                    }
                },
            };
            if let Some(v) = value {
                params.push((p.name.name.clone(), v.clone()));
                if is_input {
                    // The checker has typed every input a scalar.
                    self.input_index[i] = Some(self.inputs.len());
                    self.inputs.push(Input {
                        name: p.name.name.clone(),
                        default: v[0],
                        targets: Vec::new(),
                    });
                    self.globals.inputs[i] = Some(v);
                } else {
                    self.globals.params[i] = Some(v);
                }
            }
        }
        params
    }

    /// The lowered model, or every error (warnings ride along with a success).
    fn finish(
        mut self,
        settings: Settings,
        params: Vec<(String, Vec<f64>)>,
    ) -> Result<LoweredModel, Vec<LowerError>> {
        let links = std::mem::take(&mut self.links);
        let spans: Vec<Span> = self.bodies.iter().map(|b| b.span).collect();
        self.free_bodies(&links, &spans);
        if self.errors.iter().any(|e| !e.warning) {
            return Err(self.errors);
        }
        let warnings = std::mem::take(&mut self.errors);
        let roads = self.roads();
        let data_files = self.data_files();
        let (nq, nv) = (self.nq, self.nv);
        Ok(LoweredModel {
            graph: self.graph,
            types: self.types,
            definition_keys: self.definition_keys,
            instances: self.instances,
            nq,
            nv,
            nl: self.nl,
            bodies: self.bodies.into_iter().map(|b| b.name).collect(),
            inputs: self.inputs,
            settings,
            params,
            warnings,
            roads,
            data_files,
            shapes: Vec::new(),
            glyphs: self.glyphs,
        })
    }
}

impl<'a> Lowering<'a> {
    /// Something the checker refuses, met anyway (lowering runs only on checked
    /// models): one generic error instead of a second wording of the checker's.
    fn unchecked(&mut self, span: Span, what: &str) {
        self.err(span, format!("{what}: not a model the checker accepted"));
    }

    fn err(&mut self, span: Span, message: impl Into<String>) {
        self.errors.push(LowerError {
            span: Some(span),
            message: message.into(),
            ..Default::default()
        });
    }
}
