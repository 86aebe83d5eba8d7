//! include/fdc.h declares every function that src/lib.rs exports, and nothing more
//! (the signatures themselves are checked by compiling tests/oscillator.c with
//! -Werror against it, tests/c_program.rs).

use std::path::PathBuf;

/// Names following `extern "C" fn ` in the Rust source.
fn exported(src: &str) -> Vec<String> {
    let mut names: Vec<String> = src
        .split("extern \"C\" fn ")
        .skip(1)
        .map(|rest| rest.split('(').next().unwrap_or("").trim().to_string())
        .collect();
    names.sort();
    names
}

/// Names of the functions the header declares: `fdc_...(` at a declaration.
fn declared(header: &str) -> Vec<String> {
    let mut names: Vec<String> = header
        .lines()
        .filter(|l| !l.trim_start().starts_with("/*") && !l.trim_start().starts_with('*'))
        .filter_map(|l| {
            let i = l.find("fdc_")?;
            let j = l[i..].find('(')?;
            Some(l[i..i + j].to_string())
        })
        .collect();
    names.sort();
    names
}

#[test]
fn the_header_declares_exactly_the_exported_functions() {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let src = std::fs::read_to_string(here.join("src/lib.rs")).unwrap();
    let header = std::fs::read_to_string(here.join("include/fdc.h")).unwrap();
    let (e, d) = (exported(&src), declared(&header));
    assert_eq!(e.len(), 13, "{e:?}");
    assert_eq!(e, d);
}
