//! Mutation fuzzing of the examples and language-test cases on stable Rust: a seeded
//! generator (xorshift) cuts, duplicates, swaps and splices byte ranges and inserts
//! tokens and hostile bytes (CR, BOM, NUL, invalid UTF-8), then runs
//! `fdc_driver::pipeline::check` (front end and lowering, what `fdc check` runs) on each
//! input, and a sample through the binary in JSON mode. Asserted: no panic, a bound on
//! the time per input (a hang detector, far above the real figures), every diagnostic
//! located within its file (only an unreadable model has none), JSON mode all JSON.
//!
//! `FDC_FUZZ_INPUTS=N FDC_FUZZ_SEED=S cargo test --workspace --test cli fuzz:: -- --nocapture` runs a
//! longer campaign (docs/reliability.md); the default is small enough for every test run.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const TOKENS: &[&[u8]] = &[
    b"param",
    b"body",
    b"joint",
    b"element",
    b"let",
    b"use \"x.fd\";",
    b"{",
    b"}",
    b"(",
    b")",
    b";",
    b"=",
    b"[",
    b"]",
    b",",
    b"if",
    b"then",
    b"else",
    b"//",
    b"///",
    b"\"",
    b"1e308",
    b"-",
    b"^",
    b"t",
    b"self",
    b"spline",
    b"table(\"/dev/zero\", 0, 1)",
    b"\r",
    b"\r\n",
    b"\xef\xbb\xbf",
    b"\0",
    b"\xff",
    b"\xe9",
    b"\xf0\x9f",
    b"simulate",
    b"output",
];

fn seeds() -> Vec<Vec<u8>> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut out = Vec::new();
    for dir in ["examples", "lang-tests/cases"] {
        let mut paths: Vec<PathBuf> = std::fs::read_dir(root.join(dir))
            .unwrap()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "fd"))
            .collect();
        paths.sort();
        out.extend(paths.iter().map(|p| std::fs::read(p).unwrap()));
    }
    assert!(out.len() >= 40);
    out
}

fn mutate(rng: &mut Rng, seeds: &[Vec<u8>]) -> Vec<u8> {
    let mut t = seeds[rng.below(seeds.len())].clone();
    for _ in 0..1 + rng.below(4) {
        let n = t.len();
        let (a, b) = {
            let a = rng.below(n + 1);
            (a, (a + rng.below(64)).min(n))
        };
        match rng.below(6) {
            0 => {
                t.drain(a..b);
            }
            1 => {
                let piece = t[a..b].to_vec();
                let at = rng.below(n + 1);
                t.splice(at..at, piece);
            }
            2 => {
                let tok = TOKENS[rng.below(TOKENS.len())];
                t.splice(a..a, tok.iter().copied());
            }
            3 => {
                let other = &seeds[rng.below(seeds.len())];
                let c = rng.below(other.len() + 1);
                let d = (c + rng.below(200)).min(other.len());
                t.splice(a..b, other[c..d].iter().copied());
            }
            4 if a < n => t[a] = rng.next() as u8,
            _ => {
                let piece = t[a..b].to_vec();
                for _ in 0..rng.below(50) {
                    t.splice(b..b, piece.iter().copied());
                }
            }
        }
    }
    t
}

/// Checks the model file at `path`; the reason if a property fails.
fn check_one(path: &Path) -> Result<Duration, String> {
    let start = Instant::now();
    let (a, lowering) =
        std::panic::catch_unwind(|| fdc_driver::pipeline::check(path)).map_err(|_| "panic")?;
    let took = start.elapsed();
    for d in a.diagnostics.iter().chain(&lowering) {
        let Some(p) = &d.primary else {
            if d.code == "E0208" {
                continue;
            }
            return Err(format!("{} without a place: {}", d.code, d.message));
        };
        for l in std::iter::once(p).chain(&d.secondary) {
            let text = a.files.text(l.span.file);
            let (s, e) = (l.span.start as usize, l.span.end as usize);
            if !(s <= e && e <= text.len() && text.is_char_boundary(s) && text.is_char_boundary(e))
            {
                return Err(format!("{}: span {s}..{e} outside its file", d.code));
            }
        }
    }
    Ok(took)
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[test]
fn mutated_models_never_crash_hang_or_lose_their_place() {
    let inputs = env_number("FDC_FUZZ_INPUTS", 400);
    let mut rng = Rng(env_number("FDC_FUZZ_SEED", 0x9e37_79b9_7f4a_7c15) | 1);
    let seeds = seeds();
    let dir = std::env::temp_dir().join(format!("fdc-fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("m.fd");
    let (mut total, mut slowest) = (Duration::ZERO, Duration::ZERO);
    let mut failures = Vec::new();
    // Progress on stderr (seen with `--nocapture`): a long campaign that is stopped or
    // still running has an honest count to report.
    let every = env_number("FDC_FUZZ_PROGRESS", 1000).max(1);
    let started = Instant::now();
    let mut done = 0u64;
    for i in 0..inputs {
        let text = mutate(&mut rng, &seeds);
        std::fs::write(&path, &text).unwrap();
        match check_one(&path) {
            Ok(took) => {
                total += took;
                slowest = slowest.max(took);
                // A hang detector: the slowest real input takes well under a second.
                if took > Duration::from_secs(20) {
                    failures.push(format!("input {i}: {took:?}"));
                }
            }
            Err(e) => failures.push(format!("input {i}: {e}")),
        }
        done = i + 1;
        if done.is_multiple_of(every) && done < inputs {
            eprintln!(
                "fuzz progress: {done}/{inputs} inputs, 0 failures, mean {:.2} ms, slowest {:.1} ms, {:.0} s elapsed",
                total.as_secs_f64() * 1e3 / done as f64,
                slowest.as_secs_f64() * 1e3,
                started.elapsed().as_secs_f64()
            );
        }
        if !failures.is_empty() {
            std::fs::write(dir.join(format!("failure{i}.fd")), &text).unwrap();
            break;
        }
    }
    println!(
        "fuzz: {done} of {inputs} inputs, {} failures, mean {:.2} ms, slowest {:.1} ms, {:.0} s",
        failures.len(),
        total.as_secs_f64() * 1e3 / done.max(1) as f64,
        slowest.as_secs_f64() * 1e3,
        started.elapsed().as_secs_f64()
    );
    assert!(
        failures.is_empty(),
        "{failures:?} (kept in {})",
        dir.display()
    );
    // A sample through the binary: JSON mode is JSON, exit 0 or 1, never a crash.
    for _ in 0..20 {
        std::fs::write(&path, mutate(&mut rng, &seeds)).unwrap();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_fdc"))
            .args(["check", "--message-format", "json"])
            .arg(&path)
            .output()
            .unwrap();
        assert!(matches!(out.status.code(), Some(0 | 1)), "{out:?}");
        for line in String::from_utf8_lossy(&out.stderr).lines() {
            let v: serde_json::Value =
                serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
            assert!(v["primary"]["line"].as_u64().is_some(), "{line}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs `f` on a thread with Rust's default 2 MiB stack (what test threads, the
/// viewer's worker and embedders' threads get): the compile must not depend on it.
fn on_small_stack<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> R {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap()
}

/// The campaign's input that overflowed a 2 MiB test thread (a ~1000-operator
/// statement) gives, from such a thread, the diagnostics `fdc check` gives it.
#[test]
fn the_deepest_statement_is_checked_from_a_2mib_thread() {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz-found/deep-operators-2mib.fd");
    let codes = on_small_stack(move || {
        check_one(&path).unwrap();
        let (a, _) = fdc_driver::pipeline::check(&path);
        a.diagnostics.iter().map(|d| d.code).collect::<Vec<_>>()
    });
    // The binary (8 MiB main thread) reports these (docs/reliability.md).
    assert!(
        codes.contains(&"E0101") && codes.contains(&"E0201"),
        "{codes:?}"
    );
}

/// The deepest recursion a model can ask for: `MAX_CALL_DEPTH` user functions, each
/// body nested just under the lexer's bound and calling the next, inlined into one
/// output (about 63,000 levels). From a 2 MiB thread it checks and lowers cleanly.
#[test]
fn the_deepest_inlined_expression_checks_from_a_2mib_thread() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let base = std::fs::read_to_string(root.join("examples/pendulum.fd")).unwrap();
    let (n, d) = (
        fdc_frontend::stack::MAX_CALL_DEPTH,
        fdc_frontend::lexer::MAX_NESTING - 10,
    );
    let mut text = base;
    for i in 0..n - 1 {
        let (open, close) = ("sin(".repeat(d), ")".repeat(d));
        text += &format!("fn f{i}(x: scalar) = {open}f{}(x){close};\n", i + 1);
    }
    text += &format!("fn f{}(x: scalar) = x;\n", n - 1);
    text += "output deep = f0(rod.point([L/2, 0, 0]).x);\n";
    let dir = std::env::temp_dir().join(format!("fdc-deep-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("deep.fd");
    std::fs::write(&path, text).unwrap();
    let p = path.clone();
    let (errors, dofs) = on_small_stack(move || {
        let (a, lowering, dofs) =
            fdc_driver::pipeline::check_dofs(fdc_driver::pipeline::ModelSource::File(&p));
        let errors: Vec<String> = a
            .diagnostics
            .iter()
            .chain(&lowering)
            .map(|d| format!("{}: {}", d.code, d.message))
            .collect();
        (errors, dofs)
    });
    let _ = std::fs::remove_dir_all(&dir);
    assert!(errors.is_empty(), "{errors:?}");
    // The pendulum's own count: the deep output changed nothing else.
    assert!(dofs.unwrap().starts_with("1 degree of freedom"));
}
