//! Machine-readable forms of what the pipeline reports: diagnostics (`fdc check
//! --message-format json`, the Python package's exceptions) and eigenmodes (`fdc modes
//! --json`, `Model.modes` in Python). One home for each shape.

use fdc_frontend::{Diagnostic, SourceFiles};
use fdc_runtime::{Linearization, ModeKind};
use serde_json::json;

/// The diagnostic structure of the front end plus file names and 1-based positions.
pub fn diagnostic_json(files: &SourceFiles, d: &Diagnostic) -> serde_json::Value {
    let label = |l: &fdc_frontend::Label| {
        let (line, column) = files.line_col(l.span.file, l.span.start as usize);
        let (end_line, end_column) = files.line_col(l.span.file, l.span.end as usize);
        json!({
            "file": files.name(l.span.file),
            "line": line,
            "column": column,
            "end_line": end_line,
            "end_column": end_column,
            "start": l.span.start,
            "end": l.span.end,
            "message": l.message,
        })
    };
    json!({
        "severity": d.severity_word(),
        "code": d.code,
        "message": d.message,
        "primary": d.primary.as_ref().map(label),
        "secondary": d.secondary.iter().map(label).collect::<Vec<_>>(),
        "notes": d.notes,
    })
}

/// The eigenmodes of a linearization.
pub fn modes_json(lin: &Linearization) -> serde_json::Value {
    let modes: Vec<_> = lin
        .modes
        .iter()
        .map(|m| {
            json!({
                "kind": match m.kind {
                    ModeKind::Oscillation => "oscillation",
                    ModeKind::Real => "real",
                    ModeKind::RigidBody => "rigid_body",
                },
                "frequency_hz": m.frequency,
                "damping_ratio": if m.kind == ModeKind::RigidBody { None } else { Some(m.damping_ratio) },
                "eigenvalue": { "re": m.eigenvalue.0, "im": m.eigenvalue.1 },
                "energy": m.energy.iter().map(|(b, e)| json!({"body": b, "share": e})).collect::<Vec<_>>(),
                "shape": m.shape.iter().map(|b| json!({
                    "body": b.body, "translation": b.translation, "rotation": b.rotation,
                    "translation_im": b.translation_im, "rotation_im": b.rotation_im,
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({
        "t": lin.t,
        "dofs": lin.nv,
        "constraints": lin.nl,
        "free_dofs": lin.dofs,
        "modes": modes,
    })
}

/// The run summary's line on the initial position assembly: the largest correction
/// of every body it moved, largest first; `None` when no body moved.
pub fn assembly_line(corrections: &[fdc_runtime::Correction]) -> Option<String> {
    if corrections.is_empty() {
        return None;
    }
    let mut c = corrections.to_vec();
    c.sort_by(|a, b| b.size.total_cmp(&a.size));
    let parts: Vec<String> = c
        .iter()
        .map(|c| format!("{} {:.3e} (dof {})", c.body, c.size, c.dof))
        .collect();
    Some(format!(
        "assembly: {} bodies moved to close the constraints; largest correction per body: {}",
        c.len(),
        parts.join(", ")
    ))
}

/// The degrees of freedom of a model in words, as `fdc check` and the run summary say
/// it: velocity dofs minus independent constraints. `redundant`: rows the runtime
/// removes at the initial configuration (`fdc check` finds them with the same test,
/// `crate::dofs`; `None`: not known).
pub fn dof_line(bodies: usize, nv: usize, nl: usize, redundant: Option<usize>) -> String {
    let independent = nl - redundant.unwrap_or(0).min(nl);
    let dof = nv as i64 - independent as i64;
    let plural = |n: i64, one: &str, many: &str| {
        if n == 1 {
            format!("{n} {one}")
        } else {
            format!("{n} {many}")
        }
    };
    let dofs = plural(dof, "degree of freedom", "degrees of freedom");
    let body_word = plural(bodies as i64, "body", "bodies");
    match redundant {
        Some(r) => format!(
            "{dofs} ({body_word}, {nv} velocity dofs, {independent} independent constraints, {r} redundant removed)"
        ),
        None => format!(
            "{dofs} ({body_word}, {nv} velocity dofs, {nl} constraints; redundant rows are found when a run starts)"
        ),
    }
}

/// Per-element warning lines printed without `--verbose`; the rest are counted.
pub const WARNINGS_SHOWN: usize = 5;

/// The warning lines of `initialize` as printed: one per element (all of them with
/// `verbose`, else the first [`WARNINGS_SHOWN`] and a count of the rest), then the
/// one-line total of the removed redundant rows.
pub fn warning_lines(sys: &fdc_runtime::System, verbose: bool) -> Vec<String> {
    let all = sys.warnings();
    let shown = if verbose {
        all.len()
    } else {
        all.len().min(WARNINGS_SHOWN)
    };
    let mut lines: Vec<String> = all[..shown]
        .iter()
        .map(|w| format!("warning: {w}"))
        .collect();
    if shown < all.len() {
        lines.push(format!(
            "warning: … and {} more (--verbose lists them all)",
            all.len() - shown
        ));
    }
    if let Some(total) = sys.redundant_summary() {
        lines.push(format!("warning: {total}"));
    }
    lines
}

#[cfg(test)]
mod dof_tests {
    use super::dof_line;

    #[test]
    fn the_dof_line_counts_independent_constraints() {
        // The N-four-bar of the issue: 81 bodies, 605 rows of which 120 redundant.
        assert_eq!(
            dof_line(81, 486, 605, Some(120)),
            "1 degree of freedom (81 bodies, 486 velocity dofs, 485 independent constraints, 120 redundant removed)"
        );
        assert!(dof_line(1, 6, 0, None)
            .starts_with("6 degrees of freedom (1 body, 6 velocity dofs, 0 constraints"));
    }
}
