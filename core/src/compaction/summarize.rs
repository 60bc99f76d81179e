//! The summary request(s) a compaction makes over a provider (pi's `compact`).

use tokio_util::sync::CancellationToken;

use super::prompts::{
    SPLIT_TURN_SEPARATOR, SUMMARIZATION_SYSTEM_PROMPT, summary_request_text,
    turn_prefix_request_text,
};
use super::serialize::serialize_conversation;
use super::{CompactionError, CompactionPreparation, CompactionResult};
use crate::event::AssistantStreamEvent;
use crate::message::{AssistantContent, AssistantMessage, Message, StopReason};
use crate::model::{Model, ThinkingLevel};
use crate::provider::{LlmContext, StreamFn, StreamOptions};
use crate::session::convert_to_llm;

/// The history summary of a split turn that has no history before it.
pub const NO_PRIOR_HISTORY: &str = "No prior history.";

/// Output budget of a history summary: 80% of the reserve, at most the model's maximum.
pub fn summary_max_tokens(reserve_tokens: u64, model: &Model) -> u64 {
    cap(reserve_tokens.saturating_mul(4) / 5, model)
}

/// Output budget of a turn-prefix summary: half the reserve, at most the model's maximum.
pub fn turn_prefix_max_tokens(reserve_tokens: u64, model: &Model) -> u64 {
    cap(reserve_tokens / 2, model)
}

/// Apply the model's output limit (0 means unknown) and never ask for nothing.
fn cap(budget: u64, model: &Model) -> u64 {
    let budget = match model.max_tokens {
        0 => budget,
        max => budget.min(max),
    };
    budget.max(1)
}

/// Summarise `prep` with `model` over `provider` and return the compaction to store.
///
/// `options` supplies the credential, headers, retry policy and the thinking level (used
/// only when the model reasons); its `max_tokens` is replaced by the summary budget. A split
/// turn makes two requests at once, one for the history and one for the start of the turn.
/// Any failed, aborted or empty answer fails the whole compaction; nothing is written.
pub async fn compact(
    provider: &dyn StreamFn,
    model: &Model,
    options: &StreamOptions,
    prep: &CompactionPreparation,
    custom_instructions: Option<&str>,
    cancel: CancellationToken,
) -> Result<CompactionResult, CompactionError> {
    let reserve = prep.settings.reserve_tokens;
    // When one of two concurrent requests fails the other is dropped; cancelling its
    // token on the way out also stops the provider task still streaming it.
    let cancel = cancel.child_token();
    let _stop_leftovers = cancel.clone().drop_guard();
    let history = async {
        if prep.is_split_turn && prep.messages_to_summarize.is_empty() {
            return Ok(NO_PRIOR_HISTORY.to_string());
        }
        let conversation = serialize_conversation(&convert_to_llm(&prep.messages_to_summarize));
        let text = summary_request_text(
            &conversation,
            prep.previous_summary.as_deref(),
            custom_instructions,
        );
        let max_tokens = summary_max_tokens(reserve, model);
        request(provider, model, options, text, max_tokens, cancel.clone())
            .await
            .map_err(|e| e.into_error(CompactionError::Summarization))
    };
    let summary = if prep.is_split_turn && !prep.turn_prefix_messages.is_empty() {
        let prefix = async {
            let conversation = serialize_conversation(&convert_to_llm(&prep.turn_prefix_messages));
            let text = turn_prefix_request_text(&conversation);
            let max_tokens = turn_prefix_max_tokens(reserve, model);
            request(provider, model, options, text, max_tokens, cancel.clone())
                .await
                .map_err(|e| e.into_error(CompactionError::TurnPrefix))
        };
        let (history, prefix) = tokio::try_join!(history, prefix)?;
        format!("{history}{SPLIT_TURN_SEPARATOR}{prefix}")
    } else {
        history.await?
    };

    Ok(CompactionResult {
        summary: summary + &prep.file_ops.format(),
        first_kept_entry_id: prep.first_kept_entry_id.clone(),
        tokens_before: prep.tokens_before,
        details: prep.file_ops.details(),
    })
}

/// Why one summary request produced no summary.
pub(super) enum RequestError {
    /// Cancelled by the caller.
    Aborted,
    /// Failed, or answered with nothing.
    Failed(String),
}

impl RequestError {
    pub(super) fn into_error(self, failed: fn(String) -> CompactionError) -> CompactionError {
        match self {
            RequestError::Aborted => CompactionError::Aborted,
            RequestError::Failed(message) => failed(message),
        }
    }
}

/// One summary request: the summariser's system prompt and `text` as the only message, no
/// tools. Returns the answer's text blocks joined by newlines.
pub(super) async fn request(
    provider: &dyn StreamFn,
    model: &Model,
    options: &StreamOptions,
    text: String,
    max_tokens: u64,
    cancel: CancellationToken,
) -> Result<String, RequestError> {
    let context = LlmContext {
        system_prompt: SUMMARIZATION_SYSTEM_PROMPT.to_string(),
        messages: vec![Message::user(text)],
        tools: Vec::new(),
        response_schema: None,
    };
    let mut options = options.clone();
    options.max_tokens = Some(max_tokens);
    if !model.reasoning {
        options.thinking = ThinkingLevel::Off;
    }
    let mut stream = provider.stream(model, context, options, cancel.clone());
    let message = loop {
        // The provider ends the stream on cancellation; the select covers one that does not.
        let event = tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(RequestError::Aborted),
            event = stream.next() => event,
        };
        match event {
            Some(AssistantStreamEvent::Done { message, .. }) => break message,
            Some(AssistantStreamEvent::Error { error, .. }) => return Err(failure(&error)),
            Some(_) => {}
            None => {
                return Err(RequestError::Failed(
                    "the model stream ended without a result".to_string(),
                ));
            }
        }
    };
    if message.stop_reason.is_failure() {
        return Err(failure(&message));
    }
    let summary = message
        .content
        .iter()
        .filter_map(|c| match c {
            AssistantContent::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n");
    if summary.trim().is_empty() {
        return Err(RequestError::Failed(
            "the model returned an empty summary".to_string(),
        ));
    }
    Ok(summary)
}

/// The error a failed answer stands for.
fn failure(message: &AssistantMessage) -> RequestError {
    if message.stop_reason == StopReason::Aborted {
        return RequestError::Aborted;
    }
    let text = message
        .error_message
        .as_deref()
        .filter(|m| !m.is_empty())
        .unwrap_or("Unknown error");
    RequestError::Failed(text.to_string())
}
