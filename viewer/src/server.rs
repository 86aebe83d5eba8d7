//! The local HTTP server of `fdc view`: bound to 127.0.0.1, answers only requests from
//! the loopback address with a loopback `Host` (a web page elsewhere cannot reach it by
//! DNS rebinding), serves the page, the state as JSON, and files of the model's folder.

use crate::page;
use crate::session::{Session, SessionOptions};
use serde_json::json;
use std::io::Read;
use std::net::SocketAddr;
use std::path::{Component, Path, PathBuf};
use tiny_http::{Header, Method, Request, Response};

/// A started server: its port and the session it serves.
pub struct Server {
    http: tiny_http::Server,
    session: Session,
    /// The model's folder, canonical: the only files served besides the page.
    root: PathBuf,
}

/// True when `host` (a `Host` header) names this machine's loopback interface.
pub fn allowed_host(host: &str) -> bool {
    let name = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => host.split(':').next().unwrap_or(""),
    };
    matches!(name, "127.0.0.1" | "localhost" | "::1")
}

fn allowed(remote: Option<&SocketAddr>, host: Option<&str>) -> bool {
    remote.is_some_and(|a| a.ip().is_loopback()) && host.is_some_and(allowed_host)
}

/// The file under `root` that the request path `rel` names, if it is one: no `..`, no
/// absolute path, and after following links still inside `root` (canonical).
pub fn resolve_file(root: &Path, rel: &str) -> Option<PathBuf> {
    let rel = percent_decode(rel)?;
    let p = Path::new(&rel);
    if !p.components().all(|c| matches!(c, Component::Normal(_))) {
        return None;
    }
    let full = root.join(p).canonicalize().ok()?;
    (full.starts_with(root) && full.is_file()).then_some(full)
}

/// `%XX` decoding of a URL path; `None` for a broken escape or a non-UTF-8 result.
fn percent_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

type Reply = Response<std::io::Cursor<Vec<u8>>>;

fn reply(status: u16, kind: &str, body: impl Into<Vec<u8>>) -> Reply {
    let header = Header::from_bytes("Content-Type", kind).expect("a valid header");
    Response::from_data(body.into())
        .with_status_code(status)
        .with_header(header)
}

fn json_reply(v: &serde_json::Value) -> Reply {
    reply(200, "application/json", v.to_string())
}

fn not_found() -> Reply {
    reply(404, "text/plain", "not found")
}

/// `NAME=VALUE` pairs of a re-run request body, one a line.
fn parse_set(body: &str) -> Result<Vec<(String, f64)>, String> {
    body.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let (n, v) = l
                .split_once('=')
                .ok_or(format!("`{l}`: expected NAME=VALUE"))?;
            let v = v
                .trim()
                .parse()
                .map_err(|_| format!("`{v}` is not a number"))?;
            Ok((n.trim().to_string(), v))
        })
        .collect()
}

impl Server {
    /// Binds 127.0.0.1:`port` (0: any free port) and starts the session.
    pub fn start(opts: SessionOptions, port: u16) -> Result<Server, String> {
        let dir = opts.model.parent().unwrap_or(Path::new("."));
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        let root = dir
            .canonicalize()
            .map_err(|e| format!("cannot open `{}`: {e}", dir.display()))?;
        let http = tiny_http::Server::http(("127.0.0.1", port))
            .map_err(|e| format!("cannot listen on 127.0.0.1:{port}: {e}"))?;
        Ok(Server {
            http,
            session: Session::start(opts),
            root,
        })
    }

    pub fn port(&self) -> u16 {
        self.http.server_addr().to_ip().map_or(0, |a| a.port())
    }

    pub fn session(&self) -> &Session {
        &self.session
    }

    /// Answers requests until the process ends.
    pub fn serve(&self) {
        for req in self.http.incoming_requests() {
            self.answer(req);
        }
    }

    fn answer(&self, mut req: Request) {
        let host = req
            .headers()
            .iter()
            .find(|h| h.field.equiv("Host"))
            .map(|h| h.value.as_str().to_string());
        let resp = if !allowed(req.remote_addr(), host.as_deref()) {
            reply(
                403,
                "text/plain",
                "fdc view answers only this machine (localhost)",
            )
        } else {
            self.route(&mut req)
        };
        // The browser may have gone; nothing to do about a failed answer.
        let _ = req.respond(resp);
    }

    fn route(&self, req: &mut Request) -> Reply {
        let url = req.url().to_string();
        let (path, query) = url.split_once('?').unwrap_or((&url, ""));
        let method = req.method().clone();
        match (&method, path) {
            (Method::Get, "/") => reply(200, "text/html; charset=utf-8", page::live_html()),
            (Method::Get, "/vendor/three.module.min.js") => {
                reply(200, "text/javascript", page::THREE_JS)
            }
            (Method::Get, "/api/state") => json_reply(&self.session.state().summary()),
            (Method::Get, p) if p.starts_with("/api/run/") => {
                let id = p["/api/run/".len()..].parse().ok();
                let from = query
                    .split('&')
                    .find_map(|kv| kv.strip_prefix("from="))
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(0);
                match id.and_then(|id| self.session.state().rows(id, from)) {
                    Some(v) => json_reply(&v),
                    None => not_found(),
                }
            }
            // A mesh of the scene, raw f32 vertices (the page asks once per scene).
            (Method::Get, p) if p.starts_with("/api/mesh/") => {
                let k: Option<usize> = p["/api/mesh/".len()..].parse().ok();
                match k.and_then(|k| self.session.state().meshes.get(k).cloned()) {
                    Some(bytes) => reply(200, "application/octet-stream", bytes),
                    None => not_found(),
                }
            }
            (Method::Post, "/api/rerun") => {
                let mut body = String::new();
                if req
                    .as_reader()
                    .take(1 << 16)
                    .read_to_string(&mut body)
                    .is_err()
                {
                    return reply(400, "text/plain", "unreadable body");
                }
                match parse_set(&body) {
                    Ok(set) => {
                        self.session.rerun(set);
                        json_reply(&json!({"queued": true}))
                    }
                    Err(e) => reply(400, "text/plain", e),
                }
            }
            (Method::Get, p) if p.starts_with("/files/") => {
                match resolve_file(&self.root, &p["/files/".len()..]) {
                    Some(f) => match std::fs::read(&f) {
                        Ok(data) => reply(200, "application/octet-stream", data),
                        Err(_) => not_found(),
                    },
                    None => not_found(),
                }
            }
            _ => not_found(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts() {
        for ok in ["127.0.0.1:8080", "localhost", "localhost:1", "[::1]:80"] {
            assert!(allowed_host(ok), "{ok}");
        }
        for bad in [
            "evil.example",
            "127.0.0.2:80",
            "localhost.evil:80",
            "[::2]",
            "",
        ] {
            assert!(!allowed_host(bad), "{bad}");
        }
        let remote: SocketAddr = "10.0.0.5:4000".parse().unwrap();
        assert!(!allowed(Some(&remote), Some("localhost")));
        let local: SocketAddr = "127.0.0.1:4000".parse().unwrap();
        assert!(allowed(Some(&local), Some("localhost")));
        assert!(!allowed(Some(&local), None));
    }

    #[test]
    fn rerun_bodies() {
        assert_eq!(
            parse_set("r=0.2\nl = 3\n"),
            Ok(vec![("r".into(), 0.2), ("l".into(), 3.0)])
        );
        assert!(parse_set("r").is_err());
        assert!(parse_set("r=abc").is_err());
    }
}
