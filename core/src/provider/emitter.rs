//! Builds the assistant message while emitting pi's stream events, shared by every wire format.

use std::collections::HashMap;

use tokio::sync::mpsc;

use crate::event::AssistantStreamEvent as Ev;
use crate::message::{
    AssistantContent, AssistantMessage, StopReason, TextContent, ThinkingContent, ToolCall, Usage,
};
use crate::model::Model;
use crate::partial_json::parse_arguments;

/// Key under which tool arguments that were not a JSON object are kept for the error result.
pub const INVALID_ARGUMENTS_KEY: &str = "_invalidJsonArguments";

/// The receiver was dropped: nobody listens any more, so the provider stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Closed;

/// Accumulates content blocks and sends the matching events.
pub struct Emitter {
    tx: mpsc::Sender<Ev>,
    msg: AssistantMessage,
    model: Model,
    started: bool,
    open: Vec<usize>,
    tool_json: HashMap<usize, String>,
}

impl Emitter {
    /// A new emitter for one response of `model`.
    pub fn new(tx: mpsc::Sender<Ev>, model: &Model) -> Self {
        Emitter {
            tx,
            msg: AssistantMessage::empty(model),
            model: model.clone(),
            started: false,
            open: Vec::new(),
            tool_json: HashMap::new(),
        }
    }

    /// The message so far.
    pub fn message(&self) -> &AssistantMessage {
        &self.msg
    }

    /// Mutable access for ids, model names and usage.
    pub fn message_mut(&mut self) -> &mut AssistantMessage {
        &mut self.msg
    }

    /// Whether any content block arrived (retries are only allowed before that).
    pub fn has_content(&self) -> bool {
        !self.msg.content.is_empty()
    }

    async fn send(&self, ev: Ev) -> Result<(), Closed> {
        self.tx.send(ev).await.map_err(|_| Closed)
    }

    /// Emit `start` once.
    pub async fn start(&mut self) -> Result<(), Closed> {
        if !self.started {
            self.started = true;
            self.send(Ev::Start).await?;
        }
        Ok(())
    }

    /// Merge a usage snapshot (per-field max).
    pub fn usage(&mut self, usage: &Usage) {
        self.msg.usage.merge_max(usage);
    }

    /// Open a text block; returns its content index.
    pub async fn begin_text(&mut self) -> Result<usize, Closed> {
        self.start().await?;
        let index = self.push(AssistantContent::Text(TextContent {
            text: String::new(),
            text_signature: None,
        }));
        self.send(Ev::TextStart {
            content_index: index,
        })
        .await?;
        Ok(index)
    }

    /// Open a thinking block; returns its content index.
    pub async fn begin_thinking(&mut self, redacted: bool) -> Result<usize, Closed> {
        self.start().await?;
        let index = self.push(AssistantContent::Thinking(ThinkingContent {
            thinking: String::new(),
            thinking_signature: None,
            redacted,
        }));
        self.send(Ev::ThinkingStart {
            content_index: index,
        })
        .await?;
        Ok(index)
    }

    /// Open a tool call block; returns its content index.
    pub async fn begin_tool_call(&mut self, id: &str, name: &str) -> Result<usize, Closed> {
        self.start().await?;
        let index = self.push(AssistantContent::ToolCall(ToolCall {
            id: id.to_string(),
            name: name.to_string(),
            arguments: serde_json::Value::Object(Default::default()),
            thought_signature: None,
        }));
        self.tool_json.insert(index, String::new());
        self.send(Ev::ToolCallStart {
            content_index: index,
            id: id.to_string(),
            name: name.to_string(),
        })
        .await?;
        Ok(index)
    }

    fn push(&mut self, block: AssistantContent) -> usize {
        self.msg.content.push(block);
        let index = self.msg.content.len() - 1;
        self.open.push(index);
        index
    }

    /// Append text (or thinking, or tool JSON) to the block at `index`.
    pub async fn delta(&mut self, index: usize, delta: &str) -> Result<(), Closed> {
        if delta.is_empty() {
            return Ok(());
        }
        let ev = match self.msg.content.get_mut(index) {
            Some(AssistantContent::Text(t)) => {
                t.text.push_str(delta);
                Ev::TextDelta {
                    content_index: index,
                    delta: delta.to_string(),
                }
            }
            Some(AssistantContent::Thinking(t)) => {
                t.thinking.push_str(delta);
                Ev::ThinkingDelta {
                    content_index: index,
                    delta: delta.to_string(),
                }
            }
            Some(AssistantContent::ToolCall(tc)) => {
                // Parsed once at the end; the loop keeps the live partial arguments.
                let _ = tc;
                self.tool_json.entry(index).or_default().push_str(delta);
                Ev::ToolCallDelta {
                    content_index: index,
                    delta: delta.to_string(),
                }
            }
            None => return Ok(()),
        };
        self.send(ev).await
    }

    /// Append to a thinking block's signature.
    pub fn signature(&mut self, index: usize, sig: &str) {
        if let Some(AssistantContent::Thinking(t)) = self.msg.content.get_mut(index) {
            t.thinking_signature
                .get_or_insert_with(String::new)
                .push_str(sig);
        }
    }

    /// Fill in a tool call's id or name when it arrives after the block opened.
    pub fn tool_identity(&mut self, index: usize, id: Option<&str>, name: Option<&str>) {
        if let Some(AssistantContent::ToolCall(tc)) = self.msg.content.get_mut(index) {
            if let Some(id) = id.filter(|s| !s.is_empty()) {
                tc.id = id.to_string();
            }
            if let Some(name) = name.filter(|s| !s.is_empty()) {
                tc.name.push_str(name);
            }
        }
    }

    /// Close the block at `index`, emitting its end event with the full content.
    pub async fn end(&mut self, index: usize) -> Result<(), Closed> {
        let Some(pos) = self.open.iter().position(|&i| i == index) else {
            return Ok(());
        };
        self.open.remove(pos);
        let ev = match self.msg.content.get_mut(index) {
            Some(AssistantContent::Text(t)) => Ev::TextEnd {
                content_index: index,
                content: t.text.clone(),
            },
            Some(AssistantContent::Thinking(t)) => Ev::ThinkingEnd {
                content_index: index,
                content: t.thinking.clone(),
            },
            Some(AssistantContent::ToolCall(tc)) => {
                if let Some(buf) = self.tool_json.remove(&index) {
                    tc.arguments = final_arguments(&buf);
                }
                Ev::ToolCallEnd {
                    content_index: index,
                    tool_call: tc.clone(),
                }
            }
            None => return Ok(()),
        };
        self.send(ev).await
    }

    /// Close every open block, finish usage and send `done`.
    pub async fn done(mut self, reason: StopReason) -> Result<(), Closed> {
        for index in self.open.clone() {
            self.end(index).await?;
        }
        let calls = self.msg.tool_calls().next().is_some();
        let reason = match reason {
            StopReason::Stop if calls => StopReason::ToolUse,
            // A call decoded as the answer's text (structured output) leaves nothing to run.
            StopReason::ToolUse if !calls => StopReason::Stop,
            reason => reason,
        };
        self.msg.stop_reason = reason;
        self.msg.usage.finish(&self.model.cost);
        self.start().await?;
        let message = self.msg.clone();
        self.send(Ev::Done { reason, message }).await
    }

    /// End with an error or abort, keeping what arrived; open blocks stay as they are.
    pub async fn fail(mut self, reason: StopReason, error: String) -> Result<(), Closed> {
        for index in self.open.clone() {
            if let Some(buf) = self.tool_json.remove(&index)
                && let Some(AssistantContent::ToolCall(tc)) = self.msg.content.get_mut(index)
            {
                tc.arguments = parse_arguments(&buf);
            }
        }
        self.msg.stop_reason = reason;
        self.msg.error_message = Some(error);
        self.msg.usage.finish(&self.model.cost);
        let error = self.msg.clone();
        self.send(Ev::Error { reason, error }).await
    }
}

/// Arguments that are not a JSON object become an object carrying the raw text, so the
/// validator can tell the model what it sent instead of silently running with `{}`.
fn final_arguments(raw: &str) -> serde_json::Value {
    if raw.trim().is_empty() {
        return serde_json::Value::Object(Default::default());
    }
    match serde_json::from_str::<serde_json::Value>(raw) {
        Ok(v @ serde_json::Value::Object(_)) => v,
        _ => serde_json::json!({ INVALID_ARGUMENTS_KEY: raw }),
    }
}
