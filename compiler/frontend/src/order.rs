//! Dependency order of top-level definitions without recursion: top-level names may
//! be used before their definition (docs/language.md §1), so the checker types and
//! the lowering evaluates params, inputs and splines in an order where every name
//! comes after the ones it uses. Both walks are iterative (explicit stacks), so a
//! chain of 100,000 definitions costs no stack (docs/reliability.md).

use crate::ast::{Expr, ExprKind, Stmt, StmtKind};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Calls `f` with every name an expression mentions: plain names and the callees of
/// calls (a spline or function), in no particular order.
pub fn for_each_name<'e>(e: &'e Expr, mut f: impl FnMut(&'e str)) {
    let mut stack = vec![e];
    while let Some(e) = stack.pop() {
        match &e.kind {
            ExprKind::Name(n) => f(n),
            ExprKind::Number(_) | ExprKind::Str(_) | ExprKind::Error => {}
            ExprKind::List(items) => stack.extend(items),
            ExprKind::Neg(a) => stack.push(a),
            ExprKind::Binary(_, a, b) | ExprKind::Compare(_, a, b) | ExprKind::Index(a, b) => {
                stack.push(a);
                stack.push(b);
            }
            ExprKind::If(c, a, b) => stack.extend([&**c, &**a, &**b]),
            ExprKind::Call(callee, args) => {
                f(&callee.name);
                stack.extend(args);
            }
            ExprKind::Member(a, _) => stack.push(a),
            ExprKind::Method(a, _, args) => {
                stack.push(a);
                stack.extend(args);
            }
        }
    }
}

/// An order of the nodes `0..deps.len()` in which every node comes after the nodes
/// in its `deps` (Kahn's algorithm; among the nodes that are ready, the first in
/// source order goes first, so a model without forward references keeps its order).
/// Nodes on a cycle, or after one, follow in source order: whoever handles them
/// reports the cycle. Linear in nodes plus edges.
pub fn dependency_order(deps: &[Vec<usize>]) -> Vec<usize> {
    let n = deps.len();
    let mut waiting = vec![0usize; n];
    let mut users: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, ds) in deps.iter().enumerate() {
        for &d in ds {
            if d < n && d != i {
                waiting[i] += 1;
                users[d].push(i);
            }
        }
    }
    let mut ready: BinaryHeap<Reverse<usize>> =
        (0..n).filter(|&i| waiting[i] == 0).map(Reverse).collect();
    let mut order = Vec::with_capacity(n);
    let mut placed = vec![false; n];
    while let Some(Reverse(i)) = ready.pop() {
        order.push(i);
        placed[i] = true;
        for &u in &users[i] {
            waiting[u] -= 1;
            if waiting[u] == 0 {
                ready.push(Reverse(u));
            }
        }
    }
    order.extend((0..n).filter(|&i| !placed[i]));
    order
}

/// Element type names, each after the types its nested instances name (also inside
/// loops and conditions), ties by name: types handled in this order need nothing of a
/// nested type that is not done yet, so a chain of 100,000 types each containing the
/// next costs no stack (the checker types them so, the expansion finds their
/// structural parameters so).
pub fn nesting_order<'a>(types: impl IntoIterator<Item = (&'a str, &'a [Stmt])>) -> Vec<&'a str> {
    let mut types: Vec<(&str, &[Stmt])> = types.into_iter().collect();
    types.sort_by_key(|t| t.0);
    let index: std::collections::HashMap<&str, usize> =
        (types.iter().enumerate()).map(|(k, t)| (t.0, k)).collect();
    let deps: Vec<Vec<usize>> = (types.iter())
        .map(|t| {
            let (mut ds, mut bodies) = (Vec::new(), vec![t.1]);
            while let Some(body) = bodies.pop() {
                for st in body {
                    match &st.kind {
                        StmtKind::For(l) => bodies.push(&l.body),
                        StmtKind::When(c) => bodies.extend([&c.then[..], &c.otherwise[..]]),
                        StmtKind::Instance(inst) => {
                            ds.extend(index.get(inst.ty.name.as_str()).copied())
                        }
                        _ => {}
                    }
                }
            }
            ds
        })
        .collect();
    (dependency_order(&deps).into_iter())
        .map(|k| types[k].0)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_node_follows_what_it_uses_and_ties_keep_source_order() {
        // 0 uses 2, 2 uses 3; 1 and 3 use nothing.
        let order = dependency_order(&[vec![2], vec![], vec![3], vec![]]);
        assert_eq!(order, [1, 3, 2, 0]);
        // Without dependencies: source order.
        assert_eq!(dependency_order(&[vec![], vec![], vec![]]), [0, 1, 2]);
    }

    #[test]
    fn a_cycle_is_kept_in_source_order_after_the_rest() {
        // 0 ↔ 1, 2 uses 0; 3 is free. The self-use of 3 is no edge.
        let order = dependency_order(&[vec![1], vec![0], vec![0], vec![3]]);
        assert_eq!(order, [3, 0, 1, 2]);
    }

    #[test]
    fn a_chain_of_100000_in_reverse_order_is_ordered_without_recursion() {
        let n = 100_000;
        let deps: Vec<Vec<usize>> = (0..n)
            .map(|i| if i + 1 < n { vec![i + 1] } else { vec![] })
            .collect();
        let order = dependency_order(&deps);
        assert!(order.iter().copied().eq((0..n).rev()));
    }
}
