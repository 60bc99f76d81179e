//! The panes of the workspace: every kind behind one type, [`Pane`], held in one map by pane
//! id (the layouts hold only the ids). What a pane does with a key, a paste, a scroll, the
//! wheel or a click, how it draws, where its cursor is, what it saves and what closing it
//! releases is each decided here, in one `match` over the kinds: a new kind is a variant
//! and an arm in each.

use std::path::PathBuf;

use crossterm::event::{KeyEvent, KeyModifiers};
use march_panes::diagnostics::DiagnosticsView;
use march_panes::diff::DiffView;
use march_panes::highlight::Highlighter;
use march_panes::scroll::{Scroll, WHEEL_LINES};
use march_panes::shell::{AgentShellView, ShellKey, ShellPane};
use march_panes::terminal::MouseReport;
use march_panes::theme::Theme;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use super::layout::PaneId;
use super::persist::SavedPane;
use super::router::SessionKey;
use super::shells::ShellSlot;
use super::{UiRequest, Workspace, project_name};

#[cfg(test)]
mod tests;

/// A pane: what it shows, and the state of its view.
pub enum Pane {
    /// An agent pane: the session it shows (the view lives with the session, which may be
    /// shown in several panes or none).
    Agent(SessionKey),
    /// A shell pane: a program on a PTY of its own.
    Shell(Box<ShellSlot>),
    /// The commands a session's agent runs, live.
    Commands {
        /// Whose commands.
        session: SessionKey,
        /// Which command it shows.
        view: AgentShellView,
    },
    /// The files a session changed, as diffs.
    Diff {
        /// Whose changes.
        session: SessionKey,
        /// The diffs.
        view: DiffView,
    },
    /// A project's uncommitted changes (in a March worktree: its changes since its base
    /// branch), as diffs.
    Uncommitted {
        /// The project.
        project: PathBuf,
        /// The diffs.
        view: DiffView,
    },
    /// What a project's language servers report.
    Diagnostics {
        /// The project.
        project: PathBuf,
        /// The list.
        view: DiagnosticsView,
    },
}

/// The kind of a pane, as the key bindings and the UI tell them apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PaneKind {
    /// An agent pane with its prompt.
    Agent,
    /// An agent pane in first-run setup (no prompt).
    Setup,
    /// A shell pane.
    Shell,
    /// The commands of a session.
    Commands,
    /// A session's diffs.
    Diff,
    /// A project's uncommitted changes.
    Uncommitted,
    /// Diagnostics.
    Diagnostics,
}

/// What input given to a pane did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PaneInput {
    /// Taken (or ignored); the pane may need drawing.
    Done,
    /// It went to the program of a shell or command: nothing to draw until it answers.
    ToProgram,
    /// Taken, and the UI has this to do.
    Request(UiRequest),
    /// Not taken, for this reason (shown to the user).
    Refused(String),
}

impl Pane {
    /// The session the pane shows or follows.
    pub fn session(&self) -> Option<SessionKey> {
        match self {
            Pane::Agent(session) | Pane::Commands { session, .. } | Pane::Diff { session, .. } => {
                Some(*session)
            }
            Pane::Shell(_) | Pane::Uncommitted { .. } | Pane::Diagnostics { .. } => None,
        }
    }

    /// The diff view of a diff or uncommitted-changes pane.
    pub fn diff_view(&mut self) -> Option<&mut DiffView> {
        match self {
            Pane::Diff { view, .. } | Pane::Uncommitted { view, .. } => Some(view),
            _ => None,
        }
    }
}

impl Workspace {
    /// Pane `id`, if there is one.
    #[cfg(test)]
    pub fn pane(&self, id: PaneId) -> Option<&Pane> {
        self.panes.get(&id)
    }

    /// What kind of pane `id` is.
    pub fn pane_kind(&self, id: PaneId) -> Option<PaneKind> {
        Some(match self.panes.get(&id)? {
            Pane::Agent(key) => match self.sessions.get(key) {
                Some(slot) if slot.setup.is_some() => PaneKind::Setup,
                _ => PaneKind::Agent,
            },
            Pane::Shell(_) => PaneKind::Shell,
            Pane::Commands { .. } => PaneKind::Commands,
            Pane::Diff { .. } => PaneKind::Diff,
            Pane::Uncommitted { .. } => PaneKind::Uncommitted,
            Pane::Diagnostics { .. } => PaneKind::Diagnostics,
        })
    }

    /// The project pane `id` belongs to: its session's, its shell's, or the one it shows.
    pub fn pane_project(&self, id: PaneId) -> Option<PathBuf> {
        match self.panes.get(&id)? {
            Pane::Shell(slot) => Some(slot.project.clone()),
            Pane::Uncommitted { project, .. } | Pane::Diagnostics { project, .. } => {
                Some(project.clone())
            }
            pane => {
                let key = pane.session()?;
                self.sessions.get(&key).map(|s| s.project.clone())
            }
        }
    }

    /// The border title of pane `id`.
    pub fn pane_title(&self, id: PaneId) -> String {
        let session_title =
            |key: &SessionKey| self.sessions.get(key).map(|s| s.view.border_title());
        match self.panes.get(&id) {
            None => String::new(),
            Some(Pane::Agent(key)) => session_title(key).unwrap_or_default(),
            Some(Pane::Shell(slot)) => slot.pane.border_title(&project_name(&slot.project)),
            Some(Pane::Commands { session, .. }) => match session_title(session) {
                Some(title) => format!("commands · {title}"),
                None => "commands · the session has ended".to_string(),
            },
            Some(Pane::Diff { session, .. }) => format!(
                "changes · {}",
                self.sessions
                    .get(session)
                    .map(|s| project_name(&s.project))
                    .unwrap_or_default()
            ),
            Some(Pane::Uncommitted { project, .. }) => {
                format!("uncommitted · {}", project_name(project))
            }
            Some(Pane::Diagnostics { project, .. }) => {
                format!("diagnostics · {}", project_name(project))
            }
        }
    }

    /// The program pane `id` types into: its shell, or the command its commands pane shows.
    pub fn pane_program(&mut self, id: PaneId) -> Option<&mut ShellPane> {
        match self.panes.get(&id)? {
            Pane::Shell(_) => self.shell_mut(id),
            Pane::Commands { .. } => self.agent_shell_command(id),
            _ => None,
        }
    }

    /// A key no binding took, for pane `id`.
    pub fn pane_key(&mut self, id: PaneId, key: KeyEvent) -> PaneInput {
        match self.panes.get_mut(&id) {
            None
            | Some(Pane::Diff { .. } | Pane::Uncommitted { .. } | Pane::Diagnostics { .. }) => {
                // These take their own bound keys only.
                PaneInput::Done
            }
            Some(Pane::Shell(slot)) => {
                let pane = &mut slot.pane;
                if pane.exited().is_some() && !pane.in_copy_mode() {
                    // A kept pane whose shell ended: Enter starts it again.
                    if key.code == crossterm::event::KeyCode::Enter
                        && let Err(e) = pane.restart()
                    {
                        return PaneInput::Refused(e.to_string());
                    }
                    return PaneInput::Done;
                }
                shell_key(pane.key(key))
            }
            Some(Pane::Commands { .. }) => {
                let Some(pane) = self.agent_shell_command(id) else {
                    return PaneInput::Refused("no command here yet to type into".to_string());
                };
                match pane.key(key) {
                    ShellKey::Handled if pane.exited().is_some() => {
                        PaneInput::Refused("that command has ended".to_string())
                    }
                    other => shell_key(other),
                }
            }
            Some(Pane::Agent(session)) => {
                let session = *session;
                let Some(slot) = self.sessions.get_mut(&session) else {
                    return PaneInput::Done;
                };
                if let Some(setup) = slot.setup.as_mut() {
                    let event = setup.handle_key(key);
                    self.setup_event(id, event);
                    return PaneInput::Done;
                }
                let event = slot.view.handle_key(key);
                request(self.pane_event(id, event))
            }
        }
    }

    /// Text pasted into pane `id`.
    pub fn pane_paste(&mut self, id: PaneId, text: &str) -> PaneInput {
        match self.panes.get_mut(&id) {
            None => PaneInput::Done,
            Some(Pane::Diff { .. } | Pane::Uncommitted { .. } | Pane::Diagnostics { .. }) => {
                PaneInput::Refused("nothing to paste into in this pane".to_string())
            }
            Some(Pane::Shell(slot)) => {
                slot.pane.paste(text);
                PaneInput::ToProgram
            }
            Some(Pane::Commands { .. }) => match self.agent_shell_command(id) {
                Some(pane) => {
                    pane.paste(text);
                    PaneInput::ToProgram
                }
                None => PaneInput::Refused("no command here yet to paste into".to_string()),
            },
            Some(Pane::Agent(session)) => {
                let session = *session;
                let Some(slot) = self.sessions.get_mut(&session) else {
                    return PaneInput::Done;
                };
                if let Some(setup) = slot.setup.as_mut() {
                    let event = setup.paste(text);
                    self.setup_event(id, event);
                    return PaneInput::Done;
                }
                let event = slot.view.paste(text);
                request(self.pane_event(id, event))
            }
        }
    }

    /// Scrolls pane `id`: a transcript, a shell's history, a command's output, a diff, or
    /// the diagnostics selection.
    pub fn pane_scroll(&mut self, id: PaneId, scroll: Scroll) {
        match self.panes.get_mut(&id) {
            None => {}
            Some(Pane::Shell(slot)) => slot.pane.scroll(scroll),
            Some(Pane::Diff { view, .. } | Pane::Uncommitted { view, .. }) => view.scroll(scroll),
            Some(Pane::Diagnostics { view, .. }) => view.scroll(scroll),
            Some(Pane::Commands { .. }) => {
                if let Some(pane) = self.agent_shell_command(id) {
                    pane.scroll(scroll);
                }
            }
            Some(Pane::Agent(session)) => {
                let session = *session;
                if let Some(slot) = self.sessions.get_mut(&session)
                    && slot.setup.is_none()
                {
                    // Scrolling asks the agent nothing.
                    let _redraw = slot.view.scroll(scroll);
                }
            }
        }
    }

    /// The wheel turned over pane `id` at screen position `x`, `y`: a program that wants
    /// the mouse gets it; every other pane scrolls.
    pub fn pane_wheel(&mut self, id: PaneId, up: bool, x: u16, y: u16, m: KeyModifiers) {
        match self.pane_program(id) {
            Some(program) => program.wheel(if up { -WHEEL_LINES } else { WHEEL_LINES }, x, y, m),
            None => self.pane_scroll(id, Scroll::wheel(up)),
        }
    }

    /// A mouse button went down, moved or came up over pane `id` at `x`, `y` (not on a
    /// border; `clicks` counts a double or triple click): a program that wants the mouse
    /// gets it; in a transcript the left button selects and copies (a plain click on an
    /// edit opens its diff); a click on a diagnostic selects it.
    pub fn pane_mouse(
        &mut self,
        id: PaneId,
        report: MouseReport,
        (x, y): (u16, u16),
        clicks: u8,
        m: KeyModifiers,
    ) -> UiRequest {
        let left_press = report == MouseReport::Press(0);
        match self.panes.get_mut(&id) {
            None | Some(Pane::Diff { .. } | Pane::Uncommitted { .. }) => UiRequest::None,
            Some(Pane::Diagnostics { view, .. }) => {
                if left_press {
                    view.click(x, y);
                }
                UiRequest::None
            }
            Some(Pane::Shell(_) | Pane::Commands { .. }) => {
                if let Some(program) = self.pane_program(id) {
                    program.mouse(report, x, y, m);
                }
                UiRequest::None
            }
            Some(Pane::Agent(session)) => {
                let session = *session;
                let Some(slot) = self.sessions.get_mut(&session) else {
                    return UiRequest::None;
                };
                if slot.setup.is_some() {
                    return UiRequest::None;
                }
                let event = match report {
                    MouseReport::Press(0) => slot.view.mouse_press(x, y, clicks),
                    MouseReport::Drag(0) => slot.view.mouse_drag(x, y),
                    MouseReport::Release(_) => slot.view.mouse_release(x, y),
                    _ => return UiRequest::None,
                };
                self.pane_event(id, event)
            }
        }
    }

    /// Whether pane `id` is in copy mode (a shell's or a transcript's).
    pub fn pane_copying(&mut self, id: PaneId) -> bool {
        match self.panes.get(&id) {
            Some(Pane::Agent(key)) => self
                .sessions
                .get(key)
                .is_some_and(|s| s.view.in_copy_mode()),
            Some(Pane::Shell(_) | Pane::Commands { .. }) => {
                self.pane_program(id).is_some_and(|p| p.in_copy_mode())
            }
            _ => false,
        }
    }

    /// Starts copy mode in pane `id`; false when the pane has no text to copy from.
    pub fn pane_enter_copy_mode(&mut self, id: PaneId) -> bool {
        match self.panes.get(&id) {
            Some(Pane::Agent(key)) => match self.sessions.get_mut(key) {
                Some(slot) if slot.setup.is_none() => {
                    slot.view.enter_copy_mode();
                    true
                }
                _ => false,
            },
            _ => match self.pane_program(id) {
                Some(pane) => {
                    pane.enter_copy_mode();
                    true
                }
                None => false,
            },
        }
    }

    /// Where the cursor of pane `id` goes (drawn focused), if it shows one.
    pub fn pane_cursor(&mut self, id: PaneId) -> Option<(u16, u16)> {
        match self.panes.get(&id)? {
            Pane::Agent(key) => {
                let slot = self.sessions.get(key)?;
                match &slot.setup {
                    Some(setup) => setup.cursor_position(),
                    None => slot.view.cursor_position(),
                }
            }
            Pane::Shell(_) | Pane::Commands { .. } => self.pane_program(id)?.cursor_position(),
            Pane::Diff { .. } | Pane::Uncommitted { .. } | Pane::Diagnostics { .. } => None,
        }
    }

    /// Draw the active tab's panes into `area` of `buf`.
    pub fn render(
        &mut self,
        area: Rect,
        buf: &mut Buffer,
        theme: &Theme,
        highlighter: &Highlighter,
        pictures: bool,
    ) -> Vec<march_panes::picture::Placement> {
        self.pane_area = area;
        let focused = self.focused();
        if let Some(key) = self.focused_session()
            && self.terminal_focused
        {
            self.sessions.router_mut().seen(key);
        }
        self.refresh_terminal_tails();
        let mut rects = self.tab().layout.rects(area);
        // A session shown twice keeps the cursor of its focused pane: draw that one last.
        rects.sort_by_key(|(id, _)| *id == focused);
        self.shells_on_screen.clear();
        let mut placed = Vec::new();
        for (id, rect) in rects {
            let key = match self.panes.get(&id) {
                Some(Pane::Agent(key)) => Some(*key),
                _ => None,
            };
            let badge = key.and_then(|key| self.avatar_badge(key));
            if let Some(slot) = key.and_then(|key| self.sessions.get_mut(&key)) {
                slot.view.show_pictures(pictures);
                slot.view.set_avatar(badge);
            }
            self.render_pane(id, rect, buf, theme, highlighter, id == focused);
            if let Some(Pane::Agent(key)) = self.panes.get(&id)
                && let Some(slot) = self.sessions.get(key)
                && slot.setup.is_none()
            {
                placed.extend(slot.view.placements().iter().cloned());
            }
        }
        for (id, pane) in &self.panes {
            if let Pane::Shell(slot) = pane
                && !self.shells_on_screen.contains(id)
            {
                slot.pane.set_focused(false);
            }
        }
        placed
    }

    /// Draws pane `id` into `rect` of `buf`.
    pub(super) fn render_pane(
        &mut self,
        id: PaneId,
        rect: Rect,
        buf: &mut Buffer,
        theme: &Theme,
        highlighter: &Highlighter,
        focused: bool,
    ) {
        let title = self.pane_title(id);
        match self.panes.get_mut(&id) {
            None => {}
            Some(Pane::Shell(slot)) => {
                self.shells_on_screen.push(id);
                slot.pane.render(rect, buf, theme, &title, focused);
            }
            Some(Pane::Commands { .. }) => {
                self.render_agent_shell(id, rect, buf, theme, &title, focused);
            }
            Some(Pane::Diff { view, .. } | Pane::Uncommitted { view, .. }) => {
                view.render(rect, buf, theme, highlighter, focused);
            }
            Some(Pane::Diagnostics { view, .. }) => view.render(rect, buf, theme, focused),
            Some(Pane::Agent(key)) => {
                let key = *key;
                if let Some(slot) = self.sessions.get_mut(&key) {
                    match slot.setup.as_mut() {
                        Some(setup) => setup.render(rect, buf, theme, focused),
                        None => slot.view.render(rect, buf, theme, highlighter, focused),
                    }
                }
            }
        }
    }

    /// What pane `id` saves in the workspace file; `None` for a pane of a session that is
    /// gone.
    pub(super) fn saved_pane(&self, id: PaneId) -> Option<SavedPane> {
        let session_of = |key: &SessionKey| {
            let slot = self.sessions.get(key)?;
            Some((
                slot.project.clone(),
                slot.session_id.as_ref().map(|s| s.0.to_string()),
            ))
        };
        Some(match self.panes.get(&id)? {
            Pane::Agent(key) => {
                let (project, session) = session_of(key)?;
                let slot = self.sessions.get(key);
                let agent = slot.and_then(|s| s.agent.clone());
                let draft = slot.map(|s| s.view.prompt_text()).unwrap_or_default();
                SavedPane::Agent {
                    project,
                    session,
                    agent,
                    draft,
                }
            }
            Pane::Shell(slot) => SavedPane::Shell {
                project: slot.project.clone(),
                cwd: slot.pane.current_dir(),
            },
            Pane::Commands { session, .. } => {
                let (project, session) = session_of(session)?;
                SavedPane::Commands { project, session }
            }
            Pane::Diff { session, .. } => {
                let (project, session) = session_of(session)?;
                SavedPane::Diff { project, session }
            }
            Pane::Uncommitted { project, .. } => SavedPane::Uncommitted {
                project: project.clone(),
            },
            Pane::Diagnostics { project, .. } => SavedPane::Diagnostics {
                project: project.clone(),
            },
        })
    }

    /// Pane `id` as `saved` describes it: a session reloaded from its agent, a new shell in
    /// the directory the old one was in, the views of a session's commands and changes, of
    /// a project's uncommitted changes or diagnostics. False when it cannot be (the pane
    /// of a session that was never opened, a shell that does not start).
    pub(super) fn restore_pane(&mut self, id: PaneId, saved: &SavedPane) -> bool {
        let session_id = |s: &Option<String>| {
            s.clone()
                .map(agent_client_protocol::v1::schema::SessionId::new)
        };
        let pane = match saved {
            SavedPane::Agent {
                project,
                session,
                agent,
                draft,
            } => {
                let key = self.spawn_session(project, session_id(session), agent.as_deref());
                if let Some(slot) = self.sessions.get_mut(&key)
                    && !draft.is_empty()
                    && slot.view.set_prompt_text(draft) == march_panes::agent::PaneEvent::ListFiles
                {
                    self.list_files(key);
                }
                Pane::Agent(key)
            }
            SavedPane::Shell { project, cwd } => {
                let cwd = if cwd.is_dir() { cwd } else { project };
                match self.spawn_shell(id, project, cwd) {
                    Ok(slot) => Pane::Shell(Box::new(slot)),
                    Err(e) => {
                        tracing::warn!("cannot restore a shell pane: {e}");
                        return false;
                    }
                }
            }
            SavedPane::Commands { project, session } | SavedPane::Diff { project, session } => {
                // The session it follows, reloaded in the background when no pane shows it.
                let Some(session) = session_id(session) else {
                    return false;
                };
                let key = match self.open_with_id(&session) {
                    Some(key) => key,
                    None => self.spawn_session(project, Some(session), None),
                };
                match saved {
                    SavedPane::Diff { .. } => Pane::Diff {
                        session: key,
                        view: DiffView::new(&self.diff_title(key), Vec::new()),
                    },
                    _ => Pane::Commands {
                        session: key,
                        view: AgentShellView::default(),
                    },
                }
            }
            SavedPane::Uncommitted { project } => Pane::Uncommitted {
                project: project.clone(),
                view: DiffView::new(&self.uncommitted_title(project), Vec::new()),
            },
            SavedPane::Diagnostics { project } => Pane::Diagnostics {
                project: project.clone(),
                view: self.diagnostics_view(project),
            },
        };
        self.panes.insert(id, pane);
        // A diff or uncommitted-changes pane asks for its diffs (other kinds ignore this).
        self.refresh_diff_pane(id);
        true
    }

    /// Closes pane `id`'s part: a shell is hung up (an editor it ran has its file checked
    /// again), a session no other pane shows or follows is stopped.
    pub(super) fn release_pane(&mut self, id: PaneId) {
        let Some(pane) = self.panes.remove(&id) else {
            return;
        };
        match pane {
            Pane::Shell(slot) => self.hang_up_shell(*slot),
            Pane::Agent(session) | Pane::Commands { session, .. } | Pane::Diff { session, .. } => {
                self.stop_if_unshown(session);
            }
            Pane::Uncommitted { .. } | Pane::Diagnostics { .. } => {}
        }
    }

    /// Whether a pane shows or follows session `key`.
    pub(super) fn session_in_a_pane(&self, key: SessionKey) -> bool {
        self.panes.values().any(|p| p.session() == Some(key))
    }

    /// The panes showing session `key` in an agent pane.
    pub(super) fn agent_panes_of(&self, key: SessionKey) -> impl Iterator<Item = PaneId> + '_ {
        self.panes
            .iter()
            .filter(move |(_, p)| matches!(p, Pane::Agent(k) if *k == key))
            .map(|(id, _)| *id)
    }

    /// The first pane for which `is` holds.
    pub(super) fn find_pane(&self, is: impl Fn(&Pane) -> bool) -> Option<PaneId> {
        self.panes.iter().find(|(_, p)| is(p)).map(|(id, _)| *id)
    }

    /// Whether a pane for which `is` holds is in the active tab.
    pub(super) fn shows(&self, is: impl Fn(&Pane) -> bool) -> bool {
        // While a workspace is restored there is no active tab yet.
        let Some(tab) = self.tabs.get_active() else {
            return false;
        };
        self.panes
            .iter()
            .any(|(id, p)| is(p) && tab.layout.contains(*id))
    }
}

/// What the UI has to do after a pane's input, if anything.
fn request(request: UiRequest) -> PaneInput {
    match request {
        UiRequest::None => PaneInput::Done,
        other => PaneInput::Request(other),
    }
}

/// What a key given to a shell's program did.
fn shell_key(key: ShellKey) -> PaneInput {
    match key {
        ShellKey::Sent => PaneInput::ToProgram,
        ShellKey::Copy(text) => request(UiRequest::Copy(text)),
        ShellKey::Handled => PaneInput::Done,
    }
}
