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

// ---------------------------------------------------------------------------------------
// Code shape: files and functions you can hold in your head.

/// Longest source file, in lines.
const MAX_FILE_LINES: usize = 800;
/// Longest function, in lines from its `fn` to its closing brace (comments included).
const MAX_FN_LINES: usize = 120;

/// Functions allowed over the limit: none. An entry would have to name a function
/// whose split is under way; the test fails on a stale entry, so the list only
/// shrinks.
const LONG_FN_ALLOWED: &[(&str, &str)] = &[];

/// The source text with comments, string and character literals blanked out (newlines
/// kept, so line numbers stay), so braces and `fn` in them do not count.
fn code_only(src: &str) -> String {
    let c: Vec<char> = src.chars().collect();
    let mut out: Vec<char> = c.clone();
    let blank = |out: &mut Vec<char>, from: usize, to: usize| {
        for ch in out.iter_mut().take(to.min(c.len())).skip(from) {
            if *ch != '\n' {
                *ch = ' ';
            }
        }
    };
    let ident = |i: usize| i > 0 && (c[i - 1].is_alphanumeric() || c[i - 1] == '_');
    let mut i = 0;
    while i < c.len() {
        let next = c.get(i + 1).copied();
        let start = i;
        if c[i] == '/' && next == Some('/') {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if c[i] == '/' && next == Some('*') {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if (c[i] == 'r' || (c[i] == 'b' && next == Some('r'))) && !ident(i) {
            // A raw string r"..." / r#"..."# (or br...), else an identifier.
            let mut j = i + if c[i] == 'b' { 2 } else { 1 };
            let hashes = c[j..].iter().take_while(|&&h| h == '#').count();
            j += hashes;
            if c.get(j) != Some(&'"') {
                i += 1;
                continue;
            }
            j += 1;
            while j < c.len() && !(c[j] == '"' && c[j + 1..].iter().take(hashes).all(|&h| h == '#'))
            {
                j += 1;
            }
            i = j + 1 + hashes;
        } else if c[i] == '"' {
            i += 1;
            while i < c.len() && c[i] != '"' {
                i += if c[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
        } else if c[i] == '\'' && (next == Some('\\') || c.get(i + 2) == Some(&'\'')) {
            // A character literal ('x', '\n', '\'', '\u{..}'); otherwise a lifetime.
            i += if next == Some('\\') { 3 } else { 2 };
            while i < c.len() && c[i] != '\'' {
                i += 1;
            }
            i += 1;
        } else {
            i += 1;
            continue;
        }
        blank(&mut out, start, i);
    }
    out.into_iter().collect()
}

/// Every function with a body in `src`: (name, first line (1-based), length in lines).
fn functions(src: &str) -> Vec<(String, usize, usize)> {
    let code = code_only(src);
    let line_of = |pos: usize| code[..pos].matches('\n').count();
    let mut out = Vec::new();
    let mut search = 0;
    while let Some(k) = code[search..].find("fn ") {
        let at = search + k;
        search = at + 3;
        let before = code[..at].chars().next_back();
        if before.is_some_and(|b| b.is_alphanumeric() || b == '_') {
            continue;
        }
        let rest = &code[at + 3..];
        let name: String = rest
            .trim_start()
            .chars()
            .take_while(|ch| ch.is_alphanumeric() || *ch == '_')
            .collect();
        if name.is_empty() {
            continue; // `fn(...)` pointer types
        }
        // The body opens at the first `{` outside parentheses and brackets; a `;` there
        // first is a declaration without a body.
        let (mut depth, mut open) = (0i32, None);
        for (j, ch) in rest.char_indices() {
            match ch {
                '(' | '[' => depth += 1,
                ')' | ']' => depth -= 1,
                ';' if depth == 0 => break,
                '{' if depth == 0 => {
                    open = Some(at + 3 + j);
                    break;
                }
                _ => {}
            }
        }
        let Some(open) = open else { continue };
        let mut braces = 0;
        let close = code[open..].char_indices().find_map(|(j, ch)| {
            match ch {
                '{' => braces += 1,
                '}' => braces -= 1,
                _ => {}
            }
            (braces == 0).then_some(open + j)
        });
        let Some(close) = close else { continue };
        let first = line_of(at);
        out.push((name, first + 1, line_of(close) - first + 1));
    }
    out
}

/// The `.rs` files under `src/` of every workspace member (tests, benches and
/// generated parsers live elsewhere: `tests/`, `benches/`, the build's `OUT_DIR`).
fn member_sources() -> Vec<PathBuf> {
    let root = workspace_root();
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let members = manifest
        .split("members = [")
        .nth(1)
        .and_then(|m| m.split(']').next())
        .expect("the workspace lists its members");
    let mut files = Vec::new();
    let mut dirs: Vec<PathBuf> = members
        .split(',')
        .map(|m| m.trim().trim_matches('"'))
        .filter(|m| !m.is_empty())
        .map(|m| root.join(m).join("src"))
        .collect();
    assert!(dirs.len() > 10, "workspace members not found");
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}

#[test]
fn no_file_or_function_is_too_long() {
    let root = workspace_root();
    let mut problems = Vec::new();
    let mut allowed_seen = Vec::new();
    for path in member_sources() {
        let rel = path
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let src = std::fs::read_to_string(&path).unwrap();
        let n = src.lines().count();
        if n > MAX_FILE_LINES {
            problems.push(format!("{rel}: {n} lines (at most {MAX_FILE_LINES})"));
        }
        for (name, line, len) in functions(&src) {
            if len <= MAX_FN_LINES {
                continue;
            }
            if LONG_FN_ALLOWED.contains(&(rel.as_str(), name.as_str())) {
                allowed_seen.push((rel.clone(), name));
                continue;
            }
            problems.push(format!(
                "{rel}:{line}: fn {name} is {len} lines (at most {MAX_FN_LINES})"
            ));
        }
    }
    for (file, name) in LONG_FN_ALLOWED {
        if !allowed_seen.iter().any(|(f, n)| f == file && n == name) {
            problems.push(format!(
                "{file}: fn {name} is allowed to be long but is not (any more): \
                 remove it from LONG_FN_ALLOWED"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_shape_scanner_skips_literals_and_comments() {
    let src = r##"fn a() {
    let s = "}}} fn fake() {";
    let c = '}';
    let r = r#"}"# ; // }
    /* } /* nested } */ fn fake2() { */
}
fn b<'x>(v: &'x [u8; 3]) -> [u8; 3] {
    let f: fn(u8) -> u8 = |x| x;
    let e = '\'';
    *v
}
trait T { fn decl(&self) -> [u8; 2]; }
"##;
    let fns = functions(src);
    assert_eq!(
        fns,
        vec![("a".to_string(), 1, 6), ("b".to_string(), 7, 5)],
        "{:?}",
        code_only(src)
    );
}
