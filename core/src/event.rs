//! The event contract: assistant stream events from providers and agent events from the loop.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::message::{AssistantMessage, Message, ToolCall, ToolResultMessage, UserContent};

/// One step of a streamed assistant response (pi's `AssistantMessageEvent`, without the
/// redundant `partial` copy: `AgentEvent::MessageUpdate.message` carries the partial).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AssistantStreamEvent {
    /// The response started.
    Start,
    /// A text block opened at `content_index`.
    TextStart {
        /// Index into `AssistantMessage.content`.
        #[serde(rename = "contentIndex")]
        content_index: usize,
    },
    /// Text appended.
    TextDelta {
        /// Index into `AssistantMessage.content`.
        #[serde(rename = "contentIndex")]
        content_index: usize,
        /// The new text.
        delta: String,
    },
    /// A text block closed with its full content.
    TextEnd {
        /// Index into `AssistantMessage.content`.
        #[serde(rename = "contentIndex")]
        content_index: usize,
        /// The whole block text.
        content: String,
    },
    /// A thinking block opened.
    ThinkingStart {
        /// Index into `AssistantMessage.content`.
        #[serde(rename = "contentIndex")]
        content_index: usize,
    },
    /// Thinking appended.
    ThinkingDelta {
        /// Index into `AssistantMessage.content`.
        #[serde(rename = "contentIndex")]
        content_index: usize,
        /// The new reasoning text.
        delta: String,
    },
    /// A thinking block closed.
    ThinkingEnd {
        /// Index into `AssistantMessage.content`.
        #[serde(rename = "contentIndex")]
        content_index: usize,
        /// The whole block text.
        content: String,
    },
    /// A tool call block opened. (pi carries id and name in its `partial`; March names them.)
    #[serde(rename = "toolcall_start")]
    ToolCallStart {
        /// Index into `AssistantMessage.content`.
        #[serde(rename = "contentIndex")]
        content_index: usize,
        /// The call id (may be empty until the provider sends it).
        id: String,
        /// The tool name.
        name: String,
    },
    /// A piece of the tool call's JSON arguments.
    #[serde(rename = "toolcall_delta")]
    ToolCallDelta {
        /// Index into `AssistantMessage.content`.
        #[serde(rename = "contentIndex")]
        content_index: usize,
        /// Raw JSON fragment.
        delta: String,
    },
    /// A tool call block closed with parsed arguments.
    #[serde(rename = "toolcall_end")]
    ToolCallEnd {
        /// Index into `AssistantMessage.content`.
        #[serde(rename = "contentIndex")]
        content_index: usize,
        /// The finished call.
        #[serde(rename = "toolCall")]
        tool_call: ToolCall,
    },
    /// The response finished normally.
    Done {
        /// stop, length or toolUse.
        reason: crate::message::StopReason,
        /// The final message.
        message: AssistantMessage,
    },
    /// The response failed or was aborted; the message carries `errorMessage`.
    Error {
        /// error or aborted.
        reason: crate::message::StopReason,
        /// The final message with what arrived before the failure.
        error: AssistantMessage,
    },
}

impl AssistantStreamEvent {
    /// Done or Error: the last event of a stream.
    pub fn is_terminal(&self) -> bool {
        matches!(
            self,
            AssistantStreamEvent::Done { .. } | AssistantStreamEvent::Error { .. }
        )
    }
}

/// The outcome of a tool execution, as handed to `tool_execution_end`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolOutcome {
    /// Text and image content for the model.
    pub content: Vec<UserContent>,
    /// Structured details for UIs.
    #[serde(default)]
    pub details: serde_json::Value,
    /// Ask to end the run after this batch (effective only when every result asks).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub terminate: bool,
    /// The file the call changed, so clients can show a diff; never sent to the model nor
    /// saved (the file itself is the record).
    #[serde(skip)]
    pub change: Option<crate::tool::FileChange>,
    /// What the call cost beyond the model's tokens (an image made by a paid API).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<crate::message::Usage>,
}

/// Events of an agent run, in pi's order (see `docs/ARCHITECTURE.md`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AgentEvent {
    /// The run began.
    AgentStart,
    /// The run ended; `messages` are the messages this run added.
    AgentEnd {
        /// Prompts, injected messages, assistant messages and tool results of this run.
        messages: Vec<Message>,
    },
    /// A turn (one assistant response and its tools) began.
    TurnStart,
    /// A turn ended.
    TurnEnd {
        /// The turn's assistant message.
        message: Message,
        /// Its tool results in source order.
        #[serde(rename = "toolResults")]
        tool_results: Vec<ToolResultMessage>,
    },
    /// A message began (user, assistant partial, tool result).
    MessageStart {
        /// The message.
        message: Message,
    },
    /// An assistant message changed while streaming.
    MessageUpdate {
        /// The partial assistant message after this event.
        message: Arc<AssistantMessage>,
        /// What changed.
        #[serde(rename = "assistantMessageEvent")]
        assistant_message_event: AssistantStreamEvent,
    },
    /// A message is complete.
    MessageEnd {
        /// The final message.
        message: Message,
    },
    /// A tool call is about to be prepared and run.
    ToolExecutionStart {
        /// The call id.
        #[serde(rename = "toolCallId")]
        tool_call_id: String,
        /// The tool name.
        #[serde(rename = "toolName")]
        tool_name: String,
        /// Raw arguments as the model sent them.
        args: serde_json::Value,
    },
    /// A running tool reported progress.
    ToolExecutionUpdate {
        /// The call id.
        #[serde(rename = "toolCallId")]
        tool_call_id: String,
        /// The tool name.
        #[serde(rename = "toolName")]
        tool_name: String,
        /// Raw arguments.
        args: serde_json::Value,
        /// Partial output so far.
        #[serde(rename = "partialResult")]
        partial_result: ToolOutcome,
    },
    /// A tool call finished (in completion order for parallel batches).
    ToolExecutionEnd {
        /// The call id.
        #[serde(rename = "toolCallId")]
        tool_call_id: String,
        /// The tool name.
        #[serde(rename = "toolName")]
        tool_name: String,
        /// The final result.
        result: ToolOutcome,
        /// Whether it failed.
        #[serde(rename = "isError")]
        is_error: bool,
    },
}

impl AgentEvent {
    /// The `type` tag as pi writes it.
    pub fn kind(&self) -> &'static str {
        match self {
            AgentEvent::AgentStart => "agent_start",
            AgentEvent::AgentEnd { .. } => "agent_end",
            AgentEvent::TurnStart => "turn_start",
            AgentEvent::TurnEnd { .. } => "turn_end",
            AgentEvent::MessageStart { .. } => "message_start",
            AgentEvent::MessageUpdate { .. } => "message_update",
            AgentEvent::MessageEnd { .. } => "message_end",
            AgentEvent::ToolExecutionStart { .. } => "tool_execution_start",
            AgentEvent::ToolExecutionUpdate { .. } => "tool_execution_update",
            AgentEvent::ToolExecutionEnd { .. } => "tool_execution_end",
        }
    }
}
