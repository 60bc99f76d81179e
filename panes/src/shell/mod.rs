//! The shell pane: a program (the user's shell) on a PTY of its own, shown through the
//! terminal emulator; keys, pastes and the mouse passed to it as it expects them; its
//! history scrolled with the wheel or keys.

mod agent_shell;
mod output;
mod pty;
mod read_ahead;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::thread::JoinHandle;
use std::time::Duration;

use crossterm::event::{KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use alacritty_terminal::sync::FairMutex;

use crate::chrome::pane_block;
pub use crate::copy::{CopyMark, CopyMode, CopyOutcome, SearchCase};
use crate::sanitize::sanitize_line;
use crate::scroll::Scroll;
use crate::terminal::{
    AlacrittyEmulator, Damage, MouseReport, RowSpan, TermPalette, draw_rows, draw_screen,
    encode_key, encode_mouse, encode_paste,
};
use crate::theme::{Slot, Theme};
use crate::wrap::truncate;
pub use agent_shell::{AgentShellView, CommandEntry, Commands};
use output::Viewing;
pub use output::{OutputReader, PtyOutput, ReadOutcome};
pub use pty::{ExitInfo, SharedTerminal};

/// What a key did in a shell pane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShellKey {
    /// It went to the program.
    Sent,
    /// It did something in the pane (copy mode) or nothing.
    Handled,
    /// Copy mode ended copying this text.
    Copy(String),
}

/// Something a shell pane's threads tell the app (which then looks at the pane).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShellNotice {
    /// The program wrote output (said once until the pane is looked at).
    Output,
    /// The program exited.
    Exited,
}

/// How a shell pane tells the app about its program; called from the pane's threads.
pub type Wake = Arc<dyn Fn(ShellNotice) + Send + Sync>;

/// Why a shell pane could not start.
#[derive(Debug, thiserror::Error)]
pub enum ShellError {
    /// No PTY could be opened.
    #[error("cannot open a terminal: {0}")]
    Pty(String),
    /// The program could not be started.
    #[error("cannot start {program}: {reason}")]
    Spawn {
        /// The program.
        program: String,
        /// Why.
        reason: String,
    },
}

/// What a shell pane runs, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellSpec {
    /// The program.
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// The directory it starts in.
    pub cwd: PathBuf,
    /// Variables set besides March's own environment.
    pub env: Vec<(String, String)>,
    /// Lines of history kept at most.
    pub scrollback_lines: usize,
    /// Bytes of history kept at most.
    pub scrollback_bytes: usize,
    /// Whether the program may set the clipboard (OSC 52).
    pub osc52: bool,
    /// When copy mode's search ignores case.
    pub search_case: SearchCase,
}

impl ShellSpec {
    /// The user's shell (`$SHELL`, else `/bin/sh`) in `cwd`, with default limits.
    pub fn user_shell(cwd: &Path) -> Self {
        let program = std::env::var("SHELL")
            .ok()
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "/bin/sh".to_string());
        ShellSpec {
            program,
            args: Vec::new(),
            cwd: cwd.to_path_buf(),
            env: Vec::new(),
            scrollback_lines: 10_000,
            scrollback_bytes: 32 << 20,
            osc52: true,
            search_case: SearchCase::Smart,
        }
    }
}

/// What changed in a shell pane since the app last looked.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ShellUpdate {
    /// Text the program put on the clipboard (OSC 52), when allowed.
    pub clipboard: Vec<String>,
    /// The program exited, with this status.
    pub exited: Option<ExitInfo>,
}

/// A shell pane.
pub struct ShellPane {
    spec: ShellSpec,
    term: SharedTerminal,
    pty: Option<pty::Pty>,
    /// Set by the reader when output arrives; cleared when the app looks.
    viewing: Arc<Viewing>,
    wake: Wake,
    /// Where each program's output is read.
    reader: OutputReader,
    /// How the program ended, once the app was told.
    exited: Option<ExitInfo>,
    /// The inner size last drawn (the PTY's size).
    size: (u16, u16),
    /// Where the screen was last drawn, for mouse positions.
    screen: Rect,
    palette: Option<(String, TermPalette)>,
    /// Copy mode, while it is on.
    copy: Option<CopyMode>,
    /// Where the program's exit is reported, kept when the PTY is hung up.
    exit: Option<Arc<parking_lot::Mutex<Option<ExitInfo>>>>,
    /// The directory the program was last seen in.
    last_dir: parking_lot::Mutex<Option<PathBuf>>,
    /// The screen as last drawn, so a frame redraws only the rows that changed.
    drawn: Option<Buffer>,
    /// The program's title when the border was last drawn.
    title_drawn: Option<String>,
}

impl std::fmt::Debug for ShellPane {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShellPane")
            .field("program", &self.spec.program)
            .field("cwd", &self.spec.cwd)
            .field("pid", &self.pid())
            .finish()
    }
}

/// Rows and columns a pane's screen starts with, before it is first drawn.
const INITIAL_SIZE: (u16, u16) = (24, 80);

impl ShellPane {
    /// Starts `spec`'s program on a new PTY, its output read where `reader` says; `wake` is
    /// called (from other threads, or the reader's) when it writes output or exits.
    pub fn spawn(
        spec: ShellSpec,
        wake: Wake,
        reader: OutputReader,
    ) -> Result<ShellPane, ShellError> {
        let (rows, cols) = INITIAL_SIZE;
        let term: SharedTerminal = Arc::new(FairMutex::new(Box::new(
            AlacrittyEmulator::with_scrollback_bytes(
                rows,
                cols,
                spec.scrollback_bytes,
                spec.scrollback_lines,
            ),
        )));
        let mut pane = ShellPane {
            spec,
            term,
            pty: None,
            viewing: Arc::default(),
            wake,
            reader,
            exited: None,
            size: (rows, cols),
            screen: Rect::default(),
            palette: None,
            copy: None,
            exit: None,
            last_dir: parking_lot::Mutex::new(None),
            drawn: None,
            title_drawn: None,
        };
        pane.start()?;
        Ok(pane)
    }

    fn start(&mut self) -> Result<(), ShellError> {
        let mut env = vec![
            ("TERM".to_string(), "xterm-256color".to_string()),
            ("COLORTERM".to_string(), "truecolor".to_string()),
            ("TERM_PROGRAM".to_string(), "march".to_string()),
        ];
        env.extend(self.spec.env.iter().cloned());
        let command = pty::PtyCommand {
            program: &self.spec.program,
            args: &self.spec.args,
            cwd: &self.spec.cwd,
            env: &env,
            rows: self.size.0,
            cols: self.size.1,
        };
        let pty = pty::Pty::spawn(
            &command,
            self.term.clone(),
            self.viewing.clone(),
            self.wake.clone(),
            &self.reader,
        )?;
        self.exit = Some(pty.exit_handle());
        self.pty = Some(pty);
        Ok(())
    }

    /// Starts the program again after it exited, on a cleared screen, in the directory
    /// it was last in.
    pub fn restart(&mut self) -> Result<(), ShellError> {
        let Some(ended) = self.exited.take() else {
            return Ok(());
        };
        // The program is gone, so its last directory is the one last seen.
        if let Some(dir) = self.last_dir.lock().clone() {
            self.spec.cwd = dir;
        }
        if let Some(old) = self.pty.take() {
            drop(old.hangup(Duration::ZERO));
        }
        // A separator, so the old output stays above.
        self.term.lock().feed(b"\r\n\x1b[0m");
        let started = self.start();
        if started.is_err() {
            // Still ended: the mark stays and Enter can try again.
            self.exited = Some(ended);
        }
        started
    }

    /// The emulator, shared (for benchmarks and the agent shell).
    pub fn terminal(&self) -> SharedTerminal {
        self.term.clone()
    }

    /// The program's process id, while it runs.
    pub fn pid(&self) -> Option<i32> {
        self.pty.as_ref().and_then(pty::Pty::pid)
    }

    /// The name of the job running in the foreground of the pane's terminal when it is not
    /// the pane's own program (the shell), as `ps` shows it: `vim`, `cargo`. Read from
    /// `/proc`; `None` when the shell itself waits for input, or on error.
    pub fn foreground_job(&self) -> Option<String> {
        let pid = self.pid()?;
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // `pid (comm) state ppid pgrp session tty_nr tpgid …`: after the last ')'.
        let fields: Vec<&str> = stat
            .get(stat.rfind(')')? + 1..)?
            .split_whitespace()
            .collect();
        let foreground: i32 = fields.get(5)?.parse().ok()?;
        if foreground <= 0 || foreground == pid {
            return None;
        }
        let comm = std::fs::read_to_string(format!("/proc/{foreground}/comm")).ok()?;
        Some(crate::sanitize::sanitize_line(comm.trim()).into_owned())
    }

    /// The directory the program is in now (where it was last seen, else where it started).
    pub fn current_dir(&self) -> PathBuf {
        let mut last = self.last_dir.lock();
        if let Some(now) = self.pty.as_ref().and_then(pty::Pty::current_dir) {
            *last = Some(now);
        }
        last.clone().unwrap_or_else(|| self.spec.cwd.clone())
    }

    /// What it runs.
    pub fn spec(&self) -> &ShellSpec {
        &self.spec
    }

    /// How the program ended, if it has.
    pub fn exited(&self) -> Option<&ExitInfo> {
        self.exited.as_ref()
    }

    /// Whether the pane is the one the user works in (set as it is drawn; panes out of sight
    /// are told here): a flood in it is read giving way to its program.
    pub fn set_focused(&self, focused: bool) {
        self.viewing.focused.store(focused, Ordering::Release);
    }

    /// Output from now on wakes the app again (called when what it wrote so far is drawn,
    /// so a flood wakes the app once a frame, and a pane out of sight not at all).
    pub fn mark_drawn(&self) {
        self.viewing.pending.store(false, Ordering::Release);
    }

    /// Takes what changed since the last call: the clipboard, the exit.
    pub fn take_update(&mut self) -> ShellUpdate {
        let clipboard = self.term.lock().take_clipboard();
        let mut update = ShellUpdate {
            clipboard: if self.spec.osc52 {
                clipboard
            } else {
                Vec::new()
            },
            exited: None,
        };
        let reported = self.exit.as_ref().and_then(|e| e.lock().clone());
        if self.exited.is_none()
            && let Some(exit) = reported
        {
            self.exited = Some(exit.clone());
            update.exited = Some(exit);
        }
        update
    }

    /// Handles `key`: copy mode's when it is on, else sent to the program.
    pub fn key(&mut self, key: KeyEvent) -> ShellKey {
        if let Some(copy) = self.copy.as_mut() {
            let mut term = self.term.lock();
            let outcome = copy.key(key, &mut **term);
            if outcome != CopyOutcome::Stay {
                term.scroll_to_bottom();
                drop(term);
                self.copy = None;
            }
            return match outcome {
                CopyOutcome::Copy(text) => ShellKey::Copy(text),
                CopyOutcome::Stay | CopyOutcome::Exit => ShellKey::Handled,
            };
        }
        let mut term = self.term.lock();
        let Some(bytes) = encode_key(key, &term.modes()) else {
            return ShellKey::Handled;
        };
        // Typing returns to the live screen, as terminals do.
        term.scroll_to_bottom();
        drop(term);
        if self.write(bytes) {
            ShellKey::Sent
        } else {
            ShellKey::Handled
        }
    }

    /// Starts copy mode (keys move a cursor over the history; `y` copies the selection).
    pub fn enter_copy_mode(&mut self) {
        if self.copy.is_none() {
            let term = self.term.lock();
            let (line, col) = crate::terminal::copy_start(&**term);
            let copy = CopyMode::at(&**term, line, col, self.spec.search_case);
            drop(term);
            self.copy = Some(copy);
        }
    }

    /// Whether copy mode is on.
    pub fn in_copy_mode(&self) -> bool {
        self.copy.is_some()
    }

    /// Sends pasted text to the program (bracketed when it asked); ends copy mode.
    pub fn paste(&mut self, text: &str) {
        self.copy = None;
        let mut term = self.term.lock();
        let bytes = encode_paste(text, &term.modes());
        term.scroll_to_bottom();
        drop(term);
        self.write(bytes);
    }

    /// Sends raw bytes to the program; false when it is gone.
    pub fn write(&mut self, bytes: Vec<u8>) -> bool {
        match &mut self.pty {
            Some(pty) if self.exited.is_none() => {
                pty.write(bytes);
                true
            }
            _ => false,
        }
    }

    /// The wheel turned `lines` (negative: up) over the pane at screen position `x`, `y`:
    /// reported to a program that wants the mouse, sent as cursor keys to a full-screen one
    /// that asked for that, else the history scrolls.
    pub fn wheel(&mut self, lines: i32, x: u16, y: u16, m: KeyModifiers) {
        let modes = self.term.lock().modes();
        let report = if lines < 0 {
            MouseReport::WheelUp
        } else {
            MouseReport::WheelDown
        };
        if modes.mouse_reporting {
            if let Some((col, row)) = self.screen_position(x, y)
                && let Some(bytes) = encode_mouse(report, col, row, m, &modes)
            {
                let bytes = bytes.repeat(lines.unsigned_abs() as usize);
                self.write(bytes);
            }
            return;
        }
        if modes.alternate_screen {
            if modes.alternate_scroll {
                let key = if lines < 0 { b'A' } else { b'B' };
                let intro = if modes.application_cursor { b'O' } else { b'[' };
                let bytes = [0x1b, intro, key].repeat(lines.unsigned_abs() as usize);
                self.write(bytes);
            }
            return;
        }
        self.scroll(Scroll::Lines(lines));
    }

    /// A mouse button or drag at screen position `x`, `y`: reported to a program that wants
    /// the mouse; false when it does not (the app may use the event itself).
    pub fn mouse(&mut self, event: MouseReport, x: u16, y: u16, m: KeyModifiers) -> bool {
        let modes = self.term.lock().modes();
        let Some((col, row)) = self.screen_position(x, y) else {
            return false;
        };
        match encode_mouse(event, col, row, m, &modes) {
            Some(bytes) => self.write(bytes),
            None => modes.mouse_reporting,
        }
    }

    /// Tells the program the pane gained or lost focus, when it asked to know.
    pub fn focus(&mut self, focused: bool) {
        if self.term.lock().modes().focus_reports {
            let bytes = if focused { b"\x1b[I" } else { b"\x1b[O" };
            self.write(bytes.to_vec());
        }
    }

    fn screen_position(&self, x: u16, y: u16) -> Option<(u16, u16)> {
        let s = self.screen;
        (x >= s.x && y >= s.y && x < s.right() && y < s.bottom()).then(|| (x - s.x, y - s.y))
    }

    /// Scrolls the history (up is back in time; `Bottom` is the live screen).
    pub fn scroll(&mut self, scroll: Scroll) {
        let rows = usize::from(self.size.0);
        let mut term = self.term.lock();
        match scroll {
            Scroll::Bottom => term.scroll_to_bottom(),
            _ => {
                let lines = scroll
                    .lines(rows)
                    .clamp(-i64::from(i32::MAX), i64::from(i32::MAX));
                // The emulator counts lines back from the live screen.
                term.scroll_by(i32::try_from(-lines).unwrap_or(i32::MAX));
            }
        }
    }

    /// The border title: the program's own title when it set one, else its name, with the
    /// exit status once it ended.
    pub fn border_title(&self, project: &str) -> String {
        let program = Path::new(&self.spec.program).file_name().map_or_else(
            || self.spec.program.clone(),
            |n| n.to_string_lossy().into_owned(),
        );
        let own = self
            .term
            .lock()
            .title()
            .map(|t| sanitize_line(t).into_owned());
        let mut title = match own {
            Some(own) if !own.trim().is_empty() => format!("{program} · {own}"),
            _ => format!("{program} · {project}"),
        };
        if let Some(exit) = &self.exited {
            title.push_str(&match &exit.signal {
                Some(signal) => format!(" · ended by {signal}"),
                None => format!(" · exited {}", exit.code),
            });
        }
        title
    }

    /// Draws the pane into `rect`; the PTY follows the size of its inside.
    pub fn render(
        &mut self,
        rect: Rect,
        buf: &mut Buffer,
        theme: &Theme,
        title: &str,
        focused: bool,
    ) {
        let program_title = self.term.lock().title().map(String::from);
        self.title_drawn = program_title;
        let title = truncate(title, usize::from(rect.width.saturating_sub(4)));
        let block = pane_block(&title, focused, theme);
        let inner = block.inner(rect);
        block.render(rect, buf);
        self.render_screen(inner, buf, theme, focused);
    }

    /// Draws the program's screen (no border) into `inner`, which its PTY takes the size of.
    pub fn render_screen(&mut self, inner: Rect, buf: &mut Buffer, theme: &Theme, focused: bool) {
        self.mark_drawn();
        self.set_focused(focused);
        self.screen = inner;
        if inner.width == 0 || inner.height == 0 {
            return;
        }
        let size = (inner.height, inner.width);
        if size != self.size {
            self.size = size;
            self.term.lock().resize(size.0, size.1);
            if let Some(pty) = &self.pty {
                pty.resize(size.0, size.1);
            }
        }
        let theme_unchanged = self
            .palette
            .as_ref()
            .is_some_and(|(name, _)| *name == theme.name);
        let palette = match &self.palette {
            Some((name, palette)) if *name == theme.name => palette.clone(),
            _ => {
                let palette = TermPalette::new(theme);
                self.palette = Some((theme.name.clone(), palette.clone()));
                palette
            }
        };
        let mut term = self.term.lock();
        let damage = term.take_damage();
        if let Some(copy) = self.copy.as_mut() {
            copy.sync(&**term);
        }
        if let Some(copy) = &self.copy {
            self.drawn = None;
            let rows = inner.height.min(term.size().0);
            let matches: Vec<Vec<(u16, u16)>> = (0..rows)
                .map(|row| copy.matches_on_row(&**term, row))
                .collect();
            let (selected, found) = (theme.style(Slot::Selection), theme.style(Slot::Warning));
            let mark = |row: u16, col: u16| match copy.mark(&**term, row, col) {
                Some(CopyMark::Cursor) => Some(Style::default().add_modifier(Modifier::REVERSED)),
                Some(CopyMark::Selected) => Some(selected),
                Some(CopyMark::Match) | None => matches
                    .get(usize::from(row))
                    .filter(|m| m.iter().any(|(a, b)| col >= *a && col <= *b))
                    .map(|_| found.add_modifier(Modifier::REVERSED)),
            };
            draw_screen(&**term, inner, buf, &palette, &mark);
            let status = copy.status(&**term);
            let width = u16::try_from(crate::wrap::width(&status))
                .unwrap_or(u16::MAX)
                .min(inner.width);
            Line::from(Span::styled(status, theme.style(Slot::StatusBarAccent)))
                .render(Rect::new(inner.right() - width, inner.y, width, 1), buf);
            return;
        }
        // Only rows the program changed are drawn again; the rest come from the last frame.
        let offset = term.scroll_offset();
        if offset > 0 {
            // A view into the history moves with every new line: drawn whole.
            self.drawn = None;
            draw_screen(&**term, inner, buf, &palette, &|_, _| None);
        } else {
            let local = Rect::new(0, 0, inner.width, inner.height);
            let cached = theme_unchanged && self.drawn.as_ref().is_some_and(|d| d.area == local);
            match (&damage, self.drawn.as_mut()) {
                (Damage::Rows(spans), Some(drawn)) if cached => {
                    draw_rows(&**term, local, drawn, &palette, &|_, _| None, &|y| {
                        columns_of(spans, y)
                    });
                }
                _ => {
                    let mut drawn = Buffer::empty(local);
                    draw_screen(&**term, local, &mut drawn, &palette, &|_, _| None);
                    self.drawn = Some(drawn);
                }
            }
            if let Some(drawn) = &self.drawn {
                copy_rows(drawn, buf, inner);
            }
        }
        if offset > 0 {
            // Where in the history the view is, as tmux shows it.
            let mark = format!("[{offset}/{}]", term.scrollback_lines());
            let width = u16::try_from(mark.len())
                .unwrap_or(u16::MAX)
                .min(inner.width);
            Line::from(Span::styled(mark, theme.style(Slot::StatusBarAccent)))
                .render(Rect::new(inner.right() - width, inner.y, width, 1), buf);
        }
        if self.exited.is_some() && focused {
            let hint = " Enter: start again · Ctrl-a x: close ";
            let width = u16::try_from(hint.len())
                .unwrap_or(u16::MAX)
                .min(inner.width);
            Line::from(Span::styled(hint, theme.style(Slot::Hint)))
                .render(Rect::new(inner.x, inner.bottom() - 1, width, 1), buf);
        }
    }

    /// Draws again the rows the program changed since the pane was last drawn, into `buf`
    /// where the pane was last drawn, when nothing else about the pane changed: the areas
    /// drawn. `None` when the pane must be drawn whole, with its border (copy mode, a view
    /// into the history, a new title, a new theme, an exit, never drawn).
    pub fn render_changed_rows(&mut self, buf: &mut Buffer, theme: &Theme) -> Option<Vec<Rect>> {
        let inner = self.screen;
        let local = Rect::new(0, 0, inner.width, inner.height);
        let palette = match &self.palette {
            Some((name, palette)) if *name == theme.name => palette.clone(),
            _ => return None,
        };
        if self.copy.is_some()
            || self.exited.is_some()
            || inner.area() == 0
            || !self.drawn.as_ref().is_some_and(|d| d.area == local)
        {
            return None;
        }
        let mut term = self.term.lock();
        if term.scroll_offset() > 0 || term.title() != self.title_drawn.as_deref() {
            return None;
        }
        self.mark_drawn();
        let drawn = self.drawn.as_mut()?;
        let spans: Vec<RowSpan> = match term.take_damage() {
            Damage::Rows(spans) => {
                draw_rows(&**term, local, drawn, &palette, &|_, _| None, &|y| {
                    columns_of(&spans, y)
                });
                spans
            }
            Damage::Full => {
                draw_screen(&**term, local, drawn, &palette, &|_, _| None);
                (0..inner.height)
                    .map(|row| RowSpan {
                        row,
                        start: 0,
                        end: inner.width,
                    })
                    .collect()
            }
        };
        let mut areas = Vec::with_capacity(spans.len());
        for span in spans.into_iter().filter(|s| s.row < inner.height) {
            let start = span.start.min(inner.width);
            let area = Rect::new(
                inner.x + start,
                inner.y + span.row,
                span.end.min(inner.width).saturating_sub(start),
                1,
            );
            if area.is_empty() {
                continue;
            }
            copy_span(drawn, span.row, start, buf, area);
            areas.push(area);
        }
        Some(areas)
    }

    /// Where the terminal's cursor goes when this pane is focused: the program's cursor,
    /// unless it hid it or the view is scrolled back.
    pub fn cursor_position(&self) -> Option<(u16, u16)> {
        let term = self.term.lock();
        let cursor = term.cursor();
        if !cursor.visible
            || term.scroll_offset() > 0
            || self.exited.is_some()
            || self.copy.is_some()
        {
            return None;
        }
        let (x, y) = (self.screen.x + cursor.col, self.screen.y + cursor.row);
        (x < self.screen.right() && y < self.screen.bottom()).then_some((x, y))
    }

    /// The shape of the program's cursor.
    pub fn cursor_shape(&self) -> crate::terminal::CursorShape {
        self.term.lock().cursor().shape
    }

    /// Hangs up: the program and everything it started get SIGHUP, and are killed after
    /// `grace` if still there. The thread returned ends when they are gone.
    pub fn hangup(&mut self, grace: Duration) -> Option<JoinHandle<()>> {
        self.pty.take()?.hangup(grace)
    }
}

/// Copies `from` (a buffer at the origin) into `to` at `at`.
fn copy_rows(from: &Buffer, to: &mut Buffer, at: Rect) {
    for y in 0..at.height.min(from.area.height) {
        copy_row(from, y, to, at);
    }
}

/// The columns of row `y` that `spans` says changed.
fn columns_of(spans: &[RowSpan], y: u16) -> Option<std::ops::Range<u16>> {
    spans.iter().find(|s| s.row == y).map(|s| s.start..s.end)
}

/// Copies the cells of row `y` of `from` (a buffer at the origin) from column `x` on into
/// `to`'s one-row area `at`.
fn copy_span(from: &Buffer, y: u16, x: u16, to: &mut Buffer, at: Rect) {
    let at = at.intersection(to.area);
    if y >= from.area.height || x >= from.area.width {
        return;
    }
    let width = usize::from(at.width.min(from.area.width - x));
    let src = from.index_of(x, y);
    let dst = to.index_of(at.x, at.y);
    to.content[dst..dst + width].clone_from_slice(&from.content[src..src + width]);
}

/// Copies row `y` of `from` (a buffer at the origin) into `to` at `at`.
fn copy_row(from: &Buffer, y: u16, to: &mut Buffer, at: Rect) {
    let at = at.intersection(to.area);
    if y >= at.height.min(from.area.height) {
        return;
    }
    let width = usize::from(at.width.min(from.area.width));
    let src = from.index_of(0, y);
    let dst = to.index_of(at.x, at.y + y);
    to.content[dst..dst + width].clone_from_slice(&from.content[src..src + width]);
}

impl Drop for ShellPane {
    fn drop(&mut self) {
        // A pane dropped without a hang-up still leaves nothing running.
        if let Some(pty) = self.pty.take() {
            drop(pty.hangup(Duration::from_secs(2)));
        }
    }
}
