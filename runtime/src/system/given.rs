//! `given`: initial coordinates the user marks as given. A body name holds all of its
//! position dofs in the assembly (a crank angle); `body.position.x|y|z` holds one
//! translation of its position, `body.velocity.x|y|z` one translational velocity
//! (global) and `body.omega_body.x|y|z` one angular velocity (body axes, rigid bodies)
//! in the velocity projection. The projection then corrects only the other velocity
//! dofs: a pendulum started with a given angular rate keeps that rate exactly, and its
//! centre of mass gets the velocity the joint asks for.

use super::*;

/// The dofs `given` holds: per velocity dof, in the position assembly and in the
/// velocity projection.
pub(super) struct Held {
    pub(super) position: Vec<bool>,
    pub(super) velocity: Vec<bool>,
}

impl Held {
    /// Whether any velocity dof is held.
    pub(super) fn velocities(&self) -> bool {
        self.velocity.iter().any(|&h| h)
    }
}

impl System {
    /// The dofs of the entries of `given` (an unknown body or coordinate is a bad
    /// setting).
    pub(super) fn held(&self, given: &[String]) -> Result<Held, RuntimeError> {
        let mut held = Held {
            position: vec![false; self.nv],
            velocity: vec![false; self.nv],
        };
        for entry in given {
            let (name, coordinate) = match entry.split_once('.') {
                Some((n, c)) => (n, Some(c)),
                None => (entry.as_str(), None),
            };
            let body = self
                .inst
                .iter()
                .find(|e| e.name == name && self.table.types[e.ty].owns_coordinates)
                .ok_or_else(|| {
                    RuntimeError::BadSettings(format!(
                        "`given` names `{name}`, which is not a body of the model"
                    ))
                })?;
            let Some(coordinate) = coordinate else {
                for &g in &body.v_map {
                    held.position[g] = true;
                }
                continue;
            };
            let (dof, velocity) =
                coordinate_dof(coordinate, body.v_map.len()).ok_or_else(|| {
                    RuntimeError::BadSettings(format!(
                        "`given` names `{entry}`: a body's coordinate is `position.x`, \
                     `velocity.x` or `omega_body.x` (y, z alike; `omega_body` of a rigid \
                     body only)"
                    ))
                })?;
            let g = body.v_map[dof];
            if velocity {
                held.velocity[g] = true;
            } else {
                held.position[g] = true;
            }
        }
        Ok(held)
    }

    /// Sets the rows and columns of `dead` unknowns of the IC matrix to the unit
    /// matrix (their correction is 0) and, with `mu`, the diagonal of the other
    /// constraint rows to −μ (the damping of the assembly).
    pub(super) fn cut_ic(&mut self, dead: &[bool], mu: Option<f64>) {
        let (nv, nx) = (self.nv, self.nv + self.nl);
        for col in 0..nx {
            for pos in self.icp.col_ptr[col]..self.icp.col_ptr[col + 1] {
                let r = self.icp.row_idx[pos];
                if dead[r] || dead[col] {
                    self.icv[pos] = if r == col { 1.0 } else { 0.0 };
                } else if let (true, Some(mu)) = (r == col && r >= nv, mu) {
                    self.icv[pos] = -mu;
                }
            }
        }
    }

    /// The held velocity dofs and the constraint rows that say nothing new once they
    /// are held, as dead unknowns of the IC matrix (after `assemble_ic`).
    pub(super) fn dead_velocity_unknowns(&self, held: &[bool]) -> Vec<bool> {
        let nv = self.nv;
        let mut dead = vec![false; nv + self.nl];
        dead[..nv].copy_from_slice(held);
        for l in redundant::redundant_rows(nv, &self.free_b_rows(held)) {
            dead[nv + l] = true;
        }
        dead
    }
}

/// The velocity dof of `coordinate` (`position.x`, `velocity.y`, `omega_body.z`) of a
/// body with `nv` velocity dofs, and whether it is a velocity.
fn coordinate_dof(coordinate: &str, nv: usize) -> Option<(usize, bool)> {
    let (what, axis) = coordinate.split_once('.')?;
    let k = ["x", "y", "z"].iter().position(|a| *a == axis)?;
    match what {
        "position" => Some((k, false)),
        "velocity" => Some((k, true)),
        "omega_body" if nv == 6 => Some((3 + k, true)),
        _ => None,
    }
}
