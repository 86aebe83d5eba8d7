//! Reading the files a model names: the model itself, `use`d files, spline tables (and
//! whatever file kinds come later). The one home for "read a model-referenced file
//! safely": every such read goes through [`read_text`].
//!
//! A model is input the user may not have written, so a file must be a regular file
//! (a FIFO would block forever, `/dev/zero` would read until memory runs out,
//! `/dev/stdin` would steal the language server's protocol pipe) under a size limit.
//! Both are checked on the opened file (`fstat`) before any byte is read, and the
//! open itself does not block (`O_NONBLOCK`; opening a FIFO for reading without it
//! waits for a writer). The read stops one byte past the limit even if the file grows.
//!
//! Text is normalized once here, so that every later phase sees the same lines: a
//! leading UTF-8 byte-order mark is dropped and a lone CR (old Mac line ending) becomes
//! LF (same length, so byte offsets are unchanged; CRLF stays as it is — `\r` is
//! whitespace to the lexer and the line index splits at the `\n`).

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

/// Largest model source file (`.fd`, the model and each `use`d file). The front end is
/// linear in the input, but lowering is not yet for some constructs; 8 MiB is far
/// above any real model (the largest example is a few kB) and keeps a hostile file
/// from costing minutes.
pub const MAX_SOURCE_BYTES: u64 = 8 << 20;

/// Largest data file (spline `table(...)` and later mesh/tyre/road files).
pub const MAX_DATA_BYTES: u64 = 64 << 20;

/// Why a file could not be read as text.
#[derive(Debug)]
pub enum ReadError {
    /// Opening or reading failed (missing file, permissions, ...).
    Io(io::Error),
    /// Not a regular file: a directory, FIFO, socket or device (named by `kind`).
    NotRegular { kind: &'static str },
    /// Larger than the limit of its kind of file.
    TooLarge { size: u64, limit: u64 },
    /// Not UTF-8: the text with every bad sequence replaced by U+FFFD and the byte
    /// offset of the first one (the same offset in both, as the prefix is valid).
    NotUtf8 { lossy: String, offset: usize },
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Io(e) => write!(f, "{e}"),
            ReadError::NotRegular { kind } => {
                write!(f, "it is a {kind}, not a regular file")
            }
            ReadError::TooLarge { size, limit } => write!(
                f,
                "it has {size} bytes, more than the limit of {limit} bytes ({} MiB)",
                limit >> 20
            ),
            ReadError::NotUtf8 { offset, .. } => {
                write!(
                    f,
                    "it is not valid UTF-8 (first bad byte at offset {offset})"
                )
            }
        }
    }
}

/// What a non-regular file is, for the message.
fn kind_of(ft: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_fifo() {
            return "FIFO (named pipe)";
        }
        if ft.is_char_device() {
            return "character device";
        }
        if ft.is_block_device() {
            return "block device";
        }
        if ft.is_socket() {
            return "socket";
        }
    }
    if ft.is_dir() {
        "directory"
    } else {
        "special file"
    }
}

/// Opens without blocking: a FIFO without a writer would otherwise block the open.
fn open_nonblocking(path: &Path) -> io::Result<File> {
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.custom_flags(libc::O_NONBLOCK);
    }
    opts.open(path)
}

/// The bytes of a regular file of at most `limit` bytes.
pub fn read_bytes(path: &Path, limit: u64) -> Result<Vec<u8>, ReadError> {
    let file = open_nonblocking(path).map_err(ReadError::Io)?;
    let meta = file.metadata().map_err(ReadError::Io)?;
    if !meta.is_file() {
        return Err(ReadError::NotRegular {
            kind: kind_of(meta.file_type()),
        });
    }
    if meta.len() > limit {
        return Err(ReadError::TooLarge {
            size: meta.len(),
            limit,
        });
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    // One byte more than allowed tells a file that grew since the `fstat`.
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    if bytes.len() as u64 > limit {
        return Err(ReadError::TooLarge {
            size: bytes.len() as u64,
            limit,
        });
    }
    Ok(bytes)
}

/// The text of a regular file of at most `limit` bytes, normalized ([`normalize`]).
pub fn read_text(path: &Path, limit: u64) -> Result<String, ReadError> {
    let mut bytes = read_bytes(path, limit)?;
    // Before the UTF-8 check, so that the offset of a bad byte is one in the text.
    if bytes.starts_with(b"\xef\xbb\xbf") {
        bytes.drain(..3);
    }
    match String::from_utf8(bytes) {
        Ok(text) => Ok(normalize(text)),
        Err(e) => {
            let offset = e.utf8_error().valid_up_to();
            let lossy = String::from_utf8_lossy(e.as_bytes()).into_owned();
            Err(ReadError::NotUtf8 {
                lossy: normalize(lossy),
                offset,
            })
        }
    }
}

/// Drops a leading byte-order mark and turns every lone CR into LF (see the module).
pub fn normalize(mut text: String) -> String {
    if text.starts_with('\u{feff}') {
        text.drain(..'\u{feff}'.len_utf8());
    }
    if text.contains('\r') {
        text = lone_cr_to_lf(&text);
    }
    text
}

/// Every `\r` not followed by `\n` becomes `\n` (byte for byte: offsets are kept).
pub fn lone_cr_to_lf(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for (i, _) in text.match_indices('\r') {
        if bytes.get(i + 1) != Some(&b'\n') {
            out.push_str(&text[last..i]);
            out.push('\n');
            last = i + 1;
        }
    }
    out.push_str(&text[last..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_endings_and_bom() {
        assert_eq!(normalize("\u{feff}a\rb\r\nc\n\r".into()), "a\nb\r\nc\n\n");
        // Offsets are kept: same length after the BOM.
        let t = "x\ry\r\r\nz";
        assert_eq!(lone_cr_to_lf(t).len(), t.len());
        assert_eq!(lone_cr_to_lf(t), "x\ny\n\r\nz");
    }

    #[test]
    fn size_limit_and_bad_utf8() {
        let dir = std::env::temp_dir().join(format!("fdc-source-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("t.fd");
        std::fs::write(&p, b"ab\ncd\xffe").unwrap();
        match read_text(&p, 100) {
            Err(ReadError::NotUtf8 { lossy, offset }) => {
                assert_eq!(offset, 5);
                assert_eq!(&lossy[5..8], "\u{fffd}");
            }
            other => panic!("{other:?}"),
        }
        match read_bytes(&p, 6) {
            Err(ReadError::TooLarge { size: 7, limit: 6 }) => {}
            other => panic!("{other:?}"),
        }
        assert_eq!(read_bytes(&p, 7).unwrap().len(), 7);
        assert!(matches!(
            read_text(&dir, 100),
            Err(ReadError::NotRegular { kind: "directory" })
        ));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
