//! One test per `lang-tests/cases/*.fd` file. Expected diagnostics are written on the
//! line they are about: `//~ ERROR E0204` or `//~ WARNING W0001` (several per line
//! allowed). A case passes when every expectation is met (code and line) and nothing
//! else is reported. Cases whose name starts with `snap_` also snapshot the rendered
//! diagnostics (insta). Every example and every stdlib file must check clean.

use fdc_frontend::{analyze_file, analyze_file_scoped, analyze_source, Analysis, Scope, Severity};
use libtest_mimic::{Arguments, Failed, Trial};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// (line, "ERROR"/"WARNING", code) expectations found in `text`.
fn expectations(text: &str) -> Vec<(usize, String, String)> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let mut rest = line;
        while let Some(pos) = rest.find("//~") {
            rest = &rest[pos + 3..];
            let mut words = rest.split_whitespace();
            if let (Some(sev), Some(code)) = (words.next(), words.next()) {
                out.push((
                    i + 1,
                    sev.to_string(),
                    code.trim_end_matches(',').to_string(),
                ));
            }
        }
    }
    out
}

fn run_case(path: &Path) -> Result<(), Failed> {
    // A relative path keeps absolute directories out of rendered output and snapshots.
    let rel = path.strip_prefix(root()).unwrap_or(path);
    let analysis = analyze_file(rel);
    let mut expected = Vec::new();
    for file in 0..analysis.files.len() {
        if analysis.files.name(file).starts_with("<stdlib>") {
            continue;
        }
        for (line, sev, code) in expectations(analysis.files.text(file)) {
            expected.push((analysis.files.name(file).to_string(), line, sev, code));
        }
    }
    let mut actual = Vec::new();
    for d in &analysis.diagnostics {
        let sev = match d.severity {
            Severity::Error => "ERROR",
            Severity::Warning => "WARNING",
        };
        let (file, line) = match &d.primary {
            Some(l) => (
                analysis.files.name(l.span.file).to_string(),
                analysis
                    .files
                    .line_col(l.span.file, l.span.start as usize)
                    .0,
            ),
            None => (String::new(), 0),
        };
        actual.push((file, line, sev.to_string(), d.code.to_string()));
    }
    // `lower_*` cases that check clean are also lowered (spline tables are read then).
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    if stem.starts_with("lower_") && !analysis.has_errors() {
        let lowered = fdc_lower::lower_with_files(&analysis, &[], Some(&analysis.files));
        let reported = match lowered {
            Ok(model) => model.warnings,
            Err(errors) => errors,
        };
        for e in reported {
            let (file, line) = match e.span {
                Some(s) => (
                    analysis.files.name(s.file).to_string(),
                    analysis.files.line_col(s.file, s.start as usize).0,
                ),
                None => (String::new(), 0),
            };
            let sev = if e.warning { "WARNING" } else { "ERROR" };
            actual.push((file, line, sev.into(), e.code.unwrap_or("E0900").into()));
        }
    }
    let mut missing = Vec::new();
    let mut unexpected = actual.clone();
    for e in &expected {
        match unexpected.iter().position(|a| a == e) {
            Some(i) => {
                unexpected.remove(i);
            }
            None => missing.push(e.clone()),
        }
    }
    if !missing.is_empty() || !unexpected.is_empty() {
        return Err(format!(
            "expected but not reported: {missing:?}\nreported but not expected: {unexpected:?}\n\n{}",
            analysis.render()
        )
        .into());
    }
    if stem.starts_with("snap_") {
        let mut settings = insta::Settings::clone_current();
        settings.set_snapshot_path(root().join("tests/snapshots"));
        settings.set_prepend_module_to_snapshot(false);
        settings.bind(|| insta::assert_snapshot!(stem.to_string(), analysis.render()));
    }
    Ok(())
}

fn check_clean(name: &str, text: &str, path: Option<&Path>) -> Result<(), Failed> {
    let analysis = match path {
        Some(p) => analyze_file(p),
        None => analyze_source(name, text),
    };
    if analysis.diagnostics.is_empty() {
        Ok(())
    } else {
        Err(format!("{name} must check clean:\n{}", analysis.render()).into())
    }
}

/// A build's analysis (`Scope::Used`: only the library items the model reaches) and
/// the whole library's agree on `path`: the same diagnostics (a model with any is
/// analysed with the whole library), and for a clean model the same instances and
/// settings, the same types and functions where both have them, and the same lowered
/// model.
fn same_in_both_scopes(path: &Path) -> Result<(), Failed> {
    let rel = path.strip_prefix(root()).unwrap_or(path);
    let (used, all) = (
        analyze_file_scoped(rel, &[], Scope::Used),
        analyze_file(rel),
    );
    if used.render() != all.render() {
        return Err(format!("used:\n{}\nall:\n{}", used.render(), all.render()).into());
    }
    let expected = if all.diagnostics.is_empty() {
        Scope::Used
    } else {
        Scope::All
    };
    if used.scope != expected {
        return Err(format!("scope {:?}, expected {expected:?}", used.scope).into());
    }
    let (u, a) = (&used.model, &all.model);
    for (name, t) in &u.types {
        if a.types.get(name) != Some(t) {
            return Err(format!("type `{name}` differs").into());
        }
    }
    if let Some(f) = u.functions.iter().find(|f| !a.functions.contains(f)) {
        return Err(format!("function `{}` differs", f.name.name).into());
    }
    let resolved = |m: &fdc_frontend::Model| {
        format!(
            "{:?}",
            (
                &m.instances,
                &m.params,
                &m.inputs,
                &m.splines,
                &m.gravity,
                &m.outputs
            )
        ) + &format!("{:?}", (&m.simulate, &m.definitions))
    };
    if resolved(u) != resolved(a) {
        return Err("the instances or model-level items differ".into());
    }
    if !all.has_errors() && lowered(&used) != lowered(&all) {
        return Err("the lowered models differ".into());
    }
    Ok(())
}

/// What the lowering makes of an analysis, as text to compare.
fn lowered(a: &Analysis) -> String {
    match fdc_lower::lower_with_files(a, &[], Some(&a.files)) {
        Ok(l) => {
            format!(
                "{:?}",
                (
                    &l.types,
                    &l.instances,
                    l.nq,
                    l.nv,
                    l.nl,
                    &l.bodies,
                    &l.inputs
                )
            ) + &format!("{:?}", (&l.settings, &l.params, &l.warnings, &l.data_files))
        }
        Err(errors) => format!("{errors:?}"),
    }
}

/// Every diagnostic code the checker (and the lowering, for `lower_*` cases) can emit
/// is expected by some case and is documented in docs/errors.md.
fn every_code_covered() -> Result<(), Failed> {
    let mut annotated = String::new();
    for dir in ["cases", "cases/lib"] {
        for e in std::fs::read_dir(root().join(dir)).map_err(|e| e.to_string())? {
            let p = e.map_err(|e| e.to_string())?.path();
            if p.extension().is_some_and(|x| x == "fd") {
                // Lossy: `encoding_latin1.fd` is not UTF-8 on purpose (E0004).
                let bytes = std::fs::read(&p).map_err(|e| e.to_string())?;
                annotated.push_str(&String::from_utf8_lossy(&bytes));
            }
        }
    }
    let codes: Vec<String> = expectations(&annotated).into_iter().map(|e| e.2).collect();
    let doc =
        std::fs::read_to_string(root().join("../docs/errors.md")).map_err(|e| e.to_string())?;
    let mut problems = Vec::new();
    for (code, _) in fdc_frontend::CODES.iter().chain(fdc_lower::CODES) {
        if !codes.iter().any(|c| c == code) {
            problems.push(format!("{code} has no case"));
        }
        if !doc.contains(&format!("| {code} |")) {
            problems.push(format!("{code} is not in docs/errors.md"));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n").into())
    }
}

/// A nested instance without a required field, lowered although the checker reports
/// it (E0205; as a tool that lowers unchecked would): the lowering's error names the
/// field's declaration by its place (file:line:col), not by byte offsets.
fn nested_field_by_place() -> Result<(), Failed> {
    let text = "element pair(b: body) {\n    \
                joint j: revolute_local(b) { at1 = [0, 0, 0]; }\n}\n\
                body a: rigid_body { mass = 1; inertia = [1, 1, 1]; }\nelement p: pair(a);\n";
    let analysis = analyze_source("nested.fd", text);
    if !analysis.diagnostics.iter().any(|d| d.code == "E0205") {
        return Err(format!("the checker missed the field:\n{}", analysis.render()).into());
    }
    let Err(errors) = fdc_lower::lower_with_files(&analysis, &[], Some(&analysis.files)) else {
        return Err("lowered with a missing field".into());
    };
    let Some(e) = errors
        .iter()
        .find(|e| e.message.contains("needs the field `at2`"))
    else {
        return Err(format!("no error for `at2`: {errors:?}").into());
    };
    let shown = &e.message;
    let local = fdc_stdlib::FILES
        .iter()
        .find(|(name, _)| *name == "local.fd")
        .map(|(_, text)| *text)
        .ok_or("no stdlib/local.fd")?;
    // The `at2` of `revolute_local`, the type `p.j` is an instance of.
    let lines: Vec<&str> = local.lines().collect();
    let ty = (lines.iter())
        .position(|l| l.starts_with("joint revolute_local("))
        .ok_or("no `revolute_local` in local.fd")?;
    let line = 1
        + ty
        + (lines[ty..].iter())
            .position(|l| l.trim() == "param at2: vec3;")
            .ok_or("no `param at2` in revolute_local")?;
    let expected = format!("`p.j` needs the field `at2` (declared at <stdlib>/local.fd:{line}:5)");
    if *shown != expected {
        return Err(format!("expected {expected}\n     got {shown}").into());
    }
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    let mut trials = Vec::new();
    let mut cases: Vec<PathBuf> = std::fs::read_dir(root().join("cases"))
        .expect("lang-tests/cases exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "fd"))
        .collect();
    cases.sort();
    assert!(cases.len() >= 40, "only {} cases", cases.len());
    for p in cases {
        let name = format!(
            "case::{}",
            p.file_stem().unwrap_or_default().to_string_lossy()
        );
        let scoped = (format!("scope::{name}"), p.clone());
        trials.push(Trial::test(name, move || run_case(&p)));
        trials.push(Trial::test(scoped.0, move || {
            same_in_both_scopes(&scoped.1)
        }));
    }
    let examples = root().join("../examples");
    let mut ex: Vec<PathBuf> = std::fs::read_dir(&examples)
        .expect("examples/ exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "fd"))
        .collect();
    ex.sort();
    assert!(ex.len() >= 4, "examples missing");
    for p in ex {
        let name = format!(
            "example::{}",
            p.file_stem().unwrap_or_default().to_string_lossy()
        );
        let scoped = (format!("scope::{name}"), p.clone());
        trials.push(Trial::test(name.clone(), move || {
            check_clean(&name, "", Some(&p))
        }));
        trials.push(Trial::test(scoped.0, move || {
            same_in_both_scopes(&scoped.1)
        }));
    }
    trials.push(Trial::test(
        "codes::every_code_has_a_case_and_a_doc",
        every_code_covered,
    ));
    trials.push(Trial::test(
        "lower::nested_field_by_place",
        nested_field_by_place,
    ));
    // The stdlib alone (an empty model) must produce no diagnostic at all.
    trials.push(Trial::test("stdlib::clean", || {
        check_clean("empty.fd", "", None)
    }));
    libtest_mimic::run(&args, trials).exit();
}
