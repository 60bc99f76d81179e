//! Compaction with pi's semantics: when the context nears the model's window, the older part
//! of the session path is summarised by the model and replaced by a `compaction` entry, while
//! the most recent ~`keep_recent_tokens` stay verbatim.
//!
//! The pieces, each usable alone:
//! - [`estimate_context_tokens`], [`should_compact`], [`is_context_overflow`]: when to compact.
//! - [`prepare_compaction`] (with [`find_cut_point`]): what to summarise and what to keep,
//!   from the entries of one session path. Pure; no I/O.
//! - [`compact`]: the summary request(s) over a [`crate::provider::StreamFn`].
//! - [`entries_left_behind`], [`summarize_branch`]: the summary of a branch `/tree` leaves,
//!   stored with [`SessionStore::branch_with_summary`].
//! - [`apply`]: append the result to a [`SessionStore`] as pi's `compaction` entry; context
//!   building ([`SessionStore::context`]) then starts with the summary.
//!
//! Where March differs from pi (each on purpose):
//! - A turn counts as split only when the kept part does not begin with the turn's start;
//!   pi also calls it split when settings entries pulled in above a user message come first,
//!   and then summarises the previous, complete turn as a "turn prefix".
//! - When no valid cut point follows the message that fills `keep_recent_tokens` (a huge
//!   last tool result), the cut goes to the nearest valid point before it; pi keeps
//!   everything then, so compacting would free nothing.
//! - [`prepare_compaction`] returns `None` when nothing would be summarised; pi would still
//!   send a summary request with an empty conversation.
//! - [`is_context_overflow`] counts cache writes as input too (they are part of the prompt).
//! - [`serialize_conversation`] cuts tool results at 2000 characters (Unicode scalar values,
//!   not UTF-16 units), so it never splits a character.
//! - [`apply`] refuses a result whose first kept entry is no longer on the store's current
//!   branch, instead of writing a compaction that would drop the whole history.

mod branch;
mod cut;
mod files;
mod overflow;
mod prompts;
mod serialize;
mod summarize;
mod tokens;

#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use branch::{
    BRANCH_SUMMARY_MAX_TOKENS, BranchPreparation, BranchSummaryAsk, BranchSummaryResult,
    NO_CONTENT_TO_SUMMARIZE, entries_left_behind, holds_conversation, prepare_branch_entries,
    summarize_branch,
};
pub use cut::{
    CompactionPreparation, CutPoint, find_cut_point, find_turn_start, prepare_compaction,
};
pub use files::{FileOperations, format_file_operations};
pub use overflow::is_context_overflow;
pub use prompts::{
    BRANCH_SUMMARY_PREAMBLE, BRANCH_SUMMARY_PROMPT, SPLIT_TURN_SEPARATOR,
    SUMMARIZATION_SYSTEM_PROMPT, SUMMARY_PROMPT, TURN_PREFIX_PROMPT, UPDATE_SUMMARY_PROMPT,
    branch_summary_request_text, summary_request_text, turn_prefix_request_text,
};
pub use serialize::{TOOL_RESULT_MAX_CHARS, serialize_conversation};
pub use summarize::{NO_PRIOR_HISTORY, compact, summary_max_tokens, turn_prefix_max_tokens};
pub use tokens::{
    ContextTokens, estimate_context_tokens, estimate_session_message_tokens,
    estimate_session_tokens, should_compact, usage_context_tokens,
};

use crate::session::{SessionEntry, SessionError, SessionStore};

/// When to compact and how much to keep (pi's `compaction` settings, same defaults).
///
/// Read from March's config with snake_case keys; pi's camelCase names are accepted too.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct CompactionSettings {
    /// Compact automatically when the context nears the window.
    pub enabled: bool,
    /// Tokens kept free below the window; also sizes the summary's output budget.
    #[serde(alias = "reserveTokens")]
    pub reserve_tokens: u64,
    /// Roughly how many tokens of recent conversation stay verbatim.
    #[serde(alias = "keepRecentTokens")]
    pub keep_recent_tokens: u64,
}

impl Default for CompactionSettings {
    fn default() -> Self {
        CompactionSettings {
            enabled: true,
            reserve_tokens: 16_384,
            keep_recent_tokens: 20_000,
        }
    }
}

/// A finished compaction, ready to be appended as a `compaction` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct CompactionResult {
    /// The summary the model will see, file lists appended.
    pub summary: String,
    /// The first entry kept verbatim.
    pub first_kept_entry_id: String,
    /// Estimated context tokens before compacting.
    pub tokens_before: u64,
    /// `{"readFiles": [...], "modifiedFiles": [...]}`, carried into the next compaction.
    pub details: Value,
}

/// Why a compaction could not be made or stored.
#[derive(Debug, thiserror::Error)]
pub enum CompactionError {
    /// The summary request failed or produced no summary.
    #[error("Summarization failed: {0}")]
    Summarization(String),
    /// The request summarising the start of a split turn failed or produced nothing.
    #[error("Turn prefix summarization failed: {0}")]
    TurnPrefix(String),
    /// The caller cancelled the summary request.
    #[error("Summarization failed: the request was aborted")]
    Aborted,
    /// The store moved to a branch that does not hold the first kept entry since the
    /// compaction was prepared; appending it would drop the whole history.
    #[error(
        "the first kept entry `{0}` is not on the session's current branch; \
         prepare the compaction again"
    )]
    StaleCutPoint(String),
    /// The compaction entry could not be written.
    #[error(transparent)]
    Session(#[from] SessionError),
}

/// Append `result` to `store` as pi's `compaction` entry (child of the current leaf).
///
/// Nothing is written when the first kept entry is not on the current branch.
pub fn apply(
    store: &mut SessionStore,
    result: CompactionResult,
) -> Result<&SessionEntry, CompactionError> {
    let on_branch = store
        .branch_path(None)
        .iter()
        .any(|e| e.id == result.first_kept_entry_id);
    if !on_branch {
        return Err(CompactionError::StaleCutPoint(result.first_kept_entry_id));
    }
    Ok(store.append_compaction(
        result.summary,
        &result.first_kept_entry_id,
        result.tokens_before,
        Some(result.details),
    )?)
}
