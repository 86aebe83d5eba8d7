//! Element types with build-time structure: which parameters the structure depends on,
//! and one specialized copy of the type per value of those parameters.

use super::*;

impl<'a> Expander<'a> {
    /// A type definition as the checker sees it: one whose structure depends on its
    /// fields stays as written (checked once with every branch; instances use its
    /// specializations); any other has its loops and conditions unrolled.
    pub(super) fn typedef(&mut self, t: &'a TypeDef) -> TypeDef {
        if !self.structural_params(&t.name.name).is_empty() {
            return t.clone();
        }
        let (saved, top) = (std::mem::take(&mut self.vars), self.top);
        self.top = false;
        let body = self.stmts(&t.body);
        (self.vars, self.top) = (saved, top);
        TypeDef { body, ..t.clone() }
    }

    /// [`Self::structural_params`] of every type, each after the types of its nested
    /// instances (also inside loops and conditions): every later call is answered
    /// from the memo or recurses one level, so a chain of 100,000 types each
    /// containing the next costs no stack.
    pub(super) fn prepare_structural(&mut self) {
        let types = (self.typedefs.iter()).map(|(n, t)| (n.as_str(), &t.body[..]));
        let names: Vec<String> = (crate::order::nesting_order(types).into_iter())
            .map(str::to_string)
            .collect();
        for n in &names {
            self.structural_params(n);
        }
    }

    /// The parameters of type `name` that its structure depends on, in declaration
    /// order: those read by a loop bound, an `if` condition around statements or an
    /// index, arrays, and those passed to such a field of a nested instance.
    pub(super) fn structural_params(&mut self, name: &str) -> Vec<String> {
        if let Some(s) = self.structural.get(name) {
            return s.clone();
        }
        let Some(def) = self.typedefs.get(name).copied() else {
            return Vec::new();
        };
        // A type that (wrongly) contains itself is reported by the checker.
        self.structural.insert(name.to_string(), Vec::new());
        let mut used = Vec::new();
        self.build_time_names(&def.body, &mut used);
        let params: Vec<String> = def
            .body
            .iter()
            .filter_map(|s| match &s.kind {
                StmtKind::Param(p) => {
                    let array = p.default.as_ref().is_some_and(is_array_literal);
                    (array || used.contains(&p.name.name)).then(|| p.name.name.clone())
                }
                _ => None,
            })
            .collect();
        self.structural.insert(name.to_string(), params.clone());
        params
    }

    fn build_time_names(&mut self, body: &[Stmt], used: &mut Vec<String>) {
        for s in body {
            match &s.kind {
                StmtKind::For(l) => {
                    names(&l.from, used);
                    names(&l.to, used);
                    self.build_time_names(&l.body, used);
                }
                StmtKind::When(c) => {
                    names(&c.cond, used);
                    self.build_time_names(&c.then, used);
                    self.build_time_names(&c.otherwise, used);
                }
                StmtKind::Instance(inst) => {
                    let child = self.structural_params(&inst.ty.name);
                    for f in &inst.fields {
                        if child.contains(&f.name.name) {
                            names(&f.value, used);
                        }
                    }
                    inst.index.iter().for_each(|e| names(e, used));
                }
                _ => {}
            }
            for e in stmt_exprs(s) {
                index_names(e, used);
            }
        }
    }

    /// The specialization of `ty` for the build-time fields among `fields`: its name
    /// and the fields that remain (build-time fields are part of the type).
    pub(super) fn specialize(
        &mut self,
        ty: &Ident,
        fields: Vec<Field>,
        at: Span,
    ) -> Option<(String, Vec<Field>)> {
        let def = *self.typedefs.get(&ty.name)?;
        let params = self.structural_params(&ty.name);
        let mut given: HashMap<String, BVal> = HashMap::new();
        let mut rest = Vec::new();
        for f in fields {
            if !params.contains(&f.name.name) {
                rest.push(f);
                continue;
            }
            match self.eval(&f.value) {
                Ok(v) => {
                    given.insert(f.name.name.clone(), v);
                }
                Err(d) => {
                    let d = d.also(
                        at,
                        format!("`{}` shapes the type `{}`", f.name.name, ty.name),
                    );
                    self.diags.push(d);
                    return None;
                }
            }
        }
        let (saved, top) = (std::mem::take(&mut self.vars), self.top);
        self.top = false;
        let values = self.field_values(def, &params, given, at);
        let name = values.as_ref().map(|values| {
            let parts: Vec<String> = values
                .iter()
                .map(|(n, v)| format!("{n}={}", v.text()))
                .collect();
            format!("{}<{}>", ty.name, parts.join(","))
        });
        if let (Some(values), Some(name)) = (values, &name) {
            if !self.done.contains(name) && self.deeper(at) {
                self.done.insert(name.clone());
                self.vars = values;
                let body = self.stmts(&def.body);
                let name = Ident {
                    name: name.clone(),
                    span: def.name.span,
                };
                let copy = TypeDef {
                    name,
                    body,
                    ..def.clone()
                };
                self.new_types.push((def.span.file, copy));
                self.depth -= 1;
            }
        }
        (self.vars, self.top) = (saved, top);
        name.map(|n| (n, rest))
    }

    /// The build-time fields of one instance of `def`, given or by default, in order.
    fn field_values(
        &mut self,
        def: &TypeDef,
        params: &[String],
        mut given: HashMap<String, BVal>,
        at: Span,
    ) -> Option<Vec<(String, BVal)>> {
        self.vars.clear();
        for s in &def.body {
            let StmtKind::Param(p) = &s.kind else {
                continue;
            };
            if !params.contains(&p.name.name) {
                continue;
            }
            let v = match (given.remove(&p.name.name), &p.default) {
                (Some(v), _) => v,
                (None, Some(d)) => match self.eval(d) {
                    Ok(v) => v,
                    Err(e) => {
                        self.diags.push(e);
                        return None;
                    }
                },
                (None, None) => {
                    self.diags.push(
                        Diagnostic::error(
                            "E0205",
                            format!("missing field `{}` of `{}`", p.name.name, def.name.name),
                        )
                        .at(at, format!("needs `{} = ...;`", p.name.name))
                        .note("the structure of the type depends on it"),
                    );
                    return None;
                }
            };
            self.vars.push((p.name.name.clone(), v));
        }
        Some(std::mem::take(&mut self.vars))
    }

    /// The statements of a type body with its loops and conditions unrolled and the
    /// build-time fields (in `vars`) substituted; their declarations are dropped.
    pub(super) fn stmts(&mut self, body: &'a [Stmt]) -> Vec<Stmt> {
        let mut out = Vec::new();
        for s in body {
            match &s.kind {
                StmtKind::Param(p) if self.vars.iter().any(|(v, _)| *v == p.name.name) => {}
                StmtKind::For(l) => {
                    if let Some(ks) = self.range(l) {
                        for k in ks {
                            if !self.spend(l.span) {
                                break;
                            }
                            self.vars.push((l.var.name.clone(), BVal::Num(k as f64)));
                            out.extend(self.stmts(&l.body));
                            self.vars.pop();
                        }
                        self.depth -= 1;
                    }
                }
                StmtKind::When(c) => {
                    if let Some(yes) = self.condition(c) {
                        out.extend(self.stmts(if yes { &c.then } else { &c.otherwise }));
                        self.depth -= 1;
                    }
                }
                StmtKind::Instance(inst) => {
                    if let Some(i) = self.instance(inst) {
                        out.push(Stmt {
                            kind: StmtKind::Instance(i),
                            span: s.span,
                        });
                    }
                }
                _ => out.push(map_stmt(s, &mut |e| self.subst(e))),
            }
        }
        out
    }
}
