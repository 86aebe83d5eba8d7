//! Initial position assembly (`system/assemble.rs`) on hand-written point masses,
//! against the closed-form nearest points on circles.

// Element functions made by `element_fn!` are `unsafe` with the runtime's promise as safety.
#![allow(clippy::missing_safety_doc)]

use crate::common;

use common::*;
use fdc_runtime::{MemorySink, RuntimeError, Settings, SimErrorKind, System};

#[test]
fn a_bob_off_its_rod_moves_to_the_nearest_point_of_the_circle() {
    // Rod of length 1 from the origin, bob written at (1.2, 0.5) (distance 1.3): the
    // nearest point of the circle is (1.2, 0.5)/1.3.
    let mut sys = System::new(pendulum(1.0, [1.2, 0.5], 9.81)).unwrap();
    sys.initialize(&Settings::default()).unwrap();
    let q = sys.q();
    assert!((q[0] - 1.2 / 1.3).abs() < 1e-12, "{q:?}");
    assert!((q[1] - 0.5 / 1.3).abs() < 1e-12, "{q:?}");
    let c = sys.assembly_corrections();
    assert_eq!(c.len(), 1);
    assert_eq!((c[0].body.as_str(), c[0].dof), ("bob", 0));
    assert!((c[0].size - 0.3 * 1.2 / 1.3).abs() < 1e-12, "{c:?}");
    // Then it swings like any pendulum: the rod length holds along the run.
    let mut sink = MemorySink::default();
    sys.run(&Settings::default(), &mut sink).unwrap();
    let (x, y) = (
        sink.channel("bob.x").unwrap(),
        sink.channel("bob.y").unwrap(),
    );
    for (x, y) in x.iter().zip(&y) {
        assert!((x.hypot(*y) - 1.0).abs() < 1e-8);
    }
}

#[test]
fn a_given_body_stays_and_the_others_close_the_chain() {
    // Chain of two rods; m0 at (1, 0) is on its rod and given, m1 is written at
    // (2.3, 0.4), 1.36 from m0: it moves to m0 + unit(m1 − m0).
    let mut m = chain(2);
    m.instances[1].params[1..3].copy_from_slice(&[2.3, 0.4]);
    let mut sys = System::new(m).unwrap();
    let s = Settings {
        given: vec!["m0".into()],
        ..Settings::default()
    };
    sys.initialize(&s).unwrap();
    let q = sys.q();
    let r = 1.3f64.hypot(0.4);
    assert_eq!(&q[..2], &[1.0, 0.0]);
    assert!((q[2] - (1.0 + 1.3 / r)).abs() < 1e-12, "{q:?}");
    assert!((q[3] - 0.4 / r).abs() < 1e-12, "{q:?}");
    assert_eq!(sys.assembly_corrections().len(), 1);
}

#[test]
fn a_constraint_that_cannot_hold_fails_naming_it_and_its_gap() {
    // The bob is given at distance 1.3 from the anchor of a rod of length 1: the rod
    // row ½(|x|² − L²) keeps its gap ½(1.69 − 1).
    let s = Settings {
        given: vec!["bob".into()],
        ..Settings::default()
    };
    let mut sys = System::new(pendulum(1.0, [1.2, 0.5], 9.81)).unwrap();
    let mut sink = MemorySink::default();
    let err = sys.run(&s, &mut sink).unwrap_err();
    assert_eq!(err.stats.steps, 0);
    let SimErrorKind::Setup(RuntimeError::AssemblyFailed {
        instance, row, gap, ..
    }) = &err.kind
    else {
        panic!("unexpected error {err:?}");
    };
    assert_eq!((instance.as_str(), row.as_str()), ("rod", "dist.lambda"));
    assert!((gap - 0.5 * (1.69 - 1.0)).abs() < 1e-12, "{gap}");
    assert!(err.to_string().contains("`rod`"), "{err}");
    // A name that is no body is a bad setting, not a silent no-op.
    let s = Settings {
        given: vec!["rod".into()],
        ..Settings::default()
    };
    let e = System::new(pendulum(1.0, [1.2, 0.5], 9.81))
        .unwrap()
        .initialize(&s)
        .unwrap_err();
    assert!(matches!(e, RuntimeError::BadSettings(_)), "{e:?}");
}

#[test]
fn assemble_false_keeps_the_position_check() {
    let s = Settings {
        assemble: false,
        ..Settings::default()
    };
    let e = System::new(pendulum(1.0, [1.2, 0.5], 9.81))
        .unwrap()
        .initialize(&s)
        .unwrap_err();
    assert!(
        matches!(e, RuntimeError::InconsistentConfiguration { .. }),
        "{e:?}"
    );
}
