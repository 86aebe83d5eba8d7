//! Drives the real `fdc lsp` binary over stdio as an editor would: JSON-RPC with
//! `Content-Length` framing, initialize, didOpen with an erroneous model (diagnostics
//! with UTF-16 ranges), didChange fixing it (empty diagnostics), hover, definition,
//! completion, document symbols, broken text, shutdown and exit.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::Duration;

struct Client {
    child: Child,
    stdin: ChildStdin,
    incoming: Receiver<Value>,
    next_id: i64,
}

fn read_message(r: &mut impl BufRead) -> Option<Value> {
    let mut len = None;
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(v) = line.strip_prefix("Content-Length: ") {
            len = v.parse::<usize>().ok();
        }
    }
    let mut body = vec![0; len?];
    r.read_exact(&mut body).ok()?;
    serde_json::from_slice(&body).ok()
}

impl Client {
    fn start() -> Client {
        let mut child = Command::new(env!("CARGO_BIN_EXE_fdc"))
            .arg("lsp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("fdc lsp starts");
        let stdin = child.stdin.take().unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let (tx, incoming) = channel();
        std::thread::spawn(move || {
            while let Some(m) = read_message(&mut stdout) {
                if tx.send(m).is_err() {
                    break;
                }
            }
        });
        Client {
            child,
            stdin,
            incoming,
            next_id: 1,
        }
    }

    fn send(&mut self, msg: Value) {
        let body = msg.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        self.stdin.flush().unwrap();
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// The next message from the server; a generous bound only so that a broken
    /// server fails the test instead of hanging it.
    fn recv(&self) -> Value {
        self.incoming
            .recv_timeout(Duration::from_secs(60))
            .expect("the server answers")
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let m = self.recv();
            if m["id"] == json!(id) {
                assert!(m.get("error").is_none(), "{method} failed: {m}");
                return m["result"].clone();
            }
        }
    }

    /// The next publishDiagnostics for `uri`.
    fn diagnostics_for(&self, uri: &str) -> Vec<Value> {
        loop {
            let m = self.recv();
            if m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri {
                return m["params"]["diagnostics"].as_array().unwrap().clone();
            }
        }
    }
}

fn pos(line: u32, character: u32) -> Value {
    json!({"line": line, "character": character})
}

fn at(uri: &str, line: u32, character: u32) -> Value {
    json!({"textDocument": {"uri": uri}, "position": pos(line, character)})
}

/// A valid model except line 2 (0-based): `ω` is not a letter the lexer accepts, and
/// `Lx` is an unknown name after it, so its UTF-16 and byte columns differ.
const BROKEN: &str = "\
// Pendel, Länge in m
param L = 1.0;
param kω = 2.0; output s = Lx;
body rod: rigid_body {
    mass = 2.0;
    inertia = [1e-4, 0.1, 0.1];
    position = [L/2, 0, 0];
}
joint pivot: revolute(rod, ground) {
    at = [0, 0, 0];
    axis = [0, 1, 0];
}
output tip = rod.point([L/2, 0, 0]);
";

/// `BROKEN` with both errors fixed.
fn fixed() -> String {
    BROKEN.replace("= Lx;", "= L;").replace("kω", "k")
}

/// (line, UTF-16 column) of the `n`-th occurrence of `needle` in `text`.
fn locate(text: &str, needle: &str, n: usize) -> (u32, u32) {
    let off = text.match_indices(needle).nth(n).expect("needle present").0;
    let before = &text[..off];
    let line = before.matches('\n').count() as u32;
    let col = before[before.rfind('\n').map(|i| i + 1).unwrap_or(0)..]
        .encode_utf16()
        .count() as u32;
    (line, col)
}

fn range(line: u32, start: u32, end: u32) -> Value {
    json!({"start": pos(line, start), "end": pos(line, end)})
}

fn labels(items: &Value) -> Vec<String> {
    items
        .as_array()
        .expect("a completion list")
        .iter()
        .map(|i| i["label"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn editor_session_over_stdio() {
    let dir = std::env::temp_dir().join(format!("fdc-lsp-stdio-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let uri_path = dir.join("pendel.fd");
    let uri = format!("file://{}", uri_path.display());
    let mut c = Client::start();
    let init = c.request(
        "initialize",
        json!({"processId": null, "rootUri": null, "capabilities": {}}),
    );
    assert_eq!(init["capabilities"]["hoverProvider"], json!(true));
    assert_eq!(init["capabilities"]["textDocumentSync"], json!(2)); // incremental
    c.notify("initialized", json!({}));

    // 1. An erroneous model: the diagnostics `fdc check` gives, with UTF-16 ranges.
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "fd", "version": 1, "text": BROKEN}}),
    );
    let diags = c.diagnostics_for(&uri);
    let (l, col) = locate(BROKEN, "Lx", 0);
    assert_eq!((l, col), (2, 27)); // 28 in bytes: `ω` is two bytes, one UTF-16 unit
    let unknown = diags
        .iter()
        .find(|d| d["code"] == "E0201")
        .unwrap_or_else(|| panic!("no E0201 in {diags:?}"));
    assert_eq!(unknown["range"], range(2, 27, 29));
    assert_eq!(unknown["severity"], 1);
    assert_eq!(unknown["source"], "fdc");
    assert!(unknown["message"].as_str().unwrap().contains("Lx"));
    let bad_char = diags
        .iter()
        .find(|d| d["code"] == "E0001")
        .unwrap_or_else(|| panic!("no E0001 in {diags:?}"));
    // `ω` is one UTF-16 unit (two bytes).
    assert_eq!(bad_char["range"], range(2, 7, 8));
    assert_eq!(diags.len(), 2, "{diags:?}");

    // 2. The fix: an empty list clears the editor's diagnostics.
    let good = fixed();
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": good}]}),
    );
    assert_eq!(c.diagnostics_for(&uri), Vec::<Value>::new());
    hover(&mut c, &uri, &good);
    definition(&mut c, &uri, &good);
    completion(&mut c, &uri, &good);
    symbols_and_junk(&mut c, &uri);

    // 8. Shutdown and exit: the process ends with status 0.
    assert_eq!(c.request("shutdown", Value::Null), Value::Null);
    c.notify("exit", Value::Null);
    let status = c.child.wait().unwrap();
    assert!(status.success(), "{status}");
}

/// Step 3 of the session: hover texts.
fn hover(c: &mut Client, uri: &str, good: &str) {
    // 3. Hover: an element type of the stdlib shows its doc and fields with defaults.
    let (l, col) = locate(good, "rigid_body", 0);
    let h = c.request("textDocument/hover", at(uri, l, col + 3));
    let text = h["contents"]["value"].as_str().unwrap();
    assert!(text.contains("body rigid_body("), "{text}");
    assert!(text.contains("`mass`: scalar (required)"), "{text}");
    assert_eq!(h["range"], range(l, col, col + 10));
    // A field: its type and the type it belongs to.
    let (l, col) = locate(good, "axis", 0);
    let h = c.request("textDocument/hover", at(uri, l, col));
    let text = h["contents"]["value"].as_str().unwrap();
    assert!(text.starts_with("`axis`: vec3"), "{text}");
    assert!(text.contains("field of `revolute`"), "{text}");
    // A name in an expression: its type and declaration.
    let (l, col) = locate(good, "L/2", 0);
    let h = c.request("textDocument/hover", at(uri, l, col));
    let text = h["contents"]["value"].as_str().unwrap();
    assert!(text.starts_with("`L`: scalar"), "{text}");
    assert!(text.contains("param L: scalar = 1.0"), "{text}");
    // An expression: the type the checker gave it.
    let (l, col) = locate(good, "rod.point", 0);
    let h = c.request("textDocument/hover", at(uri, l, col + 5));
    assert!(
        h["contents"]["value"].as_str().unwrap().contains("vec3"),
        "{h}"
    );
}

/// Step 4: go to definition.
fn definition(c: &mut Client, uri: &str, good: &str) {
    // 4. Definition: a body named in a joint, a param, and a stdlib element type.
    let (l, col) = locate(good, "rod, ground", 0);
    let d = c.request("textDocument/definition", at(uri, l, col + 1));
    let (dl, dc) = locate(good, "rod:", 0);
    assert_eq!(d["uri"], json!(uri));
    assert_eq!(d["range"], range(dl, dc, dc + 3));
    let (l, col) = locate(good, "L/2", 1);
    let d = c.request("textDocument/definition", at(uri, l, col));
    assert_eq!(d["range"], range(1, 6, 7));
    let (l, col) = locate(good, "revolute", 0);
    let d = c.request("textDocument/definition", at(uri, l, col + 2));
    let target = d["uri"].as_str().unwrap();
    assert!(target.ends_with("/joints.fd"), "{target}");
    let path = target.strip_prefix("file://").unwrap();
    let joints = fdc_stdlib::FILES
        .iter()
        .find(|f| f.0 == "joints.fd")
        .unwrap()
        .1;
    assert_eq!(std::fs::read_to_string(path).unwrap(), joints);
    let (jl, jc) = locate(joints, "joint revolute(", 0);
    assert_eq!(d["range"], range(jl, jc + 6, jc + 14));
}

/// Step 5: completion on half-typed text.
fn completion(c: &mut Client, uri: &str, good: &str) {
    // 5. Completion on half-typed text (its own diagnostics come first).
    let typing = format!("{good}body arm: \n");
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 3}, "contentChanges": [{"text": typing}]}),
    );
    assert!(!c.diagnostics_for(uri).is_empty());
    let line = typing.lines().count() as u32 - 1;
    let items = c.request("textDocument/completion", at(uri, line, 10));
    let names = labels(&items);
    assert!(names.contains(&"rigid_body".to_string()), "{names:?}");
    assert!(
        !names.contains(&"revolute".to_string()),
        "joints are not bodies: {names:?}"
    );

    let typing = format!("{good}joint j2: revolute(\n");
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 4}, "contentChanges": [{"text": typing}]}),
    );
    c.diagnostics_for(uri);
    let line = typing.lines().count() as u32 - 1;
    let names = labels(&c.request("textDocument/completion", at(uri, line, 19)));
    assert!(
        names.contains(&"rod".to_string()) && names.contains(&"ground".to_string()),
        "{names:?}"
    );
    assert!(
        !names.contains(&"L".to_string()),
        "only bodies go there: {names:?}"
    );

    // Fields inside an instance's braces, with their types and defaults.
    let (l, _) = locate(good, "axis", 0);
    let items = c.request("textDocument/completion", at(uri, l, 4));
    let axis = items
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["label"] == "axis")
        .unwrap_or_else(|| panic!("no `axis` in {items}"));
    assert!(
        axis["detail"].as_str().unwrap().starts_with("vec3"),
        "{axis}"
    );
    let names = labels(&items);
    assert!(names.contains(&"at".to_string()), "{names:?}");
    // A value: params, builtin functions.
    let (l, col) = locate(good, "L/2", 0);
    let names = labels(&c.request("textDocument/completion", at(uri, l, col)));
    for want in ["L", "sin", "atan2", "dot", "rod"] {
        assert!(
            names.contains(&want.to_string()),
            "{want} missing: {names:?}"
        );
    }
}

/// Steps 6 and 7: the outline, then answers on broken text.
fn symbols_and_junk(c: &mut Client, uri: &str) {
    // 6. Document symbols: the outline.
    let s = c.request(
        "textDocument/documentSymbol",
        json!({"textDocument": {"uri": uri}}),
    );
    let names: Vec<&str> = s
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["L", "k", "rod", "pivot"]);

    // 7. Broken text everywhere: every request still gets an answer.
    let junk = "body ω: rigid_body {{ mass = ; [[ ( joint : revolute(,, ) }\nparam = ;\n\"open";
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 5}, "contentChanges": [{"text": junk}]}),
    );
    assert!(!c.diagnostics_for(uri).is_empty());
    for line in 0..3 {
        for col in (0..60).step_by(3) {
            for m in [
                "textDocument/hover",
                "textDocument/definition",
                "textDocument/completion",
            ] {
                c.request(m, at(uri, line, col));
            }
        }
    }
}

/// The front end finds nothing wrong here; the lowering cannot read the spline's table.
const MISSING_TABLE: &str = "\
// a valve lift from a measured table
param k = 1;
spline law = table(\"ω_table.txt\", 0, 1);
body b: rigid_body { mass = k; inertia = [1, 1, 1]; }
output y = law(k);
";

#[test]
fn lowering_errors_reach_the_editor() {
    let dir = std::env::temp_dir().join(format!("fdc-lsp-lower-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let table = dir.join("ω_table.txt");
    let _ = std::fs::remove_file(&table);
    let path = dir.join("lift.fd");
    // An ASCII path: the URI needs no percent-encoding. The table's name has an `ω`.
    let uri = format!("file://{}", path.display());
    let mut c = Client::start();
    c.request(
        "initialize",
        json!({"processId": null, "rootUri": null, "capabilities": {}}),
    );
    c.notify("initialized", json!({}));

    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "fd", "version": 1, "text": MISSING_TABLE}}),
    );
    let diags = c.diagnostics_for(&uri);
    assert_eq!(diags.len(), 1, "{diags:?}");
    let d = &diags[0];
    assert_eq!(d["code"], "E0910");
    assert_eq!(d["severity"], 1);
    // The call `table("ω_table.txt", 0, 1)`, in UTF-16 units (`ω` is one unit, two bytes).
    let (l, col) = locate(MISSING_TABLE, "table(", 0);
    assert_eq!((l, col), (2, 13));
    let len = "table(\"ω_table.txt\", 0, 1)".encode_utf16().count() as u32;
    assert_eq!(d["range"], range(l, col, col + len));
    let message = d["message"].as_str().unwrap();
    assert!(message.contains("cannot read table"), "{message}");
    assert!(message.contains("note: the path is relative"), "{message}");

    // A change above it: the front end's answer comes at once (the old span no longer
    // fits, so without the error), the lowering's a moment later (`LOWER_AFTER`), with
    // the error one line further down.
    let moved = format!("// moved down\n{MISSING_TABLE}");
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": moved}]}),
    );
    assert_eq!(c.diagnostics_for(&uri), Vec::<Value>::new());
    let diags = c.diagnostics_for(&uri);
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert_eq!(diags[0]["code"], "E0910");
    assert_eq!(diags[0]["range"], range(l + 1, col, col + len));

    // The table appears (saved next to the model): the next change is clean.
    std::fs::write(&table, "0 0\n1 2\n2 3\n").unwrap();
    let clean = MISSING_TABLE.replace("param k = 1;", "param k = 1.5;");
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 3}, "contentChanges": [{"text": clean}]}),
    );
    assert_eq!(c.diagnostics_for(&uri), Vec::<Value>::new());

    // A lowering error other than a table: the body's mass is not a finite number.
    let inf = clean.replace("param k = 1.5;", "param k = 1/0;");
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 4}, "contentChanges": [{"text": inf}]}),
    );
    // The front end finds nothing; the lowering evaluates `k`.
    assert_eq!(c.diagnostics_for(&uri), Vec::<Value>::new());
    let diags = c.diagnostics_for(&uri);
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert_eq!(diags[0]["code"], "E0943");
    assert!(
        diags[0]["message"].as_str().unwrap().contains("inf"),
        "{diags:?}"
    );
    // At the instance `b`, whose parameter it is.
    assert_eq!(diags[0]["range"]["start"]["line"], 3, "{diags:?}");

    assert_eq!(c.request("shutdown", Value::Null), Value::Null);
    c.notify("exit", Value::Null);
    assert!(c.child.wait().unwrap().success());
}

impl Client {
    /// The answer to a request that must fail: its error code and message.
    fn request_error(&mut self, method: &str, params: Value) -> (i64, String) {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let m = self.recv();
            if m["id"] == json!(id) {
                let e = &m["error"];
                return (e["code"].as_i64().unwrap_or(0), e["message"].to_string());
            }
        }
    }

    /// The exit status, within a bound (a server that does not end fails the test).
    fn exit_status(mut self) -> Option<i32> {
        drop(self.stdin);
        for _ in 0..600 {
            if let Some(s) = self.child.try_wait().unwrap() {
                return s.code();
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.child.kill();
        panic!("the server did not end within 60 s");
    }
}

/// The lifecycle of the specification: initialize first (else -32002), only once
/// (else -32600), nothing after shutdown but exit.
#[test]
fn lifecycle_per_the_specification() {
    let mut c = Client::start();
    let (code, message) = c.request_error("textDocument/hover", at("file:///x.fd", 0, 0));
    assert_eq!(code, -32002, "{message}");
    assert!(message.contains("not initialized"), "{message}");
    assert!(!message.contains("Request {"), "a debug dump: {message}");
    let init = json!({"processId": null, "rootUri": null, "capabilities": {}});
    c.request("initialize", init.clone());
    let (code, message) = c.request_error("initialize", init);
    assert_eq!(code, -32600, "{message}");
    c.request("shutdown", Value::Null);
    let (code, _) = c.request_error("textDocument/hover", at("file:///x.fd", 0, 0));
    assert_eq!(code, -32600);
    c.notify("exit", Value::Null);
    assert_eq!(c.exit_status(), Some(0));
}

/// `Content-Length: 100000000000` is refused before any allocation: the server says
/// why and ends with status 1 (it used to abort on the allocation).
#[test]
fn oversized_message_ends_the_server_cleanly() {
    let mut c = Client::start();
    c.request(
        "initialize",
        json!({"processId": null, "rootUri": null, "capabilities": {}}),
    );
    write!(c.stdin, "Content-Length: 100000000000\r\n\r\n{{}}").unwrap();
    c.stdin.flush().unwrap();
    assert_eq!(c.exit_status(), Some(1));
}

/// A document that `use`s the server's own stdin, a FIFO, or /dev/zero: each is an
/// E0208 at once, and the server goes on answering. An old-Mac (CR-only) document
/// gets its diagnostics on the right line.
#[test]
fn files_that_are_no_regular_files_never_block_the_server() {
    let dir = std::env::temp_dir().join(format!("fdc-lsp-fifo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("pipe.fd");
    let _ = std::fs::remove_file(&fifo);
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let uri = format!("file://{}", dir.join("m.fd").display());
    let mut c = Client::start();
    c.request(
        "initialize",
        json!({"processId": null, "rootUri": null, "capabilities": {}}),
    );
    for target in ["/dev/stdin", "/dev/zero", fifo.to_str().unwrap()] {
        let text = format!("use \"{target}\";\nparam k = 1;\n");
        c.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "fd", "version": 1, "text": text}}),
        );
        let diags = c.diagnostics_for(&uri);
        assert_eq!(diags.len(), 1, "{target}: {diags:?}");
        assert_eq!(diags[0]["code"], "E0208");
        let message = diags[0]["message"].as_str().unwrap();
        assert!(message.contains("not a regular file"), "{message}");
    }
    // CR-only line ends: the unknown name is on line 2 (0-based), not line 0.
    let old_mac = "// a comment\rparam k = 1;\routput y = kk;\r";
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "fd", "version": 2, "text": old_mac}}),
    );
    let diags = c.diagnostics_for(&uri);
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert_eq!(diags[0]["code"], "E0201");
    assert_eq!(diags[0]["range"], range(2, 11, 13));
    c.request("shutdown", Value::Null);
    c.notify("exit", Value::Null);
    assert_eq!(c.exit_status(), Some(0));
    let _ = std::fs::remove_dir_all(&dir);
}
