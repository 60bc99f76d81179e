//! MCP servers' tools as March tools (issue 19, first part): a server started as a child
//! process over stdio with the official SDK (`rmcp`), its tools listed and each adapted to
//! the [`Tool`] trait as `mcp__<server>__<tool>`, with its input schema as given and its
//! annotations read like a built-in tool's. Not yet offered to sessions: config, lifecycle
//! and the workspace's view come next (see the note).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use march_core::event::ToolOutcome;
use march_core::message::{ImageContent, UserContent};
use march_core::tool::{Tool, ToolAnnotations, ToolError, ToolKind, ToolUpdates, call_title};
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ContentBlock, Implementation,
    ResourceContents,
};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::truncate::{MAX_BYTES, MAX_LINES, truncate_tail};

/// How a server is started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StdioServer {
    /// Its name, in its tools' names.
    pub name: String,
    /// The program.
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Extra environment variables.
    pub env: BTreeMap<String, String>,
    /// Its working directory.
    pub cwd: Option<PathBuf>,
}

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
    #[error("MCP server {server} did not answer within {after:?}")]
    Timeout {
        /// The server.
        server: String,
        /// The limit.
        after: Duration,
    },
}

type Client = RunningService<RoleClient, ClientConfig>;

/// A running MCP server: its connection and what it offers.
pub struct McpServer {
    name: String,
    client: Client,
    /// Its instructions for the model, if it gave any.
    pub instructions: Option<String>,
}

impl McpServer {
    /// Start `spec` and complete the handshake within `timeout`; its stderr goes to the log.
    pub async fn start(spec: &StdioServer, timeout: Duration) -> Result<Arc<McpServer>, McpError> {
        let mut command = tokio::process::Command::new(&spec.command);
        command.args(&spec.args).envs(&spec.env);
        if let Some(cwd) = &spec.cwd {
            command.current_dir(cwd);
        }
        let (transport, stderr) = TokioChildProcess::builder(command)
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|source| McpError::Spawn {
                server: spec.name.clone(),
                command: spec.command.clone(),
                source,
            })?;
        if let Some(stderr) = stderr {
            log_stderr(spec.name.clone(), stderr);
        }
        let config = ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("march", env!("CARGO_PKG_VERSION")),
        );
        let client = tokio::time::timeout(timeout, config.serve(transport))
            .await
            .map_err(|_| McpError::Timeout {
                server: spec.name.clone(),
                after: timeout,
            })?
            .map_err(|e| McpError::Protocol {
                server: spec.name.clone(),
                message: format!("handshake failed: {e}"),
            })?;
        let instructions = client.peer_info().and_then(|i| i.instructions.clone());
        Ok(Arc::new(McpServer {
            name: spec.name.clone(),
            client,
            instructions,
        }))
    }

    /// Its tools as March tools (`mcp__<server>__<tool>`); a tool whose schema is not an
    /// object schema is left out and named in the second list.
    pub async fn tools(self: &Arc<Self>) -> Result<(Vec<Arc<dyn Tool>>, Vec<String>), McpError> {
        let listed = self
            .client
            .list_all_tools()
            .await
            .map_err(|e| McpError::Protocol {
                server: self.name.clone(),
                message: format!("tools/list failed: {e}"),
            })?;
        let mut tools: Vec<Arc<dyn Tool>> = Vec::new();
        let mut skipped = Vec::new();
        for tool in listed {
            let schema = Value::Object((*tool.input_schema).clone());
            if schema.get("type").and_then(Value::as_str) != Some("object") {
                skipped.push(tool.name.to_string());
                continue;
            }
            let hints = tool.annotations.as_ref();
            let hint = |f: fn(&rmcp::model::ToolAnnotations) -> Option<bool>| hints.and_then(f);
            // MCP's defaults: not read-only, destructive, open-world (the spec's).
            let annotations = ToolAnnotations {
                read_only: hint(|a| a.read_only_hint).unwrap_or(false),
                destructive: hint(|a| a.destructive_hint).unwrap_or(true),
                open_world: hint(|a| a.open_world_hint).unwrap_or(true),
            };
            tools.push(Arc::new(McpTool {
                name: format!("mcp__{}__{}", self.name, tool.name),
                remote: tool.name.to_string(),
                description: tool
                    .description
                    .as_deref()
                    .unwrap_or("A tool of an MCP server")
                    .to_string(),
                schema,
                annotations,
                server: self.clone(),
            }));
        }
        Ok((tools, skipped))
    }

    /// End the server: stdin closed, then SIGTERM, then kill.
    pub async fn stop(self: Arc<Self>) {
        match Arc::try_unwrap(self) {
            Ok(server) => {
                let _ = server.client.cancel().await;
            }
            Err(shared) => tracing::debug!(server = %shared.name, "MCP server still in use"),
        }
    }
}

/// Each stderr line of server `name` into the log (never to the screen).
fn log_stderr(name: String, stderr: tokio::process::ChildStderr) {
    use tokio::io::AsyncBufReadExt;
    tokio::spawn(async move {
        let mut lines = tokio::io::BufReader::new(stderr).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            tracing::info!(server = %name, "mcp stderr: {line}");
        }
    });
}

/// One tool of an MCP server.
pub struct McpTool {
    name: String,
    remote: String,
    description: String,
    schema: Value,
    annotations: ToolAnnotations,
    server: Arc<McpServer>,
}

/// A result's content as the model reads it, and whether the server said it failed.
fn outcome_content(result: rmcp::model::CallToolResult) -> (Vec<UserContent>, bool) {
    let mut texts: Vec<String> = Vec::new();
    let mut images = Vec::new();
    for block in &result.content {
        match block {
            ContentBlock::Text(t) => texts.push(t.text.clone()),
            ContentBlock::Image(i) => images.push(UserContent::Image(ImageContent {
                data: i.data.clone(),
                mime_type: i.mime_type.clone(),
            })),
            ContentBlock::Resource(r) => match &r.resource {
                ResourceContents::TextResourceContents { uri, text, .. } => {
                    texts.push(format!("<resource uri=\"{uri}\">\n{text}\n</resource>"))
                }
                ResourceContents::BlobResourceContents { uri, mime_type, .. } => {
                    texts.push(format!(
                        "[resource {uri} ({}) not included: binary]",
                        mime_type.as_deref().unwrap_or("unknown type")
                    ))
                }
                _ => texts.push("[a resource of a kind March does not show]".to_string()),
            },
            ContentBlock::ResourceLink(link) => texts.push(format!("[resource {}]", link.uri)),
            _ => texts.push("[content of a kind March does not show]".to_string()),
        }
    }
    if texts.is_empty()
        && let Some(structured) = &result.structured_content
    {
        texts.push(structured.to_string());
    }
    let cut = truncate_tail(&texts.join("\n"), MAX_LINES, MAX_BYTES);
    let mut text = cut.content;
    if cut.truncated {
        text = format!(
            "[output cut to its last {} of {} lines]\n{text}",
            cut.output_lines, cut.total_lines
        );
    }
    let mut content = vec![UserContent::text(text)];
    content.extend(images);
    (content, result.is_error.unwrap_or(false))
}

#[async_trait]
impl Tool for McpTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> &Value {
        &self.schema
    }

    fn annotations(&self) -> ToolAnnotations {
        self.annotations
    }

    fn kind(&self, _args: &Value) -> ToolKind {
        if self.annotations.read_only {
            ToolKind::Read
        } else {
            ToolKind::Other
        }
    }

    fn title(&self, _args: &Value) -> String {
        call_title(&self.name, None)
    }

    async fn execute(
        &self,
        _tool_call_id: &str,
        args: Value,
        cancel: CancellationToken,
        _updates: ToolUpdates,
    ) -> Result<ToolOutcome, ToolError> {
        let Value::Object(arguments) = args else {
            return Err(ToolError::new("MCP tool arguments must be an object"));
        };
        let call = self
            .server
            .client
            .call_tool(CallToolRequestParams::new(self.remote.clone()).with_arguments(arguments));
        // Dropping the call (a cancelled turn) tells the server (notifications/cancelled).
        let result = tokio::select! {
            result = call => result,
            () = cancel.cancelled() => return Err(ToolError::new("Operation aborted")),
        };
        let result = result.map_err(|e| {
            ToolError::new(format!(
                "MCP server {} failed the call: {e}",
                self.server.name
            ))
        })?;
        let (content, is_error) = outcome_content(result);
        if is_error {
            let text = content
                .iter()
                .filter_map(|c| match c {
                    UserContent::Text(t) => Some(t.text.as_str()),
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join("\n");
            return Err(ToolError::new(text));
        }
        Ok(ToolOutcome {
            content,
            details: Value::Null,
            terminate: false,
            change: None,
        })
    }
}

#[cfg(test)]
mod tests;
