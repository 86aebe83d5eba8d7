//! A real editor client: Neovim's built-in LSP client, headless, runs `fdc lsp` on a
//! model with an error and writes the diagnostics it received to a file. Neovim
//! converts LSP's UTF-16 columns to byte columns of its buffer, so a server that sent
//! byte columns would fail the column check on the non-ASCII line.
//!
//! Then it fixes the line in the buffer and waits for the diagnostics to clear.
//!
//! `.ci/run` installs Debian's `neovim`; only a machine without `nvim` skips this test.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const SCRIPT: &str = r#"
local file = os.getenv("FDC_MODEL")
vim.cmd("edit " .. vim.fn.fnameescape(file))
local buf = vim.api.nvim_get_current_buf()
local client = vim.lsp.start_client({
  name = "fdc",
  cmd = { os.getenv("FDC_BIN"), "lsp" },
  root_dir = vim.fn.fnamemodify(file, ":h"),
})
vim.lsp.buf_attach_client(buf, client)
vim.wait(60000, function() return #vim.diagnostic.get(buf) > 0 end, 50)
local lines = {}
for _, d in ipairs(vim.diagnostic.get(buf)) do
  local code = d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code) or ""
  table.insert(lines, string.format("%d:%d:%d:%d:%d:%s:%s", d.lnum, d.col, d.end_lnum,
    d.end_col, d.severity, code, (d.message:gsub("\n.*", ""))))
end
vim.fn.writefile(lines, os.getenv("FDC_OUT"))
-- Fix the line in the buffer: Neovim sends the edit (incremental sync) and the
-- server must publish an empty list.
vim.api.nvim_buf_set_lines(buf, 1, 2, false, { "param k = 2.0; output s = L;" })
local cleared = vim.wait(60000, function() return #vim.diagnostic.get(buf) == 0 end, 50)
vim.fn.writefile({ cleared and "cleared" or "not cleared" }, os.getenv("FDC_OUT") .. ".fixed")
vim.lsp.stop_client(client, true)
vim.cmd("qa!")
"#;

const MODEL: &str = "\
param L = 1.0;
param kω = 2.0; output s = Lx;
body rod: rigid_body {
    mass = 2.0;
    inertia = [1e-4, 0.1, 0.1];
    position = [L/2, 0, 0];
}
";

#[test]
fn neovim_receives_the_diagnostic() {
    if Command::new("nvim").arg("--version").output().is_err() {
        eprintln!("skipped: `nvim` is not installed (.ci/run installs it for CI)");
        return;
    }
    let dir = std::env::temp_dir().join(format!("fdc-lsp-nvim-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let model = dir.join("model.fd");
    let script = dir.join("client.lua");
    let out = dir.join("diagnostics.txt");
    std::fs::write(&model, MODEL).unwrap();
    std::fs::write(&script, SCRIPT).unwrap();
    let _ = std::fs::remove_file(&out);
    let mut child = Command::new("nvim")
        .args(["--headless", "-n", "-i", "NONE", "-u", "NONE", "-c"])
        .arg(format!("luafile {}", script.display()))
        .env("FDC_BIN", env!("CARGO_BIN_EXE_fdc"))
        .env("FDC_MODEL", &model)
        .env("FDC_OUT", &out)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .expect("nvim starts");
    // Not a timing assertion: only a bound so that a stuck editor fails instead of hanging.
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(180) {
            let _ = child.kill();
            panic!("nvim did not finish");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let got = std::fs::read_to_string(&out).expect("the client script wrote its diagnostics");
    let lines: Vec<&str> = got.lines().collect();
    // On line 1 (0-based), `ω` is byte columns 7..9 and `Lx` 28..30; the server sent
    // UTF-16 columns 7..8 and 27..29, and Neovim converted them. Severity 1 is an error.
    let line = "param kω = 2.0; output s = Lx;";
    assert_eq!(line.find("Lx"), Some(28));
    for want in ["1:7:1:9:1:E0001:", "1:28:1:30:1:E0201:"] {
        assert!(
            lines.iter().any(|l| l.starts_with(want)),
            "expected a diagnostic starting {want:?}, got {lines:?}"
        );
    }
    assert_eq!(lines.len(), 2, "{lines:?}");
    let fixed = std::fs::read_to_string(out.with_extension("txt.fixed")).expect("second phase ran");
    assert_eq!(fixed.trim(), "cleared");
}
