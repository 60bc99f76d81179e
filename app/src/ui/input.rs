//! Input from the attached terminals: keys through the keymap to the open layer, a
//! command or the focused pane; pastes, the mouse, focus; and whether a shell was typed
//! into a moment ago (its echo is drawn at once).

use std::time::{Duration, Instant};

use crossterm::event::{Event, KeyEvent, KeyEventKind};

use super::draw::Redraw;
use super::layers::Step;
use super::{Changed, Ui, commands};
use crate::keymap::{Command, Dispatch, KeyContext};
use crate::server::connection::ClientId;
use crate::workspace::pane::{PaneInput, PaneKind};
use crate::workspace::shells::ShellSource;

/// Output of the focused shell this soon after a key is taken for its echo, drawn at once.
const ECHO_WINDOW: Duration = Duration::from_millis(100);

impl Ui {
    /// An event from client `id`'s terminal.
    pub(super) async fn client_event(
        &mut self,
        id: ClientId,
        event: Event,
        redraw: &mut Redraw,
    ) -> Changed {
        if let Event::Resize(cols, rows) = event {
            return if self.clients.resize(id, cols, rows) {
                Changed::Everything
            } else {
                // Its own frame is made again from the canvas.
                redraw.full = true;
                Changed::Nothing
            };
        }
        if self.clients.read_only(id) {
            // A watcher's keys do nothing but detach it.
            if let Event::Key(key) = event
                && key.kind != KeyEventKind::Release
                && self.clients.watcher_key(id, &self.keymap, key) == Some(Command::AppDetach)
            {
                self.clients.remove(id, "detached");
            }
            return Changed::Nothing;
        }
        if self.clients.typed(id) {
            redraw.full = true;
        }
        self.terminal_event(event).await
    }

    /// Handles a terminal event; what on screen may have changed.
    async fn terminal_event(&mut self, event: Event) -> Changed {
        let typed = self.typed_to_shell;
        let had_message = self.message.is_some();
        match event {
            Event::Key(key) if key.kind != KeyEventKind::Release => self.key(key).await,
            Event::Paste(text) if !self.layers.is_empty() => {
                let step = self.layers.paste(&text, &mut self.ws);
                if step == Step::CloseChanged {
                    self.persist();
                }
            }
            Event::Paste(text) => {
                let input = self.ws.pane_paste(self.ws.focused(), &text);
                self.pane_input(input);
            }
            Event::Mouse(m) => self.mouse(m),
            // Taken by `incoming`, which knows whose terminal it is.
            Event::Resize(..) => {}
            Event::FocusGained | Event::FocusLost => {
                let focused = matches!(event, Event::FocusGained);
                self.ws.set_terminal_focused(focused);
                if let Some(pane) = self.ws.focused_shell() {
                    pane.focus(focused);
                }
            }
            _ => {}
        }
        // Input that went straight to a shell's program: nothing to draw until it answers,
        // but the message it cleared.
        let only_to_program = self.typed_to_shell != typed
            && self.message.is_none()
            && self.layers.is_empty()
            && !self.dispatcher.prefix_pending();
        match (only_to_program, had_message) {
            (true, false) => Changed::Nothing,
            (true, true) => Changed::StatusBar,
            (false, _) => Changed::Everything,
        }
    }

    async fn key(&mut self, key: KeyEvent) {
        self.message = None;
        if !self.layers.is_empty() {
            if self.layers.key(key, &mut self.ws, &self.log_dir) == Step::CloseChanged {
                if let Some((question, remove)) = self.layers.take_close_answer() {
                    let request = self.ws.close_with_worktree(question, remove);
                    self.shell_request(request);
                }
                self.persist();
            }
            return;
        }
        let context = match self.ws.pane_kind(self.ws.focused()) {
            Some(PaneKind::Diff | PaneKind::Uncommitted) => KeyContext::Diff,
            Some(PaneKind::Diagnostics) => KeyContext::Diagnostics,
            Some(PaneKind::Shell | PaneKind::Commands) => KeyContext::Shell,
            // A pane in setup has no prompt: the agent keys (Enter submits…) are its own there.
            Some(PaneKind::Setup) => KeyContext::Direct,
            // Copy mode takes the keys the prompt's bindings would.
            Some(PaneKind::Agent) if self.ws.pane_copying(self.ws.focused()) => KeyContext::Direct,
            Some(PaneKind::Agent) | None => KeyContext::Agent,
        };
        match self.dispatcher.dispatch(&self.keymap, context, key) {
            Dispatch::Command(command) => {
                let request = commands::run(self, command).await;
                self.shell_request(request);
            }
            Dispatch::PrefixStarted | Dispatch::PrefixCancelled => {}
            Dispatch::SendPrefix => {
                self.confirm_armed = None;
                let prefix = self.keymap.prefix();
                self.key_to_pane(prefix);
            }
            Dispatch::Unbound(key) => {
                // Anything else done meanwhile: the next quit asks again.
                self.confirm_armed = None;
                self.key_to_pane(key);
            }
        }
    }

    /// A key no binding took goes to the focused pane.
    fn key_to_pane(&mut self, key: KeyEvent) {
        let input = self.ws.pane_key(self.ws.focused(), key);
        self.pane_input(input);
    }

    /// What input given to a pane did, seen to.
    fn pane_input(&mut self, input: PaneInput) {
        match input {
            PaneInput::Done => {}
            PaneInput::ToProgram => self.typed_to_shell = Some(Instant::now()),
            PaneInput::Request(request) => self.shell_request(request),
            PaneInput::Refused(why) => self.message = Some(why),
        }
    }

    /// Whether the user typed into a shell a moment ago.
    pub(super) fn typed_lately(&self) -> bool {
        self.typed_to_shell
            .is_some_and(|t| t.elapsed() < Duration::from_millis(500))
    }

    /// Whether output from `source` is the echo of a key just typed into it (a command
    /// shows in the focused agent shell pane when that pane was typed into).
    pub(super) fn echo_due(&self, source: ShellSource) -> bool {
        let focused = self.ws.focused();
        let mine = match source {
            ShellSource::Pane(id) => id == focused,
            ShellSource::Terminal(_) => self.ws.pane_kind(focused) == Some(PaneKind::Commands),
        };
        mine && self
            .typed_to_shell
            .is_some_and(|t| t.elapsed() < ECHO_WINDOW)
    }
}
