//! The IR as an egg language, conversion to and from [`crate::Graph`], and the constant
//! analysis (folding exactly as the interpreter computes, plus the tripwire that
//! catches two different constants in one e-class).

use crate::graph::{Cmp, Id as NodeId, Op, Slot, Unary};
use crate::interp::apply;
use egg::{define_language, Analysis, DidMerge, EGraph, Id, Language};
use std::fmt;
use std::str::FromStr;

/// An `f64` constant held by its bits, written like the printer writes constants.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Num(pub u64);

impl fmt::Display for Num {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&crate::print::const_text(f64::from_bits(self.0)))
    }
}

impl FromStr for Num {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        if let Some(hex) = s.strip_prefix("NaN(0x").and_then(|h| h.strip_suffix(')')) {
            return u64::from_str_radix(hex, 16)
                .map(Num)
                .map_err(|e| e.to_string());
        }
        // Only things that look like numbers: an operator name must never parse.
        let looks_numeric = s
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_digit() || c == '-' || c == 'i' || c == 'N')
            && s != "-";
        if !looks_numeric {
            return Err(format!("not a number: {s}"));
        }
        s.parse::<f64>()
            .map(|x| Num(x.to_bits()))
            .map_err(|e| e.to_string())
    }
}

/// The integer exponent of `powi`, written `#3` so it never reads as an `f64`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Int(pub i32);

impl fmt::Display for Int {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.0)
    }
}

impl FromStr for Int {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let rest = s
            .strip_prefix('#')
            .ok_or_else(|| format!("not #int: {s}"))?;
        rest.parse().map(Int).map_err(|e| format!("{e}"))
    }
}

/// An input element (`q[3]`) or a symbol (`s7`): leaves the simplifier never looks into.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Leaf {
    Input(Slot, u32),
    Sym(u32),
}

impl fmt::Display for Leaf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Leaf::Input(s, i) => write!(f, "{}[{i}]", s.name()),
            Leaf::Sym(s) => write!(f, "s{s}"),
        }
    }
}

impl FromStr for Leaf {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        if let Some((name, rest)) = s.split_once('[') {
            let idx = rest
                .strip_suffix(']')
                .and_then(|i| i.parse().ok())
                .ok_or_else(|| format!("bad input {s}"))?;
            let slot = Slot::ALL
                .into_iter()
                .find(|sl| sl.name() == name)
                .ok_or_else(|| format!("no slot {name}"))?;
            return Ok(Leaf::Input(slot, idx));
        }
        s.strip_prefix('s')
            .and_then(|n| n.parse().ok())
            .map(Leaf::Sym)
            .ok_or_else(|| format!("not a leaf: {s}"))
    }
}

define_language! {
    /// One e-node per [`Op`] kind; `select` has one operator per comparison.
    pub enum FdLang {
        "neg" = Neg(Id),
        "sqrt" = Sqrt(Id),
        "sin" = Sin(Id),
        "cos" = Cos(Id),
        "tan" = Tan(Id),
        "exp" = Exp(Id),
        "log" = Log(Id),
        "tanh" = Tanh(Id),
        "abs" = Abs(Id),
        "+" = Add([Id; 2]),
        "-" = Sub([Id; 2]),
        "*" = Mul([Id; 2]),
        "/" = Div([Id; 2]),
        "powi" = Powi([Id; 2]),
        "pow" = Pow([Id; 2]),
        "atan2" = Atan2([Id; 2]),
        "min" = Min([Id; 2]),
        "max" = Max([Id; 2]),
        "sel<" = SelLt([Id; 4]),
        "sel<=" = SelLe([Id; 4]),
        "sel>" = SelGt([Id; 4]),
        "sel>=" = SelGe([Id; 4]),
        "sel==" = SelEq([Id; 4]),
        "sel!=" = SelNe([Id; 4]),
        // Children: an `Int` class holding `4·table + deriv` (see [`spline_key`]), then x.
        "spline" = Spline([Id; 2]),
        Int(Int),
        Num(Num),
        Leaf(Leaf),
    }
}

/// The `Int` a spline node's first child holds: table and derivative order in one
/// number, so a spline is an opaque operator the rules never look into.
pub fn spline_key(table: u32, deriv: u8) -> i32 {
    (table as i32) * 4 + i32::from(deriv)
}

/// An operand of an [`Op`] being rebuilt from an e-node: a node, or a `powi` exponent.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Arg<T> {
    Node(T),
    Int(i32),
}

impl<T: Copy> Arg<T> {
    fn node(self) -> Option<T> {
        match self {
            Arg::Node(t) => Some(t),
            Arg::Int(_) => None,
        }
    }
}

/// The [`Op`] an e-node stands for, with each child mapped by `child`. `None` for an
/// `Int` leaf (it is not an operation) or a child of the wrong kind (an `Int` where a
/// value is expected or the reverse), which only a bug in a rule could produce.
pub fn to_op(node: &FdLang, child: impl Fn(Id) -> Arg<NodeId>) -> Option<Op> {
    use FdLang as L;
    let u = |f: Unary, a: Id| Some(Op::Unary(f, child(a).node()?));
    let two = |a: Id, b: Id| Some((child(a).node()?, child(b).node()?));
    let sel = |c: Cmp, ids: &[Id; 4]| {
        let mut out = [NodeId::from_index(0); 4];
        for (o, &i) in out.iter_mut().zip(ids) {
            *o = child(i).node()?;
        }
        Some(Op::Select(c, out))
    };
    match node {
        L::Num(n) => Some(Op::Const(n.0)),
        L::Int(_) => None,
        L::Leaf(Leaf::Input(s, i)) => Some(Op::Input(*s, *i)),
        L::Leaf(Leaf::Sym(s)) => Some(Op::Sym(*s)),
        L::Neg(a) => u(Unary::Neg, *a),
        L::Sqrt(a) => u(Unary::Sqrt, *a),
        L::Sin(a) => u(Unary::Sin, *a),
        L::Cos(a) => u(Unary::Cos, *a),
        L::Tan(a) => u(Unary::Tan, *a),
        L::Exp(a) => u(Unary::Exp, *a),
        L::Log(a) => u(Unary::Log, *a),
        L::Tanh(a) => u(Unary::Tanh, *a),
        L::Abs(a) => u(Unary::Abs, *a),
        L::Add([a, b]) => two(*a, *b).map(|(a, b)| Op::Add(a, b)),
        L::Sub([a, b]) => two(*a, *b).map(|(a, b)| Op::Sub(a, b)),
        L::Mul([a, b]) => two(*a, *b).map(|(a, b)| Op::Mul(a, b)),
        L::Div([a, b]) => two(*a, *b).map(|(a, b)| Op::Div(a, b)),
        L::Pow([a, b]) => two(*a, *b).map(|(a, b)| Op::Pow(a, b)),
        L::Atan2([a, b]) => two(*a, *b).map(|(a, b)| Op::Atan2(a, b)),
        L::Min([a, b]) => two(*a, *b).map(|(a, b)| Op::Min(a, b)),
        L::Max([a, b]) => two(*a, *b).map(|(a, b)| Op::Max(a, b)),
        L::Powi([a, n]) => match (child(*a), child(*n)) {
            (Arg::Node(a), Arg::Int(n)) => Some(Op::Powi(a, n)),
            _ => None,
        },
        L::Spline([k, x]) => match (child(*k), child(*x)) {
            (Arg::Int(k), Arg::Node(x)) if k >= 0 => {
                Some(Op::Spline((k / 4) as u32, (k % 4) as u8, x))
            }
            _ => None,
        },
        L::SelLt(ids) => sel(Cmp::Lt, ids),
        L::SelLe(ids) => sel(Cmp::Le, ids),
        L::SelGt(ids) => sel(Cmp::Gt, ids),
        L::SelGe(ids) => sel(Cmp::Ge, ids),
        L::SelEq(ids) => sel(Cmp::Eq, ids),
        L::SelNe(ids) => sel(Cmp::Ne, ids),
    }
}

/// The e-node for `op`, its operands mapped by `child`; `powi` needs the id of its
/// exponent's `Int` class, `spline` the one of its [`spline_key`], made by `int`.
pub fn from_op(op: &Op, child: impl Fn(NodeId) -> Id, int: impl FnOnce(i32) -> Id) -> FdLang {
    use FdLang as L;
    match *op {
        Op::Const(bits) => L::Num(Num(bits)),
        Op::Input(s, i) => L::Leaf(Leaf::Input(s, i)),
        Op::Sym(s) => L::Leaf(Leaf::Sym(s)),
        Op::Unary(f, a) => {
            let a = child(a);
            match f {
                Unary::Neg => L::Neg(a),
                Unary::Sqrt => L::Sqrt(a),
                Unary::Sin => L::Sin(a),
                Unary::Cos => L::Cos(a),
                Unary::Tan => L::Tan(a),
                Unary::Exp => L::Exp(a),
                Unary::Log => L::Log(a),
                Unary::Tanh => L::Tanh(a),
                Unary::Abs => L::Abs(a),
            }
        }
        Op::Add(a, b) => L::Add([child(a), child(b)]),
        Op::Sub(a, b) => L::Sub([child(a), child(b)]),
        Op::Mul(a, b) => L::Mul([child(a), child(b)]),
        Op::Div(a, b) => L::Div([child(a), child(b)]),
        Op::Pow(a, b) => L::Pow([child(a), child(b)]),
        Op::Atan2(a, b) => L::Atan2([child(a), child(b)]),
        Op::Min(a, b) => L::Min([child(a), child(b)]),
        Op::Max(a, b) => L::Max([child(a), child(b)]),
        Op::Powi(a, n) => L::Powi([child(a), int(n)]),
        Op::Spline(t, d, x) => L::Spline([int(spline_key(t, d)), child(x)]),
        Op::Select(c, ids) => {
            let ids = ids.map(child);
            match c {
                Cmp::Lt => L::SelLt(ids),
                Cmp::Le => L::SelLe(ids),
                Cmp::Gt => L::SelGt(ids),
                Cmp::Ge => L::SelGe(ids),
                Cmp::Eq => L::SelEq(ids),
                Cmp::Ne => L::SelNe(ids),
            }
        }
    }
}

/// The constant an e-class is known to equal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Konst {
    /// An `f64`, by bits.
    F(u64),
    /// A `powi` exponent.
    I(i32),
}

/// Equal under the simplifier's policy: same bits, or both NaN.
pub fn same_value(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

/// Constant folding plus the tripwire: every merge of two classes whose constants
/// differ (under [`same_value`]) is recorded in `conflicts`. A sound rule set never
/// records one.
#[derive(Default)]
pub struct ConstFold {
    pub conflicts: Vec<(Konst, Konst)>,
}

pub type FdGraph = EGraph<FdLang, ConstFold>;

impl Analysis<FdLang> for ConstFold {
    type Data = Option<Konst>;

    fn make(egraph: &mut FdGraph, enode: &FdLang, _id: Id) -> Self::Data {
        match enode {
            FdLang::Int(n) => return Some(Konst::I(n.0)),
            FdLang::Num(n) => return Some(Konst::F(n.0)),
            // Opaque: folding a spline of a constant would need the graph's tables,
            // which the e-graph does not hold.
            FdLang::Leaf(_) | FdLang::Spline(_) => return None,
            _ => {}
        }
        // Fold with the interpreter's own `apply`: operand k is node id k.
        let kids = enode.children();
        let mut vals = Vec::with_capacity(kids.len());
        let mut ints = Vec::with_capacity(kids.len());
        for &c in kids {
            match egraph[c].data? {
                Konst::F(b) => {
                    ints.push(Arg::Node(NodeId::from_index(vals.len())));
                    vals.push(f64::from_bits(b));
                }
                Konst::I(n) => ints.push(Arg::Int(n)),
            }
        }
        let pos: Vec<usize> = kids.iter().map(|c| usize::from(*c)).collect();
        let op = to_op(enode, |c| {
            let k = pos.iter().position(|&p| p == usize::from(c)).unwrap_or(0);
            ints[k]
        })?;
        Some(Konst::F(apply(&op, &[], |id| vals[id.index()]).to_bits()))
    }

    fn merge(&mut self, a: &mut Self::Data, b: Self::Data) -> DidMerge {
        match (*a, b) {
            (None, None) => DidMerge(false, false),
            (None, Some(k)) => {
                *a = Some(k);
                DidMerge(true, false)
            }
            (Some(_), None) => DidMerge(false, true),
            (Some(x), Some(y)) => {
                let same = match (x, y) {
                    (Konst::F(p), Konst::F(q)) => same_value(f64::from_bits(p), f64::from_bits(q)),
                    (Konst::I(p), Konst::I(q)) => p == q,
                    _ => false,
                };
                if !same {
                    self.conflicts.push((x, y));
                }
                DidMerge(false, false)
            }
        }
    }

    fn modify(egraph: &mut FdGraph, id: Id) {
        if let Some(Konst::F(bits)) = egraph[id].data {
            let c = egraph.add(FdLang::Num(Num(bits)));
            egraph.union(id, c);
            // A constant class needs nothing but its constant. Keeping the operations
            // lets rules rewrite them forever (every NaN- or inf-valued expression
            // lands in one class, and each rewrite of it makes more of them).
            egraph[id].nodes.retain(|n| n.is_leaf());
        }
    }
}
