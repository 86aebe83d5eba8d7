//! `Scope::Used` (a build's analysis: only the library items the model reaches)
//! against `Scope::All` on the same text. Every language case and example is compared
//! the same way in `lang-tests` (`scope::` trials); these are the small, named cases.

use fdc_frontend::{analyze_source, analyze_source_scoped, Analysis, Scope};

const PENDULUM: &str = "\
param L = 1.0;
gravity [0, 0, -9.81];
body rod: rigid_body { mass = 2; inertia = [1e-4, L^2/6, L^2/6]; position = [L/2, 0, 0]; }
joint pivot: revolute(rod) { at = [0, 0, 0]; axis = [0, 1, 0]; }
force s: spring_damper(rod) { at_a = [L/2, 0, 0]; at_b = [L, 0, 0]; stiffness = 10; damping = 1; }
output gap = distance(rod, [0, 0, 0], ground, [1, 0, 0]);
";

fn used(text: &str) -> Analysis {
    analyze_source_scoped("m.fd", text, &[], Scope::Used)
}

/// A clean model keeps its scope and the library items it names, each as the whole
/// library's analysis has it, and leaves the rest of the library out.
#[test]
fn a_clean_model_checks_only_what_it_reaches() {
    let (u, a) = (used(PENDULUM), analyze_source("m.fd", PENDULUM));
    assert!(a.diagnostics.is_empty(), "{}", a.render());
    assert_eq!((u.scope, a.scope), (Scope::Used, Scope::All));
    for name in ["rigid_body", "revolute", "spring_damper"] {
        assert_eq!(u.model.types.get(name), a.model.types.get(name), "{name}");
        assert!(u.model.types.contains_key(name), "{name} left out");
    }
    for name in ["mf52_tyre", "bushing", "rigid_body_euler"] {
        assert!(
            a.model.types.contains_key(name),
            "{name} not in the library"
        );
        assert!(
            !u.model.types.contains_key(name),
            "{name} checked though unused"
        );
    }
    let fns = |x: &Analysis| -> Vec<String> {
        x.model
            .functions
            .iter()
            .map(|f| f.name.name.clone())
            .collect()
    };
    assert!(fns(&u).contains(&"distance".to_string()), "{:?}", fns(&u));
    assert!(fns(&u).len() < fns(&a).len(), "{:?}", fns(&u));
    for f in &u.model.functions {
        assert!(a.model.functions.contains(f), "{}", f.name.name);
    }
    assert_eq!(u.model.instances, a.model.instances);
    assert_eq!(u.model.params, a.model.params);
    assert_eq!(u.model.outputs, a.model.outputs);
    // Every expression the reduced check typed has the type the whole check gave it.
    for (span, ty) in &u.types {
        assert_eq!(a.types.get(span), Some(ty), "{span:?}");
    }
    // The library's files are all there (same file ids), only parsed in part.
    assert_eq!(u.files.len(), a.files.len());
    for id in 0..a.files.len() {
        assert_eq!(u.files.name(id), a.files.name(id));
    }
}

/// Anything reported makes the analysis the whole library's: the words of a
/// suggestion come from all library names, a clash from the item clashed with.
#[test]
fn a_diagnostic_gives_the_whole_librarys_analysis() {
    let cases = [
        // A misspelt library type: "did you mean" picks from the whole library.
        PENDULUM.replace("spring_damper(rod)", "spring_dampr(rod)"),
        // A model's own type with a library name.
        format!("{PENDULUM}force bushing(a: body) {{ }}\n"),
        // A warning only.
        format!("{PENDULUM}force w: on(rod) {{ apply torque [0, 0, abs(rod.omega.z)] on rod; }}\n"),
        // A syntax error.
        format!("{PENDULUM}joint j: revolute(rod {{ }}\n"),
    ];
    for text in &cases {
        let (u, a) = (used(text), analyze_source("m.fd", text));
        assert!(!a.diagnostics.is_empty(), "{text}");
        assert_eq!(u.render(), a.render(), "{text}");
        assert_eq!(u.scope, Scope::All, "{}", a.render());
        assert_eq!(u.model.types.len(), a.model.types.len());
    }
    let suggested = used(&cases[0]).render();
    assert!(suggested.contains("spring_damper"), "{suggested}");
    let clash = used(&cases[1]).render();
    assert!(clash.contains("standard library"), "{clash}");
}
