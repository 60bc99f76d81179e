//! Drawing the workspace: what waits to be drawn, and each draw as a patch of shells' rows
//! or a whole frame for the attached [`Clients`](super::clients::Clients), timed when a
//! benchmark asks.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use ratatui::layout::Rect;

use super::{Ui, frame};
use crate::workspace::layout::PaneId;

/// Shortest time between two frames of output: changes arriving faster are drawn together.
const FRAME_INTERVAL: Duration = Duration::from_millis(8);

/// Shortest time between two frames while only shells' output changes the screen and nobody
/// typed lately: a flood is watched, not read, and the CPU goes to parsing it (tmux drops to
/// 10 frames a second under load).
const FLOOD_FRAME_INTERVAL: Duration = Duration::from_millis(25);

/// When the next frame is drawn. Output (streamed deltas, programs' output, jobs, timers)
/// is drawn at most once per [`FRAME_INTERVAL`]; what the user typed alone is drawn at once
/// and does not hold the next frame of output back, so an answer that follows a prompt
/// within the interval is not made to wait for the prompt's own frame. Keys come at the
/// rate a person types, so they cannot flood.
pub(super) struct Pacing {
    /// When a frame last drew output.
    last_output: Instant,
    /// Output waits to be drawn.
    output: bool,
    /// What waits is shells' output alone.
    pub only_output: bool,
}

impl Pacing {
    pub(super) fn new() -> Pacing {
        Pacing {
            // The first frame of output is not held back (nor a subtraction underflowed).
            last_output: Instant::now()
                .checked_sub(FLOOD_FRAME_INTERVAL)
                .unwrap_or_else(Instant::now),
            output: false,
            only_output: false,
        }
    }

    /// Something besides the user's input waits to be drawn.
    pub(super) fn output(&mut self) {
        self.output = true;
    }

    /// When the next frame is due for what waits in `redraw`, if anything does.
    pub(super) fn next(&self, redraw: &Redraw, typed_lately: bool) -> Option<Instant> {
        if !redraw.due() {
            return None;
        }
        if !self.output {
            return Some(Instant::now());
        }
        let interval = if self.only_output && !typed_lately {
            FLOOD_FRAME_INTERVAL
        } else {
            FRAME_INTERVAL
        };
        Some(self.last_output + interval)
    }

    /// A frame was drawn.
    pub(super) fn drawn(&mut self) {
        if self.output {
            self.last_output = Instant::now();
        }
        self.output = false;
    }
}

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
    /// (and no overlay covers the panes), else a whole frame. Nothing while no terminal is
    /// attached (the next to attach gets a whole frame). Whether a frame was drawn.
    pub(super) fn draw(&mut self, redraw: &mut Redraw) -> bool {
        if self.clients.is_empty() {
            redraw.done();
            return false;
        }
        let timed = self
            .frame_stats
            .is_some()
            .then(|| (Instant::now(), thread_cpu()));
        self.draw_frame(redraw);
        redraw.done();
        if let (Some((wall, cpu)), Some(stats)) = (timed, self.frame_stats.as_mut()) {
            let micros = |d: Duration| u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
            stats.frames.push((
                micros(wall.elapsed()),
                micros(thread_cpu().saturating_sub(cpu)),
            ));
        }
        true
    }

    fn draw_frame(&mut self, redraw: &Redraw) {
        let covered = self.layers.covers_panes() || self.dispatcher.prefix_pending();
        let (cols, rows) = self.clients.size();
        let size = Rect::new(0, 0, cols, rows);
        let screen_cursor = self.clients.cursor();
        let patched = !redraw.full
            && !covered
            && self.clients.patch(|buf| {
                if buf.area != size {
                    return None;
                }
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
            });
        if !patched {
            let overlays = frame::Overlays {
                keymap: &self.keymap,
                prefix_pending: self.dispatcher.prefix_pending(),
                message: self.layers.status().or_else(|| self.message.clone()),
                layers: Some(&self.layers),
                pictures: self.clients.show_pictures(),
            };
            self.clients.frame(size, |buf| {
                frame::draw(buf, &mut self.ws, &self.theme, &self.highlighter, &overlays)
            });
        }
        // The focused shell's program chooses the cursor's shape; elsewhere the user's own.
        let shape = self.ws.focused_program().map(|p| p.cursor_shape());
        self.clients.set_cursor_shape(shape);
        self.start_encodings();
    }

    /// Starts the encodings of pictures terminals are to show, off the loop.
    pub(super) fn start_encodings(&mut self) {
        for request in self.clients.take_wanted() {
            self.ws
                .jobs()
                .blocking(move || crate::workspace::jobs::JobDone::PictureEncoded(request.run()));
        }
    }
}
