//! Spline declarations at build time: the points (inline lists or a table file), the
//! slopes of the interpolation method, and the IR table they become.
//!
//! Both methods are C¹ piecewise cubic Hermite interpolants, so a method is just its
//! slopes at the points:
//! - `akima`: Akima (1970). With the chord slopes `m_i = (y_{i+1} − y_i)/(x_{i+1} − x_i)`
//!   extended by two on each side (`m_{−1} = 2m_0 − m_1`, `m_{−2} = 2m_{−1} − m_0`, and
//!   the same at the right end), the slope at point i is
//!   `(|m_{i+1} − m_i|·m_{i−1} + |m_{i−1} − m_{i−2}|·m_i) / (|m_{i+1} − m_i| + |m_{i−1} − m_{i−2}|)`,
//!   or `(m_{i−1} + m_i)/2` where both weights are zero. Two points: the straight line.
//! - `zcc`: the zero-clamped cubic spline, C² inside, with slope 0 at both end points
//!   (the tridiagonal system for the interior slopes is solved by the Thomas algorithm;
//!   it is strictly diagonally dominant, so no pivoting is needed).
//!
//! Outside the data both continue as the straight line with the end slope (value and
//! slope stay continuous, so Newton sees no kink; for `zcc` the line is horizontal).

use fdc_ir::SplineTable;

/// The slopes of Akima's method at each point (`xs` strictly increasing, ≥ 2 points).
pub fn akima_slopes(xs: &[f64], ys: &[f64]) -> Vec<f64> {
    let n = xs.len();
    let chord = |i: usize| (ys[i + 1] - ys[i]) / (xs[i + 1] - xs[i]);
    if n == 2 {
        return vec![chord(0); 2];
    }
    // ext[k + 2] = m_k for k = −2 ..= n.
    let mut ext = vec![0.0; n + 3];
    for i in 0..n - 1 {
        ext[i + 2] = chord(i);
    }
    ext[1] = 2.0 * ext[2] - ext[3];
    ext[0] = 2.0 * ext[1] - ext[2];
    ext[n + 1] = 2.0 * ext[n] - ext[n - 1];
    ext[n + 2] = 2.0 * ext[n + 1] - ext[n];
    (0..n)
        .map(|i| {
            // m_{i−2}, m_{i−1}, m_i, m_{i+1}
            let (a, b, c, d) = (ext[i], ext[i + 1], ext[i + 2], ext[i + 3]);
            let (w1, w2) = ((d - c).abs(), (b - a).abs());
            if w1 + w2 == 0.0 {
                0.5 * (b + c)
            } else {
                (w1 * b + w2 * c) / (w1 + w2)
            }
        })
        .collect()
}

/// The slopes of the cubic spline through the points with slope 0 at both ends.
pub fn zcc_slopes(xs: &[f64], ys: &[f64]) -> Vec<f64> {
    let n = xs.len();
    let mut d = vec![0.0; n];
    if n < 3 {
        return d;
    }
    let h: Vec<f64> = xs.windows(2).map(|w| w[1] - w[0]).collect();
    let delta: Vec<f64> = (0..n - 1).map(|i| (ys[i + 1] - ys[i]) / h[i]).collect();
    // Row i (interior point i = 1..n-2):
    //   h_i d_{i−1} + 2(h_{i−1} + h_i) d_i + h_{i−1} d_{i+1} = 3(h_i δ_{i−1} + h_{i−1} δ_i),
    // with d_0 = d_{n−1} = 0 known.
    let m = n - 2;
    let (mut diag, mut rhs) = (vec![0.0; m], vec![0.0; m]);
    let (mut lower, mut upper) = (vec![0.0; m], vec![0.0; m]);
    for k in 0..m {
        let i = k + 1;
        lower[k] = h[i];
        diag[k] = 2.0 * (h[i - 1] + h[i]);
        upper[k] = h[i - 1];
        rhs[k] = 3.0 * (h[i] * delta[i - 1] + h[i - 1] * delta[i]);
    }
    // Thomas algorithm: forward elimination, then back substitution.
    for k in 1..m {
        let w = lower[k] / diag[k - 1];
        diag[k] -= w * upper[k - 1];
        rhs[k] -= w * rhs[k - 1];
    }
    let mut x = vec![0.0; m];
    for k in (0..m).rev() {
        let next = if k + 1 < m { upper[k] * x[k + 1] } else { 0.0 };
        x[k] = (rhs[k] - next) / diag[k];
    }
    d[1..n - 1].copy_from_slice(&x);
    d
}

/// The IR table of `method` (`akima` or `zcc`) through the points. `Err` with the
/// index of the first x that does not increase, or a message for other bad data.
pub fn table(method: &str, xs: &[f64], ys: &[f64]) -> Result<SplineTable, DataError> {
    if xs.len() < 2 || xs.len() != ys.len() {
        return Err(DataError::TooFew(xs.len().min(ys.len())));
    }
    if let Some(i) = xs.iter().chain(ys).position(|v| !v.is_finite()) {
        return Err(DataError::NotFinite(i % xs.len()));
    }
    if let Some(i) = (1..xs.len()).find(|&i| xs[i] <= xs[i - 1]) {
        return Err(DataError::NotIncreasing(i));
    }
    let ds = match method {
        "zcc" => zcc_slopes(xs, ys),
        _ => akima_slopes(xs, ys),
    };
    SplineTable::hermite(xs, ys, &ds).map_err(DataError::Other)
}

/// What is wrong with a spline's points.
#[derive(Clone, Debug, PartialEq)]
pub enum DataError {
    /// Fewer than two points.
    TooFew(usize),
    /// Point i (0-based) has a non-finite coordinate.
    NotFinite(usize),
    /// x of point i (0-based) is not greater than the x before it.
    NotIncreasing(usize),
    Other(String),
}

/// What went wrong reading a table file's text.
#[derive(Clone, Debug, PartialEq)]
pub enum TableError {
    /// `line` (1-based) has no column `col` (it has `found` columns).
    Column {
        line: usize,
        col: usize,
        found: usize,
    },
    /// `line` (1-based), column `col`: `text` is not a finite number.
    Number {
        line: usize,
        col: usize,
        text: String,
    },
}

/// Points read from a table: xs, ys and the 1-based line number of each point.
pub type TablePoints = (Vec<f64>, Vec<f64>, Vec<usize>);

/// The points of a whitespace-separated table: columns `xcol` and `ycol` (from 0) of
/// every line after the first `header` lines. Blank lines and lines starting with `#`
/// are skipped. Also returns the 1-based line number of each point.
pub fn read_table(
    text: &str,
    xcol: usize,
    ycol: usize,
    header: usize,
) -> Result<TablePoints, TableError> {
    let (mut xs, mut ys, mut lines) = (Vec::new(), Vec::new(), Vec::new());
    for (k, line) in text.lines().enumerate().skip(header) {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let cols: Vec<&str> = trimmed.split_whitespace().collect();
        let get = |col: usize| -> Result<f64, TableError> {
            let text = cols.get(col).ok_or(TableError::Column {
                line: k + 1,
                col,
                found: cols.len(),
            })?;
            text.parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| TableError::Number {
                    line: k + 1,
                    col,
                    text: text.to_string(),
                })
        };
        xs.push(get(xcol)?);
        ys.push(get(ycol)?);
        lines.push(k + 1);
    }
    Ok((xs, ys, lines))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * b.abs().max(1.0)
    }

    #[test]
    fn akima_reproduces_a_straight_line() {
        let xs = [-1.0, 0.0, 0.5, 2.0, 3.5, 4.0];
        let ys: Vec<f64> = xs.iter().map(|x| 3.0 - 2.0 * x).collect();
        let t = table("akima", &xs, &ys).unwrap();
        for k in 0..=60 {
            let x = -2.0 + k as f64 * 0.1;
            assert!(close(t.eval(0, x), 3.0 - 2.0 * x, 1e-14), "x={x}");
            assert!(close(t.eval(1, x), -2.0, 1e-13), "x={x}");
            assert!(t.eval(2, x).abs() < 1e-12, "x={x}");
        }
    }

    /// On a uniform grid the chord slopes of y = x² are m_k = x_k + x_{k+1}; their
    /// differences are all 2h, so both Akima weights are equal and the slope at a knot
    /// is (m_{i−1} + m_i)/2 = 2x_i, the exact derivative, also at the ends (the
    /// extension continues the chord slopes linearly). So the quadratic is reproduced.
    #[test]
    fn akima_on_a_quadratic_has_the_slopes_of_its_formula() {
        let h = 0.5;
        let xs: Vec<f64> = (0..7).map(|i| -1.0 + i as f64 * h).collect();
        let ys: Vec<f64> = xs.iter().map(|x| x * x).collect();
        let slopes = akima_slopes(&xs, &ys);
        for i in 1..xs.len() - 1 {
            let m_prev = (ys[i] - ys[i - 1]) / h;
            let m_next = (ys[i + 1] - ys[i]) / h;
            let by_hand = 0.5 * (m_prev + m_next);
            assert!(close(slopes[i], by_hand, 1e-14));
            assert!(close(slopes[i], 2.0 * xs[i], 1e-14));
        }
        let t = table("akima", &xs, &ys).unwrap();
        for k in 0..=48 {
            let x = -1.0 + k as f64 * 0.0625;
            assert!(close(t.eval(0, x), x * x, 1e-13), "x={x}");
            assert!(close(t.eval(1, x), 2.0 * x, 1e-13), "x={x}");
        }
    }

    /// Non-uniform data, slope at one knot computed from Akima's formula by hand.
    #[test]
    fn akima_slope_by_hand_on_uneven_data() {
        let xs = [0.0, 1.0, 2.0, 4.0, 5.0];
        let ys = [0.0, 1.0, 0.0, 2.0, 2.0];
        let s = akima_slopes(&xs, &ys);
        // Chords: 1, −1, 1, 0. At knot 2: m0 = 1, m1 = −1, m2 = 1, m3 = 0:
        // w1 = |m3 − m2| = 1, w2 = |m1 − m0| = 2: (1·(−1) + 2·1)/3 = 1/3.
        assert!(close(s[2], 1.0 / 3.0, 1e-15));
        // Knot 0: m_{−2} = 5, m_{−1} = 3 (linear extension of 1, −1); m0 = 1, m1 = −1:
        // w1 = 2, w2 = 2: (2·3 + 2·1)/4 = 2.
        assert!(close(s[0], 2.0, 1e-15));
    }

    /// f(x) = 3x² − 2x³ on [0, 1] has f'(0) = f'(1) = 0 and is a single cubic, so the
    /// zero-clamped spline through any of its points is f itself.
    #[test]
    fn zcc_reproduces_a_cubic_with_zero_end_slopes() {
        let f = |x: f64| 3.0 * x * x - 2.0 * x * x * x;
        let df = |x: f64| 6.0 * x - 6.0 * x * x;
        let d2f = |x: f64| 6.0 - 12.0 * x;
        let xs = [0.0, 0.15, 0.4, 0.5, 0.8, 1.0];
        let ys: Vec<f64> = xs.iter().map(|&x| f(x)).collect();
        let t = table("zcc", &xs, &ys).unwrap();
        for k in 0..=40 {
            let x = k as f64 * 0.025;
            assert!(close(t.eval(0, x), f(x), 1e-13), "x={x}");
            assert!(close(t.eval(1, x), df(x), 1e-12), "x={x}");
            // Pieces are right-continuous: at the last knot the straight continuation
            // holds, whose second and third derivatives are 0.
            if x < 1.0 {
                assert!(close(t.eval(2, x), d2f(x), 1e-11), "x={x}");
                assert!(close(t.eval(3, x), -12.0, 1e-10), "x={x}");
            }
        }
        // Outside: constant (zero end slope).
        assert_eq!(t.eval(0, -1.0), f(0.0));
        assert_eq!(t.eval(0, 2.0), f(1.0));
    }

    #[test]
    fn zcc_is_c2_at_interior_knots() {
        let xs = [0.0, 1.0, 1.5, 3.0, 4.0];
        let ys = [0.0, 2.0, -1.0, 0.5, 1.0];
        let t = table("zcc", &xs, &ys).unwrap();
        for &x in &xs[1..4] {
            let e = 1e-9;
            let (l, r) = (t.eval(2, x - e), t.eval(2, x + e));
            assert!(
                (l - r).abs() < 1e-6,
                "second derivative jumps at {x}: {l} vs {r}"
            );
        }
        assert_eq!(t.eval(1, 0.0), 0.0);
        assert!(t.eval(1, 4.0 - 1e-12).abs() < 1e-9);
    }

    #[test]
    fn table_text_is_read_by_columns_after_the_header() {
        let text = "time force other\n# comment\n0 1.5 9\n\n1 2.5 9\n2.5 -1e-3 9\n";
        let (xs, ys, lines) = read_table(text, 0, 1, 1).unwrap();
        assert_eq!(xs, vec![0.0, 1.0, 2.5]);
        assert_eq!(ys, vec![1.5, 2.5, -1e-3]);
        assert_eq!(lines, vec![3, 5, 6]);
        assert_eq!(
            read_table(text, 0, 3, 1),
            Err(TableError::Column {
                line: 3,
                col: 3,
                found: 3
            })
        );
        assert!(matches!(
            read_table("0 1\n1 x2\n", 0, 1, 0),
            Err(TableError::Number {
                line: 2,
                col: 1,
                ..
            })
        ));
        assert!(matches!(
            read_table("0 1\n1 nan\n", 0, 1, 0),
            Err(TableError::Number { line: 2, .. })
        ));
    }

    #[test]
    fn bad_points_are_reported() {
        assert_eq!(
            table("akima", &[0.0], &[1.0]).err(),
            Some(DataError::TooFew(1))
        );
        assert_eq!(
            table("zcc", &[0.0, 1.0, 1.0], &[1.0, 2.0, 3.0]).err(),
            Some(DataError::NotIncreasing(2))
        );
        // Spacing so small that the cubic coefficients overflow: an error, no panic.
        assert!(matches!(
            table("akima", &[0.0, 1e-200, 1.0], &[0.0, 1.0, 0.0]),
            Err(DataError::Other(_))
        ));
    }
}
