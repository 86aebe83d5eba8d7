//! The degrees of freedom of a lowered model before any code is generated: the
//! constraint Jacobian B at the initial configuration as written, evaluated with the IR
//! interpreter, and its independent rows by the runtime's own redundancy test
//! (`fdc_runtime::redundant_rows`), so `fdc check` states the count a run finds.

use fdc_diff::{Block, Role};
use fdc_ir::interp;
use fdc_lower::LoweredModel;

/// The number of redundant constraint rows at the initial configuration as written
/// (`None` if an element's functions cannot be evaluated there, e.g. a NaN
/// coordinate). The run decides at the assembled configuration; the two agree unless
/// the model as written sits exactly at a singular configuration.
pub fn redundant_rows(l: &LoweredModel) -> Option<usize> {
    let q = initial_q(l)?;
    let mut rows: Vec<Vec<(usize, f64)>> = vec![Vec::new(); l.nl];
    for inst in &l.instances {
        let ty = &l.types[inst.type_index];
        if ty.nl == 0 {
            continue;
        }
        let (f, blocks) = ty.role(Role::Ic)?;
        let local_q: Vec<f64> = inst.q_map.iter().map(|&g| q[g]).collect();
        let out = eval(l, f, &local_q, ty.nv, ty.nl, &inst.params)?;
        // Ic: sparse M, then sparse B (nl × nv) with its values after M's.
        let (Block::Sparse { entries: m, .. }, Block::Sparse { entries: b, .. }) =
            (blocks.first()?, blocks.get(1)?)
        else {
            return None;
        };
        for (k, &(j, i)) in b.iter().enumerate() {
            let x = out[m.len() + k];
            if !x.is_finite() {
                return None;
            }
            if x != 0.0 {
                rows[inst.lambda_map[j as usize]].push((inst.v_map[i as usize], x));
            }
        }
    }
    for r in &mut rows {
        // Two entries of one instance on one global dof (an element connecting a body
        // twice) add up.
        r.sort_by_key(|e| e.0);
        r.dedup_by(|a, b| {
            if a.0 == b.0 {
                b.1 += a.1;
                true
            } else {
                false
            }
        });
    }
    Some(fdc_runtime::redundant_rows(l.nv, &rows).len())
}

/// The global q at t = 0 as written: every owner's `Init` (q₀ first).
fn initial_q(l: &LoweredModel) -> Option<Vec<f64>> {
    let mut q = vec![f64::NAN; l.nq];
    for inst in &l.instances {
        let ty = &l.types[inst.type_index];
        if !ty.owns_coordinates {
            continue;
        }
        let (f, _) = ty.role(Role::Init)?;
        let out = eval(l, f, &[], ty.nv, ty.nl, &inst.params)?;
        for (k, &g) in inst.q_map.iter().enumerate() {
            q[g] = *out.get(k)?;
        }
    }
    q.iter().all(|x| x.is_finite()).then_some(q)
}

/// One role at rest (v = v̇ = λ = Δ = 0, t = 0).
fn eval(
    l: &LoweredModel,
    f: &fdc_ir::Func,
    q: &[f64],
    nv: usize,
    nl: usize,
    p: &[f64],
) -> Option<Vec<f64>> {
    let zv = vec![0.0; nv];
    let zl = vec![0.0; nl];
    let c = [0.0; 4];
    let t = [0.0];
    interp::eval(&l.graph, &f.outputs, &[q, &zv, &zv, &zl, p, &c, &zv, &t]).ok()
}
