//! The workspace: tabs of pane layouts, the sessions the panes show, and what drives them.
//!
//! It routes: keys to the focused pane or to a workspace command, agent events to the
//! session they belong to (through the [`router::OutputRouter`]'s attention model), and it
//! renders what is visible. It never runs an agent itself (invariant 1): every agent is a
//! child process behind an [`agent::AgentDriver`].
//!
//! Panes and sessions are apart: a pane shows one session; a session lives on (its runner
//! and view kept current) while it is open, shown or not.

pub mod agent;
pub mod attach;
pub mod avatars;
pub mod changes;
mod control;
pub mod costs;
pub mod daemons;
pub mod diagnostics;
pub mod diffs;
pub mod editor;
mod export;
pub mod file_walk;
mod first_run;
pub mod jobs;
pub mod layout;
pub mod mcp;
pub mod pane;
pub mod persist;
pub mod project_files;
pub mod prompt_history;
mod remote_changes;
mod revert;
pub mod revert_undo;
pub mod reviews;
mod rewind;
pub mod router;
mod session_tree;
mod sessions;
pub mod setup;
mod shell_output;
pub mod shells;
mod slash;
pub mod status;
pub mod supervisor;
pub mod switching;
pub mod tabs;
pub mod terminals;
pub mod uncommitted;
pub mod work;
pub mod worktrees;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use march_core::paths::MarchPaths;
use march_panes::agent::AgentPane;
use march_panes::setup::SetupView;
use ratatui::layout::Rect;
use tokio::sync::mpsc::UnboundedSender;

use agent::{AgentDriver, AgentEvent, AgentSpec};
use layout::{Axis, Direction, Layout, PaneId};
use march_core::config::ShellConfig;
use march_panes::shell::ShellNotice;
use pane::Pane;
use reviews::Reviews;
use router::{Attention, Notify, SessionKey};
use shells::ShellSource;
use supervisor::Sessions;
pub use tabs::Tab;
pub use tabs::project_name;
use tabs::{PaneRemoved, Tabs};
use terminals::CommandTerminal;

/// A session: what is drawn and the connection behind it.
pub struct AgentSlot {
    /// The view.
    pub view: AgentPane,
    /// The agent.
    pub driver: AgentDriver,
    /// First-run setup, shown instead of the view until a model can be used.
    pub setup: Option<SetupView>,
    /// What `/resume ARG` asked for, while the session list is on its way.
    pub resume_query: Option<String>,
    /// The project directory the session runs in.
    pub project: PathBuf,
    /// The agent's id of the session, once known (kept while a restart is under way).
    pub session_id: Option<agent_client_protocol::v1::schema::SessionId>,
    /// When the agent last sent something (or the session started).
    pub last_activity: Option<std::time::SystemTime>,
    /// Its runner was stopped while it sat idle in the background; showing it restarts it.
    pub parked: bool,
    /// A prompt typed while the runner was stopped, sent once it is back.
    pub pending_prompt: Option<(String, Vec<std::sync::Arc<march_panes::picture::Picture>>)>,
    /// How the agent last ended, until the restart's reload says it is back.
    pub crash: Option<String>,
    /// Consecutive restarts, as the supervisor last reported.
    pub restarts: u32,
    /// The configured agent it runs, when not the workspace's own (`[agents.NAME]`).
    pub agent: Option<String>,
    /// How its last turn ended (the stop reason, or why it failed), once one has.
    pub last_turn: Option<supervisor::TurnEnd>,
}

/// What starting a session needs besides its project.
#[derive(Clone)]
pub struct AgentLauncher {
    /// The agent new sessions run.
    pub spec: AgentSpec,
    /// The agents of the config's `[agents]` by name, for a pane that names one.
    pub agents: std::collections::BTreeMap<String, AgentSpec>,
    /// The permission mode new sessions start in.
    pub mode: Option<&'static str>,
    /// How long a permission dialog holds its answer keys (`permission_guard_ms`).
    pub permission_hold: std::time::Duration,
    /// Where drivers send their events.
    pub events: UnboundedSender<(SessionKey, AgentEvent)>,
    /// March's files, for first-run setup (`None` in tests: no setup, no agents).
    pub paths: Option<MarchPaths>,
    /// Where shell panes send their notices.
    pub shell_events: UnboundedSender<(ShellSource, ShellNotice)>,
    /// Where slow work starts and reports.
    pub jobs: jobs::Jobs,
    /// Why March's runner cannot start yet (no usable model), as last found: at start and
    /// after each setup step. `None` once a model is usable.
    pub setup_needed: Option<String>,
    /// The providers a setup view lists before the probe of local servers answers, read
    /// with `setup_needed`.
    pub setup_providers: Vec<march_panes::setup::SetupProvider>,
    /// The `[shell]` table.
    pub shell: ShellConfig,
    /// Where agents' git worktrees are made (`[worktrees] dir`).
    pub worktrees: PathBuf,
    /// How other machines are reached (`[ssh]`).
    pub ssh: march_core::config::SshConfig,
    /// The projects on other machines `[remotes.NAME]` names, by name.
    pub remotes: Vec<(String, PathBuf)>,
}

/// A notification for the terminal: why, and the session's title.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notification {
    /// What happened.
    pub kind: Notify,
    /// The session's title.
    pub title: String,
}

/// What a workspace command asks the UI to do besides redrawing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UiRequest {
    /// Nothing more.
    None,
    /// Close the workspace.
    Quit,
    /// Detach the terminal whose key asked.
    Detach,
    /// Put this text on the clipboard (OSC 52).
    Copy(String),
}

/// Everything in the workspace.
pub struct Workspace {
    /// The tabs and which is active.
    tabs: Tabs,
    /// Every pane of every tab, by id.
    panes: BTreeMap<PaneId, Pane>,
    /// The shell panes the last frame drew.
    shells_on_screen: Vec<PaneId>,
    /// Which diffings review panes wait for, and what language servers reported.
    reviews: Reviews,
    /// Commands agents run in terminals March owns, oldest first.
    terminals: Vec<CommandTerminal>,
    /// Every open session, shown or not, and its attention.
    sessions: Sessions,
    next_id: u64,
    launcher: AgentLauncher,
    /// What `/help` shows: the slash commands and the main keys as the keymap binds them.
    help_text: String,
    /// Every file change sessions' agents reported.
    changes: changes::ChangeLog,
    /// The area panes were last laid out in (for focus by direction and mouse drags).
    pane_area: Rect,
    /// Whether the terminal window has the user's focus (from focus events).
    terminal_focused: bool,
    /// Notifications not yet given to the terminal.
    notifications: Vec<Notification>,
    /// A line for the status bar not yet shown (a language server's news).
    status_note: Option<String>,
    /// Saved sessions listed for the switcher, by project, not yet taken.
    listed: Vec<(PathBuf, Vec<agent_client_protocol::v1::schema::SessionInfo>)>,
    /// The session the focused pane showed before the last switch.
    last_session: Option<SessionKey>,
    /// Projects listed for the project picker, not yet taken.
    projects_listed: Option<jobs::ProjectsListed>,
    /// What each project's sessions cost, for the supervisor view.
    costs: costs::ProjectCosts,
    /// The daemons beside the workspace (browser, memory), for the supervisor view.
    daemons: daemons::Daemons,
    /// Agents' avatars, for the pane headers, the switcher and the supervisor view.
    avatars: avatars::Avatars,
    /// The last turns the history index found for the switcher: its query and the hits.
    found_turns: Vec<(String, Vec<march_core::history::SearchHit>)>,
    /// Projects' files listed for `@` mentions.
    file_lists: project_files::FileLists,
    /// The agent last chosen for a new pane, by project (saved with the workspace).
    agent_choices: BTreeMap<PathBuf, String>,
    /// Questions about worktrees waiting for the UI.
    worktrees: worktrees::WorktreePanes,
    /// The reverts diff panes can still undo.
    revert_undo: revert_undo::RevertUndo,
}

impl Workspace {
    /// A workspace with one tab per project (the current directory when `projects` is
    /// empty), each holding one agent pane.
    pub fn new(launcher: AgentLauncher, projects: Vec<PathBuf>) -> Self {
        let mut ws = Workspace::empty(launcher);
        for project in projects {
            ws.open_project(project);
        }
        ws.tabs.select(0);
        ws
    }

    /// A workspace with no tabs yet.
    fn empty(launcher: AgentLauncher) -> Self {
        Workspace {
            tabs: Tabs::default(),
            panes: BTreeMap::new(),
            shells_on_screen: Vec::new(),
            reviews: Reviews::default(),
            terminals: Vec::new(),
            sessions: Sessions::default(),
            next_id: 1,
            changes: changes::ChangeLog::new(
                launcher.paths.as_ref().map(|p| p.data_dir.join("changes")),
                launcher.jobs.clone(),
            ),
            launcher,
            help_text: String::new(),
            pane_area: Rect::default(),
            terminal_focused: true,
            notifications: Vec::new(),
            status_note: None,
            listed: Vec::new(),
            last_session: None,
            projects_listed: None,
            costs: costs::ProjectCosts::default(),
            daemons: daemons::Daemons::default(),
            avatars: avatars::Avatars::default(),
            file_lists: project_files::FileLists::default(),
            found_turns: Vec::new(),
            agent_choices: BTreeMap::new(),
            worktrees: worktrees::WorktreePanes::default(),
            revert_undo: revert_undo::RevertUndo::default(),
        }
    }

    /// A new tab on `project` with one agent pane, made active.
    pub fn open_project(&mut self, project: PathBuf) {
        let pane = self.new_pane(&project, None);
        self.tabs.open(Tab::on(project, Layout::new(pane)));
    }

    /// Shows the tab on `project`, or opens one there.
    pub fn open_or_show_project(&mut self, project: PathBuf) {
        match self.tabs.all().iter().position(|t| t.project == project) {
            Some(i) => {
                self.tabs.select(i);
            }
            None => self.open_project(project),
        }
    }

    fn next_id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// A pane showing a new session on `project` (or `resume` replayed).
    fn new_pane(
        &mut self,
        project: &Path,
        resume: Option<agent_client_protocol::v1::schema::SessionId>,
    ) -> PaneId {
        let key = self.spawn_session(project, resume, None);
        let pane = PaneId(self.next_id());
        self.panes.insert(pane, Pane::Agent(key));
        pane
    }

    /// How many panes there are, in all tabs.
    pub fn pane_count(&self) -> usize {
        self.panes.len()
    }

    /// The active tab.
    pub fn tab(&self) -> &Tab {
        self.tabs.active()
    }

    fn tab_mut(&mut self) -> &mut Tab {
        self.tabs.active_mut()
    }

    /// All tabs, and which is active.
    pub fn tabs(&self) -> (&[Tab], usize) {
        (self.tabs.all(), self.tabs.active_index())
    }

    /// The focused pane.
    pub fn focused(&self) -> PaneId {
        self.tab().layout.focused()
    }

    /// The session the focused pane shows.
    pub fn focused_session(&self) -> Option<SessionKey> {
        self.agent_session(self.focused())
    }

    /// The session agent pane `id` shows (`None` for other kinds of pane).
    pub fn agent_session(&self, id: PaneId) -> Option<SessionKey> {
        match self.panes.get(&id)? {
            Pane::Agent(key) => Some(*key),
            _ => None,
        }
    }

    /// The session of the focused pane.
    pub fn focused_slot(&mut self) -> Option<&mut AgentSlot> {
        let key = self.focused_session()?;
        self.sessions.get_mut(&key)
    }

    /// The session pane `id` shows.
    pub fn slot(&self, id: PaneId) -> Option<&AgentSlot> {
        self.sessions.get(&self.agent_session(id)?)
    }

    /// The attention of the most urgent session shown in tab `i`.
    pub fn tab_attention(&self, i: usize) -> Attention {
        let rank = |a: Attention| match a {
            Attention::NeedsYou => 4,
            Attention::Error => 3,
            Attention::Done => 2,
            Attention::Working => 1,
            Attention::Idle => 0,
        };
        self.tabs
            .all()
            .get(i)
            .into_iter()
            .flat_map(|t| t.layout.panes())
            .filter_map(|p| self.agent_session(p))
            .map(|key| self.sessions.attention(key))
            .max_by_key(|a| rank(*a))
            .unwrap_or(Attention::Idle)
    }

    /// When the seconds of a wait for the model shown in this tab next change (the frame
    /// counting them is due then).
    pub fn next_wait_tick(&self) -> Option<std::time::Instant> {
        let now = std::time::Instant::now();
        self.tab()
            .layout
            .panes()
            .into_iter()
            .filter_map(|p| self.slot(p))
            .flat_map(|slot| {
                let wait = slot.view.model_wait().map(|since| {
                    let shown = now.saturating_duration_since(since).as_secs();
                    since + std::time::Duration::from_secs(shown + 1)
                });
                // A permission dialog's keys arming changes how it looks.
                wait.into_iter().chain(slot.view.next_wake(now))
            })
            .min()
    }

    /// How many sessions are in `state`.
    pub fn attention_count(&self, state: Attention) -> usize {
        self.sessions.router().count(state)
    }

    /// Split the focused pane with a new agent pane on the same project.
    pub fn split(&mut self, axis: Axis) {
        let project = self.focused_project();
        let id = self.new_pane(&project, None);
        self.tab_mut().layout.split(axis, id);
    }

    /// The agents a new pane can run: the workspace's own (`None`) first, then every
    /// `[agents.NAME]` by name; with each the name shown.
    pub fn agent_choices(&self) -> Vec<(Option<String>, String)> {
        let own = self.launcher.spec.name.clone();
        let mut out = vec![(None, own.clone())];
        out.extend(
            self.launcher
                .agents
                .keys()
                .filter(|name| **name != own)
                .map(|name| (Some(name.clone()), name.clone())),
        );
        out
    }

    /// The agent last chosen for a new pane on the focused project (`None`: the
    /// workspace's own, or nothing chosen yet).
    pub fn last_agent_choice(&self) -> Option<String> {
        self.agent_choices.get(&self.focused_project()).cloned()
    }

    /// Splits the focused pane along `axis` for a new agent pane running `agent` (the
    /// workspace's own when `None`), and remembers the choice for the project.
    pub fn split_with_agent(&mut self, axis: Axis, agent: Option<String>) {
        let project = self.focused_project();
        match &agent {
            Some(name) => self.agent_choices.insert(project.clone(), name.clone()),
            None => self.agent_choices.remove(&project),
        };
        let key = self.spawn_session(&project, None, agent.as_deref());
        let id = PaneId(self.next_id());
        self.panes.insert(id, Pane::Agent(key));
        self.tab_mut().layout.split(axis, id);
    }

    /// Focuses `existing` when the active tab shows it; else (closing it where it was)
    /// splits the focused pane along `axis` for a new pane, which `make` fills.
    pub(super) fn focus_or_open(
        &mut self,
        existing: Option<PaneId>,
        axis: layout::Axis,
        make: impl FnOnce(&mut Workspace, PaneId),
    ) {
        match existing {
            Some(pane) if self.tab().layout.contains(pane) => {
                self.tab_mut().layout.focus(pane);
            }
            _ => {
                if let Some(pane) = existing {
                    self.close_pane(pane);
                }
                let pane = PaneId(self.next_id());
                make(self, pane);
                self.tab_mut().layout.split(axis, pane);
            }
        }
    }

    /// The project of the focused pane (its session's, its shell's, or the one it shows),
    /// else the tab's.
    pub fn focused_project(&self) -> PathBuf {
        self.pane_project(self.focused())
            .unwrap_or_else(|| self.tab().project.clone())
    }

    /// Sets what `/help` shows.
    pub fn set_help_text(&mut self, text: String) {
        self.help_text = text;
    }

    /// What the status bar calls tab `i`: its own name, or its project's with a number
    /// when other tabs not renamed show the same project name (`api`, `api 2`).
    pub fn tab_label(&self, i: usize) -> String {
        self.tabs.label(i)
    }

    /// Names the current tab `name`; an empty name gives it back its project's.
    pub fn rename_tab(&mut self, name: &str) {
        self.tabs.rename_active(name);
    }

    /// A new tab with one agent pane on the focused pane's project.
    pub fn new_tab(&mut self) {
        let project = self.focused_project();
        let id = self.new_pane(&project, None);
        self.tabs.open(Tab::on(project, Layout::new(id)));
    }

    /// Select tab `n` (from 0), if there is one.
    pub fn select_tab(&mut self, n: usize) -> bool {
        self.tabs.select(n)
    }

    /// The next or previous tab, wrapping.
    pub fn cycle_tab(&mut self, forward: bool) {
        self.tabs.cycle(forward);
    }

    /// Close the focused pane; the tab goes with its last pane, and March with its last tab.
    /// A session no other pane shows is stopped in the background; a shell is hung up.
    pub fn close_focused(&mut self) -> UiRequest {
        // A pane on a worktree asks what becomes of it first.
        self.close_pane_asking(self.focused())
    }

    /// Close pane `id`, in whichever tab it is.
    pub fn close_pane(&mut self, id: PaneId) -> UiRequest {
        match self.tabs.remove_pane(id, self.pane_area) {
            PaneRemoved::NotFound => return UiRequest::None,
            PaneRemoved::Last => return UiRequest::Quit,
            PaneRemoved::Removed | PaneRemoved::TabClosed => {}
        }
        self.release_pane(id);
        UiRequest::None
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

    /// Go to the session that needs the user most (oldest first): the pane showing it is
    /// focused (its tab made active), or, for a session in the background, the focused
    /// pane shows it. False when no session needs anything.
    pub fn focus_next_attention(&mut self) -> bool {
        let Some(key) = self.sessions.router().next_for_user(self.focused_session()) else {
            return false;
        };
        self.show_session(key);
        true
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

    /// The terminal window gained or lost the user's focus.
    pub fn set_terminal_focused(&mut self, focused: bool) {
        self.terminal_focused = focused;
    }

    /// Whether the user is looking at session `key` now: shown in the focused pane of the
    /// active tab of a focused terminal.
    fn is_seen(&self, key: SessionKey) -> bool {
        self.terminal_focused && self.focused_session() == Some(key)
    }

    /// Whether session `key` shows in a pane of the active tab (so its changes are drawn).
    fn is_visible(&self, key: SessionKey) -> bool {
        self.shows(|p| matches!(p, Pane::Agent(k) if *k == key))
    }

    /// Asks the local model servers of March's config (providers that need no key) which
    /// models they serve, for session `key`'s `/model` chooser: models pulled since the config
    /// was written are offered too. The answer comes back as a job.
    pub fn discover_models(&self, key: SessionKey) {
        let Some(paths) = self.launcher.paths.clone() else {
            return;
        };
        self.launcher.jobs.spawn(async move {
            let models = match march_core::model::ModelRegistry::load(&paths) {
                Ok(registry) => local_models(&registry).await,
                Err(e) => {
                    tracing::warn!("models not discovered: {e}");
                    Vec::new()
                }
            };
            jobs::JobDone::ModelsDiscovered {
                session: key,
                models,
            }
        });
    }

    /// Reads what the open sessions' projects cost, off the loop; the supervisor view shows
    /// it when it is back.
    pub fn refresh_costs(&mut self) {
        let mut projects: Vec<PathBuf> = self
            .supervisor_rows()
            .into_iter()
            .map(|row| row.project)
            .collect();
        projects.sort();
        projects.dedup();
        self.refresh_costs_of(projects);
    }

    fn refresh_costs_of(&mut self, projects: Vec<PathBuf>) {
        self.costs
            .refresh(&self.launcher.jobs, self.launcher.paths.as_ref(), projects);
    }

    /// What the workspace's projects cost, as last read.
    pub fn costs(&self) -> &costs::ProjectCosts {
        &self.costs
    }

    /// Asks the daemons how they are, off the loop (none is started for this).
    pub fn refresh_daemons(&mut self) {
        self.daemons
            .refresh(&self.launcher.jobs, self.launcher.paths.as_ref());
    }

    /// The theme avatars are drawn in; reads the agents' avatars with it.
    pub fn set_avatar_theme(&mut self, theme: &march_panes::theme::Theme) {
        self.avatars.set_theme(theme.clone());
        self.refresh_avatars();
    }

    /// Reads the avatars of the agents panes may run, off the loop (only changed files are
    /// made again).
    pub fn refresh_avatars(&mut self) {
        let mut agents: Vec<String> = self.launcher.agents.keys().cloned().collect();
        agents.push(self.launcher.spec.name.clone());
        agents.push(march_core::paths::OWN_AGENT.to_string());
        agents.sort();
        agents.dedup();
        let config_dir = self.launcher.paths.as_ref().map(|p| p.config_dir.clone());
        self.avatars
            .refresh(&self.launcher.jobs, config_dir.as_deref(), agents);
    }

    /// The avatar of `agent` (by its configured name), as last read.
    pub fn agent_avatar(&self, agent: &str) -> std::sync::Arc<march_panes::avatar::Avatar> {
        self.avatars.get(agent)
    }

    /// Session `key`'s avatar in its attention state.
    pub fn avatar_badge(&self, key: SessionKey) -> Option<march_panes::avatar::AvatarBadge> {
        let slot = self.sessions.get(&key)?;
        let agent = slot.agent.as_deref().unwrap_or(&self.launcher.spec.name);
        Some(march_panes::avatar::AvatarBadge {
            avatar: self.agent_avatar(agent),
            state: self.sessions.attention(key),
        })
    }

    /// The daemons, as last asked.
    pub fn daemons(&self) -> &daemons::Daemons {
        &self.daemons
    }

    /// Lists the projects the project picker offers, off the loop: those of saved
    /// workspaces under `data_dir`, and the directories beside `near`. They come back
    /// through [`Workspace::take_projects_listed`].
    pub fn list_projects(&self, data_dir: &Path, near: &Path) {
        let (data_dir, near) = (data_dir.to_path_buf(), near.to_path_buf());
        self.launcher.jobs.blocking(move || {
            jobs::JobDone::ProjectsListed(persist::list_projects(&data_dir, &near))
        });
    }

    /// The projects on other machines config.toml names (`[remotes.NAME]`), by name.
    pub fn remote_projects(&self) -> &[(String, PathBuf)] {
        &self.launcher.remotes
    }

    /// Projects listed since the last call, if any.
    pub fn take_projects_listed(&mut self) -> Option<jobs::ProjectsListed> {
        self.projects_listed.take()
    }

    /// Jobs started and not yet reported.
    pub fn jobs_running(&self) -> usize {
        self.launcher.jobs.running()
    }

    /// The status bar line raised since the last call, if any.
    pub fn take_status_note(&mut self) -> Option<String> {
        self.status_note.take()
    }

    /// Notifications raised since the last call.
    pub fn take_notifications(&mut self) -> Vec<Notification> {
        std::mem::take(&mut self.notifications)
    }

    /// Stop every agent and hang up every shell.
    pub async fn shutdown(&mut self) {
        self.hang_up_all_shells();
        self.hang_up_all_terminals();
        let slots = self.sessions.take_all();
        for slot in slots {
            slot.driver.shutdown().await;
        }
    }
}

#[cfg(test)]
mod test_support;
#[cfg(test)]
pub(crate) use test_support::*;

/// The models local servers (providers that need no key) serve, as `provider/id` and a label;
/// a server that does not answer in 3 s is left out.
async fn local_models(registry: &march_core::model::ModelRegistry) -> Vec<(String, String)> {
    use march_core::model::CredentialSource;
    let local: Vec<String> = registry
        .providers()
        .iter()
        .filter(|p| registry.credential_source(&p.name) == CredentialSource::NotNeeded)
        .map(|p| p.name.clone())
        .collect();
    let mut out = Vec::new();
    for provider in local {
        match registry
            .discover(&provider, std::time::Duration::from_secs(3))
            .await
        {
            Ok(models) => out.extend(models.into_iter().map(|m| {
                (
                    format!("{provider}/{}", m.id),
                    format!("{} ({provider})", m.name),
                )
            })),
            Err(e) => tracing::debug!(%provider, "no model list: {e}"),
        }
    }
    out
}
