//! Element types: their statements in order (names are visible from their declaration
//! on), coordinates, loads, energies, nested instances and the smoothness warnings.

use super::*;

impl<'m> Checker<'m> {
    /// The element types (by name where free to choose), each after the types its
    /// nested instances name.
    pub(super) fn typedef_order(&self) -> Vec<String> {
        let names: Vec<&String> = self.typedefs.keys().collect();
        let index: HashMap<&str, usize> = names
            .iter()
            .enumerate()
            .map(|(k, n)| (n.as_str(), k))
            .collect();
        let deps: Vec<Vec<usize>> = names
            .iter()
            .map(|n| {
                let def = self.typedefs[n.as_str()].def;
                def.body
                    .iter()
                    .filter_map(|st| match &st.kind {
                        StmtKind::Instance(inst) => index.get(inst.ty.name.as_str()).copied(),
                        _ => None,
                    })
                    .collect()
            })
            .collect();
        crate::order::dependency_order(&deps)
            .into_iter()
            .map(|k| names[k].clone())
            .collect()
    }

    /// Checks the element type `name` once and returns it. `from` is the span of the
    /// nested instance that asks for it (to report a type that contains itself).
    pub(super) fn type_info(&mut self, name: &str, from: Option<Span>) -> Option<TypeInfo> {
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

    pub(super) fn check_typedef(&mut self, def: &'m TypeDef, stdlib: bool) -> TypeInfo {
        let mut env = Env::new(if def.inline_instance().is_some() {
            Ctx::Inline
        } else {
            Ctx::Type
        });
        // `for` and `if` around statements are expanded per instance (`crate::expand`);
        // the type itself is checked once with every branch and loop body in it, the
        // loop variables as scalars.
        let body = flat_body(&def.body);
        for s in body.iter().copied() {
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
        for var in loop_vars(&def.body) {
            self.add_local(&mut env, var, Ty::Scalar, false, Vec::new());
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
        for s in body.iter().copied() {
            self.kinks.clear();
            match &s.kind {
                StmtKind::Param(p) => {
                    let declared = p.ty.as_ref().map(|t| self.type_from_name(t));
                    let ty = match (&p.default, declared) {
                        (Some(e), d) => {
                            let v = self.value_or_array(e, &env);
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
                            let v = self.expr(r, &env);
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
                    match nested.get(&inst.name.name) {
                        // `t[k]` in a loop: one name per index, told apart when expanded.
                        Some(_) if !inst.index.is_empty() => {}
                        Some(prev) => {
                            self.diags
                                .push(duplicate(&inst.name, *prev, inst.kind.keyword()))
                        }
                        None => {}
                    }
                    nested.insert(inst.name.name.clone(), inst.name.span);
                    self.check_instance(inst, &env);
                }
                StmtKind::For(_) | StmtKind::When(_) | StmtKind::Error => {}
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

    pub(super) fn coords_twice(&mut self, span: Span, prev: Span) {
        self.diags.push(
            Diagnostic::error("E0402", "coordinates are declared twice")
                .at(span, "second declaration")
                .also(prev, "first declared here"),
        );
    }

    pub(super) fn check_rigid_args(&mut self, group: &Ident, args: &[Expr], span: Span) {
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

    pub(super) fn expect_load(&mut self, span: Span, ty: Ty, what: &str) {
        if ty != Ty::Vec3 && ty != Ty::Error {
            self.diags.push(
                Diagnostic::error("E0305", format!("{what} must be a vec3, found {ty}"))
                    .at(span, format!("this is {}", article(ty)))
                    .note("for a scalar force along a measure use `apply generalized s along m;`"),
            );
        }
    }

    pub(super) fn expect_value(&mut self, span: Span, ty: Ty, what: &str) {
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

    pub(super) fn warn_kinks(&mut self, what: &str) {
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

    pub(super) fn add_local(
        &mut self,
        env: &mut Env,
        name: &Ident,
        ty: Ty,
        dep: bool,
        kinks: Vec<(Span, &'static str)>,
    ) {
        if is_builtin(&name.name) {
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
}

/// The statements of a type body with the bodies of `for` and `if` (both branches)
/// spliced in where they stand.
fn flat_body(body: &[Stmt]) -> Vec<&Stmt> {
    let mut out = Vec::new();
    for s in body {
        match &s.kind {
            StmtKind::For(l) => out.extend(flat_body(&l.body)),
            StmtKind::When(c) => {
                out.extend(flat_body(&c.then));
                out.extend(flat_body(&c.otherwise));
            }
            _ => out.push(s),
        }
    }
    out
}

/// The loop variables of every `for` in a type body.
fn loop_vars(body: &[Stmt]) -> Vec<&Ident> {
    let mut out = Vec::new();
    for s in body {
        match &s.kind {
            StmtKind::For(l) => {
                out.push(&l.var);
                out.extend(loop_vars(&l.body));
            }
            StmtKind::When(c) => {
                out.extend(loop_vars(&c.then));
                out.extend(loop_vars(&c.otherwise));
            }
            _ => {}
        }
    }
    out
}
