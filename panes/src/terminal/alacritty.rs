//! [`TerminalEmulator`] on `alacritty_terminal`: its `Term` holds the grid and modes; the
//! events it raises (title, replies, clipboard) are collected for the pane to take.

use std::sync::{Arc, Mutex};

use alacritty_terminal::event::{Event, EventListener};
use alacritty_terminal::grid::{Dimensions, Scroll};
use alacritty_terminal::index::{Column, Line};
use alacritty_terminal::term::cell::Flags;
use alacritty_terminal::term::{Config, Term, TermMode};
use alacritty_terminal::vte::ansi::{self, Processor};

use super::{CursorShape, TermCell, TermColor, TermCursor, TermModes, TerminalEmulator};

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
        let mut raised = self.0.lock().unwrap_or_else(|e| e.into_inner());
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
    parser: Processor,
    raised: Collector,
    /// The title last taken from the collector, kept to lend out.
    title: Option<String>,
    /// The scrollback limit in bytes, when it is given that way (else in lines).
    scrollback_bytes: Option<usize>,
    /// The scrollback limit in lines, with a limit in bytes.
    max_lines: usize,
}

impl std::fmt::Debug for AlacrittyEmulator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AlacrittyEmulator")
            .field("size", &self.size())
            .finish()
    }
}

impl AlacrittyEmulator {
    /// A `rows`×`cols` screen keeping `scrollback` lines of history.
    pub fn new(rows: u16, cols: u16, scrollback: usize) -> Self {
        let raised = Collector::default();
        let config = config(scrollback);
        let size = Size {
            rows: usize::from(rows.max(1)),
            cols: usize::from(cols.max(1)),
        };
        AlacrittyEmulator {
            term: Term::new(config, &size, raised.clone()),
            parser: Processor::new(),
            raised,
            title: None,
            scrollback_bytes: None,
            max_lines: scrollback,
        }
    }

    /// A `rows`×`cols` screen whose scrollback keeps at most `max_lines` lines and takes at
    /// most about `max_bytes` of memory: as many lines as fit at this width (a wider screen
    /// keeps fewer), recomputed on resize.
    pub fn with_scrollback_bytes(rows: u16, cols: u16, max_bytes: usize, max_lines: usize) -> Self {
        let mut term = Self::new(rows, cols, history_lines(max_bytes, cols).min(max_lines));
        term.scrollback_bytes = Some(max_bytes);
        term.max_lines = max_lines;
        term
    }

    fn raised(&self) -> std::sync::MutexGuard<'_, Raised> {
        self.raised.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The terminal's settings: `scrollback` lines of history; programs may ask for the kitty
/// keyboard protocol (keys are encoded for it when they do).
fn config(scrollback: usize) -> Config {
    Config {
        scrolling_history: scrollback,
        kitty_keyboard: true,
        ..Config::default()
    }
}

/// Lines of `cols` cells that fit in `max_bytes` (each cell of a history line is one grid
/// cell in memory).
fn history_lines(max_bytes: usize, cols: u16) -> usize {
    max_bytes
        / (usize::from(cols.max(1)) * std::mem::size_of::<alacritty_terminal::term::cell::Cell>())
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
        self.parser.advance(&mut self.term, bytes);
        let title = self.raised().title.clone();
        self.title = title;
    }

    fn resize(&mut self, rows: u16, cols: u16) {
        self.term.resize(Size {
            rows: usize::from(rows.max(1)),
            cols: usize::from(cols.max(1)),
        });
        if let Some(max_bytes) = self.scrollback_bytes {
            self.term
                .set_options(config(history_lines(max_bytes, cols).min(self.max_lines)));
        }
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
        let grid = self.term.grid();
        // What is shown starts `display_offset` lines up in the history.
        let line = Line(i32::from(row) - grid.display_offset() as i32);
        let cell = &grid[line][Column(usize::from(col))];
        let flags = cell.flags;
        if !flags.intersects(Flags::WIDE_CHAR_SPACER | Flags::LEADING_WIDE_CHAR_SPACER) {
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
        self.term.grid().history_size()
    }

    fn scroll_offset(&self) -> usize {
        self.term.grid().display_offset()
    }

    fn scroll_by(&mut self, delta: i32) {
        self.term.scroll_display(Scroll::Delta(delta));
    }

    fn scroll_to_bottom(&mut self) {
        self.term.scroll_display(Scroll::Bottom);
    }
}
