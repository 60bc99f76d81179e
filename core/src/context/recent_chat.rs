//! `recent_chat`: the session's recent turns that open the transcript of a run.

use crate::agent_loop::estimate_message_tokens;
use crate::message::Message;

/// The turns carried into a run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RecentChat {
    /// The kept messages, oldest first.
    pub messages: Vec<Message>,
    /// Messages left out because they did not fit the budget.
    pub dropped: usize,
}

impl RecentChat {
    /// Keep the newest turns whose estimated size fits `budget_tokens`. A cut only ever falls
    /// before a user message, so a tool call is never separated from its result.
    pub fn select(transcript: Vec<Message>, budget_tokens: u64) -> Self {
        let mut used = 0u64;
        let mut cut = transcript.len();
        let mut start = transcript.len();
        for (i, m) in transcript.iter().enumerate().rev() {
            used += estimate_message_tokens(m);
            if used > budget_tokens {
                break;
            }
            start = i;
            if matches!(m, Message::User(_)) {
                cut = i;
            }
        }
        // Everything fits: keep all of it even when the first message is not a user message.
        let cut = if start == 0 { 0 } else { cut };
        let mut messages = transcript;
        let dropped = cut.min(messages.len());
        messages.drain(..dropped);
        RecentChat { messages, dropped }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{AssistantMessage, StopReason};
    use crate::model::Model;

    fn assistant(text: &str) -> Message {
        let mut a = AssistantMessage::empty(&Model::openai_compatible("p", "m", "http://x"));
        a.content.push(crate::message::AssistantContent::Text(
            crate::message::TextContent {
                text: text.into(),
                text_signature: None,
            },
        ));
        a.stop_reason = StopReason::Stop;
        Message::Assistant(a)
    }

    #[test]
    fn keeps_whole_turns_from_the_end() {
        let t = vec![
            Message::user("a".repeat(400)),
            assistant(&"b".repeat(400)),
            Message::user("c".repeat(40)),
            assistant(&"d".repeat(40)),
        ];
        let all = RecentChat::select(t.clone(), 1_000);
        assert_eq!((all.messages.len(), all.dropped), (4, 0));
        let recent = RecentChat::select(t.clone(), 100);
        assert_eq!((recent.messages.len(), recent.dropped), (2, 2));
        assert!(matches!(recent.messages[0], Message::User(_)));
        let none = RecentChat::select(t, 5);
        assert_eq!(none.messages.len(), 0);
    }
}
