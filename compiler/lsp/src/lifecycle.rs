//! The LSP lifecycle, answered as the specification says: `initialize` first and once,
//! then work, then `shutdown` and `exit`.
//!
//! - before `initialize`: a request gets the error ServerNotInitialized (-32002), a
//!   notification is dropped, `exit` ends the server (status 1);
//! - a second `initialize`: InvalidRequest (-32600);
//! - after `shutdown`: every request gets InvalidRequest, `exit` ends with status 0
//!   (status 1 when `exit` comes without `shutdown`, or the input just ends).

use lsp_server::{ErrorCode, Message, Response};
use lsp_types::notification::{Exit, Initialized, Notification as _};
use lsp_types::request::{Initialize, Request as _, Shutdown};
use std::process::ExitCode;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Uninitialized,
    Running,
    ShuttingDown,
}

/// What the server loop does with a message.
#[derive(Debug)]
pub enum Gate {
    /// An ordinary request or notification: the server handles it.
    Pass,
    /// Ignored (a notification the state does not admit, `initialized`).
    Drop,
    /// Answered here.
    Answer(Response),
    /// The server ends with this status.
    Exit(ExitCode),
}

pub struct Lifecycle {
    state: State,
    capabilities: serde_json::Value,
}

impl Lifecycle {
    pub fn new(capabilities: serde_json::Value) -> Lifecycle {
        Lifecycle {
            state: State::Uninitialized,
            capabilities,
        }
    }

    pub fn gate(&mut self, msg: &Message) -> Gate {
        match msg {
            Message::Request(r) => {
                let err = |code: ErrorCode, text: &str| {
                    Gate::Answer(Response::new_err(r.id.clone(), code as i32, text.into()))
                };
                match (self.state, r.method.as_str()) {
                    (State::Uninitialized, Initialize::METHOD) => {
                        self.state = State::Running;
                        Gate::Answer(Response::new_ok(
                            r.id.clone(),
                            serde_json::json!({
                                "capabilities": self.capabilities,
                                "serverInfo": {
                                    "name": "fdc lsp",
                                    "version": env!("CARGO_PKG_VERSION"),
                                },
                            }),
                        ))
                    }
                    (State::Uninitialized, m) => err(
                        ErrorCode::ServerNotInitialized,
                        &format!("`{m}` before `initialize`: the server is not initialized yet"),
                    ),
                    (State::Running, Initialize::METHOD) => err(
                        ErrorCode::InvalidRequest,
                        "`initialize` was already received; it may be sent only once",
                    ),
                    (State::Running, Shutdown::METHOD) => {
                        self.state = State::ShuttingDown;
                        Gate::Answer(Response::new_ok(r.id.clone(), ()))
                    }
                    (State::Running, _) => Gate::Pass,
                    (State::ShuttingDown, m) => err(
                        ErrorCode::InvalidRequest,
                        &format!("`{m}` after `shutdown`: only `exit` is expected"),
                    ),
                }
            }
            Message::Notification(n) if n.method == Exit::METHOD => Gate::Exit(self.exit_code()),
            Message::Notification(n) if n.method == Initialized::METHOD => Gate::Drop,
            Message::Notification(_) if self.state == State::Running => Gate::Pass,
            Message::Notification(_) => Gate::Drop,
            // The server sends no requests, so a response answers nothing.
            Message::Response(_) => Gate::Drop,
        }
    }

    fn exit_code(&self) -> ExitCode {
        if self.state == State::ShuttingDown {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        }
    }

    /// The input ended without `exit`.
    pub fn end_of_input(&self) -> ExitCode {
        self.exit_code()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lsp_server::{Notification, Request};

    fn req(id: i32, method: &str) -> Message {
        Message::Request(Request::new(
            id.into(),
            method.into(),
            serde_json::json!({}),
        ))
    }

    fn error_code(g: Gate) -> Option<i32> {
        match g {
            Gate::Answer(r) => r.error.map(|e| e.code),
            _ => None,
        }
    }

    #[test]
    fn initialize_first_and_once() {
        let mut l = Lifecycle::new(serde_json::json!({}));
        assert_eq!(
            error_code(l.gate(&req(1, "textDocument/hover"))),
            Some(-32002)
        );
        let open = Message::Notification(Notification::new(
            "textDocument/didOpen".into(),
            serde_json::json!({}),
        ));
        assert!(matches!(l.gate(&open), Gate::Drop));
        match l.gate(&req(2, "initialize")) {
            Gate::Answer(r) => {
                assert!(r.error.is_none());
                assert_eq!(r.result.unwrap()["serverInfo"]["name"], "fdc lsp");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(error_code(l.gate(&req(3, "initialize"))), Some(-32600));
        assert!(matches!(l.gate(&req(4, "textDocument/hover")), Gate::Pass));
        assert!(matches!(l.gate(&open), Gate::Pass));
        assert_eq!(error_code(l.gate(&req(5, "shutdown"))), None);
        assert_eq!(
            error_code(l.gate(&req(6, "textDocument/hover"))),
            Some(-32600)
        );
        let exit = Message::Notification(Notification::new("exit".into(), ()));
        assert!(matches!(l.gate(&exit), Gate::Exit(c) if c == ExitCode::SUCCESS));
        // `exit` without `shutdown`: status 1.
        let mut fresh = Lifecycle::new(serde_json::json!({}));
        assert!(matches!(fresh.gate(&exit), Gate::Exit(c) if c == ExitCode::from(1)));
    }
}
