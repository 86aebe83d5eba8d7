//! Lowering of a checked fd model to element types (IR, via the differentiation
//! crate's [`ElementBuilder`]) and element instances (parameters and index maps).
//!
//! Knows: the AST and diagnostic type of the front end, the IR, the element builder of
//! `fdc-diff`, and the file system only for spline `table(...)` files.
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
pub mod spline;
mod value;

use eval::{eval_nodes, Time};
use expr::{Globals, Hidden, Lowerer, Target};
use fdc_diff::{BodyKind, Coordinates, ElementBuilder, ElementFunctions, Role};
use fdc_frontend::ast::{
    Expr, ExprKind, Field, Item, Kind, Module, Span, SplineDecl, StmtKind, TypeDef,
};
use fdc_frontend::SourceFiles;
use fdc_ir::{Graph, Id};
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
}

/// The codes of the errors found while lowering (besides the generic `E0900`), with a
/// one-line title each; `docs/errors.md` documents them (a test keeps them in step).
pub const CODES: &[(&str, &str)] = &[
    ("E0910", "spline table file cannot be read"),
    ("E0911", "spline data is not a finite number"),
    ("E0912", "spline table column out of range"),
    ("E0913", "spline table has fewer than 2 points"),
    ("E0914", "spline x values not increasing"),
];

impl LowerError {
    /// The error as a front-end diagnostic, so that `fdc check`, `fdc build` and the
    /// language server show it alike. One without a span has no place in a file.
    pub fn to_diagnostic(&self) -> fdc_frontend::Diagnostic {
        let mut d = fdc_frontend::Diagnostic::error(self.code.unwrap_or("E0900"), &self.message);
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
    pub alpha: Option<f64>,
    /// `arnold_bruls` or `negrut`.
    pub form: Option<String>,
    pub newton: Option<NewtonSetting>,
    pub adaptive: Option<f64>,
    pub step_min: Option<f64>,
    pub step_max: Option<f64>,
    /// `sparse` or `dense`.
    pub linear_solver: Option<String>,
}

/// A model ready for code generation and the runtime.
pub struct LoweredModel {
    pub graph: Graph,
    pub types: Vec<ElementFunctions>,
    pub instances: Vec<Instance>,
    pub nq: usize,
    pub nv: usize,
    pub nl: usize,
    pub bodies: Vec<String>,
    pub inputs: Vec<Input>,
    pub settings: Settings,
    /// Model parameters with their values (after `--set`).
    pub params: Vec<(String, Vec<f64>)>,
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
}

impl Body {
    fn nv(&self) -> usize {
        match self.kind {
            BodyKind::Rigid => 6,
            BodyKind::Euler => 7,
        }
    }
}

/// The body kind a body type declares with its coordinate group (`None`: not a body
/// type).
fn body_kind(def: &TypeDef) -> Option<BodyKind> {
    def.body.iter().find_map(|s| match &s.kind {
        StmtKind::CoordinatesGroup { group, .. } if group.name == "euler" => Some(BodyKind::Euler),
        StmtKind::CoordinatesGroup { .. } => Some(BodyKind::Rigid),
        _ => None,
    })
}

/// The number of vector-space coordinates a type declares (`coordinates x: T, ...;`).
fn own_coordinates(def: &TypeDef) -> usize {
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
    typedefs: HashMap<String, &'a TypeDef>,
    cache: HashMap<TypeKey, LoweredType>,
    graph: Graph,
    types: Vec<ElementFunctions>,
    instances: Vec<Instance>,
    bodies: Vec<Body>,
    body_names: HashMap<String, usize>,
    nq: usize,
    nv: usize,
    nl: usize,
    errors: Vec<LowerError>,
    input_names: HashMap<String, usize>,
    inputs: Vec<Input>,
    /// The owner type of n vector-space coordinates, per n.
    owner_types: HashMap<usize, usize>,
}

/// Lowers the checked modules of a model (as the front end returns them; stdlib
/// modules included). `overrides` replace model parameter values (`--set`). Without the
/// source files, `table(...)` splines cannot be read (their path is relative to the
/// model file): see [`lower_with_files`].
pub fn lower(
    modules: &[Module],
    overrides: &[(String, f64)],
) -> Result<LoweredModel, Vec<LowerError>> {
    lower_with_files(modules, overrides, None)
}

/// [`lower`], with the source files of the analysis: where each module was read from.
pub fn lower_with_files(
    modules: &[Module],
    overrides: &[(String, f64)],
    files: Option<&SourceFiles>,
) -> Result<LoweredModel, Vec<LowerError>> {
    let items: Vec<&Item> = modules.iter().flat_map(|m| m.items.iter()).collect();
    let mut l = Lowering {
        globals: Globals {
            gravity: [0.0, 0.0, 0.0],
            ..Globals::default()
        },
        typedefs: HashMap::new(),
        cache: HashMap::new(),
        graph: Graph::new(),
        types: Vec::new(),
        instances: Vec::new(),
        bodies: Vec::new(),
        body_names: HashMap::new(),
        nq: 0,
        nv: 0,
        nl: 0,
        errors: Vec::new(),
        input_names: HashMap::new(),
        inputs: Vec::new(),
        owner_types: HashMap::new(),
    };
    for item in &items {
        match item {
            Item::Fn(f) => {
                l.globals.fns.insert(f.name.name.clone(), f);
            }
            Item::TypeDef(t) => {
                l.typedefs.insert(t.name.name.clone(), t);
            }
            _ => {}
        }
    }
    let mut unused: Vec<&String> = Vec::new();
    for (name, _) in overrides {
        let known = items
            .iter()
            .any(|i| matches!(i, Item::Param(p) | Item::Input(p) if &p.name.name == name));
        if !known {
            unused.push(name);
        }
    }
    if let Some(name) = unused.first() {
        return Err(vec![LowerError {
            span: None,
            message: format!("`--set {name}=...`: the model has no parameter `{name}`"),
            ..Default::default()
        }]);
    }
    // Model parameters, inputs and splines, in order; later ones may use earlier ones.
    let mut params = Vec::new();
    for item in &items {
        let (p, is_input) = match item {
            Item::Param(p) => (p, false),
            Item::Input(p) => (p, true),
            Item::Spline(decl) => {
                l.spline_decl(decl, files);
                continue;
            }
            _ => continue,
        };
        let value = match overrides.iter().rev().find(|(n, _)| *n == p.name.name) {
            Some((_, v)) => Some(vec![*v]),
            None => match &p.default {
                Some(e) => l.numeric(e),
                None => {
                    l.err(p.span, format!("parameter `{}` has no value", p.name.name));
                    None
                }
            },
        };
        if let Some(v) = value {
            if is_input {
                if v.len() != 1 {
                    l.err(p.span, "an input is a scalar");
                    continue;
                }
                l.input_names.insert(p.name.name.clone(), l.inputs.len());
                l.inputs.push(Input {
                    name: p.name.name.clone(),
                    default: v[0],
                    targets: Vec::new(),
                });
            }
            params.push((p.name.name.clone(), v.clone()));
            l.globals.params.insert(p.name.name.clone(), v);
        }
    }
    for item in &items {
        if let Item::Gravity { value, span } = item {
            match l.numeric(value).as_deref() {
                Some([x, y, z]) => l.globals.gravity = [*x, *y, *z],
                Some(_) => l.err(*span, "gravity is a vec3"),
                None => {}
            }
        }
    }
    // Bodies first: every connector needs their initial configuration.
    for item in &items {
        if let Item::Instance(inst) = item {
            if inst.kind == Kind::Body {
                l.body_instance(inst);
            }
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
        if let Item::Output { name, value, span } = item {
            l.model_output(&name.name, value, *span);
        }
    }
    let settings = l.settings(&items);
    if !l.errors.is_empty() {
        return Err(l.errors);
    }
    let (nq, nv) = (l.nq, l.nv);
    let mut body_names: Vec<(String, usize)> = l.body_names.into_iter().collect();
    body_names.sort_by_key(|b| b.1);
    Ok(LoweredModel {
        graph: l.graph,
        types: l.types,
        instances: l.instances,
        nq,
        nv,
        nl: l.nl,
        bodies: body_names.into_iter().map(|b| b.0).collect(),
        inputs: l.inputs,
        settings,
        params,
    })
}

impl<'a> Lowering<'a> {
    fn err(&mut self, span: Span, message: impl Into<String>) {
        self.errors.push(LowerError {
            span: Some(span),
            message: message.into(),
            ..Default::default()
        });
    }

    /// Computes the table of a spline declaration into the globals (or reports why not).
    fn spline_decl(&mut self, decl: &SplineDecl, files: Option<&SourceFiles>) {
        let method = decl.method.name.as_str();
        let table = match method {
            "akima" | "zcc" => self.inline_spline(decl, method),
            "table" => self.file_spline(decl, files),
            _ => None, // reported by the checker
        };
        match table {
            Some(t) => {
                self.globals.splines.insert(decl.name.name.clone(), t);
            }
            None => {
                self.globals.broken_splines.insert(decl.name.name.clone());
            }
        }
    }

    fn spline_error(
        &mut self,
        code: &'static str,
        span: Span,
        msg: String,
        label: &str,
        hint: &str,
    ) {
        self.errors.push(LowerError {
            span: Some(span),
            message: msg,
            code: Some(code),
            label: Some(label.to_string()),
            hint: Some(hint.to_string()),
        });
    }

    /// `akima([x...], [y...])` / `zcc(...)`: the list items evaluated as numbers.
    fn inline_spline(&mut self, decl: &SplineDecl, method: &str) -> Option<fdc_ir::SplineTable> {
        let mut cols: Vec<(Vec<f64>, Vec<Span>)> = Vec::new();
        for a in decl.args.iter().take(2) {
            let ExprKind::List(items) = &a.kind else {
                return None; // reported by the checker
            };
            let mut vals = Vec::new();
            for it in items {
                match self.numeric(it).as_deref() {
                    Some([v]) => vals.push(*v),
                    Some(_) => {
                        self.err(it.span, "spline data are scalars");
                        return None;
                    }
                    None => return None,
                }
            }
            cols.push((vals, items.iter().map(|i| i.span).collect()));
        }
        let [(xs, xspans), (ys, yspans)] = &cols[..] else {
            return None;
        };
        let name = &decl.name.name;
        match spline::table(method, xs, ys) {
            Ok(t) => Some(t),
            Err(e) => {
                let (code, span, msg, label, hint) = match e {
                    spline::DataError::NotIncreasing(i) => (
                        "E0914",
                        xspans[i],
                        format!(
                            "the x values of spline `{name}` do not increase: x[{i}] = {} after {}",
                            xs[i],
                            xs[i - 1]
                        ),
                        "not greater than the x before it",
                        "the x values of a spline must be strictly increasing",
                    ),
                    spline::DataError::NotFinite(i) => (
                        "E0911",
                        if xs[i].is_finite() {
                            yspans[i]
                        } else {
                            xspans[i]
                        },
                        format!("point {i} of spline `{name}` is not a finite number"),
                        "not finite",
                        "spline data must be finite numbers",
                    ),
                    spline::DataError::TooFew(n) => (
                        "E0913",
                        decl.span,
                        format!("spline `{name}` has {n} point(s)"),
                        "too few points",
                        "a spline needs at least 2 points",
                    ),
                    spline::DataError::Other(m) => (
                        "E0914",
                        decl.span,
                        m,
                        "invalid spline",
                        "x values this close cannot carry a cubic piece; spread them out",
                    ),
                };
                self.spline_error(code, span, msg, label, hint);
                None
            }
        }
    }

    /// `table("file", xcol, ycol [, header_lines])`: the points read from the file.
    fn file_spline(
        &mut self,
        decl: &SplineDecl,
        files: Option<&SourceFiles>,
    ) -> Option<fdc_ir::SplineTable> {
        let args = &decl.args;
        let ExprKind::Str(file) = &args.first()?.kind else {
            return None; // reported by the checker
        };
        // The call `table(...)`: from the method name to the last argument.
        let call = Span::new(
            decl.method.span.file,
            decl.method.span.start as usize,
            args.last().map_or(decl.span.end, |a| a.span.end) as usize + 1,
        );
        let whole = |this: &mut Self, a: &Expr, what: &str| -> Option<usize> {
            let text = match &a.kind {
                ExprKind::Number(t) => t.as_str(),
                _ => return None,
            };
            match text.parse::<usize>() {
                Ok(n) => Some(n),
                Err(_) => {
                    this.spline_error(
                        "E0912",
                        a.span,
                        format!("the {what} of `table` must be a whole number, found `{text}`"),
                        "not a whole number",
                        "columns are counted from 0; the header line count is a whole number",
                    );
                    None
                }
            }
        };
        let xcol = whole(self, args.get(1)?, "x column")?;
        let ycol = whole(self, args.get(2)?, "y column")?;
        let header = match args.get(3) {
            Some(a) => whole(self, a, "header line count")?,
            None => 0,
        };
        let Some(model) = files.and_then(|f| f.path(decl.span.file)) else {
            self.spline_error(
                "E0910",
                call,
                format!("cannot read table `{file}`: the location of the model file is unknown"),
                "table file relative to an unknown directory",
                "build the model from a file, so relative table paths can be resolved",
            );
            return None;
        };
        let dir = model.parent().unwrap_or(std::path::Path::new(""));
        let path = dir.join(file);
        // Through the front end's one safe reader: a FIFO or device is refused, not read.
        let text =
            match fdc_frontend::source::read_text(&path, fdc_frontend::source::MAX_DATA_BYTES) {
                Ok(t) => t,
                Err(e) => {
                    self.spline_error(
                        "E0910",
                        call,
                        format!("cannot read table `{}`: {e}", path.display()),
                        "this table file",
                        &format!(
                            "the path is relative to the model file's directory (`{}`)",
                            if dir.as_os_str().is_empty() {
                                ".".to_string()
                            } else {
                                dir.display().to_string()
                            }
                        ),
                    );
                    return None;
                }
            };
        let shown = path.display().to_string();
        let (xs, ys, lines) = match spline::read_table(&text, xcol, ycol, header) {
            Ok(p) => p,
            Err(spline::TableError::Column { line, col, found }) => {
                let arg = if col == xcol { &args[1] } else { &args[2] };
                self.spline_error(
                    "E0912",
                    arg.span,
                    format!("line {line} of `{shown}` has {found} column(s), no column {col}"),
                    "column out of range",
                    "columns are counted from 0; every data line needs both columns",
                );
                return None;
            }
            Err(spline::TableError::Number { line, col, text }) => {
                self.spline_error(
                    "E0911",
                    call,
                    format!("line {line}, column {col} of `{shown}`: `{text}` is not a finite number"),
                    "reading this table",
                    "the header line count (4th argument) skips leading text lines; `#` starts a comment line",
                );
                return None;
            }
        };
        match spline::table("akima", &xs, &ys) {
            Ok(t) => Some(t),
            Err(spline::DataError::TooFew(n)) => {
                self.spline_error(
                    "E0913",
                    call,
                    format!("table `{shown}` has {n} data line(s)"),
                    "too few points",
                    "a spline needs at least 2 points",
                );
                None
            }
            Err(spline::DataError::NotIncreasing(i)) => {
                self.spline_error(
                    "E0914",
                    call,
                    format!(
                        "the x values of `{shown}` do not increase: line {} has x = {} after {}",
                        lines[i],
                        xs[i],
                        xs[i - 1]
                    ),
                    "reading this table",
                    "the x column of a table must be strictly increasing (sorted, no repeats)",
                );
                None
            }
            Err(e) => {
                let why = match e {
                    spline::DataError::Other(m) => m,
                    other => format!("{other:?}"),
                };
                self.spline_error(
                    "E0914",
                    call,
                    format!("table `{shown}`: {why}"),
                    "reading this table",
                    "x values this close cannot carry a cubic piece; thin out the table",
                );
                None
            }
        }
    }

    /// A model-level expression as numbers.
    fn numeric(&mut self, e: &Expr) -> Option<Vec<f64>> {
        let mut g = Graph::new();
        let mut lw = Lowerer::new(&self.globals, Target::Plain(&mut g));
        let v = lw.expr(e);
        let errors = std::mem::take(&mut lw.errors);
        drop(lw);
        self.errors.extend(errors);
        let ids = match v?.scalars() {
            Some(ids) => ids,
            None => {
                self.err(e.span, "expected a number, vector, matrix or quaternion");
                return None;
            }
        };
        match eval_nodes(&g, &ids, &[], &[], &[], Time::Forbidden) {
            Ok(x) => Some(x),
            Err(msg) => {
                self.err(e.span, msg);
                None
            }
        }
    }

    /// Fields of an instance evaluated at model level: name → (value, input it copies).
    fn model_fields<'f>(
        &mut self,
        fields: impl IntoIterator<Item = &'f Field>,
    ) -> Vec<(String, Vec<f64>, Span, Option<usize>)> {
        let mut out = Vec::new();
        for f in fields {
            let input = match &f.value.kind {
                ExprKind::Name(n) => self.input_names.get(n).copied(),
                _ => None,
            };
            if let Some(v) = self.numeric(&f.value) {
                out.push((f.name.name.clone(), v, f.span, input));
            }
        }
        out
    }

    fn typedef(&mut self, name: &str, span: Span) -> Option<&'a TypeDef> {
        let t = self.typedefs.get(name).copied();
        if t.is_none() {
            self.err(span, format!("unknown element type `{name}`"));
        }
        t
    }

    fn body_instance(&mut self, inst: &fdc_frontend::ast::Instance) {
        let Some(def) = self.typedef(&inst.ty.name, inst.ty.span) else {
            return;
        };
        let Some(kind) = body_kind(def) else {
            self.err(
                inst.ty.span,
                format!(
                    "`{}` is not a body type (it has no coordinates)",
                    inst.ty.name
                ),
            );
            return;
        };
        let fields = self.model_fields(&inst.fields);
        let index = self.bodies.len();
        // Register the body before its own parameters are computed: its defaults may
        // refer to itself, at an unknown (NaN) configuration.
        let body = Body {
            kind,
            q0: vec![f64::NAN; 7],
            v0: Vec::new(),
            q_offset: self.nq,
            v_offset: self.nv,
        };
        let nv = body.nv();
        self.nq += 7;
        self.nv += nv;
        self.bodies.push(body);
        self.bodies[index].v0 = vec![f64::NAN; nv];
        self.body_names.insert(inst.name.name.clone(), index);
        let key = (inst.ty.name.clone(), vec![]);
        if !self.ensure_type(def, &key, &[]) {
            return;
        }
        let (q, v) = self.local_state(&[index], None);
        let Some(p) = self.params_of(&key, &q, &v, &fields, &inst.name.name, inst.span, true)
        else {
            return;
        };
        let lt = &self.cache[&key];
        let Some(fi) = lt.fn_index else { return };
        let init = self.types[fi]
            .role(Role::Init)
            .map(|(f, _)| f.outputs.clone());
        let Some(init) = init else { return };
        match eval_nodes(&self.graph, &init, &[], &[], &p, Time::Forbidden) {
            Ok(x) => {
                self.bodies[index].q0 = x[..7].to_vec();
                self.bodies[index].v0 = x[7..7 + nv].to_vec();
            }
            Err(msg) => self.err(inst.span, msg),
        }
        self.push_instance(fi, &inst.name.name, p, &[index], None);
    }

    /// `own`: the global offsets (q, v) and number of a vector-space element's own
    /// coordinates, which come first in its maps.
    fn push_instance(
        &mut self,
        fi: usize,
        name: &str,
        params: Vec<f64>,
        bodies: &[usize],
        own: Option<(usize, usize, usize)>,
    ) -> usize {
        let nl = self.types[fi].nl;
        let mut q_map = Vec::new();
        let mut v_map = Vec::new();
        if let Some((q, v, n)) = own {
            q_map.extend(q..q + n);
            v_map.extend(v..v + n);
        }
        for &b in bodies {
            let body = &self.bodies[b];
            q_map.extend(body.q_offset..body.q_offset + 7);
            v_map.extend(body.v_offset..body.v_offset + body.nv());
        }
        let lambda_map = (self.nl..self.nl + nl).collect();
        self.nl += nl;
        self.instances.push(Instance {
            name: name.to_string(),
            type_index: fi,
            params,
            q_map,
            v_map,
            lambda_map,
        });
        self.instances.len() - 1
    }

    /// A body name or `ground` given as a connection at model level.
    fn connection(&mut self, e: &Expr) -> Option<Option<usize>> {
        match &e.kind {
            ExprKind::Name(n) if n == "ground" => Some(None),
            ExprKind::Name(n) => match self.body_names.get(n) {
                Some(&b) => Some(Some(b)),
                None => {
                    self.err(e.span, format!("`{n}` is not a body"));
                    None
                }
            },
            _ => {
                self.err(e.span, "a connection is a body name or `ground`");
                None
            }
        }
    }

    fn top_instance(&mut self, inst: &'a fdc_frontend::ast::Instance) {
        let Some(def) = self.typedef(&inst.ty.name, inst.ty.span) else {
            return;
        };
        let mut conns = Vec::new();
        for c in &inst.connections {
            match self.connection(c) {
                Some(b) => conns.push(b),
                None => return,
            }
        }
        // Defaulted connections (`b2: body = ground`) are ground.
        for (i, cp) in def.connections.iter().enumerate().skip(conns.len()) {
            match &cp.default {
                Some(d) => match self.connection(d) {
                    Some(b) => conns.push(b),
                    None => return,
                },
                None => {
                    self.err(
                        inst.connections_span,
                        format!(
                            "connection {} (`{}`) of `{}` is missing",
                            i + 1,
                            cp.name.name,
                            def.name.name
                        ),
                    );
                    return;
                }
            }
        }
        let (timed, plain): (Vec<&'a Field>, Vec<&'a Field>) =
            inst.fields.iter().partition(|f| mentions_time(&f.value));
        let fields = self.model_fields(plain);
        let timed: Vec<(String, &'a Expr)> = timed
            .into_iter()
            .map(|f| (f.name.name.clone(), &f.value))
            .collect();
        for (n, e) in &timed {
            if !def
                .body
                .iter()
                .any(|s| matches!(&s.kind, StmtKind::Param(d) if &d.name.name == n))
            {
                self.err(e.span, format!("`{}` has no field `{n}`", def.name.name));
            }
        }
        self.instantiate(def, &conns, &fields, &timed, &inst.name.name, inst.span);
    }

    fn instantiate(
        &mut self,
        def: &'a TypeDef,
        conns: &[Option<usize>],
        fields: &[(String, Vec<f64>, Span, Option<usize>)],
        timed: &[(String, &'a Expr)],
        name: &str,
        span: Span,
    ) {
        if name.matches('.').count() > 16 {
            self.err(
                span,
                "element types nest too deeply (a type includes itself?)",
            );
            return;
        }
        if conns.len() != def.connections.len() {
            self.err(
                span,
                format!(
                    "`{}` connects {} bodies, {} given",
                    def.name.name,
                    def.connections.len(),
                    conns.len()
                ),
            );
            return;
        }
        let mask: Vec<Option<BodyKind>> = conns
            .iter()
            .map(|c| c.map(|b| self.bodies[b].kind))
            .collect();
        // Fields that depend on t make the type this instance's own.
        let type_name = if timed.is_empty() {
            def.name.name.clone()
        } else {
            format!("{}@{name}", def.name.name)
        };
        let key = (type_name, mask);
        if !self.ensure_type(def, &key, timed) {
            return;
        }
        let bodies: Vec<usize> = conns.iter().flatten().copied().collect();
        let n_own = self.cache[&key].n_own;
        let (p, own) = if n_own == 0 {
            let (q, v) = self.local_state(&bodies, None);
            let Some(p) = self.params_of(&key, &q, &v, fields, name, span, true) else {
                return;
            };
            (p, None)
        } else {
            // The initial values of the own coordinates are parameter slots computed
            // first (with the coordinates unknown), then the rest with them known.
            let nan = vec![f64::NAN; n_own];
            let (q, v) = self.local_state(&bodies, Some((&nan, &nan)));
            let n_err = self.errors.len();
            let first = self.params_of(&key, &q, &v, fields, name, span, false);
            let q0: Option<Vec<f64>> =
                first.map(|p| self.cache[&key].own_init.iter().map(|&o| p[o]).collect());
            let Some(q0) = q0 else { return };
            // Problems of this pass are reported by the next one.
            self.errors.truncate(n_err);
            let v0 = vec![0.0; n_own];
            let (q, v) = self.local_state(&bodies, Some((&q0, &v0)));
            let Some(p) = self.params_of(&key, &q, &v, fields, name, span, true) else {
                return;
            };
            let own = (self.nq, self.nv, n_own);
            self.nq += n_own;
            self.nv += n_own;
            self.own_coordinates(name, &q0, own);
            (p, Some(own))
        };
        // Fields of nested instances see the own coordinates at their initial values.
        let own_q: Vec<f64> = self.cache[&key].own_init.iter().map(|&o| p[o]).collect();
        let zeros = vec![0.0; n_own];
        let (q, v) = self.local_state(&bodies, own.map(|_| (&own_q[..], &zeros[..])));
        let lt = &self.cache[&key];
        let fn_index = lt.fn_index;
        // Nested instances: connections through the parent's, fields as numbers.
        let mut subs = Vec::new();
        for sub in &lt.subs {
            let sub_conns: Vec<Option<usize>> = sub
                .conns
                .iter()
                .map(|c| match c {
                    BodyRef::Ground => None,
                    BodyRef::Local(k) => Some(bodies[*k]),
                })
                .collect();
            let mut sub_fields = Vec::new();
            for (fname, nodes, fspan) in &sub.fields {
                match eval_nodes(&self.graph, nodes, &q, &v, &p, Time::Forbidden) {
                    Ok(x) => sub_fields.push((fname.clone(), x, *fspan, None)),
                    Err(msg) => self.errors.push(LowerError {
                        span: Some(*fspan),
                        message: msg,
                        ..Default::default()
                    }),
                }
            }
            subs.push((
                sub.ty.clone(),
                sub_conns,
                sub_fields,
                format!("{name}.{}", sub.name),
                // Problems of a preset's primitives are reported at the user's instance.
                span,
            ));
        }
        if let Some(fi) = fn_index {
            let idx = self.push_instance(fi, name, p, &bodies, own);
            self.record_inputs(&key, idx, fields);
        }
        for (ty, c, f, n, s) in subs {
            if let Some(d) = self.typedef(&ty, s) {
                self.instantiate(d, &c, &f, &[], &n, s);
            }
        }
    }

    /// Inputs passed directly as a field value drive that parameter at run time.
    fn record_inputs(
        &mut self,
        key: &TypeKey,
        instance: usize,
        fields: &[(String, Vec<f64>, Span, Option<usize>)],
    ) {
        for (fname, _, _, input) in fields {
            let Some(input) = input else { continue };
            if let Some(slot) = self.cache[key].slots.iter().find(|s| &s.name == fname) {
                self.inputs[*input].targets.push((instance, slot.offset));
            }
        }
    }

    /// The initial local q and v of an element: its own coordinates (if any), then
    /// those of its bodies.
    fn local_state(&self, bodies: &[usize], own: Option<(&[f64], &[f64])>) -> (Vec<f64>, Vec<f64>) {
        let (mut q, mut v) = match own {
            Some((q, v)) => (q.to_vec(), v.to_vec()),
            None => (Vec::new(), Vec::new()),
        };
        for &b in bodies {
            q.extend_from_slice(&self.bodies[b].q0);
            v.extend_from_slice(&self.bodies[b].v0);
        }
        (q, v)
    }

    /// The owner of a vector-space element's coordinates: an element of its own with
    /// `Init` (q₀ and zero rates, its parameters), `Update` (q + Δ) and `Scale` and no
    /// equations; the element's equations act on these coordinates like a connector.
    fn own_coordinates(&mut self, name: &str, q0: &[f64], own: (usize, usize, usize)) {
        let n = q0.len();
        let fi = match self.owner_types.get(&n) {
            Some(&fi) => fi,
            None => {
                let mut graph = std::mem::take(&mut self.graph);
                let type_name = format!("coordinates[{n}]");
                let mut b =
                    ElementBuilder::new(&mut graph, &type_name, Coordinates::VectorSpace, n, 2 * n);
                let p: Vec<fdc_ir::Id> = (0..2 * n).map(|i| b.param(i)).collect();
                b.vector_initial(p[..n].to_vec(), p[n..].to_vec());
                let r = b.finish();
                self.graph = graph;
                match r {
                    Ok(funcs) => {
                        self.types.push(funcs);
                        let fi = self.types.len() - 1;
                        self.owner_types.insert(n, fi);
                        fi
                    }
                    Err(e) => {
                        self.errors.push(LowerError {
                            span: None,
                            message: e.to_string(),
                            ..Default::default()
                        });
                        return;
                    }
                }
            }
        };
        let mut params = q0.to_vec();
        params.extend(std::iter::repeat_n(0.0, n));
        self.push_instance(fi, &format!("{name}.coordinates"), params, &[], Some(own));
    }

    /// The parameter vector of one instance: fields, defaults and hidden slots, in
    /// slot order (each may use the slots before it).
    /// `q`, `v`: the element's local state at t = 0. `finite`: whether a NaN or
    /// infinite value is an error (not while the own coordinates are still unknown).
    #[allow(clippy::too_many_arguments)]
    fn params_of(
        &mut self,
        key: &TypeKey,
        q: &[f64],
        v: &[f64],
        fields: &[(String, Vec<f64>, Span, Option<usize>)],
        name: &str,
        span: Span,
        finite: bool,
    ) -> Option<Vec<f64>> {
        let (q, v) = (q.to_vec(), v.to_vec());
        let lt = &self.cache[key];
        let mut p = vec![f64::NAN; lt.n_params];
        enum Fill<'s> {
            Slot(&'s ParamSlot),
            Hidden(&'s Hidden),
        }
        let mut order: Vec<(usize, Fill)> =
            lt.slots.iter().map(|s| (s.offset, Fill::Slot(s))).collect();
        order.extend(lt.hidden.iter().map(|h| (h.offset, Fill::Hidden(h))));
        order.sort_by_key(|o| o.0);
        let mut errors = Vec::new();
        for (name_f, _, fspan, _) in fields {
            if !lt.slots.iter().any(|s| &s.name == name_f) {
                errors.push(LowerError {
                    span: Some(*fspan),
                    message: format!("`{}` has no field `{name_f}`", key.0),
                    ..Default::default()
                });
            }
        }
        for (offset, fill) in order {
            let value = match fill {
                Fill::Slot(s) => match fields.iter().find(|f| f.0 == s.name) {
                    Some((_, x, fspan, _)) => {
                        if x.len() != s.size {
                            errors.push(LowerError {
                                span: Some(*fspan),
                                message: format!(
                                    "field `{}` has {} components, `{}` expects {}",
                                    s.name,
                                    x.len(),
                                    key.0,
                                    s.size
                                ),
                                ..Default::default()
                            });
                            continue;
                        }
                        Ok(x.clone())
                    }
                    None => match &s.default {
                        Some(nodes) => eval_nodes(&self.graph, nodes, &q, &v, &p, Time::Forbidden),
                        None => {
                            errors.push(LowerError {
                                span: Some(span),
                                message: format!(
                                    "`{name}` needs the field `{}` (declared at {}..{})",
                                    s.name, s.span.start, s.span.end
                                ),
                                ..Default::default()
                            });
                            continue;
                        }
                    },
                },
                Fill::Hidden(h) => eval_hidden(&self.graph, h, &q, &v, &p),
            };
            match value {
                Ok(x) => p[offset..offset + x.len()].copy_from_slice(&x),
                Err(msg) => errors.push(LowerError {
                    span: Some(span),
                    message: format!("`{name}`: {msg}"),
                    ..Default::default()
                }),
            }
        }
        if errors.is_empty() && finite {
            // A NaN here (a zero axis, a zero distance) would only surface later as an
            // "inconsistent configuration"; name the parameter instead.
            if let Some(bad) = p.iter().position(|x| !x.is_finite()) {
                let what = lt
                    .slots
                    .iter()
                    .find(|s| (s.offset..s.offset + s.size).contains(&bad))
                    .map(|s| format!("parameter `{}`", s.name))
                    .unwrap_or_else(|| {
                        "a value taken from the initial configuration (`initial`, `.local`)"
                            .to_string()
                    });
                errors.push(LowerError {
                    span: Some(span),
                    message: format!(
                        "`{name}`: {what} of `{}` is {} (a zero-length axis or distance?)",
                        key.0, p[bad]
                    ),
                    ..Default::default()
                });
            }
        }
        let ok = errors.is_empty();
        self.errors.extend(errors);
        ok.then_some(p)
    }

    /// Lowers `def` for a ground pattern unless done already. False on errors.
    fn ensure_type(
        &mut self,
        def: &'a TypeDef,
        key: &TypeKey,
        timed: &[(String, &'a Expr)],
    ) -> bool {
        if self.cache.contains_key(key) {
            return true;
        }
        // Pass 1 on a scratch graph learns the number of parameter slots, which the
        // builder needs up front; pass 2 builds for real. Lowering is cheap.
        let n_params = {
            let mut scratch = Graph::new();
            match self.lower_type(def, key, timed, &mut scratch, 0, true) {
                Ok(lt) => lt.n_params,
                Err(e) => {
                    self.errors.extend(e);
                    return false;
                }
            }
        };
        let mut graph = std::mem::take(&mut self.graph);
        let r = self.lower_type(def, key, timed, &mut graph, n_params, false);
        self.graph = graph;
        match r {
            Ok(lt) => {
                self.cache.insert(key.clone(), lt);
                true
            }
            Err(e) => {
                self.errors.extend(e);
                false
            }
        }
    }

    fn lower_type(
        &mut self,
        def: &'a TypeDef,
        key: &TypeKey,
        timed: &[(String, &'a Expr)],
        graph: &mut Graph,
        n_params: usize,
        dry: bool,
    ) -> Result<LoweredType, Vec<LowerError>> {
        let conns = key.1.as_slice();
        let self_kind = body_kind(def);
        let n_own = own_coordinates(def);
        let (kind, kinds) = match self_kind {
            Some(BodyKind::Rigid) => (Coordinates::RigidBody, vec![BodyKind::Rigid]),
            Some(BodyKind::Euler) => (Coordinates::EulerBody, vec![BodyKind::Euler]),
            None => (
                Coordinates::Connector,
                conns.iter().flatten().copied().collect(),
            ),
        };
        // Ground connections and Euler-parameter bodies get a type of their own:
        // `[gb]`, `[eb]`, ...
        let suffix: String = if conns.iter().any(|c| *c != Some(BodyKind::Rigid)) {
            let s: Vec<&str> = conns
                .iter()
                .map(|c| match c {
                    None => "g",
                    Some(BodyKind::Rigid) => "b",
                    Some(BodyKind::Euler) => "e",
                })
                .collect();
            format!("[{}]", s.join(""))
        } else {
            String::new()
        };
        // `key.0` is the type's name, or `TYPE@INSTANCE` for an instance of its own.
        let type_name = format!("{}{suffix}", key.0);
        let mut builder =
            ElementBuilder::with_bodies(graph, &type_name, kind, n_own, &kinds, n_params);
        let n_constraints = def
            .body
            .iter()
            .filter(|s| matches!(s.kind, StmtKind::Constrain(_)))
            .count();
        let mut lw = Lowerer::new(&self.globals, Target::Element(&mut builder));
        if self_kind.is_some() {
            lw.scope.insert("self".into(), Val::Body(BodyRef::Local(0)));
        }
        let mut k = 0;
        for (cp, g) in def.connections.iter().zip(conns) {
            let b = if g.is_none() {
                BodyRef::Ground
            } else {
                k += 1;
                BodyRef::Local(k - 1)
            };
            lw.scope.insert(cp.name.name.clone(), Val::Body(b));
        }
        let mut ctx = StmtCtx {
            n_constraints,
            ..StmtCtx::default()
        };
        lower_stmts(&self.typedefs, &mut lw, &def.body, timed, &mut ctx);
        if ctx.kinetic.is_some() || ctx.potential.is_some() {
            if let Target::Element(b) = &mut lw.target {
                let zero = b.graph().constant(0.0);
                b.lagrangian(ctx.kinetic.unwrap_or(zero), ctx.potential.unwrap_or(zero));
            }
        }
        let StmtCtx {
            slots,
            subs,
            equations,
            own_init,
            ..
        } = ctx;
        let errors = std::mem::take(&mut lw.errors);
        let hidden = std::mem::take(&mut lw.hidden);
        let n_used = lw.next_param;
        drop(lw);
        if !errors.is_empty() {
            return Err(errors);
        }
        let fn_index = if !dry && equations {
            match builder.finish() {
                Ok(funcs) => {
                    self.types.push(funcs);
                    Some(self.types.len() - 1)
                }
                Err(e) => {
                    return Err(vec![LowerError {
                        span: Some(def.name.span),
                        message: e.to_string(),
                        ..Default::default()
                    }])
                }
            }
        } else {
            None
        };
        Ok(LoweredType {
            fn_index,
            n_params: n_used.max(n_params),
            slots,
            hidden,
            subs,
            n_own,
            own_init,
        })
    }

    /// `output name = expr;` at model level: an element of its own that connects the
    /// bodies the expression names and has only the `Out` role.
    fn model_output(&mut self, name: &str, value: &Expr, span: Span) {
        let mut used = Vec::new();
        collect_bodies(value, &self.body_names, &mut used);
        let names: Vec<String> = used
            .iter()
            .filter_map(|b| {
                self.body_names
                    .iter()
                    .find(|(_, i)| *i == b)
                    .map(|(n, _)| n.clone())
            })
            .collect();
        let type_name = format!("output {name}");
        let kinds: Vec<BodyKind> = used.iter().map(|&b| self.bodies[b].kind).collect();
        // Pass 1 on a scratch graph counts the hidden slots (`initial`, `.local`, as in
        // the measures of the library), which the builder needs up front.
        let n_params = {
            let mut scratch = Graph::new();
            let mut builder = ElementBuilder::with_bodies(
                &mut scratch,
                &type_name,
                Coordinates::Connector,
                0,
                &kinds,
                0,
            );
            let mut lw = Lowerer::new(&self.globals, Target::Element(&mut builder));
            for (k, n) in names.iter().enumerate() {
                lw.scope.insert(n.clone(), Val::Body(BodyRef::Local(k)));
            }
            let _ = lw.expr(value);
            lw.next_param
        };
        let mut graph = std::mem::take(&mut self.graph);
        let mut builder = ElementBuilder::with_bodies(
            &mut graph,
            &type_name,
            Coordinates::Connector,
            0,
            &kinds,
            n_params,
        );
        let mut lw = Lowerer::new(&self.globals, Target::Element(&mut builder));
        for (k, n) in names.iter().enumerate() {
            lw.scope.insert(n.clone(), Val::Body(BodyRef::Local(k)));
        }
        let v = lw.expr(value);
        if let Some(v) = &v {
            output(&mut lw, "", v, span);
        }
        let errors = std::mem::take(&mut lw.errors);
        let hidden = std::mem::take(&mut lw.hidden);
        drop(lw);
        let r = builder.finish();
        self.graph = graph;
        if !errors.is_empty() {
            self.errors.extend(errors);
            return;
        }
        // The hidden slots, in order, from the initial configuration.
        let (q, v0) = self.local_state(&used, None);
        let mut p = vec![f64::NAN; n_params];
        for h in &hidden {
            match eval_hidden(&self.graph, h, &q, &v0, &p) {
                Ok(x) => p[h.offset..h.offset + x.len()].copy_from_slice(&x),
                Err(msg) => return self.err(span, format!("output `{name}`: {msg}")),
            }
        }
        match r {
            Ok(mut funcs) => {
                // Channels are named after the output itself: `tip`, `tip.x`, ...
                for o in &mut funcs.outputs {
                    *o = o.trim_start_matches('.').to_string();
                }
                self.types.push(funcs);
                let fi = self.types.len() - 1;
                let _ = self.push_instance(fi, name, p, &used, None);
            }
            Err(e) => self.err(span, e.to_string()),
        }
    }

    fn settings(&mut self, items: &[&Item]) -> Settings {
        let mut s = Settings::default();
        for item in items {
            let Item::Simulate { settings, .. } = item else {
                continue;
            };
            for f in settings {
                let key = f.name.name.as_str();
                let word = match &f.value.kind {
                    ExprKind::Name(n) => Some(n.clone()),
                    _ => None,
                };
                match key {
                    "form" => match word.as_deref() {
                        Some("arnold_bruls" | "negrut") => s.form = word,
                        _ => self.err(f.value.span, "`form` is `arnold_bruls` or `negrut`"),
                    },
                    "linear_solver" => match word.as_deref() {
                        Some("sparse" | "dense") => s.linear_solver = word,
                        _ => self.err(f.value.span, "`linear_solver` is `sparse` or `dense`"),
                    },
                    "newton" => {
                        s.newton = match &f.value.kind {
                            ExprKind::Name(n) if n == "legacy" => Some(NewtonSetting::Legacy),
                            ExprKind::Call(c, args)
                                if args.len() == 1
                                    && (c.name == "velocity" || c.name == "fixed") =>
                            {
                                let x = self.numeric(&args[0]).and_then(|x| x.first().copied());
                                match (c.name.as_str(), x) {
                                    ("velocity", Some(tol)) => Some(NewtonSetting::Velocity(tol)),
                                    ("fixed", Some(n)) if n >= 1.0 && n.fract() == 0.0 => {
                                        Some(NewtonSetting::Fixed(n as usize))
                                    }
                                    _ => {
                                        self.err(f.value.span, "`newton` is `velocity(tol)`, `legacy` or `fixed(n)` with n ≥ 1");
                                        None
                                    }
                                }
                            }
                            _ => {
                                self.err(
                                    f.value.span,
                                    "`newton` is `velocity(tol)`, `legacy` or `fixed(n)`",
                                );
                                None
                            }
                        }
                    }
                    _ => {
                        let x = self
                            .numeric(&f.value)
                            .and_then(|x| (x.len() == 1).then(|| x[0]));
                        let slot = match key {
                            "end" => &mut s.end,
                            "step" => &mut s.step,
                            "output_every" => &mut s.output_every,
                            "alpha" => &mut s.alpha,
                            "adaptive" => &mut s.adaptive,
                            "step_min" => &mut s.step_min,
                            "step_max" => &mut s.step_max,
                            _ => {
                                self.err(f.name.span, format!("unknown simulate setting `{key}`"));
                                continue;
                            }
                        };
                        *slot = x;
                    }
                }
            }
        }
        s
    }
}

/// The value of a hidden slot: at t = 0, or for `at_time(e, T)` first T (parameters
/// only), then e at t = T.
fn eval_hidden(g: &Graph, h: &Hidden, q: &[f64], v: &[f64], p: &[f64]) -> Result<Vec<f64>, String> {
    match h.time {
        None => eval_nodes(g, &h.nodes, q, v, p, Time::Initial),
        Some(when) => eval_nodes(g, &[when], q, v, p, Time::Forbidden)
            .and_then(|x| eval_nodes(g, &h.nodes, q, v, p, Time::At(x[0]))),
    }
}

fn body_ref(lw: &mut Lowerer, e: &Expr) -> Option<BodyRef> {
    match lw.expr(e)? {
        Val::Body(b) => Some(b),
        other => lw.error(e.span, format!("expected a body, found a {}", other.kind())),
    }
}

fn kin_of(b: &mut ElementBuilder, r: BodyRef) -> fdc_diff::BodyKin {
    match r {
        BodyRef::Ground => b.ground(),
        BodyRef::Local(k) => b.body(k),
    }
}

/// Adds a value as result channels: `name` (scalar), `name.x/y/z` (vec3), ...
fn output(lw: &mut Lowerer, name: &str, v: &Val, span: Span) {
    let Target::Element(b) = &mut lw.target else {
        return;
    };
    match v {
        Val::S(x) => b.output(name, *x),
        Val::V(x) => b.output_v3(name, *x),
        Val::Q(q) => {
            for (c, x) in ["w", "x", "y", "z"].iter().zip(q) {
                b.output(&format!("{name}.{c}"), *x);
            }
        }
        Val::M(m) => {
            for (i, row) in m.iter().enumerate() {
                for (j, x) in row.iter().enumerate() {
                    b.output(&format!("{name}.{i}{j}"), *x);
                }
            }
        }
        other => {
            let kind = other.kind();
            lw.error::<()>(
                span,
                format!("an output is a number, vector, matrix or quaternion, not a {kind}"),
            );
        }
    }
}

fn collect_bodies(e: &Expr, bodies: &HashMap<String, usize>, out: &mut Vec<usize>) {
    match &e.kind {
        ExprKind::Name(n) => {
            if let Some(&b) = bodies.get(n) {
                if !out.contains(&b) {
                    out.push(b);
                }
            }
        }
        ExprKind::List(items) => items.iter().for_each(|i| collect_bodies(i, bodies, out)),
        ExprKind::Neg(a) => collect_bodies(a, bodies, out),
        ExprKind::Binary(_, a, b) | ExprKind::Compare(_, a, b) => {
            collect_bodies(a, bodies, out);
            collect_bodies(b, bodies, out);
        }
        ExprKind::If(c, a, b) => {
            collect_bodies(c, bodies, out);
            collect_bodies(a, bodies, out);
            collect_bodies(b, bodies, out);
        }
        ExprKind::Call(_, args) => args.iter().for_each(|i| collect_bodies(i, bodies, out)),
        ExprKind::Member(b, _) => collect_bodies(b, bodies, out),
        ExprKind::Method(b, _, args) => {
            collect_bodies(b, bodies, out);
            args.iter().for_each(|i| collect_bodies(i, bodies, out));
        }
        ExprKind::Number(_) | ExprKind::Str(_) | ExprKind::Error => {}
    }
}

/// Whether an expression mentions the time `t` (at top level `t` cannot be shadowed).
fn mentions_time(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Name(n) => n == "t",
        ExprKind::List(items) | ExprKind::Call(_, items) => items.iter().any(mentions_time),
        ExprKind::Neg(a) | ExprKind::Member(a, _) => mentions_time(a),
        ExprKind::Binary(_, a, b) | ExprKind::Compare(_, a, b) => {
            mentions_time(a) || mentions_time(b)
        }
        ExprKind::If(c, a, b) => mentions_time(c) || mentions_time(a) || mentions_time(b),
        ExprKind::Method(b, _, args) => mentions_time(b) || args.iter().any(mentions_time),
        ExprKind::Number(_) | ExprKind::Str(_) | ExprKind::Error => false,
    }
}

/// What the statements of one element type (or of a primitive inlined into it) add up to.
#[derive(Default)]
struct StmtCtx {
    slots: Vec<ParamSlot>,
    subs: Vec<Sub>,
    constraint_no: usize,
    n_constraints: usize,
    /// Name prefix of the multipliers and outputs of an inlined primitive (`t0.`).
    prefix: String,
    /// Statements of an inlined primitive: its parameters are bound, not slots.
    inline: bool,
    /// Parameter names the caller bound from fields.
    bound: Vec<String>,
    /// Whether anything contributes to the element functions.
    equations: bool,
    /// Vector-space coordinates declared so far.
    n_own: usize,
    /// Parameter slots of their initial values, one per coordinate.
    own_init: Vec<usize>,
    kinetic: Option<fdc_ir::Id>,
    potential: Option<fdc_ir::Id>,
}

/// A nested instance whose type has only its own equations (a joint primitive) is
/// lowered into the enclosing element: one element per preset instead of one per
/// primitive, so a revolute joint is one function call per evaluation, not five.
fn inlinable(def: &TypeDef) -> bool {
    def.body.iter().all(|s| {
        !matches!(
            s.kind,
            StmtKind::Instance(_)
                | StmtKind::CoordinatesGroup { .. }
                | StmtKind::State { .. }
                | StmtKind::Coordinates(_)
                | StmtKind::Kinetic(_)
                | StmtKind::Potential(_)
        )
    })
}

fn inline_instance(
    typedefs: &HashMap<String, &TypeDef>,
    lw: &mut Lowerer,
    inst: &fdc_frontend::ast::Instance,
    ctx: &mut StmtCtx,
) {
    let Some(def) = typedefs.get(&inst.ty.name).copied() else {
        return;
    };
    let mut conns = Vec::new();
    for c in &inst.connections {
        if let Some(b) = body_ref(lw, c) {
            conns.push(b);
        }
    }
    for cp in def.connections.iter().skip(conns.len()) {
        if let Some(d) = &cp.default {
            if let Some(b) = body_ref(lw, d) {
                conns.push(b);
            }
        }
    }
    let mut scope = HashMap::new();
    for (cp, b) in def.connections.iter().zip(conns) {
        scope.insert(cp.name.name.clone(), Val::Body(b));
    }
    let mut bound = Vec::new();
    for f in &inst.fields {
        let Some(v) = lw.expr(&f.value) else { continue };
        // A value of parameters only is computed once per instance at build time (a
        // parameter slot); one that moves with the state or time stays an expression.
        let moving = v.scalars().is_some_and(|ids| {
            fdc_diff::ad::cone_any(lw.graph(), &ids, |op| {
                matches!(op, fdc_ir::Op::Input(slot, _) if slot != fdc_ir::Slot::P)
                    || matches!(op, fdc_ir::Op::Sym(_))
            })
        });
        let v = if moving {
            Some(v)
        } else {
            lw.hide_value(&v, f.span)
        };
        if let Some(v) = v {
            scope.insert(f.name.name.clone(), v);
            bound.push(f.name.name.clone());
        }
    }
    let saved = std::mem::replace(&mut lw.scope, scope);
    let mut sub = StmtCtx {
        n_constraints: def
            .body
            .iter()
            .filter(|s| matches!(s.kind, StmtKind::Constrain(_)))
            .count(),
        prefix: format!("{}{}.", ctx.prefix, inst.name.name),
        inline: true,
        bound,
        ..StmtCtx::default()
    };
    lower_stmts(typedefs, lw, &def.body, &[], &mut sub);
    lw.scope = saved;
    ctx.equations |= sub.equations;
}

fn lower_stmts(
    typedefs: &HashMap<String, &TypeDef>,
    lw: &mut Lowerer,
    stmts: &[fdc_frontend::ast::Stmt],
    timed: &[(String, &Expr)],
    ctx: &mut StmtCtx,
) {
    for stmt in stmts {
        match &stmt.kind {
            StmtKind::Param(decl) if ctx.inline => {
                // An inlined primitive: fields were bound by the caller; the rest take
                // their defaults as expressions.
                if ctx.bound.contains(&decl.name.name) {
                    continue;
                }
                match &decl.default {
                    Some(d) => {
                        if let Some(v) = lw.expr(d) {
                            lw.scope.insert(decl.name.name.clone(), v);
                        }
                    }
                    None => {
                        lw.error::<()>(
                            decl.span,
                            format!("field `{}` is required here", decl.name.name),
                        );
                    }
                }
            }
            StmtKind::Param(decl) => {
                if let Some((_, field)) = timed.iter().find(|f| f.0 == decl.name.name) {
                    // A field that depends on t is part of the equations: lowered in
                    // the model's scope (globals only), no parameter slot.
                    let saved = std::mem::take(&mut lw.scope);
                    let v = lw.expr(field);
                    lw.scope = saved;
                    let want = decl.ty.as_ref().and_then(|t| size_of_type(&t.name));
                    match v {
                        Some(v) if want.is_none() || v.scalars().map(|s| s.len()) == want => {
                            lw.scope.insert(decl.name.name.clone(), v);
                        }
                        Some(_) => {
                            lw.error::<()>(
                                field.span,
                                format!("field `{}` has the wrong type", decl.name.name),
                            );
                        }
                        None => {}
                    }
                    continue;
                }
                let default = decl.default.as_ref().and_then(|d| lw.expr(d));
                let size = match (&decl.ty, &default) {
                    (Some(t), _) => size_of_type(&t.name),
                    (None, Some(v)) => v.scalars().map(|s| s.len()),
                    (None, None) => None,
                };
                let Some(size) = size else {
                    lw.error::<()>(
                        decl.span,
                        format!(
                            "the type of parameter `{}` is unknown: give `: scalar`, `: vec3`, ...",
                            decl.name.name
                        ),
                    );
                    continue;
                };
                let offset = lw.next_param;
                lw.next_param += size;
                let ids: Vec<Id> = (0..size)
                    .map(|i| lw.target.g().input(fdc_ir::Slot::P, offset + i))
                    .collect();
                let shape = match size {
                    1 => Val::S(ids[0]),
                    3 => Val::V([ids[0], ids[1], ids[2]]),
                    4 => Val::Q([ids[0], ids[1], ids[2], ids[3]]),
                    _ => Val::M([
                        [ids[0], ids[1], ids[2]],
                        [ids[3], ids[4], ids[5]],
                        [ids[6], ids[7], ids[8]],
                    ]),
                };
                lw.scope.insert(decl.name.name.clone(), shape);
                ctx.slots.push(ParamSlot {
                    name: decl.name.name.clone(),
                    offset,
                    size,
                    default: default
                        .and_then(|d| d.scalars())
                        .filter(|d| d.len() == size),
                    span: decl.span,
                });
            }
            StmtKind::Let { name, value, .. } => {
                if let Some(v) = lw.expr(value) {
                    lw.scope.insert(name.name.clone(), v);
                }
            }
            StmtKind::Constrain(e) => {
                if let Some(phi) = lw.scalar(e) {
                    let name = if ctx.n_constraints == 1 {
                        format!("{}lambda", ctx.prefix)
                    } else {
                        format!("{}lambda{}", ctx.prefix, ctx.constraint_no)
                    };
                    ctx.constraint_no += 1;
                    ctx.equations = true;
                    if let Target::Element(b) = &mut lw.target {
                        b.constrain(&name, phi);
                    }
                }
            }
            StmtKind::ApplyForce { force, body, at } => {
                ctx.equations = true;
                let f = lw.vec3(force);
                let b = body_ref(lw, body);
                let u = match at {
                    Some(a) => lw.vec3(a),
                    None => Some(lw.target.g().v3_const([0.0; 3])),
                };
                if let (Some(f), Some(b), Some(u)) = (f, b, u) {
                    if let Target::Element(bl) = &mut lw.target {
                        let kin = kin_of(bl, b);
                        bl.force(&kin, f, u);
                    }
                }
            }
            StmtKind::ApplyTorque { torque, body } | StmtKind::ApplyBodyTorque { torque, body } => {
                ctx.equations = true;
                let m = lw.vec3(torque);
                let b = body_ref(lw, body);
                let in_body = matches!(stmt.kind, StmtKind::ApplyBodyTorque { .. });
                if let (Some(m), Some(b)) = (m, b) {
                    if let Target::Element(bl) = &mut lw.target {
                        let kin = kin_of(bl, b);
                        if in_body {
                            bl.body_torque(&kin, m);
                        } else {
                            bl.torque(&kin, m);
                        }
                    }
                }
            }
            StmtKind::ApplyGeneralized { value, along } => {
                ctx.equations = true;
                if let (Some(s), Some(m)) = (lw.scalar(value), lw.scalar(along)) {
                    if let Target::Element(bl) = &mut lw.target {
                        bl.generalized(s, m);
                    }
                }
            }
            StmtKind::State { name, value } => {
                ctx.equations = true;
                let slot = ctx
                    .slots
                    .iter()
                    .find(|s: &&ParamSlot| s.name == name.name)
                    .cloned();
                let Some(ids) = lw.expr(value).and_then(|v| v.scalars().map(|s| (v, s))) else {
                    continue;
                };
                let (v, ids) = ids;
                let slot = match slot {
                    Some(slot) => slot,
                    None => {
                        // No `param NAME` before: the state is declared here and starts
                        // at its value in the initial configuration.
                        let slot = ParamSlot {
                            name: name.name.clone(),
                            offset: lw.next_param,
                            size: ids.len(),
                            default: Some(ids.clone()),
                            span: name.span,
                        };
                        lw.next_param += ids.len();
                        let inputs: Vec<Id> = (0..slot.size)
                            .map(|i| lw.target.g().input(fdc_ir::Slot::P, slot.offset + i))
                            .collect();
                        lw.scope.insert(name.name.clone(), v.with_scalars(&inputs));
                        ctx.slots.push(slot.clone());
                        slot
                    }
                };
                if ids.len() != slot.size {
                    lw.error::<()>(
                        stmt.span,
                        "the state value does not match its parameter's type",
                    );
                    continue;
                }
                if let Target::Element(bl) = &mut lw.target {
                    for (i, id) in ids.into_iter().enumerate() {
                        bl.state(slot.offset + i, id);
                    }
                }
            }
            StmtKind::Output { name, value } => {
                ctx.equations = true;
                if let Some(v) = lw.expr(value) {
                    output(lw, &format!("{}{}", ctx.prefix, name.name), &v, stmt.span);
                }
            }
            StmtKind::CoordinatesGroup { group, args } => {
                ctx.equations = true;
                if !matches!(group.name.as_str(), "rigid" | "euler") || args.len() != 4 {
                    lw.error::<()>(stmt.span, "the coordinate groups are `rigid(...)` and `euler(...)` of (position, orientation, velocity, angular_velocity)");
                    continue;
                }
                let pos = lw.vec3(&args[0]);
                let ori = match lw.expr(&args[1]) {
                    Some(Val::Q(q)) => Some(q),
                    Some(other) => lw.error(
                        args[1].span,
                        format!("the orientation is a quat, not a {}", other.kind()),
                    ),
                    None => None,
                };
                let vel = lw.vec3(&args[2]);
                let om = lw.vec3(&args[3]);
                if let (Some(p), Some(o), Some(v), Some(w)) = (pos, ori, vel, om) {
                    if let Target::Element(bl) = &mut lw.target {
                        bl.rigid_body_initial(p, o, v, w);
                    }
                }
            }
            StmtKind::Coordinates(cs) => {
                ctx.equations = true;
                for c in cs {
                    let Some(size) = size_of_type(&c.ty.name).filter(|&n| n != 9) else {
                        lw.error::<()>(c.ty.span, "a coordinate is a scalar, vec3 or quat");
                        continue;
                    };
                    // The initial value: a parameter slot computed at build time.
                    let init = match &c.initial {
                        Some(e) => lw.expr(e),
                        None => {
                            let z = lw.target.g().constant(0.0);
                            Some(match size {
                                1 => Val::S(z),
                                3 => Val::V([z; 3]),
                                _ => Val::Q([z; 4]),
                            })
                        }
                    };
                    let Some(init) = init else { continue };
                    if init.scalars().map(|s| s.len()) != Some(size) {
                        lw.error::<()>(
                            c.name.span,
                            format!(
                                "the initial value of `{}` is not a {}",
                                c.name.name, c.ty.name
                            ),
                        );
                        continue;
                    }
                    let offset = lw.next_param;
                    if lw.hide_value(&init, c.name.span).is_none() {
                        continue;
                    }
                    let mut ids = Vec::with_capacity(size);
                    if let Target::Element(b) = &mut lw.target {
                        for i in 0..size {
                            ids.push(b.coordinate(ctx.n_own + i));
                        }
                    }
                    if ids.len() != size {
                        continue;
                    }
                    ctx.own_init.extend(offset..offset + size);
                    ctx.n_own += size;
                    let shape = match size {
                        1 => Val::S(ids[0]),
                        3 => Val::V([ids[0], ids[1], ids[2]]),
                        _ => Val::Q([ids[0], ids[1], ids[2], ids[3]]),
                    };
                    lw.scope.insert(c.name.name.clone(), shape);
                }
            }
            StmtKind::Kinetic(e) | StmtKind::Potential(e) => {
                ctx.equations = true;
                let Some(x) = lw.scalar(e) else { continue };
                let kinetic = matches!(stmt.kind, StmtKind::Kinetic(_));
                let n_own = ctx.n_own as u32;
                let reads_bodies = fdc_diff::ad::cone_any(lw.graph(), &[x], |op| {
                    matches!(op, fdc_ir::Op::Input(fdc_ir::Slot::Q | fdc_ir::Slot::V | fdc_ir::Slot::Vdot, i) if i >= n_own)
                        || matches!(op, fdc_ir::Op::Sym(_))
                });
                if kinetic && reads_bodies {
                    lw.error::<()>(
                        e.span,
                        "the kinetic energy reads a connected body: Lagrange's equations are \
                         formed for the element's own coordinates only; give a body's inertia \
                         as loads (`apply force`, `apply body_torque`) and let the potential \
                         read the bodies",
                    );
                    continue;
                }
                let moving = fdc_diff::ad::cone_any(lw.graph(), &[x], |op| {
                    matches!(
                        op,
                        fdc_ir::Op::Input(fdc_ir::Slot::V | fdc_ir::Slot::Vdot, _)
                    )
                });
                if !kinetic && moving {
                    lw.error::<()>(
                        e.span,
                        "the potential energy reads velocities (`rate`, `.velocity`, `.omega`, \
                         ...): it is a function of the configuration and time; write a \
                         velocity-dependent load with `apply` instead",
                    );
                    continue;
                }
                let slot = if kinetic {
                    &mut ctx.kinetic
                } else {
                    &mut ctx.potential
                };
                *slot = Some(match *slot {
                    // Two statements of one kind add up.
                    Some(prev) => lw.target.g().add2(prev, x),
                    None => x,
                });
            }
            StmtKind::Instance(inst)
                if typedefs.get(&inst.ty.name).is_some_and(|d| inlinable(d)) =>
            {
                inline_instance(typedefs, lw, inst, ctx);
            }
            StmtKind::Instance(inst) => {
                let mut conns = Vec::new();
                for c in &inst.connections {
                    if let Some(b) = body_ref(lw, c) {
                        conns.push(b);
                    }
                }
                let mut fields = Vec::new();
                for f in &inst.fields {
                    if let Some(ids) = lw.expr(&f.value).and_then(|v| v.scalars()) {
                        fields.push((f.name.name.clone(), ids, f.span));
                    }
                }
                if let Some(sub_def) = typedefs.get(&inst.ty.name) {
                    for cp in sub_def.connections.iter().skip(conns.len()) {
                        if let Some(d) = &cp.default {
                            if let Some(b) = body_ref(lw, d) {
                                conns.push(b);
                            }
                        }
                    }
                }
                ctx.subs.push(Sub {
                    name: inst.name.name.clone(),
                    ty: inst.ty.name.clone(),
                    conns,
                    fields,
                });
            }
            StmtKind::Error => {}
        }
    }
}
