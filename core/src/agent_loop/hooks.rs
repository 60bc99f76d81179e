//! Hooks a runtime installs into the loop: guardrails, compaction points, turn control.

use async_trait::async_trait;
use serde_json::Value;

use crate::event::ToolOutcome;
use crate::message::{AssistantMessage, Message, ToolCall, ToolResultMessage, UserContent};
use crate::model::{Model, ThinkingLevel};

/// A token estimate of the context about to be sent, against the model's window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextBudget {
    /// Estimated tokens of the request.
    pub estimated_tokens: u64,
    /// The model's context window.
    pub context_window: u64,
}

impl ContextBudget {
    /// Tokens left before the window is full.
    pub fn remaining(&self) -> u64 {
        self.context_window.saturating_sub(self.estimated_tokens)
    }
}

/// What `before_model_call` sees.
pub struct ModelCall<'a> {
    /// The model about to be called.
    pub model: &'a Model,
    /// The messages about to be sent (after `transform_context`).
    pub messages: &'a [Message],
    /// Token estimate.
    pub budget: ContextBudget,
    /// 1-based turn number within the run.
    pub turn: u32,
}

/// What tool hooks see.
pub struct ToolCallInfo<'a> {
    /// The assistant message that made the call.
    pub assistant: &'a AssistantMessage,
    /// The call.
    pub tool_call: &'a ToolCall,
    /// Validated arguments.
    pub args: &'a Value,
    /// The transcript, including the assistant message.
    pub messages: &'a [Message],
}

/// A refusal from `before_tool_call`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolBlock {
    /// Shown to the model; `Tool execution was blocked` when absent.
    pub reason: Option<String>,
    /// Ends the run after this batch with this limit (the permission gate's loop guard).
    pub ends_run: Option<super::RunLimit>,
}

/// Replacement fields from `after_tool_call`; each given field replaces the original wholesale.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolResultPatch {
    /// New content.
    pub content: Option<Vec<UserContent>>,
    /// New details.
    pub details: Option<Value>,
    /// New error flag.
    pub is_error: Option<bool>,
    /// New terminate request.
    pub terminate: Option<bool>,
}

/// What turn hooks see.
pub struct TurnInfo<'a> {
    /// The turn's assistant message.
    pub message: &'a AssistantMessage,
    /// Its tool results in source order.
    pub tool_results: &'a [ToolResultMessage],
    /// The whole transcript.
    pub messages: &'a [Message],
    /// Messages added by this run so far.
    pub new_messages: &'a [Message],
}

/// Replacements for the next model request.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NextTurn {
    /// A new transcript (e.g. compacted).
    pub messages: Option<Vec<Message>>,
    /// Another model.
    pub model: Option<Model>,
    /// Another thinking level.
    pub thinking: Option<ThinkingLevel>,
}

/// Hooks into the loop. Every method has a do-nothing default.
#[async_trait]
pub trait AgentHooks: Send + Sync {
    /// Rewrite the transcript before each model call (must not fail).
    async fn transform_context(&self, messages: Vec<Message>) -> Vec<Message> {
        messages
    }

    /// Called before each model call with a token estimate; `Err` stops the run with an error
    /// assistant message carrying the reason.
    async fn before_model_call(&self, _call: &ModelCall<'_>) -> Result<(), String> {
        Ok(())
    }

    /// Called with each finished assistant message; `Err` (a tripwire) turns it into an error.
    async fn after_model_call(&self, _message: &AssistantMessage) -> Result<(), String> {
        Ok(())
    }

    /// Called before a tool runs; `Some` blocks it with an error result.
    async fn before_tool_call(&self, _call: &ToolCallInfo<'_>) -> Option<ToolBlock> {
        None
    }

    /// Called after a tool ran; may patch the result. `Err` turns it into an error result.
    async fn after_tool_call(
        &self,
        _call: &ToolCallInfo<'_>,
        _result: &ToolOutcome,
        _is_error: bool,
    ) -> Result<Option<ToolResultPatch>, String> {
        Ok(None)
    }

    /// Called after `turn_end`; may replace transcript, model or thinking level.
    async fn prepare_next_turn(&self, _turn: &TurnInfo<'_>) -> Option<NextTurn> {
        None
    }

    /// Called after `turn_end`; `true` ends the run before queues are polled.
    async fn should_stop_after_turn(&self, _turn: &TurnInfo<'_>) -> bool {
        false
    }
}

/// Hooks that do nothing.
pub struct NoHooks;

impl AgentHooks for NoHooks {}
