//! Lowering of fd expressions to IR values, in a scope of names.
//!
//! One lowering serves both uses: inside an element type (parameters are `Slot::P`
//! inputs, bodies have kinematics from the [`ElementBuilder`]) and at model level
//! (parameters are constants; the result is evaluated numerically).

use crate::globals::Globals;
use crate::value::{binary, map, Arith, BodyRef, Val};
use crate::LowerError;
use fdc_diff::ElementBuilder;
use fdc_frontend::ast::{BinOp, CmpOp, Expr, ExprKind, FnDecl, Ident, Span};
use fdc_frontend::builtins::{self, Builtin};
use fdc_frontend::Decl;
use fdc_ir::{Cmp, Graph, Id, Slot, V3};
use std::collections::HashMap;

/// Where the nodes go: a plain graph (model level) or an element under construction.
pub enum Target<'x, 'g> {
    Plain(&'x mut Graph),
    Element(&'x mut ElementBuilder<'g>),
}

impl Target<'_, '_> {
    pub fn g(&mut self) -> &mut Graph {
        match self {
            Target::Plain(g) => g,
            Target::Element(b) => b.graph(),
        }
    }
}

/// A parameter slot whose value is computed per instance at build time from IR nodes
/// (`initial(e)`, `b.local(x)`): the nodes may contain rotation symbols.
#[derive(Clone, Debug)]
pub struct Hidden {
    pub offset: usize,
    pub nodes: Vec<Id>,
    /// `at_time(e, T)`: the node of T (a value of parameters); `None` is t = 0.
    pub time: Option<Id>,
    /// `b.mass` / `b.inertia`: the slot holds a mass property of the body connected
    /// at this index (read from that body's parameters, not computed from `nodes`).
    pub body: Option<(usize, BodyProp)>,
}

/// A mass property of a body instance (`plausible` reads the same parameters).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BodyProp {
    Mass,
    Inertia,
}

/// Most user-function calls inlined inside one another: its home is the compile
/// stack's sizing, [`fdc_frontend::stack`].
pub use fdc_frontend::stack::MAX_CALL_DEPTH;

pub struct Lowerer<'a, 'x, 'g> {
    pub globals: &'a Globals<'a>,
    pub target: Target<'x, 'g>,
    /// Names visible here: lets, parameters, connections, function arguments.
    pub scope: HashMap<String, Val>,
    /// Next free parameter slot of the element (hidden slots are allocated here).
    pub next_param: usize,
    pub hidden: Vec<Hidden>,
    pub errors: Vec<LowerError>,
    /// Guards against runaway recursion of user functions.
    depth: usize,
}

fn cmp_of(op: CmpOp) -> Cmp {
    match op {
        CmpOp::Lt => Cmp::Lt,
        CmpOp::Le => Cmp::Le,
        CmpOp::Gt => Cmp::Gt,
        CmpOp::Ge => Cmp::Ge,
        CmpOp::Eq => Cmp::Eq,
        CmpOp::Ne => Cmp::Ne,
    }
}

impl<'a, 'x, 'g> Lowerer<'a, 'x, 'g> {
    pub fn new(globals: &'a Globals<'a>, target: Target<'x, 'g>) -> Self {
        Lowerer {
            globals,
            target,
            scope: HashMap::new(),
            next_param: 0,
            hidden: Vec::new(),
            errors: Vec::new(),
            depth: 0,
        }
    }

    fn g(&mut self) -> &mut Graph {
        self.target.g()
    }

    /// The graph the values are built in.
    pub fn graph(&mut self) -> &mut Graph {
        self.target.g()
    }

    /// A value computed per instance at build time: hidden parameter slots.
    pub fn hide_value(&mut self, v: &Val, span: Span) -> Option<Val> {
        self.hide(v, span)
    }

    pub fn error<T>(&mut self, span: Span, message: impl Into<String>) -> Option<T> {
        self.errors.push(LowerError {
            span: Some(span),
            message: message.into(),
            ..Default::default()
        });
        None
    }

    /// Lowers `e`; on failure records an error and returns `None`.
    pub fn expr(&mut self, e: &Expr) -> Option<Val> {
        match &e.kind {
            ExprKind::Number(text) => match text.parse::<f64>() {
                Ok(x) => Some(Val::S(self.g().constant(x))),
                Err(_) => self.error(e.span, format!("`{text}` is not a number")),
            },
            ExprKind::Str(_) => Some(Val::Str),
            ExprKind::Name(n) => self.name(n, e.span),
            ExprKind::List(items) => {
                let vals: Option<Vec<Val>> = items.iter().map(|i| self.expr(i)).collect();
                let vals = vals?;
                match vals.as_slice() {
                    [Val::S(a), Val::S(b), Val::S(c)] => Some(Val::V([*a, *b, *c])),
                    [Val::V(a), Val::V(b), Val::V(c)] => Some(Val::M([*a, *b, *c])),
                    _ => Some(Val::List),
                }
            }
            ExprKind::Neg(a) => {
                let v = self.expr(a)?;
                map(self.g(), &v, |g, x| g.neg(x))
                    .or_else(|| self.error(e.span, format!("cannot negate a {}", v.kind())))
            }
            ExprKind::Binary(op, a, b) => {
                let (x, y) = (self.expr(a)?, self.expr(b)?);
                let r = match op {
                    BinOp::Add => binary(self.g(), Arith::Add, &x, &y),
                    BinOp::Sub => binary(self.g(), Arith::Sub, &x, &y),
                    BinOp::Mul => binary(self.g(), Arith::Mul, &x, &y),
                    BinOp::Div => binary(self.g(), Arith::Div, &x, &y),
                    BinOp::Pow => match (&x, &y) {
                        (Val::S(base), Val::S(exp)) => {
                            let (base, exp) = (*base, *exp);
                            Some(Val::S(self.pow(base, exp)))
                        }
                        _ => None,
                    },
                };
                r.or_else(|| {
                    self.error(
                        e.span,
                        format!("no operator for a {} and a {}", x.kind(), y.kind()),
                    )
                })
            }
            ExprKind::Compare(..) => self.error(
                e.span,
                "a comparison is only allowed as the condition of `if`",
            ),
            ExprKind::If(c, a, b) => {
                let ExprKind::Compare(op, l, r) = &c.kind else {
                    return self.error(c.span, "the condition of `if` must be a comparison");
                };
                let (l, r) = (self.scalar(l)?, self.scalar(r)?);
                let (t, f) = (self.expr(a)?, self.expr(b)?);
                let (ts, fs) = match (t.scalars(), f.scalars()) {
                    (Some(ts), Some(fs)) if ts.len() == fs.len() => (ts, fs),
                    _ => return self.error(e.span, "both branches of `if` must have one type"),
                };
                let cmp = cmp_of(*op);
                let out: Vec<Id> = ts
                    .iter()
                    .zip(&fs)
                    .map(|(&x, &y)| self.g().select(cmp, l, r, x, y))
                    .collect();
                Some(t.with_scalars(&out))
            }
            ExprKind::Call(f, args) => self.call(f, args, e.span),
            ExprKind::Member(base, m) => {
                let b = self.expr(base)?;
                self.member(&b, &m.name, &[], e.span)
            }
            ExprKind::Method(base, m, args) => {
                let b = self.expr(base)?;
                self.member(&b, &m.name, args, e.span)
            }
            // The front end's expansion resolves every index of a checked model.
            ExprKind::Index(..) => self.error(e.span, "an index left after the expansion of loops"),
            ExprKind::Error => None,
        }
    }

    pub fn scalar(&mut self, e: &Expr) -> Option<Id> {
        match self.expr(e)? {
            Val::S(x) => Some(x),
            other => self.error(
                e.span,
                format!("expected a scalar, found a {}", other.kind()),
            ),
        }
    }

    pub fn vec3(&mut self, e: &Expr) -> Option<V3> {
        match self.expr(e)? {
            Val::V(x) => Some(x),
            other => self.error(e.span, format!("expected a vec3, found a {}", other.kind())),
        }
    }

    fn pow(&mut self, base: Id, exp: Id) -> Id {
        match self.g().as_const(exp) {
            Some(n) if n.fract() == 0.0 && n.abs() <= 64.0 => self.g().powi(base, n as i32),
            _ => self.g().pow(base, exp),
        }
    }

    fn name(&mut self, n: &str, span: Span) -> Option<Val> {
        if let Some(v) = self.scope.get(n) {
            return Some(v.clone());
        }
        match n {
            "pi" => return Some(Val::S(self.g().constant(std::f64::consts::PI))),
            "ground" => return Some(Val::Body(BodyRef::Ground)),
            "t" => {
                return match &mut self.target {
                    Target::Element(b) => Some(Val::S(b.time())),
                    Target::Plain(_) => {
                        self.error(span, "time `t` is only known inside an element or output")
                    }
                }
            }
            "gravity" => {
                let gv = self.globals.gravity;
                return Some(Val::V(self.g().v3_const(gv)));
            }
            _ => {}
        }
        let globals = self.globals;
        let value = match globals.resolution.get(span, n) {
            Some(Decl::Param(i)) => globals.params.get(*i),
            Some(Decl::Input(i)) => globals.inputs.get(*i),
            _ => None,
        };
        match value {
            Some(Some(x)) => Some(self.constant_val(x)),
            _ => self.error(span, format!("`{n}` is not defined here")),
        }
    }

    pub fn constant_val(&mut self, x: &[f64]) -> Val {
        let ids: Vec<Id> = x.iter().map(|&c| self.g().constant(c)).collect();
        match ids.len() {
            1 => Val::S(ids[0]),
            3 => Val::V([ids[0], ids[1], ids[2]]),
            4 => Val::Q([ids[0], ids[1], ids[2], ids[3]]),
            9 => Val::M([
                [ids[0], ids[1], ids[2]],
                [ids[3], ids[4], ids[5]],
                [ids[6], ids[7], ids[8]],
            ]),
            _ => Val::List,
        }
    }

    /// Allocates hidden parameter slots for the value `v`, computed per instance.
    fn hide(&mut self, v: &Val, span: Span) -> Option<Val> {
        self.hide_at(v, None, span)
    }

    /// [`Self::hide`] evaluated at the time `time` (a node of parameters) instead of 0.
    fn hide_at(&mut self, v: &Val, time: Option<Id>, span: Span) -> Option<Val> {
        let Some(nodes) = v.scalars() else {
            return self.error(span, format!("`initial` of a {}", v.kind()));
        };
        let offset = self.next_param;
        self.next_param += nodes.len();
        self.hidden.push(Hidden {
            offset,
            nodes,
            time,
            body: None,
        });
        let n = v.scalars().map(|s| s.len()).unwrap_or(0);
        let ids: Vec<Id> = (0..n)
            .map(|i| self.g().input(Slot::P, offset + i))
            .collect();
        Some(v.with_scalars(&ids))
    }

    /// `continuous(r)`: the angle `r` ∈ (−π, π] counted through any number of
    /// revolutions. Element state `last` (a hidden slot, r at t = 0) holds the last
    /// accepted value; the value is `last + atan2(sin(r − last), cos(r − last))` (the
    /// library's `unwrap`), written back to `last` after every accepted step. So the
    /// idiom `param turns = initial(r); state turns = unwrap(r, turns);` is one call,
    /// usable in a model-level `output` too (which is an element of its own).
    fn continuous(&mut self, a: &Expr, span: Span) -> Option<Val> {
        if !matches!(self.target, Target::Element(_)) {
            return self.error(
                span,
                "`continuous` keeps state, so it is only known inside an element type or an output",
            );
        }
        let r = self.scalar(a)?;
        let offset = self.next_param;
        let Some(Val::S(last)) = self.hide(&Val::S(r), span) else {
            return None;
        };
        let g = self.g();
        let d = g.sub(r, last);
        let (s, c) = (g.sin(d), g.cos(d));
        let w = g.atan2(s, c);
        let phi = g.add2(last, w);
        if let Target::Element(bl) = &mut self.target {
            bl.state(offset, phi);
        }
        Some(Val::S(phi))
    }

    fn call(&mut self, name: &Ident, args: &[Expr], span: Span) -> Option<Val> {
        let (f, globals) = (name.name.as_str(), self.globals);
        let decl = globals.resolution.get(name.span, f);
        let builtin = match decl {
            Some(Decl::Builtin(_)) => builtins::function(f).map(|b| b.builtin),
            _ => None,
        };
        // Forms that do not evaluate their argument first.
        match builtin {
            Some(Builtin::Initial) => {
                if !matches!(self.target, Target::Element(_)) {
                    // At model level everything is already initial.
                    return self.expr(args.first()?);
                }
                let [a] = args else {
                    return self.error(span, "`initial` takes one argument");
                };
                let v = self.expr(a)?;
                return self.hide(&v, span);
            }
            Some(Builtin::Continuous) => {
                let [a] = args else {
                    return self.error(span, "`continuous` takes one argument");
                };
                return self.continuous(a, span);
            }
            Some(Builtin::AtTime) => {
                let [a, when] = args else {
                    return self.error(span, "`at_time` takes two arguments (e, T)");
                };
                let when = self.scalar(when)?;
                if !matches!(self.target, Target::Element(_)) {
                    return self.error(span, "`at_time` is only known inside an element type");
                }
                let v = self.expr(a)?;
                return self.hide_at(&v, Some(when), span);
            }
            Some(Builtin::Rate) => {
                let [a] = args else {
                    return self.error(span, "`rate` takes one argument");
                };
                let v = self.expr(a)?;
                return match &mut self.target {
                    Target::Element(b) => {
                        let s = v.scalars()?;
                        let r: Vec<Id> = s.into_iter().map(|x| b.rate(x)).collect();
                        Some(v.with_scalars(&r))
                    }
                    Target::Plain(_) => self.error(span, "`rate` is only known inside an element"),
                };
            }
            Some(Builtin::Tir) => return self.tir_call(args, span),
            Some(Builtin::Crg) => return self.crg_call(args, span),
            _ => {}
        }
        if self.globals.broken_splines.contains(f) {
            // The declaration's error is reported; the whole lowering fails with it.
            return None;
        }
        if let (Some(Decl::Spline(_)), Some(table)) = (decl, globals.splines.get(f)) {
            let [arg] = args else {
                return self.error(span, format!("spline `{f}` takes one scalar"));
            };
            return match self.expr(arg)? {
                Val::S(x) => {
                    let g = self.target.g();
                    let t = g.add_table(table.clone());
                    Some(Val::S(g.spline(t, 0, x)))
                }
                other => self.error(
                    arg.span,
                    format!("spline `{f}` takes a scalar, found a {}", other.kind()),
                ),
            };
        }
        if let Some(Decl::Fn(i)) = decl {
            return self.user_fn(&globals.model.functions[*i], args, span);
        }
        let Some(builtin) = builtin else {
            return self.error(span, format!("unknown function `{f}`"));
        };
        let vals: Option<Vec<Val>> = args.iter().map(|a| self.expr(a)).collect();
        let vals = vals?;
        let r = self.builtin(builtin, &vals);
        match r {
            Ok(v) => Some(v),
            Err(msg) => self.error(span, msg),
        }
    }

    fn user_fn(&mut self, decl: &FnDecl, args: &[Expr], span: Span) -> Option<Val> {
        if self.depth > MAX_CALL_DEPTH {
            return self.error(
                span,
                format!(
                    "function calls nest deeper than {MAX_CALL_DEPTH} (`{}` inlined in a chain of calls)",
                    decl.name.name
                ),
            );
        }
        let vals: Option<Vec<Val>> = args.iter().map(|a| self.expr(a)).collect();
        let vals = vals?;
        // A function sees its arguments and the globals, not the caller's lets.
        let saved = std::mem::take(&mut self.scope);
        for ((name, _), v) in decl.args.iter().zip(vals) {
            self.scope.insert(name.name.clone(), v);
        }
        // Connections stay visible so functions can take bodies by name? No: bodies are
        // passed as arguments like any value.
        self.depth += 1;
        let r = self.expr(&decl.body);
        self.depth -= 1;
        self.scope = saved;
        r
    }

    /// A builtin function of evaluated arguments (`initial`, `at_time` and `rate` are
    /// forms of [`Self::call`]). The checker has typed the call already; the errors
    /// here are a second line of defence, never a user's first message.
    fn builtin(&mut self, b: Builtin, a: &[Val]) -> Result<Val, String> {
        use Builtin as B;
        use Val::*;
        let f = b.info().name;
        let g = self.target.g();
        let unary = |g: &mut Graph, op: fn(&mut Graph, Id) -> Id, a: &[Val]| match a {
            [S(x)] => Ok(S(op(g, *x))),
            _ => Err(format!("`{f}` takes one scalar")),
        };
        match b {
            B::Sin => unary(g, Graph::sin, a),
            B::Cos => unary(g, Graph::cos, a),
            B::Tan => unary(g, Graph::tan, a),
            B::Sqrt => unary(g, Graph::sqrt, a),
            B::Exp => unary(g, Graph::exp, a),
            B::Log => unary(g, Graph::log, a),
            B::Tanh => unary(g, Graph::tanh, a),
            B::Abs => unary(g, Graph::abs, a),
            B::Softplus => match a {
                [S(x)] => Ok(S(softplus(g, *x))),
                _ => Err("`softplus` takes one scalar".into()),
            },
            B::Atan2 => match a {
                [S(y), S(x)] => Ok(S(g.atan2(*y, *x))),
                _ => Err("`atan2` takes two scalars".into()),
            },
            B::Min | B::Max => match a {
                [S(x), S(y)] => Ok(S(if b == B::Min {
                    g.min(*x, *y)
                } else {
                    g.max(*x, *y)
                })),
                _ => Err(format!("`{f}` takes two scalars")),
            },
            B::Step => match a {
                [S(x), S(x0), S(h0), S(x1), S(h1)] => Ok(S(step(g, *x, [*x0, *h0], [*x1, *h1]))),
                _ => Err("`step` takes five scalars (x, x0, h0, x1, h1)".into()),
            },
            B::Dot => match a {
                [V(x), V(y)] => Ok(S(g.dot(*x, *y))),
                [Q(x), Q(y)] => {
                    let t: Vec<Id> = (0..4).map(|i| g.mul(x[i], y[i])).collect();
                    Ok(S(g.sum(&t).expect("four terms")))
                }
                _ => Err("`dot` takes two vec3 or two quat".into()),
            },
            B::Rotation => match a {
                [Q(q)] => Ok(M(fdc_diff::lie::shabana(g, *q))),
                _ => Err("`rotation` takes a quat".into()),
            },
            B::Cross => match a {
                [V(x), V(y)] => Ok(V(g.cross(*x, *y))),
                _ => Err("`cross` takes two vec3".into()),
            },
            B::Norm | B::Unit => {
                let Some(x) = a
                    .first()
                    .filter(|v| a.len() == 1 && matches!(v, V(_) | Q(_)))
                else {
                    return Err(format!("`{f}` takes a vec3 or a quat"));
                };
                Ok(norm_or_unit(g, x, b == B::Norm))
            }
            B::Skew => match a {
                [V(x)] => Ok(M(g.skew(*x))),
                _ => Err("`skew` takes a vec3".into()),
            },
            B::Transpose => match a {
                [M(m)] => Ok(M(fdc_ir::transpose(*m))),
                _ => Err("`transpose` takes a mat3".into()),
            },
            B::Diag => match a {
                [V(x)] => {
                    let z = g.constant(0.0);
                    Ok(M([[x[0], z, z], [z, x[1], z], [z, z, x[2]]]))
                }
                _ => Err("`diag` takes a vec3".into()),
            },
            B::Quat => match a {
                [S(w), S(x), S(y), S(z)] => Ok(Q([*w, *x, *y, *z])),
                _ => Err("`quat` takes four scalars (w, x, y, z)".into()),
            },
            B::Frame => match a {
                [V(axis)] => Ok(M(frame(g, *axis))),
                _ => Err("`frame` takes a vec3 (the axis)".into()),
            },
            B::Clamp => match a {
                // min(max(x, lo), hi): lo where x < lo, hi where x > hi (and where lo > hi).
                [S(x), S(lo), S(hi)] => {
                    let low = g.max(*x, *lo);
                    Ok(S(g.min(low, *hi)))
                }
                _ => Err("`clamp` takes three scalars (x, lo, hi)".into()),
            },
            B::Initial | B::AtTime | B::Rate | B::Tir | B::Crg | B::Continuous => {
                Err(format!("`{f}` is a form, not a function"))
            }
        }
    }

    /// `b.position`, `b.point(u)`, `v.x`, `m.x` (column) and so on.
    fn member(&mut self, base: &Val, m: &str, args: &[Expr], span: Span) -> Option<Val> {
        match base {
            Val::V(v) if args.is_empty() => match m {
                "x" => Some(Val::S(v[0])),
                "y" => Some(Val::S(v[1])),
                "z" => Some(Val::S(v[2])),
                _ => self.error(span, format!("a vec3 has no member `{m}` (x, y, z)")),
            },
            Val::M(mat) if args.is_empty() => {
                let col = match m {
                    "x" => 0,
                    "y" => 1,
                    "z" => 2,
                    _ => return self.error(span, format!("a mat3 has no member `{m}`")),
                };
                Some(Val::V([mat[0][col], mat[1][col], mat[2][col]]))
            }
            Val::Q(q) if args.is_empty() => match m {
                "w" => Some(Val::S(q[0])),
                "x" => Some(Val::S(q[1])),
                "y" => Some(Val::S(q[2])),
                "z" => Some(Val::S(q[3])),
                _ => self.error(span, format!("a quat has no member `{m}`")),
            },
            Val::Body(b) => self.body_member(*b, m, args, span),
            other => self.error(span, format!("a {} has no member `{m}`", other.kind())),
        }
    }

    fn body_member(&mut self, b: BodyRef, m: &str, args: &[Expr], span: Span) -> Option<Val> {
        let vals: Option<Vec<Val>> = args.iter().map(|a| self.expr(a)).collect();
        let vals = vals?;
        let arg = |i: usize| match vals.get(i) {
            Some(Val::V(v)) => Some(*v),
            _ => None,
        };
        let Target::Element(builder) = &mut self.target else {
            return self.error(
                span,
                "body kinematics are only known inside an element type or an output",
            );
        };
        let kin = match b {
            BodyRef::Ground => builder.ground(),
            BodyRef::Local(k) => builder.body(k),
        };
        let need_arg = |s: &mut Self| {
            s.error::<()>(span, format!("`.{m}(u)` takes one vec3"));
        };
        let out = match (m, vals.len()) {
            ("position", 0) => Val::V(kin.r),
            ("rotation", 0) => Val::M(kin.a),
            ("omega", 0) => Val::V(builder.omega(&kin)),
            ("omega_body", 0) => Val::V(kin.omega_bar),
            ("alpha_body", 0) => Val::V(kin.alpha_bar),
            ("alpha", 0) => Val::V(builder.axis(&kin, kin.alpha_bar)),
            ("mass" | "inertia" | "inertia_global", 0) => {
                let BodyRef::Local(k) = b else {
                    return self.error(span, format!("`ground` has no `{m}`"));
                };
                return self.mass_property(k, m, kin.a);
            }
            ("point", 1) | ("velocity", 1) | ("axis", 1) | ("acceleration", 1) | ("local", 1) => {
                let Some(u) = arg(0) else {
                    need_arg(self);
                    return None;
                };
                let Target::Element(builder) = &mut self.target else {
                    unreachable!()
                };
                match m {
                    "point" => Val::V(builder.point(&kin, u)),
                    "velocity" => Val::V(builder.point_velocity(&kin, u)),
                    "axis" => Val::V(builder.axis(&kin, u)),
                    "acceleration" => {
                        // a_P = R̈ + A(ω̄̇ × u + ω̄ × (ω̄ × u))   (theory 4.1)
                        let g = builder.graph();
                        let au = g.cross(kin.alpha_bar, u);
                        let wu = g.cross(kin.omega_bar, u);
                        let wwu = g.cross(kin.omega_bar, wu);
                        let s = g.v3_add(au, wwu);
                        let a = builder.axis(&kin, s);
                        Val::V(builder.graph().v3_add(kin.acc, a))
                    }
                    _ => {
                        // Aᵀ(x − R) at t = 0: a parameter of the instance.
                        let g = builder.graph();
                        let d = g.v3_sub(u, kin.r);
                        let l = g.mat_t_vec(kin.a, d);
                        return self.hide(&Val::V(l), span);
                    }
                }
            }
            _ => {
                return self.error(
                    span,
                    format!(
                        "a body has no `{m}` with {} argument(s); known: position, rotation, \
                         omega, omega_body, alpha, alpha_body, mass, inertia, inertia_global, point(u), \
                         velocity(u), axis(a), \
                         acceleration(u), local(x)",
                        vals.len()
                    ),
                )
            }
        };
        Some(out)
    }
}

impl Lowerer<'_, '_, '_> {
    /// `b.mass`, `b.inertia` (principal, body axes) or `b.inertia_global` (A J Aᵀ) of
    /// the body connected at `k`: hidden slots filled from the body's parameters.
    fn mass_property(&mut self, k: usize, m: &str, a: fdc_ir::M3) -> Option<Val> {
        let (prop, n) = if m == "mass" {
            (BodyProp::Mass, 1)
        } else {
            (BodyProp::Inertia, 3)
        };
        let offset = self.next_param;
        self.next_param += n;
        self.hidden.push(Hidden {
            offset,
            nodes: Vec::new(),
            time: None,
            body: Some((k, prop)),
        });
        let ids: Vec<Id> = (0..n)
            .map(|i| self.g().input(Slot::P, offset + i))
            .collect();
        Some(match m {
            "mass" => Val::S(ids[0]),
            "inertia" => Val::V([ids[0], ids[1], ids[2]]),
            _ => {
                // A diag(J) Aᵀ = Σ_i J_i a_i a_iᵀ with a_i the columns of A.
                let g = self.g();
                let mut out = [[g.constant(0.0); 3]; 3];
                for (i, &j) in ids.iter().enumerate() {
                    for (r, row) in out.iter_mut().enumerate() {
                        for (c, e) in row.iter_mut().enumerate() {
                            let aa = g.mul(a[r][i], a[c][i]);
                            let t = g.mul(j, aa);
                            *e = g.add2(*e, t);
                        }
                    }
                }
                Val::M(out)
            }
        })
    }
}

/// `frame(a)` as docs/language.md defines it: columns [k0 k1 k2], k2 = unit(a); h the
/// coordinate axis with the smallest |k2_i| (the first such); k0 = unit(h − (h·k2) k2);
/// k1 = k2 × k0. Selects keep it branch-free; it is evaluated on numbers at build time.
pub fn frame(g: &mut Graph, axis: V3) -> fdc_ir::M3 {
    let n = g.norm(axis);
    let k2 = axis.map(|c| g.div(c, n));
    let a = k2.map(|c| g.abs(c));
    let one = g.constant(1.0);
    let zero = g.constant(0.0);
    // h0 = 1 if |k2_0| is smallest (ties to the first), h1 likewise among the rest.
    let h0_inner = g.select(Cmp::Le, a[0], a[2], one, zero);
    let h0 = g.select(Cmp::Le, a[0], a[1], h0_inner, zero);
    let h1_inner = g.select(Cmp::Le, a[1], a[2], one, zero);
    let h1 = g.select(Cmp::Eq, h0, one, zero, h1_inner);
    let h01 = g.add2(h0, h1);
    let h2 = g.sub(one, h01);
    let h = [h0, h1, h2];
    let hk = g.dot(h, k2);
    let proj = g.v3_scale(hk, k2);
    let k0v = g.v3_sub(h, proj);
    let n0 = g.norm(k0v);
    let k0 = k0v.map(|c| g.div(c, n0));
    let k1 = g.cross(k2, k0);
    [
        [k0[0], k1[0], k2[0]],
        [k0[1], k1[1], k2[1]],
        [k0[2], k1[2], k2[2]],
    ]
}

/// `softplus(x)` = log(1 + e^x), switched to x where e^x would overflow the sum's
/// precision.
fn softplus(g: &mut Graph, x: Id) -> Id {
    let e = g.exp(x);
    let one = g.constant(1.0);
    let s = g.add2(one, e);
    let l = g.log(s);
    let big = g.constant(36.0);
    g.select(Cmp::Gt, x, big, x, l)
}

/// The legacy smooth `step(x, x0, h0, x1, h1)`: h0 below x0, h1 above x1, a cubic
/// between.
fn step(g: &mut Graph, x: Id, [x0, h0]: [Id; 2], [x1, h1]: [Id; 2]) -> Id {
    let dx = g.sub(x1, x0);
    let xr = g.sub(x, x0);
    let d = g.div(xr, dx);
    let d2 = g.powi(d, 2);
    let three = g.constant(3.0);
    let two = g.constant(2.0);
    let twod = g.mul(two, d);
    let c = g.sub(three, twod);
    let shape = g.mul(d2, c);
    let dh = g.sub(h1, h0);
    let inc = g.mul(dh, shape);
    let mid = g.add2(h0, inc);
    let upper = g.select(Cmp::Ge, x, x1, h1, mid);
    g.select(Cmp::Le, x, x0, h0, upper)
}

/// The Euclidean norm of a vec3 or quat (`norm`), or the value divided by it (`unit`).
fn norm_or_unit(g: &mut Graph, x: &Val, norm: bool) -> Val {
    let s = x.scalars().expect("numeric");
    let sq: Vec<Id> = s.iter().map(|&c| g.mul(c, c)).collect();
    let sum = g.sum(&sq).expect("components");
    let n = g.sqrt(sum);
    if norm {
        Val::S(n)
    } else {
        let u: Vec<Id> = s.iter().map(|&c| g.div(c, n)).collect();
        x.with_scalars(&u)
    }
}
