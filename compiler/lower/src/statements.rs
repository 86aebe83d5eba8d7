//! The statements of an element type in order: lets, parameters, constraints, loads,
//! energies, state, outputs and nested instances (a joint primitive is inlined into
//! its preset, so its rows and multipliers become the preset's).

use super::stmt_decls::{coordinates, energy, inline_param, param, state};
use super::*;
use fdc_frontend::ast::{Ident, Instance, Stmt};

pub(crate) fn body_ref(lw: &mut Lowerer, e: &Expr) -> Option<BodyRef> {
    match lw.expr(e)? {
        Val::Body(b) => Some(b),
        other => lw.error(e.span, format!("expected a body, found a {}", other.kind())),
    }
}

pub(crate) fn kin_of(b: &mut ElementBuilder, r: BodyRef) -> fdc_diff::BodyKin {
    match r {
        BodyRef::Ground => b.ground(),
        BodyRef::Local(k) => b.body(k),
    }
}

/// Adds a value as result channels: `name` (scalar), `name.x/y/z` (vec3), ...
pub(crate) fn output(lw: &mut Lowerer, name: &str, v: &Val, span: Span) {
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

/// Calls `f` with every name an expression reads and the span of its use (not the
/// names of called functions), in order.
pub(crate) fn visit_names(e: &Expr, f: &mut impl FnMut(&str, Span)) {
    match &e.kind {
        ExprKind::Name(n) => f(n, e.span),
        ExprKind::List(items) | ExprKind::Call(_, items) => {
            items.iter().for_each(|i| visit_names(i, f))
        }
        ExprKind::Neg(a) | ExprKind::Member(a, _) => visit_names(a, f),
        ExprKind::Binary(_, a, b) | ExprKind::Compare(_, a, b) | ExprKind::Index(a, b) => {
            visit_names(a, f);
            visit_names(b, f);
        }
        ExprKind::If(c, a, b) => {
            visit_names(c, f);
            visit_names(a, f);
            visit_names(b, f);
        }
        ExprKind::Method(b, _, args) => {
            visit_names(b, f);
            args.iter().for_each(|i| visit_names(i, f));
        }
        ExprKind::Number(_) | ExprKind::Str(_) | ExprKind::Error => {}
    }
}

/// Whether an expression mentions the time `t` (at top level `t` cannot be shadowed).
pub(crate) fn mentions_time(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Name(n) => n == "t",
        ExprKind::List(items) | ExprKind::Call(_, items) => items.iter().any(mentions_time),
        ExprKind::Neg(a) | ExprKind::Member(a, _) => mentions_time(a),
        ExprKind::Binary(_, a, b) | ExprKind::Compare(_, a, b) | ExprKind::Index(a, b) => {
            mentions_time(a) || mentions_time(b)
        }
        ExprKind::If(c, a, b) => mentions_time(c) || mentions_time(a) || mentions_time(b),
        ExprKind::Method(b, _, args) => mentions_time(b) || args.iter().any(mentions_time),
        ExprKind::Number(_) | ExprKind::Str(_) | ExprKind::Error => false,
    }
}

/// What the statements of one element type (or of a primitive inlined into it) add up to.
#[derive(Default)]
pub(crate) struct StmtCtx {
    pub(crate) slots: Vec<ParamSlot>,
    pub(crate) subs: Vec<Sub>,
    pub(crate) constraint_no: usize,
    pub(crate) n_constraints: usize,
    /// Name prefix of the multipliers and outputs of an inlined primitive (`t0.`).
    pub(crate) prefix: String,
    /// Statements of an inlined primitive: its parameters are bound, not slots.
    pub(crate) inline: bool,
    /// Parameter names the caller bound from fields.
    pub(crate) bound: Vec<String>,
    /// Whether anything contributes to the element functions.
    pub(crate) equations: bool,
    /// Vector-space coordinates declared so far.
    pub(crate) n_own: usize,
    /// Parameter slots of their initial values, one per coordinate.
    pub(crate) own_init: Vec<usize>,
    /// Parameter slots of their initial rates (`rate = v0`, default 0), likewise.
    pub(crate) own_rate: Vec<usize>,
    pub(crate) kinetic: Option<fdc_ir::Id>,
    pub(crate) potential: Option<fdc_ir::Id>,
}

/// A nested instance whose type has only its own equations (a joint primitive) is
/// lowered into the enclosing element: one element per preset instead of one per
/// primitive, so a revolute joint is one function call per evaluation, not five.
pub(crate) fn inlinable(def: &TypeInfo) -> bool {
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

/// Whether a value moves with the state or the time (is more than parameters).
fn moves(lw: &mut Lowerer, ids: &[Id]) -> bool {
    fdc_diff::ad::cone_any(lw.graph(), ids, |op| {
        matches!(op, fdc_ir::Op::Input(slot, _) if slot != fdc_ir::Slot::P)
            || matches!(op, fdc_ir::Op::Sym(_))
    })
}

pub(crate) fn inline_instance(
    lw: &mut Lowerer,
    def: &TypeInfo,
    inst: &Instance,
    ctx: &mut StmtCtx,
) {
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
        let moving = v.scalars().is_some_and(|ids| moves(lw, &ids));
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
    lower_stmts(lw, &def.body, &[], &mut sub);
    lw.scope = saved;
    ctx.equations |= sub.equations;
}

pub(crate) fn lower_stmts(lw: &mut Lowerer, stmts: &[Stmt], timed: &[Timed], ctx: &mut StmtCtx) {
    // The checked element types (borrowed from the model, not from `lw`).
    let globals = lw.globals;
    let types = &globals.model.types;
    for stmt in stmts {
        match &stmt.kind {
            StmtKind::Param(decl) if ctx.inline => inline_param(lw, decl, ctx),
            StmtKind::Param(decl) => param(lw, decl, timed, ctx),
            StmtKind::Let { name, value, .. } => {
                if let Some(v) = lw.expr(value) {
                    lw.scope.insert(name.name.clone(), v);
                }
            }
            StmtKind::Constrain(e) => constrain(lw, e, ctx),
            StmtKind::ApplyForce { force, body, at } => {
                apply_force(lw, force, body, at.as_ref(), ctx)
            }
            StmtKind::ApplyTorque { torque, body } | StmtKind::ApplyBodyTorque { torque, body } => {
                apply_torque(lw, stmt, torque, body, ctx)
            }
            StmtKind::ApplyGeneralized { value, along } => apply_generalized(lw, value, along, ctx),
            StmtKind::State { name, value } => state(lw, stmt, name, value, ctx),
            StmtKind::Output { name, value } => {
                ctx.equations = true;
                if let Some(v) = lw.expr(value) {
                    output(lw, &format!("{}{}", ctx.prefix, name.name), &v, stmt.span);
                }
            }
            StmtKind::CoordinatesGroup { group, args } => {
                coordinates_group(lw, stmt, group, args, ctx)
            }
            StmtKind::Coordinates(cs) => coordinates(lw, cs, ctx),
            StmtKind::Kinetic(e) | StmtKind::Potential(e) => energy(lw, stmt, e, ctx),
            StmtKind::Instance(inst) => match types.get(&inst.ty.name) {
                Some(def) if inlinable(def) => inline_instance(lw, def, inst, ctx),
                def => nested_instance(lw, def, inst, ctx),
            },
            // Unrolled by the front end's expansion before anything is lowered.
            StmtKind::For(_) | StmtKind::When(_) | StmtKind::Error => {}
        }
    }
}

/// `constrain phi;`: one row and its multiplier.
fn constrain(lw: &mut Lowerer, e: &Expr, ctx: &mut StmtCtx) {
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

/// `apply force f on b [at u];`
fn apply_force(lw: &mut Lowerer, force: &Expr, body: &Expr, at: Option<&Expr>, ctx: &mut StmtCtx) {
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

/// `apply torque m on b;` (global) and `apply body_torque m on b;` (body-fixed).
fn apply_torque(lw: &mut Lowerer, stmt: &Stmt, torque: &Expr, body: &Expr, ctx: &mut StmtCtx) {
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

/// `apply generalized s along m;`
fn apply_generalized(lw: &mut Lowerer, value: &Expr, along: &Expr, ctx: &mut StmtCtx) {
    ctx.equations = true;
    if let (Some(s), Some(m)) = (lw.scalar(value), lw.scalar(along)) {
        if let Target::Element(bl) = &mut lw.target {
            bl.generalized(s, m);
        }
    }
}

/// `coordinates rigid(...)` / `euler(...)` / `point(...)`: the body's initial
/// configuration (a point mass has no orientation: identity and no spin).
fn coordinates_group(
    lw: &mut Lowerer,
    stmt: &Stmt,
    group: &Ident,
    args: &[Expr],
    ctx: &mut StmtCtx,
) {
    ctx.equations = true;
    if group.name == "point" && args.len() == 2 {
        let (pos, vel) = (lw.vec3(&args[0]), lw.vec3(&args[1]));
        if let (Some(p), Some(v), Target::Element(bl)) = (pos, vel, &mut lw.target) {
            let g = bl.graph();
            let (one, z) = (g.constant(1.0), g.v3_const([0.0; 3]));
            bl.rigid_body_initial(p, [one, z[0], z[1], z[2]], v, z);
        }
        return;
    }
    if !matches!(group.name.as_str(), "rigid" | "euler") || args.len() != 4 {
        lw.error::<()>(stmt.span, "the coordinate groups are `rigid(...)` and `euler(...)` of (position, orientation, velocity, angular_velocity) and `point(position, velocity)`");
        return;
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

/// A nested instance lowered as an element of its own (a `Sub`).
fn nested_instance(lw: &mut Lowerer, def: Option<&TypeInfo>, inst: &Instance, ctx: &mut StmtCtx) {
    let mut conns = Vec::new();
    for c in &inst.connections {
        if let Some(b) = body_ref(lw, c) {
            conns.push(b);
        }
    }
    let mut fields = Vec::new();
    let mut timed = Vec::new();
    for f in &inst.fields {
        if mentions_time(&f.value) {
            timed.push((f.name.name.clone(), captures(lw, &f.value)));
        } else if let Some(ids) = lw.expr(&f.value).and_then(|v| v.scalars()) {
            fields.push((f.name.name.clone(), ids, f.span));
        }
    }
    if let Some(sub_def) = def {
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
        timed,
    });
}

/// The names of the enclosing type that a time-dependent field of a nested instance
/// reads, with their values (each becomes a parameter slot of the nested type, so the
/// field's expression is lowered there; see [`Timed`]). Only parameters can be passed
/// so: a body, or a value that moves with the state or time, is an error (E0922).
fn captures(lw: &mut Lowerer, e: &Expr) -> Vec<(String, Val)> {
    let mut names: Vec<String> = Vec::new();
    visit_names(e, &mut |n, _| {
        if lw.scope.contains_key(n) && !names.iter().any(|m| m == n) {
            names.push(n.to_string());
        }
    });
    let mut out = Vec::new();
    for n in names {
        let Some(v) = lw.scope.get(&n).cloned() else {
            continue;
        };
        let what = match v.scalars() {
            Some(ids) if !moves(lw, &ids) => {
                out.push((n, v));
                continue;
            }
            Some(_) => "a value that moves with the state or the time".to_string(),
            None => format!("a {}", v.kind()),
        };
        lw.errors.push(LowerError {
            span: Some(e.span),
            message: format!(
                "this field depends on `t` and reads `{n}` of the enclosing type, {what}"
            ),
            code: Some(E_TIMED_READS),
            label: Some(format!("reads `{n}`")),
            hint: Some(
                "a time-dependent field of a nested instance becomes part of that \
                 instance's own equations, which see the enclosing type's parameters as \
                 numbers; pass a body as a connection, a measure of the state through \
                 the nested type's own statements"
                    .into(),
            ),
            ..Default::default()
        });
    }
    out
}

/// E0922: a time-dependent field of a nested instance reads a body or a moving value.
pub(crate) const E_TIMED_READS: &str = "E0922";
