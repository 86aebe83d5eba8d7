//! The rewrite rules. Every rule is IEEE-exact: for all operand values (±0, ±inf,
//! NaN, subnormals included) both sides give the same bits, except that any NaN equals
//! any NaN. The table [`rule_specs`] drives both egg and the per-rule property test,
//! so a rule cannot be added without being tested. Rules left out on purpose are
//! listed with their reason in `docs/ir.md`.

use super::lang::{ConstFold, FdGraph, FdLang, Konst, Num};
use crate::graph::Cmp;
use egg::{Applier, Id, Pattern, PatternAst, Rewrite, Subst, Symbol, Var};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The right-hand side of a rule.
pub enum Rhs {
    /// A fixed pattern.
    Pat(&'static str),
    /// A pattern that depends on the constants bound to `consts` (in that order);
    /// `None` when the rule does not apply to those constants.
    Dyn {
        consts: &'static [&'static str],
        f: fn(&[Konst]) -> Option<String>,
    },
}

pub struct RuleSpec {
    pub name: &'static str,
    pub lhs: &'static str,
    pub rhs: Rhs,
}

const fn pat(name: &'static str, lhs: &'static str, rhs: &'static str) -> RuleSpec {
    RuleSpec {
        name,
        lhs,
        rhs: Rhs::Pat(rhs),
    }
}

const fn dyn_rule(
    name: &'static str,
    lhs: &'static str,
    consts: &'static [&'static str],
    f: fn(&[Konst]) -> Option<String>,
) -> RuleSpec {
    RuleSpec {
        name,
        lhs,
        rhs: Rhs::Dyn { consts, f },
    }
}

/// Every rule of the simplifier. Commutative operations appear with both operand
/// orders where the rule is not symmetric, since commutativity itself is not a rule.
pub fn rule_specs() -> Vec<RuleSpec> {
    vec![
        // Sign manipulations: negation only flips the sign bit, and IEEE rounding
        // (to nearest, ties to even) is symmetric, so these are exact.
        pat("neg-neg", "(neg (neg ?x))", "?x"),
        pat("mul-one-r", "(* ?x 1.0)", "?x"),
        pat("mul-one-l", "(* 1.0 ?x)", "?x"),
        pat("div-one", "(/ ?x 1.0)", "?x"),
        pat("mul-minus-one-r", "(* ?x -1.0)", "(neg ?x)"),
        pat("mul-minus-one-l", "(* -1.0 ?x)", "(neg ?x)"),
        pat("div-minus-one", "(/ ?x -1.0)", "(neg ?x)"),
        // x + (-0) is x for every x, +0 included (x + (+0) is not: -0 + 0 = +0).
        pat("add-neg-zero-r", "(+ ?x -0.0)", "?x"),
        pat("add-neg-zero-l", "(+ -0.0 ?x)", "?x"),
        pat("sub-zero", "(- ?x 0.0)", "?x"),
        pat("neg-zero-sub", "(- -0.0 ?x)", "(neg ?x)"),
        pat("add-neg-r", "(+ ?a (neg ?b))", "(- ?a ?b)"),
        pat("add-neg-l", "(+ (neg ?a) ?b)", "(- ?b ?a)"),
        pat("sub-neg", "(- ?a (neg ?b))", "(+ ?a ?b)"),
        pat("mul-neg-l", "(* (neg ?a) ?b)", "(neg (* ?a ?b))"),
        pat("mul-neg-r", "(* ?a (neg ?b))", "(neg (* ?a ?b))"),
        pat("div-neg-num", "(/ (neg ?a) ?b)", "(neg (/ ?a ?b))"),
        pat("div-neg-den", "(/ ?a (neg ?b))", "(neg (/ ?a ?b))"),
        pat("abs-neg", "(abs (neg ?x))", "(abs ?x)"),
        pat("abs-abs", "(abs (abs ?x))", "(abs ?x)"),
        // x·x is +0, positive, +inf or NaN: never negative, never -0.
        pat("abs-square", "(abs (* ?x ?x))", "(* ?x ?x)"),
        // |a−b| and |b−a| differ at most in the sign of a zero, which abs drops.
        pat("abs-sub-swap", "(abs (- ?a ?b))", "(abs (- ?b ?a))"),
        // Integer powers: powi is the repeated-squaring product (see `powi_tree`).
        pat("mul-self-powi", "(* ?x ?x)", "(powi ?x #2)"),
        pat("powi-one", "(powi ?x #1)", "?x"),
        pat("powi-zero", "(powi ?x #0)", "1.0"),
        pat("powi-minus-one", "(powi ?x #-1)", "(/ 1.0 ?x)"),
        dyn_rule("powi-mul-x", "(* (powi ?x ?a) ?x)", &["?a"], |k| {
            powi_product(int(k[0])?, 1)
        }),
        dyn_rule("powi-x-mul", "(* ?x (powi ?x ?a))", &["?a"], |k| {
            powi_product(1, int(k[0])?)
        }),
        dyn_rule(
            "powi-mul-powi",
            "(* (powi ?x ?a) (powi ?x ?b))",
            &["?a", "?b"],
            |k| powi_product(int(k[0])?, int(k[1])?),
        ),
        dyn_rule("powi-powi", "(powi (powi ?x ?a) ?b)", &["?a", "?b"], |k| {
            powi_nested(int(k[0])?, int(k[1])?)
        }),
        dyn_rule("recip-powi", "(/ 1.0 (powi ?x ?n))", &["?n"], |k| {
            let n = int(k[0])?;
            (n > 0).then(|| format!("(powi ?x #{})", -n))
        }),
        // Even powers do not see the sign of their base (every factor is a square).
        dyn_rule("powi-even-neg", "(powi (neg ?x) ?n)", &["?n"], |k| {
            even(k[0]).then(|| "(powi ?x ?n)".to_string())
        }),
        dyn_rule("powi-even-abs", "(powi (abs ?x) ?n)", &["?n"], |k| {
            even(k[0]).then(|| "(powi ?x ?n)".to_string())
        }),
        // (a−b)ⁿ = (b−a)ⁿ for even n: the two differences differ at most in sign.
        // This lets |p−q| and |q−p| share one norm.
        dyn_rule("powi-even-sub-swap", "(powi (- ?a ?b) ?n)", &["?n"], |k| {
            even(k[0]).then(|| "(powi (- ?b ?a) ?n)".to_string())
        }),
        // x/c = x·(1/c) when c and 1/c are exact powers of two: both sides are the
        // correctly rounded value of the same real number.
        dyn_rule("div-pow2", "(/ ?x ?c)", &["?c"], |k| {
            let r = exact_reciprocal(float(k[0])?)?;
            Some(format!("(* ?x {})", Num(r.to_bits())))
        }),
        // C99 Annex F (followed by the libm the interpreter and the backend call):
        // pow(x, ±0) = 1 and pow(+1, y) = 1 for every x, y, even NaN.
        pat("pow-zero", "(pow ?x 0.0)", "1.0"),
        pat("pow-neg-zero", "(pow ?x -0.0)", "1.0"),
        pat("pow-one-base", "(pow 1.0 ?y)", "1.0"),
        pat("min-self", "(min ?x ?x)", "?x"),
        pat("max-self", "(max ?x ?x)", "?x"),
        pat("sel<-same", "(sel< ?a ?b ?t ?t)", "?t"),
        pat("sel<=-same", "(sel<= ?a ?b ?t ?t)", "?t"),
        pat("sel>-same", "(sel> ?a ?b ?t ?t)", "?t"),
        pat("sel>=-same", "(sel>= ?a ?b ?t ?t)", "?t"),
        pat("sel==-same", "(sel== ?a ?b ?t ?t)", "?t"),
        pat("sel!=-same", "(sel!= ?a ?b ?t ?t)", "?t"),
        // x < x and x > x are false for every x, NaN included.
        pat("sel<-self", "(sel< ?x ?x ?t ?f)", "?f"),
        pat("sel>-self", "(sel> ?x ?x ?t ?f)", "?f"),
        dyn_rule("sel<-fold", "(sel< ?a ?b ?t ?f)", &["?a", "?b"], |k| {
            sel_fold(Cmp::Lt, k)
        }),
        dyn_rule("sel<=-fold", "(sel<= ?a ?b ?t ?f)", &["?a", "?b"], |k| {
            sel_fold(Cmp::Le, k)
        }),
        dyn_rule("sel>-fold", "(sel> ?a ?b ?t ?f)", &["?a", "?b"], |k| {
            sel_fold(Cmp::Gt, k)
        }),
        dyn_rule("sel>=-fold", "(sel>= ?a ?b ?t ?f)", &["?a", "?b"], |k| {
            sel_fold(Cmp::Ge, k)
        }),
        dyn_rule("sel==-fold", "(sel== ?a ?b ?t ?f)", &["?a", "?b"], |k| {
            sel_fold(Cmp::Eq, k)
        }),
        dyn_rule("sel!=-fold", "(sel!= ?a ?b ?t ?f)", &["?a", "?b"], |k| {
            sel_fold(Cmp::Ne, k)
        }),
    ]
}

fn int(k: Konst) -> Option<i32> {
    match k {
        Konst::I(n) => Some(n),
        Konst::F(_) => None,
    }
}

fn float(k: Konst) -> Option<f64> {
    match k {
        Konst::F(b) => Some(f64::from_bits(b)),
        Konst::I(_) => None,
    }
}

fn even(k: Konst) -> bool {
    int(k).is_some_and(|n| n % 2 == 0)
}

fn sel_fold(cmp: Cmp, k: &[Konst]) -> Option<String> {
    let (a, b) = (float(k[0])?, float(k[1])?);
    Some(if cmp.eval(a, b) { "?t" } else { "?f" }.to_string())
}

/// `1/c` when `c` is a power of two whose reciprocal is also exactly representable.
pub fn exact_reciprocal(c: f64) -> Option<f64> {
    const MANTISSA: u64 = (1 << 52) - 1;
    let normal_pow2 = c.is_normal() && c.to_bits() & MANTISSA == 0;
    let r = 1.0 / c;
    (normal_pow2 && r != 0.0 && r.is_finite() && 1.0 / r == c && r * c == 1.0).then_some(r)
}

/// Exponents beyond this are left alone (the trees get big and nobody writes them).
const MAX_POWI: i32 = 64;

/// The multiplication tree that `powi(x, n)` (n ≥ 1) evaluates: the compiler's
/// `__powidf2` and LLVM's expansion of constant `powi` both multiply the running
/// result by the current square `x^(2^k)` for each set bit of `n`, lowest first.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Tree {
    X,
    /// A product, operands in canonical order (multiplication is commutative and
    /// IEEE-exactly so).
    Mul(Box<Tree>, Box<Tree>),
}

fn mul(a: Tree, b: Tree) -> Tree {
    if a <= b {
        Tree::Mul(Box::new(a), Box::new(b))
    } else {
        Tree::Mul(Box::new(b), Box::new(a))
    }
}

/// [`Tree`] of `powi(base, n)` for n ≥ 1.
pub fn powi_tree_of(base: Tree, n: u32) -> Tree {
    let mut square = base;
    let mut result: Option<Tree> = None;
    let mut b = n;
    loop {
        if b & 1 == 1 {
            // The first factor is `1 * square`, which is `square` exactly.
            result = Some(match result {
                None => square.clone(),
                Some(r) => mul(r, square.clone()),
            });
        }
        b >>= 1;
        if b == 0 {
            break;
        }
        square = mul(square.clone(), square);
    }
    result.unwrap_or(Tree::X)
}

pub fn powi_tree(n: u32) -> Tree {
    powi_tree_of(Tree::X, n)
}

fn in_range(n: i32) -> bool {
    (1..=MAX_POWI).contains(&n)
}

/// `powi(x,a)·powi(x,b) → powi(x,a+b)` when both compute the same product tree.
fn powi_product(a: i32, b: i32) -> Option<String> {
    let fits = in_range(a) && in_range(b) && in_range(a + b);
    let exact = fits && mul(powi_tree(a as u32), powi_tree(b as u32)) == powi_tree((a + b) as u32);
    exact.then(|| format!("(powi ?x #{})", a + b))
}

/// `powi(powi(x,a),b) → powi(x,a·b)` when both compute the same product tree.
fn powi_nested(a: i32, b: i32) -> Option<String> {
    let fits = in_range(a) && in_range(b) && a.checked_mul(b).is_some_and(in_range);
    let exact = fits && powi_tree_of(powi_tree(a as u32), b as u32) == powi_tree((a * b) as u32);
    exact.then(|| format!("(powi ?x #{})", a * b))
}

/// Applies a [`Rhs::Dyn`]: reads the constants, builds the pattern, adds and unions it.
struct DynApplier {
    consts: Vec<Var>,
    f: fn(&[Konst]) -> Option<String>,
    /// Parsed right-hand sides by text: a rule produces only a few distinct ones,
    /// and parsing each time it fires was a tenth of the run time.
    cache: Mutex<HashMap<String, Arc<Pattern<FdLang>>>>,
}

impl Applier<FdLang, ConstFold> for DynApplier {
    fn apply_one(
        &self,
        egraph: &mut FdGraph,
        eclass: Id,
        subst: &Subst,
        _searcher_ast: Option<&PatternAst<FdLang>>,
        rule_name: Symbol,
    ) -> Vec<Id> {
        let mut ks = Vec::with_capacity(self.consts.len());
        for v in &self.consts {
            match subst.get(*v).and_then(|&c| egraph[c].data) {
                Some(k) => ks.push(k),
                None => return vec![],
            }
        }
        let Some(text) = (self.f)(&ks) else {
            return vec![];
        };
        let pattern = {
            let mut cache = match self.cache.lock() {
                Ok(c) => c,
                Err(poisoned) => poisoned.into_inner(),
            };
            if let Some(p) = cache.get(&text) {
                p.clone()
            } else {
                match text.parse::<Pattern<FdLang>>() {
                    Ok(p) => {
                        let p = Arc::new(p);
                        cache.insert(text, p.clone());
                        p
                    }
                    Err(e) => {
                        log::error!("rule {rule_name}: bad right-hand side {text}: {e}");
                        return vec![];
                    }
                }
            }
        };
        pattern.apply_one(egraph, eclass, subst, None, rule_name)
    }
}

/// The rules grouped by what they do, to measure what each group buys (switch one
/// off, `fdc-driver`'s `benches/rules.rs`) and to choose the default set. Every rule
/// of [`rule_specs`] is in exactly one family (a test checks it).
pub const FAMILIES: &[(&str, &[&str])] = &[
    (
        "units",
        &[
            "mul-one-r",
            "mul-one-l",
            "div-one",
            "mul-minus-one-r",
            "mul-minus-one-l",
            "div-minus-one",
            "add-neg-zero-r",
            "add-neg-zero-l",
            "sub-zero",
            "neg-zero-sub",
        ],
    ),
    (
        "signs",
        &[
            "neg-neg",
            "add-neg-r",
            "add-neg-l",
            "sub-neg",
            "mul-neg-l",
            "mul-neg-r",
            "div-neg-num",
            "div-neg-den",
        ],
    ),
    ("abs", &["abs-neg", "abs-abs", "abs-square", "abs-sub-swap"]),
    (
        "powi",
        &[
            "mul-self-powi",
            "powi-one",
            "powi-zero",
            "powi-minus-one",
            "powi-mul-x",
            "powi-x-mul",
            "powi-mul-powi",
            "powi-powi",
            "recip-powi",
            "powi-even-neg",
            "powi-even-abs",
            "powi-even-sub-swap",
        ],
    ),
    ("div-pow2", &["div-pow2"]),
    ("pow", &["pow-zero", "pow-neg-zero", "pow-one-base"]),
    (
        "select",
        &[
            "min-self",
            "max-self",
            "sel<-same",
            "sel<=-same",
            "sel>-same",
            "sel>=-same",
            "sel==-same",
            "sel!=-same",
            "sel<-self",
            "sel>-self",
            "sel<-fold",
            "sel<=-fold",
            "sel>-fold",
            "sel>=-fold",
            "sel==-fold",
            "sel!=-fold",
        ],
    ),
];

/// The family of the rule `name` ([`FAMILIES`]).
pub fn family(name: &str) -> Option<&'static str> {
    FAMILIES
        .iter()
        .find(|(_, rules)| rules.contains(&name))
        .map(|(f, _)| *f)
}

/// The egg rewrites of [`rule_specs`]. A spec that does not parse (a bug the tests
/// catch) is logged and skipped rather than taking the compiler down.
pub fn rewrites() -> Vec<Rewrite<FdLang, ConstFold>> {
    rewrites_without(&[])
}

/// [`rewrites`] without the rules of the families `off`.
pub fn rewrites_without(off: &[&str]) -> Vec<Rewrite<FdLang, ConstFold>> {
    let mut out = Vec::new();
    for spec in rule_specs() {
        if family(spec.name).is_some_and(|f| off.contains(&f)) {
            continue;
        }
        match make_rewrite(&spec) {
            Ok(r) => out.push(r),
            Err(e) => log::error!("rule {} skipped: {e}", spec.name),
        }
    }
    out
}

fn make_rewrite(spec: &RuleSpec) -> Result<Rewrite<FdLang, ConstFold>, String> {
    let lhs: Pattern<FdLang> = spec.lhs.parse().map_err(|e| format!("{e}"))?;
    match &spec.rhs {
        Rhs::Pat(r) => {
            let rhs: Pattern<FdLang> = r.parse().map_err(|e| format!("{e}"))?;
            Rewrite::new(spec.name, lhs, rhs)
        }
        Rhs::Dyn { consts, f } => {
            let consts = consts
                .iter()
                .map(|v| v.parse::<Var>().map_err(|e| format!("{e}")))
                .collect::<Result<Vec<_>, _>>()?;
            Rewrite::new(
                spec.name,
                lhs,
                DynApplier {
                    consts,
                    f: *f,
                    cache: Mutex::new(HashMap::new()),
                },
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn powi_trees_follow_repeated_squaring() {
        let x2 = mul(Tree::X, Tree::X);
        assert_eq!(powi_tree(1), Tree::X);
        assert_eq!(powi_tree(2), x2);
        assert_eq!(powi_tree(3), mul(Tree::X, x2.clone()));
        assert_eq!(powi_tree(4), mul(x2.clone(), x2.clone()));
        // x^6 = x² · x⁴, not x · x⁵.
        assert_eq!(powi_tree(6), mul(x2.clone(), mul(x2.clone(), x2.clone())));
        assert_eq!(powi_product(2, 1).as_deref(), Some("(powi ?x #3)"));
        assert_eq!(powi_product(4, 1).as_deref(), Some("(powi ?x #5)"));
        assert_eq!(powi_product(2, 2).as_deref(), Some("(powi ?x #4)"));
        assert_eq!(powi_product(6, 1), None);
        assert_eq!(powi_product(3, 1), None);
        assert_eq!(powi_nested(2, 2).as_deref(), Some("(powi ?x #4)"));
        assert_eq!(powi_nested(2, 3).as_deref(), Some("(powi ?x #6)"));
        assert_eq!(powi_nested(3, 2), None);
    }

    #[test]
    fn interpreter_powi_matches_the_tree() {
        // The tree model is only worth something if the interpreter agrees with it.
        fn eval(t: &Tree, x: f64) -> f64 {
            match t {
                Tree::X => x,
                Tree::Mul(a, b) => eval(a, x) * eval(b, x),
            }
        }
        for n in 1..=40u32 {
            for x in [1.1f64, -0.37, 3.3e-3, 7.77, 1.0000001, -2.5e15] {
                let t = powi_tree(n);
                assert_eq!(
                    x.powi(n as i32).to_bits(),
                    eval(&t, x).to_bits(),
                    "n={n} x={x}"
                );
                assert_eq!(x.powi(-(n as i32)).to_bits(), (1.0 / eval(&t, x)).to_bits());
            }
        }
    }

    #[test]
    fn exact_reciprocal_only_for_powers_of_two() {
        assert_eq!(exact_reciprocal(2.0), Some(0.5));
        assert_eq!(exact_reciprocal(-0.25), Some(-4.0));
        assert_eq!(exact_reciprocal(3.0), None);
        assert_eq!(exact_reciprocal(0.0), None);
        assert_eq!(exact_reciprocal(f64::INFINITY), None);
        assert_eq!(exact_reciprocal(f64::MAX), None);
        assert_eq!(exact_reciprocal(2f64.powi(1023)), Some(2f64.powi(-1023)));
        assert_eq!(exact_reciprocal(2f64.powi(-1022)), Some(2f64.powi(1022)));
    }

    #[test]
    fn every_rule_is_in_exactly_one_family() {
        let specs = rule_specs();
        for r in &specs {
            let n = FAMILIES.iter().filter(|(_, f)| f.contains(&r.name)).count();
            assert_eq!(n, 1, "rule {} is in {n} families", r.name);
        }
        let listed: usize = FAMILIES.iter().map(|(_, f)| f.len()).sum();
        assert_eq!(
            listed,
            specs.len(),
            "a family lists a rule that does not exist"
        );
        let units = rewrites().len() - rewrites_without(&["units"]).len();
        assert_eq!(units, 10);
    }

    #[test]
    fn every_rule_parses() {
        assert_eq!(rewrites().len(), rule_specs().len());
    }
}
