//! The answer to `initialize`: protocol v1, exactly the capabilities that work, and March's
//! extensions advertised as ACP asks.

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, Implementation, InitializeRequest, InitializeResponse, McpCapabilities,
    PromptCapabilities, SessionCapabilities, SessionCloseCapabilities, SessionDeleteCapabilities,
    SessionListCapabilities, SessionResumeCapabilities,
};

use super::client_fs::ClientCaps;
use super::{history, lsp};

/// The answer to `initialize`: protocol v1 and exactly the capabilities that work.
pub(crate) fn answer(req: &InitializeRequest) -> InitializeResponse {
    tracing::info!(
        client = ?req.client_info.as_ref().map(|i| &i.name),
        caps = ?ClientCaps::offered(&req.client_capabilities),
        "initialize"
    );
    InitializeResponse::new(ProtocolVersion::V1)
        .agent_capabilities(
            AgentCapabilities::new()
                .load_session(true)
                .prompt_capabilities(PromptCapabilities::new().image(true).embedded_context(true))
                // MCP servers a client gives in `session/new`: stdio always, and streamable
                // HTTP; not the legacy SSE transport.
                .mcp_capabilities(McpCapabilities::new().http(true).sse(false))
                .session_capabilities(
                    SessionCapabilities::new()
                        .list(SessionListCapabilities::new())
                        .resume(SessionResumeCapabilities::new())
                        .close(SessionCloseCapabilities::new())
                        .delete(SessionDeleteCapabilities::new()),
                )
                // March's extension methods, as ACP asks extensions to be advertised.
                .meta(march_extensions()),
        )
        .agent_info(
            Implementation::new("march", env!("CARGO_PKG_VERSION")).title("March".to_string()),
        )
}

/// The `_meta` of the agent capabilities: the extension methods this runner answers.
fn march_extensions() -> serde_json::Map<String, serde_json::Value> {
    let mut march = serde_json::Map::new();
    march.insert(
        "historySearch".to_string(),
        serde_json::json!({ "method": history::SEARCH_METHOD }),
    );
    march.insert(
        crate::diagnostics::EXTENSION_KEY.to_string(),
        serde_json::json!({
            "notification": lsp::NOTIFICATION,
            "refresh": crate::diagnostics::REFRESH_METHOD,
        }),
    );
    march.insert(
        crate::steering::EXTENSION_KEY.to_string(),
        serde_json::json!({
            "queue": crate::steering::QUEUE_METHOD,
            "unqueue": crate::steering::UNQUEUE_METHOD,
            "changed": crate::steering::CHANGED_NOTIFICATION,
        }),
    );
    march.insert(
        crate::user_shell::EXTENSION_KEY.to_string(),
        serde_json::json!({ "record": crate::user_shell::RECORD_METHOD }),
    );
    march.insert(
        crate::mcp_status::EXTENSION_KEY.to_string(),
        serde_json::json!({ "status": crate::mcp_status::STATUS_METHOD }),
    );
    march.insert(
        crate::session_tree::EXTENSION_KEY.to_string(),
        serde_json::json!({
            "tree": crate::session_tree::TREE_METHOD,
            "navigate": crate::session_tree::NAVIGATE_METHOD,
            "label": crate::session_tree::LABEL_METHOD,
            "fork": crate::session_tree::FORK_METHOD,
            "notification": crate::session_tree::BRANCH_NOTIFICATION,
        }),
    );
    let mut meta = serde_json::Map::new();
    meta.insert("march".to_string(), serde_json::Value::Object(march));
    meta
}
