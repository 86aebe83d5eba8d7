//! Element types: each lowered once per pattern of connections (ground, rigid or
//! Euler-parameter body) through `fdc_diff::ElementBuilder`.

use super::*;

impl<'a> Lowering<'a> {
    /// The checked element type `name` (every instance's type is one).
    pub(super) fn typedef(&mut self, name: &str, span: Span) -> Option<&'a TypeInfo> {
        let t = self.globals.model.types.get(name);
        if t.is_none() {
            self.err(span, format!("unknown element type `{name}`"));
        }
        t
    }

    /// Lowers `def` for a ground pattern unless done already. False on errors.
    pub(super) fn ensure_type(
        &mut self,
        def: &'a TypeInfo,
        key: &TypeKey,
        timed: &[Timed<'a>],
    ) -> bool {
        if self.cache.contains_key(key) {
            return true;
        }
        // Pass 1 on a scratch graph learns the number of parameter slots, which the
        // builder needs up front; pass 2 builds for real. Lowering is cheap.
        let n_params = {
            let mut scratch = Graph::new();
            match self.lower_type(def, key, timed, &mut scratch, 0, true) {
                Ok(lt) => lt.n_params,
                Err(e) => {
                    self.errors.extend(e);
                    return false;
                }
            }
        };
        let mut graph = std::mem::take(&mut self.graph);
        let r = self.lower_type(def, key, timed, &mut graph, n_params, false);
        self.graph = graph;
        match r {
            Ok(lt) => {
                self.cache.insert(key.clone(), lt);
                true
            }
            Err(e) => {
                self.errors.extend(e);
                false
            }
        }
    }

    pub(super) fn lower_type(
        &mut self,
        def: &'a TypeInfo,
        key: &TypeKey,
        timed: &[Timed<'a>],
        graph: &mut Graph,
        n_params: usize,
        dry: bool,
    ) -> Result<LoweredType, Vec<LowerError>> {
        let conns = key.1.as_slice();
        let self_kind = body_kind(def);
        let n_own = own_coordinates(def);
        let (kind, kinds) = match self_kind {
            Some(BodyKind::Rigid) => (Coordinates::RigidBody, vec![BodyKind::Rigid]),
            Some(BodyKind::Euler) => (Coordinates::EulerBody, vec![BodyKind::Euler]),
            Some(BodyKind::Point) => (Coordinates::PointBody, vec![BodyKind::Point]),
            None => (
                Coordinates::Connector,
                conns.iter().flatten().copied().collect(),
            ),
        };
        // Ground connections, Euler-parameter bodies and point masses get a type of their
        // own: `[gb]`, `[eb]`, `[pb]`, ...
        let suffix: String = if conns.iter().any(|c| *c != Some(BodyKind::Rigid)) {
            let s: Vec<&str> = conns
                .iter()
                .map(|c| match c {
                    None => "g",
                    Some(BodyKind::Rigid) => "b",
                    Some(BodyKind::Euler) => "e",
                    Some(BodyKind::Point) => "p",
                })
                .collect();
            format!("[{}]", s.join(""))
        } else {
            String::new()
        };
        // `key.0` is the type's name, or `TYPE@INSTANCE` for an instance of its own.
        let type_name = format!("{}{suffix}", key.0);
        let mut builder =
            ElementBuilder::with_bodies(graph, &type_name, kind, n_own, &kinds, n_params);
        let n_constraints = def
            .body
            .iter()
            .filter(|s| matches!(s.kind, StmtKind::Constrain(_)))
            .count();
        let mut lw = Lowerer::new(&self.globals, Target::Element(&mut builder));
        if self_kind.is_some() {
            lw.scope.insert("self".into(), Val::Body(BodyRef::Local(0)));
        }
        let mut k = 0;
        for (cp, g) in def.connections.iter().zip(conns) {
            let b = if g.is_none() {
                BodyRef::Ground
            } else {
                k += 1;
                BodyRef::Local(k - 1)
            };
            lw.scope.insert(cp.name.name.clone(), Val::Body(b));
        }
        let mut ctx = StmtCtx {
            n_constraints,
            ..StmtCtx::default()
        };
        lower_stmts(&mut lw, &def.body, timed, &mut ctx);
        if ctx.kinetic.is_some() || ctx.potential.is_some() {
            if let Target::Element(b) = &mut lw.target {
                let zero = b.graph().constant(0.0);
                b.lagrangian(ctx.kinetic.unwrap_or(zero), ctx.potential.unwrap_or(zero));
            }
        }
        let StmtCtx {
            slots,
            subs,
            equations,
            own_init,
            own_rate,
            ..
        } = ctx;
        let errors = std::mem::take(&mut lw.errors);
        let hidden = std::mem::take(&mut lw.hidden);
        let n_used = lw.next_param;
        drop(lw);
        if !errors.is_empty() {
            return Err(errors);
        }
        let fn_index = if !dry && equations {
            match self.finish_type(builder) {
                (Ok(funcs), how) => Some(self.push_type(graph, funcs, how)),
                (Err(e), _) => {
                    return Err(vec![LowerError {
                        span: Some(def.name_span),
                        message: e.to_string(),
                        ..Default::default()
                    }])
                }
            }
        } else {
            None
        };
        Ok(LoweredType {
            fn_index,
            n_params: n_used.max(n_params),
            slots,
            hidden,
            subs,
            n_own,
            own_init,
            own_rate,
        })
    }
}
