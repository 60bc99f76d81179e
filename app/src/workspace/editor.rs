//! `$VISUAL` / `$EDITOR` in a shell pane beside what it edits: a diagnostic's file at its
//! line, or a session's prompt (Ctrl-G) in a file of its own. When the editor exits (or its
//! pane is closed) the edit is taken up: the file is checked again and the project diffed,
//! or the prompt's text goes back into its pane.

use std::path::{Path, PathBuf};

use march_core::atomic_file::{FileMode, write_file};

use super::Workspace;
use super::layout::{Axis, PaneId};
use super::pane::Pane;
use super::router::SessionKey;
use super::shells::{ShellSlot, shell_spec};

/// What an editor in a shell pane edits, to act on when it is done.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Editing {
    /// A file a diagnostic is in: checked again.
    Diagnostic(PathBuf),
    /// Session `session`'s prompt, shown in agent pane `pane`, written to `file`.
    Prompt {
        /// The file the editor has.
        file: PathBuf,
        /// The session whose prompt it is.
        session: SessionKey,
        /// The agent pane it was started from (focused again after).
        pane: PaneId,
    },
}

impl Workspace {
    /// Starts the user's editor on `file` (at `line` when given) in a new shell pane of
    /// `project`, split below the focused pane; `editing` says what to do when it is done.
    pub(super) fn open_editor(
        &mut self,
        project: &Path,
        file: &Path,
        line: Option<u32>,
        editing: Editing,
    ) -> Result<PaneId, String> {
        let pane = PaneId(self.next_id());
        let mut spec = shell_spec(&self.launcher.shell, project);
        // The shell splits `$EDITOR` into words, as every program that runs it does.
        spec.program = "/bin/sh".to_string();
        spec.args = match line {
            Some(line) => vec![
                "-c".to_string(),
                r#"exec ${VISUAL:-${EDITOR:-vi}} "+$1" "$2""#.to_string(),
                "march-edit".to_string(),
                line.to_string(),
                file.display().to_string(),
            ],
            None => vec![
                "-c".to_string(),
                r#"exec ${VISUAL:-${EDITOR:-vi}} "$1""#.to_string(),
                "march-edit".to_string(),
                file.display().to_string(),
            ],
        };
        let mut slot: ShellSlot = self.spawn_program(pane, project, spec)?;
        slot.editing = Some(editing);
        self.panes.insert(pane, Pane::Shell(Box::new(slot)));
        self.tab_mut().layout.split(Axis::Horizontal, pane);
        Ok(pane)
    }

    /// Ctrl-G in agent pane `id`: its prompt goes to a file and into the user's editor;
    /// the text comes back when the editor exits.
    pub fn edit_prompt_externally(&mut self, id: PaneId) -> Result<(), String> {
        let key = self
            .agent_session(id)
            .ok_or("the prompt editor is for agent panes")?;
        let slot = self.sessions.get(&key).ok_or("that session is gone")?;
        if slot.setup.is_some() {
            return Err("finish setting up the agent first".to_string());
        }
        let (project, text) = (slot.project.clone(), slot.view.prompt_text());
        let dir = match &self.launcher.paths {
            Some(paths) => paths.data_dir.join("prompt-edit"),
            None => std::env::temp_dir(),
        };
        std::fs::create_dir_all(&dir).map_err(|e| format!("cannot edit the prompt: {e}"))?;
        let file = dir.join(format!("prompt-{}-{}.md", std::process::id(), key.0));
        write_file(&file, text.as_bytes(), FileMode::Private)
            .map_err(|e| format!("cannot edit the prompt: {e}"))?;
        let editing = Editing::Prompt {
            file: file.clone(),
            session: key,
            pane: id,
        };
        if let Err(e) = self.open_editor(&project, &file, None, editing) {
            let _ = std::fs::remove_file(&file);
            return Err(format!("cannot start the editor: {e}"));
        }
        Ok(())
    }

    /// The editor of `editing` (run in `project`) is done.
    pub(super) fn editing_done(&mut self, project: &Path, editing: Editing) {
        match editing {
            Editing::Diagnostic(file) => self.editor_done(project, &file),
            Editing::Prompt {
                file,
                session,
                pane,
            } => {
                match std::fs::read(&file) {
                    Ok(bytes) => {
                        let text = String::from_utf8_lossy(&bytes);
                        // Editors end the last line; the prompt does not need it.
                        let text = text.strip_suffix('\n').unwrap_or(&text);
                        let text = text.strip_suffix('\r').unwrap_or(text);
                        if let Some(slot) = self.sessions.get_mut(&session)
                            && slot.view.set_prompt_text(text)
                                == march_panes::agent::PaneEvent::ListFiles
                        {
                            self.list_files(session);
                        }
                    }
                    Err(e) => {
                        if let Some(slot) = self.sessions.get_mut(&session) {
                            slot.view
                                .notice(format!("the edited prompt could not be read: {e}"));
                        }
                    }
                }
                let _ = std::fs::remove_file(&file);
                if self.tab().layout.contains(pane) {
                    self.layout_mut().focus(pane);
                }
            }
        }
    }
}
