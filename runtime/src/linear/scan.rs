//! One pass over a matrix's values for what the step loop and the LU both ask of them:
//! whether every value is finite (else the run names the element that made it) and
//! the largest magnitude (the reference of the LU's pivot test). At 1,000 bodies the
//! values (≈ 2 MB) no longer fit the L2 cache, and two separate passes read them from
//! memory twice per factorization (docs/performance.md, sessions 27–28).

/// What [`scan`] finds in a slice of values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scan {
    /// The largest |value|, NaN ignored (as `f64::max` ignores it).
    pub max: f64,
    /// Whether every value is finite.
    pub finite: bool,
}

/// The largest |value| and whether all are finite, in one pass of eight independent
/// lanes (so neither is one chain of dependent operations; the compiler vectorizes
/// both). Finiteness: `0 · v` is zero for a finite v and NaN otherwise, and a NaN
/// survives every sum. The maximum is kept by a plain comparison ([`larger`]); the
/// maximum of a set does not depend on the order it is taken in, so it has the bits of
/// a plain fold.
pub fn scan(values: &[f64]) -> Scan {
    lanes::<true>(values)
}

/// Whether every value is finite: [`scan`] without the maximum, for the residuals and
/// corrections the step loop checks several times per step.
pub fn all_finite(values: &[f64]) -> bool {
    lanes::<false>(values).finite
}

/// [`scan`], with the maximum taken only if `MAX` (else 0).
#[inline(always)]
fn lanes<const MAX: bool>(values: &[f64]) -> Scan {
    const LANES: usize = 8;
    let (mut max, mut zero) = ([0.0f64; LANES], [0.0f64; LANES]);
    let mut chunks = values.chunks_exact(LANES);
    for c in &mut chunks {
        for ((m, z), v) in max.iter_mut().zip(zero.iter_mut()).zip(c) {
            if MAX {
                *m = larger(*m, v.abs());
            }
            *z += v * 0.0;
        }
    }
    let rest = chunks.remainder();
    let rest_max = rest.iter().fold(0.0f64, |m, v| larger(m, v.abs()));
    Scan {
        max: max.iter().fold(rest_max, |m, &v| larger(m, v)),
        finite: zero.iter().chain(rest).all(|z| z.is_finite()),
    }
}

/// The larger of a running maximum `m` and `v`, with a NaN `v` ignored: `f64::max`'s
/// result where `m` is not NaN, in one comparison instead of its three-instruction NaN
/// handling (on the critical path of every maximum taken in a loop).
pub(super) fn larger(m: f64, v: f64) -> f64 {
    if v > m {
        v
    } else {
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic pseudo-random sequence in [-1e3, 1e3).
    fn values(len: usize, seed: &mut u64) -> Vec<f64> {
        (0..len)
            .map(|_| {
                *seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((*seed >> 11) as f64 / (1u64 << 53) as f64) * 2e3 - 1e3
            })
            .collect()
    }

    #[test]
    fn the_lane_maximum_is_the_plain_one() {
        let mut seed = 3;
        for len in [0, 1, 3, 4, 7, 8, 9, 64, 101] {
            let mut v = values(len, &mut seed);
            if len > 5 {
                v[len / 2] = f64::NAN;
                v[1] = -0.0;
            }
            let plain = v.iter().fold(0.0f64, |m, x| m.max(x.abs()));
            assert_eq!(scan(&v).max.to_bits(), plain.to_bits(), "len {len}");
        }
        let with_infinity = [1.0, -7.5, f64::INFINITY, 2.0, 3.0];
        assert_eq!(scan(&with_infinity).max, f64::INFINITY);
        assert!(!scan(&with_infinity).finite);
        assert!(!all_finite(&with_infinity));
    }
}
