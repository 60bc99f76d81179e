//! The pane's input: raw keys, the keymap's prompt commands, paste and scrolling. Open
//! overlays come first: the config picker, then the permission modal, then the completion
//! popup; the editor gets the rest.

use agent_client_protocol::v1::schema::RequestPermissionOutcome;
use crossterm::event::{KeyCode, KeyEvent, KeyEventKind};

use super::completion;
use super::permission::{ModalKey, Routed};
use super::picker::{Choice, PickerKey};
use super::pictures;
use super::prompt::PromptEdit;
use super::queue::Held;
use super::{AgentPane, PaneEvent, QueuedKind};
use crate::scroll::Scroll;
use std::time::Instant;

impl AgentPane {
    /// A key the keymap did not claim: for the open modal, picker or completion popup,
    /// else for the editor. Esc cancels (see [`Self::cancel`]).
    pub fn handle_key(&mut self, key: KeyEvent) -> PaneEvent {
        if key.kind == KeyEventKind::Release {
            return PaneEvent::None;
        }
        if self.copy.is_some() {
            return self.copy_key(key);
        }
        if let Some(event) = self.tree_key(key) {
            return event;
        }
        if key.code != KeyCode::Esc {
            self.disarm_rewind();
        }
        if self.picker.is_none() && self.permissions.is_empty() && self.prompt.search_key(key) {
            return PaneEvent::Redraw;
        }
        if let Some(picker) = self.picker.as_mut() {
            return match picker.key(key) {
                PickerKey::Ignored => PaneEvent::None,
                PickerKey::Moved => PaneEvent::Redraw,
                other => self.close_picker(other),
            };
        }
        if !self.permissions.is_empty() {
            // Keys typed ahead, and keys that are not the dialog's, go to the editor below.
            match self.permissions.key(key, Instant::now()) {
                Routed::Dialog(ModalKey::Answered(outcome)) => return self.answer(outcome),
                Routed::Dialog(_) => return PaneEvent::Redraw,
                Routed::Dropped => return PaneEvent::Redraw,
                Routed::Editor => {}
            }
        } else {
            self.permissions.typed(Instant::now());
        }
        if key.code == KeyCode::Backspace
            && key.modifiers.is_empty()
            && let Some(event) = self.detach_last()
        {
            return event;
        }
        if key.code == KeyCode::Backspace
            && key.modifiers.is_empty()
            && let Some(chosen) = self
                .mentions
                .chosen_before(self.prompt.line_before_cursor())
        {
            // A chosen mention goes whole.
            let n = chosen.chars().count();
            self.prompt.replace_before_cursor(n, "");
            self.refresh_completion();
            return PaneEvent::Redraw;
        }
        match key.code {
            KeyCode::Esc => return self.cancel(),
            KeyCode::Tab if self.mentions.is_open() => return self.complete(),
            KeyCode::Tab if self.completion.is_open() => return self.complete(),
            KeyCode::Up if self.completion.is_open() => return self.history_prev(),
            KeyCode::Down if self.completion.is_open() => return self.history_next(),
            KeyCode::PageUp => return self.scroll(Scroll::Pages(-1)),
            KeyCode::PageDown => return self.scroll(Scroll::Pages(1)),
            _ => {}
        }
        if self.prompt.input(key) {
            self.refresh_completion();
            self.redraw_or_list_files()
        } else {
            PaneEvent::None
        }
    }

    /// Redraw, or first have the app list the files the `@` popup waits for.
    pub(crate) fn redraw_or_list_files(&mut self) -> PaneEvent {
        if self.mentions.wants_files() {
            PaneEvent::ListFiles
        } else {
            PaneEvent::Redraw
        }
    }

    pub(crate) fn refresh_completion(&mut self) {
        let before = self.prompt.line_before_cursor();
        let word = super::mention::word_at(before, before.len()).map(str::to_string);
        self.mentions.update(word.as_deref());
        if self.mentions.is_open() {
            self.completion.close();
            return;
        }
        let text = self.prompt.command_line().unwrap_or_default();
        self.completion
            .update(text, &self.transcript.facts.commands);
    }

    /// Takes the highlighted `@` match into the prompt; false when there is none.
    fn accept_mention(&mut self) -> bool {
        if !self.mentions.is_open() {
            return false;
        }
        let Some(path) = self.mentions.selected() else {
            return false;
        };
        let before = self.prompt.line_before_cursor();
        let typed =
            super::mention::word_at(before, before.len()).map_or(0, |w| w.chars().count() + 1);
        let text = super::mention::mention_text(&path);
        self.prompt
            .replace_before_cursor(typed, &format!("{text} "));
        self.mentions.chose(text);
        self.mentions.close();
        true
    }

    fn close_picker(&mut self, key: PickerKey) -> PaneEvent {
        self.picker = None;
        match key {
            PickerKey::Chosen(Choice::Config(config_id, value)) => {
                PaneEvent::SetConfigOption { config_id, value }
            }
            PickerKey::Chosen(Choice::Session(id)) => PaneEvent::ResumeSession(id),
            _ => PaneEvent::Redraw,
        }
    }

    /// Submit: the highlighted choice of an open modal or picker, else the prompt (a slash
    /// command when it names one).
    pub fn submit(&mut self) -> PaneEvent {
        if let Some(event) = self.tree_key(KeyEvent::from(KeyCode::Enter)) {
            return event;
        }
        self.disarm_rewind();
        if let Some(picker) = &self.picker {
            let key = picker.accept();
            return self.close_picker(key);
        }
        if !self.permissions.is_empty() {
            return match self
                .permissions
                .key(KeyEvent::from(KeyCode::Enter), Instant::now())
            {
                Routed::Dialog(ModalKey::Answered(outcome)) => self.answer(outcome),
                // Enter typed ahead sends nothing: the prompt stays in the editor.
                _ => PaneEvent::Redraw,
            };
        }
        // Enter ends a history search on its match, to be sent with the next.
        if self.end_history_search(KeyCode::Enter) {
            return PaneEvent::Redraw;
        }
        if self.accept_mention() {
            self.refresh_completion();
            return PaneEvent::Redraw;
        }
        if self.completion.is_open() {
            self.accept_completion();
        }
        let text = match self.prompt.take() {
            Some(text) => text,
            // Pictures alone make a prompt.
            None if !self.pictures_attached_empty() => String::new(),
            None => return PaneEvent::None,
        };
        self.completion.close();
        self.mentions.sent();
        self.scroll.scroll_to_bottom();
        let text = match completion::parse(&text, &self.transcript.facts.commands) {
            Some((name, args)) => return PaneEvent::Slash { name, args },
            None => match text.strip_prefix("//") {
                Some(rest) => format!("/{rest}"),
                None => text,
            },
        };
        if self.busy && !self.pictures_attached_empty() {
            // Pictures go with a prompt of their own: a running turn takes text only.
            self.prompt.replace(&text);
            self.set_error("images go with a new prompt: wait for the turn to end, or Ctrl-C");
            return PaneEvent::Redraw;
        }
        if self.busy {
            // A `!command` runs after the turn; anything else steers the running turn, shown
            // under the editor until delivered (slash commands above act at once).
            let kind = if text.trim_start().starts_with('!') {
                QueuedKind::Next
            } else {
                QueuedKind::Steer
            };
            return self.queue_kind(text, kind);
        }
        PaneEvent::Submit(text)
    }

    /// Alt-Enter: while a turn runs, queue the prompt as a follow-up (run when the agent
    /// would stop); otherwise break the line.
    pub fn follow_up(&mut self) -> PaneEvent {
        if self.tree.is_some() {
            return PaneEvent::None;
        }
        if !self.busy || self.picker.is_some() || !self.permissions.is_empty() {
            return self.newline();
        }
        let Some(text) = self.prompt.take() else {
            return PaneEvent::None;
        };
        self.completion.close();
        self.queue_kind(text, QueuedKind::FollowUp)
    }

    fn accept_completion(&mut self) -> bool {
        let Some(name) = self.completion.selected().map(|c| c.name.clone()) else {
            return false;
        };
        self.prompt.replace(&format!("/{name} "));
        self.completion.close();
        true
    }

    /// Completes the highlighted `@` path or slash command.
    pub fn complete(&mut self) -> PaneEvent {
        if let Some(event) = self.tree_key(KeyEvent::from(KeyCode::Tab)) {
            return event;
        }
        if self.accept_mention() {
            self.refresh_completion();
            return PaneEvent::Redraw;
        }
        if self.accept_completion() {
            PaneEvent::Redraw
        } else {
            PaneEvent::None
        }
    }

    /// Breaks the prompt's line.
    pub fn newline(&mut self) -> PaneEvent {
        if self.tree.is_some() {
            return PaneEvent::None;
        }
        self.prompt.newline();
        self.refresh_completion();
        PaneEvent::Redraw
    }

    /// Ends a history search as `key` (Enter keeps its match, Esc gives it up); whether
    /// one was on.
    fn end_history_search(&mut self, key: KeyCode) -> bool {
        self.prompt.search_state().is_some() && self.prompt.search_key(KeyEvent::from(key))
    }

    /// Up: the popup's previous entry, the line above, or the previous prompt.
    pub fn history_prev(&mut self) -> PaneEvent {
        if let Some(event) = self.tree_key(KeyEvent::from(KeyCode::Up)) {
            return event;
        }
        self.end_history_search(KeyCode::Enter);
        if let Some(p) = self.picker.as_mut() {
            p.move_by(-1);
            return PaneEvent::Redraw;
        }
        if self.mentions.is_open() {
            self.mentions.move_by(-1);
            return PaneEvent::Redraw;
        }
        if self.completion.is_open() {
            self.completion.move_by(-1);
            return PaneEvent::Redraw;
        }
        // On an empty editor the last queued message comes back to be edited (or dropped),
        // taken back from the agent when it has it.
        if self.prompt.text().is_empty()
            && let Some(q) = self.queued.pop_back()
        {
            self.prompt.replace(&q.text);
            return match q.held {
                Held::Taken(id) => PaneEvent::Unqueue(id),
                Held::Sending | Held::AfterTurn => PaneEvent::Redraw,
            };
        }
        if self.prompt.history_prev() {
            PaneEvent::Redraw
        } else {
            PaneEvent::None
        }
    }

    /// Down: the popup's next entry, the line below, or the next prompt.
    pub fn history_next(&mut self) -> PaneEvent {
        if let Some(event) = self.tree_key(KeyEvent::from(KeyCode::Down)) {
            return event;
        }
        self.end_history_search(KeyCode::Enter);
        if let Some(p) = self.picker.as_mut() {
            p.move_by(1);
            return PaneEvent::Redraw;
        }
        if self.mentions.is_open() {
            self.mentions.move_by(1);
            return PaneEvent::Redraw;
        }
        if self.completion.is_open() {
            self.completion.move_by(1);
            return PaneEvent::Redraw;
        }
        if self.prompt.history_next() {
            PaneEvent::Redraw
        } else {
            PaneEvent::None
        }
    }

    /// Esc: closes the picker or popup, cancels an open permission request (which cancels
    /// the turn), or cancels the running turn.
    pub fn cancel(&mut self) -> PaneEvent {
        if let Some(event) = self.tree_key(KeyEvent::from(KeyCode::Esc)) {
            return event;
        }
        if self.picker.take().is_some() {
            return PaneEvent::Redraw;
        }
        if self.end_history_search(KeyCode::Esc) {
            return PaneEvent::Redraw;
        }
        if !self.permissions.is_empty() {
            return self.answer(RequestPermissionOutcome::Cancelled);
        }
        if self.mentions.is_open() {
            self.mentions.dismiss();
            return PaneEvent::Redraw;
        }
        if self.completion.is_open() {
            self.completion.dismiss(&self.prompt.text());
            return PaneEvent::Redraw;
        }
        if self.busy {
            // What was queued comes back into the editor at once: the cancel delivers none.
            self.restore_queued();
            PaneEvent::CancelTurn
        } else if self.prompt.text().is_empty() && self.pictures_attached_empty() {
            // Claude Code's gesture: Esc twice on an empty prompt goes back in the session.
            if self.rewind_armed {
                self.disarm_rewind();
                PaneEvent::Slash {
                    name: "rewind".to_string(),
                    args: String::new(),
                }
            } else {
                self.rewind_armed = true;
                self.prompt
                    .set_placeholder(Some("Esc again: go back to one of your messages"));
                PaneEvent::Redraw
            }
        } else {
            PaneEvent::None
        }
    }

    /// Any key but Esc: a second Esc no longer rewinds.
    fn disarm_rewind(&mut self) {
        if std::mem::take(&mut self.rewind_armed) {
            self.prompt.set_placeholder(None);
        }
    }

    /// An edit of the prompt bound to a key (kill, yank, word motion, undo).
    pub fn edit_prompt(&mut self, edit: PromptEdit) -> PaneEvent {
        if self.tree.is_some() {
            return PaneEvent::None;
        }
        if self.picker.is_some() {
            return PaneEvent::None;
        }
        // With a dialog open, editing keys are typing: they stay the editor's and hold it.
        self.permissions.typed(Instant::now());
        if self.prompt.edit(edit) {
            self.refresh_completion();
            self.redraw_or_list_files()
        } else {
            PaneEvent::None
        }
    }

    /// Ctrl-C: closes the open menu, clears the prompt (kept for yanking back), and on an
    /// empty prompt cancels the running turn.
    pub fn interrupt(&mut self) -> PaneEvent {
        if self.tree.take().is_some() {
            return PaneEvent::Redraw;
        }
        if !self.permissions.is_empty() && !self.permissions.armed(Instant::now()) {
            // Typed ahead of a dialog: cancels nothing.
            self.permissions.typed(Instant::now());
            return PaneEvent::Redraw;
        }
        if self.picker.is_some()
            || !self.permissions.is_empty()
            || self.completion.is_open()
            || self.prompt.search_state().is_some()
        {
            return self.cancel();
        }
        if self.prompt.clear() {
            self.refresh_completion();
            return PaneEvent::Redraw;
        }
        if self.busy {
            return self.cancel();
        }
        PaneEvent::None
    }

    /// Ctrl-R: searches the prompt history backwards (again: the next older match).
    pub fn history_search(&mut self) -> PaneEvent {
        if self.tree.is_some() {
            return PaneEvent::None;
        }
        if self.picker.is_some() || !self.permissions.is_empty() {
            return PaneEvent::None;
        }
        self.completion.close();
        self.prompt.search_back();
        PaneEvent::Redraw
    }

    /// Inserts pasted text into the prompt, its lines kept; a picture file's path alone (a
    /// file dropped on the terminal) also asks the app to attach the picture, which then
    /// takes the path's text out ([`Self::attach_pasted`]).
    pub fn paste(&mut self, text: &str) -> PaneEvent {
        // First, for whatever takes the paste: lines kept whatever their ends, and the text
        // a picture later replaces is the text inserted.
        let text = crate::paste::paste_lines(text);
        let text = text.as_ref();
        if self.tree.is_some() {
            return PaneEvent::None;
        }
        self.leave_copy_mode();
        if self.picker.is_some() {
            return PaneEvent::None;
        }
        // A dialog typing a rejection's words takes it; else it is typing for the editor.
        if self.permissions.paste(text, Instant::now()).is_some() {
            return PaneEvent::Redraw;
        }
        let pasted = self.paste_text(text);
        match pictures::pasted_picture_path(text) {
            // The text stays in the prompt until the picture is read and replaces it.
            Some(path) => PaneEvent::AttachImage {
                path,
                pasted: Some(text.to_string()),
            },
            None => pasted,
        }
    }

    /// Inserts `text` into the prompt, its lines kept (a paste, the clipboard's text, or a
    /// path that was no picture).
    pub fn paste_text(&mut self, text: &str) -> PaneEvent {
        self.prompt.paste(text);
        self.refresh_completion();
        self.redraw_or_list_files()
    }

    /// Scrolls the open permission request's body (its diff, command or arguments), else
    /// the transcript.
    pub fn scroll(&mut self, scroll: Scroll) -> PaneEvent {
        if self.permissions.scroll(scroll) {
            return PaneEvent::Redraw;
        }
        match scroll {
            Scroll::Top => self.scroll.scroll_to_top(),
            Scroll::Bottom => self.scroll.scroll_to_bottom(),
            _ => self.scroll.scroll_by(scroll.lines(self.scroll.viewport())),
        }
        PaneEvent::Redraw
    }
}
