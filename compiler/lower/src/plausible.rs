//! Plausibility of a model's numbers: what lowers and integrates but cannot be a
//! physical system (a negative mass, inertias no rigid body has, a joint from a body to
//! itself, a zero-length axis) is an error at the field or connection that says it; a
//! body nothing ties to the ground is a warning (free floating may be meant).
//!
//! The mass properties of a body are its type's `param mass` (scalar) and `param
//! inertia` (vec3, principal moments about the centre of mass): the library's bodies
//! name them so, and `b.mass` / `b.inertia` read the same slots.

use super::*;

/// Relative slack of the triangle inequality (round-off of inertias computed from a
/// CAD tensor).
const TRIANGLE_SLACK: f64 = 1e-9;

/// The codes of the plausibility checks: one title each (part of [`CODES`]).
pub(super) const E_MASS: &str = "E0940";
pub(super) const E_INERTIA: &str = "E0941";
pub(super) const E_SELF_JOINT: &str = "E0942";
pub(super) const E_NOT_FINITE: &str = "E0943";
pub(super) const W_ZERO_INERTIA: &str = "W0940";
pub(super) const W_FREE_BODY: &str = "W0941";

/// What is wrong with principal inertias `j` (`None`: plausible). Only the first
/// problem is named.
pub fn inertia_problem(j: [f64; 3]) -> Option<String> {
    if let Some(i) = j.iter().position(|x| !x.is_finite() || *x < 0.0) {
        return Some(format!(
            "principal inertia {} is {} (must be ≥ 0)",
            ["x", "y", "z"][i],
            j[i]
        ));
    }
    let sum = j[0] + j[1] + j[2];
    for i in 0..3 {
        let others = sum - j[i];
        if j[i] > others + TRIANGLE_SLACK * sum {
            return Some(format!(
                "principal inertias [{}, {}, {}] violate the triangle inequality: \
                 J{} = {} exceeds the sum of the other two ({})",
                j[0],
                j[1],
                j[2],
                ["x", "y", "z"][i],
                j[i],
                others
            ));
        }
    }
    None
}

impl<'a> Lowering<'a> {
    /// A diagnostic of a plausibility check at `span`.
    fn plausibility(
        &mut self,
        code: &'static str,
        span: Span,
        message: String,
        label: &str,
        hint: &str,
    ) {
        self.errors.push(LowerError {
            span: Some(span),
            message,
            code: Some(code),
            label: Some(label.to_string()),
            hint: Some(hint.to_string()),
            warning: code.starts_with('W'),
        });
    }

    /// The mass properties of a body instance from its parameter vector `p`, checked:
    /// the span of a wrong value is its field, else (a default) the instance.
    pub(super) fn mass_properties(
        &mut self,
        inst: &fdc_frontend::ast::Instance,
        key: &TypeKey,
        p: &[f64],
    ) -> (Option<f64>, Option<[f64; 3]>) {
        let slot = |name: &str, size: usize| {
            self.cache[key]
                .slots
                .iter()
                .find(|s| s.name == name && s.size == size)
                .map(|s| p[s.offset..s.offset + size].to_vec())
        };
        let mass = slot("mass", 1).map(|m| m[0]);
        let inertia = slot("inertia", 3).map(|j| [j[0], j[1], j[2]]);
        let at = |field: &str| {
            inst.fields
                .iter()
                .find(|f| f.name.name == field)
                .map_or(inst.span, |f| f.value.span)
        };
        let name = &inst.name.name;
        if let Some(m) = mass.filter(|m| !m.is_finite() || *m <= 0.0) {
            self.plausibility(
                E_MASS,
                at("mass"),
                format!("body `{name}` has mass {m}; a mass must be positive"),
                "not a positive mass",
                "a massless point is a joint or a measure, not a body; \
                 give the body its mass in kg",
            );
        }
        if let Some(j) = inertia {
            if let Some(problem) = inertia_problem(j) {
                self.plausibility(
                    E_INERTIA,
                    at("inertia"),
                    format!("body `{name}`: {problem}"),
                    "no rigid body has these inertias",
                    "principal moments about the centre of mass satisfy \
                     Ja + Jb ≥ Jc for every ordering, each ≥ 0",
                );
            } else if j.contains(&0.0) {
                self.plausibility(
                    W_ZERO_INERTIA,
                    at("inertia"),
                    format!("body `{name}` has a zero principal inertia {j:?}"),
                    "a zero moment of inertia",
                    "fine for a slender rod or a point, but a joint must hold the \
                     rotation about that axis, or the mass matrix is singular",
                );
            }
        }
        (mass, inertia)
    }

    /// A joint whose connections name the same body twice (or ground twice).
    pub(super) fn self_joint(
        &mut self,
        inst: &fdc_frontend::ast::Instance,
        conns: &[Option<usize>],
    ) {
        if inst.kind != Kind::Joint {
            return;
        }
        for (i, a) in conns.iter().enumerate() {
            if conns[..i].contains(a) {
                let what = match a {
                    Some(b) => format!("body `{}`", self.body_name(*b)),
                    None => "`ground`".to_string(),
                };
                self.plausibility(
                    E_SELF_JOINT,
                    inst.connections_span,
                    format!("joint `{}` connects {what} to itself", inst.name.name),
                    "the same body twice",
                    "a joint constrains one body relative to another (leave out the \
                     second connection to join it to ground)",
                );
                return;
            }
        }
    }

    pub(super) fn body_name(&self, b: usize) -> &str {
        self.bodies.get(b).map_or("?", |b| b.name.as_str())
    }

    /// The span of a zero vec3 among the evaluated fields of an instance, where a
    /// non-finite value of the instance most likely comes from.
    pub(super) fn zero_vector_field(
        fields: &[(String, Vec<f64>, Span, Option<usize>)],
    ) -> Option<Span> {
        // A point may well be the origin (`at = [0, 0, 0]`); a direction may not, so a
        // zero field that is not a point is the likelier culprit.
        let zero: Vec<_> = fields
            .iter()
            .filter(|f| f.1.len() == 3 && f.1.iter().all(|x| *x == 0.0))
            .collect();
        let is_point = |name: &str| name.starts_with("at") || name.starts_with("origin");
        zero.iter()
            .find(|f| !is_point(&f.0))
            .or(zero.first())
            .map(|f| f.2)
    }

    /// Bodies with no chain of elements to the ground: a warning each (they float) —
    /// but only in a model where some body is grounded: a model of free bodies only (a
    /// satellite, a torque-free body, a falling mass) floats on purpose, while one loose
    /// body in a mechanism is a forgotten joint. `links`: the connections of every
    /// element instance, ground as `None`.
    pub(super) fn free_bodies(&mut self, links: &[Vec<Option<usize>>], spans: &[Span]) {
        let n = self.bodies.len();
        // Union-find over the bodies and ground (index n).
        let mut parent: Vec<usize> = (0..=n).collect();
        fn root(p: &mut [usize], mut i: usize) -> usize {
            while p[i] != i {
                p[i] = p[p[i]];
                i = p[i];
            }
            i
        }
        for conns in links {
            let ids: Vec<usize> = conns.iter().map(|c| c.unwrap_or(n)).collect();
            for w in ids.windows(2) {
                let (a, b) = (root(&mut parent, w[0]), root(&mut parent, w[1]));
                parent[a] = b;
            }
        }
        let ground = root(&mut parent, n);
        if (0..n).all(|b| root(&mut parent, b) != ground) {
            return;
        }
        for (b, span) in spans.iter().enumerate().take(n) {
            if root(&mut parent, b) != ground {
                let name = self.body_name(b).to_string();
                self.plausibility(
                    W_FREE_BODY,
                    *span,
                    format!("body `{name}` has no joint or force path to the ground"),
                    "floats freely",
                    "intended for a body in flight; otherwise connect it by a joint \
                     or force to `ground` or to a grounded body",
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::inertia_problem;

    #[test]
    fn inertias_of_real_bodies_pass_and_impossible_ones_are_named() {
        // A box 1 × 2 × 3 m of 6 kg: J = m/12 (b² + c², ...).
        let j = [6.0 / 12.0 * 13.0, 6.0 / 12.0 * 10.0, 6.0 / 12.0 * 5.0];
        assert_eq!(inertia_problem(j), None);
        // A thin disc is the limit case Jz = Jx + Jy.
        assert_eq!(inertia_problem([0.5, 0.5, 1.0]), None);
        // A slender rod: one zero moment (a warning elsewhere, not an error).
        assert_eq!(inertia_problem([0.0, 1.0, 1.0]), None);
        let e = inertia_problem([1.0, 1.0, 2.5]).unwrap();
        assert!(e.contains("Jz = 2.5") && e.contains("(2)"), "{e}");
        let e = inertia_problem([1.0, -0.1, 1.0]).unwrap();
        assert!(e.contains("inertia y is -0.1"), "{e}");
    }
}
