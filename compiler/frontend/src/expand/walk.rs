//! Walking the expressions of a statement: rewriting them all (substitution of loop
//! variables and build-time fields) and reading them (which names the structure of an
//! element type depends on).

use crate::ast::*;

/// The statement with `f` applied to each of its expressions. `for`, `if` and nested
/// instances are the caller's (they change the statement list, not one statement).
pub(super) fn map_stmt(s: &Stmt, f: &mut dyn FnMut(&Expr) -> Expr) -> Stmt {
    let kind = match &s.kind {
        StmtKind::Param(p) => StmtKind::Param(ParamDecl {
            default: p.default.as_ref().map(&mut *f),
            ..p.clone()
        }),
        StmtKind::Let { name, ty, value } => StmtKind::Let {
            name: name.clone(),
            ty: ty.clone(),
            value: f(value),
        },
        StmtKind::Constrain(e) => StmtKind::Constrain(f(e)),
        StmtKind::ApplyForce { force, body, at } => StmtKind::ApplyForce {
            force: f(force),
            body: f(body),
            at: at.as_ref().map(&mut *f),
        },
        StmtKind::ApplyTorque { torque, body } => StmtKind::ApplyTorque {
            torque: f(torque),
            body: f(body),
        },
        StmtKind::ApplyBodyTorque { torque, body } => StmtKind::ApplyBodyTorque {
            torque: f(torque),
            body: f(body),
        },
        StmtKind::ApplyGeneralized { value, along } => StmtKind::ApplyGeneralized {
            value: f(value),
            along: f(along),
        },
        StmtKind::State { name, value } => StmtKind::State {
            name: name.clone(),
            value: f(value),
        },
        StmtKind::Output { name, value } => StmtKind::Output {
            name: name.clone(),
            value: f(value),
        },
        StmtKind::CoordinatesGroup { group, args } => StmtKind::CoordinatesGroup {
            group: group.clone(),
            args: args.iter().map(&mut *f).collect(),
        },
        StmtKind::Coordinates(cs) => StmtKind::Coordinates(
            cs.iter()
                .map(|c| Coordinate {
                    initial: c.initial.as_ref().map(&mut *f),
                    ..c.clone()
                })
                .collect(),
        ),
        StmtKind::Kinetic(e) => StmtKind::Kinetic(f(e)),
        StmtKind::Potential(e) => StmtKind::Potential(f(e)),
        other => other.clone(),
    };
    Stmt { kind, span: s.span }
}

/// The expression with `f` applied to each direct sub-expression.
pub(super) fn map_children(e: &Expr, f: &mut dyn FnMut(&Expr) -> Expr) -> Expr {
    let b = |x: &Expr, f: &mut dyn FnMut(&Expr) -> Expr| Box::new(f(x));
    let kind = match &e.kind {
        ExprKind::List(items) => ExprKind::List(items.iter().map(&mut *f).collect()),
        ExprKind::Neg(x) => ExprKind::Neg(b(x, f)),
        ExprKind::Binary(op, x, y) => ExprKind::Binary(*op, b(x, f), b(y, f)),
        ExprKind::Compare(op, x, y) => ExprKind::Compare(*op, b(x, f), b(y, f)),
        ExprKind::If(c, x, y) => ExprKind::If(b(c, f), b(x, f), b(y, f)),
        ExprKind::Call(n, args) => ExprKind::Call(n.clone(), args.iter().map(&mut *f).collect()),
        ExprKind::Member(x, n) => ExprKind::Member(b(x, f), n.clone()),
        ExprKind::Method(x, n, args) => {
            ExprKind::Method(b(x, f), n.clone(), args.iter().map(&mut *f).collect())
        }
        ExprKind::Index(x, i) => ExprKind::Index(b(x, f), b(i, f)),
        other => other.clone(),
    };
    Expr { kind, span: e.span }
}

/// Every expression a statement holds (nested instances: connections and fields;
/// `for`/`if`: bounds, conditions and the statements inside).
pub(super) fn stmt_exprs(s: &Stmt) -> Vec<&Expr> {
    let mut out: Vec<&Expr> = Vec::new();
    match &s.kind {
        StmtKind::Instance(i) => {
            out.extend(&i.index);
            out.extend(&i.connections);
            out.extend(i.fields.iter().map(|f| &f.value));
        }
        StmtKind::For(l) => {
            out.push(&l.from);
            out.push(&l.to);
            out.extend(l.body.iter().flat_map(stmt_exprs));
        }
        StmtKind::When(c) => {
            out.push(&c.cond);
            out.extend(c.then.iter().chain(&c.otherwise).flat_map(stmt_exprs));
        }
        _ => return direct_exprs(s),
    }
    out
}

/// The expressions of a plain statement, by reference.
fn direct_exprs(s: &Stmt) -> Vec<&Expr> {
    match &s.kind {
        StmtKind::Param(p) => p.default.iter().collect(),
        StmtKind::Let { value, .. }
        | StmtKind::State { value, .. }
        | StmtKind::Output { value, .. }
        | StmtKind::Constrain(value)
        | StmtKind::Kinetic(value)
        | StmtKind::Potential(value) => vec![value],
        StmtKind::ApplyForce { force, body, at } => {
            let mut v = vec![force, body];
            v.extend(at);
            v
        }
        StmtKind::ApplyTorque { torque, body } | StmtKind::ApplyBodyTorque { torque, body } => {
            vec![torque, body]
        }
        StmtKind::ApplyGeneralized { value, along } => vec![value, along],
        StmtKind::CoordinatesGroup { args, .. } => args.iter().collect(),
        StmtKind::Coordinates(cs) => cs.iter().filter_map(|c| c.initial.as_ref()).collect(),
        _ => Vec::new(),
    }
}

/// The names an expression reads.
pub(super) fn names(e: &Expr, out: &mut Vec<String>) {
    match &e.kind {
        ExprKind::Name(n) => out.push(n.clone()),
        _ => {
            map_children(e, &mut |c| {
                names(c, out);
                c.clone()
            });
        }
    }
}

/// The names an expression needs at build time: those inside an index `a[...]` and
/// the array `a` itself.
pub(super) fn index_names(e: &Expr, out: &mut Vec<String>) {
    if let ExprKind::Index(base, i) = &e.kind {
        names(i, out);
        let mut root = base.as_ref();
        while let ExprKind::Index(b, i) = &root.kind {
            names(i, out);
            root = b;
        }
        if let ExprKind::Name(n) = &root.kind {
            out.push(n.clone());
        }
    }
    map_children(e, &mut |c| {
        index_names(c, out);
        c.clone()
    });
}
