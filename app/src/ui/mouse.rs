//! Mouse events: the wheel, clicks and drags, routed to the pane under the pointer or to
//! the border being dragged.

use std::time::{Duration, Instant};

use crossterm::event::{MouseButton, MouseEventKind};

use super::Ui;

/// Presses at one place within this long of each other count as a double or triple click.
const MULTI_CLICK: Duration = Duration::from_millis(500);

/// The last left press, to count double and triple clicks.
#[derive(Debug, Clone, Copy)]
pub(super) struct LastClick {
    at: Instant,
    x: u16,
    y: u16,
    count: u8,
}

impl LastClick {
    /// The count of a press at `x`, `y` now after `last`: 1, 2 or 3, then 1 again.
    fn next(last: Option<LastClick>, x: u16, y: u16, now: Instant) -> LastClick {
        let count = match last {
            Some(l)
                if l.x == x
                    && l.y == y
                    && now.duration_since(l.at) <= MULTI_CLICK
                    && l.count < 3 =>
            {
                l.count + 1
            }
            _ => 1,
        };
        LastClick {
            at: now,
            x,
            y,
            count,
        }
    }
}

impl Ui {
    /// A mouse event from the terminal.
    pub(super) fn mouse(&mut self, m: crossterm::event::MouseEvent) {
        use march_panes::terminal::MouseReport;
        let button = |b: MouseButton| match b {
            MouseButton::Left => 0,
            MouseButton::Middle => 1,
            MouseButton::Right => 2,
        };
        match m.kind {
            MouseEventKind::ScrollUp | MouseEventKind::ScrollDown => {
                if let Some((id, _)) = self.ws.pane_at(m.column, m.row) {
                    self.ws.layout_mut().focus(id);
                    let up = m.kind == MouseEventKind::ScrollUp;
                    self.ws.pane_wheel(id, up, m.column, m.row, m.modifiers);
                }
            }
            MouseEventKind::Down(b) => {
                // A click ends a pending prefix, as any other key would.
                self.dispatcher.cancel();
                if let Some((id, rect)) = self.ws.pane_at(m.column, m.row) {
                    self.ws.layout_mut().focus(id);
                    // On a right or bottom border: start dragging it.
                    let on_border = m.column + 1 == rect.right() || m.row + 1 == rect.bottom();
                    self.drag = (on_border && b == MouseButton::Left).then_some((m.column, m.row));
                    if self.drag.is_none() {
                        let clicks = if b == MouseButton::Left {
                            let click =
                                LastClick::next(self.last_click, m.column, m.row, Instant::now());
                            self.last_click = Some(click);
                            click.count
                        } else {
                            1
                        };
                        let report = MouseReport::Press(button(b));
                        let at = (m.column, m.row);
                        let request = self.ws.pane_mouse(id, report, at, clicks, m.modifiers);
                        self.shell_request(request);
                    }
                }
            }
            MouseEventKind::Drag(b) => {
                if let Some(at) = self.drag {
                    let area = self.ws.pane_area();
                    if self
                        .ws
                        .layout_mut()
                        .drag_border(area, at, (m.column, m.row))
                    {
                        self.drag = Some((m.column, m.row));
                    }
                } else {
                    let report = MouseReport::Drag(button(b));
                    let id = self.ws.focused();
                    let at = (m.column, m.row);
                    let request = self.ws.pane_mouse(id, report, at, 1, m.modifiers);
                    self.shell_request(request);
                }
            }
            MouseEventKind::Up(b) if self.drag.take().is_none() => {
                let report = MouseReport::Release(button(b));
                let id = self.ws.focused();
                let at = (m.column, m.row);
                let request = self.ws.pane_mouse(id, report, at, 1, m.modifiers);
                self.shell_request(request);
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presses_in_one_place_count_up_to_three() {
        let t0 = Instant::now();
        let ms = |n| t0 + Duration::from_millis(n);
        let one = LastClick::next(None, 3, 4, t0);
        let two = LastClick::next(Some(one), 3, 4, ms(200));
        let three = LastClick::next(Some(two), 3, 4, ms(400));
        assert_eq!((one.count, two.count, three.count), (1, 2, 3));
        assert_eq!(LastClick::next(Some(three), 3, 4, ms(500)).count, 1);
        assert_eq!(
            LastClick::next(Some(one), 5, 4, ms(100)).count,
            1,
            "elsewhere"
        );
        assert_eq!(
            LastClick::next(Some(one), 3, 4, ms(900)).count,
            1,
            "too late"
        );
    }
}
