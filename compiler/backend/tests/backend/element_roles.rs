//! Every role of every element type of a pendulum-like model (built with the
//! differentiation crate, as the driver will), compiled in one module and run against
//! the interpreter on random inputs.

use crate::common;

use common::elements;
use common::{call, reference, rng, ulps};
use fdc_backend::{compile, CacheMode, Options};
use fdc_ir::{Func, Graph, Slot};
use rand::Rng;

#[test]
fn every_role_of_every_element_matches_the_interpreter() {
    let mut g = Graph::new();
    let types = elements::model(&mut g);
    let funcs: Vec<Func> = types
        .iter()
        .flat_map(|t| t.roles.iter().map(|(_, f, _)| f.clone()))
        .collect();
    let labels: Vec<String> = types
        .iter()
        .flat_map(|t| {
            t.roles
                .iter()
                .map(|(r, _, _)| format!("{}.{}", t.name, r.name()))
        })
        .collect();
    assert!(funcs.len() >= 4 * 5, "{} roles", funcs.len());
    let opts = Options {
        opt_level: 2,
        cache: CacheMode::Off,
    };
    let total: usize = funcs.iter().map(|f| f.outputs.len()).sum();
    assert!(total > 500, "{total} outputs");
    let compiled = compile(&g, &funcs, &opts).expect("all roles compile");
    let mut r = rng(21);
    for (k, f) in funcs.iter().enumerate() {
        for _ in 0..100 {
            // Arbitrary state, including unnormalized quaternions: the interpreter and
            // the JIT must agree on any input, not only physical ones.
            let x: [Vec<f64>; 8] = std::array::from_fn(|s| {
                let n = f.inputs.get(Slot::ALL[s]);
                (0..n).map(|_| r.random_range(-2.0..2.0)).collect()
            });
            let want = reference(&g, f, &x);
            let got = call(compiled.functions[k], &x, f.outputs.len());
            for (j, (&w, &v)) in want.iter().zip(&got).enumerate() {
                assert_eq!(
                    ulps(w, v),
                    0,
                    "{} output {j}: interp {w:e}, jit {v:e}",
                    labels[k]
                );
            }
        }
    }
}
