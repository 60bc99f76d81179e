//! The which-key hint: after the prefix key, the keys that may follow and what they do.

use march_panes::chrome::draw_modal;
use march_panes::theme::{Slot, Theme};

use crate::keymap::{KeyContext, Keymap};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

/// Draw `hints` (key, what it does) in a box at the bottom right of `area`, in as many
/// columns as fit.
pub(super) fn render(
    hints: &[(String, &'static str)],
    area: Rect,
    buf: &mut Buffer,
    theme: &Theme,
) {
    if hints.is_empty() || area.width < 20 || area.height < 4 {
        return;
    }
    let key_width = hints
        .iter()
        .map(|(k, _)| k.chars().count())
        .max()
        .unwrap_or(1);
    let doc_width = 28usize;
    let cell = key_width + 1 + doc_width + 2;
    let inner_width = usize::from(area.width.saturating_sub(4));
    let columns = (inner_width / cell).clamp(1, 4);
    let rows = hints.len().div_ceil(columns);
    let height = u16::try_from(rows + 2).unwrap_or(u16::MAX).min(area.height);
    let width = u16::try_from(columns * cell + 2)
        .unwrap_or(u16::MAX)
        .min(area.width);
    let rect = Rect::new(area.right() - width, area.bottom() - height, width, height);
    let inner = draw_modal(rect, "prefix", buf, theme);
    for row in 0..rows {
        let y = inner.y + u16::try_from(row).unwrap_or(u16::MAX);
        if y >= inner.bottom() {
            break;
        }
        let mut spans = Vec::new();
        for col in 0..columns {
            let Some((key, doc)) = hints.get(col * rows + row) else {
                continue;
            };
            let doc: String = doc.chars().take(doc_width).collect();
            spans.push(Span::styled(
                format!("{key:>key_width$} "),
                theme.style(Slot::Hint),
            ));
            spans.push(Span::styled(
                format!("{doc:<doc_width$}  "),
                theme.style(Slot::Modal),
            ));
        }
        Line::from(spans).render(Rect::new(inner.x, y, inner.width, 1), buf);
    }
}

/// The help overlay: every binding of every context, in columns, over the panes.
pub(super) fn render_help(keymap: &Keymap, area: Rect, buf: &mut Buffer, theme: &Theme) {
    if area.width < 20 || area.height < 6 {
        return;
    }
    let rect = Rect::new(
        area.x + area.width / 20,
        area.y + area.height / 20,
        area.width - area.width / 10,
        area.height - area.height / 10,
    );
    let prefix = keymap.prefix_key().to_string();
    let title = format!("keys · prefix {prefix} · any key closes");
    let inner = draw_modal(rect, &title, buf, theme);
    let mut lines: Vec<Line<'static>> = Vec::new();
    for context in KeyContext::ALL {
        let title = match context {
            KeyContext::Prefix => format!("after {prefix}"),
            KeyContext::Direct => "anywhere".to_string(),
            KeyContext::Agent => "in an agent pane".to_string(),
            KeyContext::Shell => "in a shell pane".to_string(),
            KeyContext::Diff => "in a diff pane".to_string(),
            KeyContext::Diagnostics => "in a diagnostics pane".to_string(),
        };
        lines.push(Line::from(Span::styled(title, theme.style(Slot::Heading))));
        for (key, doc) in keymap.hints(*context) {
            lines.push(Line::from(vec![
                Span::styled(format!("  {key:>12} "), theme.style(Slot::Hint)),
                Span::styled(doc.to_string(), theme.style(Slot::Modal)),
            ]));
        }
        lines.push(Line::default());
    }
    // Columns wide enough to read the docs; what does not fit is counted, not squeezed.
    const COLUMN_WIDTH: u16 = 44;
    let rows = usize::from(inner.height.max(1));
    let columns = usize::from((inner.width / COLUMN_WIDTH).max(1));
    let width = inner.width / u16::try_from(columns).unwrap_or(1).max(1);
    let capacity = rows * columns;
    if lines.len() > capacity {
        let hidden = lines.len() - (capacity - 1);
        lines.truncate(capacity - 1);
        lines.push(Line::from(Span::styled(
            format!("… {hidden} more: docs/KEYMAPS.md lists every key"),
            theme.style(Slot::TextDim),
        )));
    }
    for (i, line) in lines.into_iter().enumerate() {
        let (col, row) = (i / rows, i % rows);
        let x = inner.x + u16::try_from(col).unwrap_or(u16::MAX).saturating_mul(width);
        if x >= inner.right() {
            break;
        }
        let y = inner.y + u16::try_from(row).unwrap_or(u16::MAX);
        line.render(Rect::new(x, y, width.min(inner.right() - x), 1), buf);
    }
}
