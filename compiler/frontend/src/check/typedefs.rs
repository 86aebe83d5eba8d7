//! Element types: their statements in order (names are visible from their declaration
//! on), coordinates, loads, energies, nested instances and the smoothness warnings.

use super::*;

impl<'m> Checker<'m> {
    /// The element types (by name where free to choose), each after the types its
    /// nested instances name.
    pub(super) fn typedef_order(&self) -> Vec<String> {
        let types = (self.typedefs.iter()).map(|(n, t)| (n.as_str(), &t.def.body[..]));
        (crate::order::nesting_order(types).into_iter())
            .map(str::to_string)
            .collect()
    }

    /// Checks the element type `name` once and returns it. `from` is the span of the
    /// nested instance that asks for it (to report a type that contains itself).
    pub(super) fn type_info(
        &mut self,
        name: &str,
        from: Option<Span>,
    ) -> Option<std::rc::Rc<TypeInfo>> {
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
        let info = std::rc::Rc::new(self.check_typedef(def, stdlib));
        self.infos.insert(name.to_string(), info.clone());
        if let Some(e) = self.typedefs.get_mut(name) {
            e.state = State::Done(());
        }
        Some(info)
    }

    pub(super) fn check_typedef(&mut self, def: &'m TypeDef, stdlib: bool) -> TypeInfo {
        // `for` and `if` around statements are expanded per instance (`crate::expand`);
        // the type itself is checked once with every branch and loop body in it, the
        // loop variables as scalars.
        let body = flat_body(&def.body);
        let mut env = self.type_env(def, &body);
        let mut d = TypeDecls {
            params: Vec::new(),
            coordinates: Coordinates::None,
            coord_span: None,
            outputs: HashMap::new(),
            nested: HashMap::new(),
        };
        for s in body.iter().copied() {
            self.kinks.clear();
            self.type_stmt(def, s, &mut env, &mut d);
        }
        if def.kind == Kind::Body && d.coord_span.is_none() {
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
            params: d.params,
            connections: def.connections.clone(),
            coordinates: d.coordinates,
            body: def.body.clone(),
            span: def.span,
            name_span: def.name.span,
        }
    }

    /// The scope a type's statements start in: its connections (and `self` in a body
    /// type), its loop variables, and every name declared later in it (for "used
    /// before its definition").
    fn type_env(&mut self, def: &TypeDef, body: &[&Stmt]) -> Env {
        let mut env = Env::new(if def.inline_instance().is_some() {
            Ctx::Inline
        } else {
            Ctx::Type
        });
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
            env.push(Local {
                name: "self".into(),
                ty: Ty::Body,
                dep: true,
                span: def.name.span,
                kinks: Default::default(),
            });
        }
        for var in loop_vars(&def.body) {
            self.add_local(&mut env, var, Ty::Scalar, false, Default::default());
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
            self.add_local(&mut env, &cp.name, Ty::Body, true, Default::default());
        }
        env
    }

    pub(super) fn coords_twice(&mut self, span: Span, prev: Span) {
        self.diags.push(
            Diagnostic::error("E0402", "coordinates are declared twice")
                .at(span, "second declaration")
                .also(prev, "first declared here"),
        );
    }

    pub(super) fn check_rigid_args(&mut self, group: &Ident, args: &[Expr], span: Span) {
        const RIGID: [(Ty, &str); 4] = [
            (Ty::Vec3, "position"),
            (Ty::Quat, "orientation"),
            (Ty::Vec3, "velocity"),
            (Ty::Vec3, "angular velocity"),
        ];
        // A point mass has no rotation: only its position and velocity.
        const POINT: [(Ty, &str); 2] = [(Ty::Vec3, "position"), (Ty::Vec3, "velocity")];
        let (want, expected): (&[(Ty, &str)], &str) = if group.name == "point" {
            (&POINT, "expected (position, velocity)")
        } else {
            (
                &RIGID,
                "expected (position, orientation, velocity, angular_velocity)",
            )
        };
        if args.len() != want.len() {
            self.diags.push(
                Diagnostic::error(
                    "E0303",
                    format!(
                        "`{}` takes {} arguments, found {}",
                        group.name,
                        want.len(),
                        args.len()
                    ),
                )
                .at(span, expected),
            );
            return;
        }
        for (a, &(t, what)) in args.iter().zip(want) {
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
        let kinks = std::mem::take(&mut self.kinks).spans(&mut self.kinks_walked);
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
        kinks: kinks::Kinks,
    ) {
        if is_builtin(&name.name) {
            self.diags
                .push(Error::reserved(name, "a built-in name").into_diag());
        } else if let Some(prev) = env.find(&name.name) {
            self.diags.push(duplicate(name, prev.span, "name"));
        }
        env.push(Local {
            name: name.name.clone(),
            ty,
            dep,
            span: name.span,
            kinks: std::rc::Rc::new(kinks),
        });
    }
}

/// What the statements of one element type declare, gathered in order.
pub(super) struct TypeDecls {
    pub(super) params: Vec<TypeParam>,
    pub(super) coordinates: Coordinates,
    /// The first coordinate declaration (a second one is an error).
    pub(super) coord_span: Option<Span>,
    pub(super) outputs: HashMap<String, Span>,
    pub(super) nested: HashMap<String, Span>,
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
