//! Name resolution and type checking over all parsed modules (model files + stdlib),
//! producing the resolved [`Model`] view that lowering uses.
//!
//! Scoping rules (docs/language.md §Names): top-level declarations of every file are
//! one namespace and may be used before their definition; inside an element type,
//! names are visible from their declaration on.

use crate::ast::*;
use crate::diag::Diagnostic;
use crate::Ty;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap, HashSet};

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
}

const BUILTIN_VALUES: &[&str] = &["t", "pi", "gravity", "ground", "self"];
const BUILTIN_FNS: &[(&str, usize)] = &[
    ("sin", 1),
    ("cos", 1),
    ("tan", 1),
    ("sqrt", 1),
    ("exp", 1),
    ("log", 1),
    ("tanh", 1),
    ("abs", 1),
    ("softplus", 1),
    ("atan2", 2),
    ("min", 2),
    ("max", 2),
    ("step", 5),
    ("dot", 2),
    ("cross", 2),
    ("norm", 1),
    ("unit", 1),
    ("skew", 1),
    ("transpose", 1),
    ("diag", 1),
    ("quat", 4),
    ("frame", 1),
    ("rotation", 1),
    ("initial", 1),
    ("at_time", 2),
    ("rate", 1),
];
const BODY_PROPS: &[&str] = &[
    "position",
    "rotation",
    "omega",
    "omega_body",
    "alpha",
    "alpha_body",
];
const BODY_METHODS: &[&str] = &["point", "velocity", "acceleration", "axis", "local"];
const SIM_SCALARS: &[&str] = &[
    "end",
    "step",
    "output_every",
    "alpha",
    "adaptive",
    "step_min",
    "step_max",
];
/// Every key of a `simulate { ... }` block (the editor completes them).
pub const SIM_KEYS: &[&str] = &[
    "end",
    "step",
    "output_every",
    "alpha",
    "adaptive",
    "step_min",
    "step_max",
    "form",
    "newton",
    "linear_solver",
];

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
    kinks: Vec<(Span, &'static str)>,
}

struct Env {
    ctx: Ctx,
    locals: Vec<Local>,
    /// Names declared later in the same type (for "used before its definition").
    later: HashMap<String, Span>,
}

impl Env {
    fn new(ctx: Ctx) -> Env {
        Env {
            ctx,
            locals: Vec::new(),
            later: HashMap::new(),
        }
    }
    fn find(&self, name: &str) -> Option<&Local> {
        self.locals.iter().rev().find(|l| l.name == name)
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
    Spline,
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
    infos: BTreeMap<String, TypeInfo>,
    globals: HashMap<String, (Global, Span)>,
    params: Vec<(&'m ParamDecl, State<Ty>)>,
    inputs: Vec<(&'m ParamDecl, State<Ty>)>,
    fns: Vec<(&'m FnDecl, State<Ty>)>,
    /// Per function: the first kink (abs/min/max/if) of its arguments in its body.
    fn_kinks: HashMap<usize, &'static str>,
    splines: Vec<&'m SplineDecl>,
    instances: Vec<&'m Instance>,
    /// Kinks seen while checking the current statement.
    kinks: Vec<(Span, &'static str)>,
    warned: HashSet<Span>,
    /// Names that may have been declared in text lost to a syntax error.
    lost: HashSet<&'m str>,
}

pub(crate) fn check(
    modules: &[Module],
    stdlib_count: usize,
) -> (Model, HashMap<Span, Ty>, Vec<Diagnostic>) {
    let mut c = Checker {
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
        kinks: Vec::new(),
        warned: HashSet::new(),
        lost: modules
            .iter()
            .flat_map(|m| m.maybe_declared.iter().map(String::as_str))
            .collect(),
    };
    let mut model = Model::default();
    let mut gravity: Option<&Expr> = None;
    let mut gravity_span: Option<Span> = None;
    let mut simulate: Option<(Span, &Vec<Field>)> = None;
    let mut outputs: Vec<(&Ident, &Expr)> = Vec::new();

    // Pass 1: declare everything, so order across items and files does not matter.
    for (mi, m) in modules.iter().enumerate() {
        for item in &m.items {
            match item {
                Item::TypeDef(t) => {
                    if Ty::from_name(&t.name.name).is_some() {
                        c.diags
                            .push(Error::reserved(&t.name, "a type of the language").into_diag());
                    } else if let Some(prev) = c.typedefs.get(&t.name.name) {
                        let d = c.duplicate_global(&t.name, prev.def.name.span, "element type");
                        c.diags.push(d);
                    } else {
                        c.typedefs.insert(
                            t.name.name.clone(),
                            TypeEntry {
                                def: t,
                                stdlib: mi < stdlib_count,
                                state: State::Todo,
                            },
                        );
                    }
                }
                Item::Param(p) => {
                    let g = Global::Param(c.params.len());
                    c.params.push((p, State::Todo));
                    c.declare(&p.name, g, "parameter");
                }
                Item::Input(p) => {
                    let g = Global::Input(c.inputs.len());
                    c.inputs.push((p, State::Todo));
                    c.declare(&p.name, g, "input");
                }
                Item::Fn(f) => {
                    let g = Global::Fn(c.fns.len());
                    c.fns.push((f, State::Todo));
                    c.declare(&f.name, g, "function");
                }
                Item::Spline(s) => {
                    let g = Global::Spline;
                    c.splines.push(s);
                    c.declare(&s.name, g, "spline");
                }
                Item::Instance(i) => {
                    let g = Global::Instance(c.instances.len());
                    c.instances.push(i);
                    c.declare(&i.name, g, i.kind.keyword());
                }
                Item::Gravity { value, span } => {
                    if let Some(prev) = gravity_span {
                        c.diags.push(
                            Diagnostic::error("E0202", "gravity is given twice")
                                .at(*span, "second `gravity`")
                                .also(prev, "first given here"),
                        );
                    } else {
                        gravity = Some(value);
                        gravity_span = Some(*span);
                    }
                }
                Item::Simulate { settings, span } => {
                    if let Some((prev, _)) = simulate {
                        c.diags.push(
                            Diagnostic::error("E0202", "`simulate` is given twice")
                                .at(*span, "second `simulate` block")
                                .also(prev, "first given here"),
                        );
                    } else {
                        simulate = Some((*span, settings));
                    }
                }
                Item::Output { name, value, .. } => {
                    if let Some((prev, _)) = outputs.iter().find(|(n, _)| n.name == name.name) {
                        c.diags.push(duplicate(name, prev.span, "output"));
                    }
                    outputs.push((name, value));
                }
                Item::Use { .. } | Item::Error(_) => {}
            }
        }
    }

    // Pass 2: check.
    let names: Vec<String> = c.typedefs.keys().cloned().collect();
    for n in &names {
        c.type_info(n, None);
    }
    for i in 0..c.params.len() {
        c.global_param(i, false);
    }
    for i in 0..c.inputs.len() {
        c.global_param(i, true);
    }
    for i in 0..c.fns.len() {
        c.fn_type(i);
    }
    for i in 0..c.splines.len() {
        let s = c.splines[i];
        c.check_spline(s);
    }
    let env = Env::new(Ctx::Model);
    for i in 0..c.instances.len() {
        let inst = c.instances[i];
        if inst.kind == Kind::Body && !inst.connections.is_empty() {
            c.diags.push(
                Diagnostic::error(
                    "E0307",
                    format!("body `{}` takes no connections", inst.name.name),
                )
                .at(inst.connections_span, "remove these connections"),
            );
        }
        c.check_instance(inst, &env);
    }
    for (name, value) in &outputs {
        let v = c.expr(value, &env);
        if !v.ty.is_numeric() {
            c.diags.push(
                Diagnostic::error(
                    "E0301",
                    format!("output `{}` must be a number, vector or matrix", name.name),
                )
                .at(value.span, format!("this is a {}", v.ty)),
            );
        }
        model.outputs.push(((*name).clone(), (*value).clone()));
    }
    if let Some(g) = gravity {
        let v = c.expr(g, &env);
        c.expect(g.span, v.ty, Ty::Vec3, "gravity");
        model.gravity = Some(g.clone());
    }
    if let Some((_, settings)) = simulate {
        c.check_simulate(settings, &env);
        model.simulate = settings.clone();
    }

    model.types = std::mem::take(&mut c.infos);
    model.params = c.params.iter().map(|p| p.0.clone()).collect();
    model.inputs = c.inputs.iter().map(|p| p.0.clone()).collect();
    model.functions = c.fns.iter().map(|f| f.0.clone()).collect();
    model.splines = c.splines.iter().map(|s| (*s).clone()).collect();
    model.instances = c
        .instances
        .iter()
        .map(|i| InstanceInfo {
            kind: i.kind,
            name: i.name.name.clone(),
            type_name: i.ty.name.clone(),
            connections: i.connections.clone(),
            fields: i.fields.clone(),
            span: i.span,
        })
        .collect();
    (model, c.types_of, c.diags)
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

fn is_builtin_fn(name: &str) -> bool {
    BUILTIN_FNS.iter().any(|(n, _)| *n == name)
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
        if BUILTIN_VALUES.contains(&name.name.as_str()) || is_builtin_fn(&name.name) {
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

    // ----- top-level params, inputs, functions -------------------------------------

    fn global_param(&mut self, i: usize, input: bool) -> Option<Ty> {
        let (decl, state) = if input {
            self.inputs[i]
        } else {
            self.params[i]
        };
        match state {
            State::Done(t) => return Some(t),
            State::Busy => return None,
            State::Todo => {}
        }
        let set = |c: &mut Self, s: State<Ty>| {
            if input {
                c.inputs[i].1 = s
            } else {
                c.params[i].1 = s
            }
        };
        set(self, State::Busy);
        let declared = decl.ty.as_ref().map(|t| self.type_from_name(t));
        let ty = match &decl.default {
            Some(e) => {
                let v = self.expr(e, &Env::new(Ctx::Model));
                match declared {
                    Some(d) => {
                        self.expect(
                            e.span,
                            v.ty,
                            d,
                            &format!("the value of `{}`", decl.name.name),
                        );
                        d
                    }
                    None => v.ty,
                }
            }
            None => {
                let what = if input { "input" } else { "parameter" };
                self.diags.push(
                    Diagnostic::error("E0403", format!("{what} `{}` has no value", decl.name.name))
                        .at(decl.name.span, "needs `= value`")
                        .note("a top-level parameter or input is given its value where it is declared"),
                );
                declared.unwrap_or(Ty::Error)
            }
        };
        if ty == Ty::Body || !ty.is_numeric() {
            self.diags.push(
                Diagnostic::error(
                    "E0301",
                    format!("`{}` must be a number, vector or matrix", decl.name.name),
                )
                .at(decl.span, format!("this is {}", article(ty))),
            );
        }
        set(self, State::Done(ty));
        Some(ty)
    }

    fn fn_type(&mut self, i: usize) -> Option<Ty> {
        let (decl, state) = self.fns[i];
        match state {
            State::Done(t) => return Some(t),
            State::Busy => return None,
            State::Todo => {}
        }
        self.fns[i].1 = State::Busy;
        let mut env = Env::new(Ctx::Fn);
        for (name, ty) in &decl.args {
            let t = self.type_from_name(ty);
            if let Some(prev) = env.find(&name.name) {
                let d = duplicate(name, prev.span, "argument");
                self.diags.push(d);
            }
            // Arguments count as state-dependent here, so that kinks of the
            // arguments are found; a call reports them when its arguments are.
            env.locals.push(Local {
                name: name.name.clone(),
                ty: t,
                dep: true,
                span: name.span,
                kinks: Vec::new(),
            });
        }
        // This may run in the middle of another statement: keep its kinks apart.
        let outer = std::mem::take(&mut self.kinks);
        let v = self.expr(&decl.body, &env);
        let inner = std::mem::replace(&mut self.kinks, outer);
        if let Some((_, k)) = inner.first() {
            self.fn_kinks.insert(i, k);
        }
        let ty = match &decl.ret {
            Some(r) => {
                let t = self.type_from_name(r);
                self.expect(
                    decl.body.span,
                    v.ty,
                    t,
                    &format!("the result of `{}`", decl.name.name),
                );
                t
            }
            None => v.ty,
        };
        self.fns[i].1 = State::Done(ty);
        Some(ty)
    }

    fn check_spline(&mut self, s: &SplineDecl) {
        let env = Env::new(Ctx::Model);
        match s.method.name.as_str() {
            "akima" | "zcc" => {
                if s.args.len() != 2 {
                    self.diags.push(
                        Diagnostic::error(
                            "E0303",
                            format!(
                                "`{}` takes 2 arguments, found {}",
                                s.method.name,
                                s.args.len()
                            ),
                        )
                        .at(s.span, "expected `(xs, ys)`"),
                    );
                }
                let mut lens = Vec::new();
                for a in &s.args {
                    match &a.kind {
                        ExprKind::List(items) => {
                            for it in items {
                                let v = self.expr(it, &env);
                                self.expect(it.span, v.ty, Ty::Scalar, "spline data");
                            }
                            self.types_of.insert(a.span, Ty::List(items.len()));
                            lens.push((items.len(), a.span));
                        }
                        _ => {
                            self.expr(a, &env);
                            self.diags.push(
                                Diagnostic::error(
                                    "E0215",
                                    "spline data must be a list `[x0, x1, ...]`",
                                )
                                .at(a.span, "not a list"),
                            );
                        }
                    }
                }
                if let [(nx, sx), (ny, sy)] = lens[..] {
                    if nx != ny {
                        self.diags.push(
                            Diagnostic::error(
                                "E0215",
                                format!("spline `{}` has {nx} xs but {ny} ys", s.name.name),
                            )
                            .at(sy, format!("{ny} values"))
                            .also(sx, format!("{nx} values")),
                        );
                    } else if nx < 2 {
                        self.diags.push(
                            Diagnostic::error(
                                "E0215",
                                format!("spline `{}` needs at least 2 points", s.name.name),
                            )
                            .at(sx, format!("{nx} values")),
                        );
                    }
                }
            }
            "table" => {
                let ok = matches!(s.args.len(), 3 | 4)
                    && matches!(s.args[0].kind, ExprKind::Str(_))
                    && s.args[1..]
                        .iter()
                        .all(|a| matches!(a.kind, ExprKind::Number(_)));
                if !ok {
                    self.diags.push(
                        Diagnostic::error("E0215", "`table` takes a file name, two column numbers and optionally a header line count")
                            .at(s.span, "e.g. `table(\"data.txt\", 0, 2, 1)`"),
                    );
                }
            }
            other => self.diags.push(
                Diagnostic::error("E0215", format!("unknown spline method `{other}`"))
                    .at(s.method.span, "not a spline method")
                    .suggest(other, ["akima", "zcc", "table"])
                    .note("the methods are `akima`, `zcc` and `table`"),
            ),
        }
    }

    fn check_simulate(&mut self, settings: &[Field], env: &Env) {
        let mut seen: HashMap<&str, Span> = HashMap::new();
        for f in settings {
            let key = f.name.name.as_str();
            if let Some(prev) = seen.get(key) {
                self.diags.push(
                    Diagnostic::error("E0206", format!("setting `{key}` is given twice"))
                        .at(f.name.span, "given again here")
                        .also(*prev, "first given here"),
                );
            }
            seen.insert(key, f.name.span);
            let bad = |allowed: &str| {
                Diagnostic::error("E0214", format!("invalid value for `{key}`"))
                    .at(f.value.span, "not allowed here")
                    .note(format!("expected {allowed}"))
            };
            if SIM_SCALARS.contains(&key) {
                let v = self.expr(&f.value, env);
                self.expect(f.value.span, v.ty, Ty::Scalar, &format!("`{key}`"));
                continue;
            }
            match key {
                "form" => {
                    if !matches!(&f.value.kind, ExprKind::Name(n) if n == "arnold_bruls" || n == "negrut")
                    {
                        self.diags.push(bad("`arnold_bruls` or `negrut`"));
                    }
                }
                "linear_solver" => {
                    if !matches!(&f.value.kind, ExprKind::Name(n) if n == "sparse" || n == "dense")
                    {
                        self.diags.push(bad("`sparse` or `dense`"));
                    }
                }
                "newton" => match &f.value.kind {
                    ExprKind::Name(n) if n == "legacy" => {}
                    ExprKind::Call(n, args)
                        if (n.name == "velocity" || n.name == "fixed") && args.len() == 1 =>
                    {
                        let v = self.expr(&args[0], env);
                        self.expect(args[0].span, v.ty, Ty::Scalar, "the argument");
                    }
                    _ => self
                        .diags
                        .push(bad("`velocity(tol)`, `legacy` or `fixed(n)`")),
                },
                _ => self.diags.push(
                    Diagnostic::error("E0210", format!("unknown simulate setting `{key}`"))
                        .at(f.name.span, "not a setting")
                        .suggest(key, SIM_KEYS.iter().copied())
                        .note(format!("the settings are {}", SIM_KEYS.join(", "))),
                ),
            }
        }
    }

    // ----- element types ---------------------------------------------------------

    /// Checks the element type `name` once and returns it. `from` is the span of the
    /// nested instance that asks for it (to report a type that contains itself).
    fn type_info(&mut self, name: &str, from: Option<Span>) -> Option<TypeInfo> {
        let entry = self.typedefs.get(name)?;
        match entry.state {
            State::Done(()) => return self.infos.get(name).cloned(),
            State::Busy => {
                let def_span = entry.def.name.span;
                if let Some(span) = from {
                    self.diags.push(
                        Diagnostic::error(
                            "E0404",
                            format!("element type `{name}` contains itself"),
                        )
                        .at(span, "this instance needs the type being defined")
                        .also(def_span, "the type is defined here"),
                    );
                }
                return None;
            }
            State::Todo => {}
        }
        let (def, stdlib) = (entry.def, entry.stdlib);
        if let Some(e) = self.typedefs.get_mut(name) {
            e.state = State::Busy;
        }
        let info = self.check_typedef(def, stdlib);
        self.infos.insert(name.to_string(), info.clone());
        if let Some(e) = self.typedefs.get_mut(name) {
            e.state = State::Done(());
        }
        Some(info)
    }

    fn check_typedef(&mut self, def: &'m TypeDef, stdlib: bool) -> TypeInfo {
        let mut env = Env::new(if def.inline_instance().is_some() {
            Ctx::Inline
        } else {
            Ctx::Type
        });
        for s in &def.body {
            let declared = match &s.kind {
                StmtKind::Param(p) => Some(&p.name),
                StmtKind::Let { name, .. } | StmtKind::State { name, .. } => Some(name),
                _ => None,
            };
            if let Some(n) = declared {
                env.later.entry(n.name.clone()).or_insert(n.span);
            }
            if let StmtKind::Coordinates(cs) = &s.kind {
                for c in cs {
                    env.later.entry(c.name.name.clone()).or_insert(c.name.span);
                }
            }
        }
        if def.kind == Kind::Body {
            if !def.connections.is_empty() {
                self.diags.push(
                    Diagnostic::error(
                        "E0401",
                        format!("body type `{}` cannot have connections", def.name.name),
                    )
                    .at(
                        def.connections[0].name.span,
                        "a body is not connected to anything",
                    )
                    .note("joints, forces, drivers, sensors and elements connect bodies"),
                );
            }
            env.locals.push(Local {
                name: "self".into(),
                ty: Ty::Body,
                dep: true,
                span: def.name.span,
                kinks: Vec::new(),
            });
        }
        for cp in &def.connections {
            let t = self.type_from_name(&cp.ty);
            if t != Ty::Body && t != Ty::Error {
                self.diags.push(
                    Diagnostic::error(
                        "E0301",
                        format!("connection `{}` must be a body", cp.name.name),
                    )
                    .at(cp.ty.span, format!("this is {}", article(t)))
                    .note("values go in `param` declarations; connections are bodies"),
                );
            }
            if let Some(d) = &cp.default {
                let v = self.expr(d, &env);
                self.expect(d.span, v.ty, Ty::Body, "a connection default");
            }
            self.add_local(&mut env, &cp.name, Ty::Body, true, Vec::new());
        }
        let mut params: Vec<TypeParam> = Vec::new();
        let mut coordinates = Coordinates::None;
        let mut coord_span: Option<Span> = None;
        let mut outputs: HashMap<String, Span> = HashMap::new();
        let mut nested: HashMap<String, Span> = HashMap::new();
        for s in &def.body {
            self.kinks.clear();
            match &s.kind {
                StmtKind::Param(p) => {
                    let declared = p.ty.as_ref().map(|t| self.type_from_name(t));
                    let ty = match (&p.default, declared) {
                        (Some(e), d) => {
                            let v = self.expr(e, &env);
                            match d {
                                Some(d) => {
                                    self.expect(
                                        e.span,
                                        v.ty,
                                        d,
                                        &format!("the default of `{}`", p.name.name),
                                    );
                                    d
                                }
                                None => v.ty,
                            }
                        }
                        (None, Some(d)) => d,
                        (None, None) => {
                            self.diags.push(
                                Diagnostic::error(
                                    "E0403",
                                    format!(
                                        "parameter `{}` needs a type or a default",
                                        p.name.name
                                    ),
                                )
                                .at(p.name.span, "type unknown")
                                .note(format!(
                                    "write `param {}: vec3;` (required field) or `param {} = 0;`",
                                    p.name.name, p.name.name
                                )),
                            );
                            Ty::Error
                        }
                    };
                    if ty == Ty::Body {
                        self.diags.push(
                            Diagnostic::error(
                                "E0301",
                                format!("parameter `{}` cannot be a body", p.name.name),
                            )
                            .at(p.span, "bodies are connections")
                            .note("declare it in the connection list: `joint j(b: body) { ... }`"),
                        );
                    }
                    self.add_local(&mut env, &p.name, ty, false, Vec::new());
                    params.push(TypeParam {
                        name: p.name.name.clone(),
                        ty,
                        default: p.default.clone(),
                        doc: p.doc.clone(),
                        span: p.span,
                    });
                }
                StmtKind::Let { name, ty, value } => {
                    let v = self.expr(value, &env);
                    let t = match ty {
                        Some(t) => {
                            let t = self.type_from_name(t);
                            self.expect(value.span, v.ty, t, &format!("`{}`", name.name));
                            t
                        }
                        None => v.ty,
                    };
                    let kinks = std::mem::take(&mut self.kinks);
                    self.add_local(&mut env, name, t, v.dep, kinks);
                }
                StmtKind::Constrain(e) => {
                    let v = self.expr(e, &env);
                    if v.ty != Ty::Scalar && v.ty != Ty::Error {
                        self.diags.push(
                            Diagnostic::error(
                                "E0304",
                                format!(
                                    "a constraint of `{}` must be a scalar, found {}",
                                    def.name.name, v.ty
                                ),
                            )
                            .at(e.span, format!("this is {}", article(v.ty)))
                            .note(
                                "write one `constrain` per component, e.g. `constrain dot(n, d);`",
                            ),
                        );
                    }
                    self.warn_kinks("constraint");
                }
                StmtKind::ApplyForce { force, body, at } => {
                    let v = self.expr(force, &env);
                    self.expect_load(force.span, v.ty, &format!("a force of `{}`", def.name.name));
                    let b = self.expr(body, &env);
                    self.expect(
                        body.span,
                        b.ty,
                        Ty::Body,
                        &format!("the target of `on` in `{}`", def.name.name),
                    );
                    if let Some(at) = at {
                        let a = self.expr(at, &env);
                        self.expect(
                            at.span,
                            a.ty,
                            Ty::Vec3,
                            "the point of application (body-fixed)",
                        );
                    }
                    self.warn_kinks("force law");
                }
                StmtKind::ApplyTorque { torque, body }
                | StmtKind::ApplyBodyTorque { torque, body } => {
                    let v = self.expr(torque, &env);
                    self.expect_load(
                        torque.span,
                        v.ty,
                        &format!("a torque of `{}`", def.name.name),
                    );
                    let b = self.expr(body, &env);
                    self.expect(
                        body.span,
                        b.ty,
                        Ty::Body,
                        &format!("the target of `on` in `{}`", def.name.name),
                    );
                    self.warn_kinks("force law");
                }
                StmtKind::ApplyGeneralized { value, along } => {
                    let v = self.expr(value, &env);
                    if v.ty != Ty::Scalar && v.ty != Ty::Error {
                        self.diags.push(
                            Diagnostic::error(
                                "E0305",
                                format!(
                                    "a generalized force of `{}` must be a scalar, found {}",
                                    def.name.name, v.ty
                                ),
                            )
                            .at(value.span, format!("this is {}", article(v.ty))),
                        );
                    }
                    let m = self.expr(along, &env);
                    self.expect(along.span, m.ty, Ty::Scalar, "the measure after `along`");
                    self.warn_kinks("force law");
                }
                StmtKind::State { name, value } => {
                    let v = self.expr(value, &env);
                    self.expect_value(value.span, v.ty, &format!("state `{}`", name.name));
                    // `param NAME` before it gives the initial value, and the value may
                    // use NAME (the last accepted one); otherwise NAME is declared here.
                    match params.iter().find(|p| p.name == name.name) {
                        Some(p) => {
                            let want = p.ty;
                            self.expect(value.span, v.ty, want, &format!("state `{}`", name.name));
                        }
                        None => self.add_local(&mut env, name, v.ty, false, Vec::new()),
                    }
                }
                StmtKind::Output { name, value } => {
                    let v = self.expr(value, &env);
                    self.expect_value(value.span, v.ty, &format!("output `{}`", name.name));
                    if let Some(prev) = outputs.get(&name.name) {
                        self.diags.push(duplicate(name, *prev, "output"));
                    }
                    outputs.insert(name.name.clone(), name.span);
                }
                StmtKind::CoordinatesGroup { group, args } => {
                    for a in args {
                        self.expr(a, &env);
                    }
                    if !matches!(group.name.as_str(), "rigid" | "euler") {
                        // Counts as the declaration: no second "declares no coordinates".
                        coord_span.get_or_insert(s.span);
                        self.diags.push(
                            Diagnostic::error(
                                "E0402",
                                format!("unknown coordinate group `{}`", group.name),
                            )
                            .at(group.span, "not a group")
                            .suggest(&group.name, ["rigid", "euler"])
                            .note("the groups the compiler knows are `rigid` (R³×SO(3)) and `euler` (Euler parameters)"),
                        );
                    } else if def.kind != Kind::Body {
                        self.diags.push(
                            Diagnostic::error(
                                "E0401",
                                format!(
                                    "`coordinates {}(...)` is only allowed in a body type",
                                    group.name
                                ),
                            )
                            .at(
                                s.span,
                                format!("inside {} type `{}`", def.kind.keyword(), def.name.name),
                            ),
                        );
                    } else if let Some(prev) = coord_span {
                        self.coords_twice(s.span, prev);
                    } else {
                        coord_span = Some(s.span);
                        self.check_rigid_args(group, args, s.span);
                        coordinates = Coordinates::Rigid { args: args.clone() };
                    }
                }
                StmtKind::Coordinates(cs) => {
                    let mut list = Vec::new();
                    for c in cs {
                        let t = self.type_from_name(&c.ty);
                        if !matches!(t, Ty::Scalar | Ty::Vec3 | Ty::Quat | Ty::Error) {
                            self.diags.push(
                                Diagnostic::error(
                                    "E0301",
                                    format!(
                                        "coordinate `{}` must be scalar, vec3 or quat",
                                        c.name.name
                                    ),
                                )
                                .at(c.ty.span, format!("this is {}", article(t))),
                            );
                        }
                        if let Some(i) = &c.initial {
                            let v = self.expr(i, &env);
                            self.expect(
                                i.span,
                                v.ty,
                                t,
                                &format!("the initial value of `{}`", c.name.name),
                            );
                        }
                        list.push((c.name.name.clone(), t, c.initial.clone()));
                    }
                    if def.kind != Kind::Element {
                        self.diags.push(
                            Diagnostic::error("E0401", "vector-space coordinates are only allowed in an `element` type")
                                .at(s.span, format!("inside {} type `{}`", def.kind.keyword(), def.name.name))
                                .note("a rigid body type uses `coordinates rigid(...)`; connectors own no coordinates"),
                        );
                    } else if let Some(prev) = coord_span {
                        self.coords_twice(s.span, prev);
                    } else {
                        coord_span = Some(s.span);
                        for c in cs {
                            let t = Ty::from_name(&c.ty.name).unwrap_or(Ty::Error);
                            self.add_local(&mut env, &c.name, t, true, Vec::new());
                        }
                        coordinates = Coordinates::Vector(list);
                    }
                }
                StmtKind::Kinetic(e) | StmtKind::Potential(e) => {
                    let what = if matches!(s.kind, StmtKind::Kinetic(_)) {
                        "kinetic"
                    } else {
                        "potential"
                    };
                    let v = self.expr(e, &env);
                    if !matches!(coordinates, Coordinates::Vector(_)) {
                        self.diags.push(
                            Diagnostic::error(
                                "E0401",
                                format!(
                                    "`{what}` needs vector-space coordinates declared before it"
                                ),
                            )
                            .at(s.span, "no `coordinates x: T, ...;` above")
                            .note("energies belong to `element` types with plain coordinates"),
                        );
                    }
                    self.expect(e.span, v.ty, Ty::Scalar, &format!("the {what} energy"));
                    self.warn_kinks("energy");
                }
                StmtKind::Instance(inst) => {
                    if inst.kind == Kind::Body {
                        self.diags.push(
                            Diagnostic::error(
                                "E0401",
                                "a body cannot be declared inside an element type",
                            )
                            .at(inst.name.span, "bodies are declared at the top level")
                            .note("connect the element to bodies through its connections instead"),
                        );
                    }
                    if let Some(prev) = nested.get(&inst.name.name) {
                        self.diags
                            .push(duplicate(&inst.name, *prev, inst.kind.keyword()));
                    }
                    nested.insert(inst.name.name.clone(), inst.name.span);
                    self.check_instance(inst, &env);
                }
                StmtKind::Error => {}
            }
        }
        if def.kind == Kind::Body && coord_span.is_none() {
            self.diags.push(
                Diagnostic::error(
                    "E0402",
                    format!("body type `{}` declares no coordinates", def.name.name),
                )
                .at(
                    def.name.span,
                    "needs `coordinates rigid(position, orientation, velocity, angular_velocity);`",
                ),
            );
        }
        TypeInfo {
            kind: def.kind,
            name: def.name.name.clone(),
            doc: def.doc.clone(),
            stdlib,
            params,
            connections: def.connections.clone(),
            coordinates,
            body: def.body.clone(),
            span: def.span,
            name_span: def.name.span,
        }
    }

    fn coords_twice(&mut self, span: Span, prev: Span) {
        self.diags.push(
            Diagnostic::error("E0402", "coordinates are declared twice")
                .at(span, "second declaration")
                .also(prev, "first declared here"),
        );
    }

    fn check_rigid_args(&mut self, group: &Ident, args: &[Expr], span: Span) {
        const WANT: [(Ty, &str); 4] = [
            (Ty::Vec3, "position"),
            (Ty::Quat, "orientation"),
            (Ty::Vec3, "velocity"),
            (Ty::Vec3, "angular velocity"),
        ];
        if args.len() != 4 {
            self.diags.push(
                Diagnostic::error(
                    "E0303",
                    format!("`{}` takes 4 arguments, found {}", group.name, args.len()),
                )
                .at(
                    span,
                    "expected (position, orientation, velocity, angular_velocity)",
                ),
            );
            return;
        }
        for (a, (t, what)) in args.iter().zip(WANT) {
            let found = self.types_of.get(&a.span).copied().unwrap_or(Ty::Error);
            self.expect(a.span, found, t, &format!("the initial {what}"));
        }
    }

    fn expect_load(&mut self, span: Span, ty: Ty, what: &str) {
        if ty != Ty::Vec3 && ty != Ty::Error {
            self.diags.push(
                Diagnostic::error("E0305", format!("{what} must be a vec3, found {ty}"))
                    .at(span, format!("this is {}", article(ty)))
                    .note("for a scalar force along a measure use `apply generalized s along m;`"),
            );
        }
    }

    fn expect_value(&mut self, span: Span, ty: Ty, what: &str) {
        if !ty.is_numeric() {
            self.diags.push(
                Diagnostic::error(
                    "E0301",
                    format!("{what} must be a number, vector or matrix, found {ty}"),
                )
                .at(span, format!("this is {}", article(ty))),
            );
        }
    }

    fn warn_kinks(&mut self, what: &str) {
        let kinks = std::mem::take(&mut self.kinks);
        for (span, f) in kinks {
            if !self.warned.insert(span) {
                continue;
            }
            let hint = match f {
                "abs" => "use a smooth blend such as `sqrt(x^2 + eps^2)`",
                "min" | "max" => {
                    "use a smooth blend built from `softplus` (e.g. `x + softplus(y - x)` for max)"
                }
                _ => "blend the branches smoothly, e.g. with `tanh` or `step`",
            };
            self.diags.push(
                Diagnostic::warning(
                    "W0001",
                    format!("`{f}` of a state-dependent value in a {what} has a kink"),
                )
                .at(span, "not differentiable where its argument crosses the kink")
                .note("the Newton matrix is the exact derivative; at a kink it jumps and Newton may stall")
                .note(hint),
            );
        }
    }

    fn add_local(
        &mut self,
        env: &mut Env,
        name: &Ident,
        ty: Ty,
        dep: bool,
        kinks: Vec<(Span, &'static str)>,
    ) {
        if BUILTIN_VALUES.contains(&name.name.as_str()) || is_builtin_fn(&name.name) {
            self.diags
                .push(Error::reserved(name, "a built-in name").into_diag());
        } else if let Some(prev) = env.find(&name.name) {
            self.diags.push(duplicate(name, prev.span, "name"));
        }
        env.locals.push(Local {
            name: name.name.clone(),
            ty,
            dep,
            span: name.span,
            kinks,
        });
    }

    // ----- instances -------------------------------------------------------------

    fn check_instance(&mut self, inst: &Instance, env: &Env) {
        let conns: Vec<(Val, Span)> = inst
            .connections
            .iter()
            .map(|e| (self.expr(e, env), e.span))
            .collect();
        let field_vals: Vec<Val> = inst
            .fields
            .iter()
            .map(|f| self.expr(&f.value, env))
            .collect();
        for (v, span) in &conns {
            self.expect(*span, v.ty, Ty::Body, "a connection");
        }
        let info = match self.type_info(&inst.ty.name, Some(inst.ty.span)) {
            Some(i) => i,
            None => {
                if !self.typedefs.contains_key(&inst.ty.name)
                    && !self.lost.contains(inst.ty.name.as_str())
                {
                    let candidates: Vec<String> = self
                        .typedefs
                        .iter()
                        .filter(|(_, e)| e.def.kind == inst.kind)
                        .map(|(n, _)| n.clone())
                        .collect();
                    let all: Vec<String> = self.typedefs.keys().cloned().collect();
                    let mut d = Diagnostic::error(
                        "E0203",
                        format!("unknown {} type `{}`", inst.kind.keyword(), inst.ty.name),
                    )
                    .at(inst.ty.span, "no element type of this name");
                    d = match crate::did_you_mean(
                        &inst.ty.name,
                        candidates.iter().map(String::as_str),
                    ) {
                        Some(s) => d.note(format!("did you mean `{s}`?")),
                        None => d.suggest(&inst.ty.name, all.iter().map(String::as_str)),
                    };
                    self.diags.push(d);
                }
                return;
            }
        };
        if info.kind != inst.kind {
            self.diags.push(
                Diagnostic::error(
                    "E0207",
                    format!(
                        "`{}` is a {} type, but `{}` is declared as a {}",
                        info.name,
                        info.kind.keyword(),
                        inst.name.name,
                        inst.kind.keyword()
                    ),
                )
                .at(inst.ty.span, format!("a {} type", info.kind.keyword()))
                .also(info_name_span(&info), "defined here")
                .note(format!(
                    "write `{} {}: {}...`",
                    info.kind.keyword(),
                    inst.name.name,
                    info.name
                )),
            );
        }
        let total = info.connections.len();
        let required = info
            .connections
            .iter()
            .filter(|c| c.default.is_none())
            .count();
        // A body given connections is reported once, by the caller.
        if info.kind != Kind::Body && (conns.len() < required || conns.len() > total) {
            let sig: Vec<String> = info
                .connections
                .iter()
                .map(|c| {
                    if let Some(d) = &c.default {
                        let text = match &d.kind {
                            ExprKind::Name(n) => n.as_str(),
                            _ => "...",
                        };
                        format!("{}: body = {text}", c.name.name)
                    } else {
                        format!("{}: body", c.name.name)
                    }
                })
                .collect();
            let expected = if required == total {
                format!("{total}")
            } else {
                format!("{required} to {total}")
            };
            self.diags.push(
                Diagnostic::error(
                    "E0307",
                    format!(
                        "`{}` connects {expected} bodies, but {} given",
                        info.name,
                        conns.len()
                    ),
                )
                .at(inst.connections_span, format!("{} given", conns.len()))
                .also(info_name_span(&info), "type defined here")
                .note(format!("{}({})", info.name, sig.join(", "))),
            );
        }
        let mut given: HashMap<&str, Span> = HashMap::new();
        for (f, v) in inst.fields.iter().zip(field_vals) {
            if let Some(prev) = given.get(f.name.name.as_str()) {
                self.diags.push(
                    Diagnostic::error("E0206", format!("field `{}` is given twice", f.name.name))
                        .at(f.name.span, "given again here")
                        .also(*prev, "first given here"),
                );
                continue;
            }
            given.insert(&f.name.name, f.name.span);
            match info.param(&f.name.name) {
                Some(p) => {
                    self.expect(
                        f.value.span,
                        v.ty,
                        p.ty,
                        &format!("field `{}`", f.name.name),
                    );
                }
                None => {
                    let mut d = Diagnostic::error(
                        "E0204",
                        format!("`{}` has no field `{}`", info.name, f.name.name),
                    )
                    .at(f.name.span, "unknown field")
                    .suggest(&f.name.name, info.params.iter().map(|p| p.name.as_str()));
                    let names: Vec<&str> = info.params.iter().map(|p| p.name.as_str()).collect();
                    if !names.is_empty() {
                        d = d.note(format!(
                            "the fields of `{}` are {}",
                            info.name,
                            names.join(", ")
                        ));
                    }
                    self.diags.push(d);
                }
            }
        }
        let missing: Vec<&TypeParam> = info
            .params
            .iter()
            .filter(|p| p.default.is_none() && !given.contains_key(p.name.as_str()))
            .collect();
        // After a syntax error inside the braces a field may just have been skipped.
        if !missing.is_empty() && !inst.recovered {
            let names: Vec<String> = missing.iter().map(|p| format!("`{}`", p.name)).collect();
            let mut d = Diagnostic::error(
                "E0205",
                format!(
                    "{} `{}` is missing required field{} {}",
                    inst.kind.keyword(),
                    inst.name.name,
                    if names.len() > 1 { "s" } else { "" },
                    names.join(", ")
                ),
            )
            .at(inst.name.span, "missing fields");
            for p in missing {
                d = d.also(
                    p.span,
                    format!("`{}` declared here without a default", p.name),
                );
            }
            self.diags.push(d);
        }
    }

    // ----- expressions -----------------------------------------------------------

    fn expr(&mut self, e: &Expr, env: &Env) -> Val {
        let v = self.expr_inner(e, env);
        self.types_of.insert(e.span, v.ty);
        v
    }

    fn expr_inner(&mut self, e: &Expr, env: &Env) -> Val {
        let val = |ty, dep| Val { ty, dep };
        match &e.kind {
            ExprKind::Number(_) => val(Ty::Scalar, false),
            ExprKind::Error => val(Ty::Error, false),
            ExprKind::Str(_) => {
                self.diags.push(
                    Diagnostic::error("E0312", "a string is not a value")
                        .at(e.span, "strings only name files (`use`, `table`)"),
                );
                val(Ty::Error, false)
            }
            ExprKind::Name(n) => self.name(n, e.span, env),
            ExprKind::List(items) => {
                let vals: Vec<Val> = items.iter().map(|i| self.expr(i, env)).collect();
                let dep = vals.iter().any(|v| v.dep);
                if vals.iter().any(|v| v.ty == Ty::Error) {
                    return val(Ty::Error, dep);
                }
                if vals.len() == 3 && vals.iter().all(|v| v.ty == Ty::Scalar) {
                    return val(Ty::Vec3, dep);
                }
                if vals.len() == 3 && vals.iter().all(|v| v.ty == Ty::Vec3) {
                    return val(Ty::Mat3, dep);
                }
                let kinds: Vec<String> = vals.iter().map(|v| v.ty.to_string()).collect();
                self.diags.push(
                    Diagnostic::error("E0312", format!("a list of {} is not a value", kinds.len()))
                        .at(e.span, format!("[{}]", kinds.join(", ")))
                        .note("`[a, b, c]` of scalars is a vec3, of three vec3 rows a mat3; other lists are spline data only"),
                );
                val(Ty::Error, dep)
            }
            ExprKind::Neg(x) => {
                let v = self.expr(x, env);
                if !v.ty.is_numeric() {
                    self.bad_operands(e.span, "negate", v.ty, None);
                    return val(Ty::Error, v.dep);
                }
                v
            }
            ExprKind::Binary(op, a, b) => {
                let va = self.expr(a, env);
                let vb = self.expr(b, env);
                let dep = va.dep || vb.dep;
                if va.ty == Ty::Error || vb.ty == Ty::Error {
                    return val(Ty::Error, dep);
                }
                use Ty::*;
                let r = match (op, va.ty, vb.ty) {
                    (BinOp::Add | BinOp::Sub, x, y) if x == y && x.is_numeric() => Some(x),
                    (BinOp::Mul, Scalar, x) | (BinOp::Mul, x, Scalar) if x.is_numeric() => Some(x),
                    (BinOp::Mul, Mat3, Vec3) => Some(Vec3),
                    (BinOp::Mul, Mat3, Mat3) => Some(Mat3),
                    (BinOp::Mul, Quat, Quat) => Some(Quat),
                    (BinOp::Div, x, Scalar) if x.is_numeric() => Some(x),
                    (BinOp::Pow, Scalar, Scalar) => Some(Scalar),
                    _ => None,
                };
                match r {
                    Some(t) => val(t, dep),
                    None => {
                        let verb = match op {
                            BinOp::Add => "add",
                            BinOp::Sub => "subtract",
                            BinOp::Mul => "multiply",
                            BinOp::Div => "divide",
                            BinOp::Pow => "raise",
                        };
                        self.bad_operands(e.span, verb, va.ty, Some(vb.ty));
                        val(Ty::Error, dep)
                    }
                }
            }
            ExprKind::Compare(_, a, b) => {
                self.compare(a, b, env);
                self.diags.push(
                    Diagnostic::error("E0308", "a comparison is only allowed as an `if` condition")
                        .at(e.span, "a condition, not a value")
                        .note("write `if a < b then x else y`"),
                );
                val(Ty::Error, false)
            }
            ExprKind::If(c, a, b) => {
                let cdep = match &c.kind {
                    ExprKind::Compare(_, l, r) => {
                        let d = self.compare(l, r, env);
                        self.types_of.insert(c.span, Ty::Bool);
                        d
                    }
                    _ => {
                        let v = self.expr(c, env);
                        if v.ty != Ty::Error {
                            self.diags.push(
                                Diagnostic::error(
                                    "E0308",
                                    "an `if` condition must be a comparison",
                                )
                                .at(c.span, format!("this is {}", article(v.ty)))
                                .note("compare with `<`, `<=`, `>`, `>=`, `==` or `!=`"),
                            );
                        }
                        v.dep
                    }
                };
                if cdep {
                    self.kinks.push((e.span, "if"));
                }
                let va = self.expr(a, env);
                let vb = self.expr(b, env);
                let dep = cdep || va.dep || vb.dep;
                if va.ty == Ty::Error || vb.ty == Ty::Error {
                    return val(Ty::Error, dep);
                }
                if va.ty != vb.ty {
                    self.diags.push(
                        Diagnostic::error(
                            "E0309",
                            format!(
                                "`if` branches have different types: {} and {}",
                                va.ty, vb.ty
                            ),
                        )
                        .at(b.span, format!("this is {}", article(vb.ty)))
                        .also(a.span, format!("this is {}", article(va.ty))),
                    );
                    return val(Ty::Error, dep);
                }
                val(va.ty, dep)
            }
            ExprKind::Call(name, args) => self.call(name, args, e.span, env),
            ExprKind::Member(base, name) => {
                let b = self.expr(base, env);
                match b.ty {
                    Ty::Error => val(Ty::Error, b.dep),
                    Ty::Body => {
                        if BODY_PROPS.contains(&name.name.as_str()) {
                            let t = if name.name == "rotation" {
                                Ty::Mat3
                            } else {
                                Ty::Vec3
                            };
                            val(t, b.dep)
                        } else if BODY_METHODS.contains(&name.name.as_str()) {
                            self.diags.push(
                                Diagnostic::error(
                                    "E0303",
                                    format!("`{}` of a body takes one vec3 argument", name.name),
                                )
                                .at(name.span, format!("write `{}(u)`", name.name)),
                            );
                            val(Ty::Error, b.dep)
                        } else {
                            self.unknown_member(name);
                            val(Ty::Error, b.dep)
                        }
                    }
                    t => match component(t, &name.name) {
                        Some(ct) => val(ct, b.dep),
                        None => {
                            let comps = match t {
                                Ty::Vec3 | Ty::Mat3 => "`x`, `y`, `z`",
                                Ty::Quat => "`w`, `x`, `y`, `z`",
                                _ => "none",
                            };
                            self.diags.push(
                                Diagnostic::error(
                                    "E0310",
                                    format!("{} has no component `{}`", article(t), name.name),
                                )
                                .at(name.span, "no such component")
                                .note(format!("components of {}: {comps}", t)),
                            );
                            val(Ty::Error, b.dep)
                        }
                    },
                }
            }
            ExprKind::Method(base, name, args) => {
                let b = self.expr(base, env);
                let vals: Vec<Val> = args.iter().map(|a| self.expr(a, env)).collect();
                match b.ty {
                    Ty::Error => val(Ty::Error, b.dep),
                    Ty::Body if BODY_METHODS.contains(&name.name.as_str()) => {
                        if args.len() != 1 {
                            self.diags.push(
                                Diagnostic::error(
                                    "E0303",
                                    format!(
                                        "`{}` takes 1 argument, found {}",
                                        name.name,
                                        args.len()
                                    ),
                                )
                                .at(e.span, "expected one vec3"),
                            );
                            return val(Ty::Error, b.dep);
                        }
                        self.expect(
                            args[0].span,
                            vals[0].ty,
                            Ty::Vec3,
                            &format!("the argument of `{}`", name.name),
                        );
                        // `local` is evaluated at t = 0: a parameter, not a function of the state.
                        let dep = name.name != "local" && (b.dep || vals[0].dep);
                        val(Ty::Vec3, dep)
                    }
                    Ty::Body if BODY_PROPS.contains(&name.name.as_str()) => {
                        self.diags.push(
                            Diagnostic::error(
                                "E0303",
                                format!("`{}` of a body takes no arguments", name.name),
                            )
                            .at(e.span, format!("write `.{}`", name.name)),
                        );
                        val(Ty::Error, b.dep)
                    }
                    Ty::Body => {
                        self.unknown_member(name);
                        val(Ty::Error, b.dep)
                    }
                    t => {
                        self.diags.push(
                            Diagnostic::error(
                                "E0310",
                                format!("{} has no method `{}`", article(t), name.name),
                            )
                            .at(name.span, "only bodies have methods"),
                        );
                        val(Ty::Error, b.dep)
                    }
                }
            }
        }
    }

    fn compare(&mut self, a: &Expr, b: &Expr, env: &Env) -> bool {
        let va = self.expr(a, env);
        let vb = self.expr(b, env);
        self.expect(a.span, va.ty, Ty::Scalar, "a compared value");
        self.expect(b.span, vb.ty, Ty::Scalar, "a compared value");
        va.dep || vb.dep
    }

    fn unknown_member(&mut self, name: &Ident) {
        let all = BODY_PROPS.iter().chain(BODY_METHODS).copied();
        self.diags.push(
            Diagnostic::error("E0211", format!("a body has no member `{}`", name.name))
                .at(name.span, "unknown member")
                .suggest(&name.name, all)
                .note(format!(
                    "members: {}; methods: {}",
                    BODY_PROPS.join(", "),
                    BODY_METHODS.join(", ")
                )),
        );
    }

    fn bad_operands(&mut self, span: Span, verb: &str, a: Ty, b: Option<Ty>) {
        let msg = match b {
            Some(b) => format!("cannot {verb} {} and {}", article(a), article(b)),
            None => format!("cannot {verb} {}", article(a)),
        };
        let mut d = Diagnostic::error("E0302", msg).at(span, "invalid operands");
        if verb == "multiply" && a == Ty::Vec3 && b == Some(Ty::Vec3) {
            d = d.note("use `dot(a, b)` or `cross(a, b)`");
        }
        if verb == "raise" {
            d = d.note("`^` takes a scalar base and a scalar exponent");
        }
        self.diags.push(d);
    }

    fn name(&mut self, n: &str, span: Span, env: &Env) -> Val {
        let val = |ty, dep| Val { ty, dep };
        if let Some(l) = env.find(n) {
            let (ty, dep) = (l.ty, l.dep);
            let kinks = l.kinks.clone();
            self.kinks.extend(kinks);
            return val(ty, dep);
        }
        match n {
            "t" | "pi" => return val(Ty::Scalar, false),
            "gravity" => return val(Ty::Vec3, false),
            "ground" => return val(Ty::Body, false),
            _ => {}
        }
        if env.ctx != Ctx::Type {
            if let Some((g, gspan)) = self.globals.get(n).copied() {
                return match g {
                    Global::Input(_) if env.ctx == Ctx::Inline => {
                        self.diags.push(
                            Diagnostic::error(
                                "E0201",
                                format!("the input `{n}` is not visible in a one-off element"),
                            )
                            .at(span, "an input changes at run time")
                            .note(
                                "write an element type with a field and set the field to the input",
                            ),
                        );
                        val(Ty::Error, false)
                    }
                    Global::Instance(i)
                        if env.ctx == Ctx::Inline && self.instances[i].kind == Kind::Body =>
                    {
                        self.diags.push(
                            Diagnostic::error(
                                "E0306",
                                format!("the body `{n}` is not connected to this element"),
                            )
                            .at(span, "not in the `on(...)` list")
                            .note(format!("connect it: `on(..., {n})`")),
                        );
                        val(Ty::Error, false)
                    }
                    Global::Param(i) | Global::Input(i) => {
                        let input = matches!(g, Global::Input(_));
                        match self.global_param(i, input) {
                            Some(t) => val(t, false),
                            None => {
                                self.diags.push(
                                    Diagnostic::error(
                                        "E0212",
                                        format!("`{n}` is defined in terms of itself"),
                                    )
                                    .at(span, "used here")
                                    .also(gspan, "defined here"),
                                );
                                val(Ty::Error, false)
                            }
                        }
                    }
                    Global::Instance(i) => {
                        let inst = self.instances[i];
                        if inst.kind == Kind::Body {
                            val(Ty::Body, true)
                        } else {
                            self.diags.push(
                                Diagnostic::error(
                                    "E0306",
                                    format!("`{n}` is a {}, not a value", inst.kind.keyword()),
                                )
                                .at(span, "not a value")
                                .also(gspan, "declared here"),
                            );
                            val(Ty::Error, false)
                        }
                    }
                    Global::Fn(_) | Global::Spline => {
                        self.diags.push(
                            Diagnostic::error(
                                "E0311",
                                format!("`{n}` is a function; call it with arguments"),
                            )
                            .at(span, format!("write `{n}(...)`")),
                        );
                        val(Ty::Error, false)
                    }
                };
            }
        }
        if n == "self" {
            self.diags.push(
                Diagnostic::error("E0201", "`self` is only defined inside a body type")
                    .at(span, "no body here"),
            );
            return val(Ty::Error, false);
        }
        if let Some(def) = env.later.get(n) {
            self.diags.push(
                Diagnostic::error("E0212", format!("`{n}` is used before its definition"))
                    .at(span, "used here")
                    .also(*def, "defined later here")
                    .note("inside an element type a name is visible from its declaration on"),
            );
            return val(Ty::Error, false);
        }
        if self.lost.contains(n) {
            // Probably declared in text that a syntax error made the parser skip.
            return val(Ty::Error, false);
        }
        let mut d = Diagnostic::error("E0201", format!("unknown name `{n}`"))
            .at(span, "not found in this scope");
        let mut candidates: Vec<String> = env.locals.iter().map(|l| l.name.clone()).collect();
        candidates.extend(["t", "pi", "gravity", "ground"].map(String::from));
        if env.ctx != Ctx::Type {
            candidates.extend(self.globals.keys().cloned());
        } else if self.globals.contains_key(n) {
            d = d.note(format!(
                "`{n}` is a top-level name; element types see only their own parameters and connections (pass it as a field)"
            ));
        }
        d = d.suggest(n, candidates.iter().map(String::as_str));
        self.diags.push(d);
        val(Ty::Error, false)
    }

    fn call(&mut self, name: &Ident, args: &[Expr], span: Span, env: &Env) -> Val {
        let vals: Vec<Val> = args.iter().map(|a| self.expr(a, env)).collect();
        let dep = vals.iter().any(|v| v.dep);
        let n = name.name.as_str();
        let err = Val { ty: Ty::Error, dep };
        if let Some(l) = env.find(n) {
            let ty = l.ty;
            self.diags.push(
                Diagnostic::error("E0311", format!("`{n}` is {}, not a function", article(ty)))
                    .at(name.span, "not callable"),
            );
            return err;
        }
        // Top-level functions and splines are callable from everywhere.
        if let Some((g, gspan)) = self.globals.get(n).copied() {
            match g {
                Global::Fn(i) => {
                    let decl = self.fns[i].0;
                    if decl.args.len() != args.len() {
                        self.diags.push(
                            Diagnostic::error(
                                "E0303",
                                format!(
                                    "`{n}` takes {} argument{}, found {}",
                                    decl.args.len(),
                                    plural(decl.args.len()),
                                    args.len()
                                ),
                            )
                            .at(span, "wrong number of arguments")
                            .also(decl.name.span, "defined here"),
                        );
                        return err;
                    }
                    for ((a, v), (an, at)) in args.iter().zip(&vals).zip(&decl.args) {
                        if let Some(t) = Ty::from_name(&at.name) {
                            self.expect(
                                a.span,
                                v.ty,
                                t,
                                &format!("argument `{}` of `{n}`", an.name),
                            );
                        }
                    }
                    return match self.fn_type(i) {
                        Some(t) => {
                            if dep {
                                if let Some(k) = self.fn_kinks.get(&i) {
                                    self.kinks.push((span, k));
                                }
                            }
                            Val { ty: t, dep }
                        }
                        None => {
                            self.diags.push(
                                Diagnostic::error("E0212", format!("function `{n}` calls itself"))
                                    .at(span, "recursive call")
                                    .also(gspan, "defined here")
                                    .note("calls are inlined, so a function cannot be recursive"),
                            );
                            err
                        }
                    };
                }
                Global::Spline => {
                    if args.len() != 1 {
                        self.diags.push(
                            Diagnostic::error(
                                "E0303",
                                format!("spline `{n}` takes 1 argument, found {}", args.len()),
                            )
                            .at(span, "expected one scalar"),
                        );
                        return err;
                    }
                    self.expect(
                        args[0].span,
                        vals[0].ty,
                        Ty::Scalar,
                        &format!("the argument of spline `{n}`"),
                    );
                    return Val {
                        ty: Ty::Scalar,
                        dep,
                    };
                }
                _ => {
                    if env.ctx != Ctx::Type {
                        self.diags.push(
                            Diagnostic::error("E0311", format!("`{n}` is not a function"))
                                .at(name.span, "not callable")
                                .also(gspan, "declared here"),
                        );
                        return err;
                    }
                }
            }
        }
        let Some(&(_, arity)) = BUILTIN_FNS.iter().find(|(b, _)| *b == n) else {
            if self.lost.contains(n) {
                return err;
            }
            let mut candidates: Vec<&str> = BUILTIN_FNS.iter().map(|(b, _)| *b).collect();
            let globals: Vec<String> = self
                .globals
                .iter()
                .filter(|(_, (g, _))| matches!(g, Global::Fn(_) | Global::Spline))
                .map(|(k, _)| k.clone())
                .collect();
            candidates.extend(globals.iter().map(String::as_str));
            self.diags.push(
                Diagnostic::error("E0209", format!("unknown function `{n}`"))
                    .at(name.span, "no function of this name")
                    .suggest(n, candidates),
            );
            return err;
        };
        if args.len() != arity {
            self.diags.push(
                Diagnostic::error(
                    "E0303",
                    format!(
                        "`{n}` takes {arity} argument{}, found {}",
                        plural(arity),
                        args.len()
                    ),
                )
                .at(span, "wrong number of arguments"),
            );
            return err;
        }
        if vals.iter().any(|v| v.ty == Ty::Error) {
            return err;
        }
        use Ty::*;
        let tys: Vec<Ty> = vals.iter().map(|v| v.ty).collect();
        let out = match (n, &tys[..]) {
            ("abs" | "min" | "max", ts) if ts.iter().all(|t| *t == Scalar) => {
                if dep {
                    self.kinks.push((
                        span,
                        if n == "abs" {
                            "abs"
                        } else if n == "min" {
                            "min"
                        } else {
                            "max"
                        },
                    ));
                }
                Some(Scalar)
            }
            (_, ts)
                if matches!(
                    n,
                    "sin"
                        | "cos"
                        | "tan"
                        | "sqrt"
                        | "exp"
                        | "log"
                        | "tanh"
                        | "softplus"
                        | "atan2"
                        | "step"
                ) && ts.iter().all(|t| *t == Scalar) =>
            {
                Some(Scalar)
            }
            ("dot", [Vec3, Vec3]) | ("dot", [Quat, Quat]) => Some(Scalar),
            ("cross", [Vec3, Vec3]) => Some(Vec3),
            ("norm", [Vec3]) | ("norm", [Quat]) => Some(Scalar),
            ("unit", [Vec3]) => Some(Vec3),
            ("unit", [Quat]) => Some(Quat),
            ("skew", [Vec3]) | ("diag", [Vec3]) | ("frame", [Vec3]) => Some(Mat3),
            ("transpose", [Mat3]) => Some(Mat3),
            ("quat", [Scalar, Scalar, Scalar, Scalar]) => Some(Quat),
            ("rotation", [Quat]) => Some(Mat3),
            ("initial", [t]) if t.is_numeric() => {
                return Val { ty: *t, dep: false };
            }
            ("at_time", [t, Scalar]) if t.is_numeric() => {
                return Val { ty: *t, dep: false };
            }
            ("rate", [t]) if t.is_numeric() => {
                return Val { ty: *t, dep: true };
            }
            _ => None,
        };
        match out {
            Some(t) => Val { ty: t, dep },
            None => {
                let found: Vec<String> = tys.iter().map(|t| t.to_string()).collect();
                self.diags.push(
                    Diagnostic::error("E0301", format!("`{n}` cannot take ({})", found.join(", ")))
                        .at(span, "argument types do not fit")
                        .note(format!("`{n}` takes {}", builtin_signature(n))),
                );
                err
            }
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

fn builtin_signature(n: &str) -> &'static str {
    match n {
        "dot" => "(vec3, vec3) or (quat, quat)",
        "cross" => "(vec3, vec3)",
        "norm" => "(vec3) or (quat)",
        "unit" => "(vec3) or (quat)",
        "skew" | "diag" | "frame" => "(vec3)",
        "transpose" => "(mat3)",
        "quat" => "(scalar, scalar, scalar, scalar)",
        "rotation" => "(quat)",
        "initial" | "rate" => "a scalar, vec3, mat3 or quat",
        "at_time" => "(e, T): e a scalar, vec3, mat3 or quat, T a scalar",
        "atan2" | "min" | "max" => "(scalar, scalar)",
        "step" => "(x, x0, h0, x1, h1), all scalars",
        _ => "(scalar)",
    }
}
