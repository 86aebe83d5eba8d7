//! The e-graph simplifier (egg): constant folding, IEEE-exact identities, CSE across
//! all outputs given together, and DAG-cost extraction.
//!
//! Policy: every rewrite is **IEEE-exact** — for every input (±0, ±inf, NaN,
//! subnormals) the simplified function returns the same bits as the original, except
//! that a NaN may come back as a different NaN. See `docs/ir.md` for the rule list and
//! the rules left out. Correctness never depends on this pass: callers may skip it,
//! and when it cannot do better (or something is off) it returns the input.

mod extract;
pub mod lang;
pub mod rules;

use crate::graph::{Func, Graph, Id as NodeId};
use egg::{Runner, StopReason};
use lang::{from_op, ConstFold, FdGraph, FdLang, Int};
use std::fmt;
use std::time::{Duration, Instant};

pub use extract::{graph_cost, op_cost};

/// Bump whenever the simplifier's output for the same input may change in a way the
/// rule table does not show: extraction, the cost model, constant folding, the
/// function of a `Dyn` rule. Caches of simplified code key on [`identity`].
pub const VERSION: &str = "simplify 1";

/// The simplifier's identity for caches of its output: [`VERSION`], the crate version
/// and every rule's name and patterns, so editing the rule table changes it by itself.
pub fn identity() -> String {
    identity_of(VERSION, &rules::rule_specs())
}

/// [`identity`] of a given version and rule table.
pub fn identity_of(version: &str, specs: &[rules::RuleSpec]) -> String {
    let mut s = format!("{version}; fdc-ir {}", env!("CARGO_PKG_VERSION"));
    for r in specs {
        let rhs = match &r.rhs {
            rules::Rhs::Pat(p) => p.to_string(),
            rules::Rhs::Dyn { consts, .. } => format!("dyn {consts:?}"),
        };
        s.push_str(&format!("\n{}: {} => {}", r.name, r.lhs, rhs));
    }
    s
}

/// Bounds on one simplification run. Only deterministic bounds: the same input gives
/// the same output on any machine under any load, which the source-level cache (keyed
/// on the unsimplified input) relies on. There is no wall-clock limit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limits {
    /// Stop growing the e-graph beyond this many e-nodes.
    pub node_limit: usize,
    /// At most this many rounds of rule application.
    pub iter_limit: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            node_limit: 50_000,
            iter_limit: 20,
        }
    }
}

/// Why rule application stopped.
#[derive(Clone, Debug, PartialEq)]
pub enum Stop {
    /// No rule could add anything: every equality the rules know was found.
    Saturated,
    IterLimit(usize),
    NodeLimit(usize),
    /// The input was not simplified at all (the reason says why).
    Skipped(String),
    Other(String),
}

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Stop::Saturated => write!(f, "saturated"),
            Stop::IterLimit(n) => write!(f, "iteration limit ({n})"),
            Stop::NodeLimit(n) => write!(f, "node limit ({n} e-nodes)"),
            Stop::Skipped(why) => write!(f, "skipped: {why}"),
            Stop::Other(why) => write!(f, "stopped: {why}"),
        }
    }
}

/// What a run did.
#[derive(Clone, Debug)]
pub struct Report {
    pub stop: Stop,
    pub iterations: usize,
    /// Size of the e-graph at the end.
    pub egraph_nodes: usize,
    pub egraph_classes: usize,
    /// DAG cost ([`graph_cost`]) of the input and of the returned graph.
    pub cost_before: f64,
    pub cost_after: f64,
    /// Whether the extracted graph was kept (false: the input is returned).
    pub kept: bool,
    /// Tripwire hits: two different constants found equal. Always empty unless a rule
    /// is wrong; when not empty the input is returned.
    pub conflicts: Vec<String>,
    /// Total time: building the e-graph, rules, extraction.
    pub time: Duration,
    /// Of which: applying rules (egg's runner), and extraction.
    pub rules_time: Duration,
    pub extract_time: Duration,
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}, {} iterations, {} e-nodes / {} classes, cost {:.2} -> {:.2}{}, {:.2} ms \
             (rules {:.2}, extraction {:.2})",
            self.stop,
            self.iterations,
            self.egraph_nodes,
            self.egraph_classes,
            self.cost_before,
            self.cost_after,
            if self.kept { "" } else { " (input kept)" },
            self.time.as_secs_f64() * 1e3,
            self.rules_time.as_secs_f64() * 1e3,
            self.extract_time.as_secs_f64() * 1e3,
        )?;
        if !self.conflicts.is_empty() {
            write!(f, ", CONSTANT CONFLICTS: {}", self.conflicts.join("; "))?;
        }
        Ok(())
    }
}

/// The result: a fresh graph holding only what `outputs` need.
#[derive(Clone, Debug)]
pub struct Simplified {
    pub graph: Graph,
    /// `outputs[k]` is the simplified `outputs[k]` of the input.
    pub outputs: Vec<NodeId>,
    pub report: Report,
}

/// Simplifies the expressions `outputs` of `graph` together (so equal parts of
/// different outputs end up shared). Never makes the function costlier; on any
/// problem (invalid ids, a tripwire hit) the input's needed part is returned.
/// A tripwire hit also fails a debug assertion, so tests catch a wrong rule.
pub fn simplify(graph: &Graph, outputs: &[NodeId], limits: &Limits) -> Simplified {
    simplify_observed(graph, outputs, limits, || {})
}

/// [`simplify`], calling `on_round` before every round of rule application (for
/// progress reports; tests slow the rounds down to show that only the deterministic
/// [`Limits`] bound the run, never the time it takes).
pub fn simplify_observed(
    graph: &Graph,
    outputs: &[NodeId],
    limits: &Limits,
    on_round: impl FnMut() + 'static,
) -> Simplified {
    let out = simplify_with(graph, outputs, limits, &rules::rewrites(), on_round);
    debug_assert!(
        out.report.conflicts.is_empty(),
        "simplifier merged different constants: {:?}",
        out.report.conflicts
    );
    out
}

/// [`simplify`] without the rule families `off` ([`rules::FAMILIES`]): for measuring
/// what each family buys. Without any rule, what is left is hash-consing (CSE across
/// the outputs), constant folding and extraction.
pub fn simplify_without(
    graph: &Graph,
    outputs: &[NodeId],
    limits: &Limits,
    off: &[&str],
) -> Simplified {
    simplify_with(graph, outputs, limits, &rules::rewrites_without(off), || {})
}

/// What [`simplify`] returns when it cannot do better, for a caller that does not run
/// the pass on some functions (the driver, on roles where it does not pay): the
/// needed part of `graph` as it is, with a report that says `why`. Invalid output ids
/// are handled as [`simplify`] handles them.
pub fn skipped(graph: &Graph, outputs: &[NodeId], why: &str) -> Simplified {
    let start = Instant::now();
    if graph.foreign(outputs).is_some() {
        return simplify_with(graph, outputs, &Limits::default(), &[], || {});
    }
    let cost = graph_cost(graph, outputs);
    unchanged(graph, outputs, Stop::Skipped(why.to_string()), cost, start)
}

/// [`simplify`] of a function: the simplified graph and the same function (name,
/// input sizes) with its outputs in that graph.
pub fn simplify_func(graph: &Graph, func: &Func, limits: &Limits) -> (Graph, Func, Report) {
    let s = simplify(graph, &func.outputs, limits);
    let f = Func {
        name: func.name.clone(),
        inputs: func.inputs,
        outputs: s.outputs,
    };
    (s.graph, f, s.report)
}

pub(crate) fn simplify_with(
    graph: &Graph,
    outputs: &[NodeId],
    limits: &Limits,
    rewrites: &[egg::Rewrite<FdLang, ConstFold>],
    mut on_round: impl FnMut() + 'static,
) -> Simplified {
    let start = Instant::now();
    if let Some(bad) = graph.foreign(outputs) {
        let why = format!("output {bad} is not a node of the graph");
        log::warn!("simplify skipped: {why}");
        return Simplified {
            graph: graph.clone(),
            outputs: outputs.to_vec(),
            report: Report::unchanged(Stop::Skipped(why), f64::NAN, start),
        };
    }
    let cost_before = graph_cost(graph, outputs);
    let (egraph, roots) = load(graph, outputs);

    let t_rules = Instant::now();
    let runner = Runner::<FdLang, ConstFold>::default()
        .with_egraph(egraph)
        .with_scheduler(egg::SimpleScheduler)
        .with_node_limit(limits.node_limit)
        .with_iter_limit(limits.iter_limit)
        // egg's own default is a 5 s wall-clock limit; lift it so that only the
        // deterministic limits above can stop the run.
        .with_time_limit(Duration::MAX)
        .with_hook(move |_| {
            on_round();
            Ok(())
        })
        .run(rewrites);
    let stop = stop_of(&runner.stop_reason);
    let rules_time = t_rules.elapsed();
    let egraph = &runner.egraph;
    let conflicts: Vec<String> = egraph
        .analysis
        .conflicts
        .iter()
        .map(|(a, b)| format!("{a:?} = {b:?}"))
        .collect();
    let iterations = runner.iterations.len();
    log::debug!(
        "simplify: {stop} after {iterations} iterations, {} e-nodes",
        egraph.total_number_of_nodes()
    );
    if !conflicts.is_empty() {
        log::error!("simplifier tripwire: different constants merged: {conflicts:?}");
        let mut out = unchanged(graph, outputs, stop, cost_before, start);
        out.report.conflicts = conflicts;
        out.report.rules_time = rules_time;
        return out;
    }

    let t_extract = Instant::now();
    let best = cheapest(graph, egraph, &roots);
    let mut out = match best {
        Some((cost, g, outs)) if cost <= cost_before => Simplified {
            graph: g,
            outputs: outs,
            report: Report {
                cost_after: cost,
                kept: true,
                ..Report::unchanged(stop, cost_before, start)
            },
        },
        _ => unchanged(graph, outputs, stop, cost_before, start),
    };
    out.report.iterations = iterations;
    out.report.egraph_nodes = egraph.total_number_of_nodes();
    out.report.egraph_classes = egraph.number_of_classes();
    out.report.time = start.elapsed();
    out.report.rules_time = rules_time;
    out.report.extract_time = t_extract.elapsed();
    log::info!("simplify: {}", out.report);
    out
}

impl Report {
    /// The report of a run that returns its input (cost unchanged), timed from `start`.
    fn unchanged(stop: Stop, cost: f64, start: Instant) -> Report {
        Report {
            stop,
            iterations: 0,
            egraph_nodes: 0,
            egraph_classes: 0,
            cost_before: cost,
            cost_after: cost,
            kept: false,
            conflicts: vec![],
            time: start.elapsed(),
            rules_time: Duration::ZERO,
            extract_time: Duration::ZERO,
        }
    }
}

/// The input's needed part, as returned when the simplifier cannot do better.
fn unchanged(
    graph: &Graph,
    outputs: &[NodeId],
    stop: Stop,
    cost: f64,
    start: Instant,
) -> Simplified {
    let mut g = Graph::with_tables_of(graph);
    let outputs = graph.extract(outputs, &mut g);
    Simplified {
        graph: g,
        outputs,
        report: Report::unchanged(stop, cost, start),
    }
}

/// All outputs in one e-graph: CSE across outputs comes from hash-consing plus
/// whatever the rules prove equal. Returns the e-graph and the outputs' classes.
fn load(graph: &Graph, outputs: &[NodeId]) -> (FdGraph, Vec<egg::Id>) {
    let mut egraph = FdGraph::new(ConstFold::default());
    let mut class_of: Vec<egg::Id> = vec![egg::Id::default(); graph.len()];
    for id in graph.cone(outputs) {
        let op = graph.op(id);
        let mut int_class = None;
        if let crate::graph::Op::Powi(_, n) = op {
            int_class = Some(egraph.add(FdLang::Int(Int(n))));
        }
        if let crate::graph::Op::Spline(t, d, _) = op {
            int_class = Some(egraph.add(FdLang::Int(Int(lang::spline_key(t, d)))));
        }
        let node = from_op(
            &op,
            |a| class_of[a.index()],
            |_| int_class.unwrap_or_default(),
        );
        class_of[id.index()] = egraph.add(node);
    }
    let roots = outputs.iter().map(|o| class_of[o.index()]).collect();
    (egraph, roots)
}

fn stop_of(reason: &Option<StopReason>) -> Stop {
    match reason {
        Some(StopReason::Saturated) => Stop::Saturated,
        Some(StopReason::IterationLimit(n)) => Stop::IterLimit(*n),
        Some(StopReason::NodeLimit(n)) => Stop::NodeLimit(*n),
        Some(StopReason::TimeLimit(t)) => Stop::Other(format!("time limit after {t} s")),
        Some(StopReason::Other(s)) => Stop::Other(s.clone()),
        None => Stop::Other("no stop reason".into()),
    }
}

/// Candidates: greedy DAG extraction (within its budget) and tree extraction, each
/// refined by rounds that make already computed classes free; the cheapest of them.
fn cheapest(
    graph: &Graph,
    egraph: &FdGraph,
    roots: &[egg::Id],
) -> Option<(f64, Graph, Vec<NodeId>)> {
    let mut best: Option<(f64, Graph, Vec<NodeId>)> = None;
    let setup = extract::Setup::new(egraph);
    let dag = extract::dag_choices(&setup);
    if dag.is_none() {
        log::debug!("simplify: greedy DAG extraction over budget");
    }
    let candidates = [
        dag.and_then(|dag| extract::iterate(egraph, &setup, roots, Some(dag), 4)),
        extract::iterate(egraph, &setup, roots, None, 4),
    ];
    for (cost, mut g, outs) in candidates.into_iter().flatten() {
        // Extraction keeps the input's table indices (they are in the spline keys).
        g.share_tables(graph);
        if !matches!(&best, Some(b) if b.0 <= cost) {
            best = Some((cost, g, outs));
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::Slot;
    use crate::interp::eval;
    use crate::print::print_outputs;

    fn q_inputs(q: &[f64]) -> [&[f64]; 8] {
        let empty: &[f64] = &[];
        let mut inputs = [empty; 8];
        inputs[0] = q;
        inputs
    }

    #[test]
    fn identity_changes_with_the_version_and_any_rule() {
        let base = identity_of("v", &rules::rule_specs());
        assert_eq!(base, identity_of("v", &rules::rule_specs()));
        assert_ne!(base, identity_of("w", &rules::rule_specs()));
        let mut specs = rules::rule_specs();
        specs[0].rhs = rules::Rhs::Pat("(neg ?x)");
        assert_ne!(base, identity_of("v", &specs));
        let mut specs = rules::rule_specs();
        specs.pop();
        assert_ne!(base, identity_of("v", &specs));
    }

    #[test]
    fn tripwire_catches_an_unsound_rule_and_keeps_the_input() {
        // x·0 → 0 is wrong for negative x. With it, (−q0)·0 is "+0" while the sound
        // mul-neg-l rule makes it −(q0·0) = −(+0) = −0: two constants, one class.
        let bad: egg::Rewrite<FdLang, ConstFold> = egg::Rewrite::new(
            "mul-zero",
            "(* ?x 0.0)".parse::<egg::Pattern<FdLang>>().unwrap(),
            "0.0".parse::<egg::Pattern<FdLang>>().unwrap(),
        )
        .unwrap();
        let mut rules = rules::rewrites();
        rules.push(bad);
        let mut g = Graph::new();
        let x = g.input(Slot::Q, 0);
        let nx = g.neg(x);
        let z = g.constant(0.0);
        let p = g.mul(nx, z);
        let out = simplify_with(&g, &[p], &Limits::default(), &rules, || {});
        assert!(!out.report.conflicts.is_empty(), "{}", out.report);
        assert!(!out.report.kept);
        assert!(out.report.to_string().contains("CONSTANT CONFLICTS"));
        // The input is returned: (−2)·0 = −0.
        let v = eval(&out.graph, &out.outputs, &q_inputs(&[2.0])).unwrap();
        assert_eq!(v[0].to_bits(), (-0.0f64).to_bits());
    }

    #[test]
    fn shares_equal_parts_of_different_outputs() {
        let mut g = Graph::new();
        let x = g.input(Slot::Q, 0);
        let y = g.input(Slot::Q, 1);
        let one = g.constant(1.0);
        let x1 = g.mul(x, one);
        let a = g.mul(x1, y);
        let b = g.mul(y, x);
        // |x−y| and |y−x|: one norm.
        let d1 = g.sub(x, y);
        let d2 = g.sub(y, x);
        let s1 = g.mul(d1, d1);
        let s2 = g.mul(d2, d2);
        let n1 = g.sqrt(s1);
        let n2 = g.sqrt(s2);
        let out = simplify(&g, &[a, b, n1, n2], &Limits::default());
        assert!(out.report.kept);
        assert_eq!(out.outputs[0], out.outputs[1]);
        assert_eq!(out.outputs[2], out.outputs[3]);
        assert_eq!(crate::stats::stats(&out.graph, &out.outputs).total, 4);
    }

    #[test]
    fn applies_identities() {
        let mut g = Graph::new();
        let x = g.input(Slot::Q, 0);
        let nx = g.neg(x);
        let nnx = g.neg(nx);
        let m1 = g.constant(-1.0);
        let xm = g.mul(x, m1);
        let two = g.constant(2.0);
        let half = g.div(x, two);
        let xx = g.mul(x, x);
        let xxx = g.mul(xx, x);
        let p1 = g.powi(x, 1);
        let outs = [nnx, xm, half, xxx, p1];
        let out = simplify(&g, &outs, &Limits::default());
        assert_eq!(out.report.stop, Stop::Saturated);
        assert_eq!(
            print_outputs(&out.graph, &out.outputs),
            "outputs\n  out[0] = q[0]\n  %0 = neg q[0]\n  out[1] = %0\n  \
             %1 = mul q[0], 0.5\n  out[2] = %1\n  %2 = powi q[0], 3\n  out[3] = %2\n  \
             out[4] = q[0]\n"
        );
        let q = [1.7];
        let want = eval(&g, &outs, &q_inputs(&q)).unwrap();
        let got = eval(&out.graph, &out.outputs, &q_inputs(&q)).unwrap();
        assert_eq!(want, got);
    }

    #[test]
    fn bad_input_is_reported_not_a_panic() {
        let mut g = Graph::new();
        let x = g.input(Slot::Q, 0);
        let out = simplify(&g, &[x, NodeId::from_index(9)], &Limits::default());
        assert!(matches!(out.report.stop, Stop::Skipped(ref m) if m.contains("%9")));
        assert_eq!(out.outputs, vec![x, NodeId::from_index(9)]);
        // (An operand after its user cannot be built: `Graph::add` asserts it.)
    }

    #[test]
    fn limits_stop_the_run_and_the_result_stays_correct() {
        // A chain that takes many rounds: ((((x·x)·x)·x)·x)… and nested negations.
        let mut g = Graph::new();
        let x = g.input(Slot::Q, 0);
        let mut e = x;
        for _ in 0..12 {
            let n = g.neg(e);
            let nn = g.neg(n);
            e = g.mul(nn, x);
        }
        let q = [1.0000001];
        let want = eval(&g, &[e], &q_inputs(&q)).unwrap();
        let it = simplify(
            &g,
            &[e],
            &Limits {
                iter_limit: 1,
                ..Limits::default()
            },
        );
        assert_eq!(it.report.stop, Stop::IterLimit(1));
        let nodes = simplify(
            &g,
            &[e],
            &Limits {
                node_limit: 10,
                ..Limits::default()
            },
        );
        assert!(
            matches!(nodes.report.stop, Stop::NodeLimit(_)),
            "{}",
            nodes.report
        );
        let full = simplify(&g, &[e], &Limits::default());
        assert_eq!(full.report.stop, Stop::Saturated);
        for s in [&it, &nodes, &full] {
            assert!(s.report.cost_after <= s.report.cost_before);
            let got = eval(&s.graph, &s.outputs, &q_inputs(&q)).unwrap();
            assert_eq!(got[0].to_bits(), want[0].to_bits());
        }
        assert!(full.report.cost_after < it.report.cost_after);
    }

    /// Outputs [x·x, x·x·x]: tree cost prefers powi(x,3) (1.98) for the second, but
    /// x·powi(x,2) reuses the first output and costs 1 more instead of 1.98.
    fn shared_square() -> (Graph, Vec<NodeId>) {
        let mut g = Graph::new();
        let x = g.input(Slot::Q, 0);
        let xx = g.mul(x, x);
        let xxx = g.mul(x, xx);
        (g, vec![xx, xxx])
    }

    /// The saturated e-graph of [`shared_square`], written as s-expressions.
    fn shared_square_egraph() -> (FdGraph, Vec<egg::Id>) {
        let r = Runner::<FdLang, ConstFold>::default()
            .with_egraph(FdGraph::new(ConstFold::default()))
            .with_expr(&"(* q[0] q[0])".parse().unwrap())
            .with_expr(&"(* q[0] (* q[0] q[0]))".parse().unwrap())
            .run(&rules::rewrites());
        let roots = r.roots.clone();
        (r.egraph, roots)
    }

    #[test]
    fn sharing_aware_rounds_reuse_what_another_output_computes() {
        let (eg, roots) = shared_square_egraph();
        let st = extract::Setup::new(&eg);
        let tree = extract::tree_choices(&st, None);
        let (tg, touts) =
            extract::build(&eg, |c| tree.get(usize::from(c)).cloned().flatten(), &roots).unwrap();
        assert!((graph_cost(&tg, &touts) - 0.99 * 3.0).abs() < 1e-9);
        let dag = extract::dag_choices(&st).unwrap();
        let (dg, douts) =
            extract::build(&eg, |c| dag.get(usize::from(c)).cloned().flatten(), &roots).unwrap();
        // The greedy DAG extractor minimizes each class on its own: it does not know
        // that the other output pays for powi(x,2) anyway, so it takes powi(x,3).
        assert!((graph_cost(&dg, &douts) - 0.99 * 3.0).abs() < 1e-9);
        let (cost, ig, iouts) = extract::iterate(&eg, &st, &roots, None, 4).unwrap();
        assert!((cost - 1.99).abs() < 1e-9);
        assert_eq!(
            print_outputs(&ig, &iouts),
            "outputs\n  %0 = powi q[0], 2\n  out[0] = %0\n  %1 = mul q[0], %0\n  out[1] = %1\n"
        );
        let (g, outs) = shared_square();
        let s = simplify(&g, &outs, &Limits::default());
        assert!((s.report.cost_after - 1.99).abs() < 1e-9, "{}", s.report);
    }

    #[test]
    fn symbols_pass_through_untouched() {
        let mut g = Graph::new();
        let a = g.sym(3);
        let one = g.constant(1.0);
        let e = g.mul(a, one);
        let n = g.neg(e);
        let nn = g.neg(n);
        let s = simplify(&g, &[nn], &Limits::default());
        assert_eq!(
            print_outputs(&s.graph, &s.outputs),
            "outputs\n  out[0] = s3\n"
        );
    }

    #[test]
    fn simplify_func_keeps_name_and_signature() {
        let mut g = Graph::new();
        let x = g.input(Slot::P, 1);
        let nx = g.neg(x);
        let nnx = g.neg(nx);
        let f = Func {
            name: "f".into(),
            inputs: crate::graph::SlotSizes([0, 0, 0, 0, 2, 0, 0, 0]),
            outputs: vec![nnx, nx],
        };
        let (sg, sf, report) = simplify_func(&g, &f, &Limits::default());
        assert!(report.kept);
        assert_eq!((sf.name.as_str(), sf.inputs), ("f", f.inputs));
        assert_eq!(
            crate::print::print_func(&sg, &sf),
            "func f(p: 2)\n  out[0] = p[1]\n  %0 = neg p[1]\n  out[1] = %0\n"
        );
    }
}
