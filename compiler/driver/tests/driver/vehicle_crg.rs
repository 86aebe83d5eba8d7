//! The vehicle (`examples/vehicle.fd`) on OpenCRG data roads (`crg_road = 1`:
//! `examples/roads/straight.crg`, `2`: `curved.crg` with the friction of
//! `friction.crg`): the runtime writes each road's tangent plane under the wheel
//! centres into the tyres' slots before every evaluation. Checked against the roads
//! evaluated directly by `fdc-road`: the height and friction under every tyre, the
//! contact point on the road surface, the wheel centres one loaded radius above it,
//! and bitwise-equal reruns.

use crate::common;

use common::{build_or_panic, channel, example_path, no_cache, simulate};
use fdc_road::{Crg, Road};
use fdc_runtime::{MemorySink, System};

const WHEELS: [&str; 4] = ["fl", "fr", "rl", "rr"];

/// The vehicle on road `crg_road` at 2 m/s, straight ahead.
fn built(crg_road: f64) -> fdc_driver::pipeline::Built {
    built_from(&example_path("vehicle.fd"), crg_road)
}

/// [`built`] of the vehicle model at `model`.
fn built_from(model: &std::path::Path, crg_road: f64) -> fdc_driver::pipeline::Built {
    let mut opts = no_cache();
    opts.overrides = [
        ("crg_road", crg_road),
        ("wave", 0.0),
        ("v0", 2.0),
        ("rack_step", 0.0),
    ]
    .iter()
    .map(|(n, v)| (n.to_string(), *v))
    .collect();
    let b = build_or_panic(model, &opts);
    assert_eq!(b.model.roads.contacts.len(), 4, "every tyre is on the road");
    b
}

/// A slow run (2 m/s, straight ahead) over road `crg_road` for `end` seconds.
fn run(crg_road: f64, end: f64) -> MemorySink {
    simulate(built(crg_road), |s| s.end = end).0
}

fn road(surface: &str, friction: Option<&str>) -> Road {
    let open = |f: &str| Crg::open(&example_path(&format!("roads/{f}"))).unwrap();
    Road::new(open(surface), friction.map(open)).unwrap()
}

#[test]
fn the_wheels_follow_the_straight_crg_road() {
    let s = run(1.0, 3.0);
    let road = road("straight.crg", None);
    let t = &s.times;
    let mut relief = (f64::INFINITY, f64::NEG_INFINITY);
    // Largest |tyre height − road|, |P.z − road at P|, |centre gap − loaded radius|.
    let mut worst = [0.0f64; 3];
    for w in WHEELS {
        let ch = |n: String| channel(&s, &n);
        let centre = |c: &str| ch(format!("wheel_{w}.R.{c}"));
        let contact = |c: &str| ch(format!("tyre_{w}.contact.{c}"));
        let (cx, cy, cz) = (centre("x"), centre("y"), centre("z"));
        let (px, py, pz) = (contact("x"), contact("y"), contact("z"));
        let h = ch(format!("tyre_{w}.road_height"));
        let fz = ch(format!("tyre_{w}.fz"));
        for i in 0..t.len() {
            // The tyre sees the road's own height under its centre (the plane is
            // exact there).
            let z = road.height(cx[i], cy[i]);
            assert!((h[i] - z).abs() < 1e-9, "{w} t = {}: {} vs {z}", t[i], h[i]);
            relief = (relief.0.min(z), relief.1.max(z));
            worst[0] = worst[0].max((h[i] - z).abs());
            // The contact point lies on the road surface (the tangent plane's error
            // over the small offset of P from below the centre).
            let zp = road.height(px[i], py[i]);
            worst[1] = worst[1].max((pz[i] - zp).abs());
            assert!(
                (pz[i] - zp).abs() < 2e-4,
                "{w} t = {}: P.z {} vs {zp}",
                t[i],
                pz[i]
            );
            // Quasi-static (2 m/s over bumps 8 m long): the centre stays one loaded
            // radius r − Fz/k_z above the road (docs/vehicle.md, example values).
            if t[i] > 1.0 {
                let loaded = 0.31 - fz[i] / 2.2e5;
                let gap = cz[i] - z - loaded;
                worst[2] = worst[2].max(gap.abs());
                assert!(
                    gap.abs() < 1.5e-3,
                    "{w} t = {}: centre {} road {z} gap {gap}",
                    t[i],
                    cz[i]
                );
            }
        }
    }
    eprintln!("road relief {relief:?}; worst height, contact, gap: {worst:?}");
    // The road under the wheels is not flat: a wheel that ignored it would fail.
    assert!(relief.1 - relief.0 > 0.02, "relief {relief:?}");
}

#[test]
fn the_tyres_read_the_friction_file_of_the_curved_road() {
    let s = run(2.0, 1.5);
    let road = road("curved.crg", Some("friction.crg"));
    for w in WHEELS {
        let ch = |n: String| channel(&s, &n);
        let (cx, cy) = (ch(format!("wheel_{w}.R.x")), ch(format!("wheel_{w}.R.y")));
        let (mu, h) = (
            ch(format!("tyre_{w}.friction")),
            ch(format!("tyre_{w}.road_height")),
        );
        for i in 0..mu.len() {
            let expected = road.friction(cx[i], cy[i]).unwrap();
            assert!(
                (mu[i] - expected).abs() < 1e-12,
                "{w}: μ {} vs {expected}",
                mu[i]
            );
            // The file's μ (0.9 here), not the tyre's own `mu` (1).
            assert!((mu[i] - 0.9).abs() < 1e-6, "{w}: μ {}", mu[i]);
            assert!((h[i] - road.height(cx[i], cy[i])).abs() < 1e-9);
        }
    }
}

#[test]
fn a_run_over_a_crg_road_is_bitwise_repeatable() {
    let (a, b) = (run(1.0, 1.0), run(1.0, 1.0));
    assert_eq!(a.names, b.names);
    assert_eq!(a.times, b.times);
    for n in &a.names {
        let (x, y) = (channel(&a, n), channel(&b, n));
        let same = x.iter().zip(&y).all(|(p, q)| p.to_bits() == q.to_bits());
        assert!(same, "channel {n} differs between reruns");
    }
}

/// The road files are inputs of the model (results never overwrite them, `fdc view`
/// rebuilds when they change), and their contents are part of its identity: a state
/// taken on one road is refused by the same model whose road file has other bumps
/// (same code, instances and sizes), and restored on its own road.
#[test]
fn road_files_are_inputs_and_part_of_the_model_identity() {
    let same = |a: &std::path::Path, b: &std::path::Path| {
        a.canonicalize()
            .ok()
            .is_some_and(|a| b.canonicalize().ok() == Some(a))
    };
    let straight = built(1.0);
    // Both branches of the model's `if` name their roads, and both are read.
    for f in ["straight.crg", "curved.crg", "friction.crg"] {
        let path = example_path(&format!("roads/{f}"));
        assert!(
            straight.inputs.iter().any(|i| same(i, &path)),
            "{f} not among the inputs {:?}",
            straight.inputs
        );
    }
    // A copy of the model whose straight.crg has bumps of 12 mm instead of 10 mm.
    let dir = std::env::temp_dir().join(format!("fdc-vehicle-crg-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("roads")).unwrap();
    std::fs::copy(example_path("vehicle.fd"), dir.join("vehicle.fd")).unwrap();
    for f in ["curved.crg", "friction.crg"] {
        std::fs::copy(
            example_path(&format!("roads/{f}")),
            dir.join("roads").join(f),
        )
        .unwrap();
    }
    let text = std::fs::read_to_string(example_path("roads/straight.crg")).unwrap();
    let higher = text.replace(" 0.010000", " 0.012000");
    assert_ne!(text, higher);
    std::fs::write(dir.join("roads/straight.crg"), higher).unwrap();
    let other = built_from(&dir.join("vehicle.fd"), 1.0);
    let _ = std::fs::remove_dir_all(&dir);

    let s = fdc_driver::settings::runtime_settings(
        &straight.settings,
        &fdc_driver::settings::Overrides::default(),
    )
    .unwrap();
    let mut a = System::new(straight.model.clone()).unwrap();
    a.initialize(&s).unwrap();
    for _ in 0..20 {
        a.step(&s).unwrap();
    }
    let state = a.state();
    let mut b = System::new(other.model).unwrap();
    b.initialize(&s).unwrap();
    let refused = b.restore(&state);
    assert!(refused.is_err(), "a state of one road fits the other");
    // Its own road takes it, and continues exactly as the original.
    let mut c = System::new(straight.model).unwrap();
    c.initialize(&s).unwrap();
    c.restore(&state).unwrap();
    let (ra, rc) = (a.step(&s).unwrap(), c.step(&s).unwrap());
    assert_eq!(ra.t.to_bits(), rc.t.to_bits());
    let bits = |s: &System| s.q().iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&a), bits(&c));
}
