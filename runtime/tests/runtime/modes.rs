//! `System::linearize` on hand-written element types against closed forms.

use crate::common;

use common::*;
use fdc_runtime::{ModeKind, Settings, System};
use std::f64::consts::PI;

fn linearized(model: fdc_runtime::Model) -> fdc_runtime::Linearization {
    let mut sys = System::new(model).unwrap();
    sys.initialize(&Settings::default()).unwrap();
    sys.linearize().unwrap()
}

#[test]
fn spring_mass_damper_frequency_and_damping_ratio() {
    let (m, k, d) = (2.0, 50.0, 3.0);
    // Away from the spring's rest position: the matrices do not depend on it.
    let lin = linearized(spring_mass(m, k, d, 0.3, 0.1));
    assert_eq!((lin.m[0], lin.c[0], lin.k[0]), (m, d, k));
    assert_eq!(lin.dofs, 1);
    assert_eq!(lin.modes.len(), 1);
    let mode = &lin.modes[0];
    // s² m + s d + k = 0: ω_n = √(k/m), ζ = d / (2 √(k m)), ω_d = ω_n √(1 − ζ²).
    let wn = (k / m).sqrt();
    let zeta = d / (2.0 * (k * m).sqrt());
    let wd = wn * (1.0 - zeta * zeta).sqrt();
    assert_eq!(mode.kind, ModeKind::Oscillation);
    assert!((mode.frequency - wd / (2.0 * PI)).abs() < 1e-12 * wd);
    assert!((mode.damping_ratio - zeta).abs() < 1e-12);
    assert_eq!(mode.energy, vec![("mass".to_string(), 1.0)]);
}

#[test]
fn overdamped_oscillator_has_two_real_modes() {
    let (m, k, d) = (1.0, 4.0, 10.0);
    let lin = linearized(spring_mass(m, k, d, 0.0, 0.0));
    assert_eq!(lin.modes.len(), 2);
    // s = (−d ± √(d² − 4 k m)) / (2 m)
    let disc = (d * d - 4.0 * k * m).sqrt();
    let want = [(-d + disc) / (2.0 * m), (-d - disc) / (2.0 * m)];
    for (mode, s) in lin.modes.iter().zip(want) {
        assert_eq!(mode.kind, ModeKind::Real);
        assert!((mode.eigenvalue.0 - s).abs() < 1e-10 * s.abs(), "{mode:?}");
        assert_eq!(mode.frequency, 0.0);
        assert!((mode.damping_ratio - 1.0).abs() < 1e-12);
    }
}

#[test]
fn free_mass_is_a_rigid_body_mode_and_a_damped_one_a_real_mode_too() {
    let lin = linearized(spring_mass(1.5, 0.0, 0.0, 0.2, 1.0));
    assert_eq!(lin.modes.len(), 1);
    assert_eq!(lin.modes[0].kind, ModeKind::RigidBody);
    assert_eq!(lin.modes[0].frequency, 0.0);
    assert_eq!(lin.modes[0].energy, vec![("mass".to_string(), 1.0)]);
    // With a damper only: s (m s + d) = 0, one rigid-body mode and s = −d/m.
    let lin = linearized(spring_mass(1.5, 0.0, 3.0, 0.2, 1.0));
    let kinds: Vec<ModeKind> = lin.modes.iter().map(|m| m.kind).collect();
    assert_eq!(kinds, vec![ModeKind::RigidBody, ModeKind::Real]);
    assert!((lin.modes[1].eigenvalue.0 + 2.0).abs() < 1e-12);
}

#[test]
fn point_pendulum_gets_its_stiffness_from_the_multiplier() {
    // Hanging at (0, −L): λ = m g / L from the constraint ½(|x|² − L²); the only
    // stiffness is ∂(Bᵀλ)/∂δ = λ I, and the motion along B is eliminated.
    let (l, g) = (0.8, 9.81);
    let lin = linearized(pendulum(l, [0.0, -l], g));
    assert_eq!((lin.nl, lin.dofs), (1, 1));
    assert!((lin.lambda[0] - g / l).abs() < 1e-12);
    assert_eq!(lin.b, vec![0.0, -l]);
    assert!((lin.k[0] - g / l).abs() < 1e-12 && (lin.k[3] - g / l).abs() < 1e-12);
    assert_eq!(lin.modes.len(), 1);
    let w = (g / l).sqrt();
    assert!((lin.modes[0].frequency - w / (2.0 * PI)).abs() < 1e-10);
    assert!(lin.modes[0].damping_ratio.abs() < 1e-12);
}

#[test]
fn pendulum_linearized_after_a_run_and_off_equilibrium() {
    // Released from rest at the horizontal: the rod tension is 0, so is the
    // multiplier-based stiffness, and the one dof has none: a rigid-body mode.
    let l = 1.0;
    let lin = linearized(pendulum(l, [l, 0.0], 9.81));
    assert!(lin.lambda[0].abs() < 1e-12);
    assert_eq!(lin.modes.len(), 1);
    assert_eq!(lin.modes[0].kind, ModeKind::RigidBody);

    // After a run the state is off equilibrium; λ is recomputed from (q, v).
    let mut sys = System::new(pendulum(l, [l, 0.0], 9.81)).unwrap();
    let s = Settings {
        end: 0.3,
        step: 1e-3,
        ..Settings::default()
    };
    sys.run(&s, &mut fdc_runtime::MemorySink::default())
        .unwrap();
    let (q, v) = (sys.q().to_vec(), sys.v().to_vec());
    let lin = sys.linearize().unwrap();
    // Φ = ½(|x|² − L²), Φ̈ = 0 with m = 1: λ |x|² = |v|² + g·x, g = (0, −9.81).
    let want = (v[0] * v[0] + v[1] * v[1] - 9.81 * q[1]) / (q[0] * q[0] + q[1] * q[1]);
    assert!(
        (lin.lambda[0] - want).abs() < 1e-9 * want,
        "{} vs {want}",
        lin.lambda[0]
    );
    assert!((sys.time() - 0.3).abs() < 1e-12);
}

#[test]
fn two_hanging_masses_on_rods_have_the_double_pendulum_frequencies() {
    // chain(2) starts horizontal; build the hanging one: masses at (0, −1), (0, −2).
    let mut model = chain(2);
    for (i, inst) in model.instances.iter_mut().take(2).enumerate() {
        inst.params[1] = 0.0;
        inst.params[2] = -((i + 1) as f64);
    }
    let lin = linearized(model);
    assert_eq!(lin.dofs, 2);
    // Equal unit masses and rods: ω² = (2 ± √2) g / L.
    let g = 9.81;
    let want = [(2.0 - 2f64.sqrt()) * g, (2.0 + 2f64.sqrt()) * g];
    assert_eq!(lin.modes.len(), 2);
    for (mode, w2) in lin.modes.iter().zip(want) {
        let f = w2.sqrt() / (2.0 * PI);
        assert!((mode.frequency - f).abs() < 1e-9 * f, "{mode:?} vs {f}");
        let shares: f64 = mode.energy.iter().map(|e| e.1).sum();
        assert!((shares - 1.0).abs() < 1e-12);
    }
    // In the slow mode the lower mass swings √2 times as far: it has the larger share.
    assert_eq!(lin.modes[0].energy[0].0, "m1");
}

#[test]
fn double_pendulum_mode_vectors_are_the_closed_form_shapes() {
    // The hanging chain of two unit masses on unit rods: angle shapes (1, ±√2), so
    // the horizontal displacements x1 = θ1, x2 = θ1 + θ2 are (1, 1 + √2) (slow) and
    // (1, 1 − √2) (fast), normalized to the largest 1; nothing moves vertically.
    let mut model = chain(2);
    for (i, inst) in model.instances.iter_mut().take(2).enumerate() {
        inst.params[1] = 0.0;
        inst.params[2] = -((i + 1) as f64);
    }
    let lin = linearized(model);
    let r2 = 2f64.sqrt();
    let want = [[r2 - 1.0, 1.0], [1.0, 1.0 - r2]];
    for (mode, w) in lin.modes.iter().zip(want) {
        assert_eq!(mode.shape.len(), 2, "{mode:?}");
        for (b, w) in mode.shape.iter().zip(w) {
            assert!((b.translation[0] - w).abs() < 1e-9, "{mode:?}");
            assert!(b.translation[1].abs() < 1e-9 && b.translation[2] == 0.0);
            assert_eq!((b.rotation, b.rotation_im), ([0.0; 3], [0.0; 3]));
            assert!(b.translation_im.iter().all(|x| x.abs() < 1e-12), "{mode:?}");
        }
        assert_eq!(
            (mode.shape[0].body.as_str(), mode.shape[1].body.as_str()),
            ("m0", "m1")
        );
    }
}

#[test]
fn damped_mode_vector_has_its_largest_entry_real_and_one() {
    let lin = linearized(spring_mass(2.0, 50.0, 3.0, 0.3, 0.1));
    let b = &lin.modes[0].shape[0];
    assert_eq!((b.translation[0], b.translation_im[0]), (1.0, 0.0));
}

#[test]
fn linearize_before_initialize_is_an_error() {
    let mut sys = System::new(spring_mass(1.0, 1.0, 0.0, 0.0, 0.0)).unwrap();
    assert_eq!(
        sys.linearize().unwrap_err(),
        fdc_runtime::RuntimeError::NotInitialized
    );
}

#[test]
fn linearizing_mid_run_leaves_the_integration_unchanged() {
    let s = Settings {
        end: 0.2,
        step: 1e-3,
        ..Settings::default()
    };
    let run = |linearize_at: Option<usize>| {
        let mut sys = System::new(pendulum(1.0, [0.6, -0.8], 9.81)).unwrap();
        sys.initialize(&s).unwrap();
        for k in 0..200 {
            if linearize_at == Some(k) {
                sys.linearize().unwrap();
            }
            sys.step(&s).unwrap();
        }
        (sys.q().to_vec(), sys.v().to_vec(), sys.lambda().to_vec())
    };
    assert_eq!(run(None), run(Some(100)));
}
