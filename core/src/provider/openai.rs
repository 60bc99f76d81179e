//! OpenAI Chat Completions streaming (also xAI, DeepSeek, OpenRouter and local servers).

use std::collections::HashMap;

use serde_json::{Value, json};

use super::emitter::Emitter;
use super::sse::SseEvent;
use super::{AttemptError, Failure, LlmContext, StreamOptions, WireRequest, parse_data};
use crate::message::{AssistantContent, Message, StopReason, Usage, UserContent};
use crate::model::{Model, ReasoningFormat, ThinkingLevel};

/// Build the request for a model.
pub(crate) fn request(model: &Model, ctx: &LlmContext, opts: &StreamOptions) -> WireRequest {
    let thinking_on = model.reasoning && opts.thinking != ThinkingLevel::Off;
    let mut body = json!({
        "model": model.id,
        "messages": messages(model, ctx, thinking_on),
        "stream": true,
        "stream_options": {"include_usage": true},
    });
    if !ctx.tools.is_empty() {
        body["tools"] = ctx
            .tools
            .iter()
            .map(|t| {
                json!({"type": "function", "function": {
                    "name": t.name, "description": t.description, "parameters": t.parameters}})
            })
            .collect();
    }
    if let Some(schema) = ctx.response_schema.as_ref().filter(|s| s.native_for(model)) {
        body["response_format"] = json!({"type": "json_schema", "json_schema": {
            "name": schema.name(),
            "schema": schema.schema(),
            "strict": schema.strict_compatible(),
        }});
    }
    if let Some(max) = opts.max_tokens {
        let key = if model.provider == "openai" {
            "max_completion_tokens"
        } else {
            "max_tokens"
        };
        body[key] = json!(max);
    }
    if let Some(t) = opts.temperature {
        body["temperature"] = json!(t);
    }
    apply_reasoning(&mut body, model, opts.thinking);
    let mut headers = Vec::new();
    if let Some(key) = opts.api_key.as_deref().filter(|k| !k.is_empty()) {
        headers.push(("authorization".to_string(), format!("Bearer {key}")));
    }
    WireRequest {
        url: format!("{}/chat/completions", model.base_url.trim_end_matches('/')),
        headers,
        body,
        answer_tool: None,
    }
}

/// Map a thinking level onto the provider's reasoning parameters; nothing for models that
/// do not reason.
fn apply_reasoning(body: &mut Value, model: &Model, level: ThinkingLevel) {
    if !model.reasoning {
        return;
    }
    let clamped = match level {
        ThinkingLevel::Off => None,
        ThinkingLevel::Minimal | ThinkingLevel::Low => Some("low"),
        ThinkingLevel::Medium => Some("medium"),
        ThinkingLevel::High | ThinkingLevel::Xhigh => Some("high"),
    };
    match model.reasoning_format {
        ReasoningFormat::OpenAiEffort => {
            let effort = match (model.provider.as_str(), level) {
                ("openai", ThinkingLevel::Minimal) => Some("minimal"),
                _ => clamped,
            };
            if let Some(e) = effort {
                body["reasoning_effort"] = json!(e);
            }
        }
        ReasoningFormat::Deepseek => {
            // DeepSeek thinks by default, so "off" must be said explicitly.
            let kind = if clamped.is_some() {
                "enabled"
            } else {
                "disabled"
            };
            body["thinking"] = json!({"type": kind});
            if let Some(e) = clamped {
                body["reasoning_effort"] = json!(e);
            }
        }
        ReasoningFormat::OpenRouter => {
            if let Some(e) = clamped {
                body["reasoning"] = json!({"effort": e});
            }
        }
        ReasoningFormat::TemplateKwargs => {
            body["chat_template_kwargs"] = json!({"enable_thinking": clamped.is_some()});
        }
        ReasoningFormat::None => {}
    }
}

fn image_part(mime: &str, data: &str) -> Value {
    json!({"type": "image_url", "image_url": {"url": format!("data:{mime};base64,{data}")}})
}

fn user_parts(blocks: &[UserContent]) -> Value {
    if let [UserContent::Text(t)] = blocks {
        return json!(t.text);
    }
    blocks
        .iter()
        .map(|b| match b {
            UserContent::Text(t) => json!({"type": "text", "text": t.text}),
            UserContent::Image(i) => image_part(&i.mime_type, &i.data),
        })
        .collect()
}

fn messages(model: &Model, ctx: &LlmContext, thinking_on: bool) -> Vec<Value> {
    let mut out = Vec::with_capacity(ctx.messages.len() + 1);
    if !ctx.system_prompt.is_empty() {
        out.push(json!({"role": "system", "content": ctx.system_prompt}));
    }
    // Tool messages carry text only; their images follow in one user message.
    let mut pending_images: Vec<Value> = Vec::new();
    let flush = |out: &mut Vec<Value>, images: &mut Vec<Value>| {
        if !images.is_empty() {
            let mut parts =
                vec![json!({"type": "text", "text": "Attached image(s) from tool result:"})];
            parts.append(images);
            out.push(json!({"role": "user", "content": parts}));
        }
    };
    for msg in &ctx.messages {
        if !matches!(msg, Message::ToolResult(_)) {
            flush(&mut out, &mut pending_images);
        }
        match msg {
            Message::User(u) => {
                out.push(json!({"role": "user", "content": user_parts(&u.content.blocks())}))
            }
            Message::Assistant(a) => {
                let text: String = a.text();
                let calls: Vec<Value> = a
                    .tool_calls()
                    .map(|tc| {
                        json!({"id": tc.id, "type": "function", "function": {
                            "name": tc.name, "arguments": tc.arguments.to_string()}})
                    })
                    .collect();
                let reasoning: String = a
                    .content
                    .iter()
                    .filter_map(|c| match c {
                        AssistantContent::Thinking(t) if !t.redacted => Some(t.thinking.as_str()),
                        _ => None,
                    })
                    .collect();
                if text.is_empty() && calls.is_empty() {
                    continue;
                }
                let mut m = json!({"role": "assistant", "content": if text.is_empty() { Value::Null } else { json!(text) }});
                if !calls.is_empty() {
                    m["tool_calls"] = json!(calls);
                }
                // DeepSeek rejects follow-up requests that drop its own reasoning while thinking.
                if model.reasoning_format == ReasoningFormat::Deepseek
                    && thinking_on
                    && !reasoning.is_empty()
                {
                    m["reasoning_content"] = json!(reasoning);
                }
                out.push(m);
            }
            Message::ToolResult(r) => {
                let text: Vec<&str> = r
                    .content
                    .iter()
                    .filter_map(|c| match c {
                        UserContent::Text(t) => Some(t.text.as_str()),
                        UserContent::Image(_) => None,
                    })
                    .collect();
                for c in &r.content {
                    if let UserContent::Image(i) = c {
                        pending_images.push(image_part(&i.mime_type, &i.data));
                    }
                }
                let text = if text.is_empty() {
                    "(see attached image)".to_string()
                } else {
                    text.join("\n")
                };
                out.push(json!({"role": "tool", "tool_call_id": r.tool_call_id, "content": text}));
            }
        }
    }
    flush(&mut out, &mut pending_images);
    out
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Block {
    Text(usize),
    Thinking(usize),
    Tool(usize),
}

/// Decoder state for one response.
#[derive(Default)]
pub(crate) struct Decoder {
    current: Option<Block>,
    tools: HashMap<u64, usize>,
    finish: Option<StopReason>,
    /// `finish_reason: content_filter`: the provider withheld the answer.
    filtered: bool,
    /// The model sent `refusal` text instead of an answer.
    refused: bool,
}

impl Decoder {
    async fn switch(&mut self, em: &mut Emitter, next: Option<Block>) -> Result<(), AttemptError> {
        if self.current != next
            && let Some(cur) = self.current.take()
        {
            let (Block::Text(i) | Block::Thinking(i) | Block::Tool(i)) = cur;
            em.end(i).await?;
        }
        self.current = next;
        Ok(())
    }

    /// Append to the open text or thinking block, opening one if another kind is open.
    async fn append(
        &mut self,
        em: &mut Emitter,
        thinking: bool,
        t: &str,
    ) -> Result<(), AttemptError> {
        let idx = match self.current {
            Some(Block::Thinking(i)) if thinking => i,
            Some(Block::Text(i)) if !thinking => i,
            _ => {
                self.switch(em, None).await?;
                let i = if thinking {
                    em.begin_thinking(false).await?
                } else {
                    em.begin_text().await?
                };
                self.current = Some(if thinking {
                    Block::Thinking(i)
                } else {
                    Block::Text(i)
                });
                i
            }
        };
        em.delta(idx, t).await?;
        Ok(())
    }

    pub(crate) async fn event(
        &mut self,
        em: &mut Emitter,
        ev: SseEvent,
    ) -> Result<Option<StopReason>, AttemptError> {
        let data = ev.data.trim();
        if data == "[DONE]" {
            return Ok(Some(self.at_eof()?));
        }
        let v = parse_data("the OpenAI-compatible server", data)?;
        if let Some(err) = v.get("error") {
            let msg = err
                .get("message")
                .and_then(Value::as_str)
                .map(str::to_string)
                .unwrap_or_else(|| err.to_string());
            return Err(Failure::transient(format!("provider error: {msg}")).into());
        }
        em.start().await?;
        if let Some(id) = v.get("id").and_then(Value::as_str)
            && em.message().response_id.is_none()
        {
            em.message_mut().response_id = Some(id.to_string());
        }
        if let Some(m) = v.get("model").and_then(Value::as_str)
            && m != em.message().model
        {
            em.message_mut().response_model = Some(m.to_string());
        }
        if let Some(u) = v.get("usage").filter(|u| u.is_object()) {
            em.usage(&usage(u));
        }
        let Some(choice) = v.get("choices").and_then(|c| c.get(0)) else {
            return Ok(None);
        };
        if let Some(delta) = choice.get("delta") {
            for key in ["reasoning_content", "reasoning", "reasoning_text"] {
                if let Some(t) = delta
                    .get(key)
                    .and_then(Value::as_str)
                    .filter(|t| !t.is_empty())
                {
                    self.append(em, true, t).await?;
                    break;
                }
            }
            if let Some(t) = delta
                .get("content")
                .and_then(Value::as_str)
                .filter(|t| !t.is_empty())
            {
                self.append(em, false, t).await?;
            }
            // Structured-output models decline in a field of their own; its words are the
            // answer's text, so the user reads them.
            if let Some(t) = delta
                .get("refusal")
                .and_then(Value::as_str)
                .filter(|t| !t.is_empty())
            {
                self.refused = true;
                self.append(em, false, t).await?;
            }
            if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
                for call in calls {
                    self.tool_delta(em, call).await?;
                }
            }
        }
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            self.switch(em, None).await?;
            self.finish = Some(match reason {
                "length" => StopReason::Length,
                "tool_calls" | "function_call" => StopReason::ToolUse,
                "content_filter" => {
                    self.filtered = true;
                    StopReason::Error
                }
                _ => StopReason::Stop,
            });
        }
        Ok(None)
    }

    async fn tool_delta(&mut self, em: &mut Emitter, call: &Value) -> Result<(), AttemptError> {
        let index = call.get("index").and_then(Value::as_u64).unwrap_or(0);
        let id = call.get("id").and_then(Value::as_str);
        let name = call.pointer("/function/name").and_then(Value::as_str);
        let args = call
            .pointer("/function/arguments")
            .and_then(Value::as_str)
            .unwrap_or("");
        let ci = match self.tools.get(&index) {
            Some(&ci) => {
                if self.current != Some(Block::Tool(ci)) {
                    self.switch(em, Some(Block::Tool(ci))).await?;
                }
                em.tool_identity(ci, id, name);
                ci
            }
            None => {
                self.switch(em, None).await?;
                let ci = em
                    .begin_tool_call(id.unwrap_or_default(), name.unwrap_or_default())
                    .await?;
                self.tools.insert(index, ci);
                self.current = Some(Block::Tool(ci));
                ci
            }
        };
        em.delta(ci, args).await?;
        Ok(())
    }

    pub(crate) fn at_eof(&self) -> Result<StopReason, Failure> {
        match self.finish {
            Some(_) if self.filtered => Err(Failure::refusal(
                "the provider's content filter blocked the response",
            )),
            Some(_) if self.refused => Err(Failure::refusal("the model refused to answer")),
            Some(reason) => Ok(reason),
            None => Err(Failure::transient(
                "the stream ended before the response finished",
            )),
        }
    }
}

fn usage(u: &Value) -> Usage {
    let n = |p: &str| u.pointer(p).and_then(Value::as_u64).unwrap_or(0);
    let prompt = n("/prompt_tokens");
    let cached = n("/prompt_tokens_details/cached_tokens").max(n("/prompt_cache_hit_tokens"));
    Usage {
        input: prompt.saturating_sub(cached),
        output: n("/completion_tokens"),
        cache_read: cached,
        cache_write: 0,
        total_tokens: n("/total_tokens"),
        cost: Default::default(),
    }
}
