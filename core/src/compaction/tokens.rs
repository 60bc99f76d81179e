//! How full the context is: the last reported usage plus chars/4 estimates for what came
//! after it (pi's `estimateContextTokens`), and the compaction threshold.

use std::borrow::Borrow;

use super::CompactionSettings;
use crate::agent_loop::{
    assistant_chars, blocks_chars, body_chars, chars_to_tokens, estimate_message_tokens, text_chars,
};
use crate::message::{AssistantMessage, Message, Usage};
use crate::session::SessionMessage;

/// A context-size estimate and how it was made.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ContextTokens {
    /// The estimate: `usage_tokens + trailing_tokens`.
    pub tokens: u64,
    /// What the anchoring assistant message reported (0 when none did).
    pub usage_tokens: u64,
    /// chars/4 estimates of the messages after the anchor (of all messages without one).
    pub trailing_tokens: u64,
    /// Position of the anchoring assistant message.
    pub last_usage_index: Option<usize>,
}

/// Context tokens a usage report stands for: `totalTokens`, or the sum of its parts when
/// the provider left the total at 0 (pi's `calculateContextTokens`).
pub fn usage_context_tokens(usage: &Usage) -> u64 {
    match usage.total_tokens {
        0 => usage.input + usage.output + usage.cache_read + usage.cache_write,
        total => total,
    }
}

/// The usage an assistant message can anchor an estimate with: failed (error/aborted)
/// messages and empty reports do not count.
fn anchor_usage(a: &AssistantMessage) -> Option<u64> {
    let tokens = usage_context_tokens(&a.usage);
    (!a.stop_reason.is_failure() && tokens > 0).then_some(tokens)
}

/// Shared walk: find the newest anchor, then estimate everything after it.
fn estimate<T>(
    messages: &[T],
    usage: impl Fn(&T) -> Option<u64>,
    tokens: impl Fn(&T) -> u64,
) -> ContextTokens {
    let anchor = messages
        .iter()
        .enumerate()
        .rev()
        .find_map(|(i, m)| usage(m).map(|u| (i, u)));
    let (usage_tokens, last_usage_index, rest) = match anchor {
        Some((i, u)) => (u, Some(i), messages.get(i + 1..).unwrap_or(&[])),
        None => (0, None, messages),
    };
    let trailing_tokens = rest.iter().map(tokens).sum();
    ContextTokens {
        tokens: usage_tokens + trailing_tokens,
        usage_tokens,
        trailing_tokens,
        last_usage_index,
    }
}

/// Estimate the context size of LLM messages (pi's `estimateContextTokens`).
pub fn estimate_context_tokens(messages: &[Message]) -> ContextTokens {
    estimate(
        messages,
        |m| m.as_assistant().and_then(anchor_usage),
        estimate_message_tokens,
    )
}

/// Estimate the context size of session messages (owned or shared), counting pi's extra
/// roles by their own rules rather than by their LLM text.
pub fn estimate_session_tokens<M: Borrow<SessionMessage>>(messages: &[M]) -> ContextTokens {
    estimate(
        messages,
        |m| m.borrow().as_assistant().and_then(anchor_usage),
        |m| estimate_session_message_tokens(m.borrow()),
    )
}

/// Estimated tokens of one session message, ceil(chars / 4) (pi's `estimateTokens`): shell
/// commands count command and output, summaries their summary text, extension messages
/// their content.
pub fn estimate_session_message_tokens(message: &SessionMessage) -> u64 {
    chars_to_tokens(match message {
        SessionMessage::User(u) => body_chars(&u.content),
        SessionMessage::Assistant(a) => assistant_chars(a),
        SessionMessage::ToolResult(r) => blocks_chars(&r.content),
        SessionMessage::BashExecution(b) => text_chars(&b.command) + text_chars(&b.output),
        SessionMessage::Custom(c) => body_chars(&c.content),
        SessionMessage::BranchSummary(s) => text_chars(&s.summary),
        SessionMessage::CompactionSummary(s) => text_chars(&s.summary),
    })
}

/// Whether the context has grown past `context_window - reserve_tokens` (never when
/// compaction is disabled).
pub fn should_compact(
    context_tokens: u64,
    context_window: u64,
    settings: &CompactionSettings,
) -> bool {
    // Signed, as in pi: a reserve larger than the window means "always".
    settings.enabled
        && i128::from(context_tokens)
            > i128::from(context_window) - i128::from(settings.reserve_tokens)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{StopReason, UserMessage};
    use crate::model::Model;
    use crate::session::{BashExecutionMessage, CompactionSummaryMessage};

    fn assistant(usage: Usage, stop: StopReason) -> Message {
        let mut a = AssistantMessage::empty(&Model::openai_compatible("p", "m", "http://x"));
        a.usage = usage;
        a.stop_reason = stop;
        Message::Assistant(a)
    }

    fn usage(input: u64, output: u64, total: u64) -> Usage {
        Usage {
            input,
            output,
            total_tokens: total,
            ..Default::default()
        }
    }

    #[test]
    fn usage_of_the_last_good_assistant_plus_trailing_estimates() {
        let messages = vec![
            Message::user("x".repeat(4000)),
            assistant(usage(900, 100, 1000), StopReason::Stop),
            Message::user("y".repeat(40)),
            // Newer, but failed: its usage must not anchor.
            assistant(usage(5000, 0, 5000), StopReason::Error),
            Message::user("z".repeat(7)),
        ];
        let t = estimate_context_tokens(&messages);
        assert_eq!(t.last_usage_index, Some(1));
        assert_eq!(t.usage_tokens, 1000);
        // 40/4 + an empty assistant (0) + ceil(7/4).
        assert_eq!(t.trailing_tokens, 10 + 2);
        assert_eq!(t.tokens, 1012);
    }

    #[test]
    fn total_zero_falls_back_to_the_sum_and_empty_usage_does_not_anchor() {
        let parts = Usage {
            input: 10,
            output: 5,
            cache_read: 100,
            cache_write: 1,
            total_tokens: 0,
            ..Default::default()
        };
        assert_eq!(usage_context_tokens(&parts), 116);
        let messages = vec![
            assistant(parts, StopReason::ToolUse),
            assistant(Usage::default(), StopReason::Stop),
            assistant(usage(1, 1, 2), StopReason::Aborted),
        ];
        let t = estimate_context_tokens(&messages);
        assert_eq!(t.last_usage_index, Some(0));
        assert_eq!(t.tokens, 116);
    }

    #[test]
    fn without_usage_everything_is_estimated() {
        let t = estimate_context_tokens(&[Message::user("abcdefgh"), Message::user("a")]);
        assert_eq!(
            t,
            ContextTokens {
                tokens: 3,
                usage_tokens: 0,
                trailing_tokens: 3,
                last_usage_index: None
            }
        );
        assert_eq!(estimate_context_tokens(&[]), ContextTokens::default());
    }

    #[test]
    fn session_roles_count_by_their_own_rules() {
        let bash = SessionMessage::BashExecution(BashExecutionMessage {
            command: "ls".into(),
            output: "abcdef".into(),
            exit_code: Some(0),
            cancelled: false,
            truncated: false,
            full_output_path: None,
            timestamp: 0,
            exclude_from_context: false,
        });
        assert_eq!(estimate_session_message_tokens(&bash), 2);
        let summary = SessionMessage::CompactionSummary(CompactionSummaryMessage {
            summary: "s".repeat(41),
            tokens_before: 0,
            timestamp: 0,
        });
        assert_eq!(estimate_session_message_tokens(&summary), 11);
        let user = SessionMessage::User(UserMessage::text("1234"));
        assert_eq!(estimate_session_tokens(&[bash, summary, user]).tokens, 14);
    }

    #[test]
    fn threshold_is_window_minus_reserve() {
        let s = CompactionSettings::default();
        assert!(!should_compact(100_000 - 16_384, 100_000, &s));
        assert!(should_compact(100_000 - 16_384 + 1, 100_000, &s));
        assert!(should_compact(1, 1000, &s), "reserve above the window");
        let off = CompactionSettings {
            enabled: false,
            ..s
        };
        assert!(!should_compact(1_000_000, 100_000, &off));
    }
}
