//! Values of the fd language as IR nodes, and the arithmetic between them.

use fdc_ir::{Graph, Id, M3, V3};

/// A connected body as seen from inside an element type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BodyRef {
    Ground,
    /// Local index k of the element's connected bodies.
    Local(usize),
}

#[derive(Clone, Debug)]
pub enum Val {
    S(Id),
    V(V3),
    M(M3),
    Q([Id; 4]),
    Body(BodyRef),
    Str,
    /// `[...]` of a length other than 3 (spline data; not lowered yet).
    List,
}

impl Val {
    pub fn kind(&self) -> &'static str {
        match self {
            Val::S(_) => "scalar",
            Val::V(_) => "vec3",
            Val::M(_) => "mat3",
            Val::Q(_) => "quat",
            Val::Body(_) => "body",
            Val::Str => "string",
            Val::List => "list",
        }
    }

    /// The scalar nodes of a numeric value, in row-major order.
    pub fn scalars(&self) -> Option<Vec<Id>> {
        Some(match self {
            Val::S(x) => vec![*x],
            Val::V(v) => v.to_vec(),
            Val::M(m) => m.iter().flatten().copied().collect(),
            Val::Q(q) => q.to_vec(),
            _ => return None,
        })
    }

    /// Rebuilds a value of the same shape from scalars (inverse of [`Val::scalars`]).
    pub fn with_scalars(&self, s: &[Id]) -> Val {
        match self {
            Val::S(_) => Val::S(s[0]),
            Val::V(_) => Val::V([s[0], s[1], s[2]]),
            Val::M(_) => Val::M([[s[0], s[1], s[2]], [s[3], s[4], s[5]], [s[6], s[7], s[8]]]),
            Val::Q(_) => Val::Q([s[0], s[1], s[2], s[3]]),
            other => other.clone(),
        }
    }
}

/// Applies `f` to every scalar of a numeric value.
pub fn map(g: &mut Graph, v: &Val, mut f: impl FnMut(&mut Graph, Id) -> Id) -> Option<Val> {
    let s = v.scalars()?;
    let out: Vec<Id> = s.into_iter().map(|x| f(g, x)).collect();
    Some(v.with_scalars(&out))
}

pub enum Arith {
    Add,
    Sub,
    Mul,
    Div,
}

/// `a op b` for the combinations the language allows; `None` where the types do not fit.
pub fn binary(g: &mut Graph, op: Arith, a: &Val, b: &Val) -> Option<Val> {
    use Val::*;
    let elementwise = |g: &mut Graph, a: &Val, b: &Val, f: fn(&mut Graph, Id, Id) -> Id| {
        let (x, y) = (a.scalars()?, b.scalars()?);
        let same = std::mem::discriminant(a) == std::mem::discriminant(b);
        same.then(|| {
            let out: Vec<Id> = x.iter().zip(&y).map(|(&p, &q)| f(g, p, q)).collect();
            a.with_scalars(&out)
        })
    };
    match op {
        Arith::Add => elementwise(g, a, b, Graph::add2),
        Arith::Sub => elementwise(g, a, b, Graph::sub),
        Arith::Mul => match (a, b) {
            (S(x), S(y)) => Some(S(g.mul(*x, *y))),
            (S(s), other) | (other, S(s)) if !matches!(other, Body(_) | Str | List) => {
                let s = *s;
                map(g, other, |g, x| g.mul(s, x))
            }
            (M(m), V(v)) => Some(V(g.mat_vec(*m, *v))),
            (M(m), M(n)) => Some(M(g.mat_mul(*m, *n))),
            (Q(p), Q(q)) => Some(Q(fdc_diff::lie::hamilton(g, *p, *q))),
            _ => None,
        },
        Arith::Div => match (a, b) {
            (_, S(s)) => {
                let s = *s;
                map(g, a, |g, x| g.div(x, s))
            }
            _ => None,
        },
    }
}
