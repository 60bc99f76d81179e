//! What the control CLI does to the workspace's sessions (`march send`, `new-pane`,
//! `capture`, `wait`, `answer`): the same paths the panes' keys take, reached by key.

use std::path::PathBuf;

use agent_client_protocol::v1::schema::PermissionOptionKind;

use super::Workspace;
use super::layout::{Axis, Layout, PaneId};
use super::pane::Pane;
use super::router::SessionKey;
use super::supervisor::TurnEnd;
use super::tabs::Tab;

impl Workspace {
    /// A prompt from outside the panes: sent now, or queued after the running turn as one
    /// typed then would be. Whether it was queued; `None` when there is no such session.
    pub fn prompt_session(&mut self, key: SessionKey, text: String) -> Option<bool> {
        let slot = self.sessions.get_mut(&key)?;
        if slot.view.status().busy {
            slot.view.queue(text);
            return Some(true);
        }
        self.send_prompt(key, text, Vec::new());
        Some(false)
    }

    /// Whether session `key` has a turn running or about to (a prompt waiting for its
    /// agent, or queued); `None` when there is no such session.
    pub fn turn_pending(&self, key: SessionKey) -> Option<bool> {
        let slot = self.sessions.get(&key)?;
        Some(slot.view.status().busy || slot.pending_prompt.is_some())
    }

    /// How session `key`'s last turn ended, once one has.
    pub fn last_turn(&self, key: SessionKey) -> Option<TurnEnd> {
        self.sessions.get(&key)?.last_turn.clone()
    }

    /// Opens an agent pane on `dir` running `agent` (the workspace's own when `None`):
    /// beside the focused pane of the tab on `dir`, else in a new tab; `prompt` is sent
    /// once its session is open.
    pub fn open_agent_pane(
        &mut self,
        dir: PathBuf,
        agent: Option<&str>,
        prompt: Option<String>,
    ) -> Result<SessionKey, String> {
        if let Some(name) = agent
            && !self.launcher.agents.contains_key(name)
            && name != self.launcher.spec.name
        {
            let known: Vec<&str> = self.launcher.agents.keys().map(String::as_str).collect();
            return Err(format!(
                "no agent `{name}` in config.toml's [agents] (configured: {})",
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            ));
        }
        if !dir.is_dir() {
            return Err(format!("{} is not a directory", dir.display()));
        }
        let agent = agent.filter(|n| *n != self.launcher.spec.name);
        let key = self.spawn_session(&dir, None, agent);
        if let Some(slot) = self.sessions.get_mut(&key) {
            slot.pending_prompt = prompt.map(|text| (text, Vec::new()));
        }
        let pane = PaneId(self.next_id());
        self.panes.insert(pane, Pane::Agent(key));
        match self.tabs.all().iter().position(|t| t.project == dir) {
            Some(i) => {
                self.tabs.select(i);
                self.tab_mut().layout.split(Axis::Horizontal, pane);
            }
            None => self.tabs.open(Tab::on(dir, Layout::new(pane))),
        }
        Ok(key)
    }

    /// Session `key`'s transcript as markdown, its last `last_turns` turns when given.
    pub fn capture(&self, key: SessionKey, last_turns: Option<usize>) -> Option<String> {
        Some(self.sessions.get(&key)?.view.capture(last_turns))
    }

    /// Answers session `key`'s open permission request: allowed once, or rejected. What it
    /// asked, or why nothing was answered.
    pub fn answer_permission(&mut self, key: SessionKey, allow: bool) -> Result<String, String> {
        let slot = self
            .sessions
            .get(&key)
            .ok_or_else(|| "no such session".to_string())?;
        let question = slot
            .view
            .pending_question()
            .map(str::to_string)
            .ok_or_else(|| "the session asks nothing now".to_string())?;
        let kind = if allow {
            PermissionOptionKind::AllowOnce
        } else {
            PermissionOptionKind::RejectOnce
        };
        self.answer_question(key, kind);
        Ok(question)
    }
}
