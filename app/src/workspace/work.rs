//! What closing part of the workspace would stop: the one answer behind the questions
//! `Ctrl-a x`, `Ctrl-a &` and `Ctrl-a Q` ask before they close anything.

use std::collections::BTreeSet;

use super::Workspace;
use super::layout::PaneId;
use super::pane::Pane;
use super::router::SessionKey;
use super::tabs::project_name;

/// The part of the workspace a close would remove.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkScope {
    /// Everything: every tab, and the sessions no pane shows.
    All,
    /// Tab `i` and its panes.
    Tab(usize),
    /// One pane.
    Pane(PaneId),
}

impl Workspace {
    /// What closing `scope` would stop, in words: turns that run (or wait for a permission)
    /// in sessions no pane outside it shows, and programs other than the shell in the
    /// foreground of its shell panes. Empty when closing loses nothing.
    pub fn running_work(&self, scope: WorkScope) -> Vec<String> {
        let inside: Option<Vec<PaneId>> = match scope {
            WorkScope::All => None,
            WorkScope::Tab(i) => Some(
                self.tabs
                    .all()
                    .get(i)
                    .map_or_else(Vec::new, |t| t.layout.panes()),
            ),
            WorkScope::Pane(id) => Some(vec![id]),
        };
        let in_scope = |pane: &PaneId| inside.as_ref().is_none_or(|p| p.contains(pane));
        let stopped: BTreeSet<SessionKey> = match &inside {
            None => self.sessions.keys().copied().collect(),
            Some(_) => {
                // A session a pane outside still shows or follows lives on.
                let kept: BTreeSet<SessionKey> = self
                    .panes
                    .iter()
                    .filter(|(id, _)| !in_scope(id))
                    .filter_map(|(_, p)| p.session())
                    .collect();
                self.panes
                    .iter()
                    .filter(|(id, _)| in_scope(id))
                    .filter_map(|(_, p)| p.session())
                    .filter(|k| !kept.contains(k))
                    .collect()
            }
        };
        let mut out = Vec::new();
        for key in stopped {
            let Some(slot) = self.sessions.get(&key) else {
                continue;
            };
            let status = slot.view.status();
            if status.busy || status.waiting_for_permission {
                let asking = if status.waiting_for_permission {
                    " (it asks for permission)"
                } else {
                    ""
                };
                out.push(format!("a turn in {}{asking}", slot.view.border_title()));
            }
        }
        for (id, pane) in &self.panes {
            if let Pane::Shell(slot) = pane
                && in_scope(id)
                && let Some(job) = slot.pane.foreground_job()
            {
                out.push(format!(
                    "{job} in a shell of {}",
                    project_name(&slot.project)
                ));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::workspace::agent::AgentEvent;
    use crate::workspace::test_workspace as workspace;

    #[tokio::test]
    async fn only_work_closing_would_stop_counts() {
        let (mut ws, _bus) = workspace(Path::new("/work/project"));
        let first = ws.focused();
        let key = ws.focused_session().unwrap();
        assert!(ws.running_work(WorkScope::Pane(first)).is_empty(), "idle");
        ws.focused_slot().unwrap().view.turn_started();
        let said = ws.running_work(WorkScope::Pane(first));
        assert_eq!(said, ["a turn in march · project"]);
        assert_eq!(ws.running_work(WorkScope::All), said);
        assert_eq!(ws.running_work(WorkScope::Tab(0)), said);
        // Another pane shows the same session: closing either alone stops nothing, closing
        // both (the tab) still would.
        ws.show_in_split(key);
        let second = ws.focused();
        assert_ne!(first, second);
        assert!(ws.running_work(WorkScope::Pane(first)).is_empty());
        assert!(ws.running_work(WorkScope::Pane(second)).is_empty());
        assert_eq!(ws.running_work(WorkScope::Tab(0)), said);
    }

    #[tokio::test]
    async fn a_waiting_permission_counts_and_is_named() {
        let (mut ws, _bus) = workspace(Path::new("/work/project"));
        let pane = ws.focused();
        let key = ws.focused_session().unwrap();
        let request = crate::workspace::permission_request();
        ws.agent_event(key, AgentEvent::Permission(request));
        let said = ws.running_work(WorkScope::Pane(pane));
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(said[0].ends_with("(it asks for permission)"), "{said:?}");
    }
}
