//! What is under the cursor: a walk over the front end's AST. What a name refers to
//! is the checker's link (`Analysis::resolution`, read by `features`), which finds
//! the declaring syntax for hover text through [`target_at`] at the declaration's
//! place; a name the checker did not resolve (one it reported) has no declaration.

use fdc_frontend::ast::*;

/// The syntax node at an offset.
pub enum Target<'a> {
    /// The innermost expression (a name, a literal, an operation...).
    Expr(&'a Expr),
    /// The function name of a call.
    CallName(&'a Ident, &'a Expr),
    /// `b.position` / `b.point(u)`: the member name.
    Member(&'a Ident, &'a Expr),
    /// The element type of an instance.
    TypeName(&'a Ident),
    /// A field name inside an instance's braces.
    FieldName(&'a Ident, &'a Instance),
    /// The name at its own declaration.
    Decl(Decl<'a>),
    /// The path of a `use` item.
    Use(&'a str),
}

/// Where the cursor is, for completion: inside a function (its arguments) and/or an
/// element type.
#[derive(Clone, Copy, Default)]
pub struct Scope<'a> {
    pub func: Option<&'a FnDecl>,
    pub typedef: Option<&'a TypeDef>,
}

/// A declaration a name can refer to.
#[derive(Clone, Copy)]
pub enum Decl<'a> {
    Param(&'a ParamDecl, bool),
    Let(&'a Ident, Option<&'a Ident>, &'a Expr),
    Conn(&'a ConnParam),
    FnArg(&'a Ident, &'a Ident),
    Fn(&'a FnDecl),
    Spline(&'a SplineDecl),
    Instance(&'a Instance),
    State(&'a Ident, &'a Expr),
    Coord(&'a Coordinate),
    Type(&'a TypeDef),
    Output(&'a Ident, &'a Expr),
}

impl<'a> Decl<'a> {
    pub fn ident(&self) -> &'a Ident {
        match *self {
            Decl::Param(p, _) => &p.name,
            Decl::Let(n, _, _) | Decl::State(n, _) | Decl::Output(n, _) => n,
            Decl::Conn(c) => &c.name,
            Decl::FnArg(n, _) => n,
            Decl::Fn(f) => &f.name,
            Decl::Spline(s) => &s.name,
            Decl::Instance(i) => &i.name,
            Decl::Coord(c) => &c.name,
            Decl::Type(t) => &t.name,
        }
    }
}

fn within(span: Span, offset: usize) -> bool {
    span.start as usize <= offset && offset <= span.end as usize
}

/// The node at `offset` in `module`.
pub fn target_at(module: &Module, offset: usize) -> Option<Target<'_>> {
    for item in &module.items {
        if !within(item.span(), offset) {
            continue;
        }
        let hit = match item {
            Item::Param(p) => param(p, false, offset),
            Item::Input(p) => param(p, true, offset),
            Item::Fn(f) => {
                if within(f.name.span, offset) {
                    return Some(Target::Decl(Decl::Fn(f)));
                }
                for (n, t) in &f.args {
                    if within(n.span, offset) {
                        return Some(Target::Decl(Decl::FnArg(n, t)));
                    }
                }
                expr(&f.body, offset)
            }
            Item::Gravity { value, .. } => expr(value, offset),
            Item::Output { name, value, .. } => {
                if within(name.span, offset) {
                    return Some(Target::Decl(Decl::Output(name, value)));
                }
                expr(value, offset)
            }
            Item::Simulate { settings, .. } => settings.iter().find_map(|f| expr(&f.value, offset)),
            Item::Spline(s) => {
                if within(s.name.span, offset) {
                    return Some(Target::Decl(Decl::Spline(s)));
                }
                s.args.iter().find_map(|a| expr(a, offset))
            }
            Item::Instance(i) => instance(i, offset),
            Item::Shape(sh) => std::iter::once(&sh.body)
                .chain(sh.fields.iter().map(|f| &f.value))
                .find_map(|e| expr(e, offset)),
            Item::TypeDef(t) => {
                if within(t.name.span, offset) {
                    return Some(Target::Decl(Decl::Type(t)));
                }
                for c in &t.connections {
                    if within(c.name.span, offset) {
                        return Some(Target::Decl(Decl::Conn(c)));
                    }
                    if let Some(h) = c.default.as_ref().and_then(|d| expr(d, offset)) {
                        return Some(h);
                    }
                }
                t.body.iter().find_map(|st| stmt(st, offset))
            }
            Item::Use { path, .. } => Some(Target::Use(path)),
            // Expanded by the front end; the analysis holds none.
            Item::For(_) | Item::When(_) | Item::Error(_) => None,
        };
        if hit.is_some() {
            return hit;
        }
    }
    None
}

fn param(p: &ParamDecl, input: bool, offset: usize) -> Option<Target<'_>> {
    if within(p.name.span, offset) {
        return Some(Target::Decl(Decl::Param(p, input)));
    }
    p.default.as_ref().and_then(|d| expr(d, offset))
}

fn instance(i: &Instance, offset: usize) -> Option<Target<'_>> {
    if within(i.name.span, offset) {
        return Some(Target::Decl(Decl::Instance(i)));
    }
    if within(i.ty.span, offset) {
        return Some(Target::TypeName(&i.ty));
    }
    if let Some(h) = i.connections.iter().find_map(|c| expr(c, offset)) {
        return Some(h);
    }
    for f in &i.fields {
        if within(f.name.span, offset) {
            return Some(Target::FieldName(&f.name, i));
        }
        if let Some(h) = expr(&f.value, offset) {
            return Some(h);
        }
    }
    None
}

fn stmt(st: &Stmt, offset: usize) -> Option<Target<'_>> {
    if !within(st.span, offset) {
        return None;
    }
    let e = |x| expr(x, offset);
    match &st.kind {
        StmtKind::Param(p) => param(p, false, offset),
        StmtKind::Let { name, ty, value } => {
            if within(name.span, offset) {
                return Some(Target::Decl(Decl::Let(name, ty.as_ref(), value)));
            }
            e(value)
        }
        StmtKind::Constrain(x) | StmtKind::Kinetic(x) | StmtKind::Potential(x) => e(x),
        StmtKind::ApplyForce { force, body, at } => e(force)
            .or_else(|| e(body))
            .or_else(|| at.as_ref().and_then(e)),
        StmtKind::ApplyTorque { torque, body } | StmtKind::ApplyBodyTorque { torque, body } => {
            e(torque).or_else(|| e(body))
        }
        StmtKind::ApplyGeneralized { value, along } => e(value).or_else(|| e(along)),
        StmtKind::State { name, value } => {
            if within(name.span, offset) {
                return Some(Target::Decl(Decl::State(name, value)));
            }
            e(value)
        }
        StmtKind::Output { name, value } => {
            if within(name.span, offset) {
                return Some(Target::Decl(Decl::Output(name, value)));
            }
            e(value)
        }
        StmtKind::CoordinatesGroup { args, .. } => args.iter().find_map(e),
        StmtKind::Coordinates(cs) => {
            for c in cs {
                if within(c.name.span, offset) {
                    return Some(Target::Decl(Decl::Coord(c)));
                }
                if let Some(h) = c.initial.as_ref().and_then(e) {
                    return Some(h);
                }
                if let Some(h) = c.rate.as_ref().and_then(|(_, r)| e(r)) {
                    return Some(h);
                }
            }
            None
        }
        StmtKind::Instance(i) => instance(i, offset),
        StmtKind::For(l) => e(&l.from)
            .or_else(|| e(&l.to))
            .or_else(|| l.body.iter().find_map(|b| stmt(b, offset))),
        StmtKind::When(c) => e(&c.cond).or_else(|| {
            c.then
                .iter()
                .chain(&c.otherwise)
                .find_map(|b| stmt(b, offset))
        }),
        StmtKind::Error => None,
    }
}

fn expr(x: &Expr, offset: usize) -> Option<Target<'_>> {
    if !within(x.span, offset) {
        return None;
    }
    let e = |y| expr(y, offset);
    let inner = match &x.kind {
        ExprKind::List(items) => items.iter().find_map(e),
        ExprKind::Neg(a) => e(a),
        ExprKind::Binary(_, a, b) | ExprKind::Compare(_, a, b) | ExprKind::Index(a, b) => {
            e(a).or_else(|| e(b))
        }
        ExprKind::If(c, a, b) => e(c).or_else(|| e(a)).or_else(|| e(b)),
        ExprKind::Call(name, args) => {
            if within(name.span, offset) {
                return Some(Target::CallName(name, x));
            }
            args.iter().find_map(e)
        }
        ExprKind::Member(base, name) => {
            if within(name.span, offset) {
                return Some(Target::Member(name, x));
            }
            e(base)
        }
        ExprKind::Method(base, name, args) => {
            if within(name.span, offset) {
                return Some(Target::Member(name, x));
            }
            e(base).or_else(|| args.iter().find_map(e))
        }
        ExprKind::Number(_) | ExprKind::Str(_) | ExprKind::Name(_) | ExprKind::Error => None,
    };
    inner.or(Some(Target::Expr(x)))
}

/// The names a statement of an element type declares.
pub fn stmt_decls(st: &Stmt) -> Vec<Decl<'_>> {
    match &st.kind {
        StmtKind::Param(p) => vec![Decl::Param(p, false)],
        StmtKind::Let { name, ty, value } => vec![Decl::Let(name, ty.as_ref(), value)],
        StmtKind::State { name, value } => vec![Decl::State(name, value)],
        StmtKind::Coordinates(cs) => cs.iter().map(Decl::Coord).collect(),
        StmtKind::Instance(i) => vec![Decl::Instance(i)],
        _ => Vec::new(),
    }
}

/// The `i`th top-level instance of the model: the checker lists them as the items
/// come (`Model::instances`).
pub fn top_instance(modules: &[Module], i: usize) -> Option<&Instance> {
    let instances = modules.iter().flat_map(|m| m.items.iter());
    (instances.filter_map(|it| match it {
        Item::Instance(inst) => Some(inst),
        _ => None,
    }))
    .nth(i)
}

/// The element type whose body contains `offset`, if any.
pub fn typedef_at(module: &Module, offset: usize) -> Option<&TypeDef> {
    module.items.iter().find_map(|i| match i {
        Item::TypeDef(t) if within(t.span, offset) => Some(t),
        _ => None,
    })
}
