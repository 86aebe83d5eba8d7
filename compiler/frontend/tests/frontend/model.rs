//! The resolved view that lowering uses: types, instances, expression types.

use fdc_frontend::ast::{ExprKind, Kind, StmtKind};
use fdc_frontend::{analyze_source, Coordinates, Severity, Ty};

const PENDULUM: &str = "\
param L = 1.0;
param m = 2.0;
gravity [0, 0, -9.81];
body rod: rigid_body { mass = m; inertia = [1e-4, m*L^2/12, m*L^2/12]; position = [L/2, 0, 0]; }
joint pivot: revolute(rod) { at = [0, 0, 0]; axis = [0, 1, 0]; }
output tip = rod.point([L/2, 0, 0]);
simulate { end = 1; step = 1e-3; }
";

#[test]
fn pendulum_resolves() {
    let a = analyze_source("p.fd", PENDULUM);
    assert!(a.diagnostics.is_empty(), "{}", a.render());
    let m = &a.model;
    assert_eq!(m.params.len(), 2);
    assert!(m.gravity.is_some());
    assert_eq!(m.simulate.len(), 2);
    assert_eq!(m.instances.len(), 2);
    let pivot = &m.instances[1];
    assert_eq!(
        (pivot.kind, pivot.type_name.as_str()),
        (Kind::Joint, "revolute")
    );
    assert_eq!(pivot.connections.len(), 1);

    let rev = &m.types["revolute"];
    assert!(rev.stdlib);
    assert_eq!(rev.connections.len(), 2);
    assert!(rev.connections[1].default.is_some());
    let names: Vec<(&str, Ty, bool)> = rev
        .params
        .iter()
        .map(|p| (p.name.as_str(), p.ty, p.default.is_some()))
        .collect();
    assert_eq!(names, [("at", Ty::Vec3, false), ("axis", Ty::Vec3, false)]);
    let nested = rev
        .body
        .iter()
        .filter(|s| matches!(s.kind, StmtKind::Instance(_)))
        .count();
    assert_eq!(nested, 5, "revolute = 3 translations + 2 rotations");

    let body = &m.types["rigid_body"];
    assert!(matches!(&body.coordinates, Coordinates::Rigid { args } if args.len() == 4));
    assert_eq!(body.param("orientation").map(|p| p.ty), Some(Ty::Quat));
    assert_eq!(body.param("mass").map(|p| p.default.is_none()), Some(true));
    assert!(body.doc.as_deref().unwrap_or("").contains("R³×SO(3)"));

    // The output expression has the type vec3, its argument too.
    let (_, tip) = &m.outputs[0];
    assert_eq!(a.types.get(&tip.span), Some(&Ty::Vec3));
    if let ExprKind::Method(_, name, args) = &tip.kind {
        assert_eq!(name.name, "point");
        assert_eq!(a.types.get(&args[0].span), Some(&Ty::Vec3));
    } else {
        panic!("tip is a method call");
    }
}

#[test]
fn one_run_reports_every_independent_error() {
    let text = "param a = 1 +;\nparam b = nope;\nbody r: rigid_body { mass = [1, 2, 3]; }\noutput o = r.positon;\n";
    let a = analyze_source("m.fd", text);
    let codes: Vec<&str> = a.diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(
        codes,
        ["E0101", "E0201", "E0205", "E0301", "E0211"],
        "{}",
        a.render()
    );
    // line:col of the primary label of the unknown name.
    let l = a.diagnostics[1].primary.as_ref().unwrap();
    assert_eq!(
        a.files.line_col(l.span.file, l.span.start as usize),
        (2, 11)
    );
    assert!(a.diagnostics.iter().all(|d| d.severity == Severity::Error));
    assert!(a.diagnostics[4]
        .notes
        .iter()
        .any(|n| n.contains("`position`")));
}

#[test]
fn doc_comments_attach_to_declarations() {
    let text = "/// First line.\n/// Second line.\nparam k = 1;\n\n// plain\nparam j = 2;\n";
    let a = analyze_source("d.fd", text);
    assert_eq!(
        a.model.params[0].doc.as_deref(),
        Some("First line.\nSecond line.")
    );
    assert_eq!(a.model.params[1].doc, None);
}

#[test]
fn diagnostics_serialize() {
    let a = analyze_source("s.fd", "param a = b;");
    // The language server reuses the structure: it serializes with serde.
    let v = serde_json::to_value(&a.diagnostics[0]).unwrap();
    assert_eq!(v["code"], "E0201");
    assert_eq!(v["severity"], "error");
    assert_eq!(v["primary"]["span"]["start"], 10);
    assert_eq!(v["primary"]["span"]["end"], 11);
}

#[test]
fn missing_semicolon_says_so_and_does_not_cascade() {
    let a = analyze_source("s.fd", "param m = 2.0\nparam L = 1;\noutput o = m * L;\n");
    assert_eq!(a.diagnostics.len(), 1, "{}", a.render());
    let d = &a.diagnostics[0];
    assert_eq!(d.code, "E0101");
    let p = d.primary.as_ref().unwrap();
    assert_eq!(p.message, "expected `;` or an operator");
    assert_eq!(a.files.line_col(p.span.file, p.span.start as usize), (2, 1));
}

#[test]
fn short_names_suggest_only_case_variants() {
    let a = analyze_source("s.fd", "param L = 1;\nparam x = m;\nparam y = l;\n");
    let notes: Vec<&Vec<String>> = a.diagnostics.iter().map(|d| &d.notes).collect();
    assert_eq!(notes.len(), 2);
    assert!(notes[0].is_empty(), "`m` is not a typo of `L`");
    assert_eq!(notes[1], &vec!["did you mean `L`?".to_string()]);
}

/// The span of the `k`-th occurrence (0-based) of `word` in the model text.
fn span_of(
    a: &fdc_frontend::Analysis,
    text: &str,
    word: &str,
    k: usize,
) -> fdc_frontend::ast::Span {
    let file = a.modules.last().unwrap().file;
    let start = text.match_indices(word).nth(k).unwrap().0;
    fdc_frontend::ast::Span {
        file,
        start: start as u32,
        end: (start + word.len()) as u32,
    }
}

#[test]
fn name_uses_link_to_their_declarations() {
    use fdc_frontend::Decl;
    let text = "\
param k = 3;
fn twice(x: scalar): scalar = 2 * x;
force pull(q: body) {
    param gain: scalar;
    let pf = twice(gain) * k_not;
    apply force pf * [0, 0, 1] on q at [0, 0, 0];
}
body wheel: rigid_body { mass = twice(k); inertia = [1, 1, 1]; }
force p: pull(wheel) { gain = k + pi; }
for i in 1..3 { body c[i]: rigid_body { mass = 1; inertia = [1, 1, 1]; } }
for i in 1..3 { force s[i]: pull(c[i]) { gain = 1; } }
";
    // `k_not` is unknown: the checker reports it and leaves it unresolved.
    let a = analyze_source("r.fd", text);
    assert_eq!(a.diagnostics.len(), 1, "{}", a.render());
    assert!(a.render().contains("unknown name `k_not`"));
    let r = &a.resolution;
    let m = &a.model;
    let at = |w: &str, k: usize| r.get(span_of(&a, text, w, k), w).cloned();
    // Top-level names: indices into the model's lists.
    let Some(Decl::Param(i)) = at("k", 2) else {
        panic!("{:?}", at("k", 2))
    };
    assert_eq!(m.params[i].name.name, "k");
    let Some(Decl::Fn(f)) = at("twice", 1) else {
        panic!()
    };
    assert_eq!(m.functions[f].name.name, "twice");
    assert_eq!(at("twice", 2), Some(Decl::Fn(f)), "the call in the model");
    let Some(Decl::Instance(b)) = at("wheel", 1) else {
        panic!()
    };
    assert_eq!(m.instances[b].name, "wheel");
    // Inside the type: the field and the connection are locals declared in it.
    assert_eq!(
        at("gain", 1),
        Some(Decl::Local(span_of(&a, text, "gain", 0)))
    );
    assert_eq!(at("q", 1), Some(Decl::Local(span_of(&a, text, "q", 0))));
    assert_eq!(at("x", 1), Some(Decl::Local(span_of(&a, text, "x", 0))));
    assert_eq!(at("pf", 1), Some(Decl::Local(span_of(&a, text, "pf", 0))));
    assert_eq!(at("k_not", 0), None);
    // Type names, fields and builtins.
    assert_eq!(at("pull", 1), Some(Decl::Type("pull".into())));
    let field = Decl::Field {
        ty: "pull".into(),
        name: "gain".into(),
    };
    assert_eq!(at("gain", 2), Some(field));
    assert_eq!(at("pi", 0), Some(Decl::Builtin("pi")));
    // One span, two uses: the loop's copies name `c[1]` and `c[2]`.
    let c_use = span_of(&a, text, "c[i]", 1);
    let copies: Vec<usize> = ["c[1]", "c[2]"]
        .iter()
        .map(|n| match r.get(c_use, n) {
            Some(Decl::Instance(i)) => *i,
            other => panic!("{n}: {other:?}"),
        })
        .collect();
    let names: Vec<&str> = copies
        .iter()
        .map(|&i| m.instances[i].name.as_str())
        .collect();
    assert_eq!(names, ["c[1]", "c[2]"]);
}

/// The order lowering evaluates the model's definitions in: each after what its value
/// uses, also through a function it calls, a spline among them; ties in source order.
#[test]
fn definitions_come_after_what_they_use() {
    use fdc_frontend::Definition as D;
    let text = "\
param a = twice(1);
spline s = akima([0, 1, 2], [0, c, 0]);
param b = 2;
fn twice(x: scalar): scalar = x * b;
param c = 1;
param d = s(0.5) + a;
input e = 3;
";
    let a = analyze_source("o.fd", text);
    assert!(a.diagnostics.is_empty(), "{}", a.render());
    let m = &a.model;
    let names: Vec<&str> = (m.definitions.iter())
        .map(|d| match *d {
            D::Param(i) => m.params[i].name.name.as_str(),
            D::Input(i) => m.inputs[i].name.name.as_str(),
            D::Spline(i) => m.splines[i].name.name.as_str(),
        })
        .collect();
    // Ready first: b, c and e (source places 2, 4 and 6); b frees a (place 0), which
    // goes before c; c frees s; s and a free d, which goes before e.
    assert_eq!(names, ["b", "a", "c", "s", "d", "e"]);
}
