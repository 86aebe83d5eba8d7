//! `fdc plot RESULTS.csv CHANNEL... -o plot.svg`: result channels over time.

use clap::Args;
use plotters::prelude::*;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Args, Debug, Clone)]
pub struct PlotArgs {
    /// A results file written by `fdc FILE.fd`.
    pub results: PathBuf,
    /// Channels to plot (column names, e.g. `rod.R.z`).
    #[arg(required = true)]
    pub channels: Vec<String>,
    /// The plot file (`.svg`).
    #[arg(short = 'o', long, default_value = "plot.svg")]
    pub output: PathBuf,
}

/// Reads the named columns of a results CSV: (time, one series per channel).
pub fn read_channels(
    path: &Path,
    channels: &[String],
) -> Result<(Vec<f64>, Vec<Vec<f64>>), String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read `{}`: {e}", path.display()))?;
    let mut lines = text.lines();
    let header: Vec<&str> = lines
        .next()
        .ok_or("the results file is empty")?
        .split(',')
        .collect();
    let mut cols = Vec::new();
    for c in channels {
        match header.iter().position(|h| h == c) {
            Some(i) => cols.push(i),
            None => {
                let hint = fdc_frontend::did_you_mean(c, header.iter().copied())
                    .map(|s| format!(" (did you mean `{s}`?)"))
                    .unwrap_or_default();
                return Err(format!("no channel `{c}` in `{}`{hint}", path.display()));
            }
        }
    }
    let mut time = Vec::new();
    let mut series = vec![Vec::new(); cols.len()];
    for (n, line) in lines.enumerate() {
        let fields: Vec<&str> = line.split(',').collect();
        let num = |i: usize| -> Result<f64, String> {
            fields
                .get(i)
                .and_then(|f| f.parse().ok())
                .ok_or_else(|| format!("line {}: column {} is not a number", n + 2, i + 1))
        };
        time.push(num(0)?);
        for (s, &c) in series.iter_mut().zip(&cols) {
            s.push(num(c)?);
        }
    }
    Ok((time, series))
}

/// Draws the series into an SVG file with axis labels and a legend.
pub fn draw(out: &Path, time: &[f64], names: &[String], series: &[Vec<f64>]) -> Result<(), String> {
    if out.extension().and_then(|e| e.to_str()) != Some("svg") {
        return Err(format!("`{}`: plots are written as .svg", out.display()));
    }
    let (t0, t1) = (
        time.first().copied().unwrap_or(0.0),
        time.last().copied().unwrap_or(1.0),
    );
    let finite = series.iter().flatten().copied().filter(|x| x.is_finite());
    let (lo, hi) = finite.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
        (a.min(x), b.max(x))
    });
    let (lo, hi) = if lo.is_finite() { (lo, hi) } else { (0.0, 1.0) };
    let pad = if hi > lo { 0.05 * (hi - lo) } else { 1.0 };
    let t1 = if t1 > t0 { t1 } else { t0 + 1.0 };
    let root = SVGBackend::new(out, (900, 540)).into_drawing_area();
    let e = |e: DrawingAreaErrorKind<_>| format!("plot: {e}");
    root.fill(&WHITE).map_err(e)?;
    let mut chart = ChartBuilder::on(&root)
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(t0..t1, (lo - pad)..(hi + pad))
        .map_err(e)?;
    chart
        .configure_mesh()
        .x_desc("time [s]")
        .y_desc(if names.len() == 1 {
            names[0].as_str()
        } else {
            "value"
        })
        .draw()
        .map_err(e)?;
    for (k, (name, s)) in names.iter().zip(series).enumerate() {
        let color = Palette99::pick(k).to_rgba();
        chart
            .draw_series(LineSeries::new(
                time.iter().copied().zip(s.iter().copied()),
                color.stroke_width(2),
            ))
            .map_err(e)?
            .label(name.clone())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(e)?;
    root.present().map_err(e)?;
    Ok(())
}

pub fn run(a: &PlotArgs) -> ExitCode {
    match read_channels(&a.results, &a.channels)
        .and_then(|(t, s)| draw(&a.output, &t, &a.channels, &s))
    {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
