//! Diff panes in the workspace: the files a session changed, each as its net change (from
//! before the session's first edit of it to after its last), in a pane beside the session.

use std::path::Path;

use march_panes::diff::{DiffView, FileDiff, NoDiff};
use march_panes::theme::Theme;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use super::Workspace;
use super::changes::FileChange;
use super::layout::{Axis, PaneId};
use super::router::SessionKey;

impl Workspace {
    /// Opens the diff pane of the focused pane's session to its right, or focuses the one
    /// already open; false when the focused pane shows no session.
    pub fn open_diff(&mut self) -> bool {
        let Some(key) = self.focused_session() else {
            return false;
        };
        let existing = self
            .diffs
            .iter()
            .find(|(_, (k, _))| *k == key)
            .map(|(pane, _)| *pane);
        match existing {
            Some(pane) if self.tab().layout.contains(pane) => {
                self.tab_mut().layout.focus(pane);
            }
            _ => {
                if let Some(pane) = existing {
                    self.close_pane(pane);
                }
                let pane = PaneId(self.next_id());
                let view = DiffView::new(&self.diff_title(key), self.session_diffs(key));
                self.diffs.insert(pane, (key, view));
                self.tab_mut().layout.split(Axis::Horizontal, pane);
            }
        }
        true
    }

    /// Whether pane `id` is a diff pane.
    pub fn is_diff(&self, id: PaneId) -> bool {
        self.diffs.contains_key(&id)
    }

    /// The view of diff pane `id`.
    pub fn diff_mut(&mut self, id: PaneId) -> Option<&mut DiffView> {
        self.diffs.get_mut(&id).map(|(_, view)| view)
    }

    /// Draws diff pane `id`.
    pub(super) fn render_diff(
        &mut self,
        id: PaneId,
        rect: Rect,
        buf: &mut Buffer,
        theme: &Theme,
        focused: bool,
    ) {
        if let Some((_, view)) = self.diffs.get_mut(&id) {
            view.render(rect, buf, theme, focused);
        }
    }

    /// Session `key` changed files: its diff panes show the changes now. Whether one shows
    /// in the active tab.
    pub(super) fn refresh_diffs(&mut self, key: SessionKey) -> bool {
        if !self.diffs.values().any(|(k, _)| *k == key) {
            return false;
        }
        let files = self.session_diffs(key);
        let mut panes = Vec::new();
        for (pane, (k, view)) in &mut self.diffs {
            if *k == key {
                view.set_files(files.clone());
                panes.push(*pane);
            }
        }
        panes.iter().any(|pane| self.tab().layout.contains(*pane))
    }

    fn diff_title(&self, key: SessionKey) -> String {
        let project = self
            .sessions
            .get(&key)
            .map(|s| super::project_name(&s.project))
            .unwrap_or_default();
        format!("changes · {project}")
    }

    /// The net change of each file session `key` changed.
    fn session_diffs(&mut self, key: SessionKey) -> Vec<FileDiff> {
        let Some(slot) = self.sessions.get(&key) else {
            return Vec::new();
        };
        let project = slot.project.clone();
        let Some(session) = slot.session_id.as_ref().map(|s| s.0.to_string()) else {
            return Vec::new();
        };
        net_changes(self.changes.changes(&session), &project)
    }
}

/// The net change of each file `changes` touch, in the order first touched: from the text
/// before the first change to the text after the last. Paths under `project` are shown
/// relative to it.
pub fn net_changes(changes: &[FileChange], project: &Path) -> Vec<FileDiff> {
    let mut order: Vec<&Path> = Vec::new();
    for change in changes {
        if !order.contains(&change.path.as_path()) {
            order.push(&change.path);
        }
    }
    order
        .into_iter()
        .map(|path| {
            let shown = path
                .strip_prefix(project)
                .unwrap_or(path)
                .to_string_lossy()
                .into_owned();
            let first = changes.iter().find(|c| c.path == path);
            let last = changes.iter().rfind(|c| c.path == path);
            let (Some(first), Some(last)) = (first, last) else {
                return FileDiff::new(&shown, None, None);
            };
            let large = changes
                .iter()
                .filter(|c| c.path == path)
                .find_map(|c| c.too_large);
            if let Some((before, after)) = large {
                let mut diff = FileDiff::new(&shown, Some(""), Some(""));
                diff.none = Some(NoDiff::TooLarge(before, after));
                return diff;
            }
            FileDiff::new(&shown, first.before.as_deref(), last.after.as_deref())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_diff_pane_shows_the_sessions_changes_and_follows_new_ones() {
        use agent_client_protocol::v1::schema::{
            Diff, SessionId, SessionNotification, SessionUpdate, ToolCall, ToolCallContent,
        };
        use march_panes::highlight::Highlighter;

        use crate::workspace::AgentLauncher;
        use crate::workspace::agent::{AgentEvent, AgentSpec};

        let (events, _rx) = tokio::sync::mpsc::unbounded_channel();
        let (shell_events, _shell_rx) = tokio::sync::mpsc::unbounded_channel();
        let launcher = AgentLauncher {
            spec: AgentSpec::march(Path::new("/usr/bin/march")),
            mode: None,
            events,
            paths: None,
            shell_events,
            shell: march_core::config::ShellConfig::default(),
        };
        let mut ws = Workspace::new(launcher, vec!["/work/project".into()]);
        let key = ws.focused_session().unwrap();
        ws.focused_slot().unwrap().session_id = Some(SessionId::new("s1"));
        ws.changes.record(
            "s1",
            FileChange::new(
                "c1",
                Path::new("/work/project/src/a.rs"),
                Some("one\n"),
                "two\n",
            ),
        );
        assert!(ws.open_diff());
        let pane = ws.focused();
        assert!(ws.is_diff(pane));
        assert_eq!(ws.diff_mut(pane).unwrap().files().len(), 1);
        // The agent edits another file: the pane shows it, and asks for a frame.
        let edit =
            SessionUpdate::ToolCall(ToolCall::new("c2".to_string(), "write b.rs").content(vec![
                ToolCallContent::Diff(Diff::new("/work/project/b.rs", "fresh\n")),
            ]));
        let update = AgentEvent::Update(SessionNotification::new("s1", edit));
        assert!(ws.agent_event(key, update));
        let files: Vec<String> = ws
            .diff_mut(pane)
            .unwrap()
            .files()
            .iter()
            .map(|f| f.path.clone())
            .collect();
        assert_eq!(files, ["src/a.rs", "b.rs"]);
        let mut buf = Buffer::empty(Rect::new(0, 0, 100, 20));
        ws.render(buf.area, &mut buf, &Theme::default(), &Highlighter::new());
        let text: String = (0..20)
            .flat_map(|y| (0..100).map(move |x| (x, y)))
            .map(|p| buf[p].symbol().to_string())
            .collect();
        assert!(text.contains("changes · project"), "{text}");
        assert!(text.contains("+two"), "{text}");
        // Opening it again focuses the same pane; closing it leaves the session.
        ws.focus_direction(crate::workspace::layout::Direction::Left);
        assert!(ws.open_diff());
        assert_eq!(ws.focused(), pane);
    }

    #[test]
    fn a_file_changed_twice_shows_its_net_change_in_first_touched_order() {
        let project = Path::new("/p");
        let changes = vec![
            FileChange::new("c1", Path::new("/p/src/a.rs"), Some("one\n"), "two\n"),
            FileChange::new("c2", Path::new("/elsewhere/b.txt"), None, "new\n"),
            FileChange::new("c3", Path::new("/p/src/a.rs"), Some("two\n"), "three\n"),
        ];
        let files = net_changes(&changes, project);
        assert_eq!(files.len(), 2);
        assert_eq!(files[0].path, "src/a.rs");
        let lines: Vec<&str> = files[0].hunks[0]
            .lines
            .iter()
            .map(|l| l.text.as_str())
            .collect();
        assert_eq!(lines, ["one", "three"]);
        assert_eq!(files[1].path, "/elsewhere/b.txt");
        assert!(files[1].created);
    }

    #[test]
    fn a_change_too_large_to_keep_shows_as_such() {
        let huge = "x".repeat(super::super::changes::MAX_TEXT + 1);
        let changes = vec![FileChange::new("c1", Path::new("/p/big"), Some("a"), &huge)];
        let files = net_changes(&changes, Path::new("/p"));
        assert_eq!(files[0].none, Some(NoDiff::TooLarge(1, huge.len())));
    }
}
