//! The derivative rule of every operation against central differences, the structural
//! sparsity of gradients, and the cost of differentiating a deeply shared DAG.

use fdc_diff::ad::substitute;
use fdc_diff::{op_count, Differ, Family};
use fdc_ir::{interp, Cmp, Graph, Id, Op, Slot};

fn eval_t(g: &Graph, outs: &[Id], t: f64, q: &[f64]) -> Vec<f64> {
    let e: &[f64] = &[];
    let tt = [t];
    interp::eval(g, outs, &[q, e, e, e, e, e, e, &tt]).unwrap()
}

/// Every operation applied to x(t) = 0.3 + 0.8 t and y(t) = 1.1 − 0.5 t² (and a
/// t-independent q[0]), differentiated in t, against central differences.
#[test]
fn every_operation_against_finite_differences() {
    let mut g = Graph::new();
    let t = g.input(Slot::T, 0);
    let c = |g: &mut Graph, x| g.constant(x);
    let (c03, c08, c11, c05) = (
        c(&mut g, 0.3),
        c(&mut g, 0.8),
        c(&mut g, 1.1),
        c(&mut g, 0.5),
    );
    let a = g.mul(c08, t);
    let x = g.add2(c03, a);
    let t2 = g.powi(t, 2);
    let b = g.mul(c05, t2);
    let y = g.sub(c11, b);
    let k = g.input(Slot::Q, 0);
    let exprs = vec![
        g.neg(x),
        g.sqrt(y),
        g.sin(x),
        g.cos(x),
        g.tan(x),
        g.exp(x),
        g.log(y),
        g.tanh(x),
        g.abs(x),
        g.add2(x, y),
        g.sub(x, y),
        g.mul(x, y),
        g.mul(x, x),
        g.div(x, y),
        g.div(k, y),
        g.powi(x, 3),
        g.powi(y, -2),
        g.pow(y, x),
        g.pow(y, k),
        {
            // d/dt (t − t0)^2.5 at t = t0 is 0, not 0/0.
            let c09 = g.constant(0.9);
            let c25 = g.constant(2.5);
            let d = g.sub(t, c09);
            let ad = g.abs(d);
            g.pow(ad, c25)
        },
        g.atan2(x, y),
        g.atan2(y, k),
        g.min(x, y),
        g.max(x, y),
        g.select(Cmp::Lt, x, y, t2, y),
        g.select(Cmp::Gt, x, y, t2, k),
    ];
    let mut d = Differ::new();
    let derivs: Vec<Id> = exprs
        .iter()
        .map(|&e| {
            d.partial(&mut g, Family::T, e, 0)
                .unwrap_or_else(|| g.constant(0.0))
        })
        .collect();
    let q = [0.7];
    for &t0 in &[0.2, 0.9, 1.3] {
        // (t = 0.9 is the zero of the power's base.)
        let got = eval_t(&g, &derivs, t0, &q);
        let h = 1e-6;
        let p = eval_t(&g, &exprs, t0 + h, &q);
        let m = eval_t(&g, &exprs, t0 - h, &q);
        for (i, &gv) in got.iter().enumerate() {
            let fd = (p[i] - m[i]) / (2.0 * h);
            assert!(
                (gv - fd).abs() < 1e-7 * fd.abs().max(1.0),
                "expression {i} ({:?}) at t = {t0}: {gv} vs {fd}",
                g.op(exprs[i])
            );
        }
    }
}

/// The spline op's derivative is the op of the next order (chain rule included), for
/// every order; the third derivative's derivative is 0. Checked against central
/// differences of the interpreter at points inside pieces and outside the data.
#[test]
fn spline_derivatives_against_finite_differences() {
    let mut g = Graph::new();
    let xs = [0.0, 0.5, 1.5, 2.0];
    let table = fdc_ir::SplineTable::hermite(&xs, &[1.0, -1.0, 2.0, 0.5], &[0.3, 0.0, -2.0, 1.0]);
    let tab = g.add_table(table.unwrap());
    let t = g.input(Slot::T, 0);
    // x(t) = t²: the chain rule is exercised too.
    let x = g.powi(t, 2);
    let exprs: Vec<Id> = (0..=3).map(|d| g.spline(tab, d, x)).collect();
    let mut d = Differ::new();
    let derivs: Vec<Id> = exprs
        .iter()
        .map(|&e| {
            d.partial(&mut g, Family::T, e, 0)
                .unwrap_or_else(|| g.constant(0.0))
        })
        .collect();
    assert_eq!(g.as_const(derivs[3]), Some(0.0));
    for &t0 in &[0.3, 0.8, 1.1, 1.3, 1.6] {
        // x = t0²: 0.09, 0.64, 1.21, 1.69 (inside) and 2.56 (right of the data).
        let got = eval_t(&g, &derivs, t0, &[]);
        let h = 1e-6;
        let p = eval_t(&g, &exprs, t0 + h, &[]);
        let m = eval_t(&g, &exprs, t0 - h, &[]);
        for i in 0..3 {
            let fd = (p[i] - m[i]) / (2.0 * h);
            assert!(
                (got[i] - fd).abs() < 1e-6 * fd.abs().max(1.0),
                "order {i} at t = {t0}: {} vs {fd}",
                got[i]
            );
        }
    }
}

/// A node that does not depend on a direction has no entry for it, and the gradient
/// of an expression in one body's coordinates only has that body's six δ entries.
#[test]
fn gradients_are_structurally_sparse() {
    let mut g = Graph::new();
    let r1 = g.input(Slot::Q, 7);
    let a = g.sym(9 + 4); // A of body 1, entry (1, 1)
    let e = g.mul(r1, a);
    let mut d = Differ::new();
    let gr = d.grad(&mut g, Family::Delta, e);
    let dirs: Vec<u32> = gr.iter().map(|x| x.0).collect();
    // ∂R_x/∂δR_x of body 1, and A_11 depends on δφ_x and δφ_z (not δφ_y).
    assert_eq!(dirs, vec![6, 9, 11]);
    assert!(d.grad(&mut g, Family::V, e).is_empty());
    assert!(d.grad(&mut g, Family::T, e).is_empty());
}

/// x_{k+1} = sin(x_k)/2 + x_k²/5: each node is used three times by the next, so a
/// tree walk would take 3^n steps. The derivative must cost O(n) operations.
fn chain(n: usize) -> (Graph, Id, Id) {
    let mut g = Graph::new();
    let t = g.input(Slot::T, 0);
    let mut x = t;
    let (half, fifth) = (g.constant(0.5), g.constant(0.2));
    for _ in 0..n {
        let s = g.sin(x);
        let a = g.mul(half, s);
        let xx = g.mul(x, x);
        let b = g.mul(fifth, xx);
        x = g.add2(a, b);
    }
    let mut d = Differ::new();
    let dx = d.partial(&mut g, Family::T, x, 0).unwrap();
    (g, x, dx)
}

#[test]
fn shared_dag_is_differentiated_once_per_node() {
    let (g100, _, d100) = chain(100);
    let (g, x, dx) = chain(200);
    let (ops100, ops) = (op_count(&g100, &[d100]), op_count(&g, &[dx]));
    assert!(ops < 15 * 200, "{ops} operations for a chain of 200");
    assert!(ops <= 2 * ops100 + 20, "{ops100} -> {ops}: not linear");
    // And it is right: compare with differences.
    let h = 1e-6;
    let got = eval_t(&g, &[dx], 0.3, &[])[0];
    let p = eval_t(&g, &[x], 0.3 + h, &[])[0];
    let m = eval_t(&g, &[x], 0.3 - h, &[])[0];
    let fd = (p - m) / (2.0 * h);
    assert!((got - fd).abs() < 1e-6 * fd.abs(), "{got} vs {fd}");
}

/// Setting an input to zero folds exactly: products vanish, sums keep the other term.
#[test]
fn substitution_by_zero_leaves_no_structural_zeros() {
    let mut g = Graph::new();
    let a = g.input(Slot::Vdot, 0);
    let b = g.input(Slot::P, 0);
    let ab = g.mul(a, b);
    let s = g.add2(ab, b);
    let n = g.neg(ab);
    let leaf = |op: Op| match op {
        Op::Input(Slot::Vdot, _) => Some(None),
        _ => None,
    };
    let mut memo = Default::default();
    let out = substitute(&mut g, &[s, n, ab], &leaf, &mut memo);
    assert_eq!(out, vec![Some(b), None, None]);
}
