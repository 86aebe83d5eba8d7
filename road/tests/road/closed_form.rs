//! fdc-road against the closed forms the sample roads were generated from
//! (examples/roads/make_roads.py), and bad files (an error, never a panic).

use std::path::{Path, PathBuf};

use fdc_road::{Crg, CrgError, Road};

fn sample(name: &str) -> Crg {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../examples/roads/{name}.crg"));
    Crg::open(&p).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// make_roads.py's elevation.
fn bumps(u: f64, v: f64) -> f64 {
    use std::f64::consts::PI;
    0.02 * (2.0 * PI * u / 8.0).sin() + 0.01 * (2.0 * PI * v / 3.0).cos() + 0.004 * u * v / 10.0
}

#[test]
fn straight_road_moves_to_the_origin_and_keeps_its_elevations() {
    // The default modifiers put the start (u = 0, v = 0) at x = y = z = 0 heading 0.
    let crg = sample("straight");
    let z0 = bumps(0.0, 0.0);
    for i in 0..=80 {
        for k in 0..9 {
            let (u, v) = (0.5 * i as f64, -2.0 + 0.5 * k as f64);
            let z = crg.xy_to_z(u, v);
            // The file holds 6 decimals, the grid single precision.
            assert!((z - (bumps(u, v) - z0)).abs() < 2e-6, "z({u}, {v}) = {z}");
        }
    }
    // Mid-cell: bilinear in the node values.
    let (u, v) = (10.25, 0.75);
    let bil = 0.25 * (bumps(10.0, 0.5) + bumps(10.5, 0.5) + bumps(10.0, 1.0) + bumps(10.5, 1.0));
    assert!((crg.xy_to_z(u, v) - (bil - z0)).abs() < 2e-6);
    // Beyond the end and the borders the last values hold.
    assert_eq!(crg.uv_to_z(45.0, 0.3), crg.uv_to_z(40.0, 0.3));
    assert_eq!(crg.uv_to_z(7.0, 3.0), crg.uv_to_z(7.0, 2.0));
}

/// make_roads.py's headings of curved.crg (before the modifiers turn the start to 0).
fn curved_headings() -> Vec<f64> {
    let curv = |u: f64| {
        if u < 5.0 {
            0.0
        } else if u < 15.0 {
            (u - 5.0) / 10.0 / 25.0
        } else if u < 25.0 {
            1.0 / 25.0
        } else if u < 35.0 {
            (35.0 - u) / 10.0 / 25.0
        } else {
            0.0
        }
    };
    let mut phi = vec![0.3];
    for i in 1..81 {
        phi.push(phi[i - 1] + 0.5 * curv((i as f64 - 0.5) * 0.5));
    }
    phi
}

#[test]
fn curved_road_integrates_the_heading_at_each_step_end() {
    let crg = sample("curved");
    // Default lateral positions of sections given by index.
    let want: Vec<f64> = (0..13).map(|k| -1.5 + 0.25 * k as f64).collect();
    assert_eq!(crg.sections(), want.as_slice());
    let phi = curved_headings();
    let pts: Vec<(f64, f64)> = crg.reference_line().collect();
    assert_eq!(pts[0], (0.0, 0.0));
    for i in 1..pts.len() {
        // Turned by −0.3 (the start heading goes to 0); step i uses heading i.
        let a = phi[i] - 0.3;
        let (dx, dy) = (pts[i].0 - pts[i - 1].0, pts[i].1 - pts[i - 1].1);
        assert!(
            (dx - 0.5 * a.cos()).abs() < 1e-12 && (dy - 0.5 * a.sin()).abs() < 1e-12,
            "step {i}"
        );
    }
}

#[test]
fn curve_mapping_round_trips_inside_the_road() {
    for name in ["curved", "banked", "straight"] {
        let crg = sample(name);
        let (u0, u1) = crg.u_range();
        let (v0, v1) = crg.v_range();
        for i in 0..200 {
            let u = u0 + (u1 - u0) * ((i as f64 * 0.618034) % 1.0);
            let v = v0 + (v1 - v0) * ((i as f64 * 0.414214) % 1.0);
            let (x, y) = crg.uv_to_xy(u, v);
            let (ub, vb) = crg.xy_to_uv(x, y);
            assert!(
                (ub - u).abs() < 1e-9 && (vb - v).abs() < 1e-9,
                "{name}: ({u}, {v}) → ({ub}, {vb})"
            );
        }
    }
}

#[test]
fn nan_borders_take_the_last_valid_value() {
    let crg = sample("nans");
    let value = |i: usize, k: usize| (0.01 * (1 + k) as f64 + 0.003 * i as f64) as f32 as f64;
    let z0 = value(0, 3); // z at the start of the reference line (v = 0: section 3)
    for i in 0..41 {
        let (right, left) = (i % 3, (i / 2) % 4);
        for k in 0..7 {
            let valid = k.clamp(right, 6 - left);
            let (u, v) = (2.0 + 0.5 * i as f64, -1.5 + 0.5 * k as f64);
            let z = crg.uv_to_z(u, v);
            assert!(
                (z - (value(i, valid) - z0)).abs() < 1e-9,
                "z({u}, {v}) = {z}"
            );
        }
    }
    // nans_mods.crg: NaNs set to the offset 0.05, then the road moved so that the
    // reference point (u at half length, v = 0.25) is at z = 3.
    let m = sample("nans_mods");
    let (u0, u1) = m.u_range();
    assert!((m.uv_to_z(0.5 * (u0 + u1), 0.25) - 3.0).abs() < 1e-12);
    let (x, y) = m.uv_to_xy(0.5 * (u0 + u1), 0.25);
    assert!((x - 100.0).abs() < 1e-9 && (y - 50.0).abs() < 1e-9);
}

fn file(header: &str, data: &str) -> String {
    format!("$ROAD_CRG\n{header}\n$\n$KD_DEFINITION\n#:LRFI\nD:long section at v = -1.0,m\nD:long section at v = 1.0,m\n$\n$$$$\n{data}")
}

#[test]
fn tangent_plane_of_a_sloped_banked_road() {
    // Flat grid, slope 0.05 along u, banking 0.02; start heading 0.5 (turned to 0).
    let text = file(
        "REFERENCE_LINE_INCREMENT = 1.0\nREFERENCE_LINE_START_S = 0.05\nREFERENCE_LINE_START_B = 0.02\nREFERENCE_LINE_START_PHI = 0.5",
        &"    0.0000    0.0000\n".repeat(11),
    );
    let road = Road::new(Crg::parse(text.as_bytes()).unwrap(), None).unwrap();
    let p = road.plane(4.3, 0.4, 0.8);
    assert!((p.h0 - (0.05 * 4.3 + 0.02 * 0.4)).abs() < 1e-12);
    assert!((p.gx - 0.05).abs() < 1e-9 && (p.gy - 0.02).abs() < 1e-9);
    assert_eq!((p.x0, p.y0, p.mu), (4.3, 0.4, 0.8));
}

#[test]
fn friction_is_read_on_the_roads_own_u_v() {
    let road = Road::new(sample("curved"), Some(sample("friction"))).unwrap();
    // friction.crg: 0.4 on sections 7…12 (v ≥ 0.25) for 15 ≤ u ≤ 25, else 0.9.
    let on = |u, v| {
        let (x, y) = road.surface.uv_to_xy(u, v);
        road.friction(x, y).unwrap()
    };
    assert!((on(20.0, 1.0) - 0.4).abs() < 1e-6);
    assert!((on(20.0, -1.0) - 0.9).abs() < 1e-6);
    assert!((on(5.0, 1.0) - 0.9).abs() < 1e-6);
    // A friction file on another u axis is refused.
    assert!(Road::new(sample("curved"), Some(sample("straight"))).is_ok());
    assert!(Road::new(sample("curved"), Some(sample("nans"))).is_err());
}

#[test]
fn bad_files_are_errors_not_panics() {
    let rows = "    0.0000    0.0000\n    0.0000    0.0000\n";
    let cases: Vec<(String, &str)> = vec![
        ("$ROAD_CRG\n$\n".into(), "no data section"),
        (file("", rows).replace("#:LRFI\n", ""), "no data format"),
        (file("", rows).replace("v = 1.0", "v = -1.0"), "closer than"),
        (
            file("", "    0.0000    0.0000\n"),
            "fewer than two data records",
        ),
        (
            file("", rows).replace("$\n$KD", "$\n$ROAD_CRG_MODS\nscale_z_grid = 2\n$\n$KD"),
            "scale_z_grid",
        ),
        (
            file("", rows).replace("$\n$KD", "$\n$ROAD_CRG_OPTS\nborder_mode_u = 1\n$\n$KD"),
            "border_mode_u",
        ),
        (
            file("REFERENCE_LINE_INCREMENT = -1", rows),
            "must be positive",
        ),
        (file("", rows).replace("#:LRFI", "#:KRBI"), "END_U"),
        (
            file("REFERENCE_LINE_END_U = 9", rows).replace("#:LRFI", "#:KDBI"),
            "fewer than",
        ),
        ("\u{0}\u{ff}garbage".into(), "no data section"),
    ];
    for (text, why) in cases {
        let e = Crg::parse(text.as_bytes()).expect_err(why);
        assert!(e.to_string().contains(why), "{why}: got {e}");
    }
    let dir = std::env::temp_dir();
    assert!(matches!(Crg::open(&dir), Err(CrgError::Io(m)) if m.contains("not a regular file")));
    let missing = PathBuf::from("/nonexistent/road.crg");
    assert!(matches!(Crg::open(&missing), Err(CrgError::Io(_))));
}

#[test]
fn hinted_search_gives_the_full_searchs_numbers() {
    // A wheel driving along each road (and one jump across it): the hinted search
    // and the planes from it are bitwise those of the full search.
    for name in ["curved", "banked", "straight", "nans_mods"] {
        let road = Road::new(sample(name), None).unwrap();
        let crg = &road.surface;
        let (u0, u1) = crg.u_range();
        let (v0, v1) = crg.v_range();
        let mut hint = 0;
        let mut plane_hint = 0;
        for i in 0..2000 {
            let s = i as f64 / 1999.0;
            let u = if i == 1000 {
                u0
            } else {
                u0 - 1.0 + (u1 - u0 + 2.0) * s
            };
            let v = v0 + (v1 - v0) * (0.5 + 0.4 * (7.0 * s).sin());
            let (x, y) = crg.uv_to_xy(u, v);
            assert_eq!(
                crg.xy_to_uv_hinted(x, y, &mut hint),
                crg.xy_to_uv(x, y),
                "{name} {i}"
            );
            assert_eq!(
                road.plane_hinted(x, y, 1.0, &mut plane_hint),
                road.plane(x, y, 1.0)
            );
        }
    }
}

#[test]
fn fingerprints_tell_roads_apart() {
    // The same file read twice: one fingerprint; every other sample: another one.
    let names = [
        "straight",
        "curved",
        "banked",
        "nans",
        "nans_mods",
        "friction",
    ];
    let prints: Vec<u64> = names.iter().map(|n| sample(n).fingerprint()).collect();
    for (i, n) in names.iter().enumerate() {
        assert_eq!(sample(n).fingerprint(), prints[i], "{n}");
        for j in 0..i {
            assert_ne!(prints[i], prints[j], "{n} vs {}", names[j]);
        }
    }
    // One elevation of one grid point, and one header value, change it.
    let flat = "    0.0000    0.0000\n".repeat(11);
    let bump = flat.replacen("    0.0000    0.0000", "    0.0000    0.0010", 1);
    let header = "REFERENCE_LINE_INCREMENT = 1.0";
    let print = |h: &str, d: &str| Crg::parse(file(h, d).as_bytes()).unwrap().fingerprint();
    let base = print(header, &flat);
    assert_ne!(base, print(header, &bump));
    assert_ne!(base, print("REFERENCE_LINE_INCREMENT = 1.5", &flat));
    // A road with a friction file is not the road without it.
    let without = Road::new(sample("curved"), None).unwrap().fingerprint();
    let with = Road::new(sample("curved"), Some(sample("friction"))).unwrap();
    assert_ne!(without, with.fingerprint());
}
