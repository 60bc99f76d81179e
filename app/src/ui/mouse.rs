//! Mouse events: the wheel, clicks and drags, routed to the pane under the pointer or to
//! the border being dragged.

use crossterm::event::{MouseButton, MouseEventKind};

use super::Ui;

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
                        let report = MouseReport::Press(button(b));
                        self.ws.pane_mouse(id, report, m.column, m.row, m.modifiers);
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
                    self.ws.pane_mouse(id, report, m.column, m.row, m.modifiers);
                }
            }
            MouseEventKind::Up(b) if self.drag.take().is_none() => {
                let report = MouseReport::Release(button(b));
                let id = self.ws.focused();
                self.ws.pane_mouse(id, report, m.column, m.row, m.modifiers);
            }
            _ => {}
        }
    }
}
