//! The iteration matrix by vertex elimination against forward mode (the `Iter`
//! family) on random DAGs over every kind of leaf and operation, through the IR
//! interpreter: the same entries, equal up to roundoff.

use crate::common::{rng, uniform};
use fdc_diff::ad::substitute;
use fdc_diff::{Differ, Family};
use fdc_ir::{interp, Cmp, Graph, Id, Op, Slot, M3};
use rand::rngs::StdRng;
use rand::Rng;
use std::collections::{BTreeMap, HashMap};

/// Parameters: [γ′h, β′h², T(Δ) (9), rotation matrix symbols (9)].
const NP: usize = 20;

/// A random expression DAG over one rigid body's leaves; returns its last nodes.
fn random_dag(g: &mut Graph, r: &mut StdRng, n_ops: usize) -> Vec<Id> {
    let mut pool: Vec<Id> = Vec::new();
    pool.extend((0..7).map(|i| g.input(Slot::Q, i)));
    pool.extend((0..9).map(|k| g.sym(k)));
    pool.extend((0..6).map(|i| g.input(Slot::V, i)));
    pool.extend((0..6).map(|i| g.input(Slot::Vdot, i)));
    pool.extend((0..2).map(|i| g.input(Slot::Lambda, i)));
    pool.push(g.input(Slot::T, 0));
    pool.push(g.input(Slot::P, 0));
    let c = g.constant(1.3);
    for _ in 0..n_ops {
        // Operands biased to recent nodes, so the DAG is deep as well as wide.
        let pick = |r: &mut StdRng| {
            let k = pool.len();
            let lo = k.saturating_sub(12);
            pool[if r.gen_bool(0.7) {
                r.gen_range(lo..k)
            } else {
                r.gen_range(0..k)
            }]
        };
        let (a, b) = (pick(r), pick(r));
        // Positive arguments where the domain needs them: b² + 1.3.
        let sq = g.mul(b, b);
        let pos = g.add2(sq, c);
        let x = match r.gen_range(0..20) {
            0 => g.add2(a, b),
            1 => g.sub(a, b),
            2 | 3 => g.mul(a, b),
            4 => g.div(a, pos),
            5 => g.neg(a),
            6 => g.sqrt(pos),
            7 => g.sin(a),
            8 => g.cos(a),
            9 => g.tanh(a),
            10 => {
                let s = g.sin(a);
                g.exp(s)
            }
            11 => g.log(pos),
            12 => g.abs(a),
            13 => g.powi(a, 3),
            14 => g.pow(pos, a),
            15 => g.atan2(a, b),
            16 => g.min(a, b),
            17 => g.max(a, b),
            18 => g.select(Cmp::Lt, a, b, a, b),
            _ => g.tan(a),
        };
        let y = g.tanh(x);
        pool.push(if r.gen_bool(0.3) { y } else { x });
    }
    pool[pool.len() - 6..].to_vec()
}

/// The rows' entries as (row, col) → value, after substituting the rotation symbols
/// by parameters.
fn evaluate(
    g: &mut Graph,
    vals: &[Id],
    entries: &[(u32, u32)],
    x: &Inputs,
) -> BTreeMap<(u32, u32), f64> {
    let ps: HashMap<u32, Id> = (0..9)
        .map(|k| (k, g.input(Slot::P, 11 + k as usize)))
        .collect();
    let leaf = |op: Op| match op {
        Op::Sym(k) => Some(Some(ps[&k])),
        _ => None,
    };
    let mut memo = HashMap::new();
    let outs: Vec<Id> = substitute(g, vals, &leaf, &mut memo)
        .into_iter()
        .map(|o| o.expect("entries are not structurally zero"))
        .collect();
    let e: &[f64] = &[];
    let inputs = [&x.q[..], &x.v, &x.vdot, &x.lambda, &x.p, e, e, &x.t];
    let v = interp::eval(g, &outs, &inputs).expect("evaluates");
    entries.iter().copied().zip(v).collect()
}

struct Inputs {
    q: Vec<f64>,
    v: Vec<f64>,
    vdot: Vec<f64>,
    lambda: Vec<f64>,
    p: Vec<f64>,
    t: Vec<f64>,
}

#[test]
fn elimination_matches_forward_mode_on_random_dags() {
    let mut r = rng(77);
    for case in 0..12 {
        let mut g = Graph::new();
        let rows: Vec<Option<Id>> = random_dag(&mut g, &mut r, 40 + 10 * case)
            .into_iter()
            .map(Some)
            .collect();
        let p = |g: &mut Graph, i: usize| g.input(Slot::P, i);
        let (gh, bh2) = (p(&mut g, 0), p(&mut g, 1));
        let t: M3 = [0, 1, 2].map(|i| [0, 1, 2].map(|j| p(&mut g, 2 + 3 * i + j)));
        let bh2_t = vec![t.map(|row| row.map(|x| g.mul(bh2, x)))];
        let mut d = Differ::new();
        d.set_iteration(gh, bh2, bh2_t, 6);
        let (mut fv, mut fe) = (Vec::new(), Vec::new());
        for (i, row) in rows.iter().enumerate() {
            for (c, x) in d.grad(&mut g, Family::Iter, row.unwrap()) {
                fe.push((i as u32, c));
                fv.push(x);
            }
        }
        let (ev, ee) = d.iter_by_elimination(&mut g, &rows, &[t]);
        assert_eq!(ee, fe, "case {case}: the same structural entries");
        for _ in 0..3 {
            let x = Inputs {
                q: uniform(&mut r, 7, -1.0, 1.0),
                v: uniform(&mut r, 6, -1.0, 1.0),
                vdot: uniform(&mut r, 6, -1.0, 1.0),
                lambda: uniform(&mut r, 2, -1.0, 1.0),
                p: uniform(&mut r, NP, -1.0, 1.0),
                t: vec![r.gen_range(0.0..2.0)],
            };
            let want = evaluate(&mut g, &fv, &fe, &x);
            let got = evaluate(&mut g, &ev, &ee, &x);
            let scale = want.values().fold(1e-8, |m: f64, v| m.max(v.abs()));
            for (k, w) in &want {
                let e = (got[k] - w).abs() / scale;
                assert!(
                    e <= 1e-12,
                    "case {case} entry {k:?}: {} vs {w} ({e:e})",
                    got[k]
                );
            }
        }
    }
}

/// The form selection (`IterationForm::Cheaper`): an element without constraint rows
/// (a force, a body) builds only the eliminated form, which must then be no costlier
/// than the assembled one it no longer builds; a constrained element keeps the cheaper
/// of both; `iter_noqv` of a connector (the same rows as `iter`) reuses `iter`'s
/// choice, node for node. Operation counts of the roles as built in each form.
#[test]
fn cheaper_form_is_the_cheapest_and_skips_the_assembled_form_for_loads() {
    use crate::common::{revolute, rigid_body, spring_damper, FORM};
    use fdc_diff::{op_count, ElementFunctions, IterationForm, Role};
    type Build = fn(&mut Graph) -> ElementFunctions;
    let builds: [(&str, Build, bool); 4] = [
        ("spring", |g| spring_damper(g, false), false),
        ("spring (measure)", |g| spring_damper(g, true), false),
        ("rigid body", |g| rigid_body(g, true), false),
        ("revolute", revolute, true),
    ];
    for (name, build, constrained) in builds {
        let iter_ops = |form| {
            let mut g = Graph::new();
            FORM.with(|f| f.set(form));
            let ef = build(&mut g);
            FORM.with(|f| f.set(IterationForm::Cheaper));
            let outs = |role| ef.role(role).expect("role").0.outputs.clone();
            let (iter, noqv) = (outs(Role::Iter), outs(Role::IterNoqv));
            (op_count(&g, &iter), iter == noqv)
        };
        let (cheaper, same) = iter_ops(IterationForm::Cheaper);
        let (assembled, _) = iter_ops(IterationForm::Assembled);
        let (eliminated, _) = iter_ops(IterationForm::Eliminated);
        assert_eq!(
            cheaper,
            assembled.min(eliminated),
            "{name}: cheaper {cheaper}, assembled {assembled}, eliminated {eliminated}"
        );
        if !constrained {
            // The premise of skipping the assembled form (the rigid body of
            // `common` ties, 27 operations either way).
            assert!(
                eliminated <= assembled,
                "{name}: {eliminated} vs {assembled}"
            );
        }
        // A connector has no gyroscopic loads: the same rows, the same choice.
        assert_eq!(same, name != "rigid body", "{name}: iter == iter_noqv");
    }
}

/// A force's reaction in sign-canonical form (`ad::signs`): a force law written as the
/// stdlib writes it, s·d/l on one body and (−s)·d/l on the other (a product and a
/// quotient of their own, not a negation of the first), must give translational
/// residual rows that are one node and its negation, so the iteration matrix
/// eliminates the force once.
#[test]
fn a_force_reaction_row_is_its_action_row_negated() {
    use fdc_diff::{Coordinates, ElementBuilder, Role};
    let mut graph = Graph::new();
    let mut eb = ElementBuilder::new(&mut graph, "pull", Coordinates::Connector, 2, 2);
    let (b1, b2) = (eb.body(0), eb.body(1));
    let (k, l0) = (eb.param(0), eb.param(1));
    let zero = eb.graph().v3_const([0.0; 3]);
    let p1 = eb.point(&b1, zero);
    let p2 = eb.point(&b2, zero);
    let g = eb.graph();
    let d = g.v3_sub(p2, p1);
    let l = g.norm(d);
    let stretch = g.sub(l, l0);
    let s = g.mul(k, stretch);
    let ms = g.neg(s);
    let on_a = d.map(|di| {
        let sd = g.mul(s, di);
        g.div(sd, l)
    });
    let on_b = d.map(|di| {
        let sd = g.mul(ms, di);
        g.div(sd, l)
    });
    eb.force(&b1, on_a, zero);
    eb.force(&b2, on_b, zero);
    let ef = eb.finish().expect("builds");
    let res = ef.role(Role::Res).expect("res").0.outputs.clone();
    // Rows: body 0's six velocity dofs (translation first), then body 1's.
    for i in 0..3 {
        let (a, b) = (res[i], res[6 + i]);
        let (oa, ob) = (graph.op(a), graph.op(b));
        let negated =
            oa == Op::Unary(fdc_ir::Unary::Neg, b) || ob == Op::Unary(fdc_ir::Unary::Neg, a);
        assert!(negated, "row {i}: {oa:?} and {ob:?}");
    }
}
