//! Expressions: operators, names, members of bodies and components, and the state
//! dependence that the smoothness check follows.

use super::*;

impl<'m> Checker<'m> {
    pub(super) fn expr(&mut self, e: &Expr, env: &Env) -> Val {
        let v = self.expr_inner(e, env);
        self.types_of.insert(e.span, v.ty);
        v
    }

    pub(super) fn expr_inner(&mut self, e: &Expr, env: &Env) -> Val {
        let val = |ty, dep| Val { ty, dep };
        match &e.kind {
            ExprKind::Number(_) => val(Ty::Scalar, false),
            ExprKind::Error => val(Ty::Error, false),
            ExprKind::Str(_) => {
                self.diags.push(
                    Diagnostic::error("E0312", "a string is not a value")
                        .at(e.span, "strings only name files (`use`, `table`)"),
                );
                val(Ty::Error, false)
            }
            ExprKind::Name(n) => self.name(n, e.span, env),
            ExprKind::Index(base, i) => self.index(e, base, i, env),
            ExprKind::List(items) => self.list(e, items, env),
            ExprKind::Neg(x) => {
                let v = self.expr(x, env);
                if !v.ty.is_numeric() {
                    self.bad_operands(e.span, "negate", v.ty, None);
                    return val(Ty::Error, v.dep);
                }
                v
            }
            ExprKind::Binary(op, a, b) => self.binary(e, op, a, b, env),
            ExprKind::Compare(_, a, b) => {
                self.compare(a, b, env);
                self.diags.push(
                    Diagnostic::error("E0308", "a comparison is only allowed as an `if` condition")
                        .at(e.span, "a condition, not a value")
                        .note("write `if a < b then x else y`"),
                );
                val(Ty::Error, false)
            }
            ExprKind::If(c, a, b) => self.if_else(e, c, a, b, env),
            ExprKind::Call(name, args) => self.call(name, args, e.span, env),
            ExprKind::Member(base, name) => self.member(base, name, env),
            ExprKind::Method(base, name, args) => self.method(e, base, name, args, env),
        }
    }

    /// `base[i]`: a component of a list, vec3 or (a row of) a mat3.
    fn index(&mut self, e: &Expr, base: &Expr, i: &Expr, env: &Env) -> Val {
        let val = |ty, dep| Val { ty, dep };
        let vb = self.expr(base, env);
        let vi = self.expr(i, env);
        self.expect(i.span, vi.ty, Ty::Scalar, "an index");
        let ty = match vb.ty {
            Ty::List(_) | Ty::Vec3 => Ty::Scalar,
            Ty::Mat3 => Ty::Vec3,
            Ty::Error => Ty::Error,
            other => {
                self.bad_operands(e.span, "index", other, None);
                Ty::Error
            }
        };
        val(ty, vb.dep || vi.dep)
    }

    /// `[a, b, c]`: a vec3 of scalars or a mat3 of rows; other lists are spline data.
    fn list(&mut self, e: &Expr, items: &[Expr], env: &Env) -> Val {
        let val = |ty, dep| Val { ty, dep };
        let vals: Vec<Val> = items.iter().map(|i| self.expr(i, env)).collect();
        let dep = vals.iter().any(|v| v.dep);
        if vals.iter().any(|v| v.ty == Ty::Error) {
            return val(Ty::Error, dep);
        }
        if vals.len() == 3 && vals.iter().all(|v| v.ty == Ty::Scalar) {
            return val(Ty::Vec3, dep);
        }
        if vals.len() == 3 && vals.iter().all(|v| v.ty == Ty::Vec3) {
            return val(Ty::Mat3, dep);
        }
        let kinds: Vec<String> = vals.iter().map(|v| v.ty.to_string()).collect();
        self.diags.push(
            Diagnostic::error("E0312", format!("a list of {} is not a value", kinds.len()))
                .at(e.span, format!("[{}]", kinds.join(", ")))
                .note("`[a, b, c]` of scalars is a vec3, of three vec3 rows a mat3; other lists are spline data only"),
        );
        val(Ty::Error, dep)
    }

    /// `a op b`: the operand types each operator takes.
    fn binary(&mut self, e: &Expr, op: &BinOp, a: &Expr, b: &Expr, env: &Env) -> Val {
        let val = |ty, dep| Val { ty, dep };
        let va = self.expr(a, env);
        let vb = self.expr(b, env);
        let dep = va.dep || vb.dep;
        if va.ty == Ty::Error || vb.ty == Ty::Error {
            return val(Ty::Error, dep);
        }
        use Ty::*;
        let r = match (op, va.ty, vb.ty) {
            (BinOp::Add | BinOp::Sub, x, y) if x == y && x.is_numeric() => Some(x),
            (BinOp::Mul, Scalar, x) | (BinOp::Mul, x, Scalar) if x.is_numeric() => Some(x),
            (BinOp::Mul, Mat3, Vec3) => Some(Vec3),
            (BinOp::Mul, Mat3, Mat3) => Some(Mat3),
            (BinOp::Mul, Quat, Quat) => Some(Quat),
            (BinOp::Div, x, Scalar) if x.is_numeric() => Some(x),
            (BinOp::Pow, Scalar, Scalar) => Some(Scalar),
            _ => None,
        };
        match r {
            Some(t) => val(t, dep),
            None => {
                let verb = match op {
                    BinOp::Add => "add",
                    BinOp::Sub => "subtract",
                    BinOp::Mul => "multiply",
                    BinOp::Div => "divide",
                    BinOp::Pow => "raise",
                };
                self.bad_operands(e.span, verb, va.ty, Some(vb.ty));
                val(Ty::Error, dep)
            }
        }
    }

    /// `if c then a else b`: a comparison as condition (a kink if it depends on the
    /// state), branches of one type.
    fn if_else(&mut self, e: &Expr, c: &Expr, a: &Expr, b: &Expr, env: &Env) -> Val {
        let val = |ty, dep| Val { ty, dep };
        let cdep = match &c.kind {
            ExprKind::Compare(_, l, r) => {
                let d = self.compare(l, r, env);
                self.types_of.insert(c.span, Ty::Bool);
                d
            }
            _ => {
                let v = self.expr(c, env);
                if v.ty != Ty::Error {
                    self.diags.push(
                        Diagnostic::error("E0308", "an `if` condition must be a comparison")
                            .at(c.span, format!("this is {}", article(v.ty)))
                            .note("compare with `<`, `<=`, `>`, `>=`, `==` or `!=`"),
                    );
                }
                v.dep
            }
        };
        if cdep {
            self.kinks.push(e.span, "if");
        }
        let va = self.expr(a, env);
        let vb = self.expr(b, env);
        let dep = cdep || va.dep || vb.dep;
        if va.ty == Ty::Error || vb.ty == Ty::Error {
            return val(Ty::Error, dep);
        }
        if va.ty != vb.ty {
            self.diags.push(
                Diagnostic::error(
                    "E0309",
                    format!(
                        "`if` branches have different types: {} and {}",
                        va.ty, vb.ty
                    ),
                )
                .at(b.span, format!("this is {}", article(vb.ty)))
                .also(a.span, format!("this is {}", article(va.ty))),
            );
            return val(Ty::Error, dep);
        }
        val(va.ty, dep)
    }

    /// `base.name`: a member of a body or a component of a vector, quaternion or matrix.
    fn member(&mut self, base: &Expr, name: &Ident, env: &Env) -> Val {
        let val = |ty, dep| Val { ty, dep };
        let b = self.expr(base, env);
        match b.ty {
            Ty::Error => val(Ty::Error, b.dep),
            Ty::Body => match builtins::body_member(&name.name) {
                Some(m) if !m.method => val(m.ty, b.dep && !m.initial),
                Some(_) => {
                    self.diags.push(
                        Diagnostic::error(
                            "E0303",
                            format!("`{}` of a body takes one vec3 argument", name.name),
                        )
                        .at(name.span, format!("write `{}(u)`", name.name)),
                    );
                    val(Ty::Error, b.dep)
                }
                None => {
                    self.unknown_member(name);
                    val(Ty::Error, b.dep)
                }
            },
            t => match component(t, &name.name) {
                Some(ct) => val(ct, b.dep),
                None => {
                    let comps = match t {
                        Ty::Vec3 | Ty::Mat3 => "`x`, `y`, `z`",
                        Ty::Quat => "`w`, `x`, `y`, `z`",
                        _ => "none",
                    };
                    self.diags.push(
                        Diagnostic::error(
                            "E0310",
                            format!("{} has no component `{}`", article(t), name.name),
                        )
                        .at(name.span, "no such component")
                        .note(format!("components of {}: {comps}", t)),
                    );
                    val(Ty::Error, b.dep)
                }
            },
        }
    }

    /// `base.name(args)`: a method of a body.
    fn method(&mut self, e: &Expr, base: &Expr, name: &Ident, args: &[Expr], env: &Env) -> Val {
        let val = |ty, dep| Val { ty, dep };
        let b = self.expr(base, env);
        let vals: Vec<Val> = args.iter().map(|a| self.expr(a, env)).collect();
        let member = builtins::body_member(&name.name).filter(|_| b.ty == Ty::Body);
        match b.ty {
            Ty::Error => val(Ty::Error, b.dep),
            Ty::Body if member.is_some_and(|m| m.method) => {
                if args.len() != 1 {
                    self.diags.push(
                        Diagnostic::error(
                            "E0303",
                            format!("`{}` takes 1 argument, found {}", name.name, args.len()),
                        )
                        .at(e.span, "expected one vec3"),
                    );
                    return val(Ty::Error, b.dep);
                }
                self.expect(
                    args[0].span,
                    vals[0].ty,
                    Ty::Vec3,
                    &format!("the argument of `{}`", name.name),
                );
                // `local` is evaluated at t = 0: a parameter, not a function of the state.
                let m = member.expect("a method");
                let dep = !m.initial && (b.dep || vals[0].dep);
                val(m.ty, dep)
            }
            Ty::Body if member.is_some() => {
                self.diags.push(
                    Diagnostic::error(
                        "E0303",
                        format!("`{}` of a body takes no arguments", name.name),
                    )
                    .at(e.span, format!("write `.{}`", name.name)),
                );
                val(Ty::Error, b.dep)
            }
            Ty::Body => {
                self.unknown_member(name);
                val(Ty::Error, b.dep)
            }
            t => {
                self.diags.push(
                    Diagnostic::error(
                        "E0310",
                        format!("{} has no method `{}`", article(t), name.name),
                    )
                    .at(name.span, "only bodies have methods"),
                );
                val(Ty::Error, b.dep)
            }
        }
    }

    /// A parameter default or field value: besides every value, an array literal
    /// (`[1, 1, 0, 0, 0, 1]`, a list whose length is not 3) for build-time fields such
    /// as the flags of the `generic` joint.
    pub(super) fn value_or_array(&mut self, e: &Expr, env: &Env) -> Val {
        match &e.kind {
            ExprKind::List(items) if items.len() != 3 => {
                let vals: Vec<Val> = items.iter().map(|i| self.expr(i, env)).collect();
                for (v, i) in vals.iter().zip(items) {
                    self.expect(i.span, v.ty, Ty::Scalar, "an array element");
                }
                let v = Val {
                    ty: Ty::List(items.len()),
                    dep: vals.iter().any(|v| v.dep),
                };
                self.types_of.insert(e.span, v.ty);
                v
            }
            _ => self.expr(e, env),
        }
    }

    pub(super) fn compare(&mut self, a: &Expr, b: &Expr, env: &Env) -> bool {
        let va = self.expr(a, env);
        let vb = self.expr(b, env);
        self.expect(a.span, va.ty, Ty::Scalar, "a compared value");
        self.expect(b.span, vb.ty, Ty::Scalar, "a compared value");
        va.dep || vb.dep
    }

    pub(super) fn unknown_member(&mut self, name: &Ident) {
        let all = builtins::BODY_MEMBERS.iter().map(|m| m.name);
        let props: Vec<&str> = builtins::body_member_names(false).collect();
        let methods: Vec<&str> = builtins::body_member_names(true).collect();
        self.diags.push(
            Diagnostic::error("E0211", format!("a body has no member `{}`", name.name))
                .at(name.span, "unknown member")
                .suggest(&name.name, all)
                .note(format!(
                    "members: {}; methods: {}",
                    props.join(", "),
                    methods.join(", ")
                )),
        );
    }

    pub(super) fn bad_operands(&mut self, span: Span, verb: &str, a: Ty, b: Option<Ty>) {
        let msg = match b {
            Some(b) => format!("cannot {verb} {} and {}", article(a), article(b)),
            None => format!("cannot {verb} {}", article(a)),
        };
        let mut d = Diagnostic::error("E0302", msg).at(span, "invalid operands");
        if verb == "multiply" && a == Ty::Vec3 && b == Some(Ty::Vec3) {
            d = d.note("use `dot(a, b)` or `cross(a, b)`");
        }
        if verb == "raise" {
            d = d.note("`^` takes a scalar base and a scalar exponent");
        }
        self.diags.push(d);
    }

    pub(super) fn name(&mut self, n: &str, span: Span, env: &Env) -> Val {
        let val = |ty, dep| Val { ty, dep };
        if let Some(l) = env.find(n) {
            let (ty, dep) = (l.ty, l.dep);
            self.resolution.record(span, n, Decl::Local(l.span));
            let kinks = l.kinks.clone();
            self.kinks.uses(&kinks);
            return val(ty, dep);
        }
        let builtin = match n {
            "t" => Some(("t", Ty::Scalar)),
            "pi" => Some(("pi", Ty::Scalar)),
            "gravity" => Some(("gravity", Ty::Vec3)),
            "ground" => Some(("ground", Ty::Body)),
            _ => None,
        };
        if let Some((v, ty)) = builtin {
            self.resolution.record(span, n, Decl::Builtin(v));
            return val(ty, false);
        }
        if env.ctx != Ctx::Type {
            if let Some((g, gspan)) = self.globals.get(n).copied() {
                self.resolution.record(span, n, g.decl());
                return self.global_name(n, span, env, g, gspan);
            }
        }
        if n == "self" {
            self.diags.push(
                Diagnostic::error("E0201", "`self` is only defined inside a body type")
                    .at(span, "no body here"),
            );
            return val(Ty::Error, false);
        }
        if let Some(def) = env.later.get(n) {
            self.diags.push(
                Diagnostic::error("E0212", format!("`{n}` is used before its definition"))
                    .at(span, "used here")
                    .also(*def, "defined later here")
                    .note("inside an element type a name is visible from its declaration on"),
            );
            return val(Ty::Error, false);
        }
        if self.lost.contains(n) {
            // Probably declared in text that a syntax error made the parser skip.
            return val(Ty::Error, false);
        }
        let mut d = Diagnostic::error("E0201", format!("unknown name `{n}`"))
            .at(span, "not found in this scope");
        let mut candidates: Vec<String> = env.locals.iter().map(|l| l.name.clone()).collect();
        candidates.extend(["t", "pi", "gravity", "ground"].map(String::from));
        if env.ctx != Ctx::Type {
            candidates.extend(self.globals.keys().cloned());
        } else if self.globals.contains_key(n) {
            d = d.note(format!(
                "`{n}` is a top-level name; element types see only their own parameters and connections (pass it as a field)"
            ));
        }
        d = d.suggest(n, candidates.iter().map(String::as_str));
        self.diags.push(d);
        val(Ty::Error, false)
    }

    /// A top-level name used in the model, a function or a one-off element.
    fn global_name(&mut self, n: &str, span: Span, env: &Env, g: Global, gspan: Span) -> Val {
        let val = |ty, dep| Val { ty, dep };
        match g {
            Global::Input(_) if env.ctx == Ctx::Inline => {
                self.diags.push(
                    Diagnostic::error(
                        "E0201",
                        format!("the input `{n}` is not visible in a one-off element"),
                    )
                    .at(span, "an input changes at run time")
                    .note("write an element type with a field and set the field to the input"),
                );
                val(Ty::Error, false)
            }
            Global::Instance(i)
                if env.ctx == Ctx::Inline && self.instances[i].kind == Kind::Body =>
            {
                self.diags.push(
                    Diagnostic::error(
                        "E0306",
                        format!("the body `{n}` is not connected to this element"),
                    )
                    .at(span, "not in the `on(...)` list")
                    .note(format!("connect it: `on(..., {n})`")),
                );
                val(Ty::Error, false)
            }
            Global::Param(i) | Global::Input(i) => {
                let input = matches!(g, Global::Input(_));
                match self.global_param(i, input) {
                    Some(t) => val(t, false),
                    None => {
                        self.diags.push(
                            Diagnostic::error(
                                "E0212",
                                format!("`{n}` is defined in terms of itself"),
                            )
                            .at(span, "used here")
                            .also(gspan, "defined here"),
                        );
                        val(Ty::Error, false)
                    }
                }
            }
            Global::Instance(i) => {
                let inst = self.instances[i];
                if inst.kind == Kind::Body {
                    val(Ty::Body, true)
                } else {
                    self.diags.push(
                        Diagnostic::error(
                            "E0306",
                            format!("`{n}` is a {}, not a value", inst.kind.keyword()),
                        )
                        .at(span, "not a value")
                        .also(gspan, "declared here"),
                    );
                    val(Ty::Error, false)
                }
            }
            Global::Fn(_) | Global::Spline(_) => {
                self.diags.push(
                    Diagnostic::error(
                        "E0311",
                        format!("`{n}` is a function; call it with arguments"),
                    )
                    .at(span, format!("write `{n}(...)`")),
                );
                val(Ty::Error, false)
            }
        }
    }
}
