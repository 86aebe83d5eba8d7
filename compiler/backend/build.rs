//! Records the full version of the LLVM we link (e.g. `14.0.6`) for the cache key: the
//! LLVM 14 C API has no `LLVMGetVersion`. Looks for `llvm-config` the way llvm-sys does
//! (`$LLVM_SYS_140_PREFIX/bin` first, then `PATH` under its usual names).

use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=LLVM_SYS_140_PREFIX");
    println!("cargo:rerun-if-env-changed=PATH");
    let names = ["llvm-config", "llvm-config-14", "llvm-config14"];
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(prefix) = std::env::var_os("LLVM_SYS_140_PREFIX") {
        let bin = PathBuf::from(prefix).join("bin");
        candidates.extend(names.iter().map(|n| bin.join(n)));
    }
    candidates.extend(names.iter().map(PathBuf::from));
    let version = candidates
        .iter()
        .filter_map(|c| Command::new(c).arg("--version").output().ok())
        .filter(|o| o.status.success())
        .filter_map(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .find(|v| v.starts_with("14."))
        .unwrap_or_else(|| "14.unknown".to_string());
    println!("cargo:rustc-env=FDC_LLVM_VERSION={version}");
}
