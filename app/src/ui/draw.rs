//! Drawing the workspace: what waits to be drawn, and each draw as a patch of shells' rows
//! or a whole frame through [`Screen`], timed when a benchmark asks.

use std::io;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crossterm::cursor::SetCursorStyle;
use crossterm::execute;
use march_panes::terminal::CursorShape;
use ratatui::layout::Rect;

use super::screen::Screen;
use super::{Ui, frame};
use crate::workspace::layout::PaneId;

/// The terminal March draws on.
pub(super) type Out = Screen<io::BufWriter<io::Stdout>>;

/// What waits to be drawn.
pub(super) struct Redraw {
    /// Something besides shells' output changed: a whole frame.
    pub full: bool,
    /// The status bar changed (and nothing else but shells' output).
    pub status: bool,
    /// Shell panes whose programs wrote output since the last frame.
    pub shells: Vec<PaneId>,
}

impl Redraw {
    /// Whether anything waits.
    pub(super) fn due(&self) -> bool {
        self.full || self.status || !self.shells.is_empty()
    }

    /// Shell pane `id` has output to draw.
    pub(super) fn shell(&mut self, id: PaneId) {
        if !self.shells.contains(&id) {
            self.shells.push(id);
        }
    }

    /// Everything waiting was drawn.
    fn done(&mut self) {
        self.full = false;
        self.status = false;
        self.shells.clear();
    }
}

/// Frame draw times kept for `MARCH_FRAME_STATS` (a benchmark's instrument): wall and
/// drawing-thread CPU time per frame, in microseconds, written at exit.
pub(super) struct FrameStats {
    path: PathBuf,
    frames: Vec<(u64, u64)>,
}

impl FrameStats {
    /// From `MARCH_FRAME_STATS`, if set.
    pub(super) fn from_env() -> Option<Self> {
        let path = std::env::var_os("MARCH_FRAME_STATS")?;
        Some(FrameStats {
            path: PathBuf::from(path),
            frames: Vec::new(),
        })
    }

    pub(super) fn write(&self) {
        let text: String = self
            .frames
            .iter()
            .map(|(wall, cpu)| format!("{wall} {cpu}\n"))
            .collect();
        if let Err(e) = std::fs::write(&self.path, text) {
            tracing::warn!("cannot write frame stats to {}: {e}", self.path.display());
        }
    }
}

/// CPU time of the calling thread.
fn thread_cpu() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::new(
        u64::try_from(t.tv_sec).unwrap_or(0),
        u32::try_from(t.tv_nsec).unwrap_or(0),
    )
}

impl Ui {
    /// Draws what changed: the rows programs wrote in shell panes `shells` when that is all
    /// (and no overlay covers the panes), else a whole frame.
    pub(super) fn draw(&mut self, screen: &mut Out, redraw: &mut Redraw) -> io::Result<()> {
        let timed = self
            .frame_stats
            .is_some()
            .then(|| (Instant::now(), thread_cpu()));
        let result = self.draw_frame(screen, redraw);
        redraw.done();
        if let (Some((wall, cpu)), Some(stats)) = (timed, self.frame_stats.as_mut()) {
            let micros = |d: Duration| u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
            stats.frames.push((
                micros(wall.elapsed()),
                micros(thread_cpu().saturating_sub(cpu)),
            ));
        }
        result
    }

    fn draw_frame(&mut self, screen: &mut Out, redraw: &Redraw) -> io::Result<()> {
        let covered = self.layers.covers_panes() || self.dispatcher.prefix_pending();
        let screen_cursor = screen.cursor();
        let patched = !redraw.full
            && !covered
            && screen.patch(|buf| {
                let mut areas = self
                    .ws
                    .render_shell_rows(&redraw.shells, buf, &self.theme)?;
                if redraw.status {
                    let message = self.layers.status().or_else(|| self.message.clone());
                    let ctx = frame::status_context(self.dispatcher.prefix_pending(), &message);
                    areas.push(frame::draw_status_bar(buf, &self.ws, &self.theme, &ctx));
                }
                let cursor = match self.ws.focused_shell() {
                    Some(_) => frame::cursor(&mut self.ws),
                    None => screen_cursor,
                };
                Some((areas, cursor))
            })?;
        if !patched {
            let overlays = frame::Overlays {
                keymap: &self.keymap,
                prefix_pending: self.dispatcher.prefix_pending(),
                message: self.layers.status().or_else(|| self.message.clone()),
                layers: Some(&self.layers),
            };
            let (cols, rows) = self.size;
            screen.frame(Rect::new(0, 0, cols, rows), |buf| {
                frame::draw(buf, &mut self.ws, &self.theme, &self.highlighter, &overlays)
            })?;
        }
        // The focused shell's program chooses the cursor's shape; elsewhere the user's own.
        let shape = self.ws.focused_program().map(|p| p.cursor_shape());
        if shape != self.cursor_shape {
            self.cursor_shape = shape;
            let style = match shape {
                None => SetCursorStyle::DefaultUserShape,
                Some(CursorShape::Block) => SetCursorStyle::SteadyBlock,
                Some(CursorShape::Underline) => SetCursorStyle::SteadyUnderScore,
                Some(CursorShape::Bar) => SetCursorStyle::SteadyBar,
            };
            let mut bytes = Vec::new();
            execute!(bytes, style)?;
            screen.write_between_frames(&bytes)?;
        }
        Ok(())
    }
}
