//! The roles cache's contract (`fdc_diff::stored`): a definition's bytes decide its
//! roles (equal definitions give equal bytes wherever they sit in a graph, a changed
//! literal other bytes, a parameter value none), and decoded roles compute what the
//! derived ones compute, in any graph; damaged bytes decode to nothing, never a panic.

use crate::common::{rigid_body, transfix_ground};
use fdc_diff::stored::{decode, encode};
use fdc_diff::{Coordinates, ElementBuilder, ElementFunctions};
use fdc_ir::{interp, Graph};

/// Every role's outputs at one set of inputs, as bits.
fn values(g: &Graph, ty: &ElementFunctions) -> Vec<Vec<u64>> {
    let data: Vec<Vec<f64>> = (0..8)
        .map(|s| {
            (0..32)
                .map(|i| 0.2 + 0.31 * ((i * 5 + s) % 7) as f64)
                .collect()
        })
        .collect();
    let inputs: [&[f64]; 8] = std::array::from_fn(|s| data[s].as_slice());
    (ty.roles.iter())
        .map(|(_, f, _)| {
            let v = interp::eval(g, &f.outputs, &inputs).unwrap();
            v.into_iter().map(f64::to_bits).collect()
        })
        .collect()
}

#[test]
fn decoded_roles_compute_what_the_derived_ones_do() {
    let mut g = Graph::new();
    let types = [rigid_body(&mut g, true), transfix_ground(&mut g)];
    // Into a graph that already holds other nodes: ids differ, numbers must not.
    let mut h = Graph::new();
    let _other = transfix_ground(&mut h);
    for ty in &types {
        let bytes = encode(&g, ty);
        let back = decode(&bytes, &mut h).expect("own encoding");
        assert_eq!(
            (&back.name, back.nq, back.nv, back.nl, back.np),
            (&ty.name, ty.nq, ty.nv, ty.nl, ty.np)
        );
        assert_eq!(
            (&back.outputs, &back.multipliers),
            (&ty.outputs, &ty.multipliers)
        );
        assert_eq!(back.state_params, ty.state_params);
        assert_eq!(back.roles.len(), ty.roles.len());
        for (a, b) in back.roles.iter().zip(&ty.roles) {
            assert_eq!(
                (a.0, a.1.inputs, &a.2, &a.1.name),
                (b.0, b.1.inputs, &b.2, &b.1.name)
            );
        }
        assert_eq!(values(&h, &back), values(&g, ty));
        // Encoded again from the other graph (in its id order): the same numbers.
        let mut k = Graph::new();
        let again = decode(&encode(&h, &back), &mut k).expect("re-encoded");
        assert_eq!(values(&k, &again), values(&g, ty));
    }
}

#[test]
fn damaged_bytes_decode_to_nothing() {
    let mut g = Graph::new();
    let ty = transfix_ground(&mut g);
    let bytes = encode(&g, &ty);
    // Every truncation is incomplete.
    for n in (0..bytes.len()).step_by(7) {
        assert!(
            decode(&bytes[..n], &mut Graph::new()).is_none(),
            "prefix {n}"
        );
    }
    // Flipped bytes: refused or decoded, never a panic (checksums are the cache's).
    for k in (0..bytes.len()).step_by(3) {
        let mut b = bytes.clone();
        b[k] ^= 0xa5;
        let _ = decode(&b, &mut Graph::new());
    }
    assert!(decode(b"fdc element type 1\nrubbish", &mut Graph::new()).is_none());
}

/// A force along x on body 0 of strength `c · p0`: `c` a literal, `p0` a parameter.
fn pull(g: &mut Graph, c: f64) -> Vec<u8> {
    let mut eb = ElementBuilder::new(g, "pull", Coordinates::Connector, 1, 1);
    let b = eb.body(0);
    let p = eb.param(0);
    let gr = eb.graph();
    let k = gr.constant(c);
    let s = gr.mul(k, p);
    let zero = gr.constant(0.0);
    eb.force(&b, [s, zero, zero], [zero; 3]);
    eb.definition().expect("a definition without errors")
}

#[test]
fn a_definition_is_its_nodes_not_their_place_or_values() {
    let a = pull(&mut Graph::new(), 2.0);
    // The same definition in a graph full of other nodes.
    let mut g = Graph::new();
    let _ = rigid_body(&mut g, false);
    assert_eq!(pull(&mut g, 2.0), a);
    // Another literal: another definition.
    assert_ne!(pull(&mut Graph::new(), 3.0), a);
    // A definition with errors has none (finish would fail).
    let mut h = Graph::new();
    let mut eb = ElementBuilder::new(&mut h, "bad", Coordinates::RigidBody, 2, 0);
    assert!(eb.definition().is_none());
    assert!(eb.graph().len() < 100);
}
