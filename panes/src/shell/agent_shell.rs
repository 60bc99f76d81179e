//! The agent shell pane: every command a session's agent ran in a terminal March owns, as
//! a list (command line, directory, running or exit status, duration) over the live screen
//! of the selected one, which the user can type into.

use std::path::Path;
use std::time::Duration;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use super::{ExitInfo, ShellPane};
use crate::agent::human_duration;
use crate::chrome::pane_block;
use crate::sanitize::sanitize_line;
use crate::theme::{Slot, Theme};
use crate::wrap::truncate;

/// One command in the list.
pub struct CommandEntry<'a> {
    /// Its command line.
    pub command: &'a str,
    /// Where it ran.
    pub cwd: &'a Path,
    /// How it ended, once it has.
    pub exit: Option<&'a ExitInfo>,
    /// How long it ran (so far).
    pub duration: Duration,
}

/// What an agent shell pane shows: the commands, and the selected one's screen.
pub struct Commands<'a, 'e> {
    /// Every command of the session, oldest first.
    pub entries: &'a [CommandEntry<'e>],
    /// The selected command's pane, whose screen is drawn.
    pub screen: Option<&'a mut ShellPane>,
}

/// Rows of the list at most; the screen gets the rest.
const LIST_ROWS: usize = 5;

/// Which command the pane shows.
#[derive(Debug, Clone, Default)]
pub struct AgentShellView {
    /// The chosen command, by index; `None` follows the newest.
    selected: Option<usize>,
}

impl AgentShellView {
    /// The index shown among `count` commands.
    pub fn selected(&self, count: usize) -> Option<usize> {
        match self.selected {
            Some(i) if i < count => Some(i),
            _ => count.checked_sub(1),
        }
    }

    /// Chooses the previous (`-1`) or next (`1`) command; past the newest it follows new
    /// ones again.
    pub fn select(&mut self, delta: i32, count: usize) {
        let Some(current) = self.selected(count) else {
            return;
        };
        let wanted = i64::try_from(current).unwrap_or(0) + i64::from(delta);
        self.selected = if wanted >= i64::try_from(count).unwrap_or(0) - 1 {
            None
        } else {
            Some(usize::try_from(wanted.max(0)).unwrap_or(0))
        };
    }

    /// Draws the list and the selected command's screen.
    pub fn render(
        &self,
        rect: Rect,
        buf: &mut Buffer,
        theme: &Theme,
        title: &str,
        focused: bool,
        commands: Commands<'_, '_>,
    ) {
        let Commands { entries, screen } = commands;
        let title = truncate(title, usize::from(rect.width.saturating_sub(4)));
        let block = pane_block(&title, focused, theme);
        let inner = block.inner(rect);
        block.render(rect, buf);
        if inner.height == 0 || inner.width == 0 {
            return;
        }
        if entries.is_empty() {
            Line::from(Span::styled(
                "No commands yet: the shell commands this session's agent runs show here, live.",
                theme.style(Slot::Hint),
            ))
            .render(inner, buf);
            return;
        }
        let selected = self.selected(entries.len()).unwrap_or(0);
        // The list shows the rows around the selected one.
        let rows = LIST_ROWS
            .min(entries.len())
            .min(usize::from(inner.height / 3).max(1));
        let first = (selected + 1).saturating_sub(rows);
        for (i, entry) in entries.iter().enumerate().skip(first).take(rows) {
            let y = inner.y + u16::try_from(i - first).unwrap_or(0);
            let line = entry_line(entry, i == selected, theme, inner.width);
            line.render(Rect::new(inner.x, y, inner.width, 1), buf);
        }
        let list_height = u16::try_from(rows).unwrap_or(0);
        let rule_y = inner.y + list_height;
        if rule_y >= inner.bottom() {
            return;
        }
        let rule = "─".repeat(usize::from(inner.width));
        Line::from(Span::styled(rule, theme.style(Slot::Border)))
            .render(Rect::new(inner.x, rule_y, inner.width, 1), buf);
        let screen_area = Rect::new(
            inner.x,
            rule_y + 1,
            inner.width,
            inner.bottom().saturating_sub(rule_y + 1),
        );
        if let Some(screen) = screen {
            screen.render_screen(screen_area, buf, theme, focused);
        }
    }
}

/// One row of the list: state, duration, command line, directory.
fn entry_line(
    entry: &CommandEntry<'_>,
    selected: bool,
    theme: &Theme,
    width: u16,
) -> Line<'static> {
    let (mark, slot) = match entry.exit {
        None => ("●".to_string(), Slot::ToolRunning),
        Some(exit) if exit.success() => ("✓".to_string(), Slot::Success),
        Some(exit) => (
            match &exit.signal {
                Some(signal) => format!("✗ {signal}"),
                None => format!("✗ {}", exit.code),
            },
            Slot::Error,
        ),
    };
    let base = if selected {
        theme.style(Slot::Selection)
    } else {
        Style::default()
    };
    let command = sanitize_line(entry.command).into_owned();
    let dir = entry
        .cwd
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let left = format!(" {mark} {:>7} ", human_duration(entry.duration));
    let room = usize::from(width).saturating_sub(crate::wrap::width(&left) + dir.len() + 3);
    Line::from(vec![
        Span::styled(left, base.patch(theme.style(slot))),
        Span::styled(
            format!("$ {}", truncate(&command, room)),
            base.patch(theme.style(Slot::Text)),
        ),
        Span::styled(format!("  {dir}"), base.patch(theme.style(Slot::TextDim))),
    ])
    .style(base)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selection_follows_the_newest_until_chosen() {
        let mut v = AgentShellView::default();
        assert_eq!(v.selected(0), None);
        assert_eq!(v.selected(3), Some(2));
        v.select(-1, 3);
        assert_eq!(v.selected(3), Some(1));
        assert_eq!(v.selected(5), Some(1), "a chosen command stays chosen");
        v.select(-5, 5);
        assert_eq!(v.selected(5), Some(0));
        v.select(10, 5);
        assert_eq!(v.selected(6), Some(5), "past the newest it follows again");
    }
}
