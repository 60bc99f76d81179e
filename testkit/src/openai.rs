//! The OpenAI Chat Completions streaming wire format.

use crate::script::ScriptStop;
use crate::wire::{Encoder, Step, StreamContext, data_frame};
use serde::Serialize;

/// Encodes a turn as `chat.completion.chunk` frames ending in `[DONE]`.
pub(crate) struct OpenAiEncoder {
    ctx: StreamContext,
    id: String,
    /// Index of the next tool call, as OpenAI numbers them per response.
    next_tool: usize,
}

impl OpenAiEncoder {
    /// An encoder for one response.
    pub(crate) fn new(ctx: StreamContext) -> Self {
        let id = format!("chatcmpl-scripted-{}", ctx.turn_number);
        OpenAiEncoder {
            ctx,
            id,
            next_tool: 0,
        }
    }

    fn chunk(&self, delta: Delta<'_>, finish_reason: Option<&str>) -> Step {
        data_frame(&Chunk {
            id: &self.id,
            object: "chat.completion.chunk",
            created: 0,
            model: &self.ctx.model,
            choices: [Choice {
                index: 0,
                delta,
                finish_reason,
            }],
        })
    }
}

impl Encoder for OpenAiEncoder {
    fn open(&mut self, out: &mut Vec<Step>) {
        out.push(self.chunk(
            Delta {
                role: Some("assistant"),
                content: Some(""),
                ..Delta::default()
            },
            None,
        ));
    }

    fn text(&mut self, text: &str, out: &mut Vec<Step>) {
        out.push(self.chunk(
            Delta {
                content: Some(text),
                ..Delta::default()
            },
            None,
        ));
    }

    fn thinking(&mut self, text: &str, _signature: Option<&str>, out: &mut Vec<Step>) {
        out.push(self.chunk(
            Delta {
                reasoning_content: Some(text),
                ..Delta::default()
            },
            None,
        ));
    }

    fn tool_call(&mut self, id: &str, name: &str, args: &[String], out: &mut Vec<Step>) {
        let index = self.next_tool;
        self.next_tool += 1;
        let head = ToolCallDelta {
            index,
            id: Some(id),
            kind: Some("function"),
            function: FunctionDelta {
                name: Some(name),
                arguments: "",
            },
        };
        out.push(self.chunk(
            Delta {
                tool_calls: vec![head],
                ..Delta::default()
            },
            None,
        ));
        for piece in args {
            let more = ToolCallDelta {
                index,
                id: None,
                kind: None,
                function: FunctionDelta {
                    name: None,
                    arguments: piece,
                },
            };
            out.push(self.chunk(
                Delta {
                    tool_calls: vec![more],
                    ..Delta::default()
                },
                None,
            ));
        }
    }

    fn unknown(&mut self, name: &str, out: &mut Vec<Step>) {
        out.push(data_frame(&Unknown {
            object: name,
            kind: name,
        }));
    }

    fn close(&mut self, stop: ScriptStop, out: &mut Vec<Step>) {
        let reason = match stop {
            ScriptStop::Stop => "stop",
            ScriptStop::Length => "length",
            ScriptStop::ToolUse => "tool_calls",
            ScriptStop::Refusal | ScriptStop::ContentFilter => "content_filter",
        };
        out.push(self.chunk(Delta::default(), Some(reason)));
        if let Some(usage) = self.ctx.usage {
            let prompt = usage.input + usage.cache_read;
            out.push(data_frame(&UsageChunk {
                id: &self.id,
                object: "chat.completion.chunk",
                choices: [],
                usage: Usage {
                    prompt_tokens: prompt,
                    completion_tokens: usage.output,
                    total_tokens: prompt + usage.output,
                    prompt_tokens_details: PromptDetails {
                        cached_tokens: usage.cache_read,
                    },
                },
            }));
        }
        out.push(Step::Chunk(b"data: [DONE]\n\n".to_vec()));
    }
}

// Wire structs: derived serialization keeps keys in the documented order.

#[derive(Serialize)]
struct Chunk<'a> {
    id: &'a str,
    object: &'static str,
    created: u64,
    model: &'a str,
    choices: [Choice<'a>; 1],
}

#[derive(Serialize)]
struct Choice<'a> {
    index: u32,
    delta: Delta<'a>,
    finish_reason: Option<&'a str>,
}

#[derive(Serialize, Default)]
struct Delta<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    role: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    content: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning_content: Option<&'a str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<ToolCallDelta<'a>>,
}

#[derive(Serialize)]
struct ToolCallDelta<'a> {
    index: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a str>,
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    kind: Option<&'a str>,
    function: FunctionDelta<'a>,
}

#[derive(Serialize)]
struct FunctionDelta<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<&'a str>,
    arguments: &'a str,
}

#[derive(Serialize)]
struct Unknown<'a> {
    object: &'a str,
    #[serde(rename = "type")]
    kind: &'a str,
}

#[derive(Serialize)]
struct UsageChunk<'a> {
    id: &'a str,
    object: &'static str,
    choices: [(); 0],
    usage: Usage,
}

#[derive(Serialize)]
struct Usage {
    prompt_tokens: u64,
    completion_tokens: u64,
    total_tokens: u64,
    prompt_tokens_details: PromptDetails,
}

#[derive(Serialize)]
struct PromptDetails {
    cached_tokens: u64,
}

#[cfg(test)]
mod tests {
    use crate::client::{RawResponse, post_json};
    use crate::{Event, Script, ScriptUsage, ScriptedServer, Turn};
    use serde_json::{Value, json};

    async fn run(turn: Turn) -> anyhow::Result<RawResponse> {
        let server = ScriptedServer::start(Script::new(vec![turn])).await?;
        let body = json!({"model": "gpt-x", "stream": true, "messages": []});
        Ok(post_json(server.addr(), "/v1/chat/completions", &body).await?)
    }

    /// The JSON payloads, with `[DONE]` checked and removed from the end.
    fn payloads(response: &RawResponse) -> anyhow::Result<Vec<Value>> {
        let mut data = response.sse_data();
        anyhow::ensure!(
            data.pop().as_deref() == Some("[DONE]"),
            "no [DONE] at the end"
        );
        Ok(data
            .iter()
            .map(|d| serde_json::from_str(d))
            .collect::<Result<_, _>>()?)
    }

    fn chunk(delta: Value, finish: Value) -> Value {
        json!({
            "id": "chatcmpl-scripted-1",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": "gpt-x",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]
        })
    }

    #[tokio::test]
    async fn text_turn_streams_exact_chunks_with_usage_and_done() -> anyhow::Result<()> {
        let usage = ScriptUsage {
            input: 10,
            output: 5,
            cache_read: 3,
            cache_write: 2,
        };
        let turn = Turn::stream(vec![Event::text("Hel"), Event::text("lo")]).with_usage(usage);
        let response = run(turn).await?;
        assert_eq!(response.status, 200);
        assert_eq!(response.header("content-type"), Some("text/event-stream"));
        assert_eq!(response.header("transfer-encoding"), Some("chunked"));
        assert!(response.complete);
        // Byte-exact first frame: key order matches the real API.
        assert_eq!(
            response.chunks[0],
            b"data: {\"id\":\"chatcmpl-scripted-1\",\"object\":\"chat.completion.chunk\",\
              \"created\":0,\"model\":\"gpt-x\",\"choices\":[{\"index\":0,\"delta\":\
              {\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}\n\n"
        );
        // One SSE frame per HTTP chunk.
        assert_eq!(response.chunks.len(), 6);
        for c in &response.chunks {
            assert!(c.ends_with(b"\n\n") && c.windows(2).filter(|w| w == b"\n\n").count() == 1);
        }
        assert_eq!(
            payloads(&response)?,
            vec![
                chunk(json!({"role": "assistant", "content": ""}), Value::Null),
                chunk(json!({"content": "Hel"}), Value::Null),
                chunk(json!({"content": "lo"}), Value::Null),
                chunk(json!({}), json!("stop")),
                json!({
                    "id": "chatcmpl-scripted-1",
                    "object": "chat.completion.chunk",
                    "choices": [],
                    "usage": {
                        "prompt_tokens": 13,
                        "completion_tokens": 5,
                        "total_tokens": 18,
                        "prompt_tokens_details": {"cached_tokens": 3}
                    }
                }),
            ]
        );
        Ok(())
    }

    #[tokio::test]
    async fn tool_call_args_arrive_in_pieces_per_index() -> anyhow::Result<()> {
        let turn = Turn::stream(vec![
            Event::tool_call("call_a", "read", &["{\"pa", "th\":\"a\"}"]),
            Event::tool_call("call_b", "ls", &["{}"]),
        ]);
        let response = run(turn).await?;
        let tool = |delta: Value| chunk(json!({"tool_calls": [delta]}), Value::Null);
        assert_eq!(
            payloads(&response)?,
            vec![
                chunk(json!({"role": "assistant", "content": ""}), Value::Null),
                tool(json!({"index": 0, "id": "call_a", "type": "function",
                            "function": {"name": "read", "arguments": ""}})),
                tool(json!({"index": 0, "function": {"arguments": "{\"pa"}})),
                tool(json!({"index": 0, "function": {"arguments": "th\":\"a\"}"}})),
                tool(json!({"index": 1, "id": "call_b", "type": "function",
                            "function": {"name": "ls", "arguments": ""}})),
                tool(json!({"index": 1, "function": {"arguments": "{}"}})),
                chunk(json!({}), json!("tool_calls")),
            ]
        );
        Ok(())
    }

    #[tokio::test]
    async fn thinking_unknown_and_refusal_map_to_openai_vocabulary() -> anyhow::Result<()> {
        let turn = Turn::stream(vec![
            Event::thinking_signed("hmm", "ignored"),
            Event::unknown("mystery.event"),
        ])
        .with_stop(crate::ScriptStop::Refusal);
        let response = run(turn).await?;
        assert_eq!(
            payloads(&response)?,
            vec![
                chunk(json!({"role": "assistant", "content": ""}), Value::Null),
                chunk(json!({"reasoning_content": "hmm"}), Value::Null),
                json!({"object": "mystery.event", "type": "mystery.event"}),
                chunk(json!({}), json!("content_filter")),
            ]
        );
        Ok(())
    }
}
