//! Context-size estimates: the last reported usage plus chars/4 for what came after it.

use crate::message::{AssistantContent, AssistantMessage, Message, UserBody, UserContent};

/// Characters an image counts for (pi's estimate).
const IMAGE_CHARS: usize = 4800;

/// The length of `text` as pi measures it: JavaScript string length, i.e. UTF-16 code
/// units. Bytes would count CJK text three times over.
pub(crate) fn text_chars(text: &str) -> usize {
    text.encode_utf16().count()
}

/// Characters of text and image blocks (each image counts [`IMAGE_CHARS`]).
pub(crate) fn blocks_chars(blocks: &[UserContent]) -> usize {
    blocks
        .iter()
        .map(|b| match b {
            UserContent::Text(t) => text_chars(&t.text),
            UserContent::Image(_) => IMAGE_CHARS,
        })
        .sum()
}

/// Characters of a user body, whichever form it is stored in (without copying it).
pub(crate) fn body_chars(body: &UserBody) -> usize {
    match body {
        UserBody::Text(t) => text_chars(t),
        UserBody::Blocks(b) => blocks_chars(b),
    }
}

/// Characters of an assistant message: text, thinking, and each call's name plus JSON
/// arguments.
pub(crate) fn assistant_chars(a: &AssistantMessage) -> usize {
    a.content
        .iter()
        .map(|c| match c {
            AssistantContent::Text(t) => text_chars(&t.text),
            AssistantContent::Thinking(t) => text_chars(&t.thinking),
            AssistantContent::ToolCall(tc) => {
                text_chars(&tc.name) + text_chars(&tc.arguments.to_string())
            }
        })
        .sum()
}

/// Tokens for a character count: ceil(chars / 4).
pub(crate) fn chars_to_tokens(chars: usize) -> u64 {
    chars.div_ceil(4) as u64
}

/// Estimated tokens of one message: ceil(chars / 4).
pub fn estimate_message_tokens(msg: &Message) -> u64 {
    chars_to_tokens(match msg {
        Message::User(u) => body_chars(&u.content),
        Message::ToolResult(r) => blocks_chars(&r.content),
        Message::Assistant(a) => assistant_chars(a),
    })
}

/// Estimated context tokens: the newest successful assistant's reported usage, plus
/// estimates for the messages after it (or for everything when no usage was reported).
pub fn estimate_context_tokens(system_prompt: &str, messages: &[Message]) -> u64 {
    let anchor = messages.iter().enumerate().rev().find_map(|(i, m)| {
        let a = m.as_assistant()?;
        let u = &a.usage;
        let total = u
            .total_tokens
            .max(u.input + u.output + u.cache_read + u.cache_write);
        (!a.stop_reason.is_failure() && total > 0).then_some((i, total))
    });
    match anchor {
        Some((i, total)) => {
            total
                + messages[i + 1..]
                    .iter()
                    .map(estimate_message_tokens)
                    .sum::<u64>()
        }
        None => {
            chars_to_tokens(text_chars(system_prompt))
                + messages.iter().map(estimate_message_tokens).sum::<u64>()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{AssistantMessage, StopReason, Usage};
    use crate::model::Model;

    #[test]
    fn usage_anchors_the_estimate() {
        let m = Model::openai_compatible("p", "m", "http://x");
        let mut a = AssistantMessage::empty(&m);
        a.usage = Usage {
            input: 100,
            output: 20,
            ..Default::default()
        };
        a.stop_reason = StopReason::Stop;
        let msgs = vec![
            Message::user("x".repeat(400)),
            Message::Assistant(a),
            Message::user("12345678"),
        ];
        assert_eq!(estimate_context_tokens("", &msgs), 120 + 2);
        assert_eq!(estimate_context_tokens("abcd", &msgs[..1]), 1 + 100);
    }

    #[test]
    fn characters_are_counted_as_pi_counts_them() {
        // JavaScript length: one unit per BMP character, two for an emoji; not UTF-8 bytes.
        assert_eq!(estimate_message_tokens(&Message::user("写一个函数")), 2);
        assert_eq!(estimate_message_tokens(&Message::user("😀😀")), 1);
        let image = UserContent::Image(crate::message::ImageContent {
            data: "AAAA".into(),
            mime_type: "image/png".into(),
        });
        let msg = Message::User(crate::message::UserMessage {
            content: UserBody::Blocks(vec![UserContent::text("abcd"), image]),
            timestamp: 0,
        });
        assert_eq!(estimate_message_tokens(&msg), 1 + 1200);
    }
}
