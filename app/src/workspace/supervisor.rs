//! The Workspace Session Supervisor's side of the workspace: every session's runner as a
//! row (project, state, pid, restarts, model, tokens, cost), and the actions the
//! supervisor view offers on one: show it, restart its runner, stop it.

use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use march_panes::agent::PaneStatus;

use super::Workspace;
use super::agent::{AgentDriver, RunnerState, RunnerStatus, SessionOpen};
use super::router::{Attention, SessionKey};

/// One session as the supervisor lists it.
#[derive(Debug, Clone)]
pub struct SessionRow {
    /// The session.
    pub key: SessionKey,
    /// Its project directory.
    pub project: PathBuf,
    /// Its title.
    pub title: String,
    /// What it wants from the user.
    pub attention: Attention,
    /// Its runner.
    pub runner: RunnerStatus,
    /// Model, context and cost, as its view knows them.
    pub pane: PaneStatus,
    /// Whether a pane shows it.
    pub shown: bool,
    /// What its first open permission request is about, if one waits.
    pub question: Option<String>,
}

impl Workspace {
    /// Every session, grouped by project (projects and sessions in the order opened).
    pub fn supervisor_rows(&self) -> Vec<SessionRow> {
        let mut rows: Vec<SessionRow> = self
            .sessions
            .iter()
            .map(|(key, slot)| SessionRow {
                key: *key,
                project: slot.project.clone(),
                title: slot.view.title().to_string(),
                attention: self.router.attention(*key),
                runner: slot.driver.status(),
                pane: slot.view.status(),
                shown: self.agent_panes_of(*key).next().is_some(),
                question: slot.view.pending_question().map(str::to_string),
            })
            .collect();
        // Sessions are in key order, so a project's first row says when it was opened.
        let mut projects: Vec<PathBuf> = Vec::new();
        for row in &rows {
            if !projects.contains(&row.project) {
                projects.push(row.project.clone());
            }
        }
        rows.sort_by_key(|r| (projects.iter().position(|p| *p == r.project), r.key));
        rows
    }

    /// Show session `key`: focus a pane that shows it (its tab made active), else show it
    /// in the focused pane, whose session goes on in the background.
    pub fn show_session(&mut self, key: SessionKey) {
        let shown = self.agent_panes_of(key).next();
        if let Some(pane) = shown
            && let Some(tab) = self.tabs.holding(pane)
        {
            self.tabs.select(tab);
            self.tab_mut().layout.focus(pane);
            return;
        }
        self.show_in_focused(key);
    }

    /// Start session `key`'s runner again (its session reloaded from the agent's file); a
    /// stopped or crashed runner comes back this way.
    pub fn restart_session(&mut self, key: SessionKey) {
        let Some(slot) = self.sessions.get_mut(&key) else {
            return;
        };
        if slot.setup.is_some() {
            return;
        }
        // A session nobody prompted has nothing on disk to load: it starts afresh.
        let known = slot.session_id.clone().or_else(|| slot.driver.session());
        let open = match known {
            Some(id) if slot.view.has_prompt() => SessionOpen::Load(id),
            _ => SessionOpen::New(self.launcher.mode),
        };
        let reload = matches!(open, SessionOpen::Load(_));
        let driver = AgentDriver::start(
            key,
            self.launcher.spec.clone(),
            slot.project.clone(),
            open,
            self.launcher.events.clone(),
        );
        let old = std::mem::replace(&mut slot.driver, driver);
        tokio::spawn(old.shutdown());
        // The reload replays the transcript into an empty view.
        slot.view.clear();
        slot.view.notice(if reload {
            "Restarting the agent; the session is reloaded."
        } else {
            "Restarting the agent with a new session."
        });
        slot.crash = None;
        slot.parked = false;
        self.router.restarted(key);
    }

    /// Stop session `key`'s runner; the view stays, and a restart (or a prompt) brings it
    /// back.
    pub fn stop_session(&mut self, key: SessionKey) {
        self.stop_runner(
            key,
            "Stopped the agent. Sending a prompt, or r in the supervisor (Ctrl-a S), starts it again.",
        );
    }

    /// Stops session `key`'s runner with `notice` in its pane.
    fn stop_runner(&mut self, key: SessionKey, notice: &str) {
        let Some(slot) = self.sessions.get_mut(&key) else {
            return;
        };
        if matches!(slot.driver.status().state, RunnerState::Stopped) {
            return;
        }
        let session = slot.driver.session();
        let stopped = AgentDriver::stopped(
            key,
            self.launcher.events.clone(),
            slot.driver.status(),
            session,
        );
        let old = std::mem::replace(&mut slot.driver, stopped);
        tokio::spawn(old.shutdown());
        slot.view.clear_permissions();
        slot.view.notice(notice);
        self.router.restarted(key);
    }
}

impl Workspace {
    /// Stops the runners of sessions no pane shows that have been idle for `after` (`now`
    /// given, so tests choose the time); they restart when shown. Returns when the next
    /// one would be due, if any may be.
    pub fn stop_idle_background(&mut self, now: SystemTime, after: Duration) -> Option<SystemTime> {
        let mut next: Option<SystemTime> = None;
        let keys: Vec<SessionKey> = self.sessions.keys().copied().collect();
        for key in keys {
            if self.agent_panes_of(key).next().is_some()
                || !matches!(
                    self.router.attention(key),
                    Attention::Idle | Attention::Done | Attention::Error
                )
            {
                continue;
            }
            let Some(slot) = self.sessions.get(&key) else {
                continue;
            };
            if slot.setup.is_some() || slot.driver.status().state != RunnerState::Ready {
                continue;
            }
            let due = slot.last_activity.unwrap_or(now) + after;
            if due <= now {
                self.stop_runner(
                    key,
                    "Stopped the agent while this session sat idle out of sight; showing it starts the agent again.",
                );
                if let Some(slot) = self.sessions.get_mut(&key) {
                    slot.parked = true;
                }
            } else {
                next = Some(next.map_or(due, |n| n.min(due)));
            }
        }
        next
    }

    /// Starts the runner of session `key` again if it was stopped in the background.
    pub(super) fn wake(&mut self, key: SessionKey) {
        if self.sessions.get(&key).is_some_and(|s| s.parked) {
            self.restart_session(key);
        }
    }
}
