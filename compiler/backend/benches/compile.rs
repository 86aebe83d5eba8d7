//! Compile time (cold, cache hit) and time per call, JIT against the interpreter, for
//! synthetic element functions of growing size. Not a test: run with
//!
//! ```sh
//! cargo bench -p fdc-backend --bench compile
//! ```
//!
//! The functions are built like a body chain: per body, a rotation matrix from a
//! quaternion, relative positions and velocities to the previous body, a
//! spring-damper force with its length `sqrt`, a `tanh` friction term and a
//! `select` clamp, and then "Jacobian" outputs: products of those intermediates with
//! the integrator coefficients, which is the shape of the `iter` role.

use fdc_backend::{compile, CacheMode, Options};
use fdc_ir::interp;
use fdc_ir::{Cmp, Func, Graph, Id, Slot, SlotSizes, V3};
use std::time::Instant;

#[path = "../tests/backend/common/elements.rs"]
mod elements;

fn quat_to_mat(g: &mut Graph, q: [Id; 4]) -> [[Id; 3]; 3] {
    let two = g.constant(2.0);
    let one = g.constant(1.0);
    let m = |g: &mut Graph, a: Id, b: Id| {
        let p = g.mul(a, b);
        g.mul(two, p)
    };
    let [w, x, y, z] = q;
    let (xx, yy, zz) = (m(g, x, x), m(g, y, y), m(g, z, z));
    let (xy, xz, yz) = (m(g, x, y), m(g, x, z), m(g, y, z));
    let (wx, wy, wz) = (m(g, w, x), m(g, w, y), m(g, w, z));
    let d = |g: &mut Graph, a: Id, b: Id| {
        let s = g.add2(a, b);
        g.sub(one, s)
    };
    let r00 = d(g, yy, zz);
    let r11 = d(g, xx, zz);
    let r22 = d(g, xx, yy);
    let r01 = g.sub(xy, wz);
    let r10 = g.add2(xy, wz);
    let r02 = g.add2(xz, wy);
    let r20 = g.sub(xz, wy);
    let r12 = g.sub(yz, wx);
    let r21 = g.add2(yz, wx);
    [[r00, r01, r02], [r10, r11, r12], [r20, r21, r22]]
}

/// A chain of `n` bodies: one function with the force and a dense block of
/// derivative-like products (the `iter` shape).
fn chain(n: usize) -> (Graph, Func) {
    let mut g = Graph::new();
    let f = chain_into(&mut g, n, 1.0);
    (g, f)
}

/// [`chain`] into an existing graph, with spring rest length `rest`.
fn chain_into(g: &mut Graph, n: usize, rest: f64) -> Func {
    let g = &mut *g;
    let c: Vec<Id> = (0..4).map(|i| g.input(Slot::C, i)).collect();
    let mut outputs = Vec::new();
    let mut prev: Option<(V3, V3)> = None;
    for b in 0..n {
        let qi = |g: &mut Graph, k: usize| g.input(Slot::Q, 7 * b + k);
        let pos: V3 = [qi(g, 0), qi(g, 1), qi(g, 2)];
        let quat = [qi(g, 3), qi(g, 4), qi(g, 5), qi(g, 6)];
        let vel: V3 = std::array::from_fn(|k| g.input(Slot::V, 6 * b + k));
        let omega: V3 = std::array::from_fn(|k| g.input(Slot::V, 6 * b + 3 + k));
        let rot = quat_to_mat(g, quat);
        let arm_local = [
            g.input(Slot::P, 4 * b),
            g.input(Slot::P, 4 * b + 1),
            g.constant(0.5),
        ];
        let arm = g.mat_vec(rot, arm_local);
        let attach = g.v3_add(pos, arm);
        let w_x_arm = g.cross(omega, arm);
        let vattach = g.v3_add(vel, w_x_arm);
        let (p0, v0) = prev.unwrap_or_else(|| (g.v3_const([0.0; 3]), g.v3_const([0.0; 3])));
        let d = g.v3_sub(attach, p0);
        let dv = g.v3_sub(vattach, v0);
        let len = g.norm(d);
        let k = g.input(Slot::P, 4 * b + 2);
        let damp = g.input(Slot::P, 4 * b + 3);
        let rest = g.constant(rest);
        let stretch = g.sub(len, rest);
        let inv = g.div(rest, len);
        let dir = g.v3_scale(inv, d);
        let rate = g.dot(dir, dv);
        let fric = g.tanh(rate);
        let ks = g.mul(k, stretch);
        let cr = g.mul(damp, fric);
        let mag0 = g.add2(ks, cr);
        let zero = g.constant(0.0);
        let mag = g.select(Cmp::Lt, stretch, zero, zero, mag0);
        let force = g.v3_scale(mag, dir);
        let torque = g.cross(arm, force);
        outputs.extend(force);
        outputs.extend(torque);
        // Derivative-like block: every force/torque component times the coefficients
        // and the direction cosines, 6 × 12 products per body.
        let c1 = g.mul(c[2], c[3]);
        let c2 = g.mul(c[1], c[3]);
        let c2h = g.mul(c2, c[3]);
        for &f in force.iter().chain(&torque) {
            for j in 0..3 {
                for &r in &rot[j] {
                    let a = g.mul(f, r);
                    let bb = g.mul(c1, a);
                    let cc = g.mul(c2h, dir[j]);
                    let e = g.add2(bb, cc);
                    let ee = g.mul(e, inv);
                    outputs.push(ee);
                }
                let s = g.mul(c[0], dir[j]);
                let t = g.mul(s, f);
                outputs.push(t);
            }
        }
        prev = Some((attach, vattach));
    }
    let inputs = SlotSizes([7 * n, 6 * n, 0, 0, 4 * n, 4, 0, 1]);
    Func {
        name: format!("chain{n}_iter_{rest}"),
        inputs,
        outputs,
    }
}

fn per_call_ns(mut f: impl FnMut(), min_ms: f64) -> f64 {
    let mut iters = 1u64;
    loop {
        let t = Instant::now();
        for _ in 0..iters {
            f();
        }
        let el = t.elapsed().as_secs_f64() * 1e3;
        if el >= min_ms {
            return el * 1e6 / iters as f64;
        }
        iters *= 4;
    }
}

/// CPU time of the calling thread (compilation is single-threaded), in ms.
fn thread_cpu_ms() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid clock id and a valid out pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 * 1e3 + ts.tv_nsec as f64 * 1e-6
}

/// Compiles cold (empty cache) and warm, measures the first function per call
/// against the interpreter, and prints one row.
fn row(label: &str, g: &Graph, funcs: &[Func]) {
    let dir = tempfile::tempdir().expect("temp dir");
    let opts = Options {
        opt_level: 2,
        cache: CacheMode::Dir(dir.path().to_path_buf()),
    };
    let c0 = thread_cpu_ms();
    let cold = compile(g, funcs, &opts).expect("compiles");
    let cold_cpu = thread_cpu_ms() - c0;
    assert!(!cold.cache_hit);
    // Best of three hits (the first may pay for page-cache misses).
    let (mut hit, mut hit_cpu) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..3 {
        let c0 = thread_cpu_ms();
        let warm = compile(g, funcs, &opts).expect("compiles");
        hit_cpu = hit_cpu.min(thread_cpu_ms() - c0);
        assert!(warm.cache_hit);
        hit = hit.min(warm.timings.total);
    }
    let f = &funcs[0];
    let ins: Vec<Vec<f64>> = Slot::ALL
        .iter()
        .map(|&s| {
            (0..f.inputs.get(s))
                .map(|i| 0.1 + (i % 13) as f64 * 0.37)
                .collect()
        })
        .collect();
    let mut out = vec![0.0; f.outputs.len()];
    let jit = cold.functions[0];
    let jit_ns = per_call_ns(
        || unsafe {
            jit(
                ins[0].as_ptr(),
                ins[1].as_ptr(),
                ins[2].as_ptr(),
                ins[3].as_ptr(),
                ins[4].as_ptr(),
                ins[5].as_ptr(),
                ins[6].as_ptr(),
                ins[7].as_ptr(),
                out.as_mut_ptr(),
            );
            std::hint::black_box(&mut out);
        },
        200.0,
    );
    let slices: interp::Inputs = std::array::from_fn(|i| ins[i].as_slice());
    let want = interp::eval(g, &f.outputs, &slices).expect("evaluates");
    assert!(want
        .iter()
        .zip(&out)
        .all(|(a, b)| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())));
    let interp_ns = per_call_ns(
        || {
            std::hint::black_box(interp::eval(g, &f.outputs, &slices).expect("evaluates"));
        },
        200.0,
    );
    let t = cold.timings;
    println!(
        "{label:<24} {:>6} {:>4} | {:>8.1} {:>8.1} {:>7.1} {:>7.1} {:>7.1} {:>6.1} | {:>6.2} {:>6.2} | {:>8.0} {:>9.0}",
        g.len(),
        funcs.len(),
        t.total,
        cold_cpu,
        t.emit,
        t.optimize,
        t.codegen,
        t.link,
        hit,
        hit_cpu,
        jit_ns,
        interp_ns
    );
}

fn main() {
    println!(
        "LLVM {} (opt level 2); times in ms, per call in ns",
        fdc_backend::llvm_version()
    );
    println!(
        "{:<24} {:>6} {:>4} | {:>8} {:>8} {:>7} {:>7} {:>7} {:>6} | {:>6} {:>6} | {:>8} {:>9}",
        "case",
        "nodes",
        "fns",
        "cold",
        "cold cpu",
        "emit",
        "opt",
        "codegen",
        "link",
        "hit",
        "hit cpu",
        "jit",
        "interp"
    );
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let want = |name: &str| args.is_empty() || args.iter().any(|a| a == name);
    if want("pendulum") {
        let mut g = Graph::new();
        let funcs: Vec<Func> = elements::pendulum(&mut g)
            .into_iter()
            .flat_map(|t| t.roles.into_iter().map(|(_, f, _)| f))
            .filter(|f| !f.outputs.is_empty())
            .collect();
        row("pendulum roles", &g, &funcs);
    }
    if want("model") {
        // Every role of the element types of a pendulum-like model (rigid body,
        // spring-damper, spherical joint, driver), built by the differentiation crate.
        let mut g = Graph::new();
        let funcs: Vec<Func> = elements::model(&mut g)
            .into_iter()
            .flat_map(|t| t.roles.into_iter().map(|(_, f, _)| f))
            .filter(|f| !f.outputs.is_empty())
            .collect();
        // Report the spring-damper's `iter` per call (the first function is measured).
        let iter = funcs
            .iter()
            .position(|f| f.name.contains("spring") && f.name.ends_with("iter"))
            .unwrap_or(0);
        let mut funcs = funcs;
        funcs.swap(0, iter);
        row("model roles", &g, &funcs);
    }
    if want("module") {
        // A model-sized module: nine functions of the one-body shape (different
        // constants, so nothing is shared), like the roles of a few element types.
        let mut g = Graph::new();
        let funcs: Vec<Func> = (0..9)
            .map(|k| chain_into(&mut g, 1, 1.0 + k as f64))
            .collect();
        row("module 9 x 1-body", &g, &funcs);
    }
    for n in [1, 20, 100] {
        if want(&n.to_string()) {
            let (g, f) = chain(n);
            row(&format!("one fn, {n}-body chain"), &g, &[f]);
        }
    }
}
