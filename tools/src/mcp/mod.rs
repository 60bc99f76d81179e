//! MCP servers' tools, prompts and resources for a session, through the official SDK
//! (`rmcp`) over stdio or streamable HTTP. A [`McpHub`] holds a session's servers, starts
//! them when first needed and keeps them alive; each server tool becomes a March [`Tool`]
//! named `mcp__<server>__<tool>`.
//!
//! [`Tool`]: march_core::tool::Tool

mod connection;
mod hub;
mod prompts;
mod resources;
mod tool;

use std::time::Duration;

pub use hub::{MCP_RESTART, McpHub, McpNotice, NoticeSink, ServerPhase, ServerStatus};
pub use prompts::McpPrompt;
pub use resources::RESOURCES_TOOL;
pub use tool::{McpTool, tool_name};

use march_core::message::UserContent;

/// Why a server could not be used.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    /// The program could not be started.
    #[error("MCP server {server}: cannot start {command}: {source}")]
    Spawn {
        /// The server.
        server: String,
        /// The program.
        command: String,
        /// Why.
        source: std::io::Error,
    },
    /// It started but did not complete the MCP handshake, or answered with an error.
    #[error("MCP server {server}: {message}")]
    Protocol {
        /// The server.
        server: String,
        /// What went wrong.
        message: String,
    },
    /// It did not answer in time.
    #[error("MCP server {server} did not answer within {} s", after.as_secs_f64())]
    Timeout {
        /// The server.
        server: String,
        /// The limit.
        after: Duration,
    },
}

impl McpHub {
    /// Runs slash command `command` (without its `/`) with the text typed after it, when it
    /// names a prompt of a running server: the message to send instead, or why not.
    pub async fn run_prompt(
        &self,
        command: &str,
        text: &str,
    ) -> Option<Result<Vec<UserContent>, String>> {
        let prompt = self.prompts().into_iter().find(|p| p.command == command)?;
        let arguments = match prompt.arguments_from(text) {
            Ok(arguments) => arguments,
            Err(e) => return Some(Err(e)),
        };
        let Some((_, connection)) = self.running(&prompt.server) else {
            return Some(Err(format!("MCP server {} is not running", prompt.server)));
        };
        // Bounded like a tool call: a server that never answers must not hold the session.
        let limit = self.call_timeout(&prompt.server);
        Some(
            tokio::time::timeout(limit, prompts::get_prompt(&connection, &prompt, arguments))
                .await
                .unwrap_or_else(|_| {
                    Err(format!(
                        "MCP server {} did not answer for prompt {} within {} s",
                        prompt.server,
                        prompt.remote,
                        limit.as_secs_f64()
                    ))
                }),
        )
    }
}

#[cfg(test)]
mod tests;
