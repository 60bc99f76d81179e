//! What the model sees at a leaf (pi's `buildSessionContext`), and the entry tree.

use std::collections::HashMap;
use std::sync::Arc;

use super::entry::{EntryKind, SessionEntry};
use super::messages::{
    BranchSummaryMessage, CompactionSummaryMessage, CustomMessage, SessionMessage, convert_to_llm,
};
use super::time::parse_iso_ms;
use crate::message::Message;
use crate::model::ThinkingLevel;

/// The conversation at a leaf, with the settings in force there.
///
/// Messages are shared with the store's entries: building a context copies pointers, so a
/// loaded session and its context cost about the session once, not twice.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SessionContext {
    /// The messages on the path, compaction and summaries applied.
    pub messages: Vec<Arc<SessionMessage>>,
    /// The last `thinking_level_change` on the path, as written (`off` when none).
    pub thinking_level: String,
    /// `(provider, model id)` from the last model change or assistant message on the path.
    pub model: Option<(String, String)>,
    /// The tools of the last `active_tools_change` on the path (`None`: never recorded).
    pub active_tools: Option<Vec<String>>,
}

impl SessionContext {
    /// The messages as the model sees them (pi's `convertToLlm`).
    pub fn llm_messages(&self) -> Vec<Message> {
        convert_to_llm(&self.messages)
    }

    /// The thinking level, when it is one March knows.
    pub fn thinking(&self) -> Option<ThinkingLevel> {
        self.thinking_level.parse().ok()
    }

    fn empty() -> Self {
        SessionContext {
            messages: Vec::new(),
            thinking_level: "off".to_string(),
            model: None,
            active_tools: None,
        }
    }
}

/// The entry tree as positions in `SessionStore::entries`, without nesting so deep trees
/// (a long linear session is one) cost no recursion.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SessionTree {
    /// Entries without a (known) parent, in file order.
    pub roots: Vec<usize>,
    /// Children of each entry by position, oldest first.
    pub children: Vec<Vec<usize>>,
}

impl SessionTree {
    /// The children of the entry at `index` (empty for an unknown index).
    pub fn children_of(&self, index: usize) -> &[usize] {
        self.children.get(index).map_or(&[], Vec::as_slice)
    }
}

/// Positions from the root down to `start`, following `parentId`; stops at a missing
/// parent or at a cycle (a damaged file must not hang the reader).
pub(crate) fn path_to(
    entries: &[SessionEntry],
    by_id: &HashMap<String, usize>,
    start: Option<usize>,
) -> Vec<usize> {
    let mut seen = vec![false; entries.len()];
    let mut path = Vec::new();
    let mut current = start;
    while let Some(i) = current {
        let (Some(entry), Some(false)) = (entries.get(i), seen.get(i).copied()) else {
            break;
        };
        if let Some(flag) = seen.get_mut(i) {
            *flag = true;
        }
        path.push(i);
        current = entry
            .parent_id
            .as_deref()
            .and_then(|p| by_id.get(p).copied());
    }
    path.reverse();
    path
}

/// pi's `buildSessionContext`: `None` → empty; an unknown leaf falls back to the last entry.
pub(crate) fn build_context(
    entries: &[SessionEntry],
    by_id: &HashMap<String, usize>,
    leaf: Option<&str>,
) -> SessionContext {
    let Some(leaf) = leaf else {
        return SessionContext::empty();
    };
    let start = by_id
        .get(leaf)
        .copied()
        .or_else(|| entries.len().checked_sub(1));
    let path: Vec<&SessionEntry> = path_to(entries, by_id, start)
        .into_iter()
        .filter_map(|i| entries.get(i))
        .collect();

    let mut ctx = SessionContext::empty();
    let mut compaction = None;
    for (pos, entry) in path.iter().enumerate() {
        match &entry.kind {
            EntryKind::ThinkingLevelChange(t) => ctx.thinking_level.clone_from(&t.thinking_level),
            EntryKind::ModelChange(m) => ctx.model = Some((m.provider.clone(), m.model_id.clone())),
            EntryKind::Message(m) => {
                if let SessionMessage::Assistant(a) = &**m {
                    ctx.model = Some((a.provider.clone(), a.model.clone()));
                }
            }
            EntryKind::Compaction(c) => compaction = Some((pos, c, entry)),
            EntryKind::ActiveToolsChange(t) => {
                ctx.active_tools = Some(t.active_tool_names.clone());
            }
            _ => {}
        }
    }

    match compaction {
        Some((pos, c, entry)) => {
            ctx.messages
                .push(Arc::new(SessionMessage::CompactionSummary(
                    CompactionSummaryMessage {
                        summary: c.summary.clone(),
                        tokens_before: c.tokens_before,
                        timestamp: timestamp_ms(entry),
                    },
                )));
            let (before, after) = path.split_at(pos);
            let kept = before.iter().skip_while(|e| e.id != c.first_kept_entry_id);
            for e in kept.chain(after.iter().skip(1)) {
                push_context_message(&mut ctx.messages, e);
            }
        }
        None => {
            for e in &path {
                push_context_message(&mut ctx.messages, e);
            }
        }
    }
    ctx
}

/// The message an entry contributes to the context, if any.
fn push_context_message(messages: &mut Vec<Arc<SessionMessage>>, entry: &SessionEntry) {
    match &entry.kind {
        EntryKind::Message(m) => messages.push(Arc::clone(m)),
        EntryKind::CustomMessage(c) => {
            messages.push(Arc::new(SessionMessage::Custom(CustomMessage {
                custom_type: c.custom_type.clone(),
                content: c.content.clone(),
                display: c.display,
                details: c.details.clone(),
                timestamp: timestamp_ms(entry),
            })));
        }
        EntryKind::BranchSummary(b) if !b.summary.is_empty() => {
            messages.push(Arc::new(SessionMessage::BranchSummary(
                BranchSummaryMessage {
                    summary: b.summary.clone(),
                    from_id: b.from_id.clone(),
                    timestamp: timestamp_ms(entry),
                },
            )));
        }
        _ => {}
    }
}

/// The entry's time in ms; 0 when unparseable (pi would get NaN).
fn timestamp_ms(entry: &SessionEntry) -> i64 {
    parse_iso_ms(&entry.timestamp).unwrap_or(0)
}

/// pi's `getTree`: roots are entries with no parent, themselves as parent, or a missing
/// parent; children sorted by timestamp (unparseable timestamps first, ties in file order).
pub(crate) fn build_tree(entries: &[SessionEntry], by_id: &HashMap<String, usize>) -> SessionTree {
    let mut tree = SessionTree {
        roots: Vec::new(),
        children: vec![Vec::new(); entries.len()],
    };
    for (i, entry) in entries.iter().enumerate() {
        let parent = entry
            .parent_id
            .as_deref()
            .filter(|p| *p != entry.id)
            .and_then(|p| by_id.get(p).copied());
        match parent.and_then(|p| tree.children.get_mut(p)) {
            Some(siblings) => siblings.push(i),
            None => tree.roots.push(i),
        }
    }
    let times: Vec<i64> = entries
        .iter()
        .map(|e| parse_iso_ms(&e.timestamp).unwrap_or(i64::MIN))
        .collect();
    for siblings in &mut tree.children {
        siblings.sort_by_key(|&i| times.get(i).copied().unwrap_or(i64::MIN));
    }
    tree
}
