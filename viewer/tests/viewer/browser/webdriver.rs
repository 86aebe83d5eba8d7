//! A minimal W3C WebDriver client over chromedriver (HTTP + JSON): a session, navigate,
//! execute script, screenshot. Enough for the viewer's tests; written on `std::net`
//! because an HTTP client crate would cost CI more build time than these lines.

use base64::Engine;
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Browser {
    driver: Child,
    base: String,
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// One request to chromedriver (HTTP/1.1 on localhost, `Connection: close`); the
/// `value` of its JSON answer, or the status and text of an error.
fn call(method: &str, url: &str, body: Option<Value>) -> Result<Value, String> {
    let rest = url.strip_prefix("http://").ok_or("not an http URL")?;
    let (host, path) = rest
        .split_once('/')
        .map_or((rest, "/".to_string()), |(h, p)| (h, format!("/{p}")));
    let mut c = TcpStream::connect(host).map_err(|e| e.to_string())?;
    c.set_read_timeout(Some(Duration::from_secs(120)))
        .map_err(|e| e.to_string())?;
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    write!(
        c,
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .map_err(|e| e.to_string())?;
    // chromedriver may keep the connection open: read the head, then Content-Length.
    let mut raw = Vec::new();
    let mut buf = [0u8; 65536];
    let (head, payload) = loop {
        let n = c.read(&mut buf).map_err(|e| e.to_string())?;
        if n == 0 {
            return Err("connection closed before the answer".into());
        }
        raw.extend_from_slice(&buf[..n]);
        if let Some(k) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&raw[..k]).to_ascii_lowercase();
            let len: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse().ok())
                .ok_or("no Content-Length")?;
            while raw.len() < k + 4 + len {
                let n = c.read(&mut buf).map_err(|e| e.to_string())?;
                if n == 0 {
                    return Err("connection closed in the body".into());
                }
                raw.extend_from_slice(&buf[..n]);
            }
            break (
                head,
                String::from_utf8_lossy(&raw[k + 4..k + 4 + len]).to_string(),
            );
        }
    };
    let payload = payload.as_str();
    let code: u16 = head
        .get(9..12)
        .and_then(|c| c.parse().ok())
        .ok_or("no status")?;
    if code != 200 {
        return Err(format!("{code}: {payload}"));
    }
    let v: Value = serde_json::from_str(payload).map_err(|e| e.to_string())?;
    Ok(v["value"].clone())
}

impl Browser {
    /// chromedriver on a free port and a headless Chromium session (software WebGL).
    pub fn start() -> Browser {
        let port = free_port();
        let driver = Command::new("chromedriver")
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver (Debian package chromium-driver; .ci/run installs it)");
        let root = format!("http://127.0.0.1:{port}");
        let t0 = Instant::now();
        while call("GET", &format!("{root}/status"), None).is_err() {
            assert!(
                t0.elapsed() < Duration::from_secs(30),
                "chromedriver did not start"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        let caps = json!({"capabilities": {"alwaysMatch": {"goog:chromeOptions": {
            "binary": "/usr/bin/chromium",
            "args": ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                     "--use-angle=swiftshader", "--enable-unsafe-swiftshader",
                     "--window-size=1200,760", "--hide-scrollbars",
                     "--allow-file-access-from-files"]}}}});
        let mut b = Browser { driver, base: root };
        let s = call("POST", &format!("{}/session", b.base), Some(caps)).expect("a session");
        b.base = format!("{}/session/{}", b.base, s["sessionId"].as_str().unwrap());
        b
    }

    pub fn goto(&self, url: &str) {
        call(
            "POST",
            &format!("{}/url", self.base),
            Some(json!({ "url": url })),
        )
        .unwrap();
    }

    pub fn exec(&self, script: &str) -> Value {
        let body = json!({ "script": script, "args": [] });
        call("POST", &format!("{}/execute/sync", self.base), Some(body)).unwrap()
    }

    pub fn screenshot(&self) -> Shot {
        let b64 = call("GET", &format!("{}/screenshot", self.base), None).unwrap();
        let png = base64::engine::general_purpose::STANDARD
            .decode(b64.as_str().unwrap())
            .unwrap();
        let mut reader = png::Decoder::new(&png[..]).read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size()];
        let info = reader.next_frame(&mut buf).unwrap();
        let channels = info.color_type.samples();
        buf.truncate(info.buffer_size());
        Shot {
            width: info.width as usize,
            height: info.height as usize,
            channels,
            data: buf,
            png,
        }
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = call("DELETE", &self.base, None);
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

/// A decoded screenshot (and its PNG bytes, to save).
pub struct Shot {
    pub width: usize,
    pub height: usize,
    channels: usize,
    data: Vec<u8>,
    png: Vec<u8>,
}

impl Shot {
    pub fn rgb(&self, x: usize, y: usize) -> [u8; 3] {
        assert!(
            x < self.width && y < self.height,
            "({x}, {y}) outside {}x{}",
            self.width,
            self.height
        );
        let i = (y * self.width + x) * self.channels;
        [self.data[i], self.data[i + 1], self.data[i + 2]]
    }

    pub fn save(&self, path: &Path) {
        std::fs::write(path, &self.png).unwrap();
    }

    /// Share of pixels whose colour differs by more than 24 in some channel.
    pub fn fraction_differing(&self, other: &Shot) -> f64 {
        assert_eq!((self.width, self.height), (other.width, other.height));
        let n = self.width * self.height;
        let differ = (0..n)
            .filter(|&p| {
                let (a, b) = (p * self.channels, p * other.channels);
                (0..3).any(|c| self.data[a + c].abs_diff(other.data[b + c]) > 24)
            })
            .count();
        differ as f64 / n as f64
    }
}
