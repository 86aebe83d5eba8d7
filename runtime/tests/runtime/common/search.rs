//! The cost of a fixed step at a given accuracy, for the tests that compare `adaptive`
//! with the best fixed step.

use fdc_runtime::RunStats;

/// The fewest steps of a fixed step that reaches `target`: from `h` down by 5 % until
/// the error `run(h)` is at most `target` (the first such step of the search).
pub fn best_fixed_steps(target: f64, mut h: f64, run: impl Fn(f64) -> (f64, RunStats)) -> usize {
    loop {
        let (e, st) = run(h);
        if e <= target || h < 1e-5 {
            eprintln!("fixed h = {h:.3e}: error {e:.3e} in {} steps", st.steps);
            return st.steps;
        }
        h /= 1.05;
    }
}
