//! The terminal emulator behind shell panes, behind a small trait of March's own so the
//! implementation can be swapped: bytes in; cells, cursor, modes, title and scrollback out;
//! the replies a program asks for (cursor position reports, device attributes) handed back
//! to be written to its PTY.
//!
//! The implementation is `alacritty_terminal`, chosen by measurement: on the same streams it
//! parsed 1.11–4.23× faster than `vt100` (`benches/emulator_throughput.rs`,
//! `docs/BENCHMARKS.md`).

use std::ops::Range;

mod alacritty;
mod bounds;
mod history;
mod input;
mod render;

pub use alacritty::AlacrittyEmulator;
pub use input::{MouseReport, encode_key, encode_mouse, encode_paste};
pub use render::{TermPalette, draw_rows, draw_screen};

/// A colour as a program set it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TermColor {
    /// The terminal's default foreground or background.
    #[default]
    Default,
    /// One of the 256 indexed colours (0–15 are the named ANSI colours).
    Indexed(u8),
    /// A true colour.
    Rgb(u8, u8, u8),
}

/// One cell of the screen.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TermCell {
    /// What the cell shows: a character and any combining marks; empty for the second
    /// column of a wide character.
    pub text: String,
    /// Foreground colour.
    pub fg: TermColor,
    /// Background colour.
    pub bg: TermColor,
    /// Bold.
    pub bold: bool,
    /// Dim.
    pub dim: bool,
    /// Italic.
    pub italic: bool,
    /// Underlined.
    pub underline: bool,
    /// Foreground and background swapped.
    pub inverse: bool,
    /// Struck through.
    pub strikeout: bool,
    /// The first column of a character two columns wide.
    pub wide: bool,
}

impl TermCell {
    /// The cell's look (colours and attributes) without its text.
    pub fn clone_look(&self) -> TermCell {
        TermCell {
            text: String::new(),
            fg: self.fg,
            bg: self.bg,
            bold: self.bold,
            dim: self.dim,
            italic: self.italic,
            underline: self.underline,
            inverse: self.inverse,
            strikeout: self.strikeout,
            wide: self.wide,
        }
    }
}

/// The cursor's shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CursorShape {
    /// A block.
    Block,
    /// An underline.
    Underline,
    /// A vertical bar.
    Bar,
}

/// Where the cursor is and how it looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TermCursor {
    /// Row on the screen, from 0.
    pub row: u16,
    /// Column, from 0.
    pub col: u16,
    /// Whether the program shows it.
    pub visible: bool,
    /// Its shape.
    pub shape: CursorShape,
}

/// Modes a program switched on that change how March talks to it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TermModes {
    /// The alternate screen (full-screen programs: vim, less, htop).
    pub alternate_screen: bool,
    /// Cursor keys send application sequences (`ESC O A`).
    pub application_cursor: bool,
    /// Pasted text is wrapped in bracketed-paste markers.
    pub bracketed_paste: bool,
    /// The program wants mouse reports.
    pub mouse_reporting: bool,
    /// It wants reports of the mouse moving with a button held too.
    pub mouse_motion: bool,
    /// Mouse reports in SGR encoding.
    pub sgr_mouse: bool,
    /// The program wants focus in / out reports.
    pub focus_reports: bool,
    /// On the alternate screen, the wheel sends cursor keys (DECSET 1007).
    pub alternate_scroll: bool,
    /// The program asked for the kitty keyboard protocol (keys disambiguated as `CSI … u`).
    pub kitty_keys: bool,
}

/// Which cells of the screen changed since the damage was last taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Damage {
    /// Any of them: draw everything.
    Full,
    /// These parts of rows.
    Rows(Vec<RowSpan>),
}

/// Columns `start..end` of row `row`: what changed in it (an echo is a cell or two, and
/// drawing, comparing and writing them costs that, not the row's 200 cells).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowSpan {
    /// The row.
    pub row: u16,
    /// The first column.
    pub start: u16,
    /// One past the last column.
    pub end: u16,
}

/// A terminal emulator: a screen, its scrollback and its modes, driven by bytes.
pub trait TerminalEmulator {
    /// Processes bytes a program wrote.
    fn feed(&mut self, bytes: &[u8]);
    /// Changes the screen size (the caller tells the program, SIGWINCH).
    fn resize(&mut self, rows: u16, cols: u16);
    /// Rows and columns.
    fn size(&self) -> (u16, u16);
    /// Writes the cell at `row`, `col` of what is shown (scrolled back by
    /// [`Self::scroll_offset`]) into `out`, reusing its text buffer.
    fn cell_into(&self, row: u16, col: u16, out: &mut TermCell);
    /// Writes columns `cols` of row `row` of what is shown into `out`, one cell per column
    /// and at the column's index (reusing the cells' text buffers; the others are left as
    /// they were): the way to read many cells.
    fn row_into(&self, row: u16, cols: Range<u16>, out: &mut Vec<TermCell>) {
        let (_, width) = self.size();
        out.resize_with(usize::from(width), TermCell::default);
        for col in cols.start..cols.end.min(width) {
            self.cell_into(row, col, &mut out[usize::from(col)]);
        }
    }
    /// The cell at `row`, `col` of what is shown.
    fn cell(&self, row: u16, col: u16) -> TermCell {
        let mut cell = TermCell::default();
        self.cell_into(row, col, &mut cell);
        cell
    }
    /// The text of row `row` of what is shown, trailing blanks removed.
    fn row_text(&self, row: u16) -> String {
        let (_, cols) = self.size();
        let text: String = (0..cols).map(|c| self.cell(row, c).text).collect();
        text.trim_end().to_string()
    }
    /// The cursor.
    fn cursor(&self) -> TermCursor;
    /// The modes that matter to input and drawing.
    fn modes(&self) -> TermModes;
    /// The title the program set (OSC 0 / 2), if any.
    fn title(&self) -> Option<&str>;
    /// Bytes to write back to the program (answers to its queries), since the last call.
    fn take_replies(&mut self) -> Vec<u8>;
    /// Text the program asked to put on the clipboard (OSC 52), since the last call.
    fn take_clipboard(&mut self) -> Vec<String>;
    /// Lines of scrollback kept above the screen.
    fn scrollback_lines(&self) -> usize;
    /// Memory the scrollback takes, in bytes.
    fn scrollback_bytes(&self) -> usize;
    /// How far the view is scrolled back, in lines (0: the live screen).
    fn scroll_offset(&self) -> usize;
    /// Scrolls the view by `delta` lines (positive: back into history), clamped.
    fn scroll_by(&mut self, delta: i32);
    /// Returns the view to the live screen.
    fn scroll_to_bottom(&mut self);
    /// Lines dropped from the top of the history since it began (line numbers counted from
    /// the oldest line move by that much).
    fn lines_dropped(&self) -> u64 {
        0
    }
    /// The rows that changed since the last call (everything, when it cannot tell).
    fn take_damage(&mut self) -> Damage {
        Damage::Full
    }
    /// When the synchronized update the program is in (mode 2026) stops holding the screen
    /// back; `None` when it is in none. Until then [`Self::take_damage`] reports nothing.
    fn sync_deadline(&self) -> Option<std::time::Instant> {
        None
    }
    /// Ends a synchronized update whose deadline is past `now`, so what it held back is
    /// drawn; true when one ended.
    fn expire_sync(&mut self, _now: std::time::Instant) -> bool {
        false
    }
    /// Scrolls the view to `offset` lines back (clamped to the history).
    fn set_scroll_offset(&mut self, offset: usize) {
        self.scroll_to_bottom();
        self.scroll_by(i32::try_from(offset).unwrap_or(i32::MAX));
    }
    /// Lines of history and screen together (line 0 is the oldest history line).
    fn line_count(&self) -> usize {
        self.scrollback_lines() + usize::from(self.size().0)
    }
    /// The text of line `line` (history, then screen), trailing blanks removed unless the
    /// line wrapped (a space at the wrap is part of the text).
    fn line_text(&self, line: usize) -> String;
    /// Whether line `line` continues on the next (it was wrapped, not ended).
    fn line_wrapped(&self, line: usize) -> bool;
}

/// A terminal's history and screen are what copy mode moves over in a shell pane.
impl<E: TerminalEmulator + ?Sized> crate::copy::CopyText for E {
    fn view_size(&self) -> (u16, u16) {
        self.size()
    }
    fn line_count(&self) -> usize {
        TerminalEmulator::line_count(self)
    }
    fn line_text(&self, line: usize) -> String {
        TerminalEmulator::line_text(self, line)
    }
    fn line_wrapped(&self, line: usize) -> bool {
        TerminalEmulator::line_wrapped(self, line)
    }
    fn top_line(&self) -> usize {
        let (rows, _) = self.size();
        TerminalEmulator::line_count(self)
            .saturating_sub(usize::from(rows))
            .saturating_sub(self.scroll_offset())
    }
    fn show_from(&mut self, line: usize) {
        let (rows, _) = self.size();
        let total = TerminalEmulator::line_count(self);
        self.set_scroll_offset(total.saturating_sub(usize::from(rows)).saturating_sub(line));
    }
    fn lines_dropped(&self) -> u64 {
        TerminalEmulator::lines_dropped(self)
    }
}

/// Where copy mode starts in a terminal: at the program's cursor, or at the top of a view
/// scrolled back.
pub fn copy_start<E: TerminalEmulator + ?Sized>(term: &E) -> (usize, u16) {
    let top = crate::copy::CopyText::top_line(term);
    let cursor = term.cursor();
    if term.scroll_offset() > 0 {
        (top, 0)
    } else {
        (top + usize::from(cursor.row), cursor.col)
    }
}

#[cfg(test)]
mod tests;
