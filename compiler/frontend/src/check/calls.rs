//! Calls: of top-level functions, of splines, and of builtins (arity, typing and
//! kinks from the `builtins` table).

use super::*;

impl<'m> Checker<'m> {
    pub(super) fn call(&mut self, name: &Ident, args: &[Expr], span: Span, env: &Env) -> Val {
        let n = name.name.as_str();
        let unshadowed = env.find(n).is_none() && !self.globals.contains_key(n);
        let literal = |b: &&builtins::BuiltinFn| {
            matches!(b.builtin, builtins::Builtin::Tir | builtins::Builtin::Crg)
        };
        if let Some(b) = builtins::function(n).filter(literal).filter(|_| unshadowed) {
            self.resolution.record(name.span, n, Decl::Builtin(b.name));
        }
        if unshadowed && n == builtins::Builtin::Tir.info().name {
            let arity = builtins::Builtin::Tir.info().arity;
            let wrong = (
                "`tir` takes two string literals",
                "expected `tir(\"file.tir\", \"NAME\")`",
                "the file is relative to the model file; NAME is a coefficient such as \"PCX1\"",
            );
            return self.literal_call(args, span, args.len() == arity, wrong);
        }
        if unshadowed && n == builtins::Builtin::Crg.info().name {
            // The value names the road: a build-time number for a tyre's `road` field.
            let wrong = (
                "`crg` takes one or two string literals",
                "expected `crg(\"road.crg\")` or `crg(\"road.crg\", \"friction.crg\")`",
                "the files are relative to the model file; the second one's grid holds the friction μ",
            );
            return self.literal_call(args, span, matches!(args.len(), 1 | 2), wrong);
        }
        let vals: Vec<Val> = args.iter().map(|a| self.expr(a, env)).collect();
        let dep = vals.iter().any(|v| v.dep);
        let n = name.name.as_str();
        let err = Val { ty: Ty::Error, dep };
        if let Some(l) = env.find(n) {
            let ty = l.ty;
            self.resolution.record(name.span, n, Decl::Local(l.span));
            self.diags.push(
                Diagnostic::error("E0311", format!("`{n}` is {}, not a function", article(ty)))
                    .at(name.span, "not callable"),
            );
            return err;
        }
        // Top-level functions and splines are callable from everywhere.
        if let Some((g, gspan)) = self.globals.get(n).copied() {
            if matches!(g, Global::Fn(_) | Global::Spline(_)) || env.ctx != Ctx::Type {
                self.resolution.record(name.span, n, g.decl());
            }
            match g {
                Global::Fn(i) => return self.fn_call(i, n, args, &vals, span, gspan),
                Global::Spline(_) => return self.spline_call(n, args, &vals, span),
                _ => {
                    if env.ctx != Ctx::Type {
                        self.diags.push(
                            Diagnostic::error("E0311", format!("`{n}` is not a function"))
                                .at(name.span, "not callable")
                                .also(gspan, "declared here"),
                        );
                        return err;
                    }
                }
            }
        }
        self.builtin_call(name, args, &vals, span)
    }

    /// A call of a top-level function: arity, argument types, and its result type (an
    /// error if it calls itself).
    fn fn_call(
        &mut self,
        i: usize,
        n: &str,
        args: &[Expr],
        vals: &[Val],
        span: Span,
        gspan: Span,
    ) -> Val {
        let dep = vals.iter().any(|v| v.dep);
        let err = Val { ty: Ty::Error, dep };
        let decl = self.fns[i].0;
        if decl.args.len() != args.len() {
            self.diags.push(
                Diagnostic::error(
                    "E0303",
                    format!(
                        "`{n}` takes {} argument{}, found {}",
                        decl.args.len(),
                        plural(decl.args.len()),
                        args.len()
                    ),
                )
                .at(span, "wrong number of arguments")
                .also(decl.name.span, "defined here"),
            );
            return err;
        }
        for ((a, v), (an, at)) in args.iter().zip(vals).zip(&decl.args) {
            if let Some(t) = Ty::from_name(&at.name) {
                self.expect(a.span, v.ty, t, &format!("argument `{}` of `{n}`", an.name));
            }
        }
        match self.fn_type(i) {
            Some(t) => {
                if dep {
                    if let Some(k) = self.fn_kinks.get(&i) {
                        self.kinks.push(span, k);
                    }
                }
                Val { ty: t, dep }
            }
            None => {
                self.diags.push(
                    Diagnostic::error("E0212", format!("function `{n}` calls itself"))
                        .at(span, "recursive call")
                        .also(gspan, "defined here")
                        .note("calls are inlined, so a function cannot be recursive"),
                );
                err
            }
        }
    }

    /// A call of a spline: one scalar argument.
    fn spline_call(&mut self, n: &str, args: &[Expr], vals: &[Val], span: Span) -> Val {
        let dep = vals.iter().any(|v| v.dep);
        let err = Val { ty: Ty::Error, dep };
        if args.len() != 1 {
            self.diags.push(
                Diagnostic::error(
                    "E0303",
                    format!("spline `{n}` takes 1 argument, found {}", args.len()),
                )
                .at(span, "expected one scalar"),
            );
            return err;
        }
        self.expect(
            args[0].span,
            vals[0].ty,
            Ty::Scalar,
            &format!("the argument of spline `{n}`"),
        );
        Val {
            ty: Ty::Scalar,
            dep,
        }
    }

    /// A call of a builtin function: arity and typing from the `builtins` table.
    fn builtin_call(&mut self, name: &Ident, args: &[Expr], vals: &[Val], span: Span) -> Val {
        let n = name.name.as_str();
        let dep = vals.iter().any(|v| v.dep);
        let err = Val { ty: Ty::Error, dep };
        let Some(builtin) = builtins::function(n) else {
            if self.lost.contains(n) {
                return err;
            }
            let mut candidates: Vec<&str> = builtins::FUNCTIONS.iter().map(|b| b.name).collect();
            let globals: Vec<String> = self
                .globals
                .iter()
                .filter(|(_, (g, _))| matches!(g, Global::Fn(_) | Global::Spline(_)))
                .map(|(k, _)| k.clone())
                .collect();
            candidates.extend(globals.iter().map(String::as_str));
            self.diags.push(
                Diagnostic::error("E0209", format!("unknown function `{n}`"))
                    .at(name.span, "no function of this name")
                    .suggest(n, candidates),
            );
            return err;
        };
        self.resolution
            .record(name.span, n, Decl::Builtin(builtin.name));
        let arity = builtin.arity;
        if args.len() != arity {
            self.diags.push(
                Diagnostic::error(
                    "E0303",
                    format!(
                        "`{n}` takes {arity} argument{}, found {}",
                        plural(arity),
                        args.len()
                    ),
                )
                .at(span, "wrong number of arguments"),
            );
            return err;
        }
        if vals.iter().any(|v| v.ty == Ty::Error) {
            return err;
        }
        let tys: Vec<Ty> = vals.iter().map(|v| v.ty).collect();
        match builtin.builtin.result(&tys) {
            Some(ty) => {
                let dep = match builtin.builtin.dep() {
                    Dep::Args => dep,
                    Dep::Never => false,
                    Dep::Always => true,
                };
                if builtin.kinked && dep {
                    self.kinks.push(span, builtin.name);
                }
                Val { ty, dep }
            }
            None => {
                let found: Vec<String> = tys.iter().map(|t| t.to_string()).collect();
                self.diags.push(
                    Diagnostic::error("E0301", format!("`{n}` cannot take ({})", found.join(", ")))
                        .at(span, "argument types do not fit")
                        .note(format!("`{n}` takes {}", builtin.takes)),
                );
                err
            }
        }
    }

    /// `tir("file.tir", "NAME")`, `crg("road.crg"[, "friction.crg"])`: builtins whose
    /// arguments are string literals (strings are no values elsewhere); the files are
    /// read when the model is lowered. `wrong` is the message, label and note of a call
    /// that does not fit (`count_ok`: the number of arguments is right).
    fn literal_call(
        &mut self,
        args: &[Expr],
        span: Span,
        count_ok: bool,
        (message, label, note): (&str, &str, &str),
    ) -> Val {
        if !count_ok || !args.iter().all(|a| matches!(a.kind, ExprKind::Str(_))) {
            self.diags.push(
                Diagnostic::error("E0301", message)
                    .at(span, label)
                    .note(note),
            );
            return Val {
                ty: Ty::Error,
                dep: false,
            };
        }
        for a in args {
            self.types_of.insert(a.span, Ty::Str);
        }
        Val {
            ty: Ty::Scalar,
            dep: false,
        }
    }
}
