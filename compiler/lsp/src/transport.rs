//! The stdio transport of `fdc lsp`: `Content-Length` framed JSON-RPC messages on
//! stdin/stdout, read and written on two threads that talk to the server loop through
//! an in-memory [`Connection`].
//!
//! Our own reader rather than lsp-server's because a client is input like any other:
//! lsp-server allocates whatever `Content-Length` says (100 GB aborts the process)
//! and reads a header line of any length. Here a header line is at most
//! [`MAX_HEADER_LINE`] bytes and a message at most [`MAX_MESSAGE_BYTES`]; beyond that
//! the framing cannot be trusted any more, so the server says why on stderr and exits
//! (status 1). A body that is not a JSON-RPC message is framed correctly, so it is
//! reported and skipped.

use lsp_server::{Connection, Message};
use std::io::{self, BufRead, Read, Write};
use std::thread::JoinHandle;

/// Largest message body. A model source is at most 8 MiB
/// (`fdc_frontend::source::MAX_SOURCE_BYTES`); JSON escaping at most doubles typical
/// text, so 64 MiB leaves room while keeping one message's memory bounded.
pub const MAX_MESSAGE_BYTES: usize = 64 << 20;

/// Longest header line (`Content-Length: N\r\n`, `Content-Type: ...`).
pub const MAX_HEADER_LINE: usize = 1024;

/// Why reading stopped: the stream can no longer be followed.
#[derive(Debug)]
pub enum ReadError {
    Io(io::Error),
    /// A header that is not `Name: value\r\n`, too long, or no `Content-Length`.
    Header(String),
    TooLarge(usize),
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Io(e) => write!(f, "reading stdin: {e}"),
            ReadError::Header(h) => write!(f, "malformed message header: {h}"),
            ReadError::TooLarge(n) => write!(
                f,
                "message of {n} bytes is larger than the limit of {MAX_MESSAGE_BYTES} bytes"
            ),
        }
    }
}

/// What one framed message held.
#[derive(Debug)]
pub enum Frame {
    Message(Message),
    /// A well-framed body that is not a JSON-RPC message (with the parser's reason).
    Invalid(String),
}

/// One header line without its `\r\n`, or `None` at the end of the input.
fn header_line(r: &mut impl BufRead) -> Result<Option<String>, ReadError> {
    let mut line = Vec::new();
    let n = r
        .by_ref()
        .take(MAX_HEADER_LINE as u64 + 1)
        .read_until(b'\n', &mut line)
        .map_err(ReadError::Io)?;
    if n == 0 {
        return Ok(None);
    }
    let shown = || String::from_utf8_lossy(&line[..line.len().min(80)]).into_owned();
    if !line.ends_with(b"\r\n") {
        return Err(ReadError::Header(if n > MAX_HEADER_LINE {
            format!("a header line longer than {MAX_HEADER_LINE} bytes")
        } else {
            format!("{:?} does not end with CRLF", shown())
        }));
    }
    line.truncate(line.len() - 2);
    String::from_utf8(line)
        .map(Some)
        .map_err(|e| ReadError::Header(format!("not UTF-8: {e}")))
}

/// Reads one message; `Ok(None)` at the end of the input (between messages).
pub fn read_frame(r: &mut impl BufRead) -> Result<Option<Frame>, ReadError> {
    let mut size = None;
    loop {
        let Some(line) = header_line(r)? else {
            return match size {
                None => Ok(None),
                Some(_) => Err(ReadError::Header("the input ends inside a header".into())),
            };
        };
        if line.is_empty() {
            break;
        }
        let (name, value) = line
            .split_once(':')
            .ok_or_else(|| ReadError::Header(format!("{line:?} is not `Name: value`")))?;
        if name.trim().eq_ignore_ascii_case("Content-Length") {
            let n: usize = value.trim().parse().map_err(|_| {
                ReadError::Header(format!("Content-Length {:?} is not a number", value.trim()))
            })?;
            size = Some(n);
        }
    }
    let size = size.ok_or_else(|| ReadError::Header("no Content-Length".into()))?;
    if size > MAX_MESSAGE_BYTES {
        return Err(ReadError::TooLarge(size));
    }
    let mut body = vec![0; size];
    r.read_exact(&mut body).map_err(ReadError::Io)?;
    Ok(Some(match serde_json::from_slice::<Message>(&body) {
        Ok(m) => Frame::Message(m),
        Err(e) => Frame::Invalid(e.to_string()),
    }))
}

/// The server's end of a connection over stdio, and the writer thread (join it after
/// dropping the connection, so that every answer is written before the process ends).
/// The reader thread is not joined: it may sit in a read of stdin, and ends with the
/// process; it stops by itself after `exit` or at the end of the input.
pub fn stdio() -> (Connection, JoinHandle<io::Result<()>>) {
    let (server, client) = Connection::memory();
    let Connection { sender, receiver } = client;
    std::thread::spawn(move || {
        let stdin = io::stdin();
        let mut input = stdin.lock();
        loop {
            match read_frame(&mut input) {
                Ok(Some(Frame::Message(m))) => {
                    let exit = matches!(&m, Message::Notification(n) if n.method == "exit");
                    if sender.send(m).is_err() || exit {
                        return;
                    }
                }
                Ok(Some(Frame::Invalid(why))) => {
                    eprintln!("fdc lsp: skipped a message that is not JSON-RPC: {why}");
                }
                Ok(None) => return,
                Err(e) => {
                    eprintln!("fdc lsp: {e}; stopping");
                    return;
                }
            }
        }
    });
    let writer = std::thread::spawn(move || {
        let stdout = io::stdout();
        let mut out = stdout.lock();
        for m in receiver {
            m.write(&mut out)?;
        }
        out.flush()
    });
    (server, writer)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(input: &[u8]) -> Vec<Result<Option<Frame>, String>> {
        let mut r = io::BufReader::new(input);
        let mut out = Vec::new();
        loop {
            let f = read_frame(&mut r).map_err(|e| e.to_string());
            let stop = !matches!(f, Ok(Some(_)));
            out.push(f);
            if stop {
                return out;
            }
        }
    }

    #[test]
    fn framing_limits() {
        let body = r#"{"jsonrpc":"2.0","method":"exit"}"#;
        let ok = format!("Content-Length: {}\r\n\r\n{body}", body.len());
        let f = frames(ok.as_bytes());
        assert!(matches!(
            f[0],
            Ok(Some(Frame::Message(Message::Notification(_))))
        ));
        assert!(matches!(f[1], Ok(None)));
        // 100 GB: refused before any allocation.
        let huge = frames(b"Content-Length: 100000000000\r\n\r\n{}");
        assert!(huge[0]
            .as_ref()
            .unwrap_err()
            .contains("larger than the limit"));
        // A header line without end.
        let long = vec![b'a'; 5000];
        assert!(frames(&long)[0]
            .as_ref()
            .unwrap_err()
            .contains("longer than"));
        // A body that is no message is skipped; the next one is read.
        let two = format!("Content-Length: 2\r\n\r\n[]{ok}");
        let f = frames(two.as_bytes());
        assert!(matches!(f[0], Ok(Some(Frame::Invalid(_)))));
        assert!(matches!(f[1], Ok(Some(Frame::Message(_)))));
        assert!(frames(b"Content-Type: x\r\n\r\n")[0]
            .as_ref()
            .unwrap_err()
            .contains("no Content-Length"));
    }
}
