//! The statements of an element type that declare what its functions read: parameter
//! slots, state, vector-space coordinates and energies.

use super::*;
use fdc_frontend::ast::{Coordinate, Ident, ParamDecl, Stmt};

/// `param` of an inlined primitive: fields were bound by the caller; the rest take
/// their defaults as expressions.
pub(crate) fn inline_param(lw: &mut Lowerer, decl: &ParamDecl, ctx: &mut StmtCtx) {
    // An inlined primitive: fields were bound by the caller; the rest take
    // their defaults as expressions.
    if ctx.bound.contains(&decl.name.name) {
        return;
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

/// `param NAME: T = default;`: a parameter slot of the element (or, for a field that
/// depends on t, the field's expression).
pub(crate) fn param(lw: &mut Lowerer, decl: &ParamDecl, timed: &[Timed], ctx: &mut StmtCtx) {
    if let Some(tf) = timed.iter().find(|f| f.field == decl.name.name) {
        // A field that depends on t is part of the equations: lowered in the scope it
        // was written in — the model's (globals only), or for a nested instance the
        // enclosing type's names it reads, each a parameter slot here — no slot of its own.
        let field = tf.expr;
        let mut scope = HashMap::new();
        for (name, outer) in &tf.captures {
            let size = outer.scalars().map_or(0, |s| s.len());
            let offset = lw.next_param;
            lw.next_param += size;
            let ids: Vec<Id> = (0..size)
                .map(|i| lw.target.g().input(fdc_ir::Slot::P, offset + i))
                .collect();
            scope.insert(name.clone(), outer.with_scalars(&ids));
            ctx.slots.push(ParamSlot {
                name: format!("{}@{name}", tf.field),
                offset,
                size,
                default: None,
                span: field.span,
            });
        }
        let saved = std::mem::replace(&mut lw.scope, scope);
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
        return;
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
        return;
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

/// `state NAME = value;`: the value accepted after each step, kept in a parameter
/// slot (the `param NAME` before it, or one declared here).
pub(crate) fn state(lw: &mut Lowerer, stmt: &Stmt, name: &Ident, value: &Expr, ctx: &mut StmtCtx) {
    ctx.equations = true;
    let slot = ctx
        .slots
        .iter()
        .find(|s: &&ParamSlot| s.name == name.name)
        .cloned();
    let Some(ids) = lw.expr(value).and_then(|v| v.scalars().map(|s| (v, s))) else {
        return;
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
        return;
    }
    if let Target::Element(bl) = &mut lw.target {
        for (i, id) in ids.into_iter().enumerate() {
            bl.state(slot.offset + i, id);
        }
    }
}

/// `coordinates x: T = x0, rate = v0, ...;`: the element's own coordinates, their
/// initial values and rates in parameter slots.
pub(crate) fn coordinates(lw: &mut Lowerer, cs: &[Coordinate], ctx: &mut StmtCtx) {
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

/// `kinetic T;` / `potential V;`: added up per kind; the kinetic energy reads only the
/// element's own coordinates, the potential no velocities.
pub(crate) fn energy(lw: &mut Lowerer, stmt: &Stmt, e: &Expr, ctx: &mut StmtCtx) {
    ctx.equations = true;
    let Some(x) = lw.scalar(e) else { return };
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
        return;
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
        return;
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
