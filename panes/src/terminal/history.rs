//! Scrollback kept compactly. Lines leaving the emulator's screen are copied out of its grid
//! (24 bytes a cell, full width) into their text and style runs, trailing blanks dropped:
//! about a byte a cell for plain text. Capped by lines and by bytes.
//!
//! Lines are records packed into 64 KiB chunks (no allocation per line: a flood of short
//! lines costs a copy each); the oldest chunk goes once no kept line is in it.

use std::collections::VecDeque;

use super::{TermCell, TermColor};

/// Bytes of a chunk of records (a longer record gets a chunk of its own size).
const CHUNK: usize = 64 * 1024;

/// Bytes of one style run in a record: first column (2), foreground (4), background (4),
/// flags (1).
const RUN: usize = 11;

/// The look of a run of cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct CellStyle {
    pub fg: TermColor,
    pub bg: TermColor,
    pub flags: u8,
}

impl CellStyle {
    pub const BOLD: u8 = 1;
    pub const DIM: u8 = 1 << 1;
    pub const ITALIC: u8 = 1 << 2;
    pub const UNDERLINE: u8 = 1 << 3;
    pub const INVERSE: u8 = 1 << 4;
    pub const STRIKEOUT: u8 = 1 << 5;
    pub const WIDE: u8 = 1 << 6;

    fn apply(self, cell: &mut TermCell) {
        cell.fg = self.fg;
        cell.bg = self.bg;
        cell.bold = self.flags & Self::BOLD != 0;
        cell.dim = self.flags & Self::DIM != 0;
        cell.italic = self.flags & Self::ITALIC != 0;
        cell.underline = self.flags & Self::UNDERLINE != 0;
        cell.inverse = self.flags & Self::INVERSE != 0;
        cell.strikeout = self.flags & Self::STRIKEOUT != 0;
        cell.wide = self.flags & Self::WIDE != 0;
    }

    fn encode(self, col: u16, out: &mut Vec<u8>) {
        out.extend_from_slice(&col.to_le_bytes());
        out.extend_from_slice(&encode_color(self.fg));
        out.extend_from_slice(&encode_color(self.bg));
        out.push(self.flags);
    }

    fn decode(bytes: &[u8]) -> (u16, CellStyle) {
        let col = u16::from_le_bytes([bytes[0], bytes[1]]);
        let style = CellStyle {
            fg: decode_color(&bytes[2..6]),
            bg: decode_color(&bytes[6..10]),
            flags: bytes[10],
        };
        (col, style)
    }
}

fn encode_color(c: TermColor) -> [u8; 4] {
    match c {
        TermColor::Default => [0, 0, 0, 0],
        TermColor::Indexed(i) => [1, i, 0, 0],
        TermColor::Rgb(r, g, b) => [2, r, g, b],
    }
}

fn decode_color(b: &[u8]) -> TermColor {
    match b[0] {
        1 => TermColor::Indexed(b[1]),
        2 => TermColor::Rgb(b[1], b[2], b[3]),
        _ => TermColor::Default,
    }
}

/// Builds a line cell by cell, reusing its buffers from line to line.
#[derive(Default)]
pub(crate) struct LineBuilder {
    text: String,
    columns: Vec<u32>,
    runs: Vec<(u16, CellStyle)>,
    width: u16,
    /// Whether every column so far is one byte.
    simple: bool,
    /// A scratch buffer for one cell's text.
    pub cell: String,
    /// A scratch buffer for a line's bytes.
    pub bytes: Vec<u8>,
}

impl LineBuilder {
    /// Starts a line.
    pub fn start(&mut self) {
        self.text.clear();
        self.columns.clear();
        self.runs.clear();
        self.width = 0;
        self.simple = true;
    }

    /// Adds the next column: its text (empty for a wide character's second column) and
    /// style.
    pub fn push(&mut self, text: &str, style: CellStyle) {
        let start = self.text.len();
        if self.simple && text.len() != 1 {
            // From here on the columns need their offsets: fill them in for what came.
            self.simple = false;
            self.columns
                .extend(0..u32::try_from(start).unwrap_or(u32::MAX));
        }
        if !self.simple {
            self.columns.push(u32::try_from(start).unwrap_or(u32::MAX));
        }
        self.text.push_str(text);
        if self.runs.last().is_none_or(|(_, s)| *s != style) {
            self.runs.push((self.width, style));
        }
        self.width = self.width.saturating_add(1);
    }

    /// Adds columns of one byte each (ASCII text from a line of one byte a column), all in
    /// `style`.
    pub fn push_bytes(&mut self, bytes: &[u8], style: CellStyle) {
        let text = std::str::from_utf8(bytes).unwrap_or_default();
        if !self.simple {
            for c in text.chars() {
                self.push_char(c, style);
            }
            return;
        }
        self.text.push_str(text);
        if self.runs.last().is_none_or(|(_, s)| *s != style) {
            self.runs.push((self.width, style));
        }
        self.width = self
            .width
            .saturating_add(u16::try_from(text.len()).unwrap_or(u16::MAX));
    }

    /// Adds the next column holding one character.
    pub fn push_char(&mut self, c: char, style: CellStyle) {
        if self.simple && c.is_ascii() {
            self.text.push(c);
            if self.runs.last().is_none_or(|(_, s)| *s != style) {
                self.runs.push((self.width, style));
            }
            self.width = self.width.saturating_add(1);
        } else {
            let mut buf = [0u8; 4];
            self.push(c.encode_utf8(&mut buf), style);
        }
    }
}

/// Where a line's record is.
#[derive(Debug, Clone, Copy)]
struct LineRef {
    /// The chunk, counted since the history began.
    chunk: u64,
    offset: u32,
    text_len: u32,
    /// Column offsets stored (0 when the line is one byte per column).
    columns: u16,
    runs: u16,
    width: u16,
    wrapped: bool,
}

/// One line of history, borrowed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LineView<'a> {
    record: &'a [u8],
    line: LineRef,
}

impl LineView<'_> {
    fn text_bytes(&self) -> &[u8] {
        &self.record[..self.line.text_len as usize]
    }

    fn column_start(&self, i: usize) -> usize {
        let at = self.line.text_len as usize + i * 4;
        u32::from_le_bytes([
            self.record[at],
            self.record[at + 1],
            self.record[at + 2],
            self.record[at + 3],
        ]) as usize
    }

    fn run(&self, j: usize) -> (u16, CellStyle) {
        let at = self.line.text_len as usize + usize::from(self.line.columns) * 4 + j * RUN;
        CellStyle::decode(&self.record[at..at + RUN])
    }

    /// Writes column `col` into `out` (a blank default cell past the stored width).
    pub fn cell_into(&self, col: u16, out: &mut TermCell) {
        out.text.clear();
        if col >= self.line.width {
            out.text.push(' ');
            CellStyle::default().apply(out);
            return;
        }
        let i = usize::from(col);
        let (start, end) = if self.line.columns == 0 {
            (i, i + 1)
        } else {
            let end = if i + 1 < usize::from(self.line.columns) {
                self.column_start(i + 1)
            } else {
                self.line.text_len as usize
            };
            (self.column_start(i), end)
        };
        let text = self.text_bytes().get(start..end).unwrap_or_default();
        out.text.push_str(std::str::from_utf8(text).unwrap_or(" "));
        // The last run starting at or before the column.
        let (mut lo, mut hi) = (0, usize::from(self.line.runs));
        while lo + 1 < hi {
            let mid = (lo + hi) / 2;
            if self.run(mid).0 <= col {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        if self.line.runs > 0 {
            self.run(lo).1.apply(out);
        }
    }

    /// The line's text, trailing blanks removed unless it wrapped.
    pub fn text(&self) -> String {
        let text = String::from_utf8_lossy(self.text_bytes());
        // A wrapped line keeps its blanks: a space at the wrap is part of the text.
        if self.line.wrapped {
            text.into_owned()
        } else {
            text.trim_end().to_string()
        }
    }

    /// Whether it continues on the next line.
    pub fn wrapped(&self) -> bool {
        self.line.wrapped
    }

    /// Calls `f` with the text and style of each run, left to right, for a line of one byte
    /// a column.
    fn for_each_run(&self, mut f: impl FnMut(&[u8], CellStyle)) {
        let text = self.text_bytes();
        let runs = usize::from(self.line.runs);
        if runs == 0 {
            f(text, CellStyle::default());
            return;
        }
        for run in 0..runs {
            let (start, style) = self.run(run);
            let end = if run + 1 < runs {
                usize::from(self.run(run + 1).0)
            } else {
                text.len()
            };
            f(text.get(usize::from(start)..end).unwrap_or_default(), style);
        }
    }

    /// Calls `f` with each column's text and style, left to right.
    fn for_each_column(&self, mut f: impl FnMut(&str, CellStyle)) {
        let text = self.text_bytes();
        let runs = usize::from(self.line.runs);
        let next_start = |run: usize| {
            if run + 1 < runs {
                self.run(run + 1).0
            } else {
                u16::MAX
            }
        };
        let mut run = 0;
        let mut style = if runs > 0 {
            self.run(0).1
        } else {
            CellStyle::default()
        };
        let mut next = next_start(0);
        let columns = usize::from(self.line.columns);
        for col in 0..self.line.width {
            while col >= next {
                run += 1;
                style = self.run(run).1;
                next = next_start(run);
            }
            let i = usize::from(col);
            let (start, end) = if columns == 0 {
                (i, i + 1)
            } else if i + 1 < columns {
                (self.column_start(i), self.column_start(i + 1))
            } else {
                (self.column_start(i), text.len())
            };
            let column = text.get(start..end).unwrap_or_default();
            f(std::str::from_utf8(column).unwrap_or(" "), style);
        }
    }
}

/// Lines that left the screen, oldest first, within a limit of lines and of bytes.
#[derive(Debug, Default)]
pub(crate) struct History {
    lines: VecDeque<LineRef>,
    chunks: VecDeque<Vec<u8>>,
    /// The number of the first chunk in `chunks`.
    first_chunk: u64,
    /// Capacity of the chunks.
    chunk_bytes: usize,
    max_lines: usize,
    max_bytes: usize,
    /// Lines dropped since the history began (so positions counted from its oldest line can
    /// be kept on the same text).
    dropped: u64,
}

impl History {
    /// Empty, keeping at most `max_lines` lines and `max_bytes` bytes.
    pub fn new(max_lines: usize, max_bytes: usize) -> Self {
        History {
            max_lines,
            max_bytes,
            ..History::default()
        }
    }

    /// Adds the line `line` holds as the newest, dropping the oldest beyond the limits.
    pub fn push(&mut self, line: &LineBuilder, wrapped: bool) {
        if self.max_lines == 0 {
            return;
        }
        let columns = if line.simple { 0 } else { line.columns.len() };
        let size = line.text.len() + columns * 4 + line.runs.len() * RUN;
        let fits = self
            .chunks
            .back()
            .is_some_and(|c| c.capacity() - c.len() >= size);
        if !fits {
            let chunk = Vec::with_capacity(size.max(CHUNK));
            self.chunk_bytes += chunk.capacity();
            self.chunks.push_back(chunk);
        }
        let chunk_number = self.first_chunk + self.chunks.len() as u64 - 1;
        let Some(chunk) = self.chunks.back_mut() else {
            return;
        };
        let offset = u32::try_from(chunk.len()).unwrap_or(u32::MAX);
        chunk.extend_from_slice(line.text.as_bytes());
        if !line.simple {
            for c in &line.columns {
                chunk.extend_from_slice(&c.to_le_bytes());
            }
        }
        for (col, style) in &line.runs {
            style.encode(*col, chunk);
        }
        self.lines.push_back(LineRef {
            chunk: chunk_number,
            offset,
            text_len: u32::try_from(line.text.len()).unwrap_or(u32::MAX),
            columns: u16::try_from(columns).unwrap_or(u16::MAX),
            runs: u16::try_from(line.runs.len()).unwrap_or(u16::MAX),
            width: line.width,
            wrapped,
        });
        while self.lines.len() > self.max_lines || self.bytes() > self.max_bytes {
            if self.lines.pop_front().is_none() {
                break;
            }
            self.dropped += 1;
            self.drop_unused_chunks();
        }
    }

    /// Frees the oldest chunks no kept line is in (the newest one stays, being filled).
    fn drop_unused_chunks(&mut self) {
        let oldest_used = self
            .lines
            .front()
            .map_or(self.first_chunk + self.chunks.len() as u64 - 1, |l| l.chunk);
        while self.first_chunk < oldest_used && self.chunks.len() > 1 {
            if let Some(old) = self.chunks.pop_front() {
                self.chunk_bytes -= old.capacity();
            }
            self.first_chunk += 1;
        }
    }

    /// Wraps the lines again at `cols` columns, as the screen is after a resize: a line and
    /// the lines it continues on are joined and cut anew, a wide character that does not fit
    /// going whole to the next line.
    pub fn reflow(&mut self, cols: u16) {
        if cols == 0 || self.lines.is_empty() {
            return;
        }
        let mut out = History {
            max_lines: self.max_lines,
            max_bytes: self.max_bytes,
            dropped: self.dropped,
            ..History::default()
        };
        let mut row = LineBuilder::default();
        row.start();
        for i in 0..self.lines.len() {
            let Some(line) = self.get(i) else {
                continue;
            };
            if line.line.columns == 0 {
                // One byte a column: cut by runs, a slice at a time.
                line.for_each_run(|mut text, style| {
                    while !text.is_empty() {
                        if row.width >= cols {
                            out.push(&row, true);
                            row.start();
                        }
                        let room = usize::from(cols - row.width).min(text.len());
                        let (now, rest) = text.split_at(room);
                        row.push_bytes(now, style);
                        text = rest;
                    }
                });
                if !line.wrapped() {
                    out.push(&row, false);
                    row.start();
                }
                continue;
            }
            let mut after_wide = false;
            line.for_each_column(|text, style| {
                if text.is_empty() {
                    // The second column of a wide character goes with its first; an empty
                    // column anywhere else is the gap a wide character left at a row's end.
                    if after_wide {
                        row.push("", style);
                    }
                    after_wide = false;
                    return;
                }
                let wide = style.flags & CellStyle::WIDE != 0;
                let width = if wide { 2 } else { 1 };
                if row.width + width > cols && row.width > 0 {
                    out.push(&row, true);
                    row.start();
                }
                row.push(text, style);
                after_wide = wide;
            });
            if !line.wrapped() {
                out.push(&row, false);
                row.start();
            }
        }
        if row.width > 0 {
            // The last line goes on at the top of the screen.
            out.push(&row, true);
        }
        *self = out;
    }

    /// Drops every line (the program cleared the scrollback).
    pub fn clear(&mut self) {
        self.dropped += self.lines.len() as u64;
        self.first_chunk += self.chunks.len() as u64;
        self.lines.clear();
        self.chunks.clear();
        self.chunk_bytes = 0;
    }

    /// Lines dropped since the history began.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// How many lines.
    pub fn len(&self) -> usize {
        self.lines.len()
    }

    /// Line `i`, 0 the oldest.
    pub fn get(&self, i: usize) -> Option<LineView<'_>> {
        let line = *self.lines.get(i)?;
        let chunk = self
            .chunks
            .get(usize::try_from(line.chunk - self.first_chunk).ok()?)?;
        Some(LineView {
            record: chunk.get(line.offset as usize..)?,
            line,
        })
    }

    /// Memory the history takes: its chunks and the index of its lines.
    pub fn bytes(&self) -> usize {
        self.chunk_bytes + self.lines.capacity() * std::mem::size_of::<LineRef>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(text: &str, style: CellStyle) -> LineBuilder {
        let mut b = LineBuilder::default();
        b.start();
        for c in text.chars() {
            b.push_char(c, style);
        }
        b
    }

    #[test]
    fn lines_round_trip_with_styles_and_wide_characters() {
        let mut h = History::new(100, usize::MAX);
        let red = CellStyle {
            fg: TermColor::Indexed(1),
            bg: TermColor::Rgb(1, 2, 3),
            flags: CellStyle::BOLD,
        };
        let mut b = line("ab", red);
        b.push("漢", CellStyle::default());
        b.push("", CellStyle::default());
        b.push_char('z', CellStyle::default());
        h.push(&b, true);
        let v = h.get(0).unwrap();
        assert_eq!(v.text(), "ab漢z");
        assert!(v.wrapped());
        let mut cell = TermCell::default();
        v.cell_into(1, &mut cell);
        assert_eq!(
            (cell.text.as_str(), cell.fg, cell.bg, cell.bold),
            ("b", TermColor::Indexed(1), TermColor::Rgb(1, 2, 3), true)
        );
        v.cell_into(2, &mut cell);
        assert_eq!(
            (cell.text.as_str(), cell.fg, cell.bold),
            ("漢", TermColor::Default, false)
        );
        v.cell_into(3, &mut cell);
        assert_eq!(cell.text, "");
        v.cell_into(4, &mut cell);
        assert_eq!(cell.text, "z");
        v.cell_into(9, &mut cell);
        assert_eq!(cell.text, " ");
    }

    /// A history with those limits after 100,000 lines of 61 characters.
    fn filled(max_lines: usize, max_bytes: usize) -> History {
        let mut h = History::new(max_lines, max_bytes);
        for i in 0..100_000 {
            h.push(
                &line(
                    &format!("line {i:05} {}", "x".repeat(50)),
                    CellStyle::default(),
                ),
                false,
            );
        }
        h
    }

    #[test]
    fn limits_drop_the_oldest_lines_and_free_their_chunks() {
        let h = filled(1000, usize::MAX);
        assert_eq!(h.len(), 1000);
        assert!(h.get(0).unwrap().text().starts_with("line 99000"));
        assert!(h.bytes() < 200 * 1024, "old chunks freed: {}", h.bytes());
        let h = filled(usize::MAX, 256 * 1024);
        assert!(h.bytes() <= 256 * 1024);
        assert!(h.len() > 1500, "{}", h.len());
        assert!(h.get(h.len() - 1).unwrap().text().starts_with("line 99999"));
    }

    /// The rows of `h` as text, with `|` after each that wraps.
    fn rows(h: &History) -> Vec<String> {
        (0..h.len())
            .map(|i| {
                let v = h.get(i).unwrap();
                let text = String::from_utf8_lossy(v.text_bytes()).into_owned();
                if v.wrapped() { text + "|" } else { text }
            })
            .collect()
    }

    #[test]
    fn reflow_joins_wrapped_lines_and_cuts_them_at_the_new_width() {
        let mut h = History::new(100, usize::MAX);
        let red = CellStyle {
            fg: TermColor::Indexed(1),
            ..CellStyle::default()
        };
        let mut b = line("abcd", CellStyle::default());
        for c in "ef".chars() {
            b.push_char(c, red);
        }
        h.push(&b, true);
        h.push(&line("gh", CellStyle::default()), false);
        h.push(&line("0123456789", CellStyle::default()), false);
        h.reflow(4);
        assert_eq!(rows(&h), ["abcd|", "efgh", "0123|", "4567|", "89"]);
        let mut cell = TermCell::default();
        h.get(1).unwrap().cell_into(0, &mut cell);
        assert_eq!((cell.text.as_str(), cell.fg), ("e", TermColor::Indexed(1)));
        h.get(1).unwrap().cell_into(2, &mut cell);
        assert_eq!((cell.text.as_str(), cell.fg), ("g", TermColor::Default));
        // Wider again: the lines come back whole.
        h.reflow(20);
        assert_eq!(rows(&h), ["abcdefgh", "0123456789"]);
    }

    #[test]
    fn reflow_moves_a_wide_character_that_does_not_fit_whole() {
        let mut h = History::new(100, usize::MAX);
        let wide = CellStyle {
            flags: CellStyle::WIDE,
            ..CellStyle::default()
        };
        let mut b = line("ab", CellStyle::default());
        b.push("漢", wide);
        b.push("", wide);
        b.push_char('z', CellStyle::default());
        h.push(&b, false);
        h.reflow(3);
        assert_eq!(rows(&h), ["ab|", "漢z"]);
        let mut cell = TermCell::default();
        let second = h.get(1).unwrap();
        second.cell_into(0, &mut cell);
        assert!(cell.wide && cell.text == "漢");
        second.cell_into(1, &mut cell);
        assert_eq!(cell.text, "");
        second.cell_into(2, &mut cell);
        assert_eq!(cell.text, "z");
    }
}
