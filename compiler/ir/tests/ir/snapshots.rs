//! insta snapshots of the printed IR: small functions, before and after simplification.

use fdc_ir::interp::eval;
use fdc_ir::print::{print_func, print_outputs};
use fdc_ir::simplify::{simplify, Limits};
use fdc_ir::{Func, Graph, Id, Slot, SlotSizes, V3};

/// Force of a linear spring-damper between points q[0..3] and q[3..6] with
/// velocities v[0..3], v[3..6]; parameters k, c, l0 = p[0..3]. Written the way a
/// generator would: the force on the second point is computed from its own side.
fn spring_damper(g: &mut Graph) -> Vec<Id> {
    let pa: V3 = [0, 1, 2].map(|i| g.input(Slot::Q, i));
    let pb: V3 = [3, 4, 5].map(|i| g.input(Slot::Q, i));
    let va: V3 = [0, 1, 2].map(|i| g.input(Slot::V, i));
    let vb: V3 = [3, 4, 5].map(|i| g.input(Slot::V, i));
    let (k, c, l0) = (
        g.input(Slot::P, 0),
        g.input(Slot::P, 1),
        g.input(Slot::P, 2),
    );
    let one = g.constant(1.0);
    let side = |g: &mut Graph, from: V3, to: V3, vfrom: V3, vto: V3| {
        let d = g.v3_sub(to, from);
        let l = g.norm(d);
        let u = d.map(|x| g.div(x, l));
        let dv = g.v3_sub(vto, vfrom);
        let ldot = g.dot(u, dv);
        let ext = g.sub(l, l0);
        let fs = g.mul(k, ext);
        let fd = g.mul(c, ldot);
        let f = g.add2(fs, fd);
        let f1 = g.mul(f, one);
        u.map(|x| g.mul(f1, x))
    };
    let fa = side(g, pa, pb, va, vb);
    let fb = side(g, pb, pa, vb, va);
    fa.into_iter().chain(fb).collect()
}

fn func(name: &str, outputs: Vec<Id>) -> Func {
    Func {
        name: name.into(),
        inputs: SlotSizes([6, 6, 0, 0, 3, 0, 0, 0]),
        outputs,
    }
}

#[test]
fn spring_damper_before_and_after() {
    let mut g = Graph::new();
    let outs = spring_damper(&mut g);
    insta::assert_snapshot!(
        "spring_damper_raw",
        print_func(&g, &func("spring", outs.clone()))
    );
    let s = simplify(&g, &outs, &Limits::default());
    assert!(s.report.kept);
    insta::assert_snapshot!(
        "spring_damper_simplified",
        print_func(&s.graph, &func("spring", s.outputs.clone()))
    );
    // Not just text: the two agree on a generic configuration.
    let q = [0.1, -0.3, 0.7, 1.9, 0.4, -1.1];
    let v = [0.5, 0.1, -0.2, -0.7, 0.3, 0.9];
    let p = [120.0, 3.5, 1.2];
    let empty: &[f64] = &[];
    let inputs = [&q[..], &v[..], empty, empty, &p[..], empty, empty, empty];
    let want = eval(&g, &outs, &inputs).unwrap();
    let got = eval(&s.graph, &s.outputs, &inputs).unwrap();
    for (a, b) in want.iter().zip(&got) {
        assert_eq!(a.to_bits(), b.to_bits());
    }
}

#[test]
fn rotation_of_a_unit_quaternion_simplified() {
    // A = I + 2w[e]~ + 2[e]~², e = q[1..4], w = q[0].
    let mut g = Graph::new();
    let w = g.input(Slot::Q, 0);
    let e: V3 = [1, 2, 3].map(|i| g.input(Slot::Q, i));
    let two = g.constant(2.0);
    let one = g.constant(1.0);
    let zero = g.constant(0.0);
    let s = g.skew(e);
    let s2 = g.mat_mul(s, s);
    let mut outs = Vec::new();
    for i in 0..3 {
        for j in 0..3 {
            let id = if i == j { one } else { zero };
            let ws = g.mul(w, s[i][j]);
            let a = g.mul(two, ws);
            let b = g.mul(two, s2[i][j]);
            let ab = g.add2(a, b);
            outs.push(g.add2(id, ab));
        }
    }
    let s = simplify(&g, &outs, &Limits::default());
    insta::assert_snapshot!("rotation_simplified", print_outputs(&s.graph, &s.outputs));
}

#[test]
fn special_constants_print_exactly() {
    let mut g = Graph::new();
    let x = g.input(Slot::T, 0);
    let cs = [
        -0.0,
        0.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        f64::from_bits(0xfff8_0000_0000_0001),
        5e-324,
        0.1,
        1e300,
    ];
    let outs: Vec<Id> = cs
        .iter()
        .map(|&c| {
            let k = g.constant(c);
            g.add2(x, k)
        })
        .collect();
    insta::assert_snapshot!("special_constants", print_outputs(&g, &outs));
}
