//! The Anthropic Messages streaming wire format.

use crate::script::ScriptStop;
use crate::wire::{Encoder, Step, StreamContext, event_frame};
use serde::Serialize;

/// The kind of the content block currently open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OpenBlock {
    None,
    Text,
    Thinking,
}

/// Encodes a turn as `message_start` … `message_stop` events.
pub(crate) struct AnthropicEncoder {
    ctx: StreamContext,
    open: OpenBlock,
    /// Index of the open block, or of the next one when none is open.
    index: usize,
    /// Latest signature seen in the open thinking block, sent when it stops.
    signature: Option<String>,
}

impl AnthropicEncoder {
    /// An encoder for one response.
    pub(crate) fn new(ctx: StreamContext) -> Self {
        AnthropicEncoder {
            ctx,
            open: OpenBlock::None,
            index: 0,
            signature: None,
        }
    }

    fn emit(out: &mut Vec<Step>, frame: Frame<'_>) {
        out.push(event_frame(frame.name(), &frame));
    }

    /// Opens a block of `kind` unless one is already open, closing any other.
    fn ensure(&mut self, kind: OpenBlock, out: &mut Vec<Step>) {
        if self.open == kind {
            return;
        }
        self.close_block(out);
        let content_block = match kind {
            OpenBlock::Text => Block::Text { text: "" },
            _ => Block::Thinking { thinking: "" },
        };
        Self::emit(
            out,
            Frame::ContentBlockStart {
                index: self.index,
                content_block,
            },
        );
        self.open = kind;
    }

    fn close_block(&mut self, out: &mut Vec<Step>) {
        if self.open == OpenBlock::None {
            return;
        }
        if let Some(signature) = self.signature.take() {
            self.delta(
                Delta::Signature {
                    signature: &signature,
                },
                out,
            );
        }
        Self::emit(out, Frame::ContentBlockStop { index: self.index });
        self.open = OpenBlock::None;
        self.index += 1;
    }

    fn delta(&self, delta: Delta<'_>, out: &mut Vec<Step>) {
        Self::emit(
            out,
            Frame::ContentBlockDelta {
                index: self.index,
                delta,
            },
        );
    }
}

impl Encoder for AnthropicEncoder {
    fn open(&mut self, out: &mut Vec<Step>) {
        let usage = self.ctx.usage.unwrap_or_default();
        let id = format!("msg_scripted_{}", self.ctx.turn_number);
        Self::emit(
            out,
            Frame::MessageStart {
                message: Message {
                    id: &id,
                    kind: "message",
                    role: "assistant",
                    model: &self.ctx.model,
                    content: [],
                    stop_reason: None,
                    stop_sequence: None,
                    usage: StartUsage {
                        input_tokens: usage.input,
                        output_tokens: 1,
                        cache_read_input_tokens: usage.cache_read,
                        cache_creation_input_tokens: usage.cache_write,
                    },
                },
            },
        );
        Self::emit(out, Frame::Ping);
    }

    fn text(&mut self, text: &str, out: &mut Vec<Step>) {
        self.ensure(OpenBlock::Text, out);
        self.delta(Delta::Text { text }, out);
    }

    fn thinking(&mut self, text: &str, signature: Option<&str>, out: &mut Vec<Step>) {
        self.ensure(OpenBlock::Thinking, out);
        self.delta(Delta::Thinking { thinking: text }, out);
        if let Some(signature) = signature {
            self.signature = Some(signature.to_string());
        }
    }

    fn tool_call(&mut self, id: &str, name: &str, args: &[String], out: &mut Vec<Step>) {
        self.close_block(out);
        Self::emit(
            out,
            Frame::ContentBlockStart {
                index: self.index,
                content_block: Block::ToolUse {
                    id,
                    name,
                    input: Empty {},
                },
            },
        );
        for piece in args {
            self.delta(
                Delta::InputJson {
                    partial_json: piece,
                },
                out,
            );
        }
        Self::emit(out, Frame::ContentBlockStop { index: self.index });
        self.index += 1;
    }

    fn unknown(&mut self, name: &str, out: &mut Vec<Step>) {
        out.push(event_frame(name, &UnknownFrame { kind: name }));
    }

    fn close(&mut self, stop: ScriptStop, out: &mut Vec<Step>) {
        self.close_block(out);
        let stop_reason = match stop {
            ScriptStop::Stop => "end_turn",
            ScriptStop::Length => "max_tokens",
            ScriptStop::ToolUse => "tool_use",
            ScriptStop::Refusal | ScriptStop::ContentFilter => "refusal",
        };
        let output_tokens = self.ctx.usage.map_or(0, |u| u.output);
        Self::emit(
            out,
            Frame::MessageDelta {
                delta: StopDelta {
                    stop_reason,
                    stop_sequence: None,
                },
                usage: DeltaUsage { output_tokens },
            },
        );
        Self::emit(out, Frame::MessageStop);
    }
}

// Wire structs: internally tagged enums put "type" first, as the API does.

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Frame<'a> {
    MessageStart {
        message: Message<'a>,
    },
    Ping,
    ContentBlockStart {
        index: usize,
        content_block: Block<'a>,
    },
    ContentBlockDelta {
        index: usize,
        delta: Delta<'a>,
    },
    ContentBlockStop {
        index: usize,
    },
    MessageDelta {
        delta: StopDelta<'a>,
        usage: DeltaUsage,
    },
    MessageStop,
}

impl Frame<'_> {
    /// The SSE event name, which Anthropic keeps equal to the data's type.
    fn name(&self) -> &'static str {
        match self {
            Frame::MessageStart { .. } => "message_start",
            Frame::Ping => "ping",
            Frame::ContentBlockStart { .. } => "content_block_start",
            Frame::ContentBlockDelta { .. } => "content_block_delta",
            Frame::ContentBlockStop { .. } => "content_block_stop",
            Frame::MessageDelta { .. } => "message_delta",
            Frame::MessageStop => "message_stop",
        }
    }
}

#[derive(Serialize)]
struct Message<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    role: &'static str,
    model: &'a str,
    content: [(); 0],
    stop_reason: Option<&'a str>,
    stop_sequence: Option<&'a str>,
    usage: StartUsage,
}

#[derive(Serialize)]
struct StartUsage {
    input_tokens: u64,
    output_tokens: u64,
    cache_read_input_tokens: u64,
    cache_creation_input_tokens: u64,
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Block<'a> {
    Text {
        text: &'a str,
    },
    Thinking {
        thinking: &'a str,
    },
    ToolUse {
        id: &'a str,
        name: &'a str,
        input: Empty,
    },
}

/// Serializes as `{}`.
#[derive(Serialize)]
struct Empty {}

#[derive(Serialize)]
#[serde(tag = "type")]
enum Delta<'a> {
    #[serde(rename = "text_delta")]
    Text { text: &'a str },
    #[serde(rename = "thinking_delta")]
    Thinking { thinking: &'a str },
    #[serde(rename = "signature_delta")]
    Signature { signature: &'a str },
    #[serde(rename = "input_json_delta")]
    InputJson { partial_json: &'a str },
}

#[derive(Serialize)]
struct StopDelta<'a> {
    stop_reason: &'a str,
    stop_sequence: Option<&'a str>,
}

#[derive(Serialize)]
struct DeltaUsage {
    output_tokens: u64,
}

#[derive(Serialize)]
struct UnknownFrame<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
}

#[cfg(test)]
mod tests {
    use crate::client::{RawResponse, post_json};
    use crate::{Event, Script, ScriptStop, ScriptUsage, ScriptedServer, Turn};
    use serde_json::{Value, json};

    async fn run(turn: Turn) -> anyhow::Result<RawResponse> {
        let server = ScriptedServer::start(Script::new(vec![turn])).await?;
        let body = json!({"model": "claude-x", "stream": true, "messages": []});
        Ok(post_json(server.addr(), "/v1/messages", &body).await?)
    }

    /// `(event name, data)` pairs, checking each name matches its data's type.
    fn events(response: &RawResponse) -> anyhow::Result<Vec<(String, Value)>> {
        let mut out = Vec::new();
        for event in response.sse_events() {
            let name = event.event.unwrap_or_default();
            let data: Value = serde_json::from_str(&event.data)?;
            anyhow::ensure!(data["type"] == name.as_str(), "{name} vs {data}");
            out.push((name, data));
        }
        Ok(out)
    }

    fn names(events: &[(String, Value)]) -> Vec<&str> {
        events.iter().map(|(n, _)| n.as_str()).collect()
    }

    fn datas(events: &[(String, Value)]) -> Vec<Value> {
        events.iter().map(|(_, d)| d.clone()).collect()
    }

    #[tokio::test]
    async fn thinking_text_and_tool_call_stream_in_order() -> anyhow::Result<()> {
        let usage = ScriptUsage {
            input: 10,
            output: 7,
            cache_read: 4,
            cache_write: 2,
        };
        let turn = Turn::stream(vec![
            Event::thinking("hmm"),
            Event::thinking_signed(" ok", "sig-1"),
            Event::text("A"),
            Event::text("B"),
            Event::tool_call("toolu_1", "read", &["{\"pa", "th\":\"a\"}"]),
        ])
        .with_usage(usage);
        let response = run(turn).await?;
        assert_eq!(response.status, 200);
        assert!(response.complete);
        assert_eq!(response.chunks.len(), response.sse_events().len());
        assert_eq!(
            String::from_utf8_lossy(&response.chunks[0]),
            "event: message_start\ndata: {\"type\":\"message_start\",\"message\":\
             {\"id\":\"msg_scripted_1\",\"type\":\"message\",\"role\":\"assistant\",\
             \"model\":\"claude-x\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\
             \"usage\":{\"input_tokens\":10,\"output_tokens\":1,\"cache_read_input_tokens\":4,\
             \"cache_creation_input_tokens\":2}}}\n\n"
        );
        let events = events(&response)?;
        let delta =
            |i: usize, d: Value| json!({"type": "content_block_delta", "index": i, "delta": d});
        let start = |i: usize, b: Value| json!({"type": "content_block_start", "index": i, "content_block": b});
        let stop = |i: usize| json!({"type": "content_block_stop", "index": i});
        assert_eq!(
            datas(&events)[1..],
            [
                json!({"type": "ping"}),
                start(0, json!({"type": "thinking", "thinking": ""})),
                delta(0, json!({"type": "thinking_delta", "thinking": "hmm"})),
                delta(0, json!({"type": "thinking_delta", "thinking": " ok"})),
                delta(0, json!({"type": "signature_delta", "signature": "sig-1"})),
                stop(0),
                start(1, json!({"type": "text", "text": ""})),
                delta(1, json!({"type": "text_delta", "text": "A"})),
                delta(1, json!({"type": "text_delta", "text": "B"})),
                stop(1),
                start(
                    2,
                    json!({"type": "tool_use", "id": "toolu_1", "name": "read", "input": {}})
                ),
                delta(
                    2,
                    json!({"type": "input_json_delta", "partial_json": "{\"pa"})
                ),
                delta(
                    2,
                    json!({"type": "input_json_delta", "partial_json": "th\":\"a\"}"})
                ),
                stop(2),
                json!({"type": "message_delta",
                       "delta": {"stop_reason": "tool_use", "stop_sequence": null},
                       "usage": {"output_tokens": 7}}),
                json!({"type": "message_stop"}),
            ]
        );
        Ok(())
    }

    #[tokio::test]
    async fn tool_calls_get_their_own_blocks_and_text_reopens_after() -> anyhow::Result<()> {
        let turn = Turn::stream(vec![
            Event::tool_call("t1", "a", &["{\"x\":", "1}"]),
            Event::tool_call("t2", "b", &["{}"]),
            Event::text("done"),
            Event::unknown("mystery"),
        ])
        .with_stop(ScriptStop::ContentFilter);
        let events = events(&run(turn).await?)?;
        assert_eq!(
            names(&events),
            [
                "message_start",
                "ping",
                "content_block_start",
                "content_block_delta",
                "content_block_delta",
                "content_block_stop",
                "content_block_start",
                "content_block_delta",
                "content_block_stop",
                "content_block_start",
                "content_block_delta",
                "mystery",
                "content_block_stop",
                "message_delta",
                "message_stop",
            ]
        );
        let indices: Vec<Value> = events.iter().map(|(_, d)| d["index"].clone()).collect();
        assert_eq!(
            Value::from(indices[2..13].to_vec()),
            json!([0, 0, 0, 0, 1, 1, 1, 2, 2, null, 2])
        );
        assert_eq!(events[4].1["delta"]["partial_json"], "1}");
        assert_eq!(events[13].1["delta"]["stop_reason"], "refusal");
        assert_eq!(events[13].1["usage"]["output_tokens"], 0);
        Ok(())
    }
}
