//! Lowering on its own: small models through the front end and `fdc_lower::lower`,
//! asserting the lowered structure (element types, instances, index maps, parameter
//! values) against what the model says, without the backend or the runtime.

use fdc_lower::{lower, LoweredModel};

fn lowered(text: &str, overrides: &[(String, f64)]) -> LoweredModel {
    let a = fdc_frontend::analyze_source("model.fd", text);
    assert!(!a.has_errors(), "{:?}", a.diagnostics);
    match lower(&a, overrides) {
        Ok(l) => l,
        Err(e) => panic!(
            "lowering failed: {:?}",
            e.iter().map(|e| &e.message).collect::<Vec<_>>()
        ),
    }
}

const PENDULUM: &str = "
param k = 100;
body arm: rigid_body { mass = 1; inertia = [0.1, 0.1, 0.1]; position = [1, 0, 0]; }
joint pivot: revolute(arm) { at = [0, 0, 0]; axis = [0, 1, 0]; }
force spring: spring_damper(arm) { at_a = [1, 0, 0]; at_b = [1, 0, 1]; stiffness = k; }
";

fn instance<'a>(l: &'a LoweredModel, name: &str) -> &'a fdc_lower::Instance {
    l.instances
        .iter()
        .find(|i| i.name == name)
        .unwrap_or_else(|| panic!("no instance `{name}`"))
}

#[test]
fn a_pendulum_lowers_to_one_body_one_joint_one_force() {
    let l = lowered(PENDULUM, &[]);
    // One rigid body: 7 coordinates, 6 velocities; a revolute joint: 5 constraints.
    assert_eq!((l.nq, l.nv, l.nl), (7, 6, 5));
    assert_eq!(l.bodies, vec!["arm".to_string()]);
    let arm = instance(&l, "arm");
    assert_eq!(arm.q_map, (0..7).collect::<Vec<_>>());
    assert_eq!(arm.v_map, (0..6).collect::<Vec<_>>());
    let pivot = instance(&l, "pivot");
    let pivot_type = &l.types[pivot.type_index];
    assert_eq!((pivot_type.nq, pivot_type.nv, pivot_type.nl), (7, 6, 5));
    assert_eq!(
        pivot.q_map, arm.q_map,
        "the joint acts on the arm's coordinates"
    );
    assert_eq!(pivot.lambda_map, (0..5).collect::<Vec<_>>());
    let spring = instance(&l, "spring");
    let spring_type = &l.types[spring.type_index];
    assert_eq!(spring_type.nl, 0);
    assert!(spring.params.contains(&100.0), "{:?}", spring.params);
    // A body owns its coordinates, connectors do not.
    assert!(l.types[arm.type_index].owns_coordinates);
    assert!(!pivot_type.owns_coordinates && !spring_type.owns_coordinates);
}

#[test]
fn a_changed_number_changes_parameters_not_the_ir() {
    let base = lowered(PENDULUM, &[]);
    let set = lowered(PENDULUM, &[("k".to_string(), 250.0)]);
    assert_eq!(base.graph.len(), set.graph.len());
    assert_eq!(base.graph.nodes(), set.graph.nodes());
    let (b, s) = (instance(&base, "spring"), instance(&set, "spring"));
    let changed: Vec<(f64, f64)> = b
        .params
        .iter()
        .zip(&s.params)
        .filter(|(x, y)| x != y)
        .map(|(x, y)| (*x, *y))
        .collect();
    assert_eq!(changed, vec![(100.0, 250.0)]);
}

#[test]
fn each_element_type_is_lowered_once_per_connection_pattern() {
    let text = "
body a: rigid_body { mass = 1; inertia = [1, 1, 1]; position = [0, 0, 0]; }
body b: rigid_body { mass = 1; inertia = [1, 1, 1]; position = [1, 0, 0]; }
force s1: spring_damper(a) { at_a = [0, 0, 0]; at_b = [0, 0, 1]; stiffness = 1; }
force s2: spring_damper(b) { at_a = [1, 0, 0]; at_b = [1, 0, 1]; stiffness = 2; }
force s3: spring_damper(a, b) { at_a = [0, 0, 0]; at_b = [1, 0, 0]; stiffness = 3; }
";
    let l = lowered(text, &[]);
    let ty = |n: &str| l.types[instance(&l, n).type_index].name.clone();
    assert_eq!(ty("s1"), ty("s2"), "body-to-ground springs share a type");
    assert_ne!(ty("s1"), ty("s3"));
    assert_eq!(l.types[instance(&l, "s3").type_index].nq, 14);
    assert_eq!(instance(&l, "s3").q_map, (0..14).collect::<Vec<_>>());
}

/// A force element whose law is a chain of `n` lets, each using the one before, a
/// builtin and the time (each name use once scanned every local declared before it).
fn let_chain(n: usize) -> String {
    chain_of(n, |p| format!("{p} + sin(t) * 0"))
}

/// The chain of `n` lets `let l{i} = value(l{i-1});` in a force law on a body's
/// position (so every let depends on the state).
fn chain_of(n: usize, value: impl Fn(&str) -> String) -> String {
    let mut s = String::from(
        "force chain(a: body) {\n    param k = 1.0;\n    let d = a.position;\n    let l0 = dot(d, d);\n",
    );
    for i in 1..n {
        s.push_str(&format!(
            "    let l{i} = {};\n",
            value(&format!("l{}", i - 1))
        ));
    }
    s.push_str(&format!("    apply force -k * l{} * d on a;\n}}\n", n - 1));
    s.push_str("body blk: rigid_body { mass = 1; inertia = [1, 1, 1]; }\n");
    s.push_str("force f: chain(blk) { k = 2; }\n");
    s
}

#[test]
fn a_chain_of_100000_lets_checks_and_lowers_in_linear_size() {
    // Issue 22: checking and lowering grew quadratically with the number of lets (the
    // checker looked every name up by scanning all locals). The work is not timed here;
    // what is asserted is that the lowered graph grows by a bounded number of nodes per
    // `let`, and the model goes through at all at this size.
    let nodes = |n: usize| lowered(&let_chain(n), &[]).graph.len();
    let (small, large) = (nodes(50_000), nodes(100_000));
    let per_let = (large - small) as f64 / 50_000.0;
    assert!(
        (1.0..=4.0).contains(&per_let),
        "{per_let} nodes per let ({small} for 50,000, {large} for 100,000)"
    );
}

#[test]
fn a_chain_of_100000_kinked_lets_warns_each_kink_once_in_linear_size() {
    // Issue 22: each `let` copied the kinks of the one it uses, so a chain of `n` lets
    // each adding a kink held n²/2 of them (80 GB at 100,000). Now they are shared:
    // every `abs` is warned about exactly once, at its place, in source order, and the
    // lowered graph grows by a bounded number of nodes per `let`.
    let n = 100_000;
    let text = chain_of(n, |p| format!("abs({p} - 1)"));
    let a = fdc_frontend::analyze_source("model.fd", &text);
    let d = &a.diagnostics;
    assert_eq!(d.len(), 101, "{:?}", &d[..d.len().min(3)]);
    let abs_at: Vec<u32> = text.match_indices("abs(").map(|(i, _)| i as u32).collect();
    assert_eq!(abs_at.len(), n - 1);
    for (w, &at) in d[..100].iter().zip(&abs_at) {
        assert_eq!(w.code, "W0001", "{w:?}");
        assert_eq!(w.primary.as_ref().unwrap().span.start, at, "{w:?}");
    }
    // The other kinks: counted, each once.
    assert_eq!(d[100].code, "E0005");
    assert_eq!(
        d[100].message,
        format!("{} more warnings not shown", n - 1 - 100)
    );
    let nodes = |n: usize| {
        lowered(&chain_of(n, |p| format!("abs({p} - 1)")), &[])
            .graph
            .len()
    };
    let (small, large) = (nodes(50_000), nodes(n));
    let per_let = (large - small) as f64 / 50_000.0;
    assert!(
        (1.0..=12.0).contains(&per_let),
        "{per_let} nodes per let ({small} for 50,000, {large} for 100,000)"
    );
}
