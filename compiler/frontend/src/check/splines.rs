//! `spline` declarations: the method, the data (literal lists or a `table` file) and
//! their shapes.

use super::*;

impl<'m> Checker<'m> {
    pub(super) fn check_spline(&mut self, s: &SplineDecl) {
        let env = Env::new(Ctx::Model);
        match s.method.name.as_str() {
            "akima" | "zcc" => {
                if s.args.len() != 2 {
                    self.diags.push(
                        Diagnostic::error(
                            "E0303",
                            format!(
                                "`{}` takes 2 arguments, found {}",
                                s.method.name,
                                s.args.len()
                            ),
                        )
                        .at(s.span, "expected `(xs, ys)`"),
                    );
                }
                let mut lens = Vec::new();
                for a in &s.args {
                    match &a.kind {
                        ExprKind::List(items) => {
                            for it in items {
                                let v = self.expr(it, &env);
                                self.expect(it.span, v.ty, Ty::Scalar, "spline data");
                            }
                            self.types_of.insert(a.span, Ty::List(items.len()));
                            lens.push((items.len(), a.span));
                        }
                        _ => {
                            self.expr(a, &env);
                            self.diags.push(
                                Diagnostic::error(
                                    "E0215",
                                    "spline data must be a list `[x0, x1, ...]`",
                                )
                                .at(a.span, "not a list"),
                            );
                        }
                    }
                }
                if let [(nx, sx), (ny, sy)] = lens[..] {
                    if nx != ny {
                        self.diags.push(
                            Diagnostic::error(
                                "E0215",
                                format!("spline `{}` has {nx} xs but {ny} ys", s.name.name),
                            )
                            .at(sy, format!("{ny} values"))
                            .also(sx, format!("{nx} values")),
                        );
                    } else if nx < 2 {
                        self.diags.push(
                            Diagnostic::error(
                                "E0215",
                                format!("spline `{}` needs at least 2 points", s.name.name),
                            )
                            .at(sx, format!("{nx} values")),
                        );
                    }
                }
            }
            "table" => {
                let ok = matches!(s.args.len(), 3 | 4)
                    && matches!(s.args[0].kind, ExprKind::Str(_))
                    && s.args[1..]
                        .iter()
                        .all(|a| matches!(a.kind, ExprKind::Number(_)));
                if !ok {
                    self.diags.push(
                        Diagnostic::error("E0215", "`table` takes a file name, two column numbers and optionally a header line count")
                            .at(s.span, "e.g. `table(\"data.txt\", 0, 2, 1)`"),
                    );
                }
            }
            other => self.diags.push(
                Diagnostic::error("E0215", format!("unknown spline method `{other}`"))
                    .at(s.method.span, "not a spline method")
                    .suggest(other, ["akima", "zcc", "table"])
                    .note("the methods are `akima`, `zcc` and `table`"),
            ),
        }
    }
}
