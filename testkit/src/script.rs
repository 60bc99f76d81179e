//! The script a [`crate::ScriptedServer`] plays back: a queue of turns, each
//! either a stream of events or a bare HTTP status.

use serde::{Deserialize, Serialize};

/// A whole script: the turns served in order, plus the `/models` listing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Script {
    /// Turns consumed one per POST, shared by both wire formats.
    #[serde(default)]
    pub turns: Vec<Turn>,
    /// Model ids listed by `GET …/models`.
    #[serde(default = "default_models")]
    pub models: Vec<String>,
}

fn default_models() -> Vec<String> {
    vec!["scripted-model".to_string()]
}

impl Default for Script {
    fn default() -> Self {
        Script {
            turns: Vec::new(),
            models: default_models(),
        }
    }
}

impl Script {
    /// A script with these turns and the default model list.
    pub fn new(turns: Vec<Turn>) -> Self {
        Script {
            turns,
            ..Script::default()
        }
    }

    /// Replaces the model ids listed by `GET …/models`.
    pub fn with_models<S: Into<String>>(mut self, models: impl IntoIterator<Item = S>) -> Self {
        self.models = models.into_iter().map(Into::into).collect();
        self
    }
}

impl From<Vec<Turn>> for Script {
    fn from(turns: Vec<Turn>) -> Self {
        Script::new(turns)
    }
}

/// One scripted answer to one POST.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Turn {
    /// A `200` SSE stream rendered in the request's wire format.
    Stream {
        /// What the stream carries, in order.
        events: Vec<Event>,
        /// Token usage reported by the stream.
        #[serde(default)]
        usage: Option<ScriptUsage>,
        /// Stop reason; `None` means tool use if the turn calls a tool, else stop.
        #[serde(default)]
        stop: Option<ScriptStop>,
        /// Sleep between events, for slow-stream tests.
        #[serde(default)]
        delay_ms: u64,
    },
    /// A non-streaming response with this status code.
    Status {
        /// HTTP status code.
        code: u16,
        /// `Retry-After` header value.
        #[serde(default)]
        retry_after: Option<String>,
        /// Body sent verbatim; `None` means a JSON error in the request's wire format.
        #[serde(default)]
        body: Option<String>,
        /// Content type; `None` means `application/json`.
        #[serde(default)]
        content_type: Option<String>,
    },
    /// The request is read and never answered: no status line, nothing, until the client
    /// hangs up (a hung server behind a healthy socket).
    Silent,
}

impl Turn {
    /// A stream turn carrying these events, with no usage and the default stop.
    pub fn stream(events: Vec<Event>) -> Self {
        Turn::Stream {
            events,
            usage: None,
            stop: None,
            delay_ms: 0,
        }
    }

    /// A stream turn carrying one text event.
    pub fn text(text: impl Into<String>) -> Self {
        Turn::stream(vec![Event::text(text)])
    }

    /// A status turn with the default error body.
    pub fn status(code: u16) -> Self {
        Turn::Status {
            code,
            retry_after: None,
            body: None,
            content_type: None,
        }
    }

    /// A status turn answering with an HTML error page, as proxies do.
    pub fn html(code: u16, page: impl Into<String>) -> Self {
        Turn::Status {
            code,
            retry_after: None,
            body: Some(page.into()),
            content_type: Some("text/html".to_string()),
        }
    }

    /// Sets the usage of a stream turn (no effect on a status turn).
    pub fn with_usage(mut self, new: ScriptUsage) -> Self {
        if let Turn::Stream { usage, .. } = &mut self {
            *usage = Some(new);
        }
        self
    }

    /// Sets the stop reason of a stream turn (no effect on a status turn).
    pub fn with_stop(mut self, new: ScriptStop) -> Self {
        if let Turn::Stream { stop, .. } = &mut self {
            *stop = Some(new);
        }
        self
    }

    /// Sets the sleep between events of a stream turn (no effect on a status turn).
    pub fn with_delay(mut self, ms: u64) -> Self {
        if let Turn::Stream { delay_ms, .. } = &mut self {
            *delay_ms = ms;
        }
        self
    }

    /// Sets the `Retry-After` header of a status turn (no effect on a stream turn).
    pub fn with_retry_after(mut self, value: impl Into<String>) -> Self {
        if let Turn::Status { retry_after, .. } = &mut self {
            *retry_after = Some(value.into());
        }
        self
    }

    /// Sets the verbatim body of a status turn (no effect on a stream turn).
    pub fn with_body(mut self, value: impl Into<String>) -> Self {
        if let Turn::Status { body, .. } = &mut self {
            *body = Some(value.into());
        }
        self
    }

    /// Sets the content type of a status turn (no effect on a stream turn).
    pub fn with_content_type(mut self, value: impl Into<String>) -> Self {
        if let Turn::Status { content_type, .. } = &mut self {
            *content_type = Some(value.into());
        }
        self
    }
}

/// One step of a stream turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// Assistant text.
    Text {
        /// The text delta.
        text: String,
    },
    /// Reasoning text, optionally signed (the signature is Anthropic-only).
    Thinking {
        /// The reasoning delta.
        text: String,
        /// Signature sent before the thinking block stops.
        #[serde(default)]
        signature: Option<String>,
    },
    /// A tool call whose arguments JSON arrives in pieces.
    ToolCall {
        /// Tool call id.
        id: String,
        /// Tool name.
        name: String,
        /// The arguments JSON text split into chunks.
        args: Vec<String>,
    },
    /// Written verbatim followed by a blank line, as its own chunk.
    RawLine {
        /// The line, without its terminator.
        line: String,
    },
    /// Written verbatim as its own chunk.
    RawBytes {
        /// The bytes, possibly not UTF-8.
        bytes: Vec<u8>,
    },
    /// An event of a type clients do not know.
    Unknown {
        /// The unknown event type.
        name: String,
    },
    /// Sleep before the next event.
    Pause {
        /// How long to sleep.
        ms: u64,
    },
    /// Wait until a file exists at `path` before the next event: a gate the test opens
    /// when it has seen what it waits for, so nothing depends on timing.
    WaitForFile {
        /// The file to wait for.
        path: std::path::PathBuf,
    },
    /// Close the connection now, without finishing the stream.
    Drop,
    /// Announce a 64-byte chunk, send 10 bytes of it, then close.
    CutChunk,
}

impl Event {
    /// A text event.
    pub fn text(text: impl Into<String>) -> Self {
        Event::Text { text: text.into() }
    }

    /// An unsigned thinking event.
    pub fn thinking(text: impl Into<String>) -> Self {
        Event::Thinking {
            text: text.into(),
            signature: None,
        }
    }

    /// A signed thinking event.
    pub fn thinking_signed(text: impl Into<String>, signature: impl Into<String>) -> Self {
        Event::Thinking {
            text: text.into(),
            signature: Some(signature.into()),
        }
    }

    /// A tool call whose arguments JSON is `args` concatenated.
    pub fn tool_call(id: impl Into<String>, name: impl Into<String>, args: &[&str]) -> Self {
        Event::ToolCall {
            id: id.into(),
            name: name.into(),
            args: args.iter().map(|piece| piece.to_string()).collect(),
        }
    }

    /// A raw SSE line.
    pub fn raw_line(line: impl Into<String>) -> Self {
        Event::RawLine { line: line.into() }
    }

    /// Raw bytes.
    pub fn raw_bytes(bytes: impl Into<Vec<u8>>) -> Self {
        Event::RawBytes {
            bytes: bytes.into(),
        }
    }

    /// An event of an unknown type.
    pub fn unknown(name: impl Into<String>) -> Self {
        Event::Unknown { name: name.into() }
    }

    /// A pause.
    pub fn pause(ms: u64) -> Self {
        Event::Pause { ms }
    }
}

/// Token counts a stream turn reports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScriptUsage {
    /// Uncached input tokens.
    #[serde(default)]
    pub input: u64,
    /// Output tokens.
    #[serde(default)]
    pub output: u64,
    /// Input tokens read from the prompt cache.
    #[serde(default)]
    pub cache_read: u64,
    /// Input tokens written to the prompt cache.
    #[serde(default)]
    pub cache_write: u64,
}

/// Why a stream turn stops, mapped onto each wire format's vocabulary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScriptStop {
    /// A natural end of turn.
    Stop,
    /// The output token limit was hit.
    Length,
    /// The model wants tool results.
    ToolUse,
    /// The model refused.
    Refusal,
    /// A content filter stopped the output.
    ContentFilter,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_json_uses_kind_and_type_tags_with_defaults() -> anyhow::Result<()> {
        let raw = r#"{"turns":[
            {"kind":"stream","events":[{"type":"text","text":"hi"},{"type":"drop"}]},
            {"kind":"status","code":429,"retry_after":"3"}
        ]}"#;
        let script: Script = serde_json::from_str(raw)?;
        assert_eq!(script.models, vec!["scripted-model".to_string()]);
        assert_eq!(
            script.turns,
            vec![
                Turn::stream(vec![Event::text("hi"), Event::Drop]),
                Turn::status(429).with_retry_after("3"),
            ]
        );
        let back: Script = serde_json::from_value(serde_json::to_value(&script)?)?;
        assert_eq!(back, script);
        Ok(())
    }

    #[test]
    fn builders_only_touch_their_own_variant() {
        let turn = Turn::text("a")
            .with_usage(ScriptUsage {
                input: 1,
                ..ScriptUsage::default()
            })
            .with_delay(5)
            .with_stop(ScriptStop::Length)
            .with_retry_after("9");
        let Turn::Stream {
            usage,
            stop,
            delay_ms,
            ..
        } = turn
        else {
            panic!("expected a stream turn");
        };
        assert_eq!(usage.map(|u| u.input), Some(1));
        assert_eq!(stop, Some(ScriptStop::Length));
        assert_eq!(delay_ms, 5);
        assert_eq!(Turn::status(500).with_delay(3), Turn::status(500));
    }
}
