//! What the viewer's test binaries share: the example model, its shapes, and writing
//! a model file the way an editor that saves at once does.
// Each test binary uses some of these.
#![allow(dead_code)]

use std::path::Path;

/// Writes the model file at once (a sibling file renamed over it): a plain write
/// truncates first, and a watcher that looks in between builds an empty model.
pub fn save(path: &Path, text: impl AsRef<[u8]>) {
    let tmp = path.with_extension("fd.tmp");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

/// The slider crank with a red bar on the crank (its length the crank radius `r`), a
/// blue sphere between its centre and the main bearing, and a fixed grey rail read from
/// an OBJ file, half transparent.
pub const SHAPES: &str = "
shape box on crank { size = [r, 0.03, 0.01]; colour = [1, 0, 0]; }
shape sphere on crank { radius = 0.02; at = [-r/4, 0, 0]; colour = [0, 0, 1]; orientation = quat(2, 0, 0, 0); }
shape mesh on ground { file = \"rail.obj\"; scale = 0.5; opacity = 0.5; colour = [0.5, 0.5, 0.5]; }
";

pub const RAIL: &str = "v 0 -0.1 0\nv 1 -0.1 0\nv 1 -0.12 0\nv 0 -0.12 0\nf 1 2 3 4\n";

pub fn example() -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/slider_crank.fd");
    std::fs::read_to_string(p).unwrap()
}
