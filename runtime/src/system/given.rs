//! `given`: initial coordinates the user marks as given. A body name holds all of its
//! position dofs in the assembly; `body.position.x|y|z` holds one translation of its
//! position and `body.angle.x|y|z` its rotation about one body axis (the assembly's
//! correction about that axis is zero: a crank turning about its body z axis keeps its
//! angle, the rest of the loop closes around it). `body.velocity.x|y|z` holds one
//! translational velocity (global) and `body.omega_body.x|y|z` one angular velocity
//! (body axes, rigid bodies) in the velocity projection. The projection then corrects only the other velocity
//! dofs: a pendulum started with a given angular rate keeps that rate exactly, and its
//! centre of mass gets the velocity the joint asks for.

use super::*;

/// The dofs `given` holds: per velocity dof, in the position assembly and in the
/// velocity projection.
pub(super) struct Held {
    pub(super) position: Vec<bool>,
    pub(super) velocity: Vec<bool>,
    /// The entries of `given` that hold a velocity, as written (for the error when
    /// they contradict a constraint).
    pub(super) velocity_names: Vec<String>,
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
            velocity_names: Vec::new(),
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
                     `angle.x`, `velocity.x` or `omega_body.x` (y, z alike; `angle` and \
                     `omega_body` of a rigid body only)"
                    ))
                })?;
            let g = body.v_map[dof];
            if velocity {
                held.velocity[g] = true;
                held.velocity_names.push(entry.clone());
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

    /// The instance and the label of constraint row `l`.
    pub(super) fn row_owner(&self, l: usize) -> (String, String) {
        for e in &self.inst {
            if let Some(k) = e.lambda_map.iter().position(|&g| g == l) {
                return (
                    e.name.clone(),
                    self.table.types[e.ty].multipliers[k].clone(),
                );
            }
        }
        (String::new(), String::new())
    }

    /// After a projection that did not converge with velocities held: the constraint
    /// row they contradict, a dead row (redundant once they are held, so the
    /// projection cannot correct it) that keeps a residual, the largest such.
    pub(super) fn contradicted(&self, held: &Held) -> Option<RuntimeError> {
        let dead = self.dead_velocity_unknowns(&held.velocity);
        let tol = 1e-12 * (1.0 + inf_norm(&self.v));
        let (l, residual) = (0..self.nl)
            .filter(|&l| dead[self.nv + l])
            .map(|l| (l, self.ic_g[l].abs()))
            .fold(None, |a: Option<(usize, f64)>, b| match a {
                Some(a) if a.1 >= b.1 => Some(a),
                _ => Some(b),
            })?;
        (residual > tol).then(|| {
            let (instance, row) = self.row_owner(l);
            RuntimeError::GivenVelocities {
                given: held.velocity_names.clone(),
                instance,
                row,
                residual,
            }
        })
    }
}

/// The velocity dof of `coordinate` (`position.x`, `angle.x`, `velocity.y`,
/// `omega_body.z`) of a
/// body with `nv` velocity dofs, and whether it is a velocity.
fn coordinate_dof(coordinate: &str, nv: usize) -> Option<(usize, bool)> {
    let (what, axis) = coordinate.split_once('.')?;
    let k = ["x", "y", "z"].iter().position(|a| *a == axis)?;
    match what {
        "position" => Some((k, false)),
        "angle" if nv == 6 => Some((3 + k, false)),
        "velocity" => Some((k, true)),
        "omega_body" if nv == 6 => Some((3 + k, true)),
        _ => None,
    }
}
