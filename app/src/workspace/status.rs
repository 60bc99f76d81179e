//! The status bar: tabs with the attention of their sessions, badges counting sessions by
//! attention (needs you, failed, done, working), the focused agent's model, context and
//! cost, and whether the prefix key is pending.

use march_panes::sanitize::sanitize;
use march_panes::theme::{Slot, Theme};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use super::Workspace;
use super::router::Attention;

/// The badges, most urgent first: state, its style, and its words.
const BADGES: [(Attention, Slot, &str); 4] = [
    (Attention::NeedsYou, Slot::Warning, "need you"),
    (Attention::Error, Slot::Error, "failed"),
    (Attention::Done, Slot::Success, "done"),
    (Attention::Working, Slot::Info, "working"),
];

/// What the bar shows besides the workspace's own state.
pub struct StatusContext {
    /// The prefix was pressed and the next key is a workspace command.
    pub prefix_pending: bool,
    /// A short message (an error or a hint), shown at the right until the next key.
    pub message: Option<String>,
}

/// The width of the right side's spans after the message.
fn right_facts_width(right: &[Span<'_>]) -> usize {
    right.iter().skip(1).map(|s| s.width()).sum()
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
    for i in 0..tabs.len() {
        let style = if i == active { accent } else { base };
        left.push(Span::styled(
            format!(" {}:{}", i + 1, sanitize(&ws.tab_label(i))),
            style,
        ));
        let attention = ws.tab_attention(i);
        match BADGES.iter().find(|(a, _, _)| *a == attention) {
            Some((_, slot, _)) if attention != Attention::Working => {
                left.push(Span::styled(
                    format!(" {}", attention.glyph()),
                    style.patch(theme.style(*slot)),
                ));
            }
            _ => {}
        }
        left.push(Span::styled(" ", style));
    }
    for (attention, slot, words) in BADGES {
        let n = ws.attention_count(attention);
        if n > 0 {
            left.push(Span::styled(
                format!(" {} {n} {words} ", attention.glyph()),
                theme.style(slot),
            ));
        }
    }
    // What the focused project's language servers report.
    let counts = ws.diagnostic_counts(&ws.focused_project());
    if counts.errors > 0 {
        left.push(Span::styled(
            format!(" {} ", plural(counts.errors, "error")),
            theme.style(Slot::Error),
        ));
    }
    if counts.warnings > 0 {
        left.push(Span::styled(
            format!(" {} ", plural(counts.warnings, "warning")),
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
    let left_width: usize = left.iter().map(|s| s.width()).sum();
    // The message gives way to the tabs and the facts; what does not fit is cut.
    let facts = right_facts_width(&right);
    if let Some(first) = right.first_mut()
        && ctx.message.is_some()
    {
        let room = usize::from(area.width).saturating_sub(left_width + facts + 1);
        let text = march_panes::wrap::truncate(&first.content, room);
        first.content = text.into();
    }
    let right_width: u16 = right.iter().map(|s| s.width() as u16).sum();
    Line::from(left).render(area, buf);
    if right_width < area.width {
        let r = Rect::new(area.right() - right_width, area.y, right_width, 1);
        Line::from(right).render(r, buf);
    }
}

/// `1 error`, `2 errors`.
fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}
