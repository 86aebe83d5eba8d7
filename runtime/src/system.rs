//! The assembled system and the HHT integrator (theory §6–§9).
//!
//! Global unknowns of a step are x = [v̇; λ] (n_v + n_l); residual rows use the same
//! numbering, so one map per element serves rows and columns. All work arrays are
//! allocated in [`System::new`]; a time step only moves numbers.

use std::time::Instant;

pub mod linearize;
mod redundant;

use crate::assembly::Pattern;
use crate::error::{quoted, Culprit, RuntimeError, SimError, SimErrorKind};
use crate::linear::{make_solver, LinearSolver, LinearSolverKind};
use crate::model::{Model, RuntimeInput};
use crate::settings::{
    ErrorWeights, Form, Newton, Predictor, Settings, KEEP_MATRIX_RATE, LEGACY_DEFAULT_EPS,
};
use crate::table::{Block, ElementType, FunctionTable, Role, ABI_VERSION};

/// Receives result rows as they become available, so a failed run keeps its rows.
pub trait ResultSink {
    /// Channel names, `time` excluded (see [`System::channel_names`]).
    fn header(&mut self, names: &[String]);
    fn row(&mut self, t: f64, values: &[f64]);
}

/// A sink that keeps everything in memory (tests, small runs).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MemorySink {
    pub names: Vec<String>,
    pub times: Vec<f64>,
    pub rows: Vec<Vec<f64>>,
}

impl MemorySink {
    /// Values of the named channel over time, if it exists.
    pub fn channel(&self, name: &str) -> Option<Vec<f64>> {
        let i = self.names.iter().position(|n| n == name)?;
        Some(self.rows.iter().map(|r| r[i]).collect())
    }
}

impl ResultSink for MemorySink {
    fn header(&mut self, names: &[String]) {
        self.names = names.to_vec();
    }
    fn row(&mut self, t: f64, values: &[f64]) {
        self.times.push(t);
        self.rows.push(values.to_vec());
    }
}

/// Wall-clock time per accepted step, in seconds.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct TimingStats {
    pub steps: usize,
    pub min: f64,
    pub median: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
}

/// What a run (or the steps so far) did.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct RunStats {
    /// Time reached.
    pub t: f64,
    pub steps: usize,
    pub rejected: usize,
    pub newton_iterations: usize,
    pub residual_evaluations: usize,
    pub factorizations: usize,
    /// Factorizations that chose a new pivot order (the others kept the last one).
    pub full_factorizations: usize,
    /// Largest velocity change of the last Newton correction of a step, relative to
    /// 1 + ‖v‖∞ (what to monitor with fixed corrections).
    pub max_correction: f64,
    pub timing: Option<TimingStats>,
}

/// One accepted step of [`System::step`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepReport {
    pub t: f64,
    /// Substeps taken to cover the step (more than one after a rejection).
    pub substeps: usize,
    pub newton_iterations: usize,
    pub correction: f64,
}

/// Most steps whose wall-clock time is recorded with `Settings::timing`.
pub const MAX_TIMED_STEPS: usize = 1 << 20;

/// Threshold of the initial position check ‖Φ(q₀, 0)‖∞.
pub const POSITION_TOL: f64 = 1e-10;

struct Inst {
    name: String,
    ty: usize,
    params: Vec<f64>,
    q_map: Vec<usize>,
    v_map: Vec<usize>,
    lambda_map: Vec<usize>,
    /// Local unknown [v̇; λ] → global unknown.
    x_map: Vec<usize>,
    /// Value index in the iteration matrix of every `Iter` entry.
    iter_pos: Vec<usize>,
    /// Global row of every `Iter` entry and the positions before constraint removal.
    iter_row: Vec<usize>,
    iter_pos_all: Vec<usize>,
    /// The same for `IterNoqv` (empty if the type has none).
    noqv_pos: Vec<usize>,
    noqv_row: Vec<usize>,
    noqv_pos_all: Vec<usize>,
    /// Value indices in the initial-condition matrix of the M, B and Bᵀ entries.
    ic_m_pos: Vec<usize>,
    ic_b_pos: Vec<usize>,
    ic_bt_pos: Vec<usize>,
    ic_b_pos_all: Vec<usize>,
}

/// Local gather buffers and the role output, sized for the largest element type.
struct Scratch {
    q: Vec<f64>,
    v: Vec<f64>,
    vd: Vec<f64>,
    l: Vec<f64>,
    d: Vec<f64>,
    out: Vec<f64>,
}

/// Global arrays an element call reads from.
struct View<'a> {
    q: &'a [f64],
    v: &'a [f64],
    vd: &'a [f64],
    lam: &'a [f64],
    delta: &'a [f64],
    t: f64,
}

/// The accepted state as element inputs (δ = 0). A macro rather than a method so that
/// the borrows stay field by field and other fields can be written meanwhile.
macro_rules! accepted_view {
    ($s:expr) => {
        View {
            q: &$s.q,
            v: &$s.v,
            vd: &$s.vd,
            lam: &$s.lam,
            delta: &$s.zeros_v,
            t: $s.t,
        }
    };
}

/// A Newton iterate at t_{n+1} as element inputs: configuration `q` (the trial one,
/// or the last accepted for the update role), trial velocities, and v̇, λ from the
/// unknowns `x`.
macro_rules! trial_view {
    ($s:expr, $q:expr) => {
        View {
            q: $q,
            v: &$s.vt,
            vd: &$s.x[..$s.nv],
            lam: &$s.x[$s.nv..],
            delta: &$s.delta,
            t: $s.t_new,
        }
    };
}

/// Calls `role` of `e` on the gathered local arrays; the output is in `s.out`.
/// Returns false if the element type has no such role.
fn call(
    types: &[ElementType],
    e: &Inst,
    role: Role,
    s: &mut Scratch,
    w: &View,
    c: &[f64; 4],
) -> bool {
    let Some(rf) = types[e.ty].role(role) else {
        return false;
    };
    for (k, &g) in e.q_map.iter().enumerate() {
        s.q[k] = w.q[g];
    }
    for (k, &g) in e.v_map.iter().enumerate() {
        s.v[k] = w.v[g];
        s.vd[k] = w.vd[g];
        s.d[k] = w.delta[g];
    }
    for (k, &g) in e.lambda_map.iter().enumerate() {
        s.l[k] = w.lam[g];
    }
    let t = w.t;
    // SAFETY: System::new checked that every array is at least as long as the sizes
    // the element type declares and that `out` holds the role's output.
    unsafe {
        (rf.func)(
            s.q.as_ptr(),
            s.v.as_ptr(),
            s.vd.as_ptr(),
            s.l.as_ptr(),
            e.params.as_ptr(),
            c.as_ptr(),
            s.d.as_ptr(),
            &t,
            s.out.as_mut_ptr(),
        );
    }
    true
}

/// What a role computes, for messages.
fn role_label(role: Role) -> &'static str {
    match role {
        Role::Res => "residual",
        Role::Iter | Role::IterNoqv => "iteration matrix",
        Role::Ic => "initial conditions",
        Role::Init => "initial values",
        Role::Update => "configuration update",
        Role::Scale => "scale",
        Role::Out => "output",
        Role::Post => "state update",
    }
}

/// The failure path of a non-finite number: calls `role` of every element on `w` and
/// names the first one whose own output is not finite while its inputs are (if none,
/// the first with a non-finite output). `noqv` takes `IterNoqv` where a type has it.
/// Allocates the name; never called on a step that succeeds.
#[cold]
fn find_culprit(
    types: &[ElementType],
    inst: &[Inst],
    s: &mut Scratch,
    w: &View,
    c: &[f64; 4],
    role: Role,
    noqv: bool,
) -> Option<Culprit> {
    let finite = |x: &[f64]| x.iter().all(|a| a.is_finite());
    let mut fallback = None;
    for e in inst {
        let ty = &types[e.ty];
        let role = if noqv && role == Role::Iter && ty.role(Role::IterNoqv).is_some() {
            Role::IterNoqv
        } else {
            role
        };
        if !call(types, e, role, s, w, c) {
            continue;
        }
        let n = ty.role(role).map_or(0, |r| r.output_len());
        if finite(&s.out[..n]) {
            continue;
        }
        let culprit = Culprit {
            instance: e.name.clone(),
            role: role_label(role),
        };
        let inputs_finite = finite(&s.q[..ty.nq])
            && finite(&s.v[..ty.nv])
            && finite(&s.vd[..ty.nv])
            && finite(&s.l[..ty.nl])
            && finite(&s.d[..ty.nv])
            && w.t.is_finite();
        if inputs_finite {
            return Some(culprit);
        }
        fallback.get_or_insert(culprit);
    }
    fallback
}

enum Outcome {
    Accepted { theta: f64 },
    Rejected { cause: String },
}

/// A model ready to integrate.
pub struct System {
    table: FunctionTable,
    inst: Vec<Inst>,
    inputs: Vec<RuntimeInput>,
    nq: usize,
    nv: usize,
    nl: usize,
    labels: Vec<String>,
    channels: Vec<String>,
    s: Scratch,
    // accepted state
    t: f64,
    q: Vec<f64>,
    v: Vec<f64>,
    vd: Vec<f64>,
    lam: Vec<f64>,
    acc: Vec<f64>,
    f_n: Vec<f64>,
    scale_n: Vec<f64>,
    scale_max: Vec<f64>,
    zeros_v: Vec<f64>,
    /// [v̇; λ] of the accepted step before the last one, and the last step size (0
    /// before the first step): the linear predictor.
    x_prev: Vec<f64>,
    h_prev: f64,
    /// The linear predictor would have been closer than the constant one in the last
    /// step of the same size, for v̇ and for λ (each is extrapolated only then).
    extrapolate: [bool; 2],
    // trial state
    t_new: f64,
    x: Vec<f64>,
    qt: Vec<f64>,
    vt: Vec<f64>,
    delta: Vec<f64>,
    delta_pred: Vec<f64>,
    v_pred: Vec<f64>,
    r: Vec<f64>,
    f: Vec<f64>,
    dx: Vec<f64>,
    scale_t: Vec<f64>,
    w: Vec<f64>,
    // matrices
    jp: Pattern,
    jv: Vec<f64>,
    js: Option<Box<dyn LinearSolver>>,
    icp: Pattern,
    icv: Vec<f64>,
    ics: Option<Box<dyn LinearSolver>>,
    solver_kind: Option<LinearSolverKind>,
    ic_rhs: Vec<f64>,
    ic_phi: Vec<f64>,
    ic_g: Vec<f64>,
    ic_acc: Vec<f64>,
    row: Vec<f64>,
    /// Constraint rows found dependent at the initial configuration (λ fixed at 0).
    removed: Vec<bool>,
    warnings: Vec<String>,
    initialized: bool,
    h: f64,
    stats: RunStats,
    step_times: Vec<f64>,
}

fn expect_blocks(
    ty: &ElementType,
    role: Role,
    want: &[(usize, usize, bool)],
) -> Result<(), String> {
    let Some(rf) = ty.role(role) else {
        return Ok(());
    };
    let bad = || {
        format!(
            "element type `{}`: role `{}` has an output layout that does not match its sizes",
            ty.name,
            role.name()
        )
    };
    if rf.blocks.len() != want.len() {
        return Err(bad());
    }
    for (b, &(rows, cols, sparse)) in rf.blocks.iter().zip(want) {
        match b {
            Block::Dense { len } if !sparse && *len == rows => {}
            Block::Sparse {
                rows: r,
                cols: c,
                entries,
            } if sparse && *r == rows && *c == cols => {
                if entries
                    .iter()
                    .any(|&(i, j)| i as usize >= rows || j as usize >= cols)
                {
                    return Err(bad());
                }
            }
            _ => return Err(bad()),
        }
    }
    Ok(())
}

fn check_type(ty: &ElementType) -> Result<(), String> {
    let (nq, nv, nl) = (ty.nq, ty.nv, ty.nl);
    let n = nv + nl;
    for role in [Role::Res, Role::Iter, Role::Ic] {
        if ty.role(role).is_none() {
            return Err(format!(
                "element type `{}` has no `{}` function",
                ty.name,
                role.name()
            ));
        }
    }
    if ty.owns_coordinates {
        for role in [Role::Init, Role::Update] {
            if ty.role(role).is_none() {
                return Err(format!(
                    "body type `{}` has no `{}` function",
                    ty.name,
                    role.name()
                ));
            }
        }
    }
    if !ty.outputs.is_empty() && ty.role(Role::Out).is_none() {
        return Err(format!(
            "element type `{}` declares outputs but has no `out` function",
            ty.name
        ));
    }
    if !ty.state_params.is_empty() && ty.role(Role::Post).is_none() {
        return Err(format!(
            "element type `{}` declares state but has no `post` function",
            ty.name
        ));
    }
    if ty.multipliers.len() != nl {
        return Err(format!(
            "element type `{}` names {} multipliers but has {nl}",
            ty.name,
            ty.multipliers.len()
        ));
    }
    if let Some(&p) = ty.state_params.iter().find(|&&p| p >= ty.np) {
        return Err(format!(
            "element type `{}`: state parameter {p} out of range",
            ty.name
        ));
    }
    expect_blocks(
        ty,
        Role::Res,
        &[(nv, 1, false), (nl, 1, false), (nv, 1, false)],
    )?;
    expect_blocks(ty, Role::Iter, &[(n, n, true)])?;
    expect_blocks(ty, Role::IterNoqv, &[(n, n, true)])?;
    expect_blocks(
        ty,
        Role::Ic,
        &[
            (nv, nv, true),
            (nl, nv, true),
            (nv, 1, false),
            (nl, 1, false),
            (nl, 1, false),
            (nl, 1, false),
        ],
    )?;
    expect_blocks(ty, Role::Init, &[(nq, 1, false), (nv, 1, false)])?;
    expect_blocks(ty, Role::Update, &[(nq, 1, false)])?;
    expect_blocks(ty, Role::Scale, &[(nv, 1, false)])?;
    expect_blocks(ty, Role::Out, &[(ty.outputs.len(), 1, false)])?;
    expect_blocks(ty, Role::Post, &[(ty.state_params.len(), 1, false)])?;
    Ok(())
}

fn sparse_entries(ty: &ElementType, role: Role, block: usize) -> &[(u32, u32)] {
    match ty.role(role).map(|r| &r.blocks[block]) {
        Some(Block::Sparse { entries, .. }) => entries,
        _ => &[],
    }
}

fn inf_norm(x: &[f64]) -> f64 {
    x.iter().fold(0.0, |m, &a| m.max(a.abs()))
}

fn two_norm(x: &[f64]) -> f64 {
    x.iter().map(|a| a * a).sum::<f64>().sqrt()
}

impl System {
    /// Checks the model against its function table and builds all maps, patterns and
    /// work arrays. A model that does not fit is an error, never a panic.
    pub fn new(model: Model) -> Result<System, RuntimeError> {
        let Model {
            table,
            instances,
            nq,
            nv,
            nl,
            inputs,
        } = model;
        if table.abi_version != ABI_VERSION {
            return Err(RuntimeError::AbiVersion {
                found: table.abi_version,
                expected: ABI_VERSION,
            });
        }
        let bad = RuntimeError::BadModel;
        for ty in &table.types {
            check_type(ty).map_err(bad)?;
        }
        let nx = nv + nl;
        let mut q_owner = vec![usize::MAX; nq];
        let mut v_owner: Vec<Option<(usize, usize)>> = vec![None; nv];
        let mut l_owner: Vec<Option<(usize, usize)>> = vec![None; nl];
        let mut names = std::collections::HashSet::new();
        for (i, e) in instances.iter().enumerate() {
            if !names.insert(e.name.as_str()) {
                return Err(bad(format!("two instances are named `{}`", e.name)));
            }
            let ty = table.types.get(e.type_index).ok_or_else(|| {
                bad(format!(
                    "`{}`: element type {} does not exist",
                    e.name, e.type_index
                ))
            })?;
            let sizes = [
                ("parameters", e.params.len(), ty.np),
                ("q map entries", e.q_map.len(), ty.nq),
                ("v map entries", e.v_map.len(), ty.nv),
                ("lambda map entries", e.lambda_map.len(), ty.nl),
            ];
            for (what, got, want) in sizes {
                if got != want {
                    return Err(bad(format!(
                        "`{}` (type `{}`) has {got} {what}, the type needs {want}",
                        e.name, ty.name
                    )));
                }
            }
            let range = |map: &[usize], n: usize, what: &str| match map.iter().find(|&&g| g >= n) {
                Some(g) => Err(bad(format!(
                    "`{}`: {what} index {g} out of range (size {n})",
                    e.name
                ))),
                None => Ok(()),
            };
            range(&e.q_map, nq, "q")?;
            range(&e.v_map, nv, "v")?;
            range(&e.lambda_map, nl, "lambda")?;
            if ty.owns_coordinates {
                for &g in &e.q_map {
                    if q_owner[g] != usize::MAX {
                        return Err(bad(format!(
                            "coordinate q[{g}] is owned by two bodies (`{}`)",
                            e.name
                        )));
                    }
                    q_owner[g] = i;
                }
                for (k, &g) in e.v_map.iter().enumerate() {
                    if v_owner[g].is_some() {
                        return Err(bad(format!(
                            "velocity dof v[{g}] is owned by two bodies (`{}`)",
                            e.name
                        )));
                    }
                    v_owner[g] = Some((i, k));
                }
            }
            for (k, &g) in e.lambda_map.iter().enumerate() {
                if l_owner[g].is_some() {
                    return Err(bad(format!(
                        "multiplier lambda[{g}] belongs to two elements (`{}`)",
                        e.name
                    )));
                }
                l_owner[g] = Some((i, k));
            }
        }
        if let Some(g) = q_owner.iter().position(|&o| o == usize::MAX) {
            return Err(bad(format!("coordinate q[{g}] belongs to no body")));
        }
        if let Some(g) = v_owner.iter().position(Option::is_none) {
            return Err(bad(format!("velocity dof v[{g}] belongs to no body")));
        }
        if let Some(g) = l_owner.iter().position(Option::is_none) {
            return Err(bad(format!("multiplier lambda[{g}] belongs to no element")));
        }
        for input in &inputs {
            for &(i, p) in &input.targets {
                if i >= instances.len() || p >= instances[i].params.len() {
                    return Err(bad(format!(
                        "input `{}` targets parameter {p} of instance {i}, which does not exist",
                        input.name
                    )));
                }
            }
        }

        // Labels of the unknowns, for messages.
        let mut labels = Vec::with_capacity(nx);
        for o in &v_owner {
            let (i, k) = o.expect("checked above");
            labels.push(format!("`{}` velocity dof {k}", instances[i].name));
        }
        for o in &l_owner {
            let (i, k) = o.expect("checked above");
            let ty = &table.types[instances[i].type_index];
            labels.push(format!(
                "constraint `{}` of `{}`",
                ty.multipliers[k], instances[i].name
            ));
        }

        // Patterns: iteration matrix and initial-condition matrix.
        let mut j_entries = Vec::new();
        let mut ic_entries = Vec::new();
        let mut inst = Vec::with_capacity(instances.len());
        let mut channels = Vec::new();
        for e in instances {
            let ty = &table.types[e.type_index];
            let x_map: Vec<usize> = e
                .v_map
                .iter()
                .copied()
                .chain(e.lambda_map.iter().map(|&l| nv + l))
                .collect();
            let j0 = j_entries.len();
            for &(r, c) in sparse_entries(ty, Role::Iter, 0) {
                j_entries.push((x_map[r as usize], x_map[c as usize]));
            }
            let n0 = j_entries.len();
            for &(r, c) in sparse_entries(ty, Role::IterNoqv, 0) {
                j_entries.push((x_map[r as usize], x_map[c as usize]));
            }
            let m0 = ic_entries.len();
            for &(r, c) in sparse_entries(ty, Role::Ic, 0) {
                ic_entries.push((e.v_map[r as usize], e.v_map[c as usize]));
            }
            let b0 = ic_entries.len();
            for &(r, c) in sparse_entries(ty, Role::Ic, 1) {
                ic_entries.push((nv + e.lambda_map[r as usize], e.v_map[c as usize]));
            }
            let bt0 = ic_entries.len();
            for &(r, c) in sparse_entries(ty, Role::Ic, 1) {
                ic_entries.push((e.v_map[c as usize], nv + e.lambda_map[r as usize]));
            }
            let end = ic_entries.len();
            for o in &ty.outputs {
                // An empty output name is the instance's own channel (a model-level
                // scalar output `output z = ...;` is the channel `z`).
                channels.push(if o.is_empty() {
                    e.name.clone()
                } else {
                    format!("{}.{o}", e.name)
                });
            }
            for m in &ty.multipliers {
                channels.push(format!("{}.{m}", e.name));
            }
            inst.push((
                e,
                x_map,
                j0..n0,
                n0..j_entries.len(),
                m0..b0,
                b0..bt0,
                bt0..end,
            ));
        }
        let (jp, jmap) = Pattern::build(nx, &j_entries);
        let (icp, icmap) = Pattern::build(nx, &ic_entries);
        let inst: Vec<Inst> = inst
            .into_iter()
            .map(|(e, x_map, jr, nr, mr, br, btr)| Inst {
                name: e.name,
                ty: e.type_index,
                params: e.params,
                q_map: e.q_map,
                v_map: e.v_map,
                lambda_map: e.lambda_map,
                x_map,
                iter_pos: jmap[jr.clone()].to_vec(),
                iter_row: j_entries[jr.clone()].iter().map(|&(r, _)| r).collect(),
                iter_pos_all: jmap[jr].to_vec(),
                noqv_pos: jmap[nr.clone()].to_vec(),
                noqv_row: j_entries[nr.clone()].iter().map(|&(r, _)| r).collect(),
                noqv_pos_all: jmap[nr].to_vec(),
                ic_m_pos: icmap[mr].to_vec(),
                ic_b_pos: icmap[br.clone()].to_vec(),
                ic_b_pos_all: icmap[br].to_vec(),
                ic_bt_pos: icmap[btr].to_vec(),
            })
            .collect();

        let max =
            |f: &dyn Fn(&ElementType) -> usize| table.types.iter().map(f).max().unwrap_or(0).max(1);
        let max_out = max(&|t| {
            Role::ALL
                .iter()
                .filter_map(|&r| t.role(r).map(|rf| rf.output_len()))
                .max()
                .unwrap_or(0)
        });
        let s = Scratch {
            q: vec![0.0; max(&|t| t.nq)],
            v: vec![0.0; max(&|t| t.nv)],
            vd: vec![0.0; max(&|t| t.nv)],
            l: vec![0.0; max(&|t| t.nl)],
            d: vec![0.0; max(&|t| t.nv)],
            out: vec![0.0; max_out],
        };
        let nch = channels.len();
        Ok(System {
            table,
            inst,
            inputs,
            nq,
            nv,
            nl,
            labels,
            channels,
            s,
            t: 0.0,
            q: vec![0.0; nq],
            v: vec![0.0; nv],
            vd: vec![0.0; nv],
            lam: vec![0.0; nl],
            acc: vec![0.0; nv],
            x_prev: vec![0.0; nv + nl],
            h_prev: 0.0,
            extrapolate: [false; 2],
            f_n: vec![0.0; nv],
            scale_n: vec![0.0; nv],
            scale_max: vec![0.0; nv],
            zeros_v: vec![0.0; nv],
            t_new: 0.0,
            x: vec![0.0; nx],
            qt: vec![0.0; nq],
            vt: vec![0.0; nv],
            delta: vec![0.0; nv],
            delta_pred: vec![0.0; nv],
            v_pred: vec![0.0; nv],
            r: vec![0.0; nx],
            f: vec![0.0; nv],
            dx: vec![0.0; nx],
            scale_t: vec![0.0; nv],
            w: vec![1.0; nv],
            // One slot more than the pattern: entries of removed constraint rows go there.
            jv: vec![0.0; jp.nnz() + 1],
            jp,
            js: None,
            icv: vec![0.0; icp.nnz() + 1],
            icp,
            ics: None,
            solver_kind: None,
            ic_rhs: vec![0.0; nx],
            ic_phi: vec![0.0; nl],
            ic_g: vec![0.0; nl],
            ic_acc: vec![0.0; nl],
            row: vec![0.0; nch],
            removed: vec![false; nl],
            warnings: Vec::new(),
            initialized: false,
            h: 0.0,
            stats: RunStats::default(),
            step_times: Vec::new(),
        })
    }

    pub fn nq(&self) -> usize {
        self.nq
    }
    pub fn nv(&self) -> usize {
        self.nv
    }
    pub fn nl(&self) -> usize {
        self.nl
    }
    pub fn time(&self) -> f64 {
        self.t
    }
    /// Stored coordinates of the accepted state.
    pub fn q(&self) -> &[f64] {
        &self.q
    }
    pub fn v(&self) -> &[f64] {
        &self.v
    }
    pub fn vdot(&self) -> &[f64] {
        &self.vd
    }
    pub fn lambda(&self) -> &[f64] {
        &self.lam
    }
    /// Statistics of the steps since `initialize`.
    pub fn stats(&self) -> RunStats {
        self.final_stats()
    }
    /// Factorizations of the iteration matrix that chose a new pivot order so far
    /// (cheap: no allocation).
    pub fn full_factorizations(&self) -> usize {
        self.js.as_ref().map_or(0, |j| j.full_factorizations())
    }
    /// Nonzeros of the sparse LU factors of the iteration matrix (0 for dense).
    pub fn factor_nnz(&self) -> usize {
        self.js.as_ref().map_or(0, |j| j.factor_nnz())
    }
    /// Number of nonzeros of the iteration matrix pattern.
    pub fn iteration_nnz(&self) -> usize {
        self.jp.nnz()
    }
    /// Current parameter values of an instance (state parameters change after steps).
    pub fn params(&self, instance: usize) -> Option<&[f64]> {
        self.inst.get(instance).map(|e| e.params.as_slice())
    }

    pub fn input_index(&self, name: &str) -> Option<usize> {
        self.inputs.iter().position(|i| i.name == name)
    }

    /// Writes an input value into its parameter slots; seen by the next evaluation.
    /// An index that does not exist is ignored.
    pub fn set_input(&mut self, i: usize, value: f64) {
        if let Some(input) = self.inputs.get(i) {
            for &(e, p) in &input.targets {
                self.inst[e].params[p] = value;
            }
        }
    }

    /// `<instance>.<output>` for every `Out` output, then `<instance>.<multiplier>`,
    /// instance by instance; `time` is not included.
    pub fn channel_names(&self) -> Vec<String> {
        self.channels.clone()
    }

    fn ensure_solvers(&mut self, kind: LinearSolverKind) {
        if self.solver_kind != Some(kind) {
            self.js = Some(make_solver(kind, &self.jp));
            self.ics = Some(make_solver(kind, &self.icp));
            self.solver_kind = Some(kind);
        }
    }

    /// Evaluates `Ic` of every element at the accepted state: fills the IC matrix,
    /// [Q−h; acceleration rhs] into `ic_rhs`, Φ into `ic_phi`, B v + Φ_t into `ic_g`.
    fn assemble_ic(&mut self, c: &[f64; 4]) {
        self.icv.fill(0.0);
        self.ic_rhs.fill(0.0);
        self.ic_phi.fill(0.0);
        self.ic_g.fill(0.0);
        self.ic_acc.fill(0.0);
        let nv = self.nv;
        let w = accepted_view!(self);
        let types = &self.table.types;
        for e in &self.inst {
            let ty = &types[e.ty];
            call(types, e, Role::Ic, &mut self.s, &w, c);
            let out = &self.s.out;
            let nm = e.ic_m_pos.len();
            let nb = e.ic_b_pos.len();
            for (k, &pos) in e.ic_m_pos.iter().enumerate() {
                self.icv[pos] += out[k];
            }
            let b_entries = sparse_entries(ty, Role::Ic, 1);
            for k in 0..nb {
                let val = out[nm + k];
                self.icv[e.ic_b_pos[k]] += val;
                self.icv[e.ic_bt_pos[k]] += val;
                let (r, cc) = b_entries[k];
                self.ic_g[e.lambda_map[r as usize]] += val * self.v[e.v_map[cc as usize]];
            }
            let mut o = nm + nb;
            for k in 0..ty.nv {
                self.ic_rhs[e.v_map[k]] += out[o + k];
            }
            o += ty.nv;
            for k in 0..ty.nl {
                let l = e.lambda_map[k];
                self.ic_phi[l] += out[o + k];
                self.ic_g[l] += out[o + ty.nl + k];
                self.ic_acc[l] += out[o + 2 * ty.nl + k];
                self.ic_rhs[nv + l] += out[o + 2 * ty.nl + k];
            }
        }
        self.apply_removed_ic();
    }

    /// Removed rows become λ_k = 0: a unit diagonal, no right-hand side.
    fn apply_removed_ic(&mut self) {
        let nv = self.nv;
        for l in 0..self.nl {
            if self.removed[l] {
                let d = self
                    .icp
                    .position(nv + l, nv + l)
                    .expect("diagonal is in the pattern");
                self.icv[d] = 1.0;
                self.ic_rhs[nv + l] = 0.0;
                self.ic_g[l] = 0.0;
            }
        }
    }

    /// Finds constraint rows whose B row depends on the rows before it (model order)
    /// with the rank-revealing test of [`redundant`], which factorizes densely only the
    /// groups of rows that a sparse LDLᵀ of B Bᵀ cannot clear. Removed rows keep λ = 0
    /// for the whole run.
    fn find_redundant(&mut self) -> Vec<String> {
        let (nv, nl) = (self.nv, self.nl);
        // B rows from the IC matrix (rows nv.., columns ..nv; duplicates are merged).
        let mut rows: Vec<Vec<(usize, f64)>> = vec![Vec::new(); nl];
        for c in 0..nv {
            for pos in self.icp.col_ptr[c]..self.icp.col_ptr[c + 1] {
                let r = self.icp.row_idx[pos];
                if r >= nv {
                    rows[r - nv].push((c, self.icv[pos]));
                }
            }
        }
        let removed = redundant::redundant_rows(nv, &rows);
        let types = &self.table.types;
        self.removed.fill(false);
        let mut names = Vec::new();
        for l in removed {
            self.removed[l] = true;
            names.push(self.labels[nv + l].clone());
        }
        // Entries of removed rows go to the spare slot at the end of the value arrays.
        let (jtrash, ictrash) = (self.jp.nnz(), self.icp.nnz());
        for e in &mut self.inst {
            for k in 0..e.iter_pos.len() {
                let r = e.iter_row[k];
                let gone = r >= nv && self.removed[r - nv];
                e.iter_pos[k] = if gone { jtrash } else { e.iter_pos_all[k] };
            }
            for k in 0..e.noqv_pos.len() {
                let r = e.noqv_row[k];
                let gone = r >= nv && self.removed[r - nv];
                e.noqv_pos[k] = if gone { jtrash } else { e.noqv_pos_all[k] };
            }
            let entries = sparse_entries(&types[e.ty], Role::Ic, 1);
            for (k, &(r, _)) in entries.iter().enumerate() {
                let gone = self.removed[e.lambda_map[r as usize]];
                e.ic_b_pos[k] = if gone { ictrash } else { e.ic_b_pos_all[k] };
            }
        }
        names
    }

    /// Warnings of the last `initialize` (removed redundant constraints).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    fn ic_solve(&mut self, c: &[f64; 4]) -> Result<(), RuntimeError> {
        if let Some(k) = self.icv[..self.icp.nnz()]
            .iter()
            .position(|x| !x.is_finite())
        {
            let row = self.icp.row_idx[k];
            return Err(self.ic_not_finite(self.labels[row].clone(), Role::Ic, c));
        }
        let solver = self
            .ics
            .as_mut()
            .expect("solvers exist after ensure_solvers");
        if let Err(s) = solver.factorize(&self.icv[..self.icp.nnz()]) {
            return Err(RuntimeError::Singular {
                unknown: self.labels[s.index].clone(),
                elements: self.acting_on(s.index),
            });
        }
        let solver = self
            .ics
            .as_mut()
            .expect("solvers exist after ensure_solvers");
        solver.solve(&mut self.ic_rhs);
        if let Some(i) = self.ic_rhs.iter().position(|x| !x.is_finite()) {
            return Err(self.ic_not_finite(self.labels[i].clone(), Role::Ic, c));
        }
        Ok(())
    }

    /// A non-finite number at the initial conditions (accepted state), with the
    /// element whose `role` made it.
    #[cold]
    fn ic_not_finite(&mut self, unknown: String, role: Role, c: &[f64; 4]) -> RuntimeError {
        let w = accepted_view!(self);
        let culprit = find_culprit(
            &self.table.types,
            &self.inst,
            &mut self.s,
            &w,
            c,
            role,
            false,
        );
        RuntimeError::NotFinite { unknown, culprit }
    }

    /// A non-finite number in the step to t_new: the element whose `role` made it at
    /// the trial state. A residual read from a non-finite configuration is blamed on
    /// the body update that made the configuration.
    #[cold]
    fn trial_not_finite(
        &mut self,
        unknown: String,
        role: Role,
        c: &[f64; 4],
        noqv: bool,
    ) -> SimErrorKind {
        let types = &self.table.types;
        let mut culprit = None;
        if !self.qt.iter().all(|a| a.is_finite()) {
            // `state` evaluates `Update` on the accepted q with the trial Δ.
            let w = trial_view!(self, &self.q);
            culprit = find_culprit(types, &self.inst, &mut self.s, &w, c, Role::Update, false);
        }
        if culprit.is_none() {
            let w = trial_view!(self, &self.qt);
            culprit = find_culprit(types, &self.inst, &mut self.s, &w, c, role, noqv);
        }
        SimErrorKind::NotFinite {
            unknown,
            t_trial: self.t_new,
            culprit,
        }
    }

    /// Instance names of the elements acting on global unknown `i` (its body or
    /// constraint owner and every element connected to it), for messages.
    fn acting_on(&self, i: usize) -> Vec<String> {
        self.inst
            .iter()
            .filter(|e| e.x_map.contains(&i))
            .map(|e| e.name.clone())
            .collect()
    }

    /// The velocity dof with the largest last Newton correction, the elements acting
    /// on it and the time of the step (the cause of a rejected step).
    fn largest_correction(&self) -> String {
        let i = (0..self.nv)
            .max_by(|&a, &b| self.dx[a].abs().total_cmp(&self.dx[b].abs()))
            .unwrap_or(0);
        match self.labels.get(i) {
            Some(label) if self.nv > 0 => format!(
                "; largest correction at {label} (elements acting on it: {}) in the step to t = {}",
                quoted(&self.acting_on(i)),
                self.t_new
            ),
            _ => format!(" in the step to t = {}", self.t_new),
        }
    }

    fn coefficients(&self, settings: &Settings, h: f64) -> [f64; 4] {
        let (beta, gamma) = settings.beta_gamma();
        let a = settings.alpha;
        match settings.form {
            Form::ArnoldBruls => [0.0, (1.0 + a) * beta, (1.0 + a) * gamma, h],
            Form::Negrut => [a, beta, gamma, h],
        }
    }

    /// Initial conditions (theory §6): q₀ and v₀ from `Init`, the position check,
    /// velocity projection, consistent v̇ and λ (with the rheonomic terms of `Ic`).
    pub fn initialize(&mut self, settings: &Settings) -> Result<(), RuntimeError> {
        settings.validate().map_err(RuntimeError::BadSettings)?;
        self.ensure_solvers(settings.linear);
        self.initialized = false;
        self.warnings.clear();
        // Start from the full set of constraints.
        self.removed.fill(false);
        for e in &mut self.inst {
            e.iter_pos.copy_from_slice(&e.iter_pos_all);
            e.noqv_pos.copy_from_slice(&e.noqv_pos_all);
            e.ic_b_pos.copy_from_slice(&e.ic_b_pos_all);
        }
        self.t = 0.0;
        self.h_prev = 0.0;
        self.extrapolate = [false; 2];
        self.vd.fill(0.0);
        self.lam.fill(0.0);
        let c = self.coefficients(settings, settings.step);
        {
            let w = View {
                q: &self.q,
                v: &self.v,
                vd: &self.vd,
                lam: &self.lam,
                delta: &self.zeros_v,
                t: 0.0,
            };
            let types = &self.table.types;
            for e in &self.inst {
                if !types[e.ty].owns_coordinates {
                    continue;
                }
                call(types, e, Role::Init, &mut self.s, &w, &c);
                let nq = e.q_map.len();
                for (k, &g) in e.q_map.iter().enumerate() {
                    self.qt[g] = self.s.out[k];
                }
                for (k, &g) in e.v_map.iter().enumerate() {
                    self.vt[g] = self.s.out[nq + k];
                }
            }
        }
        self.q.copy_from_slice(&self.qt);
        self.v.copy_from_slice(&self.vt);
        if let Some(i) = self.q.iter().position(|x| !x.is_finite()) {
            return Err(self.ic_not_finite(format!("initial coordinate q[{i}]"), Role::Init, &c));
        }
        if let Some(i) = self.v.iter().position(|x| !x.is_finite()) {
            return Err(self.ic_not_finite(self.labels[i].clone(), Role::Init, &c));
        }

        // Position check: joints are built so that Φ(q₀) = 0; positions are not projected.
        self.assemble_ic(&c);
        for e in &self.inst {
            for (k, &l) in e.lambda_map.iter().enumerate() {
                let phi = self.ic_phi[l];
                if phi.is_nan() || phi.abs() > POSITION_TOL {
                    return Err(RuntimeError::InconsistentConfiguration {
                        instance: e.name.clone(),
                        row: self.table.types[e.ty].multipliers[k].clone(),
                        residual: phi,
                    });
                }
            }
        }

        // Redundant constraints (e.g. a planar loop of 3-D joints): integrate on an
        // independent set.
        let redundant = self.find_redundant();
        if !redundant.is_empty() {
            if settings.strict {
                return Err(RuntimeError::RedundantConstraints { rows: redundant });
            }
            for r in &redundant {
                self.warnings.push(format!(
                    "{r} is redundant (its Jacobian row depends on the others at the initial configuration); it was removed and its multiplier is 0"
                ));
            }
            self.assemble_ic(&c);
        }

        // Velocity projection onto B v + Φ_t = 0.
        let mut converged = self.nl == 0;
        for _ in 0..10 {
            let g = two_norm(&self.ic_g);
            if g <= 1e-12 * (1.0 + inf_norm(&self.v)) {
                converged = true;
                break;
            }
            self.ic_rhs[..self.nv].fill(0.0);
            for l in 0..self.nl {
                self.ic_rhs[self.nv + l] = -self.ic_g[l];
            }
            self.ic_solve(&c)?;
            for i in 0..self.nv {
                self.v[i] += self.ic_rhs[i];
            }
            self.assemble_ic(&c);
        }
        if !converged {
            return Err(RuntimeError::VelocityProjection {
                residual: two_norm(&self.ic_g),
            });
        }

        // Consistent accelerations and multipliers.
        self.assemble_ic(&c);
        self.ic_solve(&c)?;
        self.vd.copy_from_slice(&self.ic_rhs[..self.nv]);
        self.lam.copy_from_slice(&self.ic_rhs[self.nv..]);
        self.acc.copy_from_slice(&self.vd);

        // f₀ for the Negrut form, and the scales for the error weights.
        self.t_new = 0.0;
        self.qt.copy_from_slice(&self.q);
        self.vt.copy_from_slice(&self.v);
        self.x[..self.nv].copy_from_slice(&self.vd);
        self.x[self.nv..].copy_from_slice(&self.lam);
        self.delta.fill(0.0);
        self.residual(&c, 0.0);
        if let Some(i) = self.f.iter().position(|x| !x.is_finite()) {
            return Err(self.ic_not_finite(self.labels[i].clone(), Role::Res, &c));
        }
        self.f_n.copy_from_slice(&self.f);
        self.scales(false);
        self.scale_max.copy_from_slice(&self.scale_n);
        // Real time: the pivot order of the first factorization is kept.
        let real_time = matches!(settings.newton, Newton::Fixed(_)) && settings.adaptive.is_none();
        if let Some(js) = self.js.as_mut() {
            js.set_keep_pivots(real_time);
        }
        self.h = settings.step;
        self.stats = RunStats::default();
        self.step_times = Vec::new();
        self.reserve_timing(settings);
        self.initialized = true;
        Ok(())
    }

    /// Room for the step times up to `end` (at most [`MAX_TIMED_STEPS`]); steps beyond
    /// it are not timed rather than allocate during stepping.
    fn reserve_timing(&mut self, settings: &Settings) {
        if settings.timing && self.step_times.capacity() == 0 {
            let n = (settings.end / settings.step)
                .ceil()
                .min(MAX_TIMED_STEPS as f64) as usize
                + 16;
            self.step_times.reserve_exact(n);
        }
    }

    /// Element scales at the accepted (`trial == false`) or trial configuration.
    fn scales(&mut self, trial: bool) {
        let c = [0.0, 0.25, 0.5, 1.0];
        let w = View {
            q: if trial { &self.qt } else { &self.q },
            v: &self.v,
            vd: &self.vd,
            lam: &self.lam,
            delta: &self.zeros_v,
            t: self.t,
        };
        let dst = if trial {
            &mut self.scale_t
        } else {
            &mut self.scale_n
        };
        dst.fill(0.0);
        let types = &self.table.types;
        for e in &self.inst {
            if !types[e.ty].owns_coordinates {
                continue;
            }
            if call(types, e, Role::Scale, &mut self.s, &w, &c) {
                for (k, &g) in e.v_map.iter().enumerate() {
                    dst[g] = self.s.out[k].abs();
                }
            }
        }
    }

    /// The trial state from x: v̇, v, Δ, q = q_n ∘ exp(Δ) through `Update`.
    fn state(&mut self, c: &[f64; 4]) {
        let (bh2, gh) = (c[1] * c[3] * c[3], c[2] * c[3]);
        for i in 0..self.nv {
            let vd = self.x[i];
            self.vt[i] = self.v_pred[i] + gh * vd;
            self.delta[i] = self.delta_pred[i] + bh2 * vd;
        }
        let w = trial_view!(self, &self.q);
        let types = &self.table.types;
        for e in &self.inst {
            if !types[e.ty].owns_coordinates {
                continue;
            }
            call(types, e, Role::Update, &mut self.s, &w, c);
            for (k, &g) in e.q_map.iter().enumerate() {
                self.qt[g] = self.s.out[k];
            }
        }
    }

    /// R and f at the trial state; the Negrut form subtracts α/(1+α) f_n.
    fn residual(&mut self, c: &[f64; 4], alpha_negrut: f64) {
        self.r.fill(0.0);
        self.f.fill(0.0);
        let nv = self.nv;
        let w = trial_view!(self, &self.qt);
        let types = &self.table.types;
        for e in &self.inst {
            let ty = &types[e.ty];
            call(types, e, Role::Res, &mut self.s, &w, c);
            let out = &self.s.out;
            let n = ty.nv + ty.nl;
            for (k, &g) in e.x_map.iter().enumerate() {
                self.r[g] += out[k];
            }
            for (k, &g) in e.v_map.iter().enumerate() {
                self.f[g] += out[n + k];
            }
        }
        for l in 0..self.nl {
            if self.removed[l] {
                self.r[nv + l] = self.x[nv + l];
            }
        }
        if alpha_negrut != 0.0 {
            let k = alpha_negrut / (1.0 + alpha_negrut);
            for i in 0..nv {
                self.r[i] -= k * self.f_n[i];
            }
        }
        self.stats.residual_evaluations += 1;
    }

    /// The iteration matrix at the trial state; `noqv` takes `IterNoqv` where a type
    /// has it (the legacy option without the derivatives of the gyroscopic terms).
    fn assemble_iter(&mut self, c: &[f64; 4], noqv: bool) {
        self.jv.fill(0.0);
        let w = trial_view!(self, &self.qt);
        let types = &self.table.types;
        for e in &self.inst {
            let use_noqv = noqv && types[e.ty].role(Role::IterNoqv).is_some();
            let (role, positions) = if use_noqv {
                (Role::IterNoqv, &e.noqv_pos)
            } else {
                (Role::Iter, &e.iter_pos)
            };
            call(types, e, role, &mut self.s, &w, c);
            for (k, &pos) in positions.iter().enumerate() {
                self.jv[pos] += self.s.out[k];
            }
        }
        for l in 0..self.nl {
            if self.removed[l] {
                let d = self
                    .jp
                    .position(self.nv + l, self.nv + l)
                    .expect("diagonal is in the pattern");
                self.jv[d] = 1.0;
            }
        }
    }

    fn first_non_finite(&self, x: &[f64]) -> Option<String> {
        x.iter()
            .position(|a| !a.is_finite())
            .map(|i| self.labels[i].clone())
    }

    /// Weights of the legacy Newton norm and the error estimate.
    fn weights(&mut self, settings: &Settings, with_trial: bool) {
        for i in 0..self.nv {
            self.w[i] = match settings.weights {
                ErrorWeights::Mixed => {
                    let st = if with_trial { self.scale_t[i] } else { 0.0 };
                    1.0 + self.scale_n[i].max(st)
                }
                ErrorWeights::Legacy => {
                    let st = if with_trial { self.scale_t[i] } else { 0.0 };
                    self.scale_max[i].max(st).max(1.0)
                }
            };
        }
    }

    /// One attempt of a step of size h from the accepted state (theory §7.4).
    fn try_step(
        &mut self,
        settings: &Settings,
        h: f64,
        iters: &mut usize,
        corr: &mut f64,
    ) -> Result<Outcome, SimErrorKind> {
        let c = self.coefficients(settings, h);
        let (beta, gamma) = settings.beta_gamma();
        let alpha = settings.alpha;
        let (ap, alpha_negrut) = match settings.form {
            Form::ArnoldBruls => (alpha, 0.0),
            Form::Negrut => (0.0, alpha),
        };
        let nv = self.nv;
        self.t_new = self.t + h;
        for i in 0..nv {
            self.delta_pred[i] =
                h * self.v[i] + h * h * ((0.5 - beta) * self.acc[i] - beta * ap * self.vd[i]);
            self.v_pred[i] =
                self.v[i] + h * ((1.0 - gamma) * self.acc[i] - gamma * ap * self.vd[i]);
        }
        let legacy = matches!(settings.newton, Newton::Legacy);
        self.x[..nv].copy_from_slice(&self.vd);
        self.x[nv..].copy_from_slice(&self.lam);
        if settings.predictor == Predictor::Linear && !legacy && self.same_step(h) {
            for (part, range) in [0..nv, nv..nv + self.nl].into_iter().enumerate() {
                if self.extrapolate[part] {
                    for i in range {
                        self.x[i] += self.x[i] - self.x_prev[i];
                    }
                }
            }
        }
        self.state(&c);
        self.residual(&c, alpha_negrut);
        if let Some(u) = self.first_non_finite(&self.r) {
            return Err(self.trial_not_finite(u, Role::Res, &c, false));
        }
        let bh2 = c[1] * h * h;
        let gh = c[2] * h;
        let eps = LEGACY_DEFAULT_EPS;
        let tol_err = settings.adaptive.unwrap_or(eps);
        let cn = beta - 1.0 / (6.0 * (1.0 + alpha));
        let psi = nv as f64 * tol_err * tol_err / (cn * cn);
        let (pred_dyn, pred_con) = if legacy {
            self.weights(settings, false);
            (two_norm(&self.r[..nv]), two_norm(&self.r[nv..]) * bh2)
        } else {
            (0.0, 0.0)
        };
        let max_iter = match settings.newton {
            Newton::Fixed(n) => n,
            _ => settings.max_newton_iterations,
        };
        let mut prev_norm = f64::INFINITY;
        let phi_floor = f64::EPSILON * (1.0 + inf_norm(&self.q));
        // Velocity criterion: corrections that grow twice in a row mean divergence.
        let (mut dvd_1, mut dvd_2) = (f64::INFINITY, f64::INFINITY);
        let mut converged = false;
        let mut cause = String::new();
        // Modified Newton: the matrix of the first correction serves the next ones
        // while the corrections contract fast (the state moves by no more than the
        // first correction within a step, so the matrix hardly changes).
        let keep = settings.keep_matrix && !legacy;
        let mut new_matrix = true;
        for k in 1..=max_iter {
            *iters += 1;
            self.stats.newton_iterations += 1;
            let fresh = new_matrix;
            if fresh {
                self.assemble_iter(&c, settings.iter_noqv);
                if let Some(pos) = self.jv[..self.jp.nnz()].iter().position(|a| !a.is_finite()) {
                    let u = self.labels[self.jp_col_of(pos)].clone();
                    return Err(self.trial_not_finite(u, Role::Iter, &c, settings.iter_noqv));
                }
                let solver = self.js.as_mut().expect("solvers exist after initialize");
                self.stats.factorizations += 1;
                if let Err(s) = solver.factorize(&self.jv[..self.jp.nnz()]) {
                    return Err(SimErrorKind::Singular {
                        unknown: self.labels[s.index].clone(),
                        elements: self.acting_on(s.index),
                        t_trial: self.t_new,
                    });
                }
            }
            new_matrix = !keep;
            let solver = self.js.as_mut().expect("solvers exist after initialize");
            for i in 0..self.dx.len() {
                self.dx[i] = -self.r[i];
            }
            // Constraint rows already satisfied to round-off: no correction from them.
            // The round-off of Φ is relative to the coordinates it is made of, so the
            // level is ε_machine (1 + ‖q‖∞) (the theory's ε_machine for ‖q‖ ≤ 1).
            for i in nv..self.dx.len() {
                if (self.r[i] * bh2).abs() < phi_floor {
                    self.dx[i] = 0.0;
                }
            }
            solver.solve(&mut self.dx);
            if let Some(u) = self.first_non_finite(&self.dx) {
                // The residual and the matrix were finite: no element to blame.
                return Err(SimErrorKind::NotFinite {
                    unknown: u,
                    t_trial: self.t_new,
                    culprit: None,
                });
            }
            for i in 0..self.x.len() {
                self.x[i] += self.dx[i];
            }
            self.state(&c);
            let dvd = inf_norm(&self.dx[..nv]);
            *corr = gh * dvd / (1.0 + inf_norm(&self.vt));
            let last_fixed = matches!(settings.newton, Newton::Fixed(n) if n == k);
            // The largest v̇ correction the velocity criterion accepts.
            let dvd_tol = match settings.newton {
                Newton::Velocity { tol } => tol * (1.0 + inf_norm(&self.vt)) / gh,
                _ => 0.0,
            };
            let velocity_ok = matches!(settings.newton, Newton::Velocity { .. }) && dvd <= dvd_tol;
            if (last_fixed || velocity_ok) && settings.form == Form::ArnoldBruls {
                // No f_n term needs the residual at the converged state.
                converged = true;
                break;
            }
            self.residual(&c, alpha_negrut);
            if let Some(u) = self.first_non_finite(&self.r) {
                return Err(self.trial_not_finite(u, Role::Res, &c, false));
            }
            if last_fixed || velocity_ok {
                converged = true;
                break;
            }
            if matches!(settings.newton, Newton::Velocity { .. }) {
                if dvd > dvd_1 && dvd_1 > dvd_2 {
                    cause = format!(
                        "Newton diverged; largest residual at {}{}",
                        self.largest_residual(),
                        self.largest_correction()
                    );
                    break;
                }
                // Keep the matrix while the corrections contract fast and at that rate
                // would pass the tolerance within the iteration limit (otherwise full
                // Newton converges in fewer iterations). A kept matrix that contracts
                // slowly is replaced; divergence is judged on new matrices only.
                let rate = dvd / dvd_1;
                let reach = dvd * rate.powi(i32::try_from(max_iter - k).unwrap_or(i32::MAX));
                let slow = rate > KEEP_MATRIX_RATE || reach > dvd_tol;
                new_matrix |= slow;
                dvd_2 = if slow && !fresh { f64::INFINITY } else { dvd_1 };
                dvd_1 = dvd;
            }
            if legacy {
                let norm = (0..nv)
                    .map(|i| (self.dx[i] / self.w[i]).powi(2))
                    .sum::<f64>()
                    .sqrt();
                if k >= 2 && prev_norm > 0.0 {
                    let xi = norm / prev_norm;
                    if xi < 1.0 && (xi / (1.0 - xi)).powi(2) * norm * norm <= 1e-6 * psi / h.powi(4)
                    {
                        converged = true;
                        break;
                    }
                }
                if norm == 0.0 {
                    converged = true;
                    break;
                }
                prev_norm = norm;
                let dyn_n = two_norm(&self.r[..nv]);
                let con_n = two_norm(&self.r[nv..]) * bh2;
                let limit = |p: f64| p.max(1e3 * f64::EPSILON * p.max(1.0));
                if dyn_n > limit(pred_dyn) || con_n > limit(pred_con) {
                    cause = format!(
                        "Newton diverged: residual grew at {}{}",
                        self.largest_residual(),
                        self.largest_correction()
                    );
                    break;
                }
            }
        }
        if !converged {
            if cause.is_empty() {
                cause = format!(
                    "Newton did not converge in {max_iter} iterations; largest residual at {}{}",
                    self.largest_residual(),
                    self.largest_correction()
                );
            }
            return Ok(Outcome::Rejected { cause });
        }
        let mut theta = 0.0;
        if let Some(tol) = settings.adaptive {
            self.scales(true);
            self.weights(settings, true);
            let k = cn * h * h / tol;
            let sum: f64 = (0..nv)
                .map(|i| (k * (self.x[i] - self.vd[i]) / self.w[i]).powi(2))
                .sum();
            theta = if nv > 0 { sum / nv as f64 } else { 0.0 };
            if !theta.is_finite() || theta > 1.0 {
                let i = (0..nv)
                    .max_by(|&a, &b| {
                        let ea = ((self.x[a] - self.vd[a]) / self.w[a]).abs();
                        let eb = ((self.x[b] - self.vd[b]) / self.w[b]).abs();
                        ea.total_cmp(&eb)
                    })
                    .unwrap_or(0);
                return Ok(Outcome::Rejected {
                    cause: format!(
                        "local error {theta:.3e} > 1, largest at {} (elements acting on it: {}) in the step to t = {}",
                        self.labels[i],
                        quoted(&self.acting_on(i)),
                        self.t_new
                    ),
                });
            }
        }
        Ok(Outcome::Accepted { theta })
    }

    /// Column of a value index in the iteration matrix pattern.
    fn jp_col_of(&self, pos: usize) -> usize {
        let j = self.jp.col_ptr.partition_point(|&c| c <= pos);
        j.saturating_sub(1).min(self.jp.n.saturating_sub(1))
    }

    fn largest_residual(&self) -> &str {
        let i = (0..self.r.len())
            .max_by(|&a, &b| self.r[a].abs().total_cmp(&self.r[b].abs()))
            .unwrap_or(0);
        self.labels.get(i).map(String::as_str).unwrap_or("-")
    }

    /// The last accepted step had the size h (up to the round-off of the last step
    /// before an output time, which is computed as a difference of times).
    fn same_step(&self, h: f64) -> bool {
        (h - self.h_prev).abs() <= 1e-9 * h
    }

    /// Makes the trial state the accepted one and runs `Post`.
    fn accept(&mut self, settings: &Settings, h: f64) {
        let nv = self.nv;
        let ap = match settings.form {
            Form::ArnoldBruls => settings.alpha,
            Form::Negrut => 0.0,
        };
        // Would the linear predictor have been closer to this step's v̇ (λ) than the
        // constant one? It loses where they alternate from step to step (a weakly
        // damped parasitic mode of the index-3 equations).
        if self.same_step(h) {
            let closer = |new: &[f64], last: &[f64], before: &[f64]| {
                let (mut e_const, mut e_lin) = (0.0f64, 0.0f64);
                for ((x, l), b) in new.iter().zip(last).zip(before) {
                    e_const = e_const.max((x - l).abs());
                    e_lin = e_lin.max((x - l - (l - b)).abs());
                }
                e_lin < e_const
            };
            self.extrapolate = [
                closer(&self.x[..nv], &self.vd, &self.x_prev[..nv]),
                closer(&self.x[nv..], &self.lam, &self.x_prev[nv..]),
            ];
        }
        self.x_prev[..nv].copy_from_slice(&self.vd);
        self.x_prev[nv..].copy_from_slice(&self.lam);
        self.h_prev = h;
        for i in 0..nv {
            let vd_new = self.x[i];
            self.acc[i] = (1.0 + ap) * vd_new - ap * self.vd[i];
            self.vd[i] = vd_new;
        }
        self.lam.copy_from_slice(&self.x[nv..]);
        self.q.copy_from_slice(&self.qt);
        self.v.copy_from_slice(&self.vt);
        self.f_n.copy_from_slice(&self.f);
        self.t = self.t_new;
        if settings.adaptive.is_some() {
            self.scale_n.copy_from_slice(&self.scale_t);
        } else if matches!(settings.newton, Newton::Legacy) {
            self.scales(false);
        }
        for i in 0..nv {
            self.scale_max[i] = self.scale_max[i].max(self.scale_n[i]);
        }
        // Element state (e.g. the reference of a continuous angle).
        let c = self.coefficients(settings, h);
        let w = accepted_view!(self);
        let types = &self.table.types;
        for e in &mut self.inst {
            let ty = &types[e.ty];
            if ty.state_params.is_empty() {
                continue;
            }
            call(types, e, Role::Post, &mut self.s, &w, &c);
            for (k, &p) in ty.state_params.iter().enumerate() {
                e.params[p] = self.s.out[k];
            }
        }
        self.stats.steps += 1;
        self.stats.t = self.t;
    }

    /// Evaluates the output channels at the accepted state into the row buffer.
    fn outputs(&mut self) {
        let c = [0.0, 0.25, 0.5, self.h];
        let w = accepted_view!(self);
        let types = &self.table.types;
        let mut o = 0;
        for e in &self.inst {
            let ty = &types[e.ty];
            if !ty.outputs.is_empty() {
                call(types, e, Role::Out, &mut self.s, &w, &c);
                self.row[o..o + ty.outputs.len()].copy_from_slice(&self.s.out[..ty.outputs.len()]);
                o += ty.outputs.len();
            }
            for &l in &e.lambda_map {
                self.row[o] = self.lam[l];
                o += 1;
            }
        }
    }

    /// Current output values (channel order of [`System::channel_names`]).
    pub fn output_values(&mut self) -> &[f64] {
        self.outputs();
        &self.row
    }

    fn sim_error(&self, kind: SimErrorKind) -> SimError {
        SimError {
            t: self.t,
            kind,
            stats: self.final_stats(),
        }
    }

    fn final_stats(&self) -> RunStats {
        let mut s = self.stats.clone();
        s.full_factorizations = self.js.as_ref().map_or(0, |j| j.full_factorizations());
        if !self.step_times.is_empty() {
            let mut v = self.step_times.clone();
            v.sort_by(f64::total_cmp);
            let q = |p: f64| v[((p * (v.len() - 1) as f64).round() as usize).min(v.len() - 1)];
            s.timing = Some(TimingStats {
                steps: v.len(),
                min: v[0],
                median: q(0.5),
                p99: q(0.99),
                p999: q(0.999),
                max: v[v.len() - 1],
            });
        }
        s
    }

    /// Integrates from the accepted state to `t_stop` exactly, with step control.
    // SimError carries the statistics by value; the error path is cold.
    #[allow(clippy::result_large_err)]
    fn advance_to(
        &mut self,
        settings: &Settings,
        t_stop: f64,
        mut sink: Option<&mut dyn ResultSink>,
        report: &mut StepReport,
    ) -> Result<(), SimError> {
        while t_stop - self.t > 1e-12 * t_stop.abs().max(1.0) {
            let mut h = self.h.min(settings.step_max);
            let remaining = t_stop - self.t;
            let hit = 1.1 * h >= remaining;
            if hit {
                h = remaining;
            }
            let start = settings.timing.then(Instant::now);
            let mut iters = 0;
            let mut corr = 0.0;
            let outcome = self
                .try_step(settings, h, &mut iters, &mut corr)
                .map_err(|k| self.sim_error(k))?;
            report.newton_iterations += iters;
            match outcome {
                Outcome::Accepted { theta } => {
                    self.accept(settings, h);
                    if hit {
                        self.t = t_stop;
                        self.stats.t = t_stop;
                    }
                    if let Some(t0) = start {
                        if self.step_times.len() < self.step_times.capacity() {
                            self.step_times.push(t0.elapsed().as_secs_f64());
                        }
                    }
                    report.substeps += 1;
                    report.correction = corr;
                    self.stats.max_correction = self.stats.max_correction.max(corr);
                    if settings.adaptive.is_some() {
                        // Controller of the legacy solver, growth limited to 5×.
                        let factor = if theta > 0.0 {
                            0.9 * theta.powf(-1.0 / 6.0)
                        } else {
                            5.0
                        };
                        self.h = (h * factor.min(5.0)).min(settings.step_max);
                    } else if !hit || h >= self.h {
                        self.h = (2.0 * self.h).min(settings.step);
                    }
                    if let Some(s) = sink.as_deref_mut() {
                        if settings.output_every == 0.0 {
                            self.outputs();
                            s.row(self.t, &self.row);
                        }
                    }
                }
                Outcome::Rejected { cause } => {
                    self.stats.rejected += 1;
                    self.h = h / 2.0;
                    if self.h < settings.step_min {
                        let h_min = settings.step_min;
                        let h = self.h;
                        return Err(self.sim_error(SimErrorKind::StepBelowMinimum {
                            h,
                            h_min,
                            cause,
                        }));
                    }
                }
            }
        }
        report.t = self.t;
        Ok(())
    }

    /// One step of `settings.step` for a caller-driven loop (real time): with
    /// `Newton::Fixed` and no `adaptive` every call does the same work. A rejected
    /// attempt is covered by smaller substeps. Needs [`System::initialize`] first.
    // SimError carries the statistics by value; the error path is cold.
    #[allow(clippy::result_large_err)]
    pub fn step(&mut self, settings: &Settings) -> Result<StepReport, SimError> {
        if !self.initialized {
            return Err(self.sim_error(SimErrorKind::Setup(RuntimeError::NotInitialized)));
        }
        let mut report = StepReport {
            t: self.t,
            substeps: 0,
            newton_iterations: 0,
            correction: 0.0,
        };
        let t_stop = self.t + settings.step;
        self.advance_to(settings, t_stop, None, &mut report)?;
        Ok(report)
    }

    /// Initializes (if needed) and integrates to `settings.end`, writing a row at t = 0
    /// and at every output time (every accepted step if `output_every` is 0).
    // SimError carries the statistics by value; the error path is cold.
    #[allow(clippy::result_large_err)]
    pub fn run(
        &mut self,
        settings: &Settings,
        sink: &mut dyn ResultSink,
    ) -> Result<RunStats, SimError> {
        if let Err(e) = settings.validate() {
            return Err(self.sim_error(SimErrorKind::Setup(RuntimeError::BadSettings(e))));
        }
        if !self.initialized {
            self.initialize(settings)
                .map_err(|e| self.sim_error(SimErrorKind::Setup(e)))?;
        }
        self.reserve_timing(settings);
        sink.header(&self.channels);
        self.outputs();
        sink.row(self.t, &self.row);
        let mut report = StepReport {
            t: self.t,
            substeps: 0,
            newton_iterations: 0,
            correction: 0.0,
        };
        let mut k: u64 = (self.t / settings.output_every.max(f64::MIN_POSITIVE)).floor() as u64 + 1;
        while settings.end - self.t > 1e-12 * settings.end.abs().max(1.0) {
            let t_stop = if settings.output_every > 0.0 {
                (k as f64 * settings.output_every).min(settings.end)
            } else {
                settings.end
            };
            self.advance_to(settings, t_stop, Some(&mut *sink), &mut report)?;
            if settings.output_every > 0.0 {
                self.outputs();
                sink.row(self.t, &self.row);
                k += 1;
            }
        }
        Ok(self.final_stats())
    }
}
