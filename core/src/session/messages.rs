//! The messages a session stores: the LLM roles plus pi's coding-agent roles
//! (`bashExecution`, `custom`, `branchSummary`, `compactionSummary`), and their conversion to
//! LLM messages exactly as pi's `convertToLlm` does it.

use std::borrow::Borrow;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::message::{
    AssistantMessage, Message, ToolResultMessage, UserBody, UserContent, UserMessage,
};

/// Opens the user message that carries a compaction summary.
pub const COMPACTION_SUMMARY_PREFIX: &str = "The conversation history before this point was compacted into the following summary:\n\n<summary>\n";
/// Closes the user message that carries a compaction summary.
pub const COMPACTION_SUMMARY_SUFFIX: &str = "\n</summary>";
/// Opens the user message that carries a branch summary.
pub const BRANCH_SUMMARY_PREFIX: &str =
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n";
/// Closes the user message that carries a branch summary (pi adds no newline before it).
pub const BRANCH_SUMMARY_SUFFIX: &str = "</summary>";

/// A shell command the user ran (`!cmd`), with its output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BashExecutionMessage {
    /// The command line.
    pub command: String,
    /// Combined output (possibly truncated).
    #[serde(default)]
    pub output: String,
    /// Exit code; absent when the command did not finish.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i64>,
    /// True when the user cancelled the command.
    #[serde(default)]
    pub cancelled: bool,
    /// True when `output` was cut.
    #[serde(default)]
    pub truncated: bool,
    /// Where the full output was saved when truncated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_output_path: Option<String>,
    /// Milliseconds since the epoch.
    #[serde(default)]
    pub timestamp: i64,
    /// True for `!!cmd`: shown to the user, never sent to the model.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub exclude_from_context: bool,
}

/// A message injected by an extension; reaches the model as a user message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomMessage {
    /// Identifies the extension that made it.
    pub custom_type: String,
    /// Text or text/image blocks.
    pub content: UserBody,
    /// Whether UIs show it.
    #[serde(default)]
    pub display: bool,
    /// Extension data; never sent to the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    /// Milliseconds since the epoch.
    #[serde(default)]
    pub timestamp: i64,
}

/// The summary of a branch the conversation came back from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BranchSummaryMessage {
    /// The summary text.
    pub summary: String,
    /// The entry the abandoned branch ended at (`root` for before the first entry).
    pub from_id: String,
    /// Milliseconds since the epoch.
    #[serde(default)]
    pub timestamp: i64,
}

/// The summary that replaces compacted history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactionSummaryMessage {
    /// The summary text.
    pub summary: String,
    /// Context tokens before compaction.
    #[serde(default)]
    pub tokens_before: u64,
    /// Milliseconds since the epoch.
    #[serde(default)]
    pub timestamp: i64,
}

/// Any message a session holds (pi's `AgentMessage`), tagged by `role`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "camelCase")]
pub enum SessionMessage {
    /// From the user.
    User(UserMessage),
    /// From the model.
    Assistant(AssistantMessage),
    /// A tool's answer.
    ToolResult(ToolResultMessage),
    /// A shell command the user ran.
    BashExecution(BashExecutionMessage),
    /// An extension's message.
    Custom(CustomMessage),
    /// A branch summary (built from `branch_summary` entries).
    BranchSummary(BranchSummaryMessage),
    /// A compaction summary (built from `compaction` entries).
    CompactionSummary(CompactionSummaryMessage),
}

impl From<Message> for SessionMessage {
    fn from(m: Message) -> Self {
        match m {
            Message::User(u) => SessionMessage::User(u),
            Message::Assistant(a) => SessionMessage::Assistant(a),
            Message::ToolResult(t) => SessionMessage::ToolResult(t),
        }
    }
}

impl SessionMessage {
    /// The role name as pi writes it.
    pub fn role(&self) -> &'static str {
        match self {
            SessionMessage::User(_) => "user",
            SessionMessage::Assistant(_) => "assistant",
            SessionMessage::ToolResult(_) => "toolResult",
            SessionMessage::BashExecution(_) => "bashExecution",
            SessionMessage::Custom(_) => "custom",
            SessionMessage::BranchSummary(_) => "branchSummary",
            SessionMessage::CompactionSummary(_) => "compactionSummary",
        }
    }

    /// The assistant message, if this is one.
    pub fn as_assistant(&self) -> Option<&AssistantMessage> {
        match self {
            SessionMessage::Assistant(a) => Some(a),
            _ => None,
        }
    }

    /// The message as the model sees it (pi's `convertToLlm`); `None` when it is hidden
    /// from the model (`!!` commands).
    pub fn to_llm(&self) -> Option<Message> {
        let user = |text: String, timestamp: i64| {
            Message::User(UserMessage {
                content: UserBody::Blocks(vec![UserContent::text(text)]),
                timestamp,
            })
        };
        Some(match self {
            SessionMessage::User(u) => Message::User(u.clone()),
            SessionMessage::Assistant(a) => Message::Assistant(a.clone()),
            SessionMessage::ToolResult(t) => Message::ToolResult(t.clone()),
            SessionMessage::BashExecution(b) if b.exclude_from_context => return None,
            SessionMessage::BashExecution(b) => user(bash_execution_to_text(b), b.timestamp),
            SessionMessage::Custom(c) => Message::User(UserMessage {
                content: UserBody::Blocks(c.content.blocks()),
                timestamp: c.timestamp,
            }),
            SessionMessage::BranchSummary(s) => user(
                format!(
                    "{BRANCH_SUMMARY_PREFIX}{}{BRANCH_SUMMARY_SUFFIX}",
                    s.summary
                ),
                s.timestamp,
            ),
            SessionMessage::CompactionSummary(s) => user(
                format!(
                    "{COMPACTION_SUMMARY_PREFIX}{}{COMPACTION_SUMMARY_SUFFIX}",
                    s.summary
                ),
                s.timestamp,
            ),
        })
    }
}

/// Session messages (owned or shared, as in [`super::SessionContext`]) as the model sees
/// them, in order (pi's `convertToLlm`).
pub fn convert_to_llm<M: Borrow<SessionMessage>>(messages: &[M]) -> Vec<Message> {
    messages
        .iter()
        .filter_map(|m| m.borrow().to_llm())
        .collect()
}

/// The text the model sees for a shell command the user ran (pi's `bashExecutionToText`).
pub fn bash_execution_to_text(msg: &BashExecutionMessage) -> String {
    let mut text = format!("Ran `{}`\n", msg.command);
    if msg.output.is_empty() {
        text.push_str("(no output)");
    } else {
        text.push_str(&format!("```\n{}\n```", msg.output));
    }
    if msg.cancelled {
        text.push_str("\n\n(command cancelled)");
    } else if let Some(code) = msg.exit_code.filter(|c| *c != 0) {
        text.push_str(&format!("\n\nCommand exited with code {code}"));
    }
    let saved = msg.full_output_path.as_deref();
    if let Some(path) = saved.filter(|p| msg.truncated && !p.is_empty()) {
        text.push_str(&format!("\n\n[Output truncated. Full output: {path}]"));
    }
    text
}
