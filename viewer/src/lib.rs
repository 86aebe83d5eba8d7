//! `fdc view`: a model in the browser. A local HTTP server (127.0.0.1 only) builds the
//! model once as a [`fdc_driver::template::Template`], simulates it in a worker thread,
//! and serves a page (three.js scene, playback, uPlot plots, parameter panel) that
//! polls the state. A change of the model or a file it reads rebuilds and re-runs;
//! a broken model shows its diagnostics while the last good scene stays.
//!
//! Knows: the driver (build, instantiate, run) and the runtime's result rows.
//! Must not know: command-line parsing (the `fdc` binary) or any physics — the page
//! places each body from its `R` and `theta` result columns alone.

pub mod meshes;
mod page;
mod scene;
mod server;
mod session;

pub use page::export_html;
pub use scene::{equivalent_box, Scene};
pub use server::{allowed_host, resolve_file, Server};
pub use session::{read_csv, Run, Session, SessionOptions, State};
