//! The `fdc` binary against careless and hostile input: encodings and line endings,
//! files that are no regular files, results that must never be cut or overwrite an
//! input, exit codes that always come with a reason, JSON mode that is always JSON.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn temp(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("fdc-hostile-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs fdc; a run longer than `limit` is killed and fails the test (a hang).
fn fdc_within(args: &[&str], limit: Duration) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_fdc"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("fdc runs");
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            panic!("fdc {args:?} took longer than {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

fn check(path: &Path, json: bool) -> Output {
    let p = path.to_str().unwrap();
    let args: &[&str] = if json {
        &["check", "--message-format", "json", p]
    } else {
        &["check", p]
    };
    fdc_within(args, Duration::from_secs(30))
}

/// Every stderr line of a JSON-mode run is a JSON object.
fn json_lines(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

/// (code, line, column) of each diagnostic of `fdc check --message-format json`.
fn located(path: &Path) -> (Option<i32>, Vec<(String, u64, u64)>) {
    let out = check(path, true);
    let found = json_lines(&out)
        .iter()
        .map(|d| {
            let p = &d["primary"];
            (
                d["code"].as_str().unwrap().to_string(),
                p["line"].as_u64().unwrap_or(0),
                p["column"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    (out.status.code(), found)
}

const MODEL: &str = "// a comment line\nparam k = 1;\n\nbody b: rigid_body { mass = k; inertia = [1, 1, 1]; }\noutput y = b.position.x + kk;\n";

#[test]
fn line_endings_and_bom_read_as_the_same_lines() {
    let dir = temp("eol");
    let lf = dir.join("lf.fd");
    std::fs::write(&lf, MODEL).unwrap();
    let (code, reference) = located(&lf);
    assert_eq!(code, Some(1));
    // The unknown `kk` on line 5, column 27.
    assert_eq!(reference, [("E0201".to_string(), 5, 27)]);
    for (name, text) in [
        ("crlf.fd", MODEL.replace('\n', "\r\n")),
        ("cr.fd", MODEL.replace('\n', "\r")),
        ("bom.fd", format!("\u{feff}{MODEL}")),
        (
            "bom_cr.fd",
            format!("\u{feff}{}", MODEL.replace('\n', "\r")),
        ),
    ] {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        assert_eq!(located(&p), (Some(1), reference.clone()), "{name}");
    }
    // Without the error: a CR-only model is the whole model, not one long comment.
    let valid = MODEL.replace(" + kk", "").replace('\n', "\r");
    let p = dir.join("valid_cr.fd");
    std::fs::write(&p, valid).unwrap();
    let out = check(&p, false);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
}

#[test]
fn a_file_that_is_not_utf8_is_located_in_both_formats() {
    let dir = temp("latin1");
    let p = dir.join("m.fd");
    // Latin-1 `é` (0xE9) at line 2, column 14.
    std::fs::write(&p, b"param k = 1;\nparam L = 2; \xe9\n").unwrap();
    let (code, found) = located(&p);
    assert_eq!((code, found), (Some(1), vec![("E0004".to_string(), 2, 14)]));
    let human = check(&p, false);
    assert_eq!(human.status.code(), Some(1));
    let text = String::from_utf8_lossy(&human.stderr);
    assert!(
        text.contains("error[E0004]: file is not valid UTF-8"),
        "{text}"
    );
    assert!(text.contains(":2:14"), "{text}");
    // The same through `use`.
    let main = dir.join("main.fd");
    std::fs::write(&main, "use \"m.fd\";\n").unwrap();
    let out = check(&main, true);
    let d = json_lines(&out);
    assert_eq!(d[0]["code"], "E0004");
    assert_eq!(d[0]["primary"]["line"], 2);
    assert!(d[0]["primary"]["file"].as_str().unwrap().ends_with("m.fd"));
}

#[test]
fn json_mode_is_json_whatever_fails() {
    let dir = temp("json");
    // A missing model: an I/O error, exit 2, still JSON.
    let out = check(&dir.join("nope.fd"), true);
    assert_eq!(out.status.code(), Some(2));
    let d = json_lines(&out);
    assert_eq!(d.len(), 1);
    assert_eq!(d[0]["code"], "E0208");
    // A directory as the model.
    let out = check(&dir, true);
    assert_eq!(out.status.code(), Some(2));
    assert!(json_lines(&out)[0]["message"]
        .as_str()
        .unwrap()
        .contains("directory"));
    // A usage error of the command line itself.
    let out = fdc_within(
        &["check", "--message-format", "json", "--bogus"],
        Duration::from_secs(10),
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(json_lines(&out)[0]["code"], "usage");
}

/// `use` and `table(...)` of a FIFO (nobody writes to it), /dev/zero and /dev/stdin:
/// refused at once with the reason, never read.
#[test]
fn special_files_are_refused_without_blocking() {
    let dir = temp("fifo");
    let fifo = dir.join("pipe.txt");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let fifo = fifo.to_str().unwrap();
    for target in [fifo, "/dev/zero", "/dev/stdin"] {
        let m = dir.join("use.fd");
        std::fs::write(&m, format!("use \"{target}\";\n")).unwrap();
        let out = check(&m, true);
        assert_eq!(out.status.code(), Some(1), "{target}");
        let d = json_lines(&out);
        assert_eq!(d[0]["code"], "E0208", "{target}");
        assert!(
            d[0]["message"]
                .as_str()
                .unwrap()
                .contains("not a regular file"),
            "{d:?}"
        );
        let m = dir.join("table.fd");
        std::fs::write(
            &m,
            format!(
                "spline law = table(\"{target}\", 0, 1);\nbody b: rigid_body {{ mass = 1; inertia = [1, 1, 1]; }}\noutput y = law(b.position.x);\n"
            ),
        )
        .unwrap();
        let out = check(&m, true);
        assert_eq!(out.status.code(), Some(1), "{target}");
        let d = json_lines(&out);
        assert_eq!(d[0]["code"], "E0910", "{target}");
        assert!(
            d[0]["message"]
                .as_str()
                .unwrap()
                .contains("not a regular file"),
            "{d:?}"
        );
    }
}

fn example(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../examples")
        .join(name)
        .display()
        .to_string()
}

/// `fdc run` with a cache in `dir`.
fn run(args: &[&str], dir: &Path) -> Output {
    let cache = dir.join("cache");
    let mut all = vec!["run"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--cache-dir", cache.to_str().unwrap()]);
    fdc_within(&all, Duration::from_secs(300))
}

/// Ctrl-C and SIGTERM in the middle of a run that writes rows fast: the file ends
/// with a whole row, the message says how many, the exit status is 128 + signal.
#[test]
fn a_signal_mid_run_leaves_only_whole_rows() {
    for (signal, name, status) in [("-INT", "SIGINT", 130), ("-TERM", "SIGTERM", 143)] {
        let dir = temp(&format!("signal{status}"));
        let csv = dir.join("p.csv");
        let mut child = Command::new(env!("CARGO_BIN_EXE_fdc"))
            .args([
                &example("pendulum.fd"),
                // Long enough never to end here, within the bound of 10^9 fixed steps.
                "--end",
                "1e5",
                "--output-every",
                "0",
            ])
            .arg("-o")
            .arg(&csv)
            .arg("--cache-dir")
            .arg(dir.join("cache"))
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Far beyond the writer's 8 KB buffer: a cut inside a row was likely before.
        let start = Instant::now();
        while std::fs::metadata(&csv).map_or(0, |m| m.len()) < 200_000 {
            assert!(start.elapsed() < Duration::from_secs(240), "no rows");
            std::thread::sleep(Duration::from_millis(20));
        }
        let killed = Command::new("kill")
            .args([signal, &child.id().to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        let start = Instant::now();
        while child.try_wait().unwrap().is_none() {
            assert!(start.elapsed() < Duration::from_secs(30), "no exit");
            std::thread::sleep(Duration::from_millis(20));
        }
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(status), "{stderr}");
        let text = std::fs::read_to_string(&csv).unwrap();
        assert!(text.ends_with('\n'), "cut: {:?}", &text[text.len() - 40..]);
        let mut lines = text.lines();
        let width = lines.next().unwrap().split(',').count();
        let mut rows = 0;
        for l in lines {
            let fields: Vec<&str> = l.split(',').collect();
            assert_eq!(fields.len(), width, "{l}");
            assert!(fields.iter().all(|f| f.parse::<f64>().is_ok()), "{l}");
            rows += 1;
        }
        let said = format!("interrupted by {name} at t = ");
        assert!(stderr.contains(&said), "{stderr}");
        assert!(
            stderr.contains(&format!("the {rows} rows up to it are kept")),
            "{rows} rows: {stderr}"
        );
    }
}

/// `-o` onto the model, a `use`d file, a spline table, a tyre property file or a road
/// file: refused, the file unchanged.
#[test]
fn results_never_overwrite_an_input() {
    let dir = temp("inputs");
    let lib = dir.join("lib.fd");
    std::fs::write(&lib, "param k = 1;\n").unwrap();
    let table = dir.join("law.csv");
    std::fs::write(&table, "0 0\n1 1\n2 4\n").unwrap();
    let tir = dir.join("tyre.tir");
    std::fs::write(&tir, "[LONGITUDINAL_COEFFICIENTS]\nPCX1 = 1.6\n").unwrap();
    let road = dir.join("road.crg");
    let road_text = std::fs::read_to_string(example("roads/straight.crg")).unwrap();
    std::fs::write(&road, &road_text).unwrap();
    let model = dir.join("m.fd");
    let text = "use \"lib.fd\";\nspline law = table(\"law.csv\", 0, 1);\nparam pcx1 = tir(\"tyre.tir\", \"PCX1\");\nparam surface = crg(\"road.crg\");\nbody b: rigid_body { mass = k; inertia = [1, 1, 1]; }\noutput y = law(t);\nsimulate { end = 0.01; }\n";
    std::fs::write(&model, text).unwrap();
    let m = model.to_str().unwrap();
    for (target, content) in [
        (&model, text),
        (&lib, "param k = 1;\n"),
        (&table, "0 0\n1 1\n2 4\n"),
        (&tir, "[LONGITUDINAL_COEFFICIENTS]\nPCX1 = 1.6\n"),
        (&road, road_text.as_str()),
    ] {
        let out = run(&[m, "-q", "-o", target.to_str().unwrap()], &dir);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{}: {stderr}", target.display());
        assert!(stderr.contains("choose another with -o"), "{stderr}");
        assert_eq!(std::fs::read_to_string(target).unwrap(), content);
    }
    // Elsewhere the same run succeeds.
    let out = run(&[m, "-q", "-o", dir.join("r.csv").to_str().unwrap()], &dir);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
}

/// Every non-zero exit says why (also with -q); every printed error exits non-zero.
#[test]
fn failures_are_said_and_exit_non_zero() {
    let dir = temp("exits");
    let p = example("pendulum.fd");
    // A write error (the disk is full) with -q.
    let out = run(&[&p, "-q", "--end", "0.05", "-o", "/dev/full"], &dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("error: writing `/dev/full`"), "{stderr}");
    // A plot of a channel the model does not have.
    let csv = dir.join("p.csv");
    let out = run(
        &[
            &p,
            "-q",
            "--end",
            "0.05",
            "-o",
            csv.to_str().unwrap(),
            "--plot",
            "no.such",
        ],
        &dir,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("error:"), "{stderr}");
}

/// Found by the fuzz campaign (docs/reliability.md): ~40 unclosed `for` loops around an
/// instance whose index is not whole took 24 GB — every one of the 3^32 iterations
/// added an error. Loop iterations and instances now share one budget and a repeated
/// mistake is said once.
#[test]
fn nested_loops_of_errors_are_bounded_and_said_once() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz-found/nested-for-memory.fd");
    let out = check(&path, false);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("E0602"), "{stderr}");
    // One error per place, not one per iteration.
    assert!(
        stderr.matches("error[").count() < 200,
        "{} errors",
        stderr.matches("error[").count()
    );
}

/// Diagnostics of `path` in both formats: (JSON objects, human stderr bytes).
fn both_formats(path: &Path) -> (Vec<Value>, usize) {
    let json = check(path, true);
    assert_eq!(json.status.code(), Some(1), "{json:?}");
    let human = check(path, false);
    assert_eq!(human.status.code(), Some(1));
    (json_lines(&json), human.stderr.len())
}

/// Inputs near the 8 MiB source limit give a bounded answer: one diagnostic for one
/// mistake however long it is (a line of bad characters, spaces between included;
/// an 8-million-character string), with a window of the line, not the line; and
/// many mistakes stop at 100 plus one E0005 that counts the rest.
#[test]
fn inputs_of_megabytes_give_bounded_diagnostics() {
    let dir = temp("big");
    let n = 8_000_000;
    let one_mistake = [
        ("bad.fd", "$".repeat(n)),
        ("bad-spaced.fd", "$ ".repeat(n / 2)),
        (
            "string.fd",
            format!("param s = \"{}\";\n", "x".repeat(n - 14)),
        ),
    ];
    for (name, text) in one_mistake {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        let (diags, human) = both_formats(&path);
        assert_eq!(diags.len(), 1, "{name}: {:?}", &diags[..diags.len().min(3)]);
        // A message, a 400-byte window of the line and its carets: not megabytes.
        assert!(human < 2_000, "{name}: {human} bytes of human output");
        assert!(diags[0].to_string().len() < 1_000, "{name}: {}", diags[0]);
    }
    // The examples over and over: every definition a duplicate, thousands of errors.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let model = std::fs::read_to_string(root.join("examples/pendulum.fd")).unwrap();
    let path = dir.join("dup.fd");
    std::fs::write(&path, model.repeat(1_000_000 / model.len())).unwrap();
    let (diags, human) = both_formats(&path);
    assert_eq!(diags.len(), 101);
    let last = &diags[100];
    assert_eq!(last["code"], "E0005", "{last}");
    let hidden: usize = last["message"]
        .as_str()
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(hidden > 1_000, "{last}");
    assert!(human < 100_000, "{human} bytes of human output");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `fdc ARGS MODEL` (exit 0 or 1), with its peak resident memory in KiB (the
/// kernel's count for this one child, from `wait4`).
// The child is reaped by `wait4` (for its resource usage), which clippy cannot see.
#[allow(clippy::zombie_processes)]
fn peak_kib(args: &[&str], model: &Path) -> u64 {
    let child = Command::new(env!("CARGO_BIN_EXE_fdc"))
        .args(args)
        .arg(model)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let (mut status, mut usage) = (0, unsafe { std::mem::zeroed::<libc::rusage>() });
    // SAFETY: waits for our own child once; both out-pointers are valid.
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as i32);
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) <= 1,
        "{status}"
    );
    usage.ru_maxrss as u64
}

/// A 100,000-point `table(...)` builds in a bounded amount of compiler memory per
/// point: the backend stores each table as raw bytes, not one LLVM constant per
/// number (which cost about 3 KB per point, docs/reliability.md; now about 0.4 KB).
/// Memory is a count, not a time: the bound holds on a loaded machine.
#[test]
fn a_table_of_100000_points_builds_in_bounded_memory() {
    let dir = temp("table");
    let base = std::fs::read_to_string(example("pendulum.fd")).unwrap();
    let peak = |n: usize| {
        let data: String = (0..n)
            .map(|i| format!("{} {}\n", i as f64 * 1e-3, (i as f64 * 1e-3).sin()))
            .collect();
        std::fs::write(dir.join(format!("t{n}.txt")), data).unwrap();
        let model = base.replace(
            "output tip",
            &format!("spline law = table(\"t{n}.txt\", 0, 1);\noutput y = law(t);\noutput tip"),
        );
        let path = dir.join(format!("m{n}.fd"));
        std::fs::write(&path, model).unwrap();
        peak_kib(&["build", "--no-cache"], &path)
    };
    let (small, large) = (peak(1_000), peak(100_000));
    let per_point = (large.saturating_sub(small)) as f64 * 1024.0 / 99_000.0;
    assert!(
        per_point < 1_000.0,
        "{per_point:.0} bytes per point ({small} KiB for 1,000 points, {large} KiB for 100,000)"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The examples repeated to 1 MB and to 4 MB (every definition a duplicate): `fdc
/// check` needs memory in proportion to the input (about 90 bytes per input byte
/// measured, docs/reliability.md), not more per byte as the model grows.
#[test]
fn a_repeated_model_is_checked_in_memory_linear_in_its_size() {
    let dir = temp("repeated");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "fd"))
        .collect();
    paths.sort();
    let all: String = paths
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    let peak = |mb: usize| {
        let path = dir.join(format!("rep{mb}.fd"));
        std::fs::write(&path, all.repeat(mb * 1_000_000 / all.len())).unwrap();
        peak_kib(&["check"], &path)
    };
    let (one, four) = (peak(1), peak(4));
    // Per input byte over the 3 MB between them, against the 1 MB run's whole cost.
    let (per_byte, at_one) = (
        (four - one) as f64 * 1024.0 / 3e6,
        one as f64 * 1024.0 / 1e6,
    );
    assert!(
        per_byte < 150.0 && per_byte < 1.5 * at_one,
        "{per_byte:.0} bytes per input byte from 1 to 4 MB ({one} KiB, {four} KiB)"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
