//! What both wire formats share: the steps a stream turn becomes, the driver
//! that walks a turn's events, and the per-format error bodies.

use crate::script::{Event, ScriptStop, ScriptUsage};
use serde::Serialize;

/// One thing the HTTP layer does while streaming a turn.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Step {
    /// Bytes written as one HTTP chunk and flushed.
    Chunk(Vec<u8>),
    /// Sleep this many milliseconds.
    Sleep(u64),
    /// Wait until this file exists.
    WaitForFile(std::path::PathBuf),
    /// Close the connection without finishing the body.
    Drop,
    /// Announce a 64-byte chunk, send 10 bytes of it, close.
    CutChunk,
}

/// Which API dialect a request speaks, chosen by its path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WireFormat {
    /// OpenAI Chat Completions.
    OpenAi,
    /// Anthropic Messages.
    Anthropic,
}

impl WireFormat {
    /// A JSON error body the way this API shapes its errors.
    pub(crate) fn error_body(self, kind: &str, message: &str) -> String {
        // Built by hand so keys keep the order the real APIs use.
        let (kind, message) = (json_string(kind), json_string(message));
        match self {
            WireFormat::OpenAi => {
                format!(r#"{{"error":{{"message":{message},"type":{kind}}}}}"#)
            }
            WireFormat::Anthropic => {
                format!(r#"{{"type":"error","error":{{"type":{kind},"message":{message}}}}}"#)
            }
        }
    }
}

/// `text` as a quoted, escaped JSON string.
fn json_string(text: &str) -> String {
    serde_json::Value::from(text).to_string()
}

/// Per-request facts an encoder needs.
#[derive(Debug, Clone)]
pub(crate) struct StreamContext {
    /// 1-based number of the turn, used in response ids.
    pub(crate) turn_number: u64,
    /// The model the request asked for.
    pub(crate) model: String,
    /// Usage the turn reports, if any.
    pub(crate) usage: Option<ScriptUsage>,
}

/// Renders the content events of a stream turn into one wire format.
pub(crate) trait Encoder {
    /// Frames sent before any scripted event.
    fn open(&mut self, out: &mut Vec<Step>);
    /// An assistant text delta.
    fn text(&mut self, text: &str, out: &mut Vec<Step>);
    /// A reasoning delta.
    fn thinking(&mut self, text: &str, signature: Option<&str>, out: &mut Vec<Step>);
    /// A whole tool call with its argument pieces.
    fn tool_call(&mut self, id: &str, name: &str, args: &[String], out: &mut Vec<Step>);
    /// An event of a type clients do not know.
    fn unknown(&mut self, name: &str, out: &mut Vec<Step>);
    /// Frames that finish a stream normally.
    fn close(&mut self, stop: ScriptStop, out: &mut Vec<Step>);
}

/// Walks a stream turn's events, handling the format-independent ones here.
pub(crate) fn render(
    events: &[Event],
    stop: Option<ScriptStop>,
    delay_ms: u64,
    encoder: &mut dyn Encoder,
) -> Vec<Step> {
    let mut out = Vec::new();
    encoder.open(&mut out);
    for (i, event) in events.iter().enumerate() {
        if i > 0 && delay_ms > 0 {
            out.push(Step::Sleep(delay_ms));
        }
        match event {
            Event::Text { text } => encoder.text(text, &mut out),
            Event::Thinking { text, signature } => {
                encoder.thinking(text, signature.as_deref(), &mut out)
            }
            Event::ToolCall { id, name, args } => encoder.tool_call(id, name, args, &mut out),
            Event::Unknown { name } => encoder.unknown(name, &mut out),
            Event::RawLine { line } => out.push(Step::Chunk(format!("{line}\n\n").into_bytes())),
            Event::RawBytes { bytes } => out.push(Step::Chunk(bytes.clone())),
            Event::Pause { ms } => out.push(Step::Sleep(*ms)),
            Event::WaitForFile { path } => out.push(Step::WaitForFile(path.clone())),
            // Nothing after a broken connection can reach the client.
            Event::Drop => {
                out.push(Step::Drop);
                return out;
            }
            Event::CutChunk => {
                out.push(Step::CutChunk);
                return out;
            }
        }
    }
    if !events.is_empty() && delay_ms > 0 {
        out.push(Step::Sleep(delay_ms));
    }
    encoder.close(resolve_stop(stop, events), &mut out);
    out
}

/// The explicit stop, or tool use when the turn calls a tool, else stop.
fn resolve_stop(stop: Option<ScriptStop>, events: &[Event]) -> ScriptStop {
    stop.unwrap_or_else(|| {
        if events.iter().any(|e| matches!(e, Event::ToolCall { .. })) {
            ScriptStop::ToolUse
        } else {
            ScriptStop::Stop
        }
    })
}

/// A `data:` SSE frame holding `payload` as JSON.
pub(crate) fn data_frame(payload: &impl Serialize) -> Step {
    Step::Chunk(format!("data: {}\n\n", to_json(payload)).into_bytes())
}

/// A named SSE frame (`event:` plus `data:`) holding `payload` as JSON.
pub(crate) fn event_frame(name: &str, payload: &impl Serialize) -> Step {
    Step::Chunk(format!("event: {name}\ndata: {}\n\n", to_json(payload)).into_bytes())
}

/// Serializes a wire struct; these have no maps with non-string keys, so it cannot fail.
fn to_json(payload: &impl Serialize) -> String {
    serde_json::to_string(payload).unwrap_or_else(|_| "null".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records the calls the driver makes, as readable tags.
    struct Probe;

    impl Encoder for Probe {
        fn open(&mut self, out: &mut Vec<Step>) {
            out.push(Step::Chunk(b"open".to_vec()));
        }
        fn text(&mut self, text: &str, out: &mut Vec<Step>) {
            out.push(Step::Chunk(format!("text:{text}").into_bytes()));
        }
        fn thinking(&mut self, text: &str, _: Option<&str>, out: &mut Vec<Step>) {
            out.push(Step::Chunk(format!("think:{text}").into_bytes()));
        }
        fn tool_call(&mut self, id: &str, _: &str, _: &[String], out: &mut Vec<Step>) {
            out.push(Step::Chunk(format!("tool:{id}").into_bytes()));
        }
        fn unknown(&mut self, name: &str, out: &mut Vec<Step>) {
            out.push(Step::Chunk(format!("unknown:{name}").into_bytes()));
        }
        fn close(&mut self, stop: ScriptStop, out: &mut Vec<Step>) {
            out.push(Step::Chunk(format!("close:{stop:?}").into_bytes()));
        }
    }

    fn chunk(s: &str) -> Step {
        Step::Chunk(s.as_bytes().to_vec())
    }

    #[test]
    fn error_bodies_follow_each_api() -> anyhow::Result<()> {
        let openai: serde_json::Value =
            serde_json::from_str(&WireFormat::OpenAi.error_body("k", "m \"q\""))?;
        assert_eq!(
            openai,
            serde_json::json!({"error": {"message": "m \"q\"", "type": "k"}})
        );
        let anthropic = WireFormat::Anthropic.error_body("k", "m");
        assert_eq!(
            anthropic,
            r#"{"type":"error","error":{"type":"k","message":"m"}}"#
        );
        Ok(())
    }

    #[test]
    fn delay_goes_between_events_and_before_the_end() {
        let events = [Event::text("a"), Event::tool_call("t", "n", &[])];
        let steps = render(&events, None, 7, &mut Probe);
        assert_eq!(
            steps,
            vec![
                chunk("open"),
                chunk("text:a"),
                Step::Sleep(7),
                chunk("tool:t"),
                Step::Sleep(7),
                chunk("close:ToolUse"),
            ]
        );
    }

    #[test]
    fn drop_and_cut_chunk_end_the_stream_early() {
        let events = [Event::text("a"), Event::Drop, Event::text("never")];
        assert_eq!(
            render(&events, None, 0, &mut Probe),
            vec![chunk("open"), chunk("text:a"), Step::Drop]
        );
        let events = [Event::CutChunk, Event::text("never")];
        assert_eq!(
            render(&events, Some(ScriptStop::Length), 0, &mut Probe),
            vec![chunk("open"), Step::CutChunk]
        );
    }

    #[test]
    fn raw_events_and_pauses_pass_through() {
        let events = [
            Event::raw_line("data: {oops"),
            Event::raw_bytes(vec![0xff, 0xfe]),
            Event::pause(3),
        ];
        assert_eq!(
            render(&events, None, 0, &mut Probe),
            vec![
                chunk("open"),
                chunk("data: {oops\n\n"),
                Step::Chunk(vec![0xff, 0xfe]),
                Step::Sleep(3),
                chunk("close:Stop"),
            ]
        );
    }
}
