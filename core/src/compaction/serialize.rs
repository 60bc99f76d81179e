//! The conversation as plain text for the summariser (pi's `serializeConversation`): as a
//! transcript inside the prompt, the model reads it instead of continuing it.

use std::fmt::Write;

use serde_json::Value;

use crate::message::{AssistantContent, Message, UserBody, UserContent};

/// Characters of a tool result kept in the transcript; the rest is only counted.
pub const TOOL_RESULT_MAX_CHARS: usize = 2000;

/// Render messages as `[User]: …`, `[Assistant thinking]: …`, `[Assistant]: …`,
/// `[Assistant tool calls]: name(k=<json>, …); …` and `[Tool result]: …` blocks separated
/// by blank lines. Text is copied as is (control characters included: this is model
/// input, not terminal output); images are left out; tool results are cut to
/// [`TOOL_RESULT_MAX_CHARS`] characters.
pub fn serialize_conversation(messages: &[Message]) -> String {
    let mut out = String::new();
    for message in messages {
        match message {
            Message::User(u) => {
                let text = match &u.content {
                    UserBody::Text(t) => t.clone(),
                    UserBody::Blocks(blocks) => block_text(blocks),
                };
                if !text.is_empty() {
                    block(&mut out, "[User]: ", &text);
                }
            }
            Message::Assistant(a) => {
                let mut texts = Vec::new();
                let mut thinking = Vec::new();
                let mut calls = Vec::new();
                for c in &a.content {
                    match c {
                        AssistantContent::Text(t) => texts.push(t.text.as_str()),
                        AssistantContent::Thinking(t) => thinking.push(t.thinking.as_str()),
                        AssistantContent::ToolCall(tc) => {
                            calls.push(format!("{}({})", tc.name, call_arguments(&tc.arguments)));
                        }
                    }
                }
                if !thinking.is_empty() {
                    block(&mut out, "[Assistant thinking]: ", &thinking.join("\n"));
                }
                if !texts.is_empty() {
                    block(&mut out, "[Assistant]: ", &texts.join("\n"));
                }
                if !calls.is_empty() {
                    block(&mut out, "[Assistant tool calls]: ", &calls.join("; "));
                }
            }
            Message::ToolResult(r) => {
                let text = block_text(&r.content);
                if !text.is_empty() {
                    block(&mut out, "[Tool result]: ", &truncate(&text));
                }
            }
        }
    }
    out
}

/// Append one labelled block, a blank line after the previous one.
fn block(out: &mut String, label: &str, body: &str) {
    if !out.is_empty() {
        out.push_str("\n\n");
    }
    out.push_str(label);
    out.push_str(body);
}

/// The text blocks joined without separator; images dropped.
fn block_text(blocks: &[UserContent]) -> String {
    blocks
        .iter()
        .filter_map(|b| match b {
            UserContent::Text(t) => Some(t.text.as_str()),
            UserContent::Image(_) => None,
        })
        .collect()
}

/// `k=<json>, …` for an object; other argument values (models do send them) as their JSON.
fn call_arguments(arguments: &Value) -> String {
    match arguments {
        Value::Object(map) => {
            let mut s = String::new();
            for (i, (k, v)) in map.iter().enumerate() {
                if i > 0 {
                    s.push_str(", ");
                }
                // Writing to a String cannot fail.
                let _ = write!(s, "{k}={v}");
            }
            s
        }
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// The first [`TOOL_RESULT_MAX_CHARS`] characters plus a note of how many were left out.
fn truncate(text: &str) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(TOOL_RESULT_MAX_CHARS) {
        None => text.into(),
        Some((cut, _)) => {
            let rest = text[cut..].chars().count();
            format!("{}\n\n[... {rest} more characters truncated]", &text[..cut]).into()
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::message::{
        AssistantMessage, ImageContent, TextContent, ThinkingContent, ToolCall, ToolResultMessage,
        UserMessage,
    };
    use crate::model::Model;

    fn assistant(content: Vec<AssistantContent>) -> Message {
        let mut a = AssistantMessage::empty(&Model::openai_compatible("p", "m", "http://x"));
        a.content = content;
        Message::Assistant(a)
    }

    fn text(t: &str) -> AssistantContent {
        AssistantContent::Text(TextContent {
            text: t.into(),
            text_signature: None,
        })
    }

    fn result(text: &str) -> Message {
        Message::ToolResult(ToolResultMessage {
            tool_call_id: "c1".into(),
            tool_name: "read".into(),
            content: vec![UserContent::text(text)],
            details: Value::Null,
            is_error: false,
            timestamp: 0,
            usage: None,
        })
    }

    #[test]
    fn messages_render_as_labelled_blocks() {
        let image = UserContent::Image(ImageContent {
            data: "AAAA".into(),
            mime_type: "image/png".into(),
        });
        let messages = vec![
            Message::user("fix \x1b[31mthe\x1b[0m bug"),
            Message::User(UserMessage {
                content: UserBody::Blocks(vec![
                    UserContent::text("a"),
                    image,
                    UserContent::text("b"),
                ]),
                timestamp: 0,
            }),
            assistant(vec![
                AssistantContent::Thinking(ThinkingContent {
                    thinking: "hmm".into(),
                    thinking_signature: None,
                    redacted: false,
                }),
                text("Let me look."),
                AssistantContent::ToolCall(ToolCall {
                    id: "c1".into(),
                    name: "read".into(),
                    arguments: json!({"path": "src/main.rs"}),
                    thought_signature: None,
                }),
                text("And more."),
                AssistantContent::ToolCall(ToolCall {
                    id: "c2".into(),
                    name: "bash".into(),
                    arguments: json!({"command": "ls \"a b\""}),
                    thought_signature: None,
                }),
            ]),
            result("fn main() {}"),
            // Empty messages add no block.
            Message::user(""),
            result(""),
        ];
        assert_eq!(
            serialize_conversation(&messages),
            "[User]: fix \x1b[31mthe\x1b[0m bug\n\n\
             [User]: ab\n\n\
             [Assistant thinking]: hmm\n\n\
             [Assistant]: Let me look.\nAnd more.\n\n\
             [Assistant tool calls]: read(path=\"src/main.rs\"); bash(command=\"ls \\\"a b\\\"\")\n\n\
             [Tool result]: fn main() {}"
        );
        assert_eq!(serialize_conversation(&[]), "");
        assert_eq!(
            call_arguments(&json!({"a": 1, "b": [1, "x"]})),
            "a=1, b=[1,\"x\"]"
        );
        assert_eq!(call_arguments(&json!(null)), "");
        assert_eq!(call_arguments(&json!("raw")), "\"raw\"");
    }

    #[test]
    fn long_tool_results_are_cut_at_2000_characters() {
        let long = format!("{}{}", "é".repeat(TOOL_RESULT_MAX_CHARS), "x".repeat(500));
        let out = serialize_conversation(&[result(&long)]);
        let expected = format!(
            "[Tool result]: {}\n\n[... 500 more characters truncated]",
            "é".repeat(TOOL_RESULT_MAX_CHARS)
        );
        assert_eq!(out, expected);
        let exact = "y".repeat(TOOL_RESULT_MAX_CHARS);
        assert_eq!(
            serialize_conversation(&[result(&exact)]),
            format!("[Tool result]: {exact}")
        );
        // User text is never cut, however large.
        let big = "z".repeat(3_000_000);
        assert_eq!(
            serialize_conversation(&[Message::user(big.clone())]).len(),
            "[User]: ".len() + big.len()
        );
    }
}
