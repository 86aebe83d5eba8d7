//! Any bytes: the front end must not panic, and every reported span must lie on
//! character boundaries of its file; printing a parsed module must parse again.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let a = fdc_frontend::analyze_source("fuzz.fd", text);
    for d in &a.diagnostics {
        for l in d.primary.iter().chain(&d.secondary) {
            let t = a.files.text(l.span.file);
            assert!(t.is_char_boundary(l.span.start as usize));
            assert!(t.is_char_boundary(l.span.end as usize));
        }
        let _ = d.render(&a.files);
    }
    let (m, _) = fdc_frontend::parse_module(0, text);
    let printed = fdc_frontend::print::module(&m);
    let _ = fdc_frontend::parse_module(0, &printed);
});
