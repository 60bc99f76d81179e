//! The Workspace Session Supervisor's side of the workspace: every session's runner as a
//! row (project, state, pid, restarts, model, tokens, cost), and the actions the
//! supervisor view offers on one: show it, restart its runner, stop it.

use std::path::PathBuf;

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
                shown: self.panes.values().any(|k| k == key),
            })
            .collect();
        let first_key = |project: &PathBuf, rows: &[SessionRow]| {
            rows.iter()
                .filter(|r| &r.project == project)
                .map(|r| r.key)
                .min()
        };
        let order: Vec<_> = rows
            .iter()
            .map(|r| (first_key(&r.project, &rows), r.key))
            .collect();
        let mut keyed: Vec<_> = order.into_iter().zip(rows.drain(..)).collect();
        keyed.sort_by_key(|(k, _)| *k);
        keyed.into_iter().map(|(_, r)| r).collect()
    }

    /// Show session `key`: focus a pane that shows it (its tab made active), else show it
    /// in the focused pane, whose session goes on in the background.
    pub fn show_session(&mut self, key: SessionKey) {
        if let Some(pane) = self
            .panes
            .iter()
            .find_map(|(p, k)| (*k == key).then_some(*p))
            && let Some(tab) = self.tabs.iter().position(|t| t.layout.contains(pane))
        {
            self.active = tab;
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
        let open = match slot.driver.session() {
            Some(id) => SessionOpen::Load(id),
            None => SessionOpen::New(self.launcher.mode),
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
        self.router.restarted(key);
    }

    /// Stop session `key`'s runner; the view stays, and a restart brings it back.
    pub fn stop_session(&mut self, key: SessionKey) {
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
        slot.view
            .notice("Stopped the agent. Restart it from the supervisor (Ctrl-a S, then r).");
        self.router.restarted(key);
    }
}
