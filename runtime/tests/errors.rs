//! Error paths: each ends with a message naming the element, never a panic.

mod common;

use common::*;
use fdc_runtime::{MemorySink, Newton, RuntimeError, Settings, SimErrorKind, System};

#[test]
fn inconsistent_initial_configuration_names_the_element_and_row() {
    // The bob starts at distance 1.2 from the anchor of a rod of length 1.
    let mut sys = System::new(pendulum(1.0, [1.2, 0.0], 9.81)).unwrap();
    let err = sys.initialize(&Settings::default()).unwrap_err();
    match &err {
        RuntimeError::InconsistentConfiguration {
            instance,
            row,
            residual,
        } => {
            assert_eq!(instance, "rod");
            assert_eq!(row, "dist.lambda");
            assert!((residual - 0.5 * (1.44 - 1.0)).abs() < 1e-12);
        }
        other => panic!("unexpected error {other:?}"),
    }
    let msg = err.to_string();
    assert!(
        msg.contains("`rod`") && msg.contains("dist.lambda"),
        "{msg}"
    );
    // run() reports the same error, with no rows lost to a panic.
    let mut sink = MemorySink::default();
    let e = sys.run(&Settings::default(), &mut sink).unwrap_err();
    assert!(matches!(
        e.kind,
        SimErrorKind::Setup(RuntimeError::InconsistentConfiguration { .. })
    ));
}

fn doubled_pendulum() -> fdc_runtime::Model {
    // Two identical distance constraints on the same bob: B has two equal rows.
    let mut m = pendulum(1.0, [1.0, 0.0], 9.81);
    m.instances
        .push(inst("rod2", 1, vec![1.0, 0.0, 0.0], &[0, 1], &[0, 1], &[1]));
    m.nl = 2;
    m
}

#[test]
fn redundant_constraints_are_removed_with_a_warning_or_refused_when_strict() {
    for linear in [
        fdc_runtime::LinearSolverKind::Sparse,
        fdc_runtime::LinearSolverKind::Dense,
    ] {
        let s = Settings {
            end: 1.0,
            linear,
            ..Settings::default()
        };
        // Default: the second rod is removed, the run equals the single-rod pendulum.
        let mut sys = System::new(doubled_pendulum()).unwrap();
        let mut doubled = MemorySink::default();
        sys.run(&s, &mut doubled).unwrap();
        assert_eq!(sys.warnings().len(), 1);
        assert!(
            sys.warnings()[0].contains("`dist.lambda` of `rod2`"),
            "{:?}",
            sys.warnings()
        );
        let mut single = MemorySink::default();
        System::new(pendulum(1.0, [1.0, 0.0], 9.81))
            .unwrap()
            .run(&s, &mut single)
            .unwrap();
        let (a, b) = (
            doubled.channel("bob.y").unwrap(),
            single.channel("bob.y").unwrap(),
        );
        assert!(
            b.iter().cloned().fold(0.0, f64::min) < -0.99,
            "the pendulum swung"
        );
        for (x, y) in a.iter().zip(&b) {
            assert!((x - y).abs() < 1e-12);
        }
        assert!(doubled
            .channel("rod2.dist.lambda")
            .unwrap()
            .iter()
            .all(|&l| l == 0.0));
        // Strict: an error naming the removed row.
        let mut sys = System::new(doubled_pendulum()).unwrap();
        let err = sys
            .initialize(&Settings {
                strict: true,
                ..s.clone()
            })
            .unwrap_err();
        assert!(
            matches!(err, RuntimeError::RedundantConstraints { .. }),
            "{err:?}"
        );
        assert!(err.to_string().contains("`rod2`"), "{err}");
    }
}

#[test]
fn a_singular_system_is_an_error_naming_the_dof() {
    // A massless bob: its vertical dof has neither mass nor constraint.
    for linear in [
        fdc_runtime::LinearSolverKind::Sparse,
        fdc_runtime::LinearSolverKind::Dense,
    ] {
        let mut m = pendulum(1.0, [1.0, 0.0], 9.81);
        m.instances[0].params[0] = 0.0;
        let mut sys = System::new(m).unwrap();
        let err = sys
            .initialize(&Settings {
                linear,
                ..Settings::default()
            })
            .unwrap_err();
        let RuntimeError::Singular { unknown } = &err else {
            panic!("{linear:?}: unexpected error {err:?}");
        };
        assert_eq!(unknown, "`bob` velocity dof 1", "{linear:?}");
        assert!(err.to_string().contains("singular"), "{err}");
    }
}

#[test]
fn rejected_steps_halve_until_the_minimum_step() {
    // An error tolerance that no step can meet: each rejection halves h exactly, and the
    // first h below h_min ends the run.
    let s = Settings {
        end: 1.0,
        step: 0.1,
        output_every: 1.0,
        step_min: 0.01,
        adaptive: Some(1e-14),
        ..Settings::default()
    };
    let mut sys = System::new(spring_mass(1.0, 100.0, 0.0, 0.1, 0.0)).unwrap();
    let mut sink = MemorySink::default();
    let err = sys.run(&s, &mut sink).unwrap_err();
    match &err.kind {
        SimErrorKind::StepBelowMinimum { h, h_min, cause } => {
            assert_eq!(*h, 0.1 / 16.0);
            assert_eq!(*h_min, 0.01);
            assert!(
                cause.contains("local error") && cause.contains("`mass`"),
                "{cause}"
            );
        }
        other => panic!("unexpected error {other:?}"),
    }
    assert_eq!(err.t, 0.0);
    assert_eq!(err.stats.rejected, 4);
    // The row at t = 0 was written before the failure.
    assert_eq!(sink.times, vec![0.0]);
    assert!(err.to_string().contains("below the minimum"), "{err}");
}

#[test]
fn newton_that_cannot_converge_ends_with_the_element_named() {
    // One Newton iteration cannot meet a 1e-15 velocity tolerance on the nonlinear
    // pendulum: every step is rejected until h < h_min.
    let s = Settings {
        end: 1.0,
        step: 0.01,
        step_min: 1e-4,
        newton: Newton::Velocity { tol: 1e-300 },
        max_newton_iterations: 1,
        ..Settings::default()
    };
    let mut sys = System::new(pendulum(1.0, [0.6, -0.8], 9.81)).unwrap();
    let mut sink = MemorySink::default();
    let err = sys.run(&s, &mut sink).unwrap_err();
    match &err.kind {
        SimErrorKind::StepBelowMinimum { cause, .. } => {
            assert!(cause.contains("Newton did not converge"), "{cause}");
            assert!(
                cause.contains("`bob`") || cause.contains("`rod`"),
                "{cause}"
            );
        }
        other => panic!("unexpected error {other:?}"),
    }
}

#[test]
fn bad_models_are_errors() {
    let mut m = pendulum(1.0, [1.0, 0.0], 9.81);
    m.table.abi_version += 1;
    assert!(matches!(
        System::new(m),
        Err(RuntimeError::AbiVersion { .. })
    ));

    let mut m = pendulum(1.0, [1.0, 0.0], 9.81);
    m.instances[1].v_map.pop();
    let e = System::new(m).err().unwrap();
    assert!(e.to_string().contains("`rod`"), "{e}");

    let mut m = pendulum(1.0, [1.0, 0.0], 9.81);
    m.instances[1].q_map[0] = 7;
    assert!(matches!(System::new(m), Err(RuntimeError::BadModel(_))));

    let mut m = pendulum(1.0, [1.0, 0.0], 9.81);
    m.nv = 3;
    let e = System::new(m).err().unwrap();
    assert!(e.to_string().contains("v[2] belongs to no body"), "{e}");

    let mut m = pendulum(1.0, [1.0, 0.0], 9.81);
    m.instances[0].type_index = 9;
    assert!(matches!(System::new(m), Err(RuntimeError::BadModel(_))));

    // A role whose layout does not fit its sizes.
    let mut m = pendulum(1.0, [1.0, 0.0], 9.81);
    m.table.types[1].roles[fdc_runtime::table::Role::Res as usize]
        .as_mut()
        .unwrap()
        .blocks[1] = dense(2);
    let e = System::new(m).err().unwrap();
    assert!(
        e.to_string().contains("`anchor`") && e.to_string().contains("res"),
        "{e}"
    );

    // Bad settings are errors too.
    let mut sys = System::new(pendulum(1.0, [1.0, 0.0], 9.81)).unwrap();
    let s = Settings {
        alpha: 0.5,
        ..Settings::default()
    };
    assert!(matches!(
        sys.initialize(&s),
        Err(RuntimeError::BadSettings(_))
    ));
    assert!(sys.step(&Settings::default()).is_err());
}

#[test]
fn a_nan_in_an_element_ends_the_run_naming_it() {
    // A spring with a NaN stiffness set through an input after the start.
    let mut model = spring_mass(1.0, 1.0, 0.0, 0.1, 0.0);
    model.inputs.push(fdc_runtime::RuntimeInput {
        name: "k".into(),
        targets: vec![(1, 0)],
    });
    let mut sys = System::new(model).unwrap();
    let s = Settings::default();
    sys.initialize(&s).unwrap();
    sys.step(&s).unwrap();
    sys.set_input(0, f64::NAN);
    let err = sys.step(&s).unwrap_err();
    assert!(
        matches!(err.kind, SimErrorKind::NotFinite { .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("`mass`"), "{err}");
    assert_eq!(err.stats.steps, 1);
}
