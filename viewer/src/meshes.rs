//! Mesh files for the page: each distinct file once (several shapes may show it), as
//! raw little-endian f32 vertex coordinates the page fetches beside the scene
//! (`/api/mesh/K`) or an export carries as base64, and at most [`MAX_TRIANGLES`]
//! triangles each, so a large scan cannot blow up the page.

use fdc_lower::shapes::{Geometry, Shape};
use std::collections::{HashMap, HashSet};
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
            bytes: kept
                .iter()
                .flatten()
                .flat_map(|x| x.to_le_bytes())
                .collect(),
        });
    }
    out
}

/// At most `max` triangles of the vertex list `tri` (3 per triangle). A larger mesh
/// is simplified by vertex clustering: every vertex moves to the mean of the vertices
/// in its cell of a uniform grid over the bounding box (so it moves by at most a cell
/// diagonal), triangles whose corners share a cell vanish and repeated ones are kept
/// once; the grid coarsens until the rest fit. The winding stays.
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
        let mut mean: HashMap<[i64; 3], ([f64; 3], f64)> = HashMap::new();
        for p in tri {
            let m = mean.entry(cell(p)).or_default();
            (0..3).for_each(|i| m.0[i] += p[i] as f64);
            m.1 += 1.0;
        }
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        for t in tri.chunks_exact(3) {
            let c = [cell(&t[0]), cell(&t[1]), cell(&t[2])];
            if c[0] == c[1] || c[1] == c[2] || c[0] == c[2] {
                continue;
            }
            // The same triangle with either winding once.
            let mut key = c;
            key.sort();
            if !seen.insert(key) {
                continue;
            }
            for c in c {
                let (sum, k) = mean[&c];
                out.push(sum.map(|x| (x / k) as f32));
            }
        }
        if out.len() / 3 <= max || n == 1 {
            return out;
        }
        n = (n * 4 / 5).max(1);
    }
}
