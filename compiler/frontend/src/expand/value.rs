//! Build-time values: the whole numbers and arrays that decide a model's structure
//! (loop bounds, indices, `if` conditions around items), and their evaluation.

use super::Expander;
use crate::ast::*;
use crate::diag::Diagnostic;

/// A value known when the model is built.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum BVal {
    Num(f64),
    List(Vec<BVal>),
}

impl BVal {
    /// The value as a literal expression at `span` (for a substituted name).
    pub(super) fn to_expr(&self, span: Span) -> Expr {
        let kind = match self {
            BVal::Num(x) if *x < 0.0 => ExprKind::Neg(Box::new(BVal::Num(-x).to_expr(span))),
            BVal::Num(x) => ExprKind::Number(format!("{x}")),
            BVal::List(items) => ExprKind::List(items.iter().map(|v| v.to_expr(span)).collect()),
        };
        Expr { kind, span }
    }

    /// `1`, `[1, 0]`: the text of the value in a specialized type's name.
    pub(super) fn text(&self) -> String {
        match self {
            BVal::Num(x) => format!("{x}"),
            BVal::List(items) => {
                let parts: Vec<String> = items.iter().map(BVal::text).collect();
                format!("[{}]", parts.join(","))
            }
        }
    }
}

/// E0603: a value the structure depends on is not known when the model is built.
pub(super) fn not_build_time(span: Span, what: &str) -> Diagnostic {
    Diagnostic::error(
        "E0603",
        format!("{what} is not known when the model is built"),
    )
    .at(span, "needs a build-time value")
    .note(
        "loop bounds, indices and `if` conditions around items may use numbers, loop \
             variables, model parameters, `len(array)` and (in an element type) its \
             parameters, not the state or `let` values",
    )
}

/// E0602: a count or index that is not a whole number.
pub(super) fn not_whole(span: Span, what: &str, x: f64) -> Diagnostic {
    Diagnostic::error("E0602", format!("{what} must be a whole number, found {x}"))
        .at(span, "not a whole number")
        .note("counts and indices are whole numbers; a loop `for i in A..B` needs A <= B")
}

impl Expander<'_> {
    /// Evaluates a build-time expression.
    pub(super) fn eval(&mut self, e: &Expr) -> Result<BVal, Diagnostic> {
        if self.eval_depth > 64 {
            return Err(not_build_time(
                e.span,
                "this expression (parameters refer to each other)",
            ));
        }
        self.eval_depth += 1;
        let v = self.eval_inner(e);
        self.eval_depth -= 1;
        v
    }

    fn eval_inner(&mut self, e: &Expr) -> Result<BVal, Diagnostic> {
        let num = |x: f64| Ok(BVal::Num(x));
        match &e.kind {
            ExprKind::Number(n) => match n.parse::<f64>() {
                Ok(x) => num(x),
                Err(_) => Err(not_build_time(e.span, "this number")),
            },
            ExprKind::Name(n) => match self.lookup(n) {
                Some(v) => Ok(v),
                None => Err(not_build_time(e.span, &format!("`{n}`"))),
            },
            ExprKind::List(items) => {
                let vals: Result<Vec<BVal>, Diagnostic> =
                    items.iter().map(|i| self.eval(i)).collect();
                Ok(BVal::List(vals?))
            }
            ExprKind::Neg(x) => num(-self.scalar(x)?),
            ExprKind::Binary(op, a, b) => {
                let (a, b) = (self.scalar(a)?, self.scalar(b)?);
                num(match op {
                    BinOp::Add => a + b,
                    BinOp::Sub => a - b,
                    BinOp::Mul => a * b,
                    BinOp::Div => a / b,
                    BinOp::Pow => a.powf(b),
                })
            }
            ExprKind::Compare(op, a, b) => {
                let (a, b) = (self.scalar(a)?, self.scalar(b)?);
                let yes = match op {
                    CmpOp::Lt => a < b,
                    CmpOp::Le => a <= b,
                    CmpOp::Gt => a > b,
                    CmpOp::Ge => a >= b,
                    CmpOp::Eq => a == b,
                    CmpOp::Ne => a != b,
                };
                num(if yes { 1.0 } else { 0.0 })
            }
            ExprKind::If(c, a, b) => {
                if self.scalar(c)? != 0.0 {
                    self.eval(a)
                } else {
                    self.eval(b)
                }
            }
            ExprKind::Call(f, args) if f.name == "len" && args.len() == 1 => {
                match self.eval(&args[0])? {
                    BVal::List(items) => num(items.len() as f64),
                    BVal::Num(_) => Err(Diagnostic::error("E0301", "`len` takes an array")
                        .at(args[0].span, "this is a number")),
                }
            }
            ExprKind::Index(base, i) => {
                let list = self.eval(base)?;
                let k = self.whole(i, "an index")?;
                element(&list, k, base.span, i.span)
            }
            _ => Err(not_build_time(e.span, "this expression")),
        }
    }

    fn scalar(&mut self, e: &Expr) -> Result<f64, Diagnostic> {
        match self.eval(e)? {
            BVal::Num(x) => Ok(x),
            BVal::List(_) => Err(
                Diagnostic::error("E0301", "expected a number, found an array")
                    .at(e.span, "this is an array"),
            ),
        }
    }

    /// A whole number (a count, an index or a loop bound).
    pub(super) fn whole(&mut self, e: &Expr, what: &str) -> Result<i64, Diagnostic> {
        let x = self.scalar(e)?;
        if x.fract() != 0.0 || !x.is_finite() || x.abs() > 1e9 {
            return Err(not_whole(e.span, what, x));
        }
        Ok(x as i64)
    }
}

/// Element `k` of a build-time array (E0601 out of range).
pub(super) fn element(list: &BVal, k: i64, base: Span, at: Span) -> Result<BVal, Diagnostic> {
    let items = match list {
        BVal::List(items) => items,
        BVal::Num(_) => {
            return Err(Diagnostic::error("E0301", "only an array can be indexed")
                .at(base, "this is a number"))
        }
    };
    if k < 0 || k as usize >= items.len() {
        return Err(out_of_range(at, k, items.len(), "the array"));
    }
    Ok(items[k as usize].clone())
}

/// E0601: an index outside `0..len`.
pub(super) fn out_of_range(at: Span, k: i64, len: usize, what: &str) -> Diagnostic {
    Diagnostic::error("E0601", format!("index {k} is out of range"))
        .at(at, format!("{what} has indices 0..{len}"))
        .note("indices start at 0; the last one is the length minus 1")
}
