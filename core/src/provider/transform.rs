//! The cross-provider transform applied before every model call.
//!
//! The transcript is stored as it happened; this makes it acceptable to the target model:
//! failed assistant turns dropped, orphan tool calls answered, tool-call ids made valid,
//! foreign or unsupported thinking downgraded, images stripped for text-only models.

use std::collections::{HashMap, HashSet};

use crate::message::{
    AssistantContent, AssistantMessage, Message, TextContent, ToolResultMessage, UserBody,
    UserContent, now_ms,
};
use crate::model::Model;

/// Text of the synthetic result for a tool call that never got one.
pub const NO_RESULT_TEXT: &str = "No result provided";

/// Text that replaces an image for a model without image input.
pub const IMAGE_OMITTED_TEXT: &str = "(image omitted: this model does not accept images)";

/// Make `messages` acceptable to `target`.
pub fn prepare_messages(messages: &[Message], target: &Model) -> Vec<Message> {
    let mut ids = IdMap::default();
    let mut out: Vec<Message> = Vec::with_capacity(messages.len());
    let mut open_calls: Vec<(String, String)> = Vec::new();
    for msg in messages {
        match msg {
            Message::Assistant(a) if a.stop_reason.is_failure() => continue,
            Message::Assistant(a) => {
                answer_orphans(&mut out, &mut open_calls);
                let a = convert_assistant(a, target, &mut ids);
                open_calls = a
                    .tool_calls()
                    .map(|tc| (tc.id.clone(), tc.name.clone()))
                    .collect();
                out.push(Message::Assistant(a));
            }
            Message::ToolResult(r) => {
                let id = ids.get(&r.tool_call_id);
                let Some(pos) = open_calls.iter().position(|(call, _)| *call == id) else {
                    // A result without its call would be rejected by every provider.
                    continue;
                };
                open_calls.remove(pos);
                out.push(Message::ToolResult(ToolResultMessage {
                    tool_call_id: id,
                    content: strip_images(&r.content, target),
                    ..r.clone()
                }));
            }
            Message::User(u) => {
                answer_orphans(&mut out, &mut open_calls);
                let mut u = u.clone();
                if !target.images
                    && let UserBody::Blocks(blocks) = &u.content
                {
                    u.content = UserBody::Blocks(strip_images(blocks, target));
                }
                out.push(Message::User(u));
            }
        }
    }
    answer_orphans(&mut out, &mut open_calls);
    out
}

fn answer_orphans(out: &mut Vec<Message>, open: &mut Vec<(String, String)>) {
    for (id, name) in open.drain(..) {
        out.push(Message::ToolResult(ToolResultMessage {
            tool_call_id: id,
            tool_name: name,
            content: vec![UserContent::text(NO_RESULT_TEXT)],
            details: serde_json::Value::Null,
            is_error: true,
            timestamp: now_ms(),
            usage: None,
        }));
    }
}

fn same_model(a: &AssistantMessage, target: &Model) -> bool {
    a.provider == target.provider && a.model == target.id && a.api == target.api.as_str()
}

fn convert_assistant(a: &AssistantMessage, target: &Model, ids: &mut IdMap) -> AssistantMessage {
    let native = same_model(a, target);
    let content = a
        .content
        .iter()
        .filter_map(|block| match block {
            AssistantContent::Thinking(_) if !target.reasoning => None,
            AssistantContent::Thinking(t) if native => Some(block.clone())
                .filter(|_| !t.thinking.is_empty() || t.thinking_signature.is_some()),
            // Another model's reasoning is only readable as text; its signature means nothing here.
            AssistantContent::Thinking(t) if t.redacted || t.thinking.trim().is_empty() => None,
            AssistantContent::Thinking(t) => Some(AssistantContent::Text(TextContent {
                text: t.thinking.clone(),
                text_signature: None,
            })),
            AssistantContent::Text(t) if !native => Some(AssistantContent::Text(TextContent {
                text: t.text.clone(),
                text_signature: None,
            })),
            AssistantContent::Text(_) => Some(block.clone()),
            AssistantContent::ToolCall(tc) => {
                let mut tc = tc.clone();
                tc.id = ids.normalize(&tc.id);
                if !native {
                    tc.thought_signature = None;
                }
                Some(AssistantContent::ToolCall(tc))
            }
        })
        .collect();
    AssistantMessage {
        content,
        ..a.clone()
    }
}

fn strip_images(blocks: &[UserContent], target: &Model) -> Vec<UserContent> {
    if target.images {
        return blocks.to_vec();
    }
    blocks
        .iter()
        .map(|b| match b {
            UserContent::Image(_) => UserContent::text(IMAGE_OMITTED_TEXT),
            other => other.clone(),
        })
        .collect()
}

/// Tool-call ids valid for every wire: `[A-Za-z0-9_-]`, at most 40 characters, unique.
#[derive(Default)]
struct IdMap {
    map: HashMap<String, String>,
    used: HashSet<String>,
}

impl IdMap {
    fn normalize(&mut self, id: &str) -> String {
        if let Some(n) = self.map.get(id) {
            return n.clone();
        }
        let mut n: String = id
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .take(40)
            .collect();
        if n != id || self.used.contains(&n) {
            let base: String = n.chars().take(31).collect();
            let mut k = 0u32;
            loop {
                n = format!("{base}_{:08x}", fnv(id).wrapping_add(k));
                if !self.used.contains(&n) {
                    break;
                }
                k += 1;
            }
        }
        self.used.insert(n.clone());
        self.map.insert(id.to_string(), n.clone());
        n
    }

    fn get(&self, id: &str) -> String {
        self.map.get(id).cloned().unwrap_or_else(|| id.to_string())
    }
}

fn fnv(s: &str) -> u32 {
    s.bytes().fold(0x811c_9dc5u32, |h, b| {
        (h ^ b as u32).wrapping_mul(0x0100_0193)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{StopReason, ThinkingContent, ToolCall, Usage};
    use crate::model::Model;
    use serde_json::json;

    fn assistant(model: &Model, content: Vec<AssistantContent>, stop: StopReason) -> Message {
        Message::Assistant(AssistantMessage {
            content,
            usage: Usage::default(),
            stop_reason: stop,
            ..AssistantMessage::empty(model)
        })
    }

    fn call(id: &str) -> AssistantContent {
        AssistantContent::ToolCall(ToolCall {
            id: id.into(),
            name: "read".into(),
            arguments: json!({}),
            thought_signature: None,
        })
    }

    fn result(id: &str) -> Message {
        Message::ToolResult(ToolResultMessage {
            tool_call_id: id.into(),
            tool_name: "read".into(),
            content: vec![UserContent::text("ok")],
            details: serde_json::Value::Null,
            is_error: false,
            timestamp: 0,
            usage: None,
        })
    }

    #[test]
    fn failed_turns_are_dropped_and_orphans_answered() {
        let m = Model::anthropic("anthropic", "claude", "http://x");
        let msgs = vec![
            Message::user("hi"),
            assistant(&m, vec![], StopReason::Aborted),
            assistant(&m, vec![call("a"), call("b")], StopReason::ToolUse),
            result("b"),
            Message::user("next"),
        ];
        let out = prepare_messages(&msgs, &m);
        let roles: Vec<_> = out.iter().map(Message::role).collect();
        assert_eq!(
            roles,
            ["user", "assistant", "toolResult", "toolResult", "user"]
        );
        let Message::ToolResult(r) = &out[3] else {
            panic!()
        };
        assert_eq!((r.tool_call_id.as_str(), r.is_error), ("a", true));
        assert!(matches!(&r.content[0], UserContent::Text(t) if t.text == NO_RESULT_TEXT));
    }

    #[test]
    fn foreign_ids_are_normalized_consistently() {
        let openai = Model::openai_compatible("openai", "gpt", "http://x");
        let claude = Model::anthropic("anthropic", "claude", "http://y");
        let long = "call|abc/def".repeat(5);
        let msgs = vec![
            Message::user("hi"),
            assistant(&openai, vec![call(&long)], StopReason::ToolUse),
            result(&long),
        ];
        let out = prepare_messages(&msgs, &claude);
        let Message::Assistant(a) = &out[1] else {
            panic!()
        };
        let id = &a.tool_calls().next().unwrap().id;
        assert!(
            id.len() <= 40
                && id
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'),
            "{id}"
        );
        let Message::ToolResult(r) = &out[2] else {
            panic!()
        };
        assert_eq!(&r.tool_call_id, id);
    }

    #[test]
    fn thinking_is_downgraded_for_other_models_and_dropped_for_non_reasoning() {
        let mut claude = Model::anthropic("anthropic", "claude", "http://y");
        claude.reasoning = true;
        let thinking = AssistantContent::Thinking(ThinkingContent {
            thinking: "hmm".into(),
            thinking_signature: Some("sig".into()),
            redacted: false,
        });
        let msgs = vec![
            Message::user("q"),
            assistant(&claude, vec![thinking.clone()], StopReason::Stop),
        ];
        assert_eq!(prepare_messages(&msgs, &claude)[1], msgs[1]);
        let mut other = Model::openai_compatible("openai", "o3", "http://x");
        other.reasoning = true;
        let Message::Assistant(a) = &prepare_messages(&msgs, &other)[1] else {
            panic!()
        };
        assert!(matches!(&a.content[0], AssistantContent::Text(t) if t.text == "hmm"));
        claude.reasoning = false;
        let Message::Assistant(a) = &prepare_messages(&msgs, &claude)[1] else {
            panic!()
        };
        assert!(a.content.is_empty());
    }

    #[test]
    fn images_become_placeholders_for_text_only_models() {
        let m = Model::openai_compatible("local", "tiny", "http://x");
        let msgs = vec![Message::User(crate::message::UserMessage {
            content: UserBody::Blocks(vec![UserContent::Image(crate::message::ImageContent {
                data: "AAAA".into(),
                mime_type: "image/png".into(),
            })]),
            timestamp: 0,
        })];
        let Message::User(u) = &prepare_messages(&msgs, &m)[0] else {
            panic!()
        };
        assert_eq!(
            u.content.blocks(),
            vec![UserContent::text(IMAGE_OMITTED_TEXT)]
        );
    }
}
