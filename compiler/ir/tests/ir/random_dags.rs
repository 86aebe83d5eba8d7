//! Simplified vs unsimplified random expression DAGs: the interpreter must give the
//! same bits (NaN equal to any NaN) on random inputs, including ±0, ±inf and NaN.

use fdc_ir::interp::eval;
use fdc_ir::simplify::lang::same_value;
use fdc_ir::simplify::{graph_cost, simplify, Limits};
use fdc_ir::stats::stats;
use fdc_ir::{Cmp, Graph, Id, Op, Slot, Unary};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const NICE: [f64; 10] = [0.0, -0.0, 1.0, -1.0, 2.0, 0.5, 3.0, -0.25, 1e-310, 7.5];
const WILD: [f64; 6] = [
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::NAN,
    f64::MAX,
    5e-324,
    -1e300,
];

fn value(rng: &mut StdRng) -> f64 {
    match rng.gen_range(0..6) {
        0 => NICE[rng.gen_range(0..NICE.len())],
        1 => WILD[rng.gen_range(0..WILD.len())],
        _ => rng.gen_range(-4.0..4.0),
    }
}

const UNARY: [Unary; 9] = [
    Unary::Neg,
    Unary::Sqrt,
    Unary::Sin,
    Unary::Cos,
    Unary::Tan,
    Unary::Exp,
    Unary::Log,
    Unary::Tanh,
    Unary::Abs,
];
const CMP: [Cmp; 6] = [Cmp::Lt, Cmp::Le, Cmp::Gt, Cmp::Ge, Cmp::Eq, Cmp::Ne];

/// A random DAG over `n_inputs` inputs (none: constants only) whose last nodes are
/// the outputs. Operand choice favours recent nodes and repeats, and some steps build
/// the shapes the rules look for, so the rules actually fire.
fn random_dag(rng: &mut StdRng, n_inputs: usize, steps: usize) -> (Graph, Vec<Id>) {
    let mut g = Graph::new();
    let mut pool: Vec<Id> = (0..n_inputs).map(|i| g.input(Slot::Q, i)).collect();
    for _ in 0..3 {
        let c = NICE[rng.gen_range(0..NICE.len())];
        pool.push(g.constant(c));
    }
    let pick = |rng: &mut StdRng, pool: &[Id]| {
        let n = pool.len();
        if rng.gen_bool(0.6) {
            pool[n - 1 - rng.gen_range(0..n.min(4))]
        } else {
            pool[rng.gen_range(0..n)]
        }
    };
    for _ in 0..steps {
        let a = pick(rng, &pool);
        let b = pick(rng, &pool);
        let id = match rng.gen_range(0..20) {
            0 => g.unary(UNARY[rng.gen_range(0..UNARY.len())], a),
            1 | 2 => g.neg(a),
            3 => g.add2(a, b),
            4 => g.sub(a, b),
            5 => g.mul(a, b),
            6 => g.div(a, b),
            7 => g.mul(a, a),
            8 => {
                let c = g.constant([1.0, -1.0, 2.0, 0.5, -0.0][rng.gen_range(0..5)]);
                if rng.gen() {
                    g.mul(a, c)
                } else {
                    g.div(a, c)
                }
            }
            9 => g.powi(a, rng.gen_range(-4..=6)),
            10 => {
                let c = g.constant([0.0, -0.0, 1.0][rng.gen_range(0..3)]);
                if rng.gen() {
                    g.add2(a, c)
                } else {
                    g.sub(a, c)
                }
            }
            11 => {
                let d = g.sub(a, b);
                let e = g.sub(b, a);
                let (d2, e2) = (g.mul(d, d), g.mul(e, e));
                g.add2(d2, e2)
            }
            12 => g.abs(a),
            13 => {
                let x = pick(rng, &pool);
                g.select(CMP[rng.gen_range(0..6)], a, b, x, a)
            }
            14 => g.min(a, b),
            15 => g.max(a, b),
            16 => g.pow(a, b),
            17 => g.atan2(a, b),
            18 => {
                let p = g.powi(a, rng.gen_range(1..=4));
                g.mul(p, a)
            }
            _ => g.sqrt(a),
        };
        pool.push(id);
    }
    let n = pool.len();
    let mut outs: Vec<Id> = pool[n - 3..].to_vec();
    outs.push(pool[rng.gen_range(0..n)]);
    (g, outs)
}

fn assert_same(a: &[f64], b: &[f64], what: &str) {
    assert_eq!(a.len(), b.len());
    for (k, (x, y)) in a.iter().zip(b).enumerate() {
        assert!(
            same_value(*x, *y),
            "{what}: output {k} differs: {x:?} vs {y:?}"
        );
    }
}

#[test]
fn simplified_random_dags_evaluate_identically() {
    let mut rng = StdRng::seed_from_u64(20261130);
    let (mut ops_before, mut ops_after) = (0, 0);
    for case in 0..300 {
        let (g, outs) = random_dag(&mut rng, 4, 25);
        let s = simplify(&g, &outs, &Limits::default());
        assert!(s.report.conflicts.is_empty());
        assert!(s.report.cost_after <= s.report.cost_before, "{}", s.report);
        assert_eq!(graph_cost(&s.graph, &s.outputs), s.report.cost_after);
        ops_before += stats(&g, &outs).total;
        ops_after += stats(&s.graph, &s.outputs).total;
        for _ in 0..25 {
            let q: Vec<f64> = (0..4).map(|_| value(&mut rng)).collect();
            let empty: &[f64] = &[];
            let mut inputs = [empty; 8];
            inputs[0] = &q;
            let want = eval(&g, &outs, &inputs).unwrap();
            let got = eval(&s.graph, &s.outputs, &inputs).unwrap();
            assert_same(&want, &got, &format!("case {case}, q = {q:?}"));
        }
    }
    // The comparison is only worth something if the simplifier changed things.
    assert!(
        ops_after * 10 < ops_before * 9,
        "simplifier did little: {ops_before} -> {ops_after} ops"
    );
}

#[test]
fn constant_dags_fold_to_the_interpreters_values() {
    let mut rng = StdRng::seed_from_u64(7);
    for case in 0..200 {
        let (g, outs) = random_dag(&mut rng, 0, 12);
        let s = simplify(&g, &outs, &Limits::default());
        let st = stats(&s.graph, &s.outputs);
        assert_eq!(st.total, 0, "case {case} left operations: {st}");
        let empty: &[f64] = &[];
        let want = eval(&g, &outs, &[empty; 8]).unwrap();
        for (k, &o) in s.outputs.iter().enumerate() {
            match s.graph.op(o) {
                // Folding is done by the interpreter's own code: exact bits (a NaN
                // may be another NaN, as the policy allows).
                Op::Const(bits) => assert!(
                    same_value(f64::from_bits(bits), want[k]),
                    "case {case} output {k}: {:?} vs {:?}",
                    f64::from_bits(bits),
                    want[k]
                ),
                other => panic!("case {case}: output {k} is {other:?}, not a constant"),
            }
        }
    }
}

/// Only the deterministic limits bound a run: the same DAGs simplified as fast as the
/// machine allows, and with the first round slowed by 600 ms (a loaded machine; more
/// than the 500 ms wall-clock limit the simplifier once had), give byte-identical IR,
/// the same number of rounds and the same stop reason, which is never a time limit.
#[test]
fn machine_load_does_not_change_the_simplified_ir() {
    use fdc_ir::print::print_outputs;
    use fdc_ir::simplify::{simplify_observed, Stop};
    let mut rng = StdRng::seed_from_u64(2126);
    let mut slowed = 0;
    for _ in 0..40 {
        let (g, outs) = random_dag(&mut rng, 3, 60);
        let fast = simplify(&g, &outs, &Limits::default());
        let again = simplify(&g, &outs, &Limits::default());
        assert_eq!(
            print_outputs(&fast.graph, &fast.outputs),
            print_outputs(&again.graph, &again.outputs)
        );
        // Only DAGs that need a second round can show a time limit.
        if fast.report.iterations < 2 || slowed == 2 {
            continue;
        }
        slowed += 1;
        let mut first = true;
        let slow = simplify_observed(&g, &outs, &Limits::default(), move || {
            if std::mem::take(&mut first) {
                std::thread::sleep(std::time::Duration::from_millis(600));
            }
        });
        assert_eq!(
            print_outputs(&fast.graph, &fast.outputs),
            print_outputs(&slow.graph, &slow.outputs)
        );
        assert_eq!(fast.report.iterations, slow.report.iterations);
        assert_eq!(fast.report.stop, slow.report.stop);
        assert!(
            matches!(
                slow.report.stop,
                Stop::Saturated | Stop::IterLimit(_) | Stop::NodeLimit(_)
            ),
            "{}",
            slow.report.stop
        );
        assert!(slow.report.rules_time.as_millis() >= 600);
    }
    assert_eq!(slowed, 2, "no random DAG needed two rounds");
}
