//! Agent events to ACP `session/update`s: text and thought chunks, tool calls with kind,
//! title, locations and raw input, their progress and results (diffs for file edits), usage.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_client_protocol::v1::schema::SessionUpdate;
use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, Cost, Diff, ImageContent as AcpImage, Terminal, TerminalId,
    TextContent as AcpText, ToolCall as AcpToolCall, ToolCallContent, ToolCallLocation,
    ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields, ToolKind, UsageUpdate,
};
use march_core::event::{AgentEvent, AssistantStreamEvent};
use march_core::message::{AssistantMessage, Message, ToolCall, ToolResultMessage, UserContent};
use march_core::tool::Tool;
use serde_json::Value;

use super::client_terminal::ClientTerminals;

/// Files larger than this get no diff content (the text result still says what happened).
const MAX_DIFF_BYTES: u64 = 1024 * 1024;
/// Longest title shown for a tool call.
const MAX_TITLE_CHARS: usize = 120;

/// The ACP kind of a tool, so clients can pick icons and follow-along behaviour.
pub(crate) fn tool_kind(name: &str) -> ToolKind {
    match name {
        "read" => ToolKind::Read,
        "edit" | "write" => ToolKind::Edit,
        "bash" => ToolKind::Execute,
        "grep" | "find" | "ls" => ToolKind::Search,
        _ => ToolKind::Other,
    }
}

/// A one-line title: the tool name and its main argument.
pub(crate) fn tool_title(name: &str, args: &Value) -> String {
    let main = ["command", "path", "pattern"]
        .iter()
        .find_map(|key| args.get(*key).and_then(Value::as_str));
    let title = match main {
        Some(arg) => {
            let first_line = arg.lines().next().unwrap_or_default();
            format!("{name} {first_line}")
        }
        None => name.to_string(),
    };
    if title.chars().count() > MAX_TITLE_CHARS {
        let cut: String = title.chars().take(MAX_TITLE_CHARS - 1).collect();
        format!("{cut}…")
    } else {
        title
    }
}

/// The absolute paths a call touches, as the tool itself reports them.
pub(crate) fn target_paths(tools: &[Arc<dyn Tool>], call: &ToolCall) -> Vec<PathBuf> {
    tools
        .iter()
        .find(|t| t.name() == call.name)
        .map(|t| t.target_paths(&t.prepare_arguments(call.arguments.clone())))
        .unwrap_or_default()
}

/// The fields that describe a call before it runs: title, kind, locations and raw input.
pub(crate) fn call_fields(call: &ToolCall, paths: &[PathBuf]) -> ToolCallUpdateFields {
    ToolCallUpdateFields::new()
        .title(tool_title(&call.name, &call.arguments))
        .kind(tool_kind(&call.name))
        .locations(locations(paths))
        .raw_input(call.arguments.clone())
}

fn locations(paths: &[PathBuf]) -> Vec<ToolCallLocation> {
    paths.iter().map(ToolCallLocation::new).collect()
}

/// An ACP content block for a user or tool-result block.
pub(crate) fn content_block(block: &UserContent) -> ContentBlock {
    match block {
        UserContent::Text(t) => ContentBlock::Text(AcpText::new(t.text.clone())),
        UserContent::Image(i) => {
            ContentBlock::Image(AcpImage::new(i.data.clone(), i.mime_type.clone()))
        }
    }
}

/// A text chunk update.
pub(crate) fn text_chunk(text: &str, message_id: &str) -> ContentChunk {
    ContentChunk::new(ContentBlock::Text(AcpText::new(text))).message_id(message_id)
}

/// The announcement of a tool call (status pending).
pub(crate) fn tool_call_announcement(call: &ToolCall, paths: &[PathBuf]) -> SessionUpdate {
    SessionUpdate::ToolCall(
        AcpToolCall::new(call.id.clone(), tool_title(&call.name, &call.arguments))
            .kind(tool_kind(&call.name))
            .status(ToolCallStatus::Pending)
            .locations(locations(paths))
            .raw_input(call.arguments.clone()),
    )
}

/// The final update of a call: its status and what the model saw.
pub(crate) fn tool_result_update(result: &ToolResultMessage, diff: Option<Diff>) -> SessionUpdate {
    let status = if result.is_error {
        ToolCallStatus::Failed
    } else {
        ToolCallStatus::Completed
    };
    let mut content: Vec<ToolCallContent> = diff.into_iter().map(ToolCallContent::Diff).collect();
    content.extend(
        result
            .content
            .iter()
            .map(|b| ToolCallContent::from(content_block(b))),
    );
    let update = ToolCallUpdate::new(
        result.tool_call_id.clone(),
        ToolCallUpdateFields::new().status(status).content(content),
    );
    SessionUpdate::ToolCallUpdate(if is_rejection(result) {
        // ACP has no status for "the user said no": clients that know March's extension show
        // it as rejected, also when the session is replayed.
        let mut meta = serde_json::Map::new();
        meta.insert("march".to_string(), serde_json::json!({ "rejected": true }));
        update.meta(meta)
    } else {
        update
    })
}

/// Whether `result` is the permission gate's answer to a call the user rejected.
fn is_rejection(result: &ToolResultMessage) -> bool {
    result.is_error
        && matches!(result.content.as_slice(),
            [UserContent::Text(t)] if t.text == super::gate::REJECTED)
}

/// The final update of a call whose command ran in a client terminal: the terminal stays
/// its content (the client keeps showing it after release); what the model read is the raw
/// output, so nothing is shown twice.
pub(crate) fn terminal_result_update(
    result: &ToolResultMessage,
    terminal: TerminalId,
) -> SessionUpdate {
    let status = if result.is_error {
        ToolCallStatus::Failed
    } else {
        ToolCallStatus::Completed
    };
    let text: Vec<&str> = result
        .content
        .iter()
        .filter_map(|b| match b {
            UserContent::Text(t) => Some(t.text.as_str()),
            UserContent::Image(_) => None,
        })
        .collect();
    SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
        result.tool_call_id.clone(),
        ToolCallUpdateFields::new()
            .status(status)
            .content(vec![ToolCallContent::Terminal(Terminal::new(terminal))])
            .raw_output(serde_json::json!({ "output": text.join("\n") })),
    ))
}

/// A status-only update of a call.
pub(crate) fn status_update(id: &str, status: ToolCallStatus) -> SessionUpdate {
    SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
        id.to_string(),
        ToolCallUpdateFields::new().status(status),
    ))
}

/// Context usage after an assistant message: tokens the context holds now, against the window.
pub(crate) fn usage_update(message: &AssistantMessage, context_window: u64) -> SessionUpdate {
    let u = &message.usage;
    let used = u
        .total_tokens
        .max(u.input + u.output + u.cache_read + u.cache_write);
    let mut update = UsageUpdate::new(used, context_window);
    if u.cost.total > 0.0 {
        update = update.cost(Cost::new(u.cost.total, "USD"));
    }
    SessionUpdate::UsageUpdate(update)
}

/// A file's text before an edit, to show a diff once the edit is done.
#[derive(Debug, Clone, PartialEq)]
struct Before {
    path: PathBuf,
    /// `None`: the file did not exist.
    text: Option<String>,
}

/// The file's text if it is small UTF-8; `Some(None)` when it does not exist; `None` when
/// no diff can be shown.
fn read_for_diff(path: &Path) -> Option<Option<String>> {
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() && meta.len() <= MAX_DIFF_BYTES => {
            std::fs::read_to_string(path).ok().map(Some)
        }
        Ok(_) => None,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some(None),
        Err(_) => None,
    }
}

/// Turns the events of one run into updates; keeps what later events need (message ids,
/// file contents before edits).
pub(crate) struct UpdateMapper {
    tools: Vec<Arc<dyn Tool>>,
    context_window: u64,
    message_prefix: String,
    messages: u64,
    message_id: String,
    before: HashMap<String, Before>,
    /// Calls whose commands run in a client terminal, which shows their output itself.
    terminals: Option<Arc<ClientTerminals>>,
}

impl UpdateMapper {
    /// A mapper for a run with these tools; `message_prefix` keeps message ids unique.
    pub(crate) fn new(
        tools: Vec<Arc<dyn Tool>>,
        context_window: u64,
        message_prefix: impl Into<String>,
    ) -> Self {
        let message_prefix = message_prefix.into();
        UpdateMapper {
            tools,
            context_window,
            message_id: format!("{message_prefix}-0"),
            message_prefix,
            messages: 0,
            before: HashMap::new(),
            terminals: None,
        }
    }

    /// Leave the output of calls running in a client terminal to that terminal.
    pub(crate) fn with_terminals(mut self, terminals: Arc<ClientTerminals>) -> Self {
        self.terminals = Some(terminals);
        self
    }

    fn in_terminal(&self, tool_call_id: &str) -> bool {
        self.terminals
            .as_ref()
            .is_some_and(|t| t.is_attached(tool_call_id))
    }

    /// Use another context window (after a model switch).
    pub(crate) fn set_context_window(&mut self, window: u64) {
        self.context_window = window;
    }

    /// The updates for one event. Called after a finished message has been persisted.
    pub(crate) fn map(&mut self, event: &AgentEvent) -> Vec<SessionUpdate> {
        match event {
            AgentEvent::MessageStart {
                message: Message::Assistant(_),
            } => {
                self.messages += 1;
                self.message_id = format!("{}-{}", self.message_prefix, self.messages);
                Vec::new()
            }
            AgentEvent::MessageUpdate {
                assistant_message_event,
                ..
            } => match assistant_message_event {
                AssistantStreamEvent::TextDelta { delta, .. } if !delta.is_empty() => {
                    vec![SessionUpdate::AgentMessageChunk(text_chunk(
                        delta,
                        &self.message_id,
                    ))]
                }
                AssistantStreamEvent::ThinkingDelta { delta, .. } if !delta.is_empty() => {
                    vec![SessionUpdate::AgentThoughtChunk(text_chunk(
                        delta,
                        &self.message_id,
                    ))]
                }
                _ => Vec::new(),
            },
            AgentEvent::MessageEnd {
                message: Message::Assistant(a),
            } => {
                let mut out: Vec<SessionUpdate> = a
                    .tool_calls()
                    .map(|call| {
                        let paths = target_paths(&self.tools, call);
                        self.remember_before(call, &paths);
                        tool_call_announcement(call, &paths)
                    })
                    .collect();
                out.push(usage_update(a, self.context_window));
                out
            }
            AgentEvent::ToolExecutionUpdate {
                tool_call_id,
                partial_result,
                ..
            } => {
                // Content replaces the call's content: text would hide the live terminal.
                if partial_result.content.is_empty() || self.in_terminal(tool_call_id) {
                    return Vec::new();
                }
                let content = partial_result
                    .content
                    .iter()
                    .map(|b| ToolCallContent::from(content_block(b)))
                    .collect::<Vec<_>>();
                vec![SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                    tool_call_id.clone(),
                    ToolCallUpdateFields::new().content(content),
                ))]
            }
            AgentEvent::MessageEnd {
                message: Message::ToolResult(result),
            } => {
                let terminal = self
                    .terminals
                    .as_ref()
                    .and_then(|t| t.take(&result.tool_call_id));
                if let Some(terminal) = terminal {
                    return vec![terminal_result_update(result, terminal)];
                }
                let diff = self
                    .before
                    .remove(&result.tool_call_id)
                    .filter(|_| !result.is_error)
                    .and_then(diff_after);
                vec![tool_result_update(result, diff)]
            }
            _ => Vec::new(),
        }
    }

    /// Snapshot the one file an editing call targets, before the call can run.
    fn remember_before(&mut self, call: &ToolCall, paths: &[PathBuf]) {
        if tool_kind(&call.name) != ToolKind::Edit {
            return;
        }
        let [path] = paths else { return };
        if let Some(text) = read_for_diff(path) {
            self.before.insert(
                call.id.clone(),
                Before {
                    path: path.clone(),
                    text,
                },
            );
        }
    }
}

fn diff_after(before: Before) -> Option<Diff> {
    let Some(Some(new_text)) = read_for_diff(&before.path) else {
        return None;
    };
    Some(Diff::new(before.path, new_text).old_text(before.text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use march_core::event::ToolOutcome;
    use march_core::message::{AssistantContent, StopReason, TextContent, Usage};
    use march_core::model::Model;
    use march_tools::{ToolContext, ToolRegistry};
    use serde_json::json;

    fn assistant(calls: Vec<ToolCall>) -> AssistantMessage {
        let mut a = AssistantMessage::empty(&Model::openai_compatible("p", "m", "http://x"));
        a.content = calls.into_iter().map(AssistantContent::ToolCall).collect();
        a.stop_reason = StopReason::ToolUse;
        a.usage = Usage {
            input: 100,
            output: 20,
            cache_read: 5,
            ..Usage::default()
        };
        a
    }

    fn call(id: &str, name: &str, args: Value) -> ToolCall {
        ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: args,
            thought_signature: None,
        }
    }

    fn result(id: &str, name: &str, text: &str, is_error: bool) -> ToolResultMessage {
        ToolResultMessage {
            tool_call_id: id.into(),
            tool_name: name.into(),
            content: vec![UserContent::text(text)],
            details: Value::Null,
            is_error,
            timestamp: 0,
        }
    }

    fn json_of(u: &SessionUpdate) -> Value {
        serde_json::to_value(u).unwrap()
    }

    #[test]
    fn a_rejected_call_is_marked_so_clients_can_say_so() {
        let mut result = ToolResultMessage {
            tool_call_id: "c1".into(),
            tool_name: "bash".into(),
            content: vec![UserContent::text(super::super::gate::REJECTED)],
            details: serde_json::Value::Null,
            is_error: true,
            timestamp: 0,
        };
        let marked = |u: &SessionUpdate| match u {
            SessionUpdate::ToolCallUpdate(u) => u
                .meta
                .as_ref()
                .is_some_and(|m| m["march"]["rejected"] == true),
            _ => false,
        };
        assert!(marked(&tool_result_update(&result, None)));
        result.content = vec![UserContent::text("exit code 1")];
        assert!(!marked(&tool_result_update(&result, None)));
    }

    #[test]
    fn kinds_and_titles() {
        let kinds: Vec<ToolKind> = ["read", "edit", "write", "bash", "grep", "find", "ls", "x"]
            .iter()
            .map(|n| tool_kind(n))
            .collect();
        use ToolKind::*;
        assert_eq!(
            kinds,
            [Read, Edit, Edit, Execute, Search, Search, Search, Other]
        );
        assert_eq!(
            tool_title("bash", &json!({"command": "ls -la\necho"})),
            "bash ls -la"
        );
        assert_eq!(tool_title("read", &json!({"path": "a.rs"})), "read a.rs");
        assert_eq!(tool_title("grep", &json!({"pattern": "fn"})), "grep fn");
        assert_eq!(tool_title("mystery", &json!({})), "mystery");
        let long = tool_title("bash", &json!({"command": "x".repeat(500)}));
        assert_eq!(long.chars().count(), MAX_TITLE_CHARS);
    }

    #[test]
    fn a_turn_maps_to_chunks_tool_calls_diffs_and_usage() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.txt");
        std::fs::write(&file, "old\n").unwrap();
        let tools = ToolRegistry::all(&ToolContext::local(dir.path()))
            .tools()
            .to_vec();
        let mut mapper = UpdateMapper::new(tools, 1000, "r");
        let a = assistant(vec![
            call("c1", "edit", json!({"path": "a.txt", "edits": []})),
            call("c2", "bash", json!({"command": "true"})),
            call("c3", "write", json!({"path": "new.txt", "content": "n"})),
        ]);
        assert!(
            mapper
                .map(&AgentEvent::MessageStart {
                    message: Message::Assistant(a.clone())
                })
                .is_empty()
        );
        let chunk = mapper.map(&AgentEvent::MessageUpdate {
            message: Arc::new(a.clone()),
            assistant_message_event: AssistantStreamEvent::TextDelta {
                content_index: 0,
                delta: "hi".into(),
            },
        });
        assert_eq!(
            json_of(&chunk[0]),
            json!({"sessionUpdate": "agent_message_chunk", "messageId": "r-1",
                   "content": {"type": "text", "text": "hi"}})
        );
        let thought = mapper.map(&AgentEvent::MessageUpdate {
            message: Arc::new(a.clone()),
            assistant_message_event: AssistantStreamEvent::ThinkingDelta {
                content_index: 0,
                delta: "hmm".into(),
            },
        });
        assert_eq!(json_of(&thought[0])["sessionUpdate"], "agent_thought_chunk");

        let end = mapper.map(&AgentEvent::MessageEnd {
            message: Message::Assistant(a.clone()),
        });
        assert_eq!(end.len(), 4);
        let edit = json_of(&end[0]);
        assert_eq!(edit["sessionUpdate"], "tool_call");
        assert_eq!(edit["toolCallId"], "c1");
        assert_eq!(edit["kind"], "edit");
        assert_eq!(edit["title"], "edit a.txt");
        // `pending` is the default status, which the wire leaves out.
        assert!(edit.get("status").is_none_or(|s| s == "pending"));
        assert_eq!(edit["locations"][0]["path"], json!(file));
        assert_eq!(edit["rawInput"]["path"], "a.txt");
        assert_eq!(json_of(&end[1])["kind"], "execute");
        assert_eq!(
            json_of(&end[3]),
            json!({"sessionUpdate": "usage_update", "used": 125, "size": 1000})
        );

        let progress = mapper.map(&AgentEvent::ToolExecutionUpdate {
            tool_call_id: "c2".into(),
            tool_name: "bash".into(),
            args: json!({}),
            partial_result: ToolOutcome::text("partial"),
        });
        assert_eq!(
            json_of(&progress[0])["content"][0]["content"]["text"],
            "partial"
        );

        // The edit happened; the diff shows before and after.
        std::fs::write(&file, "new\n").unwrap();
        std::fs::write(dir.path().join("new.txt"), "n").unwrap();
        let done = mapper.map(&AgentEvent::MessageEnd {
            message: Message::ToolResult(result("c1", "edit", "Successfully replaced", false)),
        });
        let done = json_of(&done[0]);
        assert_eq!(done["status"], "completed");
        assert_eq!(
            done["content"][0],
            json!({"type": "diff", "path": file, "oldText": "old\n", "newText": "new\n"})
        );
        assert_eq!(
            done["content"][1]["content"]["text"],
            "Successfully replaced"
        );
        let created = json_of(
            &mapper.map(&AgentEvent::MessageEnd {
                message: Message::ToolResult(result("c3", "write", "ok", false)),
            })[0],
        );
        assert_eq!(created["content"][0]["type"], "diff");
        assert!(
            created["content"][0]
                .get("oldText")
                .is_none_or(Value::is_null)
        );
        let failed = json_of(
            &mapper.map(&AgentEvent::MessageEnd {
                message: Message::ToolResult(result("c2", "bash", "exit 1", true)),
            })[0],
        );
        assert_eq!(failed["status"], "failed");
        assert_eq!(failed["content"][0]["content"]["text"], "exit 1");
    }

    #[test]
    fn calls_in_a_client_terminal_leave_their_output_to_it() {
        let dir = tempfile::tempdir().unwrap();
        let tools = ToolRegistry::all(&ToolContext::local(dir.path()))
            .tools()
            .to_vec();
        let terminals = Arc::new(ClientTerminals::default());
        let mut mapper = UpdateMapper::new(tools, 1000, "r").with_terminals(terminals.clone());
        terminals.attach("c1", TerminalId::new("term-1"));
        let partial = |id: &str| AgentEvent::ToolExecutionUpdate {
            tool_call_id: id.into(),
            tool_name: "bash".into(),
            args: json!({}),
            partial_result: ToolOutcome::text("partial"),
        };
        assert!(mapper.map(&partial("c1")).is_empty());
        assert_eq!(mapper.map(&partial("c2")).len(), 1);
        let done = mapper.map(&AgentEvent::MessageEnd {
            message: Message::ToolResult(result("c1", "bash", "out\n\nexit 3", true)),
        });
        assert_eq!(
            json_of(&done[0]),
            json!({"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "failed",
                   "content": [{"type": "terminal", "terminalId": "term-1"}],
                   "rawOutput": {"output": "out\n\nexit 3"}})
        );
        assert!(!terminals.is_attached("c1"));
        let other = mapper.map(&AgentEvent::MessageEnd {
            message: Message::ToolResult(result("c2", "bash", "ok", false)),
        });
        assert_eq!(json_of(&other[0])["content"][0]["content"]["text"], "ok");
    }

    #[test]
    fn text_content_helpers() {
        let block = content_block(&UserContent::Text(TextContent {
            text: "x".into(),
            text_signature: None,
        }));
        assert_eq!(serde_json::to_value(block).unwrap()["text"], "x");
    }
}
