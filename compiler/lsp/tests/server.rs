//! The server in process (`Server::handle`, what `fdc lsp` feeds from stdio): files
//! brought in with `use`, diagnostics cleared when fixed, and no panic or error on any
//! prefix of a real model.

use fdc_lsp::Server;
use lsp_server::{Message, Notification, Request, RequestId};
use serde_json::{json, Value};

fn open(s: &mut Server, uri: &str, text: &str) -> Vec<(String, Value)> {
    let out = s.handle(Message::Notification(Notification::new(
        "textDocument/didOpen".into(),
        json!({"textDocument": {"uri": uri, "languageId": "fd", "version": 1, "text": text}}),
    )));
    out.into_iter()
        .map(|m| match m {
            Message::Notification(n) => {
                assert_eq!(n.method, "textDocument/publishDiagnostics");
                (
                    n.params["uri"].as_str().unwrap().to_string(),
                    n.params["diagnostics"].clone(),
                )
            }
            other => panic!("unexpected {other:?}"),
        })
        .collect()
}

fn request(s: &mut Server, method: &str, params: Value) -> Value {
    let out = s.handle(Message::Request(Request::new(
        RequestId::from(7),
        method.into(),
        params,
    )));
    assert_eq!(out.len(), 1);
    match &out[0] {
        Message::Response(r) => {
            assert!(r.error.is_none(), "{method}: {:?}", r.error);
            r.result.clone().unwrap_or(Value::Null)
        }
        other => panic!("unexpected {other:?}"),
    }
}

fn at(uri: &str, line: u32, character: u32) -> Value {
    json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": character}})
}

fn temp_dir(tag: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("fdc-lsp-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn used_files_are_read_relative_to_the_document() {
    let dir = temp_dir("use");
    // The used file has an error of its own and defines `k`.
    std::fs::write(dir.join("lib.fd"), "param k = 2.0;\nparam bad = nope;\n").unwrap();
    let main = dir.join("main.fd");
    let uri = format!("file://{}", main.display());
    let lib_uri = format!("file://{}", dir.join("lib.fd").display());
    let text = "use \"lib.fd\";\nparam m = k * 3;\n";
    let mut s = Server::new();
    let published = open(&mut s, &uri, text);
    let mine = published
        .iter()
        .find(|(u, _)| *u == uri)
        .expect("the document");
    assert_eq!(mine.1, json!([]));
    let theirs = published
        .iter()
        .find(|(u, _)| *u == lib_uri)
        .expect("the used file");
    assert_eq!(theirs.1[0]["code"], "E0201");
    assert_eq!(
        theirs.1[0]["range"],
        json!({"start": {"line": 1, "character": 12}, "end": {"line": 1, "character": 16}})
    );
    // `k` is defined in lib.fd.
    let d = request(&mut s, "textDocument/definition", at(&uri, 1, 10));
    assert_eq!(d["uri"], json!(lib_uri));
    assert_eq!(d["range"]["start"], json!({"line": 0, "character": 6}));
    // The `use` path itself leads to the file.
    let d = request(&mut s, "textDocument/definition", at(&uri, 0, 6));
    assert_eq!(d["uri"], json!(lib_uri));
    // Removing the `use` clears the used file's diagnostics (and k is now unknown).
    let published = open(&mut s, &uri, "param m = k * 3;\n");
    let theirs = published
        .iter()
        .find(|(u, _)| *u == lib_uri)
        .expect("cleared");
    assert_eq!(theirs.1, json!([]));
    let mine = published.iter().find(|(u, _)| *u == uri).unwrap();
    assert_eq!(mine.1[0]["code"], "E0201");
}

#[test]
fn opened_stdlib_file_is_not_a_model() {
    let dir = fdc_lsp::stdlib_dir().expect("the stdlib copy is written");
    let path = dir.join("joints.fd");
    let uri = format!("file://{}", path.display());
    let text = std::fs::read_to_string(&path).unwrap();
    let mut s = Server::new();
    // Analyzed as a model it would define every stdlib type twice (E0202).
    let published = open(&mut s, &uri, &text);
    assert_eq!(published, vec![(uri.clone(), json!([]))]);
    // Go to definition inside it: `transfix_bb` used by `fixed`.
    let off = text
        .find("transfix_bb(b1, b2) { at = at; n = K.x; }")
        .unwrap();
    let line = text[..off].matches('\n').count() as u32;
    let col = (off - text[..off].rfind('\n').unwrap() - 1) as u32;
    let d = request(&mut s, "textDocument/definition", at(&uri, line, col + 2));
    let def = text.find("joint transfix_bb(").unwrap() + 6;
    let def_line = text[..def].matches('\n').count() as u32;
    assert_eq!(d["uri"], json!(uri));
    assert_eq!(d["range"]["start"]["line"], json!(def_line));
}

/// Every prefix of a real model (what a user has typed so far) and every request at
/// several places: answers, never a panic or an error response.
#[test]
fn every_prefix_of_an_example_is_answered() {
    let root =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/double_pendulum.fd");
    let text = std::fs::read_to_string(root).unwrap();
    let uri = "untitled:typing.fd";
    let mut s = Server::new();
    let bounds: Vec<usize> = (0..=text.len())
        .filter(|&i| text.is_char_boundary(i))
        .step_by(7)
        .collect();
    for &end in &bounds {
        let prefix = &text[..end];
        let published = open(&mut s, uri, prefix);
        assert_eq!(published[0].0, uri);
        let lines = prefix.lines().count() as u32;
        for line in [0, lines / 2, lines.saturating_sub(1), lines] {
            for col in [0, 5, 12, 200] {
                for m in [
                    "textDocument/hover",
                    "textDocument/definition",
                    "textDocument/completion",
                ] {
                    request(&mut s, m, at(uri, line, col));
                }
            }
        }
        request(
            &mut s,
            "textDocument/documentSymbol",
            json!({"textDocument": {"uri": uri}}),
        );
    }
}

#[test]
fn unknown_requests_and_documents_get_answers() {
    let mut s = Server::new();
    // A document never opened: no hover, no error.
    assert_eq!(
        request(&mut s, "textDocument/hover", at("file:///nowhere.fd", 0, 0)),
        Value::Null
    );
    let out = s.handle(Message::Request(Request::new(
        RequestId::from(1),
        "fd/unknown".into(),
        json!({}),
    )));
    match &out[0] {
        Message::Response(r) => assert_eq!(r.error.as_ref().unwrap().code, -32601),
        other => panic!("{other:?}"),
    }
    // Malformed parameters: an error response, not a crash.
    let out = s.handle(Message::Request(Request::new(
        RequestId::from(2),
        "textDocument/hover".into(),
        json!({"x": 1}),
    )));
    match &out[0] {
        Message::Response(r) => assert_eq!(r.error.as_ref().unwrap().code, -32602),
        other => panic!("{other:?}"),
    }
}

/// Inside a user element type: a let's definition and type, a connection, a param's
/// doc, and completion of the names visible there.
#[test]
fn names_inside_an_element_type() {
    let text = "\
force spring(b: body) {
    /// Stiffness [N/m].
    param k: scalar = 10;
    let d = b.position;
    apply force -k * d on b;
}
";
    let uri = "file:///tmp/fdc-lsp-typedef/m.fd";
    let mut s = Server::new();
    let published = open(&mut s, uri, text);
    assert_eq!(published[0].1, json!([]), "{published:?}");
    // `d` in the force law -> the let on line 3, a vec3.
    let d = request(&mut s, "textDocument/definition", at(uri, 4, 21));
    assert_eq!(
        d["range"],
        json!({"start": {"line": 3, "character": 8}, "end": {"line": 3, "character": 9}})
    );
    let h = request(&mut s, "textDocument/hover", at(uri, 4, 21));
    let v = h["contents"]["value"].as_str().unwrap();
    assert!(v.starts_with("`d`: vec3"), "{v}");
    // `k` -> the param, with its doc comment.
    let h = request(&mut s, "textDocument/hover", at(uri, 4, 17));
    let v = h["contents"]["value"].as_str().unwrap();
    assert!(
        v.contains("param k: scalar = 10") && v.contains("Stiffness [N/m]."),
        "{v}"
    );
    // `b` after `on` -> the connection; completion there offers it (a body).
    let d = request(&mut s, "textDocument/definition", at(uri, 4, 26));
    assert_eq!(d["range"]["start"], json!({"line": 0, "character": 13}));
    let items = request(&mut s, "textDocument/completion", at(uri, 4, 26));
    let names: Vec<&str> = items
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["label"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"b") && names.contains(&"ground"),
        "{names:?}"
    );
    assert!(!names.contains(&"k"), "{names:?}");
}

#[test]
fn members_of_a_body_after_a_dot() {
    let text = "body rod: rigid_body { mass = 1; inertia = [1, 1, 1]; }\noutput p = rod.\n";
    let uri = "file:///tmp/fdc-lsp-member/m.fd";
    let mut s = Server::new();
    open(&mut s, uri, text);
    let items = request(&mut s, "textDocument/completion", at(uri, 1, 15));
    let names: Vec<&str> = items
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["label"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "position",
            "rotation",
            "omega",
            "omega_body",
            "alpha",
            "alpha_body",
            "mass",
            "inertia",
            "inertia_global",
            "point",
            "velocity",
            "acceleration",
            "axis",
            "local"
        ]
    );
    // A number's decimal point is not a member access.
    let text = "param x = 1.\n";
    open(&mut s, uri, text);
    let items = request(&mut s, "textDocument/completion", at(uri, 0, 12));
    assert!(items
        .as_array()
        .unwrap()
        .iter()
        .all(|i| i["label"] != "position"));
}

/// Deep nesting: the front end bounds it (E0003); the server's walk over what is left
/// must not overflow either.
#[test]
fn deeply_nested_text_is_answered() {
    let uri = "file:///tmp/fdc-lsp-deep/m.fd";
    let mut s = Server::new();
    for (open_, close) in [("(", ")"), ("[", "]"), ("-", ""), ("sin(", ")")] {
        let text = format!(
            "param x = {}1{};\n",
            open_.repeat(20_000),
            close.repeat(20_000)
        );
        let published = open(&mut s, uri, &text);
        assert!(
            !published[0].1.as_array().unwrap().is_empty(),
            "{open_}: too deep is an error"
        );
        for col in [12, 40_000, 80_000] {
            for m in [
                "textDocument/hover",
                "textDocument/definition",
                "textDocument/completion",
            ] {
                request(&mut s, m, at(uri, 0, col));
            }
        }
    }
}

/// Just under the front end's bound the whole expression is parsed and checked: hover
/// at its innermost literal walks all the way down.
#[test]
fn nesting_just_under_the_limit_is_walked() {
    let n = fdc_frontend::lexer::MAX_NESTING - 10;
    let text = format!("param x = {}1{};\n", "(".repeat(n), ")".repeat(n));
    let uri = "file:///tmp/fdc-lsp-deep2/m.fd";
    let mut s = Server::new();
    let published = open(&mut s, uri, &text);
    assert_eq!(published[0].1, json!([]));
    let h = request(&mut s, "textDocument/hover", at(uri, 0, 10 + n as u32));
    let v = h["contents"]["value"].as_str().unwrap();
    assert!(v.contains("type: scalar"), "{v}");
}

fn change(uri: &str, edits: Value) -> Message {
    Message::Notification(Notification::new(
        "textDocument/didChange".into(),
        json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": edits}),
    ))
}

fn range(l0: u32, c0: u32, l1: u32, c1: u32) -> Value {
    json!({"start": {"line": l0, "character": c0}, "end": {"line": l1, "character": c1}})
}

/// Incremental sync: ranges in UTF-16 units, applied in order; a change absorbed
/// without analysis is still part of the text the next change edits.
#[test]
fn incremental_changes_edit_the_text() {
    let uri = "file:///tmp/fdc-lsp-incr/m.fd";
    let mut s = Server::new();
    open(&mut s, uri, "param ω = 1; param b = 2;\n");
    // `2` is at UTF-16 column 23 (byte 24). Make it `Lx` (absorbed, no analysis),
    // then `L` -> `c` and append ` + 1`: `cx` is unknown only if every edit lands
    // where it should.
    s.absorb_change(change(
        uri,
        json!([{"range": range(0, 23, 0, 24), "text": "Lx"}]),
    ));
    let out = s.handle(change(
        uri,
        json!([
            {"range": range(0, 23, 0, 24), "text": "c"},
            {"range": range(0, 25, 0, 25), "text": " + 1"}
        ]),
    ));
    let Message::Notification(n) = &out[0] else {
        panic!("{out:?}")
    };
    let diags = n.params["diagnostics"].as_array().unwrap();
    let codes: Vec<&str> = diags.iter().map(|d| d["code"].as_str().unwrap()).collect();
    assert_eq!(codes, ["E0001", "E0201"], "{diags:?}");
    assert!(
        diags[1]["message"].as_str().unwrap().contains("`cx`"),
        "{diags:?}"
    );
    assert_eq!(diags[1]["range"], range(0, 23, 0, 25));
    let h = request(&mut s, "textDocument/hover", at(uri, 0, 28));
    assert!(
        h["contents"]["value"].as_str().unwrap().contains("1"),
        "{h}"
    );
    // A change without a range replaces everything.
    let out = s.handle(change(uri, json!([{"text": "param a = 1;\n"}])));
    let Message::Notification(n) = &out[0] else {
        panic!("{out:?}")
    };
    assert_eq!(n.params["diagnostics"], json!([]));
}

/// The published diagnostics of a batch of messages, per URI.
fn published(out: Vec<Message>) -> Vec<(String, Value)> {
    out.into_iter()
        .map(|m| match m {
            Message::Notification(n) if n.method == "textDocument/publishDiagnostics" => (
                n.params["uri"].as_str().unwrap().to_string(),
                n.params["diagnostics"].clone(),
            ),
            other => panic!("unexpected {other:?}"),
        })
        .collect()
}

fn codes(diags: &Value) -> Vec<&str> {
    diags
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].as_str().unwrap())
        .collect()
}

/// The front end is happy; only the lowering finds the table file missing.
const MISSING: &str = "param k = 1;\nspline law = table(\"gone.txt\", 0, 1);\noutput y = law(k);\n";

/// Opening lowers at once; a change is answered by the front end at once and lowered
/// when the server is idle; meanwhile an error before every edit stays shown.
#[test]
fn lowering_runs_on_open_and_when_idle() {
    let dir = temp_dir("lower");
    let uri = format!("file://{}", dir.join("m.fd").display());
    let mut s = Server::new();
    let first = open(&mut s, &uri, MISSING);
    assert_eq!(first.len(), 1);
    assert_eq!(codes(&first[0].1), ["E0910"]);
    let table = MISSING.find("table(").unwrap() as u32;
    let start = table - MISSING.find('\n').unwrap() as u32 - 1;
    let call_len = "table(\"gone.txt\", 0, 1)".len() as u32;
    let at_line = |l: u32| range(l, start, l, start + call_len);
    assert_eq!(first[0].1[0]["range"], at_line(1));
    assert!(!s.lowering_pending());

    // An edit after the error: it is kept (its span still fits) until the next lowering,
    // which finds the same and so publishes nothing new.
    let appended = format!("{MISSING}// more\n");
    let now = published(s.handle(change(&uri, json!([{"text": appended}]))));
    assert_eq!(codes(&now[0].1), ["E0910"]);
    assert_eq!(now[0].1[0]["range"], at_line(1));
    assert!(s.lowering_pending());
    assert_eq!(published(s.idle()), vec![]);
    assert!(!s.lowering_pending());

    // An edit before it: dropped at once, found again (one line down) when idle.
    let inserted = format!("// first\n{appended}");
    let now = published(s.handle(change(&uri, json!([{"text": inserted}]))));
    assert_eq!(now, vec![(uri.clone(), json!([]))]);
    let later = published(s.idle());
    assert_eq!(later.len(), 1);
    assert_eq!(codes(&later[0].1), ["E0910"]);
    assert_eq!(later[0].1[0]["range"], at_line(2));

    // A front-end error: the lowering waits for a checked model.
    let broken = inserted.replace("law(k)", "law(kk)");
    let now = published(s.handle(change(&uri, json!([{"text": broken}]))));
    assert_eq!(codes(&now[0].1), ["E0201"]);
    assert!(!s.lowering_pending());
    assert_eq!(published(s.idle()), vec![]);

    // The table appears and the model is fixed: clean, and the lowering agrees.
    std::fs::write(dir.join("gone.txt"), "0 1\n1 2\n").unwrap();
    let now = published(s.handle(change(&uri, json!([{"text": inserted}]))));
    assert_eq!(now, vec![(uri.clone(), json!([]))]);
    assert_eq!(published(s.idle()), vec![]);
}

/// A `use`d file's table is relative to that file, not to the document or the server's
/// working directory; its lowering error is published for the used file.
#[test]
fn tables_of_used_files_are_found_next_to_them() {
    let dir = temp_dir("lower-use");
    std::fs::create_dir_all(dir.join("lib")).unwrap();
    std::fs::write(
        dir.join("lib/law.fd"),
        "spline law = table(\"law.txt\", 0, 1);\n",
    )
    .unwrap();
    let lib_uri = format!("file://{}", dir.join("lib/law.fd").display());
    let uri = format!("file://{}", dir.join("m.fd").display());
    let text = "use \"lib/law.fd\";\noutput y = law(0.5);\n";
    let _ = std::fs::remove_file(dir.join("lib/law.txt"));
    let mut s = Server::new();
    let first = open(&mut s, &uri, text);
    let theirs = first
        .iter()
        .find(|(u, _)| *u == lib_uri)
        .unwrap_or_else(|| panic!("no diagnostics for the used file: {first:?}"));
    assert_eq!(codes(&theirs.1), ["E0910"]);
    assert_eq!(theirs.1[0]["range"], range(0, 13, 0, 35));
    let message = theirs.1[0]["message"].as_str().unwrap();
    assert!(message.contains("lib/law.txt"), "{message}");

    // With the table next to the used file, the error is gone from both.
    std::fs::write(dir.join("lib/law.txt"), "0 1\n1 2\n").unwrap();
    let now = open(&mut s, &uri, text);
    assert!(now.contains(&(uri.clone(), json!([]))), "{now:?}");
    assert!(now.contains(&(lib_uri, json!([]))), "{now:?}");
}

/// A change absorbed without analysis moved the error down a line; the next change
/// edits only after it. The shown error must not stay at its old line.
#[test]
fn an_absorbed_change_counts_when_keeping_lowering_errors() {
    let dir = temp_dir("lower-absorb");
    let uri = format!("file://{}", dir.join("m.fd").display());
    let mut s = Server::new();
    assert_eq!(codes(&open(&mut s, &uri, MISSING)[0].1), ["E0910"]);
    s.absorb_change(change(
        &uri,
        json!([{"text": format!("// top\n{MISSING}")}]),
    ));
    let end = MISSING.lines().count() as u32 + 1;
    let now = published(s.handle(change(
        &uri,
        json!([{"range": range(end, 0, end, 0), "text": "// end\n"}]),
    )));
    assert_eq!(now, vec![(uri.clone(), json!([]))]);
    let later = published(s.idle());
    assert_eq!(later[0].1[0]["range"]["start"]["line"], 2, "{later:?}");
}

#[test]
fn every_simulate_setting_is_completed() {
    // The keys of docs/language.md §7, incl. the non-numeric ones.
    let text = "simulate {\n    \n}\n";
    let uri = "file:///tmp/fdc-lsp-settings/m.fd";
    let mut s = Server::new();
    open(&mut s, uri, text);
    let items = request(&mut s, "textDocument/completion", at(uri, 1, 4));
    let mut names: Vec<&str> = items
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["label"].as_str().unwrap())
        .collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "adaptive",
            "alpha",
            "assemble",
            "atol",
            "end",
            "form",
            "given",
            "linear_solver",
            "newton",
            "output_every",
            "output_exact",
            "rho_inf",
            "step",
            "step_max",
            "step_min"
        ]
    );
}

/// Every setting `fdc run` refuses is a diagnostic of the server too (the runtime's one
/// validation, through the lowering), each on its value.
#[test]
fn settings_the_run_refuses_are_diagnostics_on_their_values() {
    let dir = temp_dir("settings");
    let uri = format!("file://{}", dir.join("m.fd").display());
    let bad = [
        ("step", "0"),
        ("alpha", "0.5"),
        ("end", "-1"),
        ("output_every", "-1"),
        ("adaptive", "-1"),
        ("newton", "velocity(-1)"),
        ("newton", "fixed(1000000000000)"),
        ("step", "1e-300"),
    ];
    for (key, value) in bad {
        let text = format!(
            "body b: rigid_body {{ mass = 1; inertia = [1, 1, 1]; }}\nsimulate {{ {key} = {value}; }}\n"
        );
        let mut s = Server::new();
        let out = open(&mut s, &uri, &text);
        assert_eq!(codes(&out[0].1), ["E0920"], "{key} = {value}");
        let col = text.lines().nth(1).unwrap().find(value).unwrap() as u32;
        assert_eq!(
            out[0].1[0]["range"],
            range(1, col, 1, col + value.len() as u32),
            "{key} = {value}"
        );
    }
}

/// A model with indexed instances made by loops: at top level and inside a type.
const LOOPED: &str = "param N = 3;
for i in 0..N {
    body crank[i]: rigid_body { mass = 1; inertia = [1, 1, 1]; position = [i, 0, 0]; }
    if i > 0 {
        joint pin[i]: revolute(crank[i], crank[i - 1]) { at = [i - 0.5, 0, 0]; axis = [0, 0, 1]; }
    }
}
force anchors(b: body) {
    for m in 0..8 {
        force s[m]: spring_damper(b) { at_a = [m, 0, 5]; at_b = [m, 0, 6]; stiffness = 1; }
    }
}
force hold: anchors(crank[0]);
output x2 = crank[2].position.x;
output y1 = crank[1].
";

fn hover_text(s: &mut Server, uri: &str, line: u32, character: u32) -> String {
    let h = request(s, "textDocument/hover", at(uri, line, character));
    h["contents"]["value"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// Hover on an indexed declaration or use names the instances the loop made; after
/// `crank[1].` completion offers a body's members.
#[test]
fn indexed_names_in_hover_and_completion() {
    let uri = "file:///tmp/fdc-lsp-indexed/m.fd";
    let mut s = Server::new();
    open(&mut s, uri, LOOPED);
    let cranks = "One of the 3 instances `crank[0]`, `crank[1]`, `crank[2]`";
    // The declaration `crank[i]`.
    let h = hover_text(&mut s, uri, 2, 10);
    assert!(
        h.contains(cranks) && h.contains("rigid_body") && h.contains("`mass`"),
        "{h}"
    );
    // `crank[i - 1]` in the joint (the first iteration that makes one: i = 1).
    let h = hover_text(&mut s, uri, 4, 43);
    assert!(
        h.starts_with("`crank[0]`: body") && h.contains(cranks),
        "{h}"
    );
    // `pin[i]` exists for i > 0 only.
    let h = hover_text(&mut s, uri, 4, 15);
    assert!(
        h.contains("One of the 2 instances `pin[1]`, `pin[2]`"),
        "{h}"
    );
    // Nested instances of a type: 8, listed shortly.
    let h = hover_text(&mut s, uri, 9, 15);
    assert!(
        h.contains("One of the 8 instances `s[0]`, `s[1]`, …, `s[7]`"),
        "{h}"
    );
    // A use at top level, and a plain instance (no family line).
    let h = hover_text(&mut s, uri, 13, 14);
    assert!(
        h.starts_with("`crank[2]`: body") && h.contains(cranks),
        "{h}"
    );
    let h = hover_text(&mut s, uri, 12, 7);
    assert!(
        h.contains("force hold: anchors") && !h.contains("One of"),
        "{h}"
    );
    let labels = |items: Value| -> Vec<String> {
        (items.as_array().unwrap().iter())
            .map(|i| i["label"].as_str().unwrap().to_string())
            .collect()
    };
    // After `crank[1].`: members of a body, no value names.
    let items = labels(request(&mut s, "textDocument/completion", at(uri, 14, 21)));
    for m in ["position", "rotation", "point", "omega_body"] {
        assert!(items.iter().any(|l| l == m), "{m} missing: {items:?}");
    }
    assert!(!items.iter().any(|l| l == "N"), "{items:?}");
    // Where a value goes: every indexed instance by its name.
    let items = labels(request(&mut s, "textDocument/completion", at(uri, 13, 12)));
    for n in ["crank[0]", "crank[1]", "crank[2]", "pin[1]", "pin[2]"] {
        assert!(items.iter().any(|l| l == n), "{n} missing: {items:?}");
    }
}
