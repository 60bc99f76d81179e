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

/// The key list's lines: every binding of every context under its heading.
fn help_lines(
    keymap: &Keymap,
    key_width: usize,
    width: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let prefix = keymap.prefix_key().to_string();
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
            // Each part is cut to its own width, so a long key or doc never runs into the
            // next.
            let key = march_panes::wrap::truncate(&key, key_width);
            let doc = march_panes::wrap::truncate(doc, width.saturating_sub(key_width + 3));
            lines.push(Line::from(vec![
                Span::styled(format!("  {key:>key_width$} "), theme.style(Slot::Hint)),
                Span::styled(doc, theme.style(Slot::Modal)),
            ]));
        }
        lines.push(Line::default());
    }
    lines.pop();
    lines
}

/// The help overlay: every binding of every context, in one list scrolled from line
/// `scroll` (clamped; the clamped value is returned so the caller keeps it).
pub(super) fn render_help(
    keymap: &Keymap,
    scroll: usize,
    area: Rect,
    buf: &mut Buffer,
    theme: &Theme,
) -> usize {
    if area.width < 20 || area.height < 6 {
        return scroll;
    }
    // Centred, at most 100 columns: a readable list, never columns side by side.
    let width = area.width.min(100);
    let rect = Rect::new(
        area.x + (area.width - width) / 2,
        area.y,
        width,
        area.height,
    );
    let title = "keys · ↑↓ pgup pgdn scroll · esc closes";
    let inner = draw_modal(rect, title, buf, theme);
    if inner.height < 2 {
        return scroll;
    }
    let key_width = 12usize.min(usize::from(inner.width) / 3);
    let lines = help_lines(keymap, key_width, usize::from(inner.width), theme);
    // The last row says where in the list the view is.
    let rows = usize::from(inner.height - 1);
    let scroll = scroll.min(lines.len().saturating_sub(rows));
    for (i, line) in lines.iter().skip(scroll).take(rows).enumerate() {
        let y = inner.y + u16::try_from(i).unwrap_or(u16::MAX);
        line.clone()
            .render(Rect::new(inner.x, y, inner.width, 1), buf);
    }
    let shown_end = (scroll + rows).min(lines.len());
    let footer = format!(
        "lines {}–{shown_end} of {} · docs/KEYMAPS.md lists them too",
        scroll + 1,
        lines.len()
    );
    Line::from(Span::styled(
        march_panes::wrap::truncate(&footer, usize::from(inner.width)),
        theme.style(Slot::TextDim),
    ))
    .render(Rect::new(inner.x, inner.bottom() - 1, inner.width, 1), buf);
    scroll
}

/// How the key list's scroll moves for `key`; `None` closes it.
pub(super) fn help_key(key: &crossterm::event::KeyEvent, scroll: usize) -> Option<usize> {
    use crossterm::event::KeyCode;
    const PAGE: usize = 10;
    Some(match key.code {
        KeyCode::Down | KeyCode::Char('j') => scroll + 1,
        KeyCode::Up | KeyCode::Char('k') => scroll.saturating_sub(1),
        KeyCode::PageDown | KeyCode::Char(' ') | KeyCode::Char('f') => scroll + PAGE,
        KeyCode::PageUp | KeyCode::Char('b') => scroll.saturating_sub(PAGE),
        KeyCode::Home | KeyCode::Char('g') => 0,
        KeyCode::End | KeyCode::Char('G') => usize::MAX / 2,
        _ => return None,
    })
}

/// A short summary for `/help`: the slash commands, then the keys that matter most, as the
/// keymap binds them.
pub(crate) fn help_summary(keymap: &Keymap) -> String {
    use crate::keymap::Command as C;
    let mut out = String::from("Slash commands:\n");
    for (name, doc) in march_panes::agent::BUILTIN_COMMANDS {
        out.push_str(&format!("  /{name:<8} {doc}\n"));
    }
    out.push_str("\nKeys:\n");
    let prefix = keymap.prefix_key().to_string();
    let essentials = [
        (KeyContext::Agent, C::PromptSubmit),
        (KeyContext::Agent, C::AgentCancel),
        (KeyContext::Agent, C::PromptNewline),
        (KeyContext::Prefix, C::AppHelp),
        (KeyContext::Prefix, C::PaneSplitRight),
        (KeyContext::Prefix, C::PaneShellRight),
        (KeyContext::Prefix, C::PaneAgentShell),
        (KeyContext::Prefix, C::PaneDiff),
        (KeyContext::Prefix, C::SessionSwitcher),
        (KeyContext::Prefix, C::SessionNextAttention),
        (KeyContext::Prefix, C::LayoutNext),
        (KeyContext::Prefix, C::PaneZoom),
        (KeyContext::Prefix, C::AppQuit),
    ];
    for (context, command) in essentials {
        let Some(key) = keymap
            .keys_for(context, command)
            .first()
            .map(ToString::to_string)
        else {
            continue;
        };
        let key = match context {
            KeyContext::Prefix => format!("{prefix} {key}"),
            _ => key,
        };
        out.push_str(&format!("  {key:<12} {}\n", command.doc()));
    }
    out.push_str(&format!("Every key: {prefix} ? (or docs/KEYMAPS.md)."));
    out
}
