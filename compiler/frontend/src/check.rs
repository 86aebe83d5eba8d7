//! Name resolution and type checking over all parsed modules (model files + stdlib),
//! producing the resolved [`Model`] view that lowering uses.
//!
//! Scoping rules (docs/language.md §Names): top-level declarations of every file are
//! one namespace and may be used before their definition; inside an element type,
//! names are visible from their declaration on.

use crate::ast::*;
use crate::builtins::{self, Dep, SimValue, SIM_KEYS};
use crate::diag::Diagnostic;
use crate::Ty;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap, HashSet};

pub use items::Definition;
pub use resolve::{Decl, Resolution};

mod calls;
mod expressions;
mod items;
mod kinks;
mod resolve;
pub mod shapes;
mod simulate;
mod splines;
mod type_stmts;
mod typedefs;

/// A parameter of an element type (a field of its instances).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TypeParam {
    pub name: String,
    pub ty: Ty,
    /// `None`: the field is required.
    pub default: Option<Expr>,
    pub doc: Option<String>,
    pub span: Span,
}

/// The configuration space of an element type.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum Coordinates {
    /// A connector: owns no coordinates.
    None,
    /// A rigid body on R³×SO(3) (`rigid`) or with Euler parameters (`euler`); the
    /// expressions are the initial position (vec3), orientation (quat), velocity (vec3)
    /// and angular velocity (vec3, global).
    Rigid { args: Vec<Expr> },
    /// Vector-space coordinates: (name, type, initial value).
    Vector(Vec<(String, Ty, Option<Expr>)>),
}

/// An element type (user or stdlib), resolved.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TypeInfo {
    pub kind: Kind,
    pub name: String,
    pub doc: Option<String>,
    /// Declared in a stdlib file.
    pub stdlib: bool,
    pub params: Vec<TypeParam>,
    pub connections: Vec<ConnParam>,
    pub coordinates: Coordinates,
    /// The statements in source order (lets, constraints, loads, nested instances, ...).
    pub body: Vec<Stmt>,
    pub span: Span,
    pub name_span: Span,
}

impl TypeInfo {
    pub fn param(&self, name: &str) -> Option<&TypeParam> {
        self.params.iter().find(|p| p.name == name)
    }
}

/// A top-level instance, resolved against its type.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct InstanceInfo {
    pub kind: Kind,
    pub name: String,
    pub type_name: String,
    /// Body-typed expressions (names of body instances or `ground`), in order.
    pub connections: Vec<Expr>,
    /// Fields as given; params of the type not given take their default.
    pub fields: Vec<Field>,
    pub span: Span,
    pub name_span: Span,
}

/// The resolved view of a whole model.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Model {
    pub types: BTreeMap<String, TypeInfo>,
    pub instances: Vec<InstanceInfo>,
    pub params: Vec<ParamDecl>,
    pub inputs: Vec<ParamDecl>,
    pub functions: Vec<FnDecl>,
    pub splines: Vec<SplineDecl>,
    pub gravity: Option<Expr>,
    pub outputs: Vec<(Ident, Expr)>,
    pub simulate: Vec<Field>,
    /// The params, inputs and splines in an order where each comes after the ones its
    /// value uses: the order lowering evaluates them in.
    pub definitions: Vec<Definition>,
}

/// Value of a checked expression: its type and whether it depends on the state
/// (coordinates or velocities), which the smoothness check needs.
#[derive(Clone, Copy)]
struct Val {
    ty: Ty,
    dep: bool,
}

#[derive(Clone, Copy, PartialEq)]
enum Ctx {
    Model,
    Type,
    /// A one-off element (`force f: on(b) { ... }`): a type that also sees the
    /// model's parameters.
    Inline,
    Fn,
}

#[derive(Clone)]
struct Local {
    name: String,
    ty: Ty,
    dep: bool,
    span: Span,
    /// For a `let`: the kinks (abs/min/max/if of the state) its value contains.
    kinks: std::rc::Rc<kinks::Kinks>,
}

struct Env {
    ctx: Ctx,
    /// In declaration order (the names a misspelling is compared with).
    locals: Vec<Local>,
    /// The latest local of each name: a lookup per name use must not scan every local
    /// declared so far (100,000 `let`s would make checking quadratic, issue 22).
    latest: HashMap<String, usize>,
    /// Names declared later in the same type (for "used before its definition").
    later: HashMap<String, Span>,
}

impl Env {
    fn new(ctx: Ctx) -> Env {
        Env {
            ctx,
            locals: Vec::new(),
            latest: HashMap::new(),
            later: HashMap::new(),
        }
    }
    /// The local `name` declared last (a second declaration is an error, reported
    /// where it is made; uses see the later one).
    fn find(&self, name: &str) -> Option<&Local> {
        self.latest.get(name).map(|&i| &self.locals[i])
    }
    fn push(&mut self, local: Local) {
        self.latest.insert(local.name.clone(), self.locals.len());
        self.locals.push(local);
    }
}

#[derive(Clone, Copy, PartialEq)]
enum State<T> {
    Todo,
    Busy,
    Done(T),
}

#[derive(Clone, Copy)]
enum Global {
    Param(usize),
    Input(usize),
    Fn(usize),
    Spline(usize),
    Instance(usize),
}

struct TypeEntry<'m> {
    def: &'m TypeDef,
    stdlib: bool,
    state: State<()>,
}

struct Checker<'m> {
    /// The files of the standard library (their names clash with a model's own).
    stdlib_files: Vec<FileId>,
    diags: Vec<Diagnostic>,
    types_of: HashMap<Span, Ty>,
    typedefs: BTreeMap<String, TypeEntry<'m>>,
    /// Shared, not copied, with each instance checked against it (a model of many
    /// instances once cloned a whole type body per instance).
    infos: BTreeMap<String, std::rc::Rc<TypeInfo>>,
    globals: HashMap<String, (Global, Span)>,
    params: Vec<(&'m ParamDecl, State<Ty>)>,
    inputs: Vec<(&'m ParamDecl, State<Ty>)>,
    fns: Vec<(&'m FnDecl, State<Ty>)>,
    /// Per function: the first kink (abs/min/max/if) of its arguments in its body.
    fn_kinks: HashMap<usize, &'static str>,
    splines: Vec<&'m SplineDecl>,
    instances: Vec<&'m Instance>,
    /// Kinks seen while checking the current statement.
    kinks: kinks::Kinks,
    warned: HashSet<Span>,
    /// The `let`s' kinks already warned about (see `kinks`).
    kinks_walked: kinks::Walked,
    /// Names that may have been declared in text lost to a syntax error.
    lost: HashSet<&'m str>,
    /// The declaration of every name use resolved so far.
    resolution: Resolution,
}

/// What the checker hands on: the resolved model, the type of every expression it
/// visited (by span), the declaration of every name use, and its diagnostics.
pub(crate) struct Checked {
    pub model: Model,
    pub types: HashMap<Span, Ty>,
    pub resolution: Resolution,
    pub diags: Vec<Diagnostic>,
}

pub(crate) fn check(modules: &[Module], stdlib_count: usize) -> Checked {
    let mut c = Checker::new(modules, stdlib_count);
    // Pass 1: declare everything, so order across items and files does not matter.
    let mut top = TopLevel::default();
    for (mi, m) in modules.iter().enumerate() {
        for item in &m.items {
            c.declare_item(item, mi < stdlib_count, &mut top);
        }
    }
    // Pass 2: check.
    let model = c.check_all(&top);
    let model = c.collect_model(model);
    Checked {
        model,
        types: c.types_of,
        resolution: c.resolution,
        diags: c.diags,
    }
}

/// The top-level items given at most once (`gravity`, `simulate`) and the model's
/// outputs, as pass 1 finds them.
#[derive(Default)]
struct TopLevel<'m> {
    gravity: Option<&'m Expr>,
    gravity_span: Option<Span>,
    simulate: Option<(Span, &'m Vec<Field>)>,
    outputs: Vec<(&'m Ident, &'m Expr)>,
    shapes: Vec<&'m ShapeDecl>,
}

impl<'m> Checker<'m> {
    fn new(modules: &'m [Module], stdlib_count: usize) -> Checker<'m> {
        Checker {
            stdlib_files: modules[..stdlib_count.min(modules.len())]
                .iter()
                .map(|m| m.file)
                .collect(),
            diags: Vec::new(),
            types_of: HashMap::new(),
            typedefs: BTreeMap::new(),
            infos: BTreeMap::new(),
            globals: HashMap::new(),
            params: Vec::new(),
            inputs: Vec::new(),
            fns: Vec::new(),
            fn_kinks: HashMap::new(),
            splines: Vec::new(),
            instances: Vec::new(),
            kinks: kinks::Kinks::default(),
            warned: HashSet::new(),
            kinks_walked: kinks::Walked::new(),
            lost: modules
                .iter()
                .flat_map(|m| m.maybe_declared.iter().map(String::as_str))
                .collect(),
            resolution: Resolution::default(),
        }
    }

    /// Pass 1 for one item: declares its name (or records a `gravity`, `simulate` or
    /// output).
    fn declare_item(&mut self, item: &'m Item, stdlib: bool, top: &mut TopLevel<'m>) {
        match item {
            Item::TypeDef(t) => {
                if Ty::from_name(&t.name.name).is_some() {
                    self.diags
                        .push(Error::reserved(&t.name, "a type of the language").into_diag());
                } else if let Some(prev) = self.typedefs.get(&t.name.name) {
                    let d = self.duplicate_global(&t.name, prev.def.name.span, "element type");
                    self.diags.push(d);
                } else {
                    self.typedefs.insert(
                        t.name.name.clone(),
                        TypeEntry {
                            def: t,
                            stdlib,
                            state: State::Todo,
                        },
                    );
                }
            }
            Item::Param(p) => {
                let g = Global::Param(self.params.len());
                self.params.push((p, State::Todo));
                self.declare(&p.name, g, "parameter");
            }
            Item::Input(p) => {
                let g = Global::Input(self.inputs.len());
                self.inputs.push((p, State::Todo));
                self.declare(&p.name, g, "input");
            }
            Item::Fn(f) => {
                let g = Global::Fn(self.fns.len());
                self.fns.push((f, State::Todo));
                self.declare(&f.name, g, "function");
            }
            Item::Spline(s) => {
                let g = Global::Spline(self.splines.len());
                self.splines.push(s);
                self.declare(&s.name, g, "spline");
            }
            Item::Instance(i) => {
                let g = Global::Instance(self.instances.len());
                self.instances.push(i);
                self.declare(&i.name, g, i.kind.keyword());
            }
            Item::Gravity { value, span } => {
                if let Some(prev) = top.gravity_span {
                    self.diags.push(
                        Diagnostic::error("E0202", "gravity is given twice")
                            .at(*span, "second `gravity`")
                            .also(prev, "first given here"),
                    );
                } else {
                    top.gravity = Some(value);
                    top.gravity_span = Some(*span);
                }
            }
            Item::Simulate { settings, span } => {
                if let Some((prev, _)) = top.simulate {
                    self.diags.push(
                        Diagnostic::error("E0202", "`simulate` is given twice")
                            .at(*span, "second `simulate` block")
                            .also(prev, "first given here"),
                    );
                } else {
                    top.simulate = Some((*span, settings));
                }
            }
            Item::Output { name, value, .. } => {
                if let Some((prev, _)) = top.outputs.iter().find(|(n, _)| n.name == name.name) {
                    self.diags.push(duplicate(name, prev.span, "output"));
                }
                top.outputs.push((name, value));
            }
            // `for`/`if` items are expanded before checking (`crate::expand`).
            Item::Shape(sh) => top.shapes.push(sh),
            Item::Use { .. } | Item::For(_) | Item::When(_) | Item::Error(_) => {}
        }
    }

    /// Pass 2: every element type, parameter, function, spline and instance, then the
    /// model's outputs, gravity and settings.
    fn check_all(&mut self, top: &TopLevel<'m>) -> Model {
        let mut model = Model::default();
        // Each type after the types of its nested instances: no deep recursion through
        // `type_info` on a long chain of types.
        for n in &self.typedef_order() {
            self.type_info(n, None);
        }
        // In dependency order (forward references are allowed): no deep recursion
        // through `global_param` / `fn_type` on a long chain.
        for d in self.definition_order() {
            match d {
                items::Def::Param(i) => _ = self.global_param(i, false),
                items::Def::Input(i) => _ = self.global_param(i, true),
                items::Def::Fn(i) => _ = self.fn_type(i),
            }
        }
        for i in 0..self.fns.len() {
            self.fn_type(i);
        }
        for i in 0..self.splines.len() {
            let s = self.splines[i];
            self.check_spline(s);
        }
        let env = Env::new(Ctx::Model);
        for i in 0..self.instances.len() {
            let inst = self.instances[i];
            if inst.kind == Kind::Body && !inst.connections.is_empty() {
                self.diags.push(
                    Diagnostic::error(
                        "E0307",
                        format!("body `{}` takes no connections", inst.name.name),
                    )
                    .at(inst.connections_span, "remove these connections"),
                );
            }
            self.check_instance(inst, &env);
        }
        for (name, value) in &top.outputs {
            let v = self.expr(value, &env);
            if !v.ty.is_numeric() {
                self.diags.push(
                    Diagnostic::error(
                        "E0301",
                        format!("output `{}` must be a number, vector or matrix", name.name),
                    )
                    .at(value.span, format!("this is a {}", v.ty)),
                );
            }
            model.outputs.push(((*name).clone(), (*value).clone()));
        }
        if let Some(g) = top.gravity {
            let v = self.expr(g, &env);
            self.expect(g.span, v.ty, Ty::Vec3, "gravity");
            model.gravity = Some(g.clone());
        }
        for sh in &top.shapes {
            self.check_shape(sh, &env);
        }
        if let Some((_, settings)) = top.simulate {
            self.check_simulate(settings, &env);
            model.simulate = settings.clone();
        }
        model
    }

    /// The resolved view: what the checker gathered, in declaration order.
    fn collect_model(&mut self, mut model: Model) -> Model {
        model.types = std::mem::take(&mut self.infos)
            .into_iter()
            .map(|(k, v)| (k, std::rc::Rc::unwrap_or_clone(v)))
            .collect();
        model.params = self.params.iter().map(|p| p.0.clone()).collect();
        model.inputs = self.inputs.iter().map(|p| p.0.clone()).collect();
        model.functions = self.fns.iter().map(|f| f.0.clone()).collect();
        model.splines = self.splines.iter().map(|s| (*s).clone()).collect();
        model.definitions = self.evaluation_order();
        model.instances = self
            .instances
            .iter()
            .map(|i| InstanceInfo {
                kind: i.kind,
                name: i.name.name.clone(),
                type_name: i.ty.name.clone(),
                connections: i.connections.clone(),
                fields: i.fields.clone(),
                span: i.span,
                name_span: i.name.span,
            })
            .collect();
        model
    }
}

/// Small helper for the reserved-name diagnostic.
struct Error;
impl Error {
    fn reserved(name: &Ident, what: &str) -> ReservedDiag {
        ReservedDiag(
            Diagnostic::error("E0213", format!("`{}` is reserved", name.name))
                .at(name.span, format!("`{}` is {what}", name.name))
                .note("choose another name"),
        )
    }
}
struct ReservedDiag(Diagnostic);
impl ReservedDiag {
    fn into_diag(self) -> Diagnostic {
        self.0
    }
}

fn duplicate(name: &Ident, prev: Span, what: &str) -> Diagnostic {
    Diagnostic::error("E0202", format!("{what} `{}` is defined twice", name.name))
        .at(name.span, "defined again here")
        .also(prev, "first defined here")
}

/// A name the language provides: a builtin value or function (cannot be declared).
fn is_builtin(name: &str) -> bool {
    builtins::VALUES.iter().any(|(n, _)| *n == name) || builtins::function(name).is_some()
}

impl<'m> Checker<'m> {
    /// A second top-level declaration of a name. The library's names share the model's
    /// one namespace, so a clash with one of them gets its own wording and a hint.
    fn duplicate_global(&self, name: &Ident, prev: Span, what: &str) -> Diagnostic {
        if self.stdlib_files.contains(&prev.file) && !self.stdlib_files.contains(&name.span.file) {
            Diagnostic::error(
                "E0202",
                format!("`{}` is already a name of the standard library", name.name),
            )
            .at(name.span, format!("this {what} clashes with it"))
            .also(prev, "defined in the standard library here")
            .note(format!(
                "library names are global in every model; rename yours (e.g. `{}_`)",
                name.name
            ))
        } else {
            duplicate(name, prev, what)
        }
    }

    fn declare(&mut self, name: &Ident, g: Global, what: &str) {
        if is_builtin(&name.name) {
            self.diags
                .push(Error::reserved(name, "a built-in name").into_diag());
            return;
        }
        if let Some((_, prev)) = self.globals.get(&name.name) {
            let d = self.duplicate_global(name, *prev, what);
            self.diags.push(d);
            return;
        }
        self.globals.insert(name.name.clone(), (g, name.span));
    }

    fn type_from_name(&mut self, name: &Ident) -> Ty {
        match Ty::from_name(&name.name) {
            Some(t) => t,
            None => {
                self.diags.push(
                    Diagnostic::error("E0216", format!("unknown type `{}`", name.name))
                        .at(name.span, "not a type")
                        .suggest(&name.name, ["scalar", "vec3", "mat3", "quat", "body"])
                        .note("the types are scalar, vec3, mat3, quat and body"),
                );
                Ty::Error
            }
        }
    }

    /// Reports `found` where `want` is needed (silent if either is already an error).
    fn expect(&mut self, span: Span, found: Ty, want: Ty, what: &str) -> bool {
        if found == want || found == Ty::Error || want == Ty::Error {
            return true;
        }
        let code = if want == Ty::Body { "E0306" } else { "E0301" };
        self.diags.push(
            Diagnostic::error(
                code,
                format!("{what} must be {}, found {found}", article(want)),
            )
            .at(span, format!("this is {}", article(found))),
        );
        false
    }
}

impl Global {
    /// The declaration a use of this top-level name refers to.
    fn decl(self) -> Decl {
        match self {
            Global::Param(i) => Decl::Param(i),
            Global::Input(i) => Decl::Input(i),
            Global::Fn(i) => Decl::Fn(i),
            Global::Spline(i) => Decl::Spline(i),
            Global::Instance(i) => Decl::Instance(i),
        }
    }
}

fn info_name_span(info: &TypeInfo) -> Span {
    info.name_span
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

fn component(t: Ty, name: &str) -> Option<Ty> {
    match (t, name) {
        (Ty::Vec3, "x" | "y" | "z") => Some(Ty::Scalar),
        (Ty::Quat, "w" | "x" | "y" | "z") => Some(Ty::Scalar),
        (Ty::Mat3, "x" | "y" | "z") => Some(Ty::Vec3),
        _ => None,
    }
}

fn article(t: Ty) -> String {
    match t {
        Ty::Error => "unknown".to_string(),
        Ty::List(n) => format!("a list of {n}"),
        _ => format!("a {t}"),
    }
}
