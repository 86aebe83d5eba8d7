//! The statements of an element type in order: lets, parameters, constraints, loads,
//! energies, state, outputs and nested instances (a joint primitive is inlined into
//! its preset, so its rows and multipliers become the preset's).

use super::*;

/// The value of a hidden slot: at t = 0, or for `at_time(e, T)` first T (parameters
/// only), then e at t = T.
pub(crate) fn eval_hidden(
    g: &Graph,
    h: &Hidden,
    q: &[f64],
    v: &[f64],
    p: &[f64],
) -> Result<Vec<f64>, String> {
    match h.time {
        None => eval_nodes(g, &h.nodes, q, v, p, Time::Initial),
        Some(when) => eval_nodes(g, &[when], q, v, p, Time::Forbidden)
            .and_then(|x| eval_nodes(g, &h.nodes, q, v, p, Time::At(x[0]))),
    }
}

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

pub(crate) fn collect_bodies(e: &Expr, bodies: &HashMap<String, usize>, out: &mut Vec<usize>) {
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
        ExprKind::Index(b, i) => {
            collect_bodies(b, bodies, out);
            collect_bodies(i, bodies, out);
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
pub(crate) fn inlinable(def: &TypeDef) -> bool {
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

pub(crate) fn inline_instance(
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

pub(crate) fn lower_stmts(
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
                    let rate = match &c.rate {
                        Some((_, e)) => lw.expr(e),
                        None => {
                            let z = lw.target.g().constant(0.0);
                            Some(init.with_scalars(&vec![z; size]))
                        }
                    };
                    let Some(rate) = rate else { continue };
                    if rate.scalars().map(|s| s.len()) != Some(size) {
                        lw.error::<()>(
                            c.name.span,
                            format!(
                                "the initial rate of `{}` is not a {}",
                                c.name.name, c.ty.name
                            ),
                        );
                        continue;
                    }
                    let rate_offset = lw.next_param;
                    if lw.hide_value(&rate, c.name.span).is_none() {
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
                    ctx.own_rate.extend(rate_offset..rate_offset + size);
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
            // Unrolled by the front end's expansion before anything is lowered.
            StmtKind::For(_) | StmtKind::When(_) | StmtKind::Error => {}
        }
    }
}
