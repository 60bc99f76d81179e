//! The job bus: slow work (git, diffs, reverts, setup's files and probes) runs off the UI
//! loop and comes back as a [`JobDone`], on a channel of its own apart from agent events, so
//! no pane and no agent connection waits for it.

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use march_panes::diff::FileDiff;
use march_panes::setup::SetupProvider;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

use super::changes::FileChange;
use super::router::SessionKey;

/// What a finished job brings back to the workspace.
#[derive(Debug)]
pub enum JobDone {
    /// A git job for agents' worktrees ran.
    Worktree(super::worktrees::WorktreeDone),
    /// A session's file changes were diffed for its diff panes.
    SessionDiffed {
        /// The session.
        session: SessionKey,
        /// Which request this answers (only the latest is shown).
        generation: u64,
        /// The net change of each file.
        files: Vec<FileDiff>,
    },
    /// A project's uncommitted changes were diffed.
    UncommittedDiffed {
        /// The project.
        project: PathBuf,
        /// Which request this answers (only the latest is shown).
        generation: u64,
        /// The files and what they are against (`HEAD`, or a worktree's base branch), or why
        /// there are none (not a git repository, …).
        result: Result<(Vec<FileDiff>, String), String>,
    },
    /// A revert from a diff pane ran.
    Reverted(Reverted),
    /// The files a rewind would restore were checked against the disk.
    RewindChecked {
        /// The session.
        session: SessionKey,
        /// The message chosen.
        chosen: march_panes::agent::TreeMove,
        /// What restoring each file would do.
        lines: Vec<march_panes::agent::RestoreLine>,
    },
    /// A rewind's files were restored.
    Restored(super::rewind::Restored),
    /// Projects to offer in the project picker were listed.
    ProjectsListed(ProjectsListed),
    /// A session's recorded changes were read from the data dir.
    ChangesRead {
        /// The agent's session id.
        session: String,
        /// What the file holds.
        changes: Vec<FileChange>,
    },
    /// Local servers were asked which models they serve, for a `/model` chooser.
    ModelsDiscovered {
        /// The session whose chooser asked.
        session: SessionKey,
        /// `provider/model-id` and a label, for models the servers serve.
        models: Vec<(String, String)>,
    },
    /// A project's prompt history was read from the data dir.
    HistoryRead {
        /// The project.
        project: PathBuf,
        /// Its prompts, oldest first.
        entries: Vec<String>,
    },
    /// The history index was searched for the switcher's query.
    TurnsFound {
        /// The query.
        query: String,
        /// The turns that matched, best first (none when the index could not be read).
        hits: Vec<march_core::history::SearchHit>,
    },
    /// A session was exported (`/export`): the file written, or why not.
    Exported {
        /// The session.
        session: SessionKey,
        /// The file, or the error.
        result: Result<PathBuf, String>,
    },
    /// A project's files were listed for `@` mentions.
    FilesListed {
        /// The project.
        project: PathBuf,
        /// Its files and directories.
        files: march_panes::agent::ProjectFiles,
    },
    /// A prompt was added to its project's history file (or why it was not).
    HistorySaved(Result<(), String>),
    /// The costs of the workspace's projects were read from their transcripts.
    CostsRead(Vec<(PathBuf, super::costs::ProjectCost)>),
    /// The browser daemon said how it is (`None`: it does not run).
    BrowserStatus(Result<Option<march_runner::browser::Status>, String>),
    /// The memory server and the remote memory said how they are (`None`: neither runs
    /// nor is configured).
    MemoryStatus(Result<Option<march_runner::memory_server::MemoryStatus>, String>),
    /// The gateway said how it is (`None`: it does not run and nothing waits in its queue).
    GatewayStatus(Result<Option<march_gateway::GatewayStatus>, String>),
    /// Agents' avatar files were read (those that changed).
    AvatarsRead(Vec<super::avatars::AvatarRead>),
    /// A picture was read for a prompt (a file or the clipboard).
    PictureRead(super::attach::PictureRead),
    /// A picture was encoded for an attached terminal (handled by the UI, which owns the
    /// terminals: see [`super::Workspace::job_handled`]).
    PictureEncoded(crate::ui::pictures::Encoded),
    /// First-run setup: providers with local servers probed.
    SetupProviders {
        /// The session in setup.
        session: SessionKey,
        /// What was found.
        providers: Vec<SetupProvider>,
    },
    /// First-run setup: a custom server was asked for its models (nothing saved yet).
    SetupModels {
        /// The session in setup.
        session: SessionKey,
        /// Its models, or why they could not be listed.
        result: Result<Vec<String>, String>,
    },
    /// First-run setup: what the user chose was saved (or not).
    SetupSaved {
        /// The session in setup.
        session: SessionKey,
        /// What to say.
        result: Result<String, String>,
    },
    /// First-run setup: whether a model can be used now, and else what to offer.
    SetupChecked {
        /// The session in setup.
        session: SessionKey,
        /// Why setup is still needed; `None` when the agent can start.
        reason: Option<String>,
        /// The providers to offer while it is.
        providers: Vec<SetupProvider>,
    },
}

/// The outcome of a revert: what to tell the user, and what changed on disk.
#[derive(Debug)]
pub struct Reverted {
    /// What was done, or why nothing was.
    pub outcome: Result<String, String>,
    /// The file written or removed, when one was.
    pub path: Option<PathBuf>,
    /// Whose changes it reverted.
    pub of: RevertOf,
    /// What undoing it takes (a revert done, or an undo that failed): kept to undo.
    pub step: Option<super::revert_undo::RevertStep>,
}

/// Whose change a revert undid.
#[derive(Debug)]
pub enum RevertOf {
    /// A session's: the revert is recorded as the session's newest change.
    Session {
        /// The pane's session.
        session: SessionKey,
        /// Its agent's id, which names its change log.
        id: String,
        /// The change the revert made, to record.
        change: Option<FileChange>,
        /// The project the session runs in.
        project: PathBuf,
    },
    /// A project's uncommitted changes.
    Worktree {
        /// The project.
        project: PathBuf,
    },
}

/// Directories the project picker offers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProjectsListed {
    /// Projects of saved workspaces, most recent first (those still there).
    pub recent: Vec<PathBuf>,
    /// Directories beside the project the picker was opened near, sorted.
    pub nearby: Vec<PathBuf>,
}

/// How much lower than the loop's a blocking job's priority is (`nice` steps).
const JOB_NICENESS: i32 = 19;

/// Where jobs start and report. Cloned freely; every clone counts into the same tally.
#[derive(Clone)]
pub struct Jobs {
    done: UnboundedSender<JobDone>,
    /// Jobs started whose result has not been handled yet (shutdown waits for writes among
    /// them): counted down by [`Jobs::handled`], or by the job itself when it died.
    running: Arc<AtomicUsize>,
}

impl Jobs {
    /// A bus and the receiving end the UI loop reads.
    pub fn channel() -> (Jobs, UnboundedReceiver<JobDone>) {
        let (done, rx) = unbounded_channel();
        let jobs = Jobs {
            done,
            running: Arc::new(AtomicUsize::new(0)),
        };
        (jobs, rx)
    }

    /// Runs `work` on a thread of its own (file system, child processes) at a lower
    /// priority, so that git on every core still leaves the loop and the panes' programs
    /// theirs (the child processes it starts inherit it); its result comes back on the bus.
    pub fn blocking(&self, work: impl FnOnce() -> JobDone + Send + 'static) {
        let report = self.start();
        let started = std::thread::Builder::new()
            .name("march-job".to_string())
            .spawn(move || {
                // Linux counts niceness per thread: only this one gives way.
                if let Err(e) = rustix::process::nice(JOB_NICENESS) {
                    tracing::debug!("job priority not lowered: {e}");
                }
                report.send(work());
            });
        if let Err(e) = started {
            // The report went with the closure, counting the job down.
            tracing::warn!("cannot start a job: {e}");
        }
    }

    /// Runs `work` as a task (network); its result comes back on the bus.
    pub fn spawn(&self, work: impl Future<Output = JobDone> + Send + 'static) {
        let report = self.start();
        drop(tokio::spawn(async move { report.send(work.await) }));
    }

    /// How many jobs have started and not had their result handled yet.
    pub fn running(&self) -> usize {
        self.running.load(Ordering::SeqCst)
    }

    /// A result taken from the bus was handled.
    pub fn handled(&self) {
        let _ = self
            .running
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1));
    }

    fn start(&self) -> Report {
        self.running.fetch_add(1, Ordering::SeqCst);
        Report {
            done: self.done.clone(),
            running: self.running.clone(),
            sent: false,
        }
    }
}

/// A started job's way back. The reader counts a delivered result down when it has handled
/// it, so "nothing running" always means every result was seen; a job that died without
/// one (its work panicked) counts itself down.
struct Report {
    done: UnboundedSender<JobDone>,
    running: Arc<AtomicUsize>,
    sent: bool,
}

impl Report {
    fn send(mut self, done: JobDone) {
        self.sent = self.done.send(done).is_ok();
    }
}

impl Drop for Report {
    fn drop(&mut self) {
        if !self.sent {
            self.running.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

impl super::Workspace {
    /// The job bus, for work the UI starts.
    pub fn jobs(&self) -> &Jobs {
        &self.launcher.jobs
    }

    /// A job whose result the UI handled itself (a picture encoded for a terminal) is
    /// counted as handled.
    pub fn job_handled(&self) {
        self.launcher.jobs.handled();
    }

    /// A job finished: its result is shown. Whether anything in the active tab changed.
    pub fn job_done(&mut self, done: JobDone) -> bool {
        use JobDone as J;
        // Counted as handled first: what it starts in turn is running after it.
        self.launcher.jobs.handled();
        match done {
            J::SessionDiffed {
                session,
                generation,
                files,
            } => self.diffed(session, generation, files),
            J::UncommittedDiffed {
                project,
                generation,
                result,
            } => self.uncommitted_diffed(project, generation, result),
            J::Reverted(reverted) => self.reverted(reverted),
            J::RewindChecked {
                session,
                chosen,
                lines,
            } => self.rewind_checked(session, chosen, lines),
            J::Restored(done) => self.restored(done),
            J::Worktree(done) => self.worktree_done(done),
            J::ChangesRead { session, changes } => self.changes_read(session, changes),
            J::ModelsDiscovered { session, models } => {
                self.sessions.get_mut(&session).is_some_and(|slot| {
                    slot.view.offer_more_choices(
                        &agent_client_protocol::v1::schema::SessionConfigOptionCategory::Model,
                        &models,
                    )
                })
            }
            J::HistoryRead { project, entries } => self.history_read(&project, entries),
            J::FilesListed { project, files } => self.files_listed(project, files),
            J::TurnsFound { query, hits } => {
                // Searches run in parallel and end in any order: each is kept until taken.
                self.found_turns.push((query, hits));
                false
            }
            J::Exported { session, result } => self.exported(session, result),
            J::HistorySaved(result) => {
                if let Err(e) = result {
                    tracing::warn!("prompt history not saved: {e}");
                }
                false
            }
            J::CostsRead(costs) => {
                if let Some(projects) = self.costs.read(costs) {
                    self.refresh_costs_of(projects);
                }
                true
            }
            J::BrowserStatus(answer) => self.daemons.browser_answered(answer),
            J::MemoryStatus(answer) => self.daemons.memory_answered(answer),
            J::GatewayStatus(answer) => self.daemons.gateway_answered(answer),
            J::AvatarsRead(found) => {
                let (changed, retry) = self.avatars.read(found);
                if retry {
                    self.refresh_avatars();
                }
                changed
            }
            J::ProjectsListed(listed) => {
                self.projects_listed = Some(listed);
                false
            }
            J::PictureRead(read) => self.picture_read(read),
            // Reached only while quitting, when nobody draws.
            J::PictureEncoded(_) => false,
            J::SetupProviders { session, providers } => self.setup_providers(session, providers),
            J::SetupModels { session, result } => self.setup_models(session, result),
            J::SetupSaved { session, result } => self.setup_done(session, result),
            J::SetupChecked {
                session,
                reason,
                providers,
            } => self.setup_checked(session, reason, providers),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn blocking_jobs_give_way_and_are_counted_until_handled() {
        let (jobs, mut done) = Jobs::channel();
        let ours = rustix::process::getpriority_process(None).unwrap();
        jobs.blocking(|| JobDone::SetupSaved {
            session: SessionKey(1),
            result: rustix::process::getpriority_process(None)
                .map(|p| p.to_string())
                .map_err(|e| e.to_string()),
        });
        assert_eq!(jobs.running(), 1);
        let Some(JobDone::SetupSaved { result, .. }) = done.recv().await else {
            panic!("no result");
        };
        let theirs: i32 = result.unwrap().parse().unwrap();
        assert_eq!(theirs, (ours + JOB_NICENESS).min(19));
        // The loop's own priority is untouched.
        assert_eq!(rustix::process::getpriority_process(None).unwrap(), ours);
        assert_eq!(jobs.running(), 1, "counted until handled");
        jobs.handled();
        assert_eq!(jobs.running(), 0);
    }
}
