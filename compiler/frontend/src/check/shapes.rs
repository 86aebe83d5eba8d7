//! `shape KIND on BODY { fields }`: display geometry for `fdc view`. The checker knows
//! the kinds and their fields ([`SHAPE_KINDS`], the one table; the lowering applies the
//! defaults and checks the values); a shape adds nothing to the model's equations.

use super::*;

/// A field of a shape: name, type, required.
pub type ShapeField = (&'static str, Ty, bool);

/// Fields every kind takes: colour (RGB in 0..1), opacity (0..1), the offset and the
/// orientation of the shape in the body frame.
pub const SHAPE_COMMON: &[ShapeField] = &[
    ("colour", Ty::Vec3, false),
    ("opacity", Ty::Scalar, false),
    ("at", Ty::Vec3, false),
    ("orientation", Ty::Quat, false),
];

/// Every shape kind with its own fields (besides [`SHAPE_COMMON`]). Cylinders and
/// capsules lie along the shape's z axis; `length` of a capsule is that of its
/// cylinder part (the two half spheres add `radius` each); a mesh's vertices are in
/// the file's units times `scale`.
pub const SHAPE_KINDS: &[(&str, &[ShapeField])] = &[
    ("box", &[("size", Ty::Vec3, true)]),
    ("sphere", &[("radius", Ty::Scalar, true)]),
    (
        "cylinder",
        &[("radius", Ty::Scalar, true), ("length", Ty::Scalar, true)],
    ),
    (
        "capsule",
        &[("radius", Ty::Scalar, true), ("length", Ty::Scalar, true)],
    ),
    (
        "mesh",
        &[("file", Ty::Str, true), ("scale", Ty::Scalar, false)],
    ),
];

impl<'m> Checker<'m> {
    pub(super) fn check_shape(&mut self, sh: &ShapeDecl, env: &Env) {
        let b = self.expr(&sh.body, env);
        self.expect(sh.body.span, b.ty, Ty::Body, "the body of a shape");
        let Some((_, own)) = SHAPE_KINDS.iter().find(|(k, _)| *k == sh.kind.name) else {
            self.diags.push(
                Diagnostic::error("E0220", format!("unknown shape kind `{}`", sh.kind.name))
                    .at(sh.kind.span, "not a shape kind")
                    .suggest(&sh.kind.name, SHAPE_KINDS.iter().map(|(k, _)| *k))
                    .note(format!(
                        "the shape kinds are {}",
                        SHAPE_KINDS
                            .iter()
                            .map(|(k, _)| format!("`{k}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )),
            );
            return;
        };
        let fields = || own.iter().chain(SHAPE_COMMON);
        let mut seen: Vec<&str> = Vec::new();
        for f in &sh.fields {
            let name = f.name.name.as_str();
            if seen.contains(&name) {
                self.diags.push(
                    Diagnostic::error("E0206", format!("field `{name}` is given twice"))
                        .at(f.name.span, "given again here"),
                );
                continue;
            }
            seen.push(name);
            let Some((_, ty, _)) = fields().find(|(n, _, _)| *n == name) else {
                self.diags.push(
                    Diagnostic::error(
                        "E0204",
                        format!("a `{}` shape has no field `{name}`", sh.kind.name),
                    )
                    .at(f.name.span, "unknown field")
                    .suggest(name, fields().map(|(n, _, _)| *n)),
                );
                continue;
            };
            if *ty == Ty::Str {
                if !matches!(f.value.kind, ExprKind::Str(_)) {
                    self.diags.push(
                        Diagnostic::error("E0301", format!("`{name}` must be a file name"))
                            .at(f.value.span, "expected a string such as \"part.stl\""),
                    );
                }
                continue;
            }
            let v = self.expr(&f.value, env);
            self.expect(f.value.span, v.ty, *ty, &format!("shape field `{name}`"));
        }
        for (n, _, required) in fields() {
            if *required && !seen.contains(n) {
                self.diags.push(
                    Diagnostic::error(
                        "E0205",
                        format!("a `{}` shape needs the field `{n}`", sh.kind.name),
                    )
                    .at(sh.span, format!("add `{n} = ...;`")),
                );
            }
        }
    }
}
