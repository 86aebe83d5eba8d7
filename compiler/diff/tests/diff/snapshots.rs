//! insta snapshots of the printed IR of small roles: a review of what the
//! differentiation produces (unit factors left out, B exact, the tangent operator in
//! the iteration matrix).

use crate::common;

use fdc_diff::Role;
use fdc_ir::print::print_func;
use fdc_ir::Graph;

fn printed(build: fn(&mut Graph) -> fdc_diff::ElementFunctions, role: Role) -> String {
    let mut g = Graph::new();
    let ef = build(&mut g);
    let (f, _) = ef.role(role).expect("role exists");
    print_func(&g, f)
}

#[test]
fn transfix_ground_ic() {
    insta::assert_snapshot!(printed(common::transfix_ground, Role::Ic));
}

#[test]
fn rotfix_ground_iter() {
    insta::assert_snapshot!(printed(common::rotfix_ground, Role::Iter));
}

#[test]
fn rigid_body_update() {
    insta::assert_snapshot!(printed(|g| common::rigid_body(g, true), Role::Update));
}
