//! March's runner: the ACP agent behind `march runner` and the Runner Process Client the app
//! uses to spawn, talk to and restart runners.

pub mod agent;
pub mod browser;
pub mod client;
pub mod diagnostics;
pub mod mcp_check;
pub mod mcp_status;
pub mod memory_server;
pub mod sandbox_exec;
pub mod session_tree;
mod stdio;
pub mod steering;
pub mod structured_output;
pub mod user_shell;
pub mod wire;

pub use agent::{serve, serve_lsp_host};
pub use sandbox_exec::sandbox_exec;
