//! Copy mode: a keyboard (and mouse) cursor over lines of text, with vi motions, a
//! character or line selection, and incremental search with every match marked; what is
//! selected goes to the clipboard (OSC 52, through the app). The text is anything that
//! implements [`CopyText`]: a shell pane's history and screen, an agent pane's transcript.
//!
//! Lines are counted from the first (0) to the last; the view shows `view_size().0` of them
//! from [`CopyText::top_line`].

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use unicode_width::UnicodeWidthChar;

/// Lines of text copy mode moves over, and the view that shows them.
pub trait CopyText {
    /// Rows and columns of the view.
    fn view_size(&self) -> (u16, u16);
    /// How many lines there are.
    fn line_count(&self) -> usize;
    /// The text of line `line` as drawn (one character per cell, wide ones taking two).
    fn line_text(&self, line: usize) -> String;
    /// Whether line `line` goes on in the next (it was wrapped, not ended).
    fn line_wrapped(&self, line: usize) -> bool;
    /// The line on the view's first row.
    fn top_line(&self) -> usize;
    /// Scrolls the view so that `line` is on its first row.
    fn show_from(&mut self, line: usize);
    /// Lines dropped from the start since the text began (positions counted from the first
    /// line move up by that much).
    fn lines_dropped(&self) -> u64 {
        0
    }
    /// The text between `start` and `end` (line, column; both included, in order), or of
    /// their whole lines: lines joined by line breaks where they ended, not where they
    /// wrapped, trailing blanks removed. A text that knows its source (markdown a
    /// transcript drew) gives that instead.
    fn copy(&self, start: (usize, u16), end: (usize, u16), whole_lines: bool) -> String {
        drawn_text(self, start, end, whole_lines)
    }
}

/// [`CopyText::copy`] from the lines as drawn.
pub fn drawn_text<T: CopyText + ?Sized>(
    text: &T,
    (l1, c1): (usize, u16),
    (l2, c2): (usize, u16),
    whole_lines: bool,
) -> String {
    let mut out = String::new();
    for line in l1..=l2 {
        let (from, to) = if whole_lines {
            (0, u16::MAX)
        } else {
            (
                if line == l1 { c1 } else { 0 },
                if line == l2 { c2 } else { u16::MAX },
            )
        };
        let piece = columns_slice(&text.line_text(line), from, to);
        if line != l2 && text.line_wrapped(line) {
            // The line goes on: its blanks up to the wrap are text.
            out.push_str(&piece);
        } else {
            out.push_str(piece.trim_end());
            if line != l2 {
                out.push('\n');
            }
        }
    }
    out
}

/// The characters of `text` that start in columns `from..=to`.
pub fn columns_slice(text: &str, from: u16, to: u16) -> String {
    let (cols, _) = columns(text);
    cols.iter()
        .filter(|(c, _)| *c >= from && *c <= to)
        .map(|(_, ch)| *ch)
        .collect()
}

/// When a search ignores case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SearchCase {
    /// When the query has no capital letter.
    #[default]
    Smart,
    /// Always.
    Ignore,
    /// Never.
    Match,
}

/// What a key did in copy mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CopyOutcome {
    /// Still in copy mode.
    Stay,
    /// Left it, copying nothing.
    Exit,
    /// Left it, copying this text.
    Copy(String),
}

/// How a cell is marked in copy mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopyMark {
    /// The copy cursor.
    Cursor,
    /// Inside the selection.
    Selected,
    /// Part of a search match.
    Match,
}

/// A search being typed.
#[derive(Debug, Clone)]
struct Typing {
    query: String,
    backward: bool,
    /// Where the cursor was when the search started (Esc returns there).
    origin: (usize, u16),
}

/// Copy mode over one shell pane.
#[derive(Debug, Clone)]
pub struct CopyMode {
    line: usize,
    col: u16,
    anchor: Option<(usize, u16)>,
    whole_lines: bool,
    typing: Option<Typing>,
    /// The last search: its query and direction.
    last: Option<(String, bool)>,
    case: SearchCase,
    /// Said in the status (no match, copied…).
    message: Option<String>,
    /// Lines the history had dropped when positions were last counted.
    dropped: u64,
}

/// The columns each character of `text` starts at, and the column after the last.
fn columns(text: &str) -> (Vec<(u16, char)>, u16) {
    let mut col = 0u16;
    let mut out = Vec::with_capacity(text.len());
    for c in text.chars() {
        out.push((col, c));
        col = col.saturating_add(u16::try_from(c.width().unwrap_or(0)).unwrap_or(0));
    }
    (out, col)
}

/// Character classes for word motions: blank, word characters, other punctuation.
fn class(c: char) -> u8 {
    if c.is_whitespace() {
        0
    } else if c.is_alphanumeric() || c == '_' {
        1
    } else {
        2
    }
}

impl CopyMode {
    /// Copy mode with its cursor at `line`, `col` of `text`.
    pub fn at<T: CopyText + ?Sized>(text: &T, line: usize, col: u16, case: SearchCase) -> Self {
        CopyMode {
            line,
            col,
            anchor: None,
            whole_lines: false,
            typing: None,
            last: None,
            case,
            message: None,
            dropped: text.lines_dropped(),
        }
    }

    /// Moves every position kept (cursor, selection, a search's start) by `f`, when the
    /// lines were numbered anew (a transcript laid out again).
    pub fn remap(&mut self, f: impl Fn(usize) -> usize) {
        self.line = f(self.line);
        if let Some((line, _)) = self.anchor.as_mut() {
            *line = f(*line);
        }
        if let Some(t) = self.typing.as_mut() {
            t.origin.0 = f(t.origin.0);
        }
    }

    /// Whether a search is being typed (every key is its text).
    pub fn is_typing(&self) -> bool {
        self.typing.is_some()
    }

    /// Drops the selection, the cursor staying.
    pub fn clear_selection(&mut self) {
        self.anchor = None;
    }

    /// Where the cursor is: line and column.
    pub fn cursor(&self) -> (usize, u16) {
        (self.line, self.col)
    }

    /// Starts a character selection at view position `row`, `col` (a mouse press).
    pub fn press<T: CopyText + ?Sized>(&mut self, text: &T, row: u16, col: u16) {
        self.sync(text);
        self.line = top_line(text) + usize::from(row);
        self.col = col;
        self.clamp(text);
        self.anchor = Some((self.line, self.col));
        self.whole_lines = false;
    }

    /// Moves the selection's free end to view position `row`, `col` (a mouse drag),
    /// scrolling when the pointer is past the view's top or bottom row.
    pub fn drag<T: CopyText + ?Sized>(&mut self, text: &mut T, row: i32, col: u16) {
        self.sync(text);
        let top = top_line(text) as i64;
        self.line = usize::try_from(top + i64::from(row)).unwrap_or(0);
        self.col = col;
        self.clamp(text);
        self.follow(text);
    }

    /// Selects the word at view position `row`, `col` (a double click); false on a blank.
    pub fn select_word<T: CopyText + ?Sized>(&mut self, text: &T, row: u16, col: u16) -> bool {
        self.sync(text);
        let line = top_line(text) + usize::from(row);
        let (cols, _) = columns(&text.line_text(line));
        let Some(at) = cols
            .iter()
            .rposition(|(c, _)| *c <= col)
            .filter(|&i| class(cols[i].1) != 0)
        else {
            return false;
        };
        let kind = class(cols[at].1);
        let mut start = at;
        while start > 0 && class(cols[start - 1].1) == kind {
            start -= 1;
        }
        let mut end = at;
        while end + 1 < cols.len() && class(cols[end + 1].1) == kind {
            end += 1;
        }
        self.anchor = Some((line, cols[start].0));
        self.line = line;
        self.col = cols[end].0;
        self.whole_lines = false;
        true
    }

    /// Selects the whole line at view row `row` (a triple click).
    pub fn select_line<T: CopyText + ?Sized>(&mut self, text: &T, row: u16) {
        self.sync(text);
        self.line = top_line(text) + usize::from(row);
        self.col = 0;
        self.clamp(text);
        self.anchor = Some((self.line, 0));
        self.whole_lines = true;
    }

    /// Keeps the cursor, the selection and a search's start on the same text after the
    /// history dropped old lines (each drop moves every line number up by one).
    pub fn sync<T: CopyText + ?Sized>(&mut self, term: &T) {
        let dropped = term.lines_dropped();
        let shift = usize::try_from(dropped.saturating_sub(self.dropped)).unwrap_or(usize::MAX);
        self.dropped = dropped;
        if shift == 0 {
            return;
        }
        self.line = self.line.saturating_sub(shift);
        if let Some((line, _)) = self.anchor.as_mut() {
            *line = line.saturating_sub(shift);
        }
        if let Some(t) = self.typing.as_mut() {
            t.origin.0 = t.origin.0.saturating_sub(shift);
        }
    }

    /// Handles `key`; the view follows the cursor.
    pub fn key<T: CopyText + ?Sized>(&mut self, key: KeyEvent, term: &mut T) -> CopyOutcome {
        self.sync(term);
        self.message = None;
        if self.typing.is_some() {
            self.search_key(key, term);
            self.follow(term);
            return CopyOutcome::Stay;
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let (rows, _) = term.view_size();
        let page = usize::from(rows.max(2) - 1);
        let last = term.line_count().saturating_sub(1);
        match key.code {
            KeyCode::Char('q') => return CopyOutcome::Exit,
            KeyCode::Esc if self.anchor.is_some() => self.anchor = None,
            KeyCode::Esc => return CopyOutcome::Exit,
            KeyCode::Char('c') if ctrl => return CopyOutcome::Exit,
            KeyCode::Char('y') | KeyCode::Enter => {
                return match self.selected_text(term) {
                    Some(text) => CopyOutcome::Copy(text),
                    None => CopyOutcome::Exit,
                };
            }
            KeyCode::Char('v') if !ctrl => self.toggle_selection(false),
            KeyCode::Char('V') => self.toggle_selection(true),
            KeyCode::Char('h') | KeyCode::Left => self.col = self.col.saturating_sub(1),
            KeyCode::Char('l') | KeyCode::Right => self.col = self.col.saturating_add(1),
            KeyCode::Char('k') | KeyCode::Up => self.line = self.line.saturating_sub(1),
            KeyCode::Char('j') | KeyCode::Down => self.line = (self.line + 1).min(last),
            KeyCode::Char('u') if ctrl => self.line = self.line.saturating_sub(page / 2),
            KeyCode::Char('d') if ctrl => self.line = (self.line + page / 2).min(last),
            KeyCode::Char('b') if ctrl => self.line = self.line.saturating_sub(page),
            KeyCode::Char('f') if ctrl => self.line = (self.line + page).min(last),
            KeyCode::PageUp => self.line = self.line.saturating_sub(page),
            KeyCode::PageDown => self.line = (self.line + page).min(last),
            KeyCode::Char('g') | KeyCode::Home if !ctrl => {
                self.line = 0;
                self.col = 0;
            }
            KeyCode::Char('G') | KeyCode::End => {
                self.line = last;
                self.col = 0;
            }
            KeyCode::Char('H') => self.line = top_line(term),
            KeyCode::Char('M') => self.line = top_line(term) + usize::from(rows / 2),
            KeyCode::Char('L') => self.line = top_line(term) + usize::from(rows.max(1) - 1),
            KeyCode::Char('0') => self.col = 0,
            KeyCode::Char('^') => {
                let text = term.line_text(self.line);
                let (cols, _) = columns(&text);
                self.col = cols
                    .iter()
                    .find(|(_, c)| !c.is_whitespace())
                    .map_or(0, |(col, _)| *col);
            }
            KeyCode::Char('$') => {
                let (_, end) = columns(&term.line_text(self.line));
                self.col = end.saturating_sub(1);
            }
            KeyCode::Char('w') => self.word_forward(term),
            KeyCode::Char('b') => self.word_back(term),
            KeyCode::Char('e') => self.word_end(term),
            KeyCode::Char('/') | KeyCode::Char('?') => {
                self.typing = Some(Typing {
                    query: String::new(),
                    backward: key.code == KeyCode::Char('?'),
                    origin: (self.line, self.col),
                });
            }
            KeyCode::Char('n') | KeyCode::Char('N') => {
                if let Some((query, backward)) = self.last.clone() {
                    let backward = backward != (key.code == KeyCode::Char('N'));
                    if !self.find(term, &query, backward, true) {
                        self.message = Some(format!("no more matches for {query}"));
                    }
                }
            }
            _ => {}
        }
        self.clamp(term);
        self.follow(term);
        CopyOutcome::Stay
    }

    fn toggle_selection(&mut self, whole_lines: bool) {
        if self.anchor.is_some() && self.whole_lines == whole_lines {
            self.anchor = None;
        } else {
            self.anchor = Some((self.line, self.col));
            self.whole_lines = whole_lines;
        }
    }

    fn search_key<T: CopyText + ?Sized>(&mut self, key: KeyEvent, term: &mut T) {
        let Some(typing) = self.typing.as_mut() else {
            return;
        };
        match key.code {
            KeyCode::Esc => {
                (self.line, self.col) = typing.origin;
                self.typing = None;
            }
            KeyCode::Enter => {
                let typing = self.typing.take();
                if let Some(t) = typing.filter(|t| !t.query.is_empty()) {
                    self.last = Some((t.query, t.backward));
                }
            }
            KeyCode::Backspace => {
                typing.query.pop();
                self.incremental(term);
            }
            KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => {
                typing.query.push(c);
                self.incremental(term);
            }
            _ => {}
        }
    }

    /// Moves to the first match of the query being typed, from where the search started.
    fn incremental<T: CopyText + ?Sized>(&mut self, term: &T) {
        let Some(typing) = self.typing.clone() else {
            return;
        };
        (self.line, self.col) = typing.origin;
        if typing.query.is_empty() {
            return;
        }
        if !self.find(term, &typing.query, typing.backward, false) {
            self.message = Some(format!("no match for {}", typing.query));
        }
    }

    fn ignores_case(&self, query: &str) -> bool {
        match self.case {
            SearchCase::Ignore => true,
            SearchCase::Match => false,
            SearchCase::Smart => !query.chars().any(char::is_uppercase),
        }
    }

    /// Matches of `query` in line `line`: start and end columns.
    fn matches_in<T: CopyText + ?Sized>(
        &self,
        term: &T,
        line: usize,
        query: &str,
    ) -> Vec<(u16, u16)> {
        if query.is_empty() {
            return Vec::new();
        }
        let text = term.line_text(line);
        let fold = self.ignores_case(query);
        let (hay, needle) = if fold {
            (text.to_lowercase(), query.to_lowercase())
        } else {
            (text.clone(), query.to_string())
        };
        // Lowercasing can change lengths; columns are counted on the text searched.
        let (cols, end) = columns(&hay);
        let col_at = |byte: usize| -> u16 {
            let chars = hay[..byte].chars().count();
            cols.get(chars).map_or(end, |(c, _)| *c)
        };
        hay.match_indices(&needle)
            .map(|(at, m)| (col_at(at), col_at(at + m.len()).saturating_sub(1)))
            .collect()
    }

    /// Moves to the next match of `query` from the cursor (past it when `skip_current`);
    /// whether one was found. Wraps around the ends.
    fn find<T: CopyText + ?Sized>(
        &mut self,
        term: &T,
        query: &str,
        backward: bool,
        skip_current: bool,
    ) -> bool {
        let total = term.line_count();
        if total == 0 {
            return false;
        }
        for step in 0..=total {
            let line = if backward {
                (self.line + total - step % total) % total
            } else {
                (self.line + step) % total
            };
            let matches = self.matches_in(term, line, query);
            let found = if backward {
                matches.iter().rev().find(|(start, _)| {
                    step > 0 || *start < self.col || (!skip_current && *start == self.col)
                })
            } else {
                matches.iter().find(|(start, _)| {
                    step > 0 || *start > self.col || (!skip_current && *start == self.col)
                })
            };
            if let Some((start, _)) = found {
                self.line = line;
                self.col = *start;
                return true;
            }
        }
        false
    }

    fn word_forward<T: CopyText + ?Sized>(&mut self, term: &T) {
        let (cols, _) = columns(&term.line_text(self.line));
        let here = cols.iter().position(|(c, _)| *c >= self.col);
        if let Some(i) = here {
            let start = class(cols[i].1);
            let next = cols[i..]
                .iter()
                .skip_while(|(_, c)| class(*c) == start && start != 0)
                .find(|(_, c)| class(*c) != 0);
            if let Some((col, _)) = next {
                self.col = *col;
                return;
            }
        }
        // The next line's first word.
        if self.line + 1 < term.line_count() {
            self.line += 1;
            let (cols, _) = columns(&term.line_text(self.line));
            self.col = cols
                .iter()
                .find(|(_, c)| class(*c) != 0)
                .map_or(0, |(col, _)| *col);
        }
    }

    fn word_back<T: CopyText + ?Sized>(&mut self, term: &T) {
        let (cols, _) = columns(&term.line_text(self.line));
        let before: Vec<_> = cols.iter().filter(|(c, _)| *c < self.col).collect();
        let mut i = before.len();
        while i > 0 && class(before[i - 1].1) == 0 {
            i -= 1;
        }
        if i == 0 {
            if self.line > 0 && before.iter().all(|(_, c)| class(*c) == 0) {
                self.line -= 1;
                let (cols, _) = columns(&term.line_text(self.line));
                let mut j = cols.len();
                while j > 0 && class(cols[j - 1].1) == 0 {
                    j -= 1;
                }
                let kind = j.checked_sub(1).map(|k| class(cols[k].1));
                while j > 0 && Some(class(cols[j - 1].1)) == kind {
                    j -= 1;
                }
                self.col = cols.get(j).map_or(0, |(c, _)| *c);
            } else {
                self.col = 0;
            }
            return;
        }
        let kind = class(before[i - 1].1);
        while i > 0 && class(before[i - 1].1) == kind {
            i -= 1;
        }
        self.col = before[i].0;
    }

    fn word_end<T: CopyText + ?Sized>(&mut self, term: &T) {
        let (cols, _) = columns(&term.line_text(self.line));
        let after: Vec<_> = cols.iter().filter(|(c, _)| *c > self.col).collect();
        let mut i = 0;
        while i < after.len() && class(after[i].1) == 0 {
            i += 1;
        }
        if i == after.len() {
            return;
        }
        let kind = class(after[i].1);
        while i + 1 < after.len() && class(after[i + 1].1) == kind {
            i += 1;
        }
        self.col = after[i].0;
    }

    fn clamp<T: CopyText + ?Sized>(&mut self, term: &T) {
        let (_, cols) = term.view_size();
        self.line = self.line.min(term.line_count().saturating_sub(1));
        self.col = self.col.min(cols.saturating_sub(1));
    }

    /// Scrolls the view so the cursor's line shows.
    fn follow<T: CopyText + ?Sized>(&self, term: &mut T) {
        let (rows, _) = term.view_size();
        let rows = usize::from(rows.max(1));
        let top = top_line(term);
        if self.line < top {
            term.show_from(self.line);
        } else if self.line >= top + rows {
            term.show_from(self.line + 1 - rows);
        }
    }

    /// The selection's ends in order, when there is one.
    fn selection(&self) -> Option<((usize, u16), (usize, u16))> {
        let anchor = self.anchor?;
        let here = (self.line, self.col);
        Some(if anchor <= here {
            (anchor, here)
        } else {
            (here, anchor)
        })
    }

    /// The selected text (see [`CopyText::copy`]); `None` without a selection.
    pub fn selected_text<T: CopyText + ?Sized>(&self, term: &T) -> Option<String> {
        let (start, end) = self.selection()?;
        Some(term.copy(start, end, self.whole_lines))
    }

    /// How the cell at screen `row`, `col` is marked, if it is.
    pub fn mark<T: CopyText + ?Sized>(&self, term: &T, row: u16, col: u16) -> Option<CopyMark> {
        let line = top_line(term) + usize::from(row);
        if (line, col) == (self.line, self.col) {
            return Some(CopyMark::Cursor);
        }
        if let Some(((l1, c1), (l2, c2))) = self.selection() {
            let inside = if self.whole_lines {
                line >= l1 && line <= l2
            } else {
                (line, col) >= (l1, c1) && (line, col) <= (l2, c2)
            };
            if inside {
                return Some(CopyMark::Selected);
            }
        }
        None
    }

    /// The columns of matches of the current search in screen row `row`.
    pub fn matches_on_row<T: CopyText + ?Sized>(&self, term: &T, row: u16) -> Vec<(u16, u16)> {
        let query = match (&self.typing, &self.last) {
            (Some(t), _) => t.query.as_str(),
            (None, Some((q, _))) => q.as_str(),
            (None, None) => return Vec::new(),
        };
        self.matches_in(term, top_line(term) + usize::from(row), query)
    }

    /// The status line: where the cursor is, the search being typed, a message.
    pub fn status<T: CopyText + ?Sized>(&self, term: &T) -> String {
        if let Some(t) = &self.typing {
            let prompt = if t.backward { '?' } else { '/' };
            let note = self
                .message
                .as_deref()
                .map(|m| format!("  ({m})"))
                .unwrap_or_default();
            return format!("{prompt}{}{note}", t.query);
        }
        let what = match (self.anchor, self.whole_lines) {
            (Some(_), true) => "copy · lines",
            (Some(_), false) => "copy · selecting",
            (None, _) => "copy",
        };
        let mut status = format!("{what} [{}/{}]", self.line + 1, term.line_count());
        if let Some(m) = &self.message {
            status.push_str(" · ");
            status.push_str(m);
        }
        status
    }
}

/// The line shown on the first row of the view.
fn top_line<T: CopyText + ?Sized>(text: &T) -> usize {
    text.top_line()
}

#[cfg(test)]
#[path = "copy_tests.rs"]
mod tests;
