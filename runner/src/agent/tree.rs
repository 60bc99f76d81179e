//! The session tree for clients (`_march/session/tree`, `navigate`, `label`): pi's `/tree`.
//! Moving the leaf is one line in the transcript; a summary of the branch left is one model
//! request, cancelled with the session's turns.

use std::sync::Arc;

use agent_client_protocol::Error;
use march_core::compaction::{self, entries_left_behind};
use march_core::message::{AssistantContent, UserBody, UserContent};
use march_core::provider::StreamOptions;
use march_core::session::{EntryKind, SessionEntry, SessionMessage, SessionStore};

use super::errors;
use super::session::Session;
use crate::session_tree::{
    LabelEntryRequest, NavigateRequest, NavigateResponse, SessionTreeResponse, TreeEntry,
    TreeEntryKind,
};

/// Characters of an entry's preview.
const PREVIEW_CHARS: usize = 240;

/// Every entry of `store` as a client shows it.
pub(crate) fn tree(store: &SessionStore) -> SessionTreeResponse {
    SessionTreeResponse {
        leaf_id: store.leaf_id().map(str::to_string),
        entries: store
            .entries()
            .iter()
            .map(|e| {
                let (kind, text) = preview(e);
                TreeEntry {
                    id: e.id.clone(),
                    parent_id: e.parent_id.clone(),
                    kind,
                    text: clip(&text),
                    label: store.label(&e.id).map(str::to_string),
                    timestamp: e.timestamp.clone(),
                }
            })
            .collect(),
    }
}

/// Where a navigation goes.
struct Move {
    leaf: Option<String>,
    editor_text: Option<String>,
}

/// pi's choice: a user or extension message puts the leaf on its parent and its text in the
/// editor; any other entry becomes the leaf.
fn resolve(store: &SessionStore, entry_id: &str) -> Result<Move, Error> {
    let Some(entry) = store.entry(entry_id) else {
        return Err(errors::invalid_params(format!(
            "no entry `{entry_id}` in this session"
        )));
    };
    let resubmit = match &entry.kind {
        EntryKind::Message(m) => match &**m {
            SessionMessage::User(u) => Some(editor_text(&u.content)),
            _ => None,
        },
        EntryKind::CustomMessage(c) => Some(editor_text(&c.content)),
        _ => None,
    };
    Ok(match resubmit {
        Some(text) => Move {
            leaf: entry.parent_id.clone().filter(|p| store.entry(p).is_some()),
            editor_text: Some(text),
        },
        None => Move {
            leaf: Some(entry.id.clone()),
            editor_text: None,
        },
    })
}

impl Session {
    /// Answer `_march/session/navigate`: move the leaf, after summarising the branch left
    /// when asked. Refused while a turn runs; a failed summary moves nothing.
    pub(crate) async fn navigate(
        self: &Arc<Self>,
        req: NavigateRequest,
    ) -> Result<NavigateResponse, Error> {
        let Some(_turn) = self.try_hold_turns() else {
            return Err(errors::invalid_params(
                "a turn is running: wait for it to end, or stop it, before moving in the tree",
            ));
        };
        let (target, old_leaf) = {
            let store = self.store.lock();
            (
                resolve(&store, &req.entry_id)?,
                store.leaf_id().map(str::to_string),
            )
        };
        let mut summary = None;
        if req.summarize && target.leaf != old_leaf {
            let left: Vec<SessionEntry> = {
                let store = self.store.lock();
                entries_left_behind(&store, old_leaf.as_deref(), Some(&req.entry_id))
                    .into_iter()
                    .cloned()
                    .collect()
            };
            if !left.is_empty() {
                summary = Some(self.summarize_left(&left, &req).await?);
            }
        }
        let store = self.store.clone();
        let label = req.label.clone().filter(|l| !l.trim().is_empty());
        let entry_id = req.entry_id.clone();
        let leaf = target.leaf.clone();
        let summary_id = tokio::task::spawn_blocking(move || {
            let mut store = store.lock();
            let summary_id = match summary {
                Some(made) => Some(
                    store
                        .branch_with_summary(leaf.as_deref(), made.summary, Some(made.details))?
                        .id
                        .clone(),
                ),
                None => {
                    store.move_leaf(leaf.as_deref())?;
                    None
                }
            };
            if let Some(label) = label {
                // Appended where the path goes on, as pi writes it; it adds nothing to the
                // context, so the conversation continues the same.
                let on = summary_id.as_deref().unwrap_or(&entry_id);
                store.append_label(on, Some(label.trim()))?;
            }
            Ok::<_, march_core::session::SessionError>(summary_id)
        })
        .await
        .map_err(|e| errors::internal(format!("moving the leaf failed: {e}")))?
        .map_err(|e| errors::internal(e.to_string()))?;
        let leaf_id = self.store.lock().leaf_id().map(str::to_string);
        tracing::info!(session = %self.id(), leaf = ?leaf_id, summary = ?summary_id, "leaf moved");
        Ok(NavigateResponse {
            leaf_id,
            editor_text: target.editor_text,
            summary_id,
        })
    }

    /// The summary of `left` with the session's model; cancelled with its turns.
    async fn summarize_left(
        &self,
        left: &[SessionEntry],
        req: &NavigateRequest,
    ) -> Result<compaction::BranchSummaryResult, Error> {
        let (model, thinking) = {
            let s = self.settings.lock();
            (s.model.clone(), s.thinking)
        };
        let options = StreamOptions {
            thinking,
            stall: self.config.requests.stall_policy(),
            ..StreamOptions::default()
        };
        let refs: Vec<&SessionEntry> = left.iter().collect();
        compaction::summarize_branch(
            self.provider.as_ref(),
            &model,
            &options,
            &refs,
            compaction::BranchSummaryAsk {
                reserve_tokens: self.config.compaction.reserve_tokens,
                instructions: req.instructions.as_deref(),
                replace_instructions: req.replace_instructions,
            },
            self.cancel_token(),
        )
        .await
        .map_err(|e| errors::internal(format!("the branch was not summarised: {e}")))
    }

    /// Answer `_march/session/label`.
    pub(crate) async fn label(&self, req: LabelEntryRequest) -> Result<(), Error> {
        let store = self.store.clone();
        tokio::task::spawn_blocking(move || {
            let mut store = store.lock();
            if store.entry(&req.entry_id).is_none() {
                return Err(errors::invalid_params(format!(
                    "no entry `{}` in this session",
                    req.entry_id
                )));
            }
            let label = req.label.as_deref().map(str::trim);
            store
                .append_label(&req.entry_id, label)
                .map(drop)
                .map_err(|e| errors::internal(e.to_string()))
        })
        .await
        .map_err(|e| errors::internal(format!("labelling failed: {e}")))?
    }
}

/// What an entry is and a line of its text.
fn preview(entry: &SessionEntry) -> (TreeEntryKind, String) {
    use TreeEntryKind as K;
    match &entry.kind {
        EntryKind::Message(m) => match &**m {
            SessionMessage::User(u) => (K::User, body_text(&u.content)),
            SessionMessage::Assistant(a) => (K::Assistant, assistant_text(&a.content)),
            SessionMessage::ToolResult(r) => {
                let text = body_text(&UserBody::Blocks(r.content.clone()));
                (K::ToolResult, format!("{}: {text}", r.tool_name))
            }
            SessionMessage::BashExecution(b) => (K::Bash, format!("!{}", b.command)),
            SessionMessage::Custom(c) => (K::CustomMessage, body_text(&c.content)),
            SessionMessage::BranchSummary(s) => (K::BranchSummary, s.summary.clone()),
            SessionMessage::CompactionSummary(s) => (K::Compaction, s.summary.clone()),
        },
        EntryKind::CustomMessage(c) => (K::CustomMessage, body_text(&c.content)),
        EntryKind::BranchSummary(b) => (K::BranchSummary, summary_line(&b.summary)),
        EntryKind::Compaction(c) => (
            K::Compaction,
            format!("compacted about {} tokens", c.tokens_before),
        ),
        EntryKind::ModelChange(m) => (K::Settings, format!("model {}/{}", m.provider, m.model_id)),
        EntryKind::ThinkingLevelChange(t) => {
            (K::Settings, format!("thinking {}", t.thinking_level))
        }
        EntryKind::ActiveToolsChange(t) => (
            K::Settings,
            format!("tools {}", t.active_tool_names.join(", ")),
        ),
        EntryKind::Label(l) => (
            K::Meta,
            match l.label.as_deref().filter(|l| !l.is_empty()) {
                Some(label) => format!("label {label}"),
                None => "label cleared".to_string(),
            },
        ),
        EntryKind::Leaf(l) => (
            K::Meta,
            format!("moved to {}", l.target_id.as_deref().unwrap_or("the start")),
        ),
        EntryKind::SessionInfo(i) => (
            K::Meta,
            format!("named {}", i.name.as_deref().unwrap_or_default()),
        ),
        EntryKind::Custom(c) => (K::Meta, c.custom_type.clone()),
        EntryKind::Unknown(u) => (K::Other, u.entry_type.clone()),
    }
}

/// A branch summary's first line of substance: past the preamble and headings.
fn summary_line(summary: &str) -> String {
    let body = summary
        .strip_prefix(compaction::BRANCH_SUMMARY_PREAMBLE)
        .unwrap_or(summary);
    body.lines()
        .map(|l| l.trim().trim_start_matches('#').trim())
        .find(|l| !l.is_empty() && *l != "Goal")
        .unwrap_or_default()
        .to_string()
}

fn assistant_text(content: &[AssistantContent]) -> String {
    let text: Vec<&str> = content
        .iter()
        .filter_map(|c| match c {
            AssistantContent::Text(t) if !t.text.trim().is_empty() => Some(t.text.as_str()),
            _ => None,
        })
        .collect();
    if !text.is_empty() {
        return text.join(" ");
    }
    let calls: Vec<&str> = content
        .iter()
        .filter_map(|c| match c {
            AssistantContent::ToolCall(call) => Some(call.name.as_str()),
            _ => None,
        })
        .collect();
    if calls.is_empty() {
        String::new()
    } else {
        format!("→ {}", calls.join(", "))
    }
}

/// The text blocks of a message body joined (a picture counts as `[image]`).
fn body_text(body: &UserBody) -> String {
    match body {
        UserBody::Text(t) => t.clone(),
        UserBody::Blocks(blocks) => blocks
            .iter()
            .map(|b| match b {
                UserContent::Text(t) => t.text.as_str(),
                UserContent::Image(_) => "[image]",
            })
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

/// The text of a message to edit again: its text blocks (pictures are not text).
fn editor_text(body: &UserBody) -> String {
    match body {
        UserBody::Text(t) => t.clone(),
        UserBody::Blocks(blocks) => blocks
            .iter()
            .filter_map(|b| match b {
                UserContent::Text(t) => Some(t.text.as_str()),
                UserContent::Image(_) => None,
            })
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

/// One line of at most [`PREVIEW_CHARS`] characters.
fn clip(text: &str) -> String {
    let mut out = String::new();
    for (n, c) in text
        .split_whitespace()
        .flat_map(|w| w.chars().chain([' ']))
        .enumerate()
    {
        if n >= PREVIEW_CHARS {
            out.push('…');
            return out;
        }
        out.push(c);
    }
    out.truncate(out.trim_end().len());
    out
}
