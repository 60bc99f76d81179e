//! Branch summaries (pi's `branch-summarization`): when `/tree` leaves a branch that holds
//! work, the entries from the old leaf back to where the paths meet are summarised, so the
//! conversation that continues elsewhere still knows what was tried.

use std::collections::HashSet;
use std::sync::Arc;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::CompactionError;
use super::cut::summarizable;
use super::files::FileOperations;
use super::prompts::{BRANCH_SUMMARY_PREAMBLE, branch_summary_request_text};
use super::serialize::serialize_conversation;
use super::summarize::request;
use super::tokens::estimate_session_message_tokens;
use crate::model::Model;
use crate::provider::{StreamFn, StreamOptions};
use crate::session::{
    CompactionSummaryMessage, EntryKind, SessionEntry, SessionMessage, SessionStore,
    convert_to_llm, parse_iso_ms,
};

/// Output budget of a branch summary (pi's), at most the model's maximum.
pub const BRANCH_SUMMARY_MAX_TOKENS: u64 = 2048;

/// The summary stored when the branch left holds no messages.
pub const NO_CONTENT_TO_SUMMARIZE: &str = "No content to summarize";

/// The entries a move from `old_leaf` to `target` leaves behind: from the old leaf back to
/// (not including) the deepest entry both paths share, oldest first. Empty when there is no
/// old leaf or the target lies on the old path's end.
pub fn entries_left_behind<'a>(
    store: &'a SessionStore,
    old_leaf: Option<&str>,
    target: Option<&str>,
) -> Vec<&'a SessionEntry> {
    let Some(old_leaf) = old_leaf else {
        return Vec::new();
    };
    let target_path: HashSet<&str> = match target {
        Some(t) => store
            .branch_path(Some(t))
            .iter()
            .map(|e| e.id.as_str())
            .collect(),
        None => HashSet::new(),
    };
    let mut left: Vec<&SessionEntry> = store
        .branch_path(Some(old_leaf))
        .into_iter()
        .rev()
        .take_while(|e| !target_path.contains(e.id.as_str()))
        .collect();
    left.reverse();
    left
}

/// Whether leaving these entries loses conversation (so a summary is worth offering).
pub fn holds_conversation(entries: &[&SessionEntry]) -> bool {
    entries.iter().any(|e| branch_message(e).is_some())
}

/// What a branch summary is made from.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BranchPreparation {
    /// The messages to summarise, oldest first, the newest that fit the budget.
    pub messages: Vec<Arc<SessionMessage>>,
    /// Files the branch read and changed (all of it, not only what fit).
    pub file_ops: FileOperations,
    /// Estimated tokens of `messages`.
    pub total_tokens: u64,
}

/// Pick what to summarise from `entries` (oldest first): the newest messages within
/// `token_budget` (0: no limit), a summary that overflows it still taken while less than 90%
/// is used; file operations from every call and from earlier branch summaries' details.
pub fn prepare_branch_entries(entries: &[&SessionEntry], token_budget: u64) -> BranchPreparation {
    let mut prep = BranchPreparation::default();
    // Every file is listed, also those of calls too old to fit (pi lists only the calls it
    // reached before the budget ran out).
    for entry in entries {
        match &entry.kind {
            EntryKind::BranchSummary(b) if b.from_hook != Some(true) => {
                if let Some(details) = &b.details {
                    prep.file_ops.add_details(details);
                }
            }
            EntryKind::Message(m) => prep.file_ops.add_message(m),
            _ => {}
        }
    }
    let mut newest_first = Vec::new();
    for entry in entries.iter().rev() {
        let Some(message) = branch_message(entry) else {
            continue;
        };
        let tokens = estimate_session_message_tokens(&message);
        if token_budget > 0 && prep.total_tokens + tokens > token_budget {
            let is_summary = matches!(
                entry.kind,
                EntryKind::Compaction(_) | EntryKind::BranchSummary(_)
            );
            if is_summary && prep.total_tokens * 10 < token_budget * 9 {
                newest_first.push(message);
                prep.total_tokens += tokens;
            }
            break;
        }
        newest_first.push(message);
        prep.total_tokens += tokens;
    }
    newest_first.reverse();
    prep.messages = newest_first;
    prep
}

/// A branch summary ready to be stored as a `branch_summary` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct BranchSummaryResult {
    /// The text the model sees: the preamble, the summary, then the file lists.
    pub summary: String,
    /// `{"readFiles": [...], "modifiedFiles": [...]}`.
    pub details: Value,
}

/// How a branch summary is asked for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BranchSummaryAsk<'a> {
    /// Tokens of the model's window kept free of the branch's messages.
    pub reserve_tokens: u64,
    /// A focus added to the instructions.
    pub instructions: Option<&'a str>,
    /// The focus replaces the instructions instead.
    pub replace_instructions: bool,
}

/// Summarise `entries` (oldest first) with `model`, as `ask` says. Nothing to summarise gives
/// [`NO_CONTENT_TO_SUMMARIZE`] without asking the model.
pub async fn summarize_branch(
    provider: &dyn StreamFn,
    model: &Model,
    options: &StreamOptions,
    entries: &[&SessionEntry],
    ask: BranchSummaryAsk<'_>,
    cancel: CancellationToken,
) -> Result<BranchSummaryResult, CompactionError> {
    let window = match model.context_window {
        0 => 128_000,
        w => w,
    };
    let prep = prepare_branch_entries(entries, window.saturating_sub(ask.reserve_tokens));
    if prep.messages.is_empty() {
        return Ok(BranchSummaryResult {
            summary: NO_CONTENT_TO_SUMMARIZE.to_string(),
            details: prep.file_ops.details(),
        });
    }
    let conversation = serialize_conversation(&convert_to_llm(&prep.messages));
    let text =
        branch_summary_request_text(&conversation, ask.instructions, ask.replace_instructions);
    let max_tokens = match model.max_tokens {
        0 => BRANCH_SUMMARY_MAX_TOKENS,
        max => BRANCH_SUMMARY_MAX_TOKENS.min(max),
    };
    let summary = request(provider, model, options, text, max_tokens, cancel)
        .await
        .map_err(|e| e.into_error(CompactionError::Summarization))?;
    Ok(BranchSummaryResult {
        summary: format!(
            "{BRANCH_SUMMARY_PREAMBLE}{summary}{}",
            prep.file_ops.format()
        ),
        details: prep.file_ops.details(),
    })
}

/// The message an entry of a left branch adds to its summary: conversation (tool results
/// left out: the calls say what was done), extension messages, and earlier summaries.
fn branch_message(entry: &SessionEntry) -> Option<Arc<SessionMessage>> {
    match &entry.kind {
        EntryKind::Message(m) if matches!(**m, SessionMessage::ToolResult(_)) => None,
        EntryKind::Compaction(c) => Some(Arc::new(SessionMessage::CompactionSummary(
            CompactionSummaryMessage {
                summary: c.summary.clone(),
                tokens_before: c.tokens_before,
                timestamp: parse_iso_ms(&entry.timestamp).unwrap_or(0),
            },
        ))),
        _ => summarizable(entry),
    }
}
