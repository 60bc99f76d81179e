//! Scrollback kept compactly. Lines leaving the emulator's screen are copied out of its grid
//! (24 bytes a cell, full width) into their text and style runs, trailing blanks dropped:
//! about a byte a cell for plain text. Capped by lines and by bytes.

use std::collections::VecDeque;

use super::{TermCell, TermColor};

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
}

/// One line of history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HistoryLine {
    /// The cells' text, in order (a wide character's second column adds nothing).
    text: Box<str>,
    /// Where each column's text starts in `text`, for lines that are not one byte per
    /// column; empty for those that are (ASCII without wide characters).
    columns: Box<[u32]>,
    /// Style runs: the first column of each and its style.
    runs: Box<[(u16, CellStyle)]>,
    /// Columns stored (trailing blanks are not).
    width: u16,
    /// The line continues on the next one (the program's text wrapped here).
    wrapped: bool,
}

/// Builds a [`HistoryLine`] cell by cell.
#[derive(Default)]
pub(crate) struct LineBuilder {
    text: String,
    columns: Vec<u32>,
    runs: Vec<(u16, CellStyle)>,
    width: u16,
    /// Whether every column so far is one byte.
    simple: bool,
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
        self.width += 1;
    }

    /// The line built; `wrapped` when it continues on the next.
    pub fn finish(&self, wrapped: bool) -> HistoryLine {
        HistoryLine {
            text: self.text.as_str().into(),
            columns: self.columns.as_slice().into(),
            runs: self.runs.as_slice().into(),
            width: self.width,
            wrapped,
        }
    }
}

impl HistoryLine {
    /// Memory the line takes (its heap parts and itself).
    fn bytes(&self) -> usize {
        std::mem::size_of::<Self>()
            + self.text.len()
            + self.columns.len() * 4
            + self.runs.len() * std::mem::size_of::<(u16, CellStyle)>()
    }

    /// Writes column `col` into `out` (a blank default cell past the stored width).
    pub fn cell_into(&self, col: u16, out: &mut TermCell) {
        out.text.clear();
        if col >= self.width {
            out.text.push(' ');
            CellStyle::default().apply(out);
            return;
        }
        let i = usize::from(col);
        let (start, end) = if self.columns.is_empty() {
            (i, i + 1)
        } else {
            let start = self.columns[i] as usize;
            let end = self
                .columns
                .get(i + 1)
                .map_or(self.text.len(), |e| *e as usize);
            (start, end)
        };
        out.text.push_str(self.text.get(start..end).unwrap_or(""));
        let run = self.runs.partition_point(|(first, _)| *first <= col);
        self.runs[run.saturating_sub(1)].1.apply(out);
    }

    /// The line's text, trailing blanks removed.
    pub fn text(&self) -> &str {
        self.text.trim_end()
    }

    /// Whether it continues on the next line.
    pub fn wrapped(&self) -> bool {
        self.wrapped
    }
}

/// Lines that left the screen, oldest first, within a limit of lines and of bytes.
#[derive(Debug, Default)]
pub(crate) struct History {
    lines: VecDeque<HistoryLine>,
    bytes: usize,
    max_lines: usize,
    max_bytes: usize,
}

impl History {
    /// Empty, keeping at most `max_lines` lines and `max_bytes` bytes.
    pub fn new(max_lines: usize, max_bytes: usize) -> Self {
        History {
            lines: VecDeque::new(),
            bytes: 0,
            max_lines,
            max_bytes,
        }
    }

    /// Adds the newest line, dropping the oldest beyond the limits.
    pub fn push(&mut self, line: HistoryLine) {
        self.bytes += line.bytes();
        self.lines.push_back(line);
        while self.lines.len() > self.max_lines || self.bytes > self.max_bytes {
            match self.lines.pop_front() {
                Some(old) => self.bytes -= old.bytes(),
                None => break,
            }
        }
    }

    /// How many lines.
    pub fn len(&self) -> usize {
        self.lines.len()
    }

    /// Line `i`, 0 the oldest.
    pub fn get(&self, i: usize) -> Option<&HistoryLine> {
        self.lines.get(i)
    }

    /// Memory the lines take.
    pub fn bytes(&self) -> usize {
        self.bytes
    }
}
