//! The `simulate { ... }` block, checked against the front end's table of settings
//! (`builtins::SIM_SETTINGS`).

use super::*;

/// The coordinates of a body that `given` may name one component of (`b.position.x`):
/// the runtime's list (`runtime/src/system/given.rs`).
const GIVEN_COORDINATES: &[&str] = &["position", "angle", "velocity", "omega_body"];

impl<'m> Checker<'m> {
    pub(super) fn check_simulate(&mut self, settings: &[Field], env: &Env) {
        let mut seen: HashMap<&str, Span> = HashMap::new();
        for f in settings {
            let key = f.name.name.as_str();
            if let Some(prev) = seen.get(key) {
                self.diags.push(
                    Diagnostic::error("E0206", format!("setting `{key}` is given twice"))
                        .at(f.name.span, "given again here")
                        .also(*prev, "first given here"),
                );
            }
            seen.insert(key, f.name.span);
            let bad = |allowed: &str| {
                Diagnostic::error("E0214", format!("invalid value for `{key}`"))
                    .at(f.value.span, "not allowed here")
                    .note(format!("expected {allowed}"))
            };
            let setting = builtins::SIM_SETTINGS.iter().find(|(k, _)| *k == key);
            match setting.map(|(_, v)| *v) {
                Some(SimValue::Scalar) => {
                    let v = self.expr(&f.value, env);
                    self.expect(f.value.span, v.ty, Ty::Scalar, &format!("`{key}`"));
                }
                Some(SimValue::Names(names)) => {
                    if !matches!(&f.value.kind, ExprKind::Name(n) if names.contains(&n.as_str())) {
                        let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
                        self.diags.push(bad(&quoted.join(" or ")));
                    }
                }
                Some(SimValue::Newton) => match &f.value.kind {
                    ExprKind::Name(n) if n == "legacy" => {}
                    ExprKind::Call(n, args)
                        if (n.name == "velocity" || n.name == "fixed") && args.len() == 1 =>
                    {
                        let v = self.expr(&args[0], env);
                        self.expect(args[0].span, v.ty, Ty::Scalar, "the argument");
                    }
                    _ => self
                        .diags
                        .push(bad("`velocity(tol)`, `legacy` or `fixed(n)`")),
                },
                Some(SimValue::Bodies) => {
                    let items = match &f.value.kind {
                        ExprKind::List(items) => items.as_slice(),
                        _ => std::slice::from_ref(&f.value),
                    };
                    for e in items {
                        // `body` or one of its coordinates, `body.position.x`.
                        let (body, coordinate) = match &e.kind {
                            ExprKind::Member(inner, axis) => match &inner.kind {
                                ExprKind::Member(b, what) => {
                                    (&**b, Some((what.name.as_str(), axis.name.as_str())))
                                }
                                _ => (e, Some(("", ""))),
                            },
                            _ => (e, None),
                        };
                        let is_name = matches!(&body.kind, ExprKind::Name(n) if n != "ground");
                        let v = self.expr(body, env);
                        let known = coordinate.is_none_or(|(what, axis)| {
                            GIVEN_COORDINATES.contains(&what) && ["x", "y", "z"].contains(&axis)
                        });
                        if !is_name || v.ty != Ty::Body || !known {
                            let label = match known {
                                true => "not a body of the model",
                                false => "not a coordinate of a body",
                            };
                            self.diags.push(
                                Diagnostic::error("E0214", format!("invalid value for `{key}`"))
                                    .at(e.span, label)
                                    .note("expected a body instance (its position stays as written during assembly), one coordinate `b.position.x`, `b.angle.x` (the rotation about a body axis), `b.velocity.x`, `b.omega_body.x` (y, z alike; kept in the assembly or the velocity projection), or a list `[a, b.omega_body.z]` of them"),
                            );
                        }
                    }
                }
                None => self.diags.push(
                    Diagnostic::error("E0210", format!("unknown simulate setting `{key}`"))
                        .at(f.name.span, "not a setting")
                        .suggest(key, SIM_KEYS.iter().copied())
                        .note(format!("the settings are {}", SIM_KEYS.join(", "))),
                ),
            }
        }
    }
}
