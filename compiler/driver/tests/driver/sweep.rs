//! The sweep and the template it builds on: parameter sets, shared compiled code (its
//! results equal a full build with the same values), runs on threads, the summary.

use crate::common;

use common::{build_or_panic, example_path, no_cache, simulate};
use fdc_driver::pipeline::BuildOptions;
use fdc_driver::settings::{runtime_settings, Overrides};
use fdc_driver::sweep::{self, Axis, Combine, Job, SweepOptions};
use fdc_driver::template::Template;
use fdc_runtime::{MemorySink, System};

fn template(path: &std::path::Path) -> Template {
    Template::build(path, &no_cache()).unwrap_or_else(|e| panic!("{}", sweep::build_error_text(&e)))
}

fn axis(name: &str, values: &[f64]) -> Axis {
    Axis {
        name: name.into(),
        values: values.to_vec(),
    }
}

#[test]
fn axes_parse_lists_ranges_and_single_values() {
    assert_eq!(
        sweep::parse_axis("k=10, 20,40").unwrap(),
        axis("k", &[10.0, 20.0, 40.0])
    );
    let c = sweep::parse_axis("c=0.1:1.0:10").unwrap();
    assert_eq!(c.values.len(), 10);
    assert_eq!((c.values[0], c.values[9]), (0.1, 1.0));
    assert!((c.values[4] - 0.5).abs() < 1e-15);
    assert_eq!(sweep::parse_axis("m=2").unwrap(), axis("m", &[2.0]));
    for bad in ["k", "k=1,x", "k=0:1:0", "k=0:1", "k=1:2:3:4"] {
        assert!(sweep::parse_axis(bad).is_err(), "{bad}");
    }
}

#[test]
fn grid_varies_the_first_axis_slowest_and_zip_pairs_values() {
    let axes = [axis("a", &[1.0, 2.0]), axis("b", &[10.0, 20.0, 30.0])];
    let grid = sweep::combine(&axes, Combine::Grid).unwrap();
    assert_eq!(grid.len(), 6);
    assert_eq!(grid[0], vec![1.0, 10.0]);
    assert_eq!(grid[2], vec![1.0, 30.0]);
    assert_eq!(grid[3], vec![2.0, 10.0]);
    assert!(sweep::combine(&axes, Combine::Zip).is_err());
    let zip = sweep::combine(&[axis("a", &[1.0, 2.0]), axis("b", &[5.0])], Combine::Zip).unwrap();
    assert_eq!(zip, vec![vec![1.0, 5.0], vec![2.0, 5.0]]);
    assert!(sweep::combine(&[axis("a", &[1.0]), axis("a", &[2.0])], Combine::Grid).is_err());
}

fn run_all(model: fdc_runtime::Model, settings: &fdc_lower::Settings) -> MemorySink {
    let s = runtime_settings(settings, &Overrides::default()).unwrap();
    let mut sink = MemorySink::default();
    System::new(model).unwrap().run(&s, &mut sink).unwrap();
    sink
}

#[test]
fn an_instance_shares_the_code_and_equals_a_full_build_bitwise() {
    let path = example_path("spring_mass.fd");
    let t = template(&path);
    let inst = t
        .instantiate(&[("k".into(), 400.0), ("c".into(), 0.5)])
        .unwrap_or_else(|e| panic!("{}", sweep::build_error_text(&e)));
    assert!(inst.shared, "parameter values must not change the code");
    let shared = run_all(inst.model, &inst.settings);
    let opts = BuildOptions {
        overrides: vec![("k".into(), 400.0), ("c".into(), 0.5)],
        ..no_cache()
    };
    let (full, _) = simulate(build_or_panic(&path, &opts), |_| {});
    assert_eq!(shared, full);
    // And the template itself is the model's own values.
    let (own, _) = simulate(build_or_panic(&path, &no_cache()), |_| {});
    assert_eq!(run_all(t.built.model.clone(), &t.built.settings), own);
    assert!(t.instantiate(&[("nope".into(), 1.0)]).is_err());
}

#[test]
fn a_sweep_runs_every_set_and_reports_a_failure_in_its_row() {
    let path = example_path("spring_mass.fd");
    let t = template(&path);
    let ks = [25.0, 100.0, 400.0];
    let jobs: Vec<Job> = ks
        .iter()
        .enumerate()
        .map(|(index, &k)| Job {
            index,
            values: vec![k],
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let opts = SweepOptions {
        names: vec!["k".into()],
        jobs: 2,
        out_dir: Some(dir.path().to_path_buf()),
        summary: vec!["z".into()],
        ..Default::default()
    };
    let rows = sweep::run(&t, &jobs, &opts).unwrap();
    assert_eq!(rows.len(), 3);
    for (r, &k) in rows.iter().zip(&ks) {
        assert_eq!(r.error, None);
        assert_eq!((r.t, r.steps), (2.0, 2000));
        let f = r.figures[0].unwrap();
        assert_eq!(f.min, -0.05);
        assert!(
            (f.last + 0.05 * (k.sqrt() * 2.0).cos()).abs() < 1e-4,
            "k = {k}"
        );
        assert!(dir.path().join(sweep::csv_name(r.index)).is_file());
    }
    let text = sweep::summary_csv(&opts.names, &opts.summary, &rows);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "run,k,status,t_end,steps,z.final,z.min,z.max,z.rms,message"
    );
    assert!(lines[1].starts_with("0,25.0,ok,2.0,2000,"));
    assert_eq!(lines.len(), 4);

    // The same model with a force that turns NaN at t_fail (python/tests/models).
    let blowup = example_path("../python/tests/models/blowup.fd");
    let t = template(&blowup);
    let jobs: Vec<Job> = [0.3, 5.0, 0.6]
        .iter()
        .enumerate()
        .map(|(index, &v)| Job {
            index,
            values: vec![v],
        })
        .collect();
    let opts = SweepOptions {
        names: vec!["t_fail".into()],
        jobs: 2,
        ..Default::default()
    };
    let rows = sweep::run(&t, &jobs, &opts).unwrap();
    let msg = rows[0].error.as_deref().expect("t_fail = 0.3 fails");
    assert!(msg.contains("`blow`"), "{msg}");
    assert!((rows[0].t - 0.3).abs() < 0.01, "{}", rows[0].t);
    assert_eq!((rows[1].error.as_deref(), rows[1].t), (None, 1.0));
    assert!((rows[2].t - 0.6).abs() < 0.01 && rows[2].error.is_some());
}

#[test]
fn unknown_names_are_refused_before_any_run() {
    let t = template(&example_path("spring_mass.fd"));
    let jobs = [Job {
        index: 0,
        values: vec![1.0],
    }];
    let bad_param = SweepOptions {
        names: vec!["q".into()],
        ..Default::default()
    };
    assert!(sweep::run(&t, &jobs, &bad_param)
        .unwrap_err()
        .contains("`q`"));
    let bad_channel = SweepOptions {
        names: vec!["k".into()],
        summary: vec!["nope".into()],
        ..Default::default()
    };
    assert!(sweep::run(&t, &jobs, &bad_channel)
        .unwrap_err()
        .contains("`nope`"));
}

#[test]
fn summary_fields_with_commas_or_quotes_are_quoted() {
    let rows = [sweep::RunSummary {
        index: 3,
        values: vec![0.5],
        error: Some("at t = 0.1: bad, \"very\" bad".into()),
        t: 0.1,
        steps: 100,
        figures: vec![None],
    }];
    let text = sweep::summary_csv(&["k".into()], &["z".into()], &rows);
    assert_eq!(
        text.lines().nth(1).unwrap(),
        "3,0.5,failed,0.1,100,,,,,\"at t = 0.1: bad, \"\"very\"\" bad\""
    );
}
