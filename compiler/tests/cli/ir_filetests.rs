//! IR filetests: every `compiler/ir/filetests/*.fd` goes through the real
//! `fdc ir` with the arguments its `// fdc ir ARGS` header lines give, and the output
//! must equal `<name>.ir` beside it (each run's output after a `; fdc ir ARGS` line).
//! They pin the simplified IR that real sources (the stdlib's elements) compile to,
//! so a change to lowering, differentiation or the simplifier shows as a diff to
//! review. `FDC_BLESS=1 cargo test --workspace --test cli ir_filetests::` rewrites the `.ir`
//! files from the current output.

use std::path::{Path, PathBuf};
use std::process::Command;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("ir/filetests")
}

/// The `fdc ir` arguments of each `// fdc ir ...` header line of `src`.
fn runs(src: &str) -> Vec<Vec<String>> {
    src.lines()
        .map_while(|l| l.strip_prefix("//"))
        .filter_map(|l| l.trim().strip_prefix("fdc ir "))
        .map(|args| args.split_whitespace().map(str::to_string).collect())
        .collect()
}

/// What `fdc ir` prints for each run, under its header line.
fn output(model: &Path, runs: &[Vec<String>]) -> String {
    let mut text = String::new();
    for args in runs {
        let out = Command::new(env!("CARGO_BIN_EXE_fdc"))
            .arg("ir")
            .arg(model)
            .args(args)
            .output()
            .expect("the fdc binary runs");
        assert!(
            out.status.success(),
            "fdc ir {} {}: {}",
            model.display(),
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        );
        text.push_str(&format!("; fdc ir {}\n", args.join(" ")));
        text.push_str(&String::from_utf8(out.stdout).expect("IR text is UTF-8"));
    }
    text
}

#[test]
fn filetests_print_the_expected_ir() {
    let mut models: Vec<PathBuf> = std::fs::read_dir(dir())
        .expect("compiler/ir/filetests exists")
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "fd"))
        .collect();
    models.sort();
    assert!(!models.is_empty(), "no filetests in {}", dir().display());
    let bless = std::env::var_os("FDC_BLESS").is_some();
    let mut stale = Vec::new();
    for model in &models {
        let src = std::fs::read_to_string(model).expect("filetest source");
        let runs = runs(&src);
        assert!(
            !runs.is_empty(),
            "{}: no `// fdc ir ...` line",
            model.display()
        );
        let got = output(model, &runs);
        let expected_path = model.with_extension("ir");
        if bless {
            std::fs::write(&expected_path, &got).expect("write the expected IR");
            continue;
        }
        let want = std::fs::read_to_string(&expected_path).unwrap_or_default();
        if got != want {
            let first = got
                .lines()
                .zip(want.lines())
                .position(|(a, b)| a != b)
                .unwrap_or(got.lines().count().min(want.lines().count()));
            stale.push(format!(
                "{}: differs from line {} on",
                expected_path.display(),
                first + 1
            ));
        }
    }
    assert!(
        stale.is_empty(),
        "{}\n(review, then `FDC_BLESS=1 cargo test --workspace --test cli ir_filetests::`)",
        stale.join("\n")
    );
}
