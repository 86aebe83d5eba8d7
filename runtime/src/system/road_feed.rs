//! Data roads under tyres: before every element evaluation that sees a configuration
//! (residual, iteration matrix, initial conditions, outputs, linearization), each
//! tyre that rolls on an OpenCRG road gets the road's local tangent plane under its
//! wheel centre written into its parameter slots `plane_x, plane_y, plane_h,
//! plane_gx, plane_gy, plane_mu` (freedyn2's scheme, docs/roads.md). A data road
//! cannot live in generated code; inside one evaluation the tyre sees a plane that is
//! exact at the centre, and its derivatives in the iteration matrix are the plane's.
//!
//! The search along the reference line starts from the previous call's interval (one
//! hint per tyre), which gives bitwise the numbers of a full search
//! (`fdc_road::Road::plane_hinted`), so results do not depend on the call history:
//! reruns are bitwise equal. Nothing here allocates after [`Feed::new`].

use super::Inst;
use crate::model::{quat_matrix, RoadContact, Roads};
use crate::RuntimeError;

/// The roads of a model and, per contact, its search hint and the centre (x, y) the
/// slots were last written for (the iteration matrix follows the residual at the same
/// trial state: the second call finds the plane already there).
#[derive(Clone, Debug, Default)]
pub(super) struct Feed {
    roads: Roads,
    hint: Vec<usize>,
    last: Vec<[f64; 2]>,
}

impl Feed {
    /// Checks every contact against the instances and the size of q.
    pub(super) fn new(roads: Roads, inst: &[Inst], nq: usize) -> Result<Feed, RuntimeError> {
        for c in &roads.contacts {
            let bad = |why: &str| {
                RuntimeError::BadModel(format!("road contact of instance {}: {why}", c.instance))
            };
            let e = inst
                .get(c.instance)
                .ok_or_else(|| bad("no such instance"))?;
            if c.road >= roads.roads.len() {
                return Err(bad("no such road"));
            }
            if c.slots.iter().any(|&p| p >= e.params.len()) {
                return Err(bad("a plane slot is not a parameter of the instance"));
            }
            if c.q.iter().any(|&g| g >= nq) {
                return Err(bad("a body coordinate is out of range"));
            }
        }
        let n = roads.contacts.len();
        Ok(Feed {
            roads,
            hint: vec![0; n],
            // NaN: never equal, so the first call writes.
            last: vec![[f64::NAN; 2]; n],
        })
    }

    /// Writes each contact's tangent plane at its wheel centre in the configuration
    /// `q` into its instance's slots.
    pub(super) fn feed(&mut self, inst: &mut [Inst], q: &[f64]) {
        for (k, c) in self.roads.contacts.iter().enumerate() {
            let [x, y] = centre_xy(c, q);
            if self.last[k] == [x, y] {
                continue;
            }
            self.last[k] = [x, y];
            let road = &self.roads.roads[c.road];
            let p = road.plane_hinted(x, y, c.mu_base, &mut self.hint[k]);
            let slots = &mut inst[c.instance].params;
            let values = [p.x0, p.y0, p.h0, p.gx, p.gy, p.mu - c.mu_base];
            for (&s, v) in c.slots.iter().zip(values) {
                slots[s] = v;
            }
        }
    }

    /// The roads and contacts (for the model's fingerprint).
    pub(super) fn roads(&self) -> &Roads {
        &self.roads
    }

    /// Forgets the last centres, so that the next call writes every plane (after the
    /// parameters were replaced from outside, e.g. a restored snapshot).
    pub(super) fn invalidate(&mut self) {
        self.last.fill([f64::NAN; 2]);
    }
}

/// The global (x, y) of the wheel centre: R + rot(θ) u for the body coordinates
/// q = [R; θ] (θ a unit quaternion, scalar first) and the body-fixed offset u.
fn centre_xy(c: &RoadContact, q: &[f64]) -> [f64; 2] {
    let m = quat_matrix([q[c.q[3]], q[c.q[4]], q[c.q[5]], q[c.q[6]]]);
    let u = c.offset;
    let dot = |row: [f64; 3]| row[0] * u[0] + row[1] * u[1] + row[2] * u[2];
    [q[c.q[0]] + dot(m[0]), q[c.q[1]] + dot(m[1])]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_centre_is_the_rotated_offset() {
        // A quarter turn about z (w = cos 45°, d = sin 45°) maps u = (1, 2, 3) to
        // (−2, 1, 3); R = (10, 20, 30) at q[0..3].
        let h = std::f64::consts::FRAC_1_SQRT_2;
        let q = [10.0, 20.0, 30.0, h, 0.0, 0.0, h];
        let c = RoadContact {
            instance: 0,
            road: 0,
            q: [0, 1, 2, 3, 4, 5, 6],
            offset: [1.0, 2.0, 3.0],
            slots: [0; 6],
            mu_base: 1.0,
        };
        let [x, y] = centre_xy(&c, &q);
        assert!(
            (x - 8.0).abs() < 1e-12 && (y - 21.0).abs() < 1e-12,
            "{x} {y}"
        );
        // About x by 90°: u = (1, 2, 3) → (1, −3, 2).
        let q = [0.0, 0.0, 0.0, h, h, 0.0, 0.0];
        let [x, y] = centre_xy(&c, &q);
        assert!(
            (x - 1.0).abs() < 1e-12 && (y + 3.0).abs() < 1e-12,
            "{x} {y}"
        );
    }
}
