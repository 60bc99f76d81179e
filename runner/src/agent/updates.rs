//! Agent events to ACP `session/update`s: text and thought chunks, tool calls with kind,
//! title, locations and raw input, their progress and results (diffs for file edits), usage.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use agent_client_protocol::v1::schema::SessionUpdate;
use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, Cost, Diff, ImageContent as AcpImage, Plan, PlanEntry,
    PlanEntryPriority, PlanEntryStatus, Terminal, TerminalId, TextContent as AcpText,
    ToolCall as AcpToolCall, ToolCallContent, ToolCallLocation, ToolCallStatus, ToolCallUpdate,
    ToolCallUpdateFields, ToolKind, UsageUpdate,
};
use march_core::event::{AgentEvent, AssistantStreamEvent};
use march_core::message::{AssistantMessage, Message, ToolCall, ToolResultMessage, UserContent};
use march_core::plan::{PlanPriority, PlanStatus};
use march_core::session::{SessionMessage, SessionStore};
use march_core::tool::{CallPreview, FileChange, Tool, ToolKind as CoreToolKind, call_title};
use march_core::usage::UsageTotals;

use super::client_terminal::ClientTerminals;

/// Longest title shown for a tool call.
const MAX_TITLE_CHARS: usize = 120;

/// How a call looks to clients, as its tool describes it from the arguments.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CallLook {
    /// One line for people.
    pub title: String,
    /// What it does.
    pub kind: ToolKind,
    /// The absolute paths it touches.
    pub paths: Vec<PathBuf>,
}

/// What `call` looks like, asked of the tool it names; a call of a tool this session does
/// not have is shown by its name alone.
pub(crate) fn describe(tools: &[Arc<dyn Tool>], call: &ToolCall) -> CallLook {
    let Some(tool) = tools.iter().find(|t| t.name() == call.name) else {
        return CallLook {
            title: clamp_title(call_title(&call.name, None)),
            kind: ToolKind::Other,
            paths: Vec::new(),
        };
    };
    let args = tool.prepare_arguments(call.arguments.clone());
    CallLook {
        title: clamp_title(tool.title(&args)),
        kind: acp_kind(tool.kind(&args)),
        paths: tool.target_paths(&args),
    }
}

/// The ACP kind of a core tool kind.
fn acp_kind(kind: CoreToolKind) -> ToolKind {
    match kind {
        CoreToolKind::Read => ToolKind::Read,
        CoreToolKind::Edit => ToolKind::Edit,
        CoreToolKind::Delete => ToolKind::Delete,
        CoreToolKind::Move => ToolKind::Move,
        CoreToolKind::Search => ToolKind::Search,
        CoreToolKind::Execute => ToolKind::Execute,
        CoreToolKind::Think => ToolKind::Think,
        CoreToolKind::Fetch => ToolKind::Fetch,
        CoreToolKind::Other => ToolKind::Other,
    }
}

/// `title` cut to one short line.
fn clamp_title(title: String) -> String {
    if title.chars().count() > MAX_TITLE_CHARS {
        let cut: String = title.chars().take(MAX_TITLE_CHARS - 1).collect();
        format!("{cut}…")
    } else {
        title
    }
}

/// The fields that describe a call before it runs: title, kind, locations and raw input.
pub(crate) fn call_fields(call: &ToolCall, look: &CallLook) -> ToolCallUpdateFields {
    ToolCallUpdateFields::new()
        .title(look.title.clone())
        .kind(look.kind)
        .locations(locations(&look.paths))
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
pub(crate) fn tool_call_announcement(call: &ToolCall, look: CallLook) -> SessionUpdate {
    SessionUpdate::ToolCall(
        AcpToolCall::new(call.id.clone(), look.title)
            .kind(look.kind)
            .status(ToolCallStatus::Pending)
            .locations(locations(&look.paths))
            .raw_input(call.arguments.clone()),
    )
}

/// What a permission request shows of a call's preview: the diff of a file change, or a
/// command and its directory, or text and where it goes, or a picture and where it goes.
pub(crate) fn preview_content(preview: CallPreview) -> Vec<ToolCallContent> {
    let text = |text: String| ToolCallContent::from(ContentBlock::Text(AcpText::new(text)));
    match preview {
        CallPreview::Change(change) => vec![ToolCallContent::Diff(diff_of(change))],
        CallPreview::Command { command, cwd } => {
            vec![text(format!("$ {command}\n\nin {}", cwd.display()))]
        }
        CallPreview::Text {
            target,
            text: added,
        } => vec![text(format!("to {target}:\n\n{added}"))],
        CallPreview::Image { target, image } => vec![
            text(format!("to {target}:")),
            ToolCallContent::from(ContentBlock::Image(
                agent_client_protocol::v1::schema::ImageContent::new(image.data, image.mime_type),
            )),
        ],
    }
}

/// The session's plan, when a tool result carries one (ACP `plan`: every entry, each time).
pub(crate) fn plan_update(result: &ToolResultMessage) -> Option<SessionUpdate> {
    if result.is_error {
        return None;
    }
    let entries = march_core::plan::plan_in(&result.details)?;
    Some(SessionUpdate::Plan(Plan::new(
        entries
            .into_iter()
            .map(|e| {
                let priority = match e.priority {
                    PlanPriority::High => PlanEntryPriority::High,
                    PlanPriority::Medium => PlanEntryPriority::Medium,
                    PlanPriority::Low => PlanEntryPriority::Low,
                };
                let status = match e.status {
                    PlanStatus::Pending => PlanEntryStatus::Pending,
                    PlanStatus::InProgress => PlanEntryStatus::InProgress,
                    PlanStatus::Completed => PlanEntryStatus::Completed,
                };
                PlanEntry::new(e.content, priority, status)
            })
            .collect::<Vec<_>>(),
    )))
}

/// The diff of a change a tool made.
fn diff_of(change: FileChange) -> Diff {
    Diff::new(change.path, change.new_text).old_text(change.old_text)
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
    // ACP has no status for "the user said no" nor for "ran outside the sandbox": clients
    // that know March's extension show both, also when the session is replayed.
    let mut march = serde_json::Map::new();
    if is_rejection(result) {
        march.insert("rejected".into(), true.into());
    }
    if ran_outside(result) {
        march.insert("sandbox".into(), "outside".into());
    }
    SessionUpdate::ToolCallUpdate(if march.is_empty() {
        update
    } else {
        let mut meta = serde_json::Map::new();
        meta.insert("march".to_string(), march.into());
        update.meta(meta)
    })
}

/// Whether `result` is the permission gate's answer to a call the user rejected.
fn is_rejection(result: &ToolResultMessage) -> bool {
    result.is_error
        && matches!(result.content.as_slice(),
            [UserContent::Text(t)] if t.text == super::gate::REJECTED
                || t.text.starts_with(super::gate::REJECTED_WITH))
}

/// Whether the call's command ran outside the sandbox (its tool says so in its details).
fn ran_outside(result: &ToolResultMessage) -> bool {
    result.details.get("sandbox").and_then(|s| s.as_str()) == Some("outside")
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

/// Marks a tool call update as running outside the sandbox (`_meta.march.sandbox:
/// "outside"`), which the user allowed for this call alone.
pub(crate) fn mark_unsandboxed(update: &mut SessionUpdate) {
    if let SessionUpdate::ToolCallUpdate(u) = update {
        let meta = u.meta.get_or_insert_with(Default::default);
        meta.insert("march".into(), serde_json::json!({ "sandbox": "outside" }));
    }
}

/// The tokens the context held when `message` was answered.
fn context_tokens(message: &AssistantMessage) -> u64 {
    let u = &message.usage;
    u.total_tokens
        .max(u.input + u.output + u.cache_read + u.cache_write)
}

/// Usage after an assistant message: the tokens the context holds now (its usage) against
/// the window, and the session's cost so far (ACP's `cost` is cumulative); the session's
/// token totals go in `_meta.march.usage`.
pub(crate) fn usage_update(used: u64, context_window: u64, session: &UsageTotals) -> SessionUpdate {
    let mut update = UsageUpdate::new(used, context_window);
    if session.cost > 0.0 {
        update = update.cost(Cost::new(session.cost, "USD"));
    }
    if session.calls > 0 {
        let mut meta = serde_json::Map::new();
        meta.insert("march".into(), serde_json::json!({ "usage": session }));
        update = update.meta(meta);
    }
    SessionUpdate::UsageUpdate(update)
}

/// The usage of a session read from its file (`session/load`, `session/resume`): the context
/// of the branch's last answer and the totals of every call; none before the first call.
pub(crate) fn stored_usage(store: &SessionStore, context_window: u64) -> Option<SessionUpdate> {
    let totals = store.usage();
    if totals.calls == 0 {
        return None;
    }
    // Up from the leaf to the first good answer: usually a few entries, not the whole branch.
    let mut used = 0;
    let mut at = store.leaf_entry();
    while let Some(entry) = at {
        if let Some(SessionMessage::Assistant(a)) = entry.message()
            && !a.stop_reason.is_failure()
        {
            used = context_tokens(a);
            break;
        }
        at = entry.parent_id.as_deref().and_then(|id| store.entry(id));
    }
    Some(usage_update(used, context_window, &totals))
}

/// Turns the events of one run into updates; keeps what later events need (message ids,
/// the changes tools made until their results are announced).
pub(crate) struct UpdateMapper {
    tools: Vec<Arc<dyn Tool>>,
    context_window: u64,
    message_prefix: String,
    messages: u64,
    message_id: String,
    /// Changes reported at `tool_execution_end`, shown with the call's result.
    changes: HashMap<String, FileChange>,
    /// Calls whose commands run in a client terminal, which shows their output itself.
    terminals: Option<Arc<ClientTerminals>>,
    /// Tokens and cost of the session so far.
    session_usage: UsageTotals,
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
            changes: HashMap::new(),
            terminals: None,
            session_usage: UsageTotals::default(),
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

    /// The session's totals, with the message about to be mapped counted.
    pub(crate) fn set_session_usage(&mut self, usage: UsageTotals) {
        self.session_usage = usage;
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
                    .map(|call| tool_call_announcement(call, describe(&self.tools, call)))
                    .collect();
                out.push(usage_update(
                    context_tokens(a),
                    self.context_window,
                    &self.session_usage,
                ));
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
                    .changes
                    .remove(&result.tool_call_id)
                    .filter(|_| !result.is_error)
                    .map(diff_of);
                let mut out = vec![tool_result_update(result, diff)];
                out.extend(plan_update(result));
                out
            }
            AgentEvent::ToolExecutionEnd {
                tool_call_id,
                result,
                ..
            } => {
                if let Some(change) = &result.change {
                    self.changes.insert(tool_call_id.clone(), change.clone());
                }
                Vec::new()
            }
            _ => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use march_core::event::ToolOutcome;
    use march_core::message::{AssistantContent, StopReason, TextContent, Usage};
    use march_core::model::Model;
    use march_tools::{ToolContext, ToolRegistry};
    use serde_json::{Value, json};

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
            usage: None,
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
            usage: None,
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
    fn calls_look_as_their_tools_describe_them() {
        let dir = tempfile::tempdir().unwrap();
        let tools = ToolRegistry::all(&ToolContext::local(dir.path()))
            .tools()
            .to_vec();
        let look = |name: &str, args: Value| describe(&tools, &call("c", name, args));
        use ToolKind::*;
        let cases = [
            ("read", json!({"path": "a.rs"}), Read, "read a.rs"),
            (
                "edit",
                json!({"path": "a.rs", "edits": []}),
                Edit,
                "edit a.rs",
            ),
            (
                "write",
                json!({"path": "b", "content": ""}),
                Edit,
                "write b",
            ),
            (
                "bash",
                json!({"command": "ls -la\necho"}),
                Execute,
                "bash ls -la",
            ),
            ("grep", json!({"pattern": "fn"}), Search, "grep fn"),
            ("find", json!({"pattern": "*.rs"}), Search, "find *.rs"),
            ("ls", json!({"path": "src"}), Search, "ls src"),
            ("memory", json!({"action": "read"}), Read, "memory read"),
            (
                "memory",
                json!({"action": "append", "section": "Build", "text": "x"}),
                Edit,
                "memory append Build",
            ),
            ("mystery", json!({"path": "x"}), Other, "mystery"),
        ];
        for (name, args, kind, title) in cases {
            let got = look(name, args);
            assert_eq!((got.kind, got.title.as_str()), (kind, title), "{name}");
        }
        assert_eq!(
            look("read", json!({"path": "a.rs"})).paths,
            [dir.path().join("a.rs")]
        );
        assert!(look("mystery", json!({"path": "x"})).paths.is_empty());
        let long = look("bash", json!({"command": "x".repeat(500)}));
        assert_eq!(long.title.chars().count(), MAX_TITLE_CHARS);
    }

    /// Runs `call` with the real tool, as the loop would, and returns its outcome's end event.
    async fn run(tools: &[Arc<dyn Tool>], call: &ToolCall) -> AgentEvent {
        let tool = tools.iter().find(|t| t.name() == call.name).unwrap();
        let outcome = tool
            .execute(
                &call.id,
                call.arguments.clone(),
                tokio_util::sync::CancellationToken::new(),
                march_core::tool::ToolUpdates::discard(),
            )
            .await
            .unwrap_or_else(|e| ToolOutcome::text(e.0));
        AgentEvent::ToolExecutionEnd {
            tool_call_id: call.id.clone(),
            tool_name: call.name.clone(),
            result: outcome,
            is_error: false,
        }
    }

    #[tokio::test]
    async fn a_turn_maps_to_chunks_tool_calls_diffs_and_usage() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.txt");
        std::fs::write(&file, "old\n").unwrap();
        let tools = ToolRegistry::all(&ToolContext::local(dir.path()))
            .tools()
            .to_vec();
        let mut mapper = UpdateMapper::new(tools.clone(), 1000, "r");
        let edits = json!([{"oldText": "old", "newText": "new"}]);
        let a = assistant(vec![
            call("c1", "edit", json!({"path": "a.txt", "edits": edits})),
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

        // The tools run and say what they changed; the diff shows before and after.
        for call in a.tool_calls().filter(|c| c.name != "bash") {
            assert!(mapper.map(&run(&tools, call).await).is_empty());
        }
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "new\n");
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
