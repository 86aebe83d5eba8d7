//! Numbers: model-level expressions evaluated numerically, the fields of an instance,
//! and the parameter slots of an element type with their values per instance.

use super::*;

impl<'a> Lowering<'a> {
    /// A model-level expression as numbers.
    pub(super) fn numeric(&mut self, e: &Expr) -> Option<Vec<f64>> {
        let mut g = Graph::new();
        let mut lw = Lowerer::new(&self.globals, Target::Plain(&mut g));
        let v = lw.expr(e);
        let errors = std::mem::take(&mut lw.errors);
        drop(lw);
        self.errors.extend(errors);
        let ids = match v?.scalars() {
            Some(ids) => ids,
            None => {
                self.err(e.span, "expected a number, vector, matrix or quaternion");
                return None;
            }
        };
        match eval_nodes(&g, &ids, &LocalQ::default(), &[], &[], Time::Forbidden) {
            Ok(x) => Some(x),
            Err(msg) => {
                self.err(e.span, msg);
                None
            }
        }
    }

    /// Fields of an instance evaluated at model level: name → (value, input it copies).
    pub(super) fn model_fields<'f>(
        &mut self,
        fields: impl IntoIterator<Item = &'f Field>,
    ) -> Vec<(String, Vec<f64>, Span, Option<usize>)> {
        let mut out = Vec::new();
        for f in fields {
            let input = match &f.value.kind {
                ExprKind::Name(n) => match self.globals.resolution.get(f.value.span, n) {
                    Some(Decl::Input(i)) => self.input_index[*i],
                    _ => None,
                },
                _ => None,
            };
            if let Some(v) = self.numeric(&f.value) {
                out.push((f.name.name.clone(), v, f.span, input));
            }
        }
        out
    }

    /// The parameter vector of one instance: fields, defaults and hidden slots, in
    /// slot order (each may use the slots before it).
    /// `q`, `v`: the element's local state at t = 0. `finite`: whether a NaN or
    /// infinite value is an error (not while the own coordinates are still unknown).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn params_of(
        &mut self,
        key: &TypeKey,
        q: &LocalQ,
        v: &[f64],
        fields: &[(String, Vec<f64>, Span, Option<usize>)],
        name: &str,
        span: Span,
        finite: bool,
        bodies: &[usize],
    ) -> Option<Vec<f64>> {
        let (q, v) = (q.clone(), v.to_vec());
        let lt = &self.cache[key];
        let mut p = vec![f64::NAN; lt.n_params];
        enum Fill<'s> {
            Slot(&'s ParamSlot),
            Hidden(&'s Hidden),
        }
        let mut order: Vec<(usize, Fill)> =
            lt.slots.iter().map(|s| (s.offset, Fill::Slot(s))).collect();
        order.extend(lt.hidden.iter().map(|h| (h.offset, Fill::Hidden(h))));
        order.sort_by_key(|o| o.0);
        let mut errors = Vec::new();
        for (offset, fill) in order {
            let value = match fill {
                Fill::Slot(s) => match fields.iter().find(|f| f.0 == s.name) {
                    Some((_, x, fspan, _)) => {
                        if x.len() != s.size {
                            errors.push(LowerError {
                                span: Some(*fspan),
                                message: format!(
                                    "field `{}` has {} components, `{}` expects {}",
                                    s.name,
                                    x.len(),
                                    key.0,
                                    s.size
                                ),
                                ..Default::default()
                            });
                            continue;
                        }
                        Ok(x.clone())
                    }
                    None => match &s.default {
                        Some(nodes) => self.eval(nodes, &q, &v, &p, Time::Forbidden),
                        None => {
                            errors.push(LowerError {
                                span: Some(span),
                                message: format!(
                                    "`{name}` needs the field `{}` ({})",
                                    s.name,
                                    self.declared_at(s.span, &key.0)
                                ),
                                ..Default::default()
                            });
                            continue;
                        }
                    },
                },
                Fill::Hidden(h) => self.hidden_value(h, &q, &v, &p, bodies),
            };
            match value {
                Ok(x) => p[offset..offset + x.len()].copy_from_slice(&x),
                Err(msg) => errors.push(LowerError {
                    span: Some(span),
                    message: format!("`{name}`: {msg}"),
                    ..Default::default()
                }),
            }
        }
        if errors.is_empty() && finite {
            // A NaN here (a zero axis, a zero distance) would only surface later as an
            // "inconsistent configuration"; name the parameter instead.
            if let Some(bad) = p.iter().position(|x| !x.is_finite()) {
                let what = lt
                    .slots
                    .iter()
                    .find(|s| (s.offset..s.offset + s.size).contains(&bad))
                    .map(|s| format!("parameter `{}`", s.name))
                    .unwrap_or_else(|| {
                        "a value taken from the initial configuration (`initial`, `.local`)"
                            .to_string()
                    });
                errors.push(LowerError {
                    span: Some(span),
                    message: format!(
                        "`{name}`: {what} of `{}` is {} (a zero-length axis or distance?)",
                        key.0, p[bad]
                    ),
                    code: Some(super::plausible::E_NOT_FINITE),
                    hint: Some(
                        "an axis or direction must have a length; two points that define \
                         a direction must differ"
                            .into(),
                    ),
                    ..Default::default()
                });
            }
        }
        let ok = errors.is_empty();
        self.errors.extend(errors);
        ok.then_some(p)
    }

    /// The value of a hidden slot of an element connected to `bodies` (global body
    /// indices, in connection order): a mass property of one of them, else its nodes'
    /// value.
    pub(super) fn hidden_value(
        &self,
        h: &Hidden,
        q: &LocalQ,
        v: &[f64],
        p: &[f64],
        bodies: &[usize],
    ) -> Result<Vec<f64>, String> {
        let Some((k, prop)) = h.body else {
            // At t = 0, or for `at_time(e, T)` first T (parameters only), then e at T.
            return match h.time {
                None => self.eval(&h.nodes, q, v, p, Time::Initial),
                Some(when) => self
                    .eval(&[when], q, v, p, Time::Forbidden)
                    .and_then(|x| self.eval(&h.nodes, q, v, p, Time::At(x[0]))),
            };
        };
        let body = bodies.get(k).map(|&b| &self.bodies[b]);
        let value = match prop {
            expr::BodyProp::Mass => body.and_then(|b| b.mass).map(|m| vec![m]),
            expr::BodyProp::Inertia => body.and_then(|b| b.inertia).map(|j| j.to_vec()),
        };
        value.ok_or_else(|| {
            "a body's `mass` / `inertia` are the `param mass: scalar` / `param inertia: vec3` \
             of its type, which this body does not have (a body type reads its own \
             parameters directly)"
                .to_string()
        })
    }

    /// The value of nodes of the model's graph at build time, with the cone of `nodes`
    /// found once per node list (per type, not per instance).
    pub(super) fn eval(
        &self,
        nodes: &[Id],
        q: &LocalQ,
        v: &[f64],
        p: &[f64],
        time: Time,
    ) -> Result<Vec<f64>, String> {
        self.cones.eval(&self.graph, nodes, q, v, p, time)
    }
}

impl Lowering<'_> {
    /// Where a declaration is, as `fdc check` shows places: `file:line:col` when the
    /// source files are known, else the element type it belongs to.
    fn declared_at(&self, span: Span, ty: &str) -> String {
        match self.globals.files {
            Some(f) => {
                let (line, col) = f.line_col(span.file, span.start as usize);
                format!("declared at {}:{line}:{col}", f.name(span.file))
            }
            None => format!("declared in `{ty}`"),
        }
    }
}
