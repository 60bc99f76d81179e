//! The prompt editor: a multi-line `ratatui-textarea` with per-pane history and paste.
//!
//! Which key submits or breaks a line is the keymap's business: the pane calls
//! [`Prompt::take`], [`Prompt::newline`] or the history methods for mapped commands and
//! gives every other key to [`Prompt::input`].

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::widgets::Widget;
use ratatui_textarea::{CursorMove, TextArea, WrapMode};

use crate::theme::{Slot, Theme};
use crate::wrap;

/// Prompts remembered per pane.
const HISTORY_LIMIT: usize = 500;
/// Shown while the prompt is empty.
pub(crate) const PLACEHOLDER: &str = "Message the agent · / for commands";

/// The editor and its history.
#[derive(Debug)]
pub(crate) struct Prompt {
    area: TextArea<'static>,
    history: Vec<String>,
    /// The history entry shown, while browsing.
    browsing: Option<usize>,
    /// What was typed before browsing started, restored after the newest entry.
    draft: String,
}

impl Default for Prompt {
    fn default() -> Self {
        Prompt {
            area: editor(Vec::new()),
            history: Vec::new(),
            browsing: None,
            draft: String::new(),
        }
    }
}

fn editor(lines: Vec<String>) -> TextArea<'static> {
    let mut area = if lines.is_empty() {
        TextArea::default()
    } else {
        TextArea::new(lines)
    };
    area.set_wrap_mode(WrapMode::WordOrGlyph);
    area.set_cursor_line_style(Style::default());
    area.set_placeholder_text(PLACEHOLDER);
    area.set_max_histories(200);
    area
}

impl Prompt {
    /// The text being edited.
    pub(crate) fn text(&self) -> String {
        self.area.lines().join("\n")
    }

    fn set_text(&mut self, text: &str) {
        let lines = text.split('\n').map(str::to_string).collect();
        self.area = editor(lines);
        self.area.move_cursor(CursorMove::Bottom);
        self.area.move_cursor(CursorMove::End);
    }

    /// Replaces the text, as if typed (completion uses this).
    pub(crate) fn replace(&mut self, text: &str) {
        self.set_text(text);
        self.browsing = None;
    }

    /// A key for the editor; true when the text or the cursor changed.
    pub(crate) fn input(&mut self, key: KeyEvent) -> bool {
        let cursor = self.area.cursor();
        let modified = self.area.input(key);
        if modified {
            // An edited history entry is a new draft.
            self.browsing = None;
        }
        modified || self.area.cursor() != cursor
    }

    /// The text when it could be a slash command being typed (one line starting with `/`),
    /// without copying a large prompt on every key.
    pub(crate) fn command_line(&self) -> Option<&str> {
        match self.area.lines() {
            [line] if line.starts_with('/') => Some(line),
            _ => None,
        }
    }

    /// Inserts pasted text as it is, line breaks included.
    pub(crate) fn paste(&mut self, text: &str) {
        self.area.insert_str(text);
        self.browsing = None;
    }

    /// Breaks the line at the cursor.
    pub(crate) fn newline(&mut self) {
        self.area.insert_newline();
        self.browsing = None;
    }

    /// Takes the text for sending: remembered in the history, the editor emptied. Blank
    /// text stays and gives nothing.
    pub(crate) fn take(&mut self) -> Option<String> {
        let text = self.text();
        if text.trim().is_empty() {
            return None;
        }
        if self.history.last() != Some(&text) {
            self.history.push(text.clone());
            if self.history.len() > HISTORY_LIMIT {
                self.history.remove(0);
            }
        }
        self.area = editor(Vec::new());
        self.browsing = None;
        self.draft.clear();
        Some(text)
    }

    /// Up: the line above, or on the first line the previous prompt from the history.
    pub(crate) fn history_prev(&mut self) -> bool {
        if self.area.cursor().0 > 0 {
            self.area.move_cursor(CursorMove::Up);
            return true;
        }
        let next = match self.browsing {
            None if self.history.is_empty() => return false,
            None => {
                self.draft = self.text();
                self.history.len() - 1
            }
            Some(0) => return false,
            Some(i) => i - 1,
        };
        let entry = self.history[next].clone();
        self.set_text(&entry);
        self.browsing = Some(next);
        true
    }

    /// Down: the line below, or on the last line the next prompt (then the draft).
    pub(crate) fn history_next(&mut self) -> bool {
        if self.area.cursor().0 + 1 < self.area.lines().len() {
            self.area.move_cursor(CursorMove::Down);
            return true;
        }
        let Some(i) = self.browsing else {
            return false;
        };
        if i + 1 < self.history.len() {
            let entry = self.history[i + 1].clone();
            self.set_text(&entry);
            self.browsing = Some(i + 1);
        } else {
            let draft = std::mem::take(&mut self.draft);
            self.set_text(&draft);
            self.browsing = None;
        }
        true
    }

    /// Rows the text needs at `width` columns, wrapped, counted up to `max` (a long paste
    /// is not measured in full every frame).
    pub(crate) fn rows(&self, width: u16, max: u16) -> u16 {
        let w = usize::from(width).max(1);
        let max = usize::from(max.max(1));
        let mut rows = 0;
        for line in self.area.lines() {
            rows += wrap::width(line).max(1).div_ceil(w);
            if rows >= max {
                return max as u16;
            }
        }
        rows.max(1) as u16
    }

    /// Draws the editor; the cursor's screen position when `focused`.
    pub(crate) fn render(
        &mut self,
        area: Rect,
        buf: &mut Buffer,
        theme: &Theme,
        focused: bool,
    ) -> Option<(u16, u16)> {
        let text_style = theme.style(Slot::PromptText);
        self.area.set_style(text_style);
        self.area
            .set_placeholder_style(theme.style(Slot::PromptPlaceholder));
        // The app places the terminal cursor; the reversed cell shows it in any terminal.
        self.area.set_cursor_style(if focused {
            text_style.add_modifier(Modifier::REVERSED)
        } else {
            text_style
        });
        (&self.area).render(area, buf);
        if !focused || area.width == 0 || area.height == 0 {
            return None;
        }
        let cursor = self.area.screen_cursor();
        let (top, left) = self.area.scroll_offset();
        let row = cursor.row.checked_sub(usize::from(top))?;
        let col = cursor.col.checked_sub(usize::from(left))?;
        let x = area.x + u16::try_from(col).ok()?.min(area.width - 1);
        let y = area.y + u16::try_from(row).ok()?.min(area.height - 1);
        Some((x, y))
    }
}

#[cfg(test)]
mod tests {
    use crossterm::event::{KeyCode, KeyModifiers};

    use super::*;

    fn key(c: char) -> KeyEvent {
        KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)
    }

    fn typed(p: &mut Prompt, s: &str) {
        for c in s.chars() {
            p.input(key(c));
        }
    }

    #[test]
    fn typing_newline_and_take() {
        let mut p = Prompt::default();
        typed(&mut p, "ab");
        p.newline();
        typed(&mut p, "c");
        assert_eq!(p.text(), "ab\nc");
        assert_eq!(p.take().as_deref(), Some("ab\nc"));
        assert_eq!(p.text(), "");
        assert_eq!(p.take(), None, "empty prompts are not sent");
    }

    #[test]
    fn history_walks_back_and_restores_the_draft() {
        let mut p = Prompt::default();
        for s in ["one", "two", "two"] {
            typed(&mut p, s);
            p.take();
        }
        assert_eq!(
            p.history,
            ["one", "two"],
            "consecutive repeats are kept once"
        );
        typed(&mut p, "dra");
        assert!(p.history_prev());
        assert_eq!(p.text(), "two");
        assert!(p.history_prev());
        assert_eq!(p.text(), "one");
        assert!(!p.history_prev(), "no older entry");
        assert!(p.history_next());
        assert_eq!(p.text(), "two");
        assert!(p.history_next());
        assert_eq!(p.text(), "dra");
        assert!(!p.history_next());
    }

    #[test]
    fn up_moves_within_multiline_text_first() {
        let mut p = Prompt::default();
        typed(&mut p, "old");
        p.take();
        typed(&mut p, "a");
        p.newline();
        typed(&mut p, "b");
        assert!(p.history_prev());
        assert_eq!(p.text(), "a\nb", "moved to the first line, no history yet");
        assert!(p.history_prev());
        assert_eq!(p.text(), "old");
    }

    #[test]
    fn large_pastes_go_in_as_they_are() {
        let mut p = Prompt::default();
        let text = "line\twith tab\n".repeat(10_000);
        p.paste(&text);
        assert_eq!(p.text(), text);
        assert_eq!(p.rows(80, 12), 12);
        assert_eq!(Prompt::default().rows(80, 12), 1);
    }
}
