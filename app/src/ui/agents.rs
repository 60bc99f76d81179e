//! The agent chooser: the key that opens an agent pane asks which agent when more than one
//! is configured (the workspace's own and every `[agents.NAME]`), the project's last choice
//! first and marked.

use crossterm::event::KeyEvent;
use march_panes::switcher::{Switcher, SwitcherEntry, SwitcherKey};
use march_panes::theme::Slot;

use crate::workspace::Workspace;
use crate::workspace::layout::Axis;

/// The open chooser: the agent behind each entry id, and where the new pane goes.
pub(super) struct AgentPicker {
    pub(super) view: Switcher,
    agents: Vec<Option<String>>,
    axis: Axis,
}

impl AgentPicker {
    /// The chooser for a new pane split along `axis`; `None` when there is nothing to choose
    /// (one agent only).
    pub(super) fn open(ws: &Workspace, axis: Axis) -> Option<Self> {
        let mut choices = ws.agent_choices();
        if choices.len() < 2 {
            return None;
        }
        let last = ws.last_agent_choice();
        // The last choice first, so enter takes it again.
        if let Some(at) = choices.iter().position(|(a, _)| *a == last) {
            let chosen = choices.remove(at);
            choices.insert(0, chosen);
        }
        let project = ws.focused_project();
        let entries = choices
            .iter()
            .enumerate()
            .map(|(i, (agent, name))| SwitcherEntry {
                id: i as u64,
                title: name.clone(),
                project: if agent.is_none() {
                    "the workspace's agent".to_string()
                } else {
                    "[agents] in config.toml".to_string()
                },
                glyph: ("◆", Slot::Info),
                state: if *agent == last { "last used" } else { "" }.to_string(),
                activity: None,
                preview: None,
                panes: Vec::new(),
                avatar: Some(march_panes::avatar::AvatarBadge {
                    avatar: ws.agent_avatar(name),
                    state: march_panes::attention::Attention::Idle,
                }),
            })
            .collect();
        let mut view = Switcher::new(entries);
        view.set_title(format!(
            "New agent pane on {}",
            project
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        ));
        view.set_footer(" type to filter · enter opens it · esc close");
        Some(AgentPicker {
            view,
            agents: choices.into_iter().map(|(a, _)| a).collect(),
            axis,
        })
    }

    /// Handles a key; true when the chooser should close.
    pub(super) fn key(&mut self, key: KeyEvent, ws: &mut Workspace) -> bool {
        let outcome = self.view.key(key);
        self.after(outcome, ws)
    }

    /// Inserts pasted text into the filter.
    pub(super) fn paste(&mut self, text: &str, ws: &mut Workspace) -> bool {
        let outcome = self.view.paste(text);
        self.after(outcome, ws)
    }

    fn after(&mut self, outcome: SwitcherKey, ws: &mut Workspace) -> bool {
        match outcome {
            SwitcherKey::Ignored | SwitcherKey::Changed => false,
            SwitcherKey::Closed => true,
            SwitcherKey::Chosen { id, .. } => {
                if let Some(agent) = usize::try_from(id).ok().and_then(|i| self.agents.get(i)) {
                    ws.split_with_agent(self.axis, agent.clone());
                }
                true
            }
        }
    }
}
