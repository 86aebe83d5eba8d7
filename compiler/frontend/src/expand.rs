//! Expansion of the build-time structure of a model, between parsing and checking:
//! `for` loops and `if` blocks around items and statements are unrolled, indexed names
//! (`crank[i]`) become plain names (`crank[3]`), arrays (`param xs = [1, 2, 4, 8];`) are
//! read by index, and an element type whose structure depends on a field (the flags of
//! the `generic` joint, a count) gets one specialized copy per value of those fields,
//! named `TYPE<field=value,...>` (as a type is lowered once per connection pattern).
//! What comes out has no `for`, `if` block or index left at the top level, so the
//! checker, the lowering and everything after them see ordinary instances.
//!
//! The structure may depend on model parameters: `fdc run --set N=10` expands again
//! with the new value ([`Expansion::structural`] names the parameters it read). Element
//! types are left unchanged, so their compiled code still comes from the cache.

// A `Diagnostic` is the expansion's only error and ends it at once; boxing it in every
// `Result` of the evaluator would add noise for no measurable gain.
#![allow(clippy::result_large_err)]

mod value;
mod walk;

use crate::ast::*;
use crate::diag::Diagnostic;
use std::collections::{BTreeSet, HashMap, HashSet};
use value::{element, not_build_time, not_whole, out_of_range, BVal};
use walk::{index_names, map_children, map_stmt, names, stmt_exprs};

/// At most this many loop iterations and instances, together, make one expansion (a
/// typo such as `0..1e6`, or nested loops with few iterations each, would otherwise
/// take the machine; instances whose index fails count too, so a model of errors is
/// bounded as well).
const MAX_EXPANDED: usize = 200_000;
/// Loops, `if` blocks and specializations nested deeper than this are refused.
const MAX_DEPTH: usize = 32;

/// The expanded modules and what the expansion found.
pub struct Expansion {
    pub modules: Vec<Module>,
    pub diagnostics: Vec<Diagnostic>,
    /// Model parameters the structure depends on (a loop bound, a condition, an index).
    pub structural: Vec<String>,
    /// Uses of an index no loop made (E0601): the checker's "unknown name" there says
    /// nothing more.
    pub bad_refs: Vec<Span>,
}

/// Expands `modules` (parsed files, stdlib first); `overrides` are `--set` values of
/// model parameters.
pub fn expand(modules: &[Module], overrides: &[(String, f64)]) -> Expansion {
    let mut x = Expander {
        globals: HashMap::new(),
        overrides,
        global_values: HashMap::new(),
        top: true,
        vars: Vec::new(),
        typedefs: HashMap::new(),
        structural: HashMap::new(),
        done: HashSet::new(),
        new_types: Vec::new(),
        diags: Vec::new(),
        used_globals: BTreeSet::new(),
        refs: Vec::new(),
        declared: HashSet::new(),
        bad_refs: Vec::new(),
        produced: 0,
        depth: 0,
        eval_depth: 0,
    };
    for item in modules.iter().flat_map(|m| &m.items) {
        match item {
            Item::Param(p) => {
                x.globals.entry(p.name.name.clone()).or_insert(p);
            }
            Item::TypeDef(t) => {
                x.typedefs.entry(t.name.name.clone()).or_insert(t);
            }
            _ => {}
        }
    }
    x.prepare_structural();
    let mut out: Vec<Module> = modules
        .iter()
        .map(|m| {
            let mut items = Vec::new();
            x.items(&m.items, &mut items);
            // Only the few fields beside the items: cloning `m` whole would copy every
            // item of the file (the model's thousands of instances) to drop them again.
            Module {
                items,
                file: m.file,
                maybe_declared: m.maybe_declared.clone(),
            }
        })
        .collect();
    for (file, def) in std::mem::take(&mut x.new_types) {
        if let Some(m) = out.iter_mut().find(|m| m.file == file) {
            m.items.push(Item::TypeDef(def));
        }
    }
    x.check_refs();
    // A mistake inside a loop is made once per iteration: say it once (the first
    // iteration's words) per code, place and message.
    let mut seen = HashSet::new();
    x.diags.retain(|d| {
        let at = d.primary.as_ref().map(|l| l.span);
        seen.insert((d.code, at, d.message.clone()))
    });
    Expansion {
        modules: out,
        diagnostics: x.diags,
        structural: x.used_globals.into_iter().collect(),
        bad_refs: x.bad_refs,
    }
}

struct Expander<'a> {
    globals: HashMap<String, &'a ParamDecl>,
    overrides: &'a [(String, f64)],
    global_values: HashMap<String, Option<BVal>>,
    /// At the top level (model parameters visible), not inside an element type.
    top: bool,
    /// Loop variables and build-time fields in scope, innermost last.
    vars: Vec<(String, BVal)>,
    typedefs: HashMap<String, &'a TypeDef>,
    /// The build-time parameters of each element type (empty: none).
    structural: HashMap<String, Vec<String>>,
    done: HashSet<String>,
    new_types: Vec<(FileId, TypeDef)>,
    diags: Vec<Diagnostic>,
    used_globals: BTreeSet<String>,
    /// Top-level uses of indexed names: (array name, full name, index, span).
    refs: Vec<(String, String, i64, Span)>,
    /// Indexed top-level instances (full names).
    declared: HashSet<String>,
    bad_refs: Vec<Span>,
    produced: usize,
    depth: usize,
    eval_depth: usize,
}

impl<'a> Expander<'a> {
    /// The build-time value of a name in scope.
    fn lookup(&mut self, n: &str) -> Option<BVal> {
        if let Some((_, v)) = self.vars.iter().rev().find(|(v, _)| v == n) {
            return Some(v.clone());
        }
        if !self.top {
            return None;
        }
        let decl = *self.globals.get(n)?;
        self.used_globals.insert(n.to_string());
        if let Some((_, v)) = self.overrides.iter().rev().find(|(o, _)| o == n) {
            return Some(BVal::Num(*v));
        }
        if let Some(v) = self.global_values.get(n) {
            return v.clone();
        }
        self.global_values.insert(n.to_string(), None);
        let saved = std::mem::take(&mut self.vars);
        let v = decl.default.as_ref().and_then(|e| match self.eval(e) {
            Ok(v) => Some(v),
            Err(d) => {
                self.diags.push(d);
                None
            }
        });
        self.vars = saved;
        self.global_values.insert(n.to_string(), v.clone());
        v
    }

    fn items(&mut self, items: &'a [Item], out: &mut Vec<Item>) {
        for item in items {
            match item {
                Item::For(l) => {
                    if let Some(ks) = self.range(l) {
                        for k in ks {
                            if !self.spend(l.span) {
                                break;
                            }
                            self.vars.push((l.var.name.clone(), BVal::Num(k as f64)));
                            self.items(&l.body, out);
                            self.vars.pop();
                        }
                        self.depth -= 1;
                    }
                }
                Item::When(c) => {
                    if let Some(yes) = self.condition(c) {
                        self.items(if yes { &c.then } else { &c.otherwise }, out);
                        self.depth -= 1;
                    }
                }
                Item::Instance(inst) => {
                    if let Some(i) = self.instance(inst) {
                        out.push(Item::Instance(i));
                    }
                }
                // An array is read by index at build time; it is no value of the model.
                Item::Param(p) if p.default.as_ref().is_some_and(is_array_literal) => {}
                Item::Param(p) => out.push(Item::Param(self.param(p))),
                Item::Input(p) => out.push(Item::Input(self.param(p))),
                Item::Gravity { value, span } => out.push(Item::Gravity {
                    value: self.subst(value),
                    span: *span,
                }),
                Item::Output {
                    name,
                    index,
                    value,
                    span,
                } => {
                    if let Some(name) = self.indexed_name(name, index) {
                        out.push(Item::Output {
                            name,
                            index: Vec::new(),
                            value: self.subst(value),
                            span: *span,
                        });
                    }
                }
                Item::Shape(sh) => out.push(Item::Shape(ShapeDecl {
                    body: self.subst(&sh.body),
                    fields: (sh.fields.iter())
                        .map(|f| Field {
                            value: self.subst(&f.value),
                            ..f.clone()
                        })
                        .collect(),
                    ..sh.clone()
                })),
                Item::TypeDef(t) => out.push(Item::TypeDef(self.typedef(t))),
                other => out.push(other.clone()),
            }
        }
    }

    fn param(&mut self, p: &ParamDecl) -> ParamDecl {
        ParamDecl {
            default: p.default.as_ref().map(|e| self.subst(e)),
            ..p.clone()
        }
    }

    /// The indices of a loop; on success one level deeper (the caller steps back).
    fn range<T>(&mut self, l: &Loop<T>) -> Option<std::ops::Range<i64>> {
        let from = self.whole(&l.from, "a loop bound");
        let to = self.whole(&l.to, "a loop bound");
        let (from, to) = match (from, to) {
            (Ok(a), Ok(b)) => (a, b),
            (a, b) => {
                self.diags.extend(a.err().into_iter().chain(b.err()));
                return None;
            }
        };
        if to < from {
            let d = not_whole(l.to.span, "the count of a loop", (to - from) as f64);
            self.diags
                .push(d.also(l.from.span, format!("counts from {from}")));
            return None;
        }
        self.deeper(l.span).then_some(from..to)
    }

    fn condition<T>(&mut self, c: &Cond<T>) -> Option<bool> {
        let yes = match self.eval(&c.cond) {
            Ok(BVal::Num(x)) => x != 0.0,
            Ok(BVal::List(_)) => {
                self.diags.push(
                    Diagnostic::error("E0301", "an `if` condition must be a number")
                        .at(c.cond.span, "this is an array"),
                );
                return None;
            }
            Err(d) => {
                self.diags.push(d);
                return None;
            }
        };
        self.deeper(c.span).then_some(yes)
    }

    /// One loop iteration or instance of the budget [`MAX_EXPANDED`]; `false` once it
    /// is spent (reported once, where it ran out).
    fn spend(&mut self, span: Span) -> bool {
        self.produced += 1;
        if self.produced == MAX_EXPANDED {
            self.diags.push(
                Diagnostic::error("E0602", "loops create too many instances")
                    .at(
                        span,
                        format!("{MAX_EXPANDED} loop iterations and instances are reached here"),
                    )
                    .note("a loop bound is likely larger than meant, or loops are nested too far"),
            );
        }
        self.produced < MAX_EXPANDED
    }

    fn deeper(&mut self, span: Span) -> bool {
        if self.depth >= MAX_DEPTH {
            self.diags.push(
                Diagnostic::error("E0003", "loops and conditions nested too deeply")
                    .at(span, format!("more than {MAX_DEPTH} levels")),
            );
            return false;
        }
        self.depth += 1;
        true
    }

    /// `name[i][j]` with the indices evaluated (`crank[3]`), or `None` after a
    /// diagnostic for an index that is not a whole number ≥ 0.
    fn indexed_name(&mut self, name: &Ident, index: &[Expr]) -> Option<Ident> {
        let mut name = name.clone();
        for ix in index {
            match self.whole(ix, "an index") {
                Ok(k) if k >= 0 => name.name.push_str(&format!("[{k}]")),
                Ok(k) => {
                    self.diags
                        .push(not_whole(ix.span, "an index (0 or more)", k as f64));
                    return None;
                }
                Err(d) => {
                    self.diags.push(d);
                    return None;
                }
            }
        }
        Some(name)
    }

    /// An instance with its index evaluated, its expressions substituted and, for a
    /// type with build-time fields, its type specialized.
    fn instance(&mut self, inst: &Instance) -> Option<Instance> {
        if !self.spend(inst.span) {
            return None;
        }
        let name = self.indexed_name(&inst.name, &inst.index)?;
        if self.top && !inst.index.is_empty() {
            self.declared.insert(name.name.clone());
        }
        let connections = inst.connections.iter().map(|e| self.subst(e)).collect();
        // Build-time fields are evaluated whole (they may be arrays); others substituted.
        let shaping = self.structural_params(&inst.ty.name);
        let mut fields: Vec<Field> = inst
            .fields
            .iter()
            .map(|f| match shaping.contains(&f.name.name) {
                true => f.clone(),
                false => Field {
                    value: self.subst(&f.value),
                    ..f.clone()
                },
            })
            .collect();
        let mut ty = inst.ty.clone();
        if !shaping.is_empty() {
            let (n, rest) = self.specialize(&inst.ty, fields, inst.span)?;
            ty.name = n;
            fields = rest;
        }
        Some(Instance {
            name,
            index: Vec::new(),
            ty,
            connections,
            fields,
            ..inst.clone()
        })
    }

    /// `e` with loop variables and build-time fields replaced by their values and
    /// indices resolved: an array element, or the name of an indexed instance.
    fn subst(&mut self, e: &Expr) -> Expr {
        let error = Expr {
            kind: ExprKind::Error,
            span: e.span,
        };
        match &e.kind {
            ExprKind::Name(n) => {
                if let Some((_, v)) = self.vars.iter().rev().find(|(v, _)| v == n) {
                    return v.to_expr(e.span);
                }
                let array = self.top
                    && self
                        .globals
                        .get(n)
                        .is_some_and(|p| p.default.as_ref().is_some_and(is_array_literal));
                if array {
                    self.diags.push(
                        Diagnostic::error("E0604", format!("array `{n}` used without an index"))
                            .at(e.span, "an array, not a value")
                            .note(format!(
                                "read one element, `{n}[i]`, or its length, `len({n})`"
                            )),
                    );
                    return error;
                }
                e.clone()
            }
            ExprKind::Call(f, args) if f.name == "len" && args.len() == 1 => match self.eval(e) {
                Ok(v) => v.to_expr(e.span),
                Err(d) => {
                    self.diags.push(d);
                    error
                }
            },
            ExprKind::Index(base, i) => {
                let k = match self.whole(i, "an index") {
                    Ok(k) => k,
                    Err(d) => {
                        self.diags.push(d);
                        return error;
                    }
                };
                if self.is_build_time_root(base) {
                    let v = self
                        .eval(base)
                        .and_then(|l| element(&l, k, base.span, i.span));
                    return match v {
                        Ok(v) => v.to_expr(e.span),
                        Err(d) => {
                            self.diags.push(d);
                            error
                        }
                    };
                }
                match self.subst(base).kind {
                    ExprKind::Name(m) if k >= 0 => {
                        let full = format!("{m}[{k}]");
                        if self.top {
                            self.refs.push((m, full.clone(), k, e.span));
                        }
                        Expr {
                            kind: ExprKind::Name(full),
                            span: e.span,
                        }
                    }
                    ExprKind::Name(m) => {
                        self.diags
                            .push(out_of_range(i.span, k, 0, &format!("`{m}`")));
                        error
                    }
                    ExprKind::Error => error,
                    _ => {
                        self.diags
                            .push(not_build_time(base.span, "this indexed value").note(
                                "an index reads an array or names an indexed instance; \
                             components of a vector are `.x`, `.y`, `.z`",
                            ));
                        error
                    }
                }
            }
            _ => map_children(e, &mut |c| self.subst(c)),
        }
    }

    /// Whether the array an index reads is a build-time value (a loop variable, a
    /// build-time field or a model parameter), not an indexed instance.
    fn is_build_time_root(&mut self, base: &Expr) -> bool {
        let mut root = base;
        while let ExprKind::Index(b, _) = &root.kind {
            root = b;
        }
        match &root.kind {
            ExprKind::Name(n) => {
                self.vars.iter().any(|(v, _)| v == n) || (self.top && self.globals.contains_key(n))
            }
            ExprKind::List(_) => true,
            _ => false,
        }
    }

    /// E0601 for a use of `crank[k]` where `crank` is an indexed instance without `k`.
    fn check_refs(&mut self) {
        for (base, full, k, span) in std::mem::take(&mut self.refs) {
            if self.declared.contains(&full) {
                continue;
            }
            let prefix = format!("{base}[");
            let n = self
                .declared
                .iter()
                .filter(|d| d.starts_with(&prefix) && !d[prefix.len()..].contains('['))
                .count();
            if n > 0 {
                self.diags
                    .push(out_of_range(span, k, n, &format!("`{base}`")));
                self.bad_refs.push(span);
            }
        }
    }
}

/// `[a, b, c, d]`: a list that is no vec3 or mat3, so only build-time code can read it.
fn is_array_literal(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::List(items) => {
            items.len() != 3
                || items
                    .iter()
                    .any(|i| matches!(&i.kind, ExprKind::List(r) if r.len() != 3))
        }
        _ => false,
    }
}

mod types;
