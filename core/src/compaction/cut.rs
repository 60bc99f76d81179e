//! Where to cut a session path (pi's `findCutPoint`) and what a compaction will summarise
//! and keep (pi's `prepareCompaction`). Pure functions over the path's entries.

use std::borrow::Borrow;
use std::borrow::Cow;
use std::sync::Arc;

use super::CompactionSettings;
use super::files::FileOperations;
use super::tokens::{estimate_session_message_tokens, estimate_session_tokens};
use crate::session::{
    BranchSummaryMessage, Compaction, CompactionSummaryMessage, CustomMessage, EntryKind,
    SessionEntry, SessionMessage, parse_iso_ms,
};

/// Where a compaction cuts the path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CutPoint {
    /// Position of the first entry kept verbatim.
    pub first_kept_index: usize,
    /// When the cut falls inside a turn (the kept part does not begin with a user message or
    /// another turn start): the position of the entry that started that turn.
    pub turn_start_index: Option<usize>,
}

impl CutPoint {
    /// Whether the cut falls inside a turn, whose beginning is then summarised separately.
    pub fn is_split_turn(&self) -> bool {
        self.turn_start_index.is_some()
    }
}

/// Everything [`super::compact`] needs, computed from one session path.
#[derive(Debug, Clone, PartialEq)]
pub struct CompactionPreparation {
    /// The first entry kept verbatim.
    pub first_kept_entry_id: String,
    /// Older history to summarise (shared with the store, not copied).
    pub messages_to_summarize: Vec<Arc<SessionMessage>>,
    /// The start of a split turn, summarised on its own; empty unless `is_split_turn`.
    pub turn_prefix_messages: Vec<Arc<SessionMessage>>,
    /// Whether the cut falls inside a turn.
    pub is_split_turn: bool,
    /// Estimated context tokens of the path before compacting.
    pub tokens_before: u64,
    /// The summary of the previous compaction on the path, to be updated.
    pub previous_summary: Option<String>,
    /// Files read and modified, the previous compaction's included.
    pub file_ops: FileOperations,
    /// The settings this was prepared with.
    pub settings: CompactionSettings,
}

/// Whether the entry may be the first one kept: any message but a tool result (which must
/// stay with the call before it), or an entry that becomes a user message in context.
fn is_valid_cut(entry: &SessionEntry) -> bool {
    match &entry.kind {
        EntryKind::Message(m) => !matches!(**m, SessionMessage::ToolResult(_)),
        EntryKind::BranchSummary(_) | EntryKind::CustomMessage(_) => true,
        _ => false,
    }
}

/// The position of the entry that starts the turn holding `index`, searching back to
/// `start`: a user or shell-command message, or a branch summary or extension message.
pub fn find_turn_start<E: Borrow<SessionEntry>>(
    entries: &[E],
    index: usize,
    start: usize,
) -> Option<usize> {
    let last = index.min(entries.len().checked_sub(1)?);
    (start..=last).rev().find(|&i| {
        entries.get(i).is_some_and(|e| match &e.borrow().kind {
            EntryKind::Message(m) => matches!(
                **m,
                SessionMessage::User(_) | SessionMessage::BashExecution(_)
            ),
            EntryKind::BranchSummary(_) | EntryKind::CustomMessage(_) => true,
            _ => false,
        })
    })
}

/// Find the cut in `entries[start..end]` that keeps about `keep_recent_tokens` of the
/// newest messages.
///
/// Walking back from the newest message, estimates are summed until they reach the budget;
/// the cut is the first valid cut point (never a tool result) at or after the message that
/// reached it. When everything fits, the cut is the range's first valid cut point. When no
/// valid cut point follows (a huge last tool result), pi keeps everything; March cuts at the
/// nearest one before instead, so the older history can still go. Settings and other
/// non-message entries just before the cut are kept with it (stopping at a message or a
/// compaction). Without any valid cut point the range start is returned.
pub fn find_cut_point<E: Borrow<SessionEntry>>(
    entries: &[E],
    start: usize,
    end: usize,
    keep_recent_tokens: u64,
) -> CutPoint {
    let end = end.min(entries.len());
    let start = start.min(end);
    let range = entries.get(start..end).unwrap_or(&[]);
    let cuts: Vec<usize> = (start..end)
        .filter(|&i| entries.get(i).is_some_and(|e| is_valid_cut(e.borrow())))
        .collect();
    let Some(&first_cut) = cuts.first() else {
        return CutPoint {
            first_kept_index: start,
            turn_start_index: None,
        };
    };

    let mut cut = first_cut;
    let mut kept = 0u64;
    for (offset, entry) in range.iter().enumerate().rev() {
        let Some(message) = entry.borrow().message() else {
            continue;
        };
        kept += estimate_session_message_tokens(message);
        if kept >= keep_recent_tokens {
            let at = start + offset;
            // pi keeps everything when no cut point follows (a huge last tool result);
            // cutting just before it, at its call, still compacts the older history.
            cut = cuts
                .iter()
                .find(|&&c| c >= at)
                .or_else(|| cuts.iter().rev().find(|&&c| c < at))
                .copied()
                .unwrap_or(first_cut);
            break;
        }
    }

    // Keep the settings changes, labels and the like that directly precede the cut.
    let message_cut = cut;
    while cut > start {
        let Some(prev) = entries.get(cut - 1).map(Borrow::borrow) else {
            break;
        };
        if matches!(prev.kind, EntryKind::Message(_) | EntryKind::Compaction(_)) {
            break;
        }
        cut -= 1;
    }

    // The turn is split when the kept part does not begin with the turn's start: when the
    // nearest turn start at or above the cut message lies above everything kept. pi asks
    // whether the first kept entry is a user message after pulling in the entries above,
    // so a model change right before a user message makes it treat the previous, complete
    // turn as split; March looks at the cut message and what came along with it.
    let turn_start_index = find_turn_start(entries, message_cut, start).filter(|&t| t < cut);
    CutPoint {
        first_kept_index: cut,
        turn_start_index,
    }
}

/// What a compaction of this path (root to leaf, all entry kinds) would summarise and keep.
///
/// `None` when there is nothing to compact: an empty path, a path that already ends with a
/// compaction, or one whose history since the last compaction fits in `keep_recent_tokens`.
pub fn prepare_compaction<E: Borrow<SessionEntry>>(
    path_entries: &[E],
    settings: &CompactionSettings,
) -> Option<CompactionPreparation> {
    let entry = |i: usize| path_entries.get(i).map(Borrow::borrow);
    let last = entry(path_entries.len().checked_sub(1)?)?;
    if matches!(last.kind, EntryKind::Compaction(_)) {
        return None;
    }

    let previous =
        path_entries
            .iter()
            .enumerate()
            .rev()
            .find_map(|(i, e)| match &e.borrow().kind {
                EntryKind::Compaction(c) => Some((i, c)),
                _ => None,
            });
    // Start at what the previous compaction kept: those entries are in the context and
    // have not been summarised yet. Its first kept entry missing, start right after it.
    let boundary_start = previous.map_or(0, |(i, c)| {
        path_entries
            .iter()
            .position(|e| e.borrow().id == c.first_kept_entry_id)
            .unwrap_or(i + 1)
    });

    let tokens_before = estimate_session_tokens(&path_context(path_entries)).tokens;
    let cut = find_cut_point(
        path_entries,
        boundary_start,
        path_entries.len(),
        settings.keep_recent_tokens,
    );
    let first_kept = entry(cut.first_kept_index)?;
    if first_kept.id.is_empty() {
        return None;
    }

    let history_end = cut.turn_start_index.unwrap_or(cut.first_kept_index);
    let collect = |from: usize, to: usize| -> Vec<Arc<SessionMessage>> {
        (from..to)
            .filter_map(|i| entry(i).and_then(summarizable))
            .collect()
    };
    let messages_to_summarize = collect(boundary_start, history_end);
    let turn_prefix_messages = match cut.turn_start_index {
        Some(turn_start) => collect(turn_start, cut.first_kept_index),
        None => Vec::new(),
    };
    if messages_to_summarize.is_empty() && turn_prefix_messages.is_empty() {
        return None;
    }

    let mut file_ops = previous.map_or_else(FileOperations::default, |(_, c)| {
        FileOperations::from_previous(c)
    });
    for message in messages_to_summarize.iter().chain(&turn_prefix_messages) {
        file_ops.add_message(message);
    }

    Some(CompactionPreparation {
        first_kept_entry_id: first_kept.id.clone(),
        messages_to_summarize,
        turn_prefix_messages,
        is_split_turn: cut.is_split_turn(),
        tokens_before,
        previous_summary: previous.map(|(_, c)| c.summary.clone()),
        file_ops,
        settings: *settings,
    })
}

/// The message an entry adds to the material to summarise: messages themselves, extension
/// messages and branch summaries. A compaction's summary is passed separately.
pub(super) fn summarizable(entry: &SessionEntry) -> Option<Arc<SessionMessage>> {
    let timestamp = parse_iso_ms(&entry.timestamp).unwrap_or(0);
    match &entry.kind {
        EntryKind::Message(m) => Some(Arc::clone(m)),
        EntryKind::CustomMessage(c) => Some(Arc::new(SessionMessage::Custom(CustomMessage {
            custom_type: c.custom_type.clone(),
            content: c.content.clone(),
            display: c.display,
            details: c.details.clone(),
            timestamp,
        }))),
        EntryKind::BranchSummary(b) => Some(Arc::new(SessionMessage::BranchSummary(
            BranchSummaryMessage {
                summary: b.summary.clone(),
                from_id: b.from_id.clone(),
                timestamp,
            },
        ))),
        _ => None,
    }
}

/// The messages the model sees at the end of this path (as the session's context building
/// makes them), to size the context before compacting.
fn path_context<E: Borrow<SessionEntry>>(path: &[E]) -> Vec<Cow<'_, SessionMessage>> {
    let last_compaction = path.iter().enumerate().rev().find_map(|(i, e)| {
        let e = e.borrow();
        match &e.kind {
            EntryKind::Compaction(c) => Some((i, c, e)),
            _ => None,
        }
    });
    let Some((at, compaction, entry)) = last_compaction else {
        return path.iter().filter_map(|e| in_context(e.borrow())).collect();
    };
    let mut messages = vec![Cow::Owned(summary_message(compaction, entry))];
    let kept = path
        .get(..at)
        .unwrap_or(&[])
        .iter()
        .skip_while(|e| (*e).borrow().id != compaction.first_kept_entry_id);
    let after = path.get(at + 1..).unwrap_or(&[]);
    messages.extend(kept.chain(after).filter_map(|e| in_context(e.borrow())));
    messages
}

/// The message an entry contributes to the context, if any.
fn in_context(entry: &SessionEntry) -> Option<Cow<'_, SessionMessage>> {
    match &entry.kind {
        EntryKind::Message(m) => Some(Cow::Borrowed(&**m)),
        // Context building leaves empty branch summaries out.
        EntryKind::BranchSummary(b) if b.summary.is_empty() => None,
        _ => summarizable(entry).map(|m| Cow::Owned(Arc::unwrap_or_clone(m))),
    }
}

/// The summary message a compaction entry puts at the start of the context.
fn summary_message(compaction: &Compaction, entry: &SessionEntry) -> SessionMessage {
    SessionMessage::CompactionSummary(CompactionSummaryMessage {
        summary: compaction.summary.clone(),
        tokens_before: compaction.tokens_before,
        timestamp: parse_iso_ms(&entry.timestamp).unwrap_or(0),
    })
}
