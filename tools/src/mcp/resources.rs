//! The MCP servers' resources for the model: one tool that lists them and reads one.

use std::sync::Weak;

use async_trait::async_trait;
use march_core::event::ToolOutcome;
use march_core::tool::{Tool, ToolAnnotations, ToolError, ToolKind, ToolUpdates, call_title};
use rmcp::model::ReadResourceRequestParams;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::hub::McpHub;
use super::tool::{cut, resource_text};

/// The tool's name.
pub const RESOURCES_TOOL: &str = "mcp_resources";

/// Lists and reads the resources of the session's MCP servers.
pub struct ResourcesTool {
    hub: Weak<McpHub>,
    schema: Value,
}

impl ResourcesTool {
    /// The tool over `hub`'s servers.
    pub(crate) fn new(hub: Weak<McpHub>) -> Self {
        ResourcesTool {
            hub,
            schema: json!({
                "type": "object",
                "properties": {
                    "server": {
                        "type": "string",
                        "description": "The MCP server; leave out to list every server's resources"
                    },
                    "uri": {
                        "type": "string",
                        "description": "The resource to read; leave out to list the resources"
                    }
                }
            }),
        }
    }

    async fn list(&self, hub: &McpHub, only: Option<&str>) -> Result<String, ToolError> {
        let mut lines = Vec::new();
        for (slot, connection) in hub.with_resources() {
            if only.is_some_and(|name| name != slot.def.name) {
                continue;
            }
            match connection.peer.list_all_resources().await {
                Ok(resources) => {
                    for r in resources {
                        let about = r.description.as_deref().unwrap_or(&r.name);
                        let mime = r.mime_type.as_deref().unwrap_or("");
                        lines.push(format!("{}\t{}\t{mime}\t{about}", slot.def.name, r.uri));
                    }
                }
                Err(e) => lines.push(format!(
                    "{}\t(resources could not be listed: {e})",
                    slot.def.name
                )),
            }
        }
        if lines.is_empty() {
            return Ok(match only {
                Some(name) => format!("MCP server {name} offers no resources (or is not running)"),
                None => "No running MCP server offers resources".to_string(),
            });
        }
        Ok(format!(
            "server\turi\tmime type\tabout\n{}",
            lines.join("\n")
        ))
    }

    async fn read(
        &self,
        hub: &McpHub,
        server: Option<&str>,
        uri: &str,
    ) -> Result<String, ToolError> {
        let servers = hub.with_resources();
        let candidates: Vec<_> = servers
            .iter()
            .filter(|(slot, _)| server.is_none_or(|name| name == slot.def.name))
            .collect();
        let mut errors = Vec::new();
        for (slot, connection) in candidates {
            match connection
                .peer
                .read_resource(ReadResourceRequestParams::new(uri.to_string()))
                .await
            {
                Ok(result) => {
                    let texts: Vec<String> = result.contents.iter().map(resource_text).collect();
                    return Ok(cut(&texts.join("\n")));
                }
                Err(e) => errors.push(format!("{}: {e}", slot.def.name)),
            }
        }
        Err(ToolError::new(if errors.is_empty() {
            "no running MCP server offers resources".to_string()
        } else {
            format!("resource {uri} could not be read: {}", errors.join("; "))
        }))
    }
}

#[async_trait]
impl Tool for ResourcesTool {
    fn name(&self) -> &str {
        RESOURCES_TOOL
    }

    fn description(&self) -> &str {
        "List the resources the MCP servers offer (no uri), or read one (uri, and server when \
         more than one server could have it)."
    }

    fn parameters(&self) -> &Value {
        &self.schema
    }

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations {
            read_only: true,
            destructive: false,
            // It reads only what the servers the user configured offer, by their own URIs.
            open_world: false,
        }
    }

    fn kind(&self, _args: &Value) -> ToolKind {
        ToolKind::Read
    }

    fn title(&self, args: &Value) -> String {
        call_title(RESOURCES_TOOL, args.get("uri").and_then(Value::as_str))
    }

    async fn execute(
        &self,
        _tool_call_id: &str,
        args: Value,
        cancel: CancellationToken,
        _updates: ToolUpdates,
    ) -> Result<ToolOutcome, ToolError> {
        let Some(hub) = self.hub.upgrade() else {
            return Err(ToolError::new("the session's MCP servers are stopped"));
        };
        let server = args.get("server").and_then(Value::as_str);
        let uri = args.get("uri").and_then(Value::as_str);
        let work = async {
            match uri {
                Some(uri) => self.read(&hub, server, uri).await,
                None => self.list(&hub, server).await,
            }
        };
        let text = tokio::select! {
            text = work => text?,
            () = cancel.cancelled() => return Err(ToolError::new("Operation aborted")),
        };
        Ok(ToolOutcome::text(text))
    }
}
