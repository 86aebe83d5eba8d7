//! The front end never panics and every span it reports lies on character
//! boundaries of its file: checked on arbitrary text and on token soup.

use fdc_frontend::{analyze_source, Analysis};
use proptest::prelude::*;

fn spans_ok(a: &Analysis) -> Result<(), TestCaseError> {
    for d in &a.diagnostics {
        for l in d.primary.iter().chain(&d.secondary) {
            let text = a.files.text(l.span.file);
            let (s, e) = (l.span.start as usize, l.span.end as usize);
            prop_assert!(
                s <= e && e <= text.len(),
                "span {s}..{e} outside {}",
                text.len()
            );
            prop_assert!(text.is_char_boundary(s) && text.is_char_boundary(e));
        }
        // Rendering must not fail either.
        prop_assert!(!d.render(&a.files).is_empty());
    }
    Ok(())
}

const SOUP: &[&str] = &[
    "param",
    "input",
    "fn",
    "use",
    "gravity",
    "body",
    "joint",
    "force",
    "element",
    "let",
    "constrain",
    "apply",
    "torque",
    "body_torque",
    "generalized",
    "on",
    "at",
    "along",
    "state",
    "output",
    "coordinates",
    "kinetic",
    "potential",
    "simulate",
    "spline",
    "if",
    "then",
    "else",
    "rigid",
    "x",
    "b",
    "ground",
    "self",
    "t",
    "rigid_body",
    "revolute",
    "dot",
    "abs",
    "rate",
    "initial",
    "1",
    "2.5e3",
    "\"f.fd\"",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ",",
    ";",
    ":",
    ".",
    "=",
    "+",
    "-",
    "*",
    "/",
    "^",
    "<",
    "==",
    "$",
    "é",
    "\"",
    "///d\n",
    "//c\n",
    "\n",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,200}") {
        let a = analyze_source("arb.fd", &text);
        spans_ok(&a)?;
    }

    #[test]
    fn token_soup_never_panics(idx in proptest::collection::vec(0..SOUP.len(), 0..80)) {
        let text: Vec<&str> = idx.iter().map(|&i| SOUP[i]).collect();
        let a = analyze_source("soup.fd", &text.join(" "));
        spans_ok(&a)?;
    }
}

#[test]
fn empty_and_unicode_inputs() {
    for text in [
        "",
        "\u{feff}",
        "é",
        "body",
        "\"",
        "param x = 1 +",
        "{{{{",
        "}}}}",
    ] {
        let a = analyze_source("x.fd", text);
        assert!(spans_ok(&a).is_ok());
    }
}

#[test]
fn deepest_accepted_nesting_fits_the_stack() {
    // Just under the limit of 1000 operators and brackets per statement, in every
    // shape that nests: left-deep sums, unary chains, nested calls, members, lists.
    let n = 999;
    let shapes = [
        format!("param a = {};", vec!["1"; n + 1].join("+")),
        format!("param a = {}1;", "-".repeat(n)),
        format!("param a = {}1{};", "sin(".repeat(n), ")".repeat(n)),
        format!("param a = {}1{};", "[".repeat(n), "]".repeat(n)),
        format!("param a = 2{};", "^2".repeat(n)),
        format!("param a = [1,2,3]{};", ".x".repeat(n)),
    ];
    for text in &shapes {
        let a = analyze_source("deep.fd", text);
        assert!(
            a.diagnostics.iter().all(|d| d.code != "E0003"),
            "under the limit: {}",
            &text[..40]
        );
    }
    let over = format!("param a = {};\nparam b = 1;", vec!["1"; 1100].join("+"));
    let a = analyze_source("deep.fd", &over);
    let codes: Vec<&str> = a.diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(codes, ["E0003"]);
    assert_eq!(
        a.model.params.len(),
        1,
        "the statement after it is still parsed"
    );
}

/// Every valid model (stdlib, examples, clean lang-test cases) prints to source that
/// parses cleanly and prints to the same text again.
#[test]
fn print_parse_round_trip() {
    use fdc_frontend::{parse_module, print};
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut sources: Vec<(String, String)> = fdc_stdlib::FILES
        .iter()
        .map(|(n, t)| (n.to_string(), t.to_string()))
        .collect();
    for dir in ["examples", "lang-tests/cases"] {
        let mut paths: Vec<_> = std::fs::read_dir(root.join(dir))
            .unwrap()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "fd"))
            .collect();
        paths.sort();
        for p in paths {
            // Lossy: a lang-test case is not UTF-8 on purpose (it has a `//~` too).
            let text = String::from_utf8_lossy(&std::fs::read(&p).unwrap()).into_owned();
            if !text.contains("//~") {
                sources.push((p.display().to_string(), text));
            }
        }
    }
    assert!(sources.len() >= 10);
    for (name, text) in sources {
        let (m, d) = parse_module(0, &text);
        assert!(d.is_empty(), "{name} parses cleanly");
        let printed = print::module(&m);
        let (m2, d2) = parse_module(0, &printed);
        assert!(d2.is_empty(), "printed {name} parses:\n{printed}");
        assert_eq!(print::module(&m2), printed, "{name} round-trips");
        assert_eq!(m2.items.len(), m.items.len());
        assert!(printed.len() > 20 || m.items.is_empty());
    }
}

/// `drop_aside` frees its value, and not on the calling thread: on the thread of its
/// own that keeps the freeing of a model's analysis off the path to the first result.
#[test]
fn drop_aside_frees_the_value_on_another_thread() {
    struct Tell(std::sync::mpsc::Sender<Option<String>>);
    impl Drop for Tell {
        fn drop(&mut self) {
            let name = std::thread::current().name().map(str::to_string);
            let _ = self.0.send(name);
        }
    }
    let (tx, rx) = std::sync::mpsc::channel();
    fdc_frontend::stack::drop_aside(Tell(tx));
    let name = rx
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("the value is dropped");
    assert_eq!(name.as_deref(), Some("fdc-free"));
}
