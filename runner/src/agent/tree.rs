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
    EntryLabel, ForkSessionResponse, KeptConversation, LabelEntryRequest, NavigateRequest,
    NavigateResponse, SessionTreeResponse, TreeEntry, TreeEntryKind,
};

/// Characters of an entry's preview: a row of the widest tree view.
const PREVIEW_CHARS: usize = 120;

/// The entries of `store` from the `from`-th (all of them when it has fewer) as a client
/// shows them, with every label.
pub(crate) fn tree(store: &SessionStore, from: u64) -> SessionTreeResponse {
    let all = store.entries();
    let from = usize::try_from(from)
        .ok()
        .filter(|&f| f <= all.len())
        .unwrap_or(0);
    let labels = all
        .iter()
        .filter_map(|e| {
            store.label(&e.id).map(|label| EntryLabel {
                id: e.id.clone(),
                label: label.to_string(),
            })
        })
        .collect();
    SessionTreeResponse {
        leaf_id: store.leaf_id().map(str::to_string),
        from: from as u64,
        entries: all[from..]
            .iter()
            .map(|e| {
                let (kind, text) = preview(e);
                TreeEntry {
                    id: e.id.clone(),
                    parent_id: e.parent_id.clone(),
                    kind,
                    text,
                    label: store.label(&e.id).map(str::to_string),
                    timestamp: e.timestamp.clone(),
                }
            })
            .collect(),
        labels,
    }
}

/// A leaf move made: the answer, what of the old conversation stays, and what to replay.
pub(crate) struct Moved {
    /// The answer to the client.
    pub response: NavigateResponse,
    /// What a client showing the old path keeps.
    pub kept: Option<KeptConversation>,
    /// The new path's updates after what is kept; none when the client holds them.
    pub replay: Vec<agent_client_protocol::v1::schema::SessionUpdate>,
    /// The leaf left.
    pub previous_leaf: Option<String>,
    /// The client's held conversation is the new path's.
    pub held: bool,
}

/// Whether an entry shows as a user message (what a client counts to keep its view).
fn is_user_turn(entry: &SessionEntry) -> bool {
    matches!(
        entry.message(),
        Some(SessionMessage::User(_) | SessionMessage::BashExecution(_))
    )
}

/// What of the conversation on `old_path` (entry ids) the current path shares up to a user
/// message, and where its replay starts: a client keeps what comes before that user message.
fn kept_conversation(
    store: &SessionStore,
    old_path: &[String],
) -> (Option<KeptConversation>, usize) {
    let path = store.branch_path(None);
    let common = path
        .iter()
        .zip(old_path)
        .take_while(|(e, old)| e.id == **old)
        .count();
    // The client cuts its view before one of its user messages, so the cut is where the
    // paths part when the old one has a user message there (or ends there); otherwise at
    // the last user message both share, and the new path is replayed from there.
    let cut_where_they_part = old_path
        .get(common)
        .is_none_or(|id| store.entry(id).is_some_and(is_user_turn));
    let from = if cut_where_they_part {
        common
    } else {
        match (0..common).rev().find(|&i| is_user_turn(path[i])) {
            Some(from) => from,
            None => return (None, 0),
        }
    };
    let kept: Vec<&SessionEntry> = path[..from]
        .iter()
        .copied()
        .filter(|e| is_user_turn(e))
        .collect();
    let of = old_path
        .iter()
        .filter(|id| store.entry(id).is_some_and(is_user_turn))
        .count();
    let last_user_text = kept.last().map(|e| match e.message() {
        Some(SessionMessage::User(u)) => u.content.text(),
        Some(SessionMessage::BashExecution(b)) => march_core::session::bash_execution_to_text(b),
        _ => String::new(),
    });
    let kept = KeptConversation {
        user_messages: u32::try_from(kept.len()).unwrap_or(u32::MAX),
        of: u32::try_from(of).unwrap_or(u32::MAX),
        last_user_text,
    };
    (Some(kept), from)
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
            SessionMessage::User(u) => Some(u.content.text()),
            _ => None,
        },
        EntryKind::CustomMessage(c) => Some(c.content.text()),
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
    /// when asked. Refused while a turn runs; a failed summary moves nothing. Returns the
    /// answer, what of the old path's conversation stays, and the new path's updates to
    /// replay after that.
    pub(crate) async fn navigate(self: &Arc<Self>, req: NavigateRequest) -> Result<Moved, Error> {
        let Some(_turn) = self.try_hold_turns() else {
            return Err(errors::invalid_params(
                "a turn is running: wait for it to end, or stop it, before moving in the tree",
            ));
        };
        if req.replay_only {
            let store = self.store.lock();
            return Ok(Moved {
                response: NavigateResponse {
                    leaf_id: store.leaf_id().map(str::to_string),
                    editor_text: None,
                    summary_id: None,
                },
                kept: None,
                replay: super::replay::replay(&store, &self.tools, self.client.compaction, 0),
                previous_leaf: None,
                held: false,
            });
        }
        let old_path: Vec<String> = self
            .store
            .lock()
            .branch_path(None)
            .iter()
            .map(|e| e.id.clone())
            .collect();
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
        let store = self.store.lock();
        let leaf_id = store.leaf_id().map(str::to_string);
        tracing::info!(session = %self.id(), leaf = ?leaf_id, summary = ?summary_id, "leaf moved");
        let (kept, from) = kept_conversation(&store, &old_path);
        // The client holds what this path shows.
        let held = match (&req.held, &leaf_id) {
            (Some(held), Some(leaf)) => held.leaf_id == *leaf,
            _ => false,
        };
        let replay = if held {
            Vec::new()
        } else {
            super::replay::replay(&store, &self.tools, self.client.compaction, from)
        };
        Ok(Moved {
            response: NavigateResponse {
                leaf_id,
                editor_text: target.editor_text,
                summary_id,
            },
            kept,
            replay,
            previous_leaf: old_leaf,
            held,
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

    /// Answer `_march/session/fork`: the path so far copied into a new session file beside
    /// this one.
    pub(crate) async fn fork(&self) -> Result<ForkSessionResponse, Error> {
        let Some(_turn) = self.try_hold_turns() else {
            return Err(errors::invalid_params(
                "a turn is running: wait for it to end, or stop it, before forking",
            ));
        };
        let store = self.store.clone();
        let forked = tokio::task::spawn_blocking(move || {
            let store = store.lock();
            let dir = store
                .path()
                .parent()
                .map(std::path::Path::to_path_buf)
                .unwrap_or_default();
            store.fork(None, &dir)
        })
        .await
        .map_err(|e| errors::internal(format!("forking failed: {e}")))?
        .map_err(|e| errors::internal(e.to_string()))?;
        tracing::info!(session = %self.id(), fork = %forked.session_id(), "forked");
        Ok(ForkSessionResponse {
            session_id: forked.session_id().to_string(),
            path: forked.path().to_path_buf(),
        })
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

/// What an entry is and a line of its text (clipped: only the start of a long text is read).
fn preview(entry: &SessionEntry) -> (TreeEntryKind, String) {
    use TreeEntryKind as K;
    match &entry.kind {
        EntryKind::Message(m) => match &**m {
            SessionMessage::User(u) => (K::User, clip(body_start(&u.content))),
            SessionMessage::Assistant(a) => (K::Assistant, assistant_line(&a.content)),
            SessionMessage::ToolResult(r) => {
                let text = blocks_start(&r.content);
                (
                    K::ToolResult,
                    clip(&format!("{}: {}", r.tool_name, head(text))),
                )
            }
            SessionMessage::BashExecution(b) => (K::Bash, clip(&format!("!{}", head(&b.command)))),
            SessionMessage::Custom(c) => (K::CustomMessage, clip(body_start(&c.content))),
            SessionMessage::BranchSummary(s) => (K::BranchSummary, clip(&summary_line(&s.summary))),
            SessionMessage::CompactionSummary(s) => (K::Compaction, clip(&s.summary)),
        },
        EntryKind::CustomMessage(c) => (K::CustomMessage, clip(body_start(&c.content))),
        EntryKind::BranchSummary(b) => (K::BranchSummary, clip(&summary_line(&b.summary))),
        EntryKind::Compaction(c) => (
            K::Compaction,
            format!("compacted about {} tokens", c.tokens_before),
        ),
        EntryKind::ModelChange(m) => (
            K::Settings,
            clip(&format!("model {}/{}", m.provider, m.model_id)),
        ),
        EntryKind::ThinkingLevelChange(t) => {
            (K::Settings, clip(&format!("thinking {}", t.thinking_level)))
        }
        EntryKind::ActiveToolsChange(t) => (
            K::Settings,
            clip(&format!("tools {}", t.active_tool_names.join(", "))),
        ),
        EntryKind::Label(l) => (
            K::Meta,
            match l.label.as_deref().filter(|l| !l.is_empty()) {
                Some(label) => clip(&format!("label {label}")),
                None => "label cleared".to_string(),
            },
        ),
        EntryKind::Leaf(l) => (
            K::Meta,
            clip(&format!(
                "moved to {}",
                l.target_id.as_deref().unwrap_or("the start")
            )),
        ),
        EntryKind::SessionInfo(i) => (
            K::Meta,
            clip(&format!("named {}", i.name.as_deref().unwrap_or_default())),
        ),
        EntryKind::Custom(c) => (K::Meta, clip(&c.custom_type)),
        EntryKind::Unknown(u) => (K::Other, clip(&u.entry_type)),
    }
}

/// At most the first few hundred bytes of `text` (on a character boundary): all a preview
/// reads.
fn head(text: &str) -> &str {
    let mut end = text.len().min(PREVIEW_CHARS * 4);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// A branch summary's first line of substance: past the preamble and headings.
fn summary_line(summary: &str) -> String {
    let body = summary
        .strip_prefix(compaction::BRANCH_SUMMARY_PREAMBLE)
        .unwrap_or(summary);
    body.lines()
        .take(20)
        .map(|l| l.trim().trim_start_matches('#').trim())
        .find(|l| !l.is_empty() && *l != "Goal")
        .unwrap_or_default()
        .to_string()
}

/// The answer's first text, or the tools it called.
fn assistant_line(content: &[AssistantContent]) -> String {
    let text = content.iter().find_map(|c| match c {
        AssistantContent::Text(t) if !t.text.trim().is_empty() => Some(t.text.as_str()),
        _ => None,
    });
    if let Some(text) = text {
        return clip(text);
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
        clip(&format!("→ {}", calls.join(", ")))
    }
}

/// A message body's first text (`[image]` for a picture first).
fn body_start(body: &UserBody) -> &str {
    match body {
        UserBody::Text(t) => t,
        UserBody::Blocks(blocks) => blocks_start(blocks),
    }
}

fn blocks_start(blocks: &[UserContent]) -> &str {
    match blocks.first() {
        Some(UserContent::Text(t)) => &t.text,
        Some(UserContent::Image(_)) => "[image]",
        None => "",
    }
}

/// One line of at most [`PREVIEW_CHARS`] characters, looking at no more of `text` than that
/// needs (a tool result may be megabytes).
fn clip(text: &str) -> String {
    let mut out = String::with_capacity(PREVIEW_CHARS + 4);
    let mut count = 0;
    let mut space = false;
    for c in text.chars() {
        if c.is_whitespace() {
            space = count > 0;
            continue;
        }
        if space {
            if count + 1 >= PREVIEW_CHARS {
                out.push('…');
                return out;
            }
            out.push(' ');
            count += 1;
            space = false;
        }
        if count >= PREVIEW_CHARS {
            out.push('…');
            return out;
        }
        out.push(c);
        count += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use march_core::message::{
        AssistantMessage, Message, TextContent, ToolCall, ToolResultMessage, UserContent,
        UserMessage,
    };
    use march_core::model::Model;
    use march_core::session::SessionHeader;

    use super::*;

    fn answer(text: &str, call: Option<&str>) -> Message {
        let mut a = AssistantMessage::empty(&Model::openai_compatible("p", "m", "http://x"));
        a.content.push(AssistantContent::Text(TextContent {
            text: text.into(),
            text_signature: None,
        }));
        if let Some(id) = call {
            a.content.push(AssistantContent::ToolCall(ToolCall {
                id: id.into(),
                name: "ls".into(),
                arguments: serde_json::json!({}),
                thought_signature: None,
            }));
        }
        Message::Assistant(a)
    }

    fn result(call: &str) -> Message {
        Message::ToolResult(ToolResultMessage {
            tool_call_id: call.into(),
            tool_name: "ls".into(),
            content: vec![UserContent::text("a.txt")],
            details: serde_json::Value::Null,
            is_error: false,
            timestamp: 0,
            usage: None,
        })
    }

    /// Appends `messages`; the id of each.
    fn append(store: &mut SessionStore, messages: Vec<Message>) -> Vec<String> {
        messages
            .into_iter()
            .map(|m| store.append_message(m).unwrap().id.clone())
            .collect()
    }

    fn path_ids(store: &SessionStore) -> Vec<String> {
        store
            .branch_path(None)
            .iter()
            .map(|e| e.id.clone())
            .collect()
    }

    #[test]
    fn the_kept_part_ends_where_the_old_view_can_cut() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = SessionStore::create(dir.path(), SessionHeader::new("/p")).unwrap();
        let ids = append(
            &mut store,
            vec![
                Message::User(UserMessage::text("first")),
                answer("looking", Some("c1")),
                result("c1"),
                answer("One.", None),
                Message::User(UserMessage::text("second")),
                answer("Two.", None),
            ],
        );
        let old = path_ids(&store);

        // A new prompt after the call-making answer: the old view has the call's result
        // where the paths part, and no user message to cut at there, so it keeps nothing of
        // the first turn and the new path is replayed from its first message.
        store.move_leaf(Some(&ids[1])).unwrap();
        append(&mut store, vec![Message::User(UserMessage::text("other"))]);
        let (kept, from) = kept_conversation(&store, &old);
        assert_eq!(
            kept,
            Some(KeptConversation {
                user_messages: 0,
                of: 2,
                last_user_text: None
            })
        );
        assert_eq!(from, 0);

        // A new prompt after the first turn: the old view cuts at its second message.
        store.move_leaf(Some(&ids[3])).unwrap();
        append(&mut store, vec![Message::User(UserMessage::text("again"))]);
        let (kept, from) = kept_conversation(&store, &old);
        assert_eq!(
            kept,
            Some(KeptConversation {
                user_messages: 1,
                of: 2,
                last_user_text: Some("first".into())
            })
        );
        assert_eq!(from, 4);

        // Forward along the old path's own start: it ends where the new one goes on.
        store.move_leaf(Some(&ids[3])).unwrap();
        let short = path_ids(&store);
        store.move_leaf(Some(&ids[5])).unwrap();
        let (kept, from) = kept_conversation(&store, &short);
        assert_eq!(kept.map(|k| (k.user_messages, k.of)), Some((1, 1)));
        assert_eq!(from, 4);
    }
}
