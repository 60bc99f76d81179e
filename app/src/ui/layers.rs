//! What covers the panes for a while: the key list, the supervisor view, the session
//! switcher, the project picker, and the tab name typed in the status bar. They are a stack
//! of layers over the panes: the top one takes every key and paste, and each draws in turn,
//! bottom first. Opening one is pushing it; a layer that is done is popped.

use std::cell::Cell;
use std::path::Path;

use crossterm::event::KeyEvent;
use march_panes::picture::Placement;
use march_panes::theme::Theme;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use super::agents::AgentPicker;
use super::hints;
use super::projects::ProjectPicker;
use super::rename::TabRename;
use super::supervisor::{SupervisorAction, SupervisorView};
use super::switch::SessionSwitcher;
use super::worktree_close::{CloseAnswer, WorktreeCloser};
use crate::keymap::Keymap;
use crate::workspace::Workspace;
use crate::workspace::worktrees::CloseQuestion;

/// A layer over the panes.
pub(super) enum Layer {
    /// The key list, scrolled this far (the frame clamps it to the list).
    Help(Cell<usize>),
    /// The supervisor view.
    Supervisor(SupervisorView),
    /// The session switcher.
    Switcher(SessionSwitcher),
    /// The open-project picker.
    Projects(ProjectPicker),
    /// Which agent a new pane runs.
    Agents(AgentPicker),
    /// The current tab's new name, typed in the status bar.
    Rename(TabRename),
    /// Keep or remove the worktree of a pane being closed.
    WorktreeClose(WorktreeCloser),
}

/// What a layer did with a key or a paste.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Step {
    /// It stays open.
    Stay,
    /// It is done and closes.
    Close,
    /// It is done, closes, and changed what the workspace file saves.
    CloseChanged,
}

/// The layers, bottom first.
#[derive(Default)]
pub(super) struct Layers {
    stack: Vec<Layer>,
    /// A worktree close the user answered, for the UI to carry out (it may end the
    /// workspace, which a layer cannot).
    close_answer: Option<(CloseQuestion, bool)>,
}

impl Layers {
    /// Opens `layer` over the others.
    pub(super) fn open(&mut self, layer: Layer) {
        self.stack.push(layer);
    }

    /// The top layer.
    #[cfg(test)]
    pub(super) fn top(&self) -> Option<&Layer> {
        self.stack.last()
    }

    /// Whether no layer is open.
    pub(super) fn is_empty(&self) -> bool {
        self.stack.is_empty()
    }

    /// Whether a layer hides panes (all but the tab name typed in the status bar do), so
    /// the panes' rows cannot be drawn alone.
    pub(super) fn covers_panes(&self) -> bool {
        self.stack.iter().any(|l| !matches!(l, Layer::Rename(_)))
    }

    /// What the status bar says for the top layer, if anything.
    pub(super) fn status(&self) -> Option<String> {
        match self.stack.last()? {
            Layer::Rename(rename) => Some(rename.prompt()),
            _ => None,
        }
    }

    /// The top layer takes `key`; it closes when done.
    pub(super) fn key(&mut self, key: KeyEvent, ws: &mut Workspace, log_dir: &Path) -> Step {
        let Some(top) = self.stack.last_mut() else {
            return Step::Stay;
        };
        let step = match top {
            // Moving keys scroll the key list; any other key closes it, and does nothing else.
            Layer::Help(scroll) => match hints::help_key(&key, scroll.get()) {
                Some(to) => {
                    scroll.set(to);
                    Step::Stay
                }
                None => Step::Close,
            },
            Layer::Rename(rename) => match rename.key(key, ws) {
                true => Step::CloseChanged,
                false => Step::Stay,
            },
            Layer::Projects(picker) => done(picker.key(key, ws)),
            // A chosen agent is remembered for the project: the workspace file changed.
            Layer::Agents(picker) => {
                if picker.key(key, ws) {
                    Step::CloseChanged
                } else {
                    Step::Stay
                }
            }
            Layer::Switcher(switcher) => done(switcher.key(key, ws)),
            Layer::WorktreeClose(closer) => match closer.key(key) {
                CloseAnswer::Open => Step::Stay,
                CloseAnswer::Cancelled => Step::Close,
                CloseAnswer::Close(question, remove) => {
                    self.close_answer = Some((question, remove));
                    Step::CloseChanged
                }
            },
            Layer::Supervisor(view) => {
                let rows = ws.supervisor_rows();
                match view.key(key, &rows, log_dir) {
                    SupervisorAction::None => Step::Stay,
                    SupervisorAction::Close => Step::Close,
                    SupervisorAction::Show(session) => {
                        ws.show_session(session);
                        Step::Close
                    }
                    SupervisorAction::Restart(session) => {
                        ws.restart_session(session);
                        Step::Stay
                    }
                    SupervisorAction::Stop(session) => {
                        ws.stop_session(session);
                        Step::Stay
                    }
                    SupervisorAction::Answer(session, kind) => {
                        ws.answer_question(session, kind);
                        Step::Stay
                    }
                }
            }
        };
        self.close_top_if(step);
        step
    }

    /// The top layer takes pasted `text` (those without text to type ignore it).
    pub(super) fn paste(&mut self, text: &str, ws: &mut Workspace) -> Step {
        let step = match self.stack.last_mut() {
            None | Some(Layer::Help(_) | Layer::Supervisor(_) | Layer::WorktreeClose(_)) => {
                Step::Stay
            }
            Some(Layer::Rename(rename)) => {
                rename.paste(text);
                Step::Stay
            }
            Some(Layer::Projects(picker)) => done(picker.paste(text, ws)),
            Some(Layer::Agents(picker)) => done(picker.paste(text, ws)),
            Some(Layer::Switcher(switcher)) => {
                switcher.paste(text, ws);
                Step::Stay
            }
        };
        self.close_top_if(step);
        step
    }

    /// The worktree close answered since the last call, if any.
    pub(super) fn take_close_answer(&mut self) -> Option<(CloseQuestion, bool)> {
        self.close_answer.take()
    }

    /// Saved sessions listed since: an open switcher shows them.
    pub(super) fn absorb(&mut self, ws: &mut Workspace) {
        for layer in &mut self.stack {
            if let Layer::Switcher(switcher) = layer {
                switcher.absorb(ws);
            }
        }
    }

    /// Projects were listed: an open project picker offers them.
    pub(super) fn projects_listed(&mut self, listed: crate::workspace::jobs::ProjectsListed) {
        for layer in &mut self.stack {
            if let Layer::Projects(picker) = layer {
                picker.listed(listed.clone());
            }
        }
    }

    /// Draws the layers over `panes`, bottom first; whether one hides the cursor (a list or
    /// the supervisor view has the user's attention), and where their pictures go for
    /// terminals that show `pictures`.
    pub(super) fn draw(
        &self,
        ws: &Workspace,
        keymap: &Keymap,
        panes: Rect,
        buf: &mut Buffer,
        theme: &Theme,
        pictures: bool,
    ) -> (bool, Vec<Placement>) {
        let mut hides_cursor = false;
        let mut placed = Vec::new();
        for layer in &self.stack {
            let list = match layer {
                Layer::Help(scroll) => {
                    scroll.set(hints::render_help(keymap, scroll.get(), panes, buf, theme));
                    continue;
                }
                Layer::Rename(_) => continue,
                Layer::Supervisor(view) => view.render(ws, panes, buf, theme, pictures),
                Layer::Switcher(switcher) => switcher.view.render(panes, buf, theme, pictures),
                Layer::Projects(picker) => picker.view.render(panes, buf, theme, pictures),
                Layer::Agents(picker) => picker.view.render(panes, buf, theme, pictures),
                Layer::WorktreeClose(closer) => closer.view.render(panes, buf, theme, pictures),
            };
            // A layer covers the pictures of those under it.
            placed.retain(|p: &Placement| p.uncovered(buf));
            placed.extend(list);
            hides_cursor = true;
        }
        (hides_cursor, placed)
    }

    fn close_top_if(&mut self, step: Step) {
        if step != Step::Stay {
            self.stack.pop();
        }
    }
}

/// A layer whose input says only whether it is done.
fn done(closes: bool) -> Step {
    if closes { Step::Close } else { Step::Stay }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::{KeyCode, KeyModifiers};

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    #[test]
    fn the_top_layer_takes_input_and_closes_when_done() {
        let project = Path::new("/work/p");
        let (mut ws, _bus) = crate::workspace::test_workspace(project);
        let mut layers = Layers::default();
        assert!(layers.is_empty() && !layers.covers_panes());
        layers.open(Layer::Help(Cell::new(0)));
        layers.open(Layer::Rename(TabRename::open(&ws)));
        // The tab name is typed in the status bar: the panes stay in sight.
        assert!(
            layers.covers_panes(),
            "the key list below still covers them"
        );
        assert_eq!(layers.paste("api", &mut ws), Step::Stay);
        assert!(
            layers.status().unwrap().contains("api"),
            "{:?}",
            layers.status()
        );
        // Enter renames and closes the top layer only; the key list is on top again.
        let step = layers.key(key(KeyCode::Enter), &mut ws, Path::new("/nonexistent"));
        assert_eq!(step, Step::CloseChanged);
        assert!(ws.tab_label(0).ends_with("api"), "{}", ws.tab_label(0));
        assert_eq!(layers.status(), None);
        // A key that does not scroll the key list closes it, and does nothing else.
        let step = layers.key(key(KeyCode::Char('x')), &mut ws, Path::new("/nonexistent"));
        assert_eq!(step, Step::Close);
        assert!(layers.is_empty());
        assert_eq!(
            layers.key(key(KeyCode::Esc), &mut ws, Path::new("/")),
            Step::Stay
        );
    }
}
