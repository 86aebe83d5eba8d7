//! What is under the cursor: a walk over the front end's AST. What a name refers to
//! is the checker's link (`Analysis::resolution`, read by `features`); [`resolve`]
//! walks the scopes only for a name the checker did not resolve (one it reported),
//! and for hover text, which needs the declaring syntax.

use fdc_frontend::ast::*;

/// The syntax node at an offset, with the scope it sits in.
pub enum Target<'a> {
    /// The innermost expression (a name, a literal, an operation...).
    Expr(&'a Expr, Scope<'a>),
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

/// Where a name lives: inside a function (its arguments) and/or an element type.
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
    let top = Scope::default();
    for item in &module.items {
        if !within(item.span(), offset) {
            continue;
        }
        let hit = match item {
            Item::Param(p) => param(p, false, offset, top),
            Item::Input(p) => param(p, true, offset, top),
            Item::Fn(f) => {
                if within(f.name.span, offset) {
                    return Some(Target::Decl(Decl::Fn(f)));
                }
                for (n, t) in &f.args {
                    if within(n.span, offset) {
                        return Some(Target::Decl(Decl::FnArg(n, t)));
                    }
                }
                let s = Scope {
                    func: Some(f),
                    typedef: None,
                };
                expr(&f.body, offset, s)
            }
            Item::Gravity { value, .. } => expr(value, offset, top),
            Item::Output { name, value, .. } => {
                if within(name.span, offset) {
                    return Some(Target::Decl(Decl::Output(name, value)));
                }
                expr(value, offset, top)
            }
            Item::Simulate { settings, .. } => {
                settings.iter().find_map(|f| expr(&f.value, offset, top))
            }
            Item::Spline(s) => {
                if within(s.name.span, offset) {
                    return Some(Target::Decl(Decl::Spline(s)));
                }
                s.args.iter().find_map(|a| expr(a, offset, top))
            }
            Item::Instance(i) => instance(i, offset, top),
            Item::Shape(sh) => std::iter::once(&sh.body)
                .chain(sh.fields.iter().map(|f| &f.value))
                .find_map(|e| expr(e, offset, top)),
            Item::TypeDef(t) => {
                if within(t.name.span, offset) {
                    return Some(Target::Decl(Decl::Type(t)));
                }
                let s = Scope {
                    func: None,
                    typedef: Some(t),
                };
                for c in &t.connections {
                    if within(c.name.span, offset) {
                        return Some(Target::Decl(Decl::Conn(c)));
                    }
                    if let Some(h) = c.default.as_ref().and_then(|d| expr(d, offset, top)) {
                        return Some(h);
                    }
                }
                t.body.iter().find_map(|st| stmt(st, offset, s))
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

fn param<'a>(p: &'a ParamDecl, input: bool, offset: usize, s: Scope<'a>) -> Option<Target<'a>> {
    if within(p.name.span, offset) {
        return Some(Target::Decl(Decl::Param(p, input)));
    }
    p.default.as_ref().and_then(|d| expr(d, offset, s))
}

fn instance<'a>(i: &'a Instance, offset: usize, s: Scope<'a>) -> Option<Target<'a>> {
    if within(i.name.span, offset) {
        return Some(Target::Decl(Decl::Instance(i)));
    }
    if within(i.ty.span, offset) {
        return Some(Target::TypeName(&i.ty));
    }
    if let Some(h) = i.connections.iter().find_map(|c| expr(c, offset, s)) {
        return Some(h);
    }
    for f in &i.fields {
        if within(f.name.span, offset) {
            return Some(Target::FieldName(&f.name, i));
        }
        if let Some(h) = expr(&f.value, offset, s) {
            return Some(h);
        }
    }
    None
}

fn stmt<'a>(st: &'a Stmt, offset: usize, s: Scope<'a>) -> Option<Target<'a>> {
    if !within(st.span, offset) {
        return None;
    }
    let e = |x: &'a Expr| expr(x, offset, s);
    match &st.kind {
        StmtKind::Param(p) => param(p, false, offset, s),
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
        StmtKind::Instance(i) => instance(i, offset, s),
        StmtKind::For(l) => e(&l.from)
            .or_else(|| e(&l.to))
            .or_else(|| l.body.iter().find_map(|b| stmt(b, offset, s))),
        StmtKind::When(c) => e(&c.cond).or_else(|| {
            c.then
                .iter()
                .chain(&c.otherwise)
                .find_map(|b| stmt(b, offset, s))
        }),
        StmtKind::Error => None,
    }
}

fn expr<'a>(x: &'a Expr, offset: usize, s: Scope<'a>) -> Option<Target<'a>> {
    if !within(x.span, offset) {
        return None;
    }
    let e = |y: &'a Expr| expr(y, offset, s);
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
    inner.or(Some(Target::Expr(x, s)))
}

/// The declaration `name` refers to at `offset` in `scope`: function arguments, then
/// the element type's connections and earlier statements, then top-level names of
/// every file of the model (they may be used before their definition).
pub fn resolve<'a>(
    modules: &'a [Module],
    name: &str,
    scope: Scope<'a>,
    offset: usize,
) -> Option<Decl<'a>> {
    if let Some(f) = scope.func {
        if let Some((n, t)) = f.args.iter().find(|(n, _)| n.name == name) {
            return Some(Decl::FnArg(n, t));
        }
    }
    if let Some(t) = scope.typedef {
        let mut found = t
            .connections
            .iter()
            .find(|c| c.name.name == name)
            .map(Decl::Conn);
        for st in t.body.iter().filter(|st| (st.span.start as usize) < offset) {
            if let Some(d) = stmt_decls(st).into_iter().find(|d| d.ident().name == name) {
                found = Some(d);
            }
        }
        if found.is_some() {
            return found;
        }
    }
    top_decls(modules).find(|d| d.ident().name == name && !matches!(d, Decl::Type(_)))
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

/// Every top-level declaration of every module (stdlib first, as the front end orders them).
fn top_decls(modules: &[Module]) -> impl Iterator<Item = Decl<'_>> {
    modules.iter().flat_map(|m| m.items.iter()).filter_map(|i| {
        Some(match i {
            Item::Param(p) => Decl::Param(p, false),
            Item::Input(p) => Decl::Param(p, true),
            Item::Fn(f) => Decl::Fn(f),
            Item::Spline(s) => Decl::Spline(s),
            Item::Instance(i) => Decl::Instance(i),
            Item::TypeDef(t) => Decl::Type(t),
            _ => return None,
        })
    })
}

/// The element type whose body contains `offset`, if any.
pub fn typedef_at(module: &Module, offset: usize) -> Option<&TypeDef> {
    module.items.iter().find_map(|i| match i {
        Item::TypeDef(t) if within(t.span, offset) => Some(t),
        _ => None,
    })
}
