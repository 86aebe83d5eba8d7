//! Every role of every element type, simplified by the IR's e-graph pass, returns the
//! same bits as the unsimplified function on random inputs (the simplifier's policy
//! is IEEE-exact), and is no costlier.

use crate::common;

use common::*;
use fdc_diff::{op_count, ElementFunctions};
use fdc_ir::simplify::{simplify, Limits};
use fdc_ir::{interp, Graph};

fn check(build: &dyn Fn(&mut Graph) -> ElementFunctions, seed: u64) {
    let mut g = Graph::new();
    let ef = build(&mut g);
    let mut r = rng(seed);
    for (role, f, _) in &ef.roles {
        let s = simplify(&g, &f.outputs, &Limits::default());
        assert!(
            op_count(&s.graph, &s.outputs) <= op_count(&g, &f.outputs),
            "{} {}: simplified is costlier",
            ef.name,
            role.name()
        );
        for _ in 0..5 {
            let p = uniform(&mut r, ef.np, -1.0, 1.0);
            let st = random_state(&mut r, &ef, p);
            let t = [st.t];
            let inputs = [
                &st.q[..],
                &st.v[..],
                &st.vdot[..],
                &st.lambda[..],
                &st.p[..],
                &st.c[..],
                &st.delta[..],
                &t[..],
            ];
            let a = interp::eval(&g, &f.outputs, &inputs).unwrap();
            let b = interp::eval(&s.graph, &s.outputs, &inputs).unwrap();
            for (k, (x, y)) in a.iter().zip(&b).enumerate() {
                assert!(
                    x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()),
                    "{} {} output {k}: {x} vs {y}",
                    ef.name,
                    role.name()
                );
            }
        }
    }
}

#[test]
fn simplified_roles_are_bitwise_equal() {
    check(&|g| rigid_body(g, true), 21);
    check(&transfix_ground, 22);
    check(&rotfix_ground, 23);
    check(&transfix_bb, 24);
    check(&rotfix_bb, 25);
    check(&revolute, 26);
    check(&|g| spring_damper(g, false), 27);
    check(&loads, 28);
    check(&driver, 29);
    check(&euler_body, 30);
}
