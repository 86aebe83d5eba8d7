//! JIT code against the IR interpreter, on random IR covering every operation and on
//! random inputs including signed zeros, infinities and NaN.

use crate::common;

use common::*;
use fdc_backend::{compile, BackendError, CacheMode, Options};
use fdc_ir::{Func, Graph, Id, Slot, SlotSizes, Unary};
use rand::Rng;

/// The documented bound (docs/backend.md): arithmetic, sqrt, abs, powi, min, max and
/// select are bitwise equal, and so are libm functions: they are called exactly as the
/// interpreter calls them, and `pow` is declared `nobuiltin` so that LLVM does not
/// rewrite it at any level (tiered compilation needs every level to agree).
const LIBM_ULPS: u64 = 0;

fn no_cache(opt_level: u8) -> Options {
    Options {
        opt_level,
        cache: CacheMode::Off,
    }
}

fn func(name: &str, outputs: Vec<Id>) -> Func {
    Func {
        name: name.into(),
        inputs: sizes(),
        outputs,
    }
}

/// Compiles `funcs`, runs each on `n` random input vectors, and returns the largest
/// ulp distance to the interpreter per function.
fn max_ulps(graph: &Graph, funcs: &[Func], seed: u64, n: usize, opt_level: u8) -> Vec<u64> {
    let compiled = compile(graph, funcs, &no_cache(opt_level)).expect("compiles");
    let mut r = rng(seed);
    let mut worst = vec![0; funcs.len()];
    for _ in 0..n {
        let x = inputs(&mut r);
        for (k, (f, native)) in funcs.iter().zip(&compiled.functions).enumerate() {
            let want = reference(graph, f, &x);
            let got = call(*native, &x, f.outputs.len());
            for (j, (&w, &g)) in want.iter().zip(&got).enumerate() {
                let d = ulps(w, g);
                if d > 0 && d > worst[k] {
                    eprintln!(
                        "{}: output {j} differs by {d} ulp: interp {w:e}, jit {g:e}, inputs {x:?}",
                        f.name
                    );
                }
                worst[k] = worst[k].max(d);
            }
        }
    }
    worst
}

fn uses_libm(kind: Kind) -> bool {
    matches!(
        kind,
        Kind::Pow
            | Kind::Atan2
            | Kind::Unary(
                Unary::Sin | Unary::Cos | Unary::Tan | Unary::Exp | Unary::Log | Unary::Tanh
            )
    )
}

#[test]
fn every_op_matches_the_interpreter() {
    let mut g = Graph::new();
    let mut r = rng(1);
    let base = leaves(&mut g);
    let kinds = all_kinds();
    let mut funcs = Vec::new();
    for &kind in &kinds {
        // 30 nodes of this kind applied to leaves, then 30 more that may also take
        // earlier results, so each op sees its own outputs (chains, NaN, inf) too.
        let mut pool = base.clone();
        let mut outs = Vec::new();
        for i in 0..60 {
            let from = if i < 30 { &base[..] } else { &pool[..] };
            let id = node(&mut g, &mut r, kind, from);
            pool.push(id);
            outs.push(id);
        }
        funcs.push(func(&format!("{kind:?}"), outs));
    }
    let worst = max_ulps(&g, &funcs, 2, 200, 2);
    for (kind, w) in kinds.iter().zip(worst) {
        let bound = if uses_libm(*kind) { LIBM_ULPS } else { 0 };
        assert!(
            w <= bound,
            "{kind:?}: {w} ulp from the interpreter (bound {bound})"
        );
    }
}

#[test]
fn random_dags_mixing_all_ops_match_the_interpreter() {
    let kinds = all_kinds();
    for seed in 0..4 {
        let mut g = Graph::new();
        let mut r = rng(100 + seed);
        let mut pool = leaves(&mut g);
        let mut nodes = Vec::new();
        for _ in 0..400 {
            // Pure arithmetic most of the time, like real element functions.
            let kind = if r.random_bool(0.6) {
                [Kind::Add, Kind::Sub, Kind::Mul, Kind::Div][r.random_range(0..4)]
            } else {
                kinds[r.random_range(0..kinds.len())]
            };
            let id = node(&mut g, &mut r, kind, &pool);
            pool.push(id);
            nodes.push(id);
        }
        // Two functions sharing the graph: every 7th node, and the last 50.
        let f1 = func("sparse", nodes.iter().copied().step_by(7).collect());
        let f2 = func("tail", nodes[nodes.len() - 50..].to_vec());
        let worst = max_ulps(&g, &[f1, f2], 200 + seed, 150, 2);
        // Through chains a libm ulp could grow; none observed: the code is the same
        // sequence of operations and libm calls as the interpreter's.
        assert_eq!(worst, vec![0, 0], "seed {seed}");
    }
}

#[test]
fn all_optimization_levels_agree_with_the_interpreter() {
    let mut g = Graph::new();
    let mut r = rng(7);
    let mut pool = leaves(&mut g);
    let kinds = all_kinds();
    for _ in 0..150 {
        let kind = kinds[r.random_range(0..kinds.len())];
        let id = node(&mut g, &mut r, kind, &pool);
        pool.push(id);
    }
    let f = func("mixed", pool[pool.len() - 40..].to_vec());
    for level in 0..=3 {
        assert_eq!(
            max_ulps(&g, std::slice::from_ref(&f), 8, 120, level),
            vec![0],
            "O{level}"
        );
    }
}

#[test]
fn powi_follows_square_and_multiply_for_every_exponent() {
    let mut g = Graph::new();
    let x = g.input(Slot::Q, 0);
    let exps: Vec<i32> = (-40..=40)
        .chain([i32::MAX, i32::MIN, 1 << 20, -(1 << 20) - 1])
        .collect();
    let outs: Vec<Id> = exps.iter().map(|&n| g.powi(x, n)).collect();
    let f = Func {
        name: "powi".into(),
        inputs: SlotSizes([1, 0, 0, 0, 0, 0, 0, 0]),
        outputs: outs,
    };
    let c = compile(&g, std::slice::from_ref(&f), &no_cache(2)).unwrap();
    let mut r = rng(3);
    let mut xs: Vec<f64> = SPECIAL.to_vec();
    xs.extend((0..120).map(|_| r.random_range(-1.7..1.7)));
    xs.extend([1.0000001, 0.9999999, -1.0000001]);
    for &v in &xs {
        let mut inp: [Vec<f64>; 8] = Default::default();
        inp[0] = vec![v];
        let want = reference(&g, &f, &inp);
        let got = call(c.functions[0], &inp, exps.len());
        for (k, n) in exps.iter().enumerate() {
            assert_eq!(
                ulps(want[k], got[k]),
                0,
                "powi({v:e}, {n}): {} vs {}",
                want[k],
                got[k]
            );
        }
        // Independent checks of the convention: x^0 = 1 even for NaN, x^-1 = 1/x.
        assert_eq!(got[40], 1.0);
        assert_eq!(got[39].to_bits(), (1.0 / v).to_bits(), "1/x for {v}");
        assert_eq!(got[42].to_bits(), (v * v).to_bits(), "x*x for {v}");
    }
}

#[test]
fn min_max_and_selects_on_signed_zeros_and_nan() {
    let mut g = Graph::new();
    let a = g.input(Slot::Q, 0);
    let b = g.input(Slot::Q, 1);
    let one = g.constant(1.0);
    let two = g.constant(2.0);
    let mut outs = vec![g.min(a, b), g.max(a, b)];
    outs.extend(CMPS.iter().map(|&c| g.select(c, a, b, one, two)));
    let f = Func {
        name: "minmax".into(),
        inputs: SlotSizes([2, 0, 0, 0, 0, 0, 0, 0]),
        outputs: outs,
    };
    let c = compile(&g, std::slice::from_ref(&f), &no_cache(2)).unwrap();
    let vals = [
        0.0,
        -0.0,
        f64::NAN,
        -f64::NAN,
        1.0,
        -1.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
    ];
    for &x in &vals {
        for &y in &vals {
            let mut inp: [Vec<f64>; 8] = Default::default();
            inp[0] = vec![x, y];
            let want = reference(&g, &f, &inp);
            let got = call(c.functions[0], &inp, 8);
            for k in 0..8 {
                assert_eq!(
                    ulps(want[k], got[k]),
                    0,
                    "output {k} for ({x:?}, {y:?}): interp {:?} jit {:?}",
                    want[k],
                    got[k]
                );
                // Signed zeros must match bit for bit, not just compare equal.
                if !want[k].is_nan() {
                    assert_eq!(
                        want[k].to_bits(),
                        got[k].to_bits(),
                        "output {k} ({x:?}, {y:?})"
                    );
                }
            }
            // Independent of the interpreter: a NaN operand yields the other one.
            if x.is_nan() && !y.is_nan() {
                assert_eq!(got[0].to_bits(), y.to_bits());
                assert_eq!(got[1].to_bits(), y.to_bits());
            }
            // `!=` is the only comparison that is true for NaN.
            if x.is_nan() || y.is_nan() {
                assert_eq!(&got[2..], &[2.0, 2.0, 2.0, 2.0, 2.0, 1.0]);
            }
        }
    }
}

#[test]
fn a_large_function_compiles_and_matches() {
    // A long chain with heavy sharing: exponential as a tree, linear as a DAG.
    let mut g = Graph::new();
    let mut r = rng(11);
    let mut pool = leaves(&mut g);
    for _ in 0..20_000 {
        let kind = [Kind::Add, Kind::Sub, Kind::Mul, Kind::Unary(Unary::Sin)][r.random_range(0..4)];
        let n = pool.len();
        let window = &pool[n.saturating_sub(8)..];
        let id = node(&mut g, &mut r, kind, window);
        pool.push(id);
    }
    let f = func("large", pool.iter().rev().step_by(97).copied().collect());
    assert_eq!(max_ulps(&g, &[f], 12, 20, 2), vec![0]);
}

#[test]
fn constant_outputs_and_repeated_outputs() {
    let mut g = Graph::new();
    let c = g.constant(-0.0);
    let nan = g.constant(f64::from_bits(0x7ff8_0000_0000_0001));
    let t = g.input(Slot::T, 0);
    let f = Func {
        name: "consts".into(),
        inputs: SlotSizes([0, 0, 0, 0, 0, 0, 0, 1]),
        outputs: vec![c, t, c, nan, t],
    };
    let comp = compile(&g, &[f], &no_cache(2)).unwrap();
    let mut inp: [Vec<f64>; 8] = Default::default();
    inp[7] = vec![4.25];
    let out = call(comp.functions[0], &inp, 5);
    assert_eq!(out[0].to_bits(), (-0.0f64).to_bits());
    assert_eq!(out[1], 4.25);
    assert_eq!(out[2].to_bits(), (-0.0f64).to_bits());
    assert!(out[3].is_nan());
    assert_eq!(out[4], 4.25);
}

#[test]
fn bad_ir_and_options_are_errors_not_panics() {
    let mut g = Graph::new();
    let x = g.input(Slot::P, 2);
    let s = g.sym(9);
    let y = g.add2(x, s);
    let sz = SlotSizes([0, 0, 0, 0, 3, 0, 0, 0]);
    let mk = |outputs| Func {
        name: "bad".into(),
        inputs: sz,
        outputs,
    };
    let err = compile(&g, &[mk(vec![y])], &no_cache(2)).unwrap_err();
    assert!(
        matches!(&err, BackendError::InvalidIr { msg, .. } if msg.contains("symbol s9")),
        "{err}"
    );

    let small = Func {
        name: "small".into(),
        inputs: SlotSizes([0, 0, 0, 0, 2, 0, 0, 0]),
        outputs: vec![x],
    };
    let err = compile(&g, &[small], &no_cache(2)).unwrap_err();
    assert!(err.to_string().contains("reads p[2]"), "{err}");

    let mut big = Graph::new();
    let far = (0..100).map(|i| big.constant(i as f64)).last().unwrap();
    let err = compile(&g, &[mk(vec![far])], &no_cache(2)).unwrap_err();
    assert!(err.to_string().contains("%99"), "{err}");

    let err = compile(&g, &[mk(vec![x])], &no_cache(4)).unwrap_err();
    assert!(matches!(err, BackendError::InvalidOptions(_)), "{err}");

    // The good function compiles on its own.
    let ok = compile(&g, &[mk(vec![x])], &no_cache(2)).unwrap();
    let mut inp: [Vec<f64>; 8] = Default::default();
    inp[4] = vec![0.0, 0.0, 6.5];
    assert_eq!(call(ok.functions[0], &inp, 1), vec![6.5]);
}

#[test]
fn no_functions_is_fine() {
    let g = Graph::new();
    let c = compile(&g, &[], &no_cache(2)).unwrap();
    assert!(c.functions.is_empty());
}

#[test]
fn select_picks_by_each_comparison() {
    // Closed-form truth table, independent of the interpreter.
    let mut g = Graph::new();
    let a = g.input(Slot::V, 0);
    let b = g.input(Slot::V, 1);
    let t = g.constant(10.0);
    let f = g.constant(20.0);
    let outs: Vec<Id> = CMPS.iter().map(|&c| g.select(c, a, b, t, f)).collect();
    let func = Func {
        name: "sel".into(),
        inputs: SlotSizes([0, 2, 0, 0, 0, 0, 0, 0]),
        outputs: outs,
    };
    let c = compile(&g, &[func], &no_cache(2)).unwrap();
    let run = |x: f64, y: f64| {
        let mut inp: [Vec<f64>; 8] = Default::default();
        inp[1] = vec![x, y];
        call(c.functions[0], &inp, 6)
    };
    // order: Lt Le Gt Ge Eq Ne
    assert_eq!(run(1.0, 2.0), [10.0, 10.0, 20.0, 20.0, 20.0, 10.0]);
    assert_eq!(run(2.0, 2.0), [20.0, 10.0, 20.0, 10.0, 10.0, 20.0]);
    assert_eq!(run(3.0, 2.0), [20.0, 20.0, 10.0, 10.0, 20.0, 10.0]);
    assert_eq!(run(0.0, -0.0), [20.0, 10.0, 20.0, 10.0, 10.0, 20.0]);
    assert_eq!(run(f64::NAN, 1.0), [20.0, 20.0, 20.0, 20.0, 20.0, 10.0]);
}

/// The cubic Hermite piece through (x0, y0, d0), (x1, y1, d1) at x, written in the
/// Hermite basis (not the coefficients the IR stores), for an independent check.
fn hermite_basis(x0: f64, x1: f64, y0: f64, y1: f64, d0: f64, d1: f64, x: f64) -> f64 {
    let h = x1 - x0;
    let s = (x - x0) / h;
    let h00 = 2.0 * s.powi(3) - 3.0 * s * s + 1.0;
    let h10 = s.powi(3) - 2.0 * s * s + s;
    let h01 = -2.0 * s.powi(3) + 3.0 * s * s;
    let h11 = s.powi(3) - s * s;
    h00 * y0 + h10 * h * d0 + h01 * y1 + h11 * h * d1
}

#[test]
fn splines_match_the_interpreter_bitwise_and_the_hermite_basis() {
    let xs = [-3.0, -1.0, 0.0, 0.5, 1.0, 2.0, 3.5];
    let ys = [1.0, -2.0, 0.0, 0.25, 3.0, -1.0, 2.0];
    let ds = [0.0, 1.5, -0.5, 2.0, 0.0, -3.0, 0.1];
    let mut g = Graph::new();
    let t = g.add_table(fdc_ir::SplineTable::hermite(&xs, &ys, &ds).unwrap());
    let x = g.input(Slot::T, 0);
    let outs: Vec<Id> = (0..=3).map(|d| g.spline(t, d, x)).collect();
    let f = Func {
        name: "s".into(),
        inputs: SlotSizes([0, 0, 0, 0, 0, 0, 0, 1]),
        outputs: outs,
    };
    for level in [0, 2] {
        let c = compile(&g, std::slice::from_ref(&f), &no_cache(level)).unwrap();
        let mut probes: Vec<f64> = (0..=400).map(|k| -5.0 + k as f64 * 0.025).collect();
        probes.extend(xs);
        probes.extend([0.0, -0.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, 1e300]);
        for &xv in &probes {
            let mut inp: [Vec<f64>; 8] = Default::default();
            inp[7] = vec![xv];
            let want = reference(&g, &f, &inp);
            let got = call(c.functions[0], &inp, 4);
            for d in 0..4 {
                assert_eq!(ulps(want[d], got[d]), 0, "O{level} d{d} x={xv}");
            }
            // Inside the data: the Hermite basis; outside: the end tangent line.
            let v = want[0];
            let exact = if xv < xs[0] {
                ys[0] + ds[0] * (xv - xs[0])
            } else if xv >= xs[6] {
                ys[6] + ds[6] * (xv - xs[6])
            } else if xv.is_finite() {
                let i = xs.iter().rposition(|&k| k <= xv).unwrap();
                hermite_basis(xs[i], xs[i + 1], ys[i], ys[i + 1], ds[i], ds[i + 1], xv)
            } else {
                continue;
            };
            if xv.is_finite() && xv.abs() < 10.0 {
                assert!((v - exact).abs() < 1e-12, "x={xv}: {v} vs {exact}");
            }
        }
    }
}

/// A 100,001-point table (the size that once cost 3 KB of compiler memory per point,
/// docs/reliability.md) through the raw-data globals: at 3,000 points spread over the
/// whole table and its ends, the compiled value and slope are the interpreter's bit for
/// bit and the Hermite basis' (and its derivative's) within rounding. Data: sin on
/// [0, 100] with its exact slopes, so the pieces differ everywhere.
#[test]
fn a_table_of_100001_points_matches_the_hermite_basis_everywhere() {
    let n = 100_001;
    let xs: Vec<f64> = (0..n).map(|i| i as f64 * 1e-3).collect();
    let ys: Vec<f64> = xs.iter().map(|x| x.sin()).collect();
    let ds: Vec<f64> = xs.iter().map(|x| x.cos()).collect();
    let mut g = Graph::new();
    let t = g.add_table(fdc_ir::SplineTable::hermite(&xs, &ys, &ds).unwrap());
    let x = g.input(Slot::T, 0);
    let outs = vec![g.spline(t, 0, x), g.spline(t, 1, x)];
    let f = Func {
        name: "big".into(),
        inputs: SlotSizes([0, 0, 0, 0, 0, 0, 0, 1]),
        outputs: outs,
    };
    let c = compile(&g, std::slice::from_ref(&f), &no_cache(2)).unwrap();
    let mut r = rng(22);
    let mut probes: Vec<f64> = (0..3_000).map(|_| r.random_range(0.0..100.0)).collect();
    probes.extend([0.0, 1e-3, 50.0, 99.999, 100.0, -1.0, 101.0]);
    for &xv in &probes {
        let mut inp: [Vec<f64>; 8] = Default::default();
        inp[7] = vec![xv];
        let want = reference(&g, &f, &inp);
        let got = call(c.functions[0], &inp, 2);
        assert_eq!(
            (ulps(want[0], got[0]), ulps(want[1], got[1])),
            (0, 0),
            "x={xv}"
        );
        let (value, slope) = if xv < 0.0 {
            (ys[0] + ds[0] * xv, ds[0])
        } else if xv >= xs[n - 1] {
            (ys[n - 1] + ds[n - 1] * (xv - xs[n - 1]), ds[n - 1])
        } else {
            let i = xs.partition_point(|&k| k <= xv) - 1;
            let h = 1e-5;
            let at = |x| hermite_basis(xs[i], xs[i + 1], ys[i], ys[i + 1], ds[i], ds[i + 1], x);
            // The slope by central difference of the piece's closed form (error h²/6·f''').
            (at(xv), (at(xv + h) - at(xv - h)) / (2.0 * h))
        };
        assert!(
            (got[0] - value).abs() < 1e-12,
            "x={xv}: {} vs {value}",
            got[0]
        );
        assert!(
            (got[1] - slope).abs() < 1e-8,
            "x={xv}: {} vs {slope}",
            got[1]
        );
        // And the data itself: sin and its slope within the cubic's error (h⁴/384).
        assert!((got[0] - xv.sin()).abs() < 1e-13 || !(0.0..100.0).contains(&xv));
    }
}

#[test]
fn a_spline_of_a_missing_table_is_an_error_not_a_panic() {
    let mut g = Graph::new();
    let x = g.input(Slot::T, 0);
    let s = g.add(fdc_ir::Op::Spline(3, 0, x));
    let f = Func {
        name: "bad".into(),
        inputs: SlotSizes([0, 0, 0, 0, 0, 0, 0, 1]),
        outputs: vec![s],
    };
    let err = compile(&g, &[f], &no_cache(2)).unwrap_err();
    assert!(err.to_string().contains("table 3"), "{err}");
}
