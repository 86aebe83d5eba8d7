//! Meshes for the page: a large one simplified within its bound and keeping its
//! shape, sent once however many shapes show it, apart from the polled state.

use crate::common;

use common::save;
use fdc_viewer::meshes::{bounded, MAX_TRIANGLES};

/// A sphere of radius 1 as a latitude-longitude mesh of 2 `m`² triangles.
fn sphere(m: usize) -> Vec<[f32; 3]> {
    let p = |i: usize, j: usize| {
        let (th, ph) = (
            std::f64::consts::PI * i as f64 / m as f64,
            2.0 * std::f64::consts::PI * j as f64 / m as f64,
        );
        [th.sin() * ph.cos(), th.sin() * ph.sin(), th.cos()].map(|x| x as f32)
    };
    let mut v = Vec::new();
    for i in 0..m {
        for j in 0..m {
            v.extend([p(i, j), p(i + 1, j), p(i + 1, j + 1)]);
            v.extend([p(i, j), p(i + 1, j + 1), p(i, j + 1)]);
        }
    }
    v
}

fn area(tri: &[[f32; 3]]) -> f64 {
    tri.chunks_exact(3)
        .map(|t| {
            let d = |a: [f32; 3], b: [f32; 3]| [0, 1, 2].map(|i| (b[i] - a[i]) as f64);
            let (u, w) = (d(t[0], t[1]), d(t[0], t[2]));
            let c = [
                u[1] * w[2] - u[2] * w[1],
                u[2] * w[0] - u[0] * w[2],
                u[0] * w[1] - u[1] * w[0],
            ];
            0.5 * (c[0] * c[0] + c[1] * c[1] + c[2] * c[2]).sqrt()
        })
        .sum()
}

#[test]
fn a_large_mesh_is_simplified_within_the_bound_and_keeps_its_shape() {
    // 320,000 triangles down to at most 20,000.
    let big = sphere(400);
    assert_eq!(big.len() / 3, 320_000);
    let max = 20_000;
    let small = bounded(&big, max);
    let n = small.len() / 3;
    assert!(n <= max && n > max / 4, "{n} triangles");
    // Every vertex within a cell diagonal of the sphere (the mean of sphere points in
    // one cell), cells of at most 2 / sqrt(max / 4) m coarsened three times.
    let h = 2.0 / ((max as f64 / 4.0).sqrt() as usize) as f64 * 1.25f64.powi(3);
    for p in &small {
        let r = p.iter().map(|&x| (x as f64).powi(2)).sum::<f64>().sqrt();
        assert!((r - 1.0).abs() < 3f64.sqrt() * h, "{p:?}: r = {r}");
    }
    // It still closes around the sphere: the area 4π to 3 %.
    let a = area(&small);
    eprintln!(
        "{n} triangles, area {a:.4} (4π = {:.4})",
        4.0 * std::f64::consts::PI
    );
    assert!(
        (a / (4.0 * std::f64::consts::PI) - 1.0).abs() < 0.03,
        "area {a}"
    );
    // A small mesh goes as it is.
    let few = sphere(10);
    assert_eq!(bounded(&few, max), few);
}

/// A binary STL of `tri` (vertices, 3 per triangle; normals left zero).
fn binary_stl(tri: &[[f32; 3]]) -> Vec<u8> {
    let mut b = vec![0u8; 80];
    b.extend((tri.len() as u32 / 3).to_le_bytes());
    for t in tri.chunks_exact(3) {
        b.extend([0u8; 12]);
        b.extend(t.iter().flatten().flat_map(|x| x.to_le_bytes()));
        b.extend([0u8; 2]);
    }
    b
}

/// A mesh file of 180,000 triangles shown on two bodies: the page's polled state
/// names it only, its vertices go once (apart from the state, at most
/// `MAX_TRIANGLES`), and the export grows by one base64 copy of them.
#[test]
fn a_large_mesh_goes_once_and_bounded() {
    let dir = tempfile::tempdir().unwrap();
    // A wavy strip: 300 × 300 quads.
    let m = 300;
    let p = |i: usize, j: usize| {
        let (x, y) = (i as f32 / m as f32, j as f32 / m as f32);
        [x, y, 0.05 * (20.0 * x).sin() * (20.0 * y).cos()]
    };
    let mut tri = Vec::new();
    for i in 0..m {
        for j in 0..m {
            tri.extend([p(i, j), p(i + 1, j), p(i + 1, j + 1)]);
            tri.extend([p(i, j), p(i + 1, j + 1), p(i, j + 1)]);
        }
    }
    std::fs::write(dir.path().join("big.stl"), binary_stl(&tri)).unwrap();
    let plain = "body a: rigid_body { mass = 1; inertia = [1e-3, 1e-3, 1e-3]; }\n\
                 body b: rigid_body { mass = 1; inertia = [1e-3, 1e-3, 1e-3]; position = [2, 0, 0]; }\n\
                 simulate { end = 0.01; step = 1e-3; }\n";
    let shaped = format!(
        "{plain}shape mesh on a {{ file = \"big.stl\"; }}\n\
         shape mesh on b {{ file = \"big.stl\"; scale = 0.5; }}\n"
    );
    let state_of = |text: &str| {
        let model = dir.path().join("m.fd");
        save(&model, text);
        fdc_viewer::Session::run_once(&fdc_viewer::SessionOptions::new(&model))
    };
    let (with, without) = (state_of(&shaped), state_of(plain));
    assert!(with.diagnostics.is_none(), "{:?}", with.diagnostics);
    let scene = with.scene.as_ref().unwrap();
    assert_eq!(
        scene["meshes"].as_array().unwrap().len(),
        1,
        "{}",
        scene["meshes"]
    );
    assert_eq!(scene["meshes"][0]["triangles"], 180_000);
    for body in 0..2 {
        assert_eq!(scene["bodies"][body]["shapes"][0]["mesh"], 0);
    }
    let sent = with.meshes[0].len();
    assert_eq!(
        sent,
        36 * scene["meshes"][0]["sent"].as_u64().unwrap() as usize
    );
    assert!(
        sent <= 36 * MAX_TRIANGLES && sent > 36 * MAX_TRIANGLES / 4,
        "{sent} bytes"
    );
    // The state the page polls is that of the plain model plus a few hundred bytes.
    let polled = with.summary().to_string().len();
    let base = without.summary().to_string().len();
    assert!(polled < base + 1000, "{polled} vs {base} bytes");
    // The export: one copy, 4/3 of the bytes as base64.
    let grown = fdc_viewer::export_html(&with).len() - fdc_viewer::export_html(&without).len();
    assert!(
        grown <= sent * 4 / 3 + 2000 && grown >= sent * 4 / 3,
        "{grown} vs {sent}"
    );
}
