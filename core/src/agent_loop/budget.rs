//! Context-size estimates: the last reported usage plus chars/4 for what came after it.

use crate::message::{AssistantContent, Message, UserContent};

/// Characters an image counts for (pi's estimate).
const IMAGE_CHARS: usize = 4800;

fn blocks_chars(blocks: &[UserContent]) -> usize {
    blocks
        .iter()
        .map(|b| match b {
            UserContent::Text(t) => t.text.len(),
            UserContent::Image(_) => IMAGE_CHARS,
        })
        .sum()
}

/// Estimated tokens of one message: ceil(chars / 4).
pub fn estimate_message_tokens(msg: &Message) -> u64 {
    let chars = match msg {
        Message::User(u) => blocks_chars(&u.content.blocks()),
        Message::ToolResult(r) => blocks_chars(&r.content),
        Message::Assistant(a) => a
            .content
            .iter()
            .map(|c| match c {
                AssistantContent::Text(t) => t.text.len(),
                AssistantContent::Thinking(t) => t.thinking.len(),
                AssistantContent::ToolCall(tc) => tc.name.len() + tc.arguments.to_string().len(),
            })
            .sum(),
    };
    chars.div_ceil(4) as u64
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
            system_prompt.len().div_ceil(4) as u64
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
}
