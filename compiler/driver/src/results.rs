//! Result files: a CSV sink that writes every row as the runtime produces it, so a run
//! that fails keeps the rows written so far.

use fdc_runtime::ResultSink;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

/// Writes `time,<channel>,...` and one line per output time. Values use Rust's
/// shortest round-trip formatting, so reading the file back gives the same f64.
pub struct CsvSink {
    out: BufWriter<File>,
    error: Option<io::Error>,
    pub rows: usize,
}

impl CsvSink {
    pub fn create(path: &Path) -> io::Result<CsvSink> {
        Ok(CsvSink {
            out: BufWriter::new(File::create(path)?),
            error: None,
            rows: 0,
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
        self.write(|o| {
            write!(o, "{t:?}")?;
            for v in values {
                write!(o, ",{v:?}")?;
            }
            writeln!(o)
        });
    }
}
