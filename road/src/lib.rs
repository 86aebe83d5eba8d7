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

    /// A fingerprint of everything the evaluation reads (grid, reference line,
    /// modifiers as applied): two data sets with the same fingerprint evaluate alike
    /// (FNV-1a over the bits: stable across runs and machines). The runtime puts it
    /// into a model's identity, so a snapshot taken on one road is not restored on
    /// another.
    pub fn fingerprint(&self) -> u64 {
        let mut h = Fnv::default();
        for x in [
            self.u_first,
            self.u_last,
            self.u_inc,
            self.phi_first,
            self.phi_last,
        ] {
            h.f64(x);
        }
        for x in [self.x_first, self.y_first, self.x_last, self.y_last] {
            h.f64(x);
        }
        for x in [
            self.ref_z_const,
            self.bank_const,
            self.v_inc.unwrap_or(f64::NAN),
        ] {
            h.f64(x);
        }
        h.word(self.nu as u64);
        h.word(u64::from(self.has_bank));
        for list in [&self.v, &self.x, &self.y, &self.phi] {
            h.f64s(list);
        }
        for list in [&self.ref_z, &self.bank] {
            h.word(u64::from(list.is_some()));
            h.f64s(list.as_deref().unwrap_or(&[]));
        }
        h.word(self.z.len() as u64);
        self.z.iter().for_each(|z| h.word(u64::from(z.to_bits())));
        h.0
    }
}

/// FNV-1a, 64 bits, over little-endian words.
struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    fn word(&mut self, w: u64) {
        for b in w.to_le_bytes() {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    fn f64(&mut self, x: f64) {
        self.word(x.to_bits());
    }
    fn f64s(&mut self, xs: &[f64]) {
        self.word(xs.len() as u64);
        xs.iter().for_each(|&x| self.f64(x));
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

    /// [`Crg::fingerprint`] of the surface and the friction file, and the slope step.
    pub fn fingerprint(&self) -> u64 {
        let mut h = Fnv::default();
        h.word(self.surface.fingerprint());
        h.word(self.friction.as_ref().map_or(0, Crg::fingerprint));
        h.f64(self.slope_step);
        h.0
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
