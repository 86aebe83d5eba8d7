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
        "stdlib/src/lib.rs",
        "lang-tests/src/lib.rs",
        "compiler/src/main.rs",
        "python/src/lib.rs",
        "capi/src/lib.rs",
    ] {
        let text = std::fs::read_to_string(workspace_root().join(lib)).unwrap();
        assert!(text.starts_with("//!"), "{lib} has no crate doc");
    }
}
