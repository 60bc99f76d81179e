//! Shell panes in the workspace: opening one on the focused pane's project, routing what
//! its program does (output to draw, clipboard, exit), closing and hanging up.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use march_core::config::{SearchCaseName, ShellConfig, ShellExit};
use march_panes::shell::{SearchCase, ShellNotice, ShellPane, ShellSpec, Wake};
use march_panes::theme::Theme;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use super::editor::Editing;
use super::layout::{Axis, PaneId};
use super::pane::Pane;
use super::{UiRequest, Workspace};

/// Whose notice a shell notice is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShellSource {
    /// A shell pane's.
    Pane(PaneId),
    /// An agent's command terminal's (by its serial).
    Terminal(u64),
}

/// A shell pane and the project it was opened on.
pub struct ShellSlot {
    /// The pane.
    pub pane: ShellPane,
    /// The project it belongs to (its directory may have moved on with `cd`).
    pub project: PathBuf,
    /// What its program edits, when it is the user's editor, to take up when it is done.
    pub editing: Option<Editing>,
}

/// The spec of a shell in `cwd` as `[shell]` configures it.
pub fn shell_spec(config: &ShellConfig, cwd: &Path) -> ShellSpec {
    let mut spec = ShellSpec::user_shell(cwd);
    if let Some(command) = &config.command {
        spec.program.clone_from(command);
    }
    spec.args.clone_from(&config.args);
    spec.scrollback_lines = config.scrollback_lines;
    spec.scrollback_bytes = config.scrollback_bytes;
    spec.osc52 = config.osc52;
    spec.search_case = search_case(config);
    spec
}

/// When copy mode's search ignores case (`[shell] search_case`, for every pane kind).
pub fn search_case(config: &ShellConfig) -> SearchCase {
    match config.search_case {
        SearchCaseName::Smart => SearchCase::Smart,
        SearchCaseName::Ignore => SearchCase::Ignore,
        SearchCaseName::Match => SearchCase::Match,
    }
}

impl Workspace {
    /// Starts a shell in `cwd` for pane `id` (of `project`).
    pub(super) fn spawn_shell(
        &mut self,
        id: PaneId,
        project: &Path,
        cwd: &Path,
    ) -> Result<ShellSlot, String> {
        let spec = shell_spec(&self.launcher.shell, cwd);
        self.spawn_program(id, project, spec)
    }

    /// Starts `spec`'s program on a PTY for pane `id` (of `project`).
    pub(super) fn spawn_program(
        &mut self,
        id: PaneId,
        project: &Path,
        spec: ShellSpec,
    ) -> Result<ShellSlot, String> {
        let spec = crate::remote::over_ssh(spec, &self.launcher.ssh);
        let events = self.launcher.shell_events.clone();
        let wake: Wake = Arc::new(move |notice| {
            // A closed channel means March is quitting.
            let _ = events.send((ShellSource::Pane(id), notice));
        });
        let pane = ShellPane::spawn(spec, wake, super::shell_output::output_reader())
            .map_err(|e| e.to_string())?;
        Ok(ShellSlot {
            pane,
            project: project.to_path_buf(),
            editing: None,
        })
    }

    /// Splits the focused pane with a shell in the focused pane's project (its shell's
    /// directory, when the focused pane is a shell).
    pub fn open_shell(&mut self, axis: Axis) -> Result<(), String> {
        let project = self.focused_project();
        let cwd = self
            .shell(self.focused())
            .map_or_else(|| project.clone(), |s| s.pane.current_dir());
        let id = PaneId(self.next_id());
        let slot = self.spawn_shell(id, &project, &cwd)?;
        self.panes.insert(id, Pane::Shell(Box::new(slot)));
        self.tab_mut().layout.split(axis, id);
        Ok(())
    }

    /// The shell pane `id`, if it is one.
    pub fn shell(&self, id: PaneId) -> Option<&ShellSlot> {
        match self.panes.get(&id)? {
            Pane::Shell(slot) => Some(slot),
            _ => None,
        }
    }

    /// The shell of pane `id`, to change.
    pub fn shell_mut(&mut self, id: PaneId) -> Option<&mut ShellPane> {
        match self.panes.get_mut(&id)? {
            Pane::Shell(slot) => Some(&mut slot.pane),
            _ => None,
        }
    }

    /// The focused pane's shell, if it is one.
    pub fn focused_shell(&mut self) -> Option<&mut ShellPane> {
        self.shell_mut(self.focused())
    }

    /// The focused pane's program: its shell, or the command its commands pane shows.
    pub fn focused_program(&mut self) -> Option<&mut ShellPane> {
        self.pane_program(self.focused())
    }

    /// Handles a notice from pane `id`'s shell: whether the screen needs drawing, and what
    /// the UI should do (copy text, quit when the last pane closed).
    pub fn shell_event(&mut self, id: PaneId, notice: ShellNotice) -> (bool, UiRequest) {
        let Some(Pane::Shell(slot)) = self.panes.get_mut(&id) else {
            return (false, UiRequest::None);
        };
        let update = slot.pane.take_update();
        let mut request = match update.clipboard.last() {
            Some(text) => UiRequest::Copy(text.clone()),
            None => UiRequest::None,
        };
        if let Some(exit) = update.exited {
            let editing = slot.editing.take();
            let project = slot.project.clone();
            // An editor of a prompt goes with its text.
            let prompt = matches!(editing, Some(Editing::Prompt { .. }));
            if let Some(editing) = editing {
                self.editing_done(&project, editing);
            }
            let close = prompt
                || match self.launcher.shell.on_exit {
                    ShellExit::Close => true,
                    ShellExit::CloseOnSuccess => exit.success(),
                    ShellExit::Keep => false,
                };
            if close && let UiRequest::Quit = self.close_pane(id) {
                request = UiRequest::Quit;
            }
            return (true, request);
        }
        let visible = notice == ShellNotice::Exited || self.tab().layout.contains(id);
        (visible, request)
    }

    /// Draws again the rows programs changed in shell panes `ids` (those not on screen are
    /// skipped), into `buf` where the last frame drew them: the areas drawn, or `None` when
    /// a whole frame is needed (a pane closed, or something besides its rows changed).
    pub fn render_shell_rows(
        &mut self,
        ids: &[PaneId],
        buf: &mut Buffer,
        theme: &Theme,
    ) -> Option<Vec<Rect>> {
        let mut areas = Vec::new();
        for id in ids.iter().filter(|id| self.shells_on_screen.contains(id)) {
            let Some(Pane::Shell(slot)) = self.panes.get_mut(id) else {
                return None;
            };
            areas.extend(slot.pane.render_changed_rows(buf, theme)?);
        }
        Some(areas)
    }

    /// Hangs up the shell of a closed pane: its programs get SIGHUP, and are killed after
    /// the grace period if still there. An editor it ran has its file checked again.
    pub(super) fn hang_up_shell(&mut self, mut slot: ShellSlot) {
        let grace = Duration::from_millis(self.launcher.shell.hangup_grace_ms);
        // The hang-up finishes on its own thread; the pane is gone already.
        drop(slot.pane.hangup(grace));
        if let Some(editing) = slot.editing.take() {
            self.editing_done(&slot.project, editing);
        }
    }

    /// Hangs up every shell and waits until their programs are gone (killed after the
    /// grace period when they ignore the hang-up).
    pub(super) fn hang_up_all_shells(&mut self) {
        let grace = Duration::from_millis(self.launcher.shell.hangup_grace_ms);
        let shells: Vec<PaneId> = self
            .panes
            .iter()
            .filter(|(_, p)| matches!(p, Pane::Shell(_)))
            .map(|(id, _)| *id)
            .collect();
        let mut waits = Vec::new();
        let mut edits = Vec::new();
        for id in shells {
            if let Some(Pane::Shell(mut slot)) = self.panes.remove(&id) {
                waits.extend(slot.pane.hangup(grace));
                edits.extend(slot.editing.take().map(|e| (slot.project.clone(), e)));
            }
        }
        for wait in waits {
            let _ = wait.join();
        }
        // Editors are gone now: a prompt's text goes back (saved with the draft), its file
        // is removed.
        for (project, editing) in edits {
            self.editing_done(&project, editing);
        }
    }
}
