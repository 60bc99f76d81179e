//! Undoing a revert made from a diff pane. Each revert keeps the exact bytes (and
//! permissions) it replaced, on a stack per session (a diff pane's) or per project (an
//! uncommitted-changes pane's); `U` in the pane puts the newest back, re-creating a file the
//! revert removed, if the file is still as the revert left it.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use march_core::atomic_file::{FileMode, write_file};

use super::Workspace;
use super::changes::FileChange;
use super::jobs::{JobDone, RevertOf, Reverted};
use super::layout::PaneId;
use super::pane::Pane;
use super::router::SessionKey;

/// How many reverts each stack keeps; older ones can no longer be undone.
const DEPTH: usize = 32;

/// How many bytes of file contents each stack keeps at most (the newest revert always).
const BUDGET: usize = 64 << 20;

/// A file as it was: its exact bytes and permission bits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    bytes: Vec<u8>,
    mode: u32,
}

impl Snapshot {
    /// `path` as it is now (`None`: absent), or why it cannot be read.
    pub fn take(path: &Path, shown: &str) -> Result<Option<Snapshot>, String> {
        let bytes = match std::fs::read(path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(format!("cannot read {shown}: {e}")),
        };
        let mode = std::fs::metadata(path)
            .map_err(|e| format!("cannot read {shown}: {e}"))?
            .permissions()
            .mode();
        Ok(Some(Snapshot { bytes, mode }))
    }
}

/// One revert, to undo.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RevertStep {
    /// The file (absolute).
    pub path: PathBuf,
    /// The file as the user knows it.
    pub shown: String,
    /// The file before the revert (`None`: it did not exist).
    before: Option<Snapshot>,
    /// The bytes the revert left (`None`: it removed the file).
    after: Option<Vec<u8>>,
}

impl RevertStep {
    /// A revert of `path` that found `before` and left `after`.
    pub fn new(
        path: PathBuf,
        shown: String,
        before: Option<Snapshot>,
        after: Option<Snapshot>,
    ) -> RevertStep {
        RevertStep {
            path,
            shown,
            before,
            after: after.map(|s| s.bytes),
        }
    }

    /// Puts the file back as it was before the revert, if it is still as the revert left
    /// it: what was done, or why nothing was.
    pub fn undo(&self) -> Result<String, String> {
        let shown = &self.shown;
        let now = Snapshot::take(&self.path, shown)?.map(|s| s.bytes);
        if now != self.after {
            return Err(format!(
                "{shown} changed since it was reverted: not put back"
            ));
        }
        match &self.before {
            Some(before) => {
                if let Some(dir) = self.path.parent() {
                    std::fs::create_dir_all(dir)
                        .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
                }
                write_file(&self.path, &before.bytes, FileMode::Kept)
                    .map_err(|e| format!("cannot write {shown}: {}", e.error))?;
                // A file the revert removed comes back new: its permissions as they were.
                std::fs::set_permissions(&self.path, std::fs::Permissions::from_mode(before.mode))
                    .map_err(|e| format!("cannot set the permissions of {shown}: {e}"))?;
                Ok(match self.after {
                    None => format!("brought {shown} back"),
                    Some(_) => format!("put {shown} back as it was before the revert"),
                })
            }
            None => {
                std::fs::remove_file(&self.path)
                    .map_err(|e| format!("cannot delete {shown}: {e}"))?;
                Ok(format!("deleted {shown} again"))
            }
        }
    }

    /// The bytes it keeps.
    fn size(&self) -> usize {
        self.before.as_ref().map_or(0, |s| s.bytes.len()) + self.after.as_ref().map_or(0, Vec::len)
    }

    /// The undo as a change to record in a session's log, under `tool_call`.
    pub fn change(&self, tool_call: &str) -> FileChange {
        let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
        let left = self.after.as_deref().map(text);
        match &self.before {
            Some(before) => {
                FileChange::new(tool_call, &self.path, left.as_deref(), &text(&before.bytes))
            }
            None => FileChange::deletion(tool_call, &self.path, left.as_deref().unwrap_or("")),
        }
    }
}

/// Whose reverts a stack holds: a diff pane's session, or an uncommitted-changes pane's
/// project.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum UndoScope {
    /// A session's changes.
    Session(SessionKey),
    /// A project's uncommitted changes.
    Project(PathBuf),
}

impl UndoScope {
    /// The scope of a revert's outcome.
    pub fn of(revert: &RevertOf) -> UndoScope {
        match revert {
            RevertOf::Session { session, .. } => UndoScope::Session(*session),
            RevertOf::Worktree { project } => UndoScope::Project(project.clone()),
        }
    }
}

/// The reverts that can still be undone, newest last, per scope.
#[derive(Debug, Default)]
pub struct RevertUndo {
    stacks: BTreeMap<UndoScope, Vec<RevertStep>>,
}

impl RevertUndo {
    /// Keeps `step` as the newest revert of `scope`; the oldest go past [`DEPTH`] reverts
    /// or [`BUDGET`] bytes.
    pub fn push(&mut self, scope: UndoScope, step: RevertStep) {
        let stack = self.stacks.entry(scope).or_default();
        stack.push(step);
        while stack.len() > DEPTH
            || (stack.len() > 1 && stack.iter().map(RevertStep::size).sum::<usize>() > BUDGET)
        {
            stack.remove(0);
        }
    }

    /// Takes the newest revert of `scope`.
    pub fn pop(&mut self, scope: &UndoScope) -> Option<RevertStep> {
        let stack = self.stacks.get_mut(scope)?;
        let step = stack.pop();
        if stack.is_empty() {
            self.stacks.remove(scope);
        }
        step
    }

    /// How many reverts of `scope` can be undone (tests only).
    #[cfg(test)]
    pub fn len(&self, scope: &UndoScope) -> usize {
        self.stacks.get(scope).map_or(0, Vec::len)
    }
}

impl Workspace {
    /// Undoes the newest revert made from diff pane `id` (its session's, or its project's),
    /// off the loop. What is under way, or why nothing is; the outcome comes back as a
    /// [`JobDone::Reverted`], and a step that could not be undone goes back on the stack.
    pub fn undo_revert(&mut self, id: PaneId) -> Result<String, String> {
        let of = match self.panes.get(&id) {
            Some(Pane::Diff { session, .. }) => {
                let slot = self.sessions.get(session).ok_or("the session is closed")?;
                let agent_id = slot
                    .session_id
                    .as_ref()
                    .map(|s| s.0.to_string())
                    .ok_or("no revert to undo here")?;
                RevertOf::Session {
                    session: *session,
                    id: agent_id,
                    change: None,
                    project: slot.project.clone(),
                }
            }
            Some(Pane::Uncommitted { project, .. }) => RevertOf::Worktree {
                project: project.clone(),
            },
            _ => return Err("not a diff pane".to_string()),
        };
        let step = self
            .revert_undo
            .pop(&UndoScope::of(&of))
            .ok_or("no revert to undo here")?;
        let tool_call = match &of {
            RevertOf::Session { id, .. } => {
                format!("march-undo-revert-{}", self.changes.changes(id).len())
            }
            RevertOf::Worktree { .. } => String::new(),
        };
        let shown = step.shown.clone();
        self.launcher.jobs.blocking(move || {
            let mut of = of;
            match step.undo() {
                Ok(done) => {
                    if let RevertOf::Session { change, .. } = &mut of {
                        *change = Some(step.change(&tool_call));
                    }
                    JobDone::Reverted(Reverted {
                        outcome: Ok(done),
                        path: Some(step.path),
                        of,
                        step: None,
                    })
                }
                Err(why) => JobDone::Reverted(Reverted {
                    outcome: Err(why),
                    path: None,
                    of,
                    step: Some(step),
                }),
            }
        });
        Ok(format!("putting {shown} back…"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workspace::revert::tests::revert_and_wait;
    use crate::workspace::test_workspace as workspace;

    #[tokio::test]
    async fn a_created_file_reverted_by_its_hunk_goes_and_u_brings_it_back() {
        use agent_client_protocol::v1::schema::SessionId;

        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().to_path_buf();
        let (mut ws, mut bus) = workspace(&project);
        let key = ws.focused_session().unwrap();
        ws.focused_slot().unwrap().session_id = Some(SessionId::new("s"));
        let created = project.join("new.txt");
        std::fs::write(&created, "made\r\nby the agent\n").unwrap();
        ws.changes.record(
            "s",
            FileChange::new("c1", &created, None, "made\r\nby the agent\n"),
        );
        assert!(ws.open_diff());
        let pane = ws.focused();
        bus.settle(&mut ws).await;
        assert_eq!(
            ws.undo_revert(pane),
            Err("no revert to undo here".to_string())
        );
        // Its one hunk reverted: the file goes, rather than staying empty.
        let done = revert_and_wait(&mut ws, &mut bus, pane, false).await;
        assert_eq!(
            done.as_deref(),
            Ok("deleted new.txt, which the session created")
        );
        assert!(!created.exists());
        assert_eq!(ws.revert_undo.len(&UndoScope::Session(key)), 1);
        // Undone: the same bytes again, shown as the session's creation again.
        assert_eq!(ws.undo_revert(pane).as_deref(), Ok("putting new.txt back…"));
        bus.settle(&mut ws).await;
        assert_eq!(
            ws.take_status_note().as_deref(),
            Some("brought new.txt back")
        );
        assert_eq!(std::fs::read(&created).unwrap(), b"made\r\nby the agent\n");
        let file = &ws.diff_mut(pane).unwrap().files()[0];
        assert!(file.created && !file.deleted, "{file:?}");
        assert_eq!(
            ws.undo_revert(pane),
            Err("no revert to undo here".to_string())
        );
    }

    #[tokio::test]
    async fn an_uncommitted_pane_undoes_its_projects_reverts() {
        let (_dir, root) = crate::workspace::test_repo();
        std::fs::write(root.join("kept.txt"), "committed\n").unwrap();
        crate::workspace::git_in(&root, &["add", "."]);
        crate::workspace::git_in(&root, &["commit", "-qm", "start"]);
        std::fs::write(root.join("scratch.txt"), "tmp\n").unwrap();
        let (mut ws, mut bus) = workspace(&root);
        ws.open_uncommitted_diff();
        let pane = ws.focused();
        bus.settle(&mut ws).await;
        assert!(ws.diff_mut(pane).unwrap().select_path("scratch.txt"));
        // A file HEAD does not have, reverted by its hunk: it goes, not left empty.
        let done = revert_and_wait(&mut ws, &mut bus, pane, false).await;
        assert_eq!(
            done.as_deref(),
            Ok("deleted scratch.txt, which is not in HEAD")
        );
        assert!(!root.join("scratch.txt").exists());
        assert_eq!(ws.revert_undo.len(&UndoScope::Project(root.clone())), 1);
        ws.undo_revert(pane).unwrap();
        bus.settle(&mut ws).await;
        assert_eq!(
            ws.take_status_note().as_deref(),
            Some("brought scratch.txt back")
        );
        assert_eq!(
            std::fs::read_to_string(root.join("scratch.txt")).unwrap(),
            "tmp\n"
        );
    }

    #[tokio::test]
    async fn an_undo_refused_stays_to_be_tried_again() {
        use agent_client_protocol::v1::schema::SessionId;

        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().to_path_buf();
        let (mut ws, mut bus) = workspace(&project);
        let key = ws.focused_session().unwrap();
        ws.focused_slot().unwrap().session_id = Some(SessionId::new("s"));
        let edited = project.join("a.txt");
        std::fs::write(&edited, "two\n").unwrap();
        ws.changes
            .record("s", FileChange::new("c1", &edited, Some("one\n"), "two\n"));
        assert!(ws.open_diff());
        let pane = ws.focused();
        bus.settle(&mut ws).await;
        let done = revert_and_wait(&mut ws, &mut bus, pane, true).await;
        assert_eq!(done.as_deref(), Ok("reverted a.txt"));
        assert_eq!(std::fs::read_to_string(&edited).unwrap(), "one\n");
        // Someone wrote the file since: the undo leaves it alone, and keeps the step.
        std::fs::write(&edited, "mine\n").unwrap();
        ws.undo_revert(pane).unwrap();
        bus.settle(&mut ws).await;
        let said = ws.take_status_note().unwrap();
        assert!(said.contains("changed since it was reverted"), "{said}");
        assert_eq!(std::fs::read_to_string(&edited).unwrap(), "mine\n");
        assert_eq!(ws.revert_undo.len(&UndoScope::Session(key)), 1);
        // As the revert left it again: the undo goes through.
        std::fs::write(&edited, "one\n").unwrap();
        ws.undo_revert(pane).unwrap();
        bus.settle(&mut ws).await;
        assert_eq!(std::fs::read_to_string(&edited).unwrap(), "two\n");
        assert_eq!(ws.revert_undo.len(&UndoScope::Session(key)), 0);
    }

    fn step_in(dir: &Path, name: &str, before: Option<&[u8]>, mode: u32) -> RevertStep {
        let path = dir.join(name);
        if let Some(bytes) = before {
            std::fs::write(&path, bytes).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        }
        let taken = Snapshot::take(&path, name).unwrap();
        RevertStep::new(path, name.to_string(), taken, None)
    }

    #[test]
    fn a_removed_file_comes_back_with_its_bytes_and_permissions() {
        let dir = tempfile::tempdir().unwrap();
        let bytes = b"#!/bin/sh\r\necho \xff\n";
        let step = step_in(dir.path(), "run.sh", Some(bytes), 0o750);
        // The revert removed it.
        std::fs::remove_file(&step.path).unwrap();
        assert_eq!(step.undo().as_deref(), Ok("brought run.sh back"));
        assert_eq!(std::fs::read(&step.path).unwrap(), bytes);
        let mode = std::fs::metadata(&step.path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o750);
        let change = step.change("u1");
        assert_eq!(change.before, None, "recorded as created again");
        assert!(!change.deleted);
    }

    #[test]
    fn a_file_changed_since_the_revert_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.txt");
        std::fs::write(&path, "agent's\n").unwrap();
        let before = Snapshot::take(&path, "a.txt").unwrap();
        std::fs::write(&path, "original\n").unwrap();
        let after = Snapshot::take(&path, "a.txt").unwrap();
        let step = RevertStep::new(path.clone(), "a.txt".to_string(), before, after);
        std::fs::write(&path, "the user's\n").unwrap();
        let refused = step.undo().unwrap_err();
        assert!(
            refused.contains("changed since it was reverted"),
            "{refused}"
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "the user's\n");
        // As the revert left it again: put back.
        std::fs::write(&path, "original\n").unwrap();
        assert_eq!(
            step.undo().as_deref(),
            Ok("put a.txt back as it was before the revert")
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "agent's\n");
        let change = step.change("u2");
        assert_eq!(change.before.as_deref(), Some("original\n"));
        assert_eq!(change.after.as_deref(), Some("agent's\n"));
    }

    #[test]
    fn a_file_the_revert_brought_back_is_deleted_again() {
        let dir = tempfile::tempdir().unwrap();
        let step = step_in(dir.path(), "gone.txt", None, 0);
        let after = Some(Snapshot {
            bytes: b"restored\n".to_vec(),
            mode: 0o644,
        });
        let step = RevertStep::new(step.path, step.shown, None, after);
        std::fs::write(&step.path, "restored\n").unwrap();
        assert_eq!(step.undo().as_deref(), Ok("deleted gone.txt again"));
        assert!(!step.path.exists());
        assert!(step.change("u3").deleted);
    }

    #[test]
    fn stacks_are_per_scope_newest_first_and_bounded() {
        let mut undo = RevertUndo::default();
        let a = UndoScope::Session(SessionKey(1));
        let b = UndoScope::Project(PathBuf::from("/p"));
        let step =
            |n: usize| RevertStep::new(PathBuf::from(format!("/f{n}")), n.to_string(), None, None);
        for n in 0..DEPTH + 2 {
            undo.push(a.clone(), step(n));
        }
        undo.push(b.clone(), step(100));
        assert_eq!(undo.len(&a), DEPTH);
        assert_eq!(undo.pop(&a).unwrap().shown, (DEPTH + 1).to_string());
        assert_eq!(undo.pop(&b).unwrap().shown, "100");
        assert!(undo.pop(&b).is_none());
        let rest: Vec<String> = std::iter::from_fn(|| undo.pop(&a))
            .map(|s| s.shown)
            .collect();
        assert_eq!(
            rest.last().map(String::as_str),
            Some("2"),
            "the two oldest went"
        );
        // Large files: the oldest go once the stack holds more than its budget, but the
        // newest stays whatever its size.
        let big = |n: usize, len: usize| {
            let before = Some(Snapshot {
                bytes: vec![b'x'; len],
                mode: 0o644,
            });
            RevertStep::new(
                PathBuf::from(format!("/big{n}")),
                n.to_string(),
                before,
                None,
            )
        };
        undo.push(a.clone(), big(1, BUDGET / 2));
        undo.push(a.clone(), big(2, BUDGET / 2));
        assert_eq!(undo.len(&a), 2);
        undo.push(a.clone(), big(3, BUDGET / 2));
        assert_eq!(undo.len(&a), 2);
        undo.push(a.clone(), big(4, BUDGET + 1));
        assert_eq!(undo.len(&a), 1);
        assert_eq!(undo.pop(&a).unwrap().shown, "4");
    }
}
