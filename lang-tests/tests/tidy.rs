//! Tidy checks that run inside `cargo test`, so CI and a developer run the same thing.

use std::path::PathBuf;
use std::process::Command;

fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("lang-tests lives one level below the workspace root")
        .to_path_buf()
}

#[test]
fn code_is_formatted() {
    let out = Command::new(env!("CARGO"))
        .args(["fmt", "--all", "--", "--check"])
        .current_dir(workspace_root())
        .output()
        .expect("cargo fmt runs");
    assert!(
        out.status.success(),
        "cargo fmt --all -- --check found unformatted code:\n{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn every_crate_states_what_it_knows() {
    // ARCHITECTURE.md promises a module doc per crate saying what it knows and what it
    // must not know; a crate without one has not thought about its boundary.
    for lib in [
        "compiler/frontend/src/lib.rs",
        "compiler/ir/src/lib.rs",
        "compiler/diff/src/lib.rs",
        "compiler/backend/src/lib.rs",
        "runtime/src/lib.rs",
        "road/src/lib.rs",
        "stdlib/src/lib.rs",
        "lang-tests/src/lib.rs",
        "compiler/src/main.rs",
        "python/src/lib.rs",
        "capi/src/lib.rs",
        "viewer/src/lib.rs",
    ] {
        let text = std::fs::read_to_string(workspace_root().join(lib)).unwrap();
        assert!(text.starts_with("//!"), "{lib} has no crate doc");
    }
}

/// The rows of the first markdown table after the line `heading` in `doc`: the cells
/// of each row, trimmed.
fn table_after(doc: &str, heading: &str) -> Vec<Vec<String>> {
    let start = doc
        .find(heading)
        .unwrap_or_else(|| panic!("no `{heading}`"));
    doc[start..]
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2) // header and separator
        .map(|l| {
            l.trim_matches('|')
                .split(" | ")
                .map(|c| c.trim().to_string())
                .collect()
        })
        .collect()
}

/// The code spans (`...`) of a table cell.
fn code_spans(cell: &str) -> Vec<&str> {
    cell.split('`').skip(1).step_by(2).collect()
}

fn ident_prefix(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

fn language_md() -> String {
    std::fs::read_to_string(workspace_root().join("docs/language.md")).unwrap()
}

#[test]
fn language_doc_lists_exactly_the_builtin_functions() {
    // A span either lists bare names (`sin cos tan`) or shows one call (`min(a, b)`).
    let mut documented = Vec::new();
    for row in table_after(&language_md(), "| function | meaning |") {
        for span in code_spans(&row[0]) {
            let calls = span.contains('(');
            for word in span.split_whitespace() {
                if !calls || word.contains('(') {
                    documented.push(ident_prefix(word).to_string());
                }
            }
        }
    }
    let table = fdc_frontend::builtins::FUNCTIONS
        .iter()
        .map(|b| b.name.to_string());
    assert_eq!(sorted(documented), sorted(table.collect()));
}

#[test]
fn language_doc_lists_exactly_the_body_members() {
    let mut documented = Vec::new();
    for row in table_after(&language_md(), "| expression | type | meaning |") {
        for span in code_spans(&row[0]) {
            let member = span.strip_prefix("b.").expect("a body member `b.NAME`");
            let name = ident_prefix(member);
            let m = fdc_frontend::builtins::body_member(name)
                .unwrap_or_else(|| panic!("`b.{name}` is documented but not a member"));
            assert_eq!(
                m.method,
                member.contains('('),
                "b.{name}: method or property"
            );
            assert_eq!(m.ty.to_string(), row[1], "type of b.{name}");
            documented.push(name.to_string());
        }
    }
    let table = fdc_frontend::builtins::BODY_MEMBERS
        .iter()
        .map(|m| m.name.to_string());
    assert_eq!(sorted(documented), sorted(table.collect()));
}

#[test]
fn language_doc_lists_exactly_the_simulate_keys() {
    let documented: Vec<String> = table_after(&language_md(), "## 7. Simulation settings")
        .iter()
        .flat_map(|row| {
            code_spans(&row[0])
                .into_iter()
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .collect();
    let keys = fdc_frontend::SIM_KEYS.iter().map(|k| k.to_string());
    assert_eq!(sorted(documented), sorted(keys.collect()));
}

#[test]
fn dependency_edges_are_the_documented_ones() {
    // ARCHITECTURE.md lists every crate's workspace dependencies as
    // "- `crate` → `dep`, `dep`"; cargo metadata must show exactly those.
    let arch = std::fs::read_to_string(workspace_root().join("ARCHITECTURE.md")).unwrap();
    let section = arch
        .split("### Dependency edges")
        .nth(1)
        .expect("ARCHITECTURE.md has a `Dependency edges` section");
    let mut documented: Vec<(String, Vec<String>)> = Vec::new();
    for line in section.lines().take_while(|l| !l.starts_with("###")) {
        let Some((from, to)) = line.strip_prefix("- ").and_then(|l| l.split_once('→')) else {
            continue;
        };
        let deps = to
            .split(',')
            .map(|d| d.trim().trim_matches('`').to_string());
        let deps = sorted(deps.filter(|d| !d.is_empty()).collect());
        documented.push((from.trim().trim_matches('`').to_string(), deps));
    }
    let out = Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(workspace_root())
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let packages = meta["packages"].as_array().unwrap();
    let names: Vec<&str> = packages.iter().filter_map(|p| p["name"].as_str()).collect();
    let mut actual: Vec<(String, Vec<String>)> = packages
        .iter()
        .map(|p| {
            let deps = p["dependencies"].as_array().unwrap().iter().filter(|d| {
                d["kind"].is_null() && names.contains(&d["name"].as_str().unwrap_or(""))
            });
            let deps = deps.map(|d| d["name"].as_str().unwrap().to_string());
            (
                p["name"].as_str().unwrap().to_string(),
                sorted(deps.collect()),
            )
        })
        .collect();
    actual.sort();
    documented.sort();
    assert_eq!(actual, documented);
}
