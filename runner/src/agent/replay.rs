//! `session/load` replay: the conversation on the current branch as the `session/update`s a
//! client would have seen live, sent before the load is answered.

use agent_client_protocol::v1::schema::{
    CompactionStatus, CompactionUpdate, ContentBlock, ContentChunk, SessionUpdate, TextContent,
    ToolCallStatus,
};
use std::sync::Arc;

use march_core::message::{AssistantContent, UserContent};
use march_core::session::{EntryKind, SessionMessage, SessionStore, bash_execution_to_text};
use march_core::tool::Tool;

use super::updates;

/// Every message on the current branch as updates: user, agent and thought chunks, tool calls
/// with their results. A call whose result never arrived (a crash mid-tool) ends `failed`.
/// Compactions are replayed as completed `compaction_update`s when the client takes them
/// (`compactions`); the conversation before them is replayed whole either way.
/// `from` skips the path's first entries (a client keeps what they showed).
pub(crate) fn replay(
    store: &SessionStore,
    tools: &[Arc<dyn Tool>],
    compactions: bool,
    from: usize,
) -> Vec<SessionUpdate> {
    let mut out = Vec::new();
    // Calls announced but not yet answered, in announcement order.
    let mut open: Vec<String> = Vec::new();
    for entry in store.branch_path(None).into_iter().skip(from) {
        let message = match &entry.kind {
            EntryKind::Message(message) => message,
            EntryKind::Compaction(c) if compactions => {
                out.push(SessionUpdate::CompactionUpdate(
                    CompactionUpdate::new(entry.id.clone(), CompactionStatus::Completed).summary(
                        vec![ContentBlock::Text(TextContent::new(c.summary.clone()))],
                    ),
                ));
                continue;
            }
            _ => continue,
        };
        let id = entry.id.as_str();
        match &**message {
            SessionMessage::User(u) => {
                for block in u.content.blocks() {
                    out.push(SessionUpdate::UserMessageChunk(chunk(&block, id)));
                }
            }
            SessionMessage::Assistant(a) => {
                for block in &a.content {
                    match block {
                        AssistantContent::Text(t) if !t.text.is_empty() => out.push(
                            SessionUpdate::AgentMessageChunk(updates::text_chunk(&t.text, id)),
                        ),
                        AssistantContent::Thinking(t) if !t.thinking.is_empty() => out.push(
                            SessionUpdate::AgentThoughtChunk(updates::text_chunk(&t.thinking, id)),
                        ),
                        AssistantContent::ToolCall(call) => {
                            // Described by today's tools: one gone since shows its name.
                            let look = updates::describe(tools, call);
                            out.push(updates::tool_call_announcement(call, look));
                            open.push(call.id.clone());
                        }
                        _ => {}
                    }
                }
            }
            SessionMessage::ToolResult(result) => {
                open.retain(|c| *c != result.tool_call_id);
                out.push(updates::tool_result_update(result, None));
                out.extend(updates::plan_update(result));
            }
            // `!!command`s too: the model never sees them, the user does.
            SessionMessage::BashExecution(b) => {
                let text = bash_execution_to_text(b);
                out.push(SessionUpdate::UserMessageChunk(updates::text_chunk(
                    &text, id,
                )));
            }
            SessionMessage::Custom(c) if c.display => {
                for block in c.content.blocks() {
                    out.push(SessionUpdate::AgentMessageChunk(chunk(&block, id)));
                }
            }
            _ => {}
        }
    }
    for id in open {
        out.push(updates::status_update(&id, ToolCallStatus::Failed));
    }
    out
}

fn chunk(block: &UserContent, message_id: &str) -> ContentChunk {
    ContentChunk::new(updates::content_block(block)).message_id(message_id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use march_core::message::{
        AssistantMessage, Message, StopReason, TextContent, ThinkingContent, ToolCall,
        ToolResultMessage, UserMessage,
    };
    use march_core::model::Model;
    use march_core::session::SessionHeader;
    use serde_json::{Value, json};

    #[test]
    fn replays_user_agent_thought_and_tool_calls_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = SessionStore::create(dir.path(), SessionHeader::new("/p")).unwrap();
        store
            .append_message(Message::User(UserMessage::text("hi")))
            .unwrap();
        let mut a = AssistantMessage::empty(&Model::openai_compatible("p", "m", "http://x"));
        a.content = vec![
            AssistantContent::Thinking(ThinkingContent {
                thinking: "plan".into(),
                thinking_signature: None,
                redacted: false,
            }),
            AssistantContent::Text(TextContent {
                text: "ok".into(),
                text_signature: None,
            }),
            AssistantContent::ToolCall(ToolCall {
                id: "c1".into(),
                name: "bash".into(),
                arguments: json!({"command": "ls"}),
                thought_signature: None,
            }),
            AssistantContent::ToolCall(ToolCall {
                id: "c2".into(),
                name: "read".into(),
                arguments: json!({"path": "x"}),
                thought_signature: None,
            }),
        ];
        a.stop_reason = StopReason::ToolUse;
        store.append_message(Message::Assistant(a)).unwrap();
        store
            .append_message(Message::ToolResult(ToolResultMessage {
                tool_call_id: "c1".into(),
                tool_name: "bash".into(),
                content: vec![UserContent::text("file")],
                details: Value::Null,
                is_error: false,
                timestamp: 0,
                usage: None,
            }))
            .unwrap();
        store.append_thinking_level("high").unwrap();

        let kinds: Vec<String> = replay(&store, &[], false, 0)
            .iter()
            .map(|u| {
                let v = serde_json::to_value(u).unwrap();
                format!(
                    "{} {}",
                    v["sessionUpdate"].as_str().unwrap(),
                    v["status"].as_str().unwrap_or("")
                )
                .trim()
                .to_string()
            })
            .collect();
        assert_eq!(
            kinds,
            [
                "user_message_chunk",
                "agent_thought_chunk",
                "agent_message_chunk",
                "tool_call",
                "tool_call",
                "tool_call_update completed",
                // c2 never got a result: the crash cut it off.
                "tool_call_update failed",
            ]
        );
    }
}
