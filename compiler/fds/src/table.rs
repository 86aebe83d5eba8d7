//! Points of a `zccspl` spline read from its data file (fd's `table(...)` makes Akima
//! splines only, so the importer writes these points inline). The same file rules as
//! fd's tables (docs/language.md, Splines): the first `header` lines skipped, then
//! blank lines and lines starting with `#`; columns counted from 0, separated by
//! white space.

use crate::error::{Error, Kind};
use crate::model::Spline;
use std::path::Path;

pub fn read(dir: &Path, s: &Spline) -> Result<(Vec<f64>, Vec<f64>), Error> {
    let path = dir.join(&s.path);
    let fail = |msg: String| {
        Error::new(
            Kind::File,
            s.path_span.clone(),
            msg,
            "this data file",
            "the path is relative to the model file; columns count from 0",
        )
    };
    let text = std::fs::read_to_string(&path)
        .map_err(|e| fail(format!("cannot read `{}`: {e}", path.display())))?;
    let (mut xs, mut ys) = (Vec::new(), Vec::new());
    for (no, line) in text.lines().enumerate().skip(s.header) {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let cols: Vec<&str> = t.split_whitespace().collect();
        let get = |c: usize| {
            cols.get(c)
                .and_then(|v| v.parse::<f64>().ok())
                .filter(|v| v.is_finite())
        };
        match (get(s.xcol), get(s.ycol)) {
            (Some(x), Some(y)) => {
                xs.push(x);
                ys.push(y);
            }
            _ => {
                return Err(fail(format!(
                    "`{}` line {}: columns {} and {} must be numbers",
                    path.display(),
                    no + 1,
                    s.xcol,
                    s.ycol
                )))
            }
        }
    }
    if xs.len() < 2 || xs.windows(2).any(|w| w[1] <= w[0]) {
        return Err(fail(format!(
            "`{}`: a spline needs at least two points with increasing x",
            path.display()
        )));
    }
    Ok((xs, ys))
}
