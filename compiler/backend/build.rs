//! Finds `llvm-config` the way llvm-sys does (`$LLVM_SYS_140_PREFIX/bin` first, then
//! `PATH` under its usual names), records the full version of the LLVM we link (e.g.
//! `14.0.6`) for the cache key (the LLVM 14 C API has no `LLVMGetVersion`), and links
//! LLVM — llvm-sys is built with `no-llvm-linking`, so this is the one place that
//! decides how.
//!
//! How LLVM is linked (`FDC_LLVM_LINK=static|dynamic` overrides the choice):
//! - release profile (`cargo build --release`, `cargo run --release`, benches):
//!   statically, and only the components the backend uses ([`COMPONENTS`]). A static
//!   link saves the start-up of the shared `libLLVM-14.so` — the dynamic loader's
//!   relocations of its ~100 MB and the static initializers of all of LLVM — about
//!   20 ms of every process (docs/performance.md, "Start-up and exit").
//! - dev profile (`cargo test`, CI): the shared `libLLVM-14.so`. Every test binary
//!   that links the backend would otherwise carry ~40 MB of LLVM and link seconds
//!   longer; a test's process start-up does not matter.
//!
//! Cargo features cannot express this split: they unify across the workspace (one
//! `cargo test --workspace` builds every crate with the union), and llvm-sys's link
//! features exclude each other. The profile is per build, so it can.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The LLVM components the backend reaches through inkwell: the ORC JIT (LLJIT with
/// its object linking layer), the legacy pass manager builder's pipeline (`ipo`,
/// `passes`), and the host's code generator. Not `all`: Debian's full list includes
/// Polly, whose static libraries `llvm-14-dev` does not ship, and every component more
/// adds static initializers that run at each start.
const COMPONENTS: &[&str] = &["orcjit", "passes", "ipo", "native", "nativecodegen"];

fn main() {
    println!("cargo:rerun-if-env-changed=LLVM_SYS_140_PREFIX");
    println!("cargo:rerun-if-env-changed=PATH");
    println!("cargo:rerun-if-env-changed=FDC_LLVM_LINK");
    let config = find_llvm_config();
    let version = config
        .as_ref()
        .and_then(|c| run(c, &["--version"]))
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|| "14.unknown".to_string());
    println!("cargo:rustc-env=FDC_LLVM_VERSION={version}");
    let Some(config) = config else {
        // llvm-sys's own build script stops the build with a message saying how to
        // point it at LLVM 14; nothing to add here.
        return;
    };
    let statically = match std::env::var("FDC_LLVM_LINK").as_deref() {
        Ok("static") => true,
        Ok("dynamic") => false,
        Ok(other) => panic!("FDC_LLVM_LINK must be `static` or `dynamic`, not `{other}`"),
        Err(_) => std::env::var("PROFILE").as_deref() == Ok("release"),
    };
    link_llvm(&config, statically);
}

fn find_llvm_config() -> Option<PathBuf> {
    let names = ["llvm-config", "llvm-config-14", "llvm-config14"];
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(prefix) = std::env::var_os("LLVM_SYS_140_PREFIX") {
        let bin = PathBuf::from(prefix).join("bin");
        candidates.extend(names.iter().map(|n| bin.join(n)));
    }
    candidates.extend(names.iter().map(PathBuf::from));
    candidates
        .into_iter()
        .find(|c| run(c, &["--version"]).is_some_and(|v| v.starts_with("14.")))
}

fn run(config: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new(config).args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    String::from_utf8(out.stdout).ok()
}

fn llvm_config(config: &Path, args: &[&str]) -> String {
    run(config, args).unwrap_or_else(|| panic!("`{} {}` failed", config.display(), args.join(" ")))
}

fn link_llvm(config: &Path, statically: bool) {
    let mode = if statically {
        "--link-static"
    } else {
        "--link-shared"
    };
    let libdir = llvm_config(config, &["--libdir"]);
    println!("cargo:rustc-link-search=native={}", libdir.trim());
    let mut args = vec!["--libnames", mode];
    if statically {
        args.extend_from_slice(COMPONENTS);
    }
    for file in llvm_config(config, &args).split_whitespace() {
        let name = file.strip_prefix("lib").unwrap_or(file);
        if statically {
            // Not bundled into this crate's rlib: rustc then puts the archives on the
            // final link line after every Rust crate, so inkwell's and llvm-sys's
            // references (which come after this crate on that line) resolve against them.
            let name = name.strip_suffix(".a").unwrap_or(name);
            println!("cargo:rustc-link-lib=static:-bundle={name}");
        } else {
            let name = name.strip_suffix(".so").unwrap_or(name);
            println!("cargo:rustc-link-lib=dylib={name}");
        }
    }
    for flag in llvm_config(config, &["--system-libs", mode]).split_whitespace() {
        if let Some(name) = flag.strip_prefix("-l") {
            println!("cargo:rustc-link-lib=dylib={name}");
        } else {
            // A library given by its path, e.g. `/usr/lib/x86_64-linux-gnu/libz3.so`.
            let path = Path::new(flag);
            if let (Some(dir), Some(stem)) = (path.parent(), path.file_stem()) {
                let stem = stem.to_string_lossy();
                println!("cargo:rustc-link-search=native={}", dir.display());
                let name = stem.strip_prefix("lib").unwrap_or(&stem);
                println!("cargo:rustc-link-lib=dylib={name}");
            }
        }
    }
    // LLVM is C++: its static archives need the C++ runtime (as llvm-sys does, also
    // named for the shared library; the linker's `--as-needed` drops it there).
    println!("cargo:rustc-link-lib=dylib=stdc++");
}
