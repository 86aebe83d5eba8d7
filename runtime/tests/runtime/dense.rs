//! Result rows between steps (interpolated) against rows at steps and landed rows.

use crate::common;

use common::*;
use fdc_runtime::{MemorySink, Settings, System};

/// Largest |x − x_exact| over the rows of the damped oscillator of issue 13
/// (m = 1, d = 1.2, k = 20, x₀ = 0.1), and the accepted steps.
fn oscillator_error(s: &Settings) -> (f64, usize, usize) {
    let (m, d, k, a): (f64, f64, f64, f64) = (1.0, 1.2, 20.0, 0.1);
    let w0 = (k / m).sqrt();
    let zeta = d / (2.0 * m * w0);
    let wd = w0 * (1.0 - zeta * zeta).sqrt();
    let mut sys = System::new(spring_mass(m, k, d, a, 0.0)).unwrap();
    let mut sink = MemorySink::default();
    let st = sys.run(s, &mut sink).unwrap();
    let x = sink.channel("mass.x").unwrap();
    let e = sink
        .times
        .iter()
        .zip(&x)
        .map(|(&t, x)| {
            let exact =
                a * (-zeta * w0 * t).exp() * ((wd * t).cos() + zeta * w0 / wd * (wd * t).sin());
            (x - exact).abs()
        })
        .fold(0.0, f64::max);
    (e, st.steps, sink.times.len())
}

#[test]
fn rows_every_millisecond_are_as_accurate_as_rows_at_every_step() {
    // Issue 13 measured with landing: 4,680 steps and 2.3e-6 at rows every 1 ms against
    // 3,906 steps and 2.4e-7 at rows per step.
    for tol in [1e-5, 1e-7] {
        let base = Settings {
            end: 4.0,
            alpha: -0.3,
            adaptive: Some(tol),
            ..Settings::default()
        };
        let every_step = Settings {
            output_every: 0.0,
            ..base.clone()
        };
        let interpolated = Settings {
            output_every: 1e-3,
            ..base.clone()
        };
        let exact = Settings {
            output_exact: true,
            ..interpolated.clone()
        };
        let (e0, n0, _) = oscillator_error(&every_step);
        let (e1, n1, rows1) = oscillator_error(&interpolated);
        let (e2, n2, rows2) = oscillator_error(&exact);
        eprintln!(
            "tol {tol:e}: every step {e0:.3e} ({n0} steps), interpolated {e1:.3e} ({n1}), landed {e2:.3e} ({n2})"
        );
        // One row per millisecond, t = 0 included.
        assert_eq!(rows1, 4001);
        assert_eq!(rows2, 4001);
        // Interpolation does not change the steps; rows between them are as good.
        assert_eq!(n1, n0);
        assert!(e1 < 2.0 * e0, "interpolated {e1:.3e} vs {e0:.3e}");
        // Landing shortens steps but keeps the controller's proposals.
        assert!(e2 < 2.0 * e0, "landed {e2:.3e} vs {e0:.3e}");
        assert!(n2 < 3 * n0 / 2 + 4000, "landed {n2} steps vs {n0}");
    }
}
