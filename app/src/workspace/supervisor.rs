//! The Workspace Session Supervisor's side of the workspace: every session's runner as a
//! row (project, state, pid, restarts, model, tokens, cost), and the actions the
//! supervisor view offers on one: show it, restart its runner, stop it.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use march_panes::agent::PaneStatus;

use super::agent::{AgentDriver, RunnerState, RunnerStatus, SessionOpen};
use super::router::{Attention, OutputRouter, SessionKey};
use super::{AgentSlot, Workspace};

/// One session as the supervisor lists it.
#[derive(Debug, Clone)]
pub struct SessionRow {
    /// The session.
    pub key: SessionKey,
    /// Its project directory.
    pub project: PathBuf,
    /// The machine its runner runs on: `None` for this one, else the SSH host.
    pub host: Option<String>,
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
    /// The agent's id of the session, once open (the browser daemon lists tabs by it).
    pub session_id: Option<String>,
    /// Its agent's avatar in its attention state.
    pub avatar: Option<march_panes::avatar::AvatarBadge>,
}

/// The open sessions and their attention: a session is in the Output Router exactly while
/// it is open, as adding and removing go through here.
#[derive(Default)]
pub struct Sessions {
    slots: BTreeMap<SessionKey, AgentSlot>,
    router: OutputRouter,
    /// What sessions did that whoever waits on or watches them has not been told.
    events: Vec<(SessionKey, TurnEvent)>,
}

/// How a turn ended: its stop reason, or why it failed.
pub type TurnEnd = Result<agent_client_protocol::v1::schema::PromptResponse, String>;

/// A step of a session's turn, for `march wait` and the control socket's watches.
#[derive(Debug, Clone)]
pub enum TurnEvent {
    /// A prompt went to the agent.
    Started(String),
    /// The agent asks permission for this.
    Asked(String),
    /// The turn ended.
    Ended(TurnEnd),
}

impl Sessions {
    /// Something happened in session `key`'s turn.
    pub fn turn_event(&mut self, key: SessionKey, event: TurnEvent) {
        self.events.push((key, event));
    }

    /// Opens session `key`, idle.
    pub fn add(&mut self, key: SessionKey, slot: AgentSlot) {
        self.slots.insert(key, slot);
        self.router.add(key);
    }

    /// Closes session `key`: its slot, to shut down.
    pub fn remove(&mut self, key: SessionKey) -> Option<AgentSlot> {
        self.router.remove(key);
        self.slots.remove(&key)
    }

    /// Closes every session: their slots, to shut down.
    pub fn take_all(&mut self) -> Vec<AgentSlot> {
        let keys: Vec<SessionKey> = self.slots.keys().copied().collect();
        keys.into_iter().filter_map(|k| self.remove(k)).collect()
    }

    /// Session `key`.
    pub fn get(&self, key: &SessionKey) -> Option<&AgentSlot> {
        self.slots.get(key)
    }

    /// Session `key`, to change, and the Output Router, to tell it what the session did.
    pub fn get_routed(&mut self, key: &SessionKey) -> Option<(&mut AgentSlot, &mut OutputRouter)> {
        Some((self.slots.get_mut(key)?, &mut self.router))
    }

    /// Session `key`, to change.
    pub fn get_mut(&mut self, key: &SessionKey) -> Option<&mut AgentSlot> {
        self.slots.get_mut(key)
    }

    /// Whether session `key` is open.
    pub fn contains_key(&self, key: &SessionKey) -> bool {
        self.slots.contains_key(key)
    }

    /// The open sessions' keys, oldest first.
    pub fn keys(&self) -> impl Iterator<Item = &SessionKey> {
        self.slots.keys()
    }

    /// The open sessions, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = (&SessionKey, &AgentSlot)> {
        self.slots.iter()
    }

    /// The open sessions' slots, oldest first.
    pub fn values(&self) -> impl Iterator<Item = &AgentSlot> {
        self.slots.values()
    }

    /// The open sessions' slots, to change.
    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut AgentSlot> {
        self.slots.values_mut()
    }

    /// The open sessions, to change.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (SessionKey, &mut AgentSlot)> {
        self.slots.iter_mut().map(|(k, s)| (*k, s))
    }

    /// The Output Router's word on session `key`.
    pub fn attention(&self, key: SessionKey) -> Attention {
        self.router.attention(key)
    }

    /// The Output Router.
    pub fn router(&self) -> &OutputRouter {
        &self.router
    }

    /// The Output Router, to tell it what a session did.
    pub fn router_mut(&mut self) -> &mut OutputRouter {
        &mut self.router
    }
}

/// A session as the control socket's watches compare it after every pass of the loop:
/// borrowed, so nothing is copied unless it changed.
#[derive(Debug, Clone, Copy)]
pub struct SessionState<'a> {
    /// The session.
    pub key: SessionKey,
    /// What it wants from the user.
    pub attention: Attention,
    /// Its title.
    pub title: &'a str,
    /// What its first open permission request is about, if one waits.
    pub question: Option<&'a str>,
}

/// How many sessions there are and what they want, for `march ls`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AttentionCounts {
    /// Every session.
    pub sessions: usize,
    /// Those running a turn.
    pub working: usize,
    /// Those waiting for the user: a question asked, a failure unseen.
    pub needs_you: usize,
}

impl Workspace {
    /// What sessions' turns did since the last call (for `march wait` and watches).
    pub fn take_turn_events(&mut self) -> Vec<(SessionKey, TurnEvent)> {
        std::mem::take(&mut self.sessions.events)
    }

    /// The agent's session id of session `key`, once open.
    pub fn session_id(&self, key: SessionKey) -> Option<String> {
        let slot = self.sessions.get(&key)?;
        slot.session_id.as_ref().map(|s| s.0.to_string())
    }

    /// How many sessions there are and what they want.
    pub fn attention_counts(&self) -> AttentionCounts {
        let router = self.sessions.router();
        AttentionCounts {
            sessions: self.sessions.keys().count(),
            working: router.count(Attention::Working),
            needs_you: router.count(Attention::NeedsYou) + router.count(Attention::Error),
        }
    }

    /// Ask every session's agent for its MCP servers' state, for the supervisor's rows
    /// (answers arrive as events; agents that do not report them are skipped).
    pub fn refresh_mcp(&self) {
        for (_, slot) in self.sessions.iter() {
            slot.driver.refresh_mcp(false, false);
        }
    }

    /// Every session's attention, title and question, in key order.
    pub fn session_states(&self) -> Vec<SessionState<'_>> {
        self.sessions
            .iter()
            .map(|(key, slot)| SessionState {
                key: *key,
                attention: self.sessions.attention(*key),
                title: slot.view.title(),
                question: slot.view.pending_question(),
            })
            .collect()
    }

    /// Every session, grouped by project (projects and sessions in the order opened).
    pub fn supervisor_rows(&self) -> Vec<SessionRow> {
        let mut rows: Vec<SessionRow> = self
            .sessions
            .iter()
            .map(|(key, slot)| SessionRow {
                key: *key,
                project: slot.project.clone(),
                host: crate::remote::Remote::of(&slot.project).map(|r| r.host),
                title: slot.view.title().to_string(),
                attention: self.sessions.attention(*key),
                runner: slot.driver.status(),
                pane: slot.view.status(),
                shown: self.agent_panes_of(*key).next().is_some(),
                question: slot.view.pending_question().map(str::to_string),
                session_id: slot.session_id.as_ref().map(|s| s.0.to_string()),
                avatar: self.avatar_badge(*key),
            })
            .collect();
        // Sessions are in key order, so a project's first row says when it was opened; this
        // machine's projects come first, then each host's, in the order they were opened.
        let mut projects: Vec<PathBuf> = Vec::new();
        let mut hosts: Vec<Option<String>> = vec![None];
        for row in &rows {
            if !projects.contains(&row.project) {
                projects.push(row.project.clone());
            }
            if !hosts.contains(&row.host) {
                hosts.push(row.host.clone());
            }
        }
        rows.sort_by_key(|r| {
            (
                hosts.iter().position(|h| *h == r.host),
                projects.iter().position(|p| *p == r.project),
                r.key,
            )
        });
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
        self.sessions.router_mut().restarted(key);
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
        self.sessions.router_mut().restarted(key);
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
                    self.sessions.attention(key),
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

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::workspace::layout::Axis;
    use crate::workspace::test_workspace;

    #[tokio::test]
    async fn a_session_is_in_the_router_exactly_while_it_is_open() {
        let (mut ws, _bus) = test_workspace(Path::new("/work/p"));
        let first = ws.focused_session().unwrap();
        ws.split(Axis::Horizontal);
        let second = ws.focused_session().unwrap();
        assert_eq!(ws.sessions.keys().count(), 2);
        assert_eq!(ws.sessions.router().count(Attention::Idle), 2);
        ws.sessions.router_mut().prompt_sent(second);
        assert_eq!(ws.sessions.attention(second), Attention::Working);
        // Closing its only pane closes the session: the router forgets it too.
        ws.close_focused();
        assert!(!ws.sessions.contains_key(&second));
        assert_eq!(ws.sessions.router().count(Attention::Working), 0);
        assert_eq!(ws.sessions.router().count(Attention::Idle), 1);
        assert_eq!(ws.sessions.keys().copied().collect::<Vec<_>>(), [first]);
        let slots = ws.sessions.take_all();
        assert_eq!(slots.len(), 1);
        assert_eq!(ws.sessions.router().count(Attention::Idle), 0);
    }
}
