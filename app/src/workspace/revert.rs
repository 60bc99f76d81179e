//! Undoing changes from a diff pane: a hunk or a whole file of a session's changes, or of a
//! project's uncommitted ones. Checked against the disk and written off the loop; the outcome
//! comes back as a [`JobDone::Reverted`].

use std::path::{Path, PathBuf};

use march_core::atomic_file::{FileMode, write_file};
use march_panes::diff::{FileDiff, Hunk};

use super::Workspace;
use super::changes::FileChange;
use super::diffs::touched_paths;
use super::jobs::{JobDone, RevertOf, Reverted};
use super::layout::PaneId;
use super::pane::Pane;
use super::revert_undo::{RevertStep, Snapshot, UndoScope};
use super::uncommitted::uncommitted_input;

/// Undo writes this machine's files: a remote project's are refused, saying where they are.
fn local_only(project: &std::path::Path) -> Result<(), String> {
    match crate::remote::Remote::of(project) {
        Some(remote) => Err(format!(
            "undo works on this machine's files only: these are on {}",
            remote.host
        )),
        None => Ok(()),
    }
}

impl Workspace {
    /// Reverts the hunk at the top of diff pane `id` (or its whole file), off the loop: the
    /// file goes back to what it was before the session changed it there, if it is still as
    /// the session left it. What is under way, or why nothing is; the outcome comes back as
    /// a [`JobDone::Reverted`].
    pub fn revert(&mut self, id: PaneId, whole_file: bool) -> Result<String, String> {
        let (key, view) = match self.panes.get(&id) {
            Some(Pane::Uncommitted { .. }) => return self.revert_uncommitted(id, whole_file),
            Some(Pane::Diff { session, view }) => (*session, view),
            _ => return Err("not a diff pane".to_string()),
        };
        let index = view.selected_index();
        let hunk = view.current_hunk();
        let shown = view
            .selected()
            .map(|f| f.path.clone())
            .ok_or("no file to revert")?;
        let slot = self.sessions.get(&key);
        let project = slot.map(|s| s.project.clone()).unwrap_or_default();
        local_only(&project)?;
        let session = slot
            .and_then(|s| s.session_id.as_ref())
            .map(|s| s.0.to_string())
            .ok_or("the session has no changes")?;
        let changes = self.changes.changes(&session);
        let path = touched_paths(changes)
            .get(index)
            .cloned()
            .ok_or("no file to revert")?;
        let first = changes.iter().find(|c| c.path == path);
        let last = changes.iter().rfind(|c| c.path == path);
        let (Some(first), Some(last)) = (first, last) else {
            return Err("no file to revert".to_string());
        };
        if first.too_large.is_some() || last.too_large.is_some() {
            return Err(format!("{shown} is too large to revert here"));
        }
        let undo = SessionUndo {
            before: first.before.clone(),
            after: (!last.deleted).then(|| last.after.clone().unwrap_or_default()),
            tool_call: format!("march-revert-{}", changes.len()),
            hunk: if whole_file { None } else { hunk },
            shown: shown.clone(),
            path,
        };
        self.launcher.jobs.blocking(move || {
            let (path, shown) = (undo.path.clone(), undo.shown.clone());
            let (outcome, change, step) = match kept_to_undo(&path, &shown, || undo.run()) {
                Ok(((done, change), step)) => (Ok(done), Some(change), step),
                Err(why) => (Err(why), None, None),
            };
            JobDone::Reverted(Reverted {
                outcome,
                path: change.as_ref().map(|c| c.path.clone()),
                of: RevertOf::Session {
                    session: key,
                    id: session,
                    change,
                    project,
                },
                step,
            })
        });
        Ok(format!("reverting {shown}…"))
    }

    /// A revert ran: it is said in the status bar; what it changed is recorded, shown and
    /// checked again. Whether a pane in the active tab changed.
    pub(super) fn reverted(&mut self, done: Reverted) -> bool {
        self.status_note = Some(match &done.outcome {
            Ok(what) | Err(what) => what.clone(),
        });
        if let Some(step) = done.step {
            self.revert_undo.push(UndoScope::of(&done.of), step);
        }
        if done.outcome.is_err() {
            // Nothing changed on disk.
            return false;
        }
        let (project, shows) = match done.of {
            RevertOf::Session {
                session,
                id,
                change,
                project,
            } => {
                if let Some(change) = change {
                    self.changes.record(&id, change);
                }
                (project, self.refresh_changes(session))
            }
            RevertOf::Worktree { project } => {
                let shows = self.refresh_uncommitted(&project);
                (project, shows)
            }
        };
        // The language servers have not seen this change: have them look again.
        if let Some(path) = &done.path {
            self.refresh_diagnostics_of(&project, path);
        }
        shows
    }

    /// Puts the hunk at the top of uncommitted-changes pane `id` (or its whole file) back as
    /// it is in HEAD, off the loop, if the file is still as the pane shows it. What is under
    /// way, or why nothing is; the outcome comes back as a [`JobDone::Reverted`].
    pub(super) fn revert_uncommitted(
        &mut self,
        id: PaneId,
        whole_file: bool,
    ) -> Result<String, String> {
        let Some(Pane::Uncommitted { project, view, .. }) = self.panes.get(&id) else {
            return Err("not a diff pane".to_string());
        };
        local_only(project)?;
        let undo = WorktreeUndo {
            project: project.clone(),
            shown_diff: view.selected().cloned().ok_or("no file to revert")?,
            hunk: if whole_file {
                None
            } else {
                view.current_hunk()
            },
        };
        let shown = undo.shown_diff.path.clone();
        self.launcher.jobs.blocking(move || {
            let project = undo.project.clone();
            let path = project.join(&undo.shown_diff.path);
            let shown = undo.shown_diff.path.clone();
            let (outcome, step) = match kept_to_undo(&path, &shown, || undo.run()) {
                Ok((done, step)) => (Ok(done), step),
                Err(why) => (Err(why), None),
            };
            JobDone::Reverted(Reverted {
                path: outcome.is_ok().then_some(path),
                outcome,
                of: RevertOf::Worktree { project },
                step,
            })
        });
        Ok(format!("reverting {shown}…"))
    }
}

/// Runs `revert` on `path` and keeps what undoing it takes: the file's bytes before and
/// after. Nothing is reverted when the file cannot be read first.
fn kept_to_undo<T>(
    path: &Path,
    shown: &str,
    revert: impl FnOnce() -> Result<T, String>,
) -> Result<(T, Option<RevertStep>), String> {
    let before = Snapshot::take(path, shown).map_err(|why| format!("{why}: not reverted"))?;
    let done = revert()?;
    // Written by the revert a moment ago: unreadable now, an undo could not check it.
    let step = Snapshot::take(path, shown)
        .ok()
        .map(|after| RevertStep::new(path.to_path_buf(), shown.to_string(), before, after));
    Ok((done, step))
}

/// A session's change to one file, to undo: checked against the disk and written off the
/// loop.
pub(super) struct SessionUndo {
    /// The file before the session's first change to it (`None`: it created it).
    pub(super) before: Option<String>,
    /// The file as the session left it (`None`: it deleted it).
    pub(super) after: Option<String>,
    /// The name the revert is recorded under.
    pub(super) tool_call: String,
    /// The hunk to undo; `None` undoes the whole file.
    pub(super) hunk: Option<usize>,
    /// The file as the user knows it.
    pub(super) shown: String,
    pub(super) path: PathBuf,
}

impl SessionUndo {
    /// The file's text on disk, if it is still as the session left it (`None`: absent, as
    /// the session left it); why not, otherwise. Nothing is written.
    pub(super) fn check(&self) -> Result<Option<String>, String> {
        let on_disk = match std::fs::read(&self.path) {
            Ok(bytes) => {
                Some(String::from_utf8(bytes).map_err(|_| format!("{} is not text", self.shown))?)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(format!("cannot read {}: {e}", self.shown)),
        };
        if on_disk != self.after {
            return Err(format!(
                "{} changed on disk since the session's edit",
                self.shown
            ));
        }
        Ok(on_disk)
    }

    /// Undoes it if the file is still as the session left it: what was done and the change
    /// made, or why nothing was.
    pub(super) fn run(self) -> Result<(String, FileChange), String> {
        let on_disk = self.check().map_err(|why| format!("{why}: not reverted"))?;
        let SessionUndo {
            before,
            after,
            tool_call,
            hunk,
            shown,
            path,
        } = self;
        let target = match hunk {
            None => before.clone(),
            Some(n) => {
                let diff = FileDiff::new(&shown, before.as_deref(), after.as_deref());
                let hunk = diff.hunks.get(n).ok_or("no change here to revert")?;
                let text = revert_hunk(
                    before.as_deref().unwrap_or(""),
                    after.as_deref().unwrap_or(""),
                    hunk,
                );
                unless_created_and_emptied(before.as_deref(), text)
            }
        };
        let change = match &target {
            Some(text) => {
                write_atomically(&path, text).map_err(|e| format!("cannot write {shown}: {e}"))?;
                FileChange::new(&tool_call, &path, on_disk.as_deref(), text)
            }
            None => {
                std::fs::remove_file(&path).map_err(|e| format!("cannot delete {shown}: {e}"))?;
                FileChange::deletion(&tool_call, &path, on_disk.as_deref().unwrap_or(""))
            }
        };
        let done = match (hunk.is_none(), &target) {
            (_, None) => format!("deleted {shown}, which the session created"),
            (true, Some(_)) => format!("reverted {shown}"),
            (false, Some(_)) => format!("reverted a change in {shown}"),
        };
        Ok((done, change))
    }
}

/// Writes `text` to `path` atomically, keeping its permissions.
pub(super) fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    write_file(path, text.as_bytes(), FileMode::Kept).map_err(|e| e.error)
}

/// An uncommitted change to undo, as the pane shows it: checked and written off the loop.
struct WorktreeUndo {
    project: PathBuf,
    /// The file's diff as shown.
    shown_diff: FileDiff,
    /// The hunk to undo; `None` undoes the whole file.
    hunk: Option<usize>,
}

impl WorktreeUndo {
    /// Undoes it if the file still differs from HEAD as shown: what was done, or why not.
    fn run(self) -> Result<String, String> {
        let shown = &self.shown_diff.path;
        let (input, against) = uncommitted_input(&self.project, shown)?;
        let input = input.ok_or_else(|| format!("{shown} has no change any more"))?;
        let base = against.name;
        if input.too_large.is_some() {
            return Err(format!("{shown} is too large to revert here"));
        }
        if input.clone().diff() != self.shown_diff {
            return Err(format!(
                "{shown} changed since it was diffed: not reverted (u updates the pane)"
            ));
        }
        let path = self.project.join(shown);
        let target = match self.hunk {
            None => input.before.clone(),
            Some(n) => {
                let hunk = self
                    .shown_diff
                    .hunks
                    .get(n)
                    .ok_or("no change here to revert")?;
                let text = revert_hunk(
                    input.before.as_deref().unwrap_or(""),
                    input.after.as_deref().unwrap_or(""),
                    hunk,
                );
                unless_created_and_emptied(input.before.as_deref(), text)
            }
        };
        match &target {
            Some(text) => {
                if let Some(dir) = path.parent() {
                    std::fs::create_dir_all(dir)
                        .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
                }
                write_atomically(&path, text).map_err(|e| format!("cannot write {shown}: {e}"))?;
                Ok(if self.hunk.is_none() {
                    format!("{shown} is as in {base} again")
                } else {
                    format!("reverted a change in {shown}")
                })
            }
            None => {
                std::fs::remove_file(&path).map_err(|e| format!("cannot delete {shown}: {e}"))?;
                Ok(format!("deleted {shown}, which is not in {base}"))
            }
        }
    }
}

/// The text a hunk's revert leaves, or `None` (remove the file) when the file did not
/// exist `before` and nothing of it is left: an empty file is not what was there.
fn unless_created_and_emptied(before: Option<&str>, text: String) -> Option<String> {
    (before.is_some() || !text.is_empty()).then_some(text)
}

/// `after` with `hunk` (a hunk of the diff from `before` to `after`) undone: its lines of
/// the new text replaced by its lines of the old, line endings as they were.
pub(super) fn revert_hunk(before: &str, after: &str, hunk: &Hunk) -> String {
    let old: Vec<&str> = before.split_inclusive('\n').collect();
    let new: Vec<&str> = after.split_inclusive('\n').collect();
    let old_lines: Vec<usize> = hunk.lines.iter().filter_map(|l| l.old).collect();
    let new_lines: Vec<usize> = hunk.lines.iter().filter_map(|l| l.new).collect();
    // Where the hunk sits in the new text: its first new line, or (all removed) just after
    // the new line that precedes its first old one.
    let (start, end) = match (new_lines.first(), new_lines.last()) {
        (Some(first), Some(last)) => (first - 1, *last),
        _ => {
            let at = old_lines.first().map_or(0, |first| first - 1);
            (at.min(new.len()), at.min(new.len()))
        }
    };
    let mut out = String::with_capacity(after.len());
    out.extend(new[..start.min(new.len())].iter().copied());
    for n in old_lines {
        if let Some(line) = old.get(n - 1) {
            out.push_str(line);
        }
    }
    out.extend(new[end.min(new.len())..].iter().copied());
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::workspace::test_workspace as workspace;

    /// Reverts in pane `pane` as the second key press would and waits for the outcome:
    /// what the status bar then says.
    pub(crate) async fn revert_and_wait(
        ws: &mut Workspace,
        bus: &mut crate::workspace::TestBus,
        pane: PaneId,
        whole_file: bool,
    ) -> Result<String, String> {
        let started = ws.revert(pane, whole_file)?;
        assert!(started.starts_with("reverting "), "{started}");
        bus.settle(ws).await;
        let said = ws.take_status_note().expect("the revert says how it went");
        if said.starts_with("reverted") || said.starts_with("deleted") || said.ends_with("again") {
            Ok(said)
        } else {
            Err(said)
        }
    }

    #[tokio::test]
    async fn revert_puts_back_a_hunk_or_a_file_unless_it_changed_on_disk() {
        use agent_client_protocol::v1::schema::SessionId;

        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().to_path_buf();
        let (mut ws, mut bus) = workspace(&project);
        ws.focused_slot().unwrap().session_id = Some(SessionId::new("s"));
        let before: String = (1..=20).map(|i| format!("line {i}\n")).collect();
        let after = before
            .replace("line 2\n", "line two\n")
            .replace("line 18\n", "line eighteen\n");
        let edited = project.join("a.txt");
        let created = project.join("new.txt");
        std::fs::write(&edited, &after).unwrap();
        std::fs::write(&created, "made\n").unwrap();
        ws.changes
            .record("s", FileChange::new("c1", &edited, Some(&before), &after));
        ws.changes
            .record("s", FileChange::new("c2", &created, None, "made\n"));
        assert!(ws.open_diff());
        let pane = ws.focused();
        bus.settle(&mut ws).await;
        // It opens at the file changed last.
        let view = ws.diff_mut(pane).unwrap();
        assert_eq!(view.selected().unwrap().path, "new.txt");
        assert!(view.select_path("a.txt"));
        // The view starts at the first hunk: undo it only.
        let done = revert_and_wait(&mut ws, &mut bus, pane, false).await;
        assert_eq!(done.as_deref(), Ok("reverted a change in a.txt"));
        assert_eq!(
            std::fs::read_to_string(&edited).unwrap(),
            before.replace("line 18\n", "line eighteen\n")
        );
        assert_eq!(ws.diff_mut(pane).unwrap().files()[0].hunks.len(), 1);
        // Changed on disk since: refused, nothing written.
        std::fs::write(&edited, "someone else\n").unwrap();
        let refused = revert_and_wait(&mut ws, &mut bus, pane, true)
            .await
            .unwrap_err();
        assert!(refused.contains("changed on disk"), "{refused}");
        assert_eq!(std::fs::read_to_string(&edited).unwrap(), "someone else\n");
        // A file the session created goes away.
        ws.diff_mut(pane).unwrap().select_file(1);
        let done = revert_and_wait(&mut ws, &mut bus, pane, true).await;
        assert_eq!(
            done.as_deref(),
            Ok("deleted new.txt, which the session created")
        );
        assert!(!created.exists());
        assert!(ws.diff_mut(pane).unwrap().files()[1].deleted);
    }

    #[test]
    fn reverting_one_hunk_leaves_the_others() {
        let before: String = (1..=20).map(|i| format!("line {i}\r\n")).collect();
        let after = before
            .replace("line 2\r\n", "line two\r\n")
            .replace("line 18\r\n", "line 18\r\nextra\r\n");
        let diff = FileDiff::new("f", Some(&before), Some(&after));
        assert_eq!(diff.hunks.len(), 2);
        let first_undone = revert_hunk(&before, &after, &diff.hunks[0]);
        assert_eq!(
            first_undone,
            before.replace("line 18\r\n", "line 18\r\nextra\r\n")
        );
        let second_undone = revert_hunk(&before, &after, &diff.hunks[1]);
        assert_eq!(second_undone, before.replace("line 2\r\n", "line two\r\n"));
        // A hunk that only removed lines comes back in its place.
        let shorter = before.replace("line 10\r\n", "");
        let diff = FileDiff::new("f", Some(&before), Some(&shorter));
        assert_eq!(revert_hunk(&before, &shorter, &diff.hunks[0]), before);
    }
}
