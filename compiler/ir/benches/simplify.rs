//! Simplifier benchmark (not a test): op counts before/after and simplify time for a
//! few generated expressions. Run with
//! `cargo bench -p fdc-ir --bench simplify`.

use fdc_ir::simplify::{simplify, Limits};
use fdc_ir::stats::stats;
use fdc_ir::{Graph, Id, Slot, M3, V3};
use std::time::{Duration, Instant};

/// Rotation matrix of a (not necessarily unit) quaternion q[o..o+4], normalized by
/// its squared norm, built the way a front end would write it entry by entry.
fn rotation(g: &mut Graph, o: usize) -> M3 {
    let q: Vec<Id> = (0..4).map(|i| g.input(Slot::Q, o + i)).collect();
    let (w, x, y, z) = (q[0], q[1], q[2], q[3]);
    let two = g.constant(2.0);
    let one = g.constant(1.0);
    let sq = |g: &mut Graph, a: Id| g.mul(a, a);
    let ww = sq(g, w);
    let xx = sq(g, x);
    let yy = sq(g, y);
    let zz = sq(g, z);
    let s1 = g.add2(ww, xx);
    let s2 = g.add2(s1, yy);
    let n2 = g.add2(s2, zz);
    let inv = g.div(one, n2);
    let s = g.mul(two, inv);
    let e = |g: &mut Graph, diag: bool, a: Id, b: Id, c: Id, d: Id, plus: bool| {
        // diag: 1 - s (a² + b²); off-diagonal: s (a b ± c d)
        if diag {
            let aa = g.mul(a, a);
            let bb = g.mul(b, b);
            let t = g.add2(aa, bb);
            let st = g.mul(s, t);
            g.sub(one, st)
        } else {
            let ab = g.mul(a, b);
            let cd = g.mul(c, d);
            let t = if plus { g.add2(ab, cd) } else { g.sub(ab, cd) };
            g.mul(s, t)
        }
    };
    [
        [
            e(g, true, y, z, y, z, true),
            e(g, false, x, y, z, w, false),
            e(g, false, x, z, y, w, true),
        ],
        [
            e(g, false, x, y, z, w, true),
            e(g, true, x, z, x, z, true),
            e(g, false, y, z, x, w, false),
        ],
        [
            e(g, false, x, z, y, w, false),
            e(g, false, y, z, x, w, true),
            e(g, true, x, y, x, y, true),
        ],
    ]
}

/// Two bodies, a rotation each; the relative rotation, both attachment points in the
/// world, the distance measured from either side, and its unit direction.
fn rotation_heavy(g: &mut Graph) -> Vec<Id> {
    let a = rotation(g, 3);
    let b = rotation(g, 10);
    let ra: V3 = [0, 1, 2].map(|i| g.input(Slot::Q, i));
    let rb: V3 = [7, 8, 9].map(|i| g.input(Slot::Q, i));
    let sa: V3 = [0, 1, 2].map(|i| g.input(Slot::P, i));
    let sb: V3 = [3, 4, 5].map(|i| g.input(Slot::P, i));
    let pa0 = g.mat_vec(a, sa);
    let pa = g.v3_add(ra, pa0);
    let pb0 = g.mat_vec(b, sb);
    let pb = g.v3_add(rb, pb0);
    let at = fdc_ir::transpose(a);
    let rel = g.mat_mul(at, b);
    let d_ab = g.v3_sub(pb, pa);
    let d_ba = g.v3_sub(pa, pb);
    let l_ab = g.norm(d_ab);
    let l_ba = g.norm(d_ba);
    let one = g.constant(1.0);
    let mut outs: Vec<Id> = rel.iter().flatten().copied().collect();
    for k in 0..3 {
        let u = g.div(d_ab[k], l_ab);
        let u1 = g.mul(u, one);
        outs.push(u1);
        let m = g.neg(d_ba[k]);
        let w = g.div(m, l_ba);
        outs.push(w);
    }
    outs.push(l_ab);
    outs
}

/// Σ of n terms c·(x_k − x_{k+1})² / 2 with the negations and unit factors a
/// generator leaves behind.
fn sum_of(g: &mut Graph, n: usize) -> Vec<Id> {
    let half = g.constant(2.0);
    let m1 = g.constant(-1.0);
    let mut terms = Vec::new();
    for k in 0..n {
        let x = g.input(Slot::Q, k);
        let y = g.input(Slot::Q, k + 1);
        let c = g.input(Slot::P, k);
        let d = g.sub(y, x);
        let nd = g.neg(d);
        let nd2 = g.mul(nd, nd);
        let cd = g.mul(c, nd2);
        let t = g.div(cd, half);
        let t = if k % 2 == 0 { g.mul(m1, t) } else { t };
        terms.push(t);
    }
    vec![g.sum(&terms).expect("terms")]
}

/// A chain of n linear springs between points q[3i..3i+3]: force on both ends.
fn chain_of(g: &mut Graph, n: usize) -> Vec<Id> {
    let mut outs = Vec::new();
    for i in 0..n {
        let p: V3 = [0, 1, 2].map(|k| g.input(Slot::Q, 3 * i + k));
        let r: V3 = [0, 1, 2].map(|k| g.input(Slot::Q, 3 * i + 3 + k));
        let k = g.input(Slot::P, 2 * i);
        let l0 = g.input(Slot::P, 2 * i + 1);
        let d = g.v3_sub(r, p);
        let l = g.norm(d);
        let ext = g.sub(l, l0);
        let s = g.mul(k, ext);
        let f = [0, 1, 2].map(|j| {
            let u = g.div(d[j], l);
            g.mul(s, u)
        });
        // The other end measures the same spring from its side.
        let d2 = g.v3_sub(p, r);
        let l2 = g.norm(d2);
        let ext2 = g.sub(l2, l0);
        let s2 = g.mul(k, ext2);
        let f2 = [0, 1, 2].map(|j| {
            let u = g.div(d[j], l2);
            let fu = g.mul(s2, u);
            g.neg(fu)
        });
        outs.extend(f);
        outs.extend(f2);
    }
    outs
}

/// CPU time of this thread (what the simplifier itself spent, whatever else runs).
fn cpu_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec we own; the clock id is valid.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return Duration::ZERO;
    }
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Builds an expression into the graph and returns its outputs.
type Builder = fn(&mut Graph) -> Vec<Id>;

fn main() {
    let cases: [(&str, Builder); 5] = [
        ("rotation-heavy (2 bodies)", rotation_heavy),
        ("100-term sum", |g| sum_of(g, 100)),
        ("chain of 100 springs", |g| chain_of(g, 100)),
        // Scaling: one function 10x bigger than an element function gets.
        ("1000-term sum", |g| sum_of(g, 1000)),
        ("chain of 1000 springs", |g| chain_of(g, 1000)),
    ];
    println!(
        "{:<28} {:>10} {:>10} {:>10} {:>10} {:>8} {:>8}  stop",
        "expression", "ops before", "ops after", "cost bef.", "cost aft.", "wall ms", "cpu ms"
    );
    for (name, build) in cases {
        let mut g = Graph::new();
        let outs = build(&mut g);
        let before = stats(&g, &outs);
        let limits = Limits::default();
        let mut best = Duration::MAX;
        let mut best_cpu = Duration::MAX;
        let mut last = None;
        for _ in 0..5 {
            let t = Instant::now();
            let c = cpu_time();
            let s = simplify(&g, &outs, &limits);
            best_cpu = best_cpu.min(cpu_time().saturating_sub(c));
            best = best.min(t.elapsed());
            last = Some(s);
        }
        let s = last.expect("ran");
        let after = stats(&s.graph, &s.outputs);
        println!(
            "{:<28} {:>10} {:>10} {:>10.1} {:>10.1} {:>8.2} {:>8.2}  {}",
            name,
            before.total,
            after.total,
            s.report.cost_before,
            s.report.cost_after,
            best.as_secs_f64() * 1e3,
            best_cpu.as_secs_f64() * 1e3,
            s.report.stop
        );
        println!("    {}", s.report);
        println!("    before: {before}");
        println!("    after:  {after}");
    }
}
