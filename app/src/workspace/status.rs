//! The status bar: tabs, the focused agent's model, context and cost, panes that need the
//! user, and whether the prefix key is pending.

use march_panes::sanitize::sanitize;
use march_panes::theme::{Slot, Theme};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use super::Workspace;

/// What the bar shows besides the workspace's own state.
pub struct StatusContext {
    /// The prefix was pressed and the next key is a workspace command.
    pub prefix_pending: bool,
    /// A short message (an error or a hint), shown at the right until the next key.
    pub message: Option<String>,
}

/// Draw the status bar for `ws` into `area` (one line).
pub fn render(ws: &Workspace, ctx: &StatusContext, area: Rect, buf: &mut Buffer, theme: &Theme) {
    let base = theme.style(Slot::StatusBar);
    let accent = theme.style(Slot::StatusBarAccent);
    buf.set_style(area, base);
    let mut left: Vec<Span<'static>> = Vec::new();
    if ctx.prefix_pending {
        left.push(Span::styled(" PREFIX ", accent));
    }
    if ws.tab().layout.is_zoomed() {
        left.push(Span::styled(" ZOOM ", accent));
    }
    let (tabs, active) = ws.tabs();
    for (i, tab) in tabs.iter().enumerate() {
        let label = format!(" {}:{} ", i + 1, sanitize(&tab.name));
        left.push(if i == active {
            Span::styled(label, accent)
        } else {
            Span::styled(label, base)
        });
    }
    let waiting = ws
        .slots()
        .filter(|(_, s)| s.view.status().waiting_for_permission)
        .count();
    if waiting > 0 {
        left.push(Span::styled(
            format!(" {waiting} waiting for you "),
            theme.style(Slot::Warning),
        ));
    }
    let mut right: Vec<Span<'static>> = Vec::new();
    if let Some(message) = &ctx.message {
        right.push(Span::styled(
            format!("{} ", sanitize(message)),
            theme.style(Slot::Info),
        ));
    }
    if let Some(slot) = ws.slot(ws.focused()) {
        let s = slot.view.status();
        if let Some(model) = &s.model {
            right.push(Span::styled(format!(" {} ", sanitize(model)), base));
        }
        if let (Some(used), Some(size)) = (s.context_used, s.context_size) {
            let pct = (used * 100).checked_div(size).unwrap_or(0);
            right.push(Span::styled(format!(" ctx {pct}% "), base));
        }
        if let Some((amount, currency)) = s.cost {
            let cost = if currency == "USD" {
                format!(" ${amount:.2} ")
            } else {
                format!(" {amount:.2} {} ", sanitize(&currency))
            };
            right.push(Span::styled(cost, base));
        }
    }
    let right_width: u16 = right.iter().map(|s| s.width() as u16).sum();
    Line::from(left).render(area, buf);
    if right_width < area.width {
        let r = Rect::new(area.right() - right_width, area.y, right_width, 1);
        Line::from(right).render(r, buf);
    }
}
