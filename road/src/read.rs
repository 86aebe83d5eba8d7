//! Reading a road file safely: a regular file of bounded size, read once.
//!
//! The same rules as the compiler's build-time data files (`table(...)`, `tir(...)`):
//! no devices, pipes or directories, and a size limit so a wrong path cannot make the
//! process read without end. This crate has no compiler dependency, so the rule is
//! restated here rather than imported.

use std::io::Read;
use std::path::Path;

use crate::CrgError;

/// Road files larger than this are refused (a 1 mm × 1 cm grid of a 2 km lane fits).
pub const MAX_ROAD_BYTES: u64 = 256 << 20;

/// The bytes of the regular file `path`, at most `limit` of them.
pub fn read_bytes(path: &Path, limit: u64) -> Result<Vec<u8>, CrgError> {
    let io = |e: std::io::Error| CrgError::Io(format!("{}: {e}", path.display()));
    let meta = std::fs::metadata(path).map_err(io)?;
    if !meta.is_file() {
        return Err(CrgError::Io(format!(
            "{}: not a regular file",
            path.display()
        )));
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .map_err(io)?
        .take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > limit {
        return Err(CrgError::Io(format!(
            "{}: larger than the limit of {limit} bytes",
            path.display()
        )));
    }
    Ok(bytes)
}
