//! The ACP agent behind `march runner`: standard ACP v1 over stdio, one runner serving any
//! number of sessions, each with a crash-safe transcript, a permission gate and a context
//! assembled once per Agent Run. Supported methods and behaviour: `docs/PROTOCOL.md`.

#[doc(hidden)]
pub mod bench;
mod client_fs;
mod client_terminal;
mod commands;
mod compaction;
mod content;
mod gate;
mod history;
mod initialize;
mod listing;
mod lsp;
mod mcp;
mod options;
mod port;
mod provider;
mod queue;
mod remote_memory;
mod replay;
mod server;
mod session;
mod state;
mod tree;
mod turn;
mod updates;

pub use lsp::serve_lsp_host;
pub use server::{ServeError, serve, serve_on};

/// JSON-RPC errors the runner answers with.
mod errors {
    use agent_client_protocol::{Error, ErrorCode};

    /// -32602 with a message saying what is wrong.
    pub(crate) fn invalid_params(message: impl Into<String>) -> Error {
        Error::new(ErrorCode::INVALID_PARAMS, message)
    }

    /// -32603 with a message saying what failed.
    pub(crate) fn internal(message: impl Into<String>) -> Error {
        Error::new(ErrorCode::INTERNAL_ERROR, message)
    }

    /// -32002 naming the session, as ACP asks for unknown session ids.
    pub(crate) fn session_not_found(id: &str) -> Error {
        Error::new(
            ErrorCode::RESOURCE_NOT_FOUND,
            format!("unknown session `{id}`"),
        )
        .data(serde_json::json!({ "sessionId": id }))
    }
}
