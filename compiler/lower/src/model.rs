//! The model's own outputs and its `simulate` settings.

use super::*;

impl<'a> Lowering<'a> {
    /// The bodies a model-level expression names, in the order it first names them.
    fn bodies_named(&self, e: &Expr) -> Vec<usize> {
        let mut out = Vec::new();
        visit_names(e, &mut |n, span| {
            if let Some(Decl::Instance(i)) = self.globals.resolution.get(span, n) {
                if let Some(b) = self.body_of[*i].filter(|b| !out.contains(b)) {
                    out.push(b);
                }
            }
        });
        out
    }

    /// `output name = expr;` at model level: an element of its own that connects the
    /// bodies the expression names and has only the `Out` role.
    pub(super) fn model_output(&mut self, name: &str, value: &Expr, span: Span) {
        let used = self.bodies_named(value);
        let names: Vec<String> = used.iter().map(|&b| self.bodies[b].name.clone()).collect();
        let type_name = format!("output {name}");
        let kinds: Vec<BodyKind> = used.iter().map(|&b| self.bodies[b].kind).collect();
        // Pass 1 on a scratch graph counts the hidden slots (`initial`, `.local`, as in
        // the measures of the library), which the builder needs up front.
        let n_params = {
            let mut scratch = Graph::new();
            let mut builder = ElementBuilder::with_bodies(
                &mut scratch,
                &type_name,
                Coordinates::Connector,
                0,
                &kinds,
                0,
            );
            let mut lw = Lowerer::new(&self.globals, Target::Element(&mut builder));
            for (k, n) in names.iter().enumerate() {
                lw.scope.insert(n.clone(), Val::Body(BodyRef::Local(k)));
            }
            let _ = lw.expr(value);
            lw.next_param
        };
        let mut graph = std::mem::take(&mut self.graph);
        let mut builder = ElementBuilder::with_bodies(
            &mut graph,
            &type_name,
            Coordinates::Connector,
            0,
            &kinds,
            n_params,
        );
        let mut lw = Lowerer::new(&self.globals, Target::Element(&mut builder));
        for (k, n) in names.iter().enumerate() {
            lw.scope.insert(n.clone(), Val::Body(BodyRef::Local(k)));
        }
        let v = lw.expr(value);
        if let Some(v) = &v {
            output(&mut lw, "", v, span);
        }
        let errors = std::mem::take(&mut lw.errors);
        let hidden = std::mem::take(&mut lw.hidden);
        drop(lw);
        let (r, how) = self.finish_type(builder);
        self.graph = graph;
        if !errors.is_empty() {
            self.errors.extend(errors);
            return;
        }
        // The hidden slots, in order, from the initial configuration.
        let (q, v0) = self.local_state(&used, None);
        let mut p = vec![f64::NAN; n_params];
        for h in &hidden {
            match self.hidden_value(h, &q, &v0, &p, &used) {
                Ok(x) => p[h.offset..h.offset + x.len()].copy_from_slice(&x),
                Err(msg) => return self.err(span, format!("output `{name}`: {msg}")),
            }
        }
        match r {
            Ok(mut funcs) => {
                // Channels are named after the output itself: `tip`, `tip.x`, ...
                for o in &mut funcs.outputs {
                    *o = o.trim_start_matches('.').to_string();
                }
                let graph = std::mem::take(&mut self.graph);
                let fi = self.push_type(&graph, funcs, how);
                self.graph = graph;
                let _ = self.push_instance(fi, name, p, &used, None);
            }
            Err(e) => self.err(span, e.to_string()),
        }
    }

    pub(super) fn settings(&mut self, items: &[&Item]) -> Settings {
        let mut s = Settings::default();
        // Where `alpha` and `rho_inf` were given: two dampings are one too many.
        let (mut alpha_at, mut rho_at) = (None, None);
        for item in items {
            let Item::Simulate { settings, .. } = item else {
                continue;
            };
            for f in settings {
                let key = f.name.name.as_str();
                match key {
                    "alpha" => alpha_at = Some(f.name.span),
                    "rho_inf" => rho_at = Some(f.name.span),
                    _ => {}
                }
                s.spans.push((key.to_string(), f.value.span));
                let word = match &f.value.kind {
                    ExprKind::Name(n) => Some(n.clone()),
                    _ => None,
                };
                match key {
                    "form" => match word.as_deref() {
                        Some("arnold_bruls" | "negrut") => s.form = word,
                        _ => self.err(f.value.span, "`form` is `arnold_bruls` or `negrut`"),
                    },
                    "assemble" => match word.as_deref() {
                        Some(w @ ("true" | "false")) => s.assemble = Some(w == "true"),
                        _ => self.err(f.value.span, "`assemble` is `true` or `false`"),
                    },
                    "given" => {
                        let items = match &f.value.kind {
                            ExprKind::List(items) => items.as_slice(),
                            _ => std::slice::from_ref(&f.value),
                        };
                        let mut names = Vec::new();
                        for e in items {
                            match given_name(e) {
                                Some(n) => names.push(n),
                                None => self.err(e.span, "`given` lists body instances"),
                            }
                        }
                        s.given = names;
                    }
                    "output_exact" => match word.as_deref() {
                        Some(w @ ("true" | "false")) => s.output_exact = Some(w == "true"),
                        _ => self.err(f.value.span, "`output_exact` is `true` or `false`"),
                    },
                    "linear_solver" => match word.as_deref() {
                        Some("sparse" | "dense") => s.linear_solver = word,
                        _ => self.err(f.value.span, "`linear_solver` is `sparse` or `dense`"),
                    },
                    "newton" => {
                        s.newton = match &f.value.kind {
                            ExprKind::Name(n) if n == "legacy" => Some(NewtonSetting::Legacy),
                            ExprKind::Call(c, args)
                                if args.len() == 1
                                    && (c.name == "velocity" || c.name == "fixed") =>
                            {
                                let x = self.numeric(&args[0]).and_then(|x| x.first().copied());
                                match (c.name.as_str(), x) {
                                    ("velocity", Some(tol)) => Some(NewtonSetting::Velocity(tol)),
                                    ("fixed", Some(n)) if n >= 1.0 && n.fract() == 0.0 => {
                                        Some(NewtonSetting::Fixed(n as usize))
                                    }
                                    _ => {
                                        self.err(f.value.span, "`newton` is `velocity(tol)`, `legacy` or `fixed(n)` with n ≥ 1");
                                        None
                                    }
                                }
                            }
                            _ => {
                                self.err(
                                    f.value.span,
                                    "`newton` is `velocity(tol)`, `legacy` or `fixed(n)`",
                                );
                                None
                            }
                        }
                    }
                    _ => {
                        let x = self
                            .numeric(&f.value)
                            .and_then(|x| (x.len() == 1).then(|| x[0]));
                        let slot = match key {
                            "end" => &mut s.end,
                            "step" => &mut s.step,
                            "output_every" => &mut s.output_every,
                            "alpha" => &mut s.alpha,
                            "rho_inf" => &mut s.rho_inf,
                            "adaptive" => &mut s.adaptive,
                            "atol" => &mut s.atol,
                            "step_min" => &mut s.step_min,
                            "step_max" => &mut s.step_max,
                            _ => {
                                self.err(f.name.span, format!("unknown simulate setting `{key}`"));
                                continue;
                            }
                        };
                        *slot = x;
                    }
                }
            }
        }
        if let (Some(_), Some(at)) = (alpha_at, rho_at) {
            self.errors.push(LowerError {
                span: Some(at),
                message: "`alpha` and `rho_inf` both set the numerical damping".into(),
                label: Some("the second damping setting".into()),
                hint: Some(
                    "keep one: `rho_inf` (generalized-alpha) or `alpha` (HHT, legacy)".into(),
                ),
                ..Default::default()
            });
        }
        s
    }
}

/// An entry of `given` as the runtime names it: `crank`, `pend.omega_body.z`.
fn given_name(e: &Expr) -> Option<String> {
    match &e.kind {
        ExprKind::Name(n) => Some(n.clone()),
        ExprKind::Member(b, m) => Some(format!("{}.{}", given_name(b)?, m.name)),
        _ => None,
    }
}
