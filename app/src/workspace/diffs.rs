//! Diff panes in the workspace: the files a session changed, each as its net change (from
//! before the session's first edit of it to after its last), in a pane beside the session.

use std::path::Path;

use march_core::atomic_file::{FileMode, write_file};
use march_panes::diff::{DiffView, FileDiff, NoDiff};

use super::Workspace;
use super::changes::FileChange;
use super::jobs::JobDone;
use super::layout::{Axis, PaneId};
use super::pane::Pane;
use super::router::SessionKey;

impl Workspace {
    /// Opens the diff pane of the focused pane's session to its right at the lowest edit on
    /// screen (else the file it changed last), or focuses the one already open; false when
    /// the focused pane shows no session.
    pub fn open_diff(&mut self) -> bool {
        let Some(key) = self.focused_session() else {
            return false;
        };
        // At the lowest edit on screen (the user may have scrolled up to it), else at the
        // file the session changed last.
        let on_screen = self
            .sessions
            .get(&key)
            .and_then(|s| s.view.file_on_screen())
            .map(std::path::PathBuf::from);
        let last = self
            .sessions
            .get(&key)
            .and_then(|s| s.session_id.as_ref())
            .map(|id| id.0.to_string())
            .and_then(|id| self.changes.changes(&id).last().map(|c| c.path.clone()));
        self.open_diff_of(key, on_screen.or(last).as_deref());
        true
    }

    /// Opens (or focuses) session `key`'s diff pane, showing `file` when given.
    pub(super) fn open_diff_of(&mut self, key: SessionKey, file: Option<&Path>) {
        let existing =
            self.find_pane(|p| matches!(p, Pane::Diff { session, .. } if *session == key));
        // A pane already open is up to date: only a new one asks for its diffs.
        self.focus_or_open(existing, Axis::Horizontal, |ws, pane| {
            let view = DiffView::new(&ws.diff_title(key), Vec::new());
            ws.panes.insert(pane, Pane::Diff { session: key, view });
            ws.refresh_diffs(key);
        });
        let project = self.sessions.get(&key).map(|s| s.project.clone());
        if let (Some(file), Some(project)) = (file, project) {
            let shown = file.strip_prefix(&project).unwrap_or(file);
            let shown = shown.to_string_lossy().into_owned();
            let pane = self.focused();
            if let Some(view) = self.diff_mut(pane) {
                view.select_path(&shown);
            }
        }
    }

    /// Agent pane `id` shows an edit's tool call at (`x`, `y`): opens the session's diff pane
    /// at that file, the focus staying on `id`. Whether it did.
    pub fn open_diff_at(&mut self, id: PaneId, x: u16, y: u16) -> bool {
        let Some(key) = self.agent_session(id) else {
            return false;
        };
        let Some(file) = self
            .sessions
            .get(&key)
            .and_then(|slot| slot.view.file_at(x, y))
        else {
            return false;
        };
        self.open_diff_of(key, Some(Path::new(&file)));
        // A click never hands the focus to a pane whose keys undo work: what is typed next
        // (a stray `rr`) goes on to the agent pane's prompt.
        if let Some(tab) = self.tabs.holding_mut(id) {
            tab.layout.focus(id);
        }
        true
    }

    /// A session that changed `path`: one shown in the active tab first, else any.
    pub(super) fn session_that_changed(&mut self, path: &Path) -> Option<SessionKey> {
        let mut candidates: Vec<SessionKey> = self
            .tab()
            .layout
            .panes()
            .into_iter()
            .filter_map(|pane| self.agent_session(pane))
            .collect();
        candidates.extend(self.sessions.keys().copied());
        candidates.into_iter().find(|key| {
            let Some(id) = self
                .sessions
                .get(key)
                .and_then(|s| s.session_id.as_ref())
                .map(|id| id.0.to_string())
            else {
                return false;
            };
            self.changes.changes(&id).iter().any(|c| c.path == path)
        })
    }

    /// The view of diff pane `id`.
    pub fn diff_mut(&mut self, id: PaneId) -> Option<&mut DiffView> {
        self.panes.get_mut(&id)?.diff_view()
    }

    /// Session `key` changed files: its diff panes, and the uncommitted changes of its
    /// project, are brought up to date. Whether such a pane is in the active tab.
    pub(super) fn refresh_changes(&mut self, key: SessionKey) -> bool {
        let shows = self.refresh_diffs(key);
        let project = self.sessions.get(&key).map(|s| s.project.clone());
        let uncommitted = project.is_some_and(|p| self.refresh_uncommitted(&p));
        shows || uncommitted
    }

    /// The changes recorded for agent session `session` were read from the data dir: the
    /// panes of the sessions with that id show them. Whether one is in the active tab.
    pub(super) fn changes_read(&mut self, session: String, changes: Vec<FileChange>) -> bool {
        self.changes.read_done(session.clone(), changes);
        let keys: Vec<SessionKey> = self
            .sessions
            .iter()
            .filter(|(_, s)| s.session_id.as_ref().is_some_and(|id| *id.0 == *session))
            .map(|(k, _)| *k)
            .collect();
        let mut shown = false;
        for key in keys {
            shown |= self.refresh_changes(key);
        }
        shown
    }

    /// Brings diff pane `id` up to date.
    pub fn refresh_diff_pane(&mut self, id: PaneId) {
        match self.panes.get(&id) {
            Some(Pane::Diff { session, .. }) => {
                let key = *session;
                self.refresh_diffs(key);
            }
            Some(Pane::Uncommitted { project, .. }) => {
                let project = project.clone();
                self.refresh_uncommitted(&project);
            }
            _ => {}
        }
    }

    /// The diff views of session `key`.
    fn diff_views(&mut self, key: SessionKey) -> impl Iterator<Item = &mut DiffView> {
        self.panes.values_mut().filter_map(move |p| match p {
            Pane::Diff { session, view } if *session == key => Some(view),
            _ => None,
        })
    }

    /// Session `key` changed files: its diff panes are brought up to date. The diffs are
    /// computed off the loop (a large file takes a while) and come back as a
    /// [`JobDone::SessionDiffed`]. Whether a pane of the session shows in the active tab.
    pub(super) fn refresh_diffs(&mut self, key: SessionKey) -> bool {
        if self
            .find_pane(|p| matches!(p, Pane::Diff { session, .. } if *session == key))
            .is_none()
        {
            return false;
        }
        let inputs = self.diff_inputs(key);
        let generation = self.reviews.session_asked(key);
        for view in self.diff_views(key) {
            view.set_pending(true);
        }
        self.launcher.jobs.blocking(move || JobDone::SessionDiffed {
            session: key,
            generation,
            files: inputs.into_iter().map(DiffInput::diff).collect(),
        });
        self.diff_shows(key)
    }

    /// The diffs of session `key`'s changes came: its diff panes show them, unless newer
    /// ones were asked for since. Whether a pane of the session shows in the active tab.
    pub(super) fn diffed(
        &mut self,
        key: SessionKey,
        generation: u64,
        files: Vec<FileDiff>,
    ) -> bool {
        if !self.reviews.session_answered(key, generation) {
            return false;
        }
        for view in self.diff_views(key) {
            view.set_files(files.clone());
            view.set_pending(false);
        }
        self.diff_shows(key)
    }

    fn diff_shows(&self, key: SessionKey) -> bool {
        self.shows(|p| matches!(p, Pane::Diff { session, .. } if *session == key))
    }

    /// The title of session `key`'s diff pane.
    pub(super) fn diff_title(&self, key: SessionKey) -> String {
        let project = self
            .sessions
            .get(&key)
            .map(|s| super::project_name(&s.project))
            .unwrap_or_default();
        format!("changes · {project}")
    }

    /// What diffing session `key`'s changes takes: each file's net change.
    fn diff_inputs(&mut self, key: SessionKey) -> Vec<DiffInput> {
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

/// One file's net change, to diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffInput {
    /// The file as shown (relative to the project when under it).
    pub(super) shown: String,
    /// Before the session's first change of it (`None`: it did not exist).
    pub(super) before: Option<String>,
    /// After its last (`None`: deleted).
    pub(super) after: Option<String>,
    /// Sizes, when a change was too large to keep.
    pub(super) too_large: Option<(usize, usize)>,
}

impl DiffInput {
    /// The diff.
    pub fn diff(self) -> FileDiff {
        match self.too_large {
            Some((before, after)) => {
                let mut diff = FileDiff::new(&self.shown, Some(""), Some(""));
                diff.none = Some(NoDiff::TooLarge(before, after));
                diff
            }
            None => FileDiff::new(&self.shown, self.before.as_deref(), self.after.as_deref()),
        }
    }
}

/// The files `changes` touch, in the order first touched.
pub(super) fn touched_paths(changes: &[FileChange]) -> Vec<std::path::PathBuf> {
    let mut order: Vec<std::path::PathBuf> = Vec::new();
    for change in changes {
        if !order.contains(&change.path) {
            order.push(change.path.clone());
        }
    }
    order
}

/// Writes `content` to `path` for an agent (`fs/write_text_file`): an absolute path, missing
/// directories created, written atomically. Returns the text it had before (`None`: it did
/// not exist), or why it could not be written.
pub fn write_for_agent(path: &Path, content: &str) -> Result<Option<String>, String> {
    if !path.is_absolute() {
        return Err(format!("{} is not an absolute path", path.display()));
    }
    let before = match std::fs::read(path) {
        Ok(bytes) => Some(String::from_utf8_lossy(&bytes).into_owned()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    write_file(path, content.as_bytes(), FileMode::Kept)
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(before)
}

/// The net change of each file `changes` touch, in the order first touched: from the text
/// before the first change to the text after the last. Paths under `project` are shown
/// relative to it.
pub fn net_changes(changes: &[FileChange], project: &Path) -> Vec<DiffInput> {
    touched_paths(changes)
        .into_iter()
        .map(|path| {
            let shown = path
                .strip_prefix(project)
                .unwrap_or(&path)
                .to_string_lossy()
                .into_owned();
            let first = changes.iter().find(|c| c.path == path);
            let last = changes.iter().rfind(|c| c.path == path);
            let too_large = changes
                .iter()
                .filter(|c| c.path == path)
                .find_map(|c| c.too_large);
            DiffInput {
                shown,
                before: first.and_then(|c| c.before.clone()),
                after: last.filter(|c| !c.deleted).and_then(|c| c.after.clone()),
                too_large,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workspace::pane::PaneKind;
    use march_panes::theme::Theme;
    use ratatui::buffer::Buffer;
    use ratatui::layout::Rect;

    use crate::workspace::agent::AgentEvent;
    use crate::workspace::test_workspace as workspace;

    #[tokio::test]
    async fn the_diff_pane_shows_the_sessions_changes_and_follows_new_ones() {
        use agent_client_protocol::v1::schema::{
            Diff, SessionId, SessionNotification, SessionUpdate, ToolCall, ToolCallContent,
        };
        use march_panes::highlight::Highlighter;

        let (mut ws, mut bus) = workspace(Path::new("/work/project"));
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
        assert!(bus.settle(&mut ws).await);
        assert_eq!(ws.pane_kind(pane), Some(PaneKind::Diff));
        assert_eq!(ws.diff_mut(pane).unwrap().files().len(), 1);
        // The agent edits another file: the pane shows it, and asks for a frame.
        let edit =
            SessionUpdate::ToolCall(ToolCall::new("c2".to_string(), "write b.rs").content(vec![
                ToolCallContent::Diff(Diff::new("/work/project/b.rs", "fresh\n")),
            ]));
        let update = AgentEvent::Update(SessionNotification::new("s1", edit));
        assert!(ws.agent_event(key, update));
        assert!(bus.settle(&mut ws).await);
        let files: Vec<String> = ws
            .diff_mut(pane)
            .unwrap()
            .files()
            .iter()
            .map(|f| f.path.clone())
            .collect();
        assert_eq!(files, ["src/a.rs", "b.rs"]);
        let mut buf = Buffer::empty(Rect::new(0, 0, 100, 20));
        ws.render(
            buf.area,
            &mut buf,
            &Theme::default(),
            &Highlighter::new(),
            false,
        );
        let text: String = (0..20)
            .flat_map(|y| (0..100).map(move |x| (x, y)))
            .map(|p| buf[p].symbol().to_string())
            .collect();
        assert!(text.contains("changes · project"), "{text}");
        assert!(text.contains("+two"), "{text}");
        // Opening it again focuses the same pane.
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
        let files: Vec<FileDiff> = net_changes(&changes, project)
            .into_iter()
            .map(DiffInput::diff)
            .collect();
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

    #[tokio::test]
    async fn the_diffs_are_computed_off_the_loop_and_only_the_latest_kept() {
        use agent_client_protocol::v1::schema::SessionId;

        let (mut ws, mut bus) = workspace(Path::new("/work/project"));
        let key = ws.focused_session().unwrap();
        ws.focused_slot().unwrap().session_id = Some(SessionId::new("s"));
        let a = Path::new("/work/project/a.rs");
        ws.changes
            .record("s", FileChange::new("c1", a, Some("1\n"), "2\n"));
        assert!(ws.open_diff());
        let pane = ws.focused();
        assert!(
            ws.diff_mut(pane).unwrap().files().is_empty(),
            "not yet diffed"
        );
        // A second change before the first diffs came: only the latest diffs are shown.
        ws.changes
            .record("s", FileChange::new("c2", a, Some("2\n"), "3\n"));
        assert!(ws.refresh_diffs(key));
        let mut results = Vec::new();
        while results.len() < 2 {
            match bus.jobs.recv().await.unwrap() {
                JobDone::SessionDiffed {
                    session,
                    generation,
                    files,
                } => {
                    assert_eq!(session, key);
                    results.push((generation, files));
                }
                other => panic!("unexpected {other:?}"),
            }
        }
        results.sort_by_key(|(generation, _)| *generation);
        let (newest, newest_files) = results.pop().unwrap();
        let (older, older_files) = results.pop().unwrap();
        assert!(!ws.job_done(JobDone::SessionDiffed {
            session: key,
            generation: older,
            files: older_files
        }));
        assert!(
            ws.diff_mut(pane).unwrap().files().is_empty(),
            "stale diffs dropped"
        );
        assert!(ws.job_done(JobDone::SessionDiffed {
            session: key,
            generation: newest,
            files: newest_files
        }));
        let file = &ws.diff_mut(pane).unwrap().files()[0];
        let texts: Vec<&str> = file.hunks[0]
            .lines
            .iter()
            .map(|l| l.text.as_str())
            .collect();
        assert_eq!(texts, ["1", "3"]);
    }

    #[test]
    fn a_change_too_large_to_keep_shows_as_such() {
        let huge = "x".repeat(super::super::changes::MAX_TEXT + 1);
        let changes = vec![FileChange::new("c1", Path::new("/p/big"), Some("a"), &huge)];
        let file = net_changes(&changes, Path::new("/p")).remove(0).diff();
        assert_eq!(file.none, Some(NoDiff::TooLarge(1, huge.len())));
    }

    #[test]
    fn writes_for_agents_are_atomic_and_say_what_was_there() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("deep/new/a.sh");
        assert_eq!(write_for_agent(&file, "echo 1\n"), Ok(None));
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(
            write_for_agent(&file, "echo 2\n"),
            Ok(Some("echo 1\n".to_string()))
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "echo 2\n");
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o755);
        let names: Vec<_> = std::fs::read_dir(file.parent().unwrap()).unwrap().collect();
        assert_eq!(names.len(), 1, "no temporary file left");
        assert_eq!(
            write_for_agent(Path::new("rel/a.txt"), "x"),
            Err("rel/a.txt is not an absolute path".to_string())
        );
        let blocked = dir.path().join("deep/new/a.sh/under");
        assert!(
            write_for_agent(&blocked, "x")
                .unwrap_err()
                .starts_with("cannot ")
        );
    }

    #[tokio::test]
    async fn a_click_on_an_edit_in_the_transcript_opens_the_diff_at_its_file() {
        use agent_client_protocol::v1::schema::{
            Diff, SessionId, SessionNotification, SessionUpdate, ToolCall, ToolCallContent,
        };
        use march_panes::highlight::Highlighter;

        let (mut ws, mut bus) = workspace(Path::new("/work/project"));
        let key = ws.focused_session().unwrap();
        let agent = ws.focused();
        ws.focused_slot().unwrap().session_id = Some(SessionId::new("s1"));
        for (call, file) in [("c1", "first.rs"), ("c2", "second.rs")] {
            let edit = SessionUpdate::ToolCall(
                ToolCall::new(call.to_string(), format!("write {file}")).content(vec![
                    ToolCallContent::Diff(Diff::new(format!("/work/project/{file}"), "x\n")),
                ]),
            );
            ws.agent_event(
                key,
                AgentEvent::Update(SessionNotification::new("s1", edit)),
            );
        }
        let area = Rect::new(0, 0, 100, 30);
        // Draws the workspace; where `needle` starts on screen.
        let draw_and_find = |ws: &mut Workspace, needle: &str| -> (u16, u16) {
            let mut buf = Buffer::empty(area);
            ws.render(
                area,
                &mut buf,
                &Theme::default(),
                &Highlighter::new(),
                false,
            );
            (0..area.height)
                .find_map(|y| {
                    let line: String = (0..area.width).map(|x| buf[(x, y)].symbol()).collect();
                    line.find(needle)
                        .map(|at| (line[..at].chars().count() as u16, y))
                })
                .unwrap_or_else(|| panic!("{needle} is not drawn"))
        };
        draw_and_find(&mut ws, "write first.rs");
        // Not on an edit: nothing happens.
        assert!(!ws.open_diff_at(agent, 5, area.height - 2));
        // From the keyboard, the pane opens at the lowest edit on screen.
        assert!(ws.open_diff());
        bus.settle(&mut ws).await;
        let pane = ws.focused();
        assert_eq!(
            ws.diff_mut(pane).unwrap().selected().unwrap().path,
            "second.rs"
        );
        ws.focus_direction(crate::workspace::layout::Direction::Left);
        assert_eq!(ws.focused(), agent);
        let (x, y) = draw_and_find(&mut ws, "write first.rs");
        assert!(ws.open_diff_at(agent, x, y));
        bus.settle(&mut ws).await;
        // The click leaves the focus on the agent pane: no key reaches the diff's revert.
        assert_eq!(ws.focused(), agent);
        assert_eq!(ws.pane_kind(pane), Some(PaneKind::Diff));
        let view = ws.diff_mut(pane).unwrap();
        assert_eq!(view.selected().unwrap().path, "first.rs");
        // The pane open, a click on the other edit selects that file.
        let (x, y) = draw_and_find(&mut ws, "write second.rs");
        assert!(ws.open_diff_at(agent, x, y));
        bus.settle(&mut ws).await;
        assert_eq!(ws.focused(), agent);
        assert_eq!(
            ws.diff_mut(pane).unwrap().selected().unwrap().path,
            "second.rs"
        );
    }
}
