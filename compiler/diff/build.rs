//! `FDC_DIFF_SOURCES`: a hash of the sources that decide what the differentiation
//! makes of a definition (this crate, the IR it builds, the ABI it emits), for the
//! identity of the roles cache (`src/stored.rs`). A stable FNV-1a over the file paths
//! and contents in sorted order: no dependency, the same value on every machine.

use std::path::{Path, PathBuf};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

fn main() {
    let here = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let dirs = [
        here.join("src"),
        here.join("../ir/src"),
        here.join("../../abi/src"),
    ];
    let mut all = Vec::new();
    for d in &dirs {
        println!("cargo:rerun-if-changed={}", d.display());
        files(d, &mut all);
    }
    all.sort();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for &b in bytes {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    };
    for f in &all {
        let rel = f.strip_prefix(&here).unwrap_or(f);
        eat(rel.to_string_lossy().as_bytes());
        eat(&std::fs::read(f).unwrap_or_default());
    }
    println!("cargo:rustc-env=FDC_DIFF_SOURCES={h:016x}");
}
