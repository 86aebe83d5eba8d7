//! Answer time of the language server for a 1,000-line model (target: < 50 ms).
//!
//! `cargo bench -p fdc-lsp --bench answer_time`
//!
//! Runs the server in process (the same `Server::handle` that `fdc lsp` feeds from
//! stdio, without the pipe) and prints the median and worst of several runs of: a
//! didChange (full re-analysis by the front end and diagnostics), the same followed by
//! the lowering that `fdc lsp` runs once the client is idle, hover, definition,
//! completion and document symbols near the end of the file.

use fdc_lsp::Server;
use lsp_server::{Message, Notification, Request, RequestId};
use serde_json::json;
use std::time::{Duration, Instant};

/// A chain of `n` pendulum links: 10 lines each, plus a header.
fn model(n: usize) -> String {
    let mut s = String::from(
        "// benchmark: a chain of rods\nparam L = 0.5;\nparam m = 1.0;\ngravity [0, 0, -9.81];\n",
    );
    for i in 0..n {
        let prev = if i == 0 {
            "ground".to_string()
        } else {
            format!("rod{}", i - 1)
        };
        s.push_str(&format!(
            "body rod{i}: rigid_body {{\n    mass = m;\n    inertia = [1e-4, m*L^2/12, m*L^2/12];\n    position = [L*{i} + L/2, 0, 0];\n}}\njoint hinge{i}: revolute(rod{i}, {prev}) {{\n    at = [L*{i}, 0, 0];\n    axis = [0, 1, 0];\n}}\n\n"
        ));
    }
    s.push_str("simulate {\n    end = 1;\n    step = 1e-3;\n}\n");
    s
}

/// One measured operation on the server.
type Case<'a> = Box<dyn FnMut(&mut Server) + 'a>;

fn time(runs: usize, mut f: impl FnMut()) -> (Duration, Duration) {
    let mut t: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    t.sort();
    (t[runs / 2], t[runs - 1])
}

fn main() {
    let text = model(100);
    let lines = text.lines().count();
    let uri = "file:///tmp/fdc-bench/chain.fd";
    let mut server = Server::new();
    let open = |v: i32, text: &str| {
        Message::Notification(Notification::new(
            "textDocument/didChange".into(),
            json!({"textDocument": {"uri": uri, "version": v},
                   "contentChanges": [{"text": text}]}),
        ))
    };
    server.handle(Message::Notification(Notification::new(
        "textDocument/didOpen".into(),
        json!({"textDocument": {"uri": uri, "languageId": "fd", "version": 0, "text": text}}),
    )));
    let last_body = lines - 14; // `body rod99: rigid_body {`
    let req = |method: &str, line: usize, character: usize| {
        Message::Request(Request::new(
            RequestId::from(1),
            method.into(),
            json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}),
        ))
    };
    println!("model: {lines} lines, 100 bodies, 100 joints");
    // Each change needs a new version; two cases count them.
    let v = std::cell::Cell::new(0);
    let cases: Vec<(&str, Case)> = vec![
        (
            "didChange (analysis + diagnostics)",
            Box::new(|s: &mut Server| {
                v.set(v.get() + 1);
                assert!(!s.handle(open(v.get(), &text)).is_empty());
            }),
        ),
        (
            "didChange + lowering when idle",
            Box::new(|s: &mut Server| {
                v.set(v.get() + 1);
                assert!(!s.handle(open(v.get(), &text)).is_empty());
                assert!(s.lowering_pending());
                // A clean model: the lowering finds nothing new to publish.
                assert!(s.idle().is_empty());
            }),
        ),
        (
            "hover on a field",
            Box::new(move |s: &mut Server| {
                assert_eq!(
                    s.handle(req("textDocument/hover", last_body + 1, 5)).len(),
                    1
                );
            }),
        ),
        (
            "definition of a type",
            Box::new(move |s: &mut Server| {
                assert_eq!(
                    s.handle(req("textDocument/definition", last_body, 14))
                        .len(),
                    1
                );
            }),
        ),
        (
            "completion of fields",
            Box::new(move |s: &mut Server| {
                assert_eq!(
                    s.handle(req("textDocument/completion", last_body + 1, 0))
                        .len(),
                    1
                );
            }),
        ),
        (
            "document symbols",
            Box::new(move |s: &mut Server| {
                let m = Message::Request(Request::new(
                    RequestId::from(2),
                    "textDocument/documentSymbol".into(),
                    json!({"textDocument": {"uri": uri}}),
                ));
                assert_eq!(s.handle(m).len(), 1);
            }),
        ),
    ];
    for (name, mut f) in cases {
        let (median, worst) = time(20, || f(&mut server));
        println!(
            "{name:<36} median {:>8.2} ms   worst {:>8.2} ms",
            median.as_secs_f64() * 1e3,
            worst.as_secs_f64() * 1e3
        );
    }
}
