//! `System::new`: the model checked against its function table, the maps, patterns
//! and work arrays.

use super::*;
use crate::model::ElementInstance;

pub(super) fn expect_blocks(
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

pub(super) fn check_type(ty: &ElementType) -> Result<(), String> {
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
    check_fused(ty)
}

/// `ResIter` is `Iter`'s blocks then `Res`'s (the fused pass scatters its output with
/// their maps).
fn check_fused(ty: &ElementType) -> Result<(), String> {
    let Some(fused) = ty.role(Role::ResIter) else {
        return Ok(());
    };
    let parts = [Role::Iter, Role::Res].map(|r| ty.role(r).map_or(&[][..], |rf| &rf.blocks));
    if fused.blocks[..] != parts.concat()[..] {
        return Err(format!(
            "element type `{}`: role `res_iter` is not the blocks of `iter` then `res`",
            ty.name
        ));
    }
    Ok(())
}

pub(super) fn sparse_entries(ty: &ElementType, role: Role, block: usize) -> &[(u32, u32)] {
    match ty.role(role).map(|r| &r.blocks[block]) {
        Some(Block::Sparse { entries, .. }) => entries,
        _ => &[],
    }
}

/// Who holds each global unknown: the body of every coordinate, the (instance, local
/// index) of every velocity dof and multiplier.
struct Owners {
    q: Vec<usize>,
    v: Vec<Option<(usize, usize)>>,
    l: Vec<Option<(usize, usize)>>,
}

/// The instances against their types: names, sizes, map ranges and one owner per
/// unknown; then the inputs' targets.
fn check_instances(
    table: &FunctionTable,
    instances: &[ElementInstance],
    (nq, nv, nl): (usize, usize, usize),
    inputs: &[RuntimeInput],
) -> Result<Owners, RuntimeError> {
    let bad = RuntimeError::BadModel;
    let mut owners = Owners {
        q: vec![usize::MAX; nq],
        v: vec![None; nv],
        l: vec![None; nl],
    };
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
        check_maps(e, ty, (nq, nv, nl))?;
        owners.claim(i, e, ty)?;
    }
    if let Some(g) = owners.q.iter().position(|&o| o == usize::MAX) {
        return Err(bad(format!("coordinate q[{g}] belongs to no body")));
    }
    if let Some(g) = owners.v.iter().position(Option::is_none) {
        return Err(bad(format!("velocity dof v[{g}] belongs to no body")));
    }
    if let Some(g) = owners.l.iter().position(Option::is_none) {
        return Err(bad(format!("multiplier lambda[{g}] belongs to no element")));
    }
    for input in inputs {
        for &(i, p) in &input.targets {
            if i >= instances.len() || p >= instances[i].params.len() {
                return Err(bad(format!(
                    "input `{}` targets parameter {p} of instance {i}, which does not exist",
                    input.name
                )));
            }
        }
    }
    Ok(owners)
}

/// The sizes of an instance's parameters and maps, and the range of its map entries.
fn check_maps(
    e: &ElementInstance,
    ty: &ElementType,
    (nq, nv, nl): (usize, usize, usize),
) -> Result<(), RuntimeError> {
    let bad = RuntimeError::BadModel;
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
    range(&e.lambda_map, nl, "lambda")
}

impl Owners {
    /// Instance i takes its coordinates and dofs (a body) and its multipliers.
    fn claim(
        &mut self,
        i: usize,
        e: &ElementInstance,
        ty: &ElementType,
    ) -> Result<(), RuntimeError> {
        let bad = RuntimeError::BadModel;
        if ty.owns_coordinates {
            for &g in &e.q_map {
                if self.q[g] != usize::MAX {
                    return Err(bad(format!(
                        "coordinate q[{g}] is owned by two bodies (`{}`)",
                        e.name
                    )));
                }
                self.q[g] = i;
            }
            for (k, &g) in e.v_map.iter().enumerate() {
                if self.v[g].is_some() {
                    return Err(bad(format!(
                        "velocity dof v[{g}] is owned by two bodies (`{}`)",
                        e.name
                    )));
                }
                self.v[g] = Some((i, k));
            }
        }
        for (k, &g) in e.lambda_map.iter().enumerate() {
            if self.l[g].is_some() {
                return Err(bad(format!(
                    "multiplier lambda[{g}] belongs to two elements (`{}`)",
                    e.name
                )));
            }
            self.l[g] = Some((i, k));
        }
        Ok(())
    }

    /// Labels of the unknowns [v; λ], for messages.
    fn labels(&self, table: &FunctionTable, instances: &[ElementInstance]) -> Vec<String> {
        let mut labels = Vec::with_capacity(self.v.len() + self.l.len());
        for o in &self.v {
            let (i, k) = o.expect("checked in check_instances");
            labels.push(format!("`{}` velocity dof {k}", instances[i].name));
        }
        for o in &self.l {
            let (i, k) = o.expect("checked in check_instances");
            let ty = &table.types[instances[i].type_index];
            labels.push(format!(
                "constraint `{}` of `{}`",
                ty.multipliers[k], instances[i].name
            ));
        }
        labels
    }
}

/// The instances with their places in the iteration and initial-condition matrices,
/// the two patterns, and the channel names (instances' outputs and multipliers).
struct Layout {
    inst: Vec<Inst>,
    jp: Pattern,
    iter_entries: MatrixEntries,
    noqv_entries: MatrixEntries,
    icp: Pattern,
    channels: Vec<String>,
}

/// An instance's ranges in the entry lists of `layout`: Iter, IterNoqv; M, B, Bᵀ.
type EntryRanges = [std::ops::Range<usize>; 5];

fn layout(table: &FunctionTable, instances: Vec<ElementInstance>, nv: usize, nx: usize) -> Layout {
    let mut j_entries = Vec::new();
    let mut ic_entries = Vec::new();
    let mut placed: Vec<(ElementInstance, Vec<usize>, EntryRanges)> =
        Vec::with_capacity(instances.len());
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
        let ranges = [j0..n0, n0..j_entries.len(), m0..b0, b0..bt0, bt0..end];
        placed.push((e, x_map, ranges));
    }
    let (jp, jmap) = Pattern::build(nx, &j_entries);
    let (icp, icmap) = Pattern::build(nx, &ic_entries);
    let (mut iter_entries, mut noqv_entries) = <(MatrixEntries, MatrixEntries)>::default();
    let place = |entries: &mut MatrixEntries, range: std::ops::Range<usize>| {
        let rows = j_entries[range.clone()].iter().map(|&(r, _)| r);
        entries.push(rows, &jmap[range])
    };
    let inst = placed
        .into_iter()
        .map(|(e, x_map, [jr, nr, mr, br, btr])| Inst {
            name: e.name,
            ty: e.type_index,
            params: e.params,
            q_start: eval::contiguous(&e.q_map),
            v_start: eval::contiguous(&e.v_map),
            lambda_start: eval::contiguous(&e.lambda_map),
            x_start: eval::contiguous(&x_map),
            q_map: e.q_map,
            v_map: e.v_map,
            lambda_map: e.lambda_map,
            x_map,
            iter_at: place(&mut iter_entries, jr),
            noqv_at: place(&mut noqv_entries, nr),
            ic_m_pos: icmap[mr].to_vec(),
            ic_b_pos: icmap[br.clone()].to_vec(),
            ic_b_pos_all: icmap[br].to_vec(),
            ic_bt_pos: icmap[btr].to_vec(),
        })
        .collect();
    Layout {
        inst,
        jp,
        iter_entries,
        noqv_entries,
        icp,
        channels,
    }
}

impl Scratch {
    /// Buffers for the largest element type of the table.
    fn new(table: &FunctionTable) -> Scratch {
        let max =
            |f: &dyn Fn(&ElementType) -> usize| table.types.iter().map(f).max().unwrap_or(0).max(1);
        let max_out = max(&|t| {
            Role::ALL
                .iter()
                .filter_map(|&r| t.role(r).map(|rf| rf.output_len()))
                .max()
                .unwrap_or(0)
        });
        Scratch {
            q: vec![0.0; max(&|t| t.nq)],
            v: vec![0.0; max(&|t| t.nv)],
            vd: vec![0.0; max(&|t| t.nv)],
            l: vec![0.0; max(&|t| t.nl)],
            d: vec![0.0; max(&|t| t.nv)],
            out: vec![0.0; max_out],
        }
    }
}

/// The model totals (energies, momenta), channels after every instance's: their names
/// and the channels each sums.
fn model_totals(
    table: &FunctionTable,
    instances: &[ElementInstance],
) -> (Vec<String>, Vec<Vec<usize>>) {
    let names: Vec<Option<&str>> = instances
        .iter()
        .flat_map(|e| {
            let ty = &table.types[e.type_index];
            (ty.outputs.iter().map(|o| Some(o.as_str()))).chain(ty.multipliers.iter().map(|_| None))
        })
        .collect();
    totals::plan(&names).into_iter().unzip()
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
            roads,
        } = model;
        if table.abi_version != ABI_VERSION {
            return Err(RuntimeError::AbiVersion {
                found: table.abi_version,
                expected: ABI_VERSION,
            });
        }
        for ty in &table.types {
            check_type(ty).map_err(RuntimeError::BadModel)?;
        }
        let nx = nv + nl;
        let owners = check_instances(&table, &instances, (nq, nv, nl), &inputs)?;
        let labels = owners.labels(&table, &instances);
        let (total_names, totals) = model_totals(&table, &instances);
        let Layout {
            inst,
            jp,
            iter_entries,
            noqv_entries,
            icp,
            mut channels,
        } = layout(&table, instances, nv, nx);
        let s = Scratch::new(&table);
        let roads = road_feed::Feed::new(roads, &inst, nq)?;
        channels.extend(total_names);
        let nch = channels.len();
        let mut sys = System {
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
            err_v: vec![0.0; nx],
            acc_t: vec![0.0; nx],
            w: vec![1.0; nv],
            // One slot more than the pattern: entries of removed constraint rows go there.
            jv: vec![0.0; jp.nnz() + 1],
            iter_entries,
            noqv_entries,
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
            totals,
            removed: vec![false; nl],
            warnings: Vec::new(),
            initialized: false,
            monitor: Default::default(),
            h: 0.0,
            ctrl: Default::default(),
            kept: Default::default(),
            costs: Default::default(),
            real_time: false,
            dense: dense::Dense::new(nq, nv, nx),
            stats: RunStats::default(),
            step_times: Vec::new(),
            corrections: Vec::new(),
            identity: 0,
            roads,
            loads: Vec::new(),
            fused: true,
            matrix_at: None,
            fused_passes: 0,
        };
        sys.identity = sys.fingerprint();
        Ok(sys)
    }
}
