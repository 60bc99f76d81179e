//! Anthropic Messages streaming: thinking with signatures, `input_json_delta`, usage.

use std::collections::HashMap;

use serde_json::{Value, json};

use super::emitter::Emitter;
use super::sse::SseEvent;
use super::{AttemptError, Failure, LlmContext, StreamOptions, WireRequest, parse_data};
use crate::message::{AssistantContent, Message, StopReason, Usage, UserContent};
use crate::model::{Model, ThinkingLevel};

/// Thinking budget in tokens per level.
fn thinking_budget(level: ThinkingLevel) -> Option<u64> {
    match level {
        ThinkingLevel::Off => None,
        ThinkingLevel::Minimal => Some(1024),
        ThinkingLevel::Low => Some(4096),
        ThinkingLevel::Medium => Some(10_240),
        ThinkingLevel::High => Some(20_480),
        ThinkingLevel::Xhigh => Some(32_000),
    }
}

/// What the answer tool tells the model.
const ANSWER_TOOL_DESCRIPTION: &str = "Give your final answer. Call this once, when you are done; \
    its input is the answer and must match its schema.";

/// Build the request for a model.
pub(crate) fn request(model: &Model, ctx: &LlmContext, opts: &StreamOptions) -> WireRequest {
    let mut max_tokens = opts.max_tokens.unwrap_or(model.max_tokens).max(1);
    let mut body = json!({
        "model": model.id,
        "stream": true,
        "messages": messages(ctx),
    });
    let budget = thinking_budget(opts.thinking).filter(|_| model.reasoning);
    let mut system = ctx.system_prompt.clone();
    let mut tools: Vec<Value> = ctx
        .tools
        .iter()
        .map(
            |t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters}),
        )
        .collect();
    let answer_tool = ctx
        .response_schema
        .as_ref()
        .filter(|s| s.native_for(model))
        .map(|schema| {
            let name = answer_tool_name(ctx);
            tools.push(json!({"name": name, "description": ANSWER_TOOL_DESCRIPTION,
                "input_schema": schema.schema()}));
            if budget.is_some() {
                // Thinking forbids forcing a tool: the model is told instead.
                super::append_paragraph(
                    &mut system,
                    &format!(
                        "When you have the final answer, give it by calling the `{name}` tool \
                         (its input is the answer); do not write it as text."
                    ),
                );
            } else if ctx.tools.is_empty() {
                body["tool_choice"] = json!({"type": "tool", "name": name});
            } else {
                // Some tool on every step, so the run ends only through the answer tool.
                body["tool_choice"] = json!({"type": "any"});
            }
            name
        });
    if !system.is_empty() {
        body["system"] = json!([{"type": "text", "text": system,
            "cache_control": {"type": "ephemeral"}}]);
    }
    if !tools.is_empty() {
        body["tools"] = Value::Array(tools);
    }
    if let Some(budget) = budget {
        // The budget must stay below max_tokens and leave room for the answer.
        let budget = budget.min(model.max_tokens.saturating_sub(1024)).max(1024);
        max_tokens = max_tokens
            .max(budget + 1024)
            .min(model.max_tokens.max(budget + 1));
        body["thinking"] = json!({"type": "enabled", "budget_tokens": budget});
    } else if let Some(t) = opts.temperature {
        body["temperature"] = json!(t);
    }
    body["max_tokens"] = json!(max_tokens);
    let mut headers = vec![("anthropic-version".to_string(), "2023-06-01".to_string())];
    if let Some(key) = opts.api_key.as_deref().filter(|k| !k.is_empty()) {
        headers.push(("x-api-key".to_string(), key.to_string()));
    }
    WireRequest {
        url: format!("{}/messages", model.base_url.trim_end_matches('/')),
        headers,
        body,
        answer_tool,
    }
}

/// `final_answer`, or a variant no tool of the run already has.
fn answer_tool_name(ctx: &LlmContext) -> String {
    let mut name = "final_answer".to_string();
    while ctx.tools.iter().any(|t| t.name == name) {
        name.push('_');
    }
    name
}

fn user_blocks(blocks: &[UserContent]) -> Vec<Value> {
    blocks
        .iter()
        .map(|b| match b {
            UserContent::Text(t) => json!({"type": "text", "text": t.text}),
            UserContent::Image(i) => json!({"type": "image", "source": {
                "type": "base64", "media_type": i.mime_type, "data": i.data}}),
        })
        .collect()
}

fn messages(ctx: &LlmContext) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::with_capacity(ctx.messages.len());
    for msg in &ctx.messages {
        match msg {
            Message::User(u) => {
                out.push(json!({"role": "user", "content": user_blocks(&u.content.blocks())}))
            }
            Message::Assistant(a) => {
                let blocks: Vec<Value> = a
                    .content
                    .iter()
                    .filter_map(|c| match c {
                        AssistantContent::Text(t) if !t.text.is_empty() => {
                            Some(json!({"type": "text", "text": t.text}))
                        }
                        AssistantContent::Text(_) => None,
                        AssistantContent::Thinking(t) if t.redacted => t
                            .thinking_signature
                            .as_ref()
                            .map(|sig| json!({"type": "redacted_thinking", "data": sig})),
                        AssistantContent::Thinking(t) => match &t.thinking_signature {
                            Some(sig) => Some(json!({"type": "thinking", "thinking": t.thinking, "signature": sig})),
                            // Unsigned thinking cannot be replayed as thinking.
                            None if !t.thinking.is_empty() => {
                                Some(json!({"type": "text", "text": t.thinking}))
                            }
                            None => None,
                        },
                        AssistantContent::ToolCall(tc) => Some(json!({"type": "tool_use",
                            "id": tc.id, "name": tc.name, "input": tc.arguments})),
                    })
                    .collect();
                if !blocks.is_empty() {
                    out.push(json!({"role": "assistant", "content": blocks}));
                }
            }
            Message::ToolResult(r) => {
                let mut content = user_blocks(&r.content);
                if content.is_empty() {
                    content.push(json!({"type": "text", "text": "(no output)"}));
                }
                let block = json!({"type": "tool_result", "tool_use_id": r.tool_call_id,
                    "content": content, "is_error": r.is_error});
                // Consecutive results travel in one user message.
                match out.last_mut() {
                    Some(last)
                        if last["role"] == "user"
                            && last["content"]
                                .as_array()
                                .and_then(|c| c.first())
                                .is_some_and(|b| b["type"] == "tool_result") =>
                    {
                        if let Some(arr) = last["content"].as_array_mut() {
                            arr.push(block);
                        }
                    }
                    _ => out.push(json!({"role": "user", "content": [block]})),
                }
            }
        }
    }
    // Cache the conversation prefix up to the newest user turn.
    if let Some(last) = out.iter_mut().rev().find(|m| m["role"] == "user")
        && let Some(block) = last["content"].as_array_mut().and_then(|c| c.last_mut())
    {
        block["cache_control"] = json!({"type": "ephemeral"});
    }
    out
}

/// Decoder state for one response.
#[derive(Default)]
pub(crate) struct Decoder {
    blocks: HashMap<u64, usize>,
    stop: Option<Ending>,
    finished: bool,
    /// The answer tool of structured output: its call becomes a text block of its JSON.
    answer_tool: Option<String>,
}

impl Decoder {
    pub(crate) fn new(answer_tool: Option<String>) -> Self {
        Decoder {
            answer_tool,
            ..Decoder::default()
        }
    }

    pub(crate) async fn event(
        &mut self,
        em: &mut Emitter,
        ev: SseEvent,
    ) -> Result<Option<StopReason>, AttemptError> {
        let v = parse_data("Anthropic", &ev.data)?;
        let kind = v
            .get("type")
            .and_then(Value::as_str)
            .or(ev.event.as_deref())
            .unwrap_or("");
        match kind {
            "message_start" => {
                em.start().await?;
                let m = &v["message"];
                if let Some(id) = m.get("id").and_then(Value::as_str) {
                    em.message_mut().response_id = Some(id.to_string());
                }
                if let Some(model) = m.get("model").and_then(Value::as_str)
                    && model != em.message().model
                {
                    em.message_mut().response_model = Some(model.to_string());
                }
                em.usage(&usage(&m["usage"]));
            }
            "content_block_start" => {
                let index = v["index"].as_u64().unwrap_or(0);
                let block = &v["content_block"];
                let ci = match block["type"].as_str().unwrap_or("") {
                    "text" => {
                        let ci = em.begin_text().await?;
                        em.delta(ci, block["text"].as_str().unwrap_or("")).await?;
                        ci
                    }
                    "thinking" => {
                        let ci = em.begin_thinking(false).await?;
                        em.delta(ci, block["thinking"].as_str().unwrap_or(""))
                            .await?;
                        ci
                    }
                    "redacted_thinking" => {
                        let ci = em.begin_thinking(true).await?;
                        em.signature(ci, block["data"].as_str().unwrap_or(""));
                        ci
                    }
                    // Its input JSON streams on as the answer's text.
                    "tool_use" if self.answer_tool.as_deref() == block["name"].as_str() => {
                        em.begin_text().await?
                    }
                    "tool_use" => {
                        em.begin_tool_call(
                            block["id"].as_str().unwrap_or(""),
                            block["name"].as_str().unwrap_or(""),
                        )
                        .await?
                    }
                    // Server tools and future block kinds: nothing to show or replay.
                    _ => return Ok(None),
                };
                self.blocks.insert(index, ci);
            }
            "content_block_delta" => {
                let Some(&ci) = v["index"].as_u64().and_then(|i| self.blocks.get(&i)) else {
                    return Ok(None);
                };
                let d = &v["delta"];
                match d["type"].as_str().unwrap_or("") {
                    "text_delta" => em.delta(ci, d["text"].as_str().unwrap_or("")).await?,
                    "thinking_delta" => em.delta(ci, d["thinking"].as_str().unwrap_or("")).await?,
                    "signature_delta" => em.signature(ci, d["signature"].as_str().unwrap_or("")),
                    "input_json_delta" => {
                        em.delta(ci, d["partial_json"].as_str().unwrap_or(""))
                            .await?
                    }
                    _ => {}
                }
            }
            "content_block_stop" => {
                if let Some(ci) = v["index"].as_u64().and_then(|i| self.blocks.remove(&i)) {
                    em.end(ci).await?;
                }
            }
            "message_delta" => {
                em.usage(&usage(&v["usage"]));
                if let Some(reason) = v.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.stop = Some(stop_reason(reason));
                }
            }
            "message_stop" => {
                self.finished = true;
                return Ok(Some(self.at_eof()?));
            }
            "error" => {
                let kind = v
                    .pointer("/error/type")
                    .and_then(Value::as_str)
                    .unwrap_or("error");
                let msg = v
                    .pointer("/error/message")
                    .and_then(Value::as_str)
                    .unwrap_or("unknown error");
                let failure = format!("provider error ({kind}): {msg}");
                let retryable =
                    matches!(kind, "overloaded_error" | "rate_limit_error" | "api_error");
                return Err(if retryable {
                    Failure::transient(failure)
                } else {
                    Failure::fatal(failure)
                }
                .into());
            }
            // ping and event types added later are ignored.
            _ => {}
        }
        Ok(None)
    }

    pub(crate) fn at_eof(&self) -> Result<StopReason, Failure> {
        if !self.finished {
            return Err(Failure::transient(
                "the stream ended before the response finished",
            ));
        }
        match &self.stop {
            Some(Ending::Stopped(r)) => Ok(*r),
            Some(Ending::Refused) => Err(Failure::refusal(
                "the model refused to answer (stop reason: refusal)",
            )),
            Some(Ending::Unknown(reason)) => Err(Failure::fatal(format!(
                "unexpected stop reason from Anthropic: {reason}"
            ))),
            None => Ok(StopReason::Stop),
        }
    }
}

/// How Anthropic said a message ended.
enum Ending {
    /// A stop reason the loop knows.
    Stopped(StopReason),
    /// `refusal`: the model declined to answer.
    Refused,
    /// A stop reason added after this code was written.
    Unknown(String),
}

fn stop_reason(reason: &str) -> Ending {
    match reason {
        "end_turn" | "pause_turn" | "stop_sequence" => Ending::Stopped(StopReason::Stop),
        "max_tokens" => Ending::Stopped(StopReason::Length),
        "tool_use" => Ending::Stopped(StopReason::ToolUse),
        "refusal" => Ending::Refused,
        other => Ending::Unknown(other.to_string()),
    }
}

fn usage(u: &Value) -> Usage {
    let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
    Usage {
        input: n("input_tokens"),
        output: n("output_tokens"),
        cache_read: n("cache_read_input_tokens"),
        cache_write: n("cache_creation_input_tokens"),
        total_tokens: 0,
        cost: Default::default(),
    }
}
