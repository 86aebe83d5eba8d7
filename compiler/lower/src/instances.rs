//! Instances: bodies (owners of coordinates), connectors and their connections,
//! nested instances flattened, runtime inputs and element state.

use super::*;

impl<'a> Lowering<'a> {
    /// Body `inst`, the `k`th top-level instance.
    pub(super) fn body_instance(&mut self, k: usize, inst: &fdc_frontend::ast::Instance) {
        let Some(def) = self.typedef(&inst.ty.name, inst.ty.span) else {
            return;
        };
        let Some(kind) = body_kind(def) else {
            return self.unchecked(inst.ty.span, "a body of a type without coordinates");
        };
        let fields = self.model_fields(&inst.fields);
        let index = self.bodies.len();
        // Register the body before its own parameters are computed: its defaults may
        // refer to itself, at an unknown (NaN) configuration.
        let body = Body {
            kind,
            q0: vec![f64::NAN; kind.sizes().0],
            v0: Vec::new(),
            q_offset: self.nq,
            v_offset: self.nv,
            mass: None,
            inertia: None,
            name: inst.name.name.clone(),
            span: inst.name.span,
        };
        let nv = body.nv();
        self.nq += body.nq();
        self.nv += nv;
        self.bodies.push(body);
        self.bodies[index].v0 = vec![f64::NAN; nv];
        self.body_of[k] = Some(index);
        let key = (inst.ty.name.clone(), vec![]);
        if !self.ensure_type(def, &key, &[]) {
            return;
        }
        let (q, v) = self.local_state(&[index], None);
        let Some(p) = self.params_of(
            &key,
            &q,
            &v,
            &fields,
            &inst.name.name,
            inst.span,
            true,
            &[index],
        ) else {
            return;
        };
        let (mass, inertia) = self.mass_properties(inst, &key, &p);
        self.bodies[index].mass = mass;
        self.bodies[index].inertia = inertia;
        let lt = &self.cache[&key];
        let Some(fi) = lt.fn_index else { return };
        let init = self.types[fi]
            .role(Role::Init)
            .map(|(f, _)| f.outputs.clone());
        let Some(init) = init else { return };
        match self.eval(&init, &LocalQ::default(), &[], &p, Time::Forbidden) {
            Ok(x) => {
                let nq = self.bodies[index].nq();
                self.bodies[index].q0 = x[..nq].to_vec();
                self.bodies[index].v0 = x[nq..nq + nv].to_vec();
            }
            Err(msg) => self.err(inst.span, msg),
        }
        self.push_instance(fi, &inst.name.name, p, &[index], None);
    }

    /// `own`: the global offsets (q, v) and number of a vector-space element's own
    /// coordinates, which come first in its maps.
    pub(super) fn push_instance(
        &mut self,
        fi: usize,
        name: &str,
        params: Vec<f64>,
        bodies: &[usize],
        own: Option<OwnCoordinates>,
    ) -> usize {
        let nl = self.types[fi].nl;
        let mut q_map = Vec::new();
        let mut v_map = Vec::new();
        if let Some((q, v, n)) = own {
            q_map.extend(q..q + n);
            v_map.extend(v..v + n);
        }
        for &b in bodies {
            let body = &self.bodies[b];
            q_map.extend(body.q_offset..body.q_offset + body.nq());
            v_map.extend(body.v_offset..body.v_offset + body.nv());
        }
        let lambda_map = (self.nl..self.nl + nl).collect();
        self.nl += nl;
        self.instances.push(Instance {
            name: name.to_string(),
            type_index: fi,
            params,
            q_map,
            v_map,
            lambda_map,
        });
        self.instances.len() - 1
    }

    /// A body name or `ground` given as a connection at model level (the checker has
    /// typed it a body).
    pub(super) fn connection(&mut self, e: &Expr) -> Option<Option<usize>> {
        let body = match &e.kind {
            ExprKind::Name(n) => match self.globals.resolution.get(e.span, n) {
                Some(Decl::Builtin("ground")) => return Some(None),
                Some(Decl::Instance(i)) => self.body_of[*i],
                _ => None,
            },
            _ => None,
        };
        if body.is_none() {
            self.unchecked(e.span, "a connection that is not a body");
        }
        body.map(Some)
    }

    pub(super) fn top_instance(&mut self, inst: &'a fdc_frontend::ast::Instance) {
        let Some(def) = self.typedef(&inst.ty.name, inst.ty.span) else {
            return;
        };
        let mut conns = Vec::new();
        for c in &inst.connections {
            match self.connection(c) {
                Some(b) => conns.push(b),
                None => return,
            }
        }
        // Defaulted connections (`b2: body = ground`) are ground.
        for (i, cp) in def.connections.iter().enumerate().skip(conns.len()) {
            match &cp.default {
                Some(d) => match self.connection(d) {
                    Some(b) => conns.push(b),
                    None => return,
                },
                None => {
                    let what = format!("connection {} (`{}`) missing", i + 1, cp.name.name);
                    return self.unchecked(inst.connections_span, &what);
                }
            }
        }
        let (timed, plain): (Vec<&'a Field>, Vec<&'a Field>) =
            inst.fields.iter().partition(|f| mentions_time(&f.value));
        let fields = self.model_fields(plain);
        let timed = TimedFields {
            list: (timed.into_iter())
                .map(|f| Timed {
                    field: f.name.name.clone(),
                    expr: &f.value,
                    captures: Vec::new(),
                })
                .collect(),
            owner: None,
        };
        self.self_joint(inst, &conns);
        self.glyph(inst, &conns, &fields);
        self.links.push(conns.clone());
        let n_err = self.errors.len();
        self.instantiate(def, &conns, &fields, &timed, &inst.name.name, inst.span);
        // A non-finite parameter most likely comes from a zero vector the user gave.
        if let Some(zero) = Self::zero_vector_field(&fields) {
            for e in &mut self.errors[n_err..] {
                if e.code == Some(plausible::E_NOT_FINITE) {
                    e.span = Some(zero);
                    e.label = Some("a zero-length vector".into());
                }
            }
        }
        // One report per instance: every primitive of a preset sees the same NaN.
        let mut seen = false;
        let mut k = n_err;
        while k < self.errors.len() {
            let dup = self.errors[k].code == Some(plausible::E_NOT_FINITE);
            if dup && seen {
                self.errors.remove(k);
            } else {
                seen |= dup;
                k += 1;
            }
        }
    }

    pub(super) fn instantiate(
        &mut self,
        def: &'a TypeInfo,
        conns: &[Option<usize>],
        fields: &[(String, Vec<f64>, Span, Option<usize>)],
        timed: &TimedFields<'a>,
        name: &str,
        span: Span,
    ) {
        if name.matches('.').count() > 16 {
            self.err(
                span,
                "element types nest too deeply (a type includes itself?)",
            );
            return;
        }
        if conns.len() != def.connections.len() {
            return self.unchecked(span, "a wrong number of connections");
        }
        let mask: Vec<Option<BodyKind>> = conns
            .iter()
            .map(|c| c.map(|b| self.bodies[b].kind))
            .collect();
        // Fields that depend on t make the type this instance's own.
        let type_name = match (timed.list.is_empty(), &timed.owner) {
            (true, _) => def.name.clone(),
            (false, Some(owner)) => format!("{}@{owner}", def.name),
            (false, None) => format!("{}@{name}", def.name),
        };
        let key = (type_name, mask);
        if !self.ensure_type(def, &key, &timed.list) {
            return;
        }
        let bodies: Vec<usize> = conns.iter().flatten().copied().collect();
        let Some((p, own)) = self.instance_params(&key, fields, name, span, &bodies) else {
            return;
        };
        // Fields of nested instances see the own coordinates at their initial values.
        let lt = &self.cache[&key];
        let own_q: Vec<f64> = lt.own_init.iter().map(|&o| p[o]).collect();
        let own_v: Vec<f64> = lt.own_rate.iter().map(|&o| p[o]).collect();
        let (q, v) = self.local_state(&bodies, own.map(|_| (&own_q[..], &own_v[..])));
        let lt = &self.cache[&key];
        let fn_index = lt.fn_index;
        // Nested instances: connections through the parent's, fields as numbers.
        let mut subs = Vec::new();
        for sub in &lt.subs {
            let sub_conns: Vec<Option<usize>> = sub
                .conns
                .iter()
                .map(|c| match c {
                    BodyRef::Ground => None,
                    BodyRef::Local(k) => Some(bodies[*k]),
                })
                .collect();
            let mut sub_fields = Vec::new();
            for (fname, nodes, fspan) in &sub.fields {
                match self.eval(nodes, &q, &v, &p, Time::Forbidden) {
                    Ok(x) => sub_fields.push((fname.clone(), x, *fspan, None)),
                    Err(msg) => self.errors.push(LowerError {
                        span: Some(*fspan),
                        message: msg,
                        ..Default::default()
                    }),
                }
            }
            for (field, captures) in &sub.timed {
                for (cname, value) in captures {
                    let nodes = value.scalars().unwrap_or_default();
                    match self.eval(&nodes, &q, &v, &p, Time::Forbidden) {
                        Ok(x) => sub_fields.push((format!("{field}@{cname}"), x, span, None)),
                        Err(msg) => self.errors.push(LowerError {
                            span: Some(span),
                            message: format!("`{cname}` in `{field}`: {msg}"),
                            ..Default::default()
                        }),
                    }
                }
            }
            subs.push((
                sub.ty.clone(),
                sub_conns,
                sub_fields,
                format!("{name}.{}", sub.name),
                // Problems of a preset's primitives are reported at the user's instance.
                span,
            ));
        }
        if let Some(fi) = fn_index {
            let idx = self.push_instance(fi, name, p, &bodies, own);
            self.record_inputs(&key, idx, fields);
            self.record_road(&key, idx, &bodies, span);
            self.point_glyph(def.kind, &key, idx, &bodies);
        }
        for (k, (ty, c, f, n, s)) in subs.into_iter().enumerate() {
            let timed = self.nested_timed(def, &key, k);
            if let Some(d) = self.typedef(&ty, s) {
                self.instantiate(d, &c, &f, &timed, &n, s);
            }
        }
    }

    /// The time-dependent fields of the `k`-th nested instance of the type `key` (of
    /// `def`): their expressions from the type's own statements, and the shared type
    /// name `TYPE@OUTER.NAME` (so all instances of the outer type share its code).
    fn nested_timed(&self, def: &'a TypeInfo, key: &TypeKey, k: usize) -> TimedFields<'a> {
        let sub = &self.cache[key].subs[k];
        let inst = def.body.iter().find_map(|s| match &s.kind {
            StmtKind::Instance(i) if i.name.name == sub.name => Some(i),
            _ => None,
        });
        let list = (sub.timed.iter())
            .filter_map(|(field, captures)| {
                let f = inst?.fields.iter().find(|f| &f.name.name == field)?;
                Some(Timed {
                    field: field.clone(),
                    expr: &f.value,
                    captures: captures.clone(),
                })
            })
            .collect();
        TimedFields {
            list,
            owner: Some(format!("{}.{}", key.0, sub.name)),
        }
    }

    /// The parameter values of an instance (and, for a type with coordinates of its
    /// own, where they go: (q offset, v offset, count)).
    fn instance_params(
        &mut self,
        key: &TypeKey,
        fields: &[(String, Vec<f64>, Span, Option<usize>)],
        name: &str,
        span: Span,
        bodies: &[usize],
    ) -> Option<(Vec<f64>, Option<OwnCoordinates>)> {
        let n_own = self.cache[key].n_own;
        if n_own == 0 {
            let (q, v) = self.local_state(bodies, None);
            let p = self.params_of(key, &q, &v, fields, name, span, true, bodies)?;
            Some((p, None))
        } else {
            // The initial values of the own coordinates are parameter slots computed
            // first (with the coordinates unknown), then the rest with them known.
            let nan = vec![f64::NAN; n_own];
            let (q, v) = self.local_state(bodies, Some((&nan, &nan)));
            let n_err = self.errors.len();
            let first = self.params_of(key, &q, &v, fields, name, span, false, bodies);
            let lt = &self.cache[key];
            let q0: Option<(Vec<f64>, Vec<f64>)> = first.map(|p| {
                let at = |slots: &[usize]| slots.iter().map(|&o| p[o]).collect();
                (at(&lt.own_init), at(&lt.own_rate))
            });
            let (q0, v0) = q0?;
            // Problems of this pass are reported by the next one.
            self.errors.truncate(n_err);
            let (q, v) = self.local_state(bodies, Some((&q0, &v0)));
            let p = self.params_of(key, &q, &v, fields, name, span, true, bodies)?;
            let own = (self.nq, self.nv, n_own);
            self.nq += n_own;
            self.nv += n_own;
            self.own_coordinates(name, &q0, &v0, own);
            Some((p, Some(own)))
        }
    }

    /// Inputs passed directly as a field value drive that parameter at run time.
    pub(super) fn record_inputs(
        &mut self,
        key: &TypeKey,
        instance: usize,
        fields: &[(String, Vec<f64>, Span, Option<usize>)],
    ) {
        for (fname, _, _, input) in fields {
            let Some(input) = input else { continue };
            if let Some(slot) = self.cache[key].slots.iter().find(|s| &s.name == fname) {
                self.inputs[*input].targets.push((instance, slot.offset));
            }
        }
    }

    /// The initial local q and v of an element: its own coordinates (if any), then
    /// those of its bodies.
    pub(super) fn local_state(
        &self,
        bodies: &[usize],
        own: Option<(&[f64], &[f64])>,
    ) -> (LocalQ, Vec<f64>) {
        let (mut q, mut v) = match own {
            Some((q, v)) => (q.to_vec(), v.to_vec()),
            None => (Vec::new(), Vec::new()),
        };
        let mut theta = Vec::new();
        for &b in bodies {
            let body = &self.bodies[b];
            theta.push((body.kind != BodyKind::Point).then_some(q.len() + 3));
            q.extend_from_slice(&body.q0);
            v.extend_from_slice(&body.v0);
        }
        (LocalQ { q, theta }, v)
    }

    /// The owner of a vector-space element's coordinates: an element of its own with
    /// `Init` (q₀ and the initial rates v₀, its parameters), `Update` (q + Δ) and `Scale` and no
    /// equations; the element's equations act on these coordinates like a connector.
    pub(super) fn own_coordinates(
        &mut self,
        name: &str,
        q0: &[f64],
        v0: &[f64],
        own: OwnCoordinates,
    ) {
        let n = q0.len();
        let fi = match self.owner_types.get(&n) {
            Some(&fi) => fi,
            None => {
                let mut graph = std::mem::take(&mut self.graph);
                let type_name = format!("coordinates[{n}]");
                let mut b =
                    ElementBuilder::new(&mut graph, &type_name, Coordinates::VectorSpace, n, 2 * n);
                let p: Vec<fdc_ir::Id> = (0..2 * n).map(|i| b.param(i)).collect();
                b.vector_initial(p[..n].to_vec(), p[n..].to_vec());
                let (r, how) = self.finish_type(b);
                let fi = r.map(|funcs| self.push_type(&graph, funcs, how));
                self.graph = graph;
                match fi {
                    Ok(fi) => {
                        self.owner_types.insert(n, fi);
                        fi
                    }
                    Err(e) => {
                        self.errors.push(LowerError {
                            span: None,
                            message: e.to_string(),
                            ..Default::default()
                        });
                        return;
                    }
                }
            }
        };
        let mut params = q0.to_vec();
        params.extend_from_slice(v0);
        self.push_instance(fi, &format!("{name}.coordinates"), params, &[], Some(own));
    }
}

/// Where an instance's own coordinates go: (q offset, v offset, count).
type OwnCoordinates = (usize, usize, usize);
