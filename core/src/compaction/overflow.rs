//! Recognising a request that did not fit the model's context window (pi's
//! `isContextOverflow`): providers say so in many words, and some accept the request and
//! only report more input than the window holds.

use crate::message::{AssistantMessage, StopReason};

/// One piece of an overflow pattern, matched against lowercased text with `_` read as a
/// space (so `context_length_exceeded` and "context length exceeded" are one pattern).
#[derive(Clone, Copy)]
enum Piece {
    /// This exact text.
    Lit(&'static str),
    /// One or more ASCII digits.
    Digits,
    /// Anything, possibly nothing.
    Any,
}

use Piece::{Any, Digits, Lit};

/// Provider overflow messages; the comment names who sends each.
const PATTERNS: &[&[Piece]] = &[
    &[Lit("prompt is too long")],         // Anthropic
    &[Lit("prompt too long")],            // several OpenAI-compatible servers
    &[Lit("input is too long")],          // Amazon Bedrock and others
    &[Lit("exceeds the context window")], // OpenAI
    &[Lit("input token count"), Any, Lit("exceeds the maximum")], // Google Gemini
    &[Lit("maximum prompt length is "), Digits], // xAI
    &[Lit("reduce the length of the messages")], // Groq
    &[Lit("maximum context length")],     // OpenAI classic, OpenRouter, vLLM, Mistral
    &[Lit("exceeds the limit of "), Digits], // GitHub Copilot
    &[Lit("exceeds the available context size")], // llama.cpp
    &[Lit("greater than the context length")], // LM Studio
    &[Lit("context window exceeds limit")], // MiniMax
    &[Lit("exceeded model token limit")], // Kimi
    &[Lit("context length exceeded")],    // generic, `context_length_exceeded` codes
    &[Lit("too many tokens")],            // generic
    &[Lit("token limit exceeded")],       // generic
    &[Lit("request too large")],          // Anthropic `request_too_large` and others
];

/// Whether `assistant` shows that its request overflowed the context window: a provider
/// error saying so, or a successful answer whose reported input exceeds `context_window`
/// (providers that truncate silently; skipped when the window is unknown, i.e. 0).
pub fn is_context_overflow(assistant: &AssistantMessage, context_window: u64) -> bool {
    if assistant.stop_reason == StopReason::Error
        && let Some(message) = assistant.error_message.as_deref()
        && is_overflow_message(message)
    {
        return true;
    }
    // All input kinds count: cached and cache-written tokens are part of the prompt too.
    let u = &assistant.usage;
    let input = u.input + u.cache_read + u.cache_write;
    context_window > 0 && assistant.stop_reason == StopReason::Stop && input > context_window
}

/// Whether an error text is a context-overflow error.
fn is_overflow_message(message: &str) -> bool {
    let text = message.to_lowercase().replace('_', " ");
    PATTERNS.iter().any(|p| find(&text, p)) || is_bare_status(&text)
}

/// Cerebras answers an oversized request with a bare 400 or 413: pi's "400 status code (no
/// body)", or as March's provider words it, "HTTP 413 Payload Too Large: (empty body)".
fn is_bare_status(text: &str) -> bool {
    let text = text.trim_start();
    let text = text.strip_prefix("http ").unwrap_or(text);
    (text.starts_with("400") || text.starts_with("413"))
        && (text.contains("(no body)") || text.contains("(empty body)"))
}

/// Whether `pattern` occurs anywhere in `text`.
fn find(text: &str, pattern: &[Piece]) -> bool {
    match pattern.first() {
        // Every pattern starts with text, so only its occurrences need trying.
        Some(Lit(first)) => text
            .match_indices(first)
            .any(|(at, _)| matches_at(text, at, pattern)),
        Some(_) => (0..=text.len())
            .filter(|&i| text.is_char_boundary(i))
            .any(|i| matches_at(text, i, pattern)),
        None => true,
    }
}

/// Whether `pattern` matches `text` starting at byte `at`.
fn matches_at(text: &str, at: usize, pattern: &[Piece]) -> bool {
    let Some((piece, rest)) = pattern.split_first() else {
        return true;
    };
    let Some(tail) = text.get(at..) else {
        return false;
    };
    match piece {
        Lit(lit) => tail.starts_with(lit) && matches_at(text, at + lit.len(), rest),
        Digits => {
            let n = tail.bytes().take_while(u8::is_ascii_digit).count();
            n > 0 && matches_at(text, at + n, rest)
        }
        Any => match rest.first() {
            Some(Lit(next)) => tail
                .match_indices(next)
                .any(|(i, _)| matches_at(text, at + i, rest)),
            Some(_) => (at..=text.len())
                .filter(|&i| text.is_char_boundary(i))
                .any(|i| matches_at(text, i, rest)),
            None => true,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::Usage;
    use crate::model::Model;

    fn failed(message: &str) -> AssistantMessage {
        let mut a = AssistantMessage::empty(&Model::openai_compatible("p", "m", "http://x"));
        a.stop_reason = StopReason::Error;
        a.error_message = Some(message.to_string());
        a
    }

    #[test]
    fn provider_overflow_errors_are_recognised() {
        let overflows = [
            "HTTP 400 Bad Request: prompt is too long: 213462 tokens > 200000 maximum",
            "Your input exceeds the context window of this model",
            "The input token count (1196265) exceeds the maximum number of tokens allowed",
            "This model's maximum prompt length is 131072 but the request contains 537812 tokens",
            "Please reduce the length of the messages or completion.",
            "This model's maximum context length is 8192 tokens. However, you requested 9000",
            "prompt token count of 140000 exceeds the limit of 128000",
            "the request exceeds the available context size, try increasing it",
            "tokens to keep from the initial prompt is greater than the context length",
            "invalid params, context window exceeds limit (2013)",
            "Your request exceeded model token limit: 262144 (requested: 300000)",
            "Error code: context_length_exceeded",
            "CONTEXT LENGTH EXCEEDED",
            "Too many tokens in request",
            "Token limit exceeded for this model",
            "Input is too long for requested model.",
            "request_too_large",
            "HTTP 413 Payload Too Large: (empty body)",
            "400 status code (no body)",
        ];
        for text in overflows {
            assert!(is_context_overflow(&failed(text), 0), "{text}");
        }
    }

    #[test]
    fn other_errors_are_not_overflow() {
        let others = [
            "HTTP 429 Too Many Requests: rate limit reached",
            "HTTP 400 Bad Request: invalid tool schema",
            "HTTP 413 Payload Too Large: image exceeds 5 MB",
            "input token count is fine",
            "maximum prompt length is unknown",
            "exceeds the limit of the plan",
            "Request was aborted",
        ];
        for text in others {
            assert!(!is_context_overflow(&failed(text), 0), "{text}");
        }
        // The text matters only on an error stop.
        let mut ok = failed("prompt is too long");
        ok.stop_reason = StopReason::Stop;
        assert!(!is_context_overflow(&ok, 0));
    }

    #[test]
    fn reported_input_above_the_window_is_overflow() {
        let mut a = AssistantMessage::empty(&Model::openai_compatible("p", "m", "http://x"));
        a.usage = Usage {
            input: 90_000,
            cache_read: 20_000,
            output: 50_000,
            ..Default::default()
        };
        assert!(is_context_overflow(&a, 100_000));
        assert!(!is_context_overflow(&a, 110_000), "output does not count");
        assert!(!is_context_overflow(&a, 0), "unknown window");
        a.stop_reason = StopReason::Length;
        assert!(!is_context_overflow(&a, 100_000));
    }
}
