//! Copy mode over the transcript: its lines as laid out, numbered from the first block's
//! first line, for [`crate::copy::CopyMode`]; and what a selection copies, which is the
//! text as written where the selection covers it (a message's markdown source, a code
//! block's lines uncut) and the text as drawn elsewhere.

use std::ops::Range;

use ratatui::text::Line;

use crossterm::event::KeyEvent;

use super::blocks::MAX_RENDER_BYTES;
use super::render::Scrollback;
use super::stream::Laid;
use super::transcript::{Block, Role};
use super::{AgentPane, PaneEvent};
use crate::copy::{CopyMode, CopyOutcome, CopyText, SearchCase, columns_slice};
use crate::markdown::code_blocks;

/// The transcript's lines, as the last frame laid them out.
pub(crate) struct TranscriptLines<'a> {
    pub scroll: &'a mut Scrollback,
    pub blocks: &'a [Block],
}

/// A line's text as drawn.
pub(crate) fn line_string(line: &Line<'_>) -> String {
    line.spans.iter().map(|s| s.content.as_ref()).collect()
}

impl CopyText for TranscriptLines<'_> {
    fn view_size(&self) -> (u16, u16) {
        let rows = u16::try_from(self.scroll.viewport()).unwrap_or(u16::MAX);
        (rows.max(1), self.scroll.width().max(1))
    }

    fn line_count(&self) -> usize {
        self.scroll.total_lines()
    }

    fn line_text(&self, line: usize) -> String {
        self.scroll
            .locate(line)
            .and_then(|(block, at)| self.scroll.laid(block)?.get(at).map(line_string))
            .unwrap_or_default()
    }

    fn line_wrapped(&self, _line: usize) -> bool {
        false
    }

    fn top_line(&self) -> usize {
        self.scroll.top_line()
    }

    fn show_from(&mut self, line: usize) {
        self.scroll.show_from(line);
    }

    fn copy(&self, start: (usize, u16), end: (usize, u16), whole_lines: bool) -> String {
        let (Some((b1, o1)), Some((b2, o2))) =
            (self.scroll.locate(start.0), self.scroll.locate(end.0))
        else {
            return String::new();
        };
        let mut out = String::new();
        for b in b1..=b2.min(self.blocks.len().saturating_sub(1)) {
            let Some(laid) = self.scroll.laid(b) else {
                continue;
            };
            if laid.len() == 0 {
                continue;
            }
            let from = if b == b1 {
                (o1, if whole_lines { 0 } else { start.1 })
            } else {
                (0, 0)
            };
            let to = if b == b2 {
                (o2, if whole_lines { u16::MAX } else { end.1 })
            } else {
                (laid.len() - 1, u16::MAX)
            };
            let piece = block_copy(&self.blocks[b], laid, from, to);
            let piece = piece.trim_start_matches('\n');
            if piece.is_empty() {
                continue;
            }
            // Blocks drawn apart by a blank line are copied apart by one.
            let gap = laid
                .get(0)
                .is_some_and(|l| line_string(l).trim().is_empty());
            if !out.is_empty() {
                out.push_str(if gap { "\n\n" } else { "\n" });
            }
            out.push_str(piece);
        }
        out
    }
}

/// The rows of a block and what the selection covers of them.
struct Rows<'a> {
    laid: &'a Laid,
    from: (usize, u16),
    to: (usize, u16),
}

impl Rows<'_> {
    fn text(&self, row: usize) -> String {
        self.laid.get(row).map(line_string).unwrap_or_default()
    }

    /// The selected part of `row`, trailing blanks removed.
    fn selected(&self, row: usize) -> String {
        let from = if row == self.from.0 { self.from.1 } else { 0 };
        let to = if row == self.to.0 {
            self.to.1
        } else {
            u16::MAX
        };
        columns_slice(&self.text(row), from, to)
            .trim_end()
            .to_string()
    }

    /// Whether the selection takes all of `row`'s text.
    fn whole(&self, row: usize) -> bool {
        let text = self.text(row);
        let (first, last) = text_columns(&text);
        (self.from.0 < row || (self.from.0 == row && self.from.1 <= first))
            && (self.to.0 > row || (self.to.0 == row && self.to.1 >= last))
    }

    /// The selected rows of `range`.
    fn within(&self, range: &Range<usize>) -> Range<usize> {
        range.start.max(self.from.0)..range.end.min(self.to.0 + 1)
    }
}

/// The columns of the first and the last non-blank character of `text` (0, 0 when blank).
fn text_columns(text: &str) -> (u16, u16) {
    use unicode_width::UnicodeWidthChar;
    let mut col = 0u16;
    let (mut first, mut last) = (None, 0);
    for c in text.chars() {
        if !c.is_whitespace() {
            first.get_or_insert(col);
            last = col;
        }
        col = col.saturating_add(u16::try_from(c.width().unwrap_or(0)).unwrap_or(0));
    }
    (first.unwrap_or(0), last)
}

/// What the selection from `from` to `to` (row of the block, column) copies of `block`.
fn block_copy(block: &Block, laid: &Laid, from: (usize, u16), to: (usize, u16)) -> String {
    let rows = Rows { laid, from, to };
    let all = 0..laid.len();
    match block {
        Block::Message(m) if m.role != Role::User => markdown_copy(&m.text, &rows),
        Block::Message(m) if m.role == Role::User => {
            // The message as typed when the selection takes all of it.
            let body = first_text_row(&rows, &all).map_or(all.clone(), |r| r..all.end);
            let taken = rows.within(&body);
            if taken == body && rows.whole(body.start) && rows.whole(body.end - 1) {
                let before = drawn(&rows, all.start..body.start, "\n");
                return join_nonempty(&[before, m.text.trim_end_matches('\n').to_string()]);
            }
            drawn(&rows, rows.within(&all), "\n")
        }
        _ => drawn(&rows, rows.within(&all), "\n"),
    }
}

/// The first row of `range` with text.
fn first_text_row(rows: &Rows<'_>, range: &Range<usize>) -> Option<usize> {
    range.clone().find(|&r| !rows.text(r).trim().is_empty())
}

/// The selected text of `range` as drawn, rows joined by `joint`.
fn drawn(rows: &Rows<'_>, range: Range<usize>, joint: &str) -> String {
    let mut out = String::new();
    for (i, row) in range.enumerate() {
        let piece = rows.selected(row);
        if i > 0 {
            out.push_str(joint);
            if joint == " " {
                out.push_str(piece.trim_start());
                continue;
            }
        }
        out.push_str(&piece);
    }
    out
}

fn join_nonempty(parts: &[String]) -> String {
    parts
        .iter()
        .filter(|p| !p.is_empty())
        .cloned()
        .collect::<Vec<_>>()
        .join("\n")
}

/// One top-level markdown block (or a few run together): its rows and its source.
struct Segment {
    rows: Range<usize>,
    bytes: Range<usize>,
}

/// A message's markdown: segments the selection covers whole give their source, a code
/// block's rows their lines uncut, the rest what is drawn.
fn markdown_copy(text: &str, rows: &Rows<'_>) -> String {
    let laid = rows.laid;
    let capped = capped_len(text);
    // The line saying how much is not laid out counts with the last segment and takes the
    // rest of the text with it.
    let end_row = laid.len();
    let mut bounds: Vec<(usize, usize)> = laid.sources.clone();
    let head = bounds.first().map_or(0, |&(row, _)| row);
    if bounds.first().is_none_or(|&(_, byte)| byte > 0) {
        // The first block never has a recorded start: it starts with the text.
        let first_row = first_text_row(rows, &(0..end_row)).unwrap_or(0).min(head);
        bounds.insert(0, (first_row, 0));
    }
    let head_rows = 0..bounds[0].0;
    let mut segments: Vec<Segment> = Vec::new();
    for (i, &(row, byte)) in bounds.iter().enumerate() {
        let (next_row, next_byte) = bounds.get(i + 1).copied().unwrap_or((end_row, capped));
        if next_row > row {
            segments.push(Segment {
                rows: row..next_row,
                bytes: byte.min(capped)..next_byte.min(capped).max(byte.min(capped)),
            });
        } else if let Some(last) = segments.last_mut() {
            // Blocks that drew nothing of their own join the one before.
            last.bytes.end = next_byte.min(capped);
        }
    }
    if let Some(last) = segments.last_mut()
        && rows.to.0 + 1 >= end_row
        && capped < text.len()
    {
        last.bytes.end = text.len();
    }
    let mut out: Vec<String> = Vec::new();
    let head_taken = rows.within(&head_rows);
    if !head_taken.is_empty() {
        out.push(drawn(rows, head_taken, "\n"));
    }
    // Consecutive whole segments give one stretch of source, blank lines included.
    let mut source: Option<Range<usize>> = None;
    let flush = |source: &mut Option<Range<usize>>, out: &mut Vec<String>| {
        if let Some(range) = source.take() {
            let piece = text.get(range).unwrap_or_default();
            out.push(piece.trim_matches('\n').trim_end().to_string());
        }
    };
    for seg in &segments {
        let taken = rows.within(&seg.rows);
        if taken.is_empty() {
            continue;
        }
        let src = text.get(seg.bytes.clone()).unwrap_or_default();
        let code = code_rows(src, &seg.rows);
        let content = seg
            .rows
            .clone()
            .filter(|&r| !rows.text(r).trim().is_empty())
            .collect::<Vec<_>>();
        let (Some(&first), Some(&last)) = (content.first(), content.last()) else {
            continue;
        };
        let only_code = code
            .as_ref()
            .is_some_and(|(range, _)| rows.from.0 >= range.start && rows.to.0 < range.end);
        let whole = taken.start <= first
            && taken.end > last
            && rows.whole(first)
            && rows.whole(last)
            && !only_code;
        if whole {
            let range = source.get_or_insert(seg.bytes.start..seg.bytes.start);
            range.end = seg.bytes.end;
            continue;
        }
        flush(&mut source, &mut out);
        out.push(partial(rows, seg, src, taken, code.as_ref()));
    }
    flush(&mut source, &mut out);
    out.retain(|p| !p.is_empty());
    out.join("\n")
}

/// The bytes of the text a message's layout shows.
fn capped_len(text: &str) -> usize {
    let mut end = text.len().min(MAX_RENDER_BYTES);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    end
}

/// The rows a segment's closing code block is drawn on, and its lines as written: code is
/// never wrapped, one row a line, at the segment's end.
fn code_rows(src: &str, rows: &Range<usize>) -> Option<(Range<usize>, Vec<String>)> {
    let trimmed = src.trim_end();
    let fenced = trimmed.ends_with("```") || trimmed.ends_with("~~~");
    if !fenced {
        return None;
    }
    let code = code_blocks(src).pop()?;
    let lines: Vec<String> = code
        .strip_suffix('\n')
        .unwrap_or(&code)
        .split('\n')
        .map(str::to_string)
        .collect();
    let start = rows.end.checked_sub(lines.len())?.max(rows.start);
    Some((start..rows.end, lines))
}

/// A segment the selection takes part of: code rows whole as their lines, paragraphs' rows
/// joined where they wrapped, anything else as drawn.
fn partial(
    rows: &Rows<'_>,
    seg: &Segment,
    src: &str,
    taken: Range<usize>,
    code: Option<&(Range<usize>, Vec<String>)>,
) -> String {
    if let Some((code_range, lines)) = code {
        let mut out = Vec::new();
        let before = taken.start..taken.end.min(code_range.start);
        if !before.is_empty() {
            out.push(drawn(rows, before, "\n"));
        }
        for row in taken.start.max(code_range.start)..taken.end {
            let line = lines.get(row - code_range.start);
            match line {
                Some(line) if rows.whole(row) => out.push(line.clone()),
                _ => out.push(rows.selected(row)),
            }
        }
        return out.join("\n");
    }
    let joint = if is_paragraph(src) { " " } else { "\n" };
    let _ = seg;
    drawn(rows, taken, joint)
}

/// Whether markdown `src` starts with a paragraph (rows of it are wrapped text).
fn is_paragraph(src: &str) -> bool {
    let line = src.trim_start_matches('\n');
    if line.starts_with("    ") || line.starts_with('\t') {
        return false;
    }
    let t = line.trim_start();
    let Some(c) = t.chars().next() else {
        return false;
    };
    if matches!(c, '#' | '>' | '|' | '`' | '~') {
        return false;
    }
    if matches!(c, '-' | '*' | '+') && t[1..].starts_with([' ', '\t']) {
        return false;
    }
    let digits = t.chars().take_while(char::is_ascii_digit).count();
    !(digits > 0 && t[digits..].starts_with(['.', ')']))
}

/// Copy mode and the mouse in the pane.
impl AgentPane {
    /// Starts copy mode at the last line shown (vi keys move, `v` selects, `y` copies).
    pub fn enter_copy_mode(&mut self) -> PaneEvent {
        self.start_copy(true)
    }

    /// Starts copy mode; `keep_all` lays out the whole transcript (the keys can go
    /// anywhere; a mouse press needs only what shows, until it drags).
    fn start_copy(&mut self, keep_all: bool) -> PaneEvent {
        if self.copy.is_none() {
            self.scroll.keep_all(keep_all);
            let lines = TranscriptLines {
                scroll: &mut self.scroll,
                blocks: self.transcript.blocks(),
            };
            let (rows, _) = lines.view_size();
            let last = lines.line_count().saturating_sub(1);
            let line = (lines.top_line() + usize::from(rows) - 1).min(last);
            self.copy = Some(CopyState {
                mode: CopyMode::at(&lines, line, 0, self.search_case),
                by_mouse: false,
                pressed: None,
            });
        }
        PaneEvent::Redraw
    }

    /// Whether copy mode is on.
    pub fn in_copy_mode(&self) -> bool {
        self.copy.is_some()
    }

    /// Sets when copy mode's search ignores case.
    pub fn set_search_case(&mut self, case: SearchCase) {
        self.search_case = case;
    }

    /// Copy mode's status line, for tests.
    #[cfg(test)]
    pub(crate) fn copy_status_for_tests(&mut self) -> String {
        self.copy_status().unwrap_or_default()
    }

    /// Ends copy mode; the view follows the end again, unless the mouse started it (the
    /// view stays where the selection was made).
    pub(crate) fn leave_copy_mode(&mut self) {
        if let Some(state) = self.copy.take() {
            self.scroll.keep_all(false);
            if !state.by_mouse {
                self.scroll.scroll_to_bottom();
            }
        }
    }

    /// A key in copy mode; `o` expands or collapses the block under the cursor.
    pub(crate) fn copy_key(&mut self, key: KeyEvent) -> PaneEvent {
        let Some(state) = self.copy.as_mut() else {
            return PaneEvent::None;
        };
        if key.code == crossterm::event::KeyCode::Char('o')
            && key.modifiers.is_empty()
            && !state.mode.is_typing()
        {
            let line = state.mode.cursor().0;
            return match self.scroll.locate(line) {
                Some((block, _)) if self.toggle_block(block) => PaneEvent::Redraw,
                _ => PaneEvent::None,
            };
        }
        let mut lines = TranscriptLines {
            scroll: &mut self.scroll,
            blocks: self.transcript.blocks(),
        };
        match state.mode.key(key, &mut lines) {
            CopyOutcome::Stay => PaneEvent::Redraw,
            CopyOutcome::Exit => {
                self.leave_copy_mode();
                PaneEvent::Redraw
            }
            CopyOutcome::Copy(text) => {
                self.leave_copy_mode();
                PaneEvent::Copy(text)
            }
        }
    }

    /// The transcript row and column under screen position `x`, `y` (rows above or below
    /// the transcript are negative or past its height).
    fn transcript_cell(&self, x: u16, y: u16) -> (i32, u16) {
        let area = self.scroll.area();
        (
            i32::from(y) - i32::from(area.y),
            x.saturating_sub(area.x).min(area.width.saturating_sub(1)),
        )
    }

    /// The left button went down at `x`, `y` (`clicks`: 2 for a double click, 3 for a
    /// triple): one starts a selection, two copy the word there, three the line.
    pub fn mouse_press(&mut self, x: u16, y: u16, clicks: u8) -> PaneEvent {
        let area = self.scroll.area();
        if !area.contains(ratatui::layout::Position::new(x, y))
            || self.picker.is_some()
            || self.tree.is_some()
            || !self.permissions.is_empty()
        {
            return PaneEvent::Click { x, y };
        }
        let by_mouse = self.copy.is_none();
        if by_mouse {
            self.start_copy(false);
        }
        let (row, col) = self.transcript_cell(x, y);
        let row = u16::try_from(row).unwrap_or(0);
        let Some(state) = self.copy.as_mut() else {
            return PaneEvent::None;
        };
        state.by_mouse |= by_mouse;
        let lines = TranscriptLines {
            scroll: &mut self.scroll,
            blocks: self.transcript.blocks(),
        };
        match clicks {
            1 => {
                state.mode.press(&lines, row, col);
                state.pressed = Some((x, y, false));
                PaneEvent::Redraw
            }
            n => {
                state.pressed = None;
                let chosen = if n == 2 {
                    state.mode.select_word(&lines, row, col)
                } else {
                    state.mode.select_line(&lines, row);
                    true
                };
                let text = chosen
                    .then(|| state.mode.selected_text(&lines))
                    .flatten()
                    .filter(|t| !t.is_empty());
                self.finish_mouse(text)
            }
        }
    }

    /// The pointer moved with the left button down: the selection follows it.
    pub fn mouse_drag(&mut self, x: u16, y: u16) -> PaneEvent {
        let Some(state) = self.copy.as_mut() else {
            return PaneEvent::None;
        };
        let Some(pressed) = state.pressed.as_mut() else {
            return PaneEvent::None;
        };
        pressed.2 = true;
        // A drag may scroll past what shows: every line gets its number.
        self.scroll.keep_all(true);
        let area = self.scroll.area();
        let row = i32::from(y) - i32::from(area.y);
        let col = x.saturating_sub(area.x).min(area.width.saturating_sub(1));
        let mut lines = TranscriptLines {
            scroll: &mut self.scroll,
            blocks: self.transcript.blocks(),
        };
        state.mode.drag(&mut lines, row, col);
        PaneEvent::Redraw
    }

    /// The left button came up: after a drag the selection is copied; a plain click is
    /// the app's to act on.
    pub fn mouse_release(&mut self, x: u16, y: u16) -> PaneEvent {
        let Some(state) = self.copy.as_mut() else {
            return PaneEvent::None;
        };
        match state.pressed.take() {
            Some((_, _, true)) => {
                let lines = TranscriptLines {
                    scroll: &mut self.scroll,
                    blocks: self.transcript.blocks(),
                };
                let text = state.mode.selected_text(&lines).filter(|t| !t.is_empty());
                self.finish_mouse(text)
            }
            Some((px, py, false)) => {
                if state.by_mouse {
                    self.leave_copy_mode();
                } else {
                    // In copy mode a click moves the cursor; it selects nothing.
                    state.mode.clear_selection();
                }
                // A click on a block's first row expands or collapses it.
                if let Some(block) = self.header_at(px, py)
                    && self.toggle_block(block)
                {
                    return PaneEvent::Redraw;
                }
                PaneEvent::Click { x: px, y: py }
            }
            None => {
                let _ = (x, y);
                PaneEvent::None
            }
        }
    }

    /// The block whose first row (after its gap) the last frame drew at `x`, `y`.
    fn header_at(&self, x: u16, y: u16) -> Option<usize> {
        let area = self.scroll.area();
        if !area.contains(ratatui::layout::Position::new(x, y)) {
            return None;
        }
        let line = self.scroll.top_line() + usize::from(y - area.y);
        let (block, at) = self.scroll.locate(line)?;
        let laid = self.scroll.laid(block)?;
        let first = (0..laid.len()).find(|&i| {
            laid.get(i)
                .is_some_and(|l| !line_string(l).trim().is_empty())
        })?;
        (at == first).then_some(block)
    }

    /// A selection made with the mouse is copied; copy mode started by the mouse ends.
    fn finish_mouse(&mut self, text: Option<String>) -> PaneEvent {
        if self.copy.as_ref().is_some_and(|s| s.by_mouse) {
            self.leave_copy_mode();
        }
        match text {
            Some(text) => PaneEvent::Copy(text),
            None => PaneEvent::Redraw,
        }
    }
}

/// Copy mode in a pane.
#[derive(Debug)]
pub(crate) struct CopyState {
    pub mode: CopyMode,
    /// Started by a mouse press: ends when the selection is copied.
    pub by_mouse: bool,
    /// Where the left button went down, and whether it moved since.
    pub pressed: Option<(u16, u16, bool)>,
}
