//! Top-level items: model parameters and inputs (typed on first use, so they may be
//! used before their definition), functions (typed by their body; recursion is an
//! error), and instances of element types (connections and fields).

use super::*;

/// A top-level definition the checker types on its own.
#[derive(Clone, Copy, Debug)]
pub(super) enum Def {
    Param(usize),
    Input(usize),
    Fn(usize),
}

/// A model-level definition with a value: an index into [`Model::params`], `inputs`
/// or `splines`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Definition {
    Param(usize),
    Input(usize),
    Spline(usize),
}

impl<'m> Checker<'m> {
    /// The params, inputs and splines of the model, each after the ones its value
    /// names, also through the functions it calls: the order lowering evaluates them in
    /// ([`Model::definitions`]). Ties keep source order (files in the order read, then
    /// by place), so the values and their errors come as the items do. Iterative, so a
    /// long chain of definitions costs no stack; a cycle (reported by the typing) only
    /// puts its nodes last.
    pub(super) fn evaluation_order(&self) -> Vec<Definition> {
        let param = |d: Definition, p: &'m ParamDecl| (d, p.span, p.default.iter().collect());
        let mut defs: Vec<(Definition, Span, Vec<&'m Expr>)> = (self.params.iter().enumerate())
            .map(|(i, p)| param(Definition::Param(i), p.0))
            .chain((self.inputs.iter().enumerate()).map(|(i, p)| param(Definition::Input(i), p.0)))
            .chain(
                (self.splines.iter().enumerate())
                    .map(|(i, s)| (Definition::Spline(i), s.span, s.args.iter().collect())),
            )
            .collect();
        defs.sort_by_key(|d| (d.1.file, d.1.start));
        let mut node = HashMap::new();
        for (k, d) in defs.iter().enumerate() {
            node.insert(d.0, k);
        }
        let deps: Vec<Vec<usize>> = defs
            .iter()
            .map(|d| {
                let (mut exprs, mut ds) = (d.2.clone(), Vec::new());
                let mut seen_fns = std::collections::HashSet::new();
                while let Some(e) = exprs.pop() {
                    crate::order::for_each_name(e, |n| {
                        let def = match self.globals.get(n) {
                            Some((Global::Param(j), _)) => Definition::Param(*j),
                            Some((Global::Input(j), _)) => Definition::Input(*j),
                            Some((Global::Spline(j), _)) => Definition::Spline(*j),
                            Some((Global::Fn(j), _)) => {
                                if seen_fns.insert(*j) {
                                    exprs.push(&self.fns[*j].0.body);
                                }
                                return;
                            }
                            _ => return,
                        };
                        ds.push(node[&def]);
                    });
                }
                ds
            })
            .collect();
        crate::order::dependency_order(&deps)
            .into_iter()
            .map(|k| defs[k].0)
            .collect()
    }

    /// Params, inputs and functions, each after the ones its value or body names:
    /// typed in this order, none recurses deeply into another (a chain of 100,000
    /// definitions in either order costs no stack).
    pub(super) fn definition_order(&self) -> Vec<Def> {
        let (np, ni) = (self.params.len(), self.inputs.len());
        let node = |d: &Def| match *d {
            Def::Param(i) => i,
            Def::Input(i) => np + i,
            Def::Fn(i) => np + ni + i,
        };
        let values = self
            .params
            .iter()
            .chain(&self.inputs)
            .map(|(d, _)| d.default.as_ref());
        let bodies = self.fns.iter().map(|(f, _)| Some(&f.body));
        let deps: Vec<Vec<usize>> = values
            .chain(bodies)
            .map(|e| {
                let mut ds = Vec::new();
                if let Some(e) = e {
                    crate::order::for_each_name(e, |n| {
                        let d = match self.globals.get(n) {
                            Some((Global::Param(j), _)) => Def::Param(*j),
                            Some((Global::Input(j), _)) => Def::Input(*j),
                            Some((Global::Fn(j), _)) => Def::Fn(*j),
                            _ => return,
                        };
                        ds.push(node(&d));
                    });
                }
                ds
            })
            .collect();
        crate::order::dependency_order(&deps)
            .into_iter()
            .map(|k| match k {
                k if k < np => Def::Param(k),
                k if k < np + ni => Def::Input(k - np),
                k => Def::Fn(k - np - ni),
            })
            .collect()
    }

    pub(super) fn global_param(&mut self, i: usize, input: bool) -> Option<Ty> {
        let (decl, state) = if input {
            self.inputs[i]
        } else {
            self.params[i]
        };
        match state {
            State::Done(t) => return Some(t),
            State::Busy => return None,
            State::Todo => {}
        }
        let set = |c: &mut Self, s: State<Ty>| {
            if input {
                c.inputs[i].1 = s
            } else {
                c.params[i].1 = s
            }
        };
        set(self, State::Busy);
        let declared = decl.ty.as_ref().map(|t| self.type_from_name(t));
        let ty = match &decl.default {
            Some(e) => {
                let v = self.expr(e, &Env::new(Ctx::Model));
                match declared {
                    Some(d) => {
                        self.expect(
                            e.span,
                            v.ty,
                            d,
                            &format!("the value of `{}`", decl.name.name),
                        );
                        d
                    }
                    None => v.ty,
                }
            }
            None => {
                let what = if input { "input" } else { "parameter" };
                self.diags.push(
                    Diagnostic::error("E0403", format!("{what} `{}` has no value", decl.name.name))
                        .at(decl.name.span, "needs `= value`")
                        .note("a top-level parameter or input is given its value where it is declared"),
                );
                declared.unwrap_or(Ty::Error)
            }
        };
        if ty == Ty::Body || !ty.is_numeric() {
            self.diags.push(
                Diagnostic::error(
                    "E0301",
                    format!("`{}` must be a number, vector or matrix", decl.name.name),
                )
                .at(decl.span, format!("this is {}", article(ty))),
            );
        }
        set(self, State::Done(ty));
        Some(ty)
    }

    pub(super) fn fn_type(&mut self, i: usize) -> Option<Ty> {
        let (decl, state) = self.fns[i];
        match state {
            State::Done(t) => return Some(t),
            State::Busy => return None,
            State::Todo => {}
        }
        self.fns[i].1 = State::Busy;
        let mut env = Env::new(Ctx::Fn);
        for (name, ty) in &decl.args {
            let t = self.type_from_name(ty);
            if let Some(prev) = env.find(&name.name) {
                let d = duplicate(name, prev.span, "argument");
                self.diags.push(d);
            }
            // Arguments count as state-dependent here, so that kinks of the
            // arguments are found; a call reports them when its arguments are.
            env.push(Local {
                name: name.name.clone(),
                ty: t,
                dep: true,
                span: name.span,
                kinks: Default::default(),
            });
        }
        // This may run in the middle of another statement: keep its kinks apart.
        let outer = std::mem::take(&mut self.kinks);
        let v = self.expr(&decl.body, &env);
        let inner = std::mem::replace(&mut self.kinks, outer);
        if let Some(k) = inner.first() {
            self.fn_kinks.insert(i, k);
        }
        let ty = match &decl.ret {
            Some(r) => {
                let t = self.type_from_name(r);
                self.expect(
                    decl.body.span,
                    v.ty,
                    t,
                    &format!("the result of `{}`", decl.name.name),
                );
                t
            }
            None => v.ty,
        };
        self.fns[i].1 = State::Done(ty);
        Some(ty)
    }

    pub(super) fn check_instance(&mut self, inst: &Instance, env: &Env) {
        let conns: Vec<(Val, Span)> = inst
            .connections
            .iter()
            .map(|e| (self.expr(e, env), e.span))
            .collect();
        let field_vals: Vec<Val> = inst
            .fields
            .iter()
            .map(|f| self.value_or_array(&f.value, env))
            .collect();
        for (v, span) in &conns {
            self.expect(*span, v.ty, Ty::Body, "a connection");
        }
        let Some(info) = self.type_info(&inst.ty.name, Some(inst.ty.span)) else {
            self.unknown_type(inst);
            return;
        };
        let decl = Decl::Type(info.name.clone());
        self.resolution.record(inst.ty.span, &inst.ty.name, decl);
        if info.kind != inst.kind {
            self.diags.push(
                Diagnostic::error(
                    "E0207",
                    format!(
                        "`{}` is a {} type, but `{}` is declared as a {}",
                        info.name,
                        info.kind.keyword(),
                        inst.name.name,
                        inst.kind.keyword()
                    ),
                )
                .at(inst.ty.span, format!("a {} type", info.kind.keyword()))
                .also(info_name_span(&info), "defined here")
                .note(format!(
                    "write `{} {}: {}...`",
                    info.kind.keyword(),
                    inst.name.name,
                    info.name
                )),
            );
        }
        self.connection_count(inst, &info, conns.len());
        self.instance_fields(inst, &info, field_vals);
    }

    /// `unknown ... type` for an instance whose type is not defined (silent if it may
    /// have been declared in text a syntax error skipped).
    fn unknown_type(&mut self, inst: &Instance) {
        if !self.typedefs.contains_key(&inst.ty.name) && !self.lost.contains(inst.ty.name.as_str())
        {
            let candidates: Vec<String> = self
                .typedefs
                .iter()
                .filter(|(_, e)| e.def.kind == inst.kind)
                .map(|(n, _)| n.clone())
                .collect();
            let all: Vec<String> = self.typedefs.keys().cloned().collect();
            let mut d = Diagnostic::error(
                "E0203",
                format!("unknown {} type `{}`", inst.kind.keyword(), inst.ty.name),
            )
            .at(inst.ty.span, "no element type of this name");
            d = match crate::did_you_mean(&inst.ty.name, candidates.iter().map(String::as_str)) {
                Some(s) => d.note(format!("did you mean `{s}`?")),
                None => d.suggest(&inst.ty.name, all.iter().map(String::as_str)),
            };
            self.diags.push(d);
        }
    }

    /// The number of connections against the type's (required and with a default).
    fn connection_count(&mut self, inst: &Instance, info: &TypeInfo, given: usize) {
        let total = info.connections.len();
        let required = info
            .connections
            .iter()
            .filter(|c| c.default.is_none())
            .count();
        // A body given connections is reported once, by the caller.
        if info.kind != Kind::Body && (given < required || given > total) {
            let sig: Vec<String> = info
                .connections
                .iter()
                .map(|c| {
                    if let Some(d) = &c.default {
                        let text = match &d.kind {
                            ExprKind::Name(n) => n.as_str(),
                            _ => "...",
                        };
                        format!("{}: body = {text}", c.name.name)
                    } else {
                        format!("{}: body", c.name.name)
                    }
                })
                .collect();
            let expected = if required == total {
                format!("{total}")
            } else {
                format!("{required} to {total}")
            };
            self.diags.push(
                Diagnostic::error(
                    "E0307",
                    format!(
                        "`{}` connects {expected} bodies, but {given} given",
                        info.name
                    ),
                )
                .at(inst.connections_span, format!("{given} given"))
                .also(info_name_span(info), "type defined here")
                .note(format!("{}({})", info.name, sig.join(", "))),
            );
        }
    }

    /// The fields against the type's parameters: each given once, known, of its type,
    /// and every required one given.
    fn instance_fields(&mut self, inst: &Instance, info: &TypeInfo, field_vals: Vec<Val>) {
        let mut given: HashMap<&str, Span> = HashMap::new();
        for (f, v) in inst.fields.iter().zip(field_vals) {
            if let Some(prev) = given.get(f.name.name.as_str()) {
                self.diags.push(
                    Diagnostic::error("E0206", format!("field `{}` is given twice", f.name.name))
                        .at(f.name.span, "given again here")
                        .also(*prev, "first given here"),
                );
                continue;
            }
            given.insert(&f.name.name, f.name.span);
            match info.param(&f.name.name) {
                Some(p) => {
                    let field = Decl::Field {
                        ty: info.name.clone(),
                        name: p.name.clone(),
                    };
                    self.resolution.record(f.name.span, &f.name.name, field);
                    self.expect(
                        f.value.span,
                        v.ty,
                        p.ty,
                        &format!("field `{}`", f.name.name),
                    );
                }
                None => {
                    let mut d = Diagnostic::error(
                        "E0204",
                        format!("`{}` has no field `{}`", info.name, f.name.name),
                    )
                    .at(f.name.span, "unknown field")
                    .suggest(&f.name.name, info.params.iter().map(|p| p.name.as_str()));
                    let names: Vec<&str> = info.params.iter().map(|p| p.name.as_str()).collect();
                    if !names.is_empty() {
                        d = d.note(format!(
                            "the fields of `{}` are {}",
                            info.name,
                            names.join(", ")
                        ));
                    }
                    self.diags.push(d);
                }
            }
        }
        let missing: Vec<&TypeParam> = info
            .params
            .iter()
            .filter(|p| p.default.is_none() && !given.contains_key(p.name.as_str()))
            .collect();
        // After a syntax error inside the braces a field may just have been skipped.
        if !missing.is_empty() && !inst.recovered {
            let names: Vec<String> = missing.iter().map(|p| format!("`{}`", p.name)).collect();
            let mut d = Diagnostic::error(
                "E0205",
                format!(
                    "{} `{}` is missing required field{} {}",
                    inst.kind.keyword(),
                    inst.name.name,
                    if names.len() > 1 { "s" } else { "" },
                    names.join(", ")
                ),
            )
            .at(inst.name.span, "missing fields");
            for p in missing {
                d = d.also(
                    p.span,
                    format!("`{}` declared here without a default", p.name),
                );
            }
            self.diags.push(d);
        }
    }
}
