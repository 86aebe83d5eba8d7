//! Helpers shared by the integration tests: calling a compiled function, random IR and
//! random inputs, and comparing results with the interpreter.
#![allow(dead_code)]

pub mod elements;

use fdc_ir::interp;
use fdc_ir::{Cmp, Func, Graph, Id, Slot, SlotSizes, SplineTable, Unary};
use fdc_runtime::table::ElementFn;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Every slot gets this many inputs in the random tests.
pub const PER_SLOT: usize = 3;

pub fn sizes() -> SlotSizes {
    SlotSizes([PER_SLOT; 8])
}

pub fn rng(seed: u64) -> StdRng {
    StdRng::seed_from_u64(seed)
}

/// Calls a native function on `inputs` (one vector per slot).
pub fn call(f: ElementFn, inputs: &[Vec<f64>; 8], n_out: usize) -> Vec<f64> {
    let mut out = vec![f64::from_bits(0x7ff4_dead_beef_0000); n_out];
    let p: Vec<*const f64> = inputs.iter().map(|v| v.as_ptr()).collect();
    // SAFETY: every slot has at least the size the function was declared with, and
    // `out` has one entry per output.
    unsafe {
        f(
            p[0],
            p[1],
            p[2],
            p[3],
            p[4],
            p[5],
            p[6],
            p[7],
            out.as_mut_ptr(),
        )
    };
    out
}

/// The interpreter's values for the same inputs.
pub fn reference(graph: &Graph, func: &Func, inputs: &[Vec<f64>; 8]) -> Vec<f64> {
    let slices: interp::Inputs = std::array::from_fn(|i| inputs[i].as_slice());
    interp::eval(graph, &func.outputs, &slices).expect("valid IR")
}

/// Distance in units in the last place (0 for equal values, also for two NaNs).
pub fn ulps(a: f64, b: f64) -> u64 {
    if a.is_nan() && b.is_nan() {
        return 0;
    }
    if a.is_nan() || b.is_nan() {
        return u64::MAX;
    }
    let ord = |x: f64| {
        let i = x.to_bits() as i64;
        if i < 0 {
            i64::MIN.wrapping_sub(i)
        } else {
            i
        }
    };
    ord(a).abs_diff(ord(b))
}

/// Values that exercise the special cases: signed zeros, infinities, NaN, extremes.
pub const SPECIAL: [f64; 12] = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    2.0,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::NAN,
    f64::MIN_POSITIVE,
    1e300,
    -3.0,
];

/// One random input value: mostly ordinary numbers, sometimes special ones, and often
/// one of a few small integers so that comparisons for equality come out true.
pub fn value(r: &mut StdRng) -> f64 {
    match r.random_range(0..10) {
        0 => SPECIAL[r.random_range(0..SPECIAL.len())],
        1 | 2 => r.random_range(-2..=2) as f64,
        3 => r.random_range(-1e3..1e3),
        _ => r.random_range(-4.0..4.0),
    }
}

pub fn inputs(r: &mut StdRng) -> [Vec<f64>; 8] {
    std::array::from_fn(|_| (0..PER_SLOT).map(|_| value(r)).collect())
}

/// The leaves of a random graph: every input of every slot and a few constants.
pub fn leaves(g: &mut Graph) -> Vec<Id> {
    let mut ids = Vec::new();
    for s in Slot::ALL {
        for i in 0..PER_SLOT {
            ids.push(g.input(s, i));
        }
    }
    // 2.0, 0.5 and -1.0 are exponents LLVM rewrites `pow` for.
    for c in [
        0.0,
        -0.0,
        1.0,
        -1.0,
        2.0,
        0.5,
        -2.5,
        3.0,
        f64::INFINITY,
        f64::NAN,
        0.1,
    ] {
        ids.push(g.constant(c));
    }
    ids
}

pub const UNARIES: [Unary; 9] = [
    Unary::Neg,
    Unary::Sqrt,
    Unary::Sin,
    Unary::Cos,
    Unary::Tan,
    Unary::Exp,
    Unary::Log,
    Unary::Tanh,
    Unary::Abs,
];

pub const CMPS: [Cmp; 6] = [Cmp::Lt, Cmp::Le, Cmp::Gt, Cmp::Ge, Cmp::Eq, Cmp::Ne];

pub const POWI_EXPONENTS: [i32; 14] = [0, 1, -1, 2, -2, 3, -3, 5, -7, 8, 13, -16, 31, i32::MIN];

/// Kinds of operation, one per IR op variant (unaries, comparisons and powi exponents
/// are chosen at random within a kind).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Unary(Unary),
    Add,
    Sub,
    Mul,
    Div,
    Powi,
    Pow,
    Atan2,
    Min,
    Max,
    Select(Cmp),
    /// A spline node of this derivative order on one of [`spline_tables`].
    Spline(u8),
}

/// Three spline tables of different sizes (2, 7 and 13 knots, so the search has
/// 0, 2-3 and 3-4 steps), with knots on the small integers the random inputs often
/// take, so that `x` lands exactly on a knot too.
pub fn spline_tables(g: &mut Graph) -> Vec<u32> {
    let tables = [
        (vec![-1.0, 2.0], vec![0.5, -1.5], vec![1.0, -0.25]),
        (
            vec![-3.0, -1.0, 0.0, 0.5, 1.0, 2.0, 3.5],
            vec![1.0, -2.0, 0.0, 0.25, 3.0, -1.0, 2.0],
            vec![0.0, 1.5, -0.5, 2.0, 0.0, -3.0, 0.1],
        ),
        (
            (0..13).map(|i| i as f64 * 0.7 - 4.0).collect(),
            (0..13).map(|i| ((i * 7) % 5) as f64 - 2.0).collect(),
            (0..13).map(|i| ((i * 3) % 4) as f64 * 0.3 - 0.4).collect(),
        ),
    ];
    tables
        .into_iter()
        .map(|(xs, ys, ds)| g.add_table(SplineTable::hermite(&xs, &ys, &ds).expect("valid table")))
        .collect()
}

pub fn all_kinds() -> Vec<Kind> {
    let mut k: Vec<Kind> = UNARIES.iter().map(|&u| Kind::Unary(u)).collect();
    k.extend([
        Kind::Add,
        Kind::Sub,
        Kind::Mul,
        Kind::Div,
        Kind::Powi,
        Kind::Pow,
        Kind::Atan2,
        Kind::Min,
        Kind::Max,
    ]);
    k.extend(CMPS.iter().map(|&c| Kind::Select(c)));
    k.extend((0..=3).map(Kind::Spline));
    k
}

/// Adds one node of `kind` with operands picked from `pool`.
pub fn node(g: &mut Graph, r: &mut StdRng, kind: Kind, pool: &[Id]) -> Id {
    let [a, b, t, f] = std::array::from_fn(|_| pool[r.random_range(0..pool.len())]);
    match kind {
        Kind::Unary(u) => g.unary(u, a),
        Kind::Add => g.add2(a, b),
        Kind::Sub => g.sub(a, b),
        Kind::Mul => g.mul(a, b),
        Kind::Div => g.div(a, b),
        Kind::Powi => {
            let n = POWI_EXPONENTS[r.random_range(0..POWI_EXPONENTS.len())];
            g.powi(a, n)
        }
        Kind::Pow => g.pow(a, b),
        Kind::Atan2 => g.atan2(a, b),
        Kind::Min => g.min(a, b),
        Kind::Max => g.max(a, b),
        Kind::Select(c) => g.select(c, a, b, t, f),
        Kind::Spline(d) => {
            let tables = spline_tables(g);
            let t = tables[r.random_range(0..tables.len())];
            g.spline(t, d, a)
        }
    }
}
