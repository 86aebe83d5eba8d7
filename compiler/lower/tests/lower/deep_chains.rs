//! Input size never becomes stack depth: models with 100,000 definitions, each defined
//! from the next (in both orders), go through the front end and the lowering on a
//! thread with a 1 MiB stack (half the default of test threads). A pass that recursed
//! once per definition would overflow it and abort the test binary.
//!
//! Parameters have a value at the end of the chain (forward references work); function
//! chains meet the documented inlining limit (`MAX_CALL_DEPTH`) as a diagnostic.

use fdc_frontend::analyze_source;

const N: usize = 100_000;

/// Checks and lowers `text` on a small stack: (front-end codes, lowering messages,
/// the parameters with their values).
fn run_small_stack(text: String) -> (Vec<String>, Vec<String>, Vec<(String, f64)>) {
    std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(move || {
            let a = analyze_source("chain.fd", &text);
            let codes: Vec<String> = a.diagnostics.iter().map(|d| d.code.to_string()).collect();
            if a.has_errors() {
                return (codes, Vec::new(), Vec::new());
            }
            match fdc_lower::lower_with_files(&a, &[], Some(&a.files)) {
                Ok(l) => {
                    let params = l.params.iter().map(|(n, v)| (n.clone(), v[0])).collect();
                    (codes, Vec::new(), params)
                }
                Err(e) => (
                    codes,
                    e.into_iter().map(|e| e.message).collect(),
                    Vec::new(),
                ),
            }
        })
        .expect("spawn")
        .join()
        .expect("no panic")
}

fn value(params: &[(String, f64)], name: &str) -> f64 {
    params.iter().find(|(n, _)| n == name).map(|p| p.1).unwrap()
}

/// `p0 = p1 + 1; …; p99999 = 1`: every name used before its definition; p0 = N.
#[test]
fn a_chain_of_parameters_used_before_their_definition() {
    let mut text: String = (0..N - 1)
        .map(|i| format!("param p{i} = p{} + 1;\n", i + 1))
        .collect();
    text.push_str(&format!("param p{} = 1;\n", N - 1));
    let (codes, lowering, params) = run_small_stack(text);
    assert!(
        codes.is_empty() && lowering.is_empty(),
        "{codes:?} {lowering:?}"
    );
    assert_eq!(value(&params, "p0"), N as f64);
    assert_eq!(value(&params, "p50000"), (N - 50_000) as f64);
}

/// `p0 = 1; p1 = p0 + 1; …`: definition order; p99999 = N.
#[test]
fn a_chain_of_parameters_in_definition_order() {
    let text: String = std::iter::once("param p0 = 1;\n".to_string())
        .chain((1..N).map(|i| format!("param p{i} = p{} + 1;\n", i - 1)))
        .collect();
    let (codes, lowering, params) = run_small_stack(text);
    assert!(
        codes.is_empty() && lowering.is_empty(),
        "{codes:?} {lowering:?}"
    );
    assert_eq!(value(&params, &format!("p{}", N - 1)), N as f64);
}

/// Functions `f_i(x) = f_next(x) + 1` in both orders: the checker types them without
/// recursion; the lowering inlines at most `MAX_CALL_DEPTH` nested calls, then says so.
#[test]
fn a_chain_of_functions_is_refused_at_the_inlining_limit() {
    let forward: String = (0..N - 1)
        .map(|i| format!("fn f{i}(x: scalar) = f{}(x) + 1;\n", i + 1))
        .chain([format!("fn f{}(x: scalar) = x;\nparam q = f0(1);\n", N - 1)])
        .collect();
    let backward: String = std::iter::once("fn f0(x: scalar) = x;\n".to_string())
        .chain((1..N).map(|i| format!("fn f{i}(x: scalar) = f{}(x) + 1;\n", i - 1)))
        .chain([format!("param q = f{}(1);\n", N - 1)])
        .collect();
    for text in [forward, backward] {
        let (codes, lowering, _) = run_small_stack(text);
        assert!(codes.is_empty(), "{codes:?}");
        let limit = format!("nest deeper than {}", fdc_lower::MAX_CALL_DEPTH);
        assert!(lowering.iter().any(|m| m.contains(&limit)), "{lowering:?}");
    }
    // Under the limit the chain is inlined: q = 1 + (depth − 1).
    let depth = 50;
    let short: String = (0..depth - 1)
        .map(|i| format!("fn f{i}(x: scalar) = f{}(x) + 1;\n", i + 1))
        .chain([format!(
            "fn f{}(x: scalar) = x;\nparam q = f0(1);\n",
            depth - 1
        )])
        .collect();
    let (codes, lowering, params) = run_small_stack(short);
    assert!(
        codes.is_empty() && lowering.is_empty(),
        "{codes:?} {lowering:?}"
    );
    assert_eq!(value(&params, "q"), depth as f64);
}

/// Element types each containing the next as a nested instance, in both orders: the
/// expansion and the checker order them without recursion; the lowering flattens at
/// most 16 levels of nested instances, then says so.
#[test]
fn a_chain_of_element_types_is_refused_at_the_nesting_limit() {
    let def = |i: usize, j: usize| format!("force t{i}(b: body) {{ force x: t{j}(b) {{}} }}\n");
    let leaf = |i: usize| format!("force t{i}(b: body) {{ apply force [0, 0, 1] on b; }}\n");
    let model = |top: usize| {
        format!("body rod: rigid_body {{ mass = 1; inertia = [1, 1, 1]; }}\nforce top: t{top}(rod) {{}}\n")
    };
    let forward: String = (0..N - 1)
        .map(|i| def(i, i + 1))
        .chain([leaf(N - 1), model(0)])
        .collect();
    let backward: String = std::iter::once(leaf(0))
        .chain((1..N).map(|i| def(i, i - 1)))
        .chain([model(N - 1)])
        .collect();
    for text in [forward, backward] {
        let (codes, lowering, _) = run_small_stack(text);
        assert!(codes.is_empty(), "{codes:?}");
        assert!(
            lowering
                .iter()
                .any(|m| m.contains("element types nest too deeply")),
            "{lowering:?}"
        );
    }
}
