//! Operation counts and build (differentiation) time of element types. Not a test:
//! prints a table for docs/performance.md. Run with
//! `cargo bench -p fdc-diff --bench ops`.

#[path = "../tests/diff/common/mod.rs"]
mod common;

use fdc_diff::{op_count, ElementFunctions, Role};
use fdc_ir::simplify::{simplify, Limits};
use fdc_ir::Graph;
use std::time::Instant;

type Builder = Box<dyn Fn(&mut Graph) -> ElementFunctions>;

/// Builds the element `reps` times in fresh graphs; returns the last one and the mean
/// build time in milliseconds.
fn build(
    reps: usize,
    f: &dyn Fn(&mut Graph) -> ElementFunctions,
) -> (Graph, ElementFunctions, f64) {
    let mut last = None;
    let start = Instant::now();
    for _ in 0..reps {
        let mut g = Graph::new();
        let ef = f(&mut g);
        last = Some((g, ef));
    }
    let ms = start.elapsed().as_secs_f64() * 1e3 / reps as f64;
    let (g, ef) = last.expect("reps > 0");
    (g, ef, ms)
}

fn ops(g: &Graph, ef: &ElementFunctions, role: Role) -> (usize, usize) {
    let (f, _) = ef.role(role).expect("role exists");
    (op_count(g, &f.outputs), f.outputs.len())
}

/// Simplifies every role; returns (ops of res, iter after simplification, total ms).
fn simplified(g: &Graph, ef: &ElementFunctions) -> (usize, usize, f64) {
    let start = Instant::now();
    let (mut res, mut iter) = (0, 0);
    for (role, f, _) in &ef.roles {
        let s = simplify(g, &f.outputs, &Limits::default());
        let n = op_count(&s.graph, &s.outputs);
        match role {
            Role::Res => res = n,
            Role::Iter => iter = n,
            _ => {}
        }
    }
    (res, iter, start.elapsed().as_secs_f64() * 1e3)
}

fn main() {
    if std::env::var("HIST").is_ok() {
        histogram();
        return;
    }
    println!("| element | nv | nl | res ops | iter ops (nnz) | iter_noqv ops | ic ops | diff ms | res / iter ops simplified | simplify ms (all roles) |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    let cases: Vec<(&str, Builder)> = vec![
        ("rigid body", Box::new(|g| common::rigid_body(g, true))),
        (
            "spring-damper",
            Box::new(|g| common::spring_damper(g, false)),
        ),
        (
            "spring-damper (measure form)",
            Box::new(|g| common::spring_damper(g, true)),
        ),
        (
            "revolute (3 transfix_bb + 2 rotfix_bb)",
            Box::new(common::revolute),
        ),
        ("transfix_bb", Box::new(common::transfix_bb)),
        ("rotfix_bb", Box::new(common::rotfix_bb)),
        ("driver (atan2 − a sin ωt)", Box::new(common::driver)),
    ];
    for (name, f) in &cases {
        let (g, ef, ms) = build(20, f.as_ref());
        let (res, _) = ops(&g, &ef, Role::Res);
        let (iter, nnz) = ops(&g, &ef, Role::Iter);
        let (noqv, _) = ops(&g, &ef, Role::IterNoqv);
        let (ic, _) = ops(&g, &ef, Role::Ic);
        let (sres, siter, sms) = simplified(&g, &ef);
        println!(
            "| {name} | {} | {} | {res} | {iter} ({nnz}) | {noqv} | {ic} | {ms:.2} | {sres} / {siter} | {sms:.1} |",
            ef.nv, ef.nl,
        );
    }
    println!();
    println!("| chain of N springs (one element, N+1 bodies) | N | iter ops | iter ops / N | iter nnz | build ms |");
    println!("|---|---|---|---|---|---|");
    for n in [10, 25, 50, 100, 200, 400] {
        let (g, ef, ms) = build(3, &|g| common::spring_chain(g, n));
        let (iter, nnz) = ops(&g, &ef, Role::Iter);
        println!(
            "| | {n} | {iter} | {:.1} | {nnz} | {ms:.2} |",
            iter as f64 / n as f64
        );
    }
}

#[allow(dead_code)]
pub fn histogram() {
    let mut g = Graph::new();
    let ef = common::spring_damper(&mut g, false);
    let (res, _) = ef.role(Role::Res).unwrap();
    let (it, _) = ef.role(Role::Iter).unwrap();
    let rc: std::collections::HashSet<_> = g.cone(&res.outputs).into_iter().collect();
    let mut h: std::collections::BTreeMap<String, usize> = Default::default();
    for n in g.cone(&it.outputs) {
        if rc.contains(&n) {
            *h.entry("shared-with-res".into()).or_default() += 1;
            continue;
        }
        let op = g.op(n);
        let k = format!("{:?}", op).split('(').next().unwrap().to_string();
        let k = if let fdc_ir::Op::Unary(u, _) = op {
            format!("{u:?}")
        } else {
            k
        };
        *h.entry(k).or_default() += 1;
    }
    eprintln!("{h:?}");
}
