//! The contracts of derived roles beyond their values: block layouts equal to the
//! runtime table's, no symbols or trivial terms left, errors (not panics) for bad
//! input, small increments, a four-body element, and the agreement of the iteration
//! forms with each other and with differences.

// Index loops read like the formulas they check.
#![allow(clippy::needless_range_loop)]

use crate::common;

use common::*;
use fdc_diff::{Coordinates, ElementBuilder, ElementFunctions, Role};
use fdc_ir::{Graph, Op, Slot};

use crate::roles::*;

#[test]
fn layouts_match_the_runtime_table() {
    let mut g = Graph::new();
    let ef = revolute(&mut g);
    let (nv, nl) = (ef.nv, ef.nl);
    assert_eq!((nv, nl, ef.nq), (12, 5, 14));
    assert_eq!(ef.multipliers, ["t0", "t1", "t2", "r0", "r1"]);
    let roles: Vec<Role> = ef.roles.iter().map(|r| r.0).collect();
    assert_eq!(
        roles,
        [
            Role::Res,
            Role::Iter,
            Role::IterNoqv,
            Role::Ic,
            Role::Out,
            Role::Post,
            Role::ResIter
        ]
    );
    for (role, f, bl) in &ef.roles {
        assert_eq!(f.outputs.len(), bl.iter().map(|b| b.len()).sum::<usize>());
        assert_eq!(f.inputs.get(Slot::Q), 14);
        assert_eq!(f.inputs.get(Slot::Lambda), nl);
        assert_eq!(f.inputs.get(Slot::C), 4);
        if *role == Role::Iter {
            let fdc_diff::Block::Sparse { rows, entries, .. } = &bl[0] else {
                panic!("iter is one sparse block")
            };
            assert_eq!(*rows, nv + nl);
            // Constraint rows have no λ columns; no duplicate entries.
            assert!(entries.iter().all(|&(i, j)| i < nv as u32 || j < nv as u32));
            let mut e = entries.clone();
            e.sort();
            e.dedup();
            assert_eq!(e.len(), entries.len());
        }
    }
    // Without gyroscopic loads iter_noqv is iter, node for node.
    let (it, _) = ef.role(Role::Iter).unwrap();
    let (nq, _) = ef.role(Role::IterNoqv).unwrap();
    assert_eq!(it.outputs, nq.outputs);
    // res_iter is iter then res, the same nodes (so the driver serves iter by it).
    let (res, _) = ef.role(Role::Res).unwrap();
    let (fused, _) = ef.role(Role::ResIter).unwrap();
    assert_eq!(fused.outputs, [&it.outputs[..], &res.outputs[..]].concat());
    let mut g = Graph::new();
    let body = rigid_body(&mut g, true);
    let roles: Vec<Role> = body.roles.iter().map(|r| r.0).collect();
    assert_eq!(roles.len(), 10);
}

/// No symbol reaches a function, and derivatives carry no unit factors or additions of
/// structural zeros.
#[test]
fn no_symbols_unit_factors_or_zero_terms() {
    let mut g = Graph::new();
    let efs = [
        rigid_body(&mut g, true),
        spring_damper(&mut g, false),
        revolute(&mut g),
        driver(&mut g),
    ];
    for ef in &efs {
        for (role, f, _) in &ef.roles {
            let mut stack = f.outputs.clone();
            let mut seen = std::collections::HashSet::new();
            while let Some(n) = stack.pop() {
                if !seen.insert(n) {
                    continue;
                }
                let op = g.op(n);
                assert!(!matches!(op, Op::Sym(_)), "{} {}", ef.name, role.name());
                let is = |x, v: f64| g.as_const(x) == Some(v);
                match op {
                    Op::Mul(a, b) => assert!(
                        !is(a, 1.0) && !is(b, 1.0),
                        "x·1 in {} {}",
                        ef.name,
                        role.name()
                    ),
                    Op::Add(a, b) => assert!(
                        !is(a, 0.0) && !is(b, 0.0),
                        "0+x in {} {}",
                        ef.name,
                        role.name()
                    ),
                    _ => {}
                }
                stack.extend(op.operands());
            }
        }
    }
}

#[test]
fn bad_input_is_an_error_not_a_panic() {
    let mut g = Graph::new();
    let mut eb = ElementBuilder::new(&mut g, "bad", Coordinates::Connector, 1, 1);
    let _ = eb.body(3);
    let err = eb.finish().unwrap_err();
    assert!(err.message.contains("body 3"), "{err}");

    let mut eb = ElementBuilder::new(&mut g, "bad", Coordinates::Connector, 1, 1);
    let _ = eb.param(5);
    assert!(eb.finish().unwrap_err().message.contains("parameter 5"));

    let mut eb = ElementBuilder::new(&mut g, "nonholonomic", Coordinates::Connector, 1, 0);
    let b = eb.body(0);
    eb.constrain("v", b.rdot[0]);
    let err = eb.finish().unwrap_err();
    assert!(err.to_string().contains("constraint `v`"), "{err}");

    let mut eb = ElementBuilder::new(&mut g, "nonlinear", Coordinates::Connector, 1, 0);
    let b = eb.body(0);
    let g2 = eb.graph();
    let a2 = g2.v3_scale(b.acc[0], b.acc);
    let at = g2.v3_const([0.0; 3]);
    eb.force(&b, a2, at);
    assert!(eb
        .finish()
        .unwrap_err()
        .message
        .contains("linear in the accelerations"));

    let eb = ElementBuilder::new(&mut g, "body", Coordinates::RigidBody, 1, 0);
    assert!(eb.finish().unwrap_err().message.contains("initial state"));

    let eb = ElementBuilder::new(&mut g, "body", Coordinates::RigidBody, 2, 0);
    assert!(eb.finish().unwrap_err().message.contains("1 body"));

    let mut eb = ElementBuilder::new(&mut g, "sym", Coordinates::Connector, 1, 0);
    let s = eb.graph().sym(1000);
    eb.output("s", s);
    assert!(eb.finish().unwrap_err().message.contains("symbol"));

    // Inputs and symbols beyond the element's sizes, built through the graph.
    let mut eb = ElementBuilder::new(&mut g, "far", Coordinates::Connector, 1, 0);
    let far = eb.graph().input(Slot::Q, 100);
    eb.generalized(far, far);
    let err = eb.finish().unwrap_err();
    assert!(err.message.contains("q[100]"), "{err}");
    let mut eb = ElementBuilder::new(&mut g, "far", Coordinates::Connector, 1, 0);
    let s = eb.graph().sym(9 * 5);
    eb.generalized(s, s);
    assert!(eb.finish().unwrap_err().message.contains("symbol"));
    let mut eb = ElementBuilder::new(&mut g, "far", Coordinates::Connector, 1, 0);
    let far = eb.graph().input(Slot::Lambda, 0);
    let b = eb.body(0);
    let z = eb.graph().v3_const([0.0; 3]);
    eb.force(&b, [far, far, far], z);
    assert!(eb.finish().unwrap_err().message.contains("lambda[0]"));

    // A node id that is not in the graph (one of a bigger graph).
    let mut big = Graph::new();
    let alien = (0..g.len() + 10_000)
        .map(|i| big.constant(i as f64))
        .last()
        .unwrap();
    let mut eb = ElementBuilder::new(&mut g, "alien", Coordinates::Connector, 1, 0);
    let _ = eb.rate(alien);
    eb.output("x", alien);
    assert!(eb
        .finish()
        .unwrap_err()
        .message
        .contains("not in the element's graph"));
    let mut eb = ElementBuilder::new(&mut g, "alien", Coordinates::Connector, 1, 0);
    eb.constrain("x", alien);
    assert!(eb
        .finish()
        .unwrap_err()
        .message
        .contains("not in the element's graph"));
}

/// The iteration matrix at increments whose rotation is below the Taylor threshold of
/// the tangent operator (the usual case at small steps).
#[test]
fn iteration_matrix_with_small_increments() {
    let mut g = Graph::new();
    let efs = [revolute(&mut g), spring_damper(&mut g, false)];
    let mut r = rng(16);
    for ef in &efs {
        let p: Vec<f64> = if ef.name == "revolute" {
            uniform(&mut r, ef.np, -0.5, 0.5)
        } else {
            spring_params(&mut r)
        };
        let mut s = random_state(&mut r, ef, p);
        // Δ = Δ_pred + β′h² v̇ stays below 1e-4 in rotation within the differences.
        s.c = vec![-0.1, 0.3, 0.6, 1e-2];
        s.delta = uniform(&mut r, ef.nv, -1e-7, 1e-7);
        // Φ(q_n) = 0, so Φ/(β′h²) stays small and the differences keep their digits.
        let c_at: Vec<usize> = (ef.np - ef.nl..ef.np).collect();
        consistent(&g, ef, &mut s, &c_at);
        let x: Vec<f64> = uniform(&mut r, ef.nv + ef.nl, -1.0, 1.0);
        // A larger difference step: x moves q only by β′h² = 3e-5 per unit.
        check_iter_eps(&g, ef, Role::Iter, ef, &s, &x, 1e-3);
        let sx = discrete_state(&s, ef.nv, &x);
        let phi = sx
            .delta
            .chunks(6)
            .map(|d| d[3..].iter().map(|x| x * x).sum::<f64>().sqrt())
            .fold(0.0, f64::max);
        assert!(phi < 1e-4, "the test must exercise the Taylor branch");
    }
}

/// More than two bodies in one element: the local numbering of bodies 2 and 3
/// (q[7k..], v[6k..], the symbols 9k + 3i + j) in every role. Springs between the
/// centres of consecutive bodies, a constraint between the axes of bodies 2 and 3, and
/// a force at a body point of body 3.
#[test]
fn four_body_element_roles() {
    let mut g = Graph::new();
    let mut eb = ElementBuilder::new(&mut g, "four", Coordinates::Connector, 4, 0);
    let bodies: Vec<_> = (0..4).map(|k| eb.body(k)).collect();
    for w in bodies.windows(2) {
        let g = eb.graph();
        let d = g.v3_sub(w[1].r, w[0].r);
        let l = g.norm(d);
        let ldot = eb.rate(l);
        let g = eb.graph();
        let c = g.constant(0.3);
        let dl = g.mul(c, ldot);
        let s = g.add2(l, dl);
        let ms = g.neg(s);
        eb.generalized(ms, l);
    }
    let g2 = eb.graph();
    let x = g2.v3_const([0.3, -0.5, 0.8]);
    let y = g2.v3_const([0.1, 0.9, 0.2]);
    let ax = eb.axis(&bodies[2], x);
    let ay = eb.axis(&bodies[3], y);
    let g2 = eb.graph();
    let phi = g2.dot(ax, ay);
    eb.constrain("perp", phi);
    let u = eb.graph().v3_const([0.2, 0.1, -0.4]);
    let f = eb.graph().v3_const([1.0, -2.0, 0.5]);
    eb.force(&bodies[3], f, u);
    let ef = eb.finish().unwrap();
    assert_eq!((ef.nq, ef.nv, ef.nl), (28, 24, 1));
    let mut r = rng(19);
    for _ in 0..2 {
        let s = random_state(&mut r, &ef, vec![]);
        check_b(&g, &ef, &s);
        check_ic_time(&g, &ef, &s);
        let x = unknowns(&mut r, &ef);
        check_iter(&g, &ef, Role::Iter, &ef, &s, &x);
        // Bodies 0 and 3 are not coupled: no entries between their dofs.
        let sx = discrete_state(&s, ef.nv, &x);
        let j = blocks(&ef, Role::Iter, &eval(&g, &ef, Role::Iter, &sx)).remove(0);
        let n = ef.nv + ef.nl;
        for a in 0..6 {
            for b in 18..24 {
                assert_eq!(j[a * n + b], 0.0);
                assert_eq!(j[b * n + a], 0.0);
            }
        }
    }
}

/// The three forms of the iteration matrix (assembled from partial derivatives, in
/// one pass through the discrete state, by vertex elimination) agree, and each
/// matches the differences.
#[test]
fn all_iteration_forms_agree_and_match_differences() {
    type Build = fn(&mut Graph) -> ElementFunctions;
    let builds: [(&str, Build); 6] = [
        ("rigid body", |g| rigid_body(g, true)),
        ("spring", |g| spring_damper(g, false)),
        ("spring (measure)", |g| spring_damper(g, true)),
        ("revolute", revolute),
        ("driver", driver),
        ("euler body", euler_body),
    ];
    let mut r = rng(20);
    for (name, build) in builds {
        let mut g = Graph::new();
        let mut with = |form| {
            FORM.with(|f| f.set(form));
            let ef = build(&mut g);
            FORM.with(|f| f.set(fdc_diff::IterationForm::Cheaper));
            ef
        };
        let a = with(fdc_diff::IterationForm::Assembled);
        let d = with(fdc_diff::IterationForm::Direct);
        let e = with(fdc_diff::IterationForm::Eliminated);
        let p = uniform(&mut r, a.np, -0.5, 0.5);
        let s = random_state(&mut r, &a, p);
        for role in [Role::Iter, Role::IterNoqv] {
            let ja = blocks(&a, role, &eval(&g, &a, role, &s)).remove(0);
            let jd = blocks(&d, role, &eval(&g, &d, role, &s)).remove(0);
            let je = blocks(&e, role, &eval(&g, &e, role, &s)).remove(0);
            assert_rel(&jd, &ja, 1e-12, &format!("{name} {} direct", role.name()));
            assert_rel(
                &je,
                &ja,
                1e-12,
                &format!("{name} {} eliminated", role.name()),
            );
        }
        if name != "euler body" {
            let x = unknowns(&mut r, &a);
            check_iter(&g, &a, Role::Iter, &a, &s, &x);
            check_iter(&g, &d, Role::Iter, &d, &s, &x);
            check_iter(&g, &e, Role::Iter, &e, &s, &x);
        }
    }
}
