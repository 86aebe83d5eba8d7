//! Snapshots of the integrator (`System::state` / `System::restore`): continuing from a
//! restored state repeats the original continuation bit for bit.

use crate::common;

use common::*;
use fdc_runtime::{MatrixRule, MemorySink, Model, Newton, RuntimeError, Settings, State, System};

/// `model` with an element that has state (the tracker: a step count and the largest
/// x so far, updated by `Post`) and an input `push` into the parameter `target`.
fn with_state_and_input(mut model: Model, target: (usize, usize)) -> Model {
    let ty = model.table.types.len();
    model.table.types.push(tracker());
    model.instances.push(inst(
        "track",
        ty,
        vec![0.0, f64::NEG_INFINITY],
        &[0],
        &[0],
        &[],
    ));
    model.inputs.push(fdc_runtime::RuntimeInput {
        name: "push".into(),
        targets: vec![target],
    });
    model
}

/// The spring-mass pushed through the mass's force slot.
fn spring() -> Model {
    with_state_and_input(spring_mass(1.0, 40.0, 0.3, 0.1, 0.0), (0, 3))
}

/// The pendulum (a constraint, so the sparse LU keeps a pivot order) pushed sideways
/// through the bob's horizontal gravity slot.
fn pendulum_pushed() -> Model {
    with_state_and_input(pendulum(1.0, [1.0, 0.0], 9.81), (0, 5))
}

/// A caller's loop: the input as a function of the time before every step (held
/// for 0.15 s, not changing at the snapshot at 1 s: a changed input drops a kept
/// iteration matrix), the time, outputs,
/// coordinates and element state after it.
fn drive(sys: &mut System, s: &Settings, end: f64) -> Vec<Vec<f64>> {
    let i = sys.input_index("push").unwrap();
    let mut rows = Vec::new();
    while sys.time() < end - 1e-9 {
        let held = (sys.time() / 0.15).floor() * 0.15;
        sys.set_input(i, 2.0 * (3.0 * held).sin());
        sys.step(s).unwrap();
        let mut row = vec![sys.time()];
        row.extend_from_slice(sys.output_values());
        row.extend_from_slice(sys.q());
        row.extend_from_slice(sys.v());
        row.extend_from_slice(sys.lambda());
        row.extend_from_slice(sys.params(2).unwrap());
        rows.push(row);
    }
    rows
}

/// Bitwise equality (NaN-safe), with the first differing row in the message.
fn assert_bitwise(a: &[Vec<f64>], b: &[Vec<f64>]) {
    assert_eq!(a.len(), b.len(), "row counts differ");
    for (k, (ra, rb)) in a.iter().zip(b).enumerate() {
        let same =
            ra.len() == rb.len() && ra.iter().zip(rb).all(|(x, y)| x.to_bits() == y.to_bits());
        assert!(same, "row {k} differs:\n{ra:?}\n{rb:?}");
    }
}

/// Runs to 1 s, saves, runs to 2 s (rows A); restores into the same system and into
/// a fresh one (through bytes) and runs to 2 s again (rows B): A == B bitwise.
fn save_restore_repeats(model: fn() -> Model, s: &Settings) -> State {
    let mut sys = System::new(model()).unwrap();
    sys.initialize(s).unwrap();
    drive(&mut sys, s, 1.0);
    let saved = sys.state();
    assert!((saved.time() - 1.0).abs() < 1e-9);
    let a = drive(&mut sys, s, 2.0);
    let stats_a = sys.stats();
    assert!(a.len() >= 10, "{} rows", a.len());

    sys.restore(&saved).unwrap();
    assert_eq!(sys.time(), saved.time());
    let b = drive(&mut sys, s, 2.0);
    assert_bitwise(&a, &b);
    assert_eq!(sys.stats(), stats_a);

    let bytes = saved.to_bytes();
    let decoded = State::from_bytes(&bytes).unwrap();
    assert_eq!(decoded, saved);
    let mut fresh = System::new(model()).unwrap();
    fresh.initialize(s).unwrap();
    fresh.restore(&decoded).unwrap();
    let c = drive(&mut fresh, s, 2.0);
    assert_bitwise(&a, &c);
    assert_eq!(fresh.stats(), stats_a);
    saved
}

fn fixed() -> Settings {
    Settings {
        end: 2.0,
        step: 1e-2,
        output_every: 0.0,
        ..Settings::default()
    }
}

fn adaptive() -> Settings {
    Settings {
        adaptive: Some(1e-6),
        step: 0.05,
        ..fixed()
    }
}

#[test]
fn restored_fixed_steps_repeat_bitwise() {
    save_restore_repeats(spring, &fixed());
    save_restore_repeats(pendulum_pushed, &fixed());
}

#[test]
fn restored_real_time_steps_repeat_bitwise() {
    // Fixed corrections without `adaptive`: the sparse LU keeps its pivot order.
    let s = Settings {
        newton: Newton::Fixed(3),
        ..fixed()
    };
    save_restore_repeats(pendulum_pushed, &s);
}

#[test]
fn restored_steps_on_a_kept_matrix_repeat_bitwise() {
    // h = 1 ms, a matrix per at most 7 steps: the snapshot after step 1000 holds a
    // matrix of age 6 that the next step reuses (restore factorizes it again), for the
    // velocity criterion and fixed corrections.
    for newton in [Newton::default(), Newton::Fixed(2)] {
        let s = Settings {
            step: 1e-3,
            newton,
            matrix_steps: 7,
            ..fixed()
        };
        let saved = save_restore_repeats(pendulum_pushed, &s);
        assert!(saved.keeps_matrix(), "{newton:?}");
    }
    // A matrix per at most 20 steps, snapshots at any age.
    let s = Settings {
        step: 1e-3,
        matrix_steps: 20,
        ..fixed()
    };
    save_restore_repeats(spring, &s);
    save_restore_repeats(pendulum_pushed, &s);
}

#[test]
fn restored_steps_under_the_cost_rule_repeat_bitwise() {
    // The counted-cost rule decides from its ledger (the last step's cost, the
    // matrix's life, the wait after a reuse that did not pay): a snapshot carries it,
    // so the restored run decides alike. Rerunning gives the same statistics too.
    let s = Settings {
        step: 1e-3,
        matrix_steps: 1000,
        matrix_rule: MatrixRule::Cost,
        ..fixed()
    };
    // Generated code's proportions of the roles' costs (`with_role_ops`).
    let spring = || with_role_ops(spring(), 2000, 300);
    let pendulum = || with_role_ops(pendulum_pushed(), 2000, 300);
    for model in [spring as fn() -> Model, pendulum] {
        save_restore_repeats(model, &s);
        let runs: Vec<_> = (0..2)
            .map(|_| {
                let mut sys = System::new(model()).unwrap();
                sys.initialize(&s).unwrap();
                (drive(&mut sys, &s, 1.0), sys.stats())
            })
            .collect();
        assert_bitwise(&runs[0].0, &runs[1].0);
        assert_eq!(runs[0].1, runs[1].1);
        // The rule kept matrices (else the test would not test it).
        let st = &runs[0].1;
        assert!(st.factorizations * 2 < st.steps, "{st:?}");
    }
}

#[test]
fn restored_adaptive_steps_repeat_bitwise() {
    save_restore_repeats(spring, &adaptive());
    save_restore_repeats(pendulum_pushed, &adaptive());
}

#[test]
fn restored_run_repeats_its_rows_bitwise() {
    // `run` continues from a restored state as from the saved one, dense rows included.
    let mut s = Settings {
        end: 1.0,
        output_every: 0.05,
        ..adaptive()
    };
    let mut sys = System::new(pendulum_pushed()).unwrap();
    sys.run(&s, &mut MemorySink::default()).unwrap();
    let saved = sys.state();
    s.end = 2.0;
    let mut a = MemorySink::default();
    sys.run(&s, &mut a).unwrap();
    sys.restore(&saved).unwrap();
    let mut b = MemorySink::default();
    sys.run(&s, &mut b).unwrap();
    assert!(a.rows.len() > 20, "{} rows", a.rows.len());
    assert_eq!(a.times, b.times);
    assert_bitwise(&a.rows, &b.rows);
}

#[test]
fn a_state_of_another_model_or_bad_bytes_is_an_error() {
    let s = fixed();
    let mut spring_sys = System::new(spring()).unwrap();
    assert_eq!(
        spring_sys.restore(&System::new(spring()).unwrap().state()),
        Err(RuntimeError::NotInitialized)
    );
    spring_sys.initialize(&s).unwrap();
    let mut pend = System::new(pendulum_pushed()).unwrap();
    pend.initialize(&s).unwrap();
    drive(&mut pend, &s, 0.5);
    let other = pend.state();
    let before = spring_sys.state();
    let err = spring_sys.restore(&other).unwrap_err();
    assert!(
        matches!(&err, RuntimeError::BadState(m) if m.contains("another model")),
        "{err}"
    );
    // Nothing changed.
    assert_eq!(spring_sys.state(), before);

    // Same structure, other parameter count: another model too.
    let mut bigger = spring();
    bigger.instances[1].params.push(0.0);
    bigger.table.types[1].np += 1;
    let mut big = System::new(bigger).unwrap();
    big.initialize(&s).unwrap();
    assert!(matches!(
        big.restore(&before),
        Err(RuntimeError::BadState(_))
    ));

    let bytes = other.to_bytes();
    for cut in [0, 7, 8, 40, bytes.len() / 2, bytes.len() - 1] {
        assert!(
            matches!(
                State::from_bytes(&bytes[..cut]),
                Err(RuntimeError::BadState(_))
            ),
            "cut at {cut}"
        );
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(State::from_bytes(&longer).is_err());
    // Another format version, and a corrupt length (the count of vectors, after the
    // scalars and the divergence watch's 13 window envelopes), are refused without
    // allocating or panicking.
    for at in [8, 235] {
        let mut corrupt = bytes.clone();
        corrupt[at..at + 8].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(State::from_bytes(&corrupt).is_err(), "at {at}");
    }
    // Formats 5 (before the kept matrix's rate: one f64), 4 (before the diagonal
    // orders: 2 flags per solver), 3 (before the cost
    // rule's ledger: 4 counts) and 2 (before the kept matrix: 2 flags, 4 coefficients,
    // the age, an empty value list) are still read.
    let mut plain = System::new(pendulum_pushed()).unwrap();
    plain.initialize(&s).unwrap();
    let fresh = plain.state();
    assert!(!fresh.keeps_matrix());
    let v6 = fresh.to_bytes();
    let mut v5 = v6[..v6.len() - 8].to_vec();
    v5[8..16].copy_from_slice(&5u64.to_le_bytes());
    assert_eq!(State::from_bytes(&v5), Ok(fresh.clone()));
    let mut v4 = v5[..v5.len() - 4].to_vec();
    v4[8..16].copy_from_slice(&4u64.to_le_bytes());
    assert_eq!(State::from_bytes(&v4), Ok(fresh.clone()));
    let mut v3 = v4[..v4.len() - 4 * 8].to_vec();
    v3[8..16].copy_from_slice(&3u64.to_le_bytes());
    assert_eq!(State::from_bytes(&v3), Ok(fresh.clone()));
    let mut v2 = v3[..v3.len() - (2 + 4 * 8 + 8 + 8)].to_vec();
    v2[8..16].copy_from_slice(&2u64.to_le_bytes());
    assert_eq!(State::from_bytes(&v2), Ok(fresh));
    v2[8..16].copy_from_slice(&1u64.to_le_bytes());
    assert!(State::from_bytes(&v2).is_err(), "format 1 is refused");
}
