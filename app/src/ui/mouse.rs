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
                // Positive scrolls down, as the pane counts.
                let lines = if m.kind == MouseEventKind::ScrollUp {
                    -3
                } else {
                    3
                };
                if let Some((id, _)) = self.ws.pane_at(m.column, m.row) {
                    self.ws.layout_mut().focus(id);
                    if let Some(pane) = self.ws.shell_mut(id) {
                        pane.wheel(lines, m.column, m.row, m.modifiers);
                    } else if let Some(pane) = self.ws.agent_shell_command(id) {
                        pane.wheel(lines, m.column, m.row, m.modifiers);
                    } else if let Some(slot) = self.ws.focused_slot() {
                        slot.view.mouse_scroll(lines);
                    }
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
                    if self.drag.is_none()
                        && let Some(pane) = self.ws.shell_mut(id)
                    {
                        pane.mouse(MouseReport::Press(button(b)), m.column, m.row, m.modifiers);
                    } else if self.drag.is_none()
                        && b == MouseButton::Left
                        && self.ws.open_diff_at(id, m.column, m.row)
                    {
                        // A click on an edit in the transcript shows its file's diff.
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
                } else if let Some(pane) = self.ws.focused_shell() {
                    pane.mouse(MouseReport::Drag(button(b)), m.column, m.row, m.modifiers);
                }
            }
            MouseEventKind::Up(b) => {
                if self.drag.take().is_none()
                    && let Some(pane) = self.ws.focused_shell()
                {
                    pane.mouse(
                        MouseReport::Release(button(b)),
                        m.column,
                        m.row,
                        m.modifiers,
                    );
                }
            }
            _ => {}
        }
    }
}
