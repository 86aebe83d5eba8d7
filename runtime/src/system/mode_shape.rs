//! The mode vector: a mode's shape (the eigenvector in the velocity dofs, δ = N ξ)
//! mapped to the bodies' poses, for the viewer's animation and `fdc modes --json`.
//!
//! **What a body's part means.** A configuration near the reference is
//! q = q_ref ∘ exp(ε δ) (docs/modes.md), so a body of the mode moves as
//! R = R_ref + ε Re(t e^{λτ}) and A = A_ref exp(ε Re(r e^{λτ})~) with `t` the
//! translation (global axes) and `r` the rotation vector (body axes) given here.
//! Which dofs are which follows the linearization: a rigid body on R³ × SO(3)
//! (7 stored coordinates, 6 velocity dofs) has its translation in dofs 0..3 and its
//! body-fixed rotation in 3..6; an owner with at most 3 dofs (a point mass) has only a
//! translation; any other owner (an Euler-parameter body, whose rotation the runtime
//! cannot tell from its coordinates) gets its first 3 dofs as the translation and no
//! rotation.
//!
//! **Normalization.** The largest amplitude |t_i| or |r_i| over all bodies is 1 (m
//! or rad, mixed: the shape fixes ratios only) and that entry is real and positive;
//! an undamped mode's shape is then real.

use faer::Mat;

/// One body's part of a mode shape: amplitudes of its translation (global axes, m)
/// and rotation vector (body axes, rad), real and imaginary parts.
#[derive(Clone, Debug, PartialEq)]
pub struct BodyMotion {
    /// Instance name of the body.
    pub body: String,
    pub translation: [f64; 3],
    pub rotation: [f64; 3],
    pub translation_im: [f64; 3],
    pub rotation_im: [f64; 3],
}

/// The velocity dofs of one coordinate owner, sorted into translation and rotation.
#[derive(Clone, Debug)]
pub(super) struct BodyDofs {
    pub name: String,
    pub translation: Vec<usize>,
    pub rotation: Vec<usize>,
}

impl BodyDofs {
    /// The dofs of an owner with `nq` stored coordinates and velocity dofs `v_map`.
    pub fn of(name: &str, nq: usize, v_map: &[usize]) -> BodyDofs {
        let (translation, rotation) = if nq == 7 && v_map.len() == 6 {
            (v_map[..3].to_vec(), v_map[3..].to_vec())
        } else {
            (v_map[..v_map.len().min(3)].to_vec(), Vec::new())
        };
        BodyDofs {
            name: name.to_string(),
            translation,
            rotation,
        }
    }
}

/// The shape u = u_re + i u_im (nv × 1 each) per body, normalized (module doc).
/// A shape that is zero everywhere gives zero amplitudes.
pub(super) fn body_motions(
    bodies: &[BodyDofs],
    u_re: &Mat<f64>,
    u_im: &Mat<f64>,
) -> Vec<BodyMotion> {
    // The entry of largest modulus fixes scale and phase: u ← u · conj(u_k) / |u_k|².
    let mut best = (0.0f64, 1.0f64, 0.0f64);
    for b in bodies {
        for &i in b.translation.iter().chain(&b.rotation) {
            let (re, im) = (u_re[(i, 0)], u_im[(i, 0)]);
            let abs = re.hypot(im);
            if abs > best.0 {
                best = (abs, re, im);
            }
        }
    }
    let (abs, cr, ci) = best;
    let scale = if abs > 0.0 { 1.0 / (abs * abs) } else { 0.0 };
    // (a + i b)(cr − i ci) · scale
    let entry = |dofs: &[usize], k: usize| -> (f64, f64) {
        let Some(&i) = dofs.get(k) else {
            return (0.0, 0.0);
        };
        let (a, b) = (u_re[(i, 0)], u_im[(i, 0)]);
        (
            (a * cr + b * ci) * scale + 0.0,
            (b * cr - a * ci) * scale + 0.0,
        )
    };
    bodies
        .iter()
        .map(|b| {
            let t: [(f64, f64); 3] = std::array::from_fn(|k| entry(&b.translation, k));
            let r: [(f64, f64); 3] = std::array::from_fn(|k| entry(&b.rotation, k));
            BodyMotion {
                body: b.name.clone(),
                translation: t.map(|x| x.0),
                rotation: r.map(|x| x.0),
                translation_im: t.map(|x| x.1),
                rotation_im: r.map(|x| x.1),
            }
        })
        .collect()
}
