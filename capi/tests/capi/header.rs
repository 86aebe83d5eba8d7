//! include/fdc.h is what cbindgen makes of src/lib.rs today.

use std::path::PathBuf;

#[test]
fn the_checked_in_header_is_up_to_date() {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(here.join("cbindgen.toml")).unwrap();
    let mut fresh = Vec::new();
    cbindgen::Builder::new()
        .with_crate(&here)
        .with_config(config)
        .generate()
        .expect("cbindgen parses src/lib.rs")
        .write(&mut fresh);
    let fresh = String::from_utf8(fresh).unwrap();
    let checked_in = std::fs::read_to_string(here.join("include/fdc.h")).unwrap_or_default();
    if fresh != checked_in && std::env::var_os("FDC_BLESS").is_some() {
        std::fs::write(here.join("include/fdc.h"), &fresh).unwrap();
        return;
    }
    assert!(
        fresh == checked_in,
        "include/fdc.h is stale: run `FDC_BLESS=1 cargo test -p fdc-capi --test capi header::`"
    );
}
