//! An MCP server's tool as a March [`Tool`]: named `mcp__<server>__<tool>`, its input
//! schema passed on as given, its hints read by the permission gate like a built-in tool's
//! annotations, its results cut to the limits of bash output.

use std::sync::Arc;

use async_trait::async_trait;
use march_core::event::ToolOutcome;
use march_core::message::{ImageContent, UserContent};
use march_core::tool::{Tool, ToolAnnotations, ToolError, ToolKind, ToolUpdates, call_title};
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotificationParam, ClientNotification,
    ClientRequest, ContentBlock, NumberOrString, ResourceContents, ServerResult,
};
use rmcp::service::PeerRequestOptions;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::McpError;
use super::connection::Connection;
use super::hub::Slot;
use crate::truncate::{MAX_BYTES, MAX_LINES, truncate_tail};

/// The longest tool name model APIs take.
const MAX_NAME: usize = 64;

/// `mcp__<server>__<tool>` with what model APIs refuse in a name (anything but letters,
/// digits, `_` and `-`) turned into `_`.
pub fn tool_name(server: &str, tool: &str) -> String {
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    format!("mcp__{}__{}", clean(server), clean(tool))
}

/// A server's tools, and why any were left out.
pub(crate) struct Listed {
    pub tools: Vec<Arc<dyn Tool>>,
    pub skipped: Vec<String>,
}

/// The server's tools as March tools, those its definition does not offer left out, and
/// those that cannot be offered (an input schema that is not an object schema or does not
/// compile, a name too long) named in [`Listed::skipped`].
pub(crate) async fn list_tools(
    slot: &Arc<Slot>,
    connection: &Connection,
) -> Result<Listed, McpError> {
    let server = &slot.def.name;
    let listed = connection
        .peer
        .list_all_tools()
        .await
        .map_err(|e| McpError::Protocol {
            server: server.clone(),
            message: format!("tools/list failed: {e}"),
        })?;
    let mut tools: Vec<Arc<dyn Tool>> = Vec::new();
    let mut skipped = Vec::new();
    for tool in listed {
        if !slot.def.offers(&tool.name) {
            continue;
        }
        let name = tool_name(server, &tool.name);
        let schema = Value::Object((*tool.input_schema).clone());
        let problem = if schema.get("type").and_then(Value::as_str) != Some("object") {
            Some("its input schema is not an object schema".to_string())
        } else if let Err(e) = march_core::validate::schema_compiles(&schema) {
            Some(format!("its input schema is invalid: {e}"))
        } else if name.len() > MAX_NAME {
            Some(format!("{name} is longer than {MAX_NAME} characters"))
        } else {
            None
        };
        if let Some(problem) = problem {
            skipped.push(format!(
                "tool {} of MCP server {server} is left out: {problem}",
                tool.name
            ));
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
            name,
            remote: tool.name.to_string(),
            description: tool
                .description
                .as_deref()
                .unwrap_or("A tool of an MCP server")
                .to_string(),
            schema,
            annotations,
            slot: slot.clone(),
        }));
    }
    Ok(Listed { tools, skipped })
}

/// One tool of an MCP server.
pub struct McpTool {
    name: String,
    remote: String,
    description: String,
    schema: Value,
    annotations: ToolAnnotations,
    /// The server: a call uses whichever connection runs now (it may have restarted).
    slot: Arc<Slot>,
}

/// A result's content as the model reads it, and whether the server said it failed.
pub(crate) fn outcome_content(result: rmcp::model::CallToolResult) -> (Vec<UserContent>, bool) {
    let mut texts: Vec<String> = Vec::new();
    let mut images = Vec::new();
    for block in &result.content {
        match block {
            ContentBlock::Text(t) => texts.push(t.text.clone()),
            ContentBlock::Image(i) => images.push(UserContent::Image(ImageContent {
                data: i.data.clone(),
                mime_type: i.mime_type.clone(),
            })),
            ContentBlock::Resource(r) => texts.push(resource_text(&r.resource)),
            ContentBlock::ResourceLink(link) => texts.push(format!("[resource {}]", link.uri)),
            _ => texts.push("[content of a kind March does not show]".to_string()),
        }
    }
    if texts.is_empty()
        && let Some(structured) = &result.structured_content
    {
        texts.push(structured.to_string());
    }
    let mut content = vec![UserContent::text(cut(&texts.join("\n")))];
    content.extend(images);
    (content, result.is_error.unwrap_or(false))
}

/// A resource's contents as text the model reads.
pub(crate) fn resource_text(resource: &ResourceContents) -> String {
    match resource {
        ResourceContents::TextResourceContents { uri, text, .. } => {
            format!("<resource uri=\"{uri}\">\n{text}\n</resource>")
        }
        ResourceContents::BlobResourceContents { uri, mime_type, .. } => format!(
            "[resource {uri} ({}) not included: binary]",
            mime_type.as_deref().unwrap_or("unknown type")
        ),
        _ => "[a resource of a kind March does not show]".to_string(),
    }
}

/// Text cut to the limits of bash output (its end kept), with a note when cut.
pub(crate) fn cut(text: &str) -> String {
    let cut = truncate_tail(text, MAX_LINES, MAX_BYTES);
    if cut.truncated {
        format!(
            "[output cut to its last {} of {} lines]\n{}",
            cut.output_lines, cut.total_lines, cut.content
        )
    } else {
        cut.content
    }
}

/// Takes a call's progress route away when the call ends, however it ends.
struct ProgressRoute<'a> {
    connection: &'a Connection,
    token: String,
}

impl Drop for ProgressRoute<'_> {
    fn drop(&mut self) {
        self.connection.progress.lock().remove(&self.token);
    }
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
        updates: ToolUpdates,
    ) -> Result<ToolOutcome, ToolError> {
        let server = &self.slot.def.name;
        let Value::Object(arguments) = args else {
            return Err(ToolError::new("MCP tool arguments must be an object"));
        };
        let Some(connection) = self.slot.connection() else {
            return Err(ToolError::new(format!(
                "MCP server {server} is not running ({:?}); the call was not made",
                self.slot.phase()
            )));
        };
        let params = CallToolRequestParams::new(self.remote.clone()).with_arguments(arguments);
        let limit = self.slot.def.call_timeout;
        let failed = |e: rmcp::ServiceError| {
            ToolError::new(format!("MCP server {server} failed the call: {e}"))
        };
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let handle = connection
            .peer
            .send_cancellable_request(request, PeerRequestOptions::with_timeout(limit))
            .await
            .map_err(failed)?;
        // The SDK chose the call's progress token: progress for it goes to this call.
        let token = match &handle.progress_token.0 {
            NumberOrString::String(s) => s.to_string(),
            NumberOrString::Number(n) => n.to_string(),
        };
        connection.progress.lock().insert(token.clone(), updates);
        let _route = ProgressRoute {
            connection: &connection,
            token,
        };
        let id = handle.id.clone();
        // At the timeout the SDK tells the server (`notifications/cancelled`); a cancelled
        // turn tells it here.
        let response = tokio::select! {
            response = handle.await_response() => response,
            () = cancel.cancelled() => {
                let notice = CancelledNotificationParam::new(Some(id), Some("the turn was cancelled".into()));
                let _ = connection
                    .peer
                    .send_notification(ClientNotification::CancelledNotification(
                        rmcp::model::Notification::new(notice),
                    ))
                    .await;
                return Err(ToolError::new("Operation aborted"));
            }
        };
        let result = match response {
            Ok(ServerResult::CallToolResult(result)) => result,
            Ok(_) => {
                return Err(ToolError::new(format!(
                    "MCP server {server} answered the call with something else"
                )));
            }
            Err(rmcp::ServiceError::Timeout { .. }) => {
                return Err(ToolError::new(format!(
                    "MCP server {server} did not answer {} within {} s; the call was cancelled",
                    self.remote,
                    limit.as_secs_f64()
                )));
            }
            Err(e) => return Err(failed(e)),
        };
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
            usage: None,
        })
    }
}
