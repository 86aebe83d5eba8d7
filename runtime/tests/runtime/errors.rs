//! Error paths: each ends with a message naming the element, never a panic.

// Element functions made by `element_fn!` are `unsafe` with the runtime's promise as safety.
#![allow(clippy::missing_safety_doc)]

use crate::common;

use common::*;
use fdc_runtime::table::{ElementType, Role};
use fdc_runtime::{
    Culprit, MemorySink, Model, Newton, RuntimeError, Settings, SimErrorKind, System,
};

// A force on a 1-D mass that depends on time only: Q = a √(T − t), not a number for
// t > T. p = [a, T].
element_fn!(thrust_res, (1, 1, 0, 2, 2), |io| {
    let q = io.p[0] * (io.p[1] - io.t).sqrt();
    io.out[0] = -q;
    io.out[1] = -q;
});
element_fn!(thrust_ic, (1, 1, 0, 2, 1), |io| {
    io.out[0] = io.p[0] * (io.p[1] - io.t).sqrt();
});
// No derivative with respect to the state: an empty iteration matrix block.
element_fn!(thrust_iter, (1, 1, 0, 2, 0), |_io| {});

fn thrust() -> ElementType {
    make_type(TypeSpec {
        name: "thrust",
        nq: 1,
        nv: 1,
        nl: 0,
        np: 2,
        owner: false,
        outputs: vec![],
        multipliers: vec![],
        roles: vec![
            (Role::Res, thrust_res, vec![dense(1), dense(0), dense(1)]),
            (Role::Iter, thrust_iter, vec![sparse(1, 1, &[])]),
            (Role::Ic, thrust_ic, ic_blocks_one_dof()),
        ],
    })
}

// A softening spring Q = −a √|x|: finite at x = 0, where its stiffness a / (2√|x|) is
// infinite. p = [a].
element_fn!(root_res, (1, 1, 0, 1, 2), |io| {
    let f = io.p[0] * io.q[0].abs().sqrt();
    io.out[0] = f;
    io.out[1] = f;
});
element_fn!(root_iter, (1, 1, 0, 1, 1), |io| {
    let h = io.c[3];
    io.out[0] = io.c[1] * h * h * io.p[0] / (2.0 * io.q[0].abs().sqrt());
});
element_fn!(root_ic, (1, 1, 0, 1, 1), |io| {
    io.out[0] = -io.p[0] * io.q[0].abs().sqrt();
});

fn root_spring() -> ElementType {
    make_type(TypeSpec {
        name: "root_spring",
        nq: 1,
        nv: 1,
        nl: 0,
        np: 1,
        owner: false,
        outputs: vec![],
        multipliers: vec![],
        roles: vec![
            (Role::Res, root_res, vec![dense(1), dense(0), dense(1)]),
            (Role::Iter, root_iter, vec![sparse(1, 1, &[(0, 0)])]),
            (Role::Ic, root_ic, ic_blocks_one_dof()),
        ],
    })
}

/// The spring-mass (k = 100, x0 = 0.1) with a third element of type `extra`.
fn spring_mass_with(extra: ElementType, name: &str, params: Vec<f64>) -> Model {
    let mut m = spring_mass(1.0, 100.0, 0.0, 0.1, 0.0);
    m.table.types.push(extra);
    m.instances.push(inst(name, 2, params, &[0], &[0], &[]));
    m
}

#[test]
fn inconsistent_initial_configuration_names_the_element_and_row() {
    // The bob starts at distance 1.2 from the anchor of a rod of length 1.
    // With the position check alone (assembly would move the bob onto the circle).
    let s = Settings {
        assemble: false,
        ..Settings::default()
    };
    let mut sys = System::new(pendulum(1.0, [1.2, 0.0], 9.81)).unwrap();
    let err = sys.initialize(&s).unwrap_err();
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
    let e = sys.run(&s, &mut sink).unwrap_err();
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
            sys.warnings()[0].starts_with("`rod2`: dist removed — redundant"),
            "{:?}",
            sys.warnings()
        );
        assert_eq!(
            sys.redundant_summary().as_deref(),
            Some("redundant constraints: 1 row of 1 element removed")
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
        let RuntimeError::Singular { unknown, elements } = &err else {
            panic!("{linear:?}: unexpected error {err:?}");
        };
        assert_eq!(unknown, "`bob` velocity dof 1", "{linear:?}");
        // The bob and the rod that holds it act on that dof.
        assert_eq!(elements, &["bob".to_string(), "rod".to_string()]);
        assert!(err.to_string().contains("singular"), "{err}");
    }
}

#[test]
fn rejected_steps_halve_until_the_minimum_step() {
    // An error tolerance that no step can meet: each rejection by the error test cuts h
    // by the controller's smallest ratio 0.2 (the error is far above 1), and the first h
    // below h_min ends the run (a Newton failure halves, see failures.rs).
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
            assert!((*h - 0.1 * 0.2 * 0.2).abs() < 1e-15, "{h}");
            assert_eq!(*h_min, 0.01);
            assert!(
                cause.contains("local error") && cause.contains("`mass`"),
                "{cause}"
            );
        }
        other => panic!("unexpected error {other:?}"),
    }
    assert_eq!(err.t, 0.0);
    assert_eq!(err.stats.rejected, 2);
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
            // The dof with the largest correction and every element acting on it.
            assert!(
                cause.contains("largest correction at `bob` velocity dof"),
                "{cause}"
            );
            assert!(
                cause.contains("(elements acting on it: `bob`, `rod`)"),
                "{cause}"
            );
            // The last attempt was the step of 0.01 / 2⁶ from t = 0.
            assert!(cause.contains("in the step to t = 0.00015625"), "{cause}");
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
    // The NaN reaches the mass's dof through the spring: the spring is named.
    let SimErrorKind::NotFinite {
        unknown, culprit, ..
    } = &err.kind
    else {
        panic!("{err:?}");
    };
    assert_eq!(unknown, "`mass` velocity dof 0");
    assert_eq!(
        culprit,
        &Some(Culprit {
            instance: "spring".into(),
            role: "residual"
        })
    );
    assert!(
        err.to_string()
            .contains("produced by the residual of `spring`"),
        "{err}"
    );
    assert_eq!(err.stats.steps, 1);
}

#[test]
fn a_force_law_that_becomes_nan_is_named_and_the_rows_before_are_kept() {
    // Q = √(0.25 − t): the step from t = 0.25 to 0.26 evaluates it at 0.26.
    let s = Settings {
        end: 1.0,
        step: 0.01,
        output_every: 0.05,
        ..Settings::default()
    };
    let mut sys = System::new(spring_mass_with(thrust(), "thrust", vec![2.0, 0.25])).unwrap();
    let mut sink = MemorySink::default();
    let err = sys.run(&s, &mut sink).unwrap_err();
    let SimErrorKind::NotFinite {
        unknown,
        t_trial,
        culprit,
    } = &err.kind
    else {
        panic!("{err:?}");
    };
    assert_eq!(unknown, "`mass` velocity dof 0");
    assert!((t_trial - 0.26).abs() < 1e-9, "{t_trial}");
    assert!((err.t - 0.25).abs() < 1e-9, "{}", err.t);
    let c = culprit.as_ref().expect("an element is named");
    assert_eq!((c.instance.as_str(), c.role), ("thrust", "residual"));
    let msg = err.to_string();
    assert!(
        msg.contains("produced by the residual of `thrust`"),
        "{msg}"
    );
    // The rows at 0, 0.05, ..., 0.25 were written and are finite.
    assert_eq!(sink.times.len(), 6);
    assert!((sink.times[5] - 0.25).abs() < 1e-9);
    assert!(sink.rows.iter().flatten().all(|x| x.is_finite()));
}

#[test]
fn a_force_law_that_is_nan_at_the_start_is_named_at_the_initial_conditions() {
    // Q = √(−1 − t) is not a number from t = 0 on.
    let mut sys = System::new(spring_mass_with(thrust(), "thrust", vec![2.0, -1.0])).unwrap();
    let mut sink = MemorySink::default();
    let err = sys.run(&Settings::default(), &mut sink).unwrap_err();
    let SimErrorKind::Setup(RuntimeError::NotFinite { unknown, culprit }) = &err.kind else {
        panic!("{err:?}");
    };
    assert_eq!(unknown, "`mass` velocity dof 0");
    assert_eq!(
        culprit,
        &Some(Culprit {
            instance: "thrust".into(),
            role: "initial conditions"
        })
    );
    assert!(
        err.to_string()
            .contains("produced by the initial conditions of `thrust`"),
        "{err}"
    );
    assert_eq!(err.t, 0.0);
}

#[test]
fn an_infinite_stiffness_is_named_in_the_iteration_matrix() {
    // The mass rests at x = 0 with no spring force (k = 0): the root spring's force is
    // 0 there, its stiffness infinite. The residual is finite, the matrix is not.
    let mut m = spring_mass_with(root_spring(), "soft", vec![1.0]);
    m.instances[0].params = pm_params(1.0, &[0.0], &[0.0], &[0.0]);
    m.instances[1].params[0] = 0.0;
    let mut sys = System::new(m).unwrap();
    let s = Settings::default();
    sys.initialize(&s).unwrap();
    let err = sys.step(&s).unwrap_err();
    let SimErrorKind::NotFinite { culprit, .. } = &err.kind else {
        panic!("{err:?}");
    };
    assert_eq!(
        culprit,
        &Some(Culprit {
            instance: "soft".into(),
            role: "iteration matrix"
        })
    );
    assert!(
        err.to_string()
            .contains("produced by the iteration matrix of `soft`"),
        "{err}"
    );
}

#[test]
fn a_singular_iteration_matrix_names_the_dof_and_the_elements_on_it() {
    // A pendulum at rest without gravity whose mass is set to 0 after the first step:
    // its vertical dof has neither mass nor constraint (the rod is horizontal).
    let mut model = pendulum(1.0, [1.0, 0.0], 0.0);
    model.inputs.push(fdc_runtime::RuntimeInput {
        name: "m".into(),
        targets: vec![(0, 0)],
    });
    let mut sys = System::new(model).unwrap();
    let s = Settings::default();
    sys.initialize(&s).unwrap();
    sys.step(&s).unwrap();
    sys.set_input(0, 0.0);
    // Every halved attempt meets the same singular matrix: the step goes down to the
    // minimum, then the run ends; [M Bᵀ; B 0] is singular at the configuration too.
    let err = sys.step(&s).unwrap_err();
    let SimErrorKind::Singular {
        unknown,
        elements,
        t_trial,
        at_configuration,
    } = &err.kind
    else {
        panic!("{err:?}");
    };
    assert_eq!(unknown, "`bob` velocity dof 1");
    assert_eq!(elements, &["bob".to_string(), "rod".to_string()]);
    assert!(*at_configuration);
    let h = t_trial - s.step;
    assert!(h > 0.0 && h < 2.0 * s.step_min, "{t_trial}");
    assert_eq!(err.stats.rejected, 30, "1 ms halved to below 1e-12");
    let msg = err.to_string();
    assert!(
        msg.contains("(elements acting on it: `bob`, `rod`;")
            && msg.contains("singular at the configuration reached"),
        "{msg}"
    );
}

/// A mass held at x = 0 by `fixed` (a driver of amplitude 0: no time in it) and pulled
/// along x by `pull` (x = 0.2 sin 3t): issue 22's driver that demands a motion a joint
/// forbids, in either order.
fn pulled_against_a_lock(pull_first: bool) -> fdc_runtime::Model {
    let mass = inst(
        "mass",
        0,
        pm_params(1.0, &[0.0], &[0.0], &[0.0]),
        &[0],
        &[0],
        &[],
    );
    let lock = |l: usize| inst("fixed", 1, vec![0.0, 3.0], &[0], &[0], &[l]);
    let pull = |l: usize| inst("pull", 1, vec![0.2, 3.0], &[0], &[0], &[l]);
    let instances = if pull_first {
        vec![mass, pull(0), lock(1)]
    } else {
        vec![mass, lock(0), pull(1)]
    };
    fdc_runtime::Model {
        table: table(vec![point_mass::<1>(), driver1()]),
        instances,
        nq: 1,
        nv: 1,
        nl: 2,
        inputs: vec![],
        roads: Default::default(),
    }
}

#[test]
fn a_driver_against_a_joint_is_an_error_never_a_dropped_row() {
    for pull_first in [false, true] {
        let mut sys = System::new(pulled_against_a_lock(pull_first)).unwrap();
        let err = sys.initialize(&Settings::default()).unwrap_err();
        let RuntimeError::ConflictingDriver {
            drivers, joints, ..
        } = &err
        else {
            panic!("pull first {pull_first}: {err}");
        };
        assert_eq!(
            (drivers.as_slice(), joints.as_slice()),
            (&["pull".to_string()][..], &["fixed".to_string()][..])
        );
        let msg = err.to_string();
        assert!(
            msg.contains("`pull` prescribes a motion that `fixed` forbids"),
            "{msg}"
        );
    }
    // Two time-free locks of the same motion: the second is redundant, a warning.
    let mut model = pulled_against_a_lock(false);
    model.instances[2].params[0] = 0.0;
    let mut sys = System::new(model).unwrap();
    sys.initialize(&Settings::default()).unwrap();
    assert_eq!(sys.redundant_removed(), 1);
    assert!(
        sys.warnings()[0].starts_with("`pull`: drive removed"),
        "{:?}",
        sys.warnings()
    );
}
