//! Element types built with the differentiation crate's builder, as the driver will
//! build them from the stdlib: every role of each is a real `Func` to compile. Defined
//! here (not borrowed from another crate's tests) so the backend's tests depend only on
//! `fdc-diff`'s public API.

use fdc_diff::{Coordinates, ElementBuilder, ElementFunctions};
use fdc_ir::{Graph, V3};

fn p3(eb: &mut ElementBuilder, at: usize) -> V3 {
    [eb.param(at), eb.param(at + 1), eb.param(at + 2)]
}

/// Rigid body under gravity with gyroscopic torque. Parameters
/// [m, J̄(3), g(3), R0(3), θ0(4), v0(3), ω0(3)].
pub fn body(g: &mut Graph) -> ElementFunctions {
    let mut eb = ElementBuilder::new(g, "body", Coordinates::RigidBody, 1, 20);
    let b = eb.body(0);
    let m = eb.param(0);
    let j = p3(&mut eb, 1);
    let grav = p3(&mut eb, 4);
    let g = eb.graph();
    let weight = g.v3_scale(m, grav);
    let inertial = g.v3_scale(m, b.acc);
    let f = g.v3_sub(weight, inertial);
    let origin = g.v3_const([0.0; 3]);
    let ja: V3 = [0, 1, 2].map(|i| g.mul(j[i], b.alpha_bar[i]));
    let ja = g.v3_neg(ja);
    let jw: V3 = [0, 1, 2].map(|i| g.mul(j[i], b.omega_bar[i]));
    let wjw = g.cross(b.omega_bar, jw);
    let gyro = g.v3_neg(wjw);
    eb.force(&b, f, origin);
    eb.body_torque(&b, ja);
    eb.set_gyroscopic(true);
    eb.body_torque(&b, gyro);
    eb.set_gyroscopic(false);
    let r0 = p3(&mut eb, 7);
    let th0 = [10, 11, 12, 13].map(|i| eb.param(i));
    let v0 = p3(&mut eb, 14);
    let w0 = p3(&mut eb, 17);
    eb.rigid_body_initial(r0, th0, v0, w0);
    eb.finish().expect("body builds")
}

/// Spring-damper between a point of each of two bodies; parameters
/// [u1(3), u2(3), k, d, l0]. Outputs its length and rate.
pub fn spring_damper(g: &mut Graph) -> ElementFunctions {
    let mut eb = ElementBuilder::new(g, "spring_damper", Coordinates::Connector, 2, 9);
    let (b1, b2) = (eb.body(0), eb.body(1));
    let (u1, u2) = (p3(&mut eb, 0), p3(&mut eb, 3));
    let [k, d, l0] = [6, 7, 8].map(|i| eb.param(i));
    let p1 = eb.point(&b1, u1);
    let p2 = eb.point(&b2, u2);
    let g = eb.graph();
    let dp = g.v3_sub(p2, p1);
    let l = g.norm(dp);
    let ldot = eb.rate(l);
    let g = eb.graph();
    let stretch = g.sub(l, l0);
    let elastic = g.mul(k, stretch);
    let viscous = g.mul(d, ldot);
    let s = g.add2(elastic, viscous);
    let dir: V3 = [0, 1, 2].map(|i| g.div(dp[i], l));
    let on1 = g.v3_scale(s, dir);
    let on2 = g.v3_neg(on1);
    eb.force(&b1, on1, u1);
    eb.force(&b2, on2, u2);
    eb.output("l", l);
    eb.output("ldot", ldot);
    eb.finish().expect("spring-damper builds")
}

/// A spherical joint to ground: the body point u stays at c. Parameters [u(3), c(3)].
pub fn spherical_ground(g: &mut Graph) -> ElementFunctions {
    let mut eb = ElementBuilder::new(g, "spherical_ground", Coordinates::Connector, 1, 6);
    let b = eb.body(0);
    let u = p3(&mut eb, 0);
    let c = p3(&mut eb, 3);
    let p = eb.point(&b, u);
    for (i, name) in ["x", "y", "z"].iter().enumerate() {
        let phi = eb.graph().sub(p[i], c[i]);
        eb.constrain(name, phi);
    }
    eb.finish().expect("spherical joint builds")
}

/// Prescribes the heading of the body's x axis, atan2 of its y and x components, to
/// a·sin(ωt); parameters [a, ω]. Exercises atan2, sin and time.
pub fn heading_driver(g: &mut Graph) -> ElementFunctions {
    let mut eb = ElementBuilder::new(g, "heading_driver", Coordinates::Connector, 1, 2);
    let b = eb.body(0);
    let [a, w] = [0, 1].map(|i| eb.param(i));
    let t = eb.time();
    let ex = eb.graph().v3_const([1.0, 0.0, 0.0]);
    let x = eb.axis(&b, ex);
    let g = eb.graph();
    let heading = g.atan2(x[1], x[0]);
    let wt = g.mul(w, t);
    let s = g.sin(wt);
    let target = g.mul(a, s);
    let phi = g.sub(heading, target);
    eb.constrain("heading", phi);
    eb.output("heading", heading);
    eb.finish().expect("driver builds")
}

/// All element types of a pendulum-like model, in one shared graph.
pub fn model(g: &mut Graph) -> Vec<ElementFunctions> {
    vec![
        body(g),
        spring_damper(g),
        spherical_ground(g),
        heading_driver(g),
    ]
}

/// A pendulum: a rigid body hanging from a spherical joint.
pub fn pendulum(g: &mut Graph) -> Vec<ElementFunctions> {
    vec![body(g), spherical_ground(g)]
}
