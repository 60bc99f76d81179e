//! `/tree` and `/rewind` in an agent pane: the session's tree asked of the agent, shown in the
//! pane, and the move the user chose made (`_march/session/navigate`).

use march_panes::agent::{TreeMove, TreeNode, TreeNodeKind};
use march_runner::client::{
    HeldConversation, NavigateRequest, NavigateResponse, TreeEntry, TreeEntryKind,
};

use super::Workspace;
use super::agent::TreePurpose;
use super::router::SessionKey;

impl Workspace {
    /// `/tree` or `/rewind`: ask the agent for the session's tree; it opens when it arrives.
    pub(super) fn ask_tree(&mut self, key: SessionKey, purpose: TreePurpose) {
        let Some(slot) = self.sessions.get_mut(&key) else {
            return;
        };
        if slot.view.status().busy {
            slot.view.notice(
                "A turn is running: wait for it to end, or stop it, to move in the session.",
            );
            return;
        }
        if !slot.driver.session_tree(purpose, slot.view.tree_known()) {
            slot.view
                .notice("This agent does not show its session tree to March.");
        }
    }

    /// The tree arrived: show it, or why it cannot be shown.
    pub(super) fn tree_arrived(
        &mut self,
        key: SessionKey,
        purpose: TreePurpose,
        result: Result<march_runner::client::SessionTreeResponse, String>,
    ) {
        let Some(slot) = self.sessions.get_mut(&key) else {
            return;
        };
        let tree = match result {
            Ok(tree) => tree,
            Err(e) if purpose == TreePurpose::Keep => {
                tracing::debug!("the session tree was not listed: {e}");
                return;
            }
            Err(e) => {
                slot.view
                    .set_error(format!("the session tree was not listed: {e}"));
                return;
            }
        };
        let nodes: Vec<TreeNode> = tree.entries.into_iter().map(node).collect();
        let labels: Vec<(String, String)> =
            tree.labels.into_iter().map(|l| (l.id, l.label)).collect();
        let from = usize::try_from(tree.from).unwrap_or(0);
        slot.view.update_tree(from, nodes, &labels, tree.leaf_id);
        let rewind = match purpose {
            // An open tree view follows the session (a turn added entries, a label changed).
            TreePurpose::Keep => return slot.view.refresh_open_tree(),
            TreePurpose::Rewind => true,
            TreePurpose::Tree => false,
        };
        if !slot.view.open_kept_tree(rewind) {
            slot.view.notice(if rewind {
                "No message of yours to go back to yet."
            } else {
                "Nothing in this session yet."
            });
        }
    }

    /// A move chosen in the tree: made by the agent, which replays the new path first.
    pub(super) fn navigate_chosen(&mut self, key: SessionKey, chosen: TreeMove) {
        let Some(slot) = self.sessions.get_mut(&key) else {
            return;
        };
        if chosen.summarize {
            slot.view.notice("Summarizing the branch you leave…");
        }
        let request = NavigateRequest {
            session_id: String::new(),
            entry_id: chosen.entry_id.clone(),
            summarize: chosen.summarize,
            instructions: chosen.instructions.clone(),
            replace_instructions: false,
            label: None,
            replay_only: false,
            held: slot.view.held_leaf().map(|leaf| HeldConversation {
                leaf_id: leaf.to_string(),
            }),
        };
        slot.driver.navigate(request, chosen);
    }

    /// The agent moved the leaf (or could not): the chosen message back in the editor, and
    /// the files restored when the rewind asked for it.
    pub(super) fn navigated(
        &mut self,
        key: SessionKey,
        chosen: TreeMove,
        result: Result<NavigateResponse, String>,
    ) {
        let Some(slot) = self.sessions.get_mut(&key) else {
            return;
        };
        match result {
            Ok(moved) => {
                if chosen.restore
                    && let Some(at) = chosen.at_ms
                {
                    slot.view.notice("Restoring the files…");
                    self.restore_files(key, at);
                    let Some(slot) = self.sessions.get_mut(&key) else {
                        return;
                    };
                    if let Some(text) = moved.editor_text {
                        slot.view.set_prompt_text(&text);
                    }
                    return;
                }
                if let Some(text) = moved.editor_text {
                    slot.view.set_prompt_text(&text);
                }
                slot.view.notice(match moved.summary_id {
                    Some(_) => {
                        "Moved in the session; the branch you left is summarized for the model."
                    }
                    None => "Moved in the session.",
                });
            }
            Err(e) => slot.view.set_error(format!("not moved: {e}")),
        }
    }
}

impl Workspace {
    /// The session was forked: the new session opens in a pane beside this one.
    pub(super) fn forked(
        &mut self,
        key: SessionKey,
        result: Result<march_runner::client::ForkSessionResponse, String>,
    ) {
        let Some(slot) = self.sessions.get_mut(&key) else {
            return;
        };
        match result {
            Ok(fork) => {
                slot.view
                    .notice("Forked: the conversation so far goes on in the new pane.");
                let (project, agent) = (slot.project.clone(), slot.agent.clone());
                let id = agent_client_protocol::v1::schema::SessionId::new(fork.session_id);
                let new = self.spawn_session(&project, Some(id), agent.as_deref());
                self.show_in_split(new);
            }
            Err(e) => slot.view.set_error(format!("not forked: {e}")),
        }
    }
}

/// A tree entry as the pane shows it.
fn node(entry: TreeEntry) -> TreeNode {
    TreeNode {
        id: entry.id,
        parent_id: entry.parent_id,
        kind: match entry.kind {
            TreeEntryKind::User => TreeNodeKind::User,
            TreeEntryKind::Assistant => TreeNodeKind::Assistant,
            TreeEntryKind::ToolResult => TreeNodeKind::ToolResult,
            TreeEntryKind::Bash => TreeNodeKind::Bash,
            TreeEntryKind::CustomMessage => TreeNodeKind::CustomMessage,
            TreeEntryKind::BranchSummary => TreeNodeKind::BranchSummary,
            TreeEntryKind::Compaction => TreeNodeKind::Compaction,
            TreeEntryKind::Settings => TreeNodeKind::Settings,
            TreeEntryKind::Meta => TreeNodeKind::Meta,
            TreeEntryKind::Other => TreeNodeKind::Other,
        },
        at_ms: march_core::session::parse_iso_ms(&entry.timestamp)
            .and_then(|ms| u64::try_from(ms).ok()),
        text: entry.text,
        label: entry.label,
    }
}
