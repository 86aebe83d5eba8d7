//! The importer on its own: broken files give the right error at the right line:col;
//! a round of mutated files never panics and every error names a place in the file.
//! (The runs of the imported models are in compiler/driver/tests/driver/fds.rs.)

use fdc_fds::{import, line_col, Kind, WriteOptions};
use std::path::{Path, PathBuf};

fn models() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/models")
}

fn opts() -> WriteOptions {
    WriteOptions {
        body_type: "rigid_body_euler".into(),
        legacy_solver: true,
        source_name: "test.fds".into(),
        table_prefix: PathBuf::new(),
        dir: models(),
    }
}

fn read(name: &str) -> String {
    std::fs::read_to_string(models().join(name)).unwrap()
}

const MODELS: [&str; 4] = [
    "oscillator.fds",
    "spline_force.fds",
    "three_link_arm.fds",
    "line_of_sight.fds",
];

#[test]
fn every_test_model_imports() {
    for m in MODELS {
        if let Err(e) = import(&read(m), &opts()) {
            panic!("{m}: {e:?}");
        }
    }
}

/// Replaces `from` (first occurrence) by `to` in a model, imports it and expects one
/// error of `kind` starting at the replaced text (+ `shift` bytes), at its line:col.
fn expect(model: &str, from: &str, to: &str, shift: usize, kind: Kind, words: &str) {
    let text = read(model);
    let at = text
        .find(from)
        .unwrap_or_else(|| panic!("`{from}` not in {model}"));
    let broken = text.replacen(from, to, 1);
    let errors = import(&broken, &opts())
        .err()
        .expect("the broken model must not import");
    let want = line_col(&broken, at + shift);
    let hit = errors
        .iter()
        .find(|e| e.kind == kind && line_col(&broken, e.span.start) == want);
    assert!(
        hit.is_some_and(|e| e.message.contains(words)),
        "{model}: `{to}`: expected {kind:?} at {want:?} saying `{words}`, got {errors:#?}"
    );
}

#[test]
fn unknown_block_type_and_key() {
    let m = "oscillator.fds";
    expect(
        m,
        "Measure Translational",
        "Measure Rotational",
        8,
        Kind::Unknown,
        "unknown Measure type `Rotational`",
    );
    expect(m, "Solver HHT", "Solver BDF", 7, Kind::Unknown, "`BDF`");
    expect(
        m,
        "Force GenericForce",
        "Forse GenericForce",
        0,
        Kind::Unknown,
        "unknown block `Forse`",
    );
    expect(
        m,
        "\tMass = 2.0",
        "\tMasse = 2.0",
        1,
        Kind::Unknown,
        "unknown key `Masse`",
    );
}

#[test]
fn references_to_missing_items() {
    let m = "oscillator.fds";
    expect(
        m,
        "BodyIDs = 5e1f9a10-0001, 0\n  dx",
        "BodyIDs = nobody, 0\n  dx",
        10,
        Kind::Reference,
        "no body has the ID `nobody`",
    );
    expect(
        m,
        "PARVAL[k]",
        "PARVAL[kk]",
        7,
        Kind::Reference,
        "no parameter is named `kk`",
    );
    expect(
        m,
        "MEAVAL[x dot]",
        "MEAVAL[x  rate]",
        7,
        Kind::Reference,
        "no measure is named `x  rate`",
    );
    let s = "spline_force.fds";
    expect(
        s,
        "SPL[SIMTIME[], push]",
        "SPL[SIMTIME[], pull]",
        15,
        Kind::Reference,
        "no spline is named `pull`",
    );
    expect(
        s,
        "= push.txt",
        "= nope.txt",
        2,
        Kind::File,
        "`nope.txt` not found",
    );
}

#[test]
fn bad_values_and_unsupported_settings() {
    let m = "oscillator.fds";
    expect(
        m,
        "ModifyNewmark = no",
        "ModifyNewmark = yes",
        16,
        Kind::Unsupported,
        "modified Newmark",
    );
    expect(
        m,
        "dzFixed = no",
        "dzFixed = maybe",
        10,
        Kind::Value,
        "expected `yes` or `no`",
    );
    expect(
        m,
        "Inertia = 0.02, 0.03, 0.04",
        "Inertia = 0.02, 0.03",
        10,
        Kind::Value,
        "3 comma-separated numbers",
    );
    expect(
        m,
        "OrientationPAI = 1, 0, 0, 0, 1, 0",
        "OrientationPAI = 1, 0, 0, 1, 1, 0",
        17,
        Kind::Value,
        "orthonormal",
    );
    expect(
        m,
        "ActivationTime = 0",
        "ActivationTime = 1",
        17,
        Kind::Unsupported,
        "gravity",
    );
    expect(
        m,
        "Name = damping c",
        "Name = k",
        7,
        Kind::Value,
        "a second item is named `k`",
    );
    expect(
        m,
        "EndSolver",
        "EndSolva",
        0,
        Kind::Syntax,
        "does not close",
    );
    expect(
        m,
        "- PARVAL[damping c]",
        "- PARVAL[damping c]) *",
        19,
        Kind::Syntax,
        "unexpected text",
    );
}

/// A small deterministic generator (xorshift), so a failure is reproducible.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as usize
    }
}

fn mutate(text: &str, rng: &mut Rng) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let k = rng.next() % lines.len();
    let mut out: Vec<String> = lines.iter().map(|s| s.to_string()).collect();
    const BITS: [&str; 14] = [
        "=", ",", "%", "[", "]", "(", ")", " ", "-", "0", "x", ".", "End", "é",
    ];
    match rng.next() % 7 {
        0 => {
            out.remove(k);
        }
        1 => out.insert(k, lines[rng.next() % lines.len()].to_string()),
        2 => {
            // Truncate the whole file inside this line.
            let cut: usize = lines[..k].iter().map(|l| l.len() + 1).sum::<usize>()
                + rng.next() % (lines[k].len() + 1);
            let mut end = cut.min(text.len());
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            return text[..end].to_string();
        }
        3 => {
            let chars: Vec<char> = lines[k].chars().collect();
            if !chars.is_empty() {
                let i = rng.next() % chars.len();
                let mut s: String = chars[..i].iter().collect();
                s.push_str(BITS[rng.next() % BITS.len()]);
                s.extend(&chars[i + 1..]);
                out[k] = s;
            }
        }
        4 => out[k] = lines[k].replace("yes", "no").replace("= 0", "= -1"),
        5 => out[k] = format!("{} = ", lines[k].split('=').next().unwrap_or("")),
        _ => out.swap(k, rng.next() % lines.len()),
    }
    out.join("\n")
}

#[test]
fn mutated_files_never_panic_and_errors_name_line_col() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut failed, mut total) = (0, 0);
    for m in MODELS {
        let text = read(m);
        for _ in 0..300 {
            let mut t = mutate(&text, &mut rng);
            if rng.next().is_multiple_of(3) {
                t = mutate(&t, &mut rng);
            }
            total += 1;
            if let Err(errors) = import(&t, &opts()) {
                failed += 1;
                assert!(!errors.is_empty());
                let lines = t.lines().count().max(1);
                for e in &errors {
                    assert!(
                        e.span.start <= e.span.end && e.span.end <= t.len(),
                        "{e:?} outside the file"
                    );
                    let (line, col) = line_col(&t, e.span.start);
                    assert!(line >= 1 && line <= lines + 1 && col >= 1, "{e:?}");
                    assert!(!e.message.is_empty() && !e.hint.is_empty());
                }
            }
        }
    }
    // The round must exercise the error paths (most mutations break something).
    assert!(
        failed * 2 > total,
        "only {failed} of {total} mutations failed"
    );
}
