//! Rewind's file restore: the project's files put back as they were when an earlier message
//! was sent, from the session's change log. What would change is listed before anything is
//! written; a file changed on disk since the session's last edit of it is left alone, and
//! said so.

use std::path::{Path, PathBuf};

use march_panes::agent::{RestoreLine, TreeMove};

use super::Workspace;
use super::changes::FileChange;
use super::jobs::JobDone;
use super::revert::SessionUndo;
use super::router::SessionKey;

/// One file to put back.
#[derive(Debug, Clone, PartialEq)]
pub struct Restore {
    /// The file (absolute).
    pub path: PathBuf,
    /// Its text when the message was sent (`None`: the session created it since).
    pub then: Option<String>,
    /// Its text as the session left it (`None`: the session deleted it).
    pub left: Option<String>,
    /// A change too large to have been kept: it cannot be put back.
    pub too_large: bool,
}

impl Restore {
    fn undo(&self, project: &Path, n: usize) -> SessionUndo {
        SessionUndo {
            before: self.then.clone(),
            after: self.left.clone(),
            tool_call: format!("march-rewind-{n}"),
            hunk: None,
            shown: shown(project, &self.path),
            path: self.path.clone(),
        }
    }
}

/// The files the session changed at or after `since_ms` (oldest change first), each with its
/// text before the first of those changes and as the last one left it; files that ended as
/// they were are left out.
pub fn plan(changes: &[FileChange], since_ms: u64) -> Vec<Restore> {
    let mut out: Vec<Restore> = Vec::new();
    for change in changes.iter().filter(|c| c.at_ms >= since_ms) {
        let left = (!change.deleted).then(|| change.after.clone().unwrap_or_default());
        match out.iter_mut().find(|r| r.path == change.path) {
            Some(known) => {
                known.left = left;
                known.too_large |= change.too_large.is_some();
            }
            None => out.push(Restore {
                path: change.path.clone(),
                then: change.before.clone(),
                left,
                too_large: change.too_large.is_some(),
            }),
        }
    }
    out.retain(|r| r.too_large || r.then != r.left);
    out
}

/// The file as the user knows it: relative to the project when inside it.
fn shown(project: &Path, path: &Path) -> String {
    path.strip_prefix(project)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// What restoring each file would do, read from the disk now.
pub fn check(project: &Path, plan: &[Restore]) -> Vec<RestoreLine> {
    plan.iter()
        .enumerate()
        .map(|(n, r)| {
            let name = shown(project, &r.path);
            let refused = if r.too_large {
                Some("too large to have been kept".to_string())
            } else {
                r.undo(project, n).check().err()
            };
            let text = match (&refused, &r.then) {
                (Some(why), _) => format!("{name}: left as it is ({why})"),
                (None, None) => format!("{name}: deleted (the session created it)"),
                (None, Some(_)) if r.left.is_none() => {
                    format!("{name}: brought back (the session deleted it)")
                }
                (None, Some(_)) => format!("{name}: put back as it was"),
            };
            RestoreLine {
                text,
                refused: refused.is_some(),
            }
        })
        .collect()
}

/// What a restore did: the changes made (for the change log), and a line for the user.
#[derive(Debug)]
pub struct Restored {
    /// The session.
    pub session: SessionKey,
    /// The agent's session id.
    pub id: String,
    /// The changes written.
    pub changes: Vec<FileChange>,
    /// What to say.
    pub summary: String,
}

/// Put back every file of `plan` that is still as the session left it.
pub fn apply(project: &Path, plan: &[Restore]) -> (Vec<FileChange>, String) {
    let mut changes = Vec::new();
    let mut refused = Vec::new();
    for (n, r) in plan.iter().enumerate() {
        let name = shown(project, &r.path);
        if r.too_large {
            refused.push(format!("{name} (too large to have been kept)"));
            continue;
        }
        let undo = r.undo(project, n);
        match undo.check().and_then(|_| undo.run()) {
            Ok((_, change)) => changes.push(change),
            Err(why) => refused.push(why),
        }
    }
    let mut summary = match changes.len() {
        1 => "Restored 1 file.".to_string(),
        n => format!("Restored {n} files."),
    };
    if !refused.is_empty() {
        summary.push_str(&format!(" Not restored: {}.", refused.join("; ")));
    }
    (changes, summary)
}

impl Workspace {
    /// A message chosen in the rewind list: the files the session changed since are checked
    /// off the loop and listed for the user to choose; with none, the conversation goes
    /// back at once.
    pub(super) fn rewind_chosen(&mut self, key: SessionKey, chosen: TreeMove) {
        let Some(slot) = self.sessions.get(&key) else {
            return;
        };
        let project = slot.project.clone();
        let id = slot.session_id.as_ref().map(|s| s.0.to_string());
        let local = crate::remote::Remote::of(&project).is_none();
        let plan = match (id, chosen.at_ms, local) {
            (Some(id), Some(at), true) => plan(self.changes.changes(&id), at),
            _ => Vec::new(),
        };
        if plan.is_empty() {
            if let Some(slot) = self.sessions.get_mut(&key) {
                slot.view.close_tree();
            }
            self.navigate_chosen(key, chosen);
            return;
        }
        self.launcher.jobs.blocking(move || JobDone::RewindChecked {
            session: key,
            lines: check(&project, &plan),
            chosen,
        });
    }

    /// The files were checked: the pane asks whether to restore them.
    pub(super) fn rewind_checked(
        &mut self,
        key: SessionKey,
        chosen: TreeMove,
        lines: Vec<RestoreLine>,
    ) -> bool {
        let Some(slot) = self.sessions.get_mut(&key) else {
            return false;
        };
        slot.view.offer_restore(&chosen.entry_id, lines);
        true
    }

    /// The conversation went back with the files to be restored: restore them off the loop
    /// (the change log is read again: what is on disk is checked as it is now).
    pub(super) fn restore_files(&mut self, key: SessionKey, since_ms: u64) {
        let Some(slot) = self.sessions.get(&key) else {
            return;
        };
        let project = slot.project.clone();
        let Some(id) = slot.session_id.as_ref().map(|s| s.0.to_string()) else {
            return;
        };
        let plan = plan(self.changes.changes(&id), since_ms);
        self.launcher.jobs.blocking(move || {
            let (changes, summary) = apply(&project, &plan);
            JobDone::Restored(Restored {
                session: key,
                id,
                changes,
                summary,
            })
        });
    }

    /// Files were restored: recorded as the session's changes (diff panes follow), checked
    /// again by the language servers, and said in the pane.
    pub(super) fn restored(&mut self, done: Restored) -> bool {
        let paths: Vec<PathBuf> = done.changes.iter().map(|c| c.path.clone()).collect();
        for change in done.changes {
            self.changes.record(&done.id, change);
        }
        let project = self.sessions.get(&done.session).map(|s| s.project.clone());
        if let Some(project) = project {
            for path in &paths {
                self.refresh_diagnostics_of(&project, path);
            }
        }
        self.refresh_changes(done.session);
        if let Some(slot) = self.sessions.get_mut(&done.session) {
            slot.view.notice(done.summary);
        }
        true
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn change(path: &Path, before: Option<&str>, after: &str, at_ms: u64) -> FileChange {
        FileChange {
            at_ms,
            ..FileChange::new("call", path, before, after)
        }
    }

    #[test]
    fn the_plan_takes_each_file_back_to_before_its_first_change_since_the_message() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b, c) = (
            dir.path().join("a.rs"),
            dir.path().join("b.rs"),
            dir.path().join("c.rs"),
        );
        let changes = vec![
            change(&a, Some("a0"), "a1", 100),
            change(&a, Some("a1"), "a2", 200),
            change(&b, None, "b1", 250),
            change(&a, Some("a2"), "a3", 300),
            change(&c, Some("c0"), "c1", 300),
            change(&c, Some("c1"), "c0", 310),
        ];
        let plan = plan(&changes, 200);
        assert_eq!(plan.len(), 2, "c ended as it was: {plan:?}");
        assert_eq!(plan[0].path, a);
        assert_eq!(plan[0].then.as_deref(), Some("a1"));
        assert_eq!(plan[0].left.as_deref(), Some("a3"));
        assert_eq!(plan[1].then, None, "b is new since");
    }

    #[test]
    fn restore_is_listed_first_and_a_file_changed_since_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path();
        let (a, b, c) = (
            project.join("a.rs"),
            project.join("b.rs"),
            project.join("c.rs"),
        );
        std::fs::write(&a, "a2").unwrap();
        std::fs::write(&b, "b1").unwrap();
        std::fs::write(&c, "edited by hand").unwrap();
        let changes = vec![
            change(&a, Some("a1"), "a2", 200),
            change(&b, None, "b1", 210),
            change(&c, Some("c0"), "c1", 220),
        ];
        let plan = plan(&changes, 100);
        let lines = check(project, &plan);
        let texts: Vec<&str> = lines.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(texts[0], "a.rs: put back as it was");
        assert_eq!(texts[1], "b.rs: deleted (the session created it)");
        assert!(
            texts[2].starts_with("c.rs: left as it is ("),
            "{}",
            texts[2]
        );
        assert_eq!(
            lines.iter().map(|l| l.refused).collect::<Vec<_>>(),
            [false, false, true]
        );
        // Listing wrote nothing.
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "a2");

        let (made, summary) = apply(project, &plan);
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "a1");
        assert!(!b.exists());
        assert_eq!(std::fs::read_to_string(&c).unwrap(), "edited by hand");
        assert_eq!(made.len(), 2);
        assert!(made[1].deleted);
        assert!(
            summary.starts_with("Restored 2 files. Not restored: c.rs"),
            "{summary}"
        );
    }
}
