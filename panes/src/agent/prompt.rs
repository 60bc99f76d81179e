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

/// An edit of the prompt that a key binding asks for, as a shell's line editor has them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptEdit {
    /// Delete from the cursor to the line's start (kept for [`PromptEdit::Yank`]).
    KillToStart,
    /// Delete from the cursor to the line's end (kept for yanking).
    KillToEnd,
    /// Delete the word before the cursor (kept for yanking).
    KillWordBack,
    /// Insert the text deleted last.
    Yank,
    /// Move to the start of the word before the cursor.
    WordBack,
    /// Move to the end of the word after the cursor.
    WordForward,
    /// Undo the last change.
    Undo,
}

/// A search of the history being typed (Ctrl-R).
#[derive(Debug, Clone, Default)]
struct HistorySearch {
    query: String,
    /// The entry matched, by index in the history.
    found: Option<usize>,
    /// The text before the search started, restored when it is given up.
    before: String,
}

/// The editor and its history.
#[derive(Debug)]
pub(crate) struct Prompt {
    area: TextArea<'static>,
    history: Vec<String>,
    /// The history entry shown, while browsing.
    browsing: Option<usize>,
    /// What was typed before browsing started, restored after the newest entry.
    draft: String,
    search: Option<HistorySearch>,
}

impl Default for Prompt {
    fn default() -> Self {
        Prompt {
            area: editor(Vec::new()),
            history: Vec::new(),
            browsing: None,
            draft: String::new(),
            search: None,
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
    /// Shows `text` while the prompt is empty (the usual hint when `None`).
    pub(crate) fn set_placeholder(&mut self, text: Option<&str>) {
        self.area.set_placeholder_text(text.unwrap_or(PLACEHOLDER));
    }

    /// The text being edited.
    pub(crate) fn text(&self) -> String {
        self.area.lines().join("\n")
    }

    /// Whether nothing is written (not even a line break).
    pub(crate) fn is_empty(&self) -> bool {
        matches!(self.area.lines(), [only] if only.is_empty())
    }

    /// Removes the last `text` from the prompt (a pasted path that became an attachment).
    pub(crate) fn remove_last(&mut self, text: &str) -> bool {
        let all = self.text();
        let Some(at) = all.rfind(text) else {
            return false;
        };
        let rest = format!("{}{}", &all[..at], &all[at + text.len()..]);
        self.replace(&rest);
        true
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

    /// Applies `edit`; true when the text or the cursor changed.
    pub(crate) fn edit(&mut self, edit: PromptEdit) -> bool {
        let cursor = self.area.cursor();
        let modified = match edit {
            PromptEdit::KillToStart => self.area.delete_line_by_head(),
            PromptEdit::KillToEnd => self.area.delete_line_by_end(),
            PromptEdit::KillWordBack => self.area.delete_word(),
            PromptEdit::Yank => self.area.paste(),
            PromptEdit::Undo => self.area.undo(),
            PromptEdit::WordBack => {
                self.area.move_cursor(CursorMove::WordBack);
                false
            }
            PromptEdit::WordForward => {
                self.area.move_cursor(CursorMove::WordEnd);
                false
            }
        };
        if modified {
            self.browsing = None;
        }
        modified || self.area.cursor() != cursor
    }

    /// Empties the editor, the text kept for yanking (and undoing); false when it was empty.
    pub(crate) fn clear(&mut self) -> bool {
        if self.text().is_empty() {
            return false;
        }
        self.area.select_all();
        self.area.cut();
        self.browsing = None;
        true
    }

    /// The prompts remembered, oldest first.
    pub(crate) fn history(&self) -> &[String] {
        &self.history
    }

    /// Replaces the remembered prompts (oldest first), the newest kept within the limit.
    pub(crate) fn set_history(&mut self, mut entries: Vec<String>) {
        let excess = entries.len().saturating_sub(HISTORY_LIMIT);
        entries.drain(..excess);
        self.history = entries;
        self.browsing = None;
    }

    /// Remembers `text` as the newest prompt (one sent elsewhere in the project).
    pub(crate) fn remember(&mut self, text: &str) {
        if text.trim().is_empty() || self.history.last().is_some_and(|l| l == text) {
            return;
        }
        self.history.push(text.to_string());
        if self.history.len() > HISTORY_LIMIT {
            self.history.remove(0);
        }
    }

    /// Starts searching the history backwards (Ctrl-R), or goes to the next older match.
    pub(crate) fn search_back(&mut self) {
        match self.search.as_mut() {
            Some(search) => {
                let from = search.found.unwrap_or(self.history.len());
                let query = search.query.clone();
                if let Some(i) = find_back(&self.history, &query, from) {
                    self.show_found(i);
                }
            }
            None => {
                self.search = Some(HistorySearch {
                    before: self.text(),
                    ..HistorySearch::default()
                });
            }
        }
    }

    fn show_found(&mut self, i: usize) {
        let entry = self.history[i].clone();
        self.set_text(&entry);
        if let Some(search) = self.search.as_mut() {
            search.found = Some(i);
        }
    }

    /// What the history search shows: its query and whether it matched, while one is on.
    pub(crate) fn search_state(&self) -> Option<(&str, bool)> {
        let search = self.search.as_ref()?;
        Some((
            search.query.as_str(),
            search.found.is_some() || search.query.is_empty(),
        ))
    }

    /// A key while the history is searched: typing narrows it, Backspace widens it, Enter
    /// keeps the match in the editor, Esc gives the search up. True when the search took it.
    pub(crate) fn search_key(&mut self, key: KeyEvent) -> bool {
        use crossterm::event::{KeyCode, KeyModifiers};
        let Some(search) = self.search.as_mut() else {
            return false;
        };
        match key.code {
            KeyCode::Esc => {
                let before = std::mem::take(&mut search.before);
                self.search = None;
                self.set_text(&before);
            }
            KeyCode::Enter => self.search = None,
            KeyCode::Char('g' | 'c') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                let before = std::mem::take(&mut search.before);
                self.search = None;
                self.set_text(&before);
            }
            KeyCode::Backspace => {
                search.query.pop();
                self.research();
            }
            KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => {
                search.query.push(c);
                self.research();
            }
            // Anything else ends the search on the match and is the editor's.
            _ => {
                self.search = None;
                return false;
            }
        }
        true
    }

    /// Finds the query again from the newest entry.
    fn research(&mut self) {
        let Some(search) = self.search.as_mut() else {
            return;
        };
        let query = search.query.clone();
        match find_back(&self.history, &query, self.history.len()) {
            Some(i) if !query.is_empty() => self.show_found(i),
            _ => {
                search.found = None;
                let before = search.before.clone();
                self.set_text(&before);
            }
        }
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

    /// The cursor's line up to the cursor.
    pub(crate) fn line_before_cursor(&self) -> &str {
        let cursor = self.area.cursor();
        let (row, col) = (cursor.0, cursor.1);
        let line = self.area.lines().get(row).map_or("", String::as_str);
        let end = line.char_indices().nth(col).map_or(line.len(), |(i, _)| i);
        &line[..end]
    }

    /// Replaces the `chars` characters before the cursor with `text`.
    pub(crate) fn replace_before_cursor(&mut self, chars: usize, text: &str) {
        for _ in 0..chars {
            self.area.delete_char();
        }
        self.area.insert_str(text);
        self.browsing = None;
    }

    /// Inserts pasted text, its lines kept whatever their line ends (CR, LF, CRLF).
    pub(crate) fn paste(&mut self, text: &str) {
        // The editor splits on LF only: a CR-only paste would stay one line.
        self.area.insert_str(crate::paste::paste_lines(text));
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
        self.search = None;
        self.draft.clear();
        Some(text)
    }

    /// Up: the line above, or on the first line the previous prompt from the history.
    ///
    /// (A history search is left first, on its match.)
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

/// The newest entry before `before` holding `query` (case ignored when it has no capital).
fn find_back(history: &[String], query: &str, before: usize) -> Option<usize> {
    if query.is_empty() {
        return None;
    }
    let fold = !query.chars().any(char::is_uppercase);
    let query_folded = query.to_lowercase();
    history[..before.min(history.len())]
        .iter()
        .rposition(|entry| {
            if fold {
                entry.to_lowercase().contains(&query_folded)
            } else {
                entry.contains(query)
            }
        })
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
    fn line_editing_kills_yanks_moves_by_words_and_undoes() {
        let mut p = Prompt::default();
        typed(&mut p, "one two three");
        assert!(p.edit(PromptEdit::KillWordBack));
        assert_eq!(p.text(), "one two ");
        assert!(p.edit(PromptEdit::WordBack));
        assert!(p.edit(PromptEdit::KillToEnd));
        assert_eq!(p.text(), "one ");
        assert!(p.edit(PromptEdit::Yank));
        assert_eq!(p.text(), "one two ");
        assert!(p.edit(PromptEdit::KillToStart));
        assert_eq!(p.text(), "");
        assert!(p.edit(PromptEdit::Yank));
        assert_eq!(p.text(), "one two ");
        assert!(p.edit(PromptEdit::Undo));
        assert_eq!(p.text(), "");
        p.replace("alpha beta");
        p.area.move_cursor(CursorMove::Head);
        assert!(p.edit(PromptEdit::WordForward));
        let cursor = p.area.cursor();
        assert_eq!((cursor.0, cursor.1), (0, 4), "the end of the first word");
        assert!(p.clear());
        assert_eq!(p.text(), "");
        assert!(!p.clear(), "nothing left to clear");
        assert!(p.edit(PromptEdit::Yank));
        assert_eq!(
            p.text(),
            "alpha beta",
            "a cleared prompt can be yanked back"
        );
    }

    #[test]
    fn ctrl_r_finds_older_prompts_as_typed() {
        let mut p = Prompt::default();
        p.set_history(vec![
            "cargo test".into(),
            "git status".into(),
            "cargo build".into(),
        ]);
        typed(&mut p, "draft");
        p.search_back();
        assert_eq!(p.search_state(), Some(("", true)));
        for c in "cargo".chars() {
            assert!(p.search_key(key(c)));
        }
        assert_eq!(p.text(), "cargo build", "the newest match first");
        p.search_back();
        assert_eq!(p.text(), "cargo test", "Ctrl-R again: the next older");
        assert!(p.search_key(key('x')));
        assert_eq!(p.search_state(), Some(("cargox", false)));
        assert_eq!(p.text(), "draft", "no match shows what was typed");
        assert!(p.search_key(KeyEvent::from(crossterm::event::KeyCode::Backspace)));
        assert!(p.search_key(KeyEvent::from(crossterm::event::KeyCode::Enter)));
        assert_eq!(p.text(), "cargo build");
        assert_eq!(p.search_state(), None);
        p.search_back();
        for c in "GIT".chars() {
            p.search_key(key(c));
        }
        assert_eq!(
            p.search_state(),
            Some(("GIT", false)),
            "a capital matches case"
        );
        assert!(p.search_key(KeyEvent::from(crossterm::event::KeyCode::Esc)));
        assert_eq!(p.text(), "cargo build", "Esc restores what was there");
    }

    #[test]
    fn history_is_bounded_and_shared_prompts_are_remembered() {
        let mut p = Prompt::default();
        p.set_history((0..HISTORY_LIMIT + 10).map(|i| i.to_string()).collect());
        assert_eq!(p.history().len(), HISTORY_LIMIT);
        assert_eq!(p.history()[0], "10", "the oldest go");
        p.remember("elsewhere");
        p.remember("elsewhere");
        assert_eq!(p.history().last().map(String::as_str), Some("elsewhere"));
        assert_eq!(p.history().len(), HISTORY_LIMIT);
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

    #[test]
    fn a_paste_keeps_its_lines_whatever_their_ends() {
        for pasted in [
            "line one\rline two\rline three\rline four",
            "line one\r\nline two\r\nline three\r\nline four",
            "line one\nline two\rline three\r\nline four",
        ] {
            let mut p = Prompt::default();
            p.paste(pasted);
            assert_eq!(p.area.lines().len(), 4, "{pasted:?}");
            assert_eq!(p.text(), "line one\nline two\nline three\nline four");
            assert_eq!(p.rows(80, 12), 4, "{pasted:?}");
        }
        // Into the middle of a line: the first line joins the text before the cursor, the
        // last the text after it.
        let mut p = Prompt::default();
        typed(&mut p, "ab");
        p.input(KeyEvent::new(KeyCode::Left, KeyModifiers::NONE));
        p.paste("1\r2");
        assert_eq!(p.text(), "a1\n2b");
    }
}
