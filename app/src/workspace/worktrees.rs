//! Agent panes on git worktrees of their own (`crate::git::worktree`): made off the loop and
//! opened beside the focused pane, merged back or sent as a pull request from the pane
//! (`/merge`, `/pr`), and kept or removed when the pane closes. Every git run is a job.

use std::path::{Path, PathBuf};

use crate::git::worktree::{MergeHow, Pending, Worktree};

use super::jobs::JobDone;
use super::layout::{Axis, PaneId};
use super::pane::Pane;
use super::router::SessionKey;
use super::{UiRequest, Workspace};

/// What the workspace knows of worktrees between jobs.
#[derive(Debug, Default)]
pub struct WorktreePanes {
    /// A close that needs the user's answer, for the UI to ask.
    close_question: Option<CloseQuestion>,
}

/// Closing a pane whose session works in a March worktree: keep it or remove it?
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CloseQuestion {
    /// The pane to close.
    pub pane: PaneId,
    /// Its worktree.
    pub worktree: Worktree,
    /// What removing it would lose.
    pub pending: Pending,
}

/// A git job's outcome for the worktree UI.
#[derive(Debug)]
pub enum WorktreeDone {
    /// A worktree was made (or not) for a new pane split along the axis.
    Made {
        /// The worktree's project directory, or why there is none.
        result: Result<PathBuf, String>,
        /// How the new pane splits the focused one.
        axis: Axis,
    },
    /// The facts for closing `pane`: its worktree and what it holds (none: not a worktree,
    /// close it as any pane).
    Closing {
        /// The pane.
        pane: PaneId,
        /// Its worktree and pending work.
        found: Option<(Worktree, Pending)>,
    },
    /// A merge, pull request or removal ran: what to say, in session `session`'s pane
    /// (or the status bar when it is gone), and the project whose panes to refresh.
    Said {
        /// The session that asked, if any.
        session: Option<SessionKey>,
        /// Where things changed.
        project: PathBuf,
        /// What happened, or why not.
        result: Result<String, String>,
    },
}

/// The worktree `project` is a session directory inside, if it is under `root`; checked
/// without git (a March worktree's directory is `<root>/<repo>/<name>`).
fn under_root(project: &Path, root: &Path) -> bool {
    !root.as_os_str().is_empty() && project.starts_with(root)
}

impl Workspace {
    /// Makes a worktree of the focused project on `branch` (else the next `march/N`) off the
    /// loop; an agent pane opens on it, splitting the focused pane along `axis`.
    pub fn open_worktree_pane(&mut self, axis: Axis, branch: Option<String>) {
        let project = self.focused_project();
        let root = self.launcher.worktrees.clone();
        self.status_note = Some("making a worktree…".to_string());
        self.launcher.jobs.blocking(move || {
            let result = make_for(&project, branch.as_deref(), &root);
            JobDone::Worktree(WorktreeDone::Made { result, axis })
        });
    }

    /// Closes pane `id`; a pane whose session works in a March worktree first has its
    /// worktree looked at (off the loop), and the user is asked to keep or remove it.
    pub fn close_pane_asking(&mut self, id: PaneId) -> UiRequest {
        let (key, project) = match self.panes.get(&id) {
            Some(Pane::Agent(key)) => (
                Some(*key),
                self.sessions.get(key).map(|s| s.project.clone()),
            ),
            _ => (None, None),
        };
        // Another session still works there (shown or not): the worktree is not this
        // pane's to remove.
        let shared = |project: &Path| {
            self.sessions
                .iter()
                .any(|(k, s)| Some(*k) != key && s.project.starts_with(project))
        };
        match project {
            Some(project)
                if under_root(&project, &self.launcher.worktrees) && !shared(&project) =>
            {
                self.launcher.jobs.blocking(move || {
                    let found =
                        Worktree::of(&project).and_then(|w| w.pending().ok().map(|p| (w, p)));
                    JobDone::Worktree(WorktreeDone::Closing { pane: id, found })
                });
                UiRequest::None
            }
            _ => self.close_pane(id),
        }
    }

    /// The close question raised since the last call, if any.
    pub fn take_close_question(&mut self) -> Option<CloseQuestion> {
        self.worktrees.close_question.take()
    }

    /// The user's answer to a close question: the pane closes, and the worktree is removed
    /// (off the loop) when `remove`; `anyway` loses what it holds.
    pub fn close_with_worktree(&mut self, question: CloseQuestion, remove: bool) -> UiRequest {
        let request = self.close_pane(question.pane);
        if remove {
            let worktree = question.worktree;
            let anyway = !question.pending.is_empty();
            self.launcher.jobs.blocking(move || {
                let result = worktree
                    .remove(anyway)
                    .map(|()| format!("removed the worktree {}", worktree.label()));
                JobDone::Worktree(WorktreeDone::Said {
                    session: None,
                    project: worktree.repo.clone(),
                    result,
                })
            });
        } else {
            self.note(format!(
                "kept the worktree {} ({})",
                question.worktree.label(),
                question.worktree.path.display()
            ));
        }
        request
    }

    /// `/merge [merge|squash|rebase]` in session `key`'s pane: its worktree's work goes back
    /// to its base, off the loop.
    pub(super) fn merge_worktree(&mut self, key: SessionKey, how: &str) {
        let Some(slot) = self.sessions.get_mut(&key) else {
            return;
        };
        let Some(how) = MergeHow::parse(how.trim()) else {
            slot.view
                .set_error("/merge takes merge (the default), squash or rebase");
            return;
        };
        let message = slot
            .view
            .session_title()
            .map(str::to_string)
            .unwrap_or_else(|| "work from March".to_string());
        slot.view.notice("merging…");
        let project = slot.project.clone();
        self.launcher.jobs.blocking(move || {
            let result = in_worktree(&project)
                .and_then(|w| w.merge(how, &message).map_err(|e| e.to_string()));
            JobDone::Worktree(WorktreeDone::Said {
                session: Some(key),
                project,
                result,
            })
        });
    }

    /// `/pr` in session `key`'s pane: its worktree's branch pushed and a pull request
    /// opened with `gh`, off the loop.
    pub(super) fn worktree_pull_request(&mut self, key: SessionKey) {
        let Some(slot) = self.sessions.get_mut(&key) else {
            return;
        };
        let title = slot
            .view
            .session_title()
            .map(str::to_string)
            .unwrap_or_else(|| "Work from March".to_string());
        slot.view.notice("pushing and opening a pull request…");
        let project = slot.project.clone();
        self.launcher.jobs.blocking(move || {
            let result = in_worktree(&project).and_then(|w| {
                w.commit_all(&title)?;
                w.pull_request(&title)
                    .map(|url| format!("opened a pull request: {url}"))
            });
            JobDone::Worktree(WorktreeDone::Said {
                session: Some(key),
                project,
                result,
            })
        });
    }

    /// A worktree job finished; whether the screen changed.
    pub(super) fn worktree_done(&mut self, done: WorktreeDone) -> bool {
        match done {
            WorktreeDone::Made { result, axis } => match result {
                Ok(project) => {
                    self.note(format!("new worktree {}", super::project_name(&project)));
                    let key = self.spawn_session(&project, None, None);
                    let id = PaneId(self.next_id());
                    self.panes.insert(id, Pane::Agent(key));
                    self.tab_mut().layout.split(axis, id);
                    true
                }
                Err(why) => {
                    self.status_note = Some(format!("no worktree: {why}"));
                    true
                }
            },
            WorktreeDone::Closing { pane, found } => {
                match found {
                    Some((worktree, pending)) => {
                        self.worktrees.close_question = Some(CloseQuestion {
                            pane,
                            worktree,
                            pending,
                        });
                    }
                    // Not a worktree after all (removed by hand): an ordinary close.
                    None => {
                        if let UiRequest::Quit = self.close_pane(pane) {
                            self.note("that was the last pane: ctrl-a Q quits".to_string());
                        }
                    }
                }
                true
            }
            WorktreeDone::Said {
                session,
                project,
                result,
            } => {
                let slot = session.and_then(|key| self.sessions.get_mut(&key));
                match (slot, result) {
                    (Some(slot), Ok(said)) => slot.view.notice(said),
                    (Some(slot), Err(why)) => slot.view.set_error(why),
                    (None, Ok(said)) => self.note(said),
                    (None, Err(why)) => self.note(why),
                }
                // Merges change both checkouts.
                self.refresh_uncommitted(&project);
                true
            }
        }
    }
}

impl Workspace {
    /// Says `note` in the status bar.
    fn note(&mut self, note: String) {
        self.status_note = Some(note);
    }
}

/// The March worktree `project` is in, or a message saying it is not in one.
fn in_worktree(project: &Path) -> Result<Worktree, String> {
    Worktree::of(project).ok_or_else(|| {
        "this pane's project is not a March worktree (ctrl-a W opens an agent on one)".to_string()
    })
}

/// Makes a worktree for `project` under `root`: the directory the new pane works in (the
/// worktree's copy of `project`, which may be below the repository's top).
pub fn make_for(project: &Path, branch: Option<&str>, root: &Path) -> Result<PathBuf, String> {
    if let Some(remote) = crate::remote::Remote::of(project) {
        return Err(format!(
            "worktrees are made for projects on this machine; {} is on {}",
            remote.path, remote.host
        ));
    }
    let project = project
        .canonicalize()
        .map_err(|e| format!("{}: {e}", project.display()))?;
    let worktree = Worktree::create(&project, branch, root)?;
    let below = project
        .strip_prefix(&worktree.repo)
        .unwrap_or(Path::new(""));
    Ok(worktree.path.join(below))
}
