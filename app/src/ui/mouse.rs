//! Mouse events: the wheel, clicks and drags, routed to the pane under the pointer or to
//! the border being dragged. A first click on a pane that is not focused only focuses it.

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

/// What a press on a pane does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Press {
    /// A left press on its right or bottom border starts dragging that border.
    DragBorder,
    /// The first press on a pane that was not focused only focuses it: what is under the
    /// pointer (an edit that would open a diff, a shell program's button) was not seen with
    /// the focus there, and the keys typed next would go somewhere new.
    FocusOnly,
    /// Any other press goes to the pane.
    ToPane,
}

impl Press {
    /// A press on a pane that was `focused` or not, on its border or not, left or not.
    fn of(focused: bool, on_border: bool, left: bool) -> Press {
        if on_border && left {
            Press::DragBorder
        } else if !focused {
            Press::FocusOnly
        } else {
            Press::ToPane
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
                // A click ends a pending prefix, as any other key would, and is not the
                // second press a close or a revert waits for.
                self.dispatcher.cancel();
                self.confirm_armed = None;
                self.revert_armed = None;
                self.focusing_click = false;
                self.drag = None;
                if let Some((id, rect)) = self.ws.pane_at(m.column, m.row) {
                    let focused = id == self.ws.focused();
                    self.ws.layout_mut().focus(id);
                    let on_border = m.column + 1 == rect.right() || m.row + 1 == rect.bottom();
                    match Press::of(focused, on_border, b == MouseButton::Left) {
                        Press::DragBorder => self.drag = Some((m.column, m.row)),
                        Press::FocusOnly => {
                            self.focusing_click = true;
                            self.last_click = None;
                        }
                        Press::ToPane => {
                            let clicks = if b == MouseButton::Left {
                                let click = LastClick::next(
                                    self.last_click,
                                    m.column,
                                    m.row,
                                    Instant::now(),
                                );
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
                } else if !self.focusing_click {
                    let report = MouseReport::Drag(button(b));
                    let id = self.ws.focused();
                    let at = (m.column, m.row);
                    let request = self.ws.pane_mouse(id, report, at, 1, m.modifiers);
                    self.shell_request(request);
                }
            }
            MouseEventKind::Up(b) => {
                let dragged = self.drag.take().is_some();
                // The release of a press that only focused goes nowhere either.
                if !dragged && !std::mem::take(&mut self.focusing_click) {
                    let report = MouseReport::Release(button(b));
                    let id = self.ws.focused();
                    let at = (m.column, m.row);
                    let request = self.ws.pane_mouse(id, report, at, 1, m.modifiers);
                    self.shell_request(request);
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_press_on_an_unfocused_pane_only_focuses_it_unless_it_drags_a_border() {
        assert_eq!(Press::of(false, false, true), Press::FocusOnly);
        assert_eq!(Press::of(false, false, false), Press::FocusOnly, "right");
        assert_eq!(Press::of(true, false, true), Press::ToPane);
        assert_eq!(
            Press::of(true, true, false),
            Press::ToPane,
            "right on a border"
        );
        assert_eq!(Press::of(false, true, true), Press::DragBorder);
        assert_eq!(Press::of(true, true, true), Press::DragBorder);
    }

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
