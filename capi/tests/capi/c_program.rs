//! Compiles tests/oscillator.c with gcc against include/fdc.h and libfdc_capi.so and
//! runs it on examples/forced_oscillator.fd (it checks the closed form itself).

use std::path::PathBuf;
use std::process::Command;

/// target/<profile>: the folder of this test binary's parent (`deps`).
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().unwrap().parent().unwrap().to_path_buf()
}

#[test]
fn a_c_program_steps_the_forced_oscillator_along_its_closed_form() {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let lib_dir = profile_dir();
    // `cargo test` links integration tests against the rlib and does not always build
    // the cdylib (a fresh clone has none): build it, so the C program links against
    // the library of this very source (the build lock is free while tests run).
    let built = Command::new(env!("CARGO"))
        .args(["build", "-p", "fdc-capi", "--lib"])
        .current_dir(&here)
        .status()
        .expect("cargo runs");
    assert!(built.success(), "cargo build -p fdc-capi failed");
    assert!(
        lib_dir.join("libfdc_capi.so").is_file(),
        "libfdc_capi.so not in {}",
        lib_dir.display()
    );
    let out_dir = std::env::temp_dir().join(format!("fdc-capi-{}", std::process::id()));
    std::fs::create_dir_all(&out_dir).unwrap();
    let exe = out_dir.join("oscillator");
    let cc = Command::new("gcc")
        .args(["-std=c99", "-Wall", "-Wextra", "-Werror", "-o"])
        .arg(&exe)
        .arg(here.join("tests/oscillator.c"))
        .arg("-I")
        .arg(here.join("include"))
        .arg("-L")
        .arg(&lib_dir)
        .arg(format!("-Wl,-rpath,{}", lib_dir.display()))
        .args(["-lfdc_capi", "-lm"])
        .output()
        .expect("gcc runs");
    assert!(
        cc.status.success(),
        "gcc failed:\n{}",
        String::from_utf8_lossy(&cc.stderr)
    );
    let model = here.join("../examples/forced_oscillator.fd");
    let run = Command::new(&exe).arg(&model).output().unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    let _ = std::fs::remove_dir_all(&out_dir);
    assert!(
        run.status.success(),
        "C program failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(stdout.contains("largest error"), "{stdout}");
    assert!(stdout.contains("repeated bitwise"), "{stdout}");
}
