//! [`TerminalEmulator`] on `alacritty_terminal`: its `Term` holds the screen and modes; the
//! events it raises (title, replies, clipboard) are collected for the pane to take.
//!
//! History is not kept in the `Term` (full-width rows of 24-byte cells): bytes are fed in
//! small pieces and after each the lines that scrolled off the screen are moved into a
//! compact [`History`].

use parking_lot::Mutex;
use std::ops::Range;
use std::sync::Arc;
use std::time::{Duration, Instant};

use alacritty_terminal::event::{Event, EventListener};
use alacritty_terminal::grid::Dimensions;
use alacritty_terminal::index::{Column, Line};
use alacritty_terminal::term::cell::Flags;
use alacritty_terminal::term::{Config, Term, TermDamage, TermMode};
use alacritty_terminal::vte::ansi::{self, Processor, Timeout};

use super::bounds::{LineBounds, Start, UNKNOWN};
use super::history::{CellStyle, History, LineBuilder};
use super::{
    CursorShape, Damage, RowSpan, TermCell, TermColor, TermCursor, TermModes, TerminalEmulator,
};

/// Bytes fed to the `Term` at most at once. A byte scrolls a line at most, except the
/// sequences that scroll the screen by many (scroll-up, erase-display), which end a piece;
/// each of those scrolls at most a screen. So no piece scrolls more lines than the `Term`
/// keeps ([`TERM_HISTORY`]), and none is lost before it is moved to the history.
const FEED_PIECE: usize = 1024;

/// Lines the `Term` keeps until they are moved out: a piece's bytes and one screen of up to
/// 1,024 rows.
const TERM_HISTORY: usize = FEED_PIECE + 1024;

/// How long a synchronized update (mode 2026) may hold the screen back before it is drawn
/// anyway, as terminals do, so a program that never ends one cannot freeze its pane.
pub const SYNC_UPDATE_LIMIT: Duration = Duration::from_secs(1);

const BEGIN_SYNC: &[u8] = b"\x1b[?2026h";
const END_SYNC: &[u8] = b"\x1b[?2026l";
const FULL_RESET: &[u8] = b"\x1bc";

/// vte's synchronized-update buffering, turned off: bytes are always parsed as they come, so
/// the screen's text (and the history, and what `terminal/output` answers) is never held back
/// or parsed all at once; the update is honoured at drawing time instead
/// ([`AlacrittyEmulator::sync_deadline`]).
#[derive(Default)]
struct Unbuffered;

impl Timeout for Unbuffered {
    fn set_timeout(&mut self, _: Duration) {}
    fn clear_timeout(&mut self) {}
    fn pending_timeout(&self) -> bool {
        false
    }
}

/// What the terminal raised while processing bytes.
#[derive(Default)]
struct Raised {
    title: Option<String>,
    replies: Vec<u8>,
    clipboard: Vec<String>,
}

/// Collects the terminal's events.
#[derive(Clone, Default)]
struct Collector(Arc<Mutex<Raised>>);

impl EventListener for Collector {
    fn send_event(&self, event: Event) {
        let mut raised = self.0.lock();
        match event {
            Event::Title(title) => raised.title = Some(title),
            Event::ResetTitle => raised.title = None,
            Event::PtyWrite(text) => raised.replies.extend_from_slice(text.as_bytes()),
            Event::ClipboardStore(_, text) => raised.clipboard.push(text),
            _ => {}
        }
    }
}

/// The screen size as `alacritty_terminal` wants it.
struct Size {
    rows: usize,
    cols: usize,
}

impl Dimensions for Size {
    fn total_lines(&self) -> usize {
        self.rows
    }

    fn screen_lines(&self) -> usize {
        self.rows
    }

    fn columns(&self) -> usize {
        self.cols
    }
}

/// A terminal emulator on `alacritty_terminal`.
pub struct AlacrittyEmulator {
    term: Term<Collector>,
    parser: Processor<Unbuffered>,
    raised: Collector,
    /// When the synchronized update the program is in began: until it ends (or
    /// [`SYNC_UPDATE_LIMIT`] passes) what changed is not reported as damage.
    sync_since: Option<Instant>,
    /// The title last taken from the collector, kept to lend out.
    title: Option<String>,
    /// Lines that left the screen.
    history: History,
    /// How far the view is scrolled back into the history, in lines.
    offset: usize,
    builder: LineBuilder,
    /// How far the screen's lines were written, where plain output says.
    bounds: LineBounds,
    /// The start of a control sequence the last input ended in, fed with the next (so a
    /// sequence that ends a piece is seen whole).
    carry: Vec<u8>,
}

impl std::fmt::Debug for AlacrittyEmulator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AlacrittyEmulator")
            .field("size", &self.size())
            .finish()
    }
}

impl AlacrittyEmulator {
    /// Follows synchronized updates through `input` (whole sequences only): the last of a
    /// begin, an end or a full reset decides. A begin while one is open keeps its start, so
    /// a program repeating it cannot hold the screen past the limit.
    fn track_sync(&mut self, input: &[u8]) {
        // Each sequence starts with ESC: text alone (an echo) is not searched three times.
        if memchr::memchr(0x1b, input).is_none() {
            return;
        }
        let last = |pattern: &[u8]| memchr::memmem::rfind(input, pattern);
        let begin = last(BEGIN_SYNC);
        let end = last(END_SYNC).max(last(FULL_RESET));
        match (begin, end) {
            (Some(b), e) if e.is_none_or(|e| b > e) => {
                self.sync_since.get_or_insert_with(Instant::now);
            }
            (_, Some(_)) => self.sync_since = None,
            _ => {}
        }
    }

    /// A `rows`×`cols` screen keeping `scrollback` lines of history.
    pub fn new(rows: u16, cols: u16, scrollback: usize) -> Self {
        Self::with_scrollback_bytes(rows, cols, usize::MAX, scrollback)
    }

    /// A `rows`×`cols` screen whose history keeps at most `max_lines` lines taking at most
    /// `max_bytes` of memory.
    pub fn with_scrollback_bytes(rows: u16, cols: u16, max_bytes: usize, max_lines: usize) -> Self {
        let raised = Collector::default();
        let size = Size {
            rows: usize::from(rows.max(1)),
            cols: usize::from(cols.max(1)),
        };
        AlacrittyEmulator {
            term: Term::new(config(), &size, raised.clone()),
            parser: Processor::new(),
            sync_since: None,
            raised,
            title: None,
            history: History::new(max_lines, max_bytes),
            offset: 0,
            builder: LineBuilder::default(),
            bounds: LineBounds::default(),
            carry: Vec::new(),
        }
    }

    fn raised(&self) -> parking_lot::MutexGuard<'_, Raised> {
        self.raised.0.lock()
    }

    /// This emulator reading every line that leaves the screen whole (the reference the
    /// bounds are checked against).
    #[cfg(test)]
    pub(super) fn without_line_bounds(mut self) -> Self {
        self.bounds.off = true;
        self
    }

    /// How many lines left the screen with a known bound.
    #[cfg(test)]
    pub(super) fn lines_read_to_a_bound(&self) -> usize {
        self.bounds.known
    }

    /// The cells of history line `line`, up to the line's own width.
    #[cfg(test)]
    pub(super) fn history_cells(&self, line: usize) -> Vec<TermCell> {
        let Some(view) = self.history.get(line) else {
            return Vec::new();
        };
        (0..self.size().1)
            .map(|col| {
                let mut cell = TermCell::default();
                view.cell_into(col, &mut cell);
                cell
            })
            .collect()
    }

    /// Where the cursor and the screen stand, for [`LineBounds::follow`].
    fn plain_start(&self) -> Start {
        let grid = self.term.grid();
        let cursor = &grid.cursor;
        Start {
            row: usize::try_from(cursor.point.line.0).unwrap_or(usize::MAX),
            col: cursor.point.column.0,
            rows: grid.screen_lines(),
            cols: grid.columns(),
            plain_modes: !self
                .term
                .mode()
                .intersects(TermMode::ALT_SCREEN | TermMode::INSERT)
                && !cursor.input_needs_wrap
                && is_blank(&cursor.template),
        }
    }

    /// Moves the lines that scrolled off the screen into the history.
    fn absorb_history(&mut self) {
        let Self {
            term,
            history,
            builder,
            offset,
            bounds,
            ..
        } = self;
        let grid = term.grid();
        let scrolled = grid.history_size();
        if scrolled == 0 {
            return;
        }
        let mut known = bounds.take_scrolled(scrolled);
        for back in (1..=scrolled).rev() {
            let row = &grid[Line(-(back as i32))][..];
            let wrapped = row
                .last()
                .is_some_and(|c| c.flags.contains(Flags::WRAPLINE));
            // Past its bound a line is blank: those cells are not read.
            let bound = known.as_mut().and_then(Iterator::next).unwrap_or(UNKNOWN);
            let written = &row[..row.len().min(usize::from(bound))];
            // A wrapped line keeps its blanks: a space at the wrap is part of the text.
            let end = if wrapped {
                row.len()
            } else {
                content_end(written)
            };
            builder.start();
            let cells = &row[..end];
            if let Some(first) = cells.first()
                && uniform_ascii(cells, &mut builder.bytes)
            {
                // Most lines: printable ASCII in one look, copied as one run.
                let bytes = std::mem::take(&mut builder.bytes);
                builder.push_bytes(&bytes, style_of(first));
                builder.bytes = bytes;
                history.push(builder, wrapped);
                if *offset > 0 {
                    *offset = (*offset + 1).min(history.len());
                }
                continue;
            }
            for cell in cells {
                let style = style_of(cell);
                let plain = cell.extra.is_none()
                    && !cell
                        .flags
                        .intersects(Flags::WIDE_CHAR_SPACER | Flags::LEADING_WIDE_CHAR_SPACER);
                if plain {
                    builder.push_char(if cell.c.is_control() { ' ' } else { cell.c }, style);
                    continue;
                }
                let mut text = std::mem::take(&mut builder.cell);
                text.clear();
                push_cell_text(cell, &mut text);
                builder.push(&text, style);
                builder.cell = text;
            }
            history.push(builder, wrapped);
            if *offset > 0 {
                // A view scrolled back stays on the lines it shows.
                *offset = (*offset + 1).min(history.len());
            }
        }
        term.grid_mut().clear_history();
    }
}

/// The terminal's settings: the history it keeps between two pieces of input; programs may
/// ask for the kitty keyboard protocol (keys are encoded for it when they do).
fn config() -> Config {
    Config {
        scrolling_history: TERM_HISTORY,
        kitty_keyboard: true,
        ..Config::default()
    }
}

/// The length of the control sequence `bytes` ends in before its end, if short: a lone
/// `ESC`, or `ESC [` and parameters without a final byte.
fn unfinished_tail(bytes: &[u8]) -> usize {
    let window = &bytes[bytes.len().saturating_sub(32)..];
    let Some(at) = memchr::memrchr(0x1b, window) else {
        return 0;
    };
    let tail = &window[at..];
    let unfinished = match tail.get(1) {
        None => true,
        Some(b'[') => tail[2..].iter().all(|b| !(0x40..=0x7e).contains(b)),
        Some(_) => false,
    };
    if unfinished { tail.len() } else { 0 }
}

/// How many bytes of `bytes` to feed next: at most [`FEED_PIECE`], ending after the first
/// sequence that scrolls by a screen or clears the history (`CSI … S`, `CSI … J`, `ESC c`),
/// and before a control sequence the limit would cut (so a piece's end is seen whole).
fn next_piece(bytes: &[u8]) -> usize {
    let limit = bytes.len().min(FEED_PIECE);
    let piece = &bytes[..limit];
    for at in memchr::memchr_iter(0x1b, piece) {
        match piece.get(at + 1) {
            Some(b'c') => return at + 2,
            Some(b'[') => {}
            Some(_) => continue,
            None if at > 0 && limit < bytes.len() => return at,
            None => return limit,
        }
        // The final byte ends a CSI: the first in 0x40..=0x7e after its parameters.
        match piece[at + 2..]
            .iter()
            .position(|b| (0x40..=0x7e).contains(b))
        {
            Some(i) if matches!(piece[at + 2 + i], b'S' | b'J') => return at + 3 + i,
            Some(_) => {}
            None if at > 0 && limit < bytes.len() => return at,
            None => return limit,
        }
    }
    limit
}

/// Whether `cells` are all printable ASCII characters without marks, in the colours and
/// attributes of the first; their characters are put in `bytes` either way. (`&`, not `&&`:
/// one branch a cell.)
fn uniform_ascii(cells: &[alacritty_terminal::term::cell::Cell], bytes: &mut Vec<u8>) -> bool {
    bytes.clear();
    let Some(first) = cells.first() else {
        return true;
    };
    let look = first.flags | Flags::WRAPLINE;
    let mut uniform = true;
    for c in cells {
        let code = c.c as u32;
        uniform &= (code.wrapping_sub(0x20) < 0x5f)
            & (c.fg == first.fg)
            & (c.bg == first.bg)
            & ((c.flags | Flags::WRAPLINE) == look)
            & c.extra.is_none();
        bytes.push(code as u8);
    }
    uniform
}

/// Whether a cell shows nothing: a space with the default background and no marks. (`&`,
/// not `&&`: no branch per test, in the loop that runs over every scrolled-off cell.)
fn is_blank(c: &alacritty_terminal::term::cell::Cell) -> bool {
    (c.c == ' ')
        & (c.bg == ansi::Color::Named(ansi::NamedColor::Background))
        & c.extra.is_none()
        & !c.flags.intersects(
            Flags::INVERSE
                | Flags::ALL_UNDERLINES
                | Flags::STRIKEOUT
                | Flags::WIDE_CHAR_SPACER
                | Flags::LEADING_WIDE_CHAR_SPACER,
        )
}

/// The columns of `row` up to its last one that shows something. Rows are mostly blank
/// on the right: those are passed eight cells at a time.
fn content_end(row: &[alacritty_terminal::term::cell::Cell]) -> usize {
    let mut end = row.len();
    while end >= 8
        && row[end - 8..end]
            .iter()
            .fold(true, |all, c| all & is_blank(c))
    {
        end -= 8;
    }
    while end > 0 && is_blank(&row[end - 1]) {
        end -= 1;
    }
    end
}

fn style_of(cell: &alacritty_terminal::term::cell::Cell) -> CellStyle {
    let f = cell.flags;
    let mut flags = 0;
    for (on, bit) in [
        (f.contains(Flags::BOLD), CellStyle::BOLD),
        (f.contains(Flags::DIM), CellStyle::DIM),
        (f.contains(Flags::ITALIC), CellStyle::ITALIC),
        (f.intersects(Flags::ALL_UNDERLINES), CellStyle::UNDERLINE),
        (f.contains(Flags::INVERSE), CellStyle::INVERSE),
        (f.contains(Flags::STRIKEOUT), CellStyle::STRIKEOUT),
        (f.contains(Flags::WIDE_CHAR), CellStyle::WIDE),
    ] {
        if on {
            flags |= bit;
        }
    }
    CellStyle {
        fg: color(cell.fg),
        bg: color(cell.bg),
        flags,
    }
}

/// Appends what a cell shows as text: its character (a control character as a space) and
/// combining marks; nothing for the second column of a wide character.
fn push_cell_text(cell: &alacritty_terminal::term::cell::Cell, text: &mut String) {
    if !cell
        .flags
        .intersects(Flags::WIDE_CHAR_SPACER | Flags::LEADING_WIDE_CHAR_SPACER)
    {
        text.push(if cell.c.is_control() { ' ' } else { cell.c });
        if let Some(marks) = cell.zerowidth() {
            text.extend(marks);
        }
    }
}

/// Copies one cell of the grid into `out`.
fn grid_cell_into(cell: &alacritty_terminal::term::cell::Cell, out: &mut TermCell) {
    let flags = cell.flags;
    out.text.clear();
    if flags.contains(Flags::LEADING_WIDE_CHAR_SPACER) {
        // The last column of a row whose wide character went on to the next row: a blank.
        out.text.push(' ');
    } else if !flags.contains(Flags::WIDE_CHAR_SPACER) {
        out.text.push(cell.c);
        if let Some(marks) = cell.zerowidth() {
            out.text.extend(marks);
        }
    }
    out.fg = color(cell.fg);
    out.bg = color(cell.bg);
    out.bold = flags.contains(Flags::BOLD);
    out.dim = flags.contains(Flags::DIM);
    out.italic = flags.contains(Flags::ITALIC);
    out.underline = flags.intersects(Flags::ALL_UNDERLINES);
    out.inverse = flags.contains(Flags::INVERSE);
    out.strikeout = flags.contains(Flags::STRIKEOUT);
    out.wide = flags.contains(Flags::WIDE_CHAR);
}

fn color(c: ansi::Color) -> TermColor {
    match c {
        ansi::Color::Named(named) => {
            let index = named as usize;
            // The 16 ANSI colours (and their bright forms) are indexed; the rest name the
            // defaults (foreground, background, cursor…).
            u8::try_from(index)
                .ok()
                .filter(|i| *i < 16)
                .map_or(TermColor::Default, TermColor::Indexed)
        }
        ansi::Color::Spec(rgb) => TermColor::Rgb(rgb.r, rgb.g, rgb.b),
        ansi::Color::Indexed(i) => TermColor::Indexed(i),
    }
}

impl TerminalEmulator for AlacrittyEmulator {
    fn feed(&mut self, bytes: &[u8]) {
        let joined;
        let input = if self.carry.is_empty() {
            bytes
        } else {
            let mut all = std::mem::take(&mut self.carry);
            all.extend_from_slice(bytes);
            joined = all;
            &joined[..]
        };
        let (mut rest, unfinished) = input.split_at(input.len() - unfinished_tail(input));
        self.carry.extend_from_slice(unfinished);
        self.track_sync(rest);
        while !rest.is_empty() {
            let (piece, after) = rest.split_at(next_piece(rest));
            rest = after;
            let start = self.plain_start();
            self.bounds.follow(piece, start);
            self.parser.advance(&mut self.term, piece);
            self.absorb_history();
            // Erase-saved-lines (`clear`) and a full reset (`reset`) clear the scrollback,
            // which lives here, not in the Term; they end a piece, so what scrolled before
            // them is gone and what comes after is kept.
            if piece.ends_with(b"\x1b[3J") || piece.ends_with(b"\x1bc") {
                self.history.clear();
                self.offset = 0;
            }
        }
        // Cloned only when it changed: a title is set far more rarely than bytes come.
        let raised = self.raised.0.lock();
        if raised.title != self.title {
            let title = raised.title.clone();
            drop(raised);
            self.title = title;
        }
    }

    fn resize(&mut self, rows: u16, cols: u16) {
        let (_, was) = self.size();
        if cols.max(1) != was {
            // The screen reflows in the Term; the history, kept here, the same way.
            self.history.reflow(cols.max(1));
            self.offset = self.offset.min(self.history.len());
        }
        self.bounds.resized();
        self.term.resize(Size {
            rows: usize::from(rows.max(1)),
            cols: usize::from(cols.max(1)),
        });
        // Rows a shorter screen lost went to the top of the history.
        self.absorb_history();
    }

    fn size(&self) -> (u16, u16) {
        let rows = u16::try_from(self.term.screen_lines()).unwrap_or(u16::MAX);
        let cols = u16::try_from(self.term.columns()).unwrap_or(u16::MAX);
        (rows, cols)
    }

    fn cell_into(&self, row: u16, col: u16, out: &mut TermCell) {
        let (rows, cols) = self.size();
        out.text.clear();
        if row >= rows || col >= cols {
            let text = std::mem::take(&mut out.text);
            *out = TermCell {
                text,
                ..TermCell::default()
            };
            return;
        }
        // The view scrolled back shows history lines above the screen's.
        let offset = self.scroll_offset();
        if usize::from(row) < offset {
            let line = self.history.len() - offset + usize::from(row);
            if let Some(line) = self.history.get(line) {
                line.cell_into(col, out);
            }
            return;
        }
        let grid = self.term.grid();
        let line = Line(i32::from(row) - offset as i32);
        grid_cell_into(&grid[line][Column(usize::from(col))], out);
    }

    fn row_into(&self, row: u16, cols: Range<u16>, out: &mut Vec<TermCell>) {
        let (rows, width) = self.size();
        out.resize_with(usize::from(width), TermCell::default);
        let cols = usize::from(cols.start)..usize::from(cols.end.min(width));
        let offset = self.scroll_offset();
        if row >= rows || usize::from(row) < offset {
            for col in cols {
                self.cell_into(row, u16::try_from(col).unwrap_or(u16::MAX), &mut out[col]);
            }
            return;
        }
        let grid = self.term.grid();
        let cells = &grid[Line(i32::from(row) - offset as i32)][..];
        let cols = cols.start.min(cells.len())..cols.end.min(cells.len());
        for (cell, out) in cells[cols.clone()].iter().zip(out[cols].iter_mut()) {
            grid_cell_into(cell, out);
        }
    }

    fn cursor(&self) -> TermCursor {
        let point = self.term.grid().cursor.point;
        let shape = match self.term.cursor_style().shape {
            ansi::CursorShape::Underline => CursorShape::Underline,
            ansi::CursorShape::Beam => CursorShape::Bar,
            _ => CursorShape::Block,
        };
        TermCursor {
            row: u16::try_from(point.line.0.max(0)).unwrap_or(0),
            col: u16::try_from(point.column.0).unwrap_or(u16::MAX),
            visible: self.term.mode().contains(TermMode::SHOW_CURSOR),
            shape,
        }
    }

    fn modes(&self) -> TermModes {
        let mode = self.term.mode();
        TermModes {
            alternate_screen: mode.contains(TermMode::ALT_SCREEN),
            application_cursor: mode.contains(TermMode::APP_CURSOR),
            bracketed_paste: mode.contains(TermMode::BRACKETED_PASTE),
            mouse_reporting: mode.intersects(TermMode::MOUSE_MODE),
            mouse_motion: mode.intersects(TermMode::MOUSE_DRAG | TermMode::MOUSE_MOTION),
            sgr_mouse: mode.contains(TermMode::SGR_MOUSE),
            focus_reports: mode.contains(TermMode::FOCUS_IN_OUT),
            alternate_scroll: mode.contains(TermMode::ALTERNATE_SCROLL),
            kitty_keys: mode.contains(TermMode::DISAMBIGUATE_ESC_CODES),
        }
    }

    fn title(&self) -> Option<&str> {
        self.title.as_deref()
    }

    fn take_replies(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.raised().replies)
    }

    fn take_clipboard(&mut self) -> Vec<String> {
        std::mem::take(&mut self.raised().clipboard)
    }

    fn scrollback_lines(&self) -> usize {
        self.history.len()
    }

    fn scrollback_bytes(&self) -> usize {
        self.history.bytes()
    }

    fn scroll_offset(&self) -> usize {
        // Full-screen programs have no history to scroll.
        if self.term.mode().contains(TermMode::ALT_SCREEN) {
            0
        } else {
            self.offset
        }
    }

    fn scroll_by(&mut self, delta: i32) {
        let wanted = i64::try_from(self.offset).unwrap_or(i64::MAX) + i64::from(delta);
        self.offset = usize::try_from(wanted.max(0))
            .unwrap_or(0)
            .min(self.history.len());
    }

    fn scroll_to_bottom(&mut self) {
        self.offset = 0;
    }

    fn lines_dropped(&self) -> u64 {
        self.history.dropped()
    }

    fn take_damage(&mut self) -> Damage {
        if self.sync_deadline().is_some_and(|at| Instant::now() < at) {
            // Mid-update: what changed stays damaged, to be drawn when the update is done.
            return Damage::Rows(Vec::new());
        }
        self.sync_since = None;
        let width = self.term.columns();
        let damage = match self.term.damage() {
            TermDamage::Full => Damage::Full,
            TermDamage::Partial(lines) => {
                Damage::Rows(
                    lines
                        .filter_map(|l| {
                            // A column either side: a wide character's other half is drawn
                            // with it.
                            let start = l.left.saturating_sub(1);
                            let end = (l.right + 2).min(width);
                            Some(RowSpan {
                                row: u16::try_from(l.line).ok()?,
                                start: u16::try_from(start).ok()?,
                                end: u16::try_from(end).ok()?,
                            })
                        })
                        .collect(),
                )
            }
        };
        self.term.reset_damage();
        damage
    }

    fn sync_deadline(&self) -> Option<Instant> {
        self.sync_since.map(|since| since + SYNC_UPDATE_LIMIT)
    }

    fn expire_sync(&mut self, now: Instant) -> bool {
        let due = self.sync_deadline().is_some_and(|at| at <= now);
        if due {
            self.sync_since = None;
        }
        due
    }

    fn line_text(&self, line: usize) -> String {
        if let Some(old) = self.history.get(line) {
            return old.text();
        }
        let row = line - self.history.len();
        if row >= self.term.screen_lines() {
            return String::new();
        }
        let mut text = String::new();
        let cells = &self.term.grid()[Line(row as i32)][..];
        for cell in cells {
            push_cell_text(cell, &mut text);
        }
        // A wrapped line keeps its blanks: a space at the wrap is part of the text.
        if !cells
            .last()
            .is_some_and(|c| c.flags.contains(Flags::WRAPLINE))
        {
            text.truncate(text.trim_end().len());
        }
        text
    }

    fn line_wrapped(&self, line: usize) -> bool {
        if let Some(old) = self.history.get(line) {
            return old.wrapped();
        }
        let row = line - self.history.len();
        row < self.term.screen_lines()
            && self.term.grid()[Line(row as i32)][..]
                .last()
                .is_some_and(|c| c.flags.contains(Flags::WRAPLINE))
    }
}
