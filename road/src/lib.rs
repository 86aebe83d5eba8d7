//! OpenCRG road surfaces for fdc: reading OpenCRG 1.x files (text formats `LRFI`,
//! `LDFI`, binary `KRBI`, `KDBI`), the curved reference line, the standard's default
//! modifiers and NaN handling, and the evaluation of elevation z(x, y) and friction
//! μ(x, y). No dependency on the compiler: the runtime uses it to hand each tyre its
//! local tangent plane. What follows the standard and the reference library, and
//! what is left out, is in `docs/roads.md`.

mod crg;
mod eval;
mod parse;
mod read;

use std::fmt;
use std::path::Path;

pub use crg::Crg;
pub use read::{read_bytes, MAX_ROAD_BYTES};

/// Why a road file cannot be used.
#[derive(Clone, Debug, PartialEq)]
pub enum CrgError {
    /// The file cannot be read (missing, not a regular file, too large).
    Io(String),
    /// The file is not valid OpenCRG: a line number (0: the file as a whole) and why.
    Format(usize, String),
    /// Valid OpenCRG, but a feature this implementation does not have.
    Unsupported(String),
}

impl fmt::Display for CrgError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CrgError::Io(m) => write!(f, "{m}"),
            CrgError::Format(0, m) => write!(f, "not an OpenCRG file: {m}"),
            CrgError::Format(l, m) => write!(f, "line {l}: {m}"),
            CrgError::Unsupported(m) => write!(f, "not supported: {m}"),
        }
    }
}

impl std::error::Error for CrgError {}

impl Crg {
    /// A data set from the bytes of a file.
    pub fn parse(bytes: &[u8]) -> Result<Crg, CrgError> {
        Crg::from_raw(parse::parse(bytes)?)
    }

    /// A data set from a file (a regular file of at most [`MAX_ROAD_BYTES`]).
    pub fn open(path: &Path) -> Result<Crg, CrgError> {
        Crg::parse(&read_bytes(path, MAX_ROAD_BYTES)?)
    }

    /// The u range of the reference line.
    pub fn u_range(&self) -> (f64, f64) {
        (self.u_first, self.u_last)
    }

    /// The v range of the grid (right border, left border).
    pub fn v_range(&self) -> (f64, f64) {
        (self.v[0], self.v[self.v.len() - 1])
    }

    /// The reference line points (x, y), one per u increment.
    pub fn reference_line(&self) -> impl Iterator<Item = (f64, f64)> + '_ {
        self.x.iter().copied().zip(self.y.iter().copied())
    }

    /// The lateral positions of the long sections.
    pub fn sections(&self) -> &[f64] {
        &self.v
    }
}

/// The local tangent plane of a road under a point, as a tyre's `plane_*` slots take
/// it: h ≈ h0 + gx (x − x0) + gy (y − y0), friction μ.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Plane {
    pub x0: f64,
    pub y0: f64,
    pub h0: f64,
    pub gx: f64,
    pub gy: f64,
    pub mu: f64,
}

/// A road: an elevation data set and, optionally, a friction data set on the same
/// reference line (an OpenCRG file whose grid holds μ instead of elevation).
#[derive(Clone, Debug)]
pub struct Road {
    pub surface: Crg,
    pub friction: Option<Crg>,
    /// Half-width of the central differences for the plane's slopes [m].
    pub slope_step: f64,
}

impl Road {
    /// The road of `surface`, with μ from the grid of `friction` (a file on the same
    /// u axis: start, increment and length equal), read at the (u, v) of the surface.
    pub fn new(surface: Crg, friction: Option<Crg>) -> Result<Road, CrgError> {
        if let Some(f) = &friction {
            let same = f.nu == surface.nu
                && (f.u_first - surface.u_first).abs() < 1e-9
                && (f.u_inc - surface.u_inc).abs() < 1e-12;
            if !same {
                return Err(CrgError::Format(
                    0,
                    "the friction file's u axis (start, increment, length) differs from the road's"
                        .into(),
                ));
            }
        }
        Ok(Road {
            surface,
            friction,
            slope_step: 1e-3,
        })
    }

    /// Elevation z(x, y).
    pub fn height(&self, x: f64, y: f64) -> f64 {
        self.surface.xy_to_z(x, y)
    }

    /// Friction μ(x, y), or `None` without a friction file.
    pub fn friction(&self, x: f64, y: f64) -> Option<f64> {
        let f = self.friction.as_ref()?;
        let (u, v) = self.surface.xy_to_uv(x, y);
        Some(f.grid(u, v))
    }

    /// The tangent plane under (x, y): height and friction there, slopes by central
    /// differences over ±`slope_step` (the grid is bilinear per cell, so inside a
    /// cell this is its exact slope). `mu_default` when there is no friction file.
    pub fn plane(&self, x: f64, y: f64, mu_default: f64) -> Plane {
        self.plane_hinted(x, y, mu_default, &mut self.surface.coarse_start(x, y))
    }

    /// [`Road::plane`] with the reference line search starting at `hint` (updated;
    /// keep one per tyre): no allocation, O(1) work for a wheel that moves a little
    /// between calls, the same numbers as [`Road::plane`].
    pub fn plane_hinted(&self, x: f64, y: f64, mu_default: f64, hint: &mut usize) -> Plane {
        let d = self.slope_step;
        let s = &self.surface;
        let mut h = |x, y| {
            let (u, v) = s.xy_to_uv_hinted(x, y, hint);
            s.uv_to_z(u, v)
        };
        let (h0, hxp, hxm, hyp, hym) =
            (h(x, y), h(x + d, y), h(x - d, y), h(x, y + d), h(x, y - d));
        let mu = self.friction.as_ref().map_or(mu_default, |f| {
            let (u, v) = s.xy_to_uv_hinted(x, y, hint);
            f.grid(u, v)
        });
        Plane {
            x0: x,
            y0: y,
            h0,
            gx: (hxp - hxm) / (2.0 * d),
            gy: (hyp - hym) / (2.0 * d),
            mu,
        }
    }
}
