//! Mesh files for the page: each distinct file once (several shapes may show it), as
//! raw little-endian f32 vertex coordinates the page fetches beside the scene
//! (`/api/mesh/K`) or an export carries as base64, and at most [`MAX_TRIANGLES`]
//! triangles each, so a large scan cannot blow up the page.

use fdc_lower::shapes::{Geometry, Shape};
use std::collections::HashSet;
use std::path::PathBuf;

/// Triangles sent per mesh at most (36 bytes each: 3.6 MB, about 4.8 MB as base64 in
/// an export); a larger mesh is simplified by [`bounded`].
pub const MAX_TRIANGLES: usize = 100_000;

/// One mesh file as the page receives it.
#[derive(Clone, Debug, PartialEq)]
pub struct SentMesh {
    pub path: PathBuf,
    /// Triangles in the file.
    pub triangles: usize,
    /// The (maybe simplified) triangles' vertices, x y z each, f32 little-endian.
    pub bytes: Vec<u8>,
}

/// The distinct mesh files of `shapes`, in order of first use.
pub fn collect<'a>(shapes: impl IntoIterator<Item = &'a Shape>) -> Vec<SentMesh> {
    let mut out: Vec<SentMesh> = Vec::new();
    for s in shapes {
        let Geometry::Mesh {
            path, triangles, ..
        } = &s.geometry
        else {
            continue;
        };
        if out.iter().any(|m| &m.path == path) {
            continue;
        }
        let kept = bounded(triangles, MAX_TRIANGLES);
        out.push(SentMesh {
            path: path.clone(),
            triangles: triangles.len() / 3,
            bytes: kept.iter().flatten().flat_map(|x| x.to_le_bytes()).collect(),
        });
    }
    out
}

/// At most `max` triangles of the vertex list `tri` (3 per triangle). A larger mesh
/// is simplified by vertex clustering: every vertex moves to the centre of its cell
/// of a uniform grid over the bounding box, triangles whose corners share a cell
/// vanish and repeated ones are kept once; the grid coarsens until the rest fit. A
/// vertex moves by at most half a cell diagonal; the winding stays.
pub fn bounded(tri: &[[f32; 3]], max: usize) -> Vec<[f32; 3]> {
    if tri.len() / 3 <= max {
        return tri.to_vec();
    }
    let (mut lo, mut hi) = ([f64::INFINITY; 3], [f64::NEG_INFINITY; 3]);
    for p in tri {
        for i in 0..3 {
            lo[i] = lo[i].min(p[i] as f64);
            hi[i] = hi[i].max(p[i] as f64);
        }
    }
    let extent = (0..3).map(|i| hi[i] - lo[i]).fold(0.0, f64::max).max(1e-30);
    // A surface meets about 2 n² cells of an n³ grid, each cell about 2 triangles.
    let mut n = ((max as f64 / 4.0).sqrt() as usize).max(1);
    loop {
        let h = extent / n as f64;
        let cell = |p: &[f32; 3]| [0, 1, 2].map(|i| ((p[i] as f64 - lo[i]) / h).floor() as i64);
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        for t in tri.chunks_exact(3) {
            let c = [cell(&t[0]), cell(&t[1]), cell(&t[2])];
            if c[0] == c[1] || c[1] == c[2] || c[0] == c[2] {
                continue;
            }
            // The same triangle with either winding once: rotated to its least corner.
            let mut key = c;
            key.sort();
            if !seen.insert(key) {
                continue;
            }
            for c in c {
                out.push([0, 1, 2].map(|i| (lo[i] + (c[i] as f64 + 0.5) * h) as f32));
            }
        }
        if out.len() / 3 <= max || n == 1 {
            return out;
        }
        n = (n * 4 / 5).max(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        // Every vertex within half a cell diagonal of the sphere: cells of at most
        // 2 / sqrt(max / 4) m.
        let h = 2.0 / ((max as f64 / 4.0).sqrt() as usize) as f64 * 1.25f64.powi(3);
        for p in &small {
            let r = p.iter().map(|&x| (x as f64).powi(2)).sum::<f64>().sqrt();
            assert!((r - 1.0).abs() < 0.5 * 3f64.sqrt() * h, "{p:?}: r = {r}");
        }
        // It still closes around the sphere: the area 4π to 3 %.
        let a = area(&small);
        assert!((a / (4.0 * std::f64::consts::PI) - 1.0).abs() < 0.03, "area {a}");
        // A small mesh goes as it is.
        let few = sphere(10);
        assert_eq!(bounded(&few, max), few);
    }
}
