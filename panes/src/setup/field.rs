//! A one-line text field (a `String` and a cursor), optionally masked for secrets.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::style::Style;
use ratatui::text::Line;
use unicode_width::UnicodeWidthChar;

use crate::sanitize::{is_hidden, is_separator};
use crate::wrap::LineBuilder;

/// The most characters a field holds; typing or pasting beyond it is dropped.
pub(crate) const MAX_INPUT: usize = 4096;

/// The character a masked field shows for each character of its text.
const MASK: char = '•';

/// What an edit did to the field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Edit {
    /// The key is not an editing key.
    Ignored,
    /// The text or the cursor changed.
    Changed,
    /// Some input was dropped because the field is full.
    Full,
}

/// A one-line input: the text, the cursor (in characters), and whether to mask it.
#[derive(Clone, Default)]
pub(crate) struct Field {
    text: Vec<char>,
    cursor: usize,
    masked: bool,
}

/// True for characters a field accepts: nothing that could drive the terminal or hide text.
fn acceptable(c: char) -> bool {
    !(c.is_control() || is_hidden(c) || is_separator(c))
}

impl Field {
    /// An empty field; `masked` fields draw `•` for every character.
    pub(crate) fn new(masked: bool) -> Self {
        Field {
            text: Vec::new(),
            cursor: 0,
            masked,
        }
    }

    /// The text, trimmed of surrounding whitespace.
    pub(crate) fn value(&self) -> String {
        let text: String = self.text.iter().collect();
        text.trim().to_string()
    }

    /// Characters in the field.
    pub(crate) fn len(&self) -> usize {
        self.text.len()
    }

    /// Empties the field, overwriting nothing but forgetting the text.
    pub(crate) fn clear(&mut self) {
        self.text.clear();
        self.cursor = 0;
    }

    /// Inserts `text` at the cursor, dropping control characters and line breaks and
    /// whatever does not fit.
    pub(crate) fn insert(&mut self, text: &str) -> Edit {
        let mut full = false;
        let mut changed = false;
        for c in text.chars().filter(|&c| acceptable(c)) {
            if self.text.len() >= MAX_INPUT {
                full = true;
                break;
            }
            self.text.insert(self.cursor, c);
            self.cursor += 1;
            changed = true;
        }
        match (full, changed) {
            (true, _) => Edit::Full,
            (false, true) => Edit::Changed,
            (false, false) => Edit::Ignored,
        }
    }

    /// Applies an editing key: characters, Backspace, Delete, arrows, Home/End, Ctrl+U.
    pub(crate) fn key(&mut self, key: KeyEvent) -> Edit {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let before = (self.text.len(), self.cursor);
        match key.code {
            KeyCode::Char('u') if ctrl => {
                self.text.drain(..self.cursor);
                self.cursor = 0;
            }
            KeyCode::Char('a') if ctrl => self.cursor = 0,
            KeyCode::Char('e') if ctrl => self.cursor = self.text.len(),
            KeyCode::Char(_) if ctrl || key.modifiers.contains(KeyModifiers::ALT) => {
                return Edit::Ignored;
            }
            KeyCode::Char(c) => return self.insert(c.encode_utf8(&mut [0; 4])),
            KeyCode::Backspace if self.cursor > 0 => {
                self.cursor -= 1;
                self.text.remove(self.cursor);
            }
            KeyCode::Delete if self.cursor < self.text.len() => {
                self.text.remove(self.cursor);
            }
            KeyCode::Left => self.cursor = self.cursor.saturating_sub(1),
            KeyCode::Right => self.cursor = (self.cursor + 1).min(self.text.len()),
            KeyCode::Home => self.cursor = 0,
            KeyCode::End => self.cursor = self.text.len(),
            KeyCode::Backspace | KeyCode::Delete => {}
            _ => return Edit::Ignored,
        }
        if before == (self.text.len(), self.cursor) {
            Edit::Ignored
        } else {
            Edit::Changed
        }
    }

    /// The field drawn `width` columns wide: the visible part of the text (masked when the
    /// field is), padded with `style`, and the cursor's column in it.
    pub(crate) fn line(&self, width: usize, style: Style) -> (Line<'static>, usize) {
        let shown = |c: char| if self.masked { MASK } else { c };
        let col_width = |c: char| shown(c).width().unwrap_or(0);
        // Scroll so the cursor (and one column for it) stays in view.
        let room = width.saturating_sub(1);
        let mut start = self.cursor;
        let mut used = 0;
        while start > 0 {
            let w = col_width(self.text[start - 1]);
            if used + w > room {
                break;
            }
            used += w;
            start -= 1;
        }
        let mut b = LineBuilder::new(&[]);
        let mut cols = 0;
        for &c in &self.text[start..] {
            let w = col_width(c);
            if cols + w > width {
                break;
            }
            b.push_char(shown(c), style);
            cols += w;
        }
        b.pad_to(width, style);
        (b.finish(), used)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    fn text_of(line: &Line<'_>) -> String {
        line.spans.iter().map(|s| s.content.as_ref()).collect()
    }

    #[test]
    fn edits_at_the_cursor() {
        let mut f = Field::new(false);
        f.insert("helo");
        f.key(key(KeyCode::Left));
        f.key(key(KeyCode::Char('l')));
        assert_eq!(f.value(), "hello");
        f.key(key(KeyCode::Home));
        f.key(key(KeyCode::Delete));
        f.key(key(KeyCode::End));
        f.key(key(KeyCode::Backspace));
        assert_eq!(f.value(), "ell");
        assert_eq!(f.key(key(KeyCode::Right)), Edit::Ignored);
        f.key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
        assert_eq!(f.value(), "");
    }

    #[test]
    fn pastes_lose_controls_and_are_capped() {
        let mut f = Field::new(true);
        assert_eq!(f.insert("sk-\r\n1\x1b[2J\u{202E}2\t"), Edit::Changed);
        assert_eq!(f.value(), "sk-1[2J2");
        let huge = "x".repeat(MAX_INPUT * 3);
        assert_eq!(f.insert(&huge), Edit::Full);
        assert_eq!(f.len(), MAX_INPUT);
        assert_eq!(f.key(key(KeyCode::Char('y'))), Edit::Full);
    }

    #[test]
    fn masked_lines_show_bullets_and_scroll_to_the_cursor() {
        let mut f = Field::new(true);
        f.insert("secret-key-0123456789");
        let (line, cursor) = f.line(10, Style::default());
        let shown = text_of(&line);
        assert_eq!(shown, "•".repeat(9) + " ");
        assert_eq!(cursor, 9);
        let mut plain = Field::new(false);
        plain.insert("abc");
        let (line, cursor) = plain.line(6, Style::default());
        assert_eq!(text_of(&line), "abc   ");
        assert_eq!(cursor, 3);
        assert_eq!(plain.line(0, Style::default()).1, 0);
    }
}
