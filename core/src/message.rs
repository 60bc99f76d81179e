//! The message model shared by the loop, providers and sessions, with pi's JSON field names.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Milliseconds since the Unix epoch, as pi stores message timestamps.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// Plain text content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextContent {
    /// The text.
    pub text: String,
    /// Provider signature attached to the text (OpenAI Responses), replayed verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text_signature: Option<String>,
}

/// Model reasoning, with the signature some providers require for replay.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThinkingContent {
    /// The reasoning text (empty for redacted thinking).
    pub thinking: String,
    /// Opaque signature (Anthropic) or encrypted payload for redacted blocks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_signature: Option<String>,
    /// True when the provider redacted the reasoning and only the signature remains.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub redacted: bool,
}

/// An inline image, base64-encoded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageContent {
    /// Base64 data without a data-URL prefix.
    pub data: String,
    /// MIME type such as `image/png`.
    pub mime_type: String,
}

/// A tool call requested by the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCall {
    /// Provider-assigned call id.
    pub id: String,
    /// Tool name.
    pub name: String,
    /// Parsed arguments (an object; `{}` when the model sent nothing parseable).
    pub arguments: Value,
    /// Google thought signature, replayed to the same provider only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thought_signature: Option<String>,
}

/// A block of assistant content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum AssistantContent {
    /// Visible text.
    Text(TextContent),
    /// Reasoning.
    Thinking(ThinkingContent),
    /// A tool call.
    ToolCall(ToolCall),
}

/// A block of user or tool-result content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum UserContent {
    /// Text.
    Text(TextContent),
    /// An image.
    Image(ImageContent),
}

impl UserContent {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        UserContent::Text(TextContent {
            text: text.into(),
            text_signature: None,
        })
    }
}

/// User message content: pi stores either a bare string or a list of blocks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum UserBody {
    /// A plain string.
    Text(String),
    /// Text and image blocks.
    Blocks(Vec<UserContent>),
}

impl UserBody {
    /// The content as blocks, whichever form it was stored in.
    pub fn blocks(&self) -> Vec<UserContent> {
        match self {
            UserBody::Text(t) => vec![UserContent::text(t.clone())],
            UserBody::Blocks(b) => b.clone(),
        }
    }

    /// The text blocks joined by newlines (pictures are not text).
    pub fn text(&self) -> String {
        match self {
            UserBody::Text(t) => t.clone(),
            UserBody::Blocks(blocks) => blocks
                .iter()
                .filter_map(|b| match b {
                    UserContent::Text(t) => Some(t.text.as_str()),
                    UserContent::Image(_) => None,
                })
                .collect::<Vec<_>>()
                .join("\n"),
        }
    }
}

/// Cost in currency units, per usage field.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Cost {
    /// Cost of input tokens.
    pub input: f64,
    /// Cost of output tokens.
    pub output: f64,
    /// Cost of cache reads.
    pub cache_read: f64,
    /// Cost of cache writes.
    pub cache_write: f64,
    /// Sum of the above.
    pub total: f64,
}

/// Token usage of one assistant message.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Usage {
    /// Uncached input tokens.
    pub input: u64,
    /// Output tokens (including reasoning).
    pub output: u64,
    /// Input tokens served from the prompt cache.
    pub cache_read: u64,
    /// Input tokens written to the prompt cache.
    pub cache_write: u64,
    /// input + output + cacheRead + cacheWrite.
    pub total_tokens: u64,
    /// Cost of this usage.
    pub cost: Cost,
}

impl Usage {
    /// Merge a usage snapshot: every field takes the max, never the sum, because providers
    /// report cumulative snapshots, complementary pieces or a single final report.
    pub fn merge_max(&mut self, other: &Usage) {
        self.input = self.input.max(other.input);
        self.output = self.output.max(other.output);
        self.cache_read = self.cache_read.max(other.cache_read);
        self.cache_write = self.cache_write.max(other.cache_write);
        self.total_tokens = self.total_tokens.max(other.total_tokens);
    }

    /// Recompute `total_tokens` and cost from the token fields and per-million prices.
    pub fn finish(&mut self, prices: &crate::model::ModelCost) {
        let sum = self.input + self.output + self.cache_read + self.cache_write;
        self.total_tokens = self.total_tokens.max(sum);
        let per = |tokens: u64, price: f64| tokens as f64 * price / 1_000_000.0;
        self.cost = Cost {
            input: per(self.input, prices.input),
            output: per(self.output, prices.output),
            cache_read: per(self.cache_read, prices.cache_read),
            cache_write: per(self.cache_write, prices.cache_write),
            total: 0.0,
        };
        self.cost.total =
            self.cost.input + self.cost.output + self.cost.cache_read + self.cost.cache_write;
    }
}

/// Why an assistant message ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum StopReason {
    /// The model finished.
    Stop,
    /// The output token limit was hit.
    Length,
    /// The model asked for tools.
    ToolUse,
    /// The request or stream failed.
    Error,
    /// The run was aborted.
    Aborted,
}

impl StopReason {
    /// Error or aborted: the message ends the run and is dropped from later provider requests.
    pub fn is_failure(self) -> bool {
        matches!(self, StopReason::Error | StopReason::Aborted)
    }
}

/// [`AssistantMessage::answered`] from what a transcript line records: a message that
/// ended normally, or a failed one with content (other than an empty text block), a
/// response id or tokens.
pub fn answered(stop: StopReason, has_content: bool, has_response_id: bool, usage: &Usage) -> bool {
    let tokens = usage.input + usage.output + usage.cache_read + usage.cache_write;
    !stop.is_failure() || has_content || has_response_id || tokens > 0 || usage.total_tokens > 0
}

/// A message from the user.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UserMessage {
    /// Text or blocks.
    pub content: UserBody,
    /// Milliseconds since the epoch.
    #[serde(default)]
    pub timestamp: i64,
}

impl UserMessage {
    /// A text message stamped now.
    pub fn text(text: impl Into<String>) -> Self {
        UserMessage {
            content: UserBody::Text(text.into()),
            timestamp: now_ms(),
        }
    }
}

/// A message from the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AssistantMessage {
    /// Text, thinking and tool-call blocks in stream order.
    pub content: Vec<AssistantContent>,
    /// Wire API that produced it (`openai-completions`, `anthropic-messages`, …).
    #[serde(default)]
    pub api: String,
    /// Provider name.
    #[serde(default)]
    pub provider: String,
    /// Model id.
    #[serde(default)]
    pub model: String,
    /// Model id the server reported, when it differs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_model: Option<String>,
    /// Server-side response id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_id: Option<String>,
    /// Token usage.
    #[serde(default)]
    pub usage: Usage,
    /// Why it ended.
    pub stop_reason: StopReason,
    /// Human-readable failure, for `error` and `aborted`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
    /// An `error` the provider itself called a refusal (Anthropic's `refusal` stop reason,
    /// OpenAI's `content_filter` finish or `refusal` text). March's own field: pi's stop
    /// reasons have no refusal, and pi ignores fields it does not know.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub refused: bool,
    /// Milliseconds since the epoch.
    #[serde(default)]
    pub timestamp: i64,
}

impl AssistantMessage {
    /// An empty message for a model, to be filled by a stream.
    pub fn empty(model: &crate::model::Model) -> Self {
        AssistantMessage {
            content: Vec::new(),
            api: model.api.as_str().to_string(),
            provider: model.provider.clone(),
            model: model.id.clone(),
            response_model: None,
            response_id: None,
            usage: Usage::default(),
            stop_reason: StopReason::Stop,
            error_message: None,
            refused: false,
            timestamp: now_ms(),
        }
    }

    /// Whether a model answered any of it: false for a request that failed or was
    /// cancelled before the server sent anything of an answer (refused connections, error
    /// statuses), which cost nothing and are not counted as calls.
    pub fn answered(&self) -> bool {
        // The loop gives a failed message one empty text block (pi's shape): that is not
        // an answer.
        let has_content = self
            .content
            .iter()
            .any(|c| !matches!(c, AssistantContent::Text(t) if t.text.is_empty()));
        answered(
            self.stop_reason,
            has_content,
            self.response_id.is_some(),
            &self.usage,
        )
    }

    /// The tool calls in source order.
    pub fn tool_calls(&self) -> impl Iterator<Item = &ToolCall> {
        self.content.iter().filter_map(|c| match c {
            AssistantContent::ToolCall(tc) => Some(tc),
            _ => None,
        })
    }

    /// All visible text joined.
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(|c| match c {
                AssistantContent::Text(t) => Some(t.text.as_str()),
                _ => None,
            })
            .collect()
    }
}

/// The result of one tool call, as the model sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultMessage {
    /// The call this answers.
    pub tool_call_id: String,
    /// The tool's name.
    pub tool_name: String,
    /// Text and images.
    pub content: Vec<UserContent>,
    /// Structured details for UIs (diffs, paths); not sent to the model.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub details: Value,
    /// True when the tool failed.
    #[serde(default)]
    pub is_error: bool,
    /// Milliseconds since the epoch.
    #[serde(default)]
    pub timestamp: i64,
    /// What the call itself cost beyond the model's tokens (a generated image), counted
    /// into the session's cost; absent for almost every call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
}

/// Any message of the conversation, tagged by `role` as in pi.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "camelCase")]
pub enum Message {
    /// From the user.
    User(UserMessage),
    /// From the model.
    Assistant(AssistantMessage),
    /// A tool's answer.
    ToolResult(ToolResultMessage),
}

impl Message {
    /// A user text message stamped now.
    pub fn user(text: impl Into<String>) -> Self {
        Message::User(UserMessage::text(text))
    }

    /// The role name as pi writes it.
    pub fn role(&self) -> &'static str {
        match self {
            Message::User(_) => "user",
            Message::Assistant(_) => "assistant",
            Message::ToolResult(_) => "toolResult",
        }
    }

    /// The assistant message, if this is one.
    pub fn as_assistant(&self) -> Option<&AssistantMessage> {
        match self {
            Message::Assistant(a) => Some(a),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pi_fixture_assistant_message_round_trips() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../shared/fixtures/pi-sessions/assistant-message-with-thinking-code.json"
        );
        let raw = std::fs::read_to_string(path).unwrap();
        let msg: Message = serde_json::from_str(&raw).unwrap();
        let Message::Assistant(a) = &msg else {
            panic!("expected assistant, got {}", msg.role())
        };
        assert_eq!(a.stop_reason, StopReason::Stop);
        assert_eq!(a.usage.total_tokens, 91605);
        assert!(
            matches!(&a.content[0], AssistantContent::Thinking(t) if t.thinking_signature.is_some())
        );
        let original: Value = serde_json::from_str(&raw).unwrap();
        assert_eq!(serde_json::to_value(&msg).unwrap(), original);
    }

    #[test]
    fn pi_fixture_session_messages_parse() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../shared/fixtures/pi-sessions/large-session.v1.head25.jsonl"
        );
        let raw = std::fs::read_to_string(path).unwrap();
        let mut seen = 0;
        for line in raw.lines() {
            let entry: Value = serde_json::from_str(line).unwrap();
            if entry["type"] == "message" {
                let msg: Message = serde_json::from_value(entry["message"].clone()).unwrap();
                if let Message::Assistant(a) = &msg {
                    assert!(a.stop_reason != StopReason::Aborted || a.error_message.is_some());
                }
                seen += 1;
            }
        }
        assert!(seen > 10, "only {seen} messages parsed");
    }

    #[test]
    fn usage_merge_takes_max_per_field() {
        let mut u = Usage {
            input: 10,
            output: 1,
            ..Default::default()
        };
        u.merge_max(&Usage {
            input: 10,
            output: 5,
            cache_read: 3,
            ..Default::default()
        });
        u.merge_max(&Usage {
            input: 0,
            output: 4,
            ..Default::default()
        });
        assert_eq!((u.input, u.output, u.cache_read), (10, 5, 3));
    }
}
