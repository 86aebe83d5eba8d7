//! Result files: a CSV sink that writes every row as the runtime produces it, so a run
//! that fails keeps the rows written so far.

use fdc_runtime::ResultSink;
use std::fmt;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

/// Writes `time,<channel>,...` and one line per output time. Values use the shortest
/// text that reads back as the same f64 (`zmij`; exponents as in `9.9e-6`, `1e+16`;
/// NaN and the infinities as `NaN`, `inf`, `-inf`).
pub struct CsvSink {
    out: BufWriter<File>,
    error: Option<io::Error>,
    pub rows: usize,
    /// Channels that became NaN or infinite.
    pub non_finite: NonFinite,
}

/// A value as the result files write it ([`CsvSink`], the sweep summary): the
/// shortest text that reads back as the same f64.
pub struct Number(pub f64);

impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(zmij::Buffer::new().format(self.0))
    }
}

/// The first non-finite value (NaN, ±inf) of every channel, for one warning per
/// channel after the run: such a value is written as it is (`NaN`, `inf`), and a run
/// that produced it still exits 0, so the summary has to say so.
#[derive(Debug, Default)]
pub struct NonFinite {
    names: Vec<String>,
    /// Per channel: the time and value of its first non-finite row.
    first: Vec<Option<(f64, f64)>>,
}

impl NonFinite {
    pub fn header(&mut self, names: &[String]) {
        self.names = names.to_vec();
        self.first = vec![None; names.len()];
    }

    pub fn row(&mut self, t: f64, values: &[f64]) {
        for (slot, &v) in self.first.iter_mut().zip(values) {
            if slot.is_none() && !v.is_finite() {
                *slot = Some((t, v));
            }
        }
    }

    /// One line per channel that was not finite, in channel order.
    pub fn warnings(&self) -> Vec<String> {
        self.names
            .iter()
            .zip(&self.first)
            .filter_map(|(n, f)| {
                f.map(|(t, v)| {
                    format!("output `{n}` is {v} from t = {t} s on (first non-finite row)")
                })
            })
            .collect()
    }
}

impl CsvSink {
    pub fn create(path: &Path) -> io::Result<CsvSink> {
        Ok(CsvSink {
            out: BufWriter::new(File::create(path)?),
            error: None,
            rows: 0,
            non_finite: NonFinite::default(),
        })
    }

    fn write(&mut self, f: impl FnOnce(&mut BufWriter<File>) -> io::Result<()>) {
        if self.error.is_none() {
            if let Err(e) = f(&mut self.out) {
                self.error = Some(e);
            }
        }
    }

    /// Writes out the rows so far (whole rows: a row is complete when `row` returns)
    /// and reports the first write error, if any.
    pub fn flush(&mut self) -> io::Result<()> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.out.flush()
    }

    /// Flushes and reports the first write error, if any.
    pub fn finish(mut self) -> io::Result<usize> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.out.flush()?;
        Ok(self.rows)
    }
}

impl ResultSink for CsvSink {
    fn header(&mut self, names: &[String]) {
        self.non_finite.header(names);
        self.write(|o| {
            write!(o, "time")?;
            for n in names {
                write!(o, ",{n}")?;
            }
            writeln!(o)
        });
    }

    fn row(&mut self, t: f64, values: &[f64]) {
        self.rows += 1;
        self.non_finite.row(t, values);
        // The text of [`Number`], without the formatting machinery per value.
        self.write(|o| {
            let mut text = zmij::Buffer::new();
            o.write_all(text.format(t).as_bytes())?;
            for &v in values {
                o.write_all(b",")?;
                o.write_all(text.format(v).as_bytes())?;
            }
            o.write_all(b"\n")
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every value of a row reads back as the same f64 (sign of zero, subnormals,
    /// the extremes, NaN and the infinities included), one line per row.
    #[test]
    fn rows_read_back_bit_for_bit() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.csv");
        let values = [
            0.1 + 0.2,
            -0.0,
            1e-7,
            4.745976692356916e-5,
            123456789012345680.0,
            f64::MAX,
            f64::MIN_POSITIVE,
            5e-324,
            -2.5,
            1.0,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ];
        let names: Vec<String> = (0..values.len()).map(|k| format!("c{k}")).collect();
        let mut sink = CsvSink::create(&path).unwrap();
        sink.header(&names);
        sink.row(0.001, &values);
        sink.row(1e-9, &values.iter().map(|v| -v).collect::<Vec<_>>());
        assert_eq!(sink.finish().unwrap(), 2);
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[0], format!("time,{}", names.join(",")));
        for (line, (t, sign)) in lines[1..].iter().zip([(0.001, 1.0), (1e-9, -1.0)]) {
            let read: Vec<f64> = line.split(',').map(|x| x.parse().unwrap()).collect();
            assert_eq!(read[0].to_bits(), f64::to_bits(t));
            for (r, v) in read[1..].iter().zip(values) {
                let v = sign * v;
                assert!(
                    r.to_bits() == v.to_bits() || (r.is_nan() && v.is_nan()),
                    "{r} vs {v}"
                );
            }
        }
    }

    /// One warning per channel, with the first bad row's time and value; a channel
    /// that stays finite and rows after the first bad one add nothing.
    #[test]
    fn the_first_non_finite_value_of_each_channel_is_reported_once() {
        let mut w = NonFinite::default();
        w.header(&["a".into(), "b".into(), "c".into()]);
        w.row(0.0, &[1.0, 2.0, 3.0]);
        w.row(0.5, &[f64::NAN, 2.0, 3.0]);
        w.row(0.75, &[1.0, f64::NEG_INFINITY, 3.0]);
        w.row(1.0, &[f64::INFINITY, f64::NAN, 3.0]);
        assert_eq!(
            w.warnings(),
            [
                "output `a` is NaN from t = 0.5 s on (first non-finite row)",
                "output `b` is -inf from t = 0.75 s on (first non-finite row)",
            ]
        );
    }
}
