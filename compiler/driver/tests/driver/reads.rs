//! Which input arrays a compiled role reads (`fdc_abi::Reads`, from the cone of its
//! outputs in the lowered IR): the runtime gathers an instance's local copies of those
//! only, so a role's outputs must not depend on anything the other arrays hold.

use crate::stdlib_derivatives::Lcg;
use crate::tiers::{call, same_bits};
use fdc_driver::pipeline::{build, Built};
use fdc_runtime::table::{ElementType, Reads, Role, RoleFn, Slot};

/// Every stdlib type, built as `fdc run` builds it (cache off); the build owns the
/// machine code of the types' functions.
fn stdlib_build() -> Built {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/driver/every_stdlib_type.fd");
    build(&path, &crate::common::no_cache()).expect("the stdlib model builds")
}

/// The arrays a role of the type named `name` reads.
fn reads_of(types: &[ElementType], name: &str, role: Role) -> Reads {
    let names: Vec<&str> = types.iter().map(|t| t.name.as_str()).collect();
    let ty = types
        .iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("no type {name} among {names:?}"));
    ty.role(role).expect("the role").reads
}

#[test]
fn a_role_gives_the_same_bits_whatever_the_arrays_it_does_not_read_hold() {
    let built = stdlib_build();
    let types = &built.model.table.types;
    let mut rng = Lcg(23);
    let (mut roles, mut skipped_arrays) = (0, 0);
    for ty in types {
        // A role may be served by a function whose output runs past its own.
        let longest = Role::ALL
            .iter()
            .filter_map(|&r| ty.role(r))
            .map(RoleFn::output_len)
            .max()
            .unwrap_or(0);
        let sizes = [ty.nq, ty.nv, ty.nv, ty.nl, ty.np, 4, ty.nv, 1];
        for role in Role::ALL {
            let Some(rf) = ty.role(role) else {
                continue;
            };
            let unread: Vec<Slot> = Slot::ALL
                .into_iter()
                .filter(|&s| !rf.reads.has(s) && sizes[s as usize] > 0)
                .collect();
            for _ in 0..3 {
                let x: [Vec<f64>; 8] =
                    std::array::from_fn(|s| (0..sizes[s]).map(|_| 2.0 * rng.next()).collect());
                let mut poisoned = x.clone();
                for &s in &unread {
                    poisoned[s as usize].fill(f64::NAN);
                }
                let n = rf.output_len();
                let a = call(rf.func, &x, longest);
                let b = call(rf.func, &poisoned, longest);
                let what = format!("{} {role:?} without {unread:?}", ty.name);
                same_bits(&a[..n], &b[..n], &what);
                assert!(a[..n].iter().any(|v| v.is_finite()) || n == 0, "{what}");
            }
            roles += 1;
            skipped_arrays += unread.len();
        }
    }
    assert!(roles >= 150, "{roles} roles");
    assert!(
        skipped_arrays >= 200,
        "only {skipped_arrays} arrays skipped"
    );
}

#[test]
fn a_joints_residual_and_a_bodys_update_read_only_what_they_need() {
    let built = stdlib_build();
    let types = &built.model.table.types;
    let res = reads_of(types, "revolute[bg]", Role::Res);
    assert!(res.has(Slot::Q) && res.has(Slot::Lambda), "{res:?}");
    for s in [Slot::V, Slot::Vdot, Slot::Delta] {
        assert!(!res.has(s), "a revolute joint's residual reads {s:?}");
    }
    let update = reads_of(types, "rigid_body", Role::Update);
    let only = Reads::NONE.with(Slot::Q).with(Slot::Delta);
    assert_eq!(update, only, "a body's configuration update");
}
