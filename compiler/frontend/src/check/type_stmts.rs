//! The statements of an element type, one method per kind: what each declares and
//! which types and smoothness each needs.

use super::typedefs::TypeDecls;
use super::*;

impl<'m> Checker<'m> {
    /// One statement of a type body, by kind.
    pub(super) fn type_stmt(&mut self, def: &TypeDef, s: &Stmt, env: &mut Env, d: &mut TypeDecls) {
        match &s.kind {
            StmtKind::Param(p) => self.type_param(p, env, d),
            StmtKind::Let { name, ty, value } => self.type_let(name, ty.as_ref(), value, env),
            StmtKind::Constrain(e) => self.type_constrain(def, e, env),
            StmtKind::ApplyForce { force, body, at } => {
                self.type_force(def, force, body, at.as_ref(), env)
            }
            StmtKind::ApplyTorque { torque, body } | StmtKind::ApplyBodyTorque { torque, body } => {
                self.type_torque(def, torque, body, env)
            }
            StmtKind::ApplyGeneralized { value, along } => {
                self.type_generalized(def, value, along, env)
            }
            StmtKind::State { name, value } => self.type_state(name, value, env, d),
            StmtKind::Output { name, value } => self.type_output(name, value, env, d),
            StmtKind::CoordinatesGroup { group, args } => {
                self.type_group(def, s, group, args, env, d)
            }
            StmtKind::Coordinates(cs) => self.type_coordinates(def, s, cs, env, d),
            StmtKind::Kinetic(e) | StmtKind::Potential(e) => self.type_energy(s, e, env, d),
            StmtKind::Instance(inst) => self.type_instance(inst, env, d),
            StmtKind::For(_) | StmtKind::When(_) | StmtKind::Error => {}
        }
    }
    /// `param NAME: T = default;`: a field of the instances.
    fn type_param(&mut self, p: &ParamDecl, env: &mut Env, d: &mut TypeDecls) {
        let declared = p.ty.as_ref().map(|t| self.type_from_name(t));
        let ty = match (&p.default, declared) {
            (Some(e), d) => {
                let v = self.value_or_array(e, env);
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
                        format!("parameter `{}` needs a type or a default", p.name.name),
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
        self.add_local(env, &p.name, ty, false, Default::default());
        d.params.push(TypeParam {
            name: p.name.name.clone(),
            ty,
            default: p.default.clone(),
            doc: p.doc.clone(),
            span: p.span,
        });
    }

    /// `let NAME = value;`: a local carrying the kinks of its value.
    fn type_let(&mut self, name: &Ident, ty: Option<&Ident>, value: &Expr, env: &mut Env) {
        let v = self.expr(value, env);
        let t = match ty {
            Some(t) => {
                let t = self.type_from_name(t);
                self.expect(value.span, v.ty, t, &format!("`{}`", name.name));
                t
            }
            None => v.ty,
        };
        let kinks = std::mem::take(&mut self.kinks);
        self.add_local(env, name, t, v.dep, kinks);
    }

    /// `constrain phi;`: one scalar row.
    fn type_constrain(&mut self, def: &TypeDef, e: &Expr, env: &Env) {
        let v = self.expr(e, env);
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
                .note("write one `constrain` per component, e.g. `constrain dot(n, d);`"),
            );
        }
        self.warn_kinks("constraint");
    }

    /// `apply force f on b [at u];`
    fn type_force(
        &mut self,
        def: &TypeDef,
        force: &Expr,
        body: &Expr,
        at: Option<&Expr>,
        env: &Env,
    ) {
        let v = self.expr(force, env);
        self.expect_load(force.span, v.ty, &format!("a force of `{}`", def.name.name));
        let b = self.expr(body, env);
        self.expect(
            body.span,
            b.ty,
            Ty::Body,
            &format!("the target of `on` in `{}`", def.name.name),
        );
        if let Some(at) = at {
            let a = self.expr(at, env);
            self.expect(
                at.span,
                a.ty,
                Ty::Vec3,
                "the point of application (body-fixed)",
            );
        }
        self.warn_kinks("force law");
    }

    /// `apply torque m on b;` and `apply body_torque m on b;`
    fn type_torque(&mut self, def: &TypeDef, torque: &Expr, body: &Expr, env: &Env) {
        let v = self.expr(torque, env);
        self.expect_load(
            torque.span,
            v.ty,
            &format!("a torque of `{}`", def.name.name),
        );
        let b = self.expr(body, env);
        self.expect(
            body.span,
            b.ty,
            Ty::Body,
            &format!("the target of `on` in `{}`", def.name.name),
        );
        self.warn_kinks("force law");
    }

    /// `apply generalized s along m;`
    fn type_generalized(&mut self, def: &TypeDef, value: &Expr, along: &Expr, env: &Env) {
        let v = self.expr(value, env);
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
        let m = self.expr(along, env);
        self.expect(along.span, m.ty, Ty::Scalar, "the measure after `along`");
        self.warn_kinks("force law");
    }

    /// `state NAME = value;`
    fn type_state(&mut self, name: &Ident, value: &Expr, env: &mut Env, d: &TypeDecls) {
        let v = self.expr(value, env);
        self.expect_value(value.span, v.ty, &format!("state `{}`", name.name));
        // `param NAME` before it gives the initial value, and the value may
        // use NAME (the last accepted one); otherwise NAME is declared here.
        match d.params.iter().find(|p| p.name == name.name) {
            Some(p) => {
                let want = p.ty;
                self.expect(value.span, v.ty, want, &format!("state `{}`", name.name));
            }
            None => self.add_local(env, name, v.ty, false, Default::default()),
        }
    }

    /// `output NAME = value;`
    fn type_output(&mut self, name: &Ident, value: &Expr, env: &Env, d: &mut TypeDecls) {
        let v = self.expr(value, env);
        self.expect_value(value.span, v.ty, &format!("output `{}`", name.name));
        if let Some(prev) = d.outputs.get(&name.name) {
            self.diags.push(duplicate(name, *prev, "output"));
        }
        d.outputs.insert(name.name.clone(), name.span);
    }

    /// `coordinates rigid(...)` / `euler(...)` of a body type.
    fn type_group(
        &mut self,
        def: &TypeDef,
        s: &Stmt,
        group: &Ident,
        args: &[Expr],
        env: &Env,
        d: &mut TypeDecls,
    ) {
        for a in args {
            self.expr(a, env);
        }
        if !matches!(group.name.as_str(), "rigid" | "euler" | "point") {
            // Counts as the declaration: no second "declares no coordinates".
            d.coord_span.get_or_insert(s.span);
            self.diags.push(
                Diagnostic::error(
                    "E0402",
                    format!("unknown coordinate group `{}`", group.name),
                )
                .at(group.span, "not a group")
                .suggest(&group.name, ["rigid", "euler", "point"])
                .note("the groups the compiler knows are `rigid` (R³×SO(3)), `euler` (Euler parameters) and `point` (R³, a point mass)"),
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
        } else if let Some(prev) = d.coord_span {
            self.coords_twice(s.span, prev);
        } else {
            d.coord_span = Some(s.span);
            self.check_rigid_args(group, args, s.span);
            d.coordinates = Coordinates::Rigid {
                args: args.to_vec(),
            };
        }
    }

    /// `coordinates x: T = x0, rate = v0, ...;` of an `element` type.
    fn type_coordinates(
        &mut self,
        def: &TypeDef,
        s: &Stmt,
        cs: &[Coordinate],
        env: &mut Env,
        d: &mut TypeDecls,
    ) {
        let mut list = Vec::new();
        for c in cs {
            let t = self.type_from_name(&c.ty);
            if !matches!(t, Ty::Scalar | Ty::Vec3 | Ty::Quat | Ty::Error) {
                self.diags.push(
                    Diagnostic::error(
                        "E0301",
                        format!("coordinate `{}` must be scalar, vec3 or quat", c.name.name),
                    )
                    .at(c.ty.span, format!("this is {}", article(t))),
                );
            }
            if let Some(i) = &c.initial {
                let v = self.expr(i, env);
                self.expect(
                    i.span,
                    v.ty,
                    t,
                    &format!("the initial value of `{}`", c.name.name),
                );
            }
            if let Some((key, r)) = &c.rate {
                if key.name != "rate" {
                    self.diags.push(
                        Diagnostic::error(
                            "E0204",
                            format!("a coordinate has no field `{}`", key.name),
                        )
                        .at(key.span, "unknown field")
                        .note(format!(
                            "after a coordinate, `rate = v0` gives its initial rate: `{}: {} = x0, rate = v0`",
                            c.name.name, c.ty.name
                        )),
                    );
                }
                let v = self.expr(r, env);
                self.expect(
                    r.span,
                    v.ty,
                    t,
                    &format!("the initial rate of `{}`", c.name.name),
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
        } else if let Some(prev) = d.coord_span {
            self.coords_twice(s.span, prev);
        } else {
            d.coord_span = Some(s.span);
            for c in cs {
                let t = Ty::from_name(&c.ty.name).unwrap_or(Ty::Error);
                self.add_local(env, &c.name, t, true, Default::default());
            }
            d.coordinates = Coordinates::Vector(list);
        }
    }

    /// `kinetic T;` and `potential V;`
    fn type_energy(&mut self, s: &Stmt, e: &Expr, env: &Env, d: &TypeDecls) {
        let what = if matches!(s.kind, StmtKind::Kinetic(_)) {
            "kinetic"
        } else {
            "potential"
        };
        let v = self.expr(e, env);
        if !matches!(d.coordinates, Coordinates::Vector(_)) {
            self.diags.push(
                Diagnostic::error(
                    "E0401",
                    format!("`{what}` needs vector-space coordinates declared before it"),
                )
                .at(s.span, "no `coordinates x: T, ...;` above")
                .note("energies belong to `element` types with plain coordinates"),
            );
        }
        self.expect(e.span, v.ty, Ty::Scalar, &format!("the {what} energy"));
        self.warn_kinks("energy");
    }

    /// A nested instance (`joint t0: transfix(...) { ... }` inside a type).
    fn type_instance(&mut self, inst: &Instance, env: &Env, d: &mut TypeDecls) {
        if inst.kind == Kind::Body {
            self.diags.push(
                Diagnostic::error("E0401", "a body cannot be declared inside an element type")
                    .at(inst.name.span, "bodies are declared at the top level")
                    .note("connect the element to bodies through its connections instead"),
            );
        }
        match d.nested.get(&inst.name.name) {
            // `t[k]` in a loop: one name per index, told apart when expanded.
            Some(_) if !inst.index.is_empty() => {}
            Some(prev) => self
                .diags
                .push(duplicate(&inst.name, *prev, inst.kind.keyword())),
            None => {}
        }
        d.nested.insert(inst.name.name.clone(), inst.name.span);
        self.check_instance(inst, env);
    }
}
