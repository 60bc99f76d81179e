//! The pane's side of the session tree: the copy of the agent's tree it keeps between
//! openings, and opening, feeding and closing the tree view.

use crossterm::event::KeyEvent;

use super::BranchMove;
use super::tree::{RestoreLine, TreeKey, TreeNode, TreeView};

/// What the pane keeps of the session's tree between openings: the entries in file order
/// (the file only grows, so only new ones are asked for) and the leaf.
#[derive(Debug, Clone, Default)]
pub(crate) struct TreeModel {
    nodes: Vec<TreeNode>,
    leaf: Option<String>,
}

impl super::AgentPane {
    /// Shows the session's tree (or, with `rewind`, the user messages of its current path);
    /// false when there is nothing to show.
    pub fn open_tree(&mut self, nodes: Vec<TreeNode>, leaf: Option<&str>, rewind: bool) -> bool {
        self.picker = None;
        self.tree = TreeView::new(nodes, leaf, rewind);
        self.tree.is_some()
    }

    /// How many of the session's tree entries the pane keeps: ask for those after them.
    pub fn tree_known(&self) -> u64 {
        self.tree_model.nodes.len() as u64
    }

    /// The agent's tree entries from the `from`-th on (what the pane kept from there on is
    /// replaced), every entry's label, and the leaf.
    pub fn update_tree(
        &mut self,
        from: usize,
        nodes: Vec<TreeNode>,
        labels: &[(String, String)],
        leaf: Option<String>,
    ) {
        let model = &mut self.tree_model;
        model.nodes.truncate(from);
        model.nodes.extend(nodes);
        let labels: std::collections::HashMap<&str, &str> = labels
            .iter()
            .map(|(id, label)| (id.as_str(), label.as_str()))
            .collect();
        for node in &mut model.nodes {
            node.label = labels.get(node.id.as_str()).map(|l| (*l).to_string());
        }
        model.leaf = leaf;
    }

    /// An open tree view (not one asking a question) shows the copy the pane keeps now.
    pub fn refresh_open_tree(&mut self) {
        let Some(view) = &self.tree else {
            return;
        };
        let model = &self.tree_model;
        if let Some(view) = view.refreshed(model.nodes.clone(), model.leaf.as_deref()) {
            self.tree = Some(view);
        }
    }

    /// Shows the tree the pane keeps (see [`Self::open_tree`]).
    pub fn open_kept_tree(&mut self, rewind: bool) -> bool {
        let (nodes, leaf) = (self.tree_model.nodes.clone(), self.tree_model.leaf.clone());
        self.open_tree(nodes, leaf.as_deref(), rewind)
    }

    /// The session's leaf moved; the replay that follows shows the new path. With `kept`
    /// the conversation before the next user message stays and only the rest is replayed;
    /// with `held` nothing is replayed and what the pane held since it left the new leaf is
    /// shown again; otherwise, or when the pane does not show what the agent expects, it is
    /// cleared (the session's title, usage, commands and options stay). The conversation
    /// left is held for the leaf left. False when the pane could not keep what it was asked
    /// to: the whole path must be replayed.
    pub fn branch_moved(&mut self, moved: &BranchMove<'_>) -> bool {
        self.leave_copy_mode();
        self.expanded.clear();
        self.tree = None;
        self.error = None;
        if self.transcript.move_branch(moved) {
            return true;
        }
        self.transcript.clear_conversation();
        false
    }

    /// The leaf whose conversation the pane holds for a move back
    /// (`_march/session/navigate`'s `held`).
    pub fn held_leaf(&self) -> Option<&str> {
        self.transcript.held_leaf()
    }

    /// Whether the tree (or rewind list) is open.
    pub fn tree_open(&self) -> bool {
        self.tree.is_some()
    }

    /// A key for the open tree; `None` when no tree is open.
    pub(crate) fn tree_key(&mut self, key: KeyEvent) -> Option<super::PaneEvent> {
        use super::PaneEvent;
        let tree = self.tree.as_mut()?;
        Some(match tree.key(key) {
            TreeKey::Ignored => PaneEvent::None,
            TreeKey::Redraw => PaneEvent::Redraw,
            TreeKey::Closed => {
                self.tree = None;
                PaneEvent::Redraw
            }
            TreeKey::Chosen(chosen) => {
                self.tree = None;
                PaneEvent::Navigate(chosen)
            }
            TreeKey::Check(chosen) => PaneEvent::RewindCheck(chosen),
            TreeKey::Label(entry_id, label) => PaneEvent::LabelEntry { entry_id, label },
        })
    }

    /// The files a rewind to `entry_id` would restore (the app looked): the open rewind list
    /// asks whether to restore them.
    pub fn offer_restore(&mut self, entry_id: &str, lines: Vec<RestoreLine>) {
        if let Some(tree) = self.tree.as_mut() {
            tree.offer_restore(entry_id, lines);
        }
    }

    /// Closes the tree (or rewind list).
    pub fn close_tree(&mut self) {
        self.tree = None;
    }
}
