//! The workspace: tabs of pane layouts, the panes themselves and what drives them.
//!
//! It routes: keys to the focused pane or to a workspace command, agent events to the pane
//! they belong to, and it renders what is visible. It never runs an agent itself (invariant
//! 1): every agent is a child process behind an [`agent::AgentDriver`].

pub mod agent;
pub mod layout;
pub mod setup;
pub mod status;

use std::collections::BTreeMap;
use std::path::PathBuf;

use agent_client_protocol::v1::schema::{
    RequestPermissionOutcome, SessionConfigOptionCategory, SessionId,
};
use march_core::paths::MarchPaths;
use march_panes::agent::{AgentPane, PaneEvent, SessionChoice, TurnOutcome};
use march_panes::highlight::Highlighter;
use march_panes::setup::{SetupEvent, SetupView};
use march_panes::theme::Theme;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use tokio::sync::mpsc::UnboundedSender;

use agent::{AgentDriver, AgentEvent, AgentSpec, SessionOpen};
use layout::{Axis, Direction, Layout, PaneId};

/// One tab: a name and a layout.
pub struct Tab {
    /// Shown in the status bar.
    pub name: String,
    /// Its panes.
    pub layout: Layout,
}

/// An agent pane: what is drawn and the connection behind it.
pub struct AgentSlot {
    /// The view.
    pub view: AgentPane,
    /// The agent.
    pub driver: AgentDriver,
    /// First-run setup, shown instead of the view until a model can be used.
    pub setup: Option<SetupView>,
    /// What `/resume ARG` asked for, while the session list is on its way.
    pub resume_query: Option<String>,
}

/// What starting a new agent pane needs.
#[derive(Clone)]
pub struct AgentLauncher {
    /// The agent new panes run.
    pub spec: AgentSpec,
    /// The project directory.
    pub cwd: PathBuf,
    /// The permission mode new sessions start in.
    pub mode: Option<&'static str>,
    /// Where drivers send their events.
    pub events: UnboundedSender<(PaneId, AgentEvent)>,
    /// March's files, for first-run setup (`None` in tests: no setup, no agents).
    pub paths: Option<MarchPaths>,
}

/// Everything in the workspace.
pub struct Workspace {
    tabs: Vec<Tab>,
    active: usize,
    panes: BTreeMap<PaneId, AgentSlot>,
    next_id: u64,
    launcher: AgentLauncher,
    /// The area panes were last laid out in (for focus by direction and mouse drags).
    pane_area: Rect,
}

/// What a workspace command asks the Shell to do besides redrawing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShellRequest {
    /// Nothing more.
    None,
    /// Leave March.
    Quit,
    /// Put this text on the clipboard (OSC 52).
    Copy(String),
}

impl Workspace {
    /// A workspace with one tab holding one agent pane.
    pub fn new(launcher: AgentLauncher) -> Self {
        let mut ws = Workspace {
            tabs: Vec::new(),
            active: 0,
            panes: BTreeMap::new(),
            next_id: 1,
            launcher,
            pane_area: Rect::default(),
        };
        let first = ws.spawn_agent(None);
        ws.tabs.push(Tab {
            name: "1".to_string(),
            layout: Layout::new(first),
        });
        ws
    }

    /// A new agent pane: a new session, or `resume` replayed into it.
    fn spawn_agent(&mut self, resume: Option<SessionId>) -> PaneId {
        let id = PaneId(self.next_id);
        self.next_id += 1;
        let l = &self.launcher;
        let view = AgentPane::new(format!("{} · {}", l.spec.name, project_name(&l.cwd)));
        let Some(paths) = &l.paths else {
            let driver = AgentDriver::detached(id, l.events.clone());
            self.panes.insert(
                id,
                AgentSlot {
                    view,
                    driver,
                    setup: None,
                    resume_query: None,
                },
            );
            return id;
        };
        let (driver, setup) = match setup::reason(paths) {
            // March's runner has no model to use: set one up first.
            Some(reason) if l.spec.name == "march" => {
                let mut view = SetupView::new(reason, setup::providers(paths));
                view.set_probing(true);
                let driver = AgentDriver::detached(id, l.events.clone());
                self.probe(id);
                (driver, Some(view))
            }
            _ => (
                AgentDriver::start(
                    id,
                    l.spec.clone(),
                    l.cwd.clone(),
                    match resume {
                        Some(session) => SessionOpen::Load(session),
                        None => SessionOpen::New(l.mode),
                    },
                    l.events.clone(),
                ),
                None,
            ),
        };
        self.panes.insert(
            id,
            AgentSlot {
                view,
                driver,
                setup,
                resume_query: None,
            },
        );
        id
    }

    /// Look for local servers in the background for pane `id`'s setup.
    fn probe(&self, id: PaneId) {
        let Some(paths) = self.launcher.paths.clone() else {
            return;
        };
        let events = self.launcher.events.clone();
        tokio::spawn(async move {
            let providers = setup::probe(paths).await;
            let _ = events.send((id, AgentEvent::SetupProviders(providers)));
        });
    }

    /// Leave setup in pane `id` when a model is usable now: its agent starts.
    fn retry_setup(&mut self, id: PaneId) {
        let Some(paths) = self.launcher.paths.clone() else {
            return;
        };
        let reason = setup::reason(&paths);
        let l = &self.launcher;
        let Some(slot) = self.panes.get_mut(&id) else {
            return;
        };
        match reason {
            None => {
                slot.setup = None;
                slot.driver = AgentDriver::start(
                    id,
                    l.spec.clone(),
                    l.cwd.clone(),
                    SessionOpen::New(l.mode),
                    l.events.clone(),
                );
                slot.view.notice("Setup done: starting the agent.");
            }
            Some(reason) => {
                if let Some(view) = slot.setup.as_mut() {
                    view.set_message(reason, true);
                    view.set_providers(setup::providers(&paths));
                    view.set_probing(true);
                }
                self.probe(id);
            }
        }
    }

    /// Show `result` in pane `id`'s setup; on success see whether the agent can start.
    fn setup_done(&mut self, id: PaneId, result: Result<String, String>) {
        let ok = result.is_ok();
        if let Some(view) = self.panes.get_mut(&id).and_then(|s| s.setup.as_mut()) {
            match result {
                Ok(message) => view.set_message(message, false),
                Err(e) => view.set_message(e, true),
            }
        }
        if ok {
            self.retry_setup(id);
        }
    }

    /// What the setup view in pane `id` asked for.
    pub fn setup_event(&mut self, id: PaneId, event: SetupEvent) {
        let Some(paths) = self.launcher.paths.clone() else {
            return;
        };
        match event {
            SetupEvent::None | SetupEvent::Redraw => {}
            SetupEvent::Retry => self.retry_setup(id),
            SetupEvent::SaveKey { provider, key } => {
                let result = setup::save_key(&paths, &provider, &key);
                self.setup_done(id, result);
            }
            SetupEvent::UseLocal { provider, model } => {
                let result = setup::set_default_model(&paths, &format!("{provider}/{model}"));
                self.setup_done(id, result);
            }
            SetupEvent::SaveBaseUrl { url, api_key } => {
                match setup::add_custom_provider(&paths, &url, api_key.as_deref()) {
                    Ok(provider) => {
                        // Which model to use is the server's to say.
                        let events = self.launcher.events.clone();
                        tokio::spawn(async move {
                            let result = setup::models_of(paths, provider.clone()).await;
                            let _ = events.send((id, AgentEvent::SetupModels { provider, result }));
                        });
                    }
                    Err(e) => self.setup_done(id, Err(e)),
                }
            }
        }
    }

    /// The active tab.
    pub fn tab(&self) -> &Tab {
        &self.tabs[self.active.min(self.tabs.len() - 1)]
    }

    fn tab_mut(&mut self) -> &mut Tab {
        let i = self.active.min(self.tabs.len() - 1);
        &mut self.tabs[i]
    }

    /// All tabs, and which is active.
    pub fn tabs(&self) -> (&[Tab], usize) {
        (&self.tabs, self.active)
    }

    /// The focused pane.
    pub fn focused(&self) -> PaneId {
        self.tab().layout.focused()
    }

    /// The focused agent pane.
    pub fn focused_slot(&mut self) -> Option<&mut AgentSlot> {
        let id = self.focused();
        self.panes.get_mut(&id)
    }

    /// A pane by id.
    pub fn slot(&self, id: PaneId) -> Option<&AgentSlot> {
        self.panes.get(&id)
    }

    /// Every pane.
    pub fn slots(&self) -> impl Iterator<Item = (&PaneId, &AgentSlot)> {
        self.panes.iter()
    }

    /// Split the focused pane with a new agent pane.
    pub fn split(&mut self, axis: Axis) {
        let id = self.spawn_agent(None);
        self.tab_mut().layout.split(axis, id);
    }

    /// A new tab with one agent pane.
    pub fn new_tab(&mut self) {
        let id = self.spawn_agent(None);
        self.tabs.push(Tab {
            name: (self.tabs.len() + 1).to_string(),
            layout: Layout::new(id),
        });
        self.active = self.tabs.len() - 1;
    }

    /// Select tab `n` (from 0), if there is one.
    pub fn select_tab(&mut self, n: usize) -> bool {
        if n < self.tabs.len() {
            self.active = n;
            true
        } else {
            false
        }
    }

    /// The next or previous tab, wrapping.
    pub fn cycle_tab(&mut self, forward: bool) {
        let n = self.tabs.len();
        self.active = if forward {
            (self.active + 1) % n
        } else {
            (self.active + n - 1) % n
        };
    }

    /// Close the focused pane; the tab goes with its last pane, and March with its last tab.
    /// The pane's agent is stopped in the background.
    pub fn close_focused(&mut self) -> ShellRequest {
        let id = self.focused();
        let area = self.pane_area;
        let removed_from_layout = self.tab_mut().layout.remove(id, area);
        if !removed_from_layout {
            // The tab's last pane: the tab goes.
            if self.tabs.len() == 1 {
                return ShellRequest::Quit;
            }
            self.tabs.remove(self.active);
            self.active = self.active.min(self.tabs.len() - 1);
        }
        if let Some(slot) = self.panes.remove(&id) {
            tokio::spawn(slot.driver.shutdown());
        }
        ShellRequest::None
    }

    /// Layout commands on the active tab.
    pub fn focus_direction(&mut self, dir: Direction) {
        let area = self.pane_area;
        self.tab_mut().layout.focus_direction(dir, area);
    }

    /// Focus the `n`th pane (from 0) of the active tab in reading order.
    pub fn focus_number(&mut self, n: usize) {
        if let Some(id) = self.tab().layout.panes().get(n).copied() {
            self.tab_mut().layout.focus(id);
        }
    }

    /// The layout of the active tab, to change.
    pub fn layout_mut(&mut self) -> &mut Layout {
        &mut self.tab_mut().layout
    }

    /// The pane under a screen position, and its rectangle.
    pub fn pane_at(&self, x: u16, y: u16) -> Option<(PaneId, Rect)> {
        self.tab()
            .layout
            .rects(self.pane_area)
            .into_iter()
            .find(|(_, r)| r.contains(ratatui::layout::Position::new(x, y)))
    }

    /// Where panes are laid out.
    pub fn pane_area(&self) -> Rect {
        self.pane_area
    }

    /// Route an agent event to its pane. Returns whether anything visible changed.
    pub fn agent_event(&mut self, pane: PaneId, event: AgentEvent) -> bool {
        let Some(slot) = self.panes.get_mut(&pane) else {
            return false;
        };
        let view = &mut slot.view;
        match event {
            AgentEvent::Ready {
                agent,
                session,
                options,
            } => {
                tracing::info!(pane = pane.0, %agent, session = %session.0, "agent ready");
                view.set_title(format!("{agent} · {}", project_name(&self.launcher.cwd)));
                view.set_config_options(&options);
            }
            AgentEvent::Failed(e) => view.set_error(e),
            AgentEvent::Update(n) => return view.apply(&n.update),
            AgentEvent::Permission(request) => {
                view.show_permission(request);
            }
            AgentEvent::TurnEnded(result) => {
                // Requests the agent left open die with the turn.
                view.clear_permissions();
                view.turn_ended(match result {
                    Ok(stop) => TurnOutcome::from(stop),
                    Err(e) => TurnOutcome::Error(e),
                });
            }
            AgentEvent::Options(Ok(options)) => view.set_config_options(&options),
            AgentEvent::Options(Err(e)) => view.set_error(format!("option not changed: {e}")),
            AgentEvent::Exited(text) => view.set_error(text),
            AgentEvent::Sessions(Err(e)) => {
                slot.resume_query = None;
                view.set_error(format!("cannot list sessions: {e}"));
            }
            AgentEvent::Sessions(Ok(sessions)) => {
                let query = slot.resume_query.take();
                let current = slot.driver.session();
                let earlier: Vec<SessionChoice> = sessions
                    .into_iter()
                    .map(|s| SessionChoice {
                        id: s.session_id,
                        title: s.title,
                        updated_at: s.updated_at,
                    })
                    .collect();
                match query {
                    Some(query) => match resume_match(&earlier, &query) {
                        Ok(id) => {
                            if current.as_ref() != Some(&id) {
                                self.replace_pane(pane, Some(id));
                            }
                        }
                        Err(e) => view.set_error(e),
                    },
                    None => {
                        if !view.open_session_picker(&earlier, current.as_ref()) {
                            view.notice("No sessions in this project yet.");
                        }
                    }
                }
            }
            AgentEvent::SetupProviders(providers) => {
                if let Some(setup) = slot.setup.as_mut() {
                    setup.set_providers(providers);
                    setup.set_probing(false);
                }
            }
            AgentEvent::SetupModels { provider, result } => {
                let Some(paths) = self.launcher.paths.clone() else {
                    return false;
                };
                let chosen = match result {
                    Ok(models) => match models.first() {
                        Some(model) => {
                            setup::set_default_model(&paths, &format!("{provider}/{model}"))
                        }
                        None => Err(format!("the server of {provider} lists no models")),
                    },
                    Err(e) => Err(format!("cannot list the models of {provider}: {e}")),
                };
                self.setup_done(pane, chosen);
            }
        }
        true
    }

    /// Hand a pane's output to its driver. Returns a request for the Shell.
    pub fn pane_event(&mut self, pane: PaneId, event: PaneEvent) -> ShellRequest {
        let Some(slot) = self.panes.get_mut(&pane) else {
            return ShellRequest::None;
        };
        match event {
            PaneEvent::None | PaneEvent::Redraw => {}
            PaneEvent::Submit(text) => {
                if slot.driver.prompt(text.clone()) {
                    slot.view.submit_local(&text);
                    slot.view.turn_started();
                } else {
                    slot.view
                        .set_error("the agent is not ready yet".to_string());
                }
            }
            PaneEvent::CancelTurn => {
                slot.view.clear_permissions();
                slot.driver.cancel();
            }
            PaneEvent::Permission {
                tool_call_id,
                outcome,
                ..
            } => {
                let option = match outcome {
                    RequestPermissionOutcome::Selected(s) => Some(s.option_id),
                    _ => None,
                };
                slot.driver.answer_permission(&tool_call_id.0, option);
            }
            PaneEvent::SetConfigOption { config_id, value } => {
                slot.driver.set_option(&config_id.0, &value.0);
            }
            PaneEvent::Slash { name, args } => return self.slash(pane, &name, &args),
            PaneEvent::ResumeSession(session) => {
                if slot.driver.session().as_ref() != Some(&session) {
                    self.replace_pane(pane, Some(session));
                }
            }
        }
        ShellRequest::None
    }

    /// A new agent pane (a new session, or `resume` replayed) takes `old`'s place; `old`'s
    /// agent is stopped.
    fn replace_pane(&mut self, old: PaneId, resume: Option<SessionId>) {
        let id = self.spawn_agent(resume);
        let area = self.pane_area;
        let Some(tab) = self.tabs.iter_mut().find(|t| t.layout.contains(old)) else {
            return;
        };
        let layout = &mut tab.layout;
        let focused = layout.focused() == old;
        layout.focus(old);
        layout.split(Axis::Horizontal, id);
        layout.remove(old, area);
        if focused {
            layout.focus(id);
        }
        if let Some(old) = self.panes.remove(&old) {
            tokio::spawn(old.driver.shutdown());
        }
    }

    /// A slash command typed in a pane.
    fn slash(&mut self, pane: PaneId, name: &str, args: &str) -> ShellRequest {
        let Some(slot) = self.panes.get_mut(&pane) else {
            return ShellRequest::None;
        };
        match name {
            // Typed in the focused pane, which is the one it closes.
            "exit" | "quit" => {
                if self.focused() == pane {
                    return self.close_focused();
                }
            }
            "model" if args.trim().is_empty() => {
                if !slot
                    .view
                    .open_config_picker(&SessionConfigOptionCategory::Model)
                {
                    slot.view.notice("The agent offers no model choice.");
                }
            }
            "model" => {
                slot.driver.set_option("model", args.trim());
            }
            "new" => self.replace_pane(pane, None),
            "resume" => {
                let query = args.trim();
                if !query.is_empty() {
                    slot.resume_query = Some(query.to_string());
                }
                if !slot.driver.list_sessions(self.launcher.cwd.clone()) {
                    slot.view
                        .set_error("the agent is not ready yet".to_string());
                }
            }
            "help" => slot.view.notice(
                "Commands: /new /resume [id or title] /model [provider/id] /compact [focus] /exit. \
                 Keys: press the prefix (Ctrl-a) then ? for the key list."
                    .to_string(),
            ),
            // The agent's own commands (such as /compact) are prompts it interprets.
            other => {
                let text = if args.is_empty() {
                    format!("/{other}")
                } else {
                    format!("/{other} {args}")
                };
                if slot.driver.prompt(text.clone()) {
                    slot.view.submit_local(&text);
                    slot.view.turn_started();
                }
            }
        }
        ShellRequest::None
    }

    /// Draw the active tab's panes into `area` of `buf`.
    pub fn render(
        &mut self,
        area: Rect,
        buf: &mut Buffer,
        theme: &Theme,
        highlighter: &Highlighter,
    ) {
        self.pane_area = area;
        let focused = self.focused();
        let rects = self.tab().layout.rects(area);
        for (id, rect) in rects {
            if let Some(slot) = self.panes.get_mut(&id) {
                match slot.setup.as_mut() {
                    Some(setup) => setup.render(rect, buf, theme, id == focused),
                    None => slot
                        .view
                        .render(rect, buf, theme, highlighter, id == focused),
                }
            }
        }
    }

    /// Stop every agent.
    pub async fn shutdown(&mut self) {
        let slots: Vec<AgentSlot> = std::mem::take(&mut self.panes).into_values().collect();
        for slot in slots {
            slot.driver.shutdown().await;
        }
    }
}

/// The one session `/resume QUERY` means: an id, an id prefix, or words of the title
/// (case-insensitive).
fn resume_match(sessions: &[SessionChoice], query: &str) -> Result<SessionId, String> {
    if let Some(s) = sessions.iter().find(|s| *s.id.0 == *query) {
        return Ok(s.id.clone());
    }
    let lower = query.to_lowercase();
    let found: Vec<&SessionChoice> = sessions
        .iter()
        .filter(|s| {
            s.id.0.starts_with(query)
                || s.title
                    .as_deref()
                    .is_some_and(|t| t.to_lowercase().contains(&lower))
        })
        .collect();
    match found.as_slice() {
        [one] => Ok(one.id.clone()),
        [] => Err(format!("no session of this project matches {query:?}")),
        many => Err(format!(
            "{} sessions match {query:?}; /resume alone lists them",
            many.len()
        )),
    }
}

/// The last component of the project path, for titles.
fn project_name(cwd: &std::path::Path) -> String {
    cwd.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| cwd.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn choice(id: &str, title: Option<&str>) -> SessionChoice {
        SessionChoice {
            id: SessionId::new(id),
            title: title.map(str::to_string),
            updated_at: None,
        }
    }

    #[test]
    fn resume_matches_an_id_a_prefix_or_title_words() {
        let sessions = [
            choice("abc123", Some("Explain the parser")),
            choice("abd456", Some("Fix the parser tests")),
            choice("abc", None),
        ];
        let found = |q: &str| resume_match(&sessions, q).map(|id| id.0.to_string());
        assert_eq!(
            found("abc").unwrap(),
            "abc",
            "an exact id wins over a prefix"
        );
        assert_eq!(found("abd").unwrap(), "abd456");
        assert_eq!(found("EXPLAIN").unwrap(), "abc123");
        assert!(found("parser").unwrap_err().contains("2 sessions match"));
        assert!(found("nothing").unwrap_err().contains("no session"));
    }
}
