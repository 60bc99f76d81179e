//! Closing a pane whose agent works in a worktree of its own: keep the worktree, or remove
//! it and its branch. Removing one that holds uncommitted or unmerged work takes a second
//! yes, which names what would be lost.

use crossterm::event::KeyEvent;
use march_panes::switcher::{Switcher, SwitcherEntry, SwitcherKey};
use march_panes::theme::Slot;

use crate::workspace::worktrees::CloseQuestion;

const KEEP: u64 = 0;
const REMOVE: u64 = 1;
const REMOVE_ANYWAY: u64 = 2;

/// The open question.
pub(super) struct WorktreeCloser {
    pub(super) view: Switcher,
    question: CloseQuestion,
}

/// What the user answered.
pub(super) enum CloseAnswer {
    /// Nothing yet.
    Open,
    /// Closed without closing the pane.
    Cancelled,
    /// Close the pane; remove the worktree when true.
    Close(CloseQuestion, bool),
}

fn entry(id: u64, title: String, detail: String, glyph: (&'static str, Slot)) -> SwitcherEntry {
    SwitcherEntry {
        id,
        title,
        project: detail,
        glyph,
        state: String::new(),
        activity: None,
        preview: None,
        panes: Vec::new(),
        avatar: None,
    }
}

impl WorktreeCloser {
    /// The question for `question`'s pane.
    pub(super) fn new(question: CloseQuestion) -> Self {
        let label = question.worktree.label();
        let pending = &question.pending;
        let branch = &question.worktree.branch;
        let remove_detail = if pending.is_empty() {
            format!("and branch {branch}: nothing unmerged is lost")
        } else {
            format!("and branch {branch}: it has {}", pending.describe())
        };
        let entries = vec![
            entry(
                KEEP,
                format!("Keep {label}"),
                question.worktree.path.display().to_string(),
                ("◆", Slot::Info),
            ),
            entry(
                REMOVE,
                format!("Remove {label}"),
                remove_detail,
                ("✗", Slot::Warning),
            ),
        ];
        let mut view = Switcher::new(entries);
        view.set_title(format!("Close the agent on {label}"));
        view.set_footer(" enter chooses · esc leaves the pane open");
        WorktreeCloser { view, question }
    }

    /// Handles a key.
    pub(super) fn key(&mut self, key: KeyEvent) -> CloseAnswer {
        match self.view.key(key) {
            SwitcherKey::Ignored | SwitcherKey::Changed => CloseAnswer::Open,
            SwitcherKey::Closed => CloseAnswer::Cancelled,
            SwitcherKey::Chosen { id: KEEP, .. } => {
                CloseAnswer::Close(self.question.clone(), false)
            }
            SwitcherKey::Chosen { id: REMOVE, .. } if !self.question.pending.is_empty() => {
                self.arm();
                CloseAnswer::Open
            }
            SwitcherKey::Chosen {
                id: REMOVE | REMOVE_ANYWAY,
                ..
            } => CloseAnswer::Close(self.question.clone(), true),
            SwitcherKey::Chosen { .. } => CloseAnswer::Open,
        }
    }

    /// The second question: removing loses work; enter again goes ahead.
    fn arm(&mut self) {
        let lost = self.question.pending.describe();
        let label = self.question.worktree.label();
        let entries = vec![
            entry(
                REMOVE_ANYWAY,
                format!("Remove anyway: lose {lost}"),
                format!("enter again removes {label}; this cannot be undone"),
                ("✗", Slot::Error),
            ),
            entry(
                KEEP,
                format!("Keep {label}"),
                self.question.worktree.path.display().to_string(),
                ("◆", Slot::Info),
            ),
        ];
        let mut view = Switcher::new(entries);
        view.set_title(format!("Remove {label}?"));
        view.set_footer(" enter removes it · esc leaves the pane open");
        self.view = view;
    }
}
